//! The single writer thread: group commit.
//!
//! Requests arrive over a channel, each with a oneshot for its answer. The thread takes the first
//! pending request, keeps collecting until `max_batch` requests or `batch_window` after the first,
//! applies them in arrival order inside ONE write transaction (each op checks versions against the
//! in-transaction state, so a `Conflict` for one op never fails the others), commits with
//! `Durability::Immediate`, and only then answers them all. An op's logical failure leaves no
//! writes behind (every check runs before its first insert); an engine failure aborts the whole
//! batch and every request in it gets `StoreError::Storage`.
//!
//! The writer also owns the quotas' bookkeeping ([`Usage`]): the bytes stored in versions and
//! sessions, kept in memory, checked by each op before it writes (a write that would pass
//! `max_store_bytes` is `Full`; one that frees at least what it adds always passes) and saved
//! in `meta` with the batch. A version past `versions_kept` is dropped by the write that
//! makes it one too many.
//!
//! Last good results ([`Op::PutLastGood`]) have bounds of their own, also kept here: the
//! bytes of all entries (`Usage::last_good`, counted from `last_good_by_at` on open), so a put
//! over the budget drops the oldest entries from the front of that index without a scan, and
//! [`LAST_GOOD_PER_PANEL`] entries per panel, trimmed by the put that adds one too many.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::time::{Duration, Instant};

use redb::{Database, Durability, ReadableTable, Table};
use tokio::sync::oneshot;

use super::keys::{
    self, DASHBOARDS, Head, LAST_GOOD, LAST_GOOD_BY_AT, META, VERSIONS, VersionHeader, decode_head,
    decode_version, encode_head, encode_last_good, encode_version, last_good_age_key,
    last_good_key, version_key,
};
use super::{Counters, LAST_GOOD_PER_PANEL, Record, StoreError, StoreQuotas};
use dashboard::DashboardState;

/// A write operation.
pub(super) enum Op {
    Create {
        id: String,
        title: String,
        panels: u32,
        state: Vec<u8>,
        note: String,
        /// The author as JSON.
        author: String,
    },
    Save {
        id: String,
        base: u64,
        title: String,
        panels: u32,
        state: Vec<u8>,
        note: String,
        author: String,
    },
    Revert {
        id: String,
        to: u64,
        author: String,
    },
    Delete {
        id: String,
    },
    Restore {
        id: String,
    },
    Duplicate {
        src: String,
        new_id: String,
        title: Option<String>,
        author: String,
    },
    Purge {
        id: String,
    },
    /// A JSON record of a small table (sessions, API keys), replaced whole.
    PutRecord {
        kind: Record,
        id: String,
        json: Vec<u8>,
    },
    /// Removes a record (absent: nothing to do).
    DeleteRecord {
        kind: Record,
        id: String,
    },
    /// A panel's last good result (the size bound is checked before it gets here).
    PutLastGood {
        dashboard: String,
        panel: String,
        fingerprint: String,
        run: String,
        at: i64,
    },
}

/// The `meta` key of the stored-bytes count.
pub(super) const STORED_BYTES_KEY: &str = "stored_bytes";

/// Bytes stored in versions and sessions, and the quotas they are held to; bytes of last good
/// results and their budget.
#[derive(Debug, Clone, Copy)]
pub(super) struct Usage {
    pub used: u64,
    pub quotas: StoreQuotas,
    pub last_good: u64,
    pub last_good_budget: u64,
}

impl Usage {
    /// Refuses an op that adds `needed` bytes and frees `freed` when it would pass the limit.
    fn check(&self, needed: u64, freed: u64) -> Result<(), Fail> {
        let limit = self.quotas.max_store_bytes;
        if needed > freed && self.used.saturating_sub(freed).saturating_add(needed) > limit {
            return Err(Fail::Op(StoreError::Full {
                used: self.used,
                needed: needed - freed,
                limit,
            }));
        }
        Ok(())
    }

    fn record(&mut self, needed: u64, freed: u64) {
        self.used = self.used.saturating_sub(freed).saturating_add(needed);
    }
}

/// What a successful op produced.
pub(super) enum Reply {
    /// A dashboard head after the op, plus its state when the caller does not have it.
    Record {
        meta: Meta,
        state: Option<DashboardState>,
    },
    Unit,
}

/// Record fields other than the state.
#[derive(Debug, Clone)]
pub(super) struct Meta {
    pub id: String,
    pub version: u64,
    pub created_at: i64,
    pub updated_at: i64,
    pub deleted: bool,
}

