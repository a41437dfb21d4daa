//! Live dashboards: running panel code, caching its results, refreshing on schedule, and
//! fanning out events to subscribers.
//!
//! Each subscriber is a [`Viewer`] (one client connection) that sees a *view* of a dashboard:
//! the results computed with its own variable values. Viewers with the same values share a view;
//! setting values never changes anyone else's. What a viewer asks for (refresh, new values) is
//! queued per viewer, coalesced per panel and run a few at a time, so no client can queue
//! unbounded work or starve the scheduler and other clients.
//!
//! Owns the wire events (`dashboard.snapshot`, `dashboard.patch`, `panel.data`, `panel.error`,
//! `dashboard.deleted`), each serialized once and shared by every subscriber, and the
//! per-subscriber [`Outbox`]: a bounded queue where a newer `panel.data` for a panel replaces a
//! queued older one, patches are never dropped, and a subscriber too far behind is cut off.
//! Knows nothing of HTTP or WebSocket framing (see `ws`), nor of agents.

mod outbox;
mod runner;
mod viewer;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Map, Value};

use base::provenance::Provenance;
use dashboard::diff::Diff;
use dashboard::{ChangeEntry, DashboardState, Panel};
use sandbox::{ExecError, Sandbox};

pub use outbox::{CLOSE_TOO_FAR_BEHIND, Closed, Outbox, OutboxItem};
pub use runner::{Good, Keeper, Kept, PanelRun, RunOk, RunStatus};
pub use viewer::{Admission, Viewer, ViewerError, ViewerLimits};

use viewer::Subscriber;

/// One panel's last known result, as sent in snapshots.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PanelSlot {
    /// `ok`, `error` or `pending`.
    pub status: RunStatus,
    /// The data when ok.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// Where the data came from (see [`Provenance`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub provenance: Vec<Provenance>,
    /// The error when failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ExecError>,
    /// Sequence number of the last event for this panel.
    pub seq: u64,
    /// When the data was produced (unix ms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refreshed_at: Option<i64>,
    /// Set when `status` is `stale`: the data shown is the last good data, and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale: Option<Stale>,
}

/// Why a panel shows its last good data instead of fresh data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Stale {
    /// When the data shown was produced (unix ms).
    pub data_at: i64,
    /// When the panel's runs started failing (unix ms).
    pub failing_since: i64,
    /// The analyst's sentence for the failure ("Binance cannot be reached").
    pub reason: String,
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
        /// The variable values this viewer set (its view); unset ones have their defaults.
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
        /// Where the data came from, one entry per provider (a demo one makes it demo data).
        provenance: Vec<Provenance>,
        /// Run time in milliseconds.
        duration_ms: f64,
        /// When it was produced (unix ms).
        refreshed_at: i64,
        /// Set when this is the last good data, shown because the latest run failed for a
        /// provider's reason.
        #[serde(skip_serializing_if = "Option::is_none")]
        stale: Option<Stale>,
        /// The latest run's failure, when `stale`.
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<ExecError>,
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

/// The view every subscriber starts in: the variables' defaults (no values set).
const DEFAULT_VIEW: &str = "{}";

/// Results for one set of variable values of a dashboard. Subscribers whose values are the same
/// share a view (one run, one serialization); a view nobody looks at any more is dropped, except
/// the default one, which also serves REST (`/data`, refresh) and the agent's runs.
#[derive(Default)]
struct View {
    /// The values set over the defaults (sorted by name; only known names, none equal to its
    /// default).
    overrides: Map<String, Value>,
    slots: HashMap<String, PanelSlot>,
    last_run: HashMap<String, Instant>,
    /// Panels whose runs fail for a provider's reason that may pass (down, slow, busy): how
    /// many times in a row. They are run again on their own, backing off.
    failures: HashMap<String, u32>,
    /// The serialized snapshot, shared by every subscriber of the view until the version, a
    /// panel result or the values change (many viewers opening a dashboard cost one
    /// serialization).
    snapshot: Option<OutboxItem>,
}

/// One subscription: a viewer and the view it looks at.
struct Sub {
    viewer: Arc<Subscriber>,
    view: Arc<str>,
}

/// Per dashboard: the version subscribers have seen, its views and subscribers.
#[derive(Default)]
struct Watched {
    version: u64,
    state: Option<Arc<DashboardState>>,
    /// Views by their key (the overrides as canonical JSON); [`DEFAULT_VIEW`] always exists.
    views: HashMap<Arc<str>, View>,
    subscribers: Vec<Sub>,
    /// Last `seq` per panel across views: a result in any view gets a higher one than every
    /// result before it, so a viewer moving to another view never sees `seq` go backwards.
    seqs: HashMap<String, u64>,
    /// Panels an alert rule judges, with how often at least: the default view of these
    /// refreshes on schedule even with no subscriber (see [`Live::set_alerted`]).
    alerted: HashMap<String, Duration>,
}

impl Watched {
    fn default_view(&mut self) -> &mut View {
        self.views.entry(DEFAULT_VIEW.into()).or_default()
    }

