//! Usage accounting: every model call counted per UTC day × API key × model × agent (tokens as
//! the provider reported them, cost from the model registry's prices, latency, errors), kept
//! in memory, written to the store's `usage` table at most once a second (and at shutdown),
//! and summed for `GET /api/usage` and for the keys' budgets. Each call is also a metric
//! (`telemetry::model_call`). On a shared store every node writes rows of its own (tagged
//! with its id) and re-reads the other nodes' at each flush, so no node overwrites another's
//! counts and reports and budgets cover them all.
//!
//! The one owner of the usage rows. Knows nothing of HTTP or agents: callers hand it
//! [`Call`]s.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use chrono::{NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use llm::Usage;
use store::{Store, StoreError};

/// How often counted calls are written.
pub const FLUSH_EVERY: Duration = Duration::from_secs(1);

/// One model call to count.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The API key that asked (`None`: the owner).
    pub key: Option<String>,
    /// `provider/model`.
    pub model: String,
    /// The agent it ran for (`None`: a direct `/v1` call).
    pub agent: Option<String>,
    /// Tokens as reported.
    pub usage: Usage,
    /// USD, when the model's prices are known.
    pub cost_usd: Option<f64>,
    /// From the request to the last byte.
    pub latency: Duration,
    /// From the request to the first output chunk, when streamed.
    pub first_chunk: Option<Duration>,
    /// Whether it failed.
    pub error: bool,
}

/// What a row counts.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    /// Model calls.
    pub requests: u64,
    /// Of them, failed.
    pub errors: u64,
    /// Prompt tokens (cached included).
    pub input_tokens: u64,
    /// Output tokens (reasoning included).
    pub output_tokens: u64,
    /// Prompt tokens read from the provider's cache.
    pub cached_tokens: u64,
    /// Output tokens spent reasoning.
    pub reasoning_tokens: u64,
    /// USD of the calls whose model has known prices.
    pub cost_usd: f64,
    /// Calls whose cost is unknown (no prices for their model).
    #[serde(default)]
    pub unpriced: u64,
    /// Sum of the calls' latencies, ms.
    pub latency_ms: u64,
}

impl Totals {
    fn add(&mut self, o: &Totals) {
        self.requests += o.requests;
        self.errors += o.errors;
        self.input_tokens += o.input_tokens;
        self.output_tokens += o.output_tokens;
        self.cached_tokens += o.cached_tokens;
        self.reasoning_tokens += o.reasoning_tokens;
        self.cost_usd += o.cost_usd;
        self.unpriced += o.unpriced;
        self.latency_ms += o.latency_ms;
    }

    fn of(call: &Call) -> Self {
        Self {
            requests: 1,
            errors: u64::from(call.error),
            input_tokens: call.usage.input_tokens,
            output_tokens: call.usage.output_tokens,
            cached_tokens: call.usage.cache_read_tokens,
            reasoning_tokens: call.usage.reasoning_tokens,
            cost_usd: call.cost_usd.unwrap_or(0.0),
            unpriced: u64::from(call.cost_usd.is_none() && !call.error),
            latency_ms: u64::try_from(call.latency.as_millis()).unwrap_or(u64::MAX),
        }
    }
}

/// A row's identity. Empty `key`: the owner; empty `agent`: a direct call.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
struct RowKey {
    day: NaiveDate,
    key: String,
    model: String,
    agent: String,
}

impl RowKey {
    /// The store id: the fields as a JSON array (unambiguous whatever the names hold).
    fn id(&self) -> String {
        serde_json::json!([self.day.to_string(), self.key, self.model, self.agent]).to_string()
    }
}

/// A stored row.
#[derive(Debug, Serialize, Deserialize)]
struct StoredRow {
    #[serde(flatten)]
    key: RowKey,
    #[serde(flatten)]
    totals: Totals,
    /// The node that counted it, on a shared store (each node writes rows of its own, so
    /// nodes never overwrite each other's counts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    node: Option<String>,
}

/// What `GET /api/usage` groups by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GroupBy {
    /// UTC day.
    Day,
    /// API key (`owner` for the server token).
    Key,
    /// `provider/model`.
    Model,
    /// Agent (`none` for direct calls).
    Agent,
}

/// One row of a usage report: the group's values and its totals.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReportRow {
    /// The day, when grouped by day.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub day: Option<NaiveDate>,
    /// The key id (`owner`), when grouped by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The model, when grouped by model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The agent (`none`), when grouped by agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The sums.
    #[serde(flatten)]
    pub totals: Totals,
}

/// A report group: the values of the grouped-by fields (`None`: not grouped by it).
type Group = (Option<NaiveDate>, Option<String>, Option<String>, Option<String>);

