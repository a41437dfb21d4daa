//! The durable store: dashboards with full version history and chat/tool sessions, in redb.
//!
//! Only this module knows the engine, the tables and the key encoding; everything else sees the
//! typed API below. A write is acknowledged only after its durable commit; one writer thread
//! group-commits pending writes. Saves carry the version they were based on: a mismatch is
//! [`StoreError::Conflict`], never a lost update. (PLACEHOLDER: in-memory until the redb
//! implementation lands; same API.)

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::dashboard::DashboardState;

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
    /// The store is shutting down.
    #[error("the store is closed")]
    Closed,
    /// Disk or engine failure.
    #[error("storage error: {0}")]
    Storage(String),
}

/// A dashboard at one version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DashboardRecord {
    /// Dashboard id (`db_` + 26 chars).
    pub id: String,
    /// Version number, 1 for a new dashboard.
    pub version: u64,
    /// The state at this version.
    pub state: DashboardState,
    /// Creation time of the dashboard, unix milliseconds.
    pub created_at: i64,
    /// Time of this version, unix milliseconds.
    pub updated_at: i64,
    /// Soft-deleted (restorable).
    pub deleted: bool,
}

/// One entry of a dashboard's history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

/// The store handle (cheap to share behind an `Arc`).
pub struct Store {
    inner: Mutex<BTreeMap<String, Vec<DashboardRecord>>>,
    sessions: Mutex<BTreeMap<String, Value>>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").finish_non_exhaustive()
    }
}

