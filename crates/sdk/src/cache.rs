//! The shared response cache: per-method TTL plus request coalescing. Identical calls in flight
//! or within the TTL cause one backing call (ten panels reading the same kline → one fetch).
//! Errors are not cached: the next caller tries again.
//!
//! Stale-while-revalidate: for one more TTL after an answer expires, [`Cache::stale`] hands it
//! out at once and tells exactly one caller to renew it in the background ([`Cache::put`] when
//! that succeeds, [`Cache::renewal_failed`] when not), so a scheduled refresh never waits on a
//! provider and the provider still sees one request per key per TTL.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::NaiveDate;
use serde_json::{Map, Value};
use tokio::sync::OnceCell;

use super::SdkError;
use sandbox::SdkAnswer;

/// Identity of a call: source, method, provider, canonical params and the data day.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Key(String);

impl Key {
    /// Builds the key. Params are canonical because validation emits them in spec order.
    pub fn new(
        source: &str,
        method: &str,
        provider: &str,
        params: &Map<String, Value>,
        day: NaiveDate,
    ) -> Self {
        Self(format!("{source}.{method}@{provider}|{day}|{}", Value::Object(params.clone())))
    }
}

struct Entry {
    cell: Arc<OnceCell<Arc<SdkAnswer>>>,
    created: Instant,
    ttl: Duration,
    /// A background renewal of this stale answer is under way.
    renewing: bool,
}

impl Entry {
    fn new(cell: Arc<OnceCell<Arc<SdkAnswer>>>, created: Instant, ttl: Duration) -> Self {
        Self { cell, created, ttl, renewing: false }
    }
}

/// TTL cache with coalescing.
#[derive(Default)]
pub struct Cache {
    entries: Mutex<HashMap<Key, Entry>>,
}

/// Above this many entries, expired ones are swept on insert.
const SWEEP_AT: usize = 4096;
/// The most entries kept: the bound on the cache's size whatever the TTLs.
const MAX_ENTRIES: usize = 8192;
/// Longer than any fetch can take (timeouts and retries included): an empty cell older than
/// this was left by a failed fetch.
const IN_FLIGHT: Duration = Duration::from_secs(120);

impl Cache {
    /// Returns the cached value for `key`, joins an in-flight fetch, or runs `fetch`.
    pub async fn get_or_fetch<F, Fut>(
        &self,
        key: Key,
        ttl: Duration,
        fetch: F,
    ) -> Result<Arc<SdkAnswer>, SdkError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<SdkAnswer, SdkError>>,
    {
        let cell = {
            let mut map = self.entries.lock().unwrap_or_else(|p| p.into_inner());
            let now = Instant::now();
            let fresh = |e: &Entry| !e.cell.initialized() || now.duration_since(e.created) < e.ttl;
            match map.get(&key) {
                Some(e) if fresh(e) => e.cell.clone(),
                _ => {
                    if map.len() >= SWEEP_AT {
                        // Expired answers go, and so do cells left empty by a failed fetch
                        // (their key is retried on a new cell) once no fetch can still be on them.
                        let settled = |e: &Entry| {
                            if e.cell.initialized() {
                                // Kept while it may still be served stale.
                                now.duration_since(e.created) < e.ttl * 2
                            } else {
                                now.duration_since(e.created) < IN_FLIGHT
                            }
                        };
                        map.retain(|_, e| settled(e));
                    }
                    if map.len() >= MAX_ENTRIES {
                        // Still full of live answers: the oldest quarter makes room.
                        let mut ages: Vec<Instant> = map.values().map(|e| e.created).collect();
                        ages.sort_unstable();
                        let cutoff = ages[ages.len() / 4];
                        map.retain(|_, e| e.created > cutoff);
                    }
                    let cell = Arc::new(OnceCell::new());
                    map.insert(key, Entry::new(cell.clone(), now, ttl));
                    cell
                }
            }
        };
        cell.get_or_try_init(|| async { fetch().await.map(Arc::new) }).await.cloned()
    }

    /// An answer past its TTL but within one more: `(answer, renew)`, `renew` true for exactly
    /// one caller until the renewal ends. `None` when there is nothing to serve stale (absent,
    /// still fresh, in flight, or too old).
    pub fn stale(&self, key: &Key) -> Option<(Arc<SdkAnswer>, bool)> {
        let mut map = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let e = map.get_mut(key)?;
        let age = Instant::now().duration_since(e.created);
        let answer = e.cell.get()?.clone();
        if age < e.ttl || age >= e.ttl * 2 {
            return None;
        }
        let renew = !std::mem::replace(&mut e.renewing, true);
        Some((answer, renew))
    }