pub(super) struct Request {
    pub op: Op,
    pub reply: oneshot::Sender<Result<Reply, StoreError>>,
}

/// Group-commit tuning.
#[derive(Debug, Clone, Copy)]
pub(super) struct Batching {
    pub max_batch: usize,
    pub window: Duration,
    pub idle: Duration,
}

/// The writer loop; returns when every sender is gone and the queue is drained.
pub(super) fn run(
    db: Arc<Database>,
    rx: Receiver<Request>,
    cfg: Batching,
    counters: Arc<Counters>,
    mut usage: Usage,
) {
    let max = cfg.max_batch.max(1);
    while let Ok(first) = rx.recv() {
        let mut batch = Vec::with_capacity(max.min(64));
        batch.push(first);
        // Collect until the batch is full, the window since the first request has passed, or
        // the queue has been idle for `idle` (every ready client is probably in).
        let deadline = Instant::now() + cfg.window;
        while batch.len() < max {
            let left = deadline.saturating_duration_since(Instant::now()).min(cfg.idle);
            let next = if left.is_zero() {
                rx.try_recv().map_err(|e| matches!(e, TryRecvError::Disconnected))
            } else {
                rx.recv_timeout(left).map_err(|e| matches!(e, RecvTimeoutError::Disconnected))
            };
            match next {
                Ok(r) => batch.push(r),
                // Empty / timed out, or disconnected (then the outer recv ends the loop once the
                // queue is drained).
                Err(_) => break,
            }
        }
        run_batch(&db, batch, &counters, &mut usage);
    }
}

fn run_batch(db: &Database, batch: Vec<Request>, counters: &Counters, usage: &mut Usage) {
    let n = batch.len();
    let (ops, replies): (Vec<Op>, Vec<_>) = batch.into_iter().map(|r| (r.op, r.reply)).unzip();
    let outcome = apply_and_commit(db, &ops, counters, *usage);
    counters.ops.fetch_add(n as u64, Ordering::Relaxed);
    counters.largest_batch.fetch_max(n as u64, Ordering::Relaxed);
    match outcome {
        Ok((results, after)) => {
            // Only a committed batch moves the count (an aborted one wrote nothing).
            *usage = after;
            counters.stored_bytes.store(after.used, Ordering::Relaxed);
            counters.last_good_bytes.store(after.last_good, Ordering::Relaxed);
            for (reply, res) in replies.into_iter().zip(results) {
                // The caller may have gone away (cancelled future); its write is still durable.
                let _ = reply.send(res);
            }
        }
        Err(msg) => {
            counters.failed_batches.fetch_add(1, Ordering::Relaxed);
            tracing::error!(batch = n, "store batch failed: {msg}");
            for reply in replies {
                let _ = reply.send(Err(StoreError::Storage(msg.clone())));
            }
        }
    }
}

/// The table of a [`Record`] kind, borrowed as a field (not through `&mut self`) so the
/// op can still reach `t.usage`. The tables are in [`Record::ALL`]'s order, which is the
/// declaration order.
macro_rules! record_table {
    ($t:expr, $kind:expr) => {
        &mut $t.records[*$kind as usize]
    };
}

struct Tables<'t> {
    heads: Table<'t, &'static str, &'static [u8]>,
    versions: Table<'t, &'static [u8], &'static [u8]>,
    /// One table per [`Record`] kind, in the order of [`Record::ALL`].
    records: Vec<Table<'t, &'static str, &'static [u8]>>,
    last_good: Table<'t, &'static [u8], &'static [u8]>,
    last_good_by_at: Table<'t, &'static [u8], u64>,
    usage: Usage,
}

type OpResult = Result<Reply, StoreError>;

/// Why an op did not apply.
enum Fail {
    /// The engine failed: abort the whole batch.
    Engine(String),
    /// This op's answer (conflict, not found, corrupt record...); it wrote nothing.
    Op(StoreError),
}

impl From<StoreError> for Fail {
    fn from(e: StoreError) -> Self {
        Self::Op(e)
    }
}

fn engine(ctx: impl std::fmt::Display, e: impl std::fmt::Display) -> Fail {
    Fail::Engine(format!("{ctx}: {e}"))
}

fn corrupt(ctx: impl std::fmt::Display, e: impl std::fmt::Display) -> Fail {
    Fail::Op(StoreError::Damaged(format!("{ctx}: {e}")))
}

