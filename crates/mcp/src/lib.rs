//! Boardsmith as an MCP server (the official Rust SDK, `rmcp`): the four dashboard tools with
//! the agent's inputs, outputs and checks; dashboards and data-source specs as resources, with
//! change notifications; two prompts. Served at `/mcp` on the HTTP port (streamable HTTP, behind
//! the access guard, with the SDK's own Host and Origin checks on as well) and on stdio by
//! `boardsmith mcp`.
//!
//! - `server`: the protocol handler ([`McpServer`]): tools, their annotations and output
//!   schemas, who may call what (read-only mode, a key's scopes).
//! - `resources`: the `boardsmith://` URIs, reading them, and which URIs a dashboard change
//!   touches.
//! - `prompts`: "build a dashboard for …" and "fix the failing panels of …".
//! - `http`: the tower service mounted at `/mcp`.
//! - `sessions`: its sessions per credential and in all, capped, and closed when idle.
//! - [`serve_stdio`]: the same handler on stdin/stdout, for `boardsmith mcp`.
//!
//! Writes go through `dashboard_agent::Tools` (and so through `dashboards`), like the agent's:
//! a dashboard made over MCP reaches the web app as one made in chat does. Must not know the
//! agent runtime, HTTP routing beyond building its service, or the store.

mod http;
mod prompts;
mod resources;
mod server;
mod sessions;

pub use http::service as http_service;
pub use server::{McpServer, Shared, ToolSet};
pub use sessions::SessionLimits;

/// Serves MCP on stdin/stdout (`boardsmith mcp`) until the client closes stdin or `stop` is
/// cancelled. Errors are the protocol's, as text for the command line.
#[base::boxed]
pub async fn serve_stdio(
    shared: std::sync::Arc<Shared>,
    stop: tokio_util::sync::CancellationToken,
) -> Result<(), String> {
    use rmcp::ServiceExt as _;
    let running = McpServer::stdio(shared)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("starting MCP on stdio: {e}"))?;
    tokio::select! {
        ended = running.waiting() => ended.map(|_| ()).map_err(|e| e.to_string()),
        () = stop.cancelled() => Ok(()),
    }
}
