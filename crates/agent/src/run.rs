//! The agent run loop: one user turn of one agent, from `run.start` to exactly one of
//! `run.complete` / `run.error` / `run.cancel`.
//!
//! Every upstream [`StreamEvent`] is mapped to its Event Model v2 event the moment it arrives
//! (one upstream delta → one event, nothing buffered). Tool calls are executed after the model
//! call that made them ends: backend tools through [`BackendTools`] (parameter templates resolved
//! first, consecutive backend calls of one step run concurrently, results kept in call order),
//! actions answered `"OK"` at once, frontend tools parked on [`FrontendSubmits`] (registered
//! before `tool.start` is emitted) until the user submits or the hub's timeout passes. A shell
//! command of an agent with `confirmShell` waits the same way for the user's go-ahead
//! (`tool.confirm`); declined or unanswered, it never runs and the model is told so.
//!
//! Modes are driven only by the agent's [`RunPolicy`]: tool rounds, tools per round, plan first,
//! reasoning, verify, budgets. Before each tool execution and after the last the steering queue
//! is checked (remaining tools are skipped and the user's message injected); when the loop would
//! end, the follow-up queue is. A [`ContextTransform`] shapes the messages before every model call.
//!
//! The conversation is kept as [`AgentMessage`]s (app-only notes next to model messages) and
//! converted with [`convert_to_llm`] before the transform. Before every model call a
//! [`ModelResolver`] may pick the provider and model (a change emits `model.switch`); the
//! application's [`RunHooks`] hear each turn's end (and may stop the run), each added message and
//! each model or resolver error. When the timeout or a cancellation ends a run mid-stream, the
//! open blocks and tool calls get their `*.end` before the terminal event. PLAN_EXECUTE tracks its
//! plan's steps with `plan.update` (no `task.*`: those frame explicit tasks only, such as a team
//! member's run, which [`run_task`] runs inside an enclosing run's stream).

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::StreamExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::catalog::{CatalogSnapshot, ToolKind, ToolSpec};
use super::definition::{AgentDefinition, Prompts, ToolPolicy, VerifyPolicy};
use super::events::{EventBody, EventSink, now_ms};
use super::memory::{RunRecorder, SystemSnapshot};
use super::message::{AgentMessage, convert_to_llm};
use super::template::ToolResults;
use super::tools::{BackendTools, FrontendSubmits, PendingSubmit, ToolContext, ToolError, bash};
use llm::types::{Message, ToolChoice, Usage};
use llm::{
    AssistantMessage, ChatRequest, ContentBlock, MessageBuilder, Provider, StreamEvent, Thinking,
    ToolDefinition,
};

mod contract;
mod fallback;
mod model_call;
mod tool_calls;
mod window;

pub use contract::{
    ContextSource, MessageQueue, ModelResolver, NoHooks, ResolveError, ResolvedModel, RunDeps,
    RunEnd, RunHooks, RunInput, RunOutcome, TaskFrame, TurnInfo,
};
pub use fallback::FallbackResolver;
pub use window::{ContextTransform, WindowTransform, estimate_tokens, message_tokens};

/// The user message sent for the second pass of `verify: SECOND_PASS_FIX`.
pub const REVIEW_PROMPT: &str = "Review your previous answer for mistakes (facts, calculations, \
missed parts of the question) and output the corrected final answer only, without mentioning \
the review.";

/// Context window assumed when the caller gives none (tokens).
pub const DEFAULT_CONTEXT_TOKENS: usize = 128_000;

/// Why the loop stopped early.
enum Stop {
    Cancelled,
    Error(String),
    /// [`RunHooks::on_turn_end`] said no more.
    Stopped,
}

/// Runs one turn of an agent. Emits `run.start` first and exactly one terminal event last.
#[base::boxed]
pub async fn run(input: RunInput, deps: &RunDeps, sink: &EventSink) -> RunOutcome {
    run_inner(input, deps, sink, None, None).await
}

