//! The shared response cache: per-method TTL plus request coalescing. Identical calls in flight
//! or within the TTL cause one backing call (ten panels reading the same kline → one fetch).
//! Errors are not cached: the next caller tries again.
//!
//! Bounded by bytes: each entry weighs its answer's JSON text, its key and a fixed overhead;
//! past the budget, dead and expired entries go first, then the least recently used. An answer
//! weighing more than the whole budget is returned but not kept.
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
    /// What it counts against the byte budget ([`weight`]).
    weight: usize,
    /// When it was last served, on the cache's own clock (least recently used goes first).
    used: u64,
}

impl Entry {
    fn new(cell: Arc<OnceCell<Arc<SdkAnswer>>>, created: Instant, ttl: Duration) -> Self {
        Self { cell, created, ttl, renewing: false, weight: 0, used: 0 }
    }

    /// Too old to serve even stale, or left empty by a failed fetch no one can still be on.
    fn dead(&self, now: Instant) -> bool {
        let age = now.duration_since(self.created);
        if self.cell.initialized() { age >= self.ttl * 2 } else { age >= IN_FLIGHT }
    }
}

/// The entries, the sum of their weights and the clock of their last use.
#[derive(Default)]
struct State {
    entries: HashMap<Key, Entry>,
    /// Sum of the entries' weights.
    bytes: usize,
    /// Last tick given out by [`State::tick`].
    clock: u64,
    /// Dead entries are swept when this many entries are held (doubles with what survives, so
    /// sweeping stays linear in the inserts).
    sweep_at: usize,
}

/// TTL cache with coalescing, bounded by the bytes of its answers.
pub struct Cache {
    state: Mutex<State>,
    /// Most bytes its entries weigh together once no fetch is in flight.
    budget: usize,
}

impl Default for Cache {
    fn default() -> Self {
        Self::new(DEFAULT_BUDGET)
    }
}

/// Default byte budget (`BOARDSMITH_SDK_CACHE_BYTES`).
pub const DEFAULT_BUDGET: usize = 256 << 20;
/// Below this many entries dead ones are not swept.
const SWEEP_AT: usize = 4096;
/// What an entry weighs besides its key and its answer's JSON text (entry, cells, provenance).
const ENTRY_OVERHEAD: usize = 256;
/// Longer than any fetch can take (timeouts and retries included): an empty cell older than
/// this was left by a failed fetch.
const IN_FLIGHT: Duration = Duration::from_secs(120);

/// What an entry of `key` weighs: the key, its answer's JSON text (none while in flight), and a
/// fixed overhead. The JSON is made here, outside the lock (the answer keeps it for its runs).
fn weight(key: &Key, answer: Option<&SdkAnswer>) -> usize {
    let json = answer.map_or(0, |a| a.json().get().len());
    ENTRY_OVERHEAD + key.0.len() + json
}

impl State {
    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// Inserts (or replaces) an entry of `weight`, used now.
    fn insert(&mut self, key: Key, mut entry: Entry, weight: usize) {
        entry.weight = weight;
        entry.used = self.tick();
        self.bytes += weight;
        if let Some(old) = self.entries.insert(key, entry) {
            self.bytes -= old.weight;
        }
    }

    fn remove(&mut self, key: &Key) {
        if let Some(old) = self.entries.remove(key) {
            self.bytes -= old.weight;
        }
    }

    /// Drops dead entries once enough are held that it is worth a pass.
    fn sweep(&mut self, now: Instant) {
        if self.entries.len() < self.sweep_at.max(SWEEP_AT) {
            return;
        }
        let mut freed = 0;
        self.entries.retain(|_, e| {
            let dead = e.dead(now);
            if dead {
                freed += e.weight;
            }
            !dead
        });
        self.bytes -= freed;
        self.sweep_at = self.entries.len() * 2;
    }

