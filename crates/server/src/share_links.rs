//! Share links over HTTP (`access::links` keeps them):
//!
//! - `POST|GET /api/dashboards/{id}/share`, `DELETE /api/dashboards/{id}/share/{link}`: make,
//!   list and revoke a dashboard's links; whoever may change the dashboard may.
//! - `GET /api/shared/{token}` and `GET /api/shared/{token}/ws`: what a link opens, for a
//!   visitor with no account (the token in the path is the credential): that one dashboard,
//!   read-only, live. Public routes (`Need::Open`): nothing else is reachable with a token —
//!   no other dashboard, no chat, no write, no provider's details (`ws::link` takes them out
//!   of the live events).
//!
//! Making, opening (at most once a minute per link) and revoking are in the audit trail.

use std::sync::Arc;

use axum::Extension;
use axum::body::Bytes;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::{OpenApi, ToSchema};

use super::envelope::Envelope;
use super::routes::{self, Routes, delete, get};
use super::session::{Peer, ip};
use super::{ApiError, created, ok, parse_body};
use access::audit::{AuditKind, Event};
use access::keys::Scope;
use access::links::{LinkRequest, NewLink, ShareLink};
use access::principal::Principal;
use app::App;
use dashboards::sharing::Need;

#[derive(OpenApi)]
#[openapi(paths(create, list, revoke, open, socket))]
pub(crate) struct Doc;

/// The routes of this module.
pub fn routes() -> Routes<Arc<App>> {
    Routes::new()
        .route("/api/dashboards/{id}/share", get(Scope::Read, list).post(Scope::Write, create))
        .route("/api/dashboards/{id}/share/{link}", delete(Scope::Write, revoke))
        .route("/api/shared/{token}", get(routes::Need::Open, open))
        .route("/api/shared/{token}/ws", get(routes::Need::Open, socket))
}

/// Only those who may change a dashboard make, see and revoke its links.
fn may_share(app: &App, who: &Principal, id: &str) -> Result<(), ApiError> {
    super::may(app, who, id, Need::Edit)
}

/// A link just made, with the URL to hand out.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct Made {
    #[serde(flatten)]
    new: NewLink,
    /// `/s/{token}`: the page that shows the dashboard.
    path: String,
    /// The page's address as this request reached the server; shown once.
    url: String,
}

#[utoipa::path(
    post,
    path = "/api/dashboards/{id}/share",
    tag = "dashboards",
    params(("id" = String, Path, description = "The dashboard id (`db_…`).")),
    request_body = LinkRequest,
    responses((status = 201, description = "The link, with its token and URL (shown only now).", body = Envelope<Made>), (status = "default", response = crate::envelope::ErrorBody))
)]
async fn create(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    jar: Option<Extension<crate::guard::SessionCookie>>,
    headers: HeaderMap,
    peer: Peer,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    may_share(&app, &who, &id)?;
    let req: LinkRequest = parse_body(&body)?;
    let record = app.dashboards.get(&id).await?;
    if record.deleted {
        return Err(ApiError::Gone(format!("dashboard `{id}` is deleted: restore it first")));
    }
    let unknown: Vec<&String> =
        req.vars.keys().filter(|k| !record.state.variables.iter().any(|v| &v.name == *k)).collect();
    if !unknown.is_empty() {
        return Err(ApiError::BadRequest {
            msg: format!("dashboard `{id}` has no variable named {unknown:?}"),
            data: serde_json::json!({ "param": "vars" }),
        });
    }
    let new = app.links.create(&id, &who, req).await?;
    let path = format!("/s/{}", new.token);
    let secure = jar.is_some_and(|Extension(j)| j.secure);
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("localhost");
    let url = format!("{}://{host}{path}", if secure { "https" } else { "http" });
    let event = Event::new(AuditKind::ShareCreated)
        .by(&who)
        .from(ip(&peer))
        .target(id)
        .detail(format!("link {}", new.link.id));
    app.audit.record(event).await;
    Ok(created(Made { new, path, url }))
}

#[utoipa::path(
    get,
    path = "/api/dashboards/{id}/share",
    tag = "dashboards",
    params(("id" = String, Path, description = "The dashboard id (`db_…`).")),
    responses((status = 200, description = "The dashboard's live links, newest first (never their tokens).", body = Envelope<Vec<ShareLink>>), (status = "default", response = crate::envelope::ErrorBody))
)]
async fn list(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    may_share(&app, &who, &id)?;
    app.dashboards.get(&id).await?;
    Ok(ok(app.links.list(&id)))
}

