//! The durable store: dashboards with full version history, and whole JSON records by kind
//! (dashboard-tool sessions, API keys, usage rows, admin definitions, workflows and their runs).
//!
//! Two engines behind one typed API, chosen at start: the embedded one (`embedded`: redb in
//! the data directory, the default) and PostgreSQL (`postgres`, `BOARDSMITH_DATABASE_URL`),
//! which several nodes share. Only this module knows the engines; everything else sees
//! [`Store`]. A write is acknowledged only after its durable commit. Saves carry the version
//! they were based on: a mismatch is [`StoreError::Conflict`], never a lost update (enforced
//! by the engine itself: redb's one writer, PostgreSQL's conditional update).
//!
//! Semantics worth knowing (both engines; `tests.rs` runs the same cases on each):
//! - `create(Some(id))` with an id that exists answers `Conflict { expected: 0, actual: <head> }`
//!   (ids are 1..=256 bytes; otherwise `Storage("invalid dashboard id ...")`).
//! - `delete`/`restore` only flip the head's `deleted` flag (no new version; idempotent).
//!   `save`, `revert` and `duplicate` of a deleted dashboard answer [`StoreError::Deleted`];
//!   `get`, `get_version`, `versions` still work (check `deleted`).
//! - `revert` appends a new version (note `revert to N`) with that version's state.
//! - `list` is ordered by `updated_at` (time of the current version), newest first, then by id.
//! - Quotas ([`StoreQuotas`]): a state over `max_state_bytes` is [`StoreError::TooLarge`]
//!   before it reaches the engine; a write that makes a dashboard hold more than
//!   `versions_kept` versions drops its oldest (so `versions` may start above 1). On the
//!   embedded engine a write past `max_store_bytes` is [`StoreError::Full`] (PostgreSQL
//!   manages its own space). `purge` removes a deleted dashboard for good.
//! - Last good results ([`Store::put_last_good`], [`Store::last_good`]): a panel's last
//!   successful result per (dashboard, panel, fingerprint), so a panel whose provider is down
//!   can show it (stale) after a restart or on another node. Bounded by
//!   [`StoreOptions::last_good_entry_bytes`] (a larger result is not kept),
//!   [`LAST_GOOD_PER_PANEL`] fingerprints per panel and [`StoreOptions::last_good_bytes`] in
//!   all (the oldest by `at` go first); not counted in `max_store_bytes`. `purge` removes a
//!   dashboard's entries.
//! - A shared store (PostgreSQL) also tells what other nodes committed ([`Store::notices`])
//!   and holds a dashboard's cluster-wide writer lock ([`Store::lock_dashboard`]).

// Before the submodules, which use it (a `macro_rules!` is visible after its definition).
/// One call on the PostgreSQL engine; the embedded one gives `$embedded`.
macro_rules! on_shared {
    ($self:ident, $embedded:expr, $p:ident => $call:expr) => {
        match &$self.engine {
            Engine::Embedded(_) => $embedded,
            Engine::Postgres($p) => $call,
        }
    };
}

mod bench;
pub mod chats;
pub mod copy;
mod embedded;
mod kb;
mod keys;
pub mod postgres;
mod runs;
#[cfg(test)]
pub(crate) mod test_db;
#[cfg(test)]
mod tests;
pub mod uploads;
mod writer;

pub use bench::{bench_saves, bench_saves_on, bench_saves_with, sample_state};
pub use embedded::FILE_NAME;
pub use kb::KbCatalog;
pub use postgres::{ClusterLock, Notice};
pub use runs::{RunBatch, RunRow, RunState, RunStatus};

use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::broadcast;

pub use base::principal::Author;
use dashboard::DashboardState;
use embedded::Embedded;
use postgres::Postgres;

