//! `human`: asks the user and waits. Parks on the frontend-submit hub exactly as a frontend
//! tool does: registered before `tool.start` (tool id = the node id, type `html`, the
//! viewport as `toolApi`), the form data as `tool.args`, then `tool.end`; `POST /api/submit`
//! with the run id and the node id answers, and `payload.params` is the output. Bounded by
//! `timeoutMs` (default the hub's, at most an hour) and the run's cancellation. While it
//! waits the run is parked: it gives its run slot back (`slots.rs`).

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{CheckContext, Field, FieldType, NodeCtx, NodeError, NodeResult};
use agent::events::EventBody;
use agent::tools::ToolError;

/// The longest a `human` node waits.
const MAX_WAIT_MS: u64 = 3_600_000;

pub(super) const DESCRIPTION: &str = "Asks the user through a view in the chat (default the \
    `confirm_dialog` viewport) and waits for `POST /api/submit` with the run id and the node \
    id as `toolId`. Output: the submitted `params`.";

pub(super) const FIELDS: &[Field] = &[
    Field {
        name: "prompt",
        ty: FieldType::Template,
        required: true,
        description: "what the user is asked (the view's `message`)",
    },
    Field {
        name: "title",
        ty: FieldType::Template,
        required: false,
        description: "the view's title",
    },
    Field {
        name: "viewport",
        ty: FieldType::String,
        required: false,
        description: "the viewport that renders the form (default `confirm_dialog`)",
    },
    Field {
        name: "params",
        ty: FieldType::Json,
        required: false,
        description: "more data for the view (an object with references)",
    },
    Field {
        name: "timeoutMs",
        ty: FieldType::Integer,
        required: false,
        description: "how long to wait (default the server's submit timeout, at most 3600000)",
    },
];

/// A `human` node.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Config {
    prompt: String,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    viewport: Option<String>,
    #[serde(default)]
    params: Option<Value>,
    #[serde(default)]
    timeout_ms: Option<u64>,
}

pub(super) fn check(config: &Config, _: &CheckContext) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if config.timeout_ms.is_some_and(|t| t == 0 || t > MAX_WAIT_MS) {
        out.push(("timeoutMs".to_owned(), format!("must be 1..={MAX_WAIT_MS}")));
    }
    if config.params.as_ref().is_some_and(|v| !v.is_object()) {
        out.push(("params".to_owned(), "must be an object".to_owned()));
    }
    out
}

pub(super) async fn run(config: &Config, ctx: &NodeCtx) -> Result<NodeResult, NodeError> {
    let mut data = match &config.params {
        Some(v) => match ctx.scope.render_json(v)? {
            Value::Object(m) => m,
            _ => Map::new(),
        },
        None => Map::new(),
    };
    data.insert("message".into(), Value::String(ctx.scope.render(&config.prompt)?));
    if let Some(t) = &config.title {
        data.insert("title".into(), Value::String(ctx.scope.render(t)?));
    }
    let data = Value::Object(data);
    let tool_id = ctx.node_id.clone();
    // Registered before tool.start: an immediate answer is not lost.
    let pending = ctx
        .deps
        .submits
        .expect(&ctx.run_id, &tool_id)
        .map_err(|e| NodeError::new(e.to_string()))?;
    // Waiting on a person holds no run slot (unless other nodes of the run are working); the
    // answer takes one back before it is delivered. Parked before the client hears of the
    // form, so a client that saw it finds the slot free.
    let parked = ctx.slots.park(&ctx.run_id);
    ctx.sink.emit(EventBody::ToolStart {
        tool_id: tool_id.clone(),
        run_id: ctx.run_id.clone(),
        task_id: Some(ctx.task_id.clone()),
        tool_name: Some(ctx.node_id.clone()),
        tool_type: Some("html".to_owned()),
        tool_api: Some(config.viewport.clone().unwrap_or_else(|| "confirm_dialog".to_owned())),
        tool_params: Some(data.clone()),
        description: data.get("message").and_then(Value::as_str).map(str::to_owned),
    });
    ctx.sink.emit(EventBody::ToolArgs {
        tool_id: tool_id.clone(),
        delta: data.to_string(),
        chunk_index: Some(0),
    });
    ctx.sink.emit(EventBody::ToolEnd { tool_id: tool_id.clone() });
    let timeout = config.timeout_ms.map(Duration::from_millis);
    let answer = pending.wait(timeout, &ctx.cancel).await;
    drop(parked);
    match answer {
        Ok(answer) => {
            ctx.sink.emit(EventBody::ToolResult { tool_id, result: answer.clone() });
            Ok(NodeResult::output(answer))
        }
        Err(e) => {
            let message = match &e {
                ToolError::NoAnswer { waited } => {
                    format!("no answer from the user within {} ms", waited.as_millis())
                }
                other => other.to_string(),
            };
            ctx.sink.emit(EventBody::ToolResult { tool_id, result: json!({ "error": message }) });
            Err(NodeError::new(message))
        }
    }
}