#[derive(Debug, Default)]
struct State {
    /// This process's counts (on the embedded store: everything).
    rows: BTreeMap<RowKey, Totals>,
    dirty: BTreeSet<RowKey>,
    /// Other nodes' counts, summed, as last read from a shared store (and rows this node's
    /// earlier runs wrote: a node's id is new at every start).
    others: BTreeMap<RowKey, Totals>,
    /// USD per key id, all time, every node (the budgets' measure).
    spent: HashMap<String, f64>,
}

impl State {
    /// Recounts `spent` from the rows of every node.
    fn recount(&mut self) {
        self.spent.clear();
        for (k, t) in self.rows.iter().chain(&self.others) {
            if !k.key.is_empty() {
                *self.spent.entry(k.key.clone()).or_default() += t.cost_usd;
            }
        }
    }
}

/// The ledger.
#[derive(Debug)]
pub struct UsageLedger {
    store: Arc<Store>,
    /// This node's id on a shared store.
    node: Option<String>,
    state: Mutex<State>,
}

impl UsageLedger {
    /// The rows stored in `store`; an unreadable one is logged and skipped.
    #[base::boxed]
    pub async fn load(store: Arc<Store>) -> Result<Self, StoreError> {
        let node = store.node_id().map(str::to_owned);
        let ledger = Self { store, node, state: Mutex::new(State::default()) };
        let stored = ledger.stored_rows().await?;
        let mut s = ledger.lock();
        // The embedded store's rows are this process's to go on counting; a shared store's
        // are other nodes' (this node's id is new).
        if ledger.node.is_some() {
            s.others = stored;
        } else {
            s.rows = stored;
        }
        s.recount();
        drop(s);
        Ok(ledger)
    }

    /// Every stored row not written by this node, summed per row key.
    async fn stored_rows(&self) -> Result<BTreeMap<RowKey, Totals>, StoreError> {
        let mut out: BTreeMap<RowKey, Totals> = BTreeMap::new();
        for value in self.store.usage_rows().await? {
            match serde_json::from_value::<StoredRow>(value) {
                Ok(row) if self.node.is_some() && row.node == self.node => {}
                Ok(row) => out.entry(row.key).or_default().add(&row.totals),
                Err(e) => tracing::error!(error = %e, "skipping an unreadable usage row"),
            }
        }
        Ok(out)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts a call (in memory; written by the next flush).
    pub fn record(&self, call: &Call) {
        let key = RowKey {
            day: Utc::now().date_naive(),
            key: call.key.clone().unwrap_or_default(),
            model: call.model.clone(),
            agent: call.agent.clone().unwrap_or_default(),
        };
        base::telemetry::model_call(
            &call.model,
            call.usage.input_tokens,
            call.usage.output_tokens,
            call.latency,
            call.first_chunk,
            call.error.then_some("error"),
        );
        let totals = Totals::of(call);
        let mut s = self.lock();
        if let Some(k) = &call.key {
            *s.spent.entry(k.clone()).or_default() += totals.cost_usd;
        }
        s.rows.entry(key.clone()).or_default().add(&totals);
        s.dirty.insert(key);
    }

    /// USD a key has spent, all time.
    pub fn spent(&self, key: &str) -> f64 {
        self.lock().spent.get(key).copied().unwrap_or(0.0)
    }

    /// Writes the rows counted since the last flush (all in one durable commit each).
    #[base::boxed]
    pub async fn flush(&self) -> Result<(), StoreError> {
        let rows: Vec<(RowKey, String, serde_json::Value)> = {
            let mut s = self.lock();
            let dirty = std::mem::take(&mut s.dirty);
            dirty
                .into_iter()
                .filter_map(|k| {
                    let totals = *s.rows.get(&k)?;
                    let node = self.node.clone();
                    let id = match &node {
                        Some(n) => format!("{}@{n}", k.id()),
                        None => k.id(),
                    };
                    let value =
                        serde_json::to_value(StoredRow { key: k.clone(), totals, node }).ok()?;
                    Some((k.clone(), id, value))
                })
                .collect()
        };
        // Sent together, so the store's writer commits them in one durable transaction.
        let writes = rows.iter().map(|(_, id, value)| self.store.put_usage_row(id, value.clone()));
        if let Err(e) = futures::future::try_join_all(writes).await {
            // Written again by the next flush (a row holds its totals, so rewriting is safe).
            self.lock().dirty.extend(rows.into_iter().map(|(k, ..)| k));
            return Err(e);
        }
        // On a shared store, what the other nodes counted meanwhile.
        if self.node.is_some() {
            let others = self.stored_rows().await?;
            let mut s = self.lock();
            s.others = others;
            s.recount();
        }
        Ok(())
    }

    /// Flushes every [`FLUSH_EVERY`] until `shutdown`, then once more.
    pub fn run_flusher(
        self: Arc<Self>,
        shutdown: CancellationToken,
    ) -> base::BoxFuture<'static, ()> {
        Box::pin(async move {
            loop {
                tokio::select! {
                    () = shutdown.cancelled() => break,
                    () = tokio::time::sleep(FLUSH_EVERY) => {}
                }
                if let Err(e) = self.flush().await {
                    tracing::error!(error = %e, "writing usage failed; retrying at the next flush");
                }
            }
            if let Err(e) = self.flush().await {
                tracing::error!(error = %e, "writing usage at shutdown failed");
            }
        })
    }

