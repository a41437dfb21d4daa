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
//! plan's steps with `plan.update` (no `task.*`: the contract sends those only for an explicit task
//! input, which runs do not have).

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
use crate::llm::types::{Message, ToolChoice, Usage};
use crate::llm::{
    AssistantMessage, ChatRequest, ContentBlock, MessageBuilder, Provider, StreamEvent, Thinking,
    ToolDefinition,
};

/// The user message sent for the second pass of `verify: SECOND_PASS_FIX`.
pub const REVIEW_PROMPT: &str = "Review your previous answer for mistakes (facts, calculations, \
missed parts of the question) and output the corrected final answer only, without mentioning \
the review.";

/// Context window assumed when the caller gives none (tokens).
pub const DEFAULT_CONTEXT_TOKENS: usize = 128_000;

/// What one run needs to know.
#[derive(Clone)]
pub struct RunInput {
    /// The run id (event ids derive from it).
    pub run_id: String,
    /// The chat.
    pub chat_id: String,
    /// The agent.
    pub agent: Arc<AgentDefinition>,
    /// The agent's tools resolved against the catalog, in the agent's order (see
    /// [`RunInput::tools_from`]). Tools the model calls that are not here are unknown.
    pub tools: Vec<ToolSpec>,
    /// Earlier messages of the chat (no system messages needed: the agent's prompt is added);
    /// app-only entries stay out of model calls.
    pub history: Vec<AgentMessage>,
    /// The user's message.
    pub user_message: String,
    /// The model provider (every call's, unless [`RunDeps::resolver`] picks one).
    pub provider: Arc<dyn Provider>,
    /// The model id (likewise).
    pub model: String,
    /// The model's context window in tokens (for the default context transform; likewise).
    pub context_tokens: usize,
}

impl fmt::Debug for RunInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunInput")
            .field("run_id", &self.run_id)
            .field("chat_id", &self.chat_id)
            .field("agent", &self.agent.key)
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl RunInput {
    /// The agent's tools that exist in `catalog`, in the agent's order.
    pub fn tools_from(catalog: &CatalogSnapshot, agent: &AgentDefinition) -> Vec<ToolSpec> {
        catalog.agent_tools(agent).found.into_iter().cloned().collect()
    }
}

/// A queue of user messages a caller pushes into while a run is going (steering, follow-up).
/// Clones share the queue.
#[derive(Debug, Clone, Default)]
pub struct MessageQueue(Arc<Mutex<VecDeque<String>>>);

