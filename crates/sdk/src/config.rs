//! How the SDK is set up: from the environment, over the `[data]` section of `boardsmith.toml`
//! (provider keys and contacts, offline, fallback, extra outbound hosts). Knows nothing of
//! calls ([`super::Sdk`] reads it) nor where the file is (the app finds and reads it).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::Deserialize;

use super::{Backing, Registry, SdkError, http, provider};

/// The `[data]` section of `boardsmith.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct DataSection {
    /// Demo data only (`BOARDSMITH_OFFLINE`).
    offline: Option<bool>,
    /// Let the next provider serve when one is unavailable (`BOARDSMITH_DATA_FALLBACK`).
    fallback: Option<bool>,
    /// Extra hosts providers may reach (`BOARDSMITH_OUTBOUND_ALLOW`).
    #[serde(default)]
    outbound_allow: Vec<String>,
    /// Provider variables by name: keys, contacts, base URLs
    /// (`BOARDSMITH_FRED_API_KEY = "..."`, `BOARDSMITH_SEC_CONTACT = "Jane Doe jane@example.com"`).
    #[serde(default)]
    keys: BTreeMap<String, String>,
}

#[derive(Debug, Default, Deserialize)]
struct FileWithData {
    #[serde(default)]
    data: DataSection,
}

/// How the SDK is set up.
#[derive(Debug, Clone, Default)]
pub struct SdkConfig {
    /// Read specs from this directory instead of the ones embedded in the binary.
    pub spec_dir: Option<PathBuf>,
    /// Root folder for `file` backings (`BOARDSMITH_DATA_FILES`).
    pub data_dir: Option<PathBuf>,
    /// Environment variables treated as set for `enabledBy` (in addition to the real environment
    /// when `use_env` is true).
    pub enabled: Vec<String>,
    /// Consult the process environment for `enabledBy` and HTTP auth variables.
    pub use_env: bool,
    /// Variables the SDK reads (API keys, `BOARDSMITH_<PROVIDER>_BASE_URL`, `enabledBy`
    /// switches) set here rather than in the process: consulted before the process environment,
    /// and also when `use_env` is false (tests and embedders inject keys and base URLs this way).
    pub env: std::collections::BTreeMap<String, String>,
    /// Pin "now" for builtin generators (tests, reproducible demos). Default: the real clock.
    pub asof: Option<DateTime<Utc>>,
    /// Hosts `http` backings may reach besides those declared by the spec files, also on
    /// private addresses (`BOARDSMITH_OUTBOUND_ALLOW`): `host`, `host:port` or a URL each.
    pub outbound_allow: Vec<String>,
    /// Let every allowed host be loopback, private or link-local
    /// (`BOARDSMITH_OUTBOUND_ALLOW_PRIVATE=1`).
    pub outbound_allow_private: bool,
    /// Serve demo data only: every real provider is disabled (`BOARDSMITH_OFFLINE=1`).
    pub offline: bool,
    /// When a provider is unavailable, let the next one in the method's order serve
    /// (`BOARDSMITH_DATA_FALLBACK=1`); off by default, so a failing source is an error, not a
    /// silent switch to another (possibly demo) provider.
    pub fallback: bool,
    /// Most bytes the response cache holds (`BOARDSMITH_SDK_CACHE_BYTES`; default 256 MiB):
    /// answers' JSON text plus a small overhead each. `0` caches nothing (identical calls in
    /// flight are still coalesced).
    pub cache_bytes: Option<usize>,
    /// Longest one call waits for an HTTP provider before failing as not answering
    /// (`BOARDSMITH_DATA_WAIT_MS`; default [`DEFAULT_WAIT`]). The request goes on in the
    /// background and its answer fills the cache, so one slow provider holds no panel (nor its
    /// sandbox worker) longer than this.
    pub wait: Option<std::time::Duration>,
    /// How long a provider's open circuit breaker refuses calls before one probe (default
    /// [`crate::limit::BREAKER_COOLDOWN`]; tests and embedders shorten it).
    pub breaker_cooldown: Option<std::time::Duration>,
}