/// Runs one turn of an agent as a task of the enclosing run `input.run_id`, whose stream `sink`
/// is: `task.start` first, then the agent's events carrying the task's id, then exactly one of
/// `task.complete` / `task.fail` (a cancel or timeout is a `task.fail` naming it). The enclosing
/// run sends its own `run.start` and terminal event. A frame that does not `announce` leaves
/// `task.start` and the task's end to the caller.
#[base::boxed]
pub async fn run_task(
    input: RunInput,
    deps: &RunDeps,
    sink: &EventSink,
    frame: TaskFrame,
    recorder: Option<&mut RunRecorder>,
) -> RunOutcome {
    run_inner(input, deps, sink, recorder, Some(frame)).await
}

/// [`run`], also recording every model response (with the stream ids its blocks were emitted
/// under, its timing and usage) and every tool result into `recorder` for chat memory (the
/// caller finishes and appends it).
#[base::boxed]
pub async fn run_recorded(
    input: RunInput,
    deps: &RunDeps,
    sink: &EventSink,
    recorder: &mut RunRecorder,
) -> RunOutcome {
    run_inner(input, deps, sink, Some(recorder), None).await
}

async fn run_inner<'a>(
    input: RunInput,
    deps: &'a RunDeps,
    sink: &'a EventSink,
    recorder: Option<&'a mut RunRecorder>,
    frame: Option<TaskFrame>,
) -> RunOutcome {
    match &frame {
        None => {
            sink.emit(EventBody::RunStart {
                run_id: input.run_id.clone(),
                chat_id: input.chat_id.clone(),
            });
        }
        Some(task) if task.announce => {
            sink.emit(EventBody::TaskStart {
                task_id: task.task_id.clone(),
                run_id: input.run_id.clone(),
                task_name: Some(task.name.clone()),
                description: task.description.clone(),
            });
        }
        Some(_) => {}
    }
    let timeout = input.agent.policy.budget.timeout();
    let mut runner = Runner::new(input, deps, sink);
    runner.recorder = recorder;
    runner.task = frame;
    let result = tokio::select! {
        biased;
        () = deps.cancel.cancelled() => Err(Stop::Cancelled),
        r = tokio::time::timeout(timeout, runner.drive()) => match r {
            Ok(r) => r,
            Err(_) => Err(Stop::Error(format!(
                "budget exhausted: timeoutMs ({} ms)",
                timeout.as_millis()
            ))),
        },
    };
    // The drive future is gone: what it left open ends before the terminal event.
    runner.close_open();
    let end = match result {
        Ok(reason) => RunEnd::Complete(reason),
        Err(Stop::Stopped) => RunEnd::Complete("stopped".to_owned()),
        Err(Stop::Cancelled) => RunEnd::Cancelled,
        Err(Stop::Error(e)) => RunEnd::Error(e),
    };
    let run_id = runner.input.run_id.clone();
    if let Some(task) = runner.task.clone() {
        // The enclosing run records how it ended, and cancels its own pending submits.
        let task_id = task.task_id;
        let error = match &end {
            RunEnd::Complete(_) => None,
            RunEnd::Cancelled => Some("cancelled".to_owned()),
            RunEnd::Error(e) => {
                runner.mark_plan("failed", false);
                Some(e.clone())
            }
        };
        if task.announce {
            sink.emit(match error {
                None => EventBody::TaskComplete { task_id, run_id },
                Some(e) => {
                    EventBody::TaskFail { task_id, run_id, error: Some(json!({ "message": e })) }
                }
            });
        }
        return RunOutcome {
            end,
            messages: runner.produced,
            usage: runner.usage,
            model_calls: runner.model_calls,
            tool_calls: runner.tool_calls,
        };
    }
    if let Some(r) = runner.recorder.as_deref_mut() {
        r.finish_reason(end.finish_reason());
    }
    match &end {
        RunEnd::Complete(reason) => {
            sink.emit(EventBody::RunComplete {
                run_id,
                finish_reason: Some(reason.clone()),
                // None when no provider reported any: "0 tokens" would be a claim.
                usage: (runner.usage != llm::Usage::default()).then(|| (&runner.usage).into()),
                failing_panels: crate::events::failing_panels(&runner.updates),
            });
        }
        RunEnd::Cancelled => {
            deps.submits.cancel_run(&runner.input.run_id);
            sink.emit(EventBody::RunCancel { run_id });
        }
        RunEnd::Error(e) => {
            runner.mark_plan("failed", false);
            sink.emit(EventBody::RunError { run_id, error: json!({ "message": e }) });
        }
    }
    RunOutcome {
        end,
        messages: runner.produced,
        usage: runner.usage,
        model_calls: runner.model_calls,
        tool_calls: runner.tool_calls,
    }
}