/// Errors callers act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// No such dashboard.
    #[error("dashboard `{0}` not found")]
    NotFound(String),
    /// No such version of an existing dashboard.
    #[error("dashboard `{id}` has no version {version}")]
    VersionNotFound {
        /// The dashboard.
        id: String,
        /// The missing version.
        version: u64,
    },
    /// The save was based on an older version.
    #[error(
        "version conflict: the save was based on version {expected}, but the dashboard is at version {actual}"
    )]
    Conflict {
        /// The base version the caller gave.
        expected: u64,
        /// The current version.
        actual: u64,
    },
    /// The dashboard is deleted (restore it first).
    #[error("dashboard `{0}` is deleted")]
    Deleted(String),
    /// A state larger than [`StoreQuotas::max_state_bytes`].
    #[error(
        "the dashboard state is {bytes} bytes of JSON; the limit is {limit} (BOARDSMITH_MAX_STATE_BYTES). \
         Panels hold code, not data: fetch data in the panel code instead of embedding it"
    )]
    TooLarge {
        /// Size of the refused state.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// The write would take the store past [`StoreQuotas::max_store_bytes`].
    #[error(
        "the store is full: {used} of {limit} bytes used and this write needs {needed} more. \
         Delete dashboards for good (DELETE /api/dashboards/{{id}}?purge=true after deleting them) \
         or raise BOARDSMITH_MAX_STORE_BYTES"
    )]
    Full {
        /// Bytes in use.
        used: u64,
        /// Bytes the write would add.
        needed: u64,
        /// The limit.
        limit: u64,
    },
    /// A purge of a dashboard that is not deleted (delete it first).
    #[error("dashboard `{0}` is not deleted; delete it before purging it")]
    NotDeleted(String),
    /// A stored value failed its check on read (checksum, encoding or JSON): damage on disk,
    /// reported instead of served as good data.
    #[error("damaged data in the store: {0}")]
    Damaged(String),
    /// The store is shutting down.
    #[error("the store is closed")]
    Closed,
    /// Disk or engine failure.
    #[error("storage error: {0}")]
    Storage(String),
}

/// A dashboard at one version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DashboardRecord {
    /// Dashboard id (`db_` + 26 chars).
    pub id: String,
    /// Version number, 1 for a new dashboard.
    pub version: u64,
    /// The state at this version (a DashboardState: title, panels, variables, layout).
    #[schema(value_type = Object)]
    pub state: DashboardState,
    /// Creation time of the dashboard, unix milliseconds.
    pub created_at: i64,
    /// Time of this version, unix milliseconds.
    pub updated_at: i64,
    /// Soft-deleted (restorable).
    pub deleted: bool,
}

/// One entry of a dashboard's history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VersionInfo {
    /// Version number.
    pub version: u64,
    /// When it was saved, unix milliseconds.
    pub created_at: i64,
    /// Title at that version.
    pub title: String,
    /// Number of panels at that version.
    pub panels: usize,
    /// Why it was saved (`execute`, `mutate`, `revert to 3`, ...).
    pub note: String,
    /// Who saved it, through what (absent on versions saved before authors were kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<Author>,
}

/// One row of the dashboard list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DashboardListItem {
    /// Dashboard id.
    pub id: String,
    /// Current title.
    pub title: String,
    /// Current version.
    pub version: u64,
    /// Number of panels.
    pub panels: usize,
    /// Time of the current version, unix milliseconds.
    pub updated_at: i64,
    /// Soft-deleted.
    pub deleted: bool,
}

/// What the store may hold. Sizes count the stored bytes of versions (state JSON plus a small
/// header) and sessions; the store file itself is larger (pages, free space redb reuses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreQuotas {
    /// Largest state JSON one version may hold (`BOARDSMITH_MAX_STATE_BYTES`, 1 MiB).
    pub max_state_bytes: u64,
    /// Versions kept per dashboard; a write past it drops the oldest
    /// (`BOARDSMITH_VERSIONS_KEPT`, 500).
    pub versions_kept: u64,
    /// Total stored bytes (`BOARDSMITH_MAX_STORE_BYTES`, 2 GiB).
    pub max_store_bytes: u64,
}

impl Default for StoreQuotas {
    fn default() -> Self {
        Self { max_state_bytes: 1 << 20, versions_kept: 500, max_store_bytes: 2 << 30 }
    }
}

impl StoreQuotas {
    /// The defaults, overridden by `BOARDSMITH_MAX_STATE_BYTES`, `BOARDSMITH_VERSIONS_KEPT` and
    /// `BOARDSMITH_MAX_STORE_BYTES` (positive integers; anything else keeps the default).
    pub fn from_env() -> Self {
        let var = |name: &str, default: u64| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .filter(|&v| v > 0)
                .unwrap_or(default)
        };
        let d = Self::default();
        Self {
            max_state_bytes: var("BOARDSMITH_MAX_STATE_BYTES", d.max_state_bytes),
            versions_kept: var("BOARDSMITH_VERSIONS_KEPT", d.versions_kept),
            max_store_bytes: var("BOARDSMITH_MAX_STORE_BYTES", d.max_store_bytes),
        }
    }
}

