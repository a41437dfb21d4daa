//! LLM configuration: which providers exist, where they live, which environment variable holds
//! each one's key, what their models can do and cost, and how a model reference becomes the
//! [`ProviderSettings`] a provider is built from.
//!
//! Owns the TOML format (`[providers.NAME]` with `[[providers.NAME.models]]`, `[llm]` with
//! `default`, `timeouts` and `retry`, `[agent.llm.interaction-log]`), the environment shortcuts
//! (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `DEEPSEEK_API_KEY`, `DASHSCOPE_API_KEY`, `OLLAMA_HOST`,
//! `<NAME>_BASE_URL`, `BOARDSMITH_MODEL`, `AGENT_LLM_INTERACTION_LOG_*`), the built-in model
//! registry ([`REGISTRY`]) and resolution ([`LlmConfig::resolve`]).
//!
//! Keys are read from the environment only (never from the file), held as [`ApiKey`] and never
//! printed, logged or serialized. Loading is pure with respect to the environment: every
//! variable is read through the function passed to [`LlmConfig::load`]. This module builds no
//! provider and makes no HTTP call.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};

use super::error::LlmError;
use super::http::{InteractionLog, RetryPolicy, Timeouts, Transport};
use super::provider::{ApiKey, Family, ProviderKind, ProviderSettings};
use super::types::Usage;

pub use crate::config_file::DEFAULT_CONFIG_FILE;

/// Context window assumed for a model neither the registry nor the config knows.
pub const UNKNOWN_CONTEXT_WINDOW: u64 = 32_768;

/// Output limit assumed for a model neither the registry nor the config knows.
pub const UNKNOWN_MAX_OUTPUT: u64 = 4_096;

/// Why a configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read the LLM config {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid TOML, has an unknown field or a value of the wrong type or range.
    #[error("{}: {}{message}", path.display(), field_prefix(field))]
    File {
        /// The file.
        path: PathBuf,
        /// Where in the file (`providers.deepseek.models[0].context_window`; empty for syntax
        /// errors, whose message carries the line).
        field: String,
        /// What was expected.
        message: String,
    },
    /// An environment variable has a value that cannot be used.
    #[error("environment variable {var}: {message}")]
    Env {
        /// The variable.
        var: String,
        /// What was expected.
        message: String,
    },
}

fn field_prefix(field: &str) -> String {
    if field.is_empty() { String::new() } else { format!("`{field}`: ") }
}

/// What a model can do and what it costs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelInfo {
    /// The model id sent to the provider, exactly as asked for (`llama3.1:8b`,
    /// `claude-sonnet-4-5-20250929`).
    pub id: String,
    /// Context window in tokens.
    pub context_window: u64,
    /// Longest output in tokens (the default `max_tokens`).
    pub max_output: u64,
    /// USD per million input tokens (unknown: `None`).
    pub input_price: Option<f64>,
    /// USD per million output tokens.
    pub output_price: Option<f64>,
    /// USD per million input tokens read from the provider's cache (input price when absent).
    pub cache_read_price: Option<f64>,
    /// Takes tool definitions and makes tool calls (assumed for unknown models: the agent
    /// cannot work without it, and a provider that refuses says so).
    pub tools: bool,
    /// Produces reasoning.
    pub reasoning: bool,
    /// Takes images.
    pub vision: bool,
    /// Described by the registry or the config; `false` means the conservative defaults above.
    pub known: bool,
}

impl ModelInfo {
    /// Conservative defaults for a model nobody described.
    pub fn unknown(id: &str) -> Self {
        Self {
            id: id.to_owned(),
            context_window: UNKNOWN_CONTEXT_WINDOW,
            max_output: UNKNOWN_MAX_OUTPUT,
            input_price: None,
            output_price: None,
            cache_read_price: None,
            tools: true,
            reasoning: false,
            vision: false,
            known: false,
        }
    }

    /// The cost in USD of a call with this usage, when the prices are known. Cached input
    /// tokens are charged at the cache price; all other input tokens (cache writes included)
    /// at the input price.
    pub fn cost(&self, usage: &Usage) -> Option<f64> {
        let input = self.input_price?;
        let output = self.output_price?;
        let cached = usage.cache_read_tokens.min(usage.input_tokens);
        let uncached = usage.input_tokens - cached;
        let cache_price = self.cache_read_price.unwrap_or(input);
        Some(
            (uncached as f64 * input
                + cached as f64 * cache_price
                + usage.output_tokens as f64 * output)
                / 1_000_000.0,
        )
    }
}

const T: u8 = 1;
const R: u8 = 2;
const V: u8 = 4;

/// One entry of the built-in model registry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RegistryEntry {
    /// The provider that serves it (`openai`, `anthropic`, `deepseek`, `qwen`, `ollama`).
    pub provider: &'static str,
    /// Model id.
    pub id: &'static str,
    /// Context window in tokens.
    pub context_window: u64,
    /// Longest output in tokens.
    pub max_output: u64,
    /// USD per million input tokens.
    pub input_price: f64,
    /// USD per million output tokens.
    pub output_price: f64,
    /// USD per million cached input tokens.
    pub cache_read_price: Option<f64>,
    caps: u8,
}

impl RegistryEntry {
    const fn new(
        provider: &'static str,
        id: &'static str,
        window: u64,
        out: u64,
        prices: (f64, f64, Option<f64>),
        caps: u8,
    ) -> Self {
        Self {
            provider,
            id,
            context_window: window,
            max_output: out,
            input_price: prices.0,
            output_price: prices.1,
            cache_read_price: prices.2,
            caps,
        }
    }

    /// The entry as a [`ModelInfo`] for the model id asked for.
    pub fn info(&self, id: &str) -> ModelInfo {
        ModelInfo {
            id: id.to_owned(),
            context_window: self.context_window,
            max_output: self.max_output,
            input_price: Some(self.input_price),
            output_price: Some(self.output_price),
            cache_read_price: self.cache_read_price,
            tools: self.caps & T != 0,
            reasoning: self.caps & R != 0,
            vision: self.caps & V != 0,
            known: true,
        }
    }
}

