//! The embedded engine: redb in one file under the data directory, one writer thread
//! group-committing (see `writer`), reads on the blocking pool against MVCC snapshots. Only
//! this file, `keys` and `writer` know redb.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use redb::{Database, ReadableDatabase, ReadableTable, ReadableTableMetadata};
use serde_json::Value;
use tokio::sync::oneshot;

use super::keys::{
    self, DASHBOARDS, LAST_GOOD, LAST_GOOD_BY_AT, META, VERSIONS, decode_head, decode_version,
    version_key,
};
use super::writer::{self, Batching, Meta, Op, Reply, Request};
use super::{
    Author, Counters, DashboardListItem, DashboardRecord, Record, StoreError, StoreOptions,
    StoreQuotas, StoreStats, VersionInfo, author_json, author_of, damaged, new_dashboard_id,
    parse_state, state_json, storage,
};
use dashboard::DashboardState;

/// The file name inside the store directory.
pub const FILE_NAME: &str = "boardsmith.redb";

const FORMAT_KEY: &str = "format";
const FORMAT_VERSION: &[u8] = b"1";

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
    for table in Record::ALL.map(keys::table_of) {
        let t = txn.open_table(table).map_err(|e| storage("open records", e))?;
        for item in t.iter().map_err(|e| storage("count records", e))? {
            used += item.map_err(|e| storage("count records", e))?.1.value().len() as u64;
        }
    }
    meta.insert(writer::STORED_BYTES_KEY, used.to_be_bytes().as_slice())
        .map_err(|e| storage("write the stored-bytes count", e))?;
    Ok(used)
}

/// The bytes of all last good results, counted from their index (sizes only: no result is
/// read) each time the store opens.
fn last_good_bytes(txn: &redb::WriteTransaction) -> Result<u64, StoreError> {
    let index = txn.open_table(LAST_GOOD_BY_AT).map_err(|e| storage("open last_good_by_at", e))?;
    let mut used = 0u64;
    for item in index.iter().map_err(|e| storage("count last good results", e))? {
        used =
            used.saturating_add(item.map_err(|e| storage("count last good results", e))?.1.value());
    }
    Ok(used)
}

/// The redb engine.
pub(super) struct Embedded {
    path: PathBuf,
    db: RwLock<Option<Arc<Database>>>,
    tx: Mutex<Option<mpsc::Sender<Request>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
    closed: AtomicBool,
    counters: Arc<Counters>,
    quotas: StoreQuotas,
    /// The largest last good result kept.
    last_good_entry_bytes: u64,
}

impl std::fmt::Debug for Embedded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedded").field("path", &self.path).finish_non_exhaustive()
    }
}