/// Group-commit tuning and quotas (see [`Store::open_with`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreOptions {
    /// Most write operations in one commit.
    pub max_batch: usize,
    /// The longest the writer keeps collecting after the first pending write before committing.
    pub batch_window: Duration,
    /// Commit early when no new write arrived for this long (all ready writers are in).
    pub batch_idle: Duration,
    /// What the store may hold.
    pub quotas: StoreQuotas,
    /// The largest last good result kept ([`Store::put_last_good`]): a larger one is not
    /// stored (1 MiB).
    pub last_good_entry_bytes: u64,
    /// Bytes all last good results together may hold (their JSON text): a put that takes
    /// them past it drops the oldest (by their `at`) until they fit again (64 MiB).
    pub last_good_bytes: u64,
}

impl Default for StoreOptions {
    fn default() -> Self {
        Self {
            max_batch: 256,
            batch_window: Duration::from_millis(2),
            batch_idle: Duration::from_micros(100),
            quotas: StoreQuotas::default(),
            last_good_entry_bytes: 1 << 20,
            last_good_bytes: 64 << 20,
        }
    }
}

/// Writer counters, for tests and benchmarks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoreStats {
    /// Durable commits made.
    pub commits: u64,
    /// Write operations processed (including ones answered with a logical error).
    pub ops: u64,
    /// Largest batch so far.
    pub largest_batch: u64,
    /// Batches that failed in the engine (every op in them got `Storage`).
    pub failed_batches: u64,
    /// Bytes stored in versions and sessions (what `max_store_bytes` limits).
    pub stored_bytes: u64,
    /// Bytes of last good results (what `last_good_bytes` limits; embedded store only).
    pub last_good_bytes: u64,
}

#[derive(Debug, Default)]
struct Counters {
    commits: AtomicU64,
    ops: AtomicU64,
    largest_batch: AtomicU64,
    failed_batches: AtomicU64,
    stored_bytes: AtomicU64,
    last_good_bytes: AtomicU64,
}

/// The kinds of whole JSON records kept by id. [`Record::ALL`] lists them in declaration
/// order (the embedded engine indexes its tables by `kind as usize`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record {
    /// A dashboard-tool session.
    Session,
    /// An API key.
    ApiKey,
    /// A usage row.
    Usage,
    /// An admin definition.
    Admin,
    /// A workflow definition.
    Workflow,
    /// A workflow run's state.
    WorkflowRun,
    /// A user account (`access::users`).
    User,
    /// A signed-in browser's session, by the digest of its cookie (`access::sessions`).
    SignIn,
    /// An entry of the audit trail (`access::audit`).
    Audit,
    /// A dashboard's owner and access (`dashboards::sharing`), by dashboard id.
    Sharing,
    /// A dashboard's share link (`access::links`), by the digest of its token.
    ShareLink,
    /// A chat's title and settings (`agent::chats`), by chat id.
    ChatMeta,
    /// A person's draft of a dashboard (`dashboards::drafts`), by `{dashboardId}/{drafter}`.
    Draft,
    /// A dashboard in review mode (`dashboards::drafts`), by dashboard id.
    Review,
    /// An alert rule's state (`alerting`), by `{dashboardId}/{ruleId}/{fan-out value}`.
    AlertState,
    /// A notification of an alert's transition (`alerting`), by its dedupe key.
    Notification,
    /// An alert notification channel (`alerting::channels`), by name.
    Channel,
    /// A scheduled report (`reports`), by id.
    Report,
    /// A run of a scheduled report (`reports`), by `{reportId}/{scheduled unix ms}`.
    ReportRun,
    /// A silence of alert notifications (`alerting::silences`), by id.
    Silence,
}

impl Record {
    /// Every kind.
    pub const ALL: [Self; 20] = [
        Self::Session,
        Self::ApiKey,
        Self::Usage,
        Self::Admin,
        Self::Workflow,
        Self::WorkflowRun,
        Self::User,
        Self::SignIn,
        Self::Audit,
        Self::Sharing,
        Self::ShareLink,
        Self::ChatMeta,
        Self::Draft,
        Self::Review,
        Self::AlertState,
        Self::Notification,
        Self::Channel,
        Self::Report,
        Self::ReportRun,
        Self::Silence,
    ];

