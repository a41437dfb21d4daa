//! Team runs. A query to a team is one run (`run.start` … one terminal event) in which each
//! member's run is a task ([`AgentService::run_task`]: `task.start {taskName: member key}`, the
//! member's events carrying its `taskId`, `task.complete` | `task.fail`), so a client that knows
//! nothing of teams still reads one stream, and one that does shows who is speaking.
//!
//! - `sequential`: members in order; each after the first gets the question and the previous
//!   member's answer. A member that fails ends the run with `run.error` naming it.
//! - `parallel`: members at once on the question; the `merger` member (if any) gets every answer
//!   (a failed member's error instead of its answer); the run fails only if every member did.
//! - `routing`: a classifier task (the team's own prompt and model, [`ROUTER_PROMPT`]) names one
//!   member, which answers.
//! - `supervisor`: the team's agent runs as usual with one tool per member (`ask_<key>`); a call
//!   runs that member as a task and returns its answer, or its failure, to the supervisor.
//!
//! The team's budget ([`Meter`]) counts every member's model calls and tokens and the member
//! runs; its time limit covers the whole run: at the deadline the members still running are
//! cancelled (they end with `task.fail`) and the run ends with `run.error`. Members get the chat's
//! history (so a follow-up question makes sense to them) and record what they said into the
//! team run's chat memory, in order.

use futures::future::join_all;

use super::*;
use crate::catalog::{Origin, ToolKind, ToolSpec};
use crate::definition::team::{Meter, ROUTER_PROMPT, Team, TeamKind, pick_member};
use crate::events::now_ms;
use crate::message::AgentMessage;
use crate::run::{RunEnd, RunHooks, RunOutcome, TaskFrame, TurnInfo};
use crate::tools::{BackendTool, ToolContext, ToolError};
use futures::future::BoxFuture;
use llm::LlmError;

/// What a team run needs besides the members: who and where.
pub(super) struct TeamRun<'a> {
    pub input: &'a RunInput,
    pub team: &'a Team,
    pub sink: &'a EventSink,
    pub cancel: CancellationToken,
    pub caller: Option<String>,
    pub meter: Arc<Meter>,
}

/// Why a team run stopped early.
enum Stop {
    Cancelled,
    Error(String),
}

impl AgentService {
    /// Runs a `sequential`, `parallel` or `routing` team for `input` (the team's agent, the
    /// chat's history and the question); see the module doc.
    pub(super) async fn run_team(
        &self,
        run: TeamRun<'_>,
        recorder: &mut RunRecorder,
    ) -> RunOutcome {
        let input = run.input;
        run.sink.emit(EventBody::RunStart {
            run_id: input.run_id.clone(),
            chat_id: input.chat_id.clone(),
        });
        let mut done: Vec<RunOutcome> = Vec::new();
        let members_cancel = run.cancel.child_token();
        let deadline = Duration::from_millis(run.team.budget.timeout_ms);
        let result = {
            let body = self.team_body(&run, members_cancel.clone(), &mut done);
            tokio::pin!(body);
            tokio::select! {
                r = &mut body => r,
                () = tokio::time::sleep(deadline) => {
                    // Members end themselves (task.fail) before the run's terminal event.
                    members_cancel.cancel();
                    let _ = body.await;
                    Err(Stop::Error(format!(
                        "team budget exhausted: timeoutMs ({} ms)",
                        deadline.as_millis()
                    )))
                }
            }
        };
        let result = match result {
            Err(Stop::Error(_)) if run.cancel.is_cancelled() => Err(Stop::Cancelled),
            r => r,
        };
        let mut outcome = RunOutcome {
            end: RunEnd::Complete("stop".to_owned()),
            messages: Vec::new(),
            usage: llm::Usage::default(),
            model_calls: 0,
            tool_calls: 0,
        };
        for member in done {
            record(recorder, &member.messages);
            outcome.messages.extend(member.messages);
            outcome.usage.add(&member.usage);
            outcome.model_calls += member.model_calls;
            outcome.tool_calls += member.tool_calls;
        }
        let run_id = input.run_id.clone();
        outcome.end = match result {
            Ok(()) => RunEnd::Complete("stop".to_owned()),
            Err(Stop::Cancelled) => RunEnd::Cancelled,
            Err(Stop::Error(e)) => RunEnd::Error(e),
        };
        recorder.finish_reason(outcome.end.finish_reason());
        match &outcome.end {
            RunEnd::Complete(reason) => {
                run.sink.emit(EventBody::RunComplete {
                    run_id,
                    finish_reason: Some(reason.clone()),
                    usage: (outcome.usage != llm::Usage::default())
                        .then(|| (&outcome.usage).into()),
                    failing_panels: Vec::new(),
                });
            }
            RunEnd::Cancelled => {
                self.submits.cancel_run(&run_id);
                run.sink.emit(EventBody::RunCancel { run_id });
            }
            RunEnd::Error(e) => {
                run.sink.emit(EventBody::RunError { run_id, error: json!({ "message": e }) });
            }
        }
        outcome
    }

