//! `/api/admin/users` and `/api/admin/audit`: an admin makes, changes and removes accounts and
//! reads the audit trail; `/api/users`: the directory anyone signed in shares dashboards from
//! (names and roles, nothing else). Thin: `access::users` owns the accounts; what a change means for
//! sessions (a removed, disabled or re-passworded person is signed out everywhere; a new role
//! gets a new session id on the next request, `access::sessions`) is decided here, once.

use std::sync::Arc;

use axum::Extension;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use serde::Deserialize;
use utoipa::{IntoParams, OpenApi};

use super::envelope::Envelope;
use super::routes::{Routes, get, patch};
use super::session::{Peer, ip};
use super::{ApiError, ApiQuery, created, ok, parse_body};
use access::audit::{AuditEntry, AuditKind, Event};
use access::keys::Scope;
use access::principal::{Principal, UserId};
use access::users::{CreatedUser, NewUser, UserPatch, UserView};
use app::App;

#[derive(OpenApi)]
#[openapi(paths(list, create, update, remove, audit, directory))]
pub(crate) struct Doc;

/// The routes of this module.
pub fn routes() -> Routes<Arc<App>> {
    const ADMIN: Scope = Scope::Admin;
    Routes::new()
        .route("/api/admin/users", get(ADMIN, list).post(ADMIN, create))
        .route("/api/admin/users/{id}", patch(ADMIN, update).delete(ADMIN, remove))
        .route("/api/admin/audit", get(ADMIN, audit))
        .route("/api/users", get(Scope::Read, directory))
}

/// A person as anyone signed in sees them: enough to share a dashboard with them.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct Colleague {
    /// `u_…`.
    id: String,
    /// Sign-in name.
    username: String,
    /// Name shown in the app.
    #[serde(skip_serializing_if = "Option::is_none")]
    display_name: Option<String>,
    /// What they may do.
    role: access::principal::Role,
}

#[utoipa::path(
    get,
    path = "/api/users",
    tag = "users",
    responses((status = 200, description = "Every enabled person, by name: who a dashboard can be shared with.", body = Envelope<Vec<Colleague>>), (status = "default", response = crate::envelope::ErrorBody))
)]
async fn directory(State(app): State<Arc<App>>) -> Response {
    let people: Vec<Colleague> = app
        .users
        .list()
        .into_iter()
        .filter(|u| !u.disabled)
        .map(|u| Colleague {
            id: u.id.to_string(),
            username: u.username,
            display_name: u.display_name,
            role: u.role,
        })
        .collect();
    ok(people)
}

#[utoipa::path(
    get,
    path = "/api/admin/users",
    tag = "users",
    responses((status = 200, description = "Every account, by name.", body = Envelope<Vec<UserView>>), (status = "default", response = crate::envelope::ErrorBody))
)]
async fn list(State(app): State<Arc<App>>) -> Response {
    ok(app.users.list())
}

#[utoipa::path(
    post,
    path = "/api/admin/users",
    tag = "users",
    request_body = NewUser,
    responses((status = 201, description = "The account, with `password` when one was generated (shown once).", body = Envelope<CreatedUser>), (status = "default", response = crate::envelope::ErrorBody))
)]
async fn create(
    State(app): State<Arc<App>>,
    Extension(principal): Extension<Principal>,
    peer: Peer,
    body: Bytes,
) -> Result<Response, ApiError> {
    let new: NewUser = parse_body(&body)?;
    let made = app.users.create(new).await?;
    let event = Event::new(AuditKind::UserCreated)
        .by(&principal)
        .from(ip(&peer))
        .target(made.user.id.to_string())
        .detail(format!("{} as {}", made.user.username, made.user.role));
    app.audit.record(event).await;
    Ok(created(made))
}

#[utoipa::path(
    patch,
    path = "/api/admin/users/{id}",
    tag = "users",
    params(("id" = String, Path, description = "The user's id (`u_…`).")),
    request_body = UserPatch,
    responses((status = 200, description = "The account as changed.", body = Envelope<UserView>), (status = "default", response = crate::envelope::ErrorBody))
)]
async fn update(
    State(app): State<Arc<App>>,
    Extension(principal): Extension<Principal>,
    peer: Peer,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let patch: UserPatch = parse_body(&body)?;
    let id = UserId::from(id.as_str());
    let before = app.users.get(&id).ok_or_else(|| ApiError::NotFound(format!("no user `{id}`")))?;
    let (user, changed) = app.users.update(&id, patch).await?;
    if changed.disabled || changed.password {
        app.sessions.end_all(&id).await?;
    }
    let mut what = Vec::new();
    if changed.role {
        what.push(format!("role {} → {}", before.role, user.role));
    }
    if changed.disabled {
        what.push("disabled".to_owned());
    } else if before.disabled && !user.disabled {
        what.push("enabled".to_owned());
    }
    if changed.password {
        what.push("password reset".to_owned());
    }
    if what.is_empty() {
        what.push("details".to_owned());
    }
    let event = Event::new(AuditKind::UserChanged)
        .by(&principal)
        .from(ip(&peer))
        .target(id.to_string())
        .detail(what.join(", "));
    app.audit.record(event).await;
    Ok(ok(user))
}

#[utoipa::path(
    delete,
    path = "/api/admin/users/{id}",
    tag = "users",
    params(("id" = String, Path, description = "The user's id (`u_…`).")),
    responses((status = 200, description = "The account removed; its sessions ended.", body = Envelope<UserView>), (status = "default", response = crate::envelope::ErrorBody))
)]
async fn remove(
    State(app): State<Arc<App>>,
    Extension(principal): Extension<Principal>,
    peer: Peer,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let id = UserId::from(id.as_str());
    let user = app.users.delete(&id).await?;
    app.sessions.end_all(&id).await?;
    let event = Event::new(AuditKind::UserDeleted)
        .by(&principal)
        .from(ip(&peer))
        .target(id.to_string())
        .detail(user.username.clone());
    app.audit.record(event).await;
    Ok(ok(user))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct AuditQuery {
    /// At most this many entries (1 to 1000, default 100).
    #[serde(default)]
    limit: Option<usize>,
    /// Entries older than this entry id (the next page).
    #[serde(default)]
    before: Option<String>,
}

#[utoipa::path(
    get,
    path = "/api/admin/audit",
    tag = "users",
    params(AuditQuery),
    responses((status = 200, description = "The audit trail, newest first.", body = Envelope<Vec<AuditEntry>>), (status = "default", response = crate::envelope::ErrorBody))
)]
async fn audit(
    State(app): State<Arc<App>>,
    ApiQuery(q): ApiQuery<AuditQuery>,
) -> Result<Response, ApiError> {
    let limit = q.limit.unwrap_or(100).clamp(1, 1000);
    Ok(ok(app.audit.list(limit, q.before.as_deref()).await?))
}
