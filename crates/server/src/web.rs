//! The browser app's files: `GET /` (the page) and `GET /assets/{path}` (bundle, styles).
//!
//! `build.rs` bundles `web/` with esbuild into `OUT_DIR/web` and this module embeds the result,
//! so the binary alone serves the whole UI (no CDN, no files beside it). Each file also has
//! brotli and gzip copies made at build time; a request gets the smallest its `Accept-Encoding`
//! allows, with an `ETag` so a reload revalidates with a 304 instead of re-downloading.
//! With [`WebFiles::Dir`] (`BOARDSMITH_WEB_DIR`) the files are read from a directory on every
//! request instead: the development loop with `npm run dev` in `web/`.
//!
//! Knows nothing of the API or the app's state: the gateway mounts [`routes`].

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use include_dir::{Dir, include_dir};

use super::routes::Need::Public;
use super::routes::{Routes, get};

/// The bundle `build.rs` made.
static EMBEDDED: Dir<'static> = include_dir!("$OUT_DIR/web");

/// Where the app's files come from.
#[derive(Debug, Clone)]
pub enum WebFiles {
    /// Built into the binary (the default).
    Embedded,
    /// Read from this directory on every request (`BOARDSMITH_WEB_DIR`, development).
    Dir(PathBuf),
}

impl WebFiles {
    /// `BOARDSMITH_WEB_DIR` when set, else the embedded bundle.
    pub fn from_env() -> Self {
        match std::env::var_os("BOARDSMITH_WEB_DIR") {
            Some(dir) if !dir.is_empty() => Self::Dir(dir.into()),
            _ => Self::Embedded,
        }
    }

    /// The bytes of `path` (relative, `/`-separated), if there is such a file; embedded files
    /// are served from the binary's image without a copy.
    async fn read(&self, path: &str) -> Option<Bytes> {
        match self {
            Self::Embedded => EMBEDDED.get_file(path).map(|f| Bytes::from_static(f.contents())),
            Self::Dir(dir) => tokio::fs::read(dir.join(path)).await.ok().map(Bytes::from),
        }
    }
}

/// The app's routes: `/`, `/assets/{*path}` and the API reference page `/docs`.
pub fn routes<S: Clone + Send + Sync + 'static>(files: WebFiles) -> Routes<S> {
    Routes::new()
        .route("/", get(Public, index))
        .route("/docs", get(Public, docs))
        .route("/s/{token}", get(Public, shared))
        .route("/assets/{*path}", get(Public, asset))
        .with_state(Arc::new(files))
}

/// The pages and files, for the OpenAPI document.
#[derive(utoipa::OpenApi)]
#[openapi(paths(index, shared, docs, asset))]
pub(crate) struct Doc;

/// The web app (signs in with `?token=`: the session cookie, then a redirect to `/`).
#[utoipa::path(
    get,
    path = "/",
    tag = "web app",
    security(()),
    responses(
        (status = 200, description = "The app's page.", content_type = "text/html; charset=utf-8", body = String),
        (status = 303, description = "`?token=` was the server's: signed in (the session cookie is set), on to `/`."),
        (status = 401, description = "`?token=` was not the server's: a sign-in page.", content_type = "text/html; charset=utf-8", body = String),
        (status = 304, description = "Not modified (`If-None-Match`)."),
        (status = "default", response = super::envelope::ErrorBody),
    )
)]
async fn index(State(files): State<Arc<WebFiles>>, headers: HeaderMap) -> Response {
    serve(&files, "index.html", &headers).await
}

/// A share link: the app's page, which shows the link's dashboard read-only (it reads
/// `/api/shared/{token}`; the token is checked there, not here).
#[utoipa::path(
    get,
    path = "/s/{token}",
    tag = "web app",
    security(()),
    params(("token" = String, Path, description = "The share link's token.")),
    responses(
        (status = 200, description = "The app's page.", content_type = "text/html; charset=utf-8", body = String),
        (status = 304, description = "Not modified (`If-None-Match`)."),
        (status = "default", response = super::envelope::ErrorBody),
    )
)]
async fn shared(State(files): State<Arc<WebFiles>>, headers: HeaderMap) -> Response {
    serve(&files, "index.html", &headers).await
}