impl MessageQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a message.
    pub fn push(&self, text: impl Into<String>) {
        self.lock().push_back(text.into());
    }

    /// Takes every queued message, oldest first.
    pub fn drain(&self) -> Vec<String> {
        self.lock().drain(..).collect()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<String>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Shapes the conversation before every model call (trimming, summarising, injecting).
pub trait ContextTransform: Send + Sync {
    /// The messages to send, given all messages of the run so far (system first).
    fn transform(&self, messages: &[Message], context_tokens: usize) -> Vec<Message>;
}

pub use crate::text::estimate_tokens;

/// Estimated tokens of one message (plus a small per-message overhead).
pub fn message_tokens(m: &Message) -> usize {
    let blocks = |content: &[ContentBlock]| -> usize {
        content
            .iter()
            .map(|b| match b {
                ContentBlock::Text { text } | ContentBlock::Reasoning { text, .. } => {
                    estimate_tokens(text)
                }
                ContentBlock::ToolUse { name, input, .. } => {
                    estimate_tokens(name) + estimate_tokens(&input.to_string())
                }
                ContentBlock::ToolResult { content, .. } => estimate_tokens(content),
            })
            .sum()
    };
    4 + match m {
        Message::System { content } => estimate_tokens(content),
        Message::User { content } | Message::Tool { content } => blocks(content),
        Message::Assistant(a) => blocks(&a.content),
    }
}

/// The default transform: every system message, then the most recent other messages that fit
/// in the context window (minus a reserve for the answer). An assistant message with tool calls
/// and the tool results answering it are kept or dropped together; the newest group is always
/// kept.
#[derive(Debug, Clone, Copy, Default)]
pub struct WindowTransform;

impl ContextTransform for WindowTransform {
    fn transform(&self, messages: &[Message], context_tokens: usize) -> Vec<Message> {
        let (system, rest): (Vec<&Message>, Vec<&Message>) =
            messages.iter().partition(|m| matches!(m, Message::System { .. }));
        // Keep a quarter of the window for the answer.
        let budget = context_tokens - context_tokens / 4;
        let mut used: usize = system.iter().map(|m| message_tokens(m)).sum();
        // Groups: a run of tool messages belongs to the assistant message before it.
        let mut groups: Vec<Vec<&Message>> = Vec::new();
        for m in rest {
            match (m, groups.last_mut()) {
                (Message::Tool { .. }, Some(g)) => g.push(m),
                _ => groups.push(vec![m]),
            }
        }
        let mut kept: Vec<Vec<&Message>> = Vec::new();
        for g in groups.into_iter().rev() {
            let cost: usize = g.iter().map(|m| message_tokens(m)).sum();
            if !kept.is_empty() && used + cost > budget {
                break;
            }
            used += cost;
            kept.push(g);
        }
        system.into_iter().chain(kept.into_iter().rev().flatten()).cloned().collect()
    }
}

/// The provider and model for one model call.
#[derive(Debug, Clone)]
pub struct ResolvedModel {
    /// The provider.
    pub provider: Arc<dyn Provider>,
    /// The model id.
    pub model: String,
    /// The model's context window in tokens.
    pub context_tokens: usize,
}

/// Why a [`ModelResolver`] could not pick a model (the run ends with `run.error`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ResolveError {
    /// What went wrong.
    pub message: String,
    /// Whether trying again later may succeed (told to [`RunHooks::on_error`]).
    pub retryable: bool,
}

/// Picks the provider and model before every model call (credit checks, fallbacks): a run may
/// switch models between calls.
pub trait ModelResolver: Send + Sync {
    /// The model for the run's `turn`-th model call (from 1; planning, answer, review and
    /// summary calls all count).
    fn resolve(&self, turn: u32) -> BoxFuture<'_, Result<ResolvedModel, ResolveError>>;
}

/// One finished model call, as [`RunHooks::on_turn_end`] sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnInfo {
    /// The model call's number in the run, from 1.
    pub turn: u32,
    /// Its tokens.
    pub usage: Usage,
    /// The model that answered.
    pub model: String,
    /// Its provider key.
    pub provider: String,
}

/// Callbacks the application injects into a run (credit use, persistence, error reporting);
/// every method defaults to doing nothing.
pub trait RunHooks: Send + Sync {
    /// A model response is complete, before it is added and its tools run. `Ok(false)` stops
    /// the run (`run.complete`, finish reason `stopped`); `Err` ends it with `run.error`.
    fn on_turn_end<'a>(&'a self, _turn: &'a TurnInfo) -> BoxFuture<'a, Result<bool, String>> {
        Box::pin(std::future::ready(Ok(true)))
    }

    /// An assistant message or a tool result was added. `Err` is logged; the run goes on (the
    /// message is already in the conversation).
    fn on_message<'a>(&'a self, _message: &'a AgentMessage) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(std::future::ready(Ok(())))
    }

    /// A model call or the resolver failed; the run ends with `run.error` after this returns.
    /// `Err` is ignored so it cannot hide the original error.
    fn on_error<'a>(
        &'a self,
        _error: &'a str,
        _retryable: bool,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(std::future::ready(Ok(())))
    }
}

/// Live context for the model, recomputed before every model call and sent as a system message
/// after the agent's prompt (e.g. the dashboard the chat is on, which tools change mid-run).
pub trait ContextSource: Send + Sync {
    /// Whether this source serves `agent` (asked before each model call; keep it cheap).
    fn applies(&self, agent: &AgentDefinition) -> bool;
    /// The context of `chat_id` now; `None`: nothing to say.
    fn context<'a>(&'a self, chat_id: &'a str) -> BoxFuture<'a, Option<String>>;
}

/// Hooks that do nothing (the default of [`RunDeps`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHooks;