fn apply_and_commit(
    db: &Database,
    ops: &[Op],
    counters: &Counters,
    usage: Usage,
) -> Result<(Vec<OpResult>, Usage), String> {
    let mut txn = db.begin_write().map_err(|e| format!("begin write transaction: {e}"))?;
    txn.set_durability(Durability::Immediate).map_err(|e| format!("set durability: {e}"))?;
    let mut results = Vec::with_capacity(ops.len());
    let mut wrote = false;
    let after;
    {
        let mut t = Tables {
            heads: txn.open_table(DASHBOARDS).map_err(|e| format!("open dashboards: {e}"))?,
            versions: txn.open_table(VERSIONS).map_err(|e| format!("open versions: {e}"))?,
            records: Record::ALL
                .iter()
                .map(|kind| {
                    txn.open_table(keys::table_of(*kind))
                        .map_err(|e| format!("open the {} table: {e}", kind.name()))
                })
                .collect::<Result<_, _>>()?,
            last_good: txn.open_table(LAST_GOOD).map_err(|e| format!("open last_good: {e}"))?,
            last_good_by_at: txn
                .open_table(LAST_GOOD_BY_AT)
                .map_err(|e| format!("open last_good_by_at: {e}"))?,
            usage,
        };
        let now = super::now_ms();
        for op in ops {
            match apply(&mut t, op, now) {
                Ok(r) => {
                    wrote = true;
                    results.push(Ok(r));
                }
                Err(Fail::Op(e)) => results.push(Err(e)),
                Err(Fail::Engine(msg)) => return Err(msg),
            }
        }
        after = t.usage;
        if after.used != usage.used {
            let mut meta = txn.open_table(META).map_err(|e| format!("open meta: {e}"))?;
            meta.insert(STORED_BYTES_KEY, after.used.to_be_bytes().as_slice())
                .map_err(|e| format!("write the stored-bytes count: {e}"))?;
        }
    }
    if wrote {
        txn.commit().map_err(|e| format!("commit: {e}"))?;
        counters.commits.fetch_add(1, Ordering::Relaxed);
    } else {
        // Nothing to make durable (every op was a conflict / not found): skip the fsync.
        txn.abort().map_err(|e| format!("abort: {e}"))?;
    }
    Ok((results, after))
}

fn get_head(t: &Tables<'_>, id: &str) -> Result<Option<Head>, Fail> {
    if id.len() > keys::MAX_ID_LEN {
        return Ok(None);
    }
    match t.heads.get(id).map_err(|e| engine(format!("read head of `{id}`"), e))? {
        None => Ok(None),
        Some(g) => decode_head(g.value())
            .map(Some)
            .map_err(|e| corrupt(format!("dashboard `{id}`: corrupt head"), e)),
    }
}

/// The head of an existing dashboard.
fn existing(t: &Tables<'_>, id: &str) -> Result<Head, Fail> {
    get_head(t, id)?.ok_or_else(|| Fail::Op(StoreError::NotFound(id.to_owned())))
}

/// The head of an existing, not deleted dashboard.
fn live(t: &Tables<'_>, id: &str) -> Result<Head, Fail> {
    let head = existing(t, id)?;
    if head.deleted {
        return Err(Fail::Op(StoreError::Deleted(id.to_owned())));
    }
    Ok(head)
}

/// Reads a version value (owned, since the table is written next).
fn get_version_bytes(t: &Tables<'_>, id: &str, version: u64) -> Result<Option<Vec<u8>>, Fail> {
    Ok(t.versions
        .get(version_key(id, version).as_slice())
        .map_err(|e| engine(format!("read `{id}` version {version}"), e))?
        .map(|g| g.value().to_vec()))
}

/// Writes `head`'s version and the head, dropping the versions that fall out of
/// `versions_kept`; refused with `Full` (nothing written) past the store's limit.
fn put(
    t: &mut Tables<'_>,
    id: &str,
    head: &Head,
    vh: &VersionHeader<'_>,
    state: &[u8],
) -> Result<(), Fail> {
    let value = encode_version(vh, state);
    let kept = t.usage.quotas.versions_kept.max(1);
    let dropped = match head.version.checked_sub(kept) {
        Some(last) if last > 0 => version_range(t, id, last)?,
        _ => Vec::new(),
    };
    let freed = dropped.iter().map(|(_, len)| len).sum();
    let needed = value.len() as u64;
    t.usage.check(needed, freed)?;
    for (key, _) in &dropped {
        t.versions
            .remove(key.as_slice())
            .map_err(|e| engine(format!("drop a version of `{id}`"), e))?;
    }
    t.versions
        .insert(version_key(id, head.version).as_slice(), value.as_slice())
        .map_err(|e| engine(format!("write `{id}` version {}", head.version), e))?;
    t.usage.record(needed, freed);
    put_head(t, id, head)
}

