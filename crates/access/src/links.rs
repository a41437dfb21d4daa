//! Share links: a credential that shows one dashboard, read-only, to someone without an
//! account. The link's token (256 random bits, like a session cookie) is in its URL
//! (`/s/{token}`) and shown once; the store keeps the link under the token's SHA-256 (kind
//! `share_link`), so a copy of the store opens nothing. A link may expire, fixes the variable
//! values it shows (and may let visitors change them), and is revoked by deleting it.
//!
//! Every node keeps every link in memory (a team has few) and re-reads them when another node
//! changes one ([`Links::reload`], driven by the store's notices), so a revoke on one node
//! closes the link's viewers on all. Uses are counted in memory and written at most once a
//! minute per link, so a busy link does not become a stream of store writes.
//!
//! Knows nothing of dashboards or HTTP: `server::share_links` checks who may make a link and
//! serves what a link opens.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::keys::{digest, random_base62};
use crate::principal::{Actor, Principal};
use store::{Record, Store, StoreError};

/// The longest a link may live.
pub const MAX_LIFETIME: Duration = Duration::from_secs(365 * 24 * 3600);
/// Live links one dashboard may have: past it, revoke one first.
pub const MAX_PER_DASHBOARD: usize = 50;
/// Longest label kept.
const MAX_LABEL: usize = 200;
/// Uses are written back at most this often per link.
const WRITE_USES_EVERY: i64 = 60_000;

/// One share link, as listed (never its token).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShareLink {
    /// `sl_` and a time-ordered UUID.
    pub id: String,
    /// The dashboard it shows.
    pub dashboard_id: String,
    /// What its maker called it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Unix milliseconds.
    pub created_at: i64,
    /// Who made it.
    pub created_by: Actor,
    /// When it stops working (unix milliseconds); `None`: when revoked.
    pub expires_at: Option<i64>,
    /// The variable values it shows.
    #[schema(value_type = Object)]
    pub vars: Map<String, Value>,
    /// Whether visitors may change the variables (starting from `vars`).
    pub allow_vars: bool,
    /// Times it was opened.
    pub uses: u64,
    /// When it was last opened (unix milliseconds).
    pub last_used_at: Option<i64>,
}

impl ShareLink {
    /// Whether it has expired at `now` (unix milliseconds).
    pub fn expired(&self, now: i64) -> bool {
        self.expires_at.is_some_and(|at| at <= now)
    }
}

/// What a new link is to be.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LinkRequest {
    /// Seconds until it stops working (at most a year); absent: until revoked.
    #[serde(default)]
    pub expires_in: Option<u64>,
    /// The variable values it shows.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub vars: Map<String, Value>,
    /// Let visitors change the variables.
    #[serde(default)]
    pub allow_vars: bool,
    /// A name for the list.
    #[serde(default)]
    pub label: Option<String>,
}

/// A link just made: the only time its token is known.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NewLink {
    /// The link.
    pub link: ShareLink,
    /// Its secret, for the URL `/s/{token}`; not shown again.
    pub token: String,
}

/// Why a link was not made or does not open.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    /// No such link (never was, or revoked): answered alike.
    #[error("this link does not exist or was revoked")]
    Unknown,
    /// Past its expiry.
    #[error("this link has expired")]
    Expired,
    /// A request that cannot be a link.
    #[error("{message}")]
    Invalid {
        /// The field at fault.
        field: &'static str,
        /// Why.
        message: String,
    },
    /// Too many live links on one dashboard.
    #[error(
        "this dashboard has {MAX_PER_DASHBOARD} live share links, the most it may have: revoke one first"
    )]
    TooMany,
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Every share link, in memory, by the digest of its token.
#[derive(Debug)]
pub struct Links {
    store: Arc<Store>,
    by_digest: RwLock<HashMap<String, ShareLink>>,
    /// When each link's uses were last written (by digest).
    written: std::sync::Mutex<HashMap<String, i64>>,
}

impl Links {
    /// Nothing loaded yet ([`Links::reload`]).
    pub fn new(store: Arc<Store>) -> Self {
        Self { store, by_digest: RwLock::default(), written: std::sync::Mutex::default() }
    }

    fn read(&self) -> RwLockReadGuard<'_, HashMap<String, ShareLink>> {
        self.by_digest.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Re-reads every link (at start, and when another node changed one). Links long past
    /// their expiry are removed.
    #[base::boxed]
    pub async fn reload(&self) -> Result<(), StoreError> {
        let mut by_digest = HashMap::new();
        for (digest, value) in self.store.records_with_ids(Record::ShareLink).await? {
            match serde_json::from_value::<ShareLink>(value) {
                Ok(link) => {
                    by_digest.insert(digest, link);
                }
                Err(e) => tracing::error!(%digest, error = %e, "skipping an unreadable share link"),
            }
        }
        *self.by_digest.write().unwrap_or_else(PoisonError::into_inner) = by_digest;
        Ok(())
    }

