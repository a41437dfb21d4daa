//! Sessions: per caller-given id, the active dashboard and the dashboards it created, persisted
//! in the store so a chat can say "back to the gold one" after a restart.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use store::{Store, StoreError};

/// The session id used when a caller gives none.
pub const DEFAULT_SESSION: &str = "default";

/// A dashboard a session knows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DashboardRef {
    /// Dashboard id.
    pub id: String,
    /// Title when last touched.
    pub title: String,
}

/// What a session remembers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionState {
    /// Where tools act when no `dashboard_id` is given.
    pub active: Option<String>,
    /// Dashboards created or visited in this session, oldest first.
    pub dashboards: Vec<DashboardRef>,
}

pub(super) struct Sessions {
    store: Arc<Store>,
    /// Read-modify-write of session records goes one at a time.
    lock: tokio::sync::Mutex<()>,
}

impl Sessions {
    pub fn new(store: Arc<Store>) -> Self {
        Self { store, lock: tokio::sync::Mutex::new(()) }
    }

    #[base::boxed]
    pub async fn get(&self, session: Option<&str>) -> Result<SessionState, StoreError> {
        let key = session.unwrap_or(DEFAULT_SESSION);
        Ok(match self.store.get_session(key).await? {
            Some(v) => serde_json::from_value(v).unwrap_or_default(),
            None => SessionState::default(),
        })
    }

    async fn update(
        &self,
        session: Option<&str>,
        f: impl FnOnce(&mut SessionState),
    ) -> Result<(), StoreError> {
        let _guard = self.lock.lock().await;
        let mut state = self.get(session).await?;
        let before = state.clone();
        f(&mut state);
        if state != before {
            let value = serde_json::to_value(&state).unwrap_or_default();
            self.store.put_session(session.unwrap_or(DEFAULT_SESSION), value).await?;
        }
        Ok(())
    }

    /// Makes `id` the active dashboard and remembers it.
    #[base::boxed]
    pub async fn touch(
        &self,
        session: Option<&str>,
        id: &str,
        title: &str,
    ) -> Result<(), StoreError> {
        self.update(session, |s| {
            s.active = Some(id.to_owned());
            match s.dashboards.iter_mut().find(|d| d.id == id) {
                Some(d) => d.title = title.to_owned(),
                None => {
                    s.dashboards.push(DashboardRef { id: id.to_owned(), title: title.to_owned() })
                }
            }
        })
        .await
    }

    /// Forgets a deleted dashboard; the most recent remaining one becomes active.
    #[base::boxed]
    pub async fn forget(&self, session: Option<&str>, id: &str) -> Result<(), StoreError> {
        self.update(session, |s| {
            s.dashboards.retain(|d| d.id != id);
            if s.active.as_deref() == Some(id) {
                s.active = s.dashboards.last().map(|d| d.id.clone());
            }
        })
        .await
    }
}