/// An open tool call of the model call being streamed.
struct OpenCall {
    id: String,
    kind: Option<ToolKind>,
    chunks: u64,
    pending: Option<PendingSubmit>,
}

struct Runner<'a> {
    input: RunInput,
    deps: &'a RunDeps,
    sink: &'a EventSink,
    /// Everything the model has seen so far (and app-only notes), system prompt excluded.
    conversation: Vec<AgentMessage>,
    produced: Vec<AgentMessage>,
    usage: Usage,
    model_calls: u32,
    tool_calls: u32,
    reasoning_n: u32,
    content_n: u32,
    tool_n: u32,
    results: ToolResults,
    /// Frontend waiters registered at `tool.start`, by call id.
    pending: HashMap<String, PendingSubmit>,
    recorder: Option<&'a mut RunRecorder>,
    /// Stream ids of the blocks of the last model response, and its duration.
    last_ids: Vec<String>,
    last_timing_ms: Option<u64>,
    /// The blocks and tool calls of the model call being streamed that have no `*.end` yet
    /// (fields, so a run cut short by its timeout or a cancel can still close them).
    open_reasoning: Option<String>,
    open_content: Option<String>,
    open_calls: HashMap<usize, OpenCall>,
    /// Provider key and model of the previous model call.
    last_model: Option<(String, String)>,
    /// PLAN_EXECUTE's plan, once made.
    plan: Option<Plan>,
    /// The main prompt and whether it offers tools, until the first call with it records the
    /// run's system snapshot (then the model is the resolved one).
    unrecorded_system: Option<(String, bool)>,
    /// Set when this run is a task of an enclosing run ([`run_task`]).
    task: Option<TaskFrame>,
    /// The `dashboard.update` events its tools returned, in order (for the panels still
    /// failing at its end).
    updates: Vec<EventBody>,
}

/// A plan as sent in `plan.create` / `plan.update`.
struct Plan {
    id: String,
    text: String,
    /// `{id, title, status}`; status `pending`, `completed` or `failed`.
    steps: Vec<Value>,
}

impl Plan {
    fn json(&self) -> Value {
        json!({"text": self.text, "steps": self.steps})
    }
}

/// Whether a call's text streams.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Visibility {
    Streamed,
    /// Text and reasoning stay internal (verify's candidate); tool events still stream.
    Internal,
}

impl<'a> Runner<'a> {
    fn new(input: RunInput, deps: &'a RunDeps, sink: &'a EventSink) -> Self {
        let mut conversation = input.history.clone();
        conversation.retain(|m| !matches!(m, AgentMessage::Llm(Message::System { .. })));
        let mut first = input.user_images.clone();
        first.push(ContentBlock::text(input.user_message.clone()));
        conversation.push(Message::User { content: first }.into());
        let results =
            ToolResults::new().with_known_tools(input.tools.iter().map(|t| t.name.clone()));
        Self {
            input,
            deps,
            sink,
            conversation,
            produced: Vec::new(),
            usage: Usage::default(),
            model_calls: 0,
            tool_calls: 0,
            reasoning_n: 0,
            content_n: 0,
            tool_n: 0,
            results,
            pending: HashMap::new(),
            recorder: None,
            last_ids: Vec::new(),
            last_timing_ms: None,
            open_reasoning: None,
            open_content: None,
            open_calls: HashMap::new(),
            last_model: None,
            plan: None,
            unrecorded_system: None,
            task: None,
            updates: Vec::new(),
        }
    }

