//! The access guard in front of every route, in this order:
//!
//! 1. `Host` must name this server (403 otherwise): a DNS-rebound page sends its own name.
//! 2. A present `Origin` must be one of ours (403): foreign pages, WebSocket hijacking. A
//!    `Sec-Fetch-Site: cross-site` request is refused on writes and protected paths (403).
//! 3. `GET /?token=T` is the server token's sign-in link: a valid token signs the browser in as
//!    the first admin (made on first use) with a new session and redirects to `/` (the token
//!    leaves the address bar and the history); a wrong one gets a sign-in page. The token
//!    itself never goes into a cookie.
//! 4. `/api`, `/ws`, `/v1`, `/mcp` and `/metrics` need a credential (401): a session cookie
//!    (a signed-in person, with their role), an API key (`Bearer bsk-…`: its scopes, capped by
//!    its person's role, at its rate: 429 with `Retry-After`) or the server token as
//!    `Authorization: Bearer T` (everything: the CLI, emergencies). What the route axum matched
//!    declares for the method (`server::routes`) must be allowed (403 otherwise). The request
//!    carries its [`Principal`] (and, for a session, its `access::sessions::SessionInfo`) on
//!    to the handler; every request carries the [`SessionCookie`] settings for handlers that
//!    sign in or out. A session replaced because its person's role changed gets its new
//!    cookie on this response. The app shell, its assets, `/healthz` and the sign-in route are public.
//! 5. A POST/PUT/PATCH with a body must say `Content-Type: application/json` (415): the
//!    "simple" content types a page may send cross-origin without a preflight never reach a
//!    handler. The one exception, `POST /api/uploads`, takes the raw image with its image type
//!    (`image/png`, `image/jpeg`, `image/gif`, `image/webp`): none of them is simple either, so
//!    a foreign page still needs a preflight, which step 2 refuses. `multipart/form-data` is
//!    simple (a foreign page's `<form>` can send it with no preflight), so it is taken on one
//!    route only, `POST /api/kb/{id}/documents` (a knowledge-base file upload), and there only
//!    with a bearer credential (which a form cannot add) or with an `Origin` header, which
//!    step 2 has already found to be ours: a cross-site form post carries its own page's
//!    origin, and a request with the session cookie but no origin is refused.
//! 6. A request that presented a credential is counted against that credential's share of
//!    connections and requests in flight (`shares`: 429, or 503 when every attributable
//!    connection is held), so one credential cannot hold everyone's. A share link's visitors
//!    (`/api/shared/{token}`, public routes whose handlers check the token) are counted as
//!    the link.
//!
//! Every response gets `Referrer-Policy: no-referrer`, `X-Content-Type-Options: nosniff` and
//! framing denied. The policy is `access::Access`; this module only applies it to requests.

use std::net::IpAddr;
use std::sync::Arc;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};

use super::ApiError;
use super::routes::RouteTable;
use access::Access;
use access::api_keys::{ApiKeys, Refusal};
use access::audit::{Audit, AuditKind, Event};
use access::keys::{Scope, looks_like_key};
use access::principal::Principal;
use access::sessions::{NewSession, Resolved, Sessions, Via};
use access::users::Users;

/// What the guard checks requests against.
#[derive(Debug)]
pub struct Gate {
    /// Hosts, origins, the server token.
    pub access: Access,
    /// API keys.
    pub keys: Arc<ApiKeys>,
    /// Accounts (the token link signs in as the first admin).
    pub users: Arc<Users>,
    /// Signed-in browsers.
    pub sessions: Arc<Sessions>,
    /// Sign-ins recorded.
    pub audit: Arc<Audit>,
    /// Share links: a link's visitor is counted as the link.
    pub links: Arc<access::links::Links>,
    /// Signing in (the token link signs in as the first admin).
    pub signins: access::signin::SignIns,
    /// What each route and method needs (`server::routes`).
    pub routes: RouteTable,
}

