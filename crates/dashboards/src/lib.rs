//! The one handle on dashboards, stored and live (as mini-redis's `Db` is the one handle on its
//! state). Reads go to the store. Every write — from REST, the WebSocket or the agent tools —
//! takes the dashboard's writer lock, commits durably, then publishes through `live` while
//! still holding the lock, here and nowhere else; so versions reach subscribers in order and
//! each patch applies to the version they hold. A write returns one [`Saved`], its diff
//! computed once, for every caller to use.
//!
//! Every write is also announced on [`Dashboards::changes`] (which dashboard, which version),
//! for listeners that follow the set of dashboards rather than one dashboard's panels (MCP
//! resource notifications).
//!
//! On a shared store (several nodes on PostgreSQL) the writer lock is also the store's
//! cluster-wide lock, and [`Dashboards::follow`] brings other nodes' writes to this node's
//! viewers: a notice says which dashboard changed; the version itself is read from the store
//! and published as a patch from the version this node's viewers hold (or a snapshot), in
//! order with this node's own writes.
//!
//! Who may see and change each dashboard is [`sharing`]'s: callers ask
//! [`Dashboards::may`] before acting for a principal.
//!
//! Must not know HTTP, WebSocket framing or agents; it runs panels only through `live`.

pub mod drafts;
pub mod sharing;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard, broadcast};

use dashboard::DashboardState;
use dashboard::diff::Diff;
use serde_json::{Map, Value};

use live::{Live, PanelRun, PanelSlot, RefreshCoordinator, RunStatus};
use store::{
    ClusterLock, DashboardListItem, DashboardRecord, Notice, Store, StoreError, VersionInfo,
};

/// Stored and live dashboards (cheap to share behind an `Arc`).
pub struct Dashboards {
    store: Arc<Store>,
    live: Arc<Live>,
    locks: Mutex<HashMap<String, Arc<AsyncMutex<()>>>>,
    changes: broadcast::Sender<Change>,
    sharing: sharing::Sharings,
    drafts: drafts::Drafts,
}

/// A committed change to the set of dashboards, as announced on [`Dashboards::changes`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The dashboard.
    pub id: String,
    /// What happened to it.
    pub kind: ChangeKind,
}

pub use store::Author;
pub use store::ChangeKind;

/// Changes a slow listener may fall behind by before it is told it lagged (and re-reads).
const CHANGE_BACKLOG: usize = 256;

impl std::fmt::Debug for Dashboards {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dashboards").finish_non_exhaustive()
    }
}

/// A dashboard's writer lock: held, no other write of that dashboard runs. The agent's
/// `mutate` holds it across read, build and save.
pub struct WriteLock {
    id: String,
    // Released after the node's own lock is: dropped in declaration order.
    _cluster: Option<ClusterLock>,
    _guard: OwnedMutexGuard<()>,
}

impl WriteLock {
    /// The locked dashboard.
    pub fn id(&self) -> &str {
        &self.id
    }
}

/// One edit of a dashboard: the version it starts from, the new state and their diff.
#[derive(Debug, Clone)]
pub struct Edit {
    /// The current version when the edit was made (read under the writer lock).
    pub before: DashboardRecord,
    /// The new state.
    pub after: Arc<DashboardState>,
    /// `before.state` → `after`, computed once.
    pub diff: Diff,
}

impl Edit {
    /// The edit from `before` to `after`.
    pub fn new(before: DashboardRecord, after: DashboardState) -> Self {
        let diff = Diff::between(&before.state, &after);
        Self { before, after: Arc::new(after), diff }
    }
}

/// Panel results published with a new version.
#[derive(Debug)]
pub enum Runs {
    /// Results the caller computed (the agent tools' test runs).
    Given(Vec<(String, PanelRun)>),
    /// Run the added and modified panels now, before publishing (REST edits, reverts).
    Changed,
}

/// Panel results as of a version (REST refresh and `/data`).
#[derive(Debug, Clone)]
pub struct PanelResults {
    /// The version the results belong to.
    pub version: u64,
    /// The latest result per panel id.
    pub panels: HashMap<String, PanelSlot>,
    /// The state of that version (the panels' code the results came from).
    pub state: Arc<DashboardState>,
}

