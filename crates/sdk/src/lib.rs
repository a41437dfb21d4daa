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
pub mod health;
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

use base::outage::{Cause, Outage};
use base::provenance::Provenance;
pub use config::{DEFAULT_WAIT, SdkConfig, WAIT_VAR};
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
    /// The provider failed: unreachable, not answering, busy, down, its key refused or
    /// missing, its answer unreadable. Not the calling code's fault.
    #[error("{source_name}.{method}: {message}")]
    Provider {
        /// The source.
        source_name: String,
        /// The method.
        method: String,
        /// What went wrong, for a model: host, status, attempts, what to do.
        message: String,
        /// The provider, the kind of failure and the analyst's sentence.
        outage: Box<Outage>,
    },
    /// The backing failed otherwise (a request the provider rejected, a missing file).
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

impl SdkError {
    /// The provider's failure, when a provider is to blame.
    pub fn outage(&self) -> Option<&Outage> {
        match self {
            Self::Provider { outage, .. } => Some(outage),
            _ => None,
        }
    }

    /// Whether another provider may serve instead: this one is down, slow or busy.
    fn unavailable(&self) -> bool {
        self.outage().is_some_and(|o| o.cause.transient())
    }
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
    /// Per HTTP provider: its rate limit, circuit breaker and share of connections.
    gates: std::collections::BTreeMap<String, Gate>,
    /// How each HTTP provider is doing.
    health: health::Health,
    /// Whether the next provider serves when one is unavailable: starts as the configuration's
    /// [`SdkConfig::fallback`], switched at run time by an administrator.
    fallback: std::sync::atomic::AtomicBool,
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

    /// Whether `url` may be requested under the outbound policy (an alert channel's webhook).
    pub fn check_outbound(&self, url: &str) -> Result<(), http::Error> {
        self.http.check_url(url).map(drop)
    }

    /// POSTs JSON to `url` (an alert channel's webhook) through the same client and outbound
    /// policy as every `http` backing; see [`http::Client::post_json`].
    #[base::boxed]
    pub async fn post_json(
        &self,
        url: &str,
        body: Vec<u8>,
        headers: Vec<(String, String)>,
        timeout: std::time::Duration,
    ) -> Result<u16, http::Error> {
        self.http.post_json(url, body, headers, timeout).await
    }
}

/// A provider's status for Settings → Data providers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HealthStatus {
    /// Its last call succeeded.
    Live,
    /// Its last call failed.
    Degraded,
    /// It failed again and again: calls to it fail at once until a probe succeeds.
    Down,
    /// Not called since the server started.
    Unknown,
    /// It needs a key that is not set.
    NeedsKey,
    /// Switched off here (offline mode, or its switch).
    Off,
}

/// One HTTP provider's health.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderHealth {
    /// The provider (`binance`).
    pub provider: String,
    /// Its human-readable name.
    pub name: String,
    /// Its status.
    pub status: HealthStatus,
    /// Since when, last success, last failure, latency.
    #[serde(flatten)]
    pub record: health::Record,
}

/// Every HTTP provider's health, and the switches that decide what a failure leaves.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HealthReport {
    /// Offline mode: demo data and files only.
    pub offline: bool,
    /// Whether the next provider (often demo data) serves when one is unavailable.
    pub fallback: bool,
    /// The providers, by name.
    pub providers: Vec<ProviderHealth>,
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
#[derive(Debug)]
struct Gate {
    bucket: Option<limit::Bucket>,
    breaker: limit::Breaker,
    /// Requests in flight to it: one provider never takes every connection.
    slots: tokio::sync::Semaphore,
    /// Set when a caller stopped waiting for it (it is not answering) until any of its requests
    /// ends: meanwhile calls fail at once instead of each waiting [`SdkConfig::wait`] again.
    stalled: std::sync::atomic::AtomicBool,
    /// Wakes the callers waiting on it when it is found stalled.
    stall: tokio::sync::Notify,
    /// A background probe is calling it until it is back.
    probing: std::sync::atomic::AtomicBool,
}

