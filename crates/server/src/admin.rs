//! `/api/admin/...`: providers, models, agents and settings defined at run time (admin scope).
//! Thin: parse, call `app.admin`, map errors once through [`ApiError`]. What wins over the
//! files, and how changes apply, is `admin`'s.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use serde::Deserialize;
use serde_json::Value;
use utoipa::OpenApi;

use super::envelope::{Envelope, ErrorBody};
use super::routes::{Routes, get, post, put};
use super::{ApiError, ApiQuery, ok, parse_body};
use access::keys::Scope;
use admin::{
    AgentView, McpServerView, PromptInput, ProviderInput, ProviderView, Settings, SettingsView,
};
use agent::prompt_template::PromptTemplate;
use agent::tools::mcp::McpServerFile;
use app::App;
use llm::config::ModelSpec;

/// The operations of this module, for the OpenAPI document.
#[derive(OpenApi)]
#[openapi(paths(
    list_providers,
    put_provider,
    delete_provider,
    list_models,
    put_model,
    delete_model,
    get_settings,
    put_settings,
    list_agents,
    get_agent,
    put_agent,
    delete_agent,
    list_prompts,
    get_prompt,
    put_prompt,
    delete_prompt,
    render_prompt,
    list_mcp_servers,
    put_mcp_server,
    delete_mcp_server
))]
pub(crate) struct Doc;

/// The routes of this module.
pub fn routes() -> Routes<Arc<App>> {
    const ADMIN: Scope = Scope::Admin;
    Routes::new()
        .route("/api/admin/providers", get(ADMIN, list_providers))
        .route(
            "/api/admin/providers/{key}",
            put(ADMIN, put_provider).delete(ADMIN, delete_provider),
        )
        .route(
            "/api/admin/models",
            get(ADMIN, list_models).put(ADMIN, put_model).delete(ADMIN, delete_model),
        )
        .route("/api/admin/settings", get(ADMIN, get_settings).put(ADMIN, put_settings))
        .route("/api/admin/agents", get(ADMIN, list_agents))
        .route(
            "/api/admin/agents/{key}",
            get(ADMIN, get_agent).put(ADMIN, put_agent).delete(ADMIN, delete_agent),
        )
        .route("/api/admin/prompts", get(ADMIN, list_prompts))
        .route(
            "/api/admin/prompts/{name}",
            get(ADMIN, get_prompt).put(ADMIN, put_prompt).delete(ADMIN, delete_prompt),
        )
        .route("/api/admin/prompts/{name}/render", post(ADMIN, render_prompt))
        .route("/api/admin/mcp-servers", get(ADMIN, list_mcp_servers))
        .route(
            "/api/admin/mcp-servers/{name}",
            put(ADMIN, put_mcp_server).delete(ADMIN, delete_mcp_server),
        )
}

/// Every configured provider (file, environment and admin), in resolution order; never keys.
#[utoipa::path(
    get,
    path = "/api/admin/providers",
    tag = "admin",
    responses((status = 200, description = "The providers.", body = Envelope<Vec<ProviderView>>), (status = "default", response = ErrorBody))
)]
async fn list_providers(State(app): State<Arc<App>>) -> Response {
    ok(app.admin.providers().await)
}

/// Creates or replaces a provider; it wins over the file's or environment's of the same key
/// and applies at once.
#[utoipa::path(
    put,
    path = "/api/admin/providers/{key}",
    tag = "admin",
    params(("key" = String, Path, description = "The provider key (letters, digits, `-`, `_`).")),
    request_body = ProviderInput,
    responses((status = 200, description = "The provider in force.", body = Envelope<ProviderView>), (status = "default", response = ErrorBody))
)]
async fn put_provider(
    State(app): State<Arc<App>>,
    Path(key): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let input: ProviderInput = parse_body(&body)?;
    Ok(ok(app.admin.put_provider(&key, input).await?))
}

/// Removes a provider defined here (and its model entries when no file defines it); a file's
/// or environment's of the same key comes back.
#[utoipa::path(
    delete,
    path = "/api/admin/providers/{key}",
    tag = "admin",
    params(("key" = String, Path, description = "The provider key.")),
    responses((status = 200, description = "Removed.", body = Envelope<Value>), (status = "default", response = ErrorBody))
)]
async fn delete_provider(
    State(app): State<Arc<App>>,
    Path(key): Path<String>,
) -> Result<Response, ApiError> {
    app.admin.delete_provider(&key).await?;
    Ok(ok(serde_json::json!({ "deleted": key })))
}

/// The model entries defined here (every served model: `GET /v1/models`).
#[utoipa::path(
    get,
    path = "/api/admin/models",
    tag = "admin",
    responses((status = 200, description = "The entries.", body = Envelope<Vec<ModelSpec>>), (status = "default", response = ErrorBody))
)]
async fn list_models(State(app): State<Arc<App>>) -> Response {
    ok(app.admin.models().await)
}

