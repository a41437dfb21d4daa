//! `/api/tools`: every tool an agent can have (`GET /api/tools`, `GET /api/tools/{name}`:
//! kind, description, JSON schema of the arguments, and which agents use it), and the
//! dashboard agent's four tools called directly (`POST /api/tools/{tool}`), where a refused
//! change answers 422 with the tool's own result.

use std::sync::Arc;

use axum::Extension;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::{OpenApi, ToSchema};

use super::envelope::{Envelope, ErrorBody};
use super::routes::{Routes, get};
use super::{ApiError, ok, parse_body, rest};
use access::keys::Scope;
use access::principal::Principal;
use agent::catalog::{CatalogSnapshot, ToolSpec};
use app::App;

#[derive(OpenApi)]
#[openapi(paths(list, one, call_tool), components(schemas(ToolName)))]
pub(crate) struct Doc;

/// The routes of this module.
pub fn routes() -> Routes<Arc<App>> {
    Routes::new()
        .route("/api/tools", get(Scope::Agents, list))
        .route("/api/tools/{tool}", get(Scope::Agents, one).post(Scope::Write, call_tool))
}

/// A tool as listed.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct ToolView {
    /// Its name (what a query's `tools` names).
    name: String,
    /// `backend` (the server runs it), `action` (a frontend effect), or a frontend view that
    /// the run waits on (`html`, `qlc`, `dqlc`).
    kind: String,
    /// What it does, as the model reads it.
    description: String,
    /// JSON Schema of its arguments.
    #[schema(value_type = Object)]
    parameters: Value,
    /// The agents that have it, by key.
    agents: Vec<String>,
    /// The viewport a frontend tool shows.
    #[serde(skip_serializing_if = "Option::is_none")]
    viewport_key: Option<String>,
}

fn view(snapshot: &CatalogSnapshot, tool: &ToolSpec) -> ToolView {
    ToolView {
        name: tool.name.clone(),
        kind: tool.kind.tool_type().to_owned(),
        description: tool.description.clone(),
        parameters: tool.parameters.clone(),
        agents: snapshot
            .agents()
            .filter(|a| a.tools.iter().any(|t| t == &tool.name))
            .map(|a| a.key.clone())
            .collect(),
        viewport_key: tool.viewport_key().map(str::to_owned),
    }
}

/// Every tool an agent can have, by name.
#[utoipa::path(
    get,
    path = "/api/tools",
    tag = "tools",
    responses((status = 200, description = "The tools.", body = Envelope<Vec<ToolView>>), (status = "default", response = ErrorBody))
)]
async fn list(State(app): State<Arc<App>>) -> Result<Response, ApiError> {
    let snapshot = app.catalog.snapshot();
    Ok(ok(snapshot.tools().map(|t| view(&snapshot, t)).collect::<Vec<_>>()))
}

/// One tool.
#[utoipa::path(
    get,
    path = "/api/tools/{tool}",
    tag = "tools",
    params(("tool" = String, Path, description = "The tool's name.")),
    responses((status = 200, description = "The tool.", body = Envelope<ToolView>), (status = "default", response = ErrorBody))
)]
async fn one(State(app): State<Arc<App>>, Path(tool): Path<String>) -> Result<Response, ApiError> {
    let snapshot = app.catalog.snapshot();
    let spec =
        snapshot.tool(&tool).ok_or_else(|| ApiError::NotFound(format!("no tool `{tool}`")))?;
    Ok(ok(view(&snapshot, spec)))
}

/// The dashboard agent's tools, called directly: the body is the tool's input plus an optional
/// `session` (the agent's chat id; a session keeps its active dashboard).
#[utoipa::path(
    post,
    path = "/api/tools/{tool}",
    tag = "tools",
    params(("tool" = ToolName, Path, description = "The tool.")),
    request_body(content = Object, description = "`search {code}`, `execute {code, dashboard_id?}`, \
        `get_state {dashboard_id?, detail_level?}`, `mutate {code, dashboard_id?}`, each with an \
        optional `session`."),
    responses(
        (status = 200, description = "The tool's output (test-run failures of panels are part of \
            it: `validation`).", body = Envelope<Value>),
        (status = 422, description = "The change was refused (the code failed, the state broke a \
            rule, nothing was saved): `msg` says why and `data` is the tool's output with its \
            `error`.", body = ErrorBody),
        (status = "default", response = ErrorBody)
    )
)]
async fn call_tool(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    Path(tool): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let mut input: Map<String, Value> = parse_body(&body)?;
    let session = match input.remove("session") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if !s.is_empty() && s.len() <= 128 => Some(s),
        Some(other) => {
            return Err(ApiError::bad(format!(
                "`session` must be a non-empty string, got {other}"
            )));
        }
    };
    // A person's sessions are their own: another's active dashboard is out of reach.
    let session = match (session, who.person()) {
        (Some(s), Some(_)) => Some(format!("{}/{s}", who.holder())),
        (s, _) => s,
    };
    let by = rest(&who);
    let out = app.tools.call(&tool, Value::Object(input), session.as_deref(), &who, &by).await?;
    // A refused change must not read as success to an API client: 422 carrying the result
    // (the model inside an agent gets the same result as a tool answer).
    match out.get("error").and_then(Value::as_str) {
        Some(error) => Err(ApiError::Unprocessable { msg: error.to_owned(), data: out }),
        None => Ok(ok(out)),
    }
}

/// The dashboard agent's tools.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code)] // Only its schema is used: the path segment is looked up by name.
enum ToolName {
    /// Runs search code against the data-source registry.
    Search,
    /// Runs builder code that returns a new dashboard state.
    Execute,
    /// A dashboard's state.
    GetState,
    /// Runs `async (state) => newState` on a dashboard.
    Mutate,
}