/// A new dashboard id: `db_` + a time-ordered UUID (v7).
pub fn new_dashboard_id() -> String {
    format!("db_{}", uuid::Uuid::now_v7().simple())
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

impl Store {
    /// Opens (creating if needed) the store in `dir`.
    pub fn open(_dir: &Path) -> Result<Self, StoreError> {
        Ok(Self { inner: Mutex::default(), sessions: Mutex::default() })
    }

    /// True when the store holds no dashboards at all (first start: load templates).
    pub async fn is_empty(&self) -> Result<bool, StoreError> {
        Ok(self.inner.lock().map_err(|_| StoreError::Closed)?.is_empty())
    }

    /// Creates a dashboard at version 1 with a fresh id (or `id` if given and unused).
    pub async fn create(
        &self,
        id: Option<&str>,
        state: DashboardState,
        note: &str,
    ) -> Result<DashboardRecord, StoreError> {
        let _ = note;
        let id = id.map_or_else(new_dashboard_id, str::to_owned);
        let t = now_ms();
        let rec = DashboardRecord {
            id: id.clone(),
            version: 1,
            state,
            created_at: t,
            updated_at: t,
            deleted: false,
        };
        self.inner.lock().map_err(|_| StoreError::Closed)?.insert(id, vec![rec.clone()]);
        Ok(rec)
    }

    /// Saves a new version based on `base_version`.
    pub async fn save(
        &self,
        id: &str,
        base_version: u64,
        state: DashboardState,
        note: &str,
    ) -> Result<DashboardRecord, StoreError> {
        let _ = note;
        let mut map = self.inner.lock().map_err(|_| StoreError::Closed)?;
        let versions = map.get_mut(id).ok_or_else(|| StoreError::NotFound(id.to_owned()))?;
        let head = versions.last().ok_or_else(|| StoreError::NotFound(id.to_owned()))?.clone();
        if head.deleted {
            return Err(StoreError::Deleted(id.to_owned()));
        }
        if head.version != base_version {
            return Err(StoreError::Conflict { expected: base_version, actual: head.version });
        }
        let rec =
            DashboardRecord { version: head.version + 1, state, updated_at: now_ms(), ..head };
        versions.push(rec.clone());
        Ok(rec)
    }

    /// The current version (also of deleted dashboards; check `deleted`).
    pub async fn get(&self, id: &str) -> Result<DashboardRecord, StoreError> {
        let map = self.inner.lock().map_err(|_| StoreError::Closed)?;
        map.get(id)
            .and_then(|v| v.last().cloned())
            .ok_or_else(|| StoreError::NotFound(id.to_owned()))
    }

    /// One past version.
    pub async fn get_version(&self, id: &str, version: u64) -> Result<DashboardRecord, StoreError> {
        let map = self.inner.lock().map_err(|_| StoreError::Closed)?;
        let v = map.get(id).ok_or_else(|| StoreError::NotFound(id.to_owned()))?;
        v.iter()
            .find(|r| r.version == version)
            .cloned()
            .ok_or(StoreError::VersionNotFound { id: id.to_owned(), version })
    }

    /// The history, oldest first.
    pub async fn versions(&self, id: &str) -> Result<Vec<VersionInfo>, StoreError> {
        let map = self.inner.lock().map_err(|_| StoreError::Closed)?;
        let v = map.get(id).ok_or_else(|| StoreError::NotFound(id.to_owned()))?;
        Ok(v.iter()
            .map(|r| VersionInfo {
                version: r.version,
                created_at: r.updated_at,
                title: r.state.title.clone(),
                panels: r.state.panels.len(),
                note: String::new(),
            })
            .collect())
    }

    /// All dashboards, most recently updated first.
    pub async fn list(&self, include_deleted: bool) -> Result<Vec<DashboardListItem>, StoreError> {
        let map = self.inner.lock().map_err(|_| StoreError::Closed)?;
        Ok(map
            .values()
            .filter_map(|v| v.last())
            .filter(|r| include_deleted || !r.deleted)
            .map(|r| DashboardListItem {
                id: r.id.clone(),
                title: r.state.title.clone(),
                version: r.version,
                panels: r.state.panels.len(),
                updated_at: r.updated_at,
                deleted: r.deleted,
            })
            .collect())
    }

    /// Saves the state of `to_version` as a new version (history is never rewritten).
    pub async fn revert(&self, id: &str, to_version: u64) -> Result<DashboardRecord, StoreError> {
        let old = self.get_version(id, to_version).await?;
        let head = self.get(id).await?;
        self.save(id, head.version, old.state, &format!("revert to {to_version}")).await
    }

    /// Soft-deletes (restorable).
    pub async fn delete(&self, id: &str) -> Result<(), StoreError> {
        let mut map = self.inner.lock().map_err(|_| StoreError::Closed)?;
        let v = map.get_mut(id).ok_or_else(|| StoreError::NotFound(id.to_owned()))?;
        if let Some(last) = v.last_mut() {
            last.deleted = true;
        }
        Ok(())
    }

    /// Undoes a delete.
    pub async fn restore(&self, id: &str) -> Result<DashboardRecord, StoreError> {
        let mut map = self.inner.lock().map_err(|_| StoreError::Closed)?;
        let v = map.get_mut(id).ok_or_else(|| StoreError::NotFound(id.to_owned()))?;
        let last = v.last_mut().ok_or_else(|| StoreError::NotFound(id.to_owned()))?;
        last.deleted = false;
        Ok(last.clone())
    }

    /// Copies the current state into a new dashboard.
    pub async fn duplicate(
        &self,
        id: &str,
        title: Option<String>,
    ) -> Result<DashboardRecord, StoreError> {
        let mut state = self.get(id).await?.state;
        if let Some(t) = title {
            state.title = t;
        }
        self.create(None, state, &format!("duplicate of {id}")).await
    }

    /// Stores a session's state (active dashboard, dashboards it created).
    pub async fn put_session(&self, session: &str, value: Value) -> Result<(), StoreError> {
        self.sessions.lock().map_err(|_| StoreError::Closed)?.insert(session.to_owned(), value);
        Ok(())
    }

    /// Reads a session's state.
    pub async fn get_session(&self, session: &str) -> Result<Option<Value>, StoreError> {
        Ok(self.sessions.lock().map_err(|_| StoreError::Closed)?.get(session).cloned())
    }

    /// Stops accepting writes, drains the writer and makes a final durable commit.
    pub async fn shutdown(&self) {}
}

/// Durable saves per second with `writers` concurrent writers for `seconds` (placeholder).
pub async fn bench_saves(_dir: &Path, _writers: usize, _seconds: f64) -> Result<f64, StoreError> {
    Ok(0.0)
}
