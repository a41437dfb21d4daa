//! `/api/kb`: knowledge bases, their documents and search. Thin: parse the body (JSON, or a
//! multipart file upload on `POST /api/kb/{id}/documents`, the one multipart route the guard
//! lets through), call `app.knowledge`, map errors once through [`ApiError`].

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, FromRequest, Multipart, Path, Request, State};
use axum::handler::Handler as _;
use axum::http::header;
use axum::response::Response;
use serde::Deserialize;
use utoipa::{OpenApi, ToSchema};

use super::envelope::{Envelope, ErrorBody};
use super::routes::{Routes, delete, get, post};
use super::{ApiError, created, ok, parse_body};
use access::keys::Scope;
use access::principal::Principal;
use app::App;
use axum::Extension;
use knowledge::{
    DocKind, DocumentInfo, KbVisibility, KnowledgeBase, NewDocument, SearchAnswer, SearchMode,
    SearchResult,
};

/// The operations of this module, for the OpenAPI document.
#[derive(OpenApi)]
#[openapi(
    paths(list, create, get_one, change, remove, documents, add_document, remove_document, search),
    components(schemas(
        KnowledgeBase,
        DocumentInfo,
        DocKind,
        SearchAnswer,
        SearchResult,
        SearchMode,
        NewBase,
        NewDocumentBody,
        SearchBody
    ))
)]
pub(crate) struct Doc;

/// The routes of this module.
pub fn routes() -> Routes<Arc<App>> {
    Routes::new()
        .route("/api/kb", get(Scope::Read, list).post(Scope::Write, create))
        .route(
            "/api/kb/{id}",
            get(Scope::Read, get_one).patch(Scope::Write, change).delete(Scope::Write, remove),
        )
        // The handler bounds the body itself (the default 2 MB limit is below a document's).
        .route(
            "/api/kb/{id}/documents",
            get(Scope::Read, documents)
                .post(Scope::Write, add_document.layer(DefaultBodyLimit::disable())),
        )
        .route("/api/kb/{id}/documents/{doc}", delete(Scope::Write, remove_document))
        // A search is a POST that only reads.
        .route("/api/kb/{id}/search", post(Scope::Read, search))
}

/// A new knowledge base.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct NewBase {
    /// Unique name, 1-100 characters.
    name: String,
    /// What it holds.
    #[serde(default)]
    description: String,
    /// `private` (the default: its maker and admins) or `team` (everyone reads and searches
    /// it, and their agents do).
    #[serde(default)]
    visibility: KbVisibility,
}

/// A document as JSON: `{title, text}`, `{title, markdown}` or `{url, title?}` (exactly one of
/// `text`, `markdown`, `url`).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct NewDocumentBody {
    /// Title (required with `text`; otherwise the content's own title when absent).
    #[serde(default)]
    title: Option<String>,
    /// Plain text.
    #[serde(default)]
    text: Option<String>,
    /// Markdown (markup stripped, headings kept as the chunks' context).
    #[serde(default)]
    markdown: Option<String>,
    /// A page to fetch, through the outbound allowlist (`BOARDSMITH_OUTBOUND_ALLOW`).
    #[serde(default)]
    url: Option<String>,
}

/// A search.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SearchBody {
    /// What to look for (at most 1000 characters).
    query: String,
    /// How many chunks (1-50, default 5).
    #[serde(default)]
    k: Option<usize>,
}

/// The knowledge bases, by name.
#[utoipa::path(
    get,
    path = "/api/kb",
    tag = "knowledge",
    responses((status = 200, description = "The bases.", body = Envelope<Vec<KnowledgeBase>>), (status = "default", response = ErrorBody))
)]
async fn list(State(app): State<Arc<App>>, Extension(who): Extension<Principal>) -> Response {
    ok(app.knowledge.list_for(&who))
}

/// A base `who` may read; another's private base is answered as missing.
fn readable(app: &App, who: &Principal, id: &str) -> Result<KnowledgeBase, ApiError> {
    match app.knowledge.get(id) {
        Ok(base) if base.readable_by(who) => Ok(base),
        Ok(_) => Err(ApiError::NotFound(format!("no knowledge base `{id}`"))),
        Err(e) => Err(e.into()),
    }
}

/// A base `who` may change: its owner's and admins'; a team base others only read (403).
fn writable(app: &App, who: &Principal, id: &str) -> Result<KnowledgeBase, ApiError> {
    let base = readable(app, who, id)?;
    if base.writable_by(who) {
        Ok(base)
    } else {
        Err(ApiError::Forbidden(format!(
            "knowledge base `{}` is shared with the team to search, not to change; ask its \
             owner",
            base.name
        )))
    }
}

