//! The one error type of the provider layer, with the retry decision.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Which wait ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeoutStage {
    /// Establishing the connection.
    Connect,
    /// Waiting for the response's first byte.
    FirstByte,
    /// Waiting for the next chunk of a stream.
    Idle,
}

/// A failed model call.
#[derive(Debug, Clone, PartialEq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LlmError {
    /// The provider answered with an error status.
    #[error("{provider}: HTTP {status}: {message}")]
    Http {
        /// Provider key.
        provider: String,
        /// HTTP status.
        status: u16,
        /// The provider's own message.
        message: String,
        /// The `Retry-After` the provider asked for.
        #[serde(default, with = "opt_millis", skip_serializing_if = "Option::is_none")]
        retry_after: Option<Duration>,
    },
    /// The provider reported an error inside the stream (Anthropic `error` event, ...).
    #[error("{provider}: {error_type}: {message}")]
    Api {
        /// Provider key.
        provider: String,
        /// The provider's error type (`overloaded_error`, ...).
        error_type: String,
        /// The provider's message.
        message: String,
    },
    /// A wait ran out.
    #[error("{provider}: timed out ({stage:?}) after {after_ms} ms")]
    Timeout {
        /// Provider key.
        provider: String,
        /// Which wait.
        stage: TimeoutStage,
        /// Its length.
        after_ms: u64,
    },
    /// The connection failed or was reset.
    #[error("{provider}: connection failed: {message}")]
    Connection {
        /// Provider key.
        provider: String,
        /// What happened.
        message: String,
    },
    /// The provider sent something that is not its protocol (malformed chunk, truncated
    /// stream).
    #[error("{provider}: protocol error: {message}")]
    Protocol {
        /// Provider key.
        provider: String,
        /// What was wrong.
        message: String,
    },
    /// The provider or model is not configured (missing key, unknown model).
    #[error("{message}")]
    Config {
        /// What to fix.
        message: String,
    },
}

impl LlmError {
    /// Whether trying the same call again may succeed: rate limits (429), overload (529 and
    /// `overloaded_error`), server errors (5xx), timeouts and connection failures. Client errors
    /// (400/401/403/404), protocol and configuration errors are final.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Http { status, .. } => matches!(status, 408 | 409 | 429 | 500..=599),
            Self::Api { error_type, .. } => matches!(
                error_type.as_str(),
                "overloaded_error" | "rate_limit_error" | "api_error" | "timeout_error"
            ),
            Self::Timeout { .. } | Self::Connection { .. } => true,
            Self::Protocol { .. } | Self::Config { .. } => false,
        }
    }

    /// The wait the provider asked for before retrying.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::Http { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// The provider this error came from (empty for configuration errors).
    pub fn provider(&self) -> &str {
        match self {
            Self::Http { provider, .. }
            | Self::Api { provider, .. }
            | Self::Timeout { provider, .. }
            | Self::Connection { provider, .. }
            | Self::Protocol { provider, .. } => provider,
            Self::Config { .. } => "",
        }
    }

    /// The HTTP status, when there was one.
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Http { status, .. } => Some(*status),
            _ => None,
        }
    }
}

mod opt_millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    #[allow(clippy::ref_option)]
    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Ok(Option::<u64>::deserialize(d)?.map(Duration::from_millis))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http(status: u16) -> LlmError {
        LlmError::Http { provider: "p".into(), status, message: "m".into(), retry_after: None }
    }

    #[test]
    fn retry_decisions_follow_the_status() {
        for s in [429, 500, 502, 503, 504, 529] {
            assert!(http(s).is_retryable(), "{s}");
        }
        for s in [400, 401, 403, 404, 422] {
            assert!(!http(s).is_retryable(), "{s}");
        }
        let overloaded = LlmError::Api {
            provider: "a".into(),
            error_type: "overloaded_error".into(),
            message: "Overloaded".into(),
        };
        assert!(overloaded.is_retryable());
        let invalid = LlmError::Api {
            provider: "a".into(),
            error_type: "invalid_request_error".into(),
            message: "bad".into(),
        };
        assert!(!invalid.is_retryable());
    }

    #[test]
    fn errors_round_trip_through_json() {
        let e = LlmError::Http {
            provider: "openai".into(),
            status: 429,
            message: "slow down".into(),
            retry_after: Some(Duration::from_millis(1500)),
        };
        let json = serde_json::to_value(&e).unwrap();
        assert_eq!(json["kind"], "http");
        assert_eq!(json["retry_after"], 1500);
        assert_eq!(serde_json::from_value::<LlmError>(json).unwrap(), e);
    }
}