/// The API reference: this server's OpenAPI document (`/openapi.json`) rendered by RapiDoc,
/// served from the binary like the app (nothing is loaded from elsewhere).
#[utoipa::path(
    get,
    path = "/docs",
    tag = "web app",
    security(()),
    responses(
        (status = 200, description = "The page.", content_type = "text/html; charset=utf-8", body = String),
        (status = 304, description = "Not modified (`If-None-Match`)."),
        (status = "default", response = super::envelope::ErrorBody),
    )
)]
async fn docs(State(files): State<Arc<WebFiles>>, headers: HeaderMap) -> Response {
    serve(&files, "docs.html", &headers).await
}

/// A file of the app's bundle (scripts, styles), brotli or gzip as the client accepts.
#[utoipa::path(
    get,
    path = "/assets/{path}",
    tag = "web app",
    security(()),
    params(("path" = String, Path, description = "The file, relative to `assets/`.")),
    responses(
        (status = 200, description = "The file.", content_type = "application/octet-stream", body = Vec<u8>),
        (status = 304, description = "Not modified (`If-None-Match`)."),
        (status = 404, description = "No such file.", content_type = "text/plain", body = String),
        (status = "default", response = super::envelope::ErrorBody),
    )
)]
async fn asset(
    State(files): State<Arc<WebFiles>>,
    UrlPath(path): UrlPath<String>,
    headers: HeaderMap,
) -> Response {
    // Only plain relative names: no `..`, no absolute paths, nothing a Dir source could escape with.
    if !Path::new(&path).components().all(|c| matches!(c, Component::Normal(_))) {
        return not_found();
    }
    serve(&files, &format!("assets/{path}"), &headers).await
}

/// Content codings we keep precompressed copies for, best first.
const CODINGS: [(&str, &str); 2] = [("br", ".br"), ("gzip", ".gz")];

async fn serve(files: &WebFiles, path: &str, headers: &HeaderMap) -> Response {
    let accept = headers.get(header::ACCEPT_ENCODING).and_then(|v| v.to_str().ok()).unwrap_or("");
    let mut body = None;
    for (coding, suffix) in CODINGS {
        if accepts(accept, coding)
            && let Some(bytes) = files.read(&format!("{path}{suffix}")).await
        {
            body = Some((bytes, Some(coding)));
            break;
        }
    }
    let (bytes, coding) = match body {
        Some(found) => found,
        None => match files.read(path).await {
            Some(bytes) => (bytes, None),
            None => return not_found(),
        },
    };
    let etag = format!("\"{:016x}{}\"", xxhash_rust::xxh3::xxh3_64(&bytes), coding.unwrap_or(""));
    let fresh = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|tag| tag.trim() == etag));
    let mut response =
        if fresh { StatusCode::NOT_MODIFIED.into_response() } else { bytes.into_response() };
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type(path)));
    // URLs are not content-hashed: always revalidate (a 304 costs one round trip).
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    if let Ok(v) = HeaderValue::from_str(&etag) {
        h.insert(header::ETAG, v);
    }
    if let Some(coding) = coding {
        h.insert(header::CONTENT_ENCODING, HeaderValue::from_static(coding));
    }
    response
}

/// Whether an `Accept-Encoding` value allows `coding` (`q=0` refuses it).
fn accepts(accept: &str, coding: &str) -> bool {
    accept.split(',').any(|item| {
        let mut parts = item.split(';').map(str::trim);
        let name = parts.next().unwrap_or("");
        let refused = parts.any(|p| {
            p.strip_prefix("q=").and_then(|q| q.parse::<f32>().ok()).is_some_and(|q| q <= 0.0)
        });
        (name.eq_ignore_ascii_case(coding) || name == "*") && !refused
    })
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "woff2" => "font/woff2",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

fn not_found() -> Response {
    (StatusCode::NOT_FOUND, "no such file").into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_encoding_honours_q_zero_and_wildcards() {
        assert!(accepts("gzip, deflate, br", "br"));
        assert!(accepts("gzip;q=0.5", "gzip"));
        assert!(!accepts("gzip;q=0, deflate", "gzip"));
        assert!(!accepts("identity", "br"));
        assert!(accepts("*", "gzip"));
        assert!(!accepts("", "gzip"));
    }

    #[test]
    fn the_embedded_bundle_has_the_page_and_its_assets() {
        let index = EMBEDDED.get_file("index.html").and_then(|f| f.contents_utf8()).unwrap_or("");
        assert!(!index.is_empty());
        if !index.contains("BOARDSMITH_SKIP_WEB") {
            for f in ["assets/app.js", "assets/app.css", "assets/app.js.br", "assets/app.js.gz"] {
                assert!(EMBEDDED.get_file(f).is_some(), "{f} missing from the bundle");
            }
        }
    }
}
