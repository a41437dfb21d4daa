//! Who may talk to the server: the policy behind `server::guard`.
//!
//! - **Credentials**: people ([`users`]) sign in with a password, OpenID Connect or, for the
//!   first admin, the server token's link, and their browsers hold an opaque session cookie
//!   ([`sessions`]); programs send an API key ([`api_keys`], each belonging to a person and
//!   never doing more than that person may) or the server's one secret
//!   ([`token::ServerToken`], for the CLI and emergencies) as `Authorization: Bearer`.
//!   [`principal::Principal`] is who a request is; [`audit`] records what they did. A share
//!   link ([`links`]) shows one dashboard, read-only, to someone without an account.
//! - **Host allowlist** (DNS rebinding): `127.0.0.1:PORT`, `localhost:PORT`, `[::1]:PORT`, the
//!   bound address, and the operator's `allowed_hosts`.
//! - **Origin allowlist** (CSRF, foreign pages, WebSocket hijacking): a present `Origin` must be
//!   one of the server's own origins (`http://` + a loopback name or the bound address, on its
//!   port; `http` or `https` + a configured host) or a configured origin, compared as scheme +
//!   host + port — never as a prefix or pattern.
//!
//! Settings come from the environment (`BOARDSMITH_TOKEN`, `BOARDSMITH_AUTH`,
//! `BOARDSMITH_ALLOWED_HOSTS`, `BOARDSMITH_ALLOWED_ORIGINS`) over the `[server]` section of
//! `boardsmith.toml`. Knows nothing of HTTP framing or handlers: it answers questions about
//! strings.

pub mod api_keys;
pub mod attempts;
pub mod audit;
pub mod keys;
pub mod links;
pub mod oidc;
pub mod principal;
pub mod sessions;
pub mod signin;
pub mod token;
pub mod usage;
pub mod users;

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

pub use token::ServerToken;

/// Why access settings could not be loaded or applied.
#[derive(Debug, thiserror::Error)]
pub enum AccessError {
    /// A setting is invalid; the message names it.
    #[error("{0}")]
    Config(String),
    /// The token file could not be read or written.
    #[error("token file {}: {source}", path.display())]
    TokenFile {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The configuration is unsafe for this address (auth off on a non-loopback bind).
    #[error("{0}")]
    Refused(String),
}

/// The `[server]` section of `boardsmith.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ServerSection {
    token: Option<String>,
    auth: Option<bool>,
    #[serde(default)]
    allowed_hosts: Vec<String>,
    #[serde(default)]
    allowed_origins: Vec<String>,
    /// Sessions end after this long unused (`"7d"`).
    session_idle: Option<String>,
    /// Sessions end this long after sign-in (`"30d"`).
    session_max: Option<String>,
    /// The server is reached through a TLS proxy: session cookies are always `Secure`.
    behind_tls: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
struct FileWithServer {
    #[serde(default)]
    server: ServerSection,
    #[serde(default)]
    auth: oidc::AuthSection,
}

/// Access settings before the token is loaded.
#[derive(Debug, Clone, Default)]
pub struct AccessConfig {
    /// `false` (`--no-auth`, `BOARDSMITH_AUTH=0`, `auth = false`): no credential needed; only
    /// allowed on a loopback bind. Host, Origin and Content-Type checks stay on.
    pub no_auth: bool,
    /// The operator's token; `None`: `<data dir>/token`, generated on first start.
    pub token: Option<ServerToken>,
    /// Further `Host` values (`name` or `name:port`).
    pub allowed_hosts: Vec<HostPattern>,
    /// Further browser origins (`scheme://host[:port]`).
    pub allowed_origins: Vec<Origin>,
    /// How long sign-in sessions last (`BOARDSMITH_SESSION_IDLE`, `BOARDSMITH_SESSION_MAX`).
    pub sessions: sessions::SessionLimits,
    /// Always mark session cookies `Secure` (`BOARDSMITH_BEHIND_TLS=1`): the server is reached
    /// through a TLS proxy that may not say so in `X-Forwarded-Proto`.
    pub behind_tls: bool,
    /// OpenID Connect providers (`[[auth.oidc]]`).
    pub oidc: Vec<oidc::ProviderConfig>,
}

impl AccessConfig {
    /// From the environment over the `[server]` section of the config file (`BOARDSMITH_CONFIG`,
    /// else `./boardsmith.toml` when it exists).
    pub fn from_env() -> Result<Self, AccessError> {
        let path = base::config_file::path();
        let text = match &path {
            Some(p) => std::fs::read_to_string(p)
                .map_err(|e| AccessError::Config(format!("reading {}: {e}", p.display())))?,
            None => String::new(),
        };
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        Self::parse(&text, path.as_deref().unwrap_or(Path::new("<none>")), &env)
    }