/// One call being served: the method, the provider chosen for it and the checked params.
#[derive(Clone, Copy)]
struct Call<'a> {
    src: &'a SourceSpec,
    m: &'a MethodSpec,
    chosen: &'a ProviderSpec,
    params: &'a serde_json::Map<String, Value>,
}

impl Call<'_> {
    /// The call as owned values, for a task that outlives the caller.
    fn owned(&self) -> OwnedCall {
        OwnedCall {
            source: self.src.name.clone(),
            method: self.m.name.clone(),
            chosen: self.chosen.clone(),
            params: self.params.clone(),
        }
    }
}

/// A [`Call`] a background task keeps (a renewal, a probe, a fetch nobody waits for).
struct OwnedCall {
    source: String,
    method: String,
    chosen: ProviderSpec,
    params: serde_json::Map<String, Value>,
}

impl OwnedCall {
    /// The call again, on `sdk`'s registry.
    fn on<'a>(&'a self, sdk: &'a Sdk) -> Result<Call<'a>, SdkError> {
        let (src, m) = sdk.resolve(&self.source, &self.method)?;
        Ok(Call { src, m, chosen: &self.chosen, params: &self.params })
    }
}

/// How long a provider that is down is probed in the background.
const PROBE_FOR: std::time::Duration = std::time::Duration::from_secs(3600);

