//! The MCP protocol handler over the dashboard tools.
//!
//! Tools: `search`, `execute`, `get_state`, `mutate` with the definitions the agent gets
//! (`builtin/tools/dashboard.backend`), annotations that say what each may do, and output
//! schemas derived from the output types; arguments are checked as the agent's are, and
//! results are capped for a model's context like the agent's (only the free-form part, so
//! they still match the schema). A caller's mistake (unknown field, unknown dashboard) is a
//! tool result with `isError` and a message saying what to do; model-code failures are part
//! of a normal result (`error`, `validation`), as for the agent.
//!
//! Who may write: nobody in read-only mode (`boardsmith mcp --read-only`,
//! `BOARDSMITH_MCP_READ_ONLY`), and over HTTP only a principal with the `write` scope; the
//! others see and may call `search` and `get_state` only.
//!
//! Each caller has its own dashboard-tool session (the active dashboard when `dashboard_id` is
//! left out): `mcp` for the owner, `mcp:KEY_ID` for an API key, `mcp:stdio` on stdio.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, Implementation, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, ServerCapabilities, ServerConfig,
    SubscribeRequestParams, SubscriptionFilter, Tool, UnsubscribeRequestParams,
};
use rmcp::service::{Peer, RequestContext, RoleServer, SubscriptionContext};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{Map, Value, json};
use tokio::sync::broadcast::error::RecvError;

use super::{prompts, resources};
use access::keys::Scope;
use access::principal::{Author, Principal};
use dashboard_agent::backend::{input, tool_error};
use dashboard_agent::{
    DashboardTool, ExecuteOutput, GetStateOutput, MutateOutput, SearchOutput, Tools, cap,
};
use dashboards::Dashboards;
use sdk::Sdk;

/// The tool definitions the agent gets; MCP clients get the same words.
const DEFINITIONS: &str = include_str!("../../../builtin/tools/dashboard.backend");

/// Which tools a server exposes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolSet {
    /// All four.
    All,
    /// `search` and `get_state` only.
    ReadOnly,
}

/// What every connection shares.
pub struct Shared {
    tools: Arc<Tools>,
    dashboards: Arc<Dashboards>,
    sdk: Arc<Sdk>,
    set: ToolSet,
    definitions: Vec<Tool>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").field("set", &self.set).finish_non_exhaustive()
    }
}

impl Shared {
    /// The server over the app's tools, dashboards and data sources.
    pub fn new(
        tools: Arc<Tools>,
        dashboards: Arc<Dashboards>,
        sdk: Arc<Sdk>,
        set: ToolSet,
    ) -> Arc<Self> {
        Arc::new(Self { tools, dashboards, sdk, set, definitions: definitions() })
    }
}

/// One MCP connection's handler (the streamable HTTP service makes one per session or
/// stateless request; stdio has one).
#[derive(Clone, Debug)]
pub struct McpServer {
    shared: Arc<Shared>,
    /// The session for stdio (no HTTP request to tell the caller by).
    stdio: bool,
    /// Resources this connection subscribed to with the pre-2026 `resources/subscribe`.
    subscribed: Arc<Mutex<Subscribed>>,
}

#[derive(Debug, Default)]
struct Subscribed {
    uris: HashSet<String>,
    /// Whether the task that forwards changes to this connection runs.
    forwarding: bool,
}

impl McpServer {
    /// A handler for one HTTP session or request.
    pub fn new(shared: Arc<Shared>) -> Self {
        Self { shared, stdio: false, subscribed: Arc::default() }
    }

    /// The handler of `boardsmith mcp` (stdio: the local user, the `mcp:stdio` session).
    pub fn stdio(shared: Arc<Shared>) -> Self {
        Self { stdio: true, ..Self::new(shared) }
    }

    /// Who sent the request: the guard's principal over HTTP, the owner on stdio.
    fn principal(&self, ctx: &RequestContext<RoleServer>) -> Principal {
        ctx.extensions
            .get::<axum::http::request::Parts>()
            .and_then(|p| p.extensions.get::<Principal>())
            .cloned()
            .unwrap_or(Principal::Owner)
    }

