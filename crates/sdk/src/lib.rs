//! The data-source SDK: the registry of sources (`sdk-spec/*.json`), call validation, the shared
//! response cache, and the three backings (builtin synthetic data, HTTP, files).
//!
//! This module runs in the server process only. It knows nothing of the sandbox: the sandbox
//! reaches it through [`sandbox::SdkHost`], which [`Sdk`] implements, so credentials and
//! network access never enter a worker. Outbound requests reach only the hosts the spec files
//! (and `BOARDSMITH_OUTBOUND_ALLOW`) declare, never private addresses unless configured
//! ([`http::outbound`]); `file` backings never leave their folder ([`file`]).

pub mod builtin;
mod cache;
mod config;
pub mod file;
pub mod http;
pub mod limit;
pub mod provider;
pub mod spec;
pub mod validate;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use chrono::{DateTime, Utc};
use serde_json::Value;

pub use provider::{ProviderSpec, Status};
pub use spec::{Backing, MethodSpec, ParamSpec, ParamType, Registry, ReturnSpec, SourceSpec};

use base::provenance::Provenance;
pub use config::SdkConfig;
use sandbox::SdkAnswer;

/// Spec files compiled into the binary.
pub static EMBEDDED_SPECS: include_dir::Dir<'static> =
    include_dir::include_dir!("$CARGO_MANIFEST_DIR/../../sdk-spec");

/// Errors from loading specs or calling a method. Messages are written for a model to act on.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum SdkError {
    /// A spec file is malformed.
    #[error("invalid spec: {0}")]
    Spec(String),
    /// No such source.
    #[error("unknown source `{name}`{}", hint(suggestions, disabled_by.as_deref()))]
    UnknownSource {
        /// The name the code used.
        name: String,
        /// Closest existing names.
        suggestions: Vec<String>,
        /// Set when the source exists but is switched off: the variable that enables it.
        disabled_by: Option<String>,
    },
    /// No such method on an existing source.
    #[error("unknown method `{source_name}.{name}`{}", hint(suggestions, None))]
    UnknownMethod {
        /// The source.
        source_name: String,
        /// The method name the code used.
        name: String,
        /// Closest existing method names.
        suggestions: Vec<String>,
    },
    /// Params failed validation against the spec.
    #[error("{source_name}.{method}: {message}")]
    InvalidParams {
        /// The source.
        source_name: String,
        /// The method.
        method: String,
        /// Which param and what was expected.
        message: String,
    },
    /// The outbound policy refused an `http` request: its host is not declared, or it is (or
    /// resolves to) a private, loopback or link-local address. The message names the setting
    /// that would allow it.
    #[error("{source_name}.{method}: {refused}")]
    Refused {
        /// The source.
        source_name: String,
        /// The method.
        method: String,
        /// What was refused and why.
        refused: http::Refused,
    },
    /// The SDK's own configuration is unusable (an invalid `BOARDSMITH_OUTBOUND_ALLOW` entry).
    #[error("invalid data-source configuration: {0}")]
    Config(String),
    /// The backing failed (HTTP status, timeout, malformed body, missing file).
    #[error("{source_name}.{method}: {message}")]
    Upstream {
        /// The source.
        source_name: String,
        /// The method.
        method: String,
        /// What went wrong, including the HTTP status if any.
        message: String,
    },
}

fn hint(suggestions: &[String], disabled_by: Option<&str>) -> String {
    if let Some(var) = disabled_by {
        return format!(" (the source exists but is disabled; set {var}=1 to enable it)");
    }
    match suggestions {
        [] => String::new(),
        [one] => format!("; did you mean `{one}`?"),
        many => format!("; did you mean one of: {}?", many.join(", ")),
    }
}

/// The SDK: validated, cached, coalesced calls into the registry's sources.
pub struct Sdk {
    registry: Registry,
    config: SdkConfig,
    cache: cache::Cache,
    http: http::Client,
    upstream_calls: AtomicU64,
    /// Per HTTP provider: its rate limit and circuit breaker.
    gates: std::collections::BTreeMap<String, Gate>,
    /// This SDK's own `Arc` when built by [`Sdk::shared`]: background renewals run on it.
    me: std::sync::Weak<Sdk>,
}

