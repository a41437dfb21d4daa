//! OpenID Connect sign-in (the authorization code flow with PKCE and a nonce), through the
//! `openidconnect` crate: the providers an operator lists under `[[auth.oidc]]` in
//! `boardsmith.toml`, their discovery documents (fetched on first use and kept an hour), the
//! URL a browser is sent to, and what comes back: an [`Identity`] whose ID token was checked
//! (signature from the provider's keys, issuer, audience, nonce, expiry) and whose role comes
//! from the operator's claim → role mapping.
//!
//! The flow's secrets (state, nonce, PKCE verifier) travel in a short-lived cookie the server
//! sets at the start ([`Started::cookie`]) and reads at the callback, so any node of several
//! can finish a flow another began. Knows nothing of HTTP framing: `server::oidc` sets and reads
//! the cookie and redirects.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine as _;
use openidconnect::core::{CoreAuthenticationFlow, CoreClient, CoreProviderMetadata};
use openidconnect::{
    AuthorizationCode, ClientId, ClientSecret, CsrfToken, IssuerUrl, Nonce,
    OAuth2TokenResponse as _, PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, Scope as OidcScope,
    TokenResponse as _,
};
use serde::Deserialize;
use serde_json::Value;

use crate::principal::Role;

/// How long a fetched discovery document (and its keys) is used before it is fetched again.
const METADATA_TTL: Duration = Duration::from_secs(3600);
/// How long a browser has to come back from the provider.
pub const FLOW_TTL: Duration = Duration::from_secs(600);
/// Calls to a provider give up after this.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest answer read from a provider.
const MAX_ANSWER: usize = 1 << 20;

/// A secret in the configuration: never printed.
#[derive(Clone, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

/// One `[[auth.oidc]]` entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// In URLs (`/api/session/oidc/{id}/start`): letters, digits, `-` and `_`.
    pub id: String,
    /// On the sign-in button ("Sign in with {name}").
    pub name: String,
    /// The issuer; its discovery document is `{issuer}/.well-known/openid-configuration`.
    pub issuer: String,
    /// This server's client id at the provider.
    pub client_id: String,
    /// Its secret (`client_secret_basic`).
    #[serde(default)]
    pub client_secret: Option<Secret>,
    /// Or the environment variable holding it.
    #[serde(default)]
    pub client_secret_env: Option<String>,
    /// Scopes asked for; `openid` is always among them.
    #[serde(default = "default_scopes")]
    pub scopes: Vec<String>,
    /// The ID token claim (a string or a list of strings) the roles are read from.
    #[serde(default)]
    pub role_claim: Option<String>,
    /// Claim values that make an admin.
    #[serde(default)]
    pub admin: Vec<String>,
    /// Claim values that make an editor.
    #[serde(default)]
    pub editor: Vec<String>,
    /// Claim values that make a viewer.
    #[serde(default)]
    pub viewer: Vec<String>,
    /// The role of someone no value matches; absent: they are refused.
    #[serde(default)]
    pub default_role: Option<Role>,
    /// The callback URL registered at the provider, when this server is reached under another
    /// address than the one the browser used (a proxy); default: from the request.
    #[serde(default)]
    pub redirect_url: Option<String>,
}

fn default_scopes() -> Vec<String> {
    ["openid", "email", "profile"].map(String::from).to_vec()
}

impl ProviderConfig {
    /// Checks what can be checked without the network.
    pub fn check(&self) -> Result<(), String> {
        if self.id.is_empty()
            || self.id.len() > 64
            || !self.id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(format!(
                "[[auth.oidc]] id `{}` must be 1 to 64 letters, digits, `-` or `_`",
                self.id
            ));
        }
        IssuerUrl::new(self.issuer.clone())
            .map_err(|e| format!("[[auth.oidc]] `{}`: issuer `{}`: {e}", self.id, self.issuer))?;
        if self.client_secret.is_none() && self.client_secret_env.is_none() {
            return Err(format!(
                "[[auth.oidc]] `{}` needs `client_secret` or `client_secret_env`",
                self.id
            ));
        }
        Ok(())
    }

    /// The role the claims give: the highest one any value maps to, else the default.
    pub fn role_of(&self, claims: &Value) -> Option<Role> {
        let values: Vec<&str> = match self.role_claim.as_deref().and_then(|c| claims.get(c)) {
            Some(Value::String(s)) => vec![s.as_str()],
            Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let has = |names: &[String]| values.iter().any(|v| names.iter().any(|n| n == v));
        if has(&self.admin) {
            Some(Role::Admin)
        } else if has(&self.editor) {
            Some(Role::Editor)
        } else if has(&self.viewer) {
            Some(Role::Viewer)
        } else {
            self.default_role
        }
    }
}

