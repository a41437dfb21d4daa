//! The agent gateway's JSON endpoints: agents, chats, viewports and frontend-tool submits.
//! Thin: read the query or body, call the catalog, chat memory or submit hub, map errors once
//! through [`ApiError`]. `data` is the business content itself (an array, an agent, a chat).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::response::Response;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use utoipa::{OpenApi, ToSchema};

use super::envelope::{Envelope, ErrorBody};
use super::routes::{Routes, get, post};
use super::{ApiError, ok, parse_body};
use access::keys::Scope;
use access::principal::Principal;
use agent::catalog::CatalogSnapshot;
use agent::definition::AgentDefinition;
use app::App;

type Api = State<Arc<App>>;
type ApiResult = Result<Response, ApiError>;
/// The query string as name/value pairs; a malformed one is a 400 in the envelope.
type Params = Result<Query<Vec<(String, String)>>, QueryRejection>;

fn pairs(q: Params) -> Result<Vec<(String, String)>, ApiError> {
    q.map(|Query(p)| p).map_err(|e| ApiError::bad(format!("malformed query string: {e}")))
}

/// The operations of this module, for the OpenAPI document.
#[derive(OpenApi)]
#[openapi(paths(list_agents, get_agent, get_chat, get_viewport, submit, super::query::query))]
pub(crate) struct Doc;

/// The routes of this module.
pub fn routes() -> Routes<Arc<App>> {
    Routes::new()
        .route("/api/agents", get(Scope::Agents, list_agents))
        .route("/api/agent", get(Scope::Agents, get_agent))
        .route("/api/chat", get(Scope::Agents, get_chat))
        .route("/api/viewport", get(Scope::Agents, get_viewport))
        .route("/api/submit", post(Scope::Agents, submit))
        .route("/api/query", post(Scope::Agents, super::query::query))
}

/// Query parameters checked against the names an endpoint accepts.
struct QueryParams(Vec<(String, String)>);

impl QueryParams {
    /// Rejects unknown and repeated names (400 naming the parameter).
    fn new(pairs: Vec<(String, String)>, allowed: &[&str]) -> Result<Self, ApiError> {
        for (i, (name, _)) in pairs.iter().enumerate() {
            if !allowed.contains(&name.as_str()) {
                return Err(ApiError::bad(format!(
                    "unknown query parameter `{name}`; expected: {}",
                    allowed.join(", ")
                )));
            }
            if pairs[..i].iter().any(|(n, _)| n == name) {
                return Err(ApiError::bad(format!("query parameter `{name}` given twice")));
            }
        }
        Ok(Self(pairs))
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// A required, non-empty parameter.
    fn required(&self, name: &str) -> Result<&str, ApiError> {
        match self.get(name).map(str::trim) {
            Some(v) if !v.is_empty() => Ok(v),
            _ => Err(ApiError::bad(format!("query parameter `{name}` is required"))),
        }
    }

    /// An optional `true`/`false` parameter (absent: false).
    fn flag(&self, name: &str) -> Result<bool, ApiError> {
        match self.get(name).map(str::trim) {
            None | Some("" | "false") => Ok(false),
            Some("true") => Ok(true),
            Some(other) => {
                Err(ApiError::bad(format!("`{name}` must be `true` or `false`, got `{other}`")))
            }
        }
    }
}

/// One row of `GET /api/agents`.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct AgentSummary<'a> {
    /// The agent's key (its file name).
    key: &'a str,
    /// The same as `key`.
    name: &'a str,
    /// What it does.
    description: &'a str,
    /// Its mode (`REACT`, `PLAIN`, ...).
    #[schema(value_type = String)]
    mode: agent::definition::Mode,
    /// Its tools.
    tools: &'a [String],
    /// Its provider key, when the file names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    provider_key: Option<&'a str>,
    /// Its model, when the file names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
    /// A team's kind (`sequential`, `parallel`, `routing`, `supervisor`); absent for a single
    /// agent.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    kind: Option<agent::team::TeamKind>,
    /// A team's member agents.
    #[serde(skip_serializing_if = "Option::is_none")]
    members: Option<&'a [String]>,
}

fn agent_summary(agent: &AgentDefinition) -> AgentSummary<'_> {
    AgentSummary {
        key: &agent.key,
        name: &agent.key,
        description: &agent.description,
        mode: agent.mode,
        tools: &agent.tools,
        provider_key: agent.provider_key.as_deref(),
        model: agent.model.as_deref(),
        kind: agent.team.as_ref().map(|t| t.kind),
        members: agent.team.as_ref().map(|t| t.members.as_slice()),
    }
}

/// `GET /api/agent`: the definition with its tools resolved (name, kind, description,
/// viewport) and the names no tool file defines under `missingTools`.
fn agent_detail(snapshot: &CatalogSnapshot, agent: &AgentDefinition) -> Result<Value, ApiError> {
    let mut detail = serde_json::to_value(agent).map_err(ApiError::internal)?;
    let resolved = snapshot.agent_tools(agent);
    let tools: Vec<Value> = resolved
        .found
        .iter()
        .map(|t| {
            let mut tool = Map::new();
            tool.insert("name".into(), json!(t.name));
            tool.insert("kind".into(), json!(t.kind));
            tool.insert("description".into(), json!(t.description));
            tool.insert("parameters".into(), t.parameters.clone());
            if let Some(v) = t.viewport_key() {
                tool.insert("viewportKey".into(), json!(v));
            }
            Value::Object(tool)
        })
        .collect();
    detail["name"] = json!(agent.key);
    detail["tools"] = Value::Array(tools);
    detail["missingTools"] = json!(resolved.missing);
    Ok(detail)
}