impl Sdk {
    /// Fetches a page for a reader (a knowledge-base `{url}` document) through the same
    /// client and outbound policy as every `http` backing; see [`http::Client::get_document`].
    #[base::boxed]
    pub async fn fetch_document(
        &self,
        url: &str,
        max_bytes: usize,
        timeout: std::time::Duration,
    ) -> Result<http::Fetched, http::Error> {
        self.http.get_document(url, max_bytes, timeout).await
    }
}

/// How one provider answered `boardsmith sdk check`.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Check {
    /// The provider.
    pub provider: String,
    /// The method called (`source.method`).
    pub method: String,
    /// Whether it answered and the answer mapped.
    pub ok: bool,
    /// Time to the mapped answer (or the error), in milliseconds.
    pub latency_ms: f64,
    /// What went wrong.
    pub error: Option<String>,
}

/// How calls to one HTTP provider are paced and cut off.
#[derive(Debug, Default)]
struct Gate {
    bucket: Option<limit::Bucket>,
    breaker: limit::Breaker,
}

/// How serving with one provider failed.
enum Served {
    /// The provider is down, overloaded or its breaker is open: another may serve.
    Unavailable(SdkError),
    /// Anything else (bad params for it, a rejected request, a mapping error).
    Other(SdkError),
}

impl std::fmt::Debug for Sdk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sdk").field("sources", &self.registry.sources().count()).finish()
    }
}

impl Sdk {
    /// Loads the registry (embedded or from `spec_dir`) and builds the SDK.
    pub fn new(config: SdkConfig) -> Result<Self, SdkError> {
        let enabled = |v: &str| config.is_enabled(v);
        let registry = match &config.spec_dir {
            Some(dir) => Registry::load_dir(dir, &enabled)?,
            None => Registry::embedded(&enabled)?,
        };
        Self::with_registry(registry, config)
    }

    /// Builds the SDK over an already-loaded registry. Fails on an invalid
    /// `outbound_allow` entry.
    pub fn with_registry(registry: Registry, config: SdkConfig) -> Result<Self, SdkError> {
        let http = http::Client::new(config.outbound(&registry)?).map_err(SdkError::Config)?;
        let now = std::time::Instant::now();
        let gates = registry
            .sources()
            .flat_map(|s| s.methods.iter().flat_map(|m| provider::providers_of(s, m)))
            .filter(|p| matches!(p.backing, Backing::Http(_)))
            .map(|p| {
                let limit = registry.provider(&p.provider).and_then(|d| d.rate_limit);
                let bucket = limit.map(|l| limit::Bucket::new(l.requests, l.per(), now));
                (p.provider, Gate { bucket, breaker: limit::Breaker::default() })
            })
            .collect();
        let cache = cache::Cache::new(config.cache_bytes.unwrap_or(cache::DEFAULT_BUDGET));
        Ok(Self {
            registry,
            config,
            cache,
            http,
            upstream_calls: AtomicU64::new(0),
            gates,
            me: std::sync::Weak::new(),
        })
    }

    /// [`Sdk::new`] shared behind an `Arc`, which also lets stale answers be renewed in the
    /// background while they are served (stale-while-revalidate).
    pub fn shared(config: SdkConfig) -> Result<Arc<Self>, SdkError> {
        Ok(Self::new(config)?.into_shared())
    }

    /// This SDK behind an `Arc` that knows itself (see [`Sdk::shared`]).
    pub fn into_shared(self) -> Arc<Self> {
        let mut sdk = self;
        Arc::new_cyclic(|me| {
            sdk.me = me.clone();
            sdk
        })
    }

    /// The active sources.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// How many calls reached a backing (cache misses that were not coalesced).
    pub fn upstream_calls(&self) -> u64 {
        self.upstream_calls.load(Ordering::Relaxed)
    }