impl Embedded {
    /// Opens (creating if needed) the store in `dir` (file `boardsmith.redb`).
    pub fn open_with(dir: &Path, options: StoreOptions) -> Result<Self, StoreError> {
        base::fs_private::create_dir_all(dir)
            .map_err(|e| storage(format!("create {}", dir.display()), e))?;
        let path = dir.join(FILE_NAME);
        let db =
            Database::create(&path).map_err(|e| storage(format!("open {}", path.display()), e))?;
        // redb creates the file with the process's umask: the store is the owner's only.
        base::fs_private::tighten(&path)
            .map_err(|e| storage(format!("chmod {}", path.display()), e))?;
        // Create every table up front so readers never see a missing table.
        let txn = db.begin_write().map_err(|e| storage("begin write", e))?;
        {
            txn.open_table(DASHBOARDS).map_err(|e| storage("create table dashboards", e))?;
            txn.open_table(VERSIONS).map_err(|e| storage("create table versions", e))?;
            for table in Record::ALL.map(keys::table_of) {
                txn.open_table(table).map_err(|e| storage("create a table of records", e))?;
            }
            txn.open_table(LAST_GOOD).map_err(|e| storage("create table last_good", e))?;
            txn.open_table(LAST_GOOD_BY_AT)
                .map_err(|e| storage("create table last_good_by_at", e))?;
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
        let last_good = last_good_bytes(&txn)?;
        txn.commit().map_err(|e| storage("commit table creation", e))?;

        let db = Arc::new(db);
        let counters = Arc::new(Counters::default());
        counters.stored_bytes.store(used, Ordering::Relaxed);
        counters.last_good_bytes.store(last_good, Ordering::Relaxed);
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
                let usage = writer::Usage {
                    used,
                    quotas: options.quotas,
                    last_good,
                    last_good_budget: options.last_good_bytes,
                };
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
            last_good_entry_bytes: options.last_good_entry_bytes,
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
            last_good_bytes: c.last_good_bytes.load(Ordering::Relaxed),
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

    /// Answers while the store is open.
    #[base::boxed]
    pub async fn ping(&self) -> Result<(), StoreError> {
        if self.closed.load(Ordering::Acquire) { Err(StoreError::Closed) } else { Ok(()) }
    }

    /// True when the store holds no dashboards at all (first start: load templates).
    #[base::boxed]
    pub async fn is_empty(&self) -> Result<bool, StoreError> {
        self.read(|txn| {
            let t = txn.open_table(DASHBOARDS).map_err(|e| storage("open dashboards", e))?;
            t.is_empty().map_err(|e| storage("count dashboards", e))
        })
        .await
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
        let (json, title, panels) = state_json(&state, &self.quotas)?;
        let id = id.map_or_else(new_dashboard_id, str::to_owned);
        let op = Op::Create {
            id,
            title,
            panels,
            state: json,
            note: note.to_owned(),
            author: author_json(by),
        };
        match self.write(op).await? {
            Reply::Record { meta, .. } => Ok(record(meta, state)),
            Reply::Unit => Err(StoreError::Storage("unexpected writer reply".into())),
        }
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
        let (json, title, panels) = state_json(&state, &self.quotas)?;
        let op = Op::Save {
            id: id.to_owned(),
            base: base_version,
            title,
            panels,
            state: json,
            note: note.to_owned(),
            author: author_json(by),
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
    #[base::boxed]
    pub async fn get(&self, id: &str) -> Result<DashboardRecord, StoreError> {
        let id = id.to_owned();
        self.read(move |txn| read_record(txn, &id, None)).await
    }

    /// One past version.
    #[base::boxed]
    pub async fn get_version(&self, id: &str, version: u64) -> Result<DashboardRecord, StoreError> {
        let id = id.to_owned();
        self.read(move |txn| read_record(txn, &id, Some(version))).await
    }

    /// The history, oldest first.
    #[base::boxed]
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
                    author: author_of(h.author),
                });
            }
            Ok(out)
        })
        .await
    }

    /// All dashboards, most recently updated first.
    #[base::boxed]
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
    #[base::boxed]
    pub async fn revert(
        &self,
        id: &str,
        to_version: u64,
        by: &Author,
    ) -> Result<DashboardRecord, StoreError> {
        let op = Op::Revert { id: id.to_owned(), to: to_version, author: author_json(by) };
        self.write_record(op).await
    }

    /// Soft-deletes (restorable; idempotent; no new version).
    #[base::boxed]
    pub async fn delete(&self, id: &str) -> Result<(), StoreError> {
        self.write(Op::Delete { id: id.to_owned() }).await.map(|_| ())
    }

    /// Undoes a delete (idempotent; no new version).
    #[base::boxed]
    pub async fn restore(&self, id: &str) -> Result<DashboardRecord, StoreError> {
        self.write_record(Op::Restore { id: id.to_owned() }).await
    }

    /// Copies the current state into a new dashboard (optionally retitled).
    #[base::boxed]
    pub async fn duplicate(
        &self,
        id: &str,
        title: Option<String>,
        by: &Author,
    ) -> Result<DashboardRecord, StoreError> {
        let (src, new_id, author) = (id.to_owned(), new_dashboard_id(), author_json(by));
        self.write_record(Op::Duplicate { src, new_id, title, author }).await
    }

    /// Removes a deleted dashboard and its whole history for good (frees its bytes).
    /// [`StoreError::NotDeleted`] for a dashboard that is not deleted.
    #[base::boxed]
    pub async fn purge(&self, id: &str) -> Result<(), StoreError> {
        self.write(Op::Purge { id: id.to_owned() }).await.map(|_| ())
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
        let json = serde_json::to_vec(value).map_err(|e| storage("serialize record", e))?;
        self.write(Op::PutRecord { kind, id: id.to_owned(), json }).await.map(|_| ())
    }

    /// Removes a record; an absent one is not an error.
    #[base::boxed]
    pub async fn delete_record(&self, kind: Record, id: &str) -> Result<(), StoreError> {
        self.write(Op::DeleteRecord { kind, id: id.to_owned() }).await.map(|_| ())
    }

    /// One record.
    #[base::boxed]
    pub async fn record(&self, kind: Record, id: &str) -> Result<Option<Value>, StoreError> {
        let id = id.to_owned();
        self.read(move |txn| {
            let t = txn.open_table(keys::table_of(kind)).map_err(|e| storage("open records", e))?;
            let Some(g) = t.get(id.as_str()).map_err(|e| storage("read record", e))? else {
                return Ok(None);
            };
            serde_json::from_slice(g.value())
                .map(Some)
                .map_err(|e| damaged(format!("{} `{id}`: corrupt JSON", kind.name()), e))
        })
        .await
    }

    /// Every record of a kind with its id, by id order.
    #[base::boxed]
    pub async fn records(&self, kind: Record) -> Result<Vec<(String, Value)>, StoreError> {
        self.read(move |txn| {
            let t = txn.open_table(keys::table_of(kind)).map_err(|e| storage("open records", e))?;
            let mut out = Vec::new();
            for item in t.iter().map_err(|e| storage("read records", e))? {
                let (id, value) = item.map_err(|e| storage("read records", e))?;
                let id = id.value().to_owned();
                let value = serde_json::from_slice(value.value())
                    .map_err(|e| damaged(format!("{} `{id}`: corrupt JSON", kind.name()), e))?;
                out.push((id, value));
            }
            Ok(out)
        })
        .await
    }

    /// Keeps a panel's last good result (see [`crate::Store::put_last_good`]); a result over
    /// the size bound never reaches the writer.
    #[base::boxed]
    pub async fn put_last_good(
        &self,
        dashboard: &str,
        panel: &str,
        fingerprint: &str,
        run: &str,
        at: i64,
    ) -> Result<(), StoreError> {
        if run.len() as u64 > self.last_good_entry_bytes {
            return Ok(());
        }
        let op = writer::Op::PutLastGood {
            dashboard: dashboard.to_owned(),
            panel: panel.to_owned(),
            fingerprint: fingerprint.to_owned(),
            run: run.to_owned(),
            at,
        };
        self.write(op).await.map(|_| ())
    }

    /// The kept result for (dashboard, panel, fingerprint): its JSON text and time.
    #[base::boxed]
    pub async fn last_good(
        &self,
        dashboard: &str,
        panel: &str,
        fingerprint: &str,
    ) -> Result<Option<(String, i64)>, StoreError> {
        let key = keys::last_good_key(dashboard, panel, fingerprint);
        let what = format!("last good result of `{dashboard}` panel `{panel}` ({fingerprint})");
        self.read(move |txn| {
            let t = txn.open_table(LAST_GOOD).map_err(|e| storage("open last_good", e))?;
            let Some(g) =
                t.get(key.as_slice()).map_err(|e| storage(format!("read the {what}"), e))?
            else {
                return Ok(None);
            };
            let (at, run) = keys::decode_last_good(g.value()).map_err(|e| damaged(&what, e))?;
            let run = std::str::from_utf8(run).map_err(|e| damaged(&what, e))?;
            Ok(Some((run.to_owned(), at)))
        })
        .await
    }

    /// Stops accepting writes (later calls answer [`StoreError::Closed`]), drains the writer
    /// (every queued write is committed durably and answered), joins it and closes the file so
    /// the directory can be reopened. Idempotent.
    #[base::boxed]
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
