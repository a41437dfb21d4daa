//! The HTTP edge, all of it: the accept loop and its bounds (`connections`), the security
//! middleware in front of every route (`guard`), the REST API (`/api/...`, `{code, msg, data}`
//! envelope; the agent gateway's endpoints in `agents` and `query`), the WebSocket endpoint
//! (`ws`) and the web app's static files (`web`). Handlers are thin: parse and validate input,
//! call a service of `App` (`dashboards`, `agents`, ...), map errors once through [`ApiError`].
//! Never touches the store; only `ws` uses the live layer's subscription API.

pub mod admin;
pub mod agents;
pub mod alerts;
pub mod channels;
pub mod chat_access;
pub mod chats;
pub mod connections;
pub mod diff;
pub mod drafts;
pub mod envelope;
pub mod error;
pub mod export;
pub mod guard;
pub mod kb;
pub mod keys;
pub mod oidc;
pub mod openai;
pub mod openapi;
pub mod query;
pub mod reports;
pub mod routes;
pub mod session;
pub mod share_links;
pub mod shares;
pub mod sharing;
pub mod tools;
pub mod uploads;
pub mod usage;
pub mod users;
pub mod web;
pub mod workflows;
pub mod ws;

use std::sync::Arc;

use axum::Extension;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tokio::net::TcpListener;
use utoipa::{IntoParams, OpenApi, ToSchema};

use access::Access;
use access::keys::Scope;
use access::principal::{Author, Principal, Via};
use app::App;
use dashboard::summary::summary;
use dashboard::validate::parse_state;
use dashboards::sharing::{Denied, Need};
use envelope::{Envelope, ErrorBody};
pub use error::{ApiError, created, ok, parse_body};
use routes::Need::Public;
use routes::{Routes, get, post, put};

type Api = State<Arc<App>>;
type ApiResult = Result<Response, ApiError>;

/// Why the server could not start serving.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The access settings are unsafe for the bound address, or invalid.
    #[error(transparent)]
    Access(#[from] access::AccessError),
    /// The listener failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// What the HTTP edge itself is configured with (the app knows nothing of HTTP).
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The browser app's files (`BOARDSMITH_WEB_DIR`, default: embedded in the binary).
    pub web: web::WebFiles,
    /// Connection, body and MCP session bounds (`BOARDSMITH_MAX_CONNECTIONS`, ...).
    pub limits: connections::ServerLimits,
}

impl ServerConfig {
    /// Both from the environment.
    pub fn from_env() -> Self {
        Self { web: web::WebFiles::from_env(), limits: connections::ServerLimits::from_env() }
    }
}

/// The router over a started app, behind the access guard for a server bound to `bound`.
pub fn app(
    state: Arc<App>,
    config: &ServerConfig,
    bound: std::net::SocketAddr,
) -> Result<Router, ServeError> {
    let access = Access::new(&state.access, state.token.clone(), bound)?;
    // The renderer's browser opens this server's pages over loopback.
    let ip: std::net::IpAddr = match bound.ip() {
        ip if ip.is_unspecified() && ip.is_ipv6() => std::net::Ipv6Addr::LOCALHOST.into(),
        ip if ip.is_unspecified() => std::net::Ipv4Addr::LOCALHOST.into(),
        ip => ip,
    };
    state.reports.set_origin(format!("http://{}", std::net::SocketAddr::new(ip, bound.port())));
    // MCP (streamable HTTP) behind the same guard, with the SDK's own Host/Origin checks too.
    let mcp = mcp::http_service(
        state.mcp.clone(),
        &access,
        &config.limits.mcp_sessions,
        state.shutdown_token(),
    );
    let (keys, users, sessions, audit) =
        (state.keys.clone(), state.users.clone(), state.sessions.clone(), state.audit.clone());
    let (links, signins) = (state.links.clone(), state.signins.clone());
    // Every MCP message is a POST; which tools a key may call is decided per call (`write` for
    // `execute` and `mutate`), by the MCP server.
    let (router, table) = routes(state, config.web.clone())
        .nest("/mcp", Scope::Read, |router, prefix| router.nest_service(prefix, mcp))
        .into_parts();
    let gate = Arc::new(guard::Gate {
        access,
        keys,
        users,
        sessions,
        audit: audit.clone(),
        links,
        signins,
        routes: table,
    });
    // Per route, so the route template is known; outermost, so refusals are measured too.
    Ok(router
        .layer(axum::middleware::from_fn_with_state(audit, audit_admin_writes))
        .layer(axum::middleware::from_fn_with_state(gate, guard::guard))
        .layer(axum::middleware::from_fn(measure)))
}