    /// Makes a link to `dashboard` for `by`.
    #[base::boxed]
    pub async fn create(
        &self,
        dashboard: &str,
        by: &Principal,
        req: LinkRequest,
    ) -> Result<NewLink, LinkError> {
        let now = chrono::Utc::now().timestamp_millis();
        let expires_at = match req.expires_in {
            None => None,
            Some(0) => {
                return Err(LinkError::Invalid {
                    field: "expiresIn",
                    message: "`expiresIn` must be at least 1 second".into(),
                });
            }
            Some(s) if s > MAX_LIFETIME.as_secs() => {
                return Err(LinkError::Invalid {
                    field: "expiresIn",
                    message: format!(
                        "`expiresIn` is at most {} seconds (a year); leave it out for a link \
                         that lasts until revoked",
                        MAX_LIFETIME.as_secs()
                    ),
                });
            }
            Some(s) => Some(now + i64::try_from(s).unwrap_or(i64::MAX / 2_000) * 1000),
        };
        let label = req.label.map(|l| l.trim().chars().take(MAX_LABEL).collect::<String>());
        let label = label.filter(|l| !l.is_empty());
        if self.list(dashboard).len() >= MAX_PER_DASHBOARD {
            return Err(LinkError::TooMany);
        }
        let link = ShareLink {
            id: format!("sl_{}", uuid::Uuid::now_v7().simple()),
            dashboard_id: dashboard.to_owned(),
            label,
            created_at: now,
            created_by: Actor::of(by),
            expires_at,
            vars: req.vars,
            allow_vars: req.allow_vars,
            uses: 0,
            last_used_at: None,
        };
        let token = random_base62();
        let key = digest(&token);
        self.put(&key, &link).await?;
        Ok(NewLink { link, token })
    }