    /// The kind's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::Session => "session",
            Self::ApiKey => "API key",
            Self::Usage => "usage row",
            Self::Admin => "admin definition",
            Self::Workflow => "workflow",
            Self::WorkflowRun => "workflow run",
            Self::User => "user",
            Self::SignIn => "sign-in session",
            Self::Audit => "audit entry",
            Self::Sharing => "dashboard sharing",
            Self::ShareLink => "share link",
            Self::ChatMeta => "chat settings",
            Self::Draft => "draft",
            Self::Review => "review mode",
            Self::AlertState => "alert state",
            Self::Notification => "notification",
            Self::Channel => "alert channel",
            Self::Report => "scheduled report",
            Self::ReportRun => "report run",
            Self::Silence => "alert silence",
        }
    }

    /// The kind's stable key in a shared store (its `records.kind` column and notices).
    pub fn key(self) -> &'static str {
        match self {
            Self::Session => "session",
            Self::ApiKey => "api_key",
            Self::Usage => "usage",
            Self::Admin => "admin",
            Self::Workflow => "workflow",
            Self::WorkflowRun => "workflow_run",
            Self::User => "user",
            Self::SignIn => "sign_in",
            Self::Audit => "audit",
            Self::Sharing => "sharing",
            Self::ShareLink => "share_link",
            Self::ChatMeta => "chat_meta",
            Self::Draft => "draft",
            Self::Review => "review",
            Self::AlertState => "alert_state",
            Self::Notification => "notification",
            Self::Channel => "channel",
            Self::Report => "report",
            Self::ReportRun => "report_run",
            Self::Silence => "silence",
        }
    }

    /// The kind of a [`Record::key`].
    pub fn from_key(key: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.key() == key)
    }
}

/// What happened to a dashboard, as announced to listeners (and between nodes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// Created (or duplicated) at this version.
    Created(u64),
    /// A new version was saved (edit, agent write, revert).
    Saved(u64),
    /// Soft-deleted or purged.
    Deleted,
    /// Brought back from a delete.
    Restored,
}

impl ChangeKind {
    /// Its name and version on the wire (`dashboards.changed`, notices between nodes).
    pub fn wire(self) -> (&'static str, Option<u64>) {
        match self {
            Self::Created(v) => ("created", Some(v)),
            Self::Saved(v) => ("saved", Some(v)),
            Self::Deleted => ("deleted", None),
            Self::Restored => ("restored", None),
        }
    }
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

fn storage(ctx: impl std::fmt::Display, e: impl std::fmt::Display) -> StoreError {
    StoreError::Storage(format!("{ctx}: {e}"))
}

fn damaged(ctx: impl std::fmt::Display, e: impl std::fmt::Display) -> StoreError {
    StoreError::Damaged(format!("{ctx}: {e}"))
}

fn state_json(
    state: &DashboardState,
    quotas: &StoreQuotas,
) -> Result<(Vec<u8>, String, u32), StoreError> {
    let json = serde_json::to_vec(state).map_err(|e| storage("serialize dashboard state", e))?;
    if json.len() as u64 > quotas.max_state_bytes {
        return Err(StoreError::TooLarge {
            bytes: json.len() as u64,
            limit: quotas.max_state_bytes,
        });
    }
    let panels = u32::try_from(state.panels.len()).unwrap_or(u32::MAX);
    Ok((json, state.title.clone(), panels))
}

fn parse_state(id: &str, version: u64, json: &[u8]) -> Result<DashboardState, StoreError> {
    serde_json::from_slice(json).map_err(|e| {
        StoreError::Damaged(format!("dashboard `{id}` version {version}: corrupt state JSON: {e}"))
    })
}

/// A dashboard id a store accepts: 1 to 256 bytes.
fn check_id(id: &str) -> Result<(), StoreError> {
    if id.is_empty() || id.len() > keys::MAX_ID_LEN {
        return Err(StoreError::Storage(format!(
            "invalid dashboard id: must be 1..={} bytes",
            keys::MAX_ID_LEN
        )));
    }
    Ok(())
}

/// Fingerprints (last good results) kept per panel: putting another drops the panel's oldest.
pub const LAST_GOOD_PER_PANEL: usize = 4;

/// Whether a last good entry's key can be stored: a dashboard id as [`check_id`] wants, a panel
/// id and a fingerprint of 1 to 256 bytes each.
fn check_last_good_key(dashboard: &str, panel: &str, fingerprint: &str) -> Result<(), StoreError> {
    check_id(dashboard)?;
    for (what, part) in [("panel id", panel), ("fingerprint", fingerprint)] {
        if part.is_empty() || part.len() > keys::MAX_ID_LEN {
            return Err(StoreError::Storage(format!(
                "invalid {what} for a last good result: must be 1..={} bytes",
                keys::MAX_ID_LEN
            )));
        }
    }
    Ok(())
}

/// A new dashboard id: `db_` + a time-ordered UUID (v7).
pub fn new_dashboard_id() -> String {
    format!("db_{}", uuid::Uuid::now_v7().simple())
}

/// What a node of a shared store needs besides the database's URL.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SharedOptions {
    /// NATS, to carry panel results between nodes instead of the database
    /// (`BOARDSMITH_NATS_URL`, `nats://host:4222`).
    pub nats_url: Option<String>,
    /// The CA certificates (PEM) PostgreSQL's certificate must chain to, its host name
    /// checked too (`BOARDSMITH_DATABASE_CA`); without it TLS encrypts but does not
    /// authenticate the server, as libpq's `sslmode=require`.
    pub database_ca: Option<std::path::PathBuf>,
}