/// Records every administrative change that succeeded (providers, models, settings, agents,
/// prompts, MCP servers, demo fallback) in the audit trail: who, from where, which route — in
/// one place, so no admin route can forget it; never the body (keys travel in it). Users and
/// keys record their own, with more to say.
async fn audit_admin_writes(
    State(audit): State<Arc<access::audit::Audit>>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    use access::audit::{AuditKind, Event};
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let audited = !matches!(method, axum::http::Method::GET | axum::http::Method::HEAD)
        && (path == "/api/sdk/fallback"
            || (path.starts_with("/api/admin/") && !path.starts_with("/api/admin/users")));
    let who = audited.then(|| req.extensions().get::<Principal>().cloned()).flatten();
    let address = peer(&req);
    let response = next.run(req).await;
    if let Some(who) = who
        && response.status().is_success()
    {
        let kind = if path.starts_with("/api/admin/providers") {
            AuditKind::ProviderChanged
        } else {
            AuditKind::SettingsChanged
        };
        let event = Event::new(kind).by(&who).from(address).target(path).detail(method.as_str());
        audit.record(event).await;
    }
    response
}

/// Times every request into `http.server.request.duration` (until its response head).
async fn measure(req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let started = std::time::Instant::now();
    let method = req.method().as_str().to_owned();
    let route = req
        .extensions()
        .get::<axum::extract::MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned());
    let response = next.run(req).await;
    base::telemetry::http_request(&method, &route, response.status().as_u16(), started.elapsed());
    response
}

/// `GET /metrics`: Prometheus text format (the `metrics` scope, or the token).
#[utoipa::path(
    get,
    path = "/metrics",
    tag = "system",
    responses(
        (status = 200, description = "Prometheus text format (OpenTelemetry GenAI and HTTP \
            names; see the README's Metrics section).", body = String,
            content_type = "text/plain; version=0.0.4; charset=utf-8"),
        (status = "default", response = ErrorBody),
    )
)]
async fn metrics(State(app): Api) -> ApiResult {
    base::telemetry::gauges(ws::viewers(&app), app.agents.live_runs());
    let text = base::telemetry::render().ok_or_else(|| {
        ApiError::Unavailable("metrics are recorded elsewhere in this process".into())
    })?;
    Ok(([(axum::http::header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")], text)
        .into_response())
}

/// The operations of this module, for the OpenAPI document (`openapi::document`).
#[derive(OpenApi)]
#[openapi(
    paths(
        healthz,
        readyz,
        metrics,
        list_dashboards,
        create_dashboard,
        get_dashboard,
        save_dashboard,
        delete_dashboard,
        restore_dashboard,
        list_versions,
        get_version,
        revert_dashboard,
        refresh_dashboard,
        dashboard_data,
        version_data,
        preview_panel,
        sdk_sources,
        sdk_health,
        sdk_fallback,
        list_templates,
        ws::upgrade,
    ),
    components(schemas(
        store::DashboardRecord,
        store::DashboardListItem,
        store::VersionInfo,
        DetailLevel,
    ))
)]
pub(crate) struct Doc;

/// What `GET /healthz` answers.
#[derive(Serialize, ToSchema)]
struct Health {
    /// Always `ok`.
    status: &'static str,
}

/// Liveness: answers as soon as the server accepts requests (no credential needed).
#[utoipa::path(
    get,
    path = "/healthz",
    tag = "system",
    security(()),
    responses((status = 200, description = "The server is up.", body = Envelope<Health>), (status = "default", response = ErrorBody))
)]
async fn healthz() -> Response {
    ok(Health { status: "ok" })
}

/// What `GET /readyz` answers when the node is ready.
#[derive(Serialize, ToSchema)]
struct Ready {
    /// Always `ready`.
    status: &'static str,
    /// The store in use: `embedded` or `postgres`.
    store: &'static str,
    /// This node's id among the nodes of a shared store (absent for the embedded store).
    #[serde(skip_serializing_if = "Option::is_none")]
    node: Option<String>,
}

