//! `/api/session`: who is signed in, password sign-in, sign-out (here or everywhere) and a
//! person's own password. Thin: the accounts, sessions, attempt counts and the audit trail are
//! `access`'s; this module maps them to HTTP and sets or clears the cookie the guard describes
//! ([`SessionCookie`]).

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::Extension;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, State};
use axum::http::header;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, OpenApi, ToSchema};

use super::envelope::Envelope;
use super::guard::SessionCookie;
use super::routes::{Need, Routes, get, put};
use super::{ApiError, ApiQuery, ok, parse_body};
use access::audit::{AuditKind, Event};
use access::keys::Scope;
use access::principal::{Principal, Role};
use access::sessions::{NewSession, SessionInfo, Via};
use app::App;

#[derive(OpenApi)]
#[openapi(paths(me, sign_in, sign_out, change_password, sign_in_providers))]
pub(crate) struct Doc;

/// The routes of this module.
pub fn routes() -> Routes<Arc<App>> {
    Routes::new()
        .route(
            "/api/session",
            get(Scope::Read, me).post(Need::Open, sign_in).delete(Scope::Read, sign_out),
        )
        .route("/api/session/password", put(Scope::Read, change_password))
        .route("/api/session/providers", get(Need::Open, sign_in_providers))
}

/// A single sign-on provider the sign-in page offers.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct SignInProvider {
    /// Its id.
    id: String,
    /// Its name on the button.
    name: String,
    /// Where the button goes: `/api/session/oidc/{id}/start`.
    start_url: String,
}

#[utoipa::path(
    get,
    path = "/api/session/providers",
    tag = "session",
    responses((status = 200, description = "The OpenID providers the sign-in page offers (`[[auth.oidc]]` in `boardsmith.toml`).", body = Envelope<Vec<SignInProvider>>), (status = "default", response = crate::envelope::ErrorBody))
)]
async fn sign_in_providers(State(app): State<Arc<App>>) -> Response {
    let providers: Vec<SignInProvider> = app
        .oidc
        .providers()
        .into_iter()
        .map(|(id, name)| SignInProvider {
            start_url: format!("/api/session/oidc/{id}/start"),
            id,
            name,
        })
        .collect();
    ok(providers)
}

/// The client's address, when the request came through the accept loop.
pub(crate) type Peer = Option<Extension<ConnectInfo<SocketAddr>>>;

pub(crate) fn ip(peer: &Peer) -> Option<IpAddr> {
    peer.as_ref().map(|Extension(ConnectInfo(a))| a.ip())
}

/// Who is signed in.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct Me {
    user: MeUser,
    /// `session` (a browser), `key` (an API key) or `token` (the server token, or auth off).
    via: &'static str,
    /// How the session signed in.
    #[serde(skip_serializing_if = "Option::is_none")]
    signed_in_with: Option<Via>,
    /// When the session ends at the latest, Unix milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    expires_at: Option<i64>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct MeUser {
    /// `u_…`, or `owner` for the server token.
    id: String,
    username: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    display_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    email: Option<String>,
    role: Role,
}

fn me_of(app: &App, principal: &Principal, session: Option<&SessionInfo>) -> Me {
    let owner = || MeUser {
        id: "owner".into(),
        username: "owner".into(),
        display_name: None,
        email: None,
        role: Role::Admin,
    };
    let user = match principal.person() {
        Some(p) => match app.users.get(&p.id) {
            Some(u) => MeUser {
                id: u.id.to_string(),
                username: u.username,
                display_name: u.display_name,
                email: u.email,
                role: p.role,
            },
            None => owner(),
        },
        None => owner(),
    };
    let via = match principal {
        Principal::User(_) => "session",
        Principal::Key { .. } => "key",
        Principal::Owner => "token",
    };
    Me {
        user,
        via,
        signed_in_with: session.map(|s| s.via),
        expires_at: session.map(|s| s.expires_at),
    }
}

#[utoipa::path(
    get,
    path = "/api/session",
    tag = "session",
    responses((status = 200, description = "Who is signed in.", body = Envelope<Me>), (status = "default", response = crate::envelope::ErrorBody))
)]
async fn me(
    State(app): State<Arc<App>>,
    Extension(principal): Extension<Principal>,
    session: Option<Extension<SessionInfo>>,
) -> Response {
    ok(me_of(&app, &principal, session.as_ref().map(|Extension(s)| s)))
}

/// A password sign-in.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct SignIn {
    username: String,
    password: String,
}