impl RunHooks for NoHooks {}

/// What a run uses besides its input: tool executors, the submit hub, cancellation, queues,
/// the context transform, the model resolver and the application's hooks.
#[derive(Clone)]
pub struct RunDeps {
    /// Backend tool executors.
    pub backend: BackendTools,
    /// The frontend-submit hub.
    pub submits: FrontendSubmits,
    /// Cancelling it ends the run with `run.cancel`.
    pub cancel: CancellationToken,
    /// Messages the user sends while the run works: checked between tool executions.
    pub steering: MessageQueue,
    /// Messages to handle after the run would otherwise end.
    pub follow_up: MessageQueue,
    /// Applied before every model call.
    pub transform: Arc<dyn ContextTransform>,
    /// Wait of frontend tools; `None`: the hub's default.
    pub frontend_timeout: Option<Duration>,
    /// Picks each model call's provider and model; `None`: the input's for every call.
    pub resolver: Option<Arc<dyn ModelResolver>>,
    /// The application's callbacks.
    pub hooks: Arc<dyn RunHooks>,
    /// Live context injected before every model call (only the sources that apply to the
    /// agent are asked).
    pub context: Vec<Arc<dyn ContextSource>>,
}

impl fmt::Debug for RunDeps {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunDeps")
            .field("backend", &self.backend)
            .field("submits", &self.submits)
            .finish_non_exhaustive()
    }
}

