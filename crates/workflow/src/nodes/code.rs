//! `code`: JavaScript in the sandbox, as panel code runs: the body of an async function with
//! `sdk`, `utils` and the node's rendered `inputs` frozen as `vars`. The returned JSON is the
//! output; a failure is the sandbox's `ExecError` (line, column, limit) as the task's error.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::{CheckContext, Field, FieldType, NodeCtx, NodeError, NodeResult};
use sandbox::PanelContext;

pub(super) const DESCRIPTION: &str = "Runs JavaScript in the sandbox (the body of an async \
    function; `sdk`, `utils` and the rendered `inputs` as the frozen `vars` in scope). Output: \
    what it returns.";

pub(super) const FIELDS: &[Field] = &[
    Field {
        name: "code",
        ty: FieldType::String,
        required: true,
        description: "the JavaScript; `return` the output",
    },
    Field {
        name: "inputs",
        ty: FieldType::Json,
        required: false,
        description: "an object with references, rendered and given to the code as `vars`",
    },
];

/// A `code` node.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Config {
    code: String,
    #[serde(default)]
    inputs: Option<Value>,
}

pub(super) fn check(config: &Config, _: &CheckContext) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if config.code.trim().is_empty() {
        out.push(("code".to_owned(), "must not be empty".to_owned()));
    }
    if config.inputs.as_ref().is_some_and(|v| !v.is_object()) {
        out.push(("inputs".to_owned(), "must be an object (it becomes `vars`)".to_owned()));
    }
    out
}

pub(super) async fn run(config: &Config, ctx: &NodeCtx) -> Result<NodeResult, NodeError> {
    let vars = match &config.inputs {
        Some(v) => match ctx.scope.render_json(v)? {
            Value::Object(m) => m,
            _ => Map::new(),
        },
        None => Map::new(),
    };
    match ctx.deps.sandbox.run_panel(&config.code, &PanelContext { vars }).await {
        Ok(outcome) => Ok(NodeResult::output(outcome.value)),
        Err(e) => Err(NodeError { message: e.to_string(), detail: serde_json::to_value(&e).ok() }),
    }
}
