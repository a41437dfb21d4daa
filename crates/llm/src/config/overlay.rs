//! Providers, models and the default model defined at run time (by an administrator, through
//! `/api/admin`), layered over the file and the environment.
//!
//! Precedence: an overlay provider replaces the file's or the environment's provider of the
//! same key (the later, explicit choice wins; deleting it brings the file's back); an overlay
//! model replaces the provider's entry of the same id; the overlay's default model replaces
//! `[llm] default`. `BOARDSMITH_MODEL` still wins over everything, as it does over the file.
//! An overlay provider reads nothing from the environment except the variable it names in
//! `apiKeyEnv` (no `<NAME>_BASE_URL` override: its URL is the one the administrator gave).
//!
//! Nothing an overlay sets sends a secret to a new destination. `apiKeyEnv` may name only a
//! variable this server already reads a provider key from — a built-in provider's
//! (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `DEEPSEEK_API_KEY`, `DASHSCOPE_API_KEY`) or a file or
//! environment provider's key variable — and only for a provider of that kind at that
//! provider's URL (the built-in's official one, or the one the file or environment gives it);
//! never `BOARDSMITH_*`. A key for anywhere else is sent as a stored key (`apiKey`), and a
//! stored key does not follow a change of URL or kind (the admin layer drops it).
//!
//! Owns the wire shapes of these definitions ([`ProviderSpec`], [`ModelSpec`]) and their
//! validation, which is the file's (the same checks, the same messages, field names in
//! camelCase). Knows nothing of where the overlay is stored or how keys are kept at rest.

use serde::{Deserialize, Serialize};

use super::file::{Env, ModelEntry, ProviderEntry, normalize_url};
use super::{
    BUILTINS, Base, LlmConfig, Origin, default_base_url, model_from_entry, provider_from_entry,
};
use crate::http::Transport;
use crate::provider::{ApiKey, Family, ProviderKind};

/// A provider as an administrator defines it (the key itself travels separately: it is
/// write-only and kept sealed at rest).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProviderSpec {
    /// The provider key (`openai`, `my-vllm`), the part before `/` in a model reference.
    pub key: String,
    /// Wire protocol.
    pub kind: ProviderKind,
    /// Base URL (OpenAI-compatible: up to and including `/v1`); a built-in key or a kind
    /// with a usual address may leave it out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Dialect of an OpenAI-compatible server (default: guessed from the key and URL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family: Option<Family>,
    /// An environment variable holding the key, instead of a stored key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Whether calls fail without a key (default: every kind but Ollama).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_key: Option<bool>,
    /// The model used when only the provider is named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_model: Option<String>,
}

impl ProviderSpec {
    /// Where this provider's calls, and so its key, go: its kind and normalized base URL
    /// (the default one when left out). `None` when the URL is invalid or missing.
    pub fn destination(&self) -> Option<(ProviderKind, String)> {
        let url = match self.base_url.as_deref().map(str::trim).filter(|u| !u.is_empty()) {
            Some(u) => normalize_url(u, self.kind),
            None => default_base_url(&self.key, self.kind),
        };
        url.ok().map(|u| (self.kind, u))
    }
}

/// A model entry: what a model of a provider can do and cost, over the registry's facts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModelSpec {
    /// The provider key it belongs to.
    pub provider: String,
    /// The model id sent to the provider.
    pub id: String,
    /// Context window in tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    /// Longest output in tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output: Option<u64>,
    /// USD per million input tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_price: Option<f64>,
    /// USD per million output tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_price: Option<f64>,
    /// USD per million cached input tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_price: Option<f64>,
    /// Takes tool definitions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<bool>,
    /// Produces reasoning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<bool>,
    /// Takes images.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vision: Option<bool>,
}

/// An overlay provider with its stored key, if it has one.
#[derive(Debug, Clone)]
pub struct OverlayProvider {
    /// The definition.
    pub spec: ProviderSpec,
    /// The key to send (unsealed), when one is stored.
    pub key: Option<ApiKey>,
}

