//! One agent run as a task inside a workflow run's event stream: the `llm` and `agent` nodes'
//! shared engine. The agent runtime's loop (`agent::run::run`) writes into a private event log;
//! its events are forwarded into the workflow's stream as they arrive, with the node's
//! `taskId` on every block start (`content.start`, `reasoning.start`, `tool.start`, ...) and
//! without the member's own `run.*` events (the node's `task.*` stand for them).
//!
//! Nothing of it is stored in chat memory: a workflow run is not a chat.

use std::sync::Arc;

use super::nodes::{NodeCtx, NodeError};
use crate::agent::definition::AgentDefinition;
use crate::agent::events::{EventBody, RunLogs, TokenUsage};
use crate::agent::run::{RunDeps, RunEnd, RunInput, run};
use crate::agent::service::RunContext;

/// What a member run produced.
#[derive(Debug, Clone, PartialEq)]
pub struct MemberResult {
    /// The final answer's text.
    pub text: String,
    /// Tokens of its model calls.
    pub usage: TokenUsage,
}

/// Runs `agent` on `message` as the node's task; the answer text and the tokens used.
pub async fn run_member(
    agent: Arc<AgentDefinition>,
    message: String,
    ctx: &NodeCtx,
) -> Result<MemberResult, NodeError> {
    let models = ctx.deps.agents.models();
    let provider_key = agent.provider_key.as_deref().unwrap_or("").trim();
    let model = agent.model.as_deref().unwrap_or("").trim();
    let connected = if provider_key.is_empty() {
        models.connect(model)
    } else {
        models.connect_with_provider(provider_key, model)
    }
    .map_err(|e| NodeError::new(format!("no usable model for agent `{}`: {e}", agent.key)))?;
    let snapshot = ctx.deps.catalog.snapshot();
    let input = RunInput {
        // The workflow's run id: frontend tools of the member are answered with it.
        run_id: ctx.run_id.clone(),
        chat_id: ctx.run_id.clone(),
        tools: RunInput::tools_from(&snapshot, &agent),
        agent,
        history: Vec::new(),
        user_message: message,
        user_images: Vec::new(),
        provider: connected.provider,
        model: connected.model.id,
        context_tokens: usize::try_from(connected.model.context_window).unwrap_or(usize::MAX),
        reasoning: connected.model.reasoning,
    };
    let mut deps = RunDeps::new(ctx.deps.backend.clone(), ctx.deps.submits.clone());
    deps.cancel = ctx.cancel.child_token();
    // Counted in the usage ledger, and stopped when the calling key's budget is used up.
    let context = RunContext {
        agent: input.agent.key.clone(),
        caller: ctx.caller.clone(),
        model: format!("{}/{}", input.provider.key(), input.model),
    };
    if let Some(hooks) = ctx.deps.agents.hooks_for(&context) {
        deps.hooks = hooks;
    }
    let logs = RunLogs::default();
    let inner = logs
        .start(&format!("{}/{}", ctx.run_id, ctx.node_id))
        .map_err(|e| NodeError::new(e.to_string()))?;
    let mut events = inner.subscribe(0).map_err(|e| NodeError::new(e.to_string()))?;
    let work = async move {
        let outcome = run(input, &deps, &inner).await;
        // Ends the subscription below once it has read everything.
        drop(inner);
        outcome
    };
    let forward = async {
        while let Ok(Some(event)) = events.next().await {
            if let Some(body) = tagged(event.body.clone(), &ctx.task_id) {
                ctx.sink.emit(body);
            }
        }
    };
    let (outcome, ()) = tokio::join!(work, forward);
    match outcome.end {
        RunEnd::Complete(_) => {
            Ok(MemberResult { text: outcome.final_text(), usage: TokenUsage::from(&outcome.usage) })
        }
        RunEnd::Error(message) => Err(NodeError::new(message)),
        RunEnd::Cancelled => Err(NodeError::new("cancelled")),
    }
}

/// The member's event as the workflow streams it: block starts tagged with the task, the
/// member's own run frame dropped.
fn tagged(body: EventBody, task: &str) -> Option<EventBody> {
    let task = Some(task.to_owned());
    Some(match body {
        EventBody::RequestQuery(_)
        | EventBody::ChatStart { .. }
        | EventBody::RunStart { .. }
        | EventBody::RunComplete { .. }
        | EventBody::RunCancel { .. }
        | EventBody::RunError { .. } => return None,
        EventBody::ReasoningStart { reasoning_id, run_id, .. } => {
            EventBody::ReasoningStart { reasoning_id, run_id, task_id: task }
        }
        EventBody::ContentStart { content_id, run_id, .. } => {
            EventBody::ContentStart { content_id, run_id, task_id: task }
        }
        EventBody::ToolStart {
            tool_id,
            run_id,
            tool_name,
            tool_type,
            tool_api,
            tool_params,
            description,
            ..
        } => EventBody::ToolStart {
            tool_id,
            run_id,
            task_id: task,
            tool_name,
            tool_type,
            tool_api,
            tool_params,
            description,
        },
        EventBody::ActionStart { action_id, run_id, action_name, description, .. } => {
            EventBody::ActionStart { action_id, run_id, task_id: task, action_name, description }
        }
        other => other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_starts_get_the_task_and_the_members_run_frame_is_dropped() {
        let start =
            EventBody::ContentStart { content_id: "c".into(), run_id: "r".into(), task_id: None };
        assert_eq!(
            tagged(start, "t1"),
            Some(EventBody::ContentStart {
                content_id: "c".into(),
                run_id: "r".into(),
                task_id: Some("t1".into())
            })
        );
        let delta = EventBody::ContentDelta { content_id: "c".into(), delta: "x".into() };
        assert_eq!(tagged(delta.clone(), "t1"), Some(delta));
        let end = EventBody::RunComplete { run_id: "r".into(), finish_reason: None, usage: None };
        assert_eq!(tagged(end, "t1"), None);
    }
}
