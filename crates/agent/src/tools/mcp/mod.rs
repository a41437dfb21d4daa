//! The MCP client: agents' MCP servers (`mcpServers` in agent files) as backend tools.
//!
//! Owns the connections: one per distinct server definition, shared by every run and agent
//! that lists it, started lazily by the first run that needs it ([`McpHub::tools_for`]),
//! reconnected when it was lost and retried with exponential backoff (0.5 s doubling to 60 s)
//! when connecting fails. A run is never refused because a server is down: that server's
//! tools are simply not offered to it (the reason is logged and shown by
//! [`McpHub::statuses`]); a call to a server that went down after the run started answers the
//! model with an error naming the server and why.
//!
//! Tools are namespaced `server__tool` (see [`spec::SEPARATOR`]: providers refuse `.` in
//! function names). `notifications/tools/list_changed` refreshes a connection's tool list;
//! runs started afterwards see the new list. Each call has the server's `timeoutMs`; a call
//! that times out or whose run is cancelled is abandoned with MCP's `notifications/cancelled`.
//! Results: text content as text, images, audio and binary resources as a note, structured
//! content as JSON when there is no text, `isError` as a tool error, capped in size.
//!
//! stdio servers run in the shell tool's sandbox ([`BashTool::spawn_confined`]). The client
//! speaks protocol 2025-11-25 (the initialize handshake, which every server in use speaks and
//! on which list-changed notifications need no `subscriptions/listen` stream).
//!
//! Knows nothing of HTTP handlers, the run loop or agents beyond their server definitions.

pub mod mock;
pub mod spec;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
    ContentBlock, Implementation, ProtocolVersion, ResourceContents, Tool,
};
use rmcp::service::{NotificationContext, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde::Serialize;
use serde_json::{Map, Value, json};
use tokio::io::AsyncReadExt;

use super::bash::{BashTool, Confined, ConfinedProgram};
use super::{BackendTool, ToolContext, ToolError};
use crate::catalog::{Origin, ToolKind, ToolSpec};
pub use spec::{McpServer, McpServerFile, Transport};

/// Longest wait for a server to connect (spawn or first request, handshake, tool list)
/// before a run goes on without it.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(20);
/// Characters of a tool result the model gets; the rest is cut with a note.
pub const DEFAULT_OUTPUT_CAP: usize = 64 * 1024;
/// Bytes of a stdio server's stderr kept for error messages (its first ones: the cause of a
/// failed start comes first, a stack trace after it).
const STDERR_HEAD: usize = 1024;
const FIRST_RETRY: Duration = Duration::from_millis(500);
const MAX_RETRY: Duration = Duration::from_secs(60);

/// Settings of the client.
#[derive(Debug, Clone, Copy)]
pub struct McpConfig {
    /// See [`DEFAULT_CONNECT_TIMEOUT`].
    pub connect_timeout: Duration,
    /// See [`DEFAULT_OUTPUT_CAP`].
    pub output_cap: usize,
}

impl Default for McpConfig {
    fn default() -> Self {
        Self { connect_timeout: DEFAULT_CONNECT_TIMEOUT, output_cap: DEFAULT_OUTPUT_CAP }
    }
}

/// The connections to every server agents use. Cheap to clone (shared).
#[derive(Clone)]
pub struct McpHub {
    inner: Arc<Hub>,
}

struct Hub {
    config: McpConfig,
    /// Runs stdio servers confined.
    bash: BashTool,
    http: reqwest::Client,
    servers: Mutex<HashMap<McpServer, Arc<Server>>>,
    /// The servers defined through the admin API, by name (what [`Transport::Stored`]
    /// entries refer to).
    stored: Mutex<HashMap<String, McpServer>>,
}

impl std::fmt::Debug for McpHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHub").field("config", &self.inner.config).finish_non_exhaustive()
    }
}