#[utoipa::path(
    post,
    path = "/api/session",
    tag = "session",
    request_body = SignIn,
    responses(
        (status = 200, description = "Signed in: the session cookie is set.", body = Envelope<Me>),
        (status = 401, description = "Wrong user name or password (the same answer for both)."),
        (status = 429, description = "Too many failed attempts for this account or address."),
        (status = "default", response = crate::envelope::ErrorBody)
    )
)]
async fn sign_in(
    State(app): State<Arc<App>>,
    Extension(jar): Extension<SessionCookie>,
    peer: Peer,
    body: Bytes,
) -> Result<Response, ApiError> {
    let request: SignIn = parse_body(&body)?;
    let address = ip(&peer);
    if let Err(wait) = app.attempts.check(&request.username, address) {
        return Err(ApiError::RateLimited {
            msg: format!("too many failed sign-ins; try again in {} s", wait.as_secs().max(1)),
            retry_after: Some(wait),
        });
    }
    let Some(user) = app.users.verify(&request.username, &request.password).await else {
        app.attempts.failed(&request.username, address);
        // Name the account only when it exists: a password typed into the name field must not
        // land in the trail.
        let mut event = Event::new(AuditKind::SignInFailed).from(address).detail("password");
        if let Some(u) = app.users.by_name(&request.username) {
            event = event.target(u.id.to_string());
        }
        app.audit.record(event).await;
        return Err(ApiError::Unauthorized("wrong username or password".into()));
    };
    app.attempts.succeeded(&request.username);
    let session =
        app.signins.begin(&user, Via::Password, address, jar.sent.as_deref(), "password").await?;
    Ok(started(&app, &Principal::User(user.person()), &session, &jar))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct SignOutQuery {
    /// `true`: every session of this person, on every device and node.
    #[serde(default)]
    everywhere: bool,
}

/// How many sessions ended.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct SignedOut {
    ended: usize,
}

#[utoipa::path(
    delete,
    path = "/api/session",
    tag = "session",
    params(SignOutQuery),
    responses((status = 200, description = "Signed out: the cookie is cleared.", body = Envelope<SignedOut>), (status = "default", response = crate::envelope::ErrorBody))
)]
async fn sign_out(
    State(app): State<Arc<App>>,
    Extension(principal): Extension<Principal>,
    Extension(jar): Extension<SessionCookie>,
    peer: Peer,
    ApiQuery(q): ApiQuery<SignOutQuery>,
) -> Result<Response, ApiError> {
    let Principal::User(person) = &principal else {
        return Err(ApiError::bad(
            "only a signed-in browser has a session to end; API keys are revoked with \
             DELETE /api/keys/{id}",
        ));
    };
    let ended = if q.everywhere {
        app.sessions.end_all(&person.id).await?
    } else {
        usize::from(jar.sent.as_deref().is_some())
    };
    if let Some(cookie) = &jar.sent {
        app.sessions.end(cookie).await;
    }
    let mut event = Event::new(AuditKind::SignOut).by(&principal).from(ip(&peer));
    if q.everywhere {
        event = event.detail("everywhere");
    }
    app.audit.record(event).await;
    let mut response = ok(SignedOut { ended });
    if let Some(clear) = jar.clear() {
        response.headers_mut().insert(header::SET_COOKIE, clear);
    }
    Ok(response)
}

/// A person's new password.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct NewPassword {
    /// The password now (none when the account has none yet, as the first admin's).
    #[serde(default)]
    current: Option<String>,
    /// At least 10 characters.
    password: String,
}

#[utoipa::path(
    put,
    path = "/api/session/password",
    tag = "session",
    request_body = NewPassword,
    responses(
        (status = 200, description = "Changed: every other session of this person ended, this browser has a new one.", body = Envelope<Me>),
        (status = 403, description = "`current` is wrong."),
        (status = "default", response = crate::envelope::ErrorBody)
    )
)]
async fn change_password(
    State(app): State<Arc<App>>,
    Extension(principal): Extension<Principal>,
    Extension(jar): Extension<SessionCookie>,
    peer: Peer,
    body: Bytes,
) -> Result<Response, ApiError> {
    let Principal::User(person) = &principal else {
        return Err(ApiError::bad("only a signed-in person changes their password here"));
    };
    let request: NewPassword = parse_body(&body)?;
    let user = app.users.get(&person.id).ok_or_else(|| ApiError::Unauthorized("sign in".into()))?;
    if user.has_password {
        let current = request.current.as_deref().unwrap_or("");
        if !app.users.password_matches(&person.id, current).await {
            return Err(ApiError::Forbidden("the current password is wrong".into()));
        }
    }
    let patch = access::users::UserPatch {
        password: Some(request.password),
        ..access::users::UserPatch::default()
    };
    let (user, _) = app.users.update(&person.id, patch).await?;
    // Whoever else holds a session of this person is out; this browser starts afresh.
    app.sessions.end_all(&person.id).await?;
    let address = ip(&peer);
    let session = app.sessions.start(&user, Via::Password, address).await?;
    app.audit
        .record(
            Event::new(AuditKind::UserChanged)
                .by(&principal)
                .from(address)
                .target(user.id.to_string())
                .detail("own password"),
        )
        .await;
    Ok(started(&app, &principal, &session, &jar))
}

/// The answer that hands a browser its new password session: who it is, and the cookie.
fn started(
    app: &App,
    principal: &Principal,
    session: &NewSession,
    jar: &SessionCookie,
) -> Response {
    let info = SessionInfo {
        via: Via::Password,
        created_at: chrono::Utc::now().timestamp_millis(),
        expires_at: session.expires_at,
    };
    let mut response = ok(me_of(app, principal, Some(&info)));
    if let Some(cookie) = jar.set(session) {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    response
}