    /// Stores a renewed answer, fresh from now.
    pub fn put(&self, key: Key, ttl: Duration, answer: Arc<SdkAnswer>) {
        let cell = Arc::new(OnceCell::new_with(Some(answer)));
        let mut map = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        map.insert(key, Entry::new(cell, Instant::now(), ttl));
    }

    /// A renewal failed: the stale answer stays (until it is too old) and the next caller tries.
    pub fn renewal_failed(&self, key: &Key) {
        let mut map = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = map.get_mut(key) {
            e.renewing = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn answer(v: i64) -> SdkAnswer {
        SdkAnswer::new(Value::from(v), base::provenance::Provenance::demo(None, 0))
    }

    fn key(s: &str) -> Key {
        Key::new(s, "m", "p", &Map::new(), NaiveDate::from_ymd_opt(2026, 1, 2).unwrap())
    }

    #[tokio::test]
    async fn concurrent_identical_calls_coalesce() {
        let cache = Cache::default();
        let calls = AtomicU32::new(0);
        let fetch = || async {
            calls.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(20)).await;
            Ok(answer(7))
        };
        let ttl = Duration::from_secs(60);
        let all =
            futures::future::join_all((0..10).map(|_| cache.get_or_fetch(key("a"), ttl, fetch)))
                .await;
        assert!(all.iter().all(|r| r.as_ref().is_ok_and(|a| a.value == 7)));
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        cache.get_or_fetch(key("b"), ttl, fetch).await.unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn the_cache_never_holds_more_than_its_bound() {
        let cache = Cache::default();
        let ttl = Duration::from_secs(3600);
        for i in 0..(MAX_ENTRIES + 100) {
            cache.get_or_fetch(key(&i.to_string()), ttl, || async { Ok(answer(1)) }).await.unwrap();
        }
        let n = cache.entries.lock().unwrap().len();
        assert!(n <= MAX_ENTRIES, "{n} entries");
        assert!(n >= MAX_ENTRIES / 2, "only the oldest go: {n} left");
        // The newest answers are still there.
        let calls = AtomicU32::new(0);
        let last = key(&(MAX_ENTRIES + 99).to_string());
        cache
            .get_or_fetch(last, ttl, || async {
                calls.fetch_add(1, Ordering::SeqCst);
                Ok(answer(2))
            })
            .await
            .unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn a_stale_answer_is_served_while_one_caller_renews_it() {
        let cache = Cache::default();
        let ttl = Duration::from_millis(40);
        cache.get_or_fetch(key("a"), ttl, || async { Ok(answer(1)) }).await.unwrap();
        assert!(cache.stale(&key("a")).is_none(), "fresh: served normally");
        tokio::time::sleep(Duration::from_millis(50)).await;
        let (first, renew) = cache.stale(&key("a")).unwrap();
        assert_eq!((first.value.clone(), renew), (Value::from(1), true));
        let (_, again) = cache.stale(&key("a")).unwrap();
        assert!(!again, "one renewal at a time");
        cache.renewal_failed(&key("a"));
        assert!(cache.stale(&key("a")).unwrap().1, "after a failure the next caller renews");
        cache.put(key("a"), ttl, Arc::new(answer(2)));
        assert!(cache.stale(&key("a")).is_none());
        let got = cache.get_or_fetch(key("a"), ttl, || async { Ok(answer(3)) }).await.unwrap();
        assert_eq!(got.value, 2, "the renewed answer is fresh");
        tokio::time::sleep(Duration::from_millis(90)).await;
        assert!(cache.stale(&key("a")).is_none(), "too old to serve stale");
    }

    #[tokio::test]
    async fn expired_entries_refetch_and_errors_are_not_cached() {
        let cache = Cache::default();
        let calls = AtomicU32::new(0);
        let ttl = Duration::from_millis(30);
        let ok = || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Ok(answer(1))
        };
        cache.get_or_fetch(key("a"), ttl, ok).await.unwrap();
        cache.get_or_fetch(key("a"), ttl, ok).await.unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        tokio::time::sleep(Duration::from_millis(40)).await;
        cache.get_or_fetch(key("a"), ttl, ok).await.unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 2);

        let fail = || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err(SdkError::Spec("x".into()))
        };
        assert!(cache.get_or_fetch(key("c"), ttl, fail).await.is_err());
        assert!(cache.get_or_fetch(key("c"), ttl, fail).await.is_err());
        assert_eq!(calls.load(Ordering::SeqCst), 4);
    }
}
