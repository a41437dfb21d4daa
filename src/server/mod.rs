//! The HTTP edge, all of it: the accept loop and its bounds (`connections`), the security
//! middleware in front of every route (`guard`), the REST API (`/api/...`, `{code, msg, data}`
//! envelope; the agent gateway's endpoints in `agents` and `query`), the WebSocket endpoint
//! (`ws`) and the web app's static files (`web`). Handlers are thin: parse and validate input,
//! call a service of `App` (`dashboards`, `agents`, ...), map errors once through [`ApiError`].
//! Never touches the store; only `ws` uses the live layer's subscription API.

pub mod agents;
pub mod connections;
pub mod error;
pub mod guard;
pub mod keys;
pub mod openai;
pub mod query;
pub mod usage;
pub mod web;
pub mod ws;

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio::net::TcpListener;

use crate::access::Access;
use crate::app::App;
use crate::dashboard::summary::summary;
use crate::dashboard::validate::parse_state;
pub use error::{ApiError, created, ok, parse_body};

type Api = State<Arc<App>>;
type ApiResult = Result<Response, ApiError>;

/// Why the server could not start serving.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The access settings are unsafe for the bound address, or invalid.
    #[error(transparent)]
    Access(#[from] crate::access::AccessError),
    /// The listener failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// The router over a started app, behind the access guard for a server bound to `bound`.
pub fn app(state: Arc<App>, bound: std::net::SocketAddr) -> Result<Router, ServeError> {
    let access = Access::new(&state.access, state.token.clone(), bound)?;
    let gate = Arc::new(guard::Gate { access, keys: state.keys.clone() });
    // Per route, so the route template is known; outermost, so refusals are measured too.
    Ok(routes(state)
        .layer(axum::middleware::from_fn_with_state(gate, guard::guard))
        .layer(axum::middleware::from_fn(measure)))
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
    crate::telemetry::http_request(&method, &route, response.status().as_u16(), started.elapsed());
    response
}

/// `GET /metrics`: Prometheus text format (the `metrics` scope, or the token).
async fn metrics(State(app): Api) -> ApiResult {
    crate::telemetry::gauges(ws::viewers(&app), app.agents.live_runs());
    let text = crate::telemetry::render().ok_or_else(|| {
        ApiError::Unavailable("metrics are recorded elsewhere in this process".into())
    })?;
    Ok(([(axum::http::header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")], text)
        .into_response())
}

fn routes(state: Arc<App>) -> Router {
    Router::new()
        .route("/healthz", get(|| async { ok(json!({"status": "ok"})) }))
        .route("/metrics", get(metrics))
        .route("/api/dashboards", get(list_dashboards).post(create_dashboard))
        .route(
            "/api/dashboards/{id}",
            get(get_dashboard).put(save_dashboard).delete(delete_dashboard),
        )
        .route("/api/dashboards/{id}/restore", post(restore_dashboard))
        .route("/api/dashboards/{id}/versions", get(list_versions))
        .route("/api/dashboards/{id}/versions/{version}", get(get_version))
        .route("/api/dashboards/{id}/revert", post(revert_dashboard))
        .route("/api/dashboards/{id}/refresh", post(refresh_dashboard))
        .route("/api/dashboards/{id}/data", get(dashboard_data))
        .route("/api/tools/{tool}", post(call_tool))
        .route("/api/panels/preview", post(preview_panel))
        .route("/api/sdk/sources", get(sdk_sources))
        .route("/api/templates", get(list_templates))
        .route("/ws", get(crate::server::ws::upgrade))
        .merge(agents::routes())
        .merge(openai::routes())
        .merge(keys::routes())
        .merge(usage::routes())
        .merge(crate::server::web::routes(state.web.clone()))
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
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let limits = state.server_limits.clone();
    let router = app(state, listener.local_addr()?)?;
    serve(listener, router, limits, shutdown).await
}

/// Serves `router` (from [`app`]) until `shutdown` completes, then drains in-flight requests;
/// the connection bounds are the app's (`connections::ServerLimits`).
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: crate::server::connections::ServerLimits,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    crate::server::connections::serve(listener, router, limits, shutdown).await?;
    Ok(())
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ListQuery {
    #[serde(default)]
    include_deleted: bool,
}

async fn list_dashboards(State(app): Api, Query(q): Query<ListQuery>) -> ApiResult {
    Ok(ok(app.dashboards.list(q.include_deleted).await?))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CreateBody {
    /// A full DashboardState, or
    state: Option<Value>,
    /// the name of an example dashboard, or
    template: Option<String>,
    /// a dashboard to copy.
    duplicate_of: Option<String>,
    /// Title override for templates and copies.
    title: Option<String>,
}

async fn create_dashboard(State(app): Api, body: Bytes) -> ApiResult {
    let body: CreateBody = parse_body(&body)?;
    let record = match (body.state, body.template, body.duplicate_of) {
        (Some(state), None, None) => {
            let state = parse_state(&state).map_err(|e| ApiError::BadRequest {
                msg: format!("invalid DashboardState: {e}"),
                data: json!({ "issues": e.0 }),
            })?;
            app.dashboards.create(None, state, "created", Vec::new()).await?
        }
        (None, Some(name), None) => {
            let Some((_, value)) = crate::app::templates().into_iter().find(|(n, _)| *n == name)
            else {
                let names: Vec<String> =
                    crate::app::templates().into_iter().map(|(n, _)| n).collect();
                return Err(ApiError::NotFound(format!(
                    "no template `{name}`; templates: {}",
                    names.join(", ")
                )));
            };
            let mut state = parse_state(&value).map_err(ApiError::internal)?;
            if let Some(t) = body.title {
                state.title = t;
            }
            app.dashboards.create(None, state, &format!("template {name}"), Vec::new()).await?
        }
        (None, None, Some(id)) => app.dashboards.duplicate(&id, body.title).await?,
        _ => return Err(ApiError::bad("give exactly one of `state`, `template` or `duplicateOf`")),
    };
    Ok(created(record))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct DetailQuery {
    #[serde(default)]
    detail: Option<String>,
}

async fn get_dashboard(
    State(app): Api,
    Path(id): Path<String>,
    Query(q): Query<DetailQuery>,
) -> ApiResult {
    let rec = app.dashboards.get(&id).await?;
    match q.detail.as_deref() {
        None | Some("full") => Ok(ok(rec)),
        Some("summary") => Ok(ok(json!({
            "id": rec.id, "version": rec.version, "deleted": rec.deleted,
            "updatedAt": rec.updated_at, "state": summary(&rec.state),
        }))),
        Some(other) => {
            Err(ApiError::bad(format!("`detail` must be `summary` or `full`, got `{other}`")))
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SaveBody {
    /// The version this edit was based on; a different current version is a 409.
    base_version: u64,
    state: Value,
}

/// Saves an edited state as a new version (optimistic concurrency) and pushes it.
async fn save_dashboard(State(app): Api, Path(id): Path<String>, body: Bytes) -> ApiResult {
    let body: SaveBody = parse_body(&body)?;
    let state = parse_state(&body.state).map_err(|e| ApiError::BadRequest {
        msg: format!("invalid DashboardState: {e}"),
        data: json!({ "issues": e.0 }),
    })?;
    Ok(ok(app.dashboards.edit(&id, body.base_version, state).await?.record))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeleteQuery {
    #[serde(default)]
    purge: bool,
}

/// Soft-deletes (restorable); `?purge=true` also removes the dashboard and its history for
/// good, freeing its share of the store's quota.
async fn delete_dashboard(
    State(app): Api,
    Path(id): Path<String>,
    Query(q): Query<DeleteQuery>,
) -> ApiResult {
    app.dashboards.delete(&id, q.purge).await?;
    Ok(ok(json!({ "id": id, "deleted": true, "purged": q.purge })))
}

async fn restore_dashboard(State(app): Api, Path(id): Path<String>) -> ApiResult {
    Ok(ok(app.dashboards.restore(&id).await?))
}

async fn list_versions(State(app): Api, Path(id): Path<String>) -> ApiResult {
    Ok(ok(app.dashboards.versions(&id).await?))
}

async fn get_version(State(app): Api, Path((id, version)): Path<(String, String)>) -> ApiResult {
    let version: u64 = version.parse().map_err(|_| {
        ApiError::bad(format!("version must be a positive integer, got `{version}`"))
    })?;
    Ok(ok(app.dashboards.get_version(&id, version).await?))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RevertBody {
    version: u64,
}

async fn revert_dashboard(State(app): Api, Path(id): Path<String>, body: Bytes) -> ApiResult {
    let body: RevertBody = parse_body(&body)?;
    Ok(ok(app.dashboards.revert(&id, body.version).await?.record))
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RefreshBody {
    panel_id: Option<String>,
}

/// Re-runs one panel or all, pushes the results to subscribers and returns them.
async fn refresh_dashboard(State(app): Api, Path(id): Path<String>, body: Bytes) -> ApiResult {
    let body: RefreshBody =
        if body.is_empty() { RefreshBody::default() } else { parse_body(&body)? };
    let Some(results) = app.dashboards.refresh(&id, body.panel_id.as_deref()).await? else {
        let pid = body.panel_id.unwrap_or_default();
        return Err(ApiError::NotFound(format!("dashboard `{id}` has no panel `{pid}`")));
    };
    Ok(ok(json!({ "dashboardId": id, "version": results.version, "panels": results.panels })))
}

/// Latest results of every panel; panels never run are run now.
async fn dashboard_data(State(app): Api, Path(id): Path<String>) -> ApiResult {
    let results = app.dashboards.data(&id).await?;
    Ok(ok(json!({ "dashboardId": id, "version": results.version, "panels": results.panels })))
}

async fn call_tool(State(app): Api, Path(tool): Path<String>, body: Bytes) -> ApiResult {
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
    let out = app.tools.call(&tool, Value::Object(input), session.as_deref()).await?;
    Ok(ok(out))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PreviewBody {
    code: String,
    #[serde(default)]
    vars: Map<String, Value>,
}

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
        Ok(r) => {
            json!({ "status": "ok", "data": r.data, "rowCount": r.row_count, "provenance": r.provenance, "durationMs": duration_ms })
        }
        Err(e) => json!({ "status": "error", "error": e, "durationMs": duration_ms }),
    }))
}

async fn sdk_sources(State(app): Api) -> ApiResult {
    Ok(ok(app.sdk.public_json()))
}

async fn list_templates() -> ApiResult {
    let list: Vec<Value> = crate::app::templates()
        .into_iter()
        .map(|(name, v)| json!({ "name": name, "title": v["title"], "panels": v["panels"].as_array().map_or(0, Vec::len) }))
        .collect();
    Ok(ok(list))
}