/// Makes a knowledge base.
#[utoipa::path(
    post,
    path = "/api/kb",
    tag = "knowledge",
    request_body = NewBase,
    responses((status = 201, description = "The base, with its `id`.", body = Envelope<KnowledgeBase>), (status = "default", response = ErrorBody))
)]
async fn create(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let b: NewBase = parse_body(&body)?;
    let owner = who.user_id().map(ToString::to_string);
    Ok(created(app.knowledge.create(&b.name, &b.description, owner, b.visibility).await?))
}

/// A change to a base.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct BaseChange {
    /// Who else reads and searches it.
    visibility: KbVisibility,
}

/// Changes who else may read a base (its owner or an admin).
#[utoipa::path(
    patch,
    path = "/api/kb/{id}",
    tag = "knowledge",
    params(("id" = String, Path, description = "The base's id.")),
    request_body = BaseChange,
    responses((status = 200, description = "The base as changed.", body = Envelope<KnowledgeBase>), (status = "default", response = ErrorBody))
)]
async fn change(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    writable(&app, &who, &id)?;
    let b: BaseChange = parse_body(&body)?;
    Ok(ok(app.knowledge.set_visibility(&id, b.visibility).await?))
}

/// One knowledge base.
#[utoipa::path(
    get,
    path = "/api/kb/{id}",
    tag = "knowledge",
    params(("id" = String, Path, description = "The base's id (`kb_…`).")),
    responses((status = 200, description = "The base.", body = Envelope<KnowledgeBase>), (status = "default", response = ErrorBody))
)]
async fn get_one(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    Ok(ok(readable(&app, &who, &id)?))
}

/// Deletes a knowledge base with all its documents.
#[utoipa::path(
    delete,
    path = "/api/kb/{id}",
    tag = "knowledge",
    params(("id" = String, Path, description = "The base's id.")),
    responses((status = 200, description = "The deleted base.", body = Envelope<KnowledgeBase>), (status = "default", response = ErrorBody))
)]
async fn remove(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    writable(&app, &who, &id)?;
    Ok(ok(app.knowledge.delete(&id).await?))
}

/// A base's documents, oldest first.
#[utoipa::path(
    get,
    path = "/api/kb/{id}/documents",
    tag = "knowledge",
    params(("id" = String, Path, description = "The base's id.")),
    responses((status = 200, description = "The documents.", body = Envelope<Vec<DocumentInfo>>), (status = "default", response = ErrorBody))
)]
async fn documents(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    readable(&app, &who, &id)?;
    Ok(ok(app.knowledge.documents(&id)?))
}

/// Adds a document: JSON `{title, text}`, `{title?, markdown}` or `{url, title?}`, or a
/// `multipart/form-data` upload with a `file` part (`.txt`, `.md`, `.csv`, `.pdf`, `.html`) and
/// an optional `title` part.
#[utoipa::path(
    post,
    path = "/api/kb/{id}/documents",
    tag = "knowledge",
    params(("id" = String, Path, description = "The base's id.")),
    request_body(
        content(
            (NewDocumentBody = "application/json"),
            (Vec<u8> = "multipart/form-data"),
        ),
        description = "JSON, or a multipart upload (`file`, optional `title`); at most \
            BOARDSMITH_KB_MAX_DOCUMENT_BYTES (default 10 MiB)."
    ),
    responses(
        (status = 201, description = "The document, indexed.", body = Envelope<DocumentInfo>),
        (status = 413, description = "Over the size limit.", body = ErrorBody),
        (status = "default", response = ErrorBody),
    )
)]
async fn add_document(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    request: Request,
) -> Result<Response, ApiError> {
    writable(&app, &who, &id)?;
    let limit = app.knowledge.limits().max_document_bytes;
    let too_large = || {
        ApiError::from(knowledge::KnowledgeError::TooLarge {
            what: "the request body".into(),
            limit: limit as u64,
        })
    };
    let multipart =
        request.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(
            |v| v.trim_start().to_ascii_lowercase().starts_with("multipart/form-data"),
        );
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<usize>().ok());
    // Room for the multipart framing and JSON escaping around a body at the limit.
    let cap = limit.saturating_mul(2).saturating_add(64 * 1024);
    if declared.is_some_and(|n| n > cap) {
        return Err(too_large());
    }
    let new = if multipart {
        let form = Multipart::from_request(request, &())
            .await
            .map_err(|e| ApiError::bad(format!("malformed multipart body: {}", e.body_text())))?;
        read_form(form, limit).await?
    } else {
        let body = axum::body::to_bytes(request.into_body(), cap).await.map_err(|_| too_large())?;
        json_document(parse_body(&body)?)?
    };
    Ok(created(app.knowledge.add(&id, new).await?))
}