/// The MCP tools of one run: their definitions for the model and their executors.
#[derive(Default)]
pub struct RunMcpTools {
    /// Offered to the model (kind backend, named `server__tool`).
    pub specs: Vec<ToolSpec>,
    /// Registered with the run's backend tools.
    pub executors: Vec<Arc<dyn BackendTool>>,
    /// Servers whose tools are missing, with why.
    pub unavailable: Vec<(String, String)>,
}

/// One server's state, for status views.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerStatus {
    /// Its name.
    pub name: String,
    /// `stdio` or `http`.
    pub transport: &'static str,
    /// `idle` (never used), `up` or `down`.
    pub state: &'static str,
    /// Tools it offers now (`up` only).
    pub tools: Vec<String>,
    /// Why it is down.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl McpHub {
    /// A hub whose stdio servers run in `bash`'s sandbox.
    pub fn new(bash: BashTool, config: McpConfig) -> Self {
        let http = reqwest::Client::builder()
            .no_proxy()
            .connect_timeout(config.connect_timeout)
            .build()
            .unwrap_or_default();
        let hub = Hub { config, bash, http, servers: Mutex::default(), stored: Mutex::default() };
        Self { inner: Arc::new(hub) }
    }

    /// Replaces the servers defined through the admin API (each with a real transport).
    /// Runs starting afterwards use them; connections to definitions no longer listed stay
    /// until the server stops, unused.
    pub fn set_stored(&self, servers: Vec<McpServer>) {
        let map = servers.into_iter().map(|s| (s.name.clone(), s)).collect();
        *self.inner.stored.lock().unwrap_or_else(PoisonError::into_inner) = map;
    }

    /// The tools of `servers` for a run starting now: connects those not connected (all at
    /// once, each for at most the connect timeout). A server that cannot be reached is left
    /// out with its reason in [`RunMcpTools::unavailable`].
    #[base::boxed]
    pub async fn tools_for(&self, servers: &[McpServer]) -> RunMcpTools {
        let mut out = RunMcpTools::default();
        let servers: Vec<McpServer> = {
            let stored = self.inner.stored.lock().unwrap_or_else(PoisonError::into_inner);
            servers
                .iter()
                .filter_map(|def| match def.transport {
                    Transport::Stored => {
                        let found = stored.get(&def.name).cloned();
                        if found.is_none() {
                            out.unavailable.push((
                                def.name.clone(),
                                format!(
                                    "no MCP server `{}` is defined through /api/admin/mcp-servers",
                                    def.name
                                ),
                            ));
                        }
                        found
                    }
                    _ => Some(def.clone()),
                })
                .collect()
        };
        let servers: Vec<Arc<Server>> = {
            let mut map = self.inner.servers.lock().unwrap_or_else(PoisonError::into_inner);
            servers
                .iter()
                .map(|def| {
                    Arc::clone(map.entry(def.clone()).or_insert_with(|| Arc::new(Server::new(def))))
                })
                .collect()
        };
        let ready = futures::future::join_all(servers.iter().map(|s| s.ready(&self.inner))).await;
        for (server, ready) in servers.iter().zip(ready) {
            let live = match ready {
                Ok(live) => live,
                Err(why) => {
                    tracing::warn!(server = %server.def.name, error = %why, "MCP server unavailable; its tools are left out of this run");
                    out.unavailable.push((server.def.name.clone(), why));
                    continue;
                }
            };
            for tool in live.tools.get().iter() {
                let Some(wire) = spec::wire_name(&server.def.name, &tool.name) else {
                    tracing::warn!(server = %server.def.name, tool = %tool.name, "MCP tool name too long for providers; left out");
                    continue;
                };
                if out.specs.iter().any(|s| s.name == wire) {
                    tracing::warn!(server = %server.def.name, tool = %tool.name, "MCP tool name clashes with another after sanitizing; left out");
                    continue;
                }
                let mut extra = Map::new();
                extra.insert("mcpServer".into(), json!(server.def.name));
                extra.insert("mcpTool".into(), json!(tool.name));
                out.specs.push(ToolSpec {
                    name: wire.clone(),
                    description: tool
                        .description
                        .as_deref()
                        .or(tool.title.as_deref())
                        .unwrap_or_default()
                        .to_owned(),
                    parameters: Value::Object((*tool.input_schema).clone()),
                    kind: ToolKind::Backend,
                    prompt: None,
                    extra,
                    origin: Origin::Mcp { server: server.def.name.clone() },
                });
                out.executors.push(Arc::new(McpTool {
                    hub: Arc::clone(&self.inner),
                    server: Arc::clone(server),
                    wire,
                    tool: tool.name.to_string(),
                }));
            }
        }
        out
    }

    /// Every server used so far, by name.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        let servers: Vec<Arc<Server>> = self
            .inner
            .servers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .cloned()
            .collect();
        let mut out: Vec<ServerStatus> = servers.iter().map(|s| s.status()).collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }
}