    /// From config text (its `[server]` section) and an environment lookup.
    pub fn parse(
        text: &str,
        path: &Path,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, AccessError> {
        let file: FileWithServer = toml::from_str(text).map_err(|e| {
            AccessError::Config(format!("{} [server]: {}", path.display(), e.message()))
        })?;
        let s = file.server;
        for provider in &file.auth.oidc {
            provider
                .check()
                .map_err(|e| AccessError::Config(format!("{}: {e}", path.display())))?;
        }
        let oidc = file.auth.oidc;
        let no_auth = match env("BOARDSMITH_AUTH") {
            Some(v) => match v.trim().to_ascii_lowercase().as_str() {
                "0" | "false" | "off" | "no" => true,
                "1" | "true" | "on" | "yes" => false,
                other => {
                    return Err(AccessError::Config(format!(
                        "BOARDSMITH_AUTH must be 1 or 0, got `{other}`"
                    )));
                }
            },
            None => s.auth == Some(false),
        };
        let token = match (env("BOARDSMITH_TOKEN"), s.token) {
            (Some(t), _) => Some(ServerToken::configured(&t, "BOARDSMITH_TOKEN")?),
            (None, Some(t)) => Some(ServerToken::configured(&t, "[server] token")?),
            (None, None) => None,
        };
        let list = |var: &str, from_file: Vec<String>| -> Vec<String> {
            match env(var) {
                Some(v) => {
                    v.split(',').map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect()
                }
                None => from_file,
            }
        };
        let allowed_hosts = list("BOARDSMITH_ALLOWED_HOSTS", s.allowed_hosts)
            .iter()
            .map(|h| HostPattern::parse(h))
            .collect::<Result<_, _>>()?;
        let allowed_origins = list("BOARDSMITH_ALLOWED_ORIGINS", s.allowed_origins)
            .iter()
            .map(|o| {
                Origin::parse(o).ok_or_else(|| {
                    AccessError::Config(format!(
                        "allowed origin `{o}` is not `scheme://host[:port]`"
                    ))
                })
            })
            .collect::<Result<_, _>>()?;
        let duration = |var: &str, key: &str, from_file: Option<String>, default: Duration| {
            let (text, origin) = match (env(var), from_file) {
                (Some(v), _) => (v, var.to_owned()),
                (None, Some(v)) => (v, format!("[server] {key}")),
                (None, None) => return Ok(default),
            };
            humantime::parse_duration(text.trim())
                .ok()
                .filter(|d| *d >= Duration::from_secs(60))
                .ok_or_else(|| {
                    AccessError::Config(format!(
                        "{origin} must be a duration of at least a minute such as `12h` or `7d`, \
                         got `{text}`"
                    ))
                })
        };
        let defaults = sessions::SessionLimits::default();
        let sessions = sessions::SessionLimits {
            idle: duration(
                "BOARDSMITH_SESSION_IDLE",
                "session_idle",
                s.session_idle,
                defaults.idle,
            )?,
            absolute: duration(
                "BOARDSMITH_SESSION_MAX",
                "session_max",
                s.session_max,
                defaults.absolute,
            )?,
        };
        let behind_tls = match env("BOARDSMITH_BEHIND_TLS") {
            Some(v) => {
                matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true" | "on" | "yes")
            }
            None => s.behind_tls.unwrap_or(false),
        };
        Ok(Self { no_auth, token, allowed_hosts, allowed_origins, sessions, behind_tls, oidc })
    }

    /// The token to require: the configured one, else the data directory's (created if
    /// missing); `None` when auth is off.
    pub fn resolve_token(&self, data_dir: &Path) -> Result<Option<ServerToken>, AccessError> {
        if self.no_auth {
            return Ok(None);
        }
        match &self.token {
            Some(t) => Ok(Some(t.clone())),
            None => ServerToken::load_or_create(data_dir).map(Some),
        }
    }
}

/// A `Host` value the operator allows: `name` (the default port, or the server's own) or
/// `name:port` (exactly).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern {
    host: String,
    port: Option<u16>,
}

impl HostPattern {
    /// Parses `name`, `name:port`, `1.2.3.4[:port]` or `[::1][:port]`.
    pub fn parse(s: &str) -> Result<Self, AccessError> {
        split_host(s)
            .filter(|(h, _)| !h.is_empty())
            .map(|(host, port)| Self { host, port })
            .ok_or_else(|| AccessError::Config(format!("allowed host `{s}` is not `name[:port]`")))
    }
}

/// A browser origin: scheme, lower-case host and port (the scheme's default when absent).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Origin {
    scheme: String,
    host: String,
    port: u16,
}