/// The `[auth]` section of `boardsmith.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AuthSection {
    #[serde(default)]
    pub(crate) oidc: Vec<ProviderConfig>,
}

/// Why a sign-in through a provider did not happen, in words for the person signing in
/// ([`OidcError::operator`] has the details for the log).
#[derive(Debug, thiserror::Error)]
pub enum OidcError {
    /// No such provider configured.
    #[error("there is no sign-in provider `{0}` on this server")]
    Unknown(String),
    /// The provider could not be reached or answered nonsense.
    #[error("{name} could not be reached to sign you in; try again shortly")]
    Unreachable {
        /// The provider's name.
        name: String,
        /// What happened.
        detail: String,
    },
    /// The flow's cookie is missing, stale or does not match: start again.
    #[error("this sign-in took too long or was started elsewhere; sign in again")]
    Flow,
    /// The provider said no (the person cancelled, or an error).
    #[error("{name} did not sign you in ({reason})")]
    Refused {
        /// The provider's name.
        name: String,
        /// Its reason.
        reason: String,
    },
    /// The ID token did not verify.
    #[error("{name}'s answer could not be verified; sign in again")]
    Invalid {
        /// The provider's name.
        name: String,
        /// What was wrong.
        detail: String,
    },
    /// The claims give no role.
    #[error("your account at {0} has no role on this server; ask an admin")]
    NoRole(String),
}

impl OidcError {
    /// The details for operators (the log), beyond the sentence.
    pub fn operator(&self) -> String {
        match self {
            Self::Unreachable { detail, .. } | Self::Invalid { detail, .. } => detail.clone(),
            other => other.to_string(),
        }
    }
}

/// A flow begun: where to send the browser, and the cookie that carries the flow.
#[derive(Debug)]
pub struct Started {
    /// The provider's authorization URL.
    pub authorize_url: String,
    /// The cookie's value (state, nonce, PKCE verifier, provider id).
    pub cookie: String,
}

/// Who the provider says signed in.
#[derive(Debug, Clone, PartialEq)]
pub struct Identity {
    /// The issuer.
    pub issuer: String,
    /// The `sub` claim.
    pub subject: String,
    /// A user name to make the account with: `preferred_username`, else `email`, else `sub`.
    pub username: String,
    /// `name`.
    pub display_name: Option<String>,
    /// `email`.
    pub email: Option<String>,
    /// The role the claims give (see [`ProviderConfig::role_of`]).
    pub role: Role,
    /// The provider's name.
    pub provider: String,
}

struct Provider {
    config: ProviderConfig,
    secret: Option<String>,
    metadata: Mutex<Option<(CoreProviderMetadata, Instant)>>,
}

/// The configured providers.
pub struct Oidc {
    providers: Vec<Provider>,
    http: Http,
}

impl std::fmt::Debug for Oidc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ids: Vec<&str> = self.providers.iter().map(|p| p.config.id.as_str()).collect();
        f.debug_struct("Oidc").field("providers", &ids).finish()
    }
}