impl SharedOptions {
    /// From `BOARDSMITH_NATS_URL` and `BOARDSMITH_DATABASE_CA`.
    pub fn from_env() -> Self {
        let var = |name| std::env::var(name).ok().filter(|v: &String| !v.trim().is_empty());
        Self {
            nats_url: var("BOARDSMITH_NATS_URL"),
            database_ca: var("BOARDSMITH_DATABASE_CA").map(std::path::PathBuf::from),
        }
    }
}

/// The store handle (cheap to share behind an `Arc`).
#[derive(Debug)]
pub struct Store {
    engine: Engine,
}

#[derive(Debug)]
enum Engine {
    Embedded(Embedded),
    Postgres(Postgres),
}

/// One call on whichever engine is in use.
macro_rules! on_engine {
    ($self:ident.$method:ident($($arg:expr),*)) => {
        match &$self.engine {
            Engine::Embedded(e) => e.$method($($arg),*).await,
            Engine::Postgres(p) => p.$method($($arg),*).await,
        }
    };
}

impl Store {
    /// Opens (creating if needed) the embedded store in `dir` (file `boardsmith.redb`).
    pub fn open(dir: &Path) -> Result<Self, StoreError> {
        Self::open_with(dir, StoreOptions::default())
    }

    /// [`Store::open`] with explicit group-commit tuning.
    pub fn open_with(dir: &Path, options: StoreOptions) -> Result<Self, StoreError> {
        Ok(Self { engine: Engine::Embedded(Embedded::open_with(dir, options)?) })
    }

    /// Connects to PostgreSQL at `url` (`postgres://user@host:port/db`), applies the schema
    /// migrations this build knows (refusing a database whose schema is newer) and starts
    /// listening for other nodes' notices.
    #[base::boxed]
    pub async fn connect(url: &str, options: StoreOptions) -> Result<Self, StoreError> {
        Self::connect_with(url, options, &SharedOptions::default()).await
    }

    /// [`Store::connect`] with the TLS trust and NATS of `shared`.
    #[base::boxed]
    pub async fn connect_with(
        url: &str,
        options: StoreOptions,
        shared: &SharedOptions,
    ) -> Result<Self, StoreError> {
        Ok(Self { engine: Engine::Postgres(Postgres::connect(url, options, shared).await?) })
    }

    /// True when other nodes may share this store (PostgreSQL).
    pub fn is_shared(&self) -> bool {
        matches!(self.engine, Engine::Postgres(_))
    }

    /// What other nodes commit from now on; `None` for the embedded store.
    pub fn notices(&self) -> Option<broadcast::Receiver<Notice>> {
        match &self.engine {
            Engine::Embedded(_) => None,
            Engine::Postgres(p) => Some(p.notices()),
        }
    }

    /// Waits for `id`'s cluster-wide writer lock (held until the guard drops; a node that dies
    /// releases it with its connection); `None` for the embedded store, whose one process
    /// is the only writer.
    #[base::boxed]
    pub async fn lock_dashboard(&self, id: &str) -> Result<Option<ClusterLock>, StoreError> {
        match &self.engine {
            Engine::Embedded(_) => Ok(None),
            Engine::Postgres(p) => p.lock_dashboard(id).await.map(Some),
        }
    }

    /// This node's id in a shared store's notices and leases; `None` for the embedded store.
    pub fn node_id(&self) -> Option<&str> {
        match &self.engine {
            Engine::Embedded(_) => None,
            Engine::Postgres(p) => Some(p.node()),
        }
    }