    fn session(&self, principal: &Principal) -> String {
        match (self.stdio, principal) {
            (true, _) => "mcp:stdio".to_owned(),
            (false, Principal::Owner) => "mcp".to_owned(),
            (false, Principal::Key { id, .. }) => format!("mcp:{id}"),
            (false, p @ Principal::User(_)) => format!("mcp:{}", p.holder()),
        }
    }

    /// Whether `principal` may call `tool` here.
    fn allowed(&self, tool: DashboardTool, principal: &Principal) -> bool {
        !tool.writes() || (self.shared.set == ToolSet::All && principal.allows(Scope::Write))
    }

    async fn call(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let principal = self.principal(&ctx);
        let name = request.name.as_ref();
        let tool = DashboardTool::from_name(name).ok_or_else(|| {
            ErrorData::invalid_params(
                format!("unknown tool `{name}`; tools/list names the tools"),
                Some(json!({ "param": "name" })),
            )
        })?;
        if !self.allowed(tool, &principal) {
            let why = if self.shared.set == ToolSet::ReadOnly {
                "this MCP server is read-only"
            } else {
                "this API key lacks the `write` scope"
            };
            return Err(ErrorData::invalid_params(
                format!("`{name}` is not available: {why}; `search` and `get_state` are"),
                Some(json!({ "param": "name" })),
            ));
        }
        let args = Value::Object(request.arguments.unwrap_or_default());
        let checked = match input(tool, &args) {
            Ok(v) => v,
            Err(e) => return Ok(CallToolResult::error(vec![ContentBlock::text(e.to_string())])),
        };
        let session = self.session(&principal);
        let client = ctx.peer.peer_info().map(|i| i.client_info.name.clone());
        let by = Author::mcp(&principal, client.as_deref());
        // Runs to its end even if the client cancels: a dashboard write is published once
        // committed (`dashboards` sees to that); the caller just stops waiting.
        let answer = tokio::select! {
            a = self.shared.tools.call_tool(tool, checked, Some(&session), &principal, &by) => a,
            () = ctx.ct.cancelled() => {
                return Err(ErrorData::internal_error("cancelled by the client", None));
            }
        };
        match answer {
            Ok(a) => Ok(CallToolResult::structured(capped(tool, &a.output))),
            Err(e) => {
                Ok(CallToolResult::error(vec![ContentBlock::text(tool_error(name, e).to_string())]))
            }
        }
    }

    /// Forwards dashboard changes to this connection's `resources/subscribe` subscriptions
    /// (and list changes to it) until it closes: only of dashboards `who` may see.
    fn forward_to(&self, peer: Peer<RoleServer>, who: Principal) {
        {
            let mut s = self.subscribed.lock().unwrap_or_else(|p| p.into_inner());
            if s.forwarding {
                return;
            }
            s.forwarding = true;
        }
        let mut changes = self.shared.dashboards.changes();
        let subscribed = self.subscribed.clone();
        let dashboards = self.shared.dashboards.clone();
        tokio::spawn(async move {
            loop {
                let (uris, list_changed) = match changes.recv().await {
                    // Not a word of a dashboard the caller may not see, not even that it moved.
                    Ok(change) if !dashboards.sharing().sees(&who, &change.id) => continue,
                    Ok(change) => resources::touched(&change),
                    // Fell behind: say everything may have changed.
                    Err(RecvError::Lagged(_)) => {
                        let uris = subscribed
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .uris
                            .iter()
                            .cloned()
                            .collect();
                        (uris, true)
                    }
                    Err(RecvError::Closed) => break,
                };
                let wanted: Vec<String> = {
                    let s = subscribed.lock().unwrap_or_else(|p| p.into_inner());
                    uris.into_iter().filter(|u| s.uris.contains(u)).collect()
                };
                for uri in wanted {
                    let param = rmcp::model::ResourceUpdatedNotificationParam::new(uri);
                    if peer.notify_resource_updated(param).await.is_err() {
                        return;
                    }
                }
                if list_changed && peer.notify_resource_list_changed().await.is_err() {
                    return;
                }
            }
        });
    }
}

