//! `llm`: one model call — a PLAIN-mode agent made from the node's prompts, run as the node's
//! task, its deltas streamed with the task id. Output: the answer text, or with
//! `"format": "json"` the JSON it holds (a fenced block is unwrapped).

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};

use super::{CheckContext, Field, FieldType, NodeCtx, NodeError, NodeResult};
use agent::definition::AgentDefinition;
use agent::service::TaskAgent;

pub(super) const DESCRIPTION: &str = "One model call with `system` and `prompt` (templates), \
    streamed. Output: the answer text, or its JSON with `\"format\": \"json\"`.";

pub(super) const FIELDS: &[Field] = &[
    Field {
        name: "prompt",
        ty: FieldType::Template,
        required: true,
        description: "the user message",
    },
    Field {
        name: "system",
        ty: FieldType::Template,
        required: false,
        description: "the system prompt",
    },
    Field {
        name: "model",
        ty: FieldType::String,
        required: false,
        description: "`provider/model` (default: the configured default model)",
    },
    Field {
        name: "format",
        ty: FieldType::String,
        required: false,
        description: "`text` (default) or `json`: the answer parsed as JSON",
    },
];

/// A `llm` node.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Config {
    prompt: String,
    #[serde(default)]
    system: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    format: Option<String>,
}

pub(super) fn check(config: &Config, _: &CheckContext) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if !matches!(config.format.as_deref(), None | Some("text" | "json")) {
        out.push(("format".to_owned(), "must be `text` or `json`".to_owned()));
    }
    if config.prompt.trim().is_empty() {
        out.push(("prompt".to_owned(), "must not be empty".to_owned()));
    }
    out
}

/// The PLAIN agent a node's call runs as.
fn definition(node: &str, system: &str, model: Option<&str>) -> Result<AgentDefinition, NodeError> {
    let (provider, model) = match model.map(str::trim).filter(|m| !m.is_empty()) {
        Some(m) => m.split_once('/').unwrap_or(("", m)),
        None => ("", ""),
    };
    let file = json!({
        "description": format!("workflow node `{node}`"),
        "providerKey": provider,
        "model": model,
        "mode": "PLAIN",
        "plain": {"systemPrompt": if system.trim().is_empty() { "You are a helpful assistant." } else { system }},
    });
    // Node ids may be as long as agent keys, so the key is fixed; the description names it.
    agent::definition::parse("workflow-llm", &file.to_string())
        .map_err(|e| NodeError::new(format!("the node's model call: {e}")))
}

pub(super) async fn run(config: &Config, ctx: &NodeCtx) -> Result<NodeResult, NodeError> {
    let system = match &config.system {
        Some(s) => ctx.scope.render(s)?,
        None => String::new(),
    };
    let prompt = ctx.scope.render(&config.prompt)?;
    let agent = Arc::new(definition(&ctx.node_id, &system, config.model.as_deref())?);
    let answer = super::super::member::run_member(TaskAgent::Inline(agent), prompt, ctx).await?;
    let output = match config.format.as_deref() {
        Some("json") => parse_json(&answer.text)?,
        _ => Value::String(answer.text),
    };
    Ok(NodeResult { output, branch: None, usage: answer.usage })
}

/// The JSON in a model's answer: the whole text, or the inside of its first fenced block.
fn parse_json(text: &str) -> Result<Value, NodeError> {
    let trimmed = text.trim();
    let inner = trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|rest| rest.rsplit_once("```").map(|(body, _)| body))
        .unwrap_or(trimmed);
    serde_json::from_str(inner.trim()).map_err(|e| NodeError {
        message: format!("the answer is not JSON (`format`: `json`): {e}"),
        detail: Some(Value::String(base::text::clip(text, 400))),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn json_answers_are_parsed_with_or_without_a_fence() {
        assert_eq!(parse_json(" {\"a\": 1} ").unwrap(), json!({"a": 1}));
        assert_eq!(parse_json("```json\n[1, 2]\n```").unwrap(), json!([1, 2]));
        assert!(parse_json("sure! {").unwrap_err().message.contains("not JSON"));
    }

    #[test]
    fn the_call_is_a_plain_agent_with_the_nodes_model() {
        let d = definition("n1", "Be brief.", Some("mock/mock-model")).unwrap();
        assert_eq!(d.provider_key.as_deref(), Some("mock"));
        assert_eq!(d.model.as_deref(), Some("mock-model"));
        assert_eq!(d.policy.budget.max_model_calls, 1);
    }
}