impl Origin {
    /// Parses a serialized origin (`http://localhost:8080`); `None` for anything else,
    /// including `null` and values with a path, user info or query.
    pub fn parse(s: &str) -> Option<Self> {
        let (scheme, rest) = s.split_once("://")?;
        let scheme = scheme.to_ascii_lowercase();
        let default = match scheme.as_str() {
            "http" => 80,
            "https" => 443,
            _ => return None,
        };
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.contains(['/', '@', '?', '#']) {
            return None;
        }
        let (host, port) = split_host(rest)?;
        if host.is_empty() {
            return None;
        }
        Some(Self { scheme, host, port: port.unwrap_or(default) })
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let host =
            if self.host.contains(':') { format!("[{}]", self.host) } else { self.host.clone() };
        write!(f, "{}://{host}:{}", self.scheme, self.port)
    }
}

/// Splits `host[:port]` (IPv6 in brackets) into a lower-case host without brackets and the
/// port; `None` when malformed.
fn split_host(s: &str) -> Option<(String, Option<u16>)> {
    let s = s.trim();
    let (host, port) = if let Some(rest) = s.strip_prefix('[') {
        let (h, after) = rest.split_once(']')?;
        h.parse::<std::net::Ipv6Addr>().ok()?;
        match after {
            "" => (h, None),
            p => (h, Some(p.strip_prefix(':')?)),
        }
    } else {
        match s.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (s, None),
        }
    };
    if host.contains(':') && !s.starts_with('[') {
        return None;
    }
    let valid = |b: u8| b.is_ascii_alphanumeric() || b"-._:".contains(&b);
    if !host.bytes().all(valid) {
        return None;
    }
    let port = match port {
        None => None,
        Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => Some(p.parse().ok()?),
        Some(_) => return None,
    };
    Some((host.to_ascii_lowercase(), port))
}

/// The access policy of a server bound to one address.
#[derive(Debug, Clone)]
pub struct Access {
    token: Option<ServerToken>,
    port: u16,
    hosts: Vec<HostPattern>,
    origins: BTreeSet<Origin>,
    behind_tls: bool,
}