/// Keys and value sizes of `id`'s versions up to `last`, oldest first.
fn version_range(t: &Tables<'_>, id: &str, last: u64) -> Result<Vec<(Vec<u8>, u64)>, Fail> {
    let (lo, hi) = (version_key(id, 0), version_key(id, last));
    let range = t
        .versions
        .range(lo.as_slice()..=hi.as_slice())
        .map_err(|e| engine(format!("scan versions of `{id}`"), e))?;
    let mut out = Vec::new();
    for item in range {
        let (k, v) = item.map_err(|e| engine(format!("scan versions of `{id}`"), e))?;
        out.push((k.value().to_vec(), v.value().len() as u64));
    }
    Ok(out)
}

fn put_head(t: &mut Tables<'_>, id: &str, head: &Head) -> Result<(), Fail> {
    t.heads
        .insert(id, encode_head(head).as_slice())
        .map_err(|e| engine(format!("write head of `{id}`"), e))?;
    Ok(())
}

fn meta(id: &str, h: &Head) -> Meta {
    Meta {
        id: id.to_owned(),
        version: h.version,
        created_at: h.created_at,
        updated_at: h.updated_at,
        deleted: h.deleted,
    }
}

/// A stored version, checked: header decodes and the state JSON parses.
fn load_version(t: &Tables<'_>, id: &str, version: u64) -> Result<(Vec<u8>, DashboardState), Fail> {
    let Some(bytes) = get_version_bytes(t, id, version)? else {
        return Err(Fail::Op(StoreError::VersionNotFound { id: id.to_owned(), version }));
    };
    let (_, json) = decode_version(&bytes)
        .map_err(|e| corrupt(format!("dashboard `{id}` version {version}"), e))?;
    let state = super::parse_state(id, version, json)?;
    Ok((bytes, state))
}

/// The state of the head version.
fn head_state(t: &Tables<'_>, id: &str, h: &Head) -> Result<DashboardState, Fail> {
    match load_version(t, id, h.version) {
        Err(Fail::Op(StoreError::VersionNotFound { .. })) => Err(corrupt(
            format!("dashboard `{id}`"),
            format!("head version {} is missing", h.version),
        )),
        other => other.map(|(_, s)| s),
    }
}