/// The session cookie's name: per port, so two servers on one host keep separate sessions
/// (cookies are not isolated by port).
pub fn cookie_name(port: u16) -> String {
    format!("boardsmith_session_{port}")
}

/// How this request's session cookie is named and marked: on every request, for the handlers
/// that sign in and out.
#[derive(Debug, Clone)]
pub struct SessionCookie {
    /// The cookie's name.
    pub name: Arc<str>,
    /// Mark it `Secure` (the request came through TLS, or the operator says a TLS proxy is in
    /// front).
    pub secure: bool,
    /// The value the request sent, if any.
    pub sent: Option<String>,
}

impl SessionCookie {
    /// `Set-Cookie` for a new session.
    pub fn set(&self, session: &NewSession) -> Option<HeaderValue> {
        let max_age = (session.expires_at - chrono::Utc::now().timestamp_millis()).max(0) / 1000;
        let secure = if self.secure { "; Secure" } else { "" };
        HeaderValue::from_str(&format!(
            "{}={}; Path=/; HttpOnly; SameSite=Strict; Max-Age={max_age}{secure}",
            self.name, session.cookie
        ))
        .ok()
    }

    /// `Set-Cookie` that removes it.
    pub fn clear(&self) -> Option<HeaderValue> {
        let secure = if self.secure { "; Secure" } else { "" };
        HeaderValue::from_str(&format!(
            "{}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0{secure}",
            self.name
        ))
        .ok()
    }
}

/// The middleware (`axum::middleware::from_fn_with_state`).
#[base::boxed]
pub async fn guard(State(gate): State<Arc<Gate>>, mut req: Request, next: Next) -> Response {
    let jar = {
        let headers = req.headers();
        SessionCookie {
            name: cookie_name(gate.access.port()).into(),
            secure: gate.access.behind_tls() || over_tls(headers),
            sent: cookie(headers, &cookie_name(gate.access.port())).map(str::to_owned),
        }
    };
    let address = super::peer(&req);
    // The session is read before the synchronous checks (it may need the store).
    let session = match &jar.sent {
        Some(c) if gate.access.auth_required() => gate.sessions.resolve(c).await,
        _ => None,
    };
    let replaced = session.as_ref().and_then(|s| s.replaced.as_ref().and_then(|n| jar.set(n)));
    // A cookie that no longer stands for a session is cleared with the 401 it earns, so the
    // browser stops sending it.
    let dead = (jar.sent.is_some() && session.is_none()).then(|| jar.clear()).flatten();
    let mut response = match check(&gate, &req, session.as_ref()) {
        Ok(Pass::Go(principal, authenticated)) => {
            let held = match shared_link(&gate, &req) {
                Some(link) => super::shares::hold_as(&req, format!("link:{link}").into()),
                None => super::shares::hold(&req, &principal, authenticated),
            };
            match held {
                Ok(_in_flight) => {
                    req.extensions_mut().insert(principal);
                    if let Some(s) = session {
                        req.extensions_mut().insert(s.info);
                    }
                    req.extensions_mut().insert(jar);
                    next.run(req).await
                }
                Err(refused) => refused.into_response(),
            }
        }
        Ok(Pass::TokenSignIn) => token_sign_in(&gate, address, &jar).await,
        Ok(Pass::Answer(early)) => early,
        Err(e) => e.into_response(),
    };
    if let Some(cookie) = replaced {
        response.headers_mut().append(header::SET_COOKIE, cookie);
    }
    if let Some(clear) = dead
        && response.status() == StatusCode::UNAUTHORIZED
        && gate.access.auth_required()
    {
        response.headers_mut().append(header::SET_COOKIE, clear);
    }
    let h = response.headers_mut();
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static("frame-ancestors 'none'"));
    response
}