/// Readiness, for a load balancer (no credential needed): 200 while the node serves, 503
/// while it drains after SIGTERM or while its store does not answer.
#[utoipa::path(
    get,
    path = "/readyz",
    tag = "system",
    security(()),
    responses(
        (status = 200, description = "The node serves.", body = Envelope<Ready>),
        (status = 503, description = "Draining, or the store does not answer.", body = ErrorBody),
        (status = "default", response = ErrorBody)
    )
)]
async fn readyz(State(app): State<Arc<App>>) -> Result<Response, ApiError> {
    let (store, node) = app.ready().await.map_err(ApiError::Unavailable)?;
    Ok(ok(Ready { status: "ready", store, node }))
}

/// The client's address, when the request came through the accept loop.
pub(crate) fn peer(req: &axum::extract::Request) -> Option<std::net::IpAddr> {
    req.extensions()
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|axum::extract::ConnectInfo(a)| a.ip())
}

/// Every route of the API, each method with the scope it needs (see `routes`); the web app's
/// public routes are added by [`routes`] (they need its files).
pub fn api() -> Routes<Arc<App>> {
    Routes::new()
        .route("/healthz", get(Public, healthz))
        .route("/readyz", get(Public, readyz))
        .route("/openapi.json", get(Public, openapi::openapi_json))
        .route("/metrics", get(Scope::Metrics, metrics))
        .route(
            "/api/dashboards",
            get(Scope::Read, list_dashboards).post(Scope::Write, create_dashboard),
        )
        .route(
            "/api/dashboards/{id}",
            get(Scope::Read, get_dashboard)
                .put(Scope::Write, save_dashboard)
                .delete(Scope::Write, delete_dashboard),
        )
        .route("/api/dashboards/{id}/restore", post(Scope::Write, restore_dashboard))
        .route("/api/dashboards/{id}/versions", get(Scope::Read, list_versions))
        .route("/api/dashboards/{id}/versions/{version}", get(Scope::Read, get_version))
        .route("/api/dashboards/{id}/versions/{version}/data", get(Scope::Read, version_data))
        .route("/api/dashboards/{id}/revert", post(Scope::Write, revert_dashboard))
        // Runs the panels again and changes nothing stored: reading.
        .route("/api/dashboards/{id}/refresh", post(Scope::Read, refresh_dashboard))
        .route("/api/dashboards/{id}/data", get(Scope::Read, dashboard_data))
        .route("/api/panels/preview", post(Scope::Write, preview_panel))
        .route("/api/sdk/sources", get(Scope::Read, sdk_sources))
        .route("/api/sdk/health", get(Scope::Read, sdk_health))
        .route("/api/sdk/fallback", put(Scope::Admin, sdk_fallback))
        .route("/api/templates", get(Scope::Read, list_templates))
        .route("/ws", get(Scope::Read, crate::ws::upgrade))
        .merge(agents::routes())
        .merge(chats::routes())
        .merge(tools::routes())
        .merge(openai::routes())
        .merge(keys::routes())
        .merge(session::routes())
        .merge(oidc::routes())
        .merge(sharing::routes())
        .merge(share_links::routes())
        .merge(diff::routes())
        .merge(export::routes())
        .merge(alerts::routes())
        .merge(channels::routes())
        .merge(reports::routes())
        .merge(drafts::routes())
        .merge(users::routes())
        .merge(admin::routes())
        .merge(usage::routes())
        .merge(uploads::routes())
        .merge(workflows::routes())
        .merge(kb::routes())
}

/// Every route, with the state given: [`api`] and the web app.
fn routes(state: Arc<App>, web: web::WebFiles) -> Routes<()> {
    api()
        .merge(crate::web::routes(web))
        .fallback(|| async { ApiError::NotFound("no such route".into()) })
        .method_not_allowed_fallback(
            |method: axum::http::Method, uri: axum::http::Uri| async move {
                ApiError::MethodNotAllowed(format!("{} does not take {method}", uri.path()))
            },
        )
        .with_state(state)
}

/// Serves until `shutdown` completes, then drains in-flight requests. Refuses to start when
/// the access settings are unsafe for the listener's address (auth off off loopback).
pub async fn run(
    listener: TcpListener,
    state: Arc<App>,
    config: ServerConfig,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let router = app(state, &config, listener.local_addr()?)?;
    serve(listener, router, config.limits, shutdown).await
}