    async fn team_body(
        &self,
        run: &TeamRun<'_>,
        cancel: CancellationToken,
        done: &mut Vec<RunOutcome>,
    ) -> Result<(), Stop> {
        let question = run.input.user_message.as_str();
        let team = run.team;
        match team.kind {
            TeamKind::Sequential => {
                let mut previous: Option<(&str, String)> = None;
                for member in &team.members {
                    let message = match &previous {
                        None => question.to_owned(),
                        Some((key, answer)) => format!(
                            "{question}\n\nThe previous member of your team, `{key}`, \
                             answered:\n\n{answer}\n\nBuild on that answer."
                        ),
                    };
                    let outcome = self.member(run, member, message, &cancel).await?;
                    let answer = outcome.final_text();
                    let end = outcome.end.clone();
                    done.push(outcome);
                    ended(&end, member)?;
                    previous = Some((member, answer));
                }
                Ok(())
            }
            TeamKind::Parallel => {
                // Task numbers are taken in member order, before any starts.
                let mut started = Vec::new();
                for member in &team.members {
                    started.push((member, run.meter.next_task().map_err(Stop::Error)?));
                }
                let runs = started.iter().map(|(member, n)| {
                    self.member_numbered(run, member, *n, question.to_owned(), &cancel)
                });
                let outcomes = join_all(runs).await;
                if cancel.is_cancelled() {
                    done.extend(outcomes);
                    return Err(Stop::Cancelled);
                }
                let mut answers = String::new();
                let mut failures = Vec::new();
                for ((member, _), outcome) in started.iter().zip(&outcomes) {
                    match &outcome.end {
                        RunEnd::Complete(_) => {
                            answers
                                .push_str(&format!("## {member}\n\n{}\n\n", outcome.final_text()));
                        }
                        RunEnd::Error(e) => {
                            answers.push_str(&format!("## {member}\n\n(failed: {e})\n\n"));
                            failures.push(format!("`{member}`: {e}"));
                        }
                        RunEnd::Cancelled => failures.push(format!("`{member}`: cancelled")),
                    }
                }
                done.extend(outcomes);
                if failures.len() == team.members.len() {
                    return Err(Stop::Error(format!(
                        "every member failed: {}",
                        failures.join("; ")
                    )));
                }
                if let Some(merger) = &team.merger {
                    let message = format!(
                        "{question}\n\nThe members of your team answered:\n\n{}Merge these \
                         into one answer to the question.",
                        answers
                    );
                    let outcome = self.member(run, merger, message, &cancel).await?;
                    let end = outcome.end.clone();
                    done.push(outcome);
                    ended(&end, merger)?;
                }
                Ok(())
            }
            TeamKind::Routing => {
                let router = self.router(run);
                let n = run.meter.next_task().map_err(Stop::Error)?;
                let frame = TaskFrame::new(
                    &run.input.run_id,
                    n,
                    run.input.agent.key.clone(),
                    Some("routing".to_owned()),
                );
                let outcome = self
                    .run_task(
                        self.request(run, TaskAgent::Inline(router), frame, question.to_owned()),
                        run.sink,
                        cancel.clone(),
                    )
                    .await;
                let answer = outcome.final_text();
                let end = outcome.end.clone();
                // The classifier's answer is a routing decision, not part of the chat; its
                // tokens count.
                done.push(RunOutcome { messages: Vec::new(), ..outcome });
                ended(&end, &run.input.agent.key)?;
                let Some(member) = pick_member(&answer, &team.members) else {
                    return Err(Stop::Error(format!(
                        "the router answered `{}`, which names no member ({})",
                        base::text::clip(answer.trim(), 80),
                        team.members.join(", ")
                    )));
                };
                let outcome = self.member(run, member, question.to_owned(), &cancel).await?;
                let end = outcome.end.clone();
                done.push(outcome);
                ended(&end, member)
            }
            TeamKind::Single | TeamKind::Supervisor => {
                Err(Stop::Error(format!("`{}` teams are not run here", team.kind.as_str())))
            }
        }
    }