    /// What block and plan ids derive from: the task's id inside an enclosing run, else the
    /// run's.
    fn id_base(&self) -> &str {
        self.task.as_ref().map_or(&self.input.run_id, |t| &t.task_id)
    }

    /// The `taskId` of this run's leaf events.
    fn task_id(&self) -> Option<String> {
        self.task.as_ref().map(|t| t.task_id.clone())
    }

    fn system_prompt(&self, base: &str) -> String {
        let mut s = base.to_owned();
        for t in &self.input.tools {
            if let Some(p) = t.prompt.as_deref().filter(|p| !p.trim().is_empty()) {
                s.push_str("\n\n");
                s.push_str(p);
            }
        }
        s
    }

    async fn drive(&mut self) -> Result<String, Stop> {
        let agent = Arc::clone(&self.input.agent);
        let policy = agent.policy;
        let verify = policy.verify == VerifyPolicy::SecondPassFix;
        let (main_prompt, summary_prompt) = match &agent.prompts {
            Prompts::Single { system } => (self.system_prompt(system), None),
            Prompts::PlanExecute { plan, execute, summary } => {
                let plan_system = self.system_prompt(plan);
                let msg = self.model_call(&plan_system, false, false, Visibility::Streamed).await?;
                let plan_text = msg.text();
                let steps: Vec<Value> = plan_text
                    .lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .enumerate()
                    .map(|(i, l)| json!({"id": format!("{}_task_{}", self.id_base(), i + 1), "title": l, "status": "pending"}))
                    .collect();
                let plan = Plan { id: format!("{}_plan", self.id_base()), text: plan_text, steps };
                self.sink.emit(EventBody::PlanCreate {
                    plan_id: plan.id.clone(),
                    chat_id: self.input.chat_id.clone(),
                    plan: plan.json(),
                });
                self.plan = Some(plan);
                self.push_assistant(msg).await;
                (self.system_prompt(execute), summary.clone())
            }
        };
        let tools_allowed =
            policy.tool_policy != ToolPolicy::Disallow && !self.input.tools.is_empty();
        if self.recorder.is_some() {
            self.unrecorded_system = Some((main_prompt.clone(), tools_allowed));
        }
        let max_rounds = policy.max_tool_rounds.min(policy.budget.max_steps.max(1));
        let mut rounds = 0u32;
        let finish = loop {
            let offer = tools_allowed && rounds < max_rounds;
            if !offer && rounds > 0 && summary_prompt.is_some() {
                // PLAN_EXECUTE with a summary: the summary is the answer.
                break "stop".to_owned();
            }
            let required = offer && rounds == 0 && policy.tool_policy == ToolPolicy::Require;
            let visibility = if verify { Visibility::Internal } else { Visibility::Streamed };
            let msg = self.model_call(&main_prompt, offer, required, visibility).await?;
            let calls: Vec<ContentBlock> = msg.tool_calls().cloned().collect();
            let stop = stop_name(&msg);
            if offer && !calls.is_empty() {
                self.push_assistant(msg).await;
                rounds += 1;
                self.execute(&calls, policy.max_tools_per_round).await?;
                self.mark_plan("completed", false);
                continue;
            }
            // A final answer (tool calls made without tools offered are ignored).
            let msg = strip_tool_calls(msg);
            if verify {
                let mark = self.conversation.len();
                self.conversation.push(Message::Assistant(msg).into());
                self.conversation.push(Message::user(REVIEW_PROMPT).into());
                let fixed =
                    self.model_call(&main_prompt, false, false, Visibility::Streamed).await?;
                // The candidate and the review request were internal (a model-switch note the
                // call may have added after them stays).
                self.conversation.drain(mark..mark + 2);
                let stop = stop_name(&fixed);
                self.push_assistant(fixed).await;
                if self.take_follow_up() {
                    continue;
                }
                break stop;
            }
            self.push_assistant(msg).await;
            if self.take_follow_up() {
                continue;
            }
            break stop;
        };
        let finish = match summary_prompt {
            Some(summary) => {
                let system = self.system_prompt(&summary);
                let msg = self.model_call(&system, false, false, Visibility::Streamed).await?;
                let stop = stop_name(&msg);
                self.push_assistant(msg).await;
                stop
            }
            None => finish,
        };
        self.mark_plan("completed", true);
        Ok(finish)
    }