/// Serves `router` (from [`app`]) until `shutdown` completes, then drains in-flight requests;
/// the connection bounds are the app's (`connections::ServerLimits`).
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: crate::connections::ServerLimits,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    crate::connections::serve(listener, router, limits, Box::pin(shutdown)).await?;
    Ok(())
}

/// A query string parsed into `T`, refused with a 400 in the envelope (axum's own rejection is
/// plain text).
pub(crate) struct ApiQuery<T>(pub(crate) T);

impl<T: serde::de::DeserializeOwned, S: Send + Sync> axum::extract::FromRequestParts<S>
    for ApiQuery<T>
{
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, ApiError> {
        <Query<T> as axum::extract::FromRequestParts<S>>::from_request_parts(parts, state)
            .await
            .map(|Query(q)| Self(q))
            .map_err(|e| ApiError::bad(format!("malformed query string: {}", e.body_text())))
    }
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
struct ListQuery {
    /// Include soft-deleted dashboards.
    #[serde(default)]
    include_deleted: bool,
}

/// The dashboards, most recently updated first.
#[utoipa::path(
    get,
    path = "/api/dashboards",
    tag = "dashboards",
    params(ListQuery),
    responses((status = 200, description = "The list.", body = Envelope<Vec<store::DashboardListItem>>), (status = "default", response = ErrorBody))
)]
async fn list_dashboards(
    State(app): Api,
    Extension(who): Extension<Principal>,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> ApiResult {
    let all = app.dashboards.list(q.include_deleted).await?;
    let sharing = app.dashboards.sharing();
    Ok(ok(all.into_iter().filter(|d| sharing.sees(&who, &d.id)).collect::<Vec<_>>()))
}

/// Refuses unless `who` may do `need` with dashboard `id`: a hidden dashboard is a 404 (its id
/// tells nothing), a read-only one a 403.
fn may(app: &App, who: &Principal, id: &str, need: Need) -> Result<(), ApiError> {
    app.dashboards.may(who, id, need).map_err(|denied| match denied {
        Denied::Hidden(_) => ApiError::NotFound(denied.to_string()),
        Denied::ReadOnly(_) => ApiError::Forbidden(denied.to_string()),
    })
}

/// A state sent through REST: the dashboard rules, then the channels its alert rules name
/// (a 400 naming every problem's path).
async fn rest_state(app: &App, value: &Value) -> Result<dashboard::DashboardState, ApiError> {
    let invalid = |e: dashboard::InvalidState| ApiError::BadRequest {
        msg: format!("invalid DashboardState: {e}"),
        data: json!({ "issues": e.0 }),
    };
    let state = parse_state(value).map_err(invalid)?;
    let unknown = app.alerting.unknown_channels(&state).await?;
    if unknown.is_empty() { Ok(state) } else { Err(invalid(dashboard::InvalidState(unknown))) }
}

/// The author of a version saved through REST (the web app, an API client).
fn rest(who: &Principal) -> Author {
    Author::new(who, Via::Rest)
}

/// Give exactly one of `state`, `template` or `duplicateOf`.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CreateBody {
    /// A full DashboardState, or
    #[schema(value_type = Option<Object>)]
    state: Option<Value>,
    /// the name of an example dashboard, or
    template: Option<String>,
    /// a dashboard to copy.
    duplicate_of: Option<String>,
    /// Title override for templates and copies.
    title: Option<String>,
}