/// The share link a `/api/shared/{token}…` request presents, if it works: its visitors hold
/// the link's share of connections and requests, like any credential's.
fn shared_link(gate: &Gate, req: &Request) -> Option<String> {
    let rest = req.uri().path().strip_prefix("/api/shared/")?;
    let token = rest.split('/').next()?;
    gate.links.peek(token).ok().map(|l| l.id)
}

/// What to do with a request the guard does not refuse.
enum Pass {
    /// Go on to the handler, as this principal (`true`: it presented a credential).
    Go(Principal, bool),
    /// Answer this (a wrong token's sign-in page, a 401 with its challenge).
    Answer(Response),
    /// `GET /?token=` with the right token: sign in as the first admin.
    TokenSignIn,
}

/// `Ok(Go)`: go on to the handler; `Ok(Answer(r))`: answer `r`; `Err`: refuse.
fn check(gate: &Gate, req: &Request, session: Option<&Resolved>) -> Result<Pass, ApiError> {
    let access = &gate.access;
    let headers = req.headers();
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| req.uri().authority().map(|a| a.as_str().to_owned()));
    match host {
        Some(h) if access.host_allowed(&h) => {}
        Some(h) => {
            return Err(ApiError::Forbidden(format!(
                "Host `{}` is not allowed: this server answers only to its own names \
                 (protection against DNS rebinding); an operator can add a name with \
                 BOARDSMITH_ALLOWED_HOSTS",
                clip(&h)
            )));
        }
        None => return Err(ApiError::Forbidden("a Host header is required".into())),
    }

    let path = req.uri().path();
    // The scope of the route axum matched, for this method; `None`: a public request.
    let route = req.extensions().get::<MatchedPath>().map(MatchedPath::as_str);
    let need = gate.routes.required(req.method(), route, path);
    let protected = need.is_some();
    let write = !matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !access.origin_allowed(origin) {
            return Err(ApiError::Forbidden(format!(
                "Origin `{}` is not allowed: requests from other sites' pages are refused; an \
                 operator can add an origin with BOARDSMITH_ALLOWED_ORIGINS",
                clip(origin)
            )));
        }
    }
    if (write || protected) && header_is(headers, "sec-fetch-site", "cross-site") {
        return Err(ApiError::Forbidden("cross-site requests are refused".into()));
    }

    if path == "/"
        && *req.method() == Method::GET
        && let Some(token) = query_param(req.uri().query(), "token")
    {
        if !access.auth_required() {
            return Ok(Pass::Answer(home()));
        }
        if !access.token_matches(token) {
            return Ok(Pass::Answer(
                (StatusCode::UNAUTHORIZED, Html(SIGN_IN_PAGE)).into_response(),
            ));
        }
        return Ok(Pass::TokenSignIn);
    }

    let principal = if protected && access.auth_required() {
        match principal(gate, headers, session) {
            Ok(p) => p,
            Err(e @ ApiError::Unauthorized(_)) => {
                let mut r = e.into_response();
                r.headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
                return Ok(Pass::Answer(r));
            }
            Err(e) => return Err(e),
        }
    } else {
        Principal::Owner
    };
    if let Some(scope) = need {
        if !principal.allows(scope) {
            return Err(ApiError::Forbidden(refusal(&principal, scope, path)));
        }
        // Only calls that spend are held to a budget: a key over it still reads.
        if matches!(scope, Scope::Models | Scope::Agents)
            && write
            && let Some(id) = principal.key_id()
            && let Some(msg) = gate.keys.over_budget(id)
        {
            return Err(ApiError::RateLimited { msg, retry_after: None });
        }
    }

    if matches!(*req.method(), Method::POST | Method::PUT | Method::PATCH)
        && has_body(headers)
        && !is_json(headers)
        && !(path == UPLOADS && is_image(headers))
        && !(is_kb_upload(req.method(), path)
            && is_multipart(headers)
            && multipart_origin_ok(headers))
    {
        let given =
            headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("none");
        if is_kb_upload(req.method(), path) && is_multipart(headers) {
            return Err(ApiError::Forbidden(
                "a multipart upload needs `Authorization: Bearer` or this server's `Origin`".into(),
            ));
        }
        return Err(ApiError::UnsupportedMediaType(if path == UPLOADS {
            format!(
                "an upload is the image itself with `Content-Type` image/png, image/jpeg, \
                 image/gif or image/webp, got `{}`",
                clip(given)
            )
        } else {
            format!(
                "request bodies must be JSON with `Content-Type: application/json`, got `{}`",
                clip(given)
            )
        }));
    }
    Ok(Pass::Go(principal, protected && access.auth_required()))
}