    fn sub(&self, viewer: &Arc<Subscriber>) -> Option<&Sub> {
        self.subscribers.iter().find(|s| Arc::ptr_eq(&s.viewer, viewer))
    }

    /// Drops views (other than the default) that no subscriber looks at.
    fn prune_views(&mut self) {
        let subs = &self.subscribers;
        self.views.retain(|k, _| &**k == DEFAULT_VIEW || subs.iter().any(|s| s.view == *k));
    }

    /// Marks panels without a result in view `key` pending; returns those still to run.
    fn missing(&mut self, key: &str) -> Vec<String> {
        let Some(state) = self.state.clone() else { return Vec::new() };
        let seqs = &self.seqs;
        let Some(view) = self.views.get_mut(key) else { return Vec::new() };
        let mut out = Vec::new();
        for p in &state.panels {
            match view.slots.get(&p.id) {
                Some(s) if s.status != RunStatus::Pending => {}
                Some(_) => out.push(p.id.clone()),
                None => {
                    let seq = seqs.get(&p.id).copied().unwrap_or(0);
                    view.slots.insert(p.id.clone(), PanelSlot { seq, ..pending_slot() });
                    view.snapshot = None;
                    out.push(p.id.clone());
                }
            }
        }
        out
    }

    /// The view's snapshot, serialized once until something in it changes.
    fn snapshot(&mut self, id: &str, key: &str) -> Option<OutboxItem> {
        let state = self.state.clone()?;
        let version = self.version;
        let view = self.views.get_mut(key)?;
        if let Some(item) = &view.snapshot {
            return Some(item.clone());
        }
        let item = Event::Snapshot {
            dashboard_id: id.to_owned(),
            version,
            state: (*state).clone(),
            panels: view.slots.clone(),
            vars: view.overrides.clone(),
        }
        .outbox_item();
        view.snapshot = Some(item.clone());
        Some(item)
    }
}

/// Settings of the live layer.
#[derive(Debug, Clone)]
pub struct LiveConfig {
    /// Maximum panel runs in flight across all dashboards.
    pub max_concurrent_runs: usize,
    /// How often the scheduler looks for due refreshes.
    pub tick: Duration,
    /// Bounds on viewers (connections) and what each may ask for.
    pub viewers: ViewerLimits,
    /// Previews (panel code of no dashboard) running at once (`BOARDSMITH_MAX_PREVIEWS`; the
    /// app's default is half the sandbox workers, at least 1), so previews never hold every
    /// worker and scheduled refreshes and viewers' runs keep going.
    pub max_previews: usize,
}

impl Default for LiveConfig {
    fn default() -> Self {
        Self {
            max_concurrent_runs: 8,
            tick: Duration::from_millis(500),
            viewers: ViewerLimits::default(),
            max_previews: 1,
        }
    }
}

impl LiveConfig {
    /// Defaults with `BOARDSMITH_MAX_WEBSOCKETS` and `BOARDSMITH_MAX_PREVIEWS` applied;
    /// without the latter, half of `workers` (at least 1).
    pub fn from_env(workers: usize) -> Self {
        let num = |k: &str| std::env::var(k).ok().and_then(|v| v.trim().parse::<usize>().ok());
        let mut config = Self::default();
        if let Some(n) = num("BOARDSMITH_MAX_WEBSOCKETS") {
            config.viewers.max_viewers = n;
        }
        config.max_previews = num("BOARDSMITH_MAX_PREVIEWS").unwrap_or(workers / 2).max(1);
        config
    }
}

/// Refreshes across several nodes: which node refreshes which dashboard's scheduled panels,
/// and where the results go so every node's subscribers get them.
pub trait RefreshCoordinator: Send + Sync {
    /// Of the dashboards this node's viewers watch, those this node refreshes now (claiming
    /// free ones, keeping its own).
    fn claim(&self, watched: Vec<String>) -> base::BoxFuture<'_, Vec<String>>;
    /// A scheduled run's result (default values) of `version`, for the other nodes.
    fn share<'a>(
        &'a self,
        id: &'a str,
        version: u64,
        panel: &'a str,
        run: &'a PanelRun,
    ) -> base::BoxFuture<'a, ()>;
}

/// Sees every scheduled run of the default view (default values) on the node that made it: the
/// node holding the dashboard's refresh lease, so exactly one node sees each run. Alert rules
/// are judged here.
pub trait RunObserver: Send + Sync {
    /// `run` of panel `panel` of `id` at `version` (called before subscribers get it).
    fn observed(
        &self,
        id: &str,
        version: u64,
        state: &Arc<DashboardState>,
        panel: &str,
        run: &PanelRun,
    );
}

/// Counters for tests and diagnostics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LiveStats {
    /// Connected viewers.
    pub viewers: usize,
    /// Panel runs viewers asked for that wait in their queues.
    pub queued_runs: usize,
    /// Panel runs viewers asked for that are running (or waiting for a sandbox slot).
    pub viewer_runs: usize,
    /// Panel code executions that reached the sandbox since start (cache hits excluded).
    pub executed: u64,
}