/// What a write produced.
#[derive(Debug, Clone)]
pub struct Saved {
    /// The new version.
    pub record: DashboardRecord,
    /// The version it replaced.
    pub base_version: u64,
    /// The diff from the base version.
    pub diff: Diff,
    /// The panel runs published with it.
    pub runs: Vec<(String, PanelRun)>,
}

impl Dashboards {
    /// The service over `store` and `live`.
    pub fn new(store: Arc<Store>, live: Arc<Live>) -> Self {
        let (changes, _) = broadcast::channel(CHANGE_BACKLOG);
        live.keep_with(Arc::new(Kept { store: store.clone() }));
        let sharing = sharing::Sharings::new(store.clone());
        let drafts = drafts::Drafts::new(store.clone());
        Self { store, live, locks: Mutex::new(HashMap::new()), changes, sharing, drafts }
    }

    /// Review mode and drafts ([`drafts`]).
    pub fn drafts(&self) -> &drafts::Drafts {
        &self.drafts
    }

    /// Publishes the drafter's draft of `id` onto the current version: all of it (`panels`
    /// `None`: its panels, order and dashboard-level fields), or only those panels. What is
    /// left of the draft is rebased on the new version and returned (`None`: nothing left,
    /// the draft is gone). Nothing is saved when the published state already has it all.
    #[base::boxed]
    pub async fn accept_draft(
        &self,
        id: &str,
        drafter: &str,
        panels: Option<&[String]>,
        by: &Author,
    ) -> Result<(Option<Saved>, Option<drafts::Draft>), drafts::DraftError> {
        use dashboard::merge;
        let lock = self.lock(id).await?;
        let head = self.store.get(id).await?;
        if head.deleted {
            return Err(StoreError::Deleted(id.to_owned()).into());
        }
        let draft = self.drafts.chosen(id, drafter, panels).await?;
        let merged = merge::apply(&head.state, &draft.base, &draft.state, panels);
        let issues = dashboard::validate::check_rules(&merged);
        if !issues.is_empty() {
            let text: Vec<String> =
                issues.iter().map(|i| format!("{}: {}", i.path, i.message)).collect();
            return Err(drafts::DraftError::Invalid(text.join("; ")));
        }
        let edit = Edit::new(head.clone(), merged.clone());
        let (saved, version) = if edit.diff.is_empty() {
            (None, head.version)
        } else {
            let saved = self.save(&lock, edit, "draft accepted", by, Runs::Changed).await?;
            let version = saved.record.version;
            (Some(saved), version)
        };
        drop(lock);
        let left = match panels {
            None => None,
            Some(_) => {
                let state = merge::apply(&merged, &draft.base, &draft.state, None);
                let mut rest =
                    drafts::Draft { base_version: version, base: merged, state, ..draft };
                let changed = merge::changed_panels(&rest.base, &rest.state);
                rest.tests.retain(|p, _| changed.contains(p));
                (!rest.is_empty()).then_some(rest)
            }
        };
        match &left {
            Some(rest) => self.drafts.put(rest).await?,
            None => self.drafts.remove(id, drafter).await?,
        }
        Ok((saved, left))
    }

    /// Drops the drafter's draft of `id` (`panels` `None`), or takes those panels back to
    /// the draft's base; answers what is left (`None`: the draft is gone). The published
    /// dashboard and its history are untouched.
    #[base::boxed]
    pub async fn reject_draft(
        &self,
        id: &str,
        drafter: &str,
        panels: Option<&[String]>,
    ) -> Result<Option<drafts::Draft>, drafts::DraftError> {
        let draft = self.drafts.chosen(id, drafter, panels).await?;
        let Some(panels) = panels else {
            self.drafts.remove(id, drafter).await?;
            return Ok(None);
        };
        let state = dashboard::merge::revert(&draft.base, &draft.state, panels);
        let mut rest = drafts::Draft { state, ..draft };
        rest.tests.retain(|p, _| !panels.contains(p));
        self.drafts.put(&rest).await?;
        Ok((!rest.is_empty()).then_some(rest))
    }

