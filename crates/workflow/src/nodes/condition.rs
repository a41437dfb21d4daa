//! `condition`: picks one outgoing edge. No expression language: `value` is rendered and
//! trimmed, and the edge whose `when` equals it is taken (the edge without `when` when none
//! does). Deciding code goes in a `code` node before it, whose output the value reads.

use serde::Deserialize;
use serde_json::Value;

use super::{CheckContext, Field, FieldType, NodeCtx, NodeError, NodeResult};

pub(super) const DESCRIPTION: &str = "Routes the run: renders `value` and takes the outgoing \
    edge whose `when` equals it (trimmed); the edge without `when` is taken otherwise.";

pub(super) const FIELDS: &[Field] = &[Field {
    name: "value",
    ty: FieldType::Template,
    required: true,
    description: "the value the outgoing edges' `when` are compared with",
}];

/// A `condition` node.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Config {
    value: String,
}

pub(super) fn check(_: &Config, _: &CheckContext) -> Vec<(String, String)> {
    Vec::new()
}

pub(super) async fn run(config: &Config, ctx: &NodeCtx) -> Result<NodeResult, NodeError> {
    let value = ctx.scope.render(&config.value)?.trim().to_owned();
    Ok(NodeResult {
        output: Value::String(value.clone()),
        branch: Some(value),
        ..NodeResult::default()
    })
}
