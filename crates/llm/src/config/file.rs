//! The TOML file format (`[providers.NAME]`, `[llm]`, `[agent.llm.interaction-log]`) as serde
//! structs, and the helpers that read it and the environment with errors naming the field.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use serde::de::IgnoredAny;

use super::super::http::{RetryPolicy, Timeouts};
use super::super::provider::{Family, ProviderKind};
use super::ConfigError;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileConfig {
    #[serde(default)]
    pub(super) providers: std::collections::BTreeMap<String, ProviderEntry>,
    #[serde(default)]
    pub(super) llm: LlmSection,
    #[serde(default)]
    pub(super) agent: AgentSection,
    /// `[server]` belongs to `access` (read there); accepted here, not read.
    #[serde(default, rename = "server")]
    pub(super) _server: Option<IgnoredAny>,
    /// `[knowledge]` belongs to `knowledge` (read there); accepted here, not read.
    #[serde(default, rename = "knowledge")]
    pub(super) _knowledge: Option<IgnoredAny>,
    /// `[auth]` belongs to `access` (read there); accepted here, not read.
    #[serde(default, rename = "auth")]
    pub(super) _auth: Option<IgnoredAny>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct LlmSection {
    #[serde(default)]
    pub(super) default: Option<String>,
    #[serde(default)]
    pub(super) fallback: Vec<String>,
    #[serde(default)]
    pub(super) timeouts: TimeoutsEntry,
    #[serde(default)]
    pub(super) retry: RetryEntry,
}

#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TimeoutsEntry {
    #[serde(default)]
    pub(super) connect: Option<f64>,
    #[serde(default)]
    pub(super) first_byte: Option<f64>,
    #[serde(default)]
    pub(super) idle: Option<f64>,
}