#[utoipa::path(
    delete,
    path = "/api/dashboards/{id}/share/{link}",
    tag = "dashboards",
    params(
        ("id" = String, Path, description = "The dashboard id (`db_…`)."),
        ("link" = String, Path, description = "The link's id (`sl_…`)."),
    ),
    responses((status = 200, description = "Revoked: the link stops working on every node, and its open views close.", body = Envelope<ShareLink>), (status = "default", response = crate::envelope::ErrorBody))
)]
async fn revoke(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    peer: Peer,
    Path((id, link)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    may_share(&app, &who, &id)?;
    let gone = app.links.revoke(&id, &link).await?;
    let event = Event::new(AuditKind::ShareRevoked)
        .by(&who)
        .from(ip(&peer))
        .target(id)
        .detail(format!("link {}", gone.id));
    app.audit.record(event).await;
    Ok(ok(gone))
}

/// The dashboard a link shows, as the visitor gets it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct SharedDashboard {
    /// Dashboard id.
    id: String,
    /// Its current version.
    version: u64,
    /// The state (title, panels, variables, layout).
    #[schema(value_type = Object)]
    state: dashboard::DashboardState,
    /// Time of this version, unix milliseconds.
    updated_at: i64,
}

/// What a share link opens.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct Opened {
    dashboard: SharedDashboard,
    /// The variable values the link shows.
    #[schema(value_type = Object)]
    vars: Map<String, Value>,
    /// Whether the visitor may change the variables.
    allow_vars: bool,
    /// When the link stops working (unix milliseconds), if it does.
    expires_at: Option<i64>,
    /// The link's label.
    #[serde(skip_serializing_if = "Option::is_none")]
    label: Option<String>,
}

#[utoipa::path(
    get,
    path = "/api/shared/{token}",
    tag = "dashboards",
    security(()),
    params(("token" = String, Path, description = "The share link's token (from `/s/{token}`).")),
    responses((status = 200, description = "The dashboard the link shows. 404: no such link (or revoked, or its dashboard deleted); 410: expired.", body = Envelope<Opened>), (status = "default", response = crate::envelope::ErrorBody))
)]
async fn open(
    State(app): State<Arc<App>>,
    peer: Peer,
    Path(token): Path<String>,
) -> Result<Response, ApiError> {
    let (link, first) = app.links.open(&token).await?;
    let record = match app.dashboards.get(&link.dashboard_id).await {
        Ok(r) if !r.deleted => r,
        // Said plainly, without the dashboard's id: the visitor has nothing to do with it.
        _ => return Err(ApiError::NotFound("the dashboard this link shows was deleted".into())),
    };
    if first {
        let event = Event::new(AuditKind::ShareUsed)
            .from(ip(&peer))
            .target(link.dashboard_id.clone())
            .detail(format!("link {} ({} uses)", link.id, link.uses));
        app.audit.record(event).await;
    }
    Ok(ok(Opened {
        dashboard: SharedDashboard {
            id: record.id,
            version: record.version,
            state: record.state,
            updated_at: record.updated_at,
        },
        vars: link.vars,
        allow_vars: link.allow_vars,
        expires_at: link.expires_at,
        label: link.label,
    }))
}

/// The share link's live view: the `/ws` protocol for its one dashboard (see `server::ws`).
#[utoipa::path(
    get,
    path = "/api/shared/{token}/ws",
    tag = "dashboards",
    security(()),
    params(("token" = String, Path, description = "The share link's token.")),
    responses(
        (status = 101, description = "Switching protocols: the `/ws` protocol for the link's dashboard only; `set_vars` only when the link allows it; closed with 1008 when the link is revoked or expires."),
        (status = "default", response = crate::envelope::ErrorBody),
    )
)]
async fn socket(
    State(app): State<Arc<App>>,
    Path(token): Path<String>,
    tag: Option<Extension<crate::shares::ConnectionTag>>,
    ws: Result<WebSocketUpgrade, axum::extract::ws::rejection::WebSocketUpgradeRejection>,
) -> Response {
    match app.links.peek(&token) {
        Ok(link) => super::ws::accept(app, ws, tag, super::ws::Door::Link(link)),
        Err(e) => ApiError::from(e).into_response(),
    }
}