    /// Over `budget`: evicts dead entries first, then answers past their TTL, then the least
    /// recently used, down to 7/8 of it so eviction passes are rare; never `keep` (the answer
    /// just stored) nor a cell still in flight (its callers are coalesced on it).
    fn shrink(&mut self, budget: usize, keep: &Key, now: Instant) {
        if self.bytes <= budget {
            return;
        }
        let target = budget - budget / 8;
        // Eviction order: (rank, last use); rank 0 dead, 1 expired, 2 fresh; `None` never goes.
        let order = |k: &Key, e: &Entry| {
            let rank = if e.dead(now) {
                0u8
            } else if !e.cell.initialized() || k == keep {
                return None;
            } else if now.duration_since(e.created) >= e.ttl {
                1
            } else {
                2
            };
            Some((rank, e.used))
        };
        let mut victims: Vec<((u8, u64), usize)> =
            self.entries.iter().filter_map(|(k, e)| Some((order(k, e)?, e.weight))).collect();
        victims.sort_unstable();
        let mut excess = self.bytes - target;
        let mut cutoff = None;
        for &(at, w) in &victims {
            if excess == 0 {
                break;
            }
            excess = excess.saturating_sub(w);
            cutoff = Some(at);
        }
        let Some(cutoff) = cutoff else { return };
        let mut freed = 0;
        self.entries.retain(|k, e| {
            let goes = order(k, e).is_some_and(|at| at <= cutoff);
            if goes {
                freed += e.weight;
            }
            !goes
        });
        self.bytes -= freed;
    }
}