impl Oidc {
    /// The providers of `configs` (checked), their secrets read from the environment where
    /// they name a variable.
    pub fn new(
        configs: Vec<ProviderConfig>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, String> {
        let mut providers = Vec::with_capacity(configs.len());
        for config in configs {
            config.check()?;
            if providers.iter().any(|p: &Provider| p.config.id == config.id) {
                return Err(format!("[[auth.oidc]] id `{}` is used twice", config.id));
            }
            let secret = match (&config.client_secret, &config.client_secret_env) {
                (Some(Secret(s)), _) => Some(s.clone()),
                (None, Some(var)) => Some(env(var).ok_or_else(|| {
                    format!("[[auth.oidc]] `{}`: the variable {var} is not set", config.id)
                })?),
                (None, None) => None,
            };
            providers.push(Provider { config, secret, metadata: Mutex::default() });
        }
        // The provider is the operator's choice, so no outbound allowlist; no redirects (a
        // discovery or token answer that moves is an error, not followed).
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(CALL_TIMEOUT)
            .build()
            .map_err(|e| format!("an HTTP client for OpenID Connect: {e}"))?;
        Ok(Self { providers, http: Http(http) })
    }

    /// The providers to offer: `(id, name)`.
    pub fn providers(&self) -> Vec<(String, String)> {
        self.providers.iter().map(|p| (p.config.id.clone(), p.config.name.clone())).collect()
    }

    fn provider(&self, id: &str) -> Result<&Provider, OidcError> {
        self.providers
            .iter()
            .find(|p| p.config.id == id)
            .ok_or_else(|| OidcError::Unknown(id.to_owned()))
    }

    /// The callback URL of provider `id` for a request that reached the server as `origin`
    /// (`http://host:port`), unless configured.
    pub fn redirect_url(&self, id: &str, origin: &str) -> Result<String, OidcError> {
        let p = self.provider(id)?;
        Ok(p.config
            .redirect_url
            .clone()
            .unwrap_or_else(|| format!("{origin}/api/session/oidc/{id}/callback")))
    }

    async fn client(
        &self,
        p: &Provider,
        redirect: &str,
    ) -> Result<
        (
            CoreClient<
                openidconnect::EndpointSet,
                openidconnect::EndpointNotSet,
                openidconnect::EndpointNotSet,
                openidconnect::EndpointNotSet,
                openidconnect::EndpointMaybeSet,
                openidconnect::EndpointMaybeSet,
            >,
            String,
        ),
        OidcError,
    > {
        let unreachable =
            |detail: String| OidcError::Unreachable { name: p.config.name.clone(), detail };
        let cached = {
            let m = p.metadata.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            m.as_ref().filter(|(_, at)| at.elapsed() < METADATA_TTL).map(|(m, _)| m.clone())
        };
        let metadata = match cached {
            Some(m) => m,
            None => {
                let issuer = IssuerUrl::new(p.config.issuer.clone())
                    .map_err(|e| unreachable(format!("issuer: {e}")))?;
                let m = CoreProviderMetadata::discover_async(issuer, &self.http).await.map_err(
                    |e| unreachable(format!("discovery at {}: {}", p.config.issuer, chain(&e))),
                )?;
                *p.metadata.lock().unwrap_or_else(std::sync::PoisonError::into_inner) =
                    Some((m.clone(), Instant::now()));
                m
            }
        };
        let redirect = RedirectUrl::new(redirect.to_owned())
            .map_err(|e| unreachable(format!("redirect URL `{redirect}`: {e}")))?;
        let client = CoreClient::from_provider_metadata(
            metadata,
            ClientId::new(p.config.client_id.clone()),
            p.secret.clone().map(ClientSecret::new),
        )
        .set_redirect_uri(redirect);
        Ok((client, p.config.issuer.clone()))
    }

    /// Begins a sign-in with provider `id`, coming back to `redirect`.
    #[base::boxed]
    pub async fn start(&self, id: &str, redirect: &str) -> Result<Started, OidcError> {
        let p = self.provider(id)?;
        let (client, _) = self.client(p, redirect).await?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut request = client.authorize_url(
            CoreAuthenticationFlow::AuthorizationCode,
            CsrfToken::new_random,
            Nonce::new_random,
        );
        for scope in p.config.scopes.iter().filter(|s| *s != "openid") {
            request = request.add_scope(OidcScope::new(scope.clone()));
        }
        let (url, state, nonce) = request.set_pkce_challenge(challenge).url();
        let cookie = [id, state.secret(), nonce.secret(), verifier.secret()].join(".");
        Ok(Started { authorize_url: url.to_string(), cookie })
    }

    /// Finishes a sign-in: `state` and `code` from the callback's query, `cookie` set by
    /// [`Oidc::start`]. The identity, once the ID token verified and the claims gave a role.
    #[base::boxed]
    pub async fn finish(
        &self,
        id: &str,
        redirect: &str,
        code: &str,
        state: &str,
        cookie: Option<&str>,
    ) -> Result<Identity, OidcError> {
        let p = self.provider(id)?;
        let name = p.config.name.clone();
        // The verifier is last: `splitn` keeps any `.` it has.
        let parts: Vec<&str> = cookie.unwrap_or_default().splitn(4, '.').collect();
        let [flow_id, flow_state, nonce, verifier] = parts[..] else {
            return Err(OidcError::Flow);
        };
        // Compared in constant time: the state is the flow's secret.
        use subtle::ConstantTimeEq as _;
        if flow_id != id || !bool::from(flow_state.as_bytes().ct_eq(state.as_bytes())) {
            return Err(OidcError::Flow);
        }
        let (client, issuer) = self.client(p, redirect).await?;
        let invalid = |detail: String| OidcError::Invalid { name: name.clone(), detail };
        let token = client
            .exchange_code(AuthorizationCode::new(code.to_owned()))
            .map_err(|e| invalid(format!("no token endpoint: {e}")))?
            .set_pkce_verifier(PkceCodeVerifier::new(verifier.to_owned()))
            .request_async(&self.http)
            .await
            .map_err(|e| invalid(format!("the code exchange failed: {}", chain(&e))))?;
        let _ = token.access_token();
        let id_token =
            token.id_token().ok_or_else(|| invalid("no ID token in the answer".into()))?;
        let verifier = client.id_token_verifier();
        let claims = id_token
            .claims(&verifier, &Nonce::new(nonce.to_owned()))
            .map_err(|e| invalid(format!("the ID token: {}", chain(&e))))?;
        // The token verified: its payload, for the claims `openidconnect`'s types do not name
        // (the role claim).
        let raw = id_token.to_string();
        let payload = raw
            .split('.')
            .nth(1)
            .and_then(|b| base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(b).ok())
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .ok_or_else(|| invalid("the ID token's payload is not JSON".into()))?;
        let subject = claims.subject().as_str().to_owned();
        let email = claims.email().map(|e| e.as_str().to_owned());
        let username = claims
            .preferred_username()
            .map(|u| u.as_str().to_owned())
            .or_else(|| email.clone())
            .unwrap_or_else(|| subject.clone());
        let display_name = claims.name().and_then(|n| n.get(None)).map(|n| n.as_str().to_owned());
        let role = p.config.role_of(&payload).ok_or_else(|| OidcError::NoRole(name.clone()))?;
        Ok(Identity { issuer, subject, username, display_name, email, role, provider: name })
    }
}

/// An OAuth error and its causes, for the log.
fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        out.push_str(": ");
        out.push_str(&c.to_string());
        cur = c.source();
    }
    out
}

