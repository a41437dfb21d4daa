//! Live dashboards: running panel code, caching its results, refreshing on schedule, and
//! fanning out events to subscribers.
//!
//! Owns the wire events (`dashboard.snapshot`, `dashboard.patch`, `panel.data`, `panel.error`,
//! `dashboard.deleted`), each serialized once and shared by every subscriber, and the
//! per-subscriber [`Outbox`]: a bounded queue where a newer `panel.data` for a panel replaces a
//! queued older one, patches are never dropped, and a subscriber too far behind is cut off.
//! Knows nothing of HTTP or WebSocket framing (see `ws`), nor of agents.

mod outbox;
mod runner;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::dashboard::{ChangeEntry, DashboardState, Panel};
use crate::sandbox::{ExecError, Sandbox};

pub use outbox::{CLOSE_TOO_FAR_BEHIND, Closed, Outbox, OutboxItem};
pub use runner::{PanelRun, RunStatus};

/// One panel's last known result, as sent in snapshots.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PanelSlot {
    /// `ok`, `error` or `pending`.
    pub status: RunStatus,
    /// The data when ok.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// The error when failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ExecError>,
    /// Sequence number of the last event for this panel.
    pub seq: u64,
    /// When the data was produced (unix ms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refreshed_at: Option<i64>,
}

/// The events pushed to subscribers, exactly as on the wire.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type")]
pub enum Event {
    /// Full state and panel results: the base for later patches.
    #[serde(rename = "dashboard.snapshot", rename_all = "camelCase")]
    Snapshot {
        /// Dashboard id.
        dashboard_id: String,
        /// Version of `state`.
        version: u64,
        /// The state.
        state: DashboardState,
        /// Results per panel id.
        panels: HashMap<String, PanelSlot>,
        /// Current variable values.
        vars: Map<String, Value>,
    },
    /// A new version: change entries plus an RFC 6902 patch from `baseVersion`.
    #[serde(rename = "dashboard.patch", rename_all = "camelCase")]
    Patch {
        /// Dashboard id.
        dashboard_id: String,
        /// The version the patch applies to.
        base_version: u64,
        /// The version it produces.
        version: u64,
        /// Human/model-readable changes.
        changes: Vec<ChangeEntry>,
        /// RFC 6902 operations.
        patch: json_patch::Patch,
    },
    /// Fresh data for one panel.
    #[serde(rename = "panel.data", rename_all = "camelCase")]
    Data {
        /// Dashboard id.
        dashboard_id: String,
        /// Panel id.
        panel_id: String,
        /// Per-panel sequence number (gaps mean missed events).
        seq: u64,
        /// The data.
        data: Value,
        /// Rows in `data`.
        row_count: usize,
        /// Run time in milliseconds.
        duration_ms: f64,
        /// When it was produced (unix ms).
        refreshed_at: i64,
    },
    /// A panel run failed.
    #[serde(rename = "panel.error", rename_all = "camelCase")]
    PanelError {
        /// Dashboard id.
        dashboard_id: String,
        /// Panel id.
        panel_id: String,
        /// Per-panel sequence number.
        seq: u64,
        /// What went wrong (with line/column).
        error: ExecError,
    },
    /// The dashboard was deleted.
    #[serde(rename = "dashboard.deleted", rename_all = "camelCase")]
    Deleted {
        /// Dashboard id.
        dashboard_id: String,
    },
}

impl Event {
    fn outbox_item(&self) -> OutboxItem {
        let text = serde_json::to_string(self).unwrap_or_default().into();
        match self {
            Self::Data { dashboard_id, panel_id, .. }
            | Self::PanelError { dashboard_id, panel_id, .. } => {
                OutboxItem::panel(dashboard_id, panel_id, text)
            }
            _ => OutboxItem::control(text),
        }
    }
}

/// Per dashboard: what subscribers have seen and the current variables.
#[derive(Default)]
struct Watched {
    version: u64,
    state: Option<Arc<DashboardState>>,
    vars: Map<String, Value>,
    slots: HashMap<String, PanelSlot>,
    subscribers: Vec<Arc<Outbox>>,
    last_run: HashMap<String, Instant>,
    /// The serialized snapshot, shared by every subscriber until the version, a panel result
    /// or the variables change (many viewers opening a dashboard cost one serialization).
    snapshot: Option<OutboxItem>,
}

/// Settings of the live layer.
#[derive(Debug, Clone)]
pub struct LiveConfig {
    /// Maximum panel runs in flight across all dashboards.
    pub max_concurrent_runs: usize,
    /// How often the scheduler looks for due refreshes.
    pub tick: Duration,
}