/// Who the request is: the server token as a Bearer credential (the owner), an API key, or the
/// session's person. 401 without a usable credential; 429 for a key over its rate.
fn principal(
    gate: &Gate,
    headers: &HeaderMap,
    session: Option<&Resolved>,
) -> Result<Principal, ApiError> {
    let access = &gate.access;
    let bearers: Vec<&str> = headers
        .get_all(header::AUTHORIZATION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
        .map(str::trim)
        .collect();
    if bearers.iter().any(|t| access.token_matches(t)) {
        return Ok(Principal::Owner);
    }
    if let Some(key) = bearers.iter().find(|t| looks_like_key(t)) {
        return gate.keys.authenticate(key).map_err(|refusal| match refusal {
            Refusal::RateLimited { retry_after, .. } => {
                ApiError::RateLimited { msg: refusal.to_string(), retry_after: Some(retry_after) }
            }
            Refusal::Unknown
            | Refusal::Revoked(_)
            | Refusal::Expired(_)
            | Refusal::OwnerGone(_) => ApiError::Unauthorized(refusal.to_string()),
        });
    }
    if let Some(s) = session {
        return Ok(Principal::User(s.person.clone()));
    }
    Err(ApiError::Unauthorized(
        "sign in: with your user name and password, or open the URL the server printed at \
         start (`boardsmith token` prints it again); programs send `Authorization: Bearer \
         <API key>`"
            .into(),
    ))
}

/// Why `principal` may not do what `scope` allows on `path`, in words its holder can act on.
fn refusal(principal: &Principal, need: Scope, path: &str) -> String {
    let scope = need.as_str();
    match principal {
        Principal::User(p) => format!(
            "your role ({}) does not allow this: {path} needs `{scope}`; an admin can change \
             your role",
            p.role
        ),
        Principal::Key { user: Some(p), .. } if !p.role.allows(need) => format!(
            "this API key's person ({}) is a {}, whose role does not allow `{scope}`, which \
             {path} needs",
            p.username, p.role
        ),
        _ => format!("this API key lacks the `{scope}` scope that {path} needs"),
    }
}

/// The value of cookie `name`, if the request has one.
pub(crate) fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim_matches('"'))
}

/// A redirect to the app.
fn home() -> Response {
    (StatusCode::SEE_OTHER, [(header::LOCATION, "/")]).into_response()
}

