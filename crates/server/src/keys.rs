//! `/api/keys`: the owner's API keys (admin scope). Thin: parse, call `app.keys`, map errors
//! once through [`ApiError`].

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use utoipa::OpenApi;

use super::envelope::Envelope;
use super::routes::{Routes, delete, get};
use super::{ApiError, created, ok, parse_body};
use access::api_keys::{CreatedKey, KeyView, NewKeyRequest};
use access::keys::Scope;
use app::App;

/// The operations of this module, for the OpenAPI document.
#[derive(OpenApi)]
#[openapi(paths(list, create, revoke))]
pub(crate) struct Doc;

/// The routes of this module.
pub fn routes() -> Routes<Arc<App>> {
    const ADMIN: Scope = Scope::Admin;
    Routes::new()
        .route("/api/keys", get(ADMIN, list).post(ADMIN, create))
        .route("/api/keys/{id}", delete(ADMIN, revoke))
}

/// The API keys, newest first (never their secrets).
#[utoipa::path(
    get,
    path = "/api/keys",
    tag = "keys",
    responses((status = 200, description = "The keys.", body = Envelope<Vec<KeyView>>), (status = "default", response = crate::envelope::ErrorBody))
)]
async fn list(State(app): State<Arc<App>>) -> Response {
    ok(app.keys.list())
}

/// Makes a key; its secret is in this answer only.
#[utoipa::path(
    post,
    path = "/api/keys",
    tag = "keys",
    request_body = NewKeyRequest,
    responses((status = 201, description = "The key, with its secret `key` (shown once).", body = Envelope<CreatedKey>), (status = "default", response = crate::envelope::ErrorBody))
)]
async fn create(State(app): State<Arc<App>>, body: Bytes) -> Result<Response, ApiError> {
    let request: NewKeyRequest = parse_body(&body)?;
    Ok(created(app.keys.create(request).await?))
}

/// Revokes a key (it stops working at once).
#[utoipa::path(
    delete,
    path = "/api/keys/{id}",
    tag = "keys",
    params(("id" = String, Path, description = "The key's id (`key_…`).")),
    responses((status = 200, description = "The revoked key.", body = Envelope<KeyView>), (status = "default", response = crate::envelope::ErrorBody))
)]
async fn revoke(State(app): State<Arc<App>>, Path(id): Path<String>) -> Result<Response, ApiError> {
    Ok(ok(app.keys.revoke(&id).await?))
}
