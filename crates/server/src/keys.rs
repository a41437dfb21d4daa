//! `/api/keys`: people's API keys. Everyone signed in makes, lists and revokes their own; an
//! admin sees and revokes everyone's. A key never gets a scope its maker may not use, and an
//! API key makes no keys unless it has the `admin` scope (a leaked read key cannot mint a
//! write key). Thin: parse, call `app.keys`, map errors once through [`ApiError`].

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use utoipa::OpenApi;

use super::envelope::Envelope;
use super::routes::{Routes, delete, get};
use super::{ApiError, created, ok, parse_body};
use access::api_keys::{CreatedKey, KeyView, NewKeyRequest};
use access::audit::{AuditKind, Event};
use access::keys::Scope;
use access::principal::Principal;
use app::App;
use axum::Extension;

/// The operations of this module, for the OpenAPI document.
#[derive(OpenApi)]
#[openapi(paths(list, create, revoke))]
pub(crate) struct Doc;

/// The routes of this module.
pub fn routes() -> Routes<Arc<App>> {
    const READ: Scope = Scope::Read;
    Routes::new()
        .route("/api/keys", get(READ, list).post(READ, create))
        .route("/api/keys/{id}", delete(READ, revoke))
}

/// Whether `principal` manages keys at all: people and the token do; a key only with `admin`.
fn may_manage(principal: &Principal) -> Result<(), ApiError> {
    match principal {
        Principal::Key { .. } if !principal.is_admin() => Err(ApiError::Forbidden(
            "API keys are managed by signed-in people (or a key with the `admin` scope)".into(),
        )),
        _ => Ok(()),
    }
}

/// Whether `principal` sees key `k`: admins see every key, others their own.
fn sees(principal: &Principal, k: &KeyView) -> bool {
    principal.is_admin() || (k.user_id.is_some() && k.user_id.as_ref() == principal.user_id())
}

/// The API keys, newest first (never their secrets).
#[utoipa::path(
    get,
    path = "/api/keys",
    tag = "keys",
    responses((status = 200, description = "The keys.", body = Envelope<Vec<KeyView>>), (status = "default", response = crate::envelope::ErrorBody))
)]
async fn list(
    State(app): State<Arc<App>>,
    Extension(principal): Extension<Principal>,
) -> Result<Response, ApiError> {
    may_manage(&principal)?;
    Ok(ok(app.keys.list().into_iter().filter(|k| sees(&principal, k)).collect::<Vec<_>>()))
}

/// Makes a key; its secret is in this answer only.
#[utoipa::path(
    post,
    path = "/api/keys",
    tag = "keys",
    request_body = NewKeyRequest,
    responses((status = 201, description = "The key, with its secret `key` (shown once).", body = Envelope<CreatedKey>), (status = "default", response = crate::envelope::ErrorBody))
)]
async fn create(
    State(app): State<Arc<App>>,
    Extension(principal): Extension<Principal>,
    body: Bytes,
) -> Result<Response, ApiError> {
    may_manage(&principal)?;
    let request: NewKeyRequest = parse_body(&body)?;
    if let Some(scope) = request.scopes.iter().find(|s| !principal.allows(**s)) {
        return Err(ApiError::Forbidden(format!(
            "you may not give a key the `{}` scope: a key never does more than its maker",
            scope.as_str()
        )));
    }
    let made = app.keys.create(request, principal.user_id().cloned()).await?;
    let event = Event::new(AuditKind::KeyCreated)
        .by(&principal)
        .target(made.view.id.clone())
        .detail(made.view.name.clone());
    app.audit.record(event).await;
    Ok(created(made))
}

/// Revokes a key (it stops working at once).
#[utoipa::path(
    delete,
    path = "/api/keys/{id}",
    tag = "keys",
    params(("id" = String, Path, description = "The key's id (`key_…`).")),
    responses((status = 200, description = "The revoked key.", body = Envelope<KeyView>), (status = "default", response = crate::envelope::ErrorBody))
)]
async fn revoke(
    State(app): State<Arc<App>>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    may_manage(&principal)?;
    // Someone else's key is answered as missing: its id tells nothing.
    if !app.keys.list().iter().any(|k| k.id == id && sees(&principal, k)) {
        return Err(ApiError::NotFound(format!("no API key `{id}`")));
    }
    let revoked = app.keys.revoke(&id).await?;
    app.audit.record(Event::new(AuditKind::KeyRevoked).by(&principal).target(id)).await;
    Ok(ok(revoked))
}