impl Access {
    /// The policy for a server listening on `bound` with `token` (`None`: auth off). Auth off
    /// on a non-loopback address is refused: anyone on the network could drive the server.
    pub fn new(
        config: &AccessConfig,
        token: Option<ServerToken>,
        bound: SocketAddr,
    ) -> Result<Self, AccessError> {
        if token.is_none() && !bound.ip().is_loopback() {
            return Err(AccessError::Refused(format!(
                "refusing to serve on {bound} without authentication: anyone who can reach that \
                 address could run agents and rewrite dashboards; bind to 127.0.0.1 or turn \
                 authentication back on"
            )));
        }
        let port = bound.port();
        // The server's own names speak plain HTTP on its port; configured names may also sit
        // behind a TLS proxy, so their `https` origins (default port or ours) count too.
        let mut own: Vec<HostPattern> = ["127.0.0.1", "localhost", "::1"]
            .into_iter()
            .map(|h| HostPattern { host: h.to_owned(), port: Some(port) })
            .collect();
        if !bound.ip().is_unspecified() {
            own.push(HostPattern { host: bound.ip().to_string(), port: Some(port) });
        }
        let mut origins: BTreeSet<Origin> = config.allowed_origins.iter().cloned().collect();
        for h in &own {
            origins.insert(Origin { scheme: "http".into(), host: h.host.clone(), port });
        }
        for h in &config.allowed_hosts {
            for (scheme, default) in [("http", 80), ("https", 443)] {
                for p in h.port.map_or([default, port], |p| [p, p]) {
                    origins.insert(Origin { scheme: scheme.into(), host: h.host.clone(), port: p });
                }
            }
        }
        let mut hosts = own;
        hosts.extend(config.allowed_hosts.iter().cloned());
        Ok(Self { token, port, hosts, origins, behind_tls: config.behind_tls })
    }

    /// The port the server listens on (names its session cookie).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Whether session cookies are always `Secure` (the operator says a TLS proxy is in
    /// front).
    pub fn behind_tls(&self) -> bool {
        self.behind_tls
    }

    /// Whether a credential is required.
    pub fn auth_required(&self) -> bool {
        self.token.is_some()
    }

    /// Whether `candidate` is the server's token (always true with auth off).
    pub fn token_matches(&self, candidate: &str) -> bool {
        self.token.as_ref().is_none_or(|t| t.matches(candidate))
    }

    /// Whether a `Host` header value names this server.
    pub fn host_allowed(&self, host: &str) -> bool {
        let Some((name, port)) = split_host(host) else { return false };
        self.hosts.iter().any(|h| {
            h.host == name
                && match (h.port, port) {
                    (Some(want), Some(got)) => want == got,
                    (Some(_), None) => false,
                    // A bare name: behind a proxy on the default port, or this server's port.
                    (None, got) => got.is_none_or(|p| p == self.port),
                }
        })
    }

    /// Whether an `Origin` header value is one of the server's own or a configured origin.
    pub fn origin_allowed(&self, origin: &str) -> bool {
        Origin::parse(origin).is_some_and(|o| self.origins.contains(&o))
    }

    /// The allowed `Host` values as `name` or `name:port` (IPv6 in brackets), for a second
    /// layer that takes lists (the MCP SDK's own DNS-rebinding check).
    pub fn host_list(&self) -> Vec<String> {
        self.hosts
            .iter()
            .map(|h| {
                let host =
                    if h.host.contains(':') { format!("[{}]", h.host) } else { h.host.clone() };
                match h.port {
                    Some(p) => format!("{host}:{p}"),
                    None => host,
                }
            })
            .collect()
    }