/// The built-in model registry: list prices in USD per million tokens (international
/// endpoints, as published in 2025; override them in the config when they change), context
/// windows and capabilities. Ollama models run locally and cost nothing.
pub static REGISTRY: &[RegistryEntry] = &[
    // OpenAI.
    RegistryEntry::new("openai", "gpt-5", 400_000, 128_000, (1.25, 10.0, Some(0.125)), T | R | V),
    RegistryEntry::new(
        "openai",
        "gpt-5-mini",
        400_000,
        128_000,
        (0.25, 2.0, Some(0.025)),
        T | R | V,
    ),
    RegistryEntry::new("openai", "gpt-4.1", 1_047_576, 32_768, (2.0, 8.0, Some(0.5)), T | V),
    RegistryEntry::new("openai", "gpt-4.1-mini", 1_047_576, 32_768, (0.4, 1.6, Some(0.1)), T | V),
    RegistryEntry::new("openai", "gpt-4.1-nano", 1_047_576, 32_768, (0.1, 0.4, Some(0.025)), T | V),
    RegistryEntry::new("openai", "gpt-4o", 128_000, 16_384, (2.5, 10.0, Some(1.25)), T | V),
    RegistryEntry::new("openai", "gpt-4o-mini", 128_000, 16_384, (0.15, 0.6, Some(0.075)), T | V),
    RegistryEntry::new("openai", "o3", 200_000, 100_000, (2.0, 8.0, Some(0.5)), T | R | V),
    RegistryEntry::new("openai", "o4-mini", 200_000, 100_000, (1.1, 4.4, Some(0.275)), T | R | V),
    // DeepSeek (V3.2 prices; chat and reasoner are one model in two modes).
    RegistryEntry::new("deepseek", "deepseek-chat", 128_000, 8_192, (0.28, 0.42, Some(0.028)), T),
    RegistryEntry::new(
        "deepseek",
        "deepseek-reasoner",
        128_000,
        65_536,
        (0.28, 0.42, Some(0.028)),
        T | R,
    ),
    // Anthropic.
    RegistryEntry::new(
        "anthropic",
        "claude-sonnet-4-5",
        200_000,
        64_000,
        (3.0, 15.0, Some(0.3)),
        T | R | V,
    ),
    RegistryEntry::new(
        "anthropic",
        "claude-sonnet-4",
        200_000,
        64_000,
        (3.0, 15.0, Some(0.3)),
        T | R | V,
    ),
    RegistryEntry::new(
        "anthropic",
        "claude-opus-4-1",
        200_000,
        32_000,
        (15.0, 75.0, Some(1.5)),
        T | R | V,
    ),
    RegistryEntry::new(
        "anthropic",
        "claude-haiku-4-5",
        200_000,
        64_000,
        (1.0, 5.0, Some(0.1)),
        T | R | V,
    ),
    // Qwen (DashScope compatible mode; `reasoning` = hybrid thinking via `enable_thinking`).
    RegistryEntry::new("qwen", "qwen-plus", 131_072, 16_384, (0.4, 1.2, None), T | R),
    RegistryEntry::new("qwen", "qwen-max", 32_768, 8_192, (1.6, 6.4, None), T),
    RegistryEntry::new("qwen", "qwen-turbo", 1_000_000, 16_384, (0.05, 0.2, None), T | R),
    RegistryEntry::new("qwen", "qwen3-max", 262_144, 65_536, (1.2, 6.0, None), T),
    RegistryEntry::new("qwen", "qwen3-coder-plus", 1_000_000, 65_536, (1.0, 5.0, None), T),
    RegistryEntry::new("qwen", "qwen3-235b-a22b", 131_072, 16_384, (0.7, 2.8, None), T | R),
    RegistryEntry::new("qwen", "qwen3-32b", 131_072, 16_384, (0.7, 2.8, None), T | R),
    // Ollama (local; the context actually used is the server's `num_ctx`).
    RegistryEntry::new("ollama", "llama3.1", 131_072, 8_192, (0.0, 0.0, None), T),
    RegistryEntry::new("ollama", "llama3.2", 131_072, 8_192, (0.0, 0.0, None), T),
    RegistryEntry::new("ollama", "qwen3", 40_960, 8_192, (0.0, 0.0, None), T | R),
    RegistryEntry::new("ollama", "gpt-oss", 131_072, 32_768, (0.0, 0.0, None), T | R),
];

/// A provider that the environment alone can enable.
struct Builtin {
    key: &'static str,
    kind: ProviderKind,
    base_url: &'static str,
    /// The variable holding the key (`None`: no key).
    key_env: Option<&'static str>,
    /// The variable whose presence enables the provider.
    enable_env: &'static str,
    default_model: &'static str,
}

const BUILTINS: &[Builtin] = &[
    Builtin {
        key: "openai",
        kind: ProviderKind::Openai,
        base_url: "https://api.openai.com/v1",
        key_env: Some("OPENAI_API_KEY"),
        enable_env: "OPENAI_API_KEY",
        default_model: "gpt-4.1",
    },
    Builtin {
        key: "anthropic",
        kind: ProviderKind::Anthropic,
        base_url: "https://api.anthropic.com",
        key_env: Some("ANTHROPIC_API_KEY"),
        enable_env: "ANTHROPIC_API_KEY",
        default_model: "claude-sonnet-4-5",
    },
    Builtin {
        key: "deepseek",
        kind: ProviderKind::Openai,
        base_url: "https://api.deepseek.com/v1",
        key_env: Some("DEEPSEEK_API_KEY"),
        enable_env: "DEEPSEEK_API_KEY",
        default_model: "deepseek-chat",
    },
    Builtin {
        key: "qwen",
        kind: ProviderKind::Openai,
        base_url: "https://dashscope.aliyuncs.com/compatible-mode/v1",
        key_env: Some("DASHSCOPE_API_KEY"),
        enable_env: "DASHSCOPE_API_KEY",
        default_model: "qwen-plus",
    },
    Builtin {
        key: "ollama",
        kind: ProviderKind::Ollama,
        base_url: "http://127.0.0.1:11434",
        key_env: None,
        enable_env: "OLLAMA_HOST",
        default_model: "llama3.1",
    },
];

fn builtin(key: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.key == key)
}

/// Where a provider's definition came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A `[providers.NAME]` table of the config file.
    File,
    /// An environment shortcut (`DEEPSEEK_API_KEY`, `OLLAMA_HOST`, ...).
    Env,
}

/// One configured provider.
#[derive(Debug, Clone)]
pub struct ProviderConfig {
    /// The provider key (`deepseek`), the part before `/` in a model reference.
    pub key: String,
    /// Wire protocol.
    pub kind: ProviderKind,
    /// Base URL, normalized (no trailing `/`).
    pub base_url: String,
    /// Dialect as configured (`Auto` is resolved per call to [`LlmConfig::resolve`]).
    pub family: Family,
    /// The variable the key is read from (`None`: the provider takes no key).
    pub api_key_env: Option<String>,
    /// Whether calls fail without a key.
    pub requires_key: bool,
    /// The model used when only the provider is named.
    pub default_model: Option<String>,
    /// Models described in the config, merged over the registry.
    pub models: Vec<ModelInfo>,
    /// File or environment.
    pub origin: Origin,
    api_key: Option<ApiKey>,
    transport: Transport,
}

impl ProviderConfig {
    /// Whether the key variable was set when the config was loaded.
    pub fn has_key(&self) -> bool {
        self.api_key.is_some()
    }

    /// What a model of this provider can do: the config's entry, else the registry's (this
    /// provider's entries first, then any provider's; date suffixes such as `-20250929` and
    /// Ollama tags such as `:8b` are ignored), else conservative defaults with `known: false`.
    pub fn model_info(&self, id: &str) -> ModelInfo {
        for candidate in id_candidates(id) {
            if let Some(m) = self.models.iter().find(|m| m.id == candidate) {
                return ModelInfo { id: id.to_owned(), ..m.clone() };
            }
        }
        self.registry_entry(id).map_or_else(|| ModelInfo::unknown(id), |e| e.info(id))
    }

    fn registry_entry(&self, id: &str) -> Option<&'static RegistryEntry> {
        let home = if self.kind == ProviderKind::Ollama { "ollama" } else { "" };
        id_candidates(id).into_iter().find_map(|c| {
            REGISTRY
                .iter()
                .filter(|e| e.id == c)
                .min_by_key(|e| u8::from(e.provider != self.key && e.provider != home))
        })
    }

    fn default_model(&self) -> Result<String, LlmError> {
        self.default_model.clone().ok_or_else(|| LlmError::Config {
            message: format!(
                "provider `{}` has no default model: set default_model in [providers.{}] or ask \
                 for `{}/<model>`",
                self.key, self.key, self.key
            ),
        })
    }

    fn settings(&self) -> Result<ProviderSettings, LlmError> {
        if self.requires_key && self.api_key.is_none() {
            let var = self.api_key_env.as_deref().unwrap_or("its key variable");
            return Err(LlmError::Config {
                message: format!("provider `{}` needs an API key: set {var}", self.key),
            });
        }
        Ok(ProviderSettings {
            key: self.key.clone(),
            kind: self.kind,
            base_url: self.base_url.clone(),
            api_key: self.api_key.clone(),
            family: self.family.resolve(&self.key, &self.base_url),
            transport: self.transport.clone(),
        })
    }
}

