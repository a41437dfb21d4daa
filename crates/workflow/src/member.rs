//! One agent run as a node's task: the `llm` and `agent` nodes' shared engine, on
//! [`AgentService::run_task`](agent::service::AgentService::run_task) (the agent's
//! model, fallbacks, tools, MCP servers, context sources and accounting, as a team member
//! gets them). Its events go straight into the workflow's stream carrying the node id as
//! `taskId`; the task does not announce itself (`TaskFrame::announce` false): the engine sends
//! `task.start` / `task.complete` / `task.fail` for every node kind alike, and `task.complete`
//! only once the node's output is committed.
//!
//! Each takes a slot of the agent run cap (`AGENT_MAX_RUNS`) for as long as it runs, as a
//! query's run does; with none free it waits up to `BOARDSMITH_WORKFLOW_AGENT_WAIT_MS`, then
//! the node fails naming the cap.
//!
//! Nothing of it is stored in chat memory: a workflow run is not a chat.

use super::nodes::{NodeCtx, NodeError};
use agent::events::TokenUsage;
use agent::run::{RunEnd, TaskFrame};
use agent::service::{TaskAgent, TaskRequest};

/// What a member run produced.
#[derive(Debug, Clone, PartialEq)]
pub struct MemberResult {
    /// The final answer's text.
    pub text: String,
    /// Tokens of its model calls.
    pub usage: TokenUsage,
}

/// Runs `agent` on `message` as the node's task; the answer text and the tokens used.
#[base::boxed]
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
        // A member acts with the rights of the person the workflow runs for.
        principal: ctx.principal.clone(),
        caller: ctx.caller.clone(),
        meter: None,
    };
    // An agent run like a query's: it holds a slot of the same cap while it runs, waiting a
    // bounded time for one to free.
    let _slot = tokio::select! {
        biased;
        () = ctx.cancel.cancelled() => return Err(NodeError::new("cancelled")),
        slot = ctx.deps.agents.task_slot(ctx.agent_wait) => {
            slot.map_err(|e| NodeError::new(e.to_string()))?
        }
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