/// Creates a dashboard from a state, an example dashboard (`GET /api/templates`) or a copy.
#[utoipa::path(
    post,
    path = "/api/dashboards",
    tag = "dashboards",
    request_body = CreateBody,
    responses((status = 201, description = "Created: its first version.", body = Envelope<store::DashboardRecord>), (status = "default", response = ErrorBody))
)]
async fn create_dashboard(
    State(app): Api,
    Extension(who): Extension<Principal>,
    body: Bytes,
) -> ApiResult {
    let body: CreateBody = parse_body(&body)?;
    let record = match (body.state, body.template, body.duplicate_of) {
        (Some(state), None, None) => {
            let state = rest_state(&app, &state).await?;
            app.dashboards.create(None, state, "created", &rest(&who), Vec::new()).await?
        }
        (None, Some(name), None) => {
            let Some((_, value)) = app::templates().into_iter().find(|(n, _)| *n == name) else {
                let names: Vec<String> = app::templates().into_iter().map(|(n, _)| n).collect();
                return Err(ApiError::NotFound(format!(
                    "no template `{name}`; templates: {}",
                    names.join(", ")
                )));
            };
            let mut state = parse_state(&value).map_err(ApiError::internal)?;
            if let Some(t) = body.title {
                state.title = t;
            }
            let note = format!("template {name}");
            app.dashboards.create(None, state, &note, &rest(&who), Vec::new()).await?
        }
        (None, None, Some(id)) => {
            may(&app, &who, &id, Need::View)?;
            app.dashboards.duplicate(&id, body.title, &rest(&who)).await?
        }
        _ => return Err(ApiError::bad("give exactly one of `state`, `template` or `duplicateOf`")),
    };
    app.dashboards.claim(&who, &record.id).await?;
    Ok(created(record))
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
struct DetailQuery {
    /// `full` (default): the whole record; `summary`: the compact view the agent's `get_state`
    /// gives.
    #[serde(default)]
    #[param(value_type = Option<DetailLevel>)]
    detail: Option<String>,
}

/// How much of a dashboard `GET /api/dashboards/{id}` returns.
#[derive(ToSchema)]
#[schema(rename_all = "lowercase")]
#[allow(dead_code)] // Only its schema is used: `detail` is checked by hand for a better message.
enum DetailLevel {
    /// The compact view.
    Summary,
    /// The whole record.
    Full,
}

/// `GET /api/dashboards/{id}?detail=summary`.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct DashboardSummary {
    /// Dashboard id.
    id: String,
    /// Current version.
    version: u64,
    /// Soft-deleted.
    deleted: bool,
    /// Time of this version, unix milliseconds.
    updated_at: i64,
    /// The compact view of the state (panels without their code).
    #[schema(value_type = Object)]
    state: Value,
}

/// The full record or its summary.
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
#[allow(dead_code)] // Only its schema is used.
enum DashboardView {
    /// `detail=full`.
    Full(store::DashboardRecord),
    /// `detail=summary`.
    Summary(DashboardSummary),
}

/// The current version of a dashboard.
#[utoipa::path(
    get,
    path = "/api/dashboards/{id}",
    tag = "dashboards",
    params(("id" = String, Path, description = "The dashboard id (`db_…`)."), DetailQuery),
    responses((status = 200, description = "The record, or its summary.", body = Envelope<DashboardView>), (status = "default", response = ErrorBody))
)]
async fn get_dashboard(
    State(app): Api,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    ApiQuery(q): ApiQuery<DetailQuery>,
) -> ApiResult {
    may(&app, &who, &id, Need::View)?;
    let rec = app.dashboards.get(&id).await?;
    match q.detail.as_deref() {
        None | Some("full") => Ok(ok(rec)),
        Some("summary") => Ok(ok(DashboardSummary {
            state: summary(&rec.state),
            id: rec.id,
            version: rec.version,
            deleted: rec.deleted,
            updated_at: rec.updated_at,
        })),
        Some(other) => {
            Err(ApiError::bad(format!("`detail` must be `summary` or `full`, got `{other}`")))
        }
    }
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SaveBody {
    /// The version this edit was based on; a different current version is a 409.
    base_version: u64,
    /// The new DashboardState.
    #[schema(value_type = Object)]
    state: Value,
    /// What the edit did, for the history (at most 200 characters; default "edited").
    #[serde(default)]
    note: Option<String>,
}

/// Saves an edited state as a new version (optimistic concurrency) and pushes it.
#[utoipa::path(
    put,
    path = "/api/dashboards/{id}",
    tag = "dashboards",
    params(("id" = String, Path, description = "The dashboard id (`db_…`).")),
    request_body = SaveBody,
    responses((status = 200, description = "The new version.", body = Envelope<store::DashboardRecord>), (status = "default", response = ErrorBody))
)]
async fn save_dashboard(
    State(app): Api,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult {
    may(&app, &who, &id, Need::Edit)?;
    let body: SaveBody = parse_body(&body)?;
    let state = rest_state(&app, &body.state).await?;
    let note = match body.note.as_deref().map(str::trim) {
        None | Some("") => "edited".to_owned(),
        Some(n) if n.chars().count() > 200 || n.chars().any(char::is_control) => {
            return Err(ApiError::bad("`note` is one line of at most 200 characters"));
        }
        Some(n) => n.to_owned(),
    };
    let by = rest(&who);
    Ok(ok(app.dashboards.edit(&id, body.base_version, state, &note, &by).await?.record))
}

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
struct DeleteQuery {
    /// Remove the dashboard and its history for good.
    #[serde(default)]
    purge: bool,
}

/// What `DELETE /api/dashboards/{id}` did.
#[derive(Serialize, ToSchema)]
struct Deleted {
    /// The dashboard.
    id: String,
    /// Always true.
    deleted: bool,
    /// Whether it was removed for good.
    purged: bool,
}

/// Soft-deletes (restorable); `?purge=true` also removes the dashboard and its history for
/// good, freeing its share of the store's quota.
#[utoipa::path(
    delete,
    path = "/api/dashboards/{id}",
    tag = "dashboards",
    params(("id" = String, Path, description = "The dashboard id (`db_…`)."), DeleteQuery),
    responses((status = 200, description = "Deleted.", body = Envelope<Deleted>), (status = "default", response = ErrorBody))
)]
async fn delete_dashboard(
    State(app): Api,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    ApiQuery(q): ApiQuery<DeleteQuery>,
) -> ApiResult {
    may(&app, &who, &id, Need::Edit)?;
    app.dashboards.delete(&id, q.purge).await?;
    if q.purge {
        app.links.remove_dashboard(&id).await?;
    }
    Ok(ok(Deleted { id, deleted: true, purged: q.purge }))
}