impl RunDeps {
    /// Deps with fresh token and queues, the [`WindowTransform`], no resolver and [`NoHooks`].
    pub fn new(backend: BackendTools, submits: FrontendSubmits) -> Self {
        Self {
            backend,
            submits,
            cancel: CancellationToken::new(),
            steering: MessageQueue::new(),
            follow_up: MessageQueue::new(),
            transform: Arc::new(WindowTransform),
            frontend_timeout: None,
            resolver: None,
            hooks: Arc::new(NoHooks),
            context: Vec::new(),
        }
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunEnd {
    /// `run.complete` with this finish reason (`stop`, `max_tokens`, ...).
    Complete(String),
    /// `run.error` with this message.
    Error(String),
    /// `run.cancel`.
    Cancelled,
}

impl RunEnd {
    /// Why the run finished, as chat memory stores it: the `run.complete` reason, or
    /// `cancelled` / `error`.
    pub fn finish_reason(&self) -> &str {
        match self {
            RunEnd::Complete(reason) => reason,
            RunEnd::Error(_) => "error",
            RunEnd::Cancelled => "cancelled",
        }
    }
}

/// The result of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    /// How it ended (the terminal event sent).
    pub end: RunEnd,
    /// Messages produced, in order: the user's message is not included; assistant messages,
    /// tool results, steering/follow-up messages and app-only notes (model switches) are, ready
    /// to append to the chat history.
    pub messages: Vec<AgentMessage>,
    /// Tokens of all model calls.
    pub usage: Usage,
    /// Model calls made.
    pub model_calls: u32,
    /// Tool calls executed (or answered).
    pub tool_calls: u32,
}

impl RunOutcome {
    /// The text of the last assistant message.
    pub fn final_text(&self) -> String {
        self.messages
            .iter()
            .rev()
            .find_map(|m| match m.as_llm() {
                Some(Message::Assistant(a)) => Some(a.text()),
                _ => None,
            })
            .unwrap_or_default()
    }
}

/// Why the loop stopped early.
enum Stop {
    Cancelled,
    Error(String),
    /// [`RunHooks::on_turn_end`] said no more.
    Stopped,
}

/// Runs one turn of an agent. Emits `run.start` first and exactly one terminal event last.
pub async fn run(input: RunInput, deps: &RunDeps, sink: &EventSink) -> RunOutcome {
    run_inner(input, deps, sink, None).await
}

/// [`run`], also recording every model response (with the stream ids its blocks were emitted
/// under, its timing and usage) and every tool result into `recorder` for chat memory (the
/// caller finishes and appends it).
pub async fn run_recorded(
    input: RunInput,
    deps: &RunDeps,
    sink: &EventSink,
    recorder: &mut RunRecorder,
) -> RunOutcome {
    run_inner(input, deps, sink, Some(recorder)).await
}

async fn run_inner<'a>(
    input: RunInput,
    deps: &'a RunDeps,
    sink: &'a EventSink,
    recorder: Option<&'a mut RunRecorder>,
) -> RunOutcome {
    sink.emit(EventBody::RunStart { run_id: input.run_id.clone(), chat_id: input.chat_id.clone() });
    let timeout = input.agent.policy.budget.timeout();
    let mut runner = Runner::new(input, deps, sink);
    runner.recorder = recorder;
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
    if let Some(r) = runner.recorder.as_deref_mut() {
        r.finish_reason(end.finish_reason());
    }
    match &end {
        RunEnd::Complete(reason) => {
            sink.emit(EventBody::RunComplete { run_id, finish_reason: Some(reason.clone()) });
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
        conversation.push(Message::user(input.user_message.clone()).into());
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
        }
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
                    .map(|(i, l)| json!({"id": format!("{}_task_{}", self.input.run_id, i + 1), "title": l, "status": "pending"}))
                    .collect();
                let plan =
                    Plan { id: format!("{}_plan", self.input.run_id), text: plan_text, steps };
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
            });
            self.add(AgentMessage::ContextNote(note));
        }
        Ok(resolved)
    }

    /// Tells [`RunHooks::on_error`] (its own failure is ignored: it must not hide this error)
    /// and makes the run's error.
    async fn fail(&self, message: String, retryable: bool) -> Stop {
        if let Err(e) = self.deps.hooks.on_error(&message, retryable).await {
            tracing::debug!(run_id = %self.input.run_id, error = %e, "on_error hook failed");
        }
        Stop::Error(message)
    }

    /// One streamed model call; events are emitted as upstream events arrive.
    async fn model_call(
        &mut self,
        system: &str,
        offer_tools: bool,
        required: bool,
        visibility: Visibility,
    ) -> Result<AssistantMessage, Stop> {
        let policy = self.input.agent.policy;
        if self.model_calls >= policy.budget.max_model_calls {
            return Err(Stop::Error(format!(
                "budget exhausted: maxModelCalls ({})",
                policy.budget.max_model_calls
            )));
        }
        self.model_calls += 1;
        let resolved = self.resolve().await?;
        self.record_system(&resolved.model);
        let mut messages = vec![Message::system(system)];
        for source in &self.deps.context {
            if source.applies(&self.input.agent)
                && let Some(text) = source.context(&self.input.chat_id).await
            {
                messages.push(Message::system(text));
            }
        }
        messages.extend(convert_to_llm(&self.conversation));
        let messages = self.deps.transform.transform(&messages, resolved.context_tokens);
        let tools = if offer_tools { tool_definitions(&self.input.tools) } else { Vec::new() };
        let request = ChatRequest {
            model: resolved.model.clone(),
            messages,
            tools,
            tool_choice: if required { ToolChoice::Required } else { ToolChoice::Auto },
            thinking: policy.reasoning.then(|| Thinking::Enabled {
                effort: policy.compute.effort(),
                budget_tokens: None,
            }),
            trace_id: Some(self.input.run_id.clone()),
            ..ChatRequest::default()
        };
        let mut builder = MessageBuilder::new(&resolved.model, resolved.provider.key());
        let started = std::time::Instant::now();
        let mut stream = resolved.provider.stream(request);
        let mut reasoning_ids: Vec<String> = Vec::new();
        let mut content_ids: Vec<String> = Vec::new();
        let show_text = visibility == Visibility::Streamed;
        let show_reasoning = show_text && policy.expose_reasoning;
        let mut ended_ids: Vec<String> = Vec::new();
        while let Some(event) = stream.next().await {
            builder.push(&event);
            match &event {
                StreamEvent::ReasoningStart | StreamEvent::ReasoningDelta { .. }
                    if show_reasoning =>
                {
                    let id = match &self.open_reasoning {
                        Some(id) => id.clone(),
                        None => {
                            self.reasoning_n += 1;
                            let id =
                                format!("{}_reasoning_{}", self.input.run_id, self.reasoning_n);
                            self.sink.emit(EventBody::ReasoningStart {
                                reasoning_id: id.clone(),
                                run_id: self.input.run_id.clone(),
                                task_id: None,
                            });
                            self.open_reasoning = Some(id.clone());
                            reasoning_ids.push(id.clone());
                            id
                        }
                    };
                    if let StreamEvent::ReasoningDelta { text } = &event {
                        self.sink.emit(EventBody::ReasoningDelta {
                            reasoning_id: id,
                            delta: text.clone(),
                        });
                    }
                }
                StreamEvent::ReasoningEnd { .. } => {
                    if let Some(id) = self.open_reasoning.take() {
                        self.sink.emit(EventBody::ReasoningEnd { reasoning_id: id });
                    }
                }
                StreamEvent::TextStart | StreamEvent::TextDelta { .. } if show_text => {
                    let id = match &self.open_content {
                        Some(id) => id.clone(),
                        None => {
                            self.content_n += 1;
                            let id = format!("{}_content_{}", self.input.run_id, self.content_n);
                            self.sink.emit(EventBody::ContentStart {
                                content_id: id.clone(),
                                run_id: self.input.run_id.clone(),
                                task_id: None,
                            });
                            self.open_content = Some(id.clone());
                            content_ids.push(id.clone());
                            id
                        }
                    };
                    if let StreamEvent::TextDelta { text } = &event {
                        self.sink
                            .emit(EventBody::ContentDelta { content_id: id, delta: text.clone() });
                    }
                }
                StreamEvent::TextEnd => {
                    if let Some(id) = self.open_content.take() {
                        self.sink.emit(EventBody::ContentEnd { content_id: id });
                    }
                }
                StreamEvent::ToolCallStart { index, id, name } if offer_tools => {
                    self.close_blocks();
                    let id = if id.is_empty() {
                        self.tool_n += 1;
                        format!("{}_tool_{}", self.input.run_id, self.tool_n)
                    } else {
                        id.clone()
                    };
                    let spec = self.input.tools.iter().find(|t| &t.name == name);
                    let kind = spec.map(|s| s.kind);
                    let mut pending = None;
                    if let Some(ToolKind::Frontend(_)) = kind {
                        // Registered before tool.start: an immediate submit is not lost.
                        pending = self.deps.submits.expect(&self.input.run_id, &id).ok();
                    }
                    if kind == Some(ToolKind::Action) {
                        self.sink.emit(EventBody::ActionStart {
                            action_id: id.clone(),
                            run_id: self.input.run_id.clone(),
                            task_id: None,
                            action_name: Some(name.clone()),
                            description: spec.map(|s| s.description.clone()),
                        });
                    } else {
                        self.sink.emit(EventBody::ToolStart {
                            tool_id: id.clone(),
                            run_id: self.input.run_id.clone(),
                            task_id: None,
                            tool_name: Some(name.clone()),
                            tool_type: kind.map(|k| k.tool_type().to_owned()),
                            tool_api: spec.and_then(ToolSpec::viewport_key).map(str::to_owned),
                            tool_params: None,
                            description: spec.map(|s| s.description.clone()),
                        });
                    }
                    self.open_calls.insert(*index, OpenCall { id, kind, chunks: 0, pending });
                }
                StreamEvent::ToolCallDelta { index, args_delta } if offer_tools => {
                    if let Some(call) = self.open_calls.get_mut(index) {
                        if call.kind == Some(ToolKind::Action) {
                            self.sink.emit(EventBody::ActionArgs {
                                action_id: call.id.clone(),
                                delta: args_delta.clone(),
                            });
                        } else {
                            self.sink.emit(EventBody::ToolArgs {
                                tool_id: call.id.clone(),
                                delta: args_delta.clone(),
                                chunk_index: Some(call.chunks),
                            });
                        }
                        call.chunks += 1;
                    }
                }
                StreamEvent::ToolCallEnd { index, input, input_error, .. } if offer_tools => {
                    if let Some(mut call) = self.open_calls.remove(index) {
                        self.end_call(&call);
                        if call.kind == Some(ToolKind::Action) && input_error.is_none() {
                            // What the frontend applies; it precedes `action.result`.
                            self.sink.emit(EventBody::ActionParam {
                                action_id: call.id.clone(),
                                param: input.clone(),
                            });
                        }
                        if let Some(p) = call.pending.take() {
                            self.pending.insert(call.id.clone(), p);
                        }
                        // Keep the id we announced (synthesized when the provider sent none).
                        ended_ids.push(call.id);
                    }
                }
                _ => {}
            }
        }
        // A stream cut off mid-block or mid-call still gets its `*.end` events.
        self.close_open();
        let mut msg = match builder.finish() {
            Ok(msg) => msg,
            Err(e) => {
                let message = format!("model call failed: {e}");
                return Err(self.fail(message, e.is_retryable()).await);
            }
        };
        self.usage.add(&msg.usage);
        // Rewrite empty call ids to the synthesized ones announced in events.
        let mut announced = ended_ids.into_iter();
        for block in &mut msg.content {
            if let ContentBlock::ToolUse { id, .. } = block
                && let Some(a) = announced.next()
            {
                *id = a;
            }
        }
        let (mut r_ids, mut c_ids) = (reasoning_ids.into_iter(), content_ids.into_iter());
        self.last_ids = msg
            .content
            .iter()
            .map(|b| match b {
                ContentBlock::Reasoning { .. } => r_ids.next().unwrap_or_default(),
                ContentBlock::Text { .. } => c_ids.next().unwrap_or_default(),
                ContentBlock::ToolUse { id, .. } => id.clone(),
                ContentBlock::ToolResult { .. } => String::new(),
            })
            .collect();
        self.last_timing_ms = u64::try_from(started.elapsed().as_millis()).ok();
        let turn = TurnInfo {
            turn: self.model_calls,
            usage: msg.usage,
            model: msg.model.clone(),
            provider: msg.provider.clone(),
        };
        match self.deps.hooks.on_turn_end(&turn).await {
            Ok(true) => Ok(msg),
            Ok(false) => {
                // What was streamed stays in the history; its tool calls never run.
                if visibility == Visibility::Streamed {
                    self.push_assistant(strip_tool_calls(msg)).await;
                }
                Err(Stop::Stopped)
            }
            Err(e) => Err(Stop::Error(e)),
        }
    }

    /// Ends the open reasoning and text blocks.
    fn close_blocks(&mut self) {
        if let Some(id) = self.open_reasoning.take() {
            self.sink.emit(EventBody::ReasoningEnd { reasoning_id: id });
        }
        if let Some(id) = self.open_content.take() {
            self.sink.emit(EventBody::ContentEnd { content_id: id });
        }
    }

    /// Ends the open blocks and tool calls (in call order).
    fn close_open(&mut self) {
        self.close_blocks();
        let mut calls: Vec<(usize, OpenCall)> = self.open_calls.drain().collect();
        calls.sort_by_key(|(index, _)| *index);
        for (_, call) in calls {
            self.end_call(&call);
        }
    }

    /// `tool.end`, or `action.end` for actions.
    fn end_call(&self, call: &OpenCall) {
        if call.kind == Some(ToolKind::Action) {
            self.sink.emit(EventBody::ActionEnd { action_id: call.id.clone() });
        } else {
            self.sink.emit(EventBody::ToolEnd { tool_id: call.id.clone() });
        }
    }

    fn available(&self) -> String {
        self.input.tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", ")
    }

    /// Executes one step's tool calls in order; answers every call.
    async fn execute(
        &mut self,
        calls: &[ContentBlock],
        per_round: Option<u32>,
    ) -> Result<(), Stop> {
        let limit = per_round.map_or(usize::MAX, |n| n as usize);
        let mut idx = 0usize;
        loop {
            // Steering: a new user message skips the rest of the step. Checked after the last
            // batch too, so a message sent during it reaches the very next model call.
            let steer = self.deps.steering.drain();
            if !steer.is_empty() {
                for call in &calls[idx..] {
                    if let ContentBlock::ToolUse { id, .. } = call {
                        self.answer(id, Err("skipped: user sent a new message".into())).await;
                    }
                }
                for text in steer {
                    self.push_user(text);
                }
                return Ok(());
            }
            if idx >= calls.len() {
                return Ok(());
            }
            // The batch: consecutive backend calls, or one other call.
            let mut end = idx + 1;
            if idx < limit && self.is_backend(&calls[idx]) {
                while end < calls.len() && end < limit && self.is_backend(&calls[end]) {
                    end += 1;
                }
            }
            let mut futures = Vec::new();
            for (pos, call) in calls.iter().enumerate().take(end).skip(idx) {
                let ContentBlock::ToolUse { id, name, input, input_error } = call else {
                    continue;
                };
                futures.push(self.prepare(pos, limit, id, name, input, input_error.as_deref())?);
            }
            let results = futures::future::join_all(futures).await;
            if self.deps.cancel.is_cancelled() {
                return Err(Stop::Cancelled);
            }
            for (id, name, result) in results {
                let mut after = None;
                if let (Some(name), Ok(v)) = (&name, &result) {
                    self.results.record(name.clone(), v.clone());
                    let ctx = ToolContext::new(&self.input.run_id, &self.input.chat_id)
                        .with_tool_id(id.clone());
                    after = self.deps.backend.get(name).map(|t| t.after_result(v, &ctx));
                }
                self.answer(&id, result).await;
                // The tool's own events (e.g. `dashboard.update`) follow its result.
                if let Some(after) = after {
                    for event in after.await {
                        self.sink.emit(event);
                    }
                }
            }
            idx = end;
        }
    }

    fn is_backend(&self, call: &ContentBlock) -> bool {
        let ContentBlock::ToolUse { name, input_error, .. } = call else { return false };
        input_error.is_none()
            && self.input.tools.iter().any(|t| &t.name == name && t.kind == ToolKind::Backend)
    }

    /// Builds the future answering one call; counts it against the budget.
    #[allow(clippy::type_complexity)]
    fn prepare(
        &mut self,
        pos: usize,
        limit: usize,
        id: &str,
        name: &str,
        input: &Value,
        input_error: Option<&str>,
    ) -> Result<
        futures::future::BoxFuture<'static, (String, Option<String>, Result<Value, String>)>,
        Stop,
    > {
        let id = id.to_owned();
        let registered = self.pending.remove(&id);
        let ready =
            |id: String, r: Result<Value, String>| -> futures::future::BoxFuture<'static, _> {
                Box::pin(std::future::ready((id, None, r)))
            };
        if pos >= limit {
            return Ok(ready(
                id,
                Err(format!(
                    "not executed: only {limit} tool call per step is allowed; call `{name}` again in the next step if still needed"
                )),
            ));
        }
        let budget = self.input.agent.policy.budget.max_tool_calls;
        if self.tool_calls >= budget {
            return Err(Stop::Error(format!("budget exhausted: maxToolCalls ({budget})")));
        }
        self.tool_calls += 1;
        if let Some(e) = input_error {
            return Ok(ready(id, Err(format!("invalid arguments for `{name}`: {e}"))));
        }
        let Some(spec) = self.input.tools.iter().find(|t| t.name == name) else {
            return Ok(ready(
                id,
                Err(format!("unknown tool `{name}`; available: {}", self.available())),
            ));
        };
        match spec.kind {
            ToolKind::Action => Ok(ready(id, Ok(json!("OK")))),
            ToolKind::Backend => {
                let args = match self.results.resolve_args(input) {
                    Ok(a) => a,
                    Err(e) => return Ok(ready(id, Err(e.to_string()))),
                };
                let gate = match self.confirm_gate(&id, name, &args) {
                    Ok(g) => g,
                    Err(e) => return Ok(ready(id, Err(e))),
                };
                let mut ctx = ToolContext::new(&self.input.run_id, &self.input.chat_id)
                    .with_tool_id(id.clone())
                    .with_agent(self.input.agent.clone());
                ctx.cancel = self.deps.cancel.child_token();
                let cancel = ctx.cancel.clone();
                // Lazy: nothing runs until the gate (if any) opens.
                let fut = self.deps.backend.call(name, args, ctx);
                let name = name.to_owned();
                Ok(Box::pin(async move {
                    if let Some((pending, timeout)) = gate
                        && let Err(no) = approved(pending.wait(Some(timeout), &cancel).await)
                    {
                        return (id, None, Err(no));
                    }
                    let r = fut.await.map_err(|e: ToolError| e.to_string());
                    (id, Some(name), r)
                }))
            }
            ToolKind::Frontend(_) => {
                let pending = match registered {
                    Some(p) => Ok(p),
                    None => self.deps.submits.expect(&self.input.run_id, &id),
                };
                let pending = match pending {
                    Ok(p) => p,
                    Err(e) => return Ok(ready(id, Err(e.to_string()))),
                };
                let timeout = self.deps.frontend_timeout;
                let cancel = self.deps.cancel.clone();
                Ok(Box::pin(async move {
                    let r = pending.wait(timeout, &cancel).await.map_err(|e| e.to_string());
                    (id, None, r)
                }))
            }
        }
    }

    /// For a shell command of an agent with `confirmShell`: registers the submit that answers
    /// it, then tells the user what would run (`tool.confirm`). `None` when no one is asked.
    fn confirm_gate(
        &self,
        id: &str,
        name: &str,
        args: &Value,
    ) -> Result<Option<(PendingSubmit, Duration)>, String> {
        if name != bash::NAME || !self.input.agent.shell.confirm {
            return Ok(None);
        }
        // Registered before the event: an immediate answer is not lost.
        let pending =
            self.deps.submits.expect(&self.input.run_id, id).map_err(|e| e.to_string())?;
        let timeout =
            self.deps.frontend_timeout.unwrap_or_else(|| self.deps.submits.default_timeout());
        self.sink.emit(EventBody::ToolConfirm {
            tool_id: id.to_owned(),
            run_id: self.input.run_id.clone(),
            tool_name: name.to_owned(),
            command: args.get("command").and_then(Value::as_str).unwrap_or_default().to_owned(),
            timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
        });
        Ok(Some((pending, timeout)))
    }

    /// Emits `tool.result` (`action.result` for actions) and records the result for the model.
    async fn answer(&mut self, id: &str, result: Result<Value, String>) {
        let is_action = self.produced.iter().rev().find_map(|m| match m.as_llm() {
            Some(Message::Assistant(a)) => a.tool_calls().find_map(|b| match b {
                ContentBlock::ToolUse { id: i, name, .. } if i == id => Some(
                    self.input.tools.iter().any(|t| &t.name == name && t.kind == ToolKind::Action),
                ),
                _ => None,
            }),
            _ => None,
        });
        let (event_result, content, is_error) = match result {
            Ok(v) => {
                let text = match &v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (v, text, false)
            }
            Err(e) => (json!({ "error": e }), e, true),
        };
        if is_action == Some(true) {
            self.sink
                .emit(EventBody::ActionResult { action_id: id.to_owned(), result: event_result });
        } else {
            self.sink.emit(EventBody::ToolResult { tool_id: id.to_owned(), result: event_result });
        }
        self.push_tool(Message::tool_result(id, content, is_error)).await;
    }
}

/// The user's answer to `tool.confirm`: `{"approved": true}` runs the command; anything else,
/// silence or a cancel does not, and the model is told which (so it can ask, not retry).
fn approved(answer: Result<Value, ToolError>) -> Result<(), String> {
    match answer {
        Ok(v) if v.get("approved") == Some(&Value::Bool(true)) => Ok(()),
        Ok(_) => Err("not run: the user declined this command. Do not run it again; ask the user \
                      what they want instead, or go on without it."
            .to_owned()),
        Err(ToolError::NoAnswer { waited }) => Err(format!(
            "not run: the user did not confirm this command within {} s. Ask before trying again.",
            waited.as_secs()
        )),
        Err(e) => Err(format!("not run: {e}")),
    }
}

fn stop_name(msg: &AssistantMessage) -> String {
    use crate::llm::StopReason;
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