/// Variable setting [`SdkConfig::wait`] in milliseconds.
pub const WAIT_VAR: &str = "BOARDSMITH_DATA_WAIT_MS";

/// How long a call waits for a provider unless configured.
pub const DEFAULT_WAIT: std::time::Duration = std::time::Duration::from_millis(1000);

/// Variable setting [`SdkConfig::cache_bytes`].
pub const CACHE_BYTES_VAR: &str = "BOARDSMITH_SDK_CACHE_BYTES";

impl SdkConfig {
    /// Configuration from the process environment: `BOARDSMITH_SDK_SPEC`,
    /// `BOARDSMITH_DATA_FILES`, `BOARDSMITH_ASOF` (RFC 3339), `BOARDSMITH_OUTBOUND_ALLOW`
    /// (comma-separated), `BOARDSMITH_OUTBOUND_ALLOW_PRIVATE`, `BOARDSMITH_OFFLINE`,
    /// `BOARDSMITH_DATA_FALLBACK`, `BOARDSMITH_SDK_CACHE_BYTES` (a value that is not a number of
    /// bytes is ignored with a warning), `BOARDSMITH_DATA_WAIT_MS`.
    pub fn from_env() -> Self {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        Self {
            spec_dir: var("BOARDSMITH_SDK_SPEC").map(PathBuf::from),
            data_dir: var("BOARDSMITH_DATA_FILES").map(PathBuf::from),
            enabled: Vec::new(),
            use_env: true,
            env: std::collections::BTreeMap::new(),
            asof: var("BOARDSMITH_ASOF")
                .and_then(|s| DateTime::parse_from_rfc3339(&s).ok())
                .map(|d| d.with_timezone(&Utc)),
            outbound_allow: var(http::outbound::ALLOW_VAR)
                .map(|v| {
                    v.split(',')
                        .map(str::trim)
                        .filter(|e| !e.is_empty())
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default(),
            outbound_allow_private: var(http::outbound::ALLOW_PRIVATE_VAR)
                .is_some_and(|v| matches!(v.as_str(), "1" | "true" | "yes")),
            offline: var(provider::OFFLINE_VAR)
                .is_some_and(|v| matches!(v.as_str(), "1" | "true" | "yes")),
            fallback: var(provider::FALLBACK_VAR)
                .is_some_and(|v| matches!(v.as_str(), "1" | "true" | "yes")),
            cache_bytes: var(CACHE_BYTES_VAR).and_then(|v| {
                let n = v.trim().parse().ok();
                if n.is_none() {
                    tracing::warn!("{CACHE_BYTES_VAR}={v} is not a number of bytes: ignored");
                }
                n
            }),
            wait: var(WAIT_VAR).and_then(|v| {
                let n = v.trim().parse().ok().filter(|ms| *ms > 0);
                if n.is_none() {
                    tracing::warn!("{WAIT_VAR}={v} is not a number of milliseconds: ignored");
                }
                n.map(std::time::Duration::from_millis)
            }),
            breaker_cooldown: None,
        }
    }

    /// How long one call waits for an HTTP provider.
    pub fn wait(&self) -> std::time::Duration {
        self.wait.unwrap_or(DEFAULT_WAIT)
    }

    /// How long an open breaker refuses calls.
    pub fn cooldown(&self) -> std::time::Duration {
        self.breaker_cooldown.unwrap_or(crate::limit::BREAKER_COOLDOWN)
    }

    /// A variable: from `env`, else from the process environment when `use_env` is set.
    pub(super) fn env(&self, var: &str) -> Option<String> {
        if let Some(v) = self.env.get(var) {
            return Some(v.clone());
        }
        if self.use_env { std::env::var(var).ok() } else { None }
    }

    /// The outbound policy: the spec URLs' hosts, their `baseUrlEnv` values' hosts, and
    /// `outbound_allow`.
    pub(super) fn outbound(&self, registry: &Registry) -> Result<http::Outbound, SdkError> {
        let listed = self
            .outbound_allow
            .iter()
            .map(|e| {
                e.parse::<http::AllowedHost>()
                    .map_err(|m| SdkError::Config(format!("{}: {m}", http::outbound::ALLOW_VAR)))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut outbound = http::Outbound::new(listed, self.outbound_allow_private);
        for src in registry.sources() {
            let method_backings = src.methods.iter().filter_map(|m| m.backing.as_ref());
            let provider_backings =
                src.methods.iter().flat_map(|m| m.providers.iter().map(|p| &p.backing));
            for backing in
                std::iter::once(&src.backing).chain(method_backings).chain(provider_backings)
            {
                let Backing::Http(h) = backing else { continue };
                let lookup = h.lookup.as_ref().map(|l| l.url.as_str());
                for u in std::iter::once(h.url.as_str()).chain(lookup) {
                    if let Ok(url) = http::template::literal_origin(u) {
                        outbound.declare(&url);
                    }
                }
                if let Some(base) = h.base_url_env.as_deref().and_then(|v| self.env(v))
                    && let Ok(url) = reqwest::Url::parse(base.trim())
                {
                    outbound.declare(&url);
                }
            }
        }
        Ok(outbound)
    }

    pub(super) fn is_enabled(&self, var: &str) -> bool {
        self.enabled.iter().any(|v| v == var)
            || self.env(var).is_some_and(|v| matches!(v.as_str(), "1" | "true" | "yes"))
    }

    /// Adds the `[data]` section of a `boardsmith.toml` text under what the environment sets:
    /// each setting applies unless its variable is set in `env` (the environment wins). The
    /// caller finds and reads the file.
    pub fn with_data_section(
        mut self,
        text: &str,
        path: &Path,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, SdkError> {
        let file: FileWithData = toml::from_str(text)
            .map_err(|e| SdkError::Config(format!("{} [data]: {}", path.display(), e.message())))?;
        let d = file.data;
        if env(provider::OFFLINE_VAR).is_none()
            && let Some(v) = d.offline
        {
            self.offline = v;
        }
        if env(provider::FALLBACK_VAR).is_none()
            && let Some(v) = d.fallback
        {
            self.fallback = v;
        }
        if env(http::outbound::ALLOW_VAR).is_none() {
            self.outbound_allow.extend(d.outbound_allow);
        }
        for (name, value) in d.keys {
            if env(&name).is_none() {
                self.env.entry(name).or_insert(value);
            }
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_section_fills_what_the_environment_leaves_unset() {
        let text = r#"
            [server]
            auth = true
            [data]
            fallback = true
            outbound_allow = ["mirror.example:8080"]
            [data.keys]
            BOARDSMITH_FRED_API_KEY = "from-file"
            BOARDSMITH_SEC_CONTACT = "Jane Doe jane@example.com"
        "#;
        let env = |k: &str| (k == "BOARDSMITH_FRED_API_KEY").then(|| "from-env".to_owned());
        let c = SdkConfig { use_env: true, ..SdkConfig::default() }
            .with_data_section(text, Path::new("boardsmith.toml"), &env)
            .unwrap();
        assert!(c.fallback && !c.offline);
        assert_eq!(c.outbound_allow, ["mirror.example:8080"]);
        assert_eq!(
            c.env.get("BOARDSMITH_SEC_CONTACT").map(String::as_str),
            Some("Jane Doe jane@example.com")
        );
        assert!(!c.env.contains_key("BOARDSMITH_FRED_API_KEY"), "the environment's key wins");
        let e = SdkConfig::default()
            .with_data_section("[data]\nofline = true\n", Path::new("b.toml"), &|_| None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("b.toml [data]") && e.contains("ofline"), "{e}");
    }
}