/// Creates or replaces the entry of `provider`/`id` (context window, prices, capabilities).
#[utoipa::path(
    put,
    path = "/api/admin/models",
    tag = "admin",
    request_body = ModelSpec,
    responses((status = 200, description = "The entry.", body = Envelope<ModelSpec>), (status = "default", response = ErrorBody))
)]
async fn put_model(State(app): State<Arc<App>>, body: Bytes) -> Result<Response, ApiError> {
    let spec: ModelSpec = parse_body(&body)?;
    Ok(ok(app.admin.put_model(spec).await?))
}

/// Which model entry.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct ModelRef {
    /// The provider key.
    provider: String,
    /// The model id.
    id: String,
}

/// Removes the entry defined here for `provider`/`id`.
#[utoipa::path(
    delete,
    path = "/api/admin/models",
    tag = "admin",
    params(ModelRef),
    responses((status = 200, description = "Removed.", body = Envelope<Value>), (status = "default", response = ErrorBody))
)]
async fn delete_model(
    State(app): State<Arc<App>>,
    ApiQuery(r): ApiQuery<ModelRef>,
) -> Result<Response, ApiError> {
    app.admin.delete_model(&r.provider, &r.id).await?;
    Ok(ok(serde_json::json!({ "deleted": format!("{}/{}", r.provider, r.id) })))
}

/// The settings, with the default model in force.
#[utoipa::path(
    get,
    path = "/api/admin/settings",
    tag = "admin",
    responses((status = 200, description = "The settings.", body = Envelope<SettingsView>), (status = "default", response = ErrorBody))
)]
async fn get_settings(State(app): State<Arc<App>>) -> Response {
    ok(app.admin.settings().await)
}

/// Replaces the settings (the default model must resolve to a configured provider).
#[utoipa::path(
    put,
    path = "/api/admin/settings",
    tag = "admin",
    request_body = Settings,
    responses((status = 200, description = "The settings.", body = Envelope<SettingsView>), (status = "default", response = ErrorBody))
)]
async fn put_settings(State(app): State<Arc<App>>, body: Bytes) -> Result<Response, ApiError> {
    let settings: Settings = parse_body(&body)?;
    let view = app.admin.put_settings(settings).await?;
    app.sdk.set_fallback(view.settings.data_fallback);
    app.alerting.channels().set_settings_relay(app.admin.mail_relay().await);
    Ok(ok(view))
}

/// Every agent, with where its definition comes from (`builtin`, `file`, `admin`).
#[utoipa::path(
    get,
    path = "/api/admin/agents",
    tag = "admin",
    responses((status = 200, description = "The agents.", body = Envelope<Vec<AgentView>>), (status = "default", response = ErrorBody))
)]
async fn list_agents(State(app): State<Arc<App>>) -> Response {
    ok(app.admin.agents().await)
}

/// An agent's definition in force, as an agent file holds it.
#[utoipa::path(
    get,
    path = "/api/admin/agents/{key}",
    tag = "admin",
    params(("key" = String, Path, description = "The agent key.")),
    responses((status = 200, description = "The definition.", body = Envelope<Value>), (status = "default", response = ErrorBody))
)]
async fn get_agent(
    State(app): State<Arc<App>>,
    Path(key): Path<String>,
) -> Result<Response, ApiError> {
    Ok(ok(app.admin.agent(&key).await?))
}

/// Creates or replaces an agent: the body is an agent file's JSON, validated exactly as files
/// are (a 400 names every field at fault); it wins over the file and built-in of its key.
#[utoipa::path(
    put,
    path = "/api/admin/agents/{key}",
    tag = "admin",
    params(("key" = String, Path, description = "The agent key (1-64 of A-Z a-z 0-9 _ -).")),
    request_body(content = Value, description = "The agent definition (an agent file's JSON)."),
    responses((status = 200, description = "The agent.", body = Envelope<AgentView>), (status = "default", response = ErrorBody))
)]
async fn put_agent(
    State(app): State<Arc<App>>,
    Path(key): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let definition: Value = parse_body(&body)?;
    if !definition.is_object() {
        return Err(ApiError::bad("expected the agent definition: a JSON object"));
    }
    Ok(ok(app.admin.put_agent(&key, &definition).await?))
}

/// Removes the definition made here; the file's or built-in of the same key comes back.
#[utoipa::path(
    delete,
    path = "/api/admin/agents/{key}",
    tag = "admin",
    params(("key" = String, Path, description = "The agent key.")),
    responses((status = 200, description = "Removed.", body = Envelope<Value>), (status = "default", response = ErrorBody))
)]
async fn delete_agent(
    State(app): State<Arc<App>>,
    Path(key): Path<String>,
) -> Result<Response, ApiError> {
    app.admin.delete_agent(&key).await?;
    Ok(ok(serde_json::json!({ "deleted": key })))
}