    /// Calls `source.method(params)`: validates params against the spec (applying defaults),
    /// picks the provider, then answers from the cache, joins an identical call in flight, or
    /// calls the backing. The answer says where it came from (a cached one keeps its fetch
    /// time). When the provider is unavailable (down, or its breaker open) and the user allowed
    /// fallback (`BOARDSMITH_DATA_FALLBACK=1`), the next provider in the order serves instead,
    /// and its answer names it; a forced provider never falls back.
    #[base::boxed]
    pub async fn call(
        &self,
        source: &str,
        method: &str,
        params: Value,
    ) -> Result<Arc<SdkAnswer>, SdkError> {
        let (src, m) = self.resolve(source, method)?;
        let (forced, params) =
            provider::take_forced(params).map_err(|message| SdkError::InvalidParams {
                source_name: source.to_owned(),
                method: method.to_owned(),
                message,
            })?;
        let params = validate::validate(src, m, params)?;
        let mut providers = provider::providers_of(src, m);
        let mut failed: Vec<String> = Vec::new();
        loop {
            let chosen = provider::choose(src, providers.clone(), forced.as_deref(), &params, self)
                .map_err(|e| {
                    let mut message = e.to_string();
                    if !failed.is_empty() {
                        message = format!("{}; before that: {message}", failed.join("; "));
                    }
                    SdkError::Upstream {
                        source_name: source.to_owned(),
                        method: method.to_owned(),
                        message,
                    }
                })?;
            match self.serve(src, m, &chosen, &params).await {
                Err(Served::Unavailable(e)) if self.config.fallback && forced.is_none() => {
                    failed.push(format!("{} failed: {e}", chosen.provider));
                    providers.retain(|p| p.provider != chosen.provider);
                }
                Err(Served::Unavailable(e) | Served::Other(e)) => return Err(e),
                Ok(answer) => return Ok(answer),
            }
        }
    }

    /// Answers a call with one provider: cache (a stale HTTP answer is served at once while one
    /// background fetch renews it), coalescing, then its backing.
    async fn serve(
        &self,
        src: &SourceSpec,
        m: &MethodSpec,
        chosen: &ProviderSpec,
        params: &serde_json::Map<String, Value>,
    ) -> Result<Arc<SdkAnswer>, Served> {
        base::telemetry::data_call(&chosen.provider);
        let now = self.config.asof.unwrap_or_else(Utc::now);
        // Builtin data is a pure function of (call, day): the day is part of the key so the
        // cache never serves yesterday's series after midnight.
        let key = cache::Key::new(&src.name, &m.name, &chosen.provider, params, now.date_naive());
        let ttl = std::time::Duration::from_secs(m.ttl_secs.unwrap_or(spec::DEFAULT_TTL_SECS));
        if matches!(chosen.backing, Backing::Http(_))
            && let Some((answer, renew)) = self.cache.stale(&key)
        {
            if renew {
                self.renew(src, m, chosen, params, key, ttl);
            }
            return Ok(answer);
        }
        let unavailable = std::sync::atomic::AtomicBool::new(false);
        let result = self
            .cache
            .get_or_fetch(key, ttl, || async {
                let fetched = self.fetch(src, m, chosen, params, now, &unavailable).await;
                base::telemetry::data_fetch(&chosen.provider, fetched.is_ok());
                fetched
            })
            .await;
        result.map_err(|e| {
            if unavailable.load(Ordering::Relaxed) {
                Served::Unavailable(e)
            } else {
                Served::Other(e)
            }
        })
    }

    /// Fetches a stale answer's replacement in the background (on this SDK's own `Arc`; an SDK
    /// not built by [`Sdk::shared`] has none and fetches on the next call instead).
    fn renew(
        &self,
        src: &SourceSpec,
        m: &MethodSpec,
        chosen: &ProviderSpec,
        params: &serde_json::Map<String, Value>,
        key: cache::Key,
        ttl: std::time::Duration,
    ) {
        let Some(me) = self.me.upgrade() else {
            self.cache.renewal_failed(&key);
            return;
        };
        let (source, method) = (src.name.clone(), m.name.clone());
        let (chosen, params) = (chosen.clone(), params.clone());
        tokio::spawn(async move {
            let Ok((src, m)) = me.resolve(&source, &method) else { return };
            let now = me.config.asof.unwrap_or_else(Utc::now);
            let unavailable = std::sync::atomic::AtomicBool::new(false);
            match me.fetch(src, m, &chosen, &params, now, &unavailable).await {
                Ok(answer) => me.cache.put(key, ttl, Arc::new(answer)),
                Err(e) => {
                    tracing::debug!(%source, %method, error = %e, "renewing a stale answer failed");
                    me.cache.renewal_failed(&key);
                }
            }
        });
    }

