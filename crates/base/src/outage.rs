//! When a data provider fails: what kind of failure it was, one plain sentence for the analyst,
//! and the details an operator needs (host, setting, when it is tried again). The SDK makes
//! one for every provider-side failure of an `sdk` call; the sandbox attaches it to the panel's
//! error, so the panel can say "Binance cannot be reached" and keep its last good data instead
//! of blaming the panel's code.
//!
//! A leaf: knows nothing of the SDK, the sandbox or dashboards.

use serde::{Deserialize, Serialize};

/// Why a provider could not serve a call. A closed set: the web app words each one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// Connection refused or reset, or its name does not resolve.
    Unreachable,
    /// It accepted the request and did not answer in time.
    Timeout,
    /// It answered 429 (too many requests), or its rate limit here would wait too long.
    RateLimited,
    /// It answered with a server error (5xx) or refused this region (451).
    ServerError,
    /// It refused the credential (401/403).
    BadKey,
    /// It needs a credential that is not set.
    NeedsKey,
    /// It is switched off here (offline mode, or its switch).
    Off,
    /// It answered with something that does not read as its documented response.
    BadAnswer,
}

impl Cause {
    /// Stable snake_case name, as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unreachable => "unreachable",
            Self::Timeout => "timeout",
            Self::RateLimited => "rate_limited",
            Self::ServerError => "server_error",
            Self::BadKey => "bad_key",
            Self::NeedsKey => "needs_key",
            Self::Off => "off",
            Self::BadAnswer => "bad_answer",
        }
    }

    /// Whether calling again later may succeed without anyone changing a setting (the
    /// provider is down, slow or busy), as opposed to a configuration it waits for.
    pub fn transient(self) -> bool {
        matches!(self, Self::Unreachable | Self::Timeout | Self::RateLimited | Self::ServerError)
    }
}

/// A provider's failure to serve one call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Outage {
    /// The provider (`binance`).
    pub provider: String,
    /// Its human-readable name (`Binance`).
    pub name: String,
    /// What kind of failure.
    pub cause: Cause,
    /// One plain sentence for the analyst, with no setting or host in it.
    pub summary: String,
    /// For operators: host and path, status, the last error, the setting that would help.
    pub details: String,
    /// The host called, if it was reached for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The setting (environment variable) an operator may change about it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setting: Option<String>,
    /// When the provider is called again (its circuit breaker is open), in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_in_ms: Option<u64>,
}

impl Outage {
    /// An outage of `provider` (shown as `name`) for `cause`, with the analyst's sentence made
    /// from the two and `details` for operators.
    pub fn new(provider: &str, name: &str, cause: Cause, details: impl Into<String>) -> Self {
        Self {
            provider: provider.to_owned(),
            name: name.to_owned(),
            cause,
            summary: summary(name, cause),
            details: details.into(),
            host: None,
            setting: None,
            retry_in_ms: None,
        }
    }

    /// With the host it called.
    #[must_use]
    pub fn host(mut self, host: Option<String>) -> Self {
        self.host = host;
        self
    }

    /// With the setting an operator may change.
    #[must_use]
    pub fn setting(mut self, setting: impl Into<String>) -> Self {
        self.setting = Some(setting.into());
        self
    }
}

/// The analyst's sentence for `cause`: what happened, in words that need no setting.
pub fn summary(name: &str, cause: Cause) -> String {
    match cause {
        Cause::Unreachable => format!("{name} cannot be reached"),
        Cause::Timeout => format!("{name} is not answering"),
        Cause::RateLimited => format!("{name} is limiting requests right now"),
        Cause::ServerError => format!("{name} is having problems on its side"),
        Cause::BadKey => format!("{name} did not accept this server's access key"),
        Cause::NeedsKey => format!("{name} needs an access key that is not set up"),
        Cause::Off => format!("{name} is switched off on this server"),
        Cause::BadAnswer => format!("{name} sent data that could not be read"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outage_reads_plainly_and_serializes_in_camel_case() {
        let o = Outage::new("binance", "Binance", Cause::Unreachable, "api.binance.com: refused")
            .host(Some("api.binance.com".into()))
            .setting("BOARDSMITH_DATA_FALLBACK");
        assert_eq!(o.summary, "Binance cannot be reached");
        let v = serde_json::to_value(&o).unwrap();
        assert_eq!(v["cause"], "unreachable");
        assert_eq!(v["setting"], "BOARDSMITH_DATA_FALLBACK");
        assert!(v.get("retryInMs").is_none());
        assert_eq!(serde_json::from_value::<Outage>(v).unwrap(), o);
        for c in [Cause::Unreachable, Cause::Timeout, Cause::NeedsKey, Cause::BadAnswer] {
            let s = summary("X", c);
            assert!(s.starts_with("X ") && !s.contains("BOARDSMITH"), "{s}");
            assert_eq!(serde_json::to_value(c).unwrap(), c.as_str());
        }
        assert!(Cause::Timeout.transient() && !Cause::NeedsKey.transient());
    }
}
