//! A scripted MCP server for tests and `boardsmith mock-mcp` (stdio), like the mock model is
//! for providers. Its tools: `echo {text}`, `add {a, b}` (structured content only),
//! `sleep {ms}` (counts the calls cancelled while sleeping), `fail` (an `isError` result),
//! `image` (an image block), `grow {name}` (adds a tool called `name` and sends
//! `notifications/tools/list_changed`), and on stdio `crash` (the process exits).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

/// What a test reads back from the server.
#[derive(Debug, Default)]
pub struct MockState {
    /// Tools added by `grow`.
    grown: Mutex<Vec<String>>,
    /// `sleep` calls that ended by a cancellation from the client.
    pub cancelled: AtomicUsize,
    /// Tool calls received.
    pub calls: AtomicUsize,
}

/// The mock server; clones share their state.
#[derive(Debug, Clone, Default)]
pub struct MockMcp {
    /// Shared with every clone (and every session of an HTTP server made from one).
    pub state: Arc<MockState>,
    stdio: bool,
}

impl MockMcp {
    /// A server for an in-process transport (no `crash`).
    pub fn new() -> Self {
        Self::default()
    }

    fn tools(&self) -> Vec<Tool> {
        let schema = |v: Value| Arc::new(v.as_object().cloned().unwrap_or_default());
        let mut tools = vec![
            Tool::new(
                "echo",
                "Says the text back.",
                schema(
                    json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
                ),
            ),
            Tool::new(
                "add",
                "Adds two numbers (structured result).",
                schema(
                    json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}),
                ),
            ),
            Tool::new(
                "sleep",
                "Waits `ms` milliseconds.",
                schema(json!({"type": "object", "properties": {"ms": {"type": "integer"}}})),
            ),
            Tool::new("fail", "Always fails.", schema(json!({"type": "object"}))),
            Tool::new("image", "Returns a tiny image.", schema(json!({"type": "object"}))),
            Tool::new(
                "grow",
                "Adds a tool named `name`.",
                schema(json!({"type": "object", "properties": {"name": {"type": "string"}}})),
            ),
        ];
        if self.stdio {
            tools.push(Tool::new("crash", "Exits the server.", schema(json!({"type": "object"}))));
        }
        for name in self.state.grown.lock().unwrap_or_else(PoisonError::into_inner).iter() {
            tools.push(Tool::new(
                name.clone(),
                "Grown at run time.",
                schema(json!({"type": "object"})),
            ));
        }
        tools
    }
}

fn text(t: impl Into<String>) -> Result<CallToolResponse, ErrorData> {
    Ok(CallToolResponse::Complete(CallToolResult::success(vec![ContentBlock::text(t)])))
}

impl ServerHandler for MockMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder().enable_tools().enable_tool_list_changed().build(),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult { tools: self.tools(), ..Default::default() })
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.state.calls.fetch_add(1, Ordering::SeqCst);
        let args = Value::Object(request.arguments.unwrap_or_default());
        match request.name.as_ref() {
            "echo" => text(format!("echo: {}", args["text"].as_str().unwrap_or_default())),
            "add" => {
                let sum = args["a"].as_f64().unwrap_or(0.0) + args["b"].as_f64().unwrap_or(0.0);
                let mut result = CallToolResult::default();
                result.structured_content = Some(json!({ "sum": sum }));
                Ok(CallToolResponse::Complete(result))
            }
            "sleep" => {
                let ms = args["ms"].as_u64().unwrap_or(1000);
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(ms)) => text("slept"),
                    () = context.ct.cancelled() => {
                        self.state.cancelled.fetch_add(1, Ordering::SeqCst);
                        text("cancelled")
                    }
                }
            }
            "fail" => {
                Ok(CallToolResponse::Complete(CallToolResult::error(vec![ContentBlock::text(
                    "it failed on purpose",
                )])))
            }
            "image" => {
                Ok(CallToolResponse::Complete(CallToolResult::success(vec![ContentBlock::image(
                    "iVBORw0KGgo=",
                    "image/png",
                )])))
            }
            "grow" => {
                let name = args["name"].as_str().unwrap_or("grown").to_owned();
                self.state.grown.lock().unwrap_or_else(PoisonError::into_inner).push(name.clone());
                let _ = context.peer.notify_tool_list_changed().await;
                text(format!("added {name}"))
            }
            "crash" if self.stdio => std::process::exit(3),
            other if self.tools().iter().any(|t| t.name == other) => {
                text(format!("called {other}"))
            }
            other => Err(ErrorData::invalid_params(format!("no tool `{other}`"), None)),
        }
    }
}

/// `boardsmith mock-mcp`: serves the mock on stdin/stdout until the client goes away.
#[base::boxed]
pub async fn serve_stdio() -> anyhow::Result<()> {
    let server = MockMcp { state: Arc::default(), stdio: true };
    let running = server.serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}
