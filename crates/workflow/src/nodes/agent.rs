//! `agent`: runs a catalog agent (its mode, tools and model) on a templated message as the
//! node's task; its events stream with the task id. Output: the agent's final answer text.

use serde::Deserialize;
use serde_json::Value;

use super::{CheckContext, Field, FieldType, NodeCtx, NodeError, NodeResult};
use agent::service::TaskAgent;

pub(super) const DESCRIPTION: &str = "Runs a catalog agent on `message` (a template) with its \
    own mode, tools and model, streamed as the node's task. Output: its final answer text.";

pub(super) const FIELDS: &[Field] = &[
    Field {
        name: "agent",
        ty: FieldType::String,
        required: true,
        description: "the agent's key (`GET /api/agents`)",
    },
    Field {
        name: "message",
        ty: FieldType::Template,
        required: true,
        description: "what the agent is asked",
    },
];

/// An `agent` node.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Config {
    agent: String,
    message: String,
}

pub(super) fn check(config: &Config, cx: &CheckContext) -> Vec<(String, String)> {
    if cx.agents.iter().any(|a| a == &config.agent) {
        return Vec::new();
    }
    let names: Vec<&str> = cx.agents.iter().map(String::as_str).collect();
    let hint = base::text::closest(&config.agent, &names);
    let hint = hint.first().map(|h| format!("; did you mean `{h}`?")).unwrap_or_default();
    vec![("agent".to_owned(), format!("no agent `{}`{hint}", config.agent))]
}

pub(super) async fn run(config: &Config, ctx: &NodeCtx) -> Result<NodeResult, NodeError> {
    let message = ctx.scope.render(&config.message)?;
    // Looked up when the task starts; an agent gone since validation fails the node.
    let agent = TaskAgent::Key(config.agent.clone());
    let answer = super::super::member::run_member(agent, message, ctx).await?;
    Ok(NodeResult { output: Value::String(answer.text), branch: None, usage: answer.usage })
}
