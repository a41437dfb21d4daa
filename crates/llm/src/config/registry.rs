//! The built-in model registry ([`REGISTRY`]: context windows, output limits, prices and
//! capabilities of known models) and the providers the environment alone can enable.

use serde::Serialize;

use super::super::provider::ProviderKind;
use super::super::types::Usage;
use super::{UNKNOWN_CONTEXT_WINDOW, UNKNOWN_MAX_OUTPUT};

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

pub(super) const T: u8 = 1;
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
    pub(super) caps: u8,
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
pub(super) struct Builtin {
    pub(super) key: &'static str,
    pub(super) kind: ProviderKind,
    pub(super) base_url: &'static str,
    /// The variable holding the key (`None`: no key).
    pub(super) key_env: Option<&'static str>,
    /// The variable whose presence enables the provider.
    pub(super) enable_env: &'static str,
    pub(super) default_model: &'static str,
}

pub(super) const BUILTINS: &[Builtin] = &[
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

pub(super) fn builtin(key: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.key == key)
}
