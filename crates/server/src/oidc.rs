//! Sign-in through an OpenID provider (`access::oidc` speaks the protocol):
//! `GET /api/session/oidc/{id}/start` sends the browser to the provider with the flow in a
//! short-lived cookie; `GET /api/session/oidc/{id}/callback` checks what comes back, finds or
//! makes the person's account (`access::users::Users::linked`), signs them in
//! (`access::signin`) and sends them to the app. Both are public routes: the flow is the
//! credential. A refusal is a page with one plain sentence; operators get the details in the
//! log, and the audit trail a failed sign-in.

use std::sync::Arc;

use axum::Extension;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use serde::Deserialize;
use utoipa::{IntoParams, OpenApi};

use super::guard::SessionCookie;
use super::routes::{Need, Routes, get};
use super::session::{Peer, ip};
use access::audit::{AuditKind, Event};
use access::oidc::{FLOW_TTL, OidcError};
use access::sessions::Via;
use app::App;

#[derive(OpenApi)]
#[openapi(paths(start, callback))]
pub(crate) struct Doc;

/// The routes of this module.
pub fn routes() -> Routes<Arc<App>> {
    Routes::new()
        .route("/api/session/oidc/{id}/start", get(Need::Open, start))
        .route("/api/session/oidc/{id}/callback", get(Need::Open, callback))
}

/// The flow cookie's name: per port, like the session's.
fn flow_cookie(jar: &SessionCookie) -> String {
    jar.name.replacen("boardsmith_session_", "boardsmith_oidc_", 1)
}

/// `Set-Cookie` for the flow: `SameSite=Lax`, as the provider sends the browser back with a
/// top-level navigation from its own site (a `Strict` cookie would not come along), and only
/// on the callback's path.
fn set_flow(jar: &SessionCookie, value: &str, max_age: u64) -> Option<HeaderValue> {
    let secure = if jar.secure { "; Secure" } else { "" };
    HeaderValue::from_str(&format!(
        "{}={value}; Path=/api/session/oidc; HttpOnly; SameSite=Lax; Max-Age={max_age}{secure}",
        flow_cookie(jar)
    ))
    .ok()
}

/// This server's address as the browser used it (`http[s]://host`).
fn origin(headers: &HeaderMap, jar: &SessionCookie) -> String {
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("localhost");
    format!("{}://{host}", if jar.secure { "https" } else { "http" })
}

/// A refusal as the person signing in sees it.
fn refused(e: &OidcError) -> Response {
    let status = match e {
        OidcError::Unknown(_) => StatusCode::NOT_FOUND,
        OidcError::Flow => StatusCode::BAD_REQUEST,
        OidcError::Refused { .. } | OidcError::Invalid { .. } => StatusCode::UNAUTHORIZED,
        OidcError::NoRole(_) => StatusCode::FORBIDDEN,
        OidcError::Unreachable { .. } => StatusCode::BAD_GATEWAY,
    };
    page(status, &e.to_string())
}

/// A page with one sentence (errors are written lowercase, as clauses: made a sentence here).
fn page(status: StatusCode, sentence: &str) -> Response {
    let mut sentence: String = sentence
        .chars()
        .enumerate()
        .map(|(i, c)| if i == 0 { c.to_ascii_uppercase() } else { c })
        .collect();
    if !sentence.ends_with('.') {
        sentence.push('.');
    }
    let text = sentence
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;");
    let body = format!(
        "<!doctype html><meta charset=utf-8><link rel=icon href=\"data:,\">\
         <title>Sign-in failed · Boardsmith</title>\
         <style>body{{font:15px system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem}}</style>\
         <h1>Sign-in failed</h1><p class=oidc-error>{text}</p><p><a href=\"/\">Back to sign-in</a></p>"
    );
    (status, Html(body)).into_response()
}