#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RetryEntry {
    #[serde(default)]
    pub(super) max_retries: Option<usize>,
    #[serde(default)]
    pub(super) min_delay_ms: Option<u64>,
    #[serde(default)]
    pub(super) max_delay_ms: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AgentSection {
    #[serde(default)]
    pub(super) llm: AgentLlmSection,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AgentLlmSection {
    #[serde(default, rename = "interaction-log", alias = "interaction_log")]
    pub(super) interaction_log: InteractionLogEntry,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct InteractionLogEntry {
    #[serde(default)]
    pub(super) enabled: Option<bool>,
    #[serde(default, rename = "mask-sensitive", alias = "mask_sensitive")]
    pub(super) mask_sensitive: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ProviderEntry {
    #[serde(default)]
    pub(super) kind: Option<ProviderKind>,
    #[serde(default)]
    pub(super) base_url: Option<String>,
    #[serde(default)]
    pub(super) api_key_env: Option<String>,
    /// Present only to refuse it with a useful message; the value is never kept.
    #[serde(default)]
    pub(super) api_key: Option<IgnoredAny>,
    #[serde(default)]
    pub(super) requires_key: Option<bool>,
    #[serde(default)]
    pub(super) default_model: Option<String>,
    #[serde(default)]
    pub(super) family: Option<Family>,
    #[serde(default)]
    pub(super) models: Vec<ModelEntry>,
    #[serde(default)]
    pub(super) timeouts: Option<TimeoutsEntry>,
    #[serde(default)]
    pub(super) retry: Option<RetryEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ModelEntry {
    pub(super) id: String,
    #[serde(default)]
    pub(super) context_window: Option<u64>,
    #[serde(default)]
    pub(super) max_output: Option<u64>,
    #[serde(default)]
    pub(super) input_price: Option<f64>,
    #[serde(default)]
    pub(super) output_price: Option<f64>,
    #[serde(default)]
    pub(super) cache_read_price: Option<f64>,
    #[serde(default)]
    pub(super) tools: Option<bool>,
    #[serde(default)]
    pub(super) reasoning: Option<bool>,
    #[serde(default)]
    pub(super) vision: Option<bool>,
}

/// The environment, as a function (tests pass a map; [`LlmConfig::from_env`] the process's).
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Reads a variable, treating an empty value as unset.
pub(super) fn var(env: Env<'_>, name: &str) -> Option<String> {
    env(name).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
}

pub(super) fn env_bool(env: Env<'_>, name: &str) -> Result<Option<bool>, ConfigError> {
    let Some(v) = var(env, name) else { return Ok(None) };
    match v.to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(Some(true)),
        "0" | "false" | "no" | "off" => Ok(Some(false)),
        _ => Err(ConfigError::Env {
            var: name.to_owned(),
            message: format!("expected true or false, got `{v}`"),
        }),
    }
}

/// `deep-seek` → `DEEP_SEEK`.
pub(super) fn env_name(key: &str) -> String {
    key.to_ascii_uppercase().replace('-', "_")
}

/// Normalizes a base URL: `http(s)` only, no trailing `/`. For Ollama, `host:port` without a
/// scheme is accepted (as `OLLAMA_HOST` is): `http://` is added, port 11434 when none is given,
/// and the bind-all address `0.0.0.0` becomes `127.0.0.1`.
pub(super) fn normalize_url(raw: &str, kind: ProviderKind) -> Result<String, String> {
    let raw = raw.trim();
    let has_scheme = raw.contains("://");
    let text = if has_scheme {
        raw.to_owned()
    } else if kind == ProviderKind::Ollama {
        let host = if raw.starts_with(':') { format!("127.0.0.1{raw}") } else { raw.to_owned() };
        format!("http://{host}")
    } else {
        return Err(format!("expected a URL starting with http:// or https://, got `{raw}`"));
    };
    let mut url =
        reqwest::Url::parse(&text).map_err(|e| format!("`{raw}` is not a valid URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("expected an http:// or https:// URL, got `{raw}`"));
    }
    if kind == ProviderKind::Ollama {
        if url.host_str() == Some("0.0.0.0") {
            let _ = url.set_host(Some("127.0.0.1"));
        }
        if !has_scheme && url.port().is_none() {
            let _ = url.set_port(Some(11434));
        }
    }
    Ok(url.as_str().trim_end_matches('/').to_owned())
}

pub(super) fn timeouts_over(
    base: Timeouts,
    e: &TimeoutsEntry,
) -> Result<Timeouts, (String, String)> {
    let secs = |name: &str, v: Option<f64>, d: Duration| -> Result<Duration, (String, String)> {
        match v {
            None => Ok(d),
            Some(s) if s.is_finite() && s > 0.0 => {
                Duration::try_from_secs_f64(s).map_err(|e| (name.to_owned(), e.to_string()))
            }
            Some(s) => {
                Err((name.to_owned(), format!("expected a positive number of seconds, got {s}")))
            }
        }
    };
    Ok(Timeouts {
        connect: secs("connect", e.connect, base.connect)?,
        first_byte: secs("first_byte", e.first_byte, base.first_byte)?,
        idle: secs("idle", e.idle, base.idle)?,
    })
}

pub(super) fn retry_over(
    base: RetryPolicy,
    e: &RetryEntry,
) -> Result<RetryPolicy, (String, String)> {
    let policy = RetryPolicy {
        max_retries: e.max_retries.unwrap_or(base.max_retries),
        min_delay: e.min_delay_ms.map_or(base.min_delay, Duration::from_millis),
        max_delay: e.max_delay_ms.map_or(base.max_delay, Duration::from_millis),
    };
    if policy.min_delay > policy.max_delay {
        return Err((
            "min_delay_ms".to_owned(),
            format!(
                "must not exceed max_delay_ms ({} > {} ms)",
                policy.min_delay.as_millis(),
                policy.max_delay.as_millis()
            ),
        ));
    }
    Ok(policy)
}

/// Line and column (1-based) of a byte offset.
pub(super) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// Order of the `[providers.*]` tables in the file (the map the file is read into is sorted).
pub(super) fn provider_order(text: &str) -> Vec<String> {
    let Ok(doc) = toml::de::DeTable::parse(text) else { return Vec::new() };
    let mut keys: Vec<(usize, String)> = Vec::new();
    for (k, v) in doc.get_ref() {
        if k.get_ref().as_ref() == "providers"
            && let toml::de::DeValue::Table(t) = v.get_ref()
        {
            keys = t.iter().map(|(k, _)| (k.span().start, k.get_ref().to_string())).collect();
        }
    }
    keys.sort();
    keys.into_iter().map(|(_, k)| k).collect()
}

pub(super) fn parse_file(text: &str, path: &Path) -> Result<FileConfig, ConfigError> {
    let file_error = |field: String, e: &toml::de::Error| {
        let mut message = e.message().trim().to_owned();
        if let Some(span) = e.span() {
            let (line, col) = line_col(text, span.start);
            let _ = write!(message, " (line {line}, column {col})");
        }
        ConfigError::File { path: path.to_owned(), field, message }
    };
    let de = toml::Deserializer::parse(text).map_err(|e| file_error(String::new(), &e))?;
    serde_path_to_error::deserialize(de).map_err(|e| {
        let field = e.path().to_string();
        let field = if field == "." { String::new() } else { field };
        file_error(field, e.inner())
    })
}