/// The ids to look up for `id`: itself, then without an Ollama tag (`:8b`), a `-latest`
/// suffix or a date suffix (`-20250929`, `-2024-08-06`).
fn id_candidates(id: &str) -> Vec<String> {
    let mut out = vec![id.to_owned()];
    let mut base = id;
    if let Some((name, _tag)) = base.split_once(':') {
        base = name;
    }
    base = base.strip_suffix("-latest").unwrap_or(base);
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some((head, tail)) = base.rsplit_once('-')
        && tail.len() == 8
        && digits(tail)
    {
        base = head;
    } else if base.len() > 11 {
        let (head, tail) = base.split_at(base.len() - 11);
        let parts: Vec<&str> = tail.split('-').collect();
        if parts.len() == 4
            && parts[0].is_empty()
            && parts[1].len() == 4
            && parts[2].len() == 2
            && parts[3].len() == 2
            && parts[1..].iter().all(|p| digits(p))
        {
            base = head;
        }
    }
    if base != id {
        out.push(base.to_owned());
    }
    out
}

/// A model reference resolved to a provider and a model.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// What to build the provider from (the key inside is masked in `Debug`).
    pub settings: ProviderSettings,
    /// The model: the id to send and what it can do.
    pub model: ModelInfo,
    /// `BOARDSMITH_MODEL` chose this model instead of the one asked for.
    pub forced: bool,
}

/// The loaded LLM configuration.
#[derive(Debug, Clone)]
pub struct LlmConfig {
    providers: Vec<ProviderConfig>,
    default: Option<String>,
    forced: Option<String>,
    source: Option<PathBuf>,
    timeouts: Timeouts,
    retry: RetryPolicy,
    log: InteractionLog,
}

// ---- the file format ----

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    #[serde(default)]
    providers: std::collections::BTreeMap<String, ProviderEntry>,
    #[serde(default)]
    llm: LlmSection,
    #[serde(default)]
    agent: AgentSection,
    /// `[server]` belongs to `access` (read there); accepted here, not read.
    #[serde(default, rename = "server")]
    _server: Option<IgnoredAny>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct LlmSection {
    #[serde(default)]
    default: Option<String>,
    #[serde(default)]
    timeouts: TimeoutsEntry,
    #[serde(default)]
    retry: RetryEntry,
}

#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
struct TimeoutsEntry {
    #[serde(default)]
    connect: Option<f64>,
    #[serde(default)]
    first_byte: Option<f64>,
    #[serde(default)]
    idle: Option<f64>,
}

