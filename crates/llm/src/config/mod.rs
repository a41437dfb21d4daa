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

use std::path::{Path, PathBuf};

use super::error::LlmError;
use super::http::{InteractionLog, RetryPolicy, Timeouts, Transport};
use super::provider::{ApiKey, Family, ProviderKind, ProviderSettings};

pub use base::config_file::DEFAULT_CONFIG_FILE;
pub use registry::{ModelInfo, REGISTRY, RegistryEntry};

mod file;
mod overlay;
mod registry;

pub use file::Env;
pub use overlay::{ModelSpec, Overlay, OverlayError, OverlayProvider, ProviderSpec};

use file::*;
use registry::{BUILTINS, Builtin, builtin};

/// Other names of built-in providers that agent files use (the Java gateway's `bailian`).
const PROVIDER_ALIASES: &[(&str, &str)] =
    &[("bailian", "qwen"), ("dashscope", "qwen"), ("claude", "anthropic")];

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

/// Where a provider's definition came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A `[providers.NAME]` table of the config file.
    File,
    /// An environment shortcut (`DEEPSEEK_API_KEY`, `OLLAMA_HOST`, ...).
    Env,
    /// Defined at run time through the admin API (see [`Overlay`]).
    Admin,
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
    } else if let Some((head, tail)) =
        base.split_at_checked(base.len().saturating_sub(11)).filter(|(head, _)| !head.is_empty())
    {
        // Checked: an id is client input, and 11 bytes from its end may fall inside a
        // character (a panic before; found by schemathesis).
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
    fallback: Vec<String>,
    default: Option<String>,
    forced: Option<String>,
    source: Option<PathBuf>,
    timeouts: Timeouts,
    retry: RetryPolicy,
    log: InteractionLog,
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
        Self::load(base::config_file::path().as_deref(), &env)
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
            let base = Base { env, timeouts, retry, log, transport: &transport };
            let provider =
                provider_from_entry(&key, entry, &base).map_err(|(field, message)| {
                    let at = if field.is_empty() {
                        format!("providers.{key}")
                    } else {
                        format!("providers.{key}.{field}")
                    };
                    match field.as_str() {
                        // A `<NAME>_BASE_URL` the environment set is that variable's fault.
                        "$env" => ConfigError::Env {
                            var: format!("{}_BASE_URL", env_name(&key)),
                            message,
                        },
                        _ => invalid(at, message),
                    }
                })?;
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

        let mut fallback: Vec<String> = Vec::new();
        for (i, reference) in file.llm.fallback.iter().enumerate() {
            let reference = reference.trim();
            let field = format!("llm.fallback[{i}]");
            let Some((key, _)) = reference
                .split_once('/')
                .filter(|(k, m)| !k.trim().is_empty() && !m.trim().is_empty())
            else {
                return Err(invalid(field, format!("`{reference}` must be `provider/model`")));
            };
            let key = alias_of(key);
            if !providers.iter().any(|p| p.key == key) {
                let configured: Vec<&str> = providers.iter().map(|p| p.key.as_str()).collect();
                return Err(invalid(
                    field,
                    format!(
                        "provider `{key}` is not configured; configured: {}",
                        if configured.is_empty() { "none".into() } else { configured.join(", ") }
                    ),
                ));
            }
            if !fallback.iter().any(|f| f == reference) {
                fallback.push(reference.to_owned());
            }
        }

        Ok(Self {
            providers,
            fallback,
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

    /// The `[llm] fallback` models (`provider/model`, each naming a configured provider): what
    /// an agent's model call falls back to when its file has no `fallbackModels`.
    pub fn fallback_models(&self) -> &[String] {
        &self.fallback
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

    /// Resolves a model named with an explicit provider key (an agent file's `providerKey`):
    /// the key must be a configured provider, or a documented alias of one (`bailian` and
    /// `dashscope` for `qwen`, `claude` for `anthropic`) — never a silent reroute to another
    /// provider. An empty `model` is the provider's default. `BOARDSMITH_MODEL` still wins.
    pub fn resolve_with_provider(&self, provider: &str, model: &str) -> Result<Resolved, LlmError> {
        if self.forced.is_some() {
            return self.resolve("");
        }
        let key = if self.provider(provider).is_some() {
            provider
        } else {
            match PROVIDER_ALIASES.iter().find(|(alias, _)| *alias == provider) {
                Some((_, key)) => key,
                None if builtin(provider).is_some() => provider,
                None => {
                    let configured: Vec<&str> =
                        self.providers.iter().map(|p| p.key.as_str()).collect();
                    return Err(LlmError::Config {
                        message: format!(
                            "provider `{provider}` is not configured; configured: {}{}",
                            if configured.is_empty() {
                                "none".into()
                            } else {
                                configured.join(", ")
                            },
                            "; aliases: bailian and dashscope (qwen), claude (anthropic)"
                        ),
                    });
                }
            }
        };
        self.resolve(&format!("{key}/{model}"))
    }

    /// The settings of the configured provider `key` (embeddings name a provider and a model
    /// id outside the chat-model registry).
    pub fn provider_settings(&self, key: &str) -> Result<ProviderSettings, LlmError> {
        match self.provider(key) {
            Some(p) => p.settings(),
            None => Err(LlmError::Config {
                message: format!(
                    "provider `{key}` is not configured; configured: {}",
                    self.providers.iter().map(|p| p.key.as_str()).collect::<Vec<_>>().join(", ")
                ),
            }),
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

    /// Every model the configuration serves, as `(provider key, model)`: for each provider that
    /// can be called (its key is set, or it needs none) its default model, the models its
    /// config describes and the registry's models of that provider key, in that order, once
    /// each. With `BOARDSMITH_MODEL` set, only that model (every request goes there).
    pub fn served_models(&self) -> Vec<(String, ModelInfo)> {
        if let Some(forced) = &self.forced {
            return match self.resolve_ref(forced, true) {
                Ok(r) => vec![(r.settings.key, r.model)],
                Err(_) => Vec::new(),
            };
        }
        let mut out = Vec::new();
        for p in self.providers.iter().filter(|p| p.has_key() || !p.requires_key) {
            let ids = p
                .default_model
                .iter()
                .map(String::as_str)
                .chain(p.models.iter().map(|m| m.id.as_str()))
                .chain(REGISTRY.iter().filter(|e| e.provider == p.key).map(|e| e.id));
            let mut seen = std::collections::HashSet::new();
            for id in ids {
                if seen.insert(id) {
                    out.push((p.key.clone(), p.model_info(id)));
                }
            }
        }
        out
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

/// The provider key an alias stands for (`bailian` → `qwen`); other keys as they are.
fn alias_of(key: &str) -> &str {
    PROVIDER_ALIASES.iter().find(|(alias, _)| *alias == key).map_or(key, |(_, k)| k)
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
mod tests;

/// The URL of a provider whose entry gives none: a built-in key's own (for its kind), else
/// the kind's usual address; OpenAI-compatible servers have none.
fn default_base_url(key: &str, kind: ProviderKind) -> Result<String, String> {
    match (builtin(key), kind) {
        (Some(b), _) if b.kind == kind => Ok(b.base_url.to_owned()),
        (_, ProviderKind::Anthropic) => Ok("https://api.anthropic.com".to_owned()),
        (_, ProviderKind::Ollama) => Ok("http://127.0.0.1:11434".to_owned()),
        (_, ProviderKind::Openai) => {
            Err("missing: expected the URL up to and including /v1".to_owned())
        }
    }
}

/// What every provider of one configuration shares: the environment and the transport defaults.
struct Base<'a> {
    env: Env<'a>,
    timeouts: Timeouts,
    retry: RetryPolicy,
    log: InteractionLog,
    transport: &'a Transport,
}

/// One provider from its `[providers.NAME]` entry (or an admin's, converted to one). The error
/// names the field relative to the entry (`base_url`, `models[0].id`; empty: the name itself;
/// `$env`: the `<NAME>_BASE_URL` variable).
fn provider_from_entry(
    key: &str,
    entry: ProviderEntry,
    base: &Base<'_>,
) -> Result<ProviderConfig, (String, String)> {
    let env = base.env;
    if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        return Err((
            String::new(),
            "a provider name may contain only letters, digits, `-` and `_`".into(),
        ));
    }
    if entry.api_key.is_some() {
        return Err((
            "api_key".into(),
            "keys are never read from the file: put the key in an environment variable and \
             name it with api_key_env"
                .into(),
        ));
    }
    let known = builtin(key);
    let kind = entry.kind.or(known.map(|b| b.kind)).ok_or_else(|| {
        ("kind".to_owned(), "missing: expected one of openai, anthropic, ollama".to_owned())
    })?;
    let url_var = format!("{}_BASE_URL", env_name(key));
    let base_url = match (var(env, &url_var), &entry.base_url) {
        (Some(u), _) => normalize_url(&u, kind).map_err(|m| ("$env".to_owned(), m))?,
        (None, Some(u)) => normalize_url(u, kind).map_err(|m| ("base_url".to_owned(), m))?,
        (None, None) => default_base_url(key, kind).map_err(|m| ("base_url".to_owned(), m))?,
    };
    let requires_key = entry.requires_key.unwrap_or(kind != ProviderKind::Ollama);
    let api_key_env = entry
        .api_key_env
        .clone()
        .filter(|v| !v.trim().is_empty())
        .or_else(|| known.and_then(|b| b.key_env).map(str::to_owned))
        .or_else(|| requires_key.then(|| format!("{}_API_KEY", env_name(key))));
    let api_key = api_key_env.as_deref().and_then(|v| var(env, v)).map(ApiKey::new);

    let mut transport = base.transport.clone();
    if entry.timeouts.is_some() || entry.retry.is_some() {
        let t = timeouts_over(base.timeouts, &entry.timeouts.unwrap_or_default())
            .map_err(|(f, m)| (format!("timeouts.{f}"), m))?;
        let r = retry_over(base.retry, &entry.retry.unwrap_or_default())
            .map_err(|(f, m)| (format!("retry.{f}"), m))?;
        transport = Transport::new(t, r, base.log);
    }

    let mut provider = ProviderConfig {
        key: key.to_owned(),
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
        let info =
            model_from_entry(&provider, m).map_err(|(f, msg)| (format!("models[{i}].{f}"), msg))?;
        if models.iter().any(|x| x.id == m.id) {
            return Err((format!("models[{i}].id"), format!("`{}` is listed twice", m.id)));
        }
        models.push(info);
    }
    provider.default_model = entry
        .default_model
        .filter(|m| !m.trim().is_empty())
        .or_else(|| known.filter(|b| b.kind == kind).map(|b| b.default_model.to_owned()))
        .or_else(|| models.first().map(|m| m.id.clone()));
    provider.models = models;
    Ok(provider)
}

/// A model entry merged over what `provider` already knows of that id; the error names the
/// field of the entry.
fn model_from_entry(
    provider: &ProviderConfig,
    m: &ModelEntry,
) -> Result<ModelInfo, (String, String)> {
    if m.id.trim().is_empty() {
        return Err(("id".into(), "must not be empty".into()));
    }
    for (name, v) in [("context_window", m.context_window), ("max_output", m.max_output)] {
        if v == Some(0) {
            return Err((name.into(), "expected a positive number".into()));
        }
    }
    for (name, v) in [
        ("input_price", m.input_price),
        ("output_price", m.output_price),
        ("cache_read_price", m.cache_read_price),
    ] {
        if v.is_some_and(|p| !p.is_finite() || p < 0.0) {
            return Err((
                name.into(),
                "expected a price of zero or more (USD per million tokens)".into(),
            ));
        }
    }
    let base = provider.model_info(&m.id);
    Ok(ModelInfo {
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
    })
}