/// Everything defined at run time.
#[derive(Debug, Clone, Default)]
pub struct Overlay {
    /// Providers, each replacing the base's of the same key.
    pub providers: Vec<OverlayProvider>,
    /// Model entries, each replacing its provider's entry of the same id.
    pub models: Vec<ModelSpec>,
    /// The default model reference, replacing `[llm] default`.
    pub default_model: Option<String>,
}

/// Why an overlay does not apply; `field` is a path in the wire shape
/// (`providers.my-vllm.baseUrl`, `models.openai/gpt-x.contextWindow`, `defaultModel`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{field}`: {message}")]
pub struct OverlayError {
    /// Where.
    pub field: String,
    /// What was expected.
    pub message: String,
}

impl OverlayError {
    fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self { field: field.into(), message: message.into() }
    }
}

/// `base_url` → `baseUrl`, `models[0].context_window` → `models[0].contextWindow`.
fn camel(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut up = false;
    for c in field.chars() {
        match c {
            '_' => up = true,
            c if up => {
                out.extend(c.to_uppercase());
                up = false;
            }
            c => out.push(c),
        }
    }
    out
}

impl LlmConfig {
    /// This configuration with `overlay` applied (see the module docs for precedence). `env`
    /// answers only for the variables overlay providers name in `apiKeyEnv`.
    pub fn with_overlay(&self, overlay: &Overlay, env: Env<'_>) -> Result<LlmConfig, OverlayError> {
        let mut out = self.clone();
        let transport = Transport::new(self.timeouts, self.retry, self.log);
        for p in &overlay.providers {
            let spec = &p.spec;
            let at = |f: &str| {
                if f.is_empty() {
                    format!("providers.{}", spec.key)
                } else {
                    format!("providers.{}.{}", spec.key, camel(f))
                }
            };
            if spec.key.len() > 64 {
                return Err(OverlayError::new(at("key"), "at most 64 characters"));
            }
            let declared = spec.api_key_env.clone().filter(|v| !v.trim().is_empty());
            if let Some(name) = &declared {
                self.check_key_variable(name, spec)
                    .map_err(|m| OverlayError::new(at("api_key_env"), m))?;
            }
            let only_declared =
                |k: &str| if declared.as_deref() == Some(k) { env(k) } else { None };
            let base = Base {
                env: &only_declared,
                timeouts: self.timeouts,
                retry: self.retry,
                log: self.log,
                transport: &transport,
            };
            let entry = ProviderEntry {
                kind: Some(spec.kind),
                base_url: spec.base_url.clone().filter(|u| !u.trim().is_empty()),
                api_key_env: declared.clone(),
                api_key: None,
                requires_key: spec.requires_key,
                default_model: spec.default_model.clone(),
                family: spec.family,
                models: Vec::new(),
                timeouts: None,
                retry: None,
            };
            let mut provider = provider_from_entry(&spec.key, entry, &base).map_err(|(f, m)| {
                OverlayError::new(at(if f == "$env" { "base_url" } else { &f }), m)
            })?;
            if let Some(key) = &p.key {
                provider.api_key = Some(key.clone());
                if declared.is_none() {
                    provider.api_key_env = None;
                }
            }
            provider.origin = Origin::Admin;
            match out.providers.iter_mut().find(|q| q.key == provider.key) {
                Some(slot) => *slot = provider,
                None => out.providers.push(provider),
            }
        }
        for m in &overlay.models {
            let at = |f: &str| format!("models.{}/{}.{}", m.provider, m.id, camel(f));
            let configured =
                || out.providers.iter().map(|p| p.key.as_str()).collect::<Vec<_>>().join(", ");
            let Some(i) = out.providers.iter().position(|p| p.key == m.provider) else {
                return Err(OverlayError::new(
                    at("provider"),
                    format!(
                        "provider `{}` is not configured; configured: {}",
                        m.provider,
                        configured()
                    ),
                ));
            };
            let entry = ModelEntry {
                id: m.id.clone(),
                context_window: m.context_window,
                max_output: m.max_output,
                input_price: m.input_price,
                output_price: m.output_price,
                cache_read_price: m.cache_read_price,
                tools: m.tools,
                reasoning: m.reasoning,
                vision: m.vision,
            };
            let provider = &mut out.providers[i];
            let info = model_from_entry(provider, &entry)
                .map_err(|(f, msg)| OverlayError::new(at(&f), msg))?;
            match provider.models.iter_mut().find(|x| x.id == info.id) {
                Some(slot) => *slot = info,
                None => provider.models.push(info),
            }
        }
        if let Some(d) = overlay.default_model.as_deref().map(str::trim).filter(|d| !d.is_empty()) {
            let r = out
                .resolve_ref(d, false)
                .map_err(|e| OverlayError::new("defaultModel", e.to_string()))?;
            // Resolution falls back to the only provider for any bare id; a default must name
            // its provider or a model something describes.
            let named = d == r.settings.key || d.starts_with(&format!("{}/", r.settings.key));
            if !named && !r.model.known {
                return Err(OverlayError::new(
                    "defaultModel",
                    format!(
                        "`{d}` names no configured model: use `provider/model` with one of: {}",
                        out.providers.iter().map(|p| p.key.as_str()).collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
            out.default = Some(d.to_owned());
        }
        Ok(out)
    }
}

/// The prefix of the server's own settings (`BOARDSMITH_TOKEN`, `BOARDSMITH_DATABASE_URL`).
const SERVER_PREFIX: &str = "BOARDSMITH_";

impl LlmConfig {
    /// Whether an overlay provider `spec` may read its key from the variable `name` (see the
    /// module docs); the error says why not and what to do instead.
    fn check_key_variable(&self, name: &str, spec: &ProviderSpec) -> Result<(), String> {
        let plain = name.starts_with(|c: char| c.is_ascii_uppercase() || c == '_')
            && name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
        if !plain {
            return Err(format!(
                "`{name}` is not an environment variable name (capital letters, digits and _)"
            ));
        }
        if name.starts_with(SERVER_PREFIX) {
            return Err(format!(
                "`{name}` is one of the server's own settings, never a provider key"
            ));
        }
        let mut allowed: Vec<(ProviderKind, String, String)> = BUILTINS
            .iter()
            .filter(|b| b.key_env == Some(name))
            .map(|b| (b.kind, b.base_url.to_owned(), b.key.to_owned()))
            .collect();
        allowed.extend(
            self.providers
                .iter()
                .filter(|p| p.api_key_env.as_deref() == Some(name))
                .map(|p| (p.kind, p.base_url.clone(), p.key.clone())),
        );
        if allowed.is_empty() {
            let builtins: Vec<&str> = BUILTINS.iter().filter_map(|b| b.key_env).collect();
            return Err(format!(
                "`{name}` is not a provider key variable of this server: `apiKeyEnv` may name \
                 only a built-in provider's ({}) or the key variable of a provider in the \
                 configuration file; send the key itself as `apiKey` instead",
                builtins.join(", ")
            ));
        }
        let here = spec.destination();
        if allowed.iter().any(|(kind, url, _)| here.as_ref() == Some(&(*kind, url.clone()))) {
            return Ok(());
        }
        let places: Vec<String> =
            allowed.iter().map(|(_, url, key)| format!("{url} ({key})")).collect();
        Err(format!(
            "`{name}` is sent only to {}, not to {}: a key goes only where it belongs; send \
             the key itself as `apiKey` instead",
            places.join(" or "),
            here.map_or_else(|| "this provider's URL".to_owned(), |(_, url)| url)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> LlmConfig {
        let env = |k: &str| (k == "DEEPSEEK_API_KEY").then(|| "sk-file".to_owned());
        LlmConfig::load(None, &env).unwrap()
    }

    fn provider(key: &str, url: &str) -> OverlayProvider {
        OverlayProvider {
            spec: ProviderSpec {
                key: key.into(),
                kind: ProviderKind::Openai,
                base_url: Some(url.into()),
                family: None,
                api_key_env: None,
                requires_key: None,
                default_model: Some("m1".into()),
            },
            key: Some(ApiKey::new("sk-stored")),
        }
    }

    const NO_ENV: Env<'static> = &|_| None;

    #[test]
    fn an_overlay_provider_is_added_with_its_stored_key_and_wins_over_the_environment() {
        let base = base();
        let overlay = Overlay {
            providers: vec![
                provider("local", "http://127.0.0.1:9/v1"),
                provider("deepseek", "http://127.0.0.1:8/v1"),
            ],
            ..Overlay::default()
        };
        let cfg = base.with_overlay(&overlay, NO_ENV).unwrap();
        let local = cfg.resolve("local/m1").unwrap();
        assert_eq!(local.settings.base_url, "http://127.0.0.1:9/v1");
        assert_eq!(local.settings.api_key.unwrap().expose(), "sk-stored");
        let ds = cfg.provider("deepseek").unwrap();
        assert_eq!(ds.base_url, "http://127.0.0.1:8/v1", "the overlay replaced the environment's");
        assert_eq!(ds.origin, Origin::Admin);
        assert_eq!(cfg.providers().iter().filter(|p| p.key == "deepseek").count(), 1);
        // The base is untouched: removing the overlay brings the environment's back.
        assert_eq!(base.provider("deepseek").unwrap().origin, Origin::Env);
    }

    #[test]
    fn bad_definitions_name_the_field_in_camel_case() {
        let mut p = provider("x y", "http://127.0.0.1:9/v1");
        let err = base()
            .with_overlay(&Overlay { providers: vec![p.clone()], ..Overlay::default() }, NO_ENV);
        assert_eq!(err.unwrap_err().field, "providers.x y");
        p.spec.key = "ok".into();
        p.spec.base_url = Some("ftp://nope".into());
        let err = base()
            .with_overlay(&Overlay { providers: vec![p], ..Overlay::default() }, NO_ENV)
            .unwrap_err();
        assert_eq!(err.field, "providers.ok.baseUrl", "{err}");
        let model = ModelSpec {
            provider: "deepseek".into(),
            id: "deepseek-chat".into(),
            context_window: Some(0),
            max_output: None,
            input_price: None,
            output_price: None,
            cache_read_price: None,
            tools: None,
            reasoning: None,
            vision: None,
        };
        let err = base()
            .with_overlay(&Overlay { models: vec![model.clone()], ..Overlay::default() }, NO_ENV)
            .unwrap_err();
        assert_eq!(err.field, "models.deepseek/deepseek-chat.contextWindow");
        let err = base()
            .with_overlay(
                &Overlay {
                    models: vec![ModelSpec { provider: "nope".into(), ..model }],
                    ..Overlay::default()
                },
                NO_ENV,
            )
            .unwrap_err();
        assert!(err.message.contains("configured: deepseek"), "{err}");
        let err = base()
            .with_overlay(
                &Overlay { default_model: Some("anthropic/claude-x".into()), ..Overlay::default() },
                NO_ENV,
            )
            .unwrap_err();
        assert_eq!(err.field, "defaultModel");
    }

    #[test]
    fn models_and_the_default_model_apply() {
        let model = ModelSpec {
            provider: "deepseek".into(),
            id: "deepseek-chat".into(),
            context_window: Some(1234),
            max_output: None,
            input_price: Some(9.0),
            output_price: None,
            cache_read_price: None,
            tools: None,
            reasoning: None,
            vision: None,
        };
        let overlay = Overlay {
            models: vec![model],
            default_model: Some("deepseek/deepseek-chat".into()),
            ..Overlay::default()
        };
        let cfg = base().with_overlay(&overlay, NO_ENV).unwrap();
        let info = cfg.model_info("deepseek", "deepseek-chat");
        assert_eq!((info.context_window, info.input_price), (1234, Some(9.0)));
        assert_eq!(cfg.default_model(), Some("deepseek/deepseek-chat"));
        assert_eq!(cfg.resolve("").unwrap().model.id, "deepseek-chat");
    }

    #[test]
    fn an_api_key_env_is_the_only_variable_an_overlay_provider_reads() {
        let mut p = provider("local", "https://api.deepseek.com/v1/");
        p.key = None;
        p.spec.api_key_env = Some("DEEPSEEK_API_KEY".into());
        let env = |k: &str| match k {
            "DEEPSEEK_API_KEY" => Some("sk-env".to_owned()),
            "LOCAL_BASE_URL" => Some("http://evil.example/v1".to_owned()),
            _ => None,
        };
        let cfg = base()
            .with_overlay(&Overlay { providers: vec![p], ..Overlay::default() }, &env)
            .unwrap();
        let r = cfg.resolve("local/m1").unwrap();
        assert_eq!(r.settings.api_key.unwrap().expose(), "sk-env");
        assert_eq!(r.settings.base_url, "https://api.deepseek.com/v1");
    }

    /// Refused with the field and the reason; `Ok` when allowed.
    fn key_variable(name: &str, key: &str, kind: ProviderKind, url: Option<&str>) -> String {
        let mut p = provider(key, url.unwrap_or(""));
        p.key = None;
        p.spec.kind = kind;
        p.spec.base_url = url.map(str::to_owned);
        p.spec.api_key_env = Some(name.into());
        let env = |_: &str| Some("secret".to_owned());
        match base().with_overlay(&Overlay { providers: vec![p], ..Overlay::default() }, &env) {
            Ok(_) => "ok".into(),
            Err(e) => {
                assert_eq!(e.field, format!("providers.{key}.apiKeyEnv"), "{e}");
                e.message
            }
        }
    }

    #[test]
    fn an_api_key_env_names_only_a_provider_key_and_only_for_its_destination() {
        use ProviderKind::{Anthropic, Openai};
        let evil = Some("http://127.0.0.1:9/v1");
        for name in ["BOARDSMITH_TOKEN", "BOARDSMITH_DATABASE_URL"] {
            let m = key_variable(name, "x", Openai, evil);
            assert!(m.contains("the server's own settings"), "{name}: {m}");
            let m = key_variable(name, "openai", Openai, None);
            assert!(m.contains("the server's own settings"), "{name}: {m}");
        }
        // Not a key variable this server reads: never, wherever it goes.
        for name in ["HOME", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "LOCAL_KEY"] {
            let m = key_variable(name, "x", Openai, evil);
            assert!(m.contains("is not a provider key variable") && m.contains("`apiKey`"), "{m}");
        }
        assert!(key_variable("lower_key", "x", Openai, evil).contains("not an environment"));
        // A built-in's key: to its official URL only (left out, or spelled out).
        let m = key_variable("OPENAI_API_KEY", "x", Openai, evil);
        assert!(
            m.contains(
                "sent only to https://api.openai.com/v1 (openai), not to http://127.0.0.1:9/v1"
            ),
            "{m}"
        );
        assert_eq!(key_variable("OPENAI_API_KEY", "openai", Openai, None), "ok");
        assert_eq!(
            key_variable("OPENAI_API_KEY", "x", Openai, Some("https://api.openai.com/v1")),
            "ok"
        );
        let m = key_variable("OPENAI_API_KEY", "x", Anthropic, Some("https://api.openai.com/v1"));
        assert!(m.contains("sent only to"), "another kind is another destination: {m}");
        assert_eq!(key_variable("ANTHROPIC_API_KEY", "claude2", Anthropic, None), "ok");
        // The base's provider (here the environment's deepseek) lends its key to its URL only.
        assert_eq!(
            key_variable("DEEPSEEK_API_KEY", "ds", Openai, Some("https://api.deepseek.com/v1")),
            "ok"
        );
        assert!(key_variable("DEEPSEEK_API_KEY", "ds", Openai, evil).contains("sent only to"));
    }

    #[test]
    fn a_destination_is_the_kind_and_the_normalized_or_default_url() {
        let mut p = provider("openai", "https://api.openai.com/v1/").spec;
        assert_eq!(
            p.destination(),
            Some((ProviderKind::Openai, "https://api.openai.com/v1".into()))
        );
        p.base_url = None;
        assert_eq!(
            p.destination(),
            Some((ProviderKind::Openai, "https://api.openai.com/v1".into()))
        );
        p.kind = ProviderKind::Anthropic;
        assert_eq!(
            p.destination(),
            Some((ProviderKind::Anthropic, "https://api.anthropic.com".into()))
        );
        p.key = "mine".into();
        p.kind = ProviderKind::Openai;
        assert_eq!(p.destination(), None, "an OpenAI-compatible server needs its URL");
    }
}
