//! The LLM provider layer: one streaming interface over OpenAI-compatible, Anthropic and Ollama
//! models.
//!
//! Owns the provider-neutral conversation types ([`types`]), the event stream ([`event`]), the
//! error and retry decision ([`error`]), the HTTP transport with timeouts, retries, SSE/NDJSON
//! decoding and the interaction log ([`http`]), the tool-argument repair policy ([`repair`]),
//! the providers, their configuration and model registry ([`config`]), the connected models
//! ([`models`]) and a scripted mock upstream ([`mock`]). It knows nothing of agents, HTTP handlers or dashboards.

pub mod anthropic;
pub mod config;
pub mod error;
pub mod event;
pub mod http;
pub mod mock;
pub mod models;
pub mod ollama;
pub mod openai;
pub mod provider;
pub mod repair;
pub mod types;

pub use config::{LlmConfig, ModelInfo, Resolved};
pub use error::{LlmError, TimeoutStage};
pub use event::{MessageBuilder, StreamEvent};
pub use models::{Connected, Models, ServedModel};
pub use provider::{ApiKey, Family, Provider, ProviderKind, ProviderSettings};
pub use types::{
    AssistantMessage, ChatRequest, ContentBlock, Effort, ImageSource, Message, StopReason,
    Thinking, ToolChoice, ToolDefinition, Usage,
};

/// Builds the provider for these settings.
pub fn connect(settings: ProviderSettings) -> std::sync::Arc<dyn Provider> {
    match settings.kind {
        ProviderKind::Openai => std::sync::Arc::new(openai::OpenAiProvider::new(settings)),
        ProviderKind::Anthropic => std::sync::Arc::new(anthropic::AnthropicProvider::new(settings)),
        ProviderKind::Ollama => std::sync::Arc::new(ollama::OllamaProvider::new(settings)),
    }
}