/// Undoes a soft delete.
#[utoipa::path(
    post,
    path = "/api/dashboards/{id}/restore",
    tag = "dashboards",
    params(("id" = String, Path, description = "The dashboard id (`db_…`).")),
    responses((status = 200, description = "The restored dashboard.", body = Envelope<store::DashboardRecord>), (status = "default", response = ErrorBody))
)]
async fn restore_dashboard(
    State(app): Api,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
) -> ApiResult {
    may(&app, &who, &id, Need::Edit)?;
    Ok(ok(app.dashboards.restore(&id).await?))
}

/// A dashboard's history, newest first.
#[utoipa::path(
    get,
    path = "/api/dashboards/{id}/versions",
    tag = "dashboards",
    params(("id" = String, Path, description = "The dashboard id (`db_…`).")),
    responses((status = 200, description = "The versions kept.", body = Envelope<Vec<store::VersionInfo>>), (status = "default", response = ErrorBody))
)]
async fn list_versions(
    State(app): Api,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
) -> ApiResult {
    may(&app, &who, &id, Need::View)?;
    Ok(ok(app.dashboards.versions(&id).await?))
}

/// One version of a dashboard.
#[utoipa::path(
    get,
    path = "/api/dashboards/{id}/versions/{version}",
    tag = "dashboards",
    params(("id" = String, Path, description = "The dashboard id (`db_…`)."), ("version" = u64, Path, description = "The version number.")),
    responses((status = 200, description = "That version.", body = Envelope<store::DashboardRecord>), (status = "default", response = ErrorBody))
)]
async fn get_version(
    State(app): Api,
    Extension(who): Extension<Principal>,
    Path((id, version)): Path<(String, String)>,
) -> ApiResult {
    may(&app, &who, &id, Need::View)?;
    let version: u64 = version.parse().map_err(|_| {
        ApiError::bad(format!("version must be a positive integer, got `{version}`"))
    })?;
    Ok(ok(app.dashboards.get_version(&id, version).await?))
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct RevertBody {
    /// The version whose state becomes the new version.
    version: u64,
}

/// Saves an earlier version's state as a new version.
#[utoipa::path(
    post,
    path = "/api/dashboards/{id}/revert",
    tag = "dashboards",
    params(("id" = String, Path, description = "The dashboard id (`db_…`).")),
    request_body = RevertBody,
    responses((status = 200, description = "The new version.", body = Envelope<store::DashboardRecord>), (status = "default", response = ErrorBody))
)]
async fn revert_dashboard(
    State(app): Api,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult {
    may(&app, &who, &id, Need::Edit)?;
    let body: RevertBody = parse_body(&body)?;
    Ok(ok(app.dashboards.revert(&id, body.version, &rest(&who)).await?.record))
}

#[derive(Deserialize, Default, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RefreshBody {
    /// One panel; absent: all of them.
    panel_id: Option<String>,
}

