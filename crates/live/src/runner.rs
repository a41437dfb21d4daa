//! Panel runs: one at a time per panel, bounded overall, results cached per
//! (dashboard, panel, code hash, vars) and checked against the panel type's data contract.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Map, Value};
use tokio::sync::Semaphore;

use base::provenance::Provenance;
use dashboard::Panel;
use dashboard::data::check_data;
use sandbox::{ErrorKind, ExecError, PanelContext, Sandbox};

/// How long a cached result is reused by [`Runner::run`] (refreshes always run).
const REUSE_FOR: Duration = Duration::from_secs(10);

/// State of a panel's latest result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Data available.
    Ok,
    /// The last run failed.
    Error,
    /// The last run failed for a provider's reason, and the last good data is shown.
    Stale,
    /// Not run yet.
    Pending,
}

/// A panel's last successful result, kept for when a later run fails for a provider's reason
/// (in memory, and durably through a [`Keeper`]).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Good {
    /// The data.
    pub ok: RunOk,
    /// When it was produced (unix ms).
    pub at: i64,
}

/// The last good data a failed run falls back on, and since when the panel fails.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Kept {
    /// The last good result.
    pub good: Good,
    /// When this panel's runs started failing (unix ms).
    pub failing_since: i64,
}

/// Keeps panels' last good results durably, so a restart or another node has them (the
/// dashboards layer implements it over the store). Keyed by dashboard, panel and the run's
/// fingerprint (code and variable values).
pub trait Keeper: Send + Sync {
    /// Keeps `good` (fire and forget: a failure is logged, never slows the run).
    fn keep(&self, dashboard: &str, panel: &str, fingerprint: &str, good: &Good);
    /// The kept result, if any.
    fn kept<'a>(
        &'a self,
        dashboard: &'a str,
        panel: &'a str,
        fingerprint: &'a str,
    ) -> base::BoxFuture<'a, Option<Good>>;
}

/// A successful run's data.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunOk {
    /// What the code returned (checked against the panel type).
    pub data: Value,
    /// Rows in `data`.
    pub row_count: usize,
    /// Where the data came from, one entry per provider its `sdk` calls reached.
    pub provenance: Vec<Provenance>,
}

/// The outcome of one panel run.
#[derive(Debug, Clone)]
pub struct PanelRun {
    /// Data or the error (sandbox error, or a data-contract violation of kind `result`).
    pub result: Result<RunOk, ExecError>,
    /// Wall time of the run.
    pub duration: Duration,
    /// When it finished (unix ms).
    pub finished_at: i64,
    /// When the run failed for a provider's reason: the last good data to show instead.
    pub kept: Option<Kept>,
}

/// A [`PanelRun`] as JSON, for another node (see `live::RefreshCoordinator`).
#[derive(Debug, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct SharedRun {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ok: Option<RunOk>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<ExecError>,
    duration_ms: f64,
    finished_at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    kept: Option<Kept>,
}

impl PanelRun {
    /// This run as JSON text, for another node.
    pub fn to_shared(&self) -> String {
        let (ok, error) = match &self.result {
            Ok(ok) => (Some(ok.clone()), None),
            Err(e) => (None, Some(e.clone())),
        };
        let shared = SharedRun {
            ok,
            error,
            duration_ms: self.duration.as_secs_f64() * 1e3,
            finished_at: self.finished_at,
            kept: self.kept.clone(),
        };
        serde_json::to_string(&shared).unwrap_or_default()
    }

    /// A run another node shared ([`PanelRun::to_shared`]); `None` for text that is not one.
    pub fn from_shared(text: &str) -> Option<Self> {
        let s: SharedRun = serde_json::from_str(text).ok()?;
        let result = match (s.ok, s.error) {
            (Some(ok), None) => Ok(ok),
            (None, Some(e)) => Err(e),
            _ => return None,
        };
        let duration = Duration::from_secs_f64((s.duration_ms / 1e3).clamp(0.0, 3600.0));
        Some(Self { result, duration, finished_at: s.finished_at, kept: s.kept })
    }
}

type Key = (String, String);

pub(super) struct Runner {
    sandbox: Sandbox,
    permits: Semaphore,
    locks: Mutex<HashMap<Key, Arc<tokio::sync::Mutex<()>>>>,
    cache: Mutex<HashMap<Key, (u64, PanelRun, Instant)>>,
    /// Executions that reached the sandbox.
    executed: std::sync::atomic::AtomicU64,
    /// Per panel: the last good result of its latest fingerprint, and since when it fails
    /// (for its fingerprint).
    good: Mutex<HashMap<Key, (u64, Good)>>,
    failing: Mutex<HashMap<Key, (u64, i64)>>,
    keeper: std::sync::OnceLock<Arc<dyn Keeper>>,
}

fn locked<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn fingerprint(panel: &Panel, vars: &Map<String, Value>) -> u64 {
    let kind = serde_json::to_string(&panel.kind).unwrap_or_default();
    let text = format!("{kind}\u{0}{}\u{0}{}", panel.code, Value::Object(vars.clone()));
    xxhash_rust::xxh3::xxh3_64(text.as_bytes())
}

