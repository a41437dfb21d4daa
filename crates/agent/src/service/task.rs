//! An agent's run as a task of another run (a team's member, a workflow's node): the same
//! agent, model, fallbacks, tools (MCP included), context and accounting as a query of its
//! own, but streamed into the enclosing run's log between `task.start` and `task.complete` /
//! `task.fail`, with no chat lock, memory or `run.*` events of its own (those are the enclosing
//! run's).

use super::team::MeteredHooks;
use super::*;
use crate::definition::team::Meter;
use crate::run::{RunEnd, RunOutcome, TaskFrame};

/// Which agent a task runs.
#[derive(Debug, Clone)]
pub enum TaskAgent {
    /// A catalog agent, by key (looked up when the task starts).
    Key(String),
    /// A definition made by the caller (a router's classifier, a workflow's `llm` node).
    Inline(Arc<AgentDefinition>),
}

/// One task to run.
#[derive(Debug)]
pub struct TaskRequest {
    /// The agent.
    pub agent: TaskAgent,
    /// Its user message.
    pub message: String,
    /// The conversation before it (the chat's replayed history, or nothing).
    pub history: Vec<AgentMessage>,
    /// The enclosing run.
    pub run_id: String,
    /// Its chat (the tools' session: a member's dashboards are the chat's).
    pub chat_id: String,
    /// The task's ids and name.
    pub frame: TaskFrame,
    /// The API key the enclosing run is for (`None`: the owner), for accounting.
    pub caller: Option<String>,
    /// Who the enclosing run acts for (`None`: the owner): the member's tools act with their
    /// rights.
    pub principal: Option<base::principal::Principal>,
    /// The team budget the task counts against, if any.
    pub meter: Option<Arc<Meter>>,
}

/// Why a task could not start: reported as `task.start` then `task.fail` when the task
/// announces itself (else its caller reports the returned error).
fn refused(sink: &EventSink, run_id: &str, frame: TaskFrame, message: String) -> RunOutcome {
    if frame.announce {
        sink.emit(EventBody::TaskStart {
            task_id: frame.task_id.clone(),
            run_id: run_id.to_owned(),
            task_name: Some(frame.name),
            description: frame.description,
        });
        sink.emit(EventBody::TaskFail {
            task_id: frame.task_id,
            run_id: run_id.to_owned(),
            error: Some(json!({ "message": message })),
        });
    }
    RunOutcome {
        end: RunEnd::Error(message),
        messages: Vec::new(),
        usage: llm::Usage::default(),
        model_calls: 0,
        tool_calls: 0,
    }
}

impl AgentService {
    /// Runs `request` as a task of its enclosing run, streaming into `sink` (that run's log).
    /// Always reports: an agent that does not exist, is a team, or has no usable model gets a
    /// `task.start` and a `task.fail` naming why.
    #[base::boxed]
    pub async fn run_task(
        &self,
        request: TaskRequest,
        sink: &EventSink,
        cancel: CancellationToken,
    ) -> RunOutcome {
        let TaskRequest {
            agent,
            message,
            history,
            run_id,
            chat_id,
            frame,
            caller,
            principal,
            meter,
        } = request;
        let snapshot = self.catalog.snapshot();
        let agent = match agent {
            TaskAgent::Inline(def) => def,
            TaskAgent::Key(key) => match snapshot.agent(&key) {
                Some(def) if def.team.is_some() => {
                    let m = format!("agent `{key}` is a team: a team's members are single agents");
                    return refused(sink, &run_id, frame, m);
                }
                Some(def) => def,
                None => {
                    let m = format!("agent `{key}` not found");
                    return refused(sink, &run_id, frame, m);
                }
            },
        };
        let agent = match &meter {
            // The member may make no more calls than the team has left.
            Some(meter) if meter.calls_left() < agent.policy.budget.max_model_calls => {
                if meter.calls_left() == 0 {
                    let m = format!(
                        "team budget exhausted: maxModelCalls ({})",
                        meter.budget().max_model_calls
                    );
                    return refused(sink, &run_id, frame, m);
                }
                let mut capped = (*agent).clone();
                capped.policy.budget.max_model_calls = meter.calls_left();
                Arc::new(capped)
            }
            _ => agent,
        };
        let connected = match self.model_for(&agent) {
            Ok(c) => c,
            Err(e) => {
                let m = format!("no usable model for agent `{}`: {e}", agent.key);
                return refused(sink, &run_id, frame, m);
            }
        };
        let primary = resolved(connected);
        let resolver = match self.with_fallbacks(&agent, primary.clone(), false) {
            Ok(r) => r.map(|r| Arc::new(r) as Arc<dyn ModelResolver>),
            Err(e) => {
                let m = format!("no usable model for agent `{}`: {e}", agent.key);
                return refused(sink, &run_id, frame, m);
            }
        };
        let app_hooks = self.hooks.as_ref().map(|make| {
            make(&RunContext {
                agent: agent.key.clone(),
                caller,
                model: format!("{}/{}", primary.provider.key(), primary.model),
            })
        });
        let hooks: Option<Arc<dyn RunHooks>> = match meter {
            Some(meter) => Some(Arc::new(MeteredHooks { inner: app_hooks, meter })),
            None => app_hooks,
        };
        let mut tools = RunInput::tools_from(&snapshot, &agent);
        let backend = self.backend_for(&agent, &mut tools, &cancel).await;
        let mut deps = RunDeps::new(backend, self.submits.clone());
        deps.cancel = cancel;
        deps.context = self.context.clone();
        if let Some(hooks) = hooks {
            deps.hooks = hooks;
        }
        deps.resolver = resolver;
        let input = RunInput {
            run_id,
            chat_id,
            agent,
            tools,
            history,
            user_message: message,
            user_images: Vec::new(),
            provider: primary.provider,
            model: primary.model,
            context_tokens: primary.context_tokens,
            reasoning: primary.reasoning,
            principal,
        };
        crate::run::run_task(input, &deps, sink, frame, None).await
    }
}
