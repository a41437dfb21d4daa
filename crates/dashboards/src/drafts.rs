//! Review mode: a dashboard (or a chat, decided by the caller) whose agent edits are drafts.
//! A draft belongs to one drafter (the person the agent works for) and one dashboard: the
//! published state it started from (`base`, at `baseVersion`), the state the agent made, who
//! made it and each changed panel's test run. Other viewers keep seeing the published version
//! until the drafter accepts the draft (all of it, or some panels: [`dashboard::merge::apply`]
//! carries them onto whatever is published by then) or rejects it (all, or some panels:
//! [`dashboard::merge::revert`]). A rejected draft leaves nothing in the published history.
//!
//! Stored in the store on both engines (kinds `draft`, by `{dashboardId}/{drafter}`, and
//! `review`, by dashboard id), so any node serves them. Owns the drafts' records and rules;
//! the writes to the published dashboard go through [`crate::Dashboards`] like every write.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use base::principal::Principal;
use dashboard::DashboardState;
use live::PanelRun;
use store::{Author, Record, Store, StoreError};

/// Why a draft could not be accepted or rejected.
#[derive(Debug, thiserror::Error)]
pub enum DraftError {
    /// The drafter has no draft of this dashboard.
    #[error("you have no draft of dashboard `{0}`")]
    NoDraft(String),
    /// A panel id the draft does not change.
    #[error("the draft does not change panel `{panel}`; it changes: {changed}")]
    UnknownPanel {
        /// The id given.
        panel: String,
        /// The panels it changes.
        changed: String,
    },
    /// The dashboard the accept would publish breaks a rule (too many panels, ...).
    #[error("accepting would make an invalid dashboard: {0}")]
    Invalid(String),
    /// The store failed (or the dashboard is gone).
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The drafter of a principal: the person's user id, else the credential (`owner`, `key:ID`).
pub fn drafter(who: &Principal) -> String {
    who.user_id().map_or_else(|| who.holder(), ToString::to_string)
}

/// One panel's test run in a draft.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PanelTest {
    /// The run returned data that fits the panel.
    pub ok: bool,
    /// Rows returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_count: Option<usize>,
    /// The error (`{kind, message, line, column, ...}`) of a failed run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub error: Option<Value>,
    /// Wall time, ms.
    pub duration_ms: f64,
}

impl PanelTest {
    /// The test record of a run.
    pub fn of(run: &PanelRun) -> Self {
        Self {
            ok: run.result.is_ok(),
            row_count: run.result.as_ref().ok().map(|o| o.row_count),
            error: run.result.as_ref().err().and_then(|e| serde_json::to_value(e).ok()),
            duration_ms: run.duration.as_secs_f64() * 1e3,
        }
    }
}

/// A drafter's pending change of a dashboard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Draft {
    /// The dashboard.
    pub dashboard_id: String,
    /// Whose draft (see [`drafter`]).
    pub drafter: String,
    /// The published version the draft started from (or was last rebased on).
    pub base_version: u64,
    /// That version's state.
    #[schema(value_type = Object)]
    pub base: DashboardState,
    /// The draft's state.
    #[schema(value_type = Object)]
    pub state: DashboardState,
    /// Who made its last change (the agent, for whom, in which chat).
    pub author: Author,
    /// When it was started, unix ms.
    pub created_at: i64,
    /// When it last changed, unix ms.
    pub updated_at: i64,
    /// The last test run of each panel the draft changed.
    pub tests: BTreeMap<String, PanelTest>,
}

impl Draft {
    /// Whether the draft changes nothing of its base.
    pub fn is_empty(&self) -> bool {
        dashboard::merge::changed_panels(&self.base, &self.state).is_empty()
            && !dashboard::merge::top_changed(&self.base, &self.state)
    }
}

/// The drafts and review flags in the store.
#[derive(Debug)]
pub struct Drafts {
    store: std::sync::Arc<Store>,
}

fn key(id: &str, drafter: &str) -> String {
    format!("{id}/{drafter}")
}

impl Drafts {
    pub(crate) fn new(store: std::sync::Arc<Store>) -> Self {
        Self { store }
    }

    /// Whether dashboard `id` is in review mode.
    #[base::boxed]
    pub async fn reviewing(&self, id: &str) -> Result<bool, StoreError> {
        Ok(self.store.record(Record::Review, id).await?.is_some())
    }

    /// Turns review mode of dashboard `id` on or off (its drafts stay either way).
    #[base::boxed]
    pub async fn set_reviewing(&self, id: &str, on: bool) -> Result<(), StoreError> {
        if on {
            self.store.put_record(Record::Review, id, &serde_json::json!({ "on": true })).await
        } else {
            self.store.delete_record(Record::Review, id).await
        }
    }

    /// The drafter's draft of dashboard `id`, if any.
    #[base::boxed]
    pub async fn get(&self, id: &str, drafter: &str) -> Result<Option<Draft>, StoreError> {
        match self.store.record(Record::Draft, &key(id, drafter)).await? {
            Some(v) => serde_json::from_value(v)
                .map(Some)
                .map_err(|e| StoreError::Damaged(format!("draft of `{id}` by `{drafter}`: {e}"))),
            None => Ok(None),
        }
    }

    /// The drafter's draft of `id` when it changes every panel of `panels` (`None`: the
    /// whole draft is meant).
    #[base::boxed]
    pub(crate) async fn chosen(
        &self,
        id: &str,
        drafter: &str,
        panels: Option<&[String]>,
    ) -> Result<Draft, DraftError> {
        let draft =
            self.get(id, drafter).await?.ok_or_else(|| DraftError::NoDraft(id.to_owned()))?;
        let changed = dashboard::merge::changed_panels(&draft.base, &draft.state);
        match panels.and_then(|ids| ids.iter().find(|p| !changed.contains(p))) {
            Some(panel) => Err(DraftError::UnknownPanel {
                panel: panel.clone(),
                changed: if changed.is_empty() { "no panel".into() } else { changed.join(", ") },
            }),
            None => Ok(draft),
        }
    }

    /// Stores a draft, or removes it when it changes nothing.
    #[base::boxed]
    pub async fn put(&self, draft: &Draft) -> Result<(), StoreError> {
        if draft.is_empty() {
            return self.remove(&draft.dashboard_id, &draft.drafter).await;
        }
        let value = serde_json::to_value(draft)
            .map_err(|e| StoreError::Storage(format!("encode a draft: {e}")))?;
        self.store
            .put_record(Record::Draft, &key(&draft.dashboard_id, &draft.drafter), &value)
            .await
    }

    /// Removes the drafter's draft of `id` (none: nothing happens).
    #[base::boxed]
    pub async fn remove(&self, id: &str, drafter: &str) -> Result<(), StoreError> {
        self.store.delete_record(Record::Draft, &key(id, drafter)).await
    }

    /// Removes every draft of `id` and its review flag (the dashboard is purged).
    #[base::boxed]
    pub async fn forget(&self, id: &str) -> Result<(), StoreError> {
        let prefix = format!("{id}/");
        for (k, _) in self.store.records_with_ids(Record::Draft).await? {
            if k.starts_with(&prefix) {
                self.store.delete_record(Record::Draft, &k).await?;
            }
        }
        self.store.delete_record(Record::Review, id).await
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn drafters_are_people_else_their_credential() {
        assert_eq!(drafter(&Principal::Owner), "owner");
        let key = Principal::Key { id: "key_1".into(), scopes: Vec::new(), user: None };
        assert_eq!(drafter(&key), "key:key_1");
    }
}
