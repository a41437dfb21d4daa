//! [`FallbackResolver`]: the run's model with an ordered list of fallbacks. Every call goes to
//! the current model; a retryable failure before any output moves the run to the next one for
//! the rest of the run (a provider that just failed is likely to fail the next call too, and
//! each failure costs the provider's retries first). The next run starts from the first again.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;

/// The run's model first, then its fallbacks, each tried at most once per run.
#[derive(Debug)]
pub struct FallbackResolver {
    candidates: Vec<ResolvedModel>,
    current: AtomicUsize,
}

impl FallbackResolver {
    /// Models in the order they are tried; `None` when there is nothing to fall back to
    /// (fewer than two), so the run needs no resolver at all.
    pub fn new(candidates: Vec<ResolvedModel>) -> Option<Self> {
        (candidates.len() > 1).then(|| Self { candidates, current: AtomicUsize::new(0) })
    }
}

impl ModelResolver for FallbackResolver {
    fn resolve(&self, _turn: u32) -> BoxFuture<'_, Result<ResolvedModel, ResolveError>> {
        let i = self.current.load(Ordering::Relaxed).min(self.candidates.len() - 1);
        Box::pin(std::future::ready(Ok(self.candidates[i].clone())))
    }

    fn fallback(
        &self,
        _turn: u32,
        _failed: &ResolvedModel,
        _error: &llm::LlmError,
    ) -> Option<ResolvedModel> {
        // One run drives its resolver from one task: load then store cannot race.
        let next = self.current.load(Ordering::Relaxed) + 1;
        let model = self.candidates.get(next)?.clone();
        self.current.store(next, Ordering::Relaxed);
        Some(model)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use llm::LlmError;

    fn model(provider: &str, id: &str) -> ResolvedModel {
        let settings = llm::ProviderSettings {
            key: provider.into(),
            kind: llm::ProviderKind::Openai,
            base_url: "http://127.0.0.1:9/v1".into(),
            api_key: None,
            family: llm::Family::Generic,
            transport: llm::http::Transport::default(),
        };
        ResolvedModel {
            provider: llm::connect(settings),
            model: id.into(),
            context_tokens: 1000,
            reasoning: false,
        }
    }

    fn id(m: &ResolvedModel) -> String {
        format!("{}/{}", m.provider.key(), m.model)
    }

    #[tokio::test]
    async fn falls_back_in_order_once_each_and_stays_on_the_fallback() {
        assert!(FallbackResolver::new(vec![model("a", "x")]).is_none(), "nothing to fall to");
        let r =
            FallbackResolver::new(vec![model("a", "x"), model("b", "y"), model("c", "z")]).unwrap();
        let err = LlmError::Connection { provider: "a".into(), message: "refused".into() };
        let first = r.resolve(1).await.unwrap();
        assert_eq!(id(&first), "a/x");
        assert_eq!(id(&r.fallback(1, &first, &err).unwrap()), "b/y");
        // The run's later calls stay on the model that answered.
        assert_eq!(id(&r.resolve(2).await.unwrap()), "b/y");
        assert_eq!(id(&r.fallback(2, &first, &err).unwrap()), "c/z");
        assert!(r.fallback(2, &first, &err).is_none(), "the list is used up");
        assert_eq!(id(&r.resolve(3).await.unwrap()), "c/z");
    }
}