/// A result capped for a model's context; only the free-form part of it, so it still matches
/// the tool's output schema.
fn capped(tool: DashboardTool, output: &Value) -> Value {
    let field = match tool {
        DashboardTool::Search => "results",
        DashboardTool::Execute | DashboardTool::GetState => "state",
        DashboardTool::Mutate => "changes",
    };
    cap::cap_field(output, field, cap::DEFAULT_MAX_TOKENS)
}

/// The four tools as MCP tools: the agent's names, descriptions and parameters, plus titles,
/// annotations and output schemas.
fn definitions() -> Vec<Tool> {
    let parsed: Value = serde_json::from_str(DEFINITIONS).unwrap_or(Value::Null);
    let by_name = |name: &str| -> Map<String, Value> {
        parsed["tools"]
            .as_array()
            .and_then(|a| a.iter().find(|t| t["name"] == name))
            .and_then(|t| t.as_object().cloned())
            .unwrap_or_default()
    };
    DashboardTool::ALL
        .into_iter()
        .map(|tool| {
            let def = by_name(tool.name());
            // What the output serializes to (fields skipped when empty are not required).
            let mut schemas = schemars::generate::SchemaSettings::draft2020_12()
                .for_serialize()
                .into_generator();
            let output = match tool {
                DashboardTool::Search => schemas.root_schema_for::<SearchOutput>(),
                DashboardTool::Execute => schemas.root_schema_for::<ExecuteOutput>(),
                DashboardTool::GetState => schemas.root_schema_for::<GetStateOutput>(),
                DashboardTool::Mutate => schemas.root_schema_for::<MutateOutput>(),
            };
            let mut output = serde_json::to_value(output).unwrap_or(Value::Null);
            // A capped result says so in `truncated` (see `cap_field`).
            output["properties"]["truncated"] = json!({
                "type": "string",
                "description": "Present when the result was cut to fit a model's context: what to do instead",
            });
            let (title, read_only, destructive, idempotent, open_world) = match tool {
                DashboardTool::Search => ("Search data sources", true, false, true, false),
                DashboardTool::GetState => ("Read a dashboard", true, false, true, false),
                // Creates, or replaces a dashboard's state (earlier versions stay restorable);
                // test-runs panel code, which reads outside data sources.
                DashboardTool::Execute => ("Build a dashboard", false, false, false, true),
                // Returning null deletes the dashboard.
                DashboardTool::Mutate => ("Edit or delete a dashboard", false, true, false, true),
            };
            let tool_json = json!({
                "name": tool.name(),
                "title": title,
                "description": def.get("description").cloned().unwrap_or(Value::Null),
                "inputSchema": def.get("parameters").cloned().unwrap_or(json!({"type": "object"})),
                "outputSchema": output,
                "annotations": {
                    "title": title,
                    "readOnlyHint": read_only,
                    "destructiveHint": destructive,
                    "idempotentHint": idempotent,
                    "openWorldHint": open_world,
                },
            });
            serde_json::from_value(tool_json).unwrap_or_else(|e| {
                // Only a broken build could get here (the inputs are compiled in); a tool
                // without a schema beats a server that cannot start.
                tracing::error!(tool = tool.name(), error = %e, "MCP tool definition");
                Tool::default()
            })
        })
        .collect()
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let caps = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_resources_list_changed()
            .enable_prompts()
            .build();
        ServerConfig::new(caps)
            .with_server_info(
                Implementation::new("boardsmith", env!("CARGO_PKG_VERSION"))
                    .with_title("Boardsmith dashboards"),
            )
            .with_instructions(
                "Live financial dashboards whose panels store code, not data. `search` explores \
                 the data sources, `execute` builds a dashboard from a state, `get_state` reads \
                 one, `mutate` edits one as `(state) => newState`. Panels refresh on their own; \
                 dashboards made here appear live in the Boardsmith web app. Resources: \
                 boardsmith://dashboards, boardsmith://dashboards/{id}, \
                 boardsmith://sources/{name}.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let principal = self.principal(&ctx);
        let tools = DashboardTool::ALL
            .into_iter()
            .zip(&self.shared.definitions)
            .filter(|(t, _)| self.allowed(*t, &principal))
            .map(|(_, d)| d.clone())
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.shared.definitions.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call(request, ctx).await.map(Into::into)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let who = self.principal(&ctx);
        let list = resources::list(&self.shared.dashboards, &self.shared.sdk, &who).await?;
        Ok(ListResourcesResult::with_all_items(list))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(resources::templates()))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let who = self.principal(&ctx);
        let contents =
            resources::read(&self.shared.dashboards, &self.shared.sdk, &request.uri, &who).await?;
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(prompts::list()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        prompts::get(&self.shared.dashboards, &request.name, request.arguments.as_ref())
            .await
            .map(Into::into)
    }

    // Protocol 2026-07-28: one `subscriptions/listen` stream per subscription.
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.supported_by(&self.get_info().capabilities))
    }

    async fn listen(&self, ctx: SubscriptionContext) -> Result<(), ErrorData> {
        let who = self.principal(ctx.request_context());
        let mut changes = self.shared.dashboards.changes();
        let sink = ctx.sink().clone();
        let follows = |uri: &str| {
            ctx.accepted()
                .resource_subscriptions
                .as_ref()
                .is_some_and(|u| u.iter().any(|x| x == uri))
        };
        let lists = ctx.accepted().resources_list_changed == Some(true);
        loop {
            let (uris, list_changed) = tokio::select! {
                () = ctx.cancelled() => return Ok(()),
                change = changes.recv() => match change {
                    // Not a word of a dashboard the caller may not see, not even that it moved.
                    Ok(change) if !self.shared.dashboards.sharing().sees(&who, &change.id) => {
                        continue;
                    }
                    Ok(change) => resources::touched(&change),
                    Err(RecvError::Lagged(_)) => (
                        ctx.accepted().resource_subscriptions.clone().unwrap_or_default(),
                        true,
                    ),
                    Err(RecvError::Closed) => return Ok(()),
                },
            };
            let visible = |uri: &str| match resources::Uri::parse(uri) {
                Some(resources::Uri::Dashboard(id)) => {
                    self.shared.dashboards.sharing().sees(&who, id)
                }
                _ => true,
            };
            for uri in uris.into_iter().filter(|u| follows(u) && visible(u)) {
                if sink.notify_resource_updated(uri).await.is_err() {
                    return Ok(());
                }
            }
            if lists && list_changed && sink.notify_resource_list_changed().await.is_err() {
                return Ok(());
            }
        }
    }

    // Protocol versions before 2026-07-28: `resources/subscribe` on a session.
    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let who = self.principal(&ctx);
        // A dashboard this caller may not see is no resource to it: no news of its changes.
        let hidden = matches!(
            resources::Uri::parse(&request.uri),
            Some(resources::Uri::Dashboard(id)) if !self.shared.dashboards.sharing().sees(&who, id)
        );
        if hidden || resources::Uri::parse(&request.uri).is_none() {
            return Err(ErrorData::resource_not_found(
                format!("no resource `{}` to subscribe to", request.uri),
                Some(json!({ "uri": request.uri })),
            ));
        }
        self.subscribed.lock().unwrap_or_else(|p| p.into_inner()).uris.insert(request.uri);
        self.forward_to(ctx.peer.clone(), who.clone());
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscribed.lock().unwrap_or_else(|p| p.into_inner()).uris.remove(&request.uri);
        Ok(())
    }
}