/// The live layer: panel runner plus subscriber hub.
pub struct Live {
    runner: runner::Runner,
    dashboards: Mutex<HashMap<String, Watched>>,
    limits: ViewerLimits,
    admissions: Arc<tokio::sync::Semaphore>,
    previews: tokio::sync::Semaphore,
    counters: viewer::Counters,
    observer: std::sync::OnceLock<Arc<dyn RunObserver>>,
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live").finish_non_exhaustive()
    }
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// Default values with `overrides` over them (names the state does not declare are ignored).
fn effective_vars(state: &DashboardState, overrides: &Map<String, Value>) -> Map<String, Value> {
    state
        .variables
        .iter()
        .map(|v| (v.name.clone(), overrides.get(&v.name).unwrap_or(&v.default).clone()))
        .collect()
}

/// The canonical key of a set of overrides (they are kept sorted by name).
fn view_key(overrides: &Map<String, Value>) -> Arc<str> {
    Value::Object(overrides.clone()).to_string().into()
}

/// Largest serialized set of values one viewer may set on a dashboard.
const MAX_OVERRIDES: usize = 4 * 1024;

/// `current` with `vars` merged in: unknown names and values equal to the default are dropped,
/// a `select` value must be one of its options and a `range` value a number.
fn merge_vars(
    state: &DashboardState,
    current: &Map<String, Value>,
    vars: Map<String, Value>,
) -> Result<Map<String, Value>, ViewerError> {
    let mut merged = current.clone();
    for (name, value) in vars {
        let Some(def) = state.variables.iter().find(|v| v.name == name) else { continue };
        let fits = match def.kind {
            dashboard::VariableType::Select => {
                def.options.as_ref().is_none_or(|o| o.contains(&value))
            }
            dashboard::VariableType::Range => value.is_number(),
            dashboard::VariableType::Text => true,
        };
        if !fits {
            return Err(ViewerError::Invalid(format!(
                "`{value}` is not a valid value of variable `{name}`"
            )));
        }
        if value == def.default {
            merged.remove(&name);
        } else {
            merged.insert(name, value);
        }
    }
    merged.sort_keys();
    if view_key(&merged).len() > MAX_OVERRIDES {
        return Err(ViewerError::Limit(format!(
            "variable values too large: more than {MAX_OVERRIDES} bytes per dashboard"
        )));
    }
    Ok(merged)
}

impl Live {
    /// Creates the live layer over a sandbox pool.
    pub fn new(sandbox: Sandbox, config: LiveConfig) -> Self {
        Self {
            runner: runner::Runner::new(sandbox, config.max_concurrent_runs),
            dashboards: Mutex::default(),
            admissions: Arc::new(tokio::sync::Semaphore::new(config.viewers.max_viewers)),
            previews: tokio::sync::Semaphore::new(config.max_previews),
            limits: config.viewers,
            counters: viewer::Counters::default(),
            observer: std::sync::OnceLock::new(),
        }
    }

    /// Hands every scheduled default-view run to `observer` from now on (set once).
    pub fn observe_with(&self, observer: Arc<dyn RunObserver>) {
        let _ = self.observer.set(observer);
    }

    /// Makes `panels` of `id` (held at `version`) refresh on schedule with the default values
    /// at least every given interval, viewers or not; an empty map ends that. Alert rules use
    /// it: a rule is judged on every such run.
    pub fn set_alerted(
        &self,
        id: &str,
        version: u64,
        state: Arc<DashboardState>,
        panels: HashMap<String, Duration>,
    ) {
        let mut map = self.lock();
        if panels.is_empty() {
            if let Some(w) = map.get_mut(id) {
                w.alerted.clear();
            }
            return;
        }
        let w = map.entry(id.to_owned()).or_default();
        w.default_view();
        if w.state.is_none() {
            adopt(w, version, state);
        }
        w.alerted = panels;
    }

    /// Runs one panel's code now with `vars` (one run per panel at a time; bounded overall),
    /// never from the cache and without publishing: an alert rule's own values.
    #[base::boxed]
    pub async fn run_fresh(
        &self,
        dashboard_id: &str,
        panel: &Panel,
        vars: &Map<String, Value>,
    ) -> PanelRun {
        self.runner.run_fresh(dashboard_id, panel, vars).await
    }

    /// Runs code that belongs to no panel (an alert rule's `when`), in the same sandbox and
    /// slots as panels; not counted as a preview.
    #[base::boxed]
    pub async fn run_code(&self, code: &str, vars: &Map<String, Value>) -> PanelRun {
        self.runner.preview(code, vars).await
    }