    /// One call to a provider's backing (no cache). Marks `unavailable` when the provider is
    /// down or cut off, so the caller may fall back.
    async fn fetch(
        &self,
        src: &SourceSpec,
        m: &MethodSpec,
        chosen: &ProviderSpec,
        params: &serde_json::Map<String, Value>,
        now: DateTime<Utc>,
        unavailable: &std::sync::atomic::AtomicBool,
    ) -> Result<SdkAnswer, SdkError> {
        let (source, method) = (src.name.as_str(), m.name.as_str());
        let backing = &chosen.backing;
        let day = now.date_naive();
        let upstream = |message: String| SdkError::Upstream {
            source_name: source.to_owned(),
            method: method.to_owned(),
            message,
        };
        self.upstream_calls.fetch_add(1, Ordering::Relaxed);
        let fetched_at = Utc::now().timestamp_millis();
        match backing {
            Backing::Builtin { generator } => {
                let generator = generator.as_deref().unwrap_or(method);
                let ctx = builtin::GenContext::new(source, method, params, now);
                let value = builtin::generate(generator, params, &ctx).map_err(upstream)?;
                let provenance = Provenance::demo(Some(day.to_string()), fetched_at);
                Ok(SdkAnswer::new(value, provenance))
            }
            Backing::Http(h) => {
                let gate = self.gates.get(&chosen.provider);
                if let Some(g) = gate
                    && let Err(open) = g.breaker.admit(std::time::Instant::now())
                {
                    unavailable.store(true, Ordering::Relaxed);
                    return Err(upstream(format!("provider {} {open}", chosen.provider)));
                }
                let env = |k: &str| self.config.env(k);
                let pace = gate.and_then(|g| g.bucket.as_ref());
                let fetched = http::fetch(&self.http, h, params, &env, pace).await;
                if let Some(g) = gate {
                    let outcome = match &fetched {
                        Err(http::Error::Unavailable(m)) => Err(m.as_str()),
                        _ => Ok(()),
                    };
                    g.breaker.record(std::time::Instant::now(), outcome);
                }
                let value = fetched.map_err(|e| match e {
                    http::Error::Refused(refused) => SdkError::Refused {
                        source_name: source.to_owned(),
                        method: method.to_owned(),
                        refused,
                    },
                    http::Error::Unavailable(m) => {
                        unavailable.store(true, Ordering::Relaxed);
                        let next = if self.config.fallback {
                            ""
                        } else {
                            "; BOARDSMITH_DATA_FALLBACK=1 would let the next provider serve"
                        };
                        upstream(format!(
                            "provider {} is unavailable: {m}; try again later{next}",
                            chosen.provider
                        ))
                    }
                    http::Error::Upstream(m) => {
                        upstream(format!("provider {}: {m}", chosen.provider))
                    }
                })?;
                let provenance = Provenance {
                    provider: chosen.provider.clone(),
                    demo: false,
                    as_of: None,
                    fetched_at,
                    url: http::endpoint(h, params, &env),
                };
                Ok(SdkAnswer::new(value, provenance))
            }
            Backing::File(f) => {
                let value = file::read(self.config.data_dir.as_deref(), f, params)
                    .await
                    .map_err(upstream)?;
                let provenance = Provenance {
                    provider: chosen.provider.clone(),
                    demo: false,
                    as_of: None,
                    fetched_at,
                    url: None,
                };
                Ok(SdkAnswer::new(value, provenance))
            }
        }
    }

