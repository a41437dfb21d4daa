//! `tool`: calls one of the app's backend tools by name with templated JSON arguments, as a
//! model's call would run (the run id as the chat and session), and streams the same
//! `tool.start` / `tool.args` / `tool.end` / `tool.result` events, tagged with the task. The
//! result JSON is the output.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{CheckContext, Field, FieldType, NodeCtx, NodeError, NodeResult};
use agent::events::EventBody;
use agent::tools::ToolContext;

pub(super) const DESCRIPTION: &str = "Calls a backend tool (`get_state`, `refresh_dashboard`, \
    ...) with `args`, whose strings may hold references. Output: the tool's result.";

pub(super) const FIELDS: &[Field] = &[
    Field {
        name: "tool",
        ty: FieldType::String,
        required: true,
        description: "the backend tool's name",
    },
    Field {
        name: "args",
        ty: FieldType::Json,
        required: false,
        description: "the arguments object (default `{}`)",
    },
];

/// A `tool` node.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Config {
    tool: String,
    #[serde(default)]
    args: Option<Value>,
}

pub(super) fn check(config: &Config, cx: &CheckContext) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if !cx.tools.iter().any(|t| t == &config.tool) {
        let names: Vec<&str> = cx.tools.iter().map(String::as_str).collect();
        out.push((
            "tool".to_owned(),
            format!("no backend tool `{}`; available: {}", config.tool, names.join(", ")),
        ));
    }
    if config.args.as_ref().is_some_and(|v| !v.is_object()) {
        out.push(("args".to_owned(), "must be an object".to_owned()));
    }
    out
}

pub(super) async fn run(config: &Config, ctx: &NodeCtx) -> Result<NodeResult, NodeError> {
    let args = match &config.args {
        Some(v) => ctx.scope.render_json(v)?,
        None => json!({}),
    };
    let tool_id = ctx.node_id.clone();
    ctx.sink.emit(EventBody::ToolStart {
        tool_id: tool_id.clone(),
        run_id: ctx.run_id.clone(),
        task_id: Some(ctx.task_id.clone()),
        tool_name: Some(config.tool.clone()),
        tool_type: Some("backend".to_owned()),
        tool_api: None,
        tool_params: None,
        description: None,
    });
    ctx.sink.emit(EventBody::ToolArgs {
        tool_id: tool_id.clone(),
        delta: args.to_string(),
        chunk_index: Some(0),
    });
    ctx.sink.emit(EventBody::ToolEnd { tool_id: tool_id.clone() });
    let mut tcx = ToolContext::new(&ctx.run_id, &ctx.run_id).with_tool_id(tool_id.clone());
    tcx.cancel = ctx.cancel.child_token();
    // The tool acts with the rights of the person the workflow runs for.
    tcx.principal = ctx.principal.clone();
    match ctx.deps.backend.call_with_events(&config.tool, args, tcx).await {
        Ok(reply) => {
            ctx.sink.emit(EventBody::ToolResult { tool_id, result: reply.result.clone() });
            for event in reply.events {
                ctx.sink.emit(event);
            }
            Ok(NodeResult::output(reply.result))
        }
        Err(e) => {
            let message = e.to_string();
            ctx.sink.emit(EventBody::ToolResult { tool_id, result: json!({ "error": message }) });
            Err(NodeError::new(format!("tool `{}`: {message}", config.tool)))
        }
    }
}