impl Runner {
    pub fn new(sandbox: Sandbox, max_concurrent: usize) -> Self {
        Self {
            sandbox,
            permits: Semaphore::new(max_concurrent.max(1)),
            locks: Mutex::default(),
            cache: Mutex::default(),
            executed: std::sync::atomic::AtomicU64::new(0),
            good: Mutex::default(),
            failing: Mutex::default(),
            keeper: std::sync::OnceLock::new(),
        }
    }

    /// Keeps last good results durably through `keeper` from now on (set once).
    pub fn keep_with(&self, keeper: Arc<dyn Keeper>) {
        let _ = self.keeper.set(keeper);
    }

    /// Executions that reached the sandbox since start (cache hits excluded).
    pub fn executed(&self) -> u64 {
        self.executed.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn lock_for(&self, key: &Key) -> Arc<tokio::sync::Mutex<()>> {
        let mut locks = self.locks.lock().unwrap_or_else(|p| p.into_inner());
        locks.entry(key.clone()).or_default().clone()
    }

    /// A recent result for the same code and vars, or a new run.
    #[base::boxed]
    pub async fn run(&self, dashboard: &str, panel: &Panel, vars: &Map<String, Value>) -> PanelRun {
        self.run_inner(dashboard, panel, vars, false).await
    }

    /// Always runs (refresh), still one run per panel at a time.
    #[base::boxed]
    pub async fn run_fresh(
        &self,
        dashboard: &str,
        panel: &Panel,
        vars: &Map<String, Value>,
    ) -> PanelRun {
        self.run_inner(dashboard, panel, vars, true).await
    }

    async fn run_inner(
        &self,
        dashboard: &str,
        panel: &Panel,
        vars: &Map<String, Value>,
        fresh: bool,
    ) -> PanelRun {
        let key = (dashboard.to_owned(), panel.id.clone());
        let fp = fingerprint(panel, vars);
        let lock = self.lock_for(&key);
        let requested = Instant::now();
        let _one_at_a_time = lock.lock().await;
        {
            let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
            if let Some((f, run, at)) = cache.get(&key)
                && *f == fp
                && (if fresh { *at >= requested } else { at.elapsed() < REUSE_FOR })
            {
                // A run that finished while we waited for the lock is as fresh as ours would be.
                return run.clone();
            }
        }
        let mut run = self.execute(&panel.code, Some(panel), vars).await;
        self.remember(&key, fp, &mut run).await;
        self.cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, (fp, run.clone(), Instant::now()));
        run
    }

    /// Keeps a good result (in memory and through the keeper); gives a run that failed for a
    /// provider's reason the last good result of the same code and values, if there is one.
    async fn remember(&self, key: &Key, fp: u64, run: &mut PanelRun) {
        let fingerprint = format!("{fp:016x}");
        let error = match &run.result {
            Ok(ok) => {
                let good = Good { ok: ok.clone(), at: run.finished_at };
                if let Some(k) = self.keeper.get() {
                    k.keep(&key.0, &key.1, &fingerprint, &good);
                }
                locked(&self.good).insert(key.clone(), (fp, good));
                locked(&self.failing).remove(key);
                return;
            }
            Err(e) => e,
        };
        if error.kind != ErrorKind::Provider {
            locked(&self.failing).remove(key);
            return;
        }
        let failing_since = {
            let mut failing = locked(&self.failing);
            let entry = failing.entry(key.clone()).or_insert((fp, run.finished_at));
            if entry.0 != fp {
                *entry = (fp, run.finished_at);
            }
            entry.1
        };
        let held = locked(&self.good).get(key).filter(|(f, _)| *f == fp).map(|(_, g)| g.clone());
        let good = match held {
            Some(g) => Some(g),
            None => match self.keeper.get() {
                Some(k) => {
                    let found = k.kept(&key.0, &key.1, &fingerprint).await;
                    if let Some(g) = &found {
                        locked(&self.good).insert(key.clone(), (fp, g.clone()));
                    }
                    found
                }
                None => None,
            },
        };
        run.kept = good.map(|good| Kept { good, failing_since });
    }

    /// Runs code that belongs to no dashboard (preview); no cache.
    #[base::boxed]
    pub async fn preview(&self, code: &str, vars: &Map<String, Value>) -> PanelRun {
        self.execute(code, None, vars).await
    }

    async fn execute(
        &self,
        code: &str,
        panel: Option<&Panel>,
        vars: &Map<String, Value>,
    ) -> PanelRun {
        let started = Instant::now();
        let _permit = self.permits.acquire().await;
        self.executed.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let ctx = PanelContext { vars: vars.clone() };
        let result = match self.sandbox.run_panel(code, &ctx).await {
            Ok(out) => match panel {
                Some(p) => match check_data(p.kind, &out.value) {
                    Ok(row_count) => {
                        Ok(RunOk { data: out.value, row_count, provenance: out.provenance })
                    }
                    Err(e) => Err(ExecError::new(ErrorKind::Result, e.0)),
                },
                None => {
                    let row_count = out.value.as_array().map_or(1, Vec::len);
                    Ok(RunOk { data: out.value, row_count, provenance: out.provenance })
                }
            },
            Err(e) => Err(e),
        };
        base::telemetry::panel_run(result.is_ok());
        PanelRun { result, duration: started.elapsed(), finished_at: super::unix_ms(), kept: None }
    }
}