    /// Runs `member` as the team's next task.
    async fn member(
        &self,
        run: &TeamRun<'_>,
        member: &str,
        message: String,
        cancel: &CancellationToken,
    ) -> Result<RunOutcome, Stop> {
        let n = run.meter.next_task().map_err(Stop::Error)?;
        Ok(self.member_numbered(run, member, n, message, cancel).await)
    }

    async fn member_numbered(
        &self,
        run: &TeamRun<'_>,
        member: &str,
        n: u32,
        message: String,
        cancel: &CancellationToken,
    ) -> RunOutcome {
        let description = self
            .catalog
            .snapshot()
            .agent(member)
            .map(|a| a.description.clone())
            .filter(|d| !d.is_empty());
        let frame = TaskFrame::new(&run.input.run_id, n, member, description);
        let request = self.request(run, TaskAgent::Key(member.to_owned()), frame, message);
        self.run_task(request, run.sink, cancel.clone()).await
    }

    fn request(
        &self,
        run: &TeamRun<'_>,
        agent: TaskAgent,
        frame: TaskFrame,
        message: String,
    ) -> TaskRequest {
        TaskRequest {
            agent,
            message,
            history: run.input.history.clone(),
            run_id: run.input.run_id.clone(),
            chat_id: run.input.chat_id.clone(),
            frame,
            caller: run.caller.clone(),
            principal: run.input.principal.clone(),
            meter: Some(Arc::clone(&run.meter)),
        }
    }

    /// A routing team's classifier: the team's own agent (its model, its prompt as guidance)
    /// told to name one member, whose keys and descriptions it is given.
    fn router(&self, run: &TeamRun<'_>) -> Arc<AgentDefinition> {
        let snapshot = self.catalog.snapshot();
        let mut prompt = ROUTER_PROMPT.to_owned();
        if let crate::definition::Prompts::Single { system } = &run.input.agent.prompts
            && system != ROUTER_PROMPT
        {
            prompt.push_str("\n\n");
            prompt.push_str(system);
        }
        prompt.push_str("\n\nMembers:\n");
        for m in &run.team.members {
            let about = snapshot.agent(m).map(|a| a.description.clone()).unwrap_or_default();
            prompt.push_str(&format!("- {m}: {about}\n"));
        }
        let mut def = (*run.input.agent).clone();
        def.team = None;
        def.tools.clear();
        def.mcp_servers.clear();
        def.prompts = crate::definition::Prompts::Single { system: prompt };
        Arc::new(def)
    }

    /// A supervisor's run: one `ask_<member>` tool per member added to `tools` and `backend`,
    /// and the meter on its own calls (`hooks` are the application's for it).
    pub(super) fn supervise(
        self: &Arc<Self>,
        run: &TeamRun<'_>,
        tools: &mut Vec<ToolSpec>,
        deps: &mut RunDeps,
        sink: &Arc<EventSink>,
    ) {
        let snapshot = self.catalog.snapshot();
        for member in &run.team.members {
            let about = snapshot.agent(member).map(|a| a.description.clone()).unwrap_or_default();
            let name = format!("ask_{member}");
            tools.push(ToolSpec {
                name: name.clone(),
                description: format!(
                    "Give a task to your team member `{member}` ({about}) and get its answer. \
                     It does not see this conversation: say everything it needs."
                ),
                parameters: json!({
                    "type": "object",
                    "properties": {"task": {"type": "string", "description": "What the member should do, with everything it needs to know."}},
                    "required": ["task"],
                }),
                kind: ToolKind::Backend,
                prompt: None,
                extra: serde_json::Map::new(),
                origin: Origin::Member { agent: member.clone() },
            });
            deps.backend.register(Arc::new(MemberTool {
                service: Arc::clone(self),
                name,
                member: member.clone(),
                description: Some(about).filter(|d| !d.is_empty()),
                sink: Arc::clone(sink),
                meter: Arc::clone(&run.meter),
                chat_id: run.input.chat_id.clone(),
                caller: run.caller.clone(),
                principal: run.input.principal.clone(),
            }));
        }
        let inner = Some(Arc::clone(&deps.hooks));
        deps.hooks = Arc::new(MeteredHooks { inner, meter: Arc::clone(&run.meter) });
    }
}