/// One server definition's connection.
struct Server {
    def: McpServer,
    /// Held across a connect, so concurrent runs wait for one attempt instead of starting
    /// several.
    state: tokio::sync::Mutex<State>,
    /// A copy for [`McpHub::statuses`], which must not wait for a connect.
    shown: Mutex<Shown>,
}

/// What [`McpHub::statuses`] shows of a server.
#[derive(Clone)]
struct Shown {
    state: &'static str,
    error: Option<String>,
    tools: Option<Arc<ToolList>>,
}

enum State {
    Idle,
    Up(Arc<Live>),
    Down { error: String, failures: u32, retry_at: Instant },
}

/// A connected client.
struct Live {
    client: RunningService<RoleClient, Handler>,
    tools: Arc<ToolList>,
    /// The stdio server's process: dropping it kills the sandbox.
    _process: Option<Confined>,
}

impl Server {
    fn new(def: &McpServer) -> Self {
        Self {
            def: def.clone(),
            state: tokio::sync::Mutex::new(State::Idle),
            shown: Mutex::new(Shown { state: "idle", error: None, tools: None }),
        }
    }

    fn status(&self) -> ServerStatus {
        let Shown { state, error, tools } =
            self.shown.lock().unwrap_or_else(PoisonError::into_inner).clone();
        ServerStatus {
            name: self.def.name.clone(),
            transport: self.def.transport.kind(),
            state,
            tools: tools
                .map(|t| t.get().iter().map(|t| t.name.to_string()).collect())
                .unwrap_or_default(),
            error,
        }
    }

    fn show(&self, state: &'static str, error: Option<String>, tools: Option<Arc<ToolList>>) {
        *self.shown.lock().unwrap_or_else(PoisonError::into_inner) = Shown { state, error, tools };
    }

    /// The live connection: the current one, or a new one when there is none (or it
    /// closed) and no backoff is pending.
    async fn ready(&self, hub: &Hub) -> Result<Arc<Live>, String> {
        let mut state = self.state.lock().await;
        let failures = match &*state {
            State::Up(live) if !live.client.is_closed() => return Ok(Arc::clone(live)),
            State::Up(_) | State::Idle => 0,
            State::Down { error, failures, retry_at } => {
                let now = Instant::now();
                if now < *retry_at {
                    let wait = retry_at.duration_since(now);
                    return Err(format!("{error} (next attempt in {:.1} s)", wait.as_secs_f64()));
                }
                *failures
            }
        };
        let attempt = tokio::time::timeout(hub.config.connect_timeout, self.connect(hub)).await;
        let error = match attempt {
            Ok(Ok(live)) => {
                let live = Arc::new(live);
                tracing::info!(server = %self.def.name, tools = live.tools.get().len(), "MCP server connected");
                self.show("up", None, Some(Arc::clone(&live.tools)));
                *state = State::Up(Arc::clone(&live));
                return Ok(live);
            }
            Ok(Err(e)) => e,
            Err(_) => {
                format!("did not connect within {} s", hub.config.connect_timeout.as_secs_f64())
            }
        };
        let failures = failures + 1;
        let backoff = FIRST_RETRY.saturating_mul(1 << (failures - 1).min(10)).min(MAX_RETRY);
        self.show("down", Some(error.clone()), None);
        *state = State::Down { error: error.clone(), failures, retry_at: Instant::now() + backoff };
        Err(error)
    }

