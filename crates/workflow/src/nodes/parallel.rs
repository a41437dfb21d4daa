//! `parallel`: fans out. Every outgoing edge is taken and the branches run concurrently; a
//! `join` downstream waits for them.

use serde::Deserialize;
use serde_json::Value;

use super::{CheckContext, Field, NodeCtx, NodeError, NodeResult};

pub(super) const DESCRIPTION: &str = "Fans out: every outgoing edge starts a branch, and the \
    branches run concurrently until a `join` collects them. Output: null.";

pub(super) const FIELDS: &[Field] = &[];

/// A `parallel` node (no configuration).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {}

pub(super) fn check(_: &Config, _: &CheckContext) -> Vec<(String, String)> {
    Vec::new()
}

pub(super) async fn run(_: &Config, _: &NodeCtx) -> Result<NodeResult, NodeError> {
    Ok(NodeResult::output(Value::Null))
}
