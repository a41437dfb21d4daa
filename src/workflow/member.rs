//! One agent run as a node's task: the `llm` and `agent` nodes' shared engine, on
//! [`AgentService::run_task`](crate::agent::service::AgentService::run_task) (the agent's
//! model, fallbacks, tools, MCP servers, context sources and accounting, as a team member
//! gets them). The task's events go into a private log and are forwarded into the workflow's
//! stream as they arrive, carrying the node id as `taskId`, except the member's own
//! `task.start` / `task.complete` / `task.fail`: the engine sends those for every node
//! kind alike, and `task.complete` only once the node's output is committed.
//!
//! Nothing of it is stored in chat memory: a workflow run is not a chat.

use super::nodes::{NodeCtx, NodeError};
use crate::agent::events::{EventBody, RunLogs, TokenUsage};
use crate::agent::run::{RunEnd, TaskFrame};
use crate::agent::service::{TaskAgent, TaskRequest};

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
    agent: TaskAgent,
    message: String,
    ctx: &NodeCtx,
) -> Result<MemberResult, NodeError> {
    let logs = RunLogs::default();
    let inner = logs
        .start(&format!("{}/{}", ctx.run_id, ctx.node_id))
        .map_err(|e| NodeError::new(e.to_string()))?;
    let mut events = inner.subscribe(0).map_err(|e| NodeError::new(e.to_string()))?;
    let request = TaskRequest {
        agent,
        message,
        history: Vec::new(),
        // The workflow's run id: frontend tools of the member are answered with it.
        run_id: ctx.run_id.clone(),
        chat_id: ctx.run_id.clone(),
        frame: TaskFrame {
            task_id: ctx.task_id.clone(),
            name: ctx.node_id.clone(),
            description: None,
            // Short and unique among the run's nodes: prefixes the member's tool-call ids.
            tag: format!("n{}", ctx.index),
        },
        caller: ctx.caller.clone(),
        meter: None,
    };
    let agents = &ctx.deps.agents;
    let cancel = ctx.cancel.child_token();
    let work = async move {
        let outcome = agents.run_task(request, &inner, cancel).await;
        // Ends the subscription below once it has read everything.
        drop(inner);
        outcome
    };
    let forward = async {
        while let Ok(Some(event)) = events.next().await {
            if !is_frame(&event.body) {
                ctx.sink.emit(event.body.clone());
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

/// The member's own task frame, which the engine sends itself.
fn is_frame(body: &EventBody) -> bool {
    matches!(
        body,
        EventBody::TaskStart { .. } | EventBody::TaskComplete { .. } | EventBody::TaskFail { .. }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_members_task_frame_is_left_to_the_engine() {
        let start = EventBody::TaskStart {
            task_id: "n".into(),
            run_id: "r".into(),
            task_name: None,
            description: None,
        };
        assert!(is_frame(&start));
        let content = EventBody::ContentStart {
            content_id: "c".into(),
            run_id: "r".into(),
            task_id: Some("n".into()),
        };
        assert!(!is_frame(&content));
    }
}
