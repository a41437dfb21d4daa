//! One agent run as a node's task: the `llm` and `agent` nodes' shared engine, on
//! [`AgentService::run_task`](crate::agent::service::AgentService::run_task) (the agent's
//! model, fallbacks, tools, MCP servers, context sources and accounting, as a team member
//! gets them). Its events go straight into the workflow's stream carrying the node id as
//! `taskId`; the task does not announce itself (`TaskFrame::announce` false): the engine sends
//! `task.start` / `task.complete` / `task.fail` for every node kind alike, and `task.complete`
//! only once the node's output is committed.
//!
//! Nothing of it is stored in chat memory: a workflow run is not a chat.

use super::nodes::{NodeCtx, NodeError};
use crate::agent::events::TokenUsage;
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
            announce: false,
        },
        caller: ctx.caller.clone(),
        meter: None,
    };
    let outcome = ctx.deps.agents.run_task(request, &ctx.sink, ctx.cancel.child_token()).await;
    match outcome.end {
        RunEnd::Complete(_) => {
            Ok(MemberResult { text: outcome.final_text(), usage: TokenUsage::from(&outcome.usage) })
        }
        RunEnd::Error(message) => Err(NodeError::new(message)),
        RunEnd::Cancelled => Err(NodeError::new("cancelled")),
    }
}