/// `GET /?token=T` with the right token: a new session as the first admin (made now when there
/// is none: the two-command quick start), its cookie and a redirect to `/`. A session the
/// browser already had ends (a new id at every sign-in).
async fn token_sign_in(gate: &Gate, address: Option<IpAddr>, jar: &SessionCookie) -> Response {
    let admin = match gate.users.ensure_first_admin().await {
        Ok((admin, made)) => {
            if made {
                tracing::info!(user = %admin.username, "made the first admin at the token sign-in");
                let event = Event::new(AuditKind::UserCreated)
                    .by(&Principal::Owner)
                    .target(admin.id.to_string())
                    .detail("first admin, at the server token's sign-in");
                gate.audit.record(event).await;
            }
            admin
        }
        Err(e) => return ApiError::from(e).into_response(),
    };
    let how = "server token link";
    let session =
        match gate.signins.begin(&admin, Via::Token, address, jar.sent.as_deref(), how).await {
            Ok(s) => s,
            Err(e) => return ApiError::from(e).into_response(),
        };
    let mut r = home();
    if let Some(cookie) = jar.set(&session) {
        r.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    r
}

/// Whether the request came over TLS. The server speaks plain HTTP (TLS is the proxy's
/// job), so only the proxy can say: `X-Forwarded-Proto: https` or `Forwarded: proto=https`.
/// A client that sends either itself only makes its own cookie stricter.
fn over_tls(headers: &HeaderMap) -> bool {
    let says_https = |name: &str, value: &str| {
        value.split([',', ';']).any(|part| {
            let part = part.trim();
            match name {
                "forwarded" => part.split_once('=').is_some_and(|(k, v)| {
                    k.trim().eq_ignore_ascii_case("proto")
                        && v.trim_matches('"').eq_ignore_ascii_case("https")
                }),
                _ => part.eq_ignore_ascii_case("https"),
            }
        })
    };
    ["x-forwarded-proto", "forwarded"].iter().any(|name| {
        headers.get_all(*name).iter().filter_map(|v| v.to_str().ok()).any(|v| says_https(name, v))
    })
}

/// The raw value of query parameter `name` (tokens are URL-safe, so no decoding is needed:
/// an encoded one simply does not match).
fn query_param<'a>(query: Option<&'a str>, name: &str) -> Option<&'a str> {
    query?.split('&').filter_map(|kv| kv.split_once('=')).find(|(k, _)| *k == name).map(|(_, v)| v)
}

fn header_is(headers: &HeaderMap, name: &str, value: &str) -> bool {
    headers.get(name).and_then(|v| v.to_str().ok()).is_some_and(|v| v.eq_ignore_ascii_case(value))
}

/// A body is coming: a non-zero `Content-Length` or any `Transfer-Encoding`.
fn has_body(headers: &HeaderMap) -> bool {
    if headers.contains_key(header::TRANSFER_ENCODING) {
        return true;
    }
    headers
        .get(header::CONTENT_LENGTH)
        .is_some_and(|v| v.to_str().map_or(true, |v| v.trim() != "0"))
}

/// The one path that takes a body other than JSON: an image (see the module doc, point 5).
const UPLOADS: &str = "/api/uploads";

/// `POST /api/kb/{id}/documents`: the one route that takes `multipart/form-data`.
fn is_kb_upload(method: &Method, path: &str) -> bool {
    *method == Method::POST
        && path
            .strip_prefix("/api/kb/")
            .and_then(|rest| rest.strip_suffix("/documents"))
            .is_some_and(|id| !id.is_empty() && !id.contains('/'))
}

/// `multipart/form-data` (with its boundary parameter).
fn is_multipart(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| m.trim().eq_ignore_ascii_case("multipart/form-data"))
}

/// A multipart body is taken with a bearer credential (a form cannot send one) or with an
/// `Origin` (checked to be ours before this): never on the cookie alone without an origin.
fn multipart_origin_ok(headers: &HeaderMap) -> bool {
    headers.contains_key(header::AUTHORIZATION) || headers.contains_key(header::ORIGIN)
}

/// One of the image types uploads accept.
fn is_image(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| uploads::ImageType::from_mime(v).is_some())
}

/// `application/json`, with or without parameters (`; charset=utf-8`).
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
}

/// A header value quoted in a message, at most 100 characters.
fn clip(s: &str) -> String {
    s.chars().take(100).collect()
}