/// Panel results as of a version.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct PanelResultsView {
    /// The dashboard.
    dashboard_id: String,
    /// The version the results belong to.
    version: u64,
    /// The latest result per panel id: `{status, data?, provenance?, error?, seq, refreshedAt?}`.
    #[schema(value_type = std::collections::HashMap<String, Object>)]
    panels: std::collections::HashMap<String, live::PanelSlot>,
}

/// Re-runs one panel or all, pushes the results to subscribers and returns them.
#[utoipa::path(
    post,
    path = "/api/dashboards/{id}/refresh",
    tag = "dashboards",
    params(("id" = String, Path, description = "The dashboard id (`db_…`).")),
    request_body(content = Option<RefreshBody>, description = "Optional: no body refreshes every panel."),
    responses((status = 200, description = "The new results.", body = Envelope<PanelResultsView>), (status = "default", response = ErrorBody))
)]
async fn refresh_dashboard(
    State(app): Api,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult {
    may(&app, &who, &id, Need::View)?;
    let body: RefreshBody =
        if body.is_empty() { RefreshBody::default() } else { parse_body(&body)? };
    let Some(results) = app.dashboards.refresh(&id, body.panel_id.as_deref()).await? else {
        let pid = body.panel_id.unwrap_or_default();
        return Err(ApiError::NotFound(format!("dashboard `{id}` has no panel `{pid}`")));
    };
    Ok(ok(PanelResultsView { dashboard_id: id, version: results.version, panels: results.panels }))
}

/// Latest results of every panel; panels never run are run now.
#[utoipa::path(
    get,
    path = "/api/dashboards/{id}/data",
    tag = "dashboards",
    params(("id" = String, Path, description = "The dashboard id (`db_…`).")),
    responses((status = 200, description = "The results.", body = Envelope<PanelResultsView>), (status = "default", response = ErrorBody))
)]
async fn dashboard_data(
    State(app): Api,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
) -> ApiResult {
    may(&app, &who, &id, Need::View)?;
    let results = app.dashboards.data(&id).await?;
    Ok(ok(PanelResultsView { dashboard_id: id, version: results.version, panels: results.panels }))
}

/// A past version's panels run now (default variable values; nothing is published): what it
/// showed, for anyone who may see the dashboard.
#[utoipa::path(
    get,
    path = "/api/dashboards/{id}/versions/{version}/data",
    tag = "dashboards",
    params(
        ("id" = String, Path, description = "The dashboard id (`db_…`)."),
        ("version" = u64, Path, description = "The version."),
    ),
    responses((status = 200, description = "The results.", body = Envelope<PanelResultsView>), (status = "default", response = ErrorBody))
)]
async fn version_data(
    State(app): Api,
    Extension(who): Extension<Principal>,
    Path((id, version)): Path<(String, String)>,
) -> ApiResult {
    may(&app, &who, &id, Need::View)?;
    let version: u64 = version.parse().map_err(|_| {
        ApiError::bad(format!("version must be a positive integer, got `{version}`"))
    })?;
    let results = app.dashboards.version_data(&id, version).await?;
    Ok(ok(PanelResultsView { dashboard_id: id, version: results.version, panels: results.panels }))
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct PreviewBody {
    /// Panel code (the body of an async function).
    code: String,
    /// Variable values (`vars` in the code).
    #[serde(default)]
    #[schema(value_type = Object)]
    vars: Map<String, Value>,
}

/// A panel preview's outcome.
#[derive(Serialize, ToSchema)]
#[serde(tag = "status", rename_all = "lowercase")]
enum Preview {
    /// The code ran and its data fits a panel.
    Ok {
        /// The data.
        data: Value,
        /// Rows in the data.
        #[serde(rename = "rowCount")]
        row_count: usize,
        /// Where the data came from.
        #[schema(value_type = Vec<Object>)]
        provenance: Vec<base::provenance::Provenance>,
        /// Wall time, ms.
        #[serde(rename = "durationMs")]
        duration_ms: f64,
    },
    /// The code failed: `{kind, message, line, column, stack, limit, logs}`.
    Error {
        /// The error.
        #[schema(value_type = Object)]
        error: sandbox::ExecError,
        /// Wall time, ms.
        #[serde(rename = "durationMs")]
        duration_ms: f64,
    },
}

/// Runs panel code once, as a panel would (429 when `BOARDSMITH_MAX_PREVIEWS` are running).
#[utoipa::path(
    post,
    path = "/api/panels/preview",
    tag = "panels",
    request_body = PreviewBody,
    responses((status = 200, description = "The outcome.", body = Envelope<Preview>), (status = "default", response = ErrorBody))
)]
async fn preview_panel(State(app): Api, body: Bytes) -> ApiResult {
    let body: PreviewBody = parse_body(&body)?;
    let run = app.dashboards.preview(&body.code, &body.vars).await.ok_or_else(|| {
        ApiError::TooMany(
            "the most panel previews this server runs at once are running \
             (BOARDSMITH_MAX_PREVIEWS); try again when one has finished"
                .into(),
        )
    })?;
    let duration_ms = run.duration.as_secs_f64() * 1e3;
    Ok(ok(match run.result {
        Ok(r) => Preview::Ok {
            data: r.data,
            row_count: r.row_count,
            provenance: r.provenance,
            duration_ms,
        },
        Err(error) => Preview::Error { error, duration_ms },
    }))
}

