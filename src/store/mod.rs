//! The durable store: dashboards with full version history and chat/tool sessions, in redb.
//!
//! Only this module knows the engine, the tables and the key encoding (`keys`); everything else
//! sees the typed API below. A write is acknowledged only after its durable commit
//! (`Durability::Immediate`); one writer thread group-commits pending writes (see `writer`).
//! Saves carry the version they were based on: a mismatch is [`StoreError::Conflict`], never a
//! lost update. Reads run on the blocking pool against redb's MVCC snapshots and never wait for
//! the writer.
//!
//! Semantics worth knowing:
//! - `create(Some(id))` with an id that exists answers `Conflict { expected: 0, actual: <head> }`
//!   (ids are 1..=256 bytes; otherwise `Storage("invalid dashboard id ...")`).
//! - `delete`/`restore` only flip the head's `deleted` flag (no new version; idempotent).
//!   `save`, `revert` and `duplicate` of a deleted dashboard answer [`StoreError::Deleted`];
//!   `get`, `get_version`, `versions` still work (check `deleted`).
//! - `revert` appends a new version (note `revert to N`) with that version's state.
//! - `list` is ordered by `updated_at` (time of the current version), newest first, then by id.
//! - Quotas ([`StoreQuotas`]): a state over `max_state_bytes` is [`StoreError::TooLarge`]
//!   before it reaches the writer; a write past `max_store_bytes` is [`StoreError::Full`]; a
//!   write that makes a dashboard hold more than `versions_kept` versions drops its oldest (so
//!   `versions` may start above 1). `purge` removes a deleted dashboard for good.

mod bench;
mod keys;
#[cfg(test)]
mod tests;
mod writer;

pub use bench::{bench_saves, bench_saves_with, sample_state};

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use redb::{Database, ReadableDatabase, ReadableTable, ReadableTableMetadata};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::oneshot;

use crate::dashboard::DashboardState;
use keys::{
    ADMIN, API_KEYS, DASHBOARDS, META, SESSIONS, USAGE, VERSIONS, WORKFLOW_RUNS, WORKFLOWS,
    decode_head, decode_version, version_key,
};
use writer::{Batching, Meta, Op, Record, Reply, Request};

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
}