fn json_document(b: NewDocumentBody) -> Result<NewDocument, ApiError> {
    let field = |name: &str, msg: &str| ApiError::BadRequest {
        msg: format!("`{name}`: {msg}"),
        data: serde_json::json!({ "param": name }),
    };
    match (b.text, b.markdown, b.url) {
        (Some(text), None, None) => {
            let title = b
                .title
                .filter(|t| !t.trim().is_empty())
                .ok_or_else(|| field("title", "required with `text`"))?;
            Ok(NewDocument::Text { title, text })
        }
        (None, Some(markdown), None) => {
            Ok(NewDocument::Markdown { title: b.title.unwrap_or_default(), markdown })
        }
        (None, None, Some(url)) => Ok(NewDocument::Url { url, title: b.title }),
        (None, None, None) => Err(field("text", "give one of `text`, `markdown` or `url`")),
        _ => Err(field("text", "give only one of `text`, `markdown` or `url`")),
    }
}

async fn read_form(mut form: Multipart, limit: usize) -> Result<NewDocument, ApiError> {
    let mut file: Option<(String, Bytes)> = None;
    let mut title: Option<String> = None;
    let bad = |e: axum::extract::multipart::MultipartError| {
        if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::from(knowledge::KnowledgeError::TooLarge {
                what: "the upload".into(),
                limit: limit as u64,
            })
        } else {
            ApiError::bad(format!("malformed multipart body: {}", e.body_text()))
        }
    };
    while let Some(mut field) = form.next_field().await.map_err(bad)? {
        match field.name().unwrap_or_default() {
            "file" => {
                let name = field.file_name().unwrap_or("upload.txt").to_owned();
                let bytes = read_part(&mut field, limit, "the file").await?;
                file = Some((name, Bytes::from(bytes)));
            }
            "title" => {
                let bytes = read_part(&mut field, 4096, "`title`").await?;
                let t = String::from_utf8_lossy(&bytes).into_owned();
                title = Some(t).filter(|t| !t.trim().is_empty());
            }
            other => {
                return Err(ApiError::BadRequest {
                    msg: format!(
                        "unknown multipart field `{other}`; the fields are `file` and `title`"
                    ),
                    data: serde_json::json!({ "param": other }),
                });
            }
        }
    }
    let (name, bytes) = file.ok_or_else(|| ApiError::BadRequest {
        msg: "`file`: a multipart upload needs a `file` part".into(),
        data: serde_json::json!({ "param": "file" }),
    })?;
    Ok(NewDocument::File { name, bytes, title })
}

/// A part's bytes, refused past `limit`.
async fn read_part(
    field: &mut axum::extract::multipart::Field<'_>,
    limit: usize,
    what: &str,
) -> Result<Vec<u8>, ApiError> {
    let mut buf = Vec::new();
    loop {
        let chunk = field
            .chunk()
            .await
            .map_err(|e| ApiError::bad(format!("malformed multipart body: {}", e.body_text())))?;
        let Some(chunk) = chunk else { return Ok(buf) };
        if buf.len() + chunk.len() > limit {
            return Err(ApiError::from(knowledge::KnowledgeError::TooLarge {
                what: what.into(),
                limit: limit as u64,
            }));
        }
        buf.extend_from_slice(&chunk);
    }
}

/// Deletes a document; its chunks leave the index and the vectors at once.
#[utoipa::path(
    delete,
    path = "/api/kb/{id}/documents/{doc}",
    tag = "knowledge",
    params(
        ("id" = String, Path, description = "The base's id."),
        ("doc" = String, Path, description = "The document's id (`doc_…`)."),
    ),
    responses((status = 200, description = "The deleted document.", body = Envelope<DocumentInfo>), (status = "default", response = ErrorBody))
)]
async fn remove_document(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    Path((id, doc)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    writable(&app, &who, &id)?;
    Ok(ok(app.knowledge.delete_document(&id, &doc).await?))
}

/// Searches a base: the `k` best chunks, best first; `mode` says whether BM25 alone or the
/// hybrid (BM25 fused with vector similarity) answered.
#[utoipa::path(
    post,
    path = "/api/kb/{id}/search",
    tag = "knowledge",
    params(("id" = String, Path, description = "The base's id.")),
    request_body = SearchBody,
    responses((status = 200, description = "The results.", body = Envelope<SearchAnswer>), (status = "default", response = ErrorBody))
)]
async fn search(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    readable(&app, &who, &id)?;
    let b: SearchBody = parse_body(&body)?;
    Ok(ok(app.knowledge.search(&[id], &b.query, b.k.unwrap_or(5)).await?))
}