    async fn put(&self, key: &str, link: &ShareLink) -> Result<(), StoreError> {
        let value = serde_json::to_value(link)
            .map_err(|e| StoreError::Storage(format!("serialize share link: {e}")))?;
        self.store.put_record(Record::ShareLink, key, &value).await?;
        self.by_digest
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key.to_owned(), link.clone());
        Ok(())
    }

    /// A dashboard's live links (expired ones are left out), newest first.
    pub fn list(&self, dashboard: &str) -> Vec<ShareLink> {
        let now = chrono::Utc::now().timestamp_millis();
        let mut out: Vec<ShareLink> = self
            .read()
            .values()
            .filter(|l| l.dashboard_id == dashboard && !l.expired(now))
            .cloned()
            .collect();
        out.sort_by(|a, b| b.created_at.cmp(&a.created_at).then_with(|| b.id.cmp(&a.id)));
        out
    }

    /// Revokes link `id` of `dashboard`: it stops working on every node at once.
    #[base::boxed]
    pub async fn revoke(&self, dashboard: &str, id: &str) -> Result<ShareLink, LinkError> {
        let found = self
            .read()
            .iter()
            .find(|(_, l)| l.id == id && l.dashboard_id == dashboard)
            .map(|(k, l)| (k.clone(), l.clone()));
        let (key, link) = found.ok_or(LinkError::Unknown)?;
        self.store.delete_record(Record::ShareLink, &key).await?;
        self.by_digest.write().unwrap_or_else(PoisonError::into_inner).remove(&key);
        Ok(link)
    }

    /// Removes every link of a dashboard (it is gone for good).
    #[base::boxed]
    pub async fn remove_dashboard(&self, dashboard: &str) -> Result<(), StoreError> {
        let keys: Vec<String> = self
            .read()
            .iter()
            .filter(|(_, l)| l.dashboard_id == dashboard)
            .map(|(k, _)| k.clone())
            .collect();
        for key in keys {
            self.store.delete_record(Record::ShareLink, &key).await?;
            self.by_digest.write().unwrap_or_else(PoisonError::into_inner).remove(&key);
        }
        Ok(())
    }

    /// The link a presented token stands for, if it works now; [`LinkError::Unknown`] or
    /// [`LinkError::Expired`] otherwise. No write.
    pub fn peek(&self, token: &str) -> Result<ShareLink, LinkError> {
        // Our tokens are 43 base62 characters: anything else is not worth a digest.
        if token.len() != 43 || !token.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(LinkError::Unknown);
        }
        let link = self.read().get(&digest(token)).cloned().ok_or(LinkError::Unknown)?;
        if link.expired(chrono::Utc::now().timestamp_millis()) {
            return Err(LinkError::Expired);
        }
        Ok(link)
    }

    /// [`Links::peek`], counting a use. Returns the link and whether this is the first use
    /// in a while (for the audit trail: at most one entry per write interval).
    #[base::boxed]
    pub async fn open(&self, token: &str) -> Result<(ShareLink, bool), LinkError> {
        self.peek(token)?;
        let key = digest(token);
        let now = chrono::Utc::now().timestamp_millis();
        let link = {
            let mut all = self.by_digest.write().unwrap_or_else(PoisonError::into_inner);
            let link = all.get_mut(&key).ok_or(LinkError::Unknown)?;
            link.uses += 1;
            link.last_used_at = Some(now);
            link.clone()
        };
        let due = {
            let mut written = self.written.lock().unwrap_or_else(PoisonError::into_inner);
            let last = written.get(&key).copied();
            let due = last.is_none_or(|at| now - at >= WRITE_USES_EVERY);
            if due {
                written.insert(key.clone(), now);
            }
            due
        };
        if due {
            // Counting is best effort: a failed write never refuses a visitor.
            let value = serde_json::to_value(&link).unwrap_or(Value::Null);
            if let Err(e) = self.store.put_record(Record::ShareLink, &key, &value).await {
                tracing::warn!(link = %link.id, error = %e, "writing a share link's uses failed");
            }
        }
        Ok((link, due))
    }

    /// Whether link `id` still works (not revoked, not expired): open viewers check it.
    pub fn works(&self, id: &str) -> Result<(), LinkError> {
        let now = chrono::Utc::now().timestamp_millis();
        match self.read().values().find(|l| l.id == id) {
            None => Err(LinkError::Unknown),
            Some(l) if l.expired(now) => Err(LinkError::Expired),
            Some(_) => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn links() -> (tempfile::TempDir, Arc<Store>, Links) {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Store::open(dir.path()).unwrap());
        let links = Links::new(store.clone());
        (dir, store, links)
    }

    #[tokio::test]
    async fn a_link_opens_by_its_token_only_and_stops_when_revoked() {
        let (_dir, store, links) = links().await;
        let made = links
            .create(
                "db_a",
                &Principal::Owner,
                LinkRequest { allow_vars: true, ..Default::default() },
            )
            .await
            .unwrap();
        assert_eq!(made.token.len(), 43);
        let (link, first) = links.open(&made.token).await.unwrap();
        assert!(first && link.uses == 1 && link.dashboard_id == "db_a" && link.allow_vars);
        let (link, first) = links.open(&made.token).await.unwrap();
        assert!(!first && link.uses == 2, "uses are counted, the write comes later");
        assert_eq!(links.peek("x").unwrap_err(), LinkError::Unknown);
        assert_eq!(links.peek(&"A".repeat(43)).unwrap_err(), LinkError::Unknown);
        // The store holds the digest, never the token.
        let stored = store.records_with_ids(Record::ShareLink).await.unwrap();
        assert_eq!(stored.len(), 1);
        assert_eq!(stored[0].0, digest(&made.token));
        assert!(!stored[0].1.to_string().contains(&made.token));
        // Another node reading the store sees it.
        let other = Links::new(store.clone());
        other.reload().await.unwrap();
        assert_eq!(other.peek(&made.token).unwrap().id, made.link.id);
        assert_eq!(links.revoke("db_b", &made.link.id).await.unwrap_err(), LinkError::Unknown);
        links.revoke("db_a", &made.link.id).await.unwrap();
        assert_eq!(links.peek(&made.token).unwrap_err(), LinkError::Unknown);
        assert_eq!(links.works(&made.link.id).unwrap_err(), LinkError::Unknown);
        other.reload().await.unwrap();
        assert_eq!(other.peek(&made.token).unwrap_err(), LinkError::Unknown);
    }

    #[tokio::test]
    async fn expiry_is_bounded_and_an_expired_link_says_so() {
        let (_dir, _store, links) = links().await;
        let too_long = LinkRequest { expires_in: Some(400 * 24 * 3600), ..Default::default() };
        assert!(matches!(
            links.create("db_a", &Principal::Owner, too_long).await,
            Err(LinkError::Invalid { .. })
        ));
        let zero = LinkRequest { expires_in: Some(0), ..Default::default() };
        assert!(matches!(
            links.create("db_a", &Principal::Owner, zero).await,
            Err(LinkError::Invalid { .. })
        ));
        let soon = LinkRequest {
            expires_in: Some(1),
            label: Some("  board  ".into()),
            ..Default::default()
        };
        let made = links.create("db_a", &Principal::Owner, soon).await.unwrap();
        assert_eq!(made.link.label.as_deref(), Some("board"));
        assert_eq!(links.list("db_a").len(), 1);
        let mut link = made.link.clone();
        link.expires_at = Some(chrono::Utc::now().timestamp_millis() - 1);
        links.put(&digest(&made.token), &link).await.unwrap();
        assert_eq!(links.peek(&made.token).unwrap_err(), LinkError::Expired);
        assert_eq!(links.open(&made.token).await.unwrap_err(), LinkError::Expired);
        assert!(links.list("db_a").is_empty(), "expired links are not listed");
    }

    #[tokio::test]
    async fn a_dashboard_has_a_bounded_number_of_links_and_they_go_with_it() {
        let (_dir, _store, links) = links().await;
        for _ in 0..MAX_PER_DASHBOARD {
            links.create("db_a", &Principal::Owner, LinkRequest::default()).await.unwrap();
        }
        assert_eq!(
            links.create("db_a", &Principal::Owner, LinkRequest::default()).await.unwrap_err(),
            LinkError::TooMany
        );
        links.create("db_b", &Principal::Owner, LinkRequest::default()).await.unwrap();
        links.remove_dashboard("db_a").await.unwrap();
        assert!(links.list("db_a").is_empty());
        assert_eq!(links.list("db_b").len(), 1);
    }
}