    /// Keeps panels' last good results durably through `keeper` from now on (set once), so a
    /// restart or another node can show them while a provider is down.
    pub fn keep_with(&self, keeper: Arc<dyn Keeper>) {
        self.runner.keep_with(keeper);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Watched>> {
        self.dashboards.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The limits viewers are held to.
    pub fn limits(&self) -> &ViewerLimits {
        &self.limits
    }

    /// Counters: viewers, their queued and running panel runs, sandbox executions.
    pub fn stats(&self) -> LiveStats {
        LiveStats {
            viewers: self.limits.max_viewers - self.admissions.available_permits(),
            queued_runs: self.counters.queued(),
            viewer_runs: self.counters.running(),
            executed: self.runner.executed(),
        }
    }

    /// Variable values panels run with outside any viewer (REST, the agent's test runs,
    /// scheduled refreshes of the default view): the declared defaults. Values a viewer sets
    /// apply to that viewer only.
    pub fn vars(&self, _id: &str, state: &DashboardState) -> Map<String, Value> {
        effective_vars(state, &Map::new())
    }

    /// Runs one panel's code now (one run per panel at a time; bounded overall), without
    /// publishing.
    #[base::boxed]
    pub async fn run_panel(
        &self,
        dashboard_id: &str,
        panel: &Panel,
        vars: &Map<String, Value>,
    ) -> PanelRun {
        self.runner.run(dashboard_id, panel, vars).await
    }

    /// Runs panel code that belongs to no dashboard (preview); `None` when
    /// [`LiveConfig::max_previews`] previews are running already (the caller says so rather
    /// than queue: a queue of previews is what starved everyone else).
    #[base::boxed]
    pub async fn preview(&self, code: &str, vars: &Map<String, Value>) -> Option<PanelRun> {
        let _slot = self.previews.try_acquire().ok()?;
        Some(self.runner.preview(code, vars).await)
    }

    /// Adds `viewer` to a dashboard (or keeps it, with its values, when it is subscribed
    /// already) and queues the snapshot of its view first. Panels without a result there are
    /// marked pending and queued as the viewer's runs (their `panel.data` follows the
    /// snapshot). If the live layer already holds a newer version than `version`, that one is
    /// sent.
    fn subscribe(
        &self,
        viewer: &Arc<Subscriber>,
        id: &str,
        version: u64,
        state: Arc<DashboardState>,
    ) {
        let mut map = self.lock();
        let w = map.entry(id.to_owned()).or_default();
        w.default_view();
        // Only a first load: a newer version read from the store is being published by its
        // writer (`version_saved`), whose patch the subscribers must see.
        if w.state.is_none() {
            adopt(w, version, state);
        }
        let key = match w.sub(viewer) {
            Some(s) => s.view.clone(),
            None => {
                w.subscribers.push(Sub { viewer: viewer.clone(), view: DEFAULT_VIEW.into() });
                DEFAULT_VIEW.into()
            }
        };
        let missing = w.missing(&key);
        // Queued under the lock: nothing published for this dashboard can overtake it.
        if let Some(item) = w.snapshot(id, &key) {
            viewer.outbox.push(item);
        }
        let id: Arc<str> = id.into();
        for panel in missing {
            viewer.enqueue(&self.counters, &id, &panel, false);
        }
    }

    /// True when `viewer` is subscribed to `id`.
    fn is_subscribed(&self, viewer: &Arc<Subscriber>, id: &str) -> bool {
        self.lock().get(id).is_some_and(|w| w.sub(viewer).is_some())
    }

    /// Removes a viewer from one dashboard.
    fn unsubscribe(&self, viewer: &Arc<Subscriber>, id: &str) {
        if let Some(w) = self.lock().get_mut(id) {
            w.subscribers.retain(|s| !Arc::ptr_eq(&s.viewer, viewer));
            w.prune_views();
        }
        viewer.forget(&self.counters, Some(id));
    }

    /// Removes a viewer everywhere (connection closed).
    fn disconnect(&self, viewer: &Arc<Subscriber>) {
        for w in self.lock().values_mut() {
            w.subscribers.retain(|s| !Arc::ptr_eq(&s.viewer, viewer));
            w.prune_views();
        }
        viewer.forget(&self.counters, None);
    }

    /// Queues fresh runs of one panel (or all) of a subscribed dashboard for `viewer`, with its
    /// values; a request for a panel already queued joins it.
    fn refresh(
        &self,
        viewer: &Arc<Subscriber>,
        id: &str,
        panel: Option<&str>,
    ) -> Result<(), ViewerError> {
        let map = self.lock();
        let w = map.get(id).filter(|w| w.sub(viewer).is_some());
        let Some(state) = w.and_then(|w| w.state.clone()) else {
            return Err(ViewerError::NotSubscribed(id.to_owned()));
        };
        let panels: Vec<&Panel> =
            state.panels.iter().filter(|p| panel.is_none_or(|id| p.id == id)).collect();
        if panels.is_empty() {
            return Err(ViewerError::NoSuchPanel {
                dashboard: id.to_owned(),
                panel: panel.unwrap_or_default().to_owned(),
            });
        }
        let id: Arc<str> = id.into();
        for p in panels {
            if !viewer.enqueue(&self.counters, &id, &p.id, true) {
                return Err(ViewerError::Limit(format!(
                    "too many panel runs queued (more than {})",
                    viewer::MAX_QUEUED
                )));
            }
        }
        Ok(())
    }

    /// Sets variable values for `viewer` on a subscribed dashboard: the viewer moves to the view
    /// of its new values (shared with viewers that chose the same), gets that view's snapshot,
    /// and the panels without a result there are queued as its runs. Nobody else's view
    /// changes.
    fn set_vars(
        &self,
        viewer: &Arc<Subscriber>,
        id: &str,
        vars: Map<String, Value>,
    ) -> Result<(), ViewerError> {
        let mut map = self.lock();
        let Some(w) = map.get_mut(id).filter(|w| w.sub(viewer).is_some()) else {
            return Err(ViewerError::NotSubscribed(id.to_owned()));
        };
        let Some(state) = w.state.clone() else {
            return Err(ViewerError::NotSubscribed(id.to_owned()));
        };
        let old = w.sub(viewer).map(|s| s.view.clone()).unwrap_or_else(|| DEFAULT_VIEW.into());
        let current = w.views.get(&old).map(|v| v.overrides.clone()).unwrap_or_default();
        let overrides = merge_vars(&state, &current, vars)?;
        let key = view_key(&overrides);
        if key != old {
            if let Some(s) = w.subscribers.iter_mut().find(|s| Arc::ptr_eq(&s.viewer, viewer)) {
                s.view = key.clone();
            }
            w.views.entry(key.clone()).or_insert_with(|| View { overrides, ..View::default() });
            w.prune_views();
        }
        let missing = w.missing(&key);
        if let Some(item) = w.snapshot(id, &key) {
            viewer.outbox.push(item.vars_snapshot(id));
        }
        let id: Arc<str> = id.into();
        for panel in missing {
            viewer.enqueue(&self.counters, &id, &panel, false);
        }
        Ok(())
    }

    /// What a queued run needs, read when it starts: the panel as it is now, the viewer's
    /// values and the view the result belongs to. None when the viewer left the dashboard or
    /// the panel is gone.
    fn request(
        &self,
        viewer: &Arc<Subscriber>,
        id: &str,
        panel: &str,
    ) -> Option<(Panel, Map<String, Value>, Arc<str>)> {
        let map = self.lock();
        let w = map.get(id)?;
        let key = w.sub(viewer)?.view.clone();
        let state = w.state.as_ref()?;
        let panel = state.panels.iter().find(|p| p.id == panel)?.clone();
        let vars = effective_vars(state, &w.views.get(&key)?.overrides);
        Some((panel, vars, key))
    }

    /// Runs one request of a viewer and publishes the result to its view.
    async fn serve(&self, viewer: &Arc<Subscriber>, request: &viewer::Request) {
        let Some((panel, vars, key)) = self.request(viewer, &request.dashboard, &request.panel)
        else {
            return;
        };
        let run = if request.fresh {
            self.runner.run_fresh(&request.dashboard, &panel, &vars).await
        } else {
            self.runner.run(&request.dashboard, &panel, &vars).await
        };
        self.record(&request.dashboard, &key, &panel.id, run);
    }

    /// Number of subscribers of a dashboard.
    pub fn subscribers(&self, id: &str) -> usize {
        self.lock().get(id).map_or(0, |w| w.subscribers.len())
    }

    fn publish(&self, id: &str, event: &Event) {
        if let Some(w) = self.lock().get(id) {
            publish_to(w, None, event);
        }
    }

    /// A new version was persisted: publish the patch (change entries without code diffs plus
    /// the RFC 6902 operations), then the panel results already computed for it (`runs`, with
    /// the default values). Changed panels of the other views are queued as runs of one of
    /// their viewers.
    ///
    /// Live state only moves forward: a version not newer than the one held is ignored, and
    /// when the one held is not `base_version` (a version this layer never saw) subscribers
    /// get a snapshot instead of a patch they could not apply.
    pub fn version_saved(
        &self,
        id: &str,
        base_version: u64,
        version: u64,
        diff: &Diff,
        new: Arc<DashboardState>,
        runs: Vec<(String, PanelRun)>,
    ) {
        {
            // Adopting and publishing together: no panel result of the new version can reach a
            // subscriber before the patch that introduces it.
            let mut map = self.lock();
            let w = map.entry(id.to_owned()).or_default();
            w.default_view();
            let held = w.state.is_some().then_some(w.version);
            if held.is_some_and(|v| v >= version) {
                tracing::debug!(%id, held = ?held, version, "ignoring a version not newer than the live one");
                return;
            }
            adopt(w, version, new.clone());
            if held.is_none_or(|v| v == base_version) {
                let changes = diff.changes.iter().map(ChangeEntry::without_code_diff).collect();
                publish_to(
                    w,
                    None,
                    &Event::Patch {
                        dashboard_id: id.to_owned(),
                        base_version,
                        version,
                        changes,
                        patch: diff.patch.clone(),
                    },
                );
            } else {
                let keys: Vec<Arc<str>> = w.views.keys().cloned().collect();
                for key in keys {
                    let Some(item) = w.snapshot(id, &key) else { continue };
                    for s in w.subscribers.iter().filter(|s| s.view == key) {
                        s.viewer.outbox.push(item.clone());
                    }
                }
            }
            let dashboard: Arc<str> = id.into();
            for key in w.views.keys().filter(|k| &***k != DEFAULT_VIEW) {
                let Some(rep) = w.subscribers.iter().find(|s| s.view == *key) else { continue };
                for panel in &diff.changed {
                    rep.viewer.enqueue(&self.counters, &dashboard, panel, false);
                }
            }
        }
        for (panel_id, run) in runs {
            self.record(id, DEFAULT_VIEW, &panel_id, run);
        }
    }

    /// Runs `panels` of `state` with the default values (a new version's added and modified
    /// panels, before it is published).
    #[base::boxed]
    pub async fn run_panels(
        &self,
        id: &str,
        state: &DashboardState,
        panels: &[String],
    ) -> Vec<(String, PanelRun)> {
        let vars = self.vars(id, state);
        futures::future::join_all(
            state
                .panels
                .iter()
                .filter(|p| panels.contains(&p.id))
                .map(|p| async { (p.id.clone(), self.run_panel(id, p, &vars).await) }),
        )
        .await
    }

    /// Stores a run's result as the panel's latest in view `key` and publishes it to that
    /// view's subscribers, in one critical section so results of one panel reach subscribers
    /// in `seq` order.
    fn record(&self, id: &str, key: &str, panel_id: &str, run: PanelRun) {
        let mut map = self.lock();
        let Some(w) = map.get_mut(id) else { return };
        if w.state.as_ref().is_some_and(|s| !s.panels.iter().any(|p| p.id == panel_id)) {
            return; // the panel was removed meanwhile
        }
        if key == DEFAULT_VIEW {
            w.default_view();
        }
        let seq = {
            let seq = w.seqs.entry(panel_id.to_owned()).or_insert(0);
            *seq += 1;
            *seq
        };
        let Some(view) = w.views.get_mut(key) else { return }; // nobody looks at it any more
        view.snapshot = None;
        let slot = view.slots.entry(panel_id.to_owned()).or_insert_with(pending_slot);
        slot.seq = seq;
        view.last_run.insert(panel_id.to_owned(), Instant::now());
        let retry = run.result.as_ref().err().and_then(retry_after);
        match retry {
            Some(_) => *view.failures.entry(panel_id.to_owned()).or_insert(0) += 1,
            None => {
                view.failures.remove(panel_id);
            }
        }
        let duration_ms = run.duration.as_secs_f64() * 1e3;
        // Fresh data, or the last good data while the provider fails (with why and since when).
        let shown = shown(run);
        let event = match shown {
            Ok((ok, at, stale)) => {
                let (stale, error) = stale.unzip();
                slot.status = if stale.is_some() { RunStatus::Stale } else { RunStatus::Ok };
                slot.data = Some(ok.data.clone());
                slot.provenance.clone_from(&ok.provenance);
                slot.error.clone_from(&error);
                slot.refreshed_at = Some(at);
                slot.stale.clone_from(&stale);
                Event::Data {
                    dashboard_id: id.to_owned(),
                    panel_id: panel_id.to_owned(),
                    seq,
                    data: ok.data,
                    row_count: ok.row_count,
                    provenance: ok.provenance,
                    duration_ms,
                    refreshed_at: at,
                    stale,
                    error,
                }
            }
            Err(error) => {
                slot.status = RunStatus::Error;
                slot.error = Some(error.clone());
                slot.stale = None;
                Event::PanelError {
                    dashboard_id: id.to_owned(),
                    panel_id: panel_id.to_owned(),
                    seq,
                    error,
                }
            }
        };
        publish_to(w, Some(key), &event);
    }

    /// Re-runs panels everywhere (REST refresh): with the default values for the default view,
    /// and as fresh runs queued on one viewer of every other view (its values, its run budget).
    pub fn refresh_panels<'a>(
        self: &'a Arc<Self>,
        id: &'a str,
        state: &'a DashboardState,
        panels: &'a [Panel],
    ) -> base::BoxFuture<'a, ()> {
        Box::pin(async move {
            {
                let map = self.lock();
                if let Some(w) = map.get(id) {
                    let dashboard: Arc<str> = id.into();
                    for key in w.views.keys().filter(|k| &***k != DEFAULT_VIEW) {
                        let Some(rep) = w.subscribers.iter().find(|s| s.view == *key) else {
                            continue;
                        };
                        for p in panels {
                            rep.viewer.enqueue(&self.counters, &dashboard, &p.id, true);
                        }
                    }
                }
            }
            self.refresh_default(id, state, panels).await;
        })
    }

