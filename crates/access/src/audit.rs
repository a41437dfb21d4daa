//! The audit trail: who signed in, failed to, signed out, changed users, roles, keys, share
//! links, settings and providers. Entries are kept in the store (time-ordered ids, so every
//! node's entries interleave by time), at most [`AuditLimits::keep`] of them and none older than
//! [`AuditLimits::max_age`]; [`Audit::prune`] enforces both.
//!
//! Never a secret: callers pass names and ids, never passwords, tokens, cookies or keys, and a
//! failed sign-in names its account only when the account exists (people type their password
//! into the name field). Writing an entry never fails the action it records: a store failure
//! is logged. Knows nothing of HTTP.

use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::principal::Principal;
pub use base::principal::Actor;
use store::{Record, Store, StoreError};

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AuditKind {
    /// A sign-in (password, token link or OpenID).
    SignIn,
    /// A refused sign-in.
    SignInFailed,
    /// A sign-out (`detail`: `everywhere` for all of a person's sessions).
    SignOut,
    /// A user was made.
    UserCreated,
    /// A user's role, name, password or state changed (`detail` says which).
    UserChanged,
    /// A user was removed.
    UserDeleted,
    /// An API key was made.
    KeyCreated,
    /// An API key was revoked.
    KeyRevoked,
    /// A dashboard's share link was made.
    ShareCreated,
    /// A share link was opened.
    ShareUsed,
    /// A share link was revoked.
    ShareRevoked,
    /// A dashboard's access changed.
    AccessChanged,
    /// Admin settings changed.
    SettingsChanged,
    /// A model provider was added, changed or removed.
    ProviderChanged,
}

/// One entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    /// `au_` and a time-ordered UUID.
    pub id: String,
    /// Unix milliseconds.
    pub at: i64,
    /// What happened.
    pub kind: AuditKind,
    /// Who did it (absent for a failed sign-in of an unknown name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<Actor>,
    /// The client's address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// What it was done to (a user, key, dashboard or share link id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// More, in words (`role editor → viewer`, `everywhere`, `wrong password`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// What to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuditLimits {
    /// Entries kept at most (the oldest go first).
    pub keep: usize,
    /// Entries older than this go.
    pub max_age: Duration,
}

impl Default for AuditLimits {
    fn default() -> Self {
        Self { keep: 20_000, max_age: Duration::from_secs(180 * 24 * 3600) }
    }
}

/// The trail.
#[derive(Debug)]
pub struct Audit {
    store: Arc<Store>,
    limits: AuditLimits,
    /// Entries written since the last prune: one in a tenth of `keep` prunes.
    since_prune: AtomicUsize,
}

/// An entry to write: its kind, and what the builder methods add.
#[derive(Debug, Clone)]
pub struct Event {
    entry: AuditEntry,
}

impl Event {
    /// Something of this kind happened now.
    pub fn new(kind: AuditKind) -> Self {
        Self {
            entry: AuditEntry {
                id: format!("au_{}", uuid::Uuid::now_v7().simple()),
                at: chrono::Utc::now().timestamp_millis(),
                kind,
                actor: None,
                address: None,
                target: None,
                detail: None,
            },
        }
    }

    /// Done by this request's principal.
    pub fn by(mut self, principal: &Principal) -> Self {
        self.entry.actor = Some(Actor::of(principal));
        self
    }

    /// Done by this actor.
    pub fn actor(mut self, actor: Actor) -> Self {
        self.entry.actor = Some(actor);
        self
    }

    /// From this address.
    pub fn from(mut self, address: Option<IpAddr>) -> Self {
        self.entry.address = address.map(|a| a.to_string());
        self
    }

    /// To this.
    pub fn target(mut self, target: impl Into<String>) -> Self {
        self.entry.target = Some(target.into());
        self
    }

    /// With these words.
    pub fn detail(mut self, detail: impl Into<String>) -> Self {
        self.entry.detail = Some(detail.into());
        self
    }
}