impl Default for LiveConfig {
    fn default() -> Self {
        Self { max_concurrent_runs: 8, tick: Duration::from_millis(500) }
    }
}

/// The live layer: panel runner plus subscriber hub.
pub struct Live {
    runner: runner::Runner,
    dashboards: Mutex<HashMap<String, Watched>>,
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live").finish_non_exhaustive()
    }
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

impl Live {
    /// Creates the live layer over a sandbox pool.
    pub fn new(sandbox: Sandbox, config: LiveConfig) -> Self {
        Self {
            runner: runner::Runner::new(sandbox, config.max_concurrent_runs),
            dashboards: Mutex::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Watched>> {
        self.dashboards.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Current variable values of a dashboard: set values over the variables' defaults.
    pub fn vars(&self, id: &str, state: &DashboardState) -> Map<String, Value> {
        let mut vars: Map<String, Value> =
            state.variables.iter().map(|v| (v.name.clone(), v.default.clone())).collect();
        if let Some(w) = self.lock().get(id) {
            for (k, v) in &w.vars {
                if vars.contains_key(k) {
                    vars.insert(k.clone(), v.clone());
                }
            }
        }
        vars
    }

    /// Runs one panel's code now (one run per panel at a time; bounded overall), without
    /// publishing.
    pub async fn run_panel(
        &self,
        dashboard_id: &str,
        panel: &Panel,
        vars: &Map<String, Value>,
    ) -> PanelRun {
        self.runner.run(dashboard_id, panel, vars).await
    }

    /// Runs panel code that belongs to no dashboard (preview).
    pub async fn preview(&self, code: &str, vars: &Map<String, Value>) -> PanelRun {
        self.runner.preview(code, vars).await
    }

    /// Adds a subscriber and queues its snapshot first. Panels without a result are marked
    /// pending and run in the background (their `panel.data` follows the snapshot). If the live
    /// layer already holds a newer version than `version`, that one is sent.
    pub fn subscribe(
        self: &Arc<Self>,
        id: &str,
        version: u64,
        state: Arc<DashboardState>,
        outbox: Arc<Outbox>,
    ) {
        let (state, missing) = {
            let mut map = self.lock();
            let w = map.entry(id.to_owned()).or_default();
            let (version, state) = match &w.state {
                Some(s) if w.version >= version => (w.version, s.clone()),
                _ => {
                    adopt(w, version, state.clone());
                    (version, state)
                }
            };
            let missing: Vec<Panel> = state
                .panels
                .iter()
                .filter(|p| w.slots.get(&p.id).is_none_or(|s| s.status == RunStatus::Pending))
                .cloned()
                .collect();
            for p in &missing {
                if !w.slots.contains_key(&p.id) {
                    w.slots.insert(p.id.clone(), pending_slot());
                    w.snapshot = None;
                }
            }
            let item = match &w.snapshot {
                Some(item) => item.clone(),
                None => {
                    let snap = Event::Snapshot {
                        dashboard_id: id.to_owned(),
                        version,
                        state: (*state).clone(),
                        panels: w.slots.clone(),
                        vars: w.vars.clone(),
                    };
                    let item = snap.outbox_item();
                    w.snapshot = Some(item.clone());
                    item
                }
            };
            // Queued under the lock: nothing published for this dashboard can overtake it.
            outbox.push(item);
            if !w.subscribers.iter().any(|s| Arc::ptr_eq(s, &outbox)) {
                w.subscribers.push(outbox);
            }
            (state, missing)
        };
        if !missing.is_empty() {
            let live = self.clone();
            let id = id.to_owned();
            tokio::spawn(async move { live.refresh_panels(&id, &state, &missing).await });
        }
    }

    /// Removes a subscriber from one dashboard.
    pub fn unsubscribe(&self, id: &str, outbox: &Arc<Outbox>) {
        if let Some(w) = self.lock().get_mut(id) {
            w.subscribers.retain(|s| !Arc::ptr_eq(s, outbox));
        }
    }

    /// Removes a subscriber everywhere (connection closed).
    pub fn disconnect(&self, outbox: &Arc<Outbox>) {
        for w in self.lock().values_mut() {
            w.subscribers.retain(|s| !Arc::ptr_eq(s, outbox));
        }
    }

    /// Number of subscribers of a dashboard.
    pub fn subscribers(&self, id: &str) -> usize {
        self.lock().get(id).map_or(0, |w| w.subscribers.len())
    }

    fn publish(&self, id: &str, event: &Event) {
        if let Some(w) = self.lock().get(id) {
            publish_to(w, event);
        }
    }

    /// A new version was persisted: publish the patch (change entries without code diffs plus
    /// the RFC 6902 operations), then the panel results already computed for it (`runs`).
    pub fn version_saved(
        &self,
        id: &str,
        base_version: u64,
        version: u64,
        old: &DashboardState,
        new: Arc<DashboardState>,
        runs: Vec<(String, PanelRun)>,
    ) {
        let changes = crate::dashboard::diff::changes(old, &new);
        let patch = crate::dashboard::diff::patch(old, &new);
        {
            // Adopting and publishing together: no panel result of the new version can reach a
            // subscriber before the patch that introduces it.
            let mut map = self.lock();
            let w = map.entry(id.to_owned()).or_default();
            adopt(w, version, new.clone());
            let changes = changes.iter().map(ChangeEntry::without_code_diff).collect();
            publish_to(
                w,
                &Event::Patch {
                    dashboard_id: id.to_owned(),
                    base_version,
                    version,
                    changes,
                    patch,
                },
            );
        }
        for (panel_id, run) in runs {
            self.record(id, &panel_id, run);
        }
    }

    /// A version saved outside the tools (REST edit, revert): runs its added and modified panels,
    /// then publishes the patch followed by their results.
    pub async fn publish_saved(
        &self,
        id: &str,
        before: (u64, &DashboardState),
        version: u64,
        state: Arc<DashboardState>,
    ) {
        let ids = crate::dashboard::diff::changed_panels(before.1, &state);
        let vars = self.vars(id, &state);
        let runs = futures::future::join_all(
            state
                .panels
                .iter()
                .filter(|p| ids.contains(&p.id))
                .map(|p| async { (p.id.clone(), self.run_panel(id, p, &vars).await) }),
        )
        .await;
        self.version_saved(id, before.0, version, before.1, state, runs);
    }

    /// Stores a run's result as the panel's latest and publishes it, in one critical section so
    /// results of one panel reach subscribers in `seq` order.
    fn record(&self, id: &str, panel_id: &str, run: PanelRun) {
        {
            let mut map = self.lock();
            let Some(w) = map.get_mut(id) else { return };
            if w.state.as_ref().is_some_and(|s| !s.panels.iter().any(|p| p.id == panel_id)) {
                return; // the panel was removed meanwhile
            }
            w.snapshot = None;
            let slot = w.slots.entry(panel_id.to_owned()).or_insert_with(pending_slot);
            slot.seq += 1;
            w.last_run.insert(panel_id.to_owned(), Instant::now());
            let seq = slot.seq;
            let event = match run.result {
                Ok(ok) => {
                    slot.status = RunStatus::Ok;
                    slot.data = Some(ok.data.clone());
                    slot.error = None;
                    slot.refreshed_at = Some(run.finished_at);
                    Event::Data {
                        dashboard_id: id.to_owned(),
                        panel_id: panel_id.to_owned(),
                        seq,
                        data: ok.data,
                        row_count: ok.row_count,
                        duration_ms: run.duration.as_secs_f64() * 1e3,
                        refreshed_at: run.finished_at,
                    }
                }
                Err(error) => {
                    slot.status = RunStatus::Error;
                    slot.error = Some(error.clone());
                    Event::PanelError {
                        dashboard_id: id.to_owned(),
                        panel_id: panel_id.to_owned(),
                        seq,
                        error,
                    }
                }
            };
            publish_to(w, &event);
        }
    }

    /// Re-runs panels (all when `only` is None) and publishes their results.
    pub async fn refresh_panels(
        self: &Arc<Self>,
        id: &str,
        state: &DashboardState,
        panels: &[Panel],
    ) {
        let vars = self.vars(id, state);
        let runs =
            futures::future::join_all(panels.iter().map(|p| self.runner.run_fresh(id, p, &vars)))
                .await;
        for (p, run) in panels.iter().zip(runs) {
            self.record(id, &p.id, run);
        }
    }

    /// Sets variable values for a dashboard (unknown names are ignored) and re-runs its panels.
    pub async fn set_vars(
        self: &Arc<Self>,
        id: &str,
        state: Arc<DashboardState>,
        vars: Map<String, Value>,
    ) {
        {
            let mut map = self.lock();
            let w = map.entry(id.to_owned()).or_default();
            for (k, v) in vars {
                if state.variables.iter().any(|d| d.name == k) {
                    w.vars.insert(k, v);
                }
            }
            w.snapshot = None;
        }
        self.refresh_panels(id, &state, &state.panels).await;
    }

    /// The dashboard was deleted: tell subscribers and forget it.
    pub fn deleted(&self, id: &str) {
        self.publish(id, &Event::Deleted { dashboard_id: id.to_owned() });
        self.lock().remove(id);
    }

    /// Latest results per panel (for `GET /api/dashboards/{id}/data`).
    pub fn slots(&self, id: &str) -> HashMap<String, PanelSlot> {
        self.lock().get(id).map(|w| w.slots.clone()).unwrap_or_default()
    }

    /// Makes sure the live layer knows `version` of a dashboard (a newer one it holds wins).
    pub fn record_version(&self, id: &str, version: u64, state: Arc<DashboardState>) {
        let mut map = self.lock();
        let w = map.entry(id.to_owned()).or_default();
        if w.state.is_none() || w.version < version {
            adopt(w, version, state);
        }
    }

    /// Remembers a result produced outside a subscription (e.g. a new dashboard's test runs)
    /// so snapshots and `/data` include it, and publishes it.
    pub fn record_run(
        &self,
        id: &str,
        version: u64,
        state: Arc<DashboardState>,
        panel_id: &str,
        run: PanelRun,
    ) {
        self.record_version(id, version, state);
        self.record(id, panel_id, run);
    }

    /// Panels of watched dashboards whose refresh interval has elapsed.
    fn due(&self) -> Vec<(String, Arc<DashboardState>, Vec<Panel>)> {
        let now = Instant::now();
        let map = self.lock();
        let mut out = Vec::new();
        for (id, w) in map.iter().filter(|(_, w)| !w.subscribers.is_empty()) {
            let Some(state) = &w.state else { continue };
            let due: Vec<Panel> = state
                .panels
                .iter()
                .filter(|p| {
                    let Some(every) =
                        p.refresh.as_deref().or(state.refresh.as_deref()).and_then(parse_interval)
                    else {
                        return false;
                    };
                    w.last_run.get(&p.id).is_none_or(|t| now.duration_since(*t) >= every)
                })
                .cloned()
                .collect();
            if !due.is_empty() {
                out.push((id.clone(), state.clone(), due));
            }
        }
        out
    }

    /// The refresh scheduler: runs until `shutdown` fires. Only watched dashboards refresh.
    pub async fn run_scheduler(
        self: Arc<Self>,
        tick: Duration,
        shutdown: tokio_util::sync::CancellationToken,
    ) {
        let mut interval = tokio::time::interval(tick);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                _ = interval.tick() => {}
            }
            for (id, state, panels) in self.due() {
                {
                    // Mark now so a slow run is not scheduled again on the next tick.
                    let mut map = self.lock();
                    if let Some(w) = map.get_mut(&id) {
                        for p in &panels {
                            w.last_run.insert(p.id.clone(), Instant::now());
                        }
                    }
                }
                let live = self.clone();
                tokio::spawn(async move { live.refresh_panels(&id, &state, &panels).await });
            }
        }
    }
}

/// Queues an event for every subscriber of `w`; called with the live lock held, so every
/// subscriber sees events in publication order.
fn publish_to(w: &Watched, event: &Event) {
    if w.subscribers.is_empty() {
        return;
    }
    let item = event.outbox_item();
    for s in &w.subscribers {
        s.push(item.clone());
    }
}

fn pending_slot() -> PanelSlot {
    PanelSlot { status: RunStatus::Pending, data: None, error: None, seq: 0, refreshed_at: None }
}

/// Moves a watched dashboard to a new version, dropping slots of panels that no longer exist.
fn adopt(w: &mut Watched, version: u64, state: Arc<DashboardState>) {
    w.snapshot = None;
    w.slots.retain(|id, _| state.panels.iter().any(|p| &p.id == id));
    w.last_run.retain(|id, _| state.panels.iter().any(|p| &p.id == id));
    w.version = version;
    w.state = Some(state);
}

/// `"30s"`, `"5m"`: a refresh interval (validated elsewhere; bad values mean no refresh).
pub fn parse_interval(s: &str) -> Option<Duration> {
    humantime::parse_duration(s).ok().filter(|d| *d >= Duration::from_secs(1))
}

/// Unix milliseconds now (shared by the runner).
pub(crate) fn unix_ms() -> i64 {
    now_ms()
}