    /// Forgets `live` after its transport failed, so the next use reconnects at once.
    async fn lost(&self, live: &Arc<Live>, error: &str) {
        let mut state = self.state.lock().await;
        if matches!(&*state, State::Up(current) if Arc::ptr_eq(current, live)) {
            tracing::warn!(server = %self.def.name, error, "MCP server connection lost");
            self.show("down", Some(error.to_owned()), None);
            *state = State::Down { error: error.to_owned(), failures: 0, retry_at: Instant::now() };
        }
    }

    async fn connect(&self, hub: &Hub) -> Result<Live, String> {
        let tools = Arc::new(ToolList::default());
        let handler = Handler { server: self.def.name.clone(), tools: Arc::clone(&tools) };
        let (client, process) = match &self.def.transport {
            Transport::Stdio { command, args, env, network, read_only_paths, memory_mb } => {
                let env: Vec<(String, String)> =
                    env.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                let program = ConfinedProgram {
                    command,
                    args,
                    env: &env,
                    network: *network,
                    read_only: read_only_paths,
                    memory_mb: *memory_mb,
                };
                let mut process = hub.bash.spawn_confined(&program).await?;
                let stderr = Arc::new(Mutex::new(String::new()));
                if let Some(pipe) = process.child.stderr.take() {
                    tokio::spawn(keep_head(pipe, Arc::clone(&stderr), self.def.name.clone()));
                }
                let (Some(stdout), Some(stdin)) =
                    (process.child.stdout.take(), process.child.stdin.take())
                else {
                    return Err("the server's pipes are missing".into());
                };
                let client = match handler.serve((stdout, stdin)).await {
                    Ok(c) => c,
                    Err(e) => {
                        // Give its last words a moment to arrive.
                        let status =
                            tokio::time::timeout(Duration::from_millis(500), process.child.wait())
                                .await;
                        let said = stderr.lock().unwrap_or_else(PoisonError::into_inner).clone();
                        let exited = match status {
                            Ok(Ok(s)) => format!(" (exited: {s})"),
                            _ => String::new(),
                        };
                        let said = said.trim();
                        return Err(if said.is_empty() {
                            format!("the MCP handshake failed: {e}{exited}")
                        } else {
                            format!(
                                "the MCP handshake failed: {e}{exited}; its stderr began: {said}"
                            )
                        });
                    }
                };
                (client, Some(process))
            }
            Transport::Stored => return Err("a stored server's name, not a server".into()),
            Transport::Http { url, headers } => {
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                for (k, v) in headers {
                    let (Ok(name), Ok(value)) = (
                        reqwest::header::HeaderName::from_bytes(k.as_bytes()),
                        reqwest::header::HeaderValue::from_str(v),
                    ) else {
                        return Err(format!("header `{k}` is not valid"));
                    };
                    config.custom_headers.insert(name, value);
                }
                let transport =
                    StreamableHttpClientTransport::with_client(hub.http.clone(), config);
                let client = handler
                    .serve(transport)
                    .await
                    .map_err(|e| format!("cannot connect to {url}: {}", base::text::causes(&e)))?;
                (client, None)
            }
        };
        let list =
            client.peer().list_all_tools().await.map_err(|e| format!("tools/list failed: {e}"))?;
        tools.set(list);
        Ok(Live { client, tools, _process: process })
    }
}