impl Cache {
    /// A cache whose answers weigh at most `budget` bytes together (an answer weighing more is
    /// returned but not kept).
    pub fn new(budget: usize) -> Self {
        Self { state: Mutex::default(), budget }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

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
            let mut state = self.lock();
            let now = Instant::now();
            let fresh = |e: &Entry| !e.cell.initialized() || now.duration_since(e.created) < e.ttl;
            let tick = state.tick();
            match state.entries.get_mut(&key) {
                Some(e) if fresh(e) => {
                    e.used = tick;
                    e.cell.clone()
                }
                _ => {
                    state.sweep(now);
                    let cell = Arc::new(OnceCell::new());
                    let w = weight(&key, None);
                    state.insert(key.clone(), Entry::new(cell.clone(), now, ttl), w);
                    cell
                }
            }
        };
        let mut fetched = false;
        let answer = cell
            .get_or_try_init(|| async {
                fetched = true;
                fetch().await.map(Arc::new)
            })
            .await
            .cloned()?;
        if fetched {
            // This caller filled the cell: weigh the answer now that it is known.
            self.settle(key, &cell, &answer);
        }
        Ok(answer)
    }

    /// Counts the answer just fetched into `cell` against the budget, making room for it, or
    /// drops its entry when it alone weighs more than the budget.
    fn settle(&self, key: Key, cell: &Arc<OnceCell<Arc<SdkAnswer>>>, answer: &SdkAnswer) {
        let w = weight(&key, Some(answer));
        let mut state = self.lock();
        // Replaced by a renewal or evicted meanwhile: nothing of ours to weigh.
        if !state.entries.get(&key).is_some_and(|e| Arc::ptr_eq(&e.cell, cell)) {
            return;
        }
        if w > self.budget {
            state.remove(&key);
            return;
        }
        if let Some(e) = state.entries.get_mut(&key) {
            let old = std::mem::replace(&mut e.weight, w);
            state.bytes = state.bytes - old + w;
        }
        state.shrink(self.budget, &key, Instant::now());
    }

    /// An answer past its TTL but within one more: `(answer, renew)`, `renew` true for exactly
    /// one caller until the renewal ends. `None` when there is nothing to serve stale (absent,
    /// still fresh, in flight, or too old).
    pub fn stale(&self, key: &Key) -> Option<(Arc<SdkAnswer>, bool)> {
        let mut state = self.lock();
        let tick = state.tick();
        let e = state.entries.get_mut(key)?;
        let age = Instant::now().duration_since(e.created);
        let answer = e.cell.get()?.clone();
        if age < e.ttl || age >= e.ttl * 2 {
            return None;
        }
        e.used = tick;
        let renew = !std::mem::replace(&mut e.renewing, true);
        Some((answer, renew))
    }

    /// Stores a renewed answer, fresh from now (or drops the stale one when the renewed answer
    /// alone weighs more than the budget).
    pub fn put(&self, key: Key, ttl: Duration, answer: Arc<SdkAnswer>) {
        let w = weight(&key, Some(&answer));
        let cell = Arc::new(OnceCell::new_with(Some(answer)));
        let mut state = self.lock();
        if w > self.budget {
            state.remove(&key);
            return;
        }
        let now = Instant::now();
        state.insert(key.clone(), Entry::new(cell, now, ttl), w);
        state.shrink(self.budget, &key, now);
    }

    /// A renewal failed: the stale answer stays (until it is too old) and the next caller tries.
    pub fn renewal_failed(&self, key: &Key) {
        if let Some(e) = self.lock().entries.get_mut(key) {
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

    /// An answer whose JSON text is `n` bytes long (a string of `n - 2` characters).
    fn sized(n: usize) -> SdkAnswer {
        let v = Value::from("x".repeat(n.saturating_sub(2)));
        SdkAnswer::new(v, base::provenance::Provenance::demo(None, 0))
    }

    /// The sum of the weights equals the running count, and nothing but in-flight cells is over
    /// the budget.
    fn check(cache: &Cache) {
        let state = cache.lock();
        let sum: usize = state.entries.values().map(|e| e.weight).sum();
        assert_eq!(sum, state.bytes, "the running count is exact");
        for (k, e) in &state.entries {
            if let Some(a) = e.cell.get() {
                assert_eq!(e.weight, weight(k, Some(a)), "{k:?}");
            }
        }
        assert!(
            state.bytes <= cache.budget,
            "{} bytes over a {} budget",
            state.bytes,
            cache.budget
        );
    }

    fn held(cache: &Cache, k: &Key) -> bool {
        cache.lock().entries.get(k).is_some_and(|e| e.cell.initialized())
    }

    #[tokio::test]
    async fn the_cache_never_holds_more_than_its_bound() {
        let cache = Cache::new(64 << 10);
        let ttl = Duration::from_secs(3600);
        for i in 0..1000 {
            let a = sized(100 + i % 7 * 50);
            cache.get_or_fetch(key(&i.to_string()), ttl, || async { Ok(a) }).await.unwrap();
            check(&cache);
        }
        let n = cache.lock().entries.len();
        assert!(n < 1000 && n > 50, "{n} entries");
        // The newest answers are still there.
        let calls = AtomicU32::new(0);
        cache
            .get_or_fetch(key("999"), ttl, || async {
                calls.fetch_add(1, Ordering::SeqCst);
                Ok(answer(2))
            })
            .await
            .unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn an_answer_bigger_than_the_budget_is_returned_not_kept() {
        let cache = Cache::new(10_000);
        let ttl = Duration::from_secs(3600);
        cache.get_or_fetch(key("small"), ttl, || async { Ok(sized(1000)) }).await.unwrap();
        let big = cache.get_or_fetch(key("big"), ttl, || async { Ok(sized(20_000)) }).await;
        assert_eq!(big.unwrap().json().get().len(), 20_000, "still returned");
        assert!(!cache.lock().entries.contains_key(&key("big")));
        assert!(held(&cache, &key("small")), "and it evicted nothing");
        check(&cache);
        // A renewal too big to keep drops the stale answer it would have replaced.
        cache.put(key("small"), ttl, Arc::new(sized(20_000)));
        assert!(cache.lock().entries.is_empty());
        check(&cache);
        // No budget: nothing is kept, identical calls are still coalesced.
        let none = Cache::new(0);
        let calls = AtomicU32::new(0);
        let fetch = || async {
            calls.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(20)).await;
            Ok(answer(7))
        };
        let all =
            futures::future::join_all((0..5).map(|_| none.get_or_fetch(key("a"), ttl, fetch)))
                .await;
        assert!(all.iter().all(|r| r.as_ref().is_ok_and(|a| a.value == 7)));
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert!(none.lock().entries.is_empty());
        check(&none);
    }

    #[tokio::test]
    async fn the_least_recently_used_goes_first_and_expired_before_it() {
        let w = weight(&key("a"), Some(&sized(1000)));
        // Room for four such answers.
        let cache = Cache::new(4 * w + w / 2);
        let long = Duration::from_secs(3600);
        let short = Duration::from_millis(30);
        for k in ["a", "b", "c"] {
            cache.get_or_fetch(key(k), long, || async { Ok(sized(1000)) }).await.unwrap();
        }
        cache.get_or_fetch(key("s"), short, || async { Ok(sized(1000)) }).await.unwrap();
        tokio::time::sleep(Duration::from_millis(40)).await;
        // `a` is served again: `b` is now the least recently used, `s` expired.
        cache.get_or_fetch(key("a"), long, || async { Ok(answer(0)) }).await.unwrap();
        cache.get_or_fetch(key("d"), long, || async { Ok(sized(1000)) }).await.unwrap();
        check(&cache);
        // Down to 7/8 of the budget: the expired one, then the least recently used.
        assert!(!held(&cache, &key("s")), "expired first");
        assert!(!held(&cache, &key("b")), "then the least recently used");
        for k in ["a", "c", "d"] {
            assert!(held(&cache, &key(k)), "{k} kept");
        }
        // A stale answer being served counts as a use.
        let cache = Cache::new(3 * w + w / 2);
        // (A TTL long enough that a busy machine's late wake-up still finds `a` stale.)
        let stale_ttl = Duration::from_millis(200);
        for k in ["a", "b", "c"] {
            cache.get_or_fetch(key(k), stale_ttl, || async { Ok(sized(1000)) }).await.unwrap();
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
        assert!(cache.stale(&key("a")).is_some());
        cache.put(key("b"), long, Arc::new(sized(1000)));
        cache.get_or_fetch(key("d"), long, || async { Ok(sized(1000)) }).await.unwrap();
        check(&cache);
        assert!(!held(&cache, &key("c")), "expired, not served since");
        assert!(held(&cache, &key("a")) && held(&cache, &key("b")) && held(&cache, &key("d")));
    }

    #[tokio::test]
    async fn counts_stay_exact_when_entries_are_replaced_or_swept() {
        let cache = Cache::new(1 << 30);
        let short = Duration::from_millis(10);
        cache.get_or_fetch(key("a"), short, || async { Ok(sized(500)) }).await.unwrap();
        cache.put(key("a"), short, Arc::new(sized(5000)));
        check(&cache);
        tokio::time::sleep(Duration::from_millis(15)).await;
        // Expired: a new fetch replaces it.
        cache.get_or_fetch(key("a"), short, || async { Ok(sized(50)) }).await.unwrap();
        check(&cache);
        // A failed fetch leaves an empty cell weighing its key and overhead.
        let failed =
            cache.get_or_fetch(key("e"), short, || async { Err(SdkError::Spec("x".into())) });
        assert!(failed.await.is_err());
        check(&cache);
        // Enough dead entries to sweep: all go (their cells empty or past twice their TTL).
        for i in 0..SWEEP_AT {
            cache
                .get_or_fetch(key(&i.to_string()), short, || async { Ok(sized(100)) })
                .await
                .unwrap();
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
        // The last pass (at SWEEP_AT entries) deferred the next one; make it due now.
        cache.lock().sweep_at = 0;
        cache.get_or_fetch(key("last"), short, || async { Ok(sized(100)) }).await.unwrap();
        check(&cache);
        let state = cache.lock();
        assert_eq!(state.entries.len(), 2, "`last` and the failed cell still in its window");
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(64))]

        /// Whatever the sizes, TTLs, renewals and repeats, the weights sum to the running
        /// count and the cache stays within its budget.
        #[test]
        fn the_byte_bound_holds_under_varied_inserts(
            budget in 0usize..40_000,
            ops in proptest::collection::vec((0u8..24, 0usize..12_000, proptest::bool::ANY), 1..80),
        ) {
            let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
            rt.block_on(async {
                let cache = Cache::new(budget);
                for (k, size, renew) in ops {
                    let (k, ttl) = (key(&k.to_string()), Duration::from_secs(60));
                    if renew {
                        cache.put(k, ttl, Arc::new(sized(size)));
                    } else {
                        let got = cache.get_or_fetch(k, ttl, || async { Ok(sized(size)) }).await;
                        proptest::prop_assert!(got.is_ok());
                    }
                    check(&cache);
                }
                Ok(())
            })?;
        }
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