    /// Who may see and change each dashboard ([`sharing`]); load it with
    /// [`sharing::Sharings::reload`] before serving.
    pub fn sharing(&self) -> &sharing::Sharings {
        &self.sharing
    }

    /// Whether `principal` may do `need` with dashboard `id`.
    pub fn may(
        &self,
        principal: &base::principal::Principal,
        id: &str,
        need: sharing::Need,
    ) -> Result<(), sharing::Denied> {
        self.sharing.may(principal, id, need)
    }

    /// Makes `principal`'s person the owner of a dashboard they just made (private); nothing
    /// for the token and keys made before accounts (their dashboards are the first admin's).
    #[base::boxed]
    pub async fn claim(
        &self,
        principal: &base::principal::Principal,
        id: &str,
    ) -> Result<(), StoreError> {
        let Some(person) = principal.person() else { return Ok(()) };
        let sharing =
            sharing::Sharing { owner: Some(person.id.clone()), ..sharing::Sharing::default() };
        self.sharing.set(id, sharing).await
    }

    /// Every committed change from now on. A receiver that falls more than a few hundred
    /// changes behind gets `Lagged` and should re-read what it follows.
    pub fn changes(&self) -> broadcast::Receiver<Change> {
        self.changes.subscribe()
    }

    fn announce(&self, id: &str, kind: ChangeKind) {
        announce(&self.changes, id, kind);
    }

    /// The live layer (subscriptions, panel runs, refreshes).
    pub fn live(&self) -> &Arc<Live> {
        &self.live
    }

    /// All dashboards, most recently updated first.
    #[base::boxed]
    pub async fn list(&self, include_deleted: bool) -> Result<Vec<DashboardListItem>, StoreError> {
        self.store.list(include_deleted).await
    }

    /// The current version (also of deleted dashboards; check `deleted`).
    #[base::boxed]
    pub async fn get(&self, id: &str) -> Result<DashboardRecord, StoreError> {
        self.store.get(id).await
    }

    /// One past version.
    #[base::boxed]
    pub async fn get_version(&self, id: &str, version: u64) -> Result<DashboardRecord, StoreError> {
        self.store.get_version(id, version).await
    }

    /// The history, oldest first.
    #[base::boxed]
    pub async fn versions(&self, id: &str) -> Result<Vec<VersionInfo>, StoreError> {
        self.store.versions(id).await
    }

    /// The current version of a live (not deleted) dashboard, made known to the live layer so
    /// results produced from it are kept and pushed.
    #[base::boxed]
    pub async fn current(
        &self,
        id: &str,
    ) -> Result<(DashboardRecord, Arc<DashboardState>), StoreError> {
        let rec = self.store.get(id).await?;
        if rec.deleted {
            return Err(StoreError::Deleted(id.to_owned()));
        }
        let state = Arc::new(rec.state.clone());
        self.live.record_version(id, rec.version, state.clone());
        Ok((rec, state))
    }

    /// Re-runs `panel` (or every panel) of a live dashboard with the default values, publishes
    /// the results to subscribers and returns them. `Ok(None)`: the dashboard has no such panel.
    #[base::boxed]
    pub async fn refresh(
        &self,
        id: &str,
        panel: Option<&str>,
    ) -> Result<Option<PanelResults>, StoreError> {
        let (rec, state) = self.current(id).await?;
        let panels: Vec<_> = match panel {
            Some(pid) => match state.panels.iter().find(|p| p.id == pid) {
                Some(p) => vec![p.clone()],
                None => return Ok(None),
            },
            None => state.panels.clone(),
        };
        self.live.refresh_panels(id, &state, &panels).await;
        let mut slots = self.live.slots(id);
        slots.retain(|pid, _| panels.iter().any(|p| &p.id == pid));
        Ok(Some(PanelResults { version: rec.version, panels: slots, state }))
    }