/// `Err` for a member run that did not complete.
fn ended(end: &RunEnd, member: &str) -> Result<(), Stop> {
    match end {
        RunEnd::Complete(_) => Ok(()),
        RunEnd::Cancelled => Err(Stop::Cancelled),
        RunEnd::Error(e) => Err(Stop::Error(format!("member `{member}` failed: {e}"))),
    }
}

/// Records a member's messages into the team run's chat memory (block ids derived: the
/// member's own were its task's).
fn record(recorder: &mut RunRecorder, messages: &[AgentMessage]) {
    use llm::Message;
    for m in messages {
        match m.as_llm() {
            Some(Message::Assistant(a)) => recorder.assistant(a, &[], now_ms(), None),
            Some(Message::Tool { content }) => {
                for b in content {
                    if let ContentBlock::ToolResult { tool_use_id, content, is_error } = b {
                        recorder.tool_result(tool_use_id, content, *is_error, now_ms(), None);
                    }
                }
            }
            _ => {}
        }
    }
}

/// `ask_<member>`: a supervisor's member as a tool.
struct MemberTool {
    service: Arc<AgentService>,
    name: String,
    member: String,
    description: Option<String>,
    sink: Arc<EventSink>,
    meter: Arc<Meter>,
    chat_id: String,
    caller: Option<String>,
    principal: Option<base::principal::Principal>,
}

impl BackendTool for MemberTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn call(
        &self,
        args: Value,
        ctx: ToolContext,
    ) -> futures::future::BoxFuture<'static, Result<Value, ToolError>> {
        let task = args.get("task").and_then(Value::as_str).map(str::trim).unwrap_or_default();
        if task.is_empty() {
            let e = ToolError::invalid(&self.name, "`task` is required: what the member should do");
            return Box::pin(std::future::ready(Err(e)));
        }
        let n = match self.meter.next_task() {
            Ok(n) => n,
            Err(e) => return Box::pin(std::future::ready(Err(ToolError::failed(&self.name, e)))),
        };
        let request = TaskRequest {
            agent: TaskAgent::Key(self.member.clone()),
            message: task.to_owned(),
            history: Vec::new(),
            run_id: ctx.run_id.clone(),
            chat_id: self.chat_id.clone(),
            frame: TaskFrame::new(&ctx.run_id, n, self.member.clone(), self.description.clone()),
            caller: self.caller.clone(),
            principal: self.principal.clone(),
            meter: Some(Arc::clone(&self.meter)),
        };
        let (service, sink, name, member) = (
            Arc::clone(&self.service),
            Arc::clone(&self.sink),
            self.name.clone(),
            self.member.clone(),
        );
        Box::pin(async move {
            let outcome = service.run_task(request, &sink, ctx.cancel.clone()).await;
            match outcome.end {
                RunEnd::Complete(_) => Ok(Value::String(outcome.final_text())),
                RunEnd::Cancelled => Err(ToolError::Cancelled),
                RunEnd::Error(e) => {
                    Err(ToolError::failed(&name, format!("member `{member}` failed: {e}")))
                }
            }
        })
    }
}

/// A member run's hooks: the application's (usage accounting, key budgets) first, then the
/// team's [`Meter`].
pub struct MeteredHooks {
    /// The application's hooks for this member, if any.
    pub inner: Option<Arc<dyn RunHooks>>,
    /// The team's meter.
    pub meter: Arc<Meter>,
}

impl RunHooks for MeteredHooks {
    fn on_turn_end<'a>(&'a self, turn: &'a TurnInfo) -> BoxFuture<'a, Result<bool, String>> {
        Box::pin(async move {
            let go_on = match &self.inner {
                Some(h) => h.on_turn_end(turn).await?,
                None => true,
            };
            self.meter.turn(&turn.usage)?;
            Ok(go_on)
        })
    }

    fn on_message<'a>(&'a self, message: &'a AgentMessage) -> BoxFuture<'a, Result<(), String>> {
        match &self.inner {
            Some(h) => h.on_message(message),
            None => Box::pin(std::future::ready(Ok(()))),
        }
    }

    fn on_fallback<'a>(&'a self, failed: &'a TurnInfo, error: &'a LlmError) -> BoxFuture<'a, ()> {
        match &self.inner {
            Some(h) => h.on_fallback(failed, error),
            None => Box::pin(std::future::ready(())),
        }
    }

    fn on_error<'a>(
        &'a self,
        error: &'a str,
        retryable: bool,
    ) -> BoxFuture<'a, Result<(), String>> {
        match &self.inner {
            Some(h) => h.on_error(error, retryable),
            None => Box::pin(std::future::ready(Ok(()))),
        }
    }
}
