//! The OpenAPI 3.1 document of the HTTP API and its reference page: `GET /openapi.json`
//! (generated once from the handlers' `#[utoipa::path]` attributes and the `ToSchema` types
//! they take and return: nothing is written by hand) and `GET /docs` (RapiDoc, vendored from
//! the npm registry by `web/build.mjs` and served from the binary like the web app).
//!
//! Each module of `server` keeps a `Doc` listing its own operations; this one merges them and
//! adds what is common: the `{code, msg, data}` envelope, the error body (the envelope plus
//! OpenAI's `error` object) and the credentials: each operation's `security` names the one
//! scope its route declares (`server::routes`), the scope the guard asks of an API key.
//! `tests/it/openapi.rs` checks that every route of the router is in the document and every
//! operation of the document is routed; `tests/it/scopes.rs` sends every operation with a key
//! of each scope.

use std::sync::LazyLock;

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

use utoipa::openapi::security::{
    ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme,
};
use utoipa::{Modify, OpenApi};

use super::envelope::{ErrorBody, OpenAiError};
use super::routes::{Need, RouteTable};

/// The bearer and cookie credentials, and the document's servers-independent facts.
struct Security;

impl Modify for Security {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "`Authorization: Bearer <token>`: the server's secret (`BOARDSMITH_TOKEN`, \
                         or the one `boardsmith token` prints), which may do everything, or an \
                         API key (`bsk-…`, made with `POST /api/keys`), which may do what its \
                         scopes allow (`read`, `write`, `agents`, `models`, `metrics`, `admin`): \
                         an operation's `security` names the one scope it needs (`admin` \
                         allows all).",
                    ))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "session",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::with_description(
                "boardsmith_session_8080",
                "The session cookie the sign-in link (`/?token=…`) sets: \
                 `boardsmith_session_<port>`, the server's port in its name (8080 here).",
            ))),
        );
    }
}

/// What is documented here itself, and the common parts.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "Boardsmith",
        description = "The HTTP API of a Boardsmith server: dashboards and their data, the \
            dashboard agent's tools, the agent gateway (`/api/query` streams Event Model v2 events \
            as SSE), API keys and usage, and the OpenAI-compatible `/v1`.\n\n\
            Every JSON response of `/api` is the envelope `{code, msg, data}` (`code` 0 on \
            success, else the HTTP status); `/v1` answers in OpenAI's format. Every error body \
            is the envelope plus OpenAI's `error` object.\n\n\
            Paths under `/api`, `/ws`, `/v1`, `/mcp` and `/metrics` need a credential: the \
            server token or an API key as a bearer token, or the session cookie the sign-in link \
            sets. Request bodies must be `application/json`. The WebSocket `GET /ws` is \
            described in the README."
    ),
    paths(openapi_json),
    components(schemas(ErrorBody, OpenAiError), responses(ErrorBody)),
    modifiers(&Security),
    security(("bearer" = []), ("session" = [])),
)]
struct Common;

/// The whole document: the common parts and every module's operations.
pub fn document() -> utoipa::openapi::OpenApi {
    let mut doc = Common::openapi();
    for part in [
        super::Doc::openapi(),
        super::agents::Doc::openapi(),
        super::chats::Doc::openapi(),
        super::tools::Doc::openapi(),
        super::keys::Doc::openapi(),
        super::session::Doc::openapi(),
        super::oidc::Doc::openapi(),
        super::sharing::Doc::openapi(),
        super::share_links::Doc::openapi(),
        super::diff::Doc::openapi(),
        super::export::Doc::openapi(),
        super::alerts::Doc::openapi(),
        super::channels::Doc::openapi(),
        super::reports::Doc::openapi(),
        super::drafts::Doc::openapi(),
        super::users::Doc::openapi(),
        super::admin::Doc::openapi(),
        super::usage::Doc::openapi(),
        super::uploads::Doc::openapi(),
        super::workflows::Doc::openapi(),
        super::kb::Doc::openapi(),
        super::openai::Doc::openapi(),
        super::web::Doc::openapi(),
    ] {
        doc.merge(part);
    }
    declare_scopes(&mut doc, super::api().table());
    doc
}

/// Each operation's `security` from the route table: the bearer credential with the one scope
/// its route declares for the method (OpenAPI 3.1 lets a scheme that is not OAuth list the
/// roles it needs) or the session cookie (the owner's: every scope); none for a public one.
fn declare_scopes(doc: &mut utoipa::openapi::OpenApi, table: &RouteTable) {
    for (route, method, need) in table.entries() {
        // axum's catch-all `{*id}` is `{id}` in OpenAPI.
        let Some(item) = doc.paths.paths.get_mut(&route.replace("{*", "{")) else { continue };
        let operation = match method.as_str() {
            "GET" => &mut item.get,
            "PUT" => &mut item.put,
            "POST" => &mut item.post,
            "DELETE" => &mut item.delete,
            "PATCH" => &mut item.patch,
            _ => continue,
        };
        if let Some(operation) = operation {
            operation.security = Some(match need {
                Need::Public | Need::Open => vec![SecurityRequirement::default()],
                Need::Scope(scope) => vec![
                    SecurityRequirement::new("bearer", [scope.as_str()]),
                    SecurityRequirement::new("session", Vec::<String>::new()),
                ],
            });
        }
    }
}

/// The document as served, serialized once.
static JSON: LazyLock<Vec<u8>> =
    LazyLock::new(|| serde_json::to_vec(&document()).unwrap_or_default());

/// The OpenAPI document of this server.
#[utoipa::path(
    get,
    path = "/openapi.json",
    tag = "documentation",
    security(()),
    responses(
        (status = 200, description = "The OpenAPI 3.1 document (this one).", body = Object),
        (status = "default", response = ErrorBody),
    )
)]
#[base::boxed]
pub async fn openapi_json() -> Response {
    ([(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], JSON.as_slice())
        .into_response()
}