impl Audit {
    /// The trail kept in `store`.
    pub fn new(store: Arc<Store>, limits: AuditLimits) -> Arc<Self> {
        Arc::new(Self { store, limits, since_prune: AtomicUsize::new(0) })
    }

    /// Writes an entry (and now and then prunes); a failure is logged, never returned.
    #[base::boxed]
    pub async fn record(&self, event: Event) {
        let e = event.entry;
        tracing::info!(
            target: "audit",
            kind = ?e.kind,
            actor = ?e.actor,
            target = ?e.target,
            detail = ?e.detail,
            "audit"
        );
        let value = match serde_json::to_value(&e) {
            Ok(v) => v,
            Err(err) => return tracing::error!(error = %err, "serializing an audit entry"),
        };
        if let Err(err) = self.store.put_record(Record::Audit, &e.id, &value).await {
            tracing::error!(error = %err, kind = ?e.kind, "writing an audit entry failed");
            return;
        }
        let every = (self.limits.keep / 10).max(1);
        if self.since_prune.fetch_add(1, Ordering::Relaxed) + 1 >= every {
            self.since_prune.store(0, Ordering::Relaxed);
            if let Err(err) = self.prune().await {
                tracing::warn!(error = %err, "pruning the audit trail failed");
            }
        }
    }

    /// The newest entries first, at most `limit`, older than entry `before` when given.
    #[base::boxed]
    pub async fn list(
        &self,
        limit: usize,
        before: Option<&str>,
    ) -> Result<Vec<AuditEntry>, StoreError> {
        let mut rows = self.store.records_with_ids(Record::Audit).await?;
        rows.sort_by(|a, b| b.0.cmp(&a.0));
        Ok(rows
            .into_iter()
            .filter(|(id, _)| before.is_none_or(|b| id.as_str() < b))
            .filter_map(|(_, v)| serde_json::from_value(v).ok())
            .take(limit)
            .collect())
    }

    /// Removes entries past the limits: how many.
    #[base::boxed]
    pub async fn prune(&self) -> Result<usize, StoreError> {
        let mut rows = self.store.records_with_ids(Record::Audit).await?;
        rows.sort_by(|a, b| b.0.cmp(&a.0));
        let oldest = chrono::Utc::now().timestamp_millis()
            - i64::try_from(self.limits.max_age.as_millis()).unwrap_or(i64::MAX);
        let mut removed = 0;
        for (i, (id, v)) in rows.iter().enumerate() {
            let at = v.get("at").and_then(serde_json::Value::as_i64).unwrap_or(0);
            if i >= self.limits.keep || at < oldest {
                self.store.delete_record(Record::Audit, id).await?;
                removed += 1;
            }
        }
        Ok(removed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn entries_list_newest_first_and_the_trail_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Store::open(dir.path()).unwrap());
        let audit = Audit::new(store, AuditLimits { keep: 5, max_age: Duration::from_secs(60) });
        for i in 0..5 {
            audit.record(Event::new(AuditKind::SignIn).target(format!("u{i}"))).await;
        }
        // The fifth write pruned nothing (5 kept); three more leave the newest 5... after the
        // prune on the tenth of `keep` (every write here).
        for i in 5..8 {
            audit.record(Event::new(AuditKind::SignOut).target(format!("u{i}"))).await;
        }
        let all = audit.list(100, None).await.unwrap();
        let targets: Vec<_> = all.iter().map(|e| e.target.clone().unwrap()).collect();
        assert_eq!(targets, ["u7", "u6", "u5", "u4", "u3"]);
        let page = audit.list(2, Some(&all[1].id)).await.unwrap();
        assert_eq!(
            page.iter().map(|e| e.target.clone().unwrap()).collect::<Vec<_>>(),
            ["u5", "u4"]
        );
        let owner = Actor::of(&Principal::Owner);
        assert!(owner.token && owner.user_id.is_none());
    }
}