    /// Sets the next pending plan step (with `all`: every pending step) to `status` and emits
    /// `plan.update` when a step changed; with `all` the update is sent anyway (the final one).
    fn mark_plan(&mut self, status: &str, all: bool) {
        let Some(plan) = &mut self.plan else { return };
        let mut changed = false;
        for step in plan.steps.iter_mut().filter(|s| s["status"] == "pending") {
            step["status"] = json!(status);
            changed = true;
            if !all {
                break;
            }
        }
        if changed || all {
            self.sink.emit(EventBody::PlanUpdate {
                plan_id: plan.id.clone(),
                chat_id: self.input.chat_id.clone(),
                plan: plan.json(),
            });
        }
    }

    /// Records the run's model setup for chat memory, at the first call with the main prompt:
    /// that prompt (tool prompts included), the tools it offers and the model resolved for it.
    fn record_system(&mut self, model: &str) {
        let Some((prompt, offer_tools)) = self.unrecorded_system.take() else { return };
        let Some(recorder) = self.recorder.as_deref_mut() else { return };
        let tools = if offer_tools { tool_definitions(&self.input.tools) } else { Vec::new() };
        recorder.system(SystemSnapshot::new(model, Some(&prompt), &tools, true));
    }

    fn take_follow_up(&mut self) -> bool {
        // Steering that arrived while a final answer streamed counts as a follow-up.
        let mut queued = self.deps.steering.drain();
        queued.extend(self.deps.follow_up.drain());
        if queued.is_empty() {
            return false;
        }
        self.sink.emit(EventBody::RunSteer {
            run_id: self.input.run_id.clone(),
            mode: "followUp".into(),
            messages: queued.clone(),
            skipped_tools: Vec::new(),
        });
        for text in queued {
            self.push_user(text);
        }
        true
    }

    /// Adds a message to the conversation and to the run's output.
    fn add(&mut self, m: AgentMessage) {
        self.conversation.push(m.clone());
        self.produced.push(m);
    }

    /// [`Runner::add`], then [`RunHooks::on_message`]: the message is in the conversation
    /// already, so the hook's failure is only logged.
    async fn add_notified(&mut self, m: AgentMessage) {
        self.add(m.clone());
        if let Err(e) = self.deps.hooks.on_message(&m).await {
            tracing::warn!(run_id = %self.input.run_id, error = %e, "on_message hook failed");
        }
    }

    /// A user message that arrived mid-run (steering, follow-up).
    fn push_user(&mut self, text: String) {
        if let Some(r) = self.recorder.as_deref_mut() {
            r.user(&text, now_ms());
        }
        self.add(Message::user(text).into());
    }

    async fn push_assistant(&mut self, msg: AssistantMessage) {
        if let Some(r) = self.recorder.as_deref_mut() {
            r.assistant(&msg, &self.last_ids, now_ms(), self.last_timing_ms);
        }
        self.add_notified(Message::Assistant(msg).into()).await;
    }

    async fn push_tool(&mut self, m: Message) {
        if let (Some(r), Message::Tool { content }) = (self.recorder.as_deref_mut(), &m) {
            for b in content {
                if let ContentBlock::ToolResult { tool_use_id, content, is_error } = b {
                    r.tool_result(tool_use_id, content, *is_error, now_ms(), None);
                }
            }
        }
        self.add_notified(m.into()).await;
    }