/// Every prompt template (agents use one with `{{prompt:NAME}}` in a prompt).
#[utoipa::path(
    get,
    path = "/api/admin/prompts",
    tag = "admin",
    responses((status = 200, description = "The templates.", body = Envelope<Vec<PromptTemplate>>), (status = "default", response = ErrorBody))
)]
async fn list_prompts(State(app): State<Arc<App>>) -> Response {
    ok(app.admin.prompts().await)
}

/// One prompt template.
#[utoipa::path(
    get,
    path = "/api/admin/prompts/{name}",
    tag = "admin",
    params(("name" = String, Path, description = "The template's name.")),
    responses((status = 200, description = "The template.", body = Envelope<PromptTemplate>), (status = "default", response = ErrorBody))
)]
async fn get_prompt(
    State(app): State<Arc<App>>,
    Path(name): Path<String>,
) -> Result<Response, ApiError> {
    Ok(ok(app.admin.prompt(&name).await?))
}

/// Creates or replaces a prompt template; agents using it take the new text at once.
#[utoipa::path(
    put,
    path = "/api/admin/prompts/{name}",
    tag = "admin",
    params(("name" = String, Path, description = "The template's name (1-64 of A-Z a-z 0-9 _ - .).")),
    request_body = PromptInput,
    responses((status = 200, description = "The template.", body = Envelope<PromptTemplate>), (status = "default", response = ErrorBody))
)]
async fn put_prompt(
    State(app): State<Arc<App>>,
    Path(name): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let input: PromptInput = parse_body(&body)?;
    Ok(ok(app.admin.put_prompt(&name, input).await?))
}

/// Removes a prompt template no agent uses (409 naming the agents that do).
#[utoipa::path(
    delete,
    path = "/api/admin/prompts/{name}",
    tag = "admin",
    params(("name" = String, Path, description = "The template's name.")),
    responses((status = 200, description = "Removed.", body = Envelope<Value>), (status = "default", response = ErrorBody))
)]
async fn delete_prompt(
    State(app): State<Arc<App>>,
    Path(name): Path<String>,
) -> Result<Response, ApiError> {
    app.admin.delete_prompt(&name).await?;
    Ok(ok(serde_json::json!({ "deleted": name })))
}

/// Values for a template's `{{variable}}` placeholders.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct RenderInput {
    /// One value per placeholder (strings as they are, others as JSON).
    #[serde(default)]
    vars: serde_json::Map<String, Value>,
}

/// A template's text with its placeholders filled: `{text}`; a placeholder without a value,
/// or a value without a placeholder, is a 400 naming it (`vars.NAME`).
#[utoipa::path(
    post,
    path = "/api/admin/prompts/{name}/render",
    tag = "admin",
    params(("name" = String, Path, description = "The template's name.")),
    request_body = RenderInput,
    responses((status = 200, description = "The text.", body = Envelope<Value>), (status = "default", response = ErrorBody))
)]
async fn render_prompt(
    State(app): State<Arc<App>>,
    Path(name): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let input: RenderInput = parse_body(&body)?;
    let text = app.admin.render_prompt(&name, &input.vars).await?;
    Ok(ok(serde_json::json!({ "text": text })))
}

/// Every MCP server defined here (agents list one as `{"name": NAME}`); `env` and `headers`
/// by name only.
#[utoipa::path(
    get,
    path = "/api/admin/mcp-servers",
    tag = "admin",
    responses((status = 200, description = "The servers.", body = Envelope<Vec<McpServerView>>), (status = "default", response = ErrorBody))
)]
async fn list_mcp_servers(State(app): State<Arc<App>>) -> Response {
    ok(app.admin.mcp_servers().await)
}

/// Creates or replaces an MCP server: a stdio `command` (run in the shell's sandbox) or a
/// streamable HTTP `url`. `env` and `headers` values are sealed at rest and never shown again.
/// Runs starting afterwards use it.
#[utoipa::path(
    put,
    path = "/api/admin/mcp-servers/{name}",
    tag = "admin",
    params(("name" = String, Path, description = "The server's name (1-32 of A-Z a-z 0-9 _ -, no `__`).")),
    request_body = McpServerFile,
    responses((status = 200, description = "The server.", body = Envelope<McpServerView>), (status = "default", response = ErrorBody))
)]
async fn put_mcp_server(
    State(app): State<Arc<App>>,
    Path(name): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let input: McpServerFile = parse_body(&body)?;
    Ok(ok(app.admin.put_mcp_server(&name, input).await?))
}

/// Removes an MCP server defined here.
#[utoipa::path(
    delete,
    path = "/api/admin/mcp-servers/{name}",
    tag = "admin",
    params(("name" = String, Path, description = "The server's name.")),
    responses((status = 200, description = "Removed.", body = Envelope<Value>), (status = "default", response = ErrorBody))
)]
async fn delete_mcp_server(
    State(app): State<Arc<App>>,
    Path(name): Path<String>,
) -> Result<Response, ApiError> {
    app.admin.delete_mcp_server(&name).await?;
    Ok(ok(serde_json::json!({ "deleted": name })))
}