/// Shown for a wrong token at `/?token=`; its form signs in again.
const SIGN_IN_PAGE: &str = r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Boardsmith: sign in</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:16px system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem}
input{width:100%;padding:.5rem;font:inherit;box-sizing:border-box}button{margin-top:.75rem;padding:.5rem 1rem;font:inherit}</style>
</head><body>
<h1>Sign in to Boardsmith</h1>
<p>That token is not this server's. Open the sign-in link the server printed when it started
(<code>boardsmith token</code> prints it again), or paste the token here.</p>
<form method="get" action="/"><label>Token <input name="token" autocomplete="off" autofocus></label>
<button type="submit">Sign in</button></form>
</body></html>
"#;

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn cookies_are_found_by_exact_name() {
        let h = headers(&[("cookie", "a=1; boardsmith_session_80=tok; boardsmith_session_8=x")]);
        assert_eq!(cookie(&h, "boardsmith_session_80"), Some("tok"));
        assert_eq!(cookie(&h, "boardsmith_session_8"), Some("x"));
        assert_eq!(cookie(&h, "boardsmith_session_808"), None);
    }

    #[test]
    fn bodies_and_json_are_recognised() {
        assert!(has_body(&headers(&[("content-length", "5")])));
        assert!(has_body(&headers(&[("transfer-encoding", "chunked")])));
        assert!(!has_body(&headers(&[("content-length", "0")])));
        assert!(!has_body(&headers(&[])));
        assert!(is_json(&headers(&[("content-type", "application/json; charset=utf-8")])));
        assert!(is_json(&headers(&[("content-type", "Application/JSON")])));
        for bad in [
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data",
            "application/jsonp",
        ] {
            let h = {
                let mut h = HeaderMap::new();
                h.insert(header::CONTENT_TYPE, HeaderValue::from_static(bad));
                h
            };
            assert!(!is_json(&h), "{bad}");
        }
    }

    #[test]
    fn multipart_is_taken_on_the_kb_upload_route_only() {
        assert!(is_kb_upload(&Method::POST, "/api/kb/kb_1/documents"));
        assert!(!is_kb_upload(&Method::PUT, "/api/kb/kb_1/documents"));
        assert!(!is_kb_upload(&Method::POST, "/api/kb//documents"));
        assert!(!is_kb_upload(&Method::POST, "/api/kb/a/b/documents"));
        assert!(!is_kb_upload(&Method::POST, "/api/dashboards"));
        assert!(is_multipart(&headers(&[("content-type", "multipart/form-data; boundary=x")])));
        assert!(!is_multipart(&headers(&[("content-type", "text/plain")])));
        assert!(!multipart_origin_ok(&headers(&[("cookie", "boardsmith_session_80=t")])));
        assert!(multipart_origin_ok(&headers(&[("authorization", "Bearer t")])));
    }

    #[test]
    fn session_cookies_are_http_only_strict_and_secure_over_tls() {
        let jar = SessionCookie { name: "boardsmith_session_80".into(), secure: false, sent: None };
        let new = NewSession {
            cookie: "c".repeat(43),
            expires_at: chrono::Utc::now().timestamp_millis() + 3_600_000,
        };
        let set = jar.set(&new).unwrap();
        let set = set.to_str().unwrap();
        assert!(set.starts_with(&format!("boardsmith_session_80={}", "c".repeat(43))), "{set}");
        assert!(
            set.contains("HttpOnly") && set.contains("SameSite=Strict") && !set.contains("Secure")
        );
        let max_age: i64 = set.split("Max-Age=").nth(1).unwrap().parse().unwrap();
        assert!((3590..=3600).contains(&max_age), "{max_age}");
        let tls = SessionCookie { secure: true, ..jar };
        assert!(tls.set(&new).unwrap().to_str().unwrap().ends_with("; Secure"));
        assert!(tls.clear().unwrap().to_str().unwrap().contains("Max-Age=0"));
        assert!(over_tls(&headers(&[("x-forwarded-proto", "https")])));
        assert!(over_tls(&headers(&[("forwarded", "for=1.2.3.4;proto=https")])));
        assert!(!over_tls(&headers(&[("x-forwarded-proto", "http")])));
    }

    #[test]
    fn the_token_parameter_is_read_raw() {
        assert_eq!(query_param(Some("a=1&token=abc"), "token"), Some("abc"));
        assert_eq!(query_param(Some("xtoken=abc"), "token"), None);
        assert_eq!(query_param(None, "token"), None);
    }
}