    /// The latest result of every panel of a live dashboard (default values); panels that never
    /// ran are run first.
    #[base::boxed]
    pub async fn data(&self, id: &str) -> Result<PanelResults, StoreError> {
        let (rec, state) = self.current(id).await?;
        let slots = self.live.slots(id);
        let missing: Vec<_> = state
            .panels
            .iter()
            .filter(|p| slots.get(&p.id).is_none_or(|s| s.status == RunStatus::Pending))
            .cloned()
            .collect();
        if !missing.is_empty() {
            self.live.refresh_panels(id, &state, &missing).await;
        }
        Ok(PanelResults { version: rec.version, panels: self.live.slots(id), state })
    }

    /// The panels of a past version run now with the default values (results of code that is
    /// live come from the cache): what that version showed, for reading it before a restore.
    /// Nothing is published.
    #[base::boxed]
    pub async fn version_data(&self, id: &str, version: u64) -> Result<PanelResults, StoreError> {
        let rec = self.store.get_version(id, version).await?;
        let all: Vec<String> = rec.state.panels.iter().map(|p| p.id.clone()).collect();
        let runs = self.live.run_panels(id, &rec.state, &all).await;
        let panels = runs.into_iter().map(|(p, run)| (p, PanelSlot::of_run(run))).collect();
        Ok(PanelResults { version: rec.version, panels, state: Arc::new(rec.state) })
    }

    /// Runs panel code once outside any dashboard; `None` when the preview cap is reached.
    #[base::boxed]
    pub async fn preview(&self, code: &str, vars: &Map<String, Value>) -> Option<PanelRun> {
        self.live.preview(code, vars).await
    }

    /// Waits for `id`'s writer lock: this node's, then (shared store) the cluster's.
    #[base::boxed]
    pub async fn lock(&self, id: &str) -> Result<WriteLock, StoreError> {
        let guard = self.local_lock(id).await;
        let cluster = self.store.lock_dashboard(id).await?;
        Ok(WriteLock { id: id.to_owned(), _cluster: cluster, _guard: guard })
    }

    /// This node's lock of `id`: held, no write of this node and no publishing of another
    /// node's write of that dashboard runs.
    async fn local_lock(&self, id: &str) -> OwnedMutexGuard<()> {
        let lock = {
            let mut locks = self.locks.lock().unwrap_or_else(|p| p.into_inner());
            // Locks nobody holds or waits for are dropped, so the map stays as small as the
            // set of dashboards being written.
            locks.retain(|_, l| Arc::strong_count(l) > 1);
            locks.entry(id.to_owned()).or_default().clone()
        };
        lock.lock_owned().await
    }

    /// Creates a dashboard at version 1 (with `id` if given and unused) and records `runs`,
    /// its panels' results, so viewers get them without running the panels again.
    #[base::boxed]
    pub async fn create(
        &self,
        id: Option<&str>,
        state: DashboardState,
        note: &str,
        by: &Author,
        runs: Vec<(String, PanelRun)>,
    ) -> Result<DashboardRecord, StoreError> {
        let record = self.store.create(id, state, note, by).await?;
        if !runs.is_empty() {
            let state = Arc::new(record.state.clone());
            for (panel, run) in runs {
                self.live.record_run(&record.id, record.version, state.clone(), &panel, run);
            }
        }
        self.announce(&record.id, ChangeKind::Created(record.version));
        Ok(record)
    }

    /// Copies the current state into a new dashboard (optionally retitled).
    #[base::boxed]
    pub async fn duplicate(
        &self,
        id: &str,
        title: Option<String>,
        by: &Author,
    ) -> Result<DashboardRecord, StoreError> {
        let record = self.store.duplicate(id, title, by).await?;
        self.announce(&record.id, ChangeKind::Created(record.version));
        Ok(record)
    }