    /// The totals of the days `from..=to`, grouped by `group_by` (no grouping: one row),
    /// ordered by the group's values.
    pub fn report(&self, from: NaiveDate, to: NaiveDate, group_by: &[GroupBy]) -> Vec<ReportRow> {
        let has = |g: GroupBy| group_by.contains(&g);
        let mut groups: BTreeMap<Group, Totals> = BTreeMap::new();
        let s = self.lock();
        for (k, t) in s.rows.iter().chain(&s.others).filter(|(k, _)| (from..=to).contains(&k.day)) {
            let named =
                |v: &str, empty: &str| if v.is_empty() { empty.to_owned() } else { v.to_owned() };
            let group = (
                has(GroupBy::Day).then_some(k.day),
                has(GroupBy::Key).then(|| named(&k.key, "owner")),
                has(GroupBy::Model).then(|| k.model.clone()),
                has(GroupBy::Agent).then(|| named(&k.agent, "none")),
            );
            groups.entry(group).or_default().add(t);
        }
        groups
            .into_iter()
            .map(|((day, key, model, agent), totals)| ReportRow { day, key, model, agent, totals })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(key: Option<&str>, model: &str, agent: Option<&str>, cost: Option<f64>) -> Call {
        Call {
            key: key.map(str::to_owned),
            model: model.into(),
            agent: agent.map(str::to_owned),
            usage: Usage {
                input_tokens: 100,
                output_tokens: 10,
                cache_read_tokens: 40,
                ..Usage::default()
            },
            cost_usd: cost,
            latency: Duration::from_millis(250),
            first_chunk: None,
            error: false,
        }
    }

    #[tokio::test]
    async fn calls_are_summed_per_group_flushed_and_reloaded() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Store::open(dir.path()).unwrap());
        let ledger = UsageLedger::load(store.clone()).await.unwrap();
        ledger.record(&call(Some("key_a"), "openai/gpt-4.1", None, Some(0.5)));
        ledger.record(&call(Some("key_a"), "openai/gpt-4.1", Some("dashboard"), Some(0.25)));
        ledger.record(&call(None, "local/llama", Some("dashboard"), None));
        assert_eq!(ledger.spent("key_a"), 0.75);
        assert_eq!(ledger.spent("key_b"), 0.0);
        let today = Utc::now().date_naive();
        let all = ledger.report(today, today, &[]);
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].totals.requests, 3);
        assert_eq!(all[0].totals.input_tokens, 300);
        assert_eq!(all[0].totals.cached_tokens, 120);
        assert_eq!(all[0].totals.unpriced, 1);
        let by_key = ledger.report(today, today, &[GroupBy::Key]);
        let keys: Vec<&str> = by_key.iter().map(|r| r.key.as_deref().unwrap()).collect();
        assert_eq!(keys, ["key_a", "owner"]);
        let by_agent = ledger.report(today, today, &[GroupBy::Agent, GroupBy::Model]);
        assert_eq!(by_agent.len(), 3);
        assert!(
            ledger.report(today.pred_opt().unwrap(), today.pred_opt().unwrap(), &[]).is_empty()
        );

        ledger.flush().await.unwrap();
        let reloaded = UsageLedger::load(store.clone()).await.unwrap();
        assert_eq!(reloaded.report(today, today, &[GroupBy::Key]), by_key);
        assert_eq!(reloaded.spent("key_a"), 0.75);
        // A flush writes only what changed since the last one; counting goes on from the sums.
        reloaded.record(&call(Some("key_a"), "openai/gpt-4.1", None, Some(1.0)));
        reloaded.flush().await.unwrap();
        let again = UsageLedger::load(store).await.unwrap();
        assert_eq!(again.spent("key_a"), 1.75);
        assert_eq!(again.report(today, today, &[])[0].totals.requests, 4);
    }
}