    /// Of `ids`, the dashboards whose scheduled refreshes this node does for the next `ttl`
    /// (a shared store's leases: kept while renewed, taken over when they lapse); all of them
    /// on the embedded store. Other work that one node must do is leased the same way under
    /// ids of its own (`report:{id}`).
    #[base::boxed]
    pub async fn claim_refresh(
        &self,
        ids: &[String],
        ttl: Duration,
    ) -> Result<Vec<String>, StoreError> {
        match &self.engine {
            Engine::Embedded(_) => Ok(ids.to_vec()),
            Engine::Postgres(p) => p.claim_refresh(ids, ttl).await,
        }
    }

    /// Shares a panel's latest result (JSON of `version`) with the other nodes; nothing to do
    /// on the embedded store.
    #[base::boxed]
    pub async fn put_panel_result(
        &self,
        id: &str,
        panel: &str,
        version: u64,
        run: &str,
    ) -> Result<(), StoreError> {
        match &self.engine {
            Engine::Embedded(_) => Ok(()),
            Engine::Postgres(p) => p.put_panel_result(id, panel, version, run).await,
        }
    }

    /// A panel's latest shared result: its version and JSON.
    #[base::boxed]
    pub async fn panel_result(
        &self,
        id: &str,
        panel: &str,
    ) -> Result<Option<(u64, String)>, StoreError> {
        match &self.engine {
            Engine::Embedded(_) => Ok(None),
            Engine::Postgres(p) => p.panel_result(id, panel).await,
        }
    }

    /// Keeps `run` (a panel's last successful result as JSON text, made by the live layer) for
    /// (dashboard, panel, fingerprint) with the time it was produced (unix ms), durably on
    /// either engine, so it can be shown (stale) while the panel's provider is down, after a
    /// restart or on another node. Acknowledged after the durable commit.
    ///
    /// Bounds, enforced by the put itself:
    /// - a `run` over [`StoreOptions::last_good_entry_bytes`] is not kept: `Ok`, and the entry
    ///   already kept for the key stays;
    /// - an entry whose `at` is older than the one kept for the key is ignored (two nodes
    ///   racing); an equal or newer one replaces it;
    /// - at most [`LAST_GOOD_PER_PANEL`] fingerprints per (dashboard, panel): past it the
    ///   panel's oldest (by `at`) is dropped;
    /// - past [`StoreOptions::last_good_bytes`] (the `run` texts of all entries) the oldest
    ///   entries by `at`, of any dashboard, are dropped until the rest fit;
    /// - nothing is kept for a dashboard the store does not hold (never created, or purged:
    ///   [`Store::purge`] removes a dashboard's entries).
    ///
    /// A dashboard id, panel id or fingerprint that is empty or over 256 bytes is
    /// [`StoreError::Storage`].
    #[base::boxed]
    pub async fn put_last_good(
        &self,
        dashboard: &str,
        panel: &str,
        fingerprint: &str,
        run: &str,
        at: i64,
    ) -> Result<(), StoreError> {
        check_last_good_key(dashboard, panel, fingerprint)?;
        on_engine!(self.put_last_good(dashboard, panel, fingerprint, run, at))
    }

    /// The kept result for (dashboard, panel, fingerprint): its JSON text and time (unix ms).
    #[base::boxed]
    pub async fn last_good(
        &self,
        dashboard: &str,
        panel: &str,
        fingerprint: &str,
    ) -> Result<Option<(String, i64)>, StoreError> {
        if check_last_good_key(dashboard, panel, fingerprint).is_err() {
            return Ok(None);
        }
        on_engine!(self.last_good(dashboard, panel, fingerprint))
    }

    /// Writer counters (commits, ops, largest batch).
    pub fn stats(&self) -> StoreStats {
        match &self.engine {
            Engine::Embedded(e) => e.stats(),
            Engine::Postgres(p) => p.stats(),
        }
    }

    /// Answers when the store can serve (a readiness check): open, and for PostgreSQL the
    /// database answering.
    #[base::boxed]
    pub async fn ping(&self) -> Result<(), StoreError> {
        on_engine!(self.ping())
    }

