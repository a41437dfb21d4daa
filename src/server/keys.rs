//! `/api/keys`: the owner's API keys (admin scope). Thin: parse, call `app.keys`, map errors
//! once through [`ApiError`].

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::{delete, get};

use super::{ApiError, created, ok, parse_body};
use crate::api_keys::NewKeyRequest;
use crate::app::App;

/// The routes of this module.
pub fn routes() -> Router<Arc<App>> {
    Router::new().route("/api/keys", get(list).post(create)).route("/api/keys/{id}", delete(revoke))
}

async fn list(State(app): State<Arc<App>>) -> Response {
    ok(app.keys.list())
}

async fn create(State(app): State<Arc<App>>, body: Bytes) -> Result<Response, ApiError> {
    let request: NewKeyRequest = parse_body(&body)?;
    Ok(created(app.keys.create(request).await?))
}

async fn revoke(State(app): State<Arc<App>>, Path(id): Path<String>) -> Result<Response, ApiError> {
    Ok(ok(app.keys.revoke(&id).await?))
}