#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
struct RetryEntry {
    #[serde(default)]
    max_retries: Option<usize>,
    #[serde(default)]
    min_delay_ms: Option<u64>,
    #[serde(default)]
    max_delay_ms: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct AgentSection {
    #[serde(default)]
    llm: AgentLlmSection,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct AgentLlmSection {
    #[serde(default, rename = "interaction-log", alias = "interaction_log")]
    interaction_log: InteractionLogEntry,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct InteractionLogEntry {
    #[serde(default)]
    enabled: Option<bool>,
    #[serde(default, rename = "mask-sensitive", alias = "mask_sensitive")]
    mask_sensitive: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProviderEntry {
    #[serde(default)]
    kind: Option<ProviderKind>,
    #[serde(default)]
    base_url: Option<String>,
    #[serde(default)]
    api_key_env: Option<String>,
    /// Present only to refuse it with a useful message; the value is never kept.
    #[serde(default)]
    api_key: Option<IgnoredAny>,
    #[serde(default)]
    requires_key: Option<bool>,
    #[serde(default)]
    default_model: Option<String>,
    #[serde(default)]
    family: Option<Family>,
    #[serde(default)]
    models: Vec<ModelEntry>,
    #[serde(default)]
    timeouts: Option<TimeoutsEntry>,
    #[serde(default)]
    retry: Option<RetryEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelEntry {
    id: String,
    #[serde(default)]
    context_window: Option<u64>,
    #[serde(default)]
    max_output: Option<u64>,
    #[serde(default)]
    input_price: Option<f64>,
    #[serde(default)]
    output_price: Option<f64>,
    #[serde(default)]
    cache_read_price: Option<f64>,
    #[serde(default)]
    tools: Option<bool>,
    #[serde(default)]
    reasoning: Option<bool>,
    #[serde(default)]
    vision: Option<bool>,
}

/// The environment, as a function (tests pass a map; [`LlmConfig::from_env`] the process's).
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Reads a variable, treating an empty value as unset.
fn var(env: Env<'_>, name: &str) -> Option<String> {
    env(name).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
}

fn env_bool(env: Env<'_>, name: &str) -> Result<Option<bool>, ConfigError> {
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
fn env_name(key: &str) -> String {
    key.to_ascii_uppercase().replace('-', "_")
}

/// Normalizes a base URL: `http(s)` only, no trailing `/`. For Ollama, `host:port` without a
/// scheme is accepted (as `OLLAMA_HOST` is): `http://` is added, port 11434 when none is given,
/// and the bind-all address `0.0.0.0` becomes `127.0.0.1`.
fn normalize_url(raw: &str, kind: ProviderKind) -> Result<String, String> {
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

fn timeouts_over(base: Timeouts, e: &TimeoutsEntry) -> Result<Timeouts, (String, String)> {
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

fn retry_over(base: RetryPolicy, e: &RetryEntry) -> Result<RetryPolicy, (String, String)> {
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
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// Order of the `[providers.*]` tables in the file (the map the file is read into is sorted).
fn provider_order(text: &str) -> Vec<String> {
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

fn parse_file(text: &str, path: &Path) -> Result<FileConfig, ConfigError> {
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

impl LlmConfig {
    /// Loads the configuration: the TOML file at `path` (none: environment only), then the
    /// environment through `env` (the API keys, the shortcuts, `<NAME>_BASE_URL`,
    /// `BOARDSMITH_MODEL`, the interaction-log switches). A provider whose key variable is unset
    /// still loads; resolving one of its models says which variable to set.
    pub fn load(path: Option<&Path>, env: Env<'_>) -> Result<Self, ConfigError> {
        match path {
            None => Self::build(FileConfig::default(), Vec::new(), None, env),
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|source| ConfigError::Read { path: path.to_owned(), source })?;
                Self::parse(&text, path, env)
            }
        }
    }

    /// Loads the configuration from TOML text; `path` names it in error messages.
    pub fn parse(text: &str, path: &Path, env: Env<'_>) -> Result<Self, ConfigError> {
        let file = parse_file(text, path)?;
        Self::build(file, provider_order(text), Some(path), env)
    }

    /// Loads from the process environment: the file named by `BOARDSMITH_CONFIG`, else
    /// `./boardsmith.toml` when it exists, else the environment alone.
    pub fn from_env() -> Result<Self, ConfigError> {
        let env = |k: &str| std::env::var(k).ok();
        Self::load(crate::config_file::path().as_deref(), &env)
    }

    fn build(
        file: FileConfig,
        order: Vec<String>,
        path: Option<&Path>,
        env: Env<'_>,
    ) -> Result<Self, ConfigError> {
        let path_buf = path.map_or_else(|| PathBuf::from("<environment>"), Path::to_owned);
        let invalid = |field: String, message: String| ConfigError::File {
            path: path_buf.clone(),
            field,
            message,
        };

        let timeouts = timeouts_over(Timeouts::default(), &file.llm.timeouts)
            .map_err(|(f, m)| invalid(format!("llm.timeouts.{f}"), m))?;
        let retry = retry_over(RetryPolicy::default(), &file.llm.retry)
            .map_err(|(f, m)| invalid(format!("llm.retry.{f}"), m))?;
        let defaults = InteractionLog::default();
        let entry = &file.agent.llm.interaction_log;
        let log = InteractionLog {
            enabled: env_bool(env, "AGENT_LLM_INTERACTION_LOG_ENABLED")?
                .or(entry.enabled)
                .unwrap_or(defaults.enabled),
            mask_sensitive: env_bool(env, "AGENT_LLM_INTERACTION_LOG_MASK_SENSITIVE")?
                .or(entry.mask_sensitive)
                .unwrap_or(defaults.mask_sensitive),
        };
        let transport = Transport::new(timeouts, retry, log);

        let mut file_providers = file.providers;
        let mut keys: Vec<String> =
            order.into_iter().filter(|k| file_providers.contains_key(k)).collect();
        for k in file_providers.keys() {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }

        let mut providers = Vec::new();
        for key in keys {
            let Some(entry) = file_providers.remove(&key) else { continue };
            let at = |field: &str| format!("providers.{key}.{field}");
            if key.is_empty()
                || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                return Err(invalid(
                    format!("providers.{key}"),
                    "a provider name may contain only letters, digits, `-` and `_`".into(),
                ));
            }
            if entry.api_key.is_some() {
                return Err(invalid(
                    at("api_key"),
                    "keys are never read from the file: put the key in an environment variable \
                     and name it with api_key_env"
                        .into(),
                ));
            }
            let known = builtin(&key);
            let kind = entry.kind.or(known.map(|b| b.kind)).ok_or_else(|| {
                invalid(at("kind"), "missing: expected one of openai, anthropic, ollama".into())
            })?;
            let url_var = format!("{}_BASE_URL", env_name(&key));
            let base_url = match (var(env, &url_var), &entry.base_url) {
                (Some(u), _) => normalize_url(&u, kind)
                    .map_err(|message| ConfigError::Env { var: url_var.clone(), message })?,
                (None, Some(u)) => {
                    normalize_url(u, kind).map_err(|m| invalid(at("base_url"), m))?
                }
                (None, None) => match (known, kind) {
                    (Some(b), _) if b.kind == kind => b.base_url.to_owned(),
                    (_, ProviderKind::Anthropic) => "https://api.anthropic.com".to_owned(),
                    (_, ProviderKind::Ollama) => "http://127.0.0.1:11434".to_owned(),
                    (_, ProviderKind::Openai) => {
                        return Err(invalid(
                            at("base_url"),
                            "missing: expected the URL up to and including /v1".into(),
                        ));
                    }
                },
            };
            let requires_key = entry.requires_key.unwrap_or(kind != ProviderKind::Ollama);
            let api_key_env = entry
                .api_key_env
                .clone()
                .filter(|v| !v.trim().is_empty())
                .or_else(|| known.and_then(|b| b.key_env).map(str::to_owned))
                .or_else(|| requires_key.then(|| format!("{}_API_KEY", env_name(&key))));
            let api_key = api_key_env.as_deref().and_then(|v| var(env, v)).map(ApiKey::new);

            let mut transport = transport.clone();
            if entry.timeouts.is_some() || entry.retry.is_some() {
                let t = timeouts_over(timeouts, &entry.timeouts.unwrap_or_default())
                    .map_err(|(f, m)| invalid(at(&format!("timeouts.{f}")), m))?;
                let r = retry_over(retry, &entry.retry.unwrap_or_default())
                    .map_err(|(f, m)| invalid(at(&format!("retry.{f}")), m))?;
                transport = Transport::new(t, r, log);
            }

            let mut provider = ProviderConfig {
                key: key.clone(),
                kind,
                base_url,
                family: entry.family.unwrap_or_default(),
                api_key_env,
                requires_key,
                default_model: None,
                models: Vec::new(),
                origin: Origin::File,
                api_key,
                transport,
            };
            let mut models: Vec<ModelInfo> = Vec::new();
            for (i, m) in entry.models.iter().enumerate() {
                let field = |f: &str| at(&format!("models[{i}].{f}"));
                if m.id.trim().is_empty() {
                    return Err(invalid(field("id"), "must not be empty".into()));
                }
                if models.iter().any(|x| x.id == m.id) {
                    return Err(invalid(field("id"), format!("`{}` is listed twice", m.id)));
                }
                for (name, v) in
                    [("context_window", m.context_window), ("max_output", m.max_output)]
                {
                    if v == Some(0) {
                        return Err(invalid(field(name), "expected a positive number".into()));
                    }
                }
                for (name, v) in [
                    ("input_price", m.input_price),
                    ("output_price", m.output_price),
                    ("cache_read_price", m.cache_read_price),
                ] {
                    if v.is_some_and(|p| !p.is_finite() || p < 0.0) {
                        return Err(invalid(
                            field(name),
                            "expected a price of zero or more (USD per million tokens)".into(),
                        ));
                    }
                }
                let base = provider.model_info(&m.id);
                models.push(ModelInfo {
                    id: m.id.clone(),
                    context_window: m.context_window.unwrap_or(base.context_window),
                    max_output: m.max_output.unwrap_or(base.max_output),
                    input_price: m.input_price.or(base.input_price),
                    output_price: m.output_price.or(base.output_price),
                    cache_read_price: m.cache_read_price.or(base.cache_read_price),
                    tools: m.tools.unwrap_or(base.tools),
                    reasoning: m.reasoning.unwrap_or(base.reasoning),
                    vision: m.vision.unwrap_or(base.vision),
                    known: true,
                });
            }
            provider.default_model = entry
                .default_model
                .filter(|m| !m.trim().is_empty())
                .or_else(|| known.filter(|b| b.kind == kind).map(|b| b.default_model.to_owned()))
                .or_else(|| models.first().map(|m| m.id.clone()));
            provider.models = models;
            providers.push(provider);
        }

        for b in BUILTINS {
            if providers.iter().any(|p| p.key == b.key) {
                continue;
            }
            let Some(enabling) = var(env, b.enable_env) else { continue };
            let url_var = format!("{}_BASE_URL", env_name(b.key));
            let base_url = match var(env, &url_var) {
                Some(u) => normalize_url(&u, b.kind)
                    .map_err(|message| ConfigError::Env { var: url_var.clone(), message })?,
                None if b.kind == ProviderKind::Ollama => normalize_url(&enabling, b.kind)
                    .map_err(|message| ConfigError::Env {
                        var: b.enable_env.to_owned(),
                        message,
                    })?,
                None => b.base_url.to_owned(),
            };
            providers.push(ProviderConfig {
                key: b.key.to_owned(),
                kind: b.kind,
                base_url,
                family: Family::Auto,
                api_key_env: b.key_env.map(str::to_owned),
                requires_key: b.key_env.is_some(),
                default_model: Some(b.default_model.to_owned()),
                models: Vec::new(),
                origin: Origin::Env,
                api_key: b.key_env.and_then(|v| var(env, v)).map(ApiKey::new),
                transport: transport.clone(),
            });
        }

        Ok(Self {
            providers,
            default: file.llm.default.filter(|d| !d.trim().is_empty()),
            forced: var(env, "BOARDSMITH_MODEL"),
            source: path.map(Path::to_owned),
            timeouts,
            retry,
            log,
        })
    }

    /// The configured providers: the file's in file order, then those enabled by the
    /// environment (openai, anthropic, deepseek, qwen, ollama).
    pub fn providers(&self) -> &[ProviderConfig] {
        &self.providers
    }

    /// A configured provider.
    pub fn provider(&self, key: &str) -> Option<&ProviderConfig> {
        self.providers.iter().find(|p| p.key == key)
    }

    /// The file the configuration came from.
    pub fn source(&self) -> Option<&Path> {
        self.source.as_deref()
    }

    /// The model every lookup is routed to (`BOARDSMITH_MODEL`).
    pub fn forced_model(&self) -> Option<&str> {
        self.forced.as_deref()
    }

    /// The `[llm] default` model reference.
    pub fn default_model(&self) -> Option<&str> {
        self.default.as_deref()
    }

    /// Timeouts (`[llm.timeouts]`; a provider's own table overrides them for it).
    pub fn timeouts(&self) -> Timeouts {
        self.timeouts
    }

    /// Retry policy (`[llm.retry]`).
    pub fn retry(&self) -> RetryPolicy {
        self.retry
    }

    /// Interaction-log switches (`[agent.llm.interaction-log]`, then the environment).
    pub fn interaction_log(&self) -> InteractionLog {
        self.log
    }

    /// Resolves a model reference: `provider/model` (the part before the first `/` is a
    /// provider's key; otherwise the whole reference is a model id, as in `Qwen/Qwen3-8B`), a
    /// provider key alone (its default model), a bare model id (the provider whose config lists
    /// it, else the registry's provider for it, else the only configured provider), or empty
    /// (`[llm] default`, else the first provider's default model). `BOARDSMITH_MODEL` replaces
    /// whatever is asked for.
    pub fn resolve(&self, model_ref: &str) -> Result<Resolved, LlmError> {
        match &self.forced {
            Some(forced) => {
                let mut r = self.resolve_ref(forced, true).map_err(|e| LlmError::Config {
                    message: format!("BOARDSMITH_MODEL={forced}: {e}"),
                })?;
                r.forced = true;
                Ok(r)
            }
            None => self.resolve_ref(model_ref, true),
        }
    }

    fn resolve_ref(&self, model_ref: &str, use_default: bool) -> Result<Resolved, LlmError> {
        let model_ref = model_ref.trim();
        if model_ref.is_empty() {
            if use_default && let Some(d) = &self.default {
                return self.resolve_ref(d, false).map_err(|e| LlmError::Config {
                    message: format!("[llm] default = {d:?}: {e}"),
                });
            }
            let Some(p) = self.providers.first() else {
                return Err(no_provider());
            };
            return self.finish(p, &p.default_model()?);
        }
        if let Some((key, model)) = model_ref.split_once('/') {
            if let Some(p) = self.provider(key) {
                let model = if model.is_empty() { p.default_model()? } else { model.to_owned() };
                return self.finish(p, &model);
            }
            if let Some(b) = builtin(key) {
                return Err(not_enabled(b));
            }
        }
        if let Some(p) = self.provider(model_ref) {
            return self.finish(p, &p.default_model()?);
        }
        if let Some(b) = builtin(model_ref) {
            return Err(not_enabled(b));
        }
        self.resolve_bare(model_ref)
    }

    fn resolve_bare(&self, id: &str) -> Result<Resolved, LlmError> {
        let candidates = id_candidates(id);
        for c in &candidates {
            if let Some(p) = self.providers.iter().find(|p| p.models.iter().any(|m| &m.id == c)) {
                return self.finish(p, id);
            }
        }
        for c in &candidates {
            let homes: Vec<&str> =
                REGISTRY.iter().filter(|e| e.id == c.as_str()).map(|e| e.provider).collect();
            if homes.is_empty() {
                continue;
            }
            if let Some(p) = homes.iter().find_map(|h| self.provider(h)) {
                return self.finish(p, id);
            }
            let hint = homes
                .iter()
                .filter_map(|h| builtin(h))
                .map(|b| format!("{} (provider `{}`)", b.enable_env, b.key))
                .collect::<Vec<_>>()
                .join(" or ");
            return Err(LlmError::Config {
                message: format!(
                    "model `{id}` is served by a provider that is not configured: set {hint}, or \
                     ask for `<provider>/{id}`"
                ),
            });
        }
        match self.providers.as_slice() {
            [only] => self.finish(only, id),
            [] => Err(no_provider()),
            many => Err(LlmError::Config {
                message: format!(
                    "unknown model `{id}`: ask for `<provider>/{id}` with one of: {}",
                    many.iter().map(|p| p.key.as_str()).collect::<Vec<_>>().join(", ")
                ),
            }),
        }
    }

    fn finish(&self, p: &ProviderConfig, model: &str) -> Result<Resolved, LlmError> {
        Ok(Resolved { settings: p.settings()?, model: p.model_info(model), forced: false })
    }

    /// What a model can do, without checking keys: the provider's view when it is configured,
    /// else the registry's, else conservative defaults.
    pub fn model_info(&self, provider: &str, id: &str) -> ModelInfo {
        if let Some(p) = self.provider(provider) {
            return p.model_info(id);
        }
        let entries = || REGISTRY.iter();
        id_candidates(id)
            .iter()
            .find_map(|c| {
                entries()
                    .filter(|e| e.id == c.as_str())
                    .min_by_key(|e| u8::from(e.provider != provider))
            })
            .map_or_else(|| ModelInfo::unknown(id), |e| e.info(id))
    }
}

fn no_provider() -> LlmError {
    LlmError::Config {
        message: "no LLM provider is configured: set OPENAI_API_KEY, ANTHROPIC_API_KEY, \
                  DEEPSEEK_API_KEY, DASHSCOPE_API_KEY or OLLAMA_HOST, or add [providers.NAME] to \
                  boardsmith.toml (BOARDSMITH_CONFIG)"
            .into(),
    }
}

fn not_enabled(b: &Builtin) -> LlmError {
    let message = match b.key_env {
        Some(var) => format!("provider `{}` needs an API key: set {var}", b.key),
        None => format!(
            "provider `{}` is not configured: set {} (e.g. 127.0.0.1:11434) or add \
             [providers.{}]",
            b.key, b.enable_env, b.key
        ),
    };
    LlmError::Config { message }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> =
            pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        move |k: &str| map.get(k).cloned()
    }

    fn parse(text: &str, env: &[(&str, &str)]) -> Result<LlmConfig, ConfigError> {
        LlmConfig::parse(text, Path::new("boardsmith.toml"), &env_of(env))
    }

    fn config_error(e: LlmError) -> String {
        match e {
            LlmError::Config { message } => message,
            other => panic!("expected a config error, got {other:?}"),
        }
    }

    const DEEPSEEK: &str = r#"
        [providers.deepseek]
        kind = "openai"
        base_url = "https://api.deepseek.com/v1/"
        api_key_env = "DEEPSEEK_API_KEY"
        default_model = "deepseek-chat"
        family = "deepseek"
        [[providers.deepseek.models]]
        id = "deepseek-chat"
        context_window = 128000
        max_output = 8192
        input_price = 0.27
        output_price = 1.10
        cache_read_price = 0.07
        tools = true
        reasoning = false
        vision = false

        [llm.timeouts]
        connect = 5
        first_byte = 60.5
        [llm.retry]
        max_retries = 5
        min_delay_ms = 100
        max_delay_ms = 2000

        [agent.llm.interaction-log]
        enabled = false
        mask-sensitive = false
    "#;

    #[test]
    fn the_documented_file_parses() {
        let c = parse(DEEPSEEK, &[("DEEPSEEK_API_KEY", "sk-deep")]).unwrap();
        let p = c.provider("deepseek").unwrap();
        assert_eq!(p.kind, ProviderKind::Openai);
        assert_eq!(p.base_url, "https://api.deepseek.com/v1", "trailing slash dropped");
        assert_eq!(p.family, Family::Deepseek);
        assert_eq!(p.origin, Origin::File);
        assert!(p.has_key());
        assert_eq!(c.timeouts().connect, Duration::from_secs(5));
        assert_eq!(c.timeouts().first_byte, Duration::from_millis(60_500));
        assert_eq!(c.timeouts().idle, Timeouts::default().idle);
        assert_eq!(c.retry().max_retries, 5);
        assert_eq!(c.retry().min_delay, Duration::from_millis(100));
        assert_eq!(c.retry().max_delay, Duration::from_secs(2));
        assert!(!c.interaction_log().enabled);
        assert!(!c.interaction_log().mask_sensitive);

        let r = c.resolve("deepseek/deepseek-chat").unwrap();
        assert_eq!(r.settings.key, "deepseek");
        assert_eq!(r.settings.api_key.as_ref().map(ApiKey::expose), Some("sk-deep"));
        assert_eq!(r.settings.family, Family::Deepseek);
        assert_eq!(r.settings.transport.retry.max_retries, 5);
        assert_eq!(r.model.input_price, Some(0.27), "the file's price beats the registry's");
        assert_eq!(r.model.output_price, Some(1.10));
        assert_eq!(r.model.cache_read_price, Some(0.07));
        assert!(r.model.known && !r.forced);
        // Empty: the first provider's default model.
        assert_eq!(c.resolve("").unwrap().model.id, "deepseek-chat");
    }

    #[test]
    fn an_unknown_field_names_file_field_and_what_was_expected() {
        let text = "[providers.deepseek]\nkind = \"openai\"\nbase_url = \"https://x/v1\"\n\
                    [[providers.deepseek.models]]\nid = \"m\"\ncontext_windw = 1\n";
        let e = parse(text, &[]).unwrap_err();
        let msg = e.to_string();
        let ConfigError::File { path, field, message } = e else { panic!("{msg}") };
        assert_eq!(path, Path::new("boardsmith.toml"));
        assert_eq!(field, "providers.deepseek.models[0].context_windw", "{msg}");
        assert!(message.contains("unknown field `context_windw`"), "{msg}");
        assert!(message.contains("context_window"), "lists what is expected: {msg}");
        assert!(message.contains("line 6"), "{msg}");
        assert!(msg.starts_with("boardsmith.toml: `providers.deepseek.models[0]"), "{msg}");

        let e = parse("[providers.x]\nkind = \"grpc\"\nbase_url = \"https://x/v1\"\n", &[]);
        let msg = e.unwrap_err().to_string();
        assert!(msg.contains("`providers.x.kind`") && msg.contains("openai"), "{msg}");

        let msg = parse("[llm.timeouts]\nidle = \"long\"\n", &[]).unwrap_err().to_string();
        assert!(msg.contains("`llm.timeouts.idle`"), "{msg}");

        let msg = parse("[agent.llm.interaction-log]\nenabeld = true\n", &[]).unwrap_err();
        assert!(msg.to_string().contains("agent.llm.interaction-log.enabeld"), "{msg}");

        let msg = parse("[providers.x\nkind = 1", &[]).unwrap_err().to_string();
        assert!(msg.starts_with("boardsmith.toml: ") && msg.contains("line 1"), "{msg}");
    }

    #[test]
    fn semantic_errors_name_the_field() {
        let cases = [
            ("[providers.local]\nkind = \"openai\"\n", "providers.local.base_url"),
            ("[providers.local]\nbase_url = \"http://x/v1\"\n", "providers.local.kind"),
            (
                "[providers.local]\nkind = \"openai\"\nbase_url = \"localhost:8000/v1\"\n",
                "providers.local.base_url",
            ),
            ("[llm.timeouts]\nconnect = 0\n", "llm.timeouts.connect"),
            ("[llm.retry]\nmin_delay_ms = 10\nmax_delay_ms = 5\n", "llm.retry.min_delay_ms"),
            (
                "[providers.ollama]\n[[providers.ollama.models]]\nid = \"a\"\n\
                 [[providers.ollama.models]]\nid = \"a\"\n",
                "providers.ollama.models[1].id",
            ),
            (
                "[providers.ollama]\n[[providers.ollama.models]]\nid = \"a\"\ninput_price = -1\n",
                "providers.ollama.models[0].input_price",
            ),
            ("[providers.\"a.b\"]\nkind = \"ollama\"\n", "providers.a.b"),
        ];
        for (text, field) in cases {
            let e = parse(text, &[]).unwrap_err();
            let msg = e.to_string();
            assert!(matches!(&e, ConfigError::File { field: f, .. } if f == field), "{msg}");
        }
    }

    #[test]
    fn a_key_in_the_file_is_refused_without_echoing_it() {
        let text = "[providers.openai]\napi_key = \"sk-secret-in-file\"\n";
        let msg = parse(text, &[]).unwrap_err().to_string();
        assert!(msg.contains("providers.openai.api_key") && msg.contains("api_key_env"), "{msg}");
        assert!(!msg.contains("sk-secret-in-file"), "{msg}");
    }

    #[test]
    fn environment_shortcuts_add_providers() {
        let env = [
            ("OPENAI_API_KEY", "sk-o"),
            ("ANTHROPIC_API_KEY", "sk-a"),
            ("DEEPSEEK_API_KEY", "sk-d"),
            ("DASHSCOPE_API_KEY", "sk-q"),
            ("OLLAMA_HOST", "gpu-box:11500"),
        ];
        let c = LlmConfig::load(None, &env_of(&env)).unwrap();
        let got: Vec<(&str, ProviderKind, &str)> =
            c.providers().iter().map(|p| (p.key.as_str(), p.kind, p.base_url.as_str())).collect();
        assert_eq!(
            got,
            [
                ("openai", ProviderKind::Openai, "https://api.openai.com/v1"),
                ("anthropic", ProviderKind::Anthropic, "https://api.anthropic.com"),
                ("deepseek", ProviderKind::Openai, "https://api.deepseek.com/v1"),
                ("qwen", ProviderKind::Openai, "https://dashscope.aliyuncs.com/compatible-mode/v1"),
                ("ollama", ProviderKind::Ollama, "http://gpu-box:11500"),
            ]
        );
        assert!(c.providers().iter().all(|p| p.origin == Origin::Env));
        let families: Vec<Family> = ["openai/gpt-4.1", "deepseek/x", "qwen/qwen-plus"]
            .iter()
            .map(|r| c.resolve(r).unwrap().settings.family)
            .collect();
        assert_eq!(families, [Family::Openai, Family::Deepseek, Family::Qwen]);
        let r = c.resolve("qwen/qwen-plus").unwrap();
        assert_eq!(r.settings.api_key.as_ref().map(ApiKey::expose), Some("sk-q"));
        let r = c.resolve("ollama/llama3.1:8b").unwrap();
        assert!(r.settings.api_key.is_none(), "Ollama needs no key");
        assert_eq!(r.model.id, "llama3.1:8b");
        assert!(r.model.known && r.model.input_price == Some(0.0));
        // The empty reference: the first provider's default model.
        let r = c.resolve("").unwrap();
        assert_eq!((r.settings.key.as_str(), r.model.id.as_str()), ("openai", "gpt-4.1"));
        // Nothing set: no providers, and the error says what to set.
        let none = LlmConfig::load(None, &env_of(&[("OPENAI_API_KEY", "  ")])).unwrap();
        assert!(none.providers().is_empty(), "empty values count as unset");
        assert!(config_error(none.resolve("").unwrap_err()).contains("OPENAI_API_KEY"));
    }

    #[test]
    fn ollama_host_forms() {
        for (host, url) in [
            ("localhost:11434", "http://localhost:11434"),
            ("0.0.0.0", "http://127.0.0.1:11434"),
            (":11434", "http://127.0.0.1:11434"),
            ("http://gpu:8080/", "http://gpu:8080"),
            ("https://ollama.example.com", "https://ollama.example.com"),
        ] {
            let c = LlmConfig::load(None, &env_of(&[("OLLAMA_HOST", host)])).unwrap();
            assert_eq!(c.provider("ollama").unwrap().base_url, url, "{host}");
        }
        let e = LlmConfig::load(None, &env_of(&[("OLLAMA_HOST", "ftp://x")])).unwrap_err();
        assert!(matches!(&e, ConfigError::Env { var, .. } if var == "OLLAMA_HOST"), "{e}");
    }

    #[test]
    fn base_urls_are_overridden_by_name_base_url() {
        let text = "[providers.my-vllm]\nkind = \"openai\"\nbase_url = \"http://file/v1\"\n\
                    requires_key = false\n";
        let env = [
            ("OPENAI_API_KEY", "k"),
            ("OPENAI_BASE_URL", "https://proxy.example.com/v1/"),
            ("MY_VLLM_BASE_URL", "http://10.0.0.5:8000/v1"),
        ];
        let c = parse(text, &env).unwrap();
        assert_eq!(c.provider("openai").unwrap().base_url, "https://proxy.example.com/v1");
        assert_eq!(c.provider("my-vllm").unwrap().base_url, "http://10.0.0.5:8000/v1");
        // A proxy URL no longer says "openai": the family still comes from the provider key.
        assert_eq!(c.resolve("openai/gpt-4o").unwrap().settings.family, Family::Openai);
        let r = c.resolve("my-vllm/Qwen/Qwen3-8B").unwrap();
        assert_eq!(r.model.id, "Qwen/Qwen3-8B", "only the first `/` separates the provider");
        assert!(r.settings.api_key.is_none() && !r.model.known);
        assert_eq!(r.settings.family, Family::Generic);

        let e = parse(text, &[("MY_VLLM_BASE_URL", "not a url")]).unwrap_err();
        assert!(matches!(&e, ConfigError::Env { var, .. } if var == "MY_VLLM_BASE_URL"), "{e}");
    }

    #[test]
    fn file_providers_inherit_builtin_defaults_and_keep_file_order() {
        let text = "[providers.zeta]\nkind = \"anthropic\"\napi_key_env = \"ZETA_KEY\"\n\
                    [providers.deepseek]\ndefault_model = \"deepseek-reasoner\"\n";
        let c = parse(text, &[("DEEPSEEK_API_KEY", "d"), ("ZETA_KEY", "z")]).unwrap();
        let keys: Vec<&str> = c.providers().iter().map(|p| p.key.as_str()).collect();
        assert_eq!(keys, ["zeta", "deepseek"], "file order, not alphabetical");
        let d = c.provider("deepseek").unwrap();
        assert_eq!(d.base_url, "https://api.deepseek.com/v1");
        assert_eq!(d.api_key_env.as_deref(), Some("DEEPSEEK_API_KEY"));
        let r = c.resolve("deepseek").unwrap();
        assert_eq!(r.model.id, "deepseek-reasoner", "a provider key alone: its default model");
        assert!(r.model.reasoning);
        let z = c.provider("zeta").unwrap();
        assert_eq!(z.base_url, "https://api.anthropic.com");
        assert!(z.default_model.is_none());
        let msg = config_error(c.resolve("").unwrap_err());
        assert!(msg.contains("provider `zeta` has no default model"), "{msg}");
        assert_eq!(c.resolve("zeta/claude-haiku-4-5").unwrap().model.max_output, 64_000);
    }

    #[test]
    fn llm_default_chooses_the_model_for_an_empty_reference() {
        let text = "[llm]\ndefault = \"anthropic/claude-haiku-4-5\"\n";
        let c = parse(text, &[("OPENAI_API_KEY", "o"), ("ANTHROPIC_API_KEY", "a")]).unwrap();
        let r = c.resolve("").unwrap();
        assert_eq!(
            (r.settings.key.as_str(), r.model.id.as_str()),
            ("anthropic", "claude-haiku-4-5")
        );
        assert_eq!(c.resolve("gpt-4o").unwrap().settings.key, "openai");
    }

    #[test]
    fn boardsmith_model_routes_every_lookup() {
        let env = [
            ("OPENAI_API_KEY", "o"),
            ("OLLAMA_HOST", "127.0.0.1:11434"),
            ("BOARDSMITH_MODEL", "ollama/qwen3:8b"),
        ];
        let c = LlmConfig::load(None, &env_of(&env)).unwrap();
        assert_eq!(c.forced_model(), Some("ollama/qwen3:8b"));
        for asked in ["", "openai/gpt-4.1", "gpt-4o", "claude-opus-4-1", "anything"] {
            let r = c.resolve(asked).unwrap();
            assert_eq!(r.settings.key, "ollama", "{asked}");
            assert_eq!(r.model.id, "qwen3:8b", "{asked}");
            assert!(r.forced && r.model.reasoning);
        }
        // A forced model whose provider lacks its key says both what was forced and what to set.
        let c = LlmConfig::load(None, &env_of(&[("BOARDSMITH_MODEL", "deepseek/deepseek-chat")]))
            .unwrap();
        let msg = config_error(c.resolve("gpt-4.1").unwrap_err());
        assert!(msg.contains("BOARDSMITH_MODEL=deepseek/deepseek-chat"), "{msg}");
        assert!(msg.contains("set DEEPSEEK_API_KEY"), "{msg}");
    }

    #[test]
    fn a_missing_key_names_the_variable_to_set() {
        // Configured in the file, key variable unset.
        let c = parse(DEEPSEEK, &[]).unwrap();
        let msg = config_error(c.resolve("deepseek/deepseek-chat").unwrap_err());
        assert_eq!(msg, "provider `deepseek` needs an API key: set DEEPSEEK_API_KEY");
        // Not configured at all.
        let c = LlmConfig::load(None, &env_of(&[])).unwrap();
        let msg = config_error(c.resolve("anthropic/claude-sonnet-4-5").unwrap_err());
        assert_eq!(msg, "provider `anthropic` needs an API key: set ANTHROPIC_API_KEY");
        let msg = config_error(c.resolve("ollama/llama3.1").unwrap_err());
        assert!(msg.contains("set OLLAMA_HOST"), "{msg}");
        let msg = config_error(c.resolve("qwen").unwrap_err());
        assert_eq!(msg, "provider `qwen` needs an API key: set DASHSCOPE_API_KEY");
        // A custom provider: <NAME>_API_KEY by convention.
        let text = "[providers.silicon-flow]\nkind = \"openai\"\nbase_url = \"https://sf/v1\"\n";
        let c = parse(text, &[]).unwrap();
        let msg = config_error(c.resolve("silicon-flow/m").unwrap_err());
        assert_eq!(msg, "provider `silicon-flow` needs an API key: set SILICON_FLOW_API_KEY");
        // A bare id served by an unconfigured provider.
        let c = LlmConfig::load(None, &env_of(&[("OPENAI_API_KEY", "o")])).unwrap();
        let msg = config_error(c.resolve("deepseek-chat").unwrap_err());
        assert!(msg.contains("DEEPSEEK_API_KEY"), "{msg}");
    }

    #[test]
    fn bare_model_ids_find_their_provider() {
        let text = "[providers.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:8000/v1\"\n\
                    requires_key = false\n[[providers.local.models]]\nid = \"my-finetune\"\n\
                    context_window = 16384\n";
        let env = [("OPENAI_API_KEY", "o"), ("ANTHROPIC_API_KEY", "a"), ("DEEPSEEK_API_KEY", "d")];
        let c = parse(text, &env).unwrap();
        let key_of = |r: &str| c.resolve(r).unwrap().settings.key;
        assert_eq!(key_of("my-finetune"), "local", "listed in the config");
        assert_eq!(key_of("gpt-4.1-mini"), "openai", "the registry's provider");
        assert_eq!(key_of("deepseek-reasoner"), "deepseek");
        assert_eq!(key_of("claude-sonnet-4-5-20250929"), "anthropic", "date suffix ignored");
        let r = c.resolve("claude-sonnet-4-5-20250929").unwrap();
        assert_eq!(r.model.id, "claude-sonnet-4-5-20250929", "the id asked for is sent");
        assert_eq!(r.model.context_window, 200_000);
        let r = c.resolve("gpt-4o-2024-08-06").unwrap();
        assert_eq!((r.settings.key.as_str(), r.model.output_price), ("openai", Some(10.0)));
        let r = c.resolve("my-finetune").unwrap();
        assert_eq!((r.model.context_window, r.model.known), (16_384, true));
        // Unknown to everyone with several providers: ask for provider/model.
        let msg = config_error(c.resolve("mystery-model").unwrap_err());
        assert!(msg.contains("local/mystery-model") || msg.contains("<provider>/mystery-model"));
        assert!(msg.contains("local, openai, anthropic, deepseek"), "{msg}");
        // With one provider, an unknown bare id goes to it, with conservative defaults.
        let c = LlmConfig::load(None, &env_of(&[("OLLAMA_HOST", "localhost")])).unwrap();
        let r = c.resolve("deepseek-r1:7b").unwrap();
        assert_eq!(r.settings.key, "ollama");
        assert_eq!(r.model, ModelInfo::unknown("deepseek-r1:7b"));
        assert!(!r.model.known);
        assert_eq!(r.model.context_window, UNKNOWN_CONTEXT_WINDOW);
    }

    #[test]
    fn config_entries_override_and_extend_the_registry() {
        let text = "[providers.openai]\n[[providers.openai.models]]\nid = \"gpt-4o\"\n\
                    input_price = 2.0\n[[providers.openai.models]]\nid = \"gpt-9\"\n\
                    context_window = 2000000\nmax_output = 100000\nreasoning = true\n\
                    vision = true\ninput_price = 5\noutput_price = 20\n";
        let c = parse(text, &[("OPENAI_API_KEY", "o")]).unwrap();
        let m = c.resolve("openai/gpt-4o").unwrap().model;
        assert_eq!(m.input_price, Some(2.0), "overridden");
        assert_eq!(m.output_price, Some(10.0), "kept from the registry");
        assert_eq!((m.context_window, m.max_output, m.vision), (128_000, 16_384, true));
        let m = c.resolve("gpt-9").unwrap().model;
        assert_eq!(
            m,
            ModelInfo {
                id: "gpt-9".into(),
                context_window: 2_000_000,
                max_output: 100_000,
                input_price: Some(5.0),
                output_price: Some(20.0),
                cache_read_price: None,
                tools: true,
                reasoning: true,
                vision: true,
                known: true,
            }
        );
        // Untouched registry entries still apply.
        assert_eq!(c.model_info("openai", "o4-mini").max_output, 100_000);
        assert_eq!(c.model_info("nowhere", "claude-opus-4-1").input_price, Some(15.0));
        assert!(!c.model_info("openai", "gpt-2").known);
    }

    #[test]
    fn the_registry_is_consistent() {
        for (i, e) in REGISTRY.iter().enumerate() {
            assert!(builtin(e.provider).is_some(), "{}: unknown provider {}", e.id, e.provider);
            assert!(e.max_output <= e.context_window && e.max_output > 0, "{}", e.id);
            assert!(e.input_price >= 0.0 && e.output_price >= e.input_price, "{}", e.id);
            assert!(e.cache_read_price.is_none_or(|c| c <= e.input_price), "{}", e.id);
            assert!(e.caps & T != 0, "{}: the agent needs tools", e.id);
            let dup = REGISTRY[..i].iter().any(|o| o.id == e.id && o.provider == e.provider);
            assert!(!dup, "{} listed twice", e.id);
        }
        for b in BUILTINS {
            let c = LlmConfig::load(None, &env_of(&[(b.enable_env, "localhost")])).unwrap();
            let m = c.resolve(b.key).unwrap().model;
            assert!(m.known, "{}'s default model {} is in the registry", b.key, m.id);
        }
    }

    #[test]
    fn interaction_log_switches_come_from_file_then_environment() {
        let c = LlmConfig::load(None, &env_of(&[])).unwrap();
        assert!(c.interaction_log().enabled && c.interaction_log().mask_sensitive);
        let env = [
            ("AGENT_LLM_INTERACTION_LOG_ENABLED", "true"),
            ("AGENT_LLM_INTERACTION_LOG_MASK_SENSITIVE", "0"),
        ];
        let text = "[agent.llm.interaction-log]\nenabled = false\n";
        let c = parse(text, &env).unwrap();
        assert!(c.interaction_log().enabled, "the environment wins");
        assert!(!c.interaction_log().mask_sensitive);
        let e = parse(text, &[("AGENT_LLM_INTERACTION_LOG_ENABLED", "maybe")]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "environment variable AGENT_LLM_INTERACTION_LOG_ENABLED: expected true or false, \
             got `maybe`"
        );
        let c = parse("[agent.llm.interaction_log]\nmask_sensitive = false\n", &[]).unwrap();
        assert!(!c.interaction_log().mask_sensitive, "snake_case spellings are accepted");
    }

    #[test]
    fn provider_timeouts_override_the_global_ones() {
        let text = "[llm.timeouts]\nfirst_byte = 30\n[providers.ollama]\n\
                    [providers.ollama.timeouts]\nfirst_byte = 600\n";
        let c = parse(text, &[("OPENAI_API_KEY", "o")]).unwrap();
        let o = c.resolve("ollama/qwen3").unwrap().settings.transport;
        assert_eq!(o.timeouts.first_byte, Duration::from_secs(600));
        assert_eq!(o.timeouts.idle, Timeouts::default().idle);
        let g = c.resolve("openai/gpt-4.1").unwrap().settings.transport;
        assert_eq!(g.timeouts.first_byte, Duration::from_secs(30));
    }

    #[test]
    fn keys_never_appear_in_debug_output() {
        let env = [
            ("DEEPSEEK_API_KEY", "sk-deep-SECRET"),
            ("OPENAI_API_KEY", "sk-open-SECRET"),
            ("ANTHROPIC_API_KEY", "sk-ant-SECRET"),
        ];
        let c = parse(DEEPSEEK, &env).unwrap();
        let resolved = c.resolve("deepseek/deepseek-chat").unwrap();
        let anthropic = c.resolve("claude-haiku-4-5").unwrap();
        for shown in [
            format!("{c:?}"),
            format!("{c:#?}"),
            format!("{resolved:?}"),
            format!("{anthropic:#?}"),
            format!("{:?}", c.providers()),
        ] {
            assert!(!shown.contains("SECRET"), "{shown}");
        }
        assert!(format!("{resolved:?}").contains("ApiKey(***)"));
    }

    #[test]
    fn load_reads_the_file_and_reports_a_missing_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("llm.toml");
        std::fs::write(&path, DEEPSEEK).unwrap();
        let c = LlmConfig::load(Some(&path), &env_of(&[("DEEPSEEK_API_KEY", "k")])).unwrap();
        assert_eq!(c.source(), Some(path.as_path()));
        assert!(c.resolve("deepseek-chat").is_ok());
        let missing = dir.path().join("nope.toml");
        let e = LlmConfig::load(Some(&missing), &env_of(&[])).unwrap_err();
        assert!(matches!(e, ConfigError::Read { .. }));
        assert!(e.to_string().contains("nope.toml"), "{e}");
    }

    #[test]
    fn cost_uses_cache_prices() {
        let m = REGISTRY.iter().find(|e| e.id == "deepseek-chat").unwrap().info("deepseek-chat");
        let usage = Usage {
            input_tokens: 1_000_000,
            cache_read_tokens: 500_000,
            output_tokens: 1_000_000,
            ..Usage::default()
        };
        let cost = m.cost(&usage).unwrap();
        assert!((cost - (0.5 * 0.28 + 0.5 * 0.028 + 0.42)).abs() < 1e-9, "{cost}");
        assert_eq!(ModelInfo::unknown("x").cost(&usage), None);
    }

    #[test]
    fn model_id_candidates() {
        assert_eq!(id_candidates("gpt-4o"), ["gpt-4o"]);
        assert_eq!(id_candidates("llama3.1:8b"), ["llama3.1:8b", "llama3.1"]);
        assert_eq!(id_candidates("qwen3:latest"), ["qwen3:latest", "qwen3"]);
        assert_eq!(id_candidates("qwen-plus-latest"), ["qwen-plus-latest", "qwen-plus"]);
        assert_eq!(
            id_candidates("claude-opus-4-1-20250805"),
            ["claude-opus-4-1-20250805", "claude-opus-4-1"]
        );
        assert_eq!(id_candidates("gpt-4.1-2025-04-14"), ["gpt-4.1-2025-04-14", "gpt-4.1"]);
        assert_eq!(id_candidates("o4-mini"), ["o4-mini"]);
    }
}