/// The agents of the catalog (built-ins and files).
#[utoipa::path(
    get,
    path = "/api/agents",
    tag = "agents",
    responses((status = 200, description = "The agents.", body = Envelope<Vec<AgentSummary>>), (status = "default", response = ErrorBody))
)]
async fn list_agents(State(app): Api, q: Params) -> ApiResult {
    QueryParams::new(pairs(q)?, &[])?;
    let snapshot = app.catalog.snapshot();
    let agents: Vec<AgentSummary<'_>> = snapshot.agents().map(|a| agent_summary(a)).collect();
    Ok(ok(agents))
}

/// One agent: mode, prompts, policy, its tools resolved (`{name, kind, description, parameters,
/// viewportKey?}`) and `missingTools`.
#[utoipa::path(
    get,
    path = "/api/agent",
    tag = "agents",
    params(("agentKey" = String, Query, description = "The agent.")),
    responses((status = 200, description = "The agent.", body = Envelope<Value>), (status = "default", response = ErrorBody))
)]
async fn get_agent(State(app): Api, q: Params) -> ApiResult {
    let q = QueryParams::new(pairs(q)?, &["agentKey"])?;
    let key = q.required("agentKey")?;
    let snapshot = app.catalog.snapshot();
    let agent = snapshot
        .agent(key)
        .ok_or_else(|| ApiError::NotFound(format!("agent `{key}` not found")))?;
    Ok(ok(agent_detail(&snapshot, &agent)?))
}

/// A chat's history as snapshot events: `{chatId, chatName, events, references, messages?,
/// damaged?}`.
#[utoipa::path(
    get,
    path = "/api/chat",
    tag = "chats",
    params(
        ("chatId" = String, Query, description = "The chat."),
        ("includeRawMessages" = Option<bool>, Query, description = "Also the stored messages."),
    ),
    responses((status = 200, description = "The chat.", body = Envelope<Value>), (status = "default", response = ErrorBody))
)]
async fn get_chat(
    State(app): Api,
    axum::Extension(who): axum::Extension<Principal>,
    q: Params,
) -> ApiResult {
    let q = pairs(q)?;
    if q.iter().any(|(n, _)| n == "includeEvents") {
        return Err(ApiError::bad(
            "`includeEvents` is deprecated: events are always returned; use `includeRawMessages=true` for the stored messages",
        ));
    }
    let q = QueryParams::new(q, &["chatId", "includeRawMessages"])?;
    let chat_id = q.required("chatId")?;
    let raw = q.flag("includeRawMessages")?;
    crate::chat_access::own_chat(&app, &who, chat_id).await?;
    Ok(ok(app.memory.chat_detail(chat_id, raw).await?))
}

/// A viewport: `{html}` for HTML files, else the file's JSON.
#[utoipa::path(
    get,
    path = "/api/viewport",
    tag = "agents",
    params(
        ("viewportKey" = String, Query, description = "The viewport."),
        ("chatId" = Option<String>, Query, description = "Ignored."),
        ("runId" = Option<String>, Query, description = "Ignored."),
    ),
    responses((status = 200, description = "The viewport.", body = Envelope<Value>), (status = "default", response = ErrorBody))
)]
async fn get_viewport(State(app): Api, q: Params) -> ApiResult {
    let q = QueryParams::new(pairs(q)?, &["viewportKey", "chatId", "runId"])?;
    let key = q.required("viewportKey")?;
    let snapshot = app.catalog.snapshot();
    let viewport = snapshot
        .viewport(key)
        .ok_or_else(|| ApiError::NotFound(format!("viewport `{key}` not found")))?;
    Ok(ok(&viewport.payload))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SubmitBody {
    /// The client's request id (echoed).
    request_id: Option<String>,
    /// The chat (echoed).
    chat_id: Option<String>,
    /// The run whose tool waits.
    run_id: String,
    /// The waiting tool call.
    tool_id: String,
    /// The answer: its `params` become the tool's result (`{}` without).
    payload: Value,
    /// The view that answered (echoed).
    view_id: Option<String>,
}

/// What `POST /api/submit` accepted.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct Submitted {
    /// Always true.
    accepted: bool,
    /// As sent.
    request_id: Option<String>,
    /// As sent.
    chat_id: Option<String>,
    /// As sent.
    run_id: String,
    /// As sent.
    tool_id: String,
    /// As sent.
    view_id: Option<String>,
}

/// Releases the frontend tool `runId` + `toolId` with `payload` (its `params` become the
/// tool's result).
#[utoipa::path(
    post,
    path = "/api/submit",
    tag = "agents",
    request_body = SubmitBody,
    responses((status = 200, description = "Accepted (404 when nothing waits for that run and tool).", body = Envelope<Submitted>), (status = "default", response = ErrorBody))
)]
async fn submit(
    State(app): Api,
    axum::Extension(principal): axum::Extension<Principal>,
    body: Bytes,
) -> ApiResult {
    let body: SubmitBody = parse_body(&body)?;
    for (name, value) in [("runId", &body.run_id), ("toolId", &body.tool_id)] {
        if value.trim().is_empty() {
            return Err(ApiError::bad(format!("`{name}` must be a non-empty string")));
        }
    }
    // Only the run's person (or an admin) answers its questions.
    if let Some(chat) = app.agents.chat_of_run(&body.run_id).await {
        crate::chat_access::own_chat(&app, &principal, &chat).await?;
    }
    app.agents.submit(&body.run_id, &body.tool_id, body.payload).await?;
    Ok(ok(Submitted {
        accepted: true,
        request_id: body.request_id,
        chat_id: body.chat_id,
        run_id: body.run_id,
        tool_id: body.tool_id,
        view_id: body.view_id,
    }))
}