    /// The engine's name: `embedded` or `postgres`.
    pub fn engine(&self) -> &'static str {
        match self.engine {
            Engine::Embedded(_) => "embedded",
            Engine::Postgres(_) => "postgres",
        }
    }

    /// True when the store holds no dashboards at all (first start: load templates).
    #[base::boxed]
    pub async fn is_empty(&self) -> Result<bool, StoreError> {
        on_engine!(self.is_empty())
    }

    /// Creates a dashboard at version 1 with a fresh id (or `id` if given and unused; an id in
    /// use answers `Conflict { expected: 0, actual: <its version> }`).
    #[base::boxed]
    pub async fn create(
        &self,
        id: Option<&str>,
        state: DashboardState,
        note: &str,
        by: &Author,
    ) -> Result<DashboardRecord, StoreError> {
        on_engine!(self.create(id, state, note, by))
    }

    /// Saves a new version based on `base_version`.
    #[base::boxed]
    pub async fn save(
        &self,
        id: &str,
        base_version: u64,
        state: DashboardState,
        note: &str,
        by: &Author,
    ) -> Result<DashboardRecord, StoreError> {
        on_engine!(self.save(id, base_version, state, note, by))
    }

    /// The current version (also of deleted dashboards; check `deleted`).
    #[base::boxed]
    pub async fn get(&self, id: &str) -> Result<DashboardRecord, StoreError> {
        on_engine!(self.get(id))
    }

    /// One past version.
    #[base::boxed]
    pub async fn get_version(&self, id: &str, version: u64) -> Result<DashboardRecord, StoreError> {
        on_engine!(self.get_version(id, version))
    }

    /// The history, oldest first.
    #[base::boxed]
    pub async fn versions(&self, id: &str) -> Result<Vec<VersionInfo>, StoreError> {
        on_engine!(self.versions(id))
    }

    /// All dashboards, most recently updated first.
    #[base::boxed]
    pub async fn list(&self, include_deleted: bool) -> Result<Vec<DashboardListItem>, StoreError> {
        on_engine!(self.list(include_deleted))
    }

    /// Saves the state of `to_version` as a new version (history is never rewritten).
    #[base::boxed]
    pub async fn revert(
        &self,
        id: &str,
        to_version: u64,
        by: &Author,
    ) -> Result<DashboardRecord, StoreError> {
        on_engine!(self.revert(id, to_version, by))
    }

    /// Soft-deletes (restorable; idempotent; no new version).
    #[base::boxed]
    pub async fn delete(&self, id: &str) -> Result<(), StoreError> {
        on_engine!(self.delete(id))
    }

    /// Undoes a delete (idempotent; no new version).
    #[base::boxed]
    pub async fn restore(&self, id: &str) -> Result<DashboardRecord, StoreError> {
        on_engine!(self.restore(id))
    }

    /// Copies the current state into a new dashboard (optionally retitled).
    #[base::boxed]
    pub async fn duplicate(
        &self,
        id: &str,
        title: Option<String>,
        by: &Author,
    ) -> Result<DashboardRecord, StoreError> {
        on_engine!(self.duplicate(id, title, by))
    }

    /// Removes a deleted dashboard and its whole history for good (frees its bytes).
    /// [`StoreError::NotDeleted`] for a dashboard that is not deleted.
    #[base::boxed]
    pub async fn purge(&self, id: &str) -> Result<(), StoreError> {
        on_engine!(self.purge(id))
    }

    /// Stores a record, replacing the one of its kind with its id (acked after the durable
    /// commit).
    #[base::boxed]
    pub async fn put_record(
        &self,
        kind: Record,
        id: &str,
        value: &Value,
    ) -> Result<(), StoreError> {
        on_engine!(self.put_record(kind, id, value))
    }

    /// Removes a record; an absent one is not an error.
    #[base::boxed]
    pub async fn delete_record(&self, kind: Record, id: &str) -> Result<(), StoreError> {
        on_engine!(self.delete_record(kind, id))
    }

    /// One record.
    #[base::boxed]
    pub async fn record(&self, kind: Record, id: &str) -> Result<Option<Value>, StoreError> {
        on_engine!(self.record(kind, id))
    }

    /// Every record of a kind, by id order.
    #[base::boxed]
    pub async fn records(&self, kind: Record) -> Result<Vec<Value>, StoreError> {
        Ok(self.records_with_ids(kind).await?.into_iter().map(|(_, v)| v).collect())
    }

    /// Every record of a kind with its id, by id order.
    #[base::boxed]
    pub async fn records_with_ids(&self, kind: Record) -> Result<Vec<(String, Value)>, StoreError> {
        on_engine!(self.records(kind))
    }

    /// Stores a session's state (active dashboard, dashboards it created).
    #[base::boxed]
    pub async fn put_session(&self, session: &str, value: Value) -> Result<(), StoreError> {
        self.put_record(Record::Session, session, &value).await
    }

    /// Reads a session's state.
    #[base::boxed]
    pub async fn get_session(&self, session: &str) -> Result<Option<Value>, StoreError> {
        self.record(Record::Session, session).await
    }

    /// Stores an API key's record (created or changed), replacing the one with its id.
    #[base::boxed]
    pub async fn put_api_key(&self, id: &str, value: Value) -> Result<(), StoreError> {
        self.put_record(Record::ApiKey, id, &value).await
    }

    /// Every stored API key record, by id order.
    #[base::boxed]
    pub async fn api_keys(&self) -> Result<Vec<Value>, StoreError> {
        self.records(Record::ApiKey).await
    }

    /// Stores a usage row, replacing the one with its id.
    #[base::boxed]
    pub async fn put_usage_row(&self, id: &str, value: Value) -> Result<(), StoreError> {
        self.put_record(Record::Usage, id, &value).await
    }

    /// Every stored usage row, by id order.
    #[base::boxed]
    pub async fn usage_rows(&self) -> Result<Vec<Value>, StoreError> {
        self.records(Record::Usage).await
    }

    /// Stores an admin definition (`provider:KEY`, `agent:KEY`, ...), replacing the one with
    /// its id.
    #[base::boxed]
    pub async fn put_admin(&self, id: &str, value: Value) -> Result<(), StoreError> {
        self.put_record(Record::Admin, id, &value).await
    }

    /// Removes an admin definition; an absent one is not an error.
    #[base::boxed]
    pub async fn delete_admin(&self, id: &str) -> Result<(), StoreError> {
        self.delete_record(Record::Admin, id).await
    }

    /// Every stored admin definition, by id order.
    #[base::boxed]
    pub async fn admin_records(&self) -> Result<Vec<Value>, StoreError> {
        self.records(Record::Admin).await
    }

    /// Stores a workflow definition made through the API, replacing the one with its id.
    #[base::boxed]
    pub async fn put_workflow(&self, id: &str, value: Value) -> Result<(), StoreError> {
        self.put_record(Record::Workflow, id, &value).await
    }

    /// Removes a workflow definition; an absent one is not an error.
    #[base::boxed]
    pub async fn delete_workflow(&self, id: &str) -> Result<(), StoreError> {
        self.delete_record(Record::Workflow, id).await
    }

    /// Every stored workflow definition, by id order.
    #[base::boxed]
    pub async fn workflows(&self) -> Result<Vec<Value>, StoreError> {
        self.records(Record::Workflow).await
    }

    /// Stores a workflow run's state (acknowledged after the durable commit).
    #[base::boxed]
    pub async fn put_workflow_run(&self, id: &str, value: Value) -> Result<(), StoreError> {
        self.put_record(Record::WorkflowRun, id, &value).await
    }

    /// Removes a workflow run's state; an absent one is not an error.
    #[base::boxed]
    pub async fn delete_workflow_run(&self, id: &str) -> Result<(), StoreError> {
        self.delete_record(Record::WorkflowRun, id).await
    }

    /// One workflow run's state.
    #[base::boxed]
    pub async fn workflow_run(&self, id: &str) -> Result<Option<Value>, StoreError> {
        self.record(Record::WorkflowRun, id).await
    }

    /// Every stored workflow run, by id order (ids are time-ordered).
    #[base::boxed]
    pub async fn workflow_runs(&self) -> Result<Vec<Value>, StoreError> {
        self.records(Record::WorkflowRun).await
    }

    /// Writes a dashboard's whole history as it was (see [`copy`]); PostgreSQL only, the
    /// target of `boardsmith migrate-store`.
    #[base::boxed]
    pub async fn import(&self, history: &copy::History) -> Result<(), StoreError> {
        match &self.engine {
            Engine::Embedded(_) => Err(StoreError::Storage(
                "importing a history is only supported into PostgreSQL".into(),
            )),
            Engine::Postgres(p) => p.import(history).await,
        }
    }

    /// Stops accepting writes (later calls answer [`StoreError::Closed`]) and finishes the
    /// ones under way: the embedded engine drains its writer, commits and closes the file so
    /// the directory can be reopened; PostgreSQL closes its pools and its listener.
    /// Idempotent.
    #[base::boxed]
    pub async fn shutdown(&self) {
        on_engine!(self.shutdown())
    }
}

/// The author as it is stored beside a version: JSON text.
fn author_json(by: &Author) -> String {
    serde_json::to_string(by).unwrap_or_default()
}

/// A stored author back; empty (a version from before authors) or unreadable text is `None`,
/// never an error: the version itself is fine.
fn author_of(stored: &str) -> Option<Author> {
    (!stored.is_empty()).then(|| serde_json::from_str(stored).ok()).flatten()
}