/// Most requests in flight to one provider at once.
pub const PROVIDER_SLOTS: usize = 8;

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
        let gates = provider::every_http(&registry)
            .map(|(_, _, p)| {
                let limit = registry.provider(&p.provider).and_then(|d| d.rate_limit);
                let bucket = limit.map(|l| limit::Bucket::new(l.requests, l.per(), now));
                let gate = Gate {
                    bucket,
                    breaker: limit::Breaker::new(limit::BREAKER_THRESHOLD, config.cooldown()),
                    slots: tokio::sync::Semaphore::new(PROVIDER_SLOTS),
                    stalled: std::sync::atomic::AtomicBool::new(false),
                    stall: tokio::sync::Notify::new(),
                    probing: std::sync::atomic::AtomicBool::new(false),
                };
                (p.provider, gate)
            })
            .collect();
        let cache = cache::Cache::new(config.cache_bytes.unwrap_or(cache::DEFAULT_BUDGET));
        let fallback = std::sync::atomic::AtomicBool::new(config.fallback);
        Ok(Self {
            registry,
            config,
            cache,
            http,
            upstream_calls: AtomicU64::new(0),
            gates,
            health: health::Health::default(),
            fallback,
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

    /// Whether the next provider (demo data, where it is next) serves when one is unavailable.
    pub fn fallback(&self) -> bool {
        self.fallback.load(Ordering::Relaxed)
    }

    /// Switches [`Sdk::fallback`] from now on: an administrator's choice, or (`None`) the
    /// configuration's.
    pub fn set_fallback(&self, choice: Option<bool>) {
        let on = choice.unwrap_or(self.config.fallback);
        if self.fallback.swap(on, Ordering::Relaxed) != on {
            tracing::info!(target: "sdk::health", "fallback to the next provider when one is unavailable: {}", if on { "on" } else { "off" });
        }
    }

    /// Every HTTP provider with its status here (needs a key, off) and its health as calls
    /// found it, in name order: what Settings → Data providers shows.
    pub fn health(&self) -> HealthReport {
        let mut providers: Vec<ProviderHealth> = Vec::new();
        for (src, _, p) in provider::every_http(&self.registry) {
            if providers.iter().any(|h| h.provider == p.provider) {
                continue;
            }
            let record = self.health.get(&p.provider);
            let status = match self.status(src, &p) {
                Status::NeedsKey(_) => HealthStatus::NeedsKey,
                Status::Disabled(_) => HealthStatus::Off,
                Status::Live | Status::Demo => match record.state {
                    health::State::Unknown => HealthStatus::Unknown,
                    health::State::Live => HealthStatus::Live,
                    health::State::Degraded => HealthStatus::Degraded,
                    health::State::Down => HealthStatus::Down,
                },
            };
            let name = self
                .registry
                .provider(&p.provider)
                .map_or_else(|| p.provider.clone(), |d| d.display_name.clone());
            providers.push(ProviderHealth { provider: p.provider, name, status, record });
        }
        providers.sort_by(|a, b| a.provider.cmp(&b.provider));
        HealthReport { offline: self.config.offline, fallback: self.fallback(), providers }
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
    ///
    /// A provider's failure is [`SdkError::Provider`], with its [`Outage`]. An HTTP provider
    /// that has not answered within [`SdkConfig::wait`] fails the call as not answering while
    /// its request goes on in the background and fills the cache for the next call.
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
            let chosen =
                match provider::choose(src, providers.clone(), forced.as_deref(), &params, self) {
                    Ok(chosen) => chosen,
                    Err(e) => {
                        let mut message = e.to_string();
                        if !failed.is_empty() {
                            message = format!("{}; before that: {message}", failed.join("; "));
                        }
                        return Err(self.unserved(src, m, &providers, &forced, &params, message));
                    }
                };
            match self.serve(Call { src, m, chosen: &chosen, params: &params }).await {
                Err(e) if e.unavailable() && self.fallback() && forced.is_none() => {
                    failed.push(format!("{} failed: {e}", chosen.provider));
                    providers.retain(|p| p.provider != chosen.provider);
                }
                other => return other,
            }
        }
    }

    /// Why no provider serves a call: a provider's failure when the first one that applies
    /// needs a key or is switched off, else the call's.
    fn unserved(
        &self,
        src: &SourceSpec,
        m: &MethodSpec,
        providers: &[ProviderSpec],
        forced: &Option<String>,
        params: &serde_json::Map<String, Value>,
        message: String,
    ) -> SdkError {
        let blocked = providers
            .iter()
            .filter(|p| forced.as_ref().is_none_or(|f| *f == p.provider))
            .filter(|p| p.mismatch(params).is_none())
            .find_map(|p| match self.status(src, p) {
                Status::NeedsKey(var) => Some((p, Cause::NeedsKey, var)),
                Status::Disabled(var) => Some((p, Cause::Off, var)),
                Status::Live | Status::Demo => None,
            });
        match blocked {
            Some((p, cause, var)) => {
                let outage = self.outage(&p.provider, cause, message.clone(), None).setting(var);
                self.provider_error(src, m, message, outage)
            }
            None => SdkError::Upstream {
                source_name: src.name.clone(),
                method: m.name.clone(),
                message,
            },
        }
    }

    fn provider_error(
        &self,
        src: &SourceSpec,
        m: &MethodSpec,
        message: String,
        outage: Outage,
    ) -> SdkError {
        SdkError::Provider {
            source_name: src.name.clone(),
            method: m.name.clone(),
            message,
            outage: Box::new(outage),
        }
    }

    /// An outage of `provider` (its display name from its definition file).
    fn outage(&self, provider: &str, cause: Cause, details: String, url: Option<&str>) -> Outage {
        let name = self.registry.provider(provider).map_or(provider, |d| d.short());
        let host = url.and_then(|u| reqwest::Url::parse(u).ok()?.host_str().map(str::to_owned));
        Outage::new(provider, name, cause, details).host(host)
    }

    /// Answers a call with one provider: cache (a stale HTTP answer is served at once while one
    /// background fetch renews it), coalescing, then its backing. An HTTP fetch runs as its own
    /// task, waited on for at most [`SdkConfig::wait`].
    async fn serve(&self, call: Call<'_>) -> Result<Arc<SdkAnswer>, SdkError> {
        let Call { src, m, chosen, params } = call;
        base::telemetry::data_call(&chosen.provider);
        let now = self.config.asof.unwrap_or_else(Utc::now);
        // Builtin data is a pure function of (call, day): the day is part of the key so the
        // cache never serves yesterday's series after midnight.
        let key = cache::Key::new(&src.name, &m.name, &chosen.provider, params, now.date_naive());
        let ttl = std::time::Duration::from_secs(m.ttl_secs.unwrap_or(spec::DEFAULT_TTL_SECS));
        let Backing::Http(h) = &chosen.backing else {
            return self.fill(key, ttl, call, now).await;
        };
        if let Some((answer, renew)) = self.cache.stale(&key) {
            if renew {
                self.renew(call, key, ttl);
            }
            return Ok(answer);
        }
        let Some(me) = self.me.upgrade() else {
            return self.fill(key, ttl, call, now).await;
        };
        let gate = self.gates.get(&chosen.provider);
        // Registered before the flag is read, so a stall found meanwhile wakes this caller.
        let mut notified = std::pin::pin!(gate.map(|g| g.stall.notified()));
        if let Some(n) = notified.as_mut().as_pin_mut() {
            n.enable();
        }
        let stalled = async {
            match notified.as_mut().as_pin_mut() {
                Some(n) => n.await,
                None => std::future::pending().await,
            }
        };
        let known_stalled = gate.is_some_and(|g| g.stalled.load(Ordering::Acquire));
        let owned = call.owned();
        // Not cancelled when this caller stops waiting: the answer fills the cache.
        let fetch = async move {
            let call = owned.on(&me)?;
            me.fill(key, ttl, call, now).await
        };
        let wait = self.config.wait();
        if known_stalled {
            // Its requests in flight will say when it answers; one more goes only while it has
            // a free slot, so a stalled provider never piles up requests.
            if gate.is_some_and(|g| g.slots.available_permits() > 0) {
                tokio::spawn(fetch);
            }
            return Err(self.not_answering(call, h, wait, true));
        }
        let task = tokio::spawn(fetch);
        tokio::select! {
            joined = tokio::time::timeout(wait, task) => match joined {
                Ok(Ok(result)) => result,
                Ok(Err(lost)) => Err(SdkError::Upstream {
                    source_name: src.name.clone(),
                    method: m.name.clone(),
                    message: format!("the call was lost: {lost}"),
                }),
                Err(_) => {
                    if let Some(g) = gate
                        && !g.stalled.swap(true, Ordering::AcqRel)
                    {
                        g.stall.notify_waiters();
                    }
                    Err(self.not_answering(call, h, wait, false))
                }
            },
            () = stalled => Err(self.not_answering(call, h, wait, true)),
        }
    }

    /// A call to `chosen` that stopped waiting for it: its own wait ran out, or (`known`) the
    /// provider was found not answering by another call. Its health says so.
    fn not_answering(
        &self,
        call: Call<'_>,
        h: &http::HttpBacking,
        wait: std::time::Duration,
        known: bool,
    ) -> SdkError {
        let Call { src, m, chosen, params } = call;
        let env = |k: &str| self.config.env(k);
        let url = http::endpoint(h, params, &env);
        let place = url.as_deref().unwrap_or(&chosen.provider);
        let details = if known {
            format!(
                "{place}: the provider is not answering (a request to it has waited over {} ms); \
                 calls fail at once until it answers",
                wait.as_millis()
            )
        } else {
            format!(
                "no answer from {place} within {} ms; the request goes on in the background and \
                 its answer serves the next call",
                wait.as_millis()
            )
        };
        let outage = self
            .outage(&chosen.provider, Cause::Timeout, details.clone(), url.as_deref())
            .setting(config::WAIT_VAR);
        if !known {
            self.health.failure(&chosen.provider, &outage, false, Utc::now().timestamp_millis());
        }
        let message = format!("provider {} is not answering: {details}", chosen.provider);
        self.provider_error(src, m, message, outage)
    }

    /// The cached answer, an identical call in flight, or a fetch from the backing.
    async fn fill(
        &self,
        key: cache::Key,
        ttl: std::time::Duration,
        call: Call<'_>,
        now: DateTime<Utc>,
    ) -> Result<Arc<SdkAnswer>, SdkError> {
        self.cache
            .get_or_fetch(key, ttl, || async {
                let fetched = self.fetch(call, now).await;
                base::telemetry::data_fetch(&call.chosen.provider, fetched.is_ok());
                fetched
            })
            .await
    }

    /// Fetches a stale answer's replacement in the background (on this SDK's own `Arc`; an SDK
    /// not built by [`Sdk::shared`] has none and fetches on the next call instead).
    fn renew(&self, call: Call<'_>, key: cache::Key, ttl: std::time::Duration) {
        let Some(me) = self.me.upgrade() else {
            self.cache.renewal_failed(&key);
            return;
        };
        let owned = call.owned();
        tokio::spawn(async move {
            let Ok(call) = owned.on(&me) else { return };
            let now = me.config.asof.unwrap_or_else(Utc::now);
            match me.fetch(call, now).await {
                Ok(answer) => me.cache.put(key, ttl, Arc::new(answer)),
                Err(e) => {
                    let (source, method) = (&owned.source, &owned.method);
                    tracing::debug!(%source, %method, error = %e, "renewing a stale answer failed");
                    me.cache.renewal_failed(&key);
                }
            }
        });
    }

    /// One call to a provider's backing (no cache). An HTTP provider's outcome feeds its
    /// breaker and its health.
    async fn fetch(&self, call: Call<'_>, now: DateTime<Utc>) -> Result<SdkAnswer, SdkError> {
        let Call { src, m, chosen, params } = call;
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
                let value = self.fetch_http(call, h).await?;
                let env = |k: &str| self.config.env(k);
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

    /// One HTTP call through the provider's gate: its breaker (a provider known to be down
    /// fails at once), its share of connections, its pace; the outcome recorded in its breaker
    /// and health.
    async fn fetch_http(&self, call: Call<'_>, h: &http::HttpBacking) -> Result<Value, SdkError> {
        let Call { src, m, chosen, params } = call;
        let provider = chosen.provider.as_str();
        let env = |k: &str| self.config.env(k);
        let url = http::endpoint(h, params, &env);
        let gate = self.gates.get(provider);
        if let Some(g) = gate
            && let Err(open) = g.breaker.admit(std::time::Instant::now())
        {
            let last = self.health.get(provider).last_error;
            let cause = last.as_ref().map_or(Cause::Unreachable, |o| o.cause);
            let mut outage = self.outage(provider, cause, open.to_string(), url.as_deref());
            outage.retry_in_ms = u64::try_from(open.retry_in.as_millis()).ok();
            let outage = self.with_setting(outage);
            let message = format!("provider {provider} {open}{}", self.fallback_hint());
            return Err(self.provider_error(src, m, message, outage));
        }
        // Waiting for a slot counts against the caller's wait like the request itself.
        let _slot = match gate {
            Some(g) => g.slots.acquire().await.ok(),
            None => None,
        };
        let pace = gate.and_then(|g| g.bucket.as_ref());
        let started = std::time::Instant::now();
        let fetched = http::fetch(&self.http, h, params, &env, pace).await;
        let at = Utc::now().timestamp_millis();
        if let Some(g) = gate {
            // It answered (or failed otherwise): callers wait for it again.
            g.stalled.store(false, Ordering::Release);
        }
        let failure = match fetched {
            Ok(value) => {
                if let Some(g) = gate {
                    g.breaker.record(std::time::Instant::now(), Ok(()));
                }
                self.health.success(provider, started.elapsed().as_secs_f64() * 1e3, at);
                return Ok(value);
            }
            Err(http::Error::Refused(refused)) => {
                return Err(SdkError::Refused {
                    source_name: src.name.clone(),
                    method: m.name.clone(),
                    refused,
                });
            }
            Err(http::Error::Upstream(message)) => {
                return Err(SdkError::Upstream {
                    source_name: src.name.clone(),
                    method: m.name.clone(),
                    message: format!("provider {provider}: {message}"),
                });
            }
            Err(http::Error::Unavailable(message, cause)) => {
                if let Some(g) = gate {
                    g.breaker.record(std::time::Instant::now(), Err(&message));
                }
                let text = format!(
                    "provider {provider} is unavailable: {message}; try again later{}",
                    self.fallback_hint()
                );
                (text, message, cause)
            }
            Err(http::Error::Failed(message, cause)) => {
                (format!("provider {provider}: {message}"), message, cause)
            }
        };
        let (text, details, cause) = failure;
        let outage = self.with_setting(self.outage(provider, cause, details, url.as_deref()));
        let down = gate.is_some_and(|g| g.breaker.is_open());
        self.health.failure(provider, &outage, down, at);
        if down {
            self.probe_until_back(call);
        }
        Err(self.provider_error(src, m, text, outage))
    }

    /// A provider is down: calls the backing again in the background each time its breaker
    /// lets one through, until it answers (or for an hour), so its health comes back without a
    /// panel asking. One such probe per provider at a time.
    fn probe_until_back(&self, call: Call<'_>) {
        let Some(g) = self.gates.get(&call.chosen.provider) else { return };
        let Some(me) = self.me.upgrade() else { return };
        if g.probing.swap(true, Ordering::AcqRel) {
            return;
        }
        let owned = call.owned();
        tokio::spawn(async move {
            let started = std::time::Instant::now();
            while started.elapsed() < PROBE_FOR {
                tokio::time::sleep(me.config.cooldown() + std::time::Duration::from_millis(100))
                    .await;
                let Ok(call) = owned.on(&me) else { break };
                let now = me.config.asof.unwrap_or_else(Utc::now);
                if me.fetch(call, now).await.is_ok() {
                    break;
                }
            }
            if let Some(g) = me.gates.get(&owned.chosen.provider) {
                g.probing.store(false, Ordering::Release);
            }
        });
    }

    /// The model's hint after a provider failure: the variable that lets the next one serve.
    fn fallback_hint(&self) -> &'static str {
        if self.fallback() {
            ""
        } else {
            "; BOARDSMITH_DATA_FALLBACK=1 would let the next provider serve"
        }
    }

    /// The setting an operator may change about `outage`: the provider's key for a refused
    /// one, else fallback to the next provider when it is off.
    fn with_setting(&self, outage: Outage) -> Outage {
        let key = self.registry.provider(&outage.provider).and_then(|d| d.key.as_ref());
        match (outage.cause, key) {
            (Cause::BadKey, Some(auth)) => {
                let var = auth.env.clone();
                outage.setting(var)
            }
            (c, _) if c.transient() && !self.fallback() => outage.setting(provider::FALLBACK_VAR),
            _ => outage,
        }
    }

    /// Calls each live HTTP provider once, concurrently, with the default params of the first
    /// method it can serve with them (forcing that provider), and reports how it went. For
    /// `boardsmith sdk check`: whether this machine reaches its providers.
    #[base::boxed]
    pub async fn check(&self) -> Vec<Check> {
        let mut probes: Vec<(String, String, String)> = Vec::new();
        for (src, m, p) in provider::every_http(&self.registry) {
            if probes.iter().any(|(name, ..)| *name == p.provider)
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
    ) -> futures::future::BoxFuture<'static, Result<Arc<SdkAnswer>, sandbox::SdkFailure>> {
        Box::pin(async move {
            Sdk::call(&self, &source, &method, params).await.map_err(|e| sandbox::SdkFailure {
                message: e.to_string(),
                outage: e.outage().cloned(),
            })
        })
    }

    fn waited_on(&self, source: &str, method: &str) -> Option<Outage> {
        let (src, m) = self.resolve(source, method).ok()?;
        let p = provider::providers_of(src, m).into_iter().find(|p| {
            matches!(p.backing, Backing::Http(_)) && self.status(src, p) == Status::Live
        })?;
        let details = format!("{source}.{method} was still waiting for {}", p.provider);
        Some(self.with_setting(self.outage(&p.provider, Cause::Timeout, details, None)))
    }
}
