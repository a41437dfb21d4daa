//! `/api/dashboards/{id}/access`: a dashboard's owner and who else may see or change it
//! (`dashboards::sharing` owns the rules). Anyone who sees a dashboard reads its access; only
//! its owner and admins change it.

use std::sync::Arc;

use axum::Extension;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use serde::{Deserialize, Serialize};
use utoipa::{OpenApi, ToSchema};

use super::envelope::Envelope;
use super::routes::{Routes, get};
use super::session::{Peer, ip};
use super::{ApiError, ok, parse_body};
use access::audit::{AuditKind, Event};
use access::keys::Scope;
use access::principal::Principal;
use app::App;
use dashboards::sharing::{Denied, Need, Share, Sharing, Visibility};

#[derive(OpenApi)]
#[openapi(paths(read, change))]
pub(crate) struct Doc;

/// The routes of this module.
pub fn routes() -> Routes<Arc<App>> {
    Routes::new()
        .route("/api/dashboards/{id}/access", get(Scope::Read, read).put(Scope::Write, change))
}

/// A dashboard's access as shown: the owner's name too.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct AccessView {
    #[serde(flatten)]
    sharing: Sharing,
    /// The owner's user name (absent: made before accounts, the first admin's).
    #[serde(skip_serializing_if = "Option::is_none")]
    owner_name: Option<String>,
    /// Whether the caller may change this.
    can_change: bool,
}

fn view(app: &App, who: &Principal, sharing: Sharing) -> AccessView {
    let owner_name = sharing.owner.as_ref().and_then(|id| app.users.get(id)).map(|u| u.username);
    let can_change = owns(who, &sharing);
    AccessView { sharing, owner_name, can_change }
}

/// The owner and admins (and the token) change a dashboard's access.
fn owns(who: &Principal, sharing: &Sharing) -> bool {
    who.is_admin() || (who.user_id().is_some() && who.user_id() == sharing.owner.as_ref())
}

fn visible(app: &App, who: &Principal, id: &str) -> Result<(), ApiError> {
    app.dashboards.may(who, id, Need::View).map_err(|d| match d {
        Denied::Hidden(_) | Denied::ReadOnly(_) => ApiError::NotFound(d.to_string()),
    })?;
    Ok(())
}

#[utoipa::path(
    get,
    path = "/api/dashboards/{id}/access",
    tag = "dashboards",
    params(("id" = String, Path, description = "The dashboard id (`db_…`).")),
    responses((status = 200, description = "Its owner and access.", body = Envelope<AccessView>), (status = "default", response = crate::envelope::ErrorBody))
)]
async fn read(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    visible(&app, &who, &id)?;
    app.dashboards.get(&id).await?;
    Ok(ok(view(&app, &who, app.dashboards.sharing().get(&id))))
}

/// A new access: who else may look, and the people it is shared with.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct NewAccess {
    visibility: Visibility,
    #[serde(default)]
    users: Vec<Share>,
}

#[utoipa::path(
    put,
    path = "/api/dashboards/{id}/access",
    tag = "dashboards",
    params(("id" = String, Path, description = "The dashboard id (`db_…`).")),
    request_body = NewAccess,
    responses((status = 200, description = "The access as changed.", body = Envelope<AccessView>), (status = "default", response = crate::envelope::ErrorBody))
)]
async fn change(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    peer: Peer,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    visible(&app, &who, &id)?;
    app.dashboards.get(&id).await?;
    let new: NewAccess = parse_body(&body)?;
    let old = app.dashboards.sharing().get(&id);
    if !owns(&who, &old) {
        return Err(ApiError::Forbidden(format!(
            "only the owner of dashboard `{id}` or an admin changes who may see it"
        )));
    }
    let mut users: Vec<Share> = Vec::with_capacity(new.users.len());
    for share in new.users {
        if app.users.get(&share.user_id).is_none() {
            return Err(ApiError::BadRequest {
                msg: format!("no user `{}` to share with", share.user_id),
                data: serde_json::json!({ "param": "users" }),
            });
        }
        users.retain(|s| s.user_id != share.user_id);
        users.push(share);
    }
    let sharing = Sharing { owner: old.owner, visibility: new.visibility, users };
    app.dashboards.sharing().set(&id, sharing.clone()).await?;
    let detail = format!(
        "{} with {} people",
        match sharing.visibility {
            Visibility::Private => "private",
            Visibility::Team => "team",
        },
        sharing.users.len()
    );
    let event =
        Event::new(AuditKind::AccessChanged).by(&who).from(ip(&peer)).target(id).detail(detail);
    app.audit.record(event).await;
    Ok(ok(view(&app, &who, sharing)))
}