/// Reads a stdio server's stderr to the end, keeping the first [`STDERR_HEAD`] bytes for
/// error messages and logging each chunk at debug level.
async fn keep_head(mut pipe: tokio::process::ChildStderr, head: Arc<Mutex<String>>, name: String) {
    let mut buf = [0u8; 1024];
    while let Ok(n) = pipe.read(&mut buf).await {
        if n == 0 {
            break;
        }
        let chunk = String::from_utf8_lossy(&buf[..n]);
        tracing::debug!(server = %name, stderr = %chunk.trim_end(), "MCP server stderr");
        let mut h = head.lock().unwrap_or_else(PoisonError::into_inner);
        for c in chunk.chars() {
            if h.len() + c.len_utf8() > STDERR_HEAD {
                break;
            }
            h.push(c);
        }
    }
}

/// A connection's current tool list, replaced whole when the server says it changed.
#[derive(Default)]
struct ToolList(Mutex<Arc<Vec<Tool>>>);

impl ToolList {
    fn get(&self) -> Arc<Vec<Tool>> {
        Arc::clone(&self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    fn set(&self, tools: Vec<Tool>) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Arc::new(tools);
    }
}

/// The client side of a connection: who we are, and the list-changed notification.
#[derive(Clone)]
struct Handler {
    server: String,
    tools: Arc<ToolList>,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("boardsmith", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        // Off the connection's task: the refresh is a request whose answer that task reads.
        let (peer, tools, server) = (context.peer, Arc::clone(&self.tools), self.server.clone());
        tokio::spawn(async move {
            match peer.list_all_tools().await {
                Ok(list) => {
                    tracing::info!(server = %server, tools = list.len(), "MCP tool list changed");
                    tools.set(list);
                }
                Err(e) => {
                    tracing::warn!(server = %server, error = %e, "MCP tools/list after list_changed failed")
                }
            }
        });
    }
}

/// One MCP tool as a backend tool.
struct McpTool {
    hub: Arc<Hub>,
    server: Arc<Server>,
    /// `server__tool`.
    wire: String,
    /// The tool's own name on its server.
    tool: String,
}

impl BackendTool for McpTool {
    fn name(&self) -> &str {
        &self.wire
    }

    fn call(&self, args: Value, _ctx: ToolContext) -> BoxFuture<'static, Result<Value, ToolError>> {
        let (hub, server, wire, tool) =
            (Arc::clone(&self.hub), Arc::clone(&self.server), self.wire.clone(), self.tool.clone());
        Box::pin(async move {
            let name = &server.def.name;
            let arguments = match args {
                Value::Object(map) => Some(map),
                Value::Null => None,
                other => {
                    return Err(ToolError::invalid(
                        &wire,
                        format!(
                            "arguments must be a JSON object, got {}",
                            super::type_name(&other)
                        ),
                    ));
                }
            };
            let live = server.ready(&hub).await.map_err(|why| {
                ToolError::failed(&wire, format!("MCP server `{name}` is unavailable: {why}"))
            })?;
            let mut params = CallToolRequestParams::new(tool.clone());
            params.arguments = arguments;
            let timeout = server.def.timeout;
            // Dropping the request (timeout, or the run's cancel dropping this future) sends
            // `notifications/cancelled` for it.
            let answer =
                tokio::time::timeout(timeout, live.client.peer().call_tool_once(params)).await;
            match answer {
                Err(_) => Err(ToolError::failed(
                    &wire,
                    format!(
                        "MCP server `{name}` did not answer within {} s; the call was cancelled",
                        timeout.as_secs_f64()
                    ),
                )),
                Ok(Ok(CallToolResponse::Complete(result))) => {
                    read_result(result, hub.config.output_cap)
                        .map_err(|m| ToolError::failed(&wire, m))
                }
                Ok(Ok(_)) => Err(ToolError::failed(
                    &wire,
                    "the server asked for input or started a task, which this client does not support",
                )),
                Ok(Err(e @ (ServiceError::TransportClosed | ServiceError::TransportSend(_)))) => {
                    let why = base::text::causes(&e);
                    server.lost(&live, &why).await;
                    Err(ToolError::failed(
                        &wire,
                        format!("MCP server `{name}` is unavailable: {why}"),
                    ))
                }
                Ok(Err(ServiceError::McpError(e))) => Err(ToolError::failed(&wire, e.message)),
                Ok(Err(e)) => Err(ToolError::failed(&wire, base::text::causes(&e))),
            }
        })
    }
}