impl Default for StoreOptions {
    fn default() -> Self {
        Self {
            max_batch: 256,
            batch_window: Duration::from_millis(2),
            batch_idle: Duration::from_micros(100),
            quotas: StoreQuotas::default(),
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
}

#[derive(Debug, Default)]
struct Counters {
    commits: AtomicU64,
    ops: AtomicU64,
    largest_batch: AtomicU64,
    failed_batches: AtomicU64,
    stored_bytes: AtomicU64,
}

/// The store handle (cheap to share behind an `Arc`).
pub struct Store {
    path: PathBuf,
    db: RwLock<Option<Arc<Database>>>,
    tx: Mutex<Option<mpsc::Sender<Request>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
    closed: AtomicBool,
    counters: Arc<Counters>,
    quotas: StoreQuotas,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish_non_exhaustive()
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

/// The file name inside the store directory.
pub const FILE_NAME: &str = "boardsmith.redb";

const FORMAT_KEY: &str = "format";
const FORMAT_VERSION: &[u8] = b"1";

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

fn record(meta: Meta, state: DashboardState) -> DashboardRecord {
    DashboardRecord {
        id: meta.id,
        version: meta.version,
        state,
        created_at: meta.created_at,
        updated_at: meta.updated_at,
        deleted: meta.deleted,
    }
}

/// The stored-bytes count of `meta`; counted from the tables (and saved) the first time a
/// store written before the quotas is opened.
fn stored_bytes(txn: &redb::WriteTransaction) -> Result<u64, StoreError> {
    let mut meta = txn.open_table(META).map_err(|e| storage("open meta", e))?;
    let saved = meta
        .get(writer::STORED_BYTES_KEY)
        .map_err(|e| storage("read the stored-bytes count", e))?
        .and_then(|g| <[u8; 8]>::try_from(g.value()).ok())
        .map(u64::from_be_bytes);
    if let Some(used) = saved {
        return Ok(used);
    }
    let mut used = 0u64;
    let versions = txn.open_table(VERSIONS).map_err(|e| storage("open versions", e))?;
    for item in versions.iter().map_err(|e| storage("count versions", e))? {
        used += item.map_err(|e| storage("count versions", e))?.1.value().len() as u64;
    }
    for table in [SESSIONS, API_KEYS, USAGE, ADMIN, WORKFLOWS, WORKFLOW_RUNS] {
        let t = txn.open_table(table).map_err(|e| storage("open records", e))?;
        for item in t.iter().map_err(|e| storage("count records", e))? {
            used += item.map_err(|e| storage("count records", e))?.1.value().len() as u64;
        }
    }
    meta.insert(writer::STORED_BYTES_KEY, used.to_be_bytes().as_slice())
        .map_err(|e| storage("write the stored-bytes count", e))?;
    Ok(used)
}

/// A new dashboard id: `db_` + a time-ordered UUID (v7).
pub fn new_dashboard_id() -> String {
    format!("db_{}", uuid::Uuid::now_v7().simple())
}

impl Store {
    /// Opens (creating if needed) the store in `dir` (file `boardsmith.redb`).
    pub fn open(dir: &Path) -> Result<Self, StoreError> {
        Self::open_with(dir, StoreOptions::default())
    }

    /// [`Store::open`] with explicit group-commit tuning.
    pub fn open_with(dir: &Path, options: StoreOptions) -> Result<Self, StoreError> {
        std::fs::create_dir_all(dir)
            .map_err(|e| storage(format!("create {}", dir.display()), e))?;
        let path = dir.join(FILE_NAME);
        let db =
            Database::create(&path).map_err(|e| storage(format!("open {}", path.display()), e))?;
        // Create every table up front so readers never see a missing table.
        let txn = db.begin_write().map_err(|e| storage("begin write", e))?;
        {
            txn.open_table(DASHBOARDS).map_err(|e| storage("create table dashboards", e))?;
            txn.open_table(VERSIONS).map_err(|e| storage("create table versions", e))?;
            txn.open_table(SESSIONS).map_err(|e| storage("create table sessions", e))?;
            txn.open_table(API_KEYS).map_err(|e| storage("create table api_keys", e))?;
            txn.open_table(USAGE).map_err(|e| storage("create table usage", e))?;
            txn.open_table(ADMIN).map_err(|e| storage("create table admin", e))?;
            txn.open_table(WORKFLOWS).map_err(|e| storage("create table workflows", e))?;
            txn.open_table(WORKFLOW_RUNS).map_err(|e| storage("create table workflow_runs", e))?;
            let mut meta = txn.open_table(META).map_err(|e| storage("create table meta", e))?;
            let existing = meta
                .get(FORMAT_KEY)
                .map_err(|e| storage("read format", e))?
                .map(|g| g.value().to_vec());
            match existing {
                None => {
                    meta.insert(FORMAT_KEY, FORMAT_VERSION)
                        .map_err(|e| storage("write format", e))?;
                }
                Some(v) if v == FORMAT_VERSION => {}
                Some(v) => {
                    return Err(StoreError::Storage(format!(
                        "{}: unsupported store format {:?}",
                        path.display(),
                        String::from_utf8_lossy(&v)
                    )));
                }
            }
        }
        let used = stored_bytes(&txn)?;
        txn.commit().map_err(|e| storage("commit table creation", e))?;

        let db = Arc::new(db);
        let counters = Arc::new(Counters::default());
        counters.stored_bytes.store(used, Ordering::Relaxed);
        let (tx, rx) = mpsc::channel();
        let cfg = Batching {
            max_batch: options.max_batch,
            window: options.batch_window,
            idle: options.batch_idle,
        };
        let thread = std::thread::Builder::new()
            .name("store-writer".into())
            .spawn({
                let db = Arc::clone(&db);
                let counters = Arc::clone(&counters);
                let usage = writer::Usage { used, quotas: options.quotas };
                move || writer::run(db, rx, cfg, counters, usage)
            })
            .map_err(|e| storage("spawn writer thread", e))?;
        Ok(Self {
            path,
            db: RwLock::new(Some(db)),
            tx: Mutex::new(Some(tx)),
            thread: Mutex::new(Some(thread)),
            closed: AtomicBool::new(false),
            counters,
            quotas: options.quotas,
        })
    }

    /// Writer counters (commits, ops, largest batch).
    pub fn stats(&self) -> StoreStats {
        let c = &self.counters;
        StoreStats {
            commits: c.commits.load(Ordering::Relaxed),
            ops: c.ops.load(Ordering::Relaxed),
            largest_batch: c.largest_batch.load(Ordering::Relaxed),
            failed_batches: c.failed_batches.load(Ordering::Relaxed),
            stored_bytes: c.stored_bytes.load(Ordering::Relaxed),
        }
    }

    /// Sends a write to the writer and waits for its durable commit.
    async fn write(&self, op: Op) -> Result<Reply, StoreError> {
        let (reply, rx) = oneshot::channel();
        {
            let tx = self.tx.lock().map_err(|_| StoreError::Closed)?;
            let tx = tx.as_ref().ok_or(StoreError::Closed)?;
            tx.send(Request { op, reply }).map_err(|_| StoreError::Closed)?;
        }
        rx.await.map_err(|_| StoreError::Storage("the store writer stopped".into()))?
    }

    /// Runs a read on the blocking pool against a fresh MVCC snapshot.
    async fn read<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&redb::ReadTransaction) -> Result<T, StoreError> + Send + 'static,
    {
        if self.closed.load(Ordering::Acquire) {
            return Err(StoreError::Closed);
        }
        let db = self
            .db
            .read()
            .map_err(|_| StoreError::Closed)?
            .as_ref()
            .map(Arc::clone)
            .ok_or(StoreError::Closed)?;
        tokio::task::spawn_blocking(move || {
            let txn = db.begin_read().map_err(|e| storage("begin read", e))?;
            f(&txn)
        })
        .await
        .map_err(|e| storage("read task", e))?
    }

    /// True when the store holds no dashboards at all (first start: load templates).
    pub async fn is_empty(&self) -> Result<bool, StoreError> {
        self.read(|txn| {
            let t = txn.open_table(DASHBOARDS).map_err(|e| storage("open dashboards", e))?;
            t.is_empty().map_err(|e| storage("count dashboards", e))
        })
        .await
    }

    /// Creates a dashboard at version 1 with a fresh id (or `id` if given and unused; an id in
    /// use answers `Conflict { expected: 0, actual: <its version> }`).
    pub async fn create(
        &self,
        id: Option<&str>,
        state: DashboardState,
        note: &str,
    ) -> Result<DashboardRecord, StoreError> {
        let (json, title, panels) = state_json(&state, &self.quotas)?;
        let id = id.map_or_else(new_dashboard_id, str::to_owned);
        let op = Op::Create { id, title, panels, state: json, note: note.to_owned() };
        match self.write(op).await? {
            Reply::Record { meta, .. } => Ok(record(meta, state)),
            Reply::Unit => Err(StoreError::Storage("unexpected writer reply".into())),
        }
    }

    /// Saves a new version based on `base_version`.
    pub async fn save(
        &self,
        id: &str,
        base_version: u64,
        state: DashboardState,
        note: &str,
    ) -> Result<DashboardRecord, StoreError> {
        let (json, title, panels) = state_json(&state, &self.quotas)?;
        let op = Op::Save {
            id: id.to_owned(),
            base: base_version,
            title,
            panels,
            state: json,
            note: note.to_owned(),
        };
        match self.write(op).await? {
            Reply::Record { meta, .. } => Ok(record(meta, state)),
            Reply::Unit => Err(StoreError::Storage("unexpected writer reply".into())),
        }
    }

    /// A write whose reply carries the state JSON.
    async fn write_record(&self, op: Op) -> Result<DashboardRecord, StoreError> {
        match self.write(op).await? {
            Reply::Record { meta, state: Some(state) } => Ok(record(meta, state)),
            _ => Err(StoreError::Storage("unexpected writer reply".into())),
        }
    }

    /// The current version (also of deleted dashboards; check `deleted`).
    pub async fn get(&self, id: &str) -> Result<DashboardRecord, StoreError> {
        let id = id.to_owned();
        self.read(move |txn| read_record(txn, &id, None)).await
    }

    /// One past version.
    pub async fn get_version(&self, id: &str, version: u64) -> Result<DashboardRecord, StoreError> {
        let id = id.to_owned();
        self.read(move |txn| read_record(txn, &id, Some(version))).await
    }

    /// The history, oldest first.
    pub async fn versions(&self, id: &str) -> Result<Vec<VersionInfo>, StoreError> {
        let id = id.to_owned();
        self.read(move |txn| {
            read_head(txn, &id)?;
            let t = txn.open_table(VERSIONS).map_err(|e| storage("open versions", e))?;
            let (lo, hi) = (version_key(&id, 0), version_key(&id, u64::MAX));
            let range = t
                .range(lo.as_slice()..=hi.as_slice())
                .map_err(|e| storage(format!("scan versions of `{id}`"), e))?;
            let mut out = Vec::new();
            for item in range {
                let (k, v) = item.map_err(|e| storage(format!("scan versions of `{id}`"), e))?;
                let version = keys::version_of_key(k.value())
                    .map_err(|e| storage(format!("dashboard `{id}`"), e))?;
                let (h, _) = decode_version(v.value())
                    .map_err(|e| damaged(format!("dashboard `{id}` version {version}"), e))?;
                out.push(VersionInfo {
                    version,
                    created_at: h.created_at,
                    title: h.title.to_owned(),
                    panels: h.panels as usize,
                    note: h.note.to_owned(),
                });
            }
            Ok(out)
        })
        .await
    }

    /// All dashboards, most recently updated first.
    pub async fn list(&self, include_deleted: bool) -> Result<Vec<DashboardListItem>, StoreError> {
        self.read(move |txn| {
            let t = txn.open_table(DASHBOARDS).map_err(|e| storage("open dashboards", e))?;
            let mut out = Vec::new();
            for item in t.iter().map_err(|e| storage("scan dashboards", e))? {
                let (k, v) = item.map_err(|e| storage("scan dashboards", e))?;
                let id = k.value();
                let h = decode_head(v.value())
                    .map_err(|e| damaged(format!("dashboard `{id}`: corrupt head"), e))?;
                if h.deleted && !include_deleted {
                    continue;
                }
                out.push(DashboardListItem {
                    id: id.to_owned(),
                    title: h.title,
                    version: h.version,
                    panels: h.panels as usize,
                    updated_at: h.updated_at,
                    deleted: h.deleted,
                });
            }
            out.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then_with(|| a.id.cmp(&b.id)));
            Ok(out)
        })
        .await
    }

    /// Saves the state of `to_version` as a new version (history is never rewritten).
    pub async fn revert(&self, id: &str, to_version: u64) -> Result<DashboardRecord, StoreError> {
        self.write_record(Op::Revert { id: id.to_owned(), to: to_version }).await
    }

    /// Soft-deletes (restorable; idempotent; no new version).
    pub async fn delete(&self, id: &str) -> Result<(), StoreError> {
        self.write(Op::Delete { id: id.to_owned() }).await.map(|_| ())
    }

    /// Undoes a delete (idempotent; no new version).
    pub async fn restore(&self, id: &str) -> Result<DashboardRecord, StoreError> {
        self.write_record(Op::Restore { id: id.to_owned() }).await
    }

    /// Copies the current state into a new dashboard (optionally retitled).
    pub async fn duplicate(
        &self,
        id: &str,
        title: Option<String>,
    ) -> Result<DashboardRecord, StoreError> {
        self.write_record(Op::Duplicate { src: id.to_owned(), new_id: new_dashboard_id(), title })
            .await
    }

    /// Removes a deleted dashboard and its whole history for good (frees its bytes).
    /// [`StoreError::NotDeleted`] for a dashboard that is not deleted.
    pub async fn purge(&self, id: &str) -> Result<(), StoreError> {
        self.write(Op::Purge { id: id.to_owned() }).await.map(|_| ())
    }

    /// Stores a session's state (active dashboard, dashboards it created).
    pub async fn put_session(&self, session: &str, value: Value) -> Result<(), StoreError> {
        self.put_record(Record::Session, session, &value).await
    }

    /// Reads a session's state.
    pub async fn get_session(&self, session: &str) -> Result<Option<Value>, StoreError> {
        let session = session.to_owned();
        self.read(move |txn| {
            let t = txn.open_table(SESSIONS).map_err(|e| storage("open sessions", e))?;
            let Some(g) = t.get(session.as_str()).map_err(|e| storage("read session", e))? else {
                return Ok(None);
            };
            serde_json::from_slice(g.value())
                .map(Some)
                .map_err(|e| damaged(format!("session `{session}`: corrupt JSON"), e))
        })
        .await
    }

    /// Stores an API key's record (created or changed), replacing the one with its id.
    pub async fn put_api_key(&self, id: &str, value: Value) -> Result<(), StoreError> {
        self.put_record(Record::ApiKey, id, &value).await
    }

    /// Every stored API key record, by id order.
    pub async fn api_keys(&self) -> Result<Vec<Value>, StoreError> {
        self.records(API_KEYS, Record::ApiKey).await
    }

    /// Stores a usage row, replacing the one with its id.
    pub async fn put_usage_row(&self, id: &str, value: Value) -> Result<(), StoreError> {
        self.put_record(Record::Usage, id, &value).await
    }

    /// Every stored usage row, by id order.
    pub async fn usage_rows(&self) -> Result<Vec<Value>, StoreError> {
        self.records(USAGE, Record::Usage).await
    }

    /// Stores an admin definition (`provider:KEY`, `agent:KEY`, ...), replacing the one with
    /// its id.
    pub async fn put_admin(&self, id: &str, value: Value) -> Result<(), StoreError> {
        self.put_record(Record::Admin, id, &value).await
    }

    /// Removes an admin definition; an absent one is not an error.
    pub async fn delete_admin(&self, id: &str) -> Result<(), StoreError> {
        self.write(Op::DeleteRecord { kind: Record::Admin, id: id.to_owned() }).await.map(|_| ())
    }

    /// Every stored admin definition, by id order.
    pub async fn admin_records(&self) -> Result<Vec<Value>, StoreError> {
        self.records(ADMIN, Record::Admin).await
    }

    /// Stores a workflow definition made through the API, replacing the one with its id.
    pub async fn put_workflow(&self, id: &str, value: Value) -> Result<(), StoreError> {
        self.put_record(Record::Workflow, id, &value).await
    }

    /// Removes a workflow definition; an absent one is not an error.
    pub async fn delete_workflow(&self, id: &str) -> Result<(), StoreError> {
        self.write(Op::DeleteRecord { kind: Record::Workflow, id: id.to_owned() }).await.map(|_| ())
    }

    /// Every stored workflow definition, by id order.
    pub async fn workflows(&self) -> Result<Vec<Value>, StoreError> {
        self.records(WORKFLOWS, Record::Workflow).await
    }

    /// Stores a workflow run's state (acknowledged after the durable commit).
    pub async fn put_workflow_run(&self, id: &str, value: Value) -> Result<(), StoreError> {
        self.put_record(Record::WorkflowRun, id, &value).await
    }

    /// Removes a workflow run's state; an absent one is not an error.
    pub async fn delete_workflow_run(&self, id: &str) -> Result<(), StoreError> {
        self.write(Op::DeleteRecord { kind: Record::WorkflowRun, id: id.to_owned() })
            .await
            .map(|_| ())
    }

    /// One workflow run's state.
    pub async fn workflow_run(&self, id: &str) -> Result<Option<Value>, StoreError> {
        let id = id.to_owned();
        self.read(move |txn| {
            let t = txn.open_table(WORKFLOW_RUNS).map_err(|e| storage("open workflow_runs", e))?;
            let Some(g) = t.get(id.as_str()).map_err(|e| storage("read workflow run", e))? else {
                return Ok(None);
            };
            serde_json::from_slice(g.value())
                .map(Some)
                .map_err(|e| damaged(format!("workflow run `{id}`: corrupt JSON"), e))
        })
        .await
    }

    /// Every stored workflow run, by id order (ids are time-ordered).
    pub async fn workflow_runs(&self) -> Result<Vec<Value>, StoreError> {
        self.records(WORKFLOW_RUNS, Record::WorkflowRun).await
    }

    async fn put_record(&self, kind: Record, id: &str, value: &Value) -> Result<(), StoreError> {
        let json = serde_json::to_vec(value).map_err(|e| storage("serialize record", e))?;
        self.write(Op::PutRecord { kind, id: id.to_owned(), json }).await.map(|_| ())
    }

    async fn records(
        &self,
        table: redb::TableDefinition<'static, &'static str, &'static [u8]>,
        kind: Record,
    ) -> Result<Vec<Value>, StoreError> {
        self.read(move |txn| {
            let t = txn.open_table(table).map_err(|e| storage("open records", e))?;
            let mut out = Vec::new();
            for item in t.iter().map_err(|e| storage("read records", e))? {
                let (id, value) = item.map_err(|e| storage("read records", e))?;
                let id = id.value().to_owned();
                out.push(
                    serde_json::from_slice(value.value())
                        .map_err(|e| damaged(format!("{} `{id}`: corrupt JSON", kind.name()), e))?,
                );
            }
            Ok(out)
        })
        .await
    }

    /// Stops accepting writes (later calls answer [`StoreError::Closed`]), drains the writer
    /// (every queued write is committed durably and answered), joins it and closes the file so
    /// the directory can be reopened. Idempotent.
    pub async fn shutdown(&self) {
        self.closed.store(true, Ordering::Release);
        // Dropping the only sender lets the writer drain the queue and exit.
        drop(self.tx.lock().ok().and_then(|mut g| g.take()));
        let thread = self.thread.lock().ok().and_then(|mut g| g.take());
        if let Some(thread) = thread {
            match tokio::task::spawn_blocking(move || thread.join()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) => tracing::error!("store writer thread panicked"),
                Err(e) => tracing::error!("joining store writer: {e}"),
            }
        }
        let db = self.db.write().ok().and_then(|mut g| g.take());
        let Some(mut db) = db else { return };
        // Wait (bounded) for in-flight reads to release their handle, then close the file.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match Arc::try_unwrap(db) {
                Ok(db) => {
                    if let Err(e) = db.close() {
                        tracing::error!("closing {}: {e}", self.path.display());
                    }
                    return;
                }
                Err(shared) if Instant::now() < deadline => {
                    db = shared;
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                Err(_) => {
                    tracing::warn!("store closed with reads still in flight");
                    return;
                }
            }
        }
    }
}