    /// Re-runs panels with the default values and publishes their results to the default view
    /// (REST refreshes).
    async fn refresh_default(&self, id: &str, state: &DashboardState, panels: &[Panel]) {
        let vars = self.vars(id, state);
        let runs =
            futures::future::join_all(panels.iter().map(|p| self.runner.run_fresh(id, p, &vars)))
                .await;
        for (p, run) in panels.iter().zip(runs) {
            self.record(id, DEFAULT_VIEW, &p.id, run);
        }
    }

    /// The dashboard was deleted: tell subscribers and forget it.
    pub fn deleted(&self, id: &str) {
        self.publish(id, &Event::Deleted { dashboard_id: id.to_owned() });
        self.lock().remove(id);
    }

    /// Latest results per panel with the default values (for `GET /api/dashboards/{id}/data`).
    pub fn slots(&self, id: &str) -> HashMap<String, PanelSlot> {
        self.lock()
            .get(id)
            .and_then(|w| w.views.get(DEFAULT_VIEW))
            .map(|v| v.slots.clone())
            .unwrap_or_default()
    }

    /// Makes sure the live layer holds the dashboard, loading `version` if it holds none. A
    /// version it already holds only moves forward through [`Live::version_saved`], so a reader
    /// racing a writer can never skip the subscribers' patch.
    pub fn record_version(&self, id: &str, version: u64, state: Arc<DashboardState>) {
        let mut map = self.lock();
        let w = map.entry(id.to_owned()).or_default();
        w.default_view();
        if w.state.is_none() {
            adopt(w, version, state);
        }
    }

