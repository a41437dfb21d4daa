//! The PostgreSQL engine, shared by several nodes (`BOARDSMITH_DATABASE_URL`).
//!
//! The database enforces what the embedded engine's one writer enforces there: a save is one
//! conditional statement (`UPDATE ... WHERE version = base`, the new version row and the
//! pruning of old ones in the same statement), so two nodes saving on the same base cannot
//! both win, whatever their memory says. Every committed dashboard change also sends a small
//! notice through `pg_notify` inside its own statement, so it goes out exactly when the write
//! commits (and never for a write that rolled back); `listen` turns other nodes' notices into
//! [`Notice`]s. A dashboard's cluster-wide writer lock is a session-level advisory lock held on
//! a connection of a pool of its own ([`ClusterLock`]), so lock holders can never starve the
//! queries they need of connections.
//!
//! Knows nothing of live updates or HTTP: it only stores and tells.

mod bus;
mod chats;
mod kb;
mod last_good;
mod listen;
mod runs;
mod schema;
mod tls;
mod uploads;

use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod};
use serde_json::{Value, json};
use tokio::sync::{broadcast, oneshot};
use tokio_postgres_rustls::MakeRustlsConnect;
use tokio_util::sync::CancellationToken;

use super::{
    ChangeKind, Counters, DashboardListItem, DashboardRecord, Record, SharedOptions, StoreError,
    StoreOptions, StoreQuotas, StoreStats, VersionInfo, author_json, author_of, new_dashboard_id,
    now_ms, parse_state, state_json,
};
use base::principal::Author;
use dashboard::DashboardState;

/// The channel every node listens on.
const CHANNEL: &str = "boardsmith";

/// Connections for queries, per node.
const QUERY_CONNECTIONS: usize = 16;
/// Connections holding dashboard writer locks, per node (one per dashboard being written).
const LOCK_CONNECTIONS: usize = 32;
/// Notices a slow follower may fall behind by before it is told it lagged (and resyncs).
const NOTICE_BACKLOG: usize = 1024;

/// Something another node committed, as its notice said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// A dashboard changed.
    Dashboard {
        /// The dashboard.
        id: String,
        /// What happened to it.
        kind: ChangeKind,
    },
    /// A record of this kind was written or removed (API keys, admin definitions, ...).
    Record(Record),
    /// A node that refreshes this dashboard shared a panel's new result: carried in `data`
    /// (its version and JSON) when it came over NATS, else
    /// [`crate::Store::panel_result`] reads it.
    PanelResult {
        /// The dashboard.
        id: String,
        /// The panel.
        panel: String,
        /// The result itself, when the notice carries it.
        data: Option<(u64, String)>,
    },
    /// A run's owner wrote its events up to `seq` ([`crate::Store::run_events`]).
    RunEvents {
        /// The run.
        run_id: String,
        /// Its last stored event.
        seq: u64,
    },
    /// Another node filed a request for a run this node owns
    /// ([`crate::Store::request_for_me`]).
    RunRequest(i64),
    /// Another node changed a knowledge base or its documents.
    Knowledge,
    /// A request this node filed was answered ([`crate::Store::answer_of`]).
    RunAnswer(i64),
    /// A record of this kind was written under `id`: for kinds other nodes act on one by one
    /// (an alert notification to push to their sockets).
    Written {
        /// The kind.
        kind: Record,
        /// The record's id.
        id: String,
    },
    /// Notices may have been missed (the listening connection was lost and is back): re-read
    /// whatever is followed.
    Resync,
}

/// An error of the driver as a [`StoreError`], with what was being done and every cause
/// (the pool's errors hide the driver's, which hide TLS's: "invalid peer certificate").
fn pg<E: std::error::Error>(ctx: impl std::fmt::Display) -> impl FnOnce(E) -> StoreError {
    move |e| {
        let mut message = format!("{ctx}: {e}");
        let mut cause = e.source();
        while let Some(c) = cause {
            let text = c.to_string();
            if !message.contains(&text) {
                message.push_str(": ");
                message.push_str(&text);
            }
            cause = c.source();
        }
        StoreError::Storage(message)
    }
}

