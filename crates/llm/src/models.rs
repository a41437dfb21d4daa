//! The configured models as one service: a model reference resolved to a connected provider,
//! and the list of every model the configuration serves.
//!
//! Owns the provider instances (one per provider key, built on first use: building one makes
//! an HTTP client). The agent runtime and the OpenAI-compatible API both call models through
//! it, so they share connections and resolve references the same way. Knows nothing of agents
//! or HTTP handlers.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use super::config::{Env, LlmConfig, ModelInfo, Overlay, OverlayError};
use super::error::LlmError;
use super::provider::Provider;

/// A model reference resolved and connected.
#[derive(Debug, Clone)]
pub struct Connected {
    /// The provider to call.
    pub provider: Arc<dyn Provider>,
    /// The model: the id to send and what it can do.
    pub model: ModelInfo,
}

impl Connected {
    /// `provider/model`, the model's id in listings.
    pub fn qualified_id(&self) -> String {
        qualified(self.provider.key(), &self.model.id)
    }
}

/// One model the configuration serves.
#[derive(Debug, Clone, PartialEq)]
pub struct ServedModel {
    /// The provider key.
    pub provider: String,
    /// What the model can do and cost.
    pub info: ModelInfo,
}

impl ServedModel {
    /// `provider/model`: a reference that resolves to exactly this model.
    pub fn qualified_id(&self) -> String {
        qualified(&self.provider, &self.info.id)
    }
}

fn qualified(provider: &str, model: &str) -> String {
    format!("{provider}/{model}")
}

/// The configuration and the providers built from it.
#[derive(Debug)]
pub struct Models {
    /// What the file and the environment say; overlays apply over it, never over each other.
    base: LlmConfig,
    /// The configuration in force: `base`, or `base` with the last overlay applied.
    config: RwLock<Arc<LlmConfig>>,
    providers: Mutex<HashMap<String, Arc<dyn Provider>>>,
}

impl Models {
    /// The service over a loaded configuration.
    pub fn new(config: LlmConfig) -> Self {
        Self {
            config: RwLock::new(Arc::new(config.clone())),
            base: config,
            providers: Mutex::new(HashMap::new()),
        }
    }

    /// The configuration in force (a consistent snapshot: a later [`Self::apply`] does not
    /// change it).
    pub fn config(&self) -> Arc<LlmConfig> {
        Arc::clone(&self.config.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Puts `overlay` over the file's and environment's configuration (replacing the previous
    /// overlay) and drops the providers built so far, so the next call connects with the new
    /// settings; calls already running keep the provider they hold. An overlay that does not
    /// apply changes nothing.
    pub fn apply(&self, overlay: &Overlay, env: Env<'_>) -> Result<(), OverlayError> {
        let next = Arc::new(self.base.with_overlay(overlay, env)?);
        let mut providers = self.providers.lock().unwrap_or_else(PoisonError::into_inner);
        *self.config.write().unwrap_or_else(PoisonError::into_inner) = next;
        providers.clear();
        Ok(())
    }

    /// The configuration of the file and the environment alone (no overlay).
    pub fn base(&self) -> &LlmConfig {
        &self.base
    }

    /// What [`Self::apply`] would make of `overlay`, without applying it.
    pub fn check(&self, overlay: &Overlay, env: Env<'_>) -> Result<LlmConfig, OverlayError> {
        self.base.with_overlay(overlay, env)
    }

    /// Resolves `model_ref` (see [`LlmConfig::resolve`]) and returns its provider, built once
    /// per provider key.
    pub fn connect(&self, model_ref: &str) -> Result<Connected, LlmError> {
        self.connected(self.config().resolve(model_ref)?)
    }

    /// [`Self::connect`] for a model of an explicitly named provider (see
    /// [`LlmConfig::resolve_with_provider`]).
    pub fn connect_with_provider(
        &self,
        provider: &str,
        model: &str,
    ) -> Result<Connected, LlmError> {
        self.connected(self.config().resolve_with_provider(provider, model)?)
    }

    fn connected(&self, resolved: super::config::Resolved) -> Result<Connected, LlmError> {
        let provider = Arc::clone(
            self.providers
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .entry(resolved.settings.key.clone())
                .or_insert_with(|| super::connect(resolved.settings)),
        );
        Ok(Connected { provider, model: resolved.model })
    }

    /// Embeds `inputs` with `model_ref` (`provider/model`: the provider's key as configured,
    /// the model id sent as is), in batches of [`super::provider::MAX_EMBED_BATCH`], one
    /// vector per input in order. `BOARDSMITH_MODEL` does not apply: it routes chat models.
    #[base::boxed]
    pub async fn embed(
        &self,
        model_ref: &str,
        inputs: &[String],
    ) -> Result<Vec<Vec<f32>>, LlmError> {
        let Some((key, model)) =
            model_ref.split_once('/').filter(|(k, m)| !k.trim().is_empty() && !m.trim().is_empty())
        else {
            return Err(LlmError::Config {
                message: format!("embedding model `{model_ref}` must be `provider/model`"),
            });
        };
        let settings = self.config().provider_settings(key.trim())?;
        let provider = Arc::clone(
            self.providers
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .entry(settings.key.clone())
                .or_insert_with(|| super::connect(settings)),
        );
        let mut out = Vec::with_capacity(inputs.len());
        for batch in inputs.chunks(super::provider::MAX_EMBED_BATCH) {
            out.extend(provider.embed(model.trim(), batch.to_vec()).await?);
        }
        Ok(out)
    }

    /// Every model that can be called now (see [`LlmConfig::served_models`]).
    pub fn served(&self) -> Vec<ServedModel> {
        self.config()
            .served_models()
            .into_iter()
            .map(|(provider, info)| ServedModel { provider, info })
            .collect()
    }

    /// The served model whose qualified id (`provider/model`) or bare id is `id`.
    pub fn find(&self, id: &str) -> Option<ServedModel> {
        let served = self.served();
        let exact = served.iter().position(|m| m.qualified_id() == id);
        let bare = || served.iter().position(|m| m.info.id == id);
        exact.or_else(bare).map(|i| served[i].clone())
    }
}
