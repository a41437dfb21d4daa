//! `POST /api/uploads` (an image as the raw request body, its real image type as
//! `Content-Type`, the file name as `?name=`), `GET /api/uploads/{id}` (the bytes back, for
//! the chat's thumbnails) and `DELETE /api/uploads/{id}`. Thin: read the body within the size
//! limit, say who asks (an API key's id; the owner and admin keys delete anything), call
//! `app.uploads`, which holds the quota and who may delete what.
//!
//! Raw bodies rather than `multipart/form-data`: the image types are not CORS-"simple", so a
//! foreign page cannot send one without a preflight (which the guard's `Origin` check refuses),
//! while `multipart/form-data` is simple and would need a guard of its own.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Extension, Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};
use utoipa::{IntoParams, OpenApi};

use super::envelope::{Envelope, ErrorBody};
use super::routes::{Routes, get, post};
use super::{ApiError, ok};
use access::keys::Scope;
use access::principal::Principal;
use app::App;
use uploads::{UploadError, UploadInfo};

/// The operations of this module, for the OpenAPI document.
#[derive(OpenApi)]
#[openapi(paths(upload, get_upload, delete_upload), components(schemas(UploadInfo)))]
pub(crate) struct Doc;

/// The routes of this module.
pub fn routes() -> Routes<Arc<App>> {
    // Images go with queries: the agents' scope.
    Routes::new().route("/api/uploads", post(Scope::Agents, upload)).route(
        "/api/uploads/{id}",
        get(Scope::Agents, get_upload).delete(Scope::Agents, delete_upload),
    )
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
struct UploadQuery {
    /// The file name to show (default `image.<ext>`).
    name: Option<String>,
}

/// Stores an image for a chat message (`images: [{uploadId}]` in `POST /api/query`). The body
/// is the image itself; its magic bytes must match `Content-Type`. The id is its SHA-256.
#[utoipa::path(
    post,
    path = "/api/uploads",
    tag = "agents",
    params(UploadQuery),
    request_body(
        content(
            (Vec<u8> = "image/png"),
            (Vec<u8> = "image/jpeg"),
            (Vec<u8> = "image/gif"),
            (Vec<u8> = "image/webp"),
        ),
        description = "The image bytes (at most BOARDSMITH_UPLOAD_MAX_BYTES, default 10 MiB)."
    ),
    responses(
        (status = 200, description = "Stored.", body = Envelope<UploadInfo>),
        (status = 413, description = "Larger than the limit (`data.limit`).", body = ErrorBody),
        (status = 507, description = "The uploads' quota (BOARDSMITH_UPLOAD_QUOTA_BYTES) or this \
            key's share of it (BOARDSMITH_UPLOAD_KEY_SHARE_PERCENT) would be passed; nothing is \
            stored (`data`: `used`, `needed`, `limit`).", body = ErrorBody),
        (status = 415, description = "Not an accepted image type, or the content is not the \
            declared type.", body = ErrorBody),
        (status = "default", response = ErrorBody),
    )
)]
async fn upload(
    State(app): State<Arc<App>>,
    Extension(principal): Extension<Principal>,
    q: Result<Query<UploadQuery>, QueryRejection>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let Query(q) = q.map_err(|e| ApiError::bad(format!("malformed query string: {e}")))?;
    let mime = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let limit = app.uploads.limits().max_bytes;
    let too_large = || UploadError::TooLarge { limit };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit) {
        return Err(too_large().into());
    }
    // One byte past the limit tells "at the limit" from "over it".
    let cap = usize::try_from(limit.saturating_add(1)).unwrap_or(usize::MAX);
    let bytes = axum::body::to_bytes(body, cap).await.map_err(|_| too_large())?;
    let name = q.name.as_deref().unwrap_or("");
    let info = app.uploads.put_as(holder(&principal).as_deref(), mime, name, bytes).await?;
    Ok(ok(info))
}

/// Whom an upload is held for (its quota, who may delete it): an API key by its id, a person
/// as `user:ID` (all their browsers together), the token as the owner (`None`).
fn holder(principal: &Principal) -> Option<String> {
    match principal {
        Principal::Owner => None,
        Principal::Key { id, .. } => Some(id.clone()),
        Principal::User(_) => Some(principal.holder()),
    }
}

/// An uploaded image's bytes, with its stored type (content-addressed: cacheable for good).
#[utoipa::path(
    get,
    path = "/api/uploads/{id}",
    tag = "agents",
    params(("id" = String, Path, description = "The upload id (its hex SHA-256).")),
    responses(
        (status = 200, description = "The image.", content(
            (Vec<u8> = "image/png"),
            (Vec<u8> = "image/jpeg"),
            (Vec<u8> = "image/gif"),
            (Vec<u8> = "image/webp"),
        )),
        (status = "default", response = ErrorBody),
    )
)]
async fn get_upload(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let (info, bytes) = app.uploads.read(&id).await?;
    let mime = HeaderValue::from_str(&info.mime_type)
        .map_err(|_| ApiError::internal(anyhow::anyhow!("stored type `{}`", info.mime_type)))?;
    Ok((
        [
            (header::CONTENT_TYPE, mime),
            (
                header::CACHE_CONTROL,
                HeaderValue::from_static("private, max-age=31536000, immutable"),
            ),
        ],
        bytes,
    )
        .into_response())
}

/// Deletes an upload. An API key deletes only what it uploaded: its hold goes, and the image
/// with its last holder (the same image uploaded by another key or the owner stays for them);
/// the owner and admin keys delete it outright.
#[utoipa::path(
    delete,
    path = "/api/uploads/{id}",
    tag = "agents",
    params(("id" = String, Path, description = "The upload id (its hex SHA-256).")),
    responses(
        (status = 200, description = "Deleted (`data.deleted`: the id).", body = Envelope<Value>),
        (status = 403, description = "This API key did not upload it.", body = ErrorBody),
        (status = 404, description = "No upload with this id.", body = ErrorBody),
        (status = "default", response = ErrorBody),
    )
)]
async fn delete_upload(
    State(app): State<Arc<App>>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    // The token and admins act for everyone; anyone else for themselves.
    let holder = holder(&principal).filter(|_| !principal.allows(Scope::Admin));
    app.uploads.delete(&id, holder.as_deref()).await?;
    Ok(ok(json!({ "deleted": id.to_ascii_lowercase() })))
}
