//! `join`: waits until every incoming branch has finished (or was not taken) and collects the
//! outputs of the predecessors that ran into a map by node id.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::{CheckContext, Field, NodeCtx, NodeError, NodeResult};

pub(super) const DESCRIPTION: &str = "Waits for every incoming branch of a `parallel` and \
    collects their last nodes' outputs: output `{<node id>: <output>, ...}`.";

pub(super) const FIELDS: &[Field] = &[];

/// A `join` node (no configuration).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {}

pub(super) fn check(_: &Config, _: &CheckContext) -> Vec<(String, String)> {
    Vec::new()
}

pub(super) async fn run(_: &Config, ctx: &NodeCtx) -> Result<NodeResult, NodeError> {
    let map: Map<String, Value> =
        ctx.preds.iter().map(|(id, out)| (id.clone(), out.as_ref().clone())).collect();
    Ok(NodeResult::output(Value::Object(map)))
}