#[utoipa::path(
    get,
    path = "/api/session/oidc/{id}/start",
    tag = "session",
    security(()),
    params(("id" = String, Path, description = "The provider's id (`GET /api/session/providers`).")),
    responses(
        (status = 303, description = "To the provider's sign-in, with the flow's cookie."),
        (status = "default", description = "A page saying why not (unknown provider 404, unreachable 502).", content_type = "text/html; charset=utf-8", body = String),
    )
)]
async fn start(
    State(app): State<Arc<App>>,
    Extension(jar): Extension<SessionCookie>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let begun = async {
        let redirect = app.oidc.redirect_url(&id, &origin(&headers, &jar))?;
        app.oidc.start(&id, &redirect).await
    };
    match begun.await {
        Ok(started) => {
            let mut r = (StatusCode::SEE_OTHER, [(header::LOCATION, started.authorize_url)])
                .into_response();
            if let Some(c) = set_flow(&jar, &started.cookie, FLOW_TTL.as_secs()) {
                r.headers_mut().insert(header::SET_COOKIE, c);
            }
            r
        }
        Err(e) => {
            tracing::warn!(provider = %id, error = %e.operator(), "starting an OpenID sign-in failed");
            refused(&e)
        }
    }
}

/// What the provider sends back.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct Back {
    /// The authorization code.
    code: Option<String>,
    /// The flow's state.
    state: Option<String>,
    /// The provider's error (`access_denied`, …).
    error: Option<String>,
    /// Its description.
    error_description: Option<String>,
}

#[utoipa::path(
    get,
    path = "/api/session/oidc/{id}/callback",
    tag = "session",
    security(()),
    params(("id" = String, Path, description = "The provider's id."), Back),
    responses(
        (status = 303, description = "Signed in: the session cookie is set; on to the app."),
        (status = "default", description = "A page saying why not: 400 a stale or foreign flow, 401 refused or unverifiable, 403 no role or a disabled account.", content_type = "text/html; charset=utf-8", body = String),
    )
)]
async fn callback(
    State(app): State<Arc<App>>,
    Extension(jar): Extension<SessionCookie>,
    headers: HeaderMap,
    peer: Peer,
    Path(id): Path<String>,
    back: Result<Query<Back>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let address = ip(&peer);
    let flow = super::guard::cookie(&headers, &flow_cookie(&jar)).map(str::to_owned);
    let finished = async {
        let Query(back) = back.map_err(|_| OidcError::Flow)?;
        let name = || {
            app.oidc.providers().into_iter().find(|(p, _)| *p == id).map_or(id.clone(), |(_, n)| n)
        };
        if let Some(error) = back.error {
            let reason = back.error_description.unwrap_or(error);
            return Err(OidcError::Refused { name: name(), reason: clip(&reason) });
        }
        let (Some(code), Some(state)) = (back.code, back.state) else {
            return Err(OidcError::Flow);
        };
        let redirect = app.oidc.redirect_url(&id, &origin(&headers, &jar))?;
        app.oidc.finish(&id, &redirect, &code, &state, flow.as_deref()).await
    };
    let mut response = match finished.await {
        Err(e) => {
            tracing::warn!(provider = %id, error = %e.operator(), "an OpenID sign-in failed");
            let event = Event::new(AuditKind::SignInFailed)
                .from(address)
                .detail(format!("OpenID Connect ({id}): {e}"));
            app.audit.record(event).await;
            refused(&e)
        }
        Ok(identity) => match app.users.linked(&identity).await {
            Ok(Some(user)) => {
                let how = format!("OpenID Connect ({})", identity.provider);
                match app.signins.begin(&user, Via::Oidc, address, jar.sent.as_deref(), &how).await
                {
                    Ok(session) => {
                        let mut r =
                            (StatusCode::SEE_OTHER, [(header::LOCATION, "/")]).into_response();
                        if let Some(c) = jar.set(&session) {
                            r.headers_mut().append(header::SET_COOKIE, c);
                        }
                        r
                    }
                    Err(e) => super::ApiError::from(e).into_response(),
                }
            }
            Ok(None) => {
                let event = Event::new(AuditKind::SignInFailed)
                    .from(address)
                    .detail(format!("OpenID Connect ({id}): account disabled"));
                app.audit.record(event).await;
                page(StatusCode::FORBIDDEN, "your account on this server is disabled; ask an admin")
            }
            Err(e) => super::ApiError::from(e).into_response(),
        },
    };
    // The flow is over, however it ended.
    if let Some(c) = set_flow(&jar, "", 0) {
        response.headers_mut().append(header::SET_COOKIE, c);
    }
    response
}

/// A provider's words, bounded.
fn clip(s: &str) -> String {
    s.chars().take(200).collect()
}