    /// The allowed origins as `scheme://host:port`, always with the port.
    pub fn origin_list(&self) -> Vec<String> {
        self.origins.iter().map(ToString::to_string).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access() -> Access {
        let config = AccessConfig {
            allowed_hosts: vec![
                HostPattern::parse("dash.example.com").unwrap(),
                HostPattern::parse("10.0.0.5:9000").unwrap(),
            ],
            allowed_origins: vec![Origin::parse("https://portal.example.org").unwrap()],
            ..AccessConfig::default()
        };
        let token = Some(ServerToken::configured("0123456789abcdef", "test").unwrap());
        Access::new(&config, token, "127.0.0.1:8080".parse().unwrap()).unwrap()
    }

    #[test]
    fn hosts_are_the_loopback_names_on_our_port_and_the_configured_ones() {
        let a = access();
        for ok in [
            "127.0.0.1:8080",
            "localhost:8080",
            "LOCALHOST:8080",
            "[::1]:8080",
            "dash.example.com",
            "dash.example.com:8080",
            "10.0.0.5:9000",
        ] {
            assert!(a.host_allowed(ok), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:8080",
            "localhost:8081",
            "localhost",
            "127.0.0.1",
            "dash.example.com:9999",
            "dash.example.com.evil.example",
            "10.0.0.5:8080",
            "",
            "[::1",
            "localhost:8080@evil",
            "::1:8080",
        ] {
            assert!(!a.host_allowed(bad), "{bad}");
        }
    }

    #[test]
    fn origins_match_scheme_host_and_port_exactly() {
        let a = access();
        for ok in [
            "http://127.0.0.1:8080",
            "http://localhost:8080",
            "http://[::1]:8080",
            "https://dash.example.com",
            "https://dash.example.com:8080",
            "http://dash.example.com:8080",
            "https://portal.example.org",
            "https://portal.example.org:443",
        ] {
            assert!(a.origin_allowed(ok), "{ok}");
        }
        for bad in [
            "null",
            "https://localhost:8080",
            "https://127.0.0.1:8080",
            "http://localhost:3000",
            "http://127.0.0.1:8081",
            "http://evil.example",
            "https://portal.example.org.evil.example",
            "https://portal.example.org:444",
            "http://portal.example.org",
            "ftp://localhost:8080",
            "http://localhost:8080/path",
            "http://user@localhost:8080",
            "",
        ] {
            assert!(!a.origin_allowed(bad), "{bad}");
        }
    }

    #[test]
    fn no_auth_is_refused_off_loopback() {
        let config = AccessConfig { no_auth: true, ..AccessConfig::default() };
        assert!(Access::new(&config, None, "127.0.0.1:1".parse().unwrap()).is_ok());
        assert!(Access::new(&config, None, "[::1]:1".parse().unwrap()).is_ok());
        let err = Access::new(&config, None, "0.0.0.0:1".parse().unwrap()).unwrap_err();
        assert!(matches!(err, AccessError::Refused(_)), "{err}");
    }

    #[test]
    fn settings_from_env_override_the_file() {
        let text = r#"
[server]
token = "file-token-0123456789"
allowed_hosts = ["a.example"]
[providers.x]
kind = "openai"
"#;
        let none = |_: &str| None;
        let c = AccessConfig::parse(text, Path::new("b.toml"), &none).unwrap();
        assert!(c.token.unwrap().matches("file-token-0123456789"));
        assert_eq!(c.allowed_hosts, vec![HostPattern::parse("a.example").unwrap()]);
        assert!(!c.no_auth);

        let env = |k: &str| match k {
            "BOARDSMITH_TOKEN" => Some("env-token-0123456789".to_owned()),
            "BOARDSMITH_AUTH" => Some("0".to_owned()),
            "BOARDSMITH_ALLOWED_HOSTS" => Some("b.example:1, c.example".to_owned()),
            _ => None,
        };
        let c = AccessConfig::parse(text, Path::new("b.toml"), &env).unwrap();
        assert!(c.token.unwrap().matches("env-token-0123456789"));
        assert!(c.no_auth);
        assert_eq!(c.allowed_hosts.len(), 2);

        let bad = AccessConfig::parse("[server]\ntokn = \"x\"\n", Path::new("b.toml"), &none);
        assert!(bad.unwrap_err().to_string().contains("tokn"));
        let short = AccessConfig::parse("[server]\ntoken = \"x\"\n", Path::new("b.toml"), &none);
        assert!(short.unwrap_err().to_string().contains("at least 16"));
    }
}