    /// Saves `edit` as the next version under `lock`, then publishes it. The edit must start
    /// from the current version ([`StoreError::Conflict`] otherwise: read it under the lock).
    #[base::boxed]
    pub async fn save(
        &self,
        lock: &WriteLock,
        edit: Edit,
        note: &str,
        by: &Author,
        runs: Runs,
    ) -> Result<Saved, StoreError> {
        let (store, live, id, note) =
            (self.store.clone(), self.live.clone(), lock.id().to_owned(), note.to_owned());
        let (changes, by) = (self.changes.clone(), by.clone());
        to_the_end(async move {
            let Edit { before, after, diff } = edit;
            let record = store.save(&id, before.version, (*after).clone(), &note, &by).await?;
            Ok(publish(&live, &changes, &id, before.version, record, after, diff, runs).await)
        })
        .await
    }

    /// A person's edit (REST): `state` as the version after `base_version`, which must be the
    /// current one, with its `note` for the history; the added and modified panels run before the version is published.
    #[base::boxed]
    pub async fn edit(
        &self,
        id: &str,
        base_version: u64,
        state: DashboardState,
        note: &str,
        by: &Author,
    ) -> Result<Saved, StoreError> {
        let lock = self.lock(id).await?;
        let before = self.store.get(id).await?;
        if before.deleted {
            return Err(StoreError::Deleted(id.to_owned()));
        }
        if before.version != base_version {
            return Err(StoreError::Conflict { expected: base_version, actual: before.version });
        }
        self.save(&lock, Edit::new(before, state), note, by, Runs::Changed).await
    }

    /// Saves the state of `to_version` as a new version and publishes it.
    #[base::boxed]
    pub async fn revert(
        &self,
        id: &str,
        to_version: u64,
        by: &Author,
    ) -> Result<Saved, StoreError> {
        let lock = self.lock(id).await?;
        let before = self.store.get(id).await?;
        if before.deleted {
            return Err(StoreError::Deleted(id.to_owned()));
        }
        let (store, live, id) = (self.store.clone(), self.live.clone(), id.to_owned());
        let (changes, by) = (self.changes.clone(), by.clone());
        to_the_end(async move {
            let _lock = lock;
            let record = store.revert(&id, to_version, &by).await?;
            let after = Arc::new(record.state.clone());
            let diff = Diff::between(&before.state, &after);
            Ok(publish(&live, &changes, &id, before.version, record, after, diff, Runs::Changed)
                .await)
        })
        .await
    }

    /// Soft-deletes (restorable) and tells subscribers; `purge` also removes the dashboard and
    /// its history for good.
    #[base::boxed]
    pub async fn delete(&self, id: &str, purge: bool) -> Result<(), StoreError> {
        let _lock = self.lock(id).await?;
        self.store.delete(id).await?;
        self.live.deleted(id);
        self.announce(id, ChangeKind::Deleted);
        if purge {
            self.store.purge(id).await?;
            self.sharing.remove(id).await?;
            self.drafts.forget(id).await?;
        }
        Ok(())
    }

    /// Undoes a delete (idempotent; no new version).
    #[base::boxed]
    pub async fn restore(&self, id: &str) -> Result<DashboardRecord, StoreError> {
        let _lock = self.lock(id).await?;
        let record = self.store.restore(id).await?;
        self.announce(id, ChangeKind::Restored);
        Ok(record)
    }