    /// The model of the next call: the resolver's pick, or the input's. A change from the
    /// previous call emits `model.switch` and leaves a note in the conversation.
    async fn resolve(&mut self) -> Result<ResolvedModel, Stop> {
        let deps = self.deps;
        let resolved = match &deps.resolver {
            None => ResolvedModel {
                provider: Arc::clone(&self.input.provider),
                model: self.input.model.clone(),
                context_tokens: self.input.context_tokens,
                reasoning: self.input.reasoning,
            },
            Some(resolver) => match resolver.resolve(self.model_calls).await {
                Ok(m) => m,
                Err(e) => {
                    let message = format!("model resolution failed: {e}");
                    return Err(self.fail(message, e.retryable).await);
                }
            },
        };
        let to = (resolved.provider.key().to_owned(), resolved.model.clone());
        if let Some(from) = self.last_model.replace(to.clone())
            && from != to
        {
            let note = format!("Model switched from {}/{} to {}/{}.", from.0, from.1, to.0, to.1);
            self.sink.emit(EventBody::ModelSwitch {
                run_id: self.input.run_id.clone(),
                from_provider: from.0,
                from_model: from.1,
                to_provider: to.0,
                to_model: to.1,
                reason: None,
                error: None,
            });
            self.add(AgentMessage::ContextNote(note));
        }
        Ok(resolved)
    }

    /// The model to retry the current call with after `failed` failed with a retryable
    /// `error` before any output: the resolver's fallback, announced with `model.switch`
    /// (reason `fallback`) and a context note, the failure told to [`RunHooks::on_fallback`].
    /// `None`: no resolver, not retryable, or no fallback left.
    async fn fall_back(
        &mut self,
        failed: &ResolvedModel,
        error: &llm::LlmError,
        elapsed: Duration,
    ) -> Option<ResolvedModel> {
        if !error.is_retryable() {
            return None;
        }
        let next = self.deps.resolver.as_ref()?.fallback(self.model_calls, failed, error)?;
        let (from, to) = (
            (failed.provider.key().to_owned(), failed.model.clone()),
            (next.provider.key().to_owned(), next.model.clone()),
        );
        tracing::warn!(run_id = %self.input.run_id, from = %format!("{}/{}", from.0, from.1),
            to = %format!("{}/{}", to.0, to.1), %error, "model call failed before any output; falling back");
        let failure = TurnInfo {
            turn: self.model_calls,
            usage: Usage::default(),
            model: from.1.clone(),
            provider: from.0.clone(),
            duration: elapsed,
        };
        self.deps.hooks.on_fallback(&failure, error).await;
        self.last_model = Some(to.clone());
        if from != to {
            let note = format!(
                "Model switched from {}/{} to {}/{} after a failure before any output: {error}",
                from.0, from.1, to.0, to.1
            );
            self.sink.emit(EventBody::ModelSwitch {
                run_id: self.input.run_id.clone(),
                from_provider: from.0,
                from_model: from.1,
                to_provider: to.0,
                to_model: to.1,
                reason: Some("fallback".to_owned()),
                error: Some(error.to_string()),
            });
            self.add(AgentMessage::ContextNote(note));
        }
        Some(next)
    }

    /// Tells [`RunHooks::on_error`] (its own failure is ignored: it must not hide this error)
    /// and makes the run's error.
    async fn fail(&self, message: String, retryable: bool) -> Stop {
        if let Err(e) = self.deps.hooks.on_error(&message, retryable).await {
            tracing::debug!(run_id = %self.input.run_id, error = %e, "on_error hook failed");
        }
        Stop::Error(message)
    }
}

fn stop_name(msg: &AssistantMessage) -> String {
    use llm::StopReason;
    match msg.stop_reason {
        StopReason::EndTurn | StopReason::StopSequence | StopReason::ToolUse => "stop",
        StopReason::MaxTokens => "max_tokens",
        StopReason::ContentFilter => "content_filter",
        StopReason::Refusal => "refusal",
    }
    .to_owned()
}

fn tool_definitions(tools: &[ToolSpec]) -> Vec<ToolDefinition> {
    tools.iter().map(ToolSpec::definition).collect()
}

fn strip_tool_calls(mut msg: AssistantMessage) -> AssistantMessage {
    msg.content.retain(|b| !matches!(b, ContentBlock::ToolUse { .. }));
    msg
}

#[cfg(test)]
mod tests;