    /// The version of `id` this layer holds, and its state; `None` when it holds none.
    pub fn held(&self, id: &str) -> Option<(u64, Arc<DashboardState>)> {
        let map = self.lock();
        let w = map.get(id)?;
        Some((w.version, w.state.clone()?))
    }

    /// The dashboards this layer holds a version of.
    pub fn held_ids(&self) -> Vec<String> {
        self.lock().iter().filter(|(_, w)| w.state.is_some()).map(|(id, _)| id.clone()).collect()
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
        self.record(id, DEFAULT_VIEW, panel_id, run);
    }

    /// Panels of watched views whose refresh interval has elapsed, marked as run now so a slow
    /// run is not scheduled again on the next tick. Those of the default view are returned to
    /// be run by the scheduler; those of other views are queued as runs of one of their
    /// viewers (a viewer's own values cost its own run budget).
    fn due(&self) -> Vec<(String, Arc<DashboardState>, Vec<Panel>)> {
        let now = Instant::now();
        let mut map = self.lock();
        let mut out = Vec::new();
        for (id, w) in
            map.iter_mut().filter(|(_, w)| !w.subscribers.is_empty() || !w.alerted.is_empty())
        {
            let Some(state) = w.state.clone() else { continue };
            let dashboard: Arc<str> = id.as_str().into();
            for (key, view) in &mut w.views {
                let is_default = &**key == DEFAULT_VIEW;
                let rep = w.subscribers.iter().find(|s| s.view == *key);
                if rep.is_none() && !is_default {
                    continue;
                }
                // With no subscriber, only the panels alert rules judge.
                let alerted = &w.alerted;
                let due: Vec<Panel> = state
                    .panels
                    .iter()
                    .filter(|p| rep.is_some() || alerted.contains_key(&p.id))
                    .filter(|p| {
                        let every = p
                            .refresh
                            .as_deref()
                            .or(state.refresh.as_deref())
                            .and_then(parse_interval);
                        let alert = alerted.get(&p.id).copied().filter(|_| is_default);
                        let every = [every, alert].into_iter().flatten().min();
                        // A panel failing for a provider's reason is retried sooner when its
                        // schedule would wait longer (or it has none), so it recovers alone.
                        let retry = view.failures.get(&p.id).map(|n| {
                            let breaker = view
                                .slots
                                .get(&p.id)
                                .and_then(|s| s.error.as_ref())
                                .and_then(retry_after)
                                .unwrap_or(RETRY_FIRST);
                            retry_backoff(*n).max(breaker)
                        });
                        let Some(every) = [every, retry].into_iter().flatten().min() else {
                            return false;
                        };
                        view.last_run.get(&p.id).is_none_or(|t| now.duration_since(*t) >= every)
                    })
                    .cloned()
                    .collect();
                for p in &due {
                    view.last_run.insert(p.id.clone(), now);
                }
                if due.is_empty() {
                } else if is_default {
                    out.push((id.clone(), state.clone(), due));
                } else if let Some(rep) = rep {
                    for p in &due {
                        rep.viewer.enqueue(&self.counters, &dashboard, &p.id, true);
                    }
                }
            }
        }
        out
    }