/// A tool's result for the model: its text (other content as notes), or its structured
/// content when it sent no text; `isError` results as the error message.
fn read_result(result: CallToolResult, cap: usize) -> Result<Value, String> {
    let mut parts: Vec<String> = Vec::new();
    for block in &result.content {
        parts.push(match block {
            ContentBlock::Text(t) => t.text.clone(),
            ContentBlock::Image(i) => {
                format!("[image {}, {} bytes base64: not shown]", i.mime_type, i.data.len())
            }
            ContentBlock::Audio(a) => {
                format!("[audio {}, {} bytes base64: not shown]", a.mime_type, a.data.len())
            }
            ContentBlock::Resource(r) => match &r.resource {
                ResourceContents::TextResourceContents { uri, text, .. } => {
                    format!("[resource {uri}]\n{text}")
                }
                ResourceContents::BlobResourceContents { uri, .. } => {
                    format!("[resource {uri}: binary, not shown]")
                }
                _ => "[a resource of a kind this client does not read]".to_owned(),
            },
            ContentBlock::ResourceLink(r) => format!("[resource link {} ({})]", r.uri, r.name),
            _ => "[content of a kind this client does not read]".to_owned(),
        });
    }
    let is_error = result.is_error == Some(true);
    if parts.is_empty()
        && let Some(structured) = result.structured_content
    {
        let text = structured.to_string();
        if is_error {
            return Err(cap_text(&text, cap));
        }
        return Ok(if text.chars().count() <= cap {
            structured
        } else {
            Value::String(cap_text(&text, cap))
        });
    }
    let text = cap_text(&parts.join("\n"), cap);
    if is_error {
        Err(if text.trim().is_empty() { "the tool failed without saying why".into() } else { text })
    } else {
        Ok(Value::String(text))
    }
}

/// `text` cut to `cap` characters with a note saying how much was cut.
fn cap_text(text: &str, cap: usize) -> String {
    let total = text.chars().count();
    if total <= cap {
        return text.to_owned();
    }
    let kept = base::text::clip(text, cap);
    format!("{kept}\n[{} more characters cut]", total - cap)
}

#[cfg(test)]
mod tests {
    use rmcp::model::{ImageContent, TextContent};

    use super::*;

    #[test]
    fn results_read_for_the_model() {
        let mut r = CallToolResult::default();
        r.content = vec![
            ContentBlock::Text(TextContent::new("hello")),
            ContentBlock::Image(ImageContent::new("AAAA", "image/png")),
        ];
        assert_eq!(
            read_result(r.clone(), 100),
            Ok(json!("hello\n[image image/png, 4 bytes base64: not shown]"))
        );
        r.is_error = Some(true);
        r.content.truncate(1);
        assert_eq!(read_result(r, 100), Err("hello".to_owned()));

        let mut s = CallToolResult::default();
        s.structured_content = Some(json!({"sum": 3}));
        assert_eq!(read_result(s, 100), Ok(json!({"sum": 3})));

        let mut long = CallToolResult::default();
        long.content = vec![ContentBlock::Text(TextContent::new("x".repeat(30)))];
        assert_eq!(
            read_result(long, 10),
            Ok(json!(format!("{}…\n[20 more characters cut]", "x".repeat(10))))
        );

        let mut silent = CallToolResult::default();
        silent.is_error = Some(true);
        assert_eq!(read_result(silent, 10), Err("the tool failed without saying why".to_owned()));
    }
}