/// The data-source registry (what `spec` shows search code), without backings or keys.
#[utoipa::path(
    get,
    path = "/api/sdk/sources",
    tag = "panels",
    responses((status = 200, description = "The registry.", body = Envelope<Value>), (status = "default", response = ErrorBody))
)]
async fn sdk_sources(State(app): Api) -> ApiResult {
    Ok(ok(app.sdk.public_json()))
}

/// Every HTTP data provider's health, and whether the caller may switch fallback.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct DataHealth {
    /// The providers and the switches.
    #[serde(flatten)]
    #[schema(value_type = Object)]
    report: sdk::HealthReport,
    /// Whether the caller may switch fallback (`PUT /api/sdk/fallback`).
    can_change: bool,
}

/// How each data provider is doing: live, degraded, down, unknown, needs a key, off; its last
/// success, last failure and latency.
#[utoipa::path(
    get,
    path = "/api/sdk/health",
    tag = "panels",
    responses((status = 200, description = "The providers' health.", body = Envelope<DataHealth>), (status = "default", response = ErrorBody))
)]
async fn sdk_health(
    State(app): Api,
    Extension(principal): Extension<access::principal::Principal>,
) -> ApiResult {
    let can_change = principal.allows(Scope::Admin);
    Ok(ok(DataHealth { report: app.sdk.health(), can_change }))
}

/// Whether the next provider (demo data, where that is next) serves while one is unavailable.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct Fallback {
    /// On or off; `null`: as configured.
    fallback: Option<bool>,
}

/// Switches fallback at run time (kept in the admin settings), and answers the health.
#[utoipa::path(
    put,
    path = "/api/sdk/fallback",
    tag = "panels",
    request_body = Fallback,
    responses((status = 200, description = "The providers' health.", body = Envelope<DataHealth>), (status = "default", response = ErrorBody))
)]
async fn sdk_fallback(State(app): Api, body: Bytes) -> ApiResult {
    let Fallback { fallback } = parse_body(&body)?;
    let mut settings = app.admin.settings().await.settings;
    settings.data_fallback = fallback;
    let view = app.admin.put_settings(settings).await?;
    app.sdk.set_fallback(view.settings.data_fallback);
    Ok(ok(DataHealth { report: app.sdk.health(), can_change: true }))
}

/// An example dashboard, to create from with `POST /api/dashboards {template}`.
#[derive(Serialize, ToSchema)]
struct Template {
    /// Its name.
    name: String,
    /// Its title.
    title: Value,
    /// Its number of panels.
    panels: usize,
}

/// The example dashboards.
#[utoipa::path(
    get,
    path = "/api/templates",
    tag = "dashboards",
    responses((status = 200, description = "The examples.", body = Envelope<Vec<Template>>), (status = "default", response = ErrorBody))
)]
async fn list_templates() -> ApiResult {
    let list: Vec<Template> = app::templates()
        .into_iter()
        .map(|(name, v)| Template {
            title: v["title"].clone(),
            panels: v["panels"].as_array().map_or(0, Vec::len),
            name,
        })
        .collect();
    Ok(ok(list))
}