    /// The dashboards with subscribers on this node, and those with alerted panels.
    pub fn watched_ids(&self) -> Vec<String> {
        self.lock()
            .iter()
            .filter(|(_, w)| !w.subscribers.is_empty() || !w.alerted.is_empty())
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// The refresh scheduler: runs until `shutdown` fires. Only watched dashboards refresh;
    /// with a coordinator (several nodes), only those it says this node refreshes, and their
    /// results are handed to it for the other nodes.
    pub fn run_scheduler(
        self: Arc<Self>,
        tick: Duration,
        shutdown: tokio_util::sync::CancellationToken,
        coordinator: Option<Arc<dyn RefreshCoordinator>>,
    ) -> base::BoxFuture<'static, ()> {
        Box::pin(async move {
            let mut interval = tokio::time::interval(tick);
            interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    () = shutdown.cancelled() => return,
                    _ = interval.tick() => {}
                }
                let mut due = self.due();
                if let Some(c) = &coordinator {
                    let mine = c.claim(self.watched_ids()).await;
                    due.retain(|(id, _, _)| mine.contains(id));
                }
                for (id, state, panels) in due {
                    let (live, coordinator) = (self.clone(), coordinator.clone());
                    tokio::spawn(async move {
                        let vars = live.vars(&id, &state);
                        let version = live.held(&id).map_or(0, |(v, _)| v);
                        let runs = futures::future::join_all(
                            panels.iter().map(|p| live.runner.run_fresh(&id, p, &vars)),
                        )
                        .await;
                        for (p, run) in panels.iter().zip(runs) {
                            if let Some(o) = live.observer.get() {
                                o.observed(&id, version, &state, &p.id, &run);
                            }
                            if let Some(c) = &coordinator {
                                c.share(&id, version, &p.id, &run).await;
                            }
                            live.record(&id, DEFAULT_VIEW, &p.id, run);
                        }
                    });
                }
            }
        })
    }
}