    /// Brings other nodes' writes to this node (a shared store; returns at once otherwise)
    /// until `shutdown` fires: each notice is applied on a task of its own, which reads the
    /// store under the dashboard's local lock, so publishing is in order however notices race.
    pub fn follow(
        self: Arc<Self>,
        shutdown: tokio_util::sync::CancellationToken,
    ) -> base::BoxFuture<'static, ()> {
        Box::pin(async move {
            let Some(mut notices) = self.store.notices() else { return };
            loop {
                let notice = tokio::select! {
                    () = shutdown.cancelled() => return,
                    n = notices.recv() => n,
                };
                let this = self.clone();
                match notice {
                    Ok(Notice::Dashboard { id, kind }) => {
                        tokio::spawn(async move { this.apply(&id, kind).await });
                    }
                    Ok(Notice::Resync) | Err(broadcast::error::RecvError::Lagged(_)) => {
                        tokio::spawn(async move { this.resync().await });
                    }
                    Ok(Notice::PanelResult { id, panel, data }) => {
                        tokio::spawn(async move { this.adopt_result(&id, &panel, data).await });
                    }
                    Ok(Notice::Record(store::Record::Sharing)) => {
                        tokio::spawn(async move {
                            if let Err(e) = this.sharing.reload().await {
                                tracing::warn!(error = %e, "re-reading dashboards' sharing failed");
                            }
                        });
                    }
                    // Records are their owners' business (key ring, admin, workflows), runs the
                    // cluster's (`agent::cluster`).
                    Ok(_) => {}
                    Err(broadcast::error::RecvError::Closed) => return,
                }
            }
        })
    }

    /// Another node changed `id`: catch this node's viewers up, then announce it here.
    async fn apply(&self, id: &str, kind: ChangeKind) {
        match kind {
            ChangeKind::Deleted => {
                let _lock = self.local_lock(id).await;
                if self.live.held(id).is_some() {
                    self.live.deleted(id);
                }
            }
            ChangeKind::Created(_) | ChangeKind::Saved(_) | ChangeKind::Restored => {
                self.catch_up(id).await;
            }
        }
        self.announce(id, kind);
    }

    /// The node refreshing `id` shared a panel's result: this node's viewers get it too, if
    /// it belongs to the version they hold.
    async fn adopt_result(&self, id: &str, panel: &str, data: Option<(u64, String)>) {
        let shared = match data {
            Some(data) => data,
            None => match self.store.panel_result(id, panel).await {
                Ok(Some(shared)) => shared,
                Ok(None) => return,
                Err(e) => return tracing::warn!(%id, error = %e, "cannot read a shared result"),
            },
        };
        let (version, text) = shared;
        let Some(run) = PanelRun::from_shared(&text) else { return };
        let _lock = self.local_lock(id).await;
        if let Some((held, state)) = self.live.held(id)
            && held == version
        {
            self.live.record_run(id, version, state, panel, run);
        }
    }

    /// Who refreshes what on a shared store (`None`: this node refreshes everything it
    /// watches). A lease lasts three scheduler ticks (at least 2 s) and is renewed every
    /// tick, so a dead node's dashboards are taken over within that.
    pub fn coordinator(&self, tick: std::time::Duration) -> Option<Arc<dyn RefreshCoordinator>> {
        self.store.is_shared().then(|| {
            let ttl = (tick * 3).max(std::time::Duration::from_secs(2));
            Arc::new(Leases { store: self.store.clone(), ttl }) as Arc<dyn RefreshCoordinator>
        })
    }

    /// Notices may have been missed: catch up every dashboard this node holds.
    async fn resync(&self) {
        if let Err(e) = self.sharing.reload().await {
            tracing::warn!(error = %e, "re-reading dashboards' sharing failed");
        }
        for id in self.live.held_ids() {
            self.catch_up(&id).await;
        }
    }

    /// Publishes the stored head of `id` to this node's viewers if it is newer than the
    /// version they hold: a patch from that version (so a missed notice costs nothing but
    /// a bigger patch) at once, then the results of its changed panels, run here.
    async fn catch_up(&self, id: &str) {
        let _lock = self.local_lock(id).await;
        let Some((held, held_state)) = self.live.held(id) else { return };
        let rec = match self.store.get(id).await {
            Ok(rec) => rec,
            Err(StoreError::NotFound(_)) => return self.live.deleted(id),
            Err(e) => {
                tracing::warn!(%id, error = %e, "cannot read another node's write");
                return;
            }
        };
        if rec.deleted {
            return self.live.deleted(id);
        }
        if rec.version <= held {
            return;
        }
        let after = Arc::new(rec.state);
        let diff = Diff::between(&held_state, &after);
        self.live.version_saved(id, held, rec.version, &diff, after.clone(), Vec::new());
        // Still under the lock: no later version's results can be overtaken by these.
        for (panel, run) in self.live.run_panels(id, &after, &diff.changed).await {
            self.live.record_run(id, rec.version, after.clone(), &panel, run);
        }
    }

    /// Stops the store (final durable commit; later writes answer [`StoreError::Closed`]).
    #[base::boxed]
    pub async fn shutdown(&self) {
        self.store.shutdown().await;
    }
}