/// Applies one op; every check runs before the op's first write.
fn apply(t: &mut Tables<'_>, op: &Op, now: i64) -> Result<Reply, Fail> {
    match op {
        Op::Create { id, title, panels, state, note, author } => {
            let vh = VersionHeader { created_at: now, panels: *panels, title, note, author };
            create(t, id, &vh, state)
        }
        Op::Save { id, base, title, panels, state, note, author } => {
            let head = live(t, id)?;
            if head.version != *base {
                return Err(Fail::Op(StoreError::Conflict {
                    expected: *base,
                    actual: head.version,
                }));
            }
            let new = Head {
                version: head.version + 1,
                updated_at: now,
                panels: *panels,
                title: title.clone(),
                ..head
            };
            let vh = VersionHeader { created_at: now, panels: *panels, title, note, author };
            put(t, id, &new, &vh, state)?;
            Ok(Reply::Record { meta: meta(id, &new), state: None })
        }
        Op::Revert { id, to, author } => {
            let head = live(t, id)?;
            let (old, state) = load_version(t, id, *to)?;
            let (oh, json) = decode_version(&old)
                .map_err(|e| corrupt(format!("dashboard `{id}` version {to}"), e))?;
            let note = format!("revert to {to}");
            let new = Head {
                version: head.version + 1,
                updated_at: now,
                panels: oh.panels,
                title: oh.title.to_owned(),
                ..head
            };
            let vh = VersionHeader {
                created_at: now,
                panels: oh.panels,
                title: oh.title,
                note: &note,
                author,
            };
            put(t, id, &new, &vh, json)?;
            Ok(Reply::Record { meta: meta(id, &new), state: Some(state) })
        }
        Op::Delete { id } => {
            let mut head = existing(t, id)?;
            if !head.deleted {
                head.deleted = true;
                put_head(t, id, &head)?;
            }
            Ok(Reply::Unit)
        }
        Op::Restore { id } => {
            let mut head = existing(t, id)?;
            let state = head_state(t, id, &head)?;
            if head.deleted {
                head.deleted = false;
                put_head(t, id, &head)?;
            }
            Ok(Reply::Record { meta: meta(id, &head), state: Some(state) })
        }
        Op::Duplicate { src, new_id, title, author } => {
            let head = live(t, src)?;
            let mut state = head_state(t, src, &head)?;
            if let Some(title) = title {
                state.title.clone_from(title);
            }
            let json = serde_json::to_vec(&state)
                .map_err(|e| Fail::Op(super::storage("serialize dashboard state", e)))?;
            let note = format!("duplicate of {src}");
            let panels = u32::try_from(state.panels.len()).unwrap_or(u32::MAX);
            let vh =
                VersionHeader { created_at: now, panels, title: &state.title, note: &note, author };
            match create(t, new_id, &vh, &json)? {
                Reply::Record { meta, .. } => Ok(Reply::Record { meta, state: Some(state) }),
                Reply::Unit => Ok(Reply::Unit),
            }
        }
        Op::Purge { id } => {
            let head = existing(t, id)?;
            if !head.deleted {
                return Err(Fail::Op(StoreError::NotDeleted(id.clone())));
            }
            let all = version_range(t, id, u64::MAX)?;
            for (key, _) in &all {
                t.versions
                    .remove(key.as_slice())
                    .map_err(|e| engine(format!("purge `{id}`"), e))?;
            }
            t.heads.remove(id.as_str()).map_err(|e| engine(format!("purge `{id}`"), e))?;
            t.usage.record(0, all.iter().map(|(_, len)| len).sum());
            for (key, _) in last_good_range(t, &keys::last_good_dashboard_prefix(id))? {
                remove_last_good(t, &key)?;
            }
            Ok(Reply::Unit)
        }
        Op::PutRecord { kind, id, json } => {
            let table = record_table!(t, kind);
            let what = kind.name();
            let old = table
                .get(id.as_str())
                .map_err(|e| engine(format!("read {what} `{id}`"), e))?
                .map_or(0, |g| g.value().len() as u64);
            let needed = json.len() as u64;
            t.usage.check(needed, old)?;
            table
                .insert(id.as_str(), json.as_slice())
                .map_err(|e| engine(format!("write {what} `{id}`"), e))?;
            t.usage.record(needed, old);
            Ok(Reply::Unit)
        }
        Op::DeleteRecord { kind, id } => {
            let what = kind.name();
            let old = record_table!(t, kind)
                .remove(id.as_str())
                .map_err(|e| engine(format!("delete {what} `{id}`"), e))?
                .map_or(0, |g| g.value().len() as u64);
            t.usage.record(0, old);
            Ok(Reply::Unit)
        }
        Op::PutLastGood { dashboard, panel, fingerprint, run, at } => {
            put_last_good(t, dashboard, panel, fingerprint, run.as_bytes(), *at)?;
            Ok(Reply::Unit)
        }
    }
}