fn read_head(txn: &redb::ReadTransaction, id: &str) -> Result<keys::Head, StoreError> {
    if id.len() > keys::MAX_ID_LEN {
        return Err(StoreError::NotFound(id.to_owned()));
    }
    let t = txn.open_table(DASHBOARDS).map_err(|e| storage("open dashboards", e))?;
    let g = t
        .get(id)
        .map_err(|e| storage(format!("read head of `{id}`"), e))?
        .ok_or_else(|| StoreError::NotFound(id.to_owned()))?;
    decode_head(g.value()).map_err(|e| damaged(format!("dashboard `{id}`: corrupt head"), e))
}

fn read_record(
    txn: &redb::ReadTransaction,
    id: &str,
    version: Option<u64>,
) -> Result<DashboardRecord, StoreError> {
    let head = read_head(txn, id)?;
    let want = version.unwrap_or(head.version);
    let t = txn.open_table(VERSIONS).map_err(|e| storage("open versions", e))?;
    let g = t
        .get(version_key(id, want).as_slice())
        .map_err(|e| storage(format!("read `{id}` version {want}"), e))?;
    let Some(g) = g else {
        return Err(match version {
            Some(v) => StoreError::VersionNotFound { id: id.to_owned(), version: v },
            None => {
                StoreError::Storage(format!("dashboard `{id}`: head version {want} is missing"))
            }
        });
    };
    let (h, json) = decode_version(g.value())
        .map_err(|e| damaged(format!("dashboard `{id}` version {want}"), e))?;
    let state = parse_state(id, want, json)?;
    Ok(DashboardRecord {
        id: id.to_owned(),
        version: want,
        state,
        created_at: head.created_at,
        updated_at: h.created_at,
        deleted: head.deleted,
    })
}