/// Panels' last good results, kept in the store (both engines, bounded there), so a restart
/// or another node shows them while a provider is down.
struct Kept {
    store: Arc<Store>,
}

impl live::Keeper for Kept {
    fn keep(&self, dashboard: &str, panel: &str, fingerprint: &str, good: &live::Good) {
        let Ok(run) = serde_json::to_string(good) else { return };
        let store = self.store.clone();
        let (dashboard, panel, fingerprint) =
            (dashboard.to_owned(), panel.to_owned(), fingerprint.to_owned());
        let at = good.at;
        tokio::spawn(async move {
            if let Err(e) = store.put_last_good(&dashboard, &panel, &fingerprint, &run, at).await {
                tracing::warn!(%dashboard, %panel, error = %e, "cannot keep a panel's last good data");
            }
        });
    }

    fn kept<'a>(
        &'a self,
        dashboard: &'a str,
        panel: &'a str,
        fingerprint: &'a str,
    ) -> base::BoxFuture<'a, Option<live::Good>> {
        Box::pin(async move {
            match self.store.last_good(dashboard, panel, fingerprint).await {
                Ok(Some((run, _))) => serde_json::from_str(&run).ok(),
                Ok(None) => None,
                Err(e) => {
                    tracing::warn!(%dashboard, %panel, error = %e, "cannot read a panel's last good data");
                    None
                }
            }
        })
    }
}

/// Refresh leases in the shared store, and results shared through it.
struct Leases {
    store: Arc<Store>,
    ttl: std::time::Duration,
}

impl RefreshCoordinator for Leases {
    fn claim(&self, watched: Vec<String>) -> base::BoxFuture<'_, Vec<String>> {
        Box::pin(async move {
            self.store.claim_refresh(&watched, self.ttl).await.unwrap_or_else(|e| {
                // Refreshing nothing is the safe side: another node may hold the leases.
                tracing::warn!(error = %e, "cannot claim refresh leases");
                Vec::new()
            })
        })
    }

    fn share<'a>(
        &'a self,
        id: &'a str,
        version: u64,
        panel: &'a str,
        run: &'a PanelRun,
    ) -> base::BoxFuture<'a, ()> {
        Box::pin(async move {
            if let Err(e) = self.store.put_panel_result(id, panel, version, &run.to_shared()).await
            {
                tracing::warn!(%id, error = %e, "cannot share a refresh result");
            }
        })
    }
}

/// Runs a write to its end even if its caller stops waiting (a dropped HTTP request, a
/// cancelled agent run): a committed version is always published.
async fn to_the_end<T: Send + 'static>(
    write: impl std::future::Future<Output = Result<T, StoreError>> + Send + 'static,
) -> Result<T, StoreError> {
    tokio::spawn(write)
        .await
        .unwrap_or_else(|e| Err(StoreError::Storage(format!("the write task failed: {e}"))))
}

fn announce(changes: &broadcast::Sender<Change>, id: &str, kind: ChangeKind) {
    // No receivers is the common case, not an error.
    let _ = changes.send(Change { id: id.to_owned(), kind });
}

/// Publishes a committed version (its writer still holds the lock, so versions go out in
/// order; `live` ignores one that is not newer than what it holds) to viewers, then announces
/// it.
#[allow(clippy::too_many_arguments)]
async fn publish(
    live: &Live,
    changes: &broadcast::Sender<Change>,
    id: &str,
    base_version: u64,
    record: DashboardRecord,
    after: Arc<DashboardState>,
    diff: Diff,
    runs: Runs,
) -> Saved {
    let runs = match runs {
        Runs::Given(runs) => runs,
        Runs::Changed => live.run_panels(id, &after, &diff.changed).await,
    };
    live.version_saved(id, base_version, record.version, &diff, after, runs.clone());
    announce(changes, id, ChangeKind::Saved(record.version));
    Saved { record, base_version, diff, runs }
}