/// Keeps a last good result: ignored for a dashboard that is not there or when the entry kept
/// for the key is newer; then the panel's entries past [`LAST_GOOD_PER_PANEL`] and, past the
/// budget, the oldest entries of all are dropped.
fn put_last_good(
    t: &mut Tables<'_>,
    dashboard: &str,
    panel: &str,
    fingerprint: &str,
    run: &[u8],
    at: i64,
) -> Result<(), Fail> {
    if get_head(t, dashboard)?.is_none() {
        return Ok(());
    }
    let key = last_good_key(dashboard, panel, fingerprint);
    let kept = t
        .last_good
        .get(key.as_slice())
        .map_err(|e| engine("read a last good result", e))?
        .map(|g| verified_at(g.value()));
    if let Some(kept) = kept {
        if kept.is_some_and(|kept| kept > at) {
            return Ok(());
        }
        remove_last_good(t, &key)?;
    }
    let size = run.len() as u64;
    t.last_good
        .insert(key.as_slice(), encode_last_good(at, run).as_slice())
        .map_err(|e| engine("write a last good result", e))?;
    t.last_good_by_at
        .insert(last_good_age_key(at, &key).as_slice(), size)
        .map_err(|e| engine("write a last good result", e))?;
    t.usage.last_good = t.usage.last_good.saturating_add(size);

    let mut panel_entries = last_good_range(t, &keys::last_good_panel_prefix(dashboard, panel))?;
    if panel_entries.len() > LAST_GOOD_PER_PANEL {
        // Oldest first; an entry whose time cannot be read goes first.
        panel_entries.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
        let extra = panel_entries.len() - LAST_GOOD_PER_PANEL;
        for (key, _) in panel_entries.iter().take(extra) {
            remove_last_good(t, key)?;
        }
    }
    while t.usage.last_good > t.usage.last_good_budget {
        let Some((age_key, size)) = t
            .last_good_by_at
            .pop_first()
            .map_err(|e| engine("drop the oldest last good result", e))?
            .map(|(k, v)| (k.value().to_vec(), v.value()))
        else {
            // The count says more than the index holds: the index is the truth.
            t.usage.last_good = 0;
            break;
        };
        // (An index key too short to name an entry is only dropped: this op has written
        // already, so it may not fail alone now.)
        if let Ok(key) = keys::last_good_key_of_age_key(&age_key) {
            t.last_good.remove(key).map_err(|e| engine("drop the oldest last good result", e))?;
        }
        t.usage.last_good = t.usage.last_good.saturating_sub(size);
    }
    Ok(())
}

/// The time of a last good value that passes its checksum; `None` for a damaged one, which
/// any put replaces and eviction drops first.
fn verified_at(value: &[u8]) -> Option<i64> {
    keys::decode_last_good(value).ok().map(|(at, _)| at)
}

/// A last good entry's key and its time (`None` when the value is damaged).
type Entry = (Vec<u8>, Option<i64>);

/// The last good entries whose keys start with `prefix`.
fn last_good_range(t: &Tables<'_>, prefix: &[u8]) -> Result<Vec<Entry>, Fail> {
    let range = t.last_good.range(prefix..).map_err(|e| engine("scan last good results", e))?;
    let mut out = Vec::new();
    for item in range {
        let (k, v) = item.map_err(|e| engine("scan last good results", e))?;
        if !k.value().starts_with(prefix) {
            break;
        }
        out.push((k.value().to_vec(), verified_at(v.value())));
    }
    Ok(out)
}

/// Removes a last good entry and its index entry, and takes its bytes off the count. The index
/// entry is found by the time in the value, or (a value damaged there) by a scan of the index.
fn remove_last_good(t: &mut Tables<'_>, key: &[u8]) -> Result<(), Fail> {
    let at = t
        .last_good
        .remove(key)
        .map_err(|e| engine("remove a last good result", e))?
        .and_then(|g| keys::last_good_at(g.value()));
    let mut size = match at {
        Some(at) => t
            .last_good_by_at
            .remove(last_good_age_key(at, key).as_slice())
            .map_err(|e| engine("remove a last good result", e))?
            .map(|g| g.value()),
        None => None,
    };
    if size.is_none() {
        let mut found = None;
        for item in t.last_good_by_at.iter().map_err(|e| engine("scan the last good index", e))? {
            let (k, v) = item.map_err(|e| engine("scan the last good index", e))?;
            if keys::last_good_key_of_age_key(k.value()).is_ok_and(|k| k == key) {
                found = Some((k.value().to_vec(), v.value()));
                break;
            }
        }
        if let Some((age_key, len)) = found {
            t.last_good_by_at
                .remove(age_key.as_slice())
                .map_err(|e| engine("remove a last good result", e))?;
            size = Some(len);
        }
    }
    t.usage.last_good = t.usage.last_good.saturating_sub(size.unwrap_or(0));
    Ok(())
}

/// Version 1 of a new dashboard `id`, described by `vh`.
fn create(
    t: &mut Tables<'_>,
    id: &str,
    vh: &VersionHeader<'_>,
    state: &[u8],
) -> Result<Reply, Fail> {
    super::check_id(id).map_err(Fail::Op)?;
    if let Some(head) = get_head(t, id)? {
        return Err(Fail::Op(StoreError::Conflict { expected: 0, actual: head.version }));
    }
    let head = Head {
        version: 1,
        created_at: vh.created_at,
        updated_at: vh.created_at,
        deleted: false,
        panels: vh.panels,
        title: vh.title.to_owned(),
    };
    put(t, id, &head, vh, state)?;
    Ok(Reply::Record { meta: meta(id, &head), state: None })
}