/// Queues an event for the subscribers of `w` (of view `view` only, when given); called with
/// the live lock held, so every subscriber sees events in publication order.
fn publish_to(w: &Watched, view: Option<&str>, event: &Event) {
    let mut subs = w.subscribers.iter().filter(|s| view.is_none_or(|v| *s.view == *v)).peekable();
    if subs.peek().is_none() {
        return;
    }
    let item = event.outbox_item();
    for s in subs {
        s.viewer.outbox.push(item.clone());
    }
}

/// What a run shows: fresh data (with its time), the last good data while the provider fails
/// (with why, since when, and the error), or the error alone.
#[allow(clippy::type_complexity)]
fn shown(run: PanelRun) -> Result<(RunOk, i64, Option<(Stale, ExecError)>), ExecError> {
    match (run.result, run.kept) {
        (Ok(ok), _) => Ok((ok, run.finished_at, None)),
        (Err(error), Some(kept)) => {
            let reason = error
                .outage
                .as_ref()
                .map_or_else(|| "the data provider failed".to_owned(), |o| o.summary.clone());
            let stale = Stale { data_at: kept.good.at, failing_since: kept.failing_since, reason };
            Ok((kept.good.ok, kept.good.at, Some((stale, error))))
        }
        (Err(error), None) => Err(error),
    }
}

impl PanelSlot {
    /// The slot of a run that belongs to no live view (a past version's panels): `seq` 0.
    pub fn of_run(run: PanelRun) -> Self {
        match shown(run) {
            Ok((ok, at, stale)) => {
                let (stale, error) = stale.unzip();
                Self {
                    status: if stale.is_some() { RunStatus::Stale } else { RunStatus::Ok },
                    data: Some(ok.data),
                    provenance: ok.provenance,
                    error,
                    seq: 0,
                    refreshed_at: Some(at),
                    stale,
                }
            }
            Err(error) => Self { status: RunStatus::Error, error: Some(error), ..pending_slot() },
        }
    }
}

fn pending_slot() -> PanelSlot {
    PanelSlot {
        status: RunStatus::Pending,
        data: None,
        provenance: Vec::new(),
        error: None,
        seq: 0,
        refreshed_at: None,
        stale: None,
    }
}

/// Soonest a panel failing for a provider's reason is run again, and the longest it waits.
const RETRY_FIRST: Duration = Duration::from_secs(2);
const RETRY_MOST: Duration = Duration::from_secs(60);

/// When a failed run is worth repeating without anyone asking: a provider that is down, slow
/// or busy may answer later (its breaker says when it calls again). `None` for code failures
/// and for a provider waiting on a setting (a key, a switch).
fn retry_after(error: &ExecError) -> Option<Duration> {
    let outage = error.outage.as_ref()?;
    outage.cause.transient().then(|| {
        let breaker = Duration::from_millis(outage.retry_in_ms.unwrap_or(0));
        breaker.max(RETRY_FIRST)
    })
}

/// The wait before the `n`th retry (from 1) of a failing panel: doubling from
/// [`RETRY_FIRST`], at most [`RETRY_MOST`].
fn retry_backoff(n: u32) -> Duration {
    RETRY_FIRST.saturating_mul(1 << n.saturating_sub(1).min(5)).min(RETRY_MOST)
}

/// Moves a watched dashboard to a new version, dropping slots of panels that no longer exist.
fn adopt(w: &mut Watched, version: u64, state: Arc<DashboardState>) {
    for view in w.views.values_mut() {
        view.snapshot = None;
        view.slots.retain(|id, _| state.panels.iter().any(|p| &p.id == id));
        view.last_run.retain(|id, _| state.panels.iter().any(|p| &p.id == id));
        view.failures.retain(|id, _| state.panels.iter().any(|p| &p.id == id));
    }
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