/// The PostgreSQL engine.
pub(super) struct Postgres {
    queries: Pool,
    locks: Pool,
    /// This node's id in the notices it sends, so its listener can skip its own.
    node: Arc<str>,
    notices: broadcast::Sender<Notice>,
    stop: CancellationToken,
    closed: AtomicBool,
    counters: Counters,
    quotas: StoreQuotas,
    /// The largest last good result kept, and the bytes all of them may hold.
    last_good_entry_bytes: u64,
    last_good_bytes: u64,
    /// NATS, when panel results travel there (`BOARDSMITH_NATS_URL`).
    bus: Option<bus::Bus>,
}

impl std::fmt::Debug for Postgres {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Postgres").field("node", &self.node).finish_non_exhaustive()
    }
}

fn pool(
    config: &tokio_postgres::Config,
    tls: &MakeRustlsConnect,
    size: usize,
) -> Result<Pool, StoreError> {
    let manager = Manager::from_config(
        config.clone(),
        tls.clone(),
        ManagerConfig { recycling_method: RecyclingMethod::Fast },
    );
    Pool::builder(manager)
        .max_size(size)
        .runtime(deadpool_postgres::Runtime::Tokio1)
        .build()
        .map_err(pg("build the connection pool"))
}

/// The advisory-lock key of a dashboard (a collision only serializes two dashboards' writes).
fn lock_key(id: &str) -> i64 {
    i64::from_ne_bytes(
        xxhash_rust::xxh3::xxh3_64(format!("dashboard:{id}").as_bytes()).to_ne_bytes(),
    )
}

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn to_u64(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

impl Postgres {
    pub(super) async fn connect(
        url: &str,
        options: StoreOptions,
        shared: &SharedOptions,
    ) -> Result<Self, StoreError> {
        let mut config = tokio_postgres::Config::from_str(url)
            .map_err(pg("BOARDSMITH_DATABASE_URL is not a PostgreSQL connection string"))?;
        if config.get_application_name().is_none() {
            // Names the nodes' sessions in pg_stat_activity.
            config.application_name("boardsmith");
        }
        let tls = tls::connector(shared.database_ca.as_deref())?;
        if shared.database_ca.is_none()
            && config.get_ssl_mode() == tokio_postgres::config::SslMode::Require
        {
            tracing::warn!(
                "TLS to PostgreSQL encrypts but does not check the server's certificate: set \
                 BOARDSMITH_DATABASE_CA to the CA that signed it"
            );
        }
        let queries = pool(&config, &tls, QUERY_CONNECTIONS)?;
        let locks = pool(&config, &tls, LOCK_CONNECTIONS)?;
        {
            let mut client = queries.get().await.map_err(pg("connect to PostgreSQL"))?;
            let found = schema::migrate(&mut client).await?;
            tracing::info!(found, now = schema::latest(), "PostgreSQL store ready");
        }
        let node: Arc<str> = uuid::Uuid::now_v7().simple().to_string().into();
        let (notices, _) = broadcast::channel(NOTICE_BACKLOG);
        let stop = CancellationToken::new();
        tokio::spawn(listen::run(config, tls, node.clone(), notices.clone(), stop.clone()));
        let bus = match shared.nats_url.as_deref() {
            Some(url) => {
                Some(bus::Bus::connect(url, node.clone(), notices.clone(), stop.clone()).await?)
            }
            None => None,
        };
        Ok(Self {
            queries,
            locks,
            node,
            notices,
            stop,
            closed: AtomicBool::new(false),
            counters: Counters::default(),
            quotas: options.quotas,
            last_good_entry_bytes: options.last_good_entry_bytes,
            last_good_bytes: options.last_good_bytes,
            bus,
        })
    }

    pub(super) fn notices(&self) -> broadcast::Receiver<Notice> {
        self.notices.subscribe()
    }

    async fn client(&self) -> Result<Object, StoreError> {
        if self.closed.load(Ordering::Acquire) {
            return Err(StoreError::Closed);
        }
        self.queries.get().await.map_err(pg("get a PostgreSQL connection"))
    }

    fn committed(&self) {
        self.counters.commits.fetch_add(1, Ordering::Relaxed);
        self.counters.ops.fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn stats(&self) -> StoreStats {
        let c = &self.counters;
        StoreStats {
            commits: c.commits.load(Ordering::Relaxed),
            ops: c.ops.load(Ordering::Relaxed),
            largest_batch: u64::from(c.commits.load(Ordering::Relaxed) > 0),
            failed_batches: c.failed_batches.load(Ordering::Relaxed),
            stored_bytes: 0,
            last_good_bytes: 0,
        }
    }

    /// The notice of a dashboard change, as other nodes' listeners parse it.
    fn notice(&self, id: &str, kind: ChangeKind) -> String {
        let (kind, version) = kind.wire();
        json!({ "node": &*self.node, "id": id, "kind": kind, "version": version }).to_string()
    }

    pub(super) async fn lock_dashboard(&self, id: &str) -> Result<ClusterLock, StoreError> {
        if self.closed.load(Ordering::Acquire) {
            return Err(StoreError::Closed);
        }
        let (pool, key) = (self.locks.clone(), lock_key(id));
        let (tx, rx) = oneshot::channel();
        // Taken in a task of its own: a caller that stops waiting must not leave a connection
        // in the pool that gets the lock later. If nobody takes it, it is released at once.
        tokio::spawn(async move {
            let lock = async {
                let client = pool.get().await.map_err(pg("get a lock connection"))?;
                let lock = ClusterLock { client: Some(client), key };
                if let Some(c) = &lock.client {
                    c.execute("SELECT pg_advisory_lock($1)", &[&key])
                        .await
                        .map_err(pg("take the dashboard's writer lock"))?;
                }
                Ok(lock)
            };
            let _ = tx.send(lock.await);
        });
        rx.await.map_err(|_| StoreError::Storage("the lock task stopped".into()))?
    }

    /// Answers when the database does, within 2 s.
    pub(super) async fn ping(&self) -> Result<(), StoreError> {
        let ping = async {
            let c = self.client().await?;
            c.query_one("SELECT 1", &[]).await.map_err(pg("ping PostgreSQL"))?;
            Ok(())
        };
        tokio::time::timeout(std::time::Duration::from_secs(2), ping).await.unwrap_or_else(
            |_| Err(StoreError::Storage("PostgreSQL did not answer within 2 s".into())),
        )?;
        if self.bus.as_ref().is_some_and(|b| !b.connected()) {
            return Err(StoreError::Storage("NATS is not connected".into()));
        }
        Ok(())
    }

    pub(super) async fn is_empty(&self) -> Result<bool, StoreError> {
        let c = self.client().await?;
        let row = c
            .query_one("SELECT NOT EXISTS (SELECT 1 FROM dashboards)", &[])
            .await
            .map_err(pg("count dashboards"))?;
        Ok(row.get(0))
    }

    pub(super) async fn create(
        &self,
        id: Option<&str>,
        state: DashboardState,
        note: &str,
        by: &Author,
    ) -> Result<DashboardRecord, StoreError> {
        let (json, title, panels) = state_json(&state, &self.quotas)?;
        let id = id.map_or_else(new_dashboard_id, str::to_owned);
        super::check_id(&id)?;
        let c = self.client().await?;
        let now = now_ms();
        self.insert(&c, &id, &json, &title, panels, (note, &author_json(by)), now).await?;
        self.committed();
        Ok(DashboardRecord {
            id,
            version: 1,
            state,
            created_at: now,
            updated_at: now,
            deleted: false,
        })
    }

    /// Inserts a new dashboard at version 1 with its notice, in one statement.
    #[allow(clippy::too_many_arguments)]
    async fn insert(
        &self,
        c: &impl deadpool_postgres::GenericClient,
        id: &str,
        json: &[u8],
        title: &str,
        panels: u32,
        (note, author): (&str, &str),
        now: i64,
    ) -> Result<(), StoreError> {
        let stmt = c
            .prepare_cached(
                "WITH head AS (
                    INSERT INTO dashboards (id, version, title, panels, created_at, updated_at)
                    VALUES ($1, 1, $2, $3, $4, $4) ON CONFLICT (id) DO NOTHING RETURNING id
                 ), v AS (
                    INSERT INTO dashboard_versions
                        (dashboard_id, version, created_at, title, panels, note, state, author)
                    SELECT id, 1, $4, $2, $3, $5, $6, $9 FROM head
                 )
                 SELECT pg_notify($7, $8)::text FROM head",
            )
            .await
            .map_err(pg("prepare create"))?;
        let state = std::str::from_utf8(json).map_err(pg("state JSON"))?;
        let panels = i32::try_from(panels).unwrap_or(i32::MAX);
        let notice = self.notice(id, ChangeKind::Created(1));
        let rows = c
            .query(&stmt, &[&id, &title, &panels, &now, &note, &state, &CHANNEL, &notice, &author])
            .await
            .map_err(pg(format!("create `{id}`")))?;
        if rows.is_empty() {
            let actual = self.head(c, id).await?.map_or(0, |h| h.version);
            return Err(StoreError::Conflict { expected: 0, actual });
        }
        Ok(())
    }

    async fn head(
        &self,
        c: &impl deadpool_postgres::GenericClient,
        id: &str,
    ) -> Result<Option<Head>, StoreError> {
        let row = c
            .query_opt("SELECT version, deleted FROM dashboards WHERE id = $1", &[&id])
            .await
            .map_err(pg(format!("read the head of `{id}`")))?;
        Ok(row.map(|r| Head { version: to_u64(r.get(0)), deleted: r.get(1) }))
    }

    /// The conditional save: the new version row, the head moved, the oldest versions past
    /// the quota pruned and the notice sent, in one statement; no row back means the base was
    /// not the head (or the dashboard is gone or deleted).
    #[allow(clippy::too_many_arguments)]
    async fn save_on(
        &self,
        c: &impl deadpool_postgres::GenericClient,
        id: &str,
        base: u64,
        json: &[u8],
        title: &str,
        panels: u32,
        (note, author): (&str, &str),
    ) -> Result<(i64, i64), StoreError> {
        let stmt = c
            .prepare_cached(
                "WITH head AS (
                    UPDATE dashboards SET version = $2 + 1, title = $3, panels = $4, updated_at = $5
                    WHERE id = $1 AND version = $2 AND NOT deleted
                    RETURNING id, version, created_at
                 ), v AS (
                    INSERT INTO dashboard_versions
                        (dashboard_id, version, created_at, title, panels, note, state, author)
                    SELECT id, version, $5, $3, $4, $6, $7, $11 FROM head
                 ), pruned AS (
                    DELETE FROM dashboard_versions
                    WHERE dashboard_id = $1 AND version <= $2 + 1 - $8
                      AND EXISTS (SELECT 1 FROM head)
                 )
                 SELECT created_at, pg_notify($9, $10)::text FROM head",
            )
            .await
            .map_err(pg("prepare save"))?;
        let state = std::str::from_utf8(json).map_err(pg("state JSON"))?;
        let panels = i32::try_from(panels).unwrap_or(i32::MAX);
        let version = base + 1;
        let notice = self.notice(id, ChangeKind::Saved(version));
        let now = now_ms();
        let kept = to_i64(self.quotas.versions_kept);
        let rows = c
            .query(
                &stmt,
                &[
                    &id,
                    &to_i64(base),
                    &title,
                    &panels,
                    &now,
                    &note,
                    &state,
                    &kept,
                    &CHANNEL,
                    &notice,
                    &author,
                ],
            )
            .await
            .map_err(pg(format!("save `{id}`")))?;
        match rows.first() {
            Some(row) => Ok((row.get(0), now)),
            None => Err(match self.head(c, id).await? {
                None => StoreError::NotFound(id.to_owned()),
                Some(h) if h.deleted => StoreError::Deleted(id.to_owned()),
                Some(h) => StoreError::Conflict { expected: base, actual: h.version },
            }),
        }
    }

    pub(super) async fn save(
        &self,
        id: &str,
        base_version: u64,
        state: DashboardState,
        note: &str,
        by: &Author,
    ) -> Result<DashboardRecord, StoreError> {
        let (json, title, panels) = state_json(&state, &self.quotas)?;
        let c = self.client().await?;
        let author = author_json(by);
        let (created_at, now) =
            self.save_on(&c, id, base_version, &json, &title, panels, (note, &author)).await?;
        self.committed();
        Ok(DashboardRecord {
            id: id.to_owned(),
            version: base_version + 1,
            state,
            created_at,
            updated_at: now,
            deleted: false,
        })
    }

    async fn read_record(
        &self,
        id: &str,
        version: Option<u64>,
    ) -> Result<DashboardRecord, StoreError> {
        let c = self.client().await?;
        let stmt = c
            .prepare_cached(
                "SELECT d.version, d.created_at, d.deleted, v.version, v.created_at, v.state
                 FROM dashboards d
                 LEFT JOIN dashboard_versions v
                   ON v.dashboard_id = d.id AND v.version = coalesce($2, d.version)
                 WHERE d.id = $1",
            )
            .await
            .map_err(pg("prepare get"))?;
        let row = c
            .query_opt(&stmt, &[&id, &version.map(to_i64)])
            .await
            .map_err(pg(format!("read `{id}`")))?
            .ok_or_else(|| StoreError::NotFound(id.to_owned()))?;
        let Some(at) = row.get::<_, Option<i64>>(3) else {
            return Err(match version {
                Some(v) => StoreError::VersionNotFound { id: id.to_owned(), version: v },
                None => StoreError::Storage(format!(
                    "dashboard `{id}`: head version {} is missing",
                    to_u64(row.get(0))
                )),
            });
        };
        let at = to_u64(at);
        let text: String = row.get(5);
        Ok(DashboardRecord {
            id: id.to_owned(),
            version: at,
            state: parse_state(id, at, text.as_bytes())?,
            created_at: row.get(1),
            updated_at: row.get(4),
            deleted: row.get(2),
        })
    }

    pub(super) async fn get(&self, id: &str) -> Result<DashboardRecord, StoreError> {
        self.read_record(id, None).await
    }

    pub(super) async fn get_version(
        &self,
        id: &str,
        version: u64,
    ) -> Result<DashboardRecord, StoreError> {
        self.read_record(id, Some(version)).await
    }

    pub(super) async fn versions(&self, id: &str) -> Result<Vec<VersionInfo>, StoreError> {
        let c = self.client().await?;
        if self.head(&c, id).await?.is_none() {
            return Err(StoreError::NotFound(id.to_owned()));
        }
        let rows = c
            .query(
                "SELECT version, created_at, title, panels, note, author FROM dashboard_versions
                 WHERE dashboard_id = $1 ORDER BY version",
                &[&id],
            )
            .await
            .map_err(pg(format!("read the versions of `{id}`")))?;
        Ok(rows
            .iter()
            .map(|r| VersionInfo {
                version: to_u64(r.get(0)),
                created_at: r.get(1),
                title: r.get(2),
                panels: usize::try_from(r.get::<_, i32>(3)).unwrap_or(0),
                note: r.get(4),
                author: r.get::<_, Option<&str>>(5).and_then(author_of),
            })
            .collect())
    }

    pub(super) async fn list(
        &self,
        include_deleted: bool,
    ) -> Result<Vec<DashboardListItem>, StoreError> {
        let c = self.client().await?;
        let rows = c
            .query(
                "SELECT id, title, version, panels, updated_at, deleted FROM dashboards
                 WHERE $1 OR NOT deleted ORDER BY updated_at DESC, id",
                &[&include_deleted],
            )
            .await
            .map_err(pg("list dashboards"))?;
        Ok(rows
            .iter()
            .map(|r| DashboardListItem {
                id: r.get(0),
                title: r.get(1),
                version: to_u64(r.get(2)),
                panels: usize::try_from(r.get::<_, i32>(3)).unwrap_or(0),
                updated_at: r.get(4),
                deleted: r.get(5),
            })
            .collect())
    }

    pub(super) async fn revert(
        &self,
        id: &str,
        to_version: u64,
        by: &Author,
    ) -> Result<DashboardRecord, StoreError> {
        let mut c = self.client().await?;
        let tx = c.transaction().await.map_err(pg("begin revert"))?;
        let head = tx
            .query_opt("SELECT version, deleted FROM dashboards WHERE id = $1 FOR UPDATE", &[&id])
            .await
            .map_err(pg(format!("lock `{id}`")))?
            .ok_or_else(|| StoreError::NotFound(id.to_owned()))?;
        if head.get::<_, bool>(1) {
            return Err(StoreError::Deleted(id.to_owned()));
        }
        let base = to_u64(head.get(0));
        let text: String = tx
            .query_opt(
                "SELECT state FROM dashboard_versions WHERE dashboard_id = $1 AND version = $2",
                &[&id, &to_i64(to_version)],
            )
            .await
            .map_err(pg(format!("read `{id}` version {to_version}")))?
            .ok_or_else(|| StoreError::VersionNotFound { id: id.to_owned(), version: to_version })?
            .get(0);
        let state = parse_state(id, to_version, text.as_bytes())?;
        let (json, title, panels) = state_json(&state, &self.quotas)?;
        let (note, author) = (format!("revert to {to_version}"), author_json(by));
        let (created_at, now) =
            self.save_on(&tx, id, base, &json, &title, panels, (&note, &author)).await?;
        tx.commit().await.map_err(pg("commit revert"))?;
        self.committed();
        Ok(DashboardRecord {
            id: id.to_owned(),
            version: base + 1,
            state,
            created_at,
            updated_at: now,
            deleted: false,
        })
    }

    /// Sets the head's `deleted` flag and sends the notice, in one statement.
    async fn flag(&self, id: &str, deleted: bool) -> Result<(), StoreError> {
        let c = self.client().await?;
        let kind = if deleted { ChangeKind::Deleted } else { ChangeKind::Restored };
        let rows = c
            .query(
                "WITH d AS (UPDATE dashboards SET deleted = $2 WHERE id = $1 RETURNING id)
                 SELECT pg_notify($3, $4)::text FROM d",
                &[&id, &deleted, &CHANNEL, &self.notice(id, kind)],
            )
            .await
            .map_err(pg(format!("flag `{id}`")))?;
        if rows.is_empty() {
            return Err(StoreError::NotFound(id.to_owned()));
        }
        self.committed();
        Ok(())
    }

    pub(super) async fn delete(&self, id: &str) -> Result<(), StoreError> {
        self.flag(id, true).await
    }

    pub(super) async fn restore(&self, id: &str) -> Result<DashboardRecord, StoreError> {
        self.flag(id, false).await?;
        self.get(id).await
    }

    pub(super) async fn duplicate(
        &self,
        id: &str,
        title: Option<String>,
        by: &Author,
    ) -> Result<DashboardRecord, StoreError> {
        let src = self.get(id).await?;
        if src.deleted {
            return Err(StoreError::Deleted(id.to_owned()));
        }
        let mut state = src.state;
        if let Some(title) = title {
            state.title = title;
        }
        self.create(Some(&new_dashboard_id()), state, &format!("duplicate of {id}"), by).await
    }

    pub(super) async fn purge(&self, id: &str) -> Result<(), StoreError> {
        let mut c = self.client().await?;
        let tx = c.transaction().await.map_err(pg("begin purge"))?;
        let deleted: bool = tx
            .query_opt("SELECT deleted FROM dashboards WHERE id = $1 FOR UPDATE", &[&id])
            .await
            .map_err(pg(format!("lock `{id}`")))?
            .ok_or_else(|| StoreError::NotFound(id.to_owned()))?
            .get(0);
        if !deleted {
            return Err(StoreError::NotDeleted(id.to_owned()));
        }
        tx.execute("DELETE FROM dashboard_versions WHERE dashboard_id = $1", &[&id])
            .await
            .map_err(pg(format!("purge the versions of `{id}`")))?;
        tx.execute("DELETE FROM dashboards WHERE id = $1", &[&id])
            .await
            .map_err(pg(format!("purge `{id}`")))?;
        tx.execute("DELETE FROM last_good WHERE dashboard_id = $1", &[&id])
            .await
            .map_err(pg(format!("purge the last good results of `{id}`")))?;
        tx.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &self.notice(id, ChangeKind::Deleted)])
            .await
            .map_err(pg("notify"))?;
        tx.commit().await.map_err(pg("commit purge"))?;
        self.committed();
        Ok(())
    }

    /// Writes a dashboard's whole history as it was (version numbers, times, notes), in one
    /// transaction; an id in use is a conflict. No notice: nothing follows a store being filled.
    pub(super) async fn import(&self, h: &super::copy::History) -> Result<(), StoreError> {
        let Some((last, last_state)) = h.versions.last() else {
            return Err(StoreError::Storage(format!("dashboard `{}` has no versions", h.id)));
        };
        let mut c = self.client().await?;
        let tx = c.transaction().await.map_err(pg("begin import"))?;
        let panels = |n: usize| i32::try_from(n).unwrap_or(i32::MAX);
        let inserted = tx
            .execute(
                "INSERT INTO dashboards (id, version, title, panels, created_at, updated_at, deleted)
                 VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING",
                &[
                    &h.id,
                    &to_i64(last.version),
                    &last_state.title,
                    &panels(last.panels),
                    &h.created_at,
                    &last.created_at,
                    &h.deleted,
                ],
            )
            .await
            .map_err(pg(format!("import `{}`", h.id)))?;
        if inserted == 0 {
            return Err(StoreError::Conflict { expected: 0, actual: last.version });
        }
        for (info, state) in &h.versions {
            let json = serde_json::to_string(state).map_err(pg("serialize dashboard state"))?;
            tx.execute(
                "INSERT INTO dashboard_versions
                    (dashboard_id, version, created_at, title, panels, note, state, author)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                &[
                    &h.id,
                    &to_i64(info.version),
                    &info.created_at,
                    &info.title,
                    &panels(info.panels),
                    &info.note,
                    &json,
                    &info.author.as_ref().map(author_json),
                ],
            )
            .await
            .map_err(pg(format!("import `{}` version {}", h.id, info.version)))?;
        }
        tx.commit().await.map_err(pg("commit import"))?;
        self.committed();
        Ok(())
    }

    pub(super) fn node(&self) -> &str {
        &self.node
    }

    /// Claims or renews the refresh lease of each of `ids` for `ttl`: a lease this node holds
    /// is renewed, a free or expired one taken. Answers the ids this node now holds.
    pub(super) async fn claim_refresh(
        &self,
        ids: &[String],
        ttl: std::time::Duration,
    ) -> Result<Vec<String>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let c = self.client().await?;
        let ms = i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX);
        let rows = c
            .query(
                "INSERT INTO refresh_leases (dashboard_id, node, expires_at)
                 SELECT id, $2::text, now() + $3::bigint * interval '1 millisecond'
                 FROM unnest($1::text[]) AS id
                 ON CONFLICT (dashboard_id) DO UPDATE
                    SET node = excluded.node, expires_at = excluded.expires_at
                    WHERE refresh_leases.node = excluded.node OR refresh_leases.expires_at < now()
                 RETURNING dashboard_id",
                &[&ids, &&*self.node, &ms],
            )
            .await
            .map_err(pg("claim refresh leases"))?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    /// Keeps a panel's latest shared result (of `version`) and tells the other nodes.
    pub(super) async fn put_panel_result(
        &self,
        id: &str,
        panel: &str,
        version: u64,
        run: &str,
    ) -> Result<(), StoreError> {
        if let Some(bus) = &self.bus {
            return bus.publish(id, panel, version, run).await;
        }
        let c = self.client().await?;
        let notice = json!({ "node": &*self.node, "id": id, "panel": panel }).to_string();
        c.execute(
            "WITH w AS (
                INSERT INTO panel_results (dashboard_id, panel_id, version, run)
                VALUES ($1, $2, $3, $4)
                ON CONFLICT (dashboard_id, panel_id) DO UPDATE
                    SET version = excluded.version, run = excluded.run
                RETURNING 1
             )
             SELECT pg_notify($5, $6) FROM w",
            &[&id, &panel, &to_i64(version), &run, &CHANNEL, &notice],
        )
        .await
        .map_err(pg(format!("share a result of `{id}`")))?;
        Ok(())
    }

    /// A panel's latest shared result: its version and the run's JSON.
    pub(super) async fn panel_result(
        &self,
        id: &str,
        panel: &str,
    ) -> Result<Option<(u64, String)>, StoreError> {
        let c = self.client().await?;
        let row = c
            .query_opt(
                "SELECT version, run FROM panel_results WHERE dashboard_id = $1 AND panel_id = $2",
                &[&id, &panel],
            )
            .await
            .map_err(pg(format!("read a shared result of `{id}`")))?;
        Ok(row.map(|r| (to_u64(r.get(0)), r.get(1))))
    }

    /// The notice of a record change, for kinds other nodes keep in memory (or act on one by
    /// one, with its id); `None` for kinds they read from the store each time.
    fn record_notice(&self, kind: Record, id: &str) -> Option<String> {
        match kind {
            Record::Notification => {
                Some(json!({ "node": &*self.node, "record": kind.key(), "id": id }).to_string())
            }
            Record::ApiKey
            | Record::Admin
            | Record::Workflow
            | Record::User
            | Record::SignIn
            | Record::Sharing
            | Record::ShareLink => {
                Some(json!({ "node": &*self.node, "record": kind.key() }).to_string())
            }
            Record::Session
            | Record::Usage
            | Record::WorkflowRun
            | Record::Audit
            | Record::ChatMeta
            | Record::Draft
            | Record::Review
            | Record::AlertState
            | Record::Channel
            | Record::Report
            | Record::ReportRun
            | Record::Silence => None,
        }
    }

    pub(super) async fn put_record(
        &self,
        kind: Record,
        id: &str,
        value: &Value,
    ) -> Result<(), StoreError> {
        let text = serde_json::to_string(value).map_err(pg("serialize record"))?;
        let c = self.client().await?;
        let notice = self.record_notice(kind, id);
        c.execute(
            "WITH w AS (
                INSERT INTO records (kind, id, value) VALUES ($1, $2, $3)
                ON CONFLICT (kind, id) DO UPDATE SET value = excluded.value RETURNING 1
             )
             SELECT pg_notify($4, $5) FROM w WHERE $5 IS NOT NULL",
            &[&kind.key(), &id, &text, &CHANNEL, &notice],
        )
        .await
        .map_err(pg(format!("write {} `{id}`", kind.name())))?;
        self.committed();
        Ok(())
    }

    pub(super) async fn delete_record(&self, kind: Record, id: &str) -> Result<(), StoreError> {
        let c = self.client().await?;
        // A removal is news only to kinds kept in memory.
        let notice = self.record_notice(kind, id).filter(|_| kind != Record::Notification);
        c.execute(
            "WITH w AS (DELETE FROM records WHERE kind = $1 AND id = $2 RETURNING 1)
             SELECT pg_notify($3, $4) FROM w WHERE $4 IS NOT NULL",
            &[&kind.key(), &id, &CHANNEL, &notice],
        )
        .await
        .map_err(pg(format!("remove {} `{id}`", kind.name())))?;
        self.committed();
        Ok(())
    }

    pub(super) async fn record(&self, kind: Record, id: &str) -> Result<Option<Value>, StoreError> {
        let c = self.client().await?;
        let row = c
            .query_opt("SELECT value FROM records WHERE kind = $1 AND id = $2", &[&kind.key(), &id])
            .await
            .map_err(pg(format!("read {} `{id}`", kind.name())))?;
        row.map(|r| parse_record(kind, id, &r.get::<_, String>(0))).transpose()
    }

    pub(super) async fn records(&self, kind: Record) -> Result<Vec<(String, Value)>, StoreError> {
        let c = self.client().await?;
        let rows = c
            .query("SELECT id, value FROM records WHERE kind = $1 ORDER BY id", &[&kind.key()])
            .await
            .map_err(pg(format!("read {} records", kind.name())))?;
        rows.iter()
            .map(|r| {
                let id: String = r.get(0);
                let value = parse_record(kind, &id, &r.get::<_, String>(1))?;
                Ok((id, value))
            })
            .collect()
    }

    pub(super) async fn shutdown(&self) {
        self.closed.store(true, Ordering::Release);
        self.stop.cancel();
        self.queries.close();
        self.locks.close();
    }
}