    /// Calls each live HTTP provider once, concurrently, with the default params of the first
    /// method it can serve with them (forcing that provider), and reports how it went. For
    /// `boardsmith sdk check`: whether this machine reaches its providers.
    #[base::boxed]
    pub async fn check(&self) -> Vec<Check> {
        let mut probes: Vec<(String, String, String)> = Vec::new();
        for src in self.registry.sources() {
            for m in &src.methods {
                for p in provider::providers_of(src, m) {
                    let fresh = !probes.iter().any(|(name, ..)| *name == p.provider);
                    if !fresh
                        || !matches!(p.backing, Backing::Http(_))
                        || self.status(src, &p) != Status::Live
                    {
                        continue;
                    }
                    // Only a method whose defaults suffice and match the provider's patterns.
                    let Ok(params) = validate::validate(src, m, Value::Null) else { continue };
                    if p.applies(&params) {
                        probes.push((p.provider.clone(), src.name.clone(), m.name.clone()));
                    }
                }
            }
        }
        let runs = probes.into_iter().map(|(provider, source, method)| async move {
            let started = std::time::Instant::now();
            let params = serde_json::json!({ provider::PROVIDER_PARAM: provider });
            let result = self.call(&source, &method, params).await;
            Check {
                provider,
                method: format!("{source}.{method}"),
                ok: result.is_ok(),
                latency_ms: started.elapsed().as_secs_f64() * 1000.0,
                error: result.err().map(|e| e.to_string()),
            }
        });
        futures::future::join_all(runs).await
    }

    /// The registry as `search` code and `GET /api/sdk/sources` see it, with each method's
    /// providers and their status here and now.
    pub fn public_json(&self) -> Value {
        provider::public_json(&self.registry, self)
    }

    /// The status of `p` of `source`: demo for the generators; disabled when it needs the
    /// network and the server is offline, or when its switch is off; needs-key when its key
    /// variable is unset; live otherwise.
    pub fn status(&self, source: &SourceSpec, p: &ProviderSpec) -> Status {
        if let Backing::Builtin { .. } = p.backing {
            return Status::Demo;
        }
        // Offline means no network: the user's own files still serve.
        if self.config.offline && matches!(p.backing, Backing::Http(_)) {
            return Status::Disabled(provider::OFFLINE_VAR.to_owned());
        }
        // The source's own switch already removed a disabled source from the registry.
        if let Some(var) = &p.enabled_by
            && source.enabled_by.as_ref() != Some(var)
            && !self.config.is_enabled(var)
        {
            return Status::Disabled(var.clone());
        }
        if let Backing::Http(h) = &p.backing
            && let Some(auth) = &h.auth
            && !auth.optional
            && self.config.env(&auth.env).is_none_or(|v| v.trim().is_empty())
        {
            return Status::NeedsKey(auth.env.clone());
        }
        Status::Live
    }

    fn resolve(&self, source: &str, method: &str) -> Result<(&SourceSpec, &MethodSpec), SdkError> {
        let Some(src) = self.registry.source(source) else {
            let names: Vec<&str> = self.registry.sources().map(|s| s.name.as_str()).collect();
            return Err(SdkError::UnknownSource {
                name: source.to_owned(),
                suggestions: base::text::closest(source, &names),
                disabled_by: self.registry.disabled().get(source).cloned(),
            });
        };
        let Some(m) = src.methods.iter().find(|m| m.name == method) else {
            let names: Vec<&str> = src.methods.iter().map(|m| m.name.as_str()).collect();
            return Err(SdkError::UnknownMethod {
                source_name: source.to_owned(),
                name: method.to_owned(),
                suggestions: base::text::closest(method, &names),
            });
        };
        Ok((src, m))
    }
}

impl provider::Judge for Sdk {
    fn status(&self, source: &SourceSpec, p: &ProviderSpec) -> Status {
        Sdk::status(self, source, p)
    }
}

impl sandbox::SdkHost for Sdk {
    fn catalog(&self) -> std::collections::BTreeMap<String, Vec<String>> {
        self.registry.catalog()
    }

    fn spec(&self) -> Value {
        self.public_json()
    }

    fn call(
        self: Arc<Self>,
        source: String,
        method: String,
        params: Value,
    ) -> futures::future::BoxFuture<'static, Result<Arc<SdkAnswer>, String>> {
        Box::pin(async move {
            Sdk::call(&self, &source, &method, params).await.map_err(|e| e.to_string())
        })
    }
}