/// Why a call to the provider failed.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct CallError(String);

/// Our reqwest client as `openidconnect`'s HTTP client (its requests and answers are `http`
/// types).
struct Http(reqwest::Client);

impl<'c> openidconnect::AsyncHttpClient<'c> for Http {
    type Error = CallError;
    type Future = std::pin::Pin<
        Box<dyn Future<Output = Result<openidconnect::HttpResponse, CallError>> + Send + 'c>,
    >;

    fn call(&'c self, request: openidconnect::HttpRequest) -> Self::Future {
        Box::pin(call(self.0.clone(), request))
    }
}

/// One HTTP exchange with a provider.
async fn call(
    http: reqwest::Client,
    req: openidconnect::HttpRequest,
) -> Result<openidconnect::HttpResponse, CallError> {
    let (parts, body) = req.into_parts();
    let method = reqwest::Method::from_bytes(parts.method.as_str().as_bytes())
        .map_err(|e| CallError(e.to_string()))?;
    let mut builder = http.request(method, parts.uri.to_string()).body(body);
    for (name, value) in &parts.headers {
        builder = builder.header(name.as_str(), value.as_bytes());
    }
    let mut res = builder.send().await.map_err(|e| CallError(e.to_string()))?;
    let status = res.status().as_u16();
    let mut out = openidconnect::http::Response::builder().status(status);
    for (name, value) in res.headers() {
        out = out.header(name.as_str(), value.as_bytes());
    }
    let mut body = Vec::new();
    while let Some(chunk) = res.chunk().await.map_err(|e| CallError(e.to_string()))? {
        if body.len() + chunk.len() > MAX_ANSWER {
            return Err(CallError(format!("an answer over {MAX_ANSWER} bytes")));
        }
        body.extend_from_slice(&chunk);
    }
    out.body(body).map_err(|e| CallError(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(toml_text: &str) -> ProviderConfig {
        toml::from_str(toml_text).unwrap()
    }

    const BASE: &str = r#"
        id = "corp"
        name = "Corp"
        issuer = "https://id.example.com"
        client_id = "bs"
        client_secret = "s3cret"
        role_claim = "groups"
        admin = ["root"]
        editor = ["analysts"]
        viewer = ["staff"]
    "#;

    #[test]
    fn the_highest_matching_role_wins_and_no_match_is_refused_unless_a_default_is_set() {
        let c = config(BASE);
        assert_eq!(
            c.role_of(&serde_json::json!({"groups": ["staff", "analysts"]})),
            Some(Role::Editor)
        );
        assert_eq!(c.role_of(&serde_json::json!({"groups": "root"})), Some(Role::Admin));
        assert_eq!(c.role_of(&serde_json::json!({"groups": ["other"]})), None);
        assert_eq!(c.role_of(&serde_json::json!({})), None);
        let with_default = config(&format!("{BASE}\ndefault_role = \"viewer\""));
        assert_eq!(with_default.role_of(&serde_json::json!({})), Some(Role::Viewer));
        assert_eq!(c.scopes, ["openid", "email", "profile"]);
    }

    #[test]
    fn configuration_is_checked_and_the_secret_never_printed() {
        let c = config(BASE);
        assert!(!format!("{c:?}").contains("s3cret"));
        assert!(c.check().is_ok());
        let bad_id = config(&BASE.replace("id = \"corp\"", "id = \"a/b\""));
        assert!(bad_id.check().unwrap_err().contains("id"));
        let no_secret = config(&BASE.replace("client_secret = \"s3cret\"", ""));
        assert!(no_secret.check().unwrap_err().contains("client_secret"));
        let twice = Oidc::new(vec![c.clone(), c.clone()], &|_| None);
        assert!(twice.unwrap_err().contains("twice"));
        let from_env = config(
            &BASE.replace("client_secret = \"s3cret\"", "client_secret_env = \"CORP_SECRET\""),
        );
        assert!(Oidc::new(vec![from_env.clone()], &|_| None).unwrap_err().contains("CORP_SECRET"));
        let oidc = Oidc::new(vec![from_env], &|_| Some("x".into())).unwrap();
        assert_eq!(oidc.providers(), [("corp".to_owned(), "Corp".to_owned())]);
        assert_eq!(
            oidc.redirect_url("corp", "http://127.0.0.1:8080").unwrap(),
            "http://127.0.0.1:8080/api/session/oidc/corp/callback"
        );
    }

    #[tokio::test]
    async fn a_callback_without_its_flow_cookie_or_with_another_state_is_refused() {
        let oidc = Oidc::new(vec![config(BASE)], &|_| None).unwrap();
        let finish = |cookie: Option<&'static str>, state: &'static str| {
            let oidc = &oidc;
            async move { oidc.finish("corp", "http://h/cb", "code", state, cookie).await }
        };
        assert!(matches!(finish(None, "s").await, Err(OidcError::Flow)));
        assert!(matches!(finish(Some("corp.s.n"), "s").await, Err(OidcError::Flow)));
        assert!(matches!(finish(Some("corp.s.n.v"), "t").await, Err(OidcError::Flow)));
        assert!(matches!(finish(Some("other.s.n.v"), "s").await, Err(OidcError::Flow)));
        assert!(matches!(oidc.start("nope", "http://h/cb").await, Err(OidcError::Unknown(_))));
    }
}