fn parse_record(kind: Record, id: &str, text: &str) -> Result<Value, StoreError> {
    serde_json::from_str(text)
        .map_err(|e| StoreError::Damaged(format!("{} `{id}`: corrupt JSON: {e}", kind.name())))
}

/// A dashboard's head row.
struct Head {
    version: u64,
    deleted: bool,
}

/// A dashboard's cluster-wide writer lock: a session-level advisory lock on a connection kept
/// out of the pool's rotation while held. Dropping it unlocks on a spawned task; a connection
/// that cannot unlock is closed instead (PostgreSQL releases a session's locks with it), so
/// the pool never hands out a connection still holding a lock.
pub struct ClusterLock {
    client: Option<Object>,
    key: i64,
}

impl std::fmt::Debug for ClusterLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterLock").field("key", &self.key).finish()
    }
}

impl Drop for ClusterLock {
    fn drop(&mut self) {
        let Some(client) = self.client.take() else { return };
        let key = self.key;
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => {
                rt.spawn(async move {
                    let unlocked = client
                        .query_one("SELECT pg_advisory_unlock($1)", &[&key])
                        .await
                        .is_ok_and(|r| r.get::<_, bool>(0));
                    if !unlocked {
                        drop(Object::take(client));
                    }
                });
            }
            Err(_) => drop(Object::take(client)),
        }
    }
}
