//! API keys: the one owner of the key records (kept in the store as digests, never secrets),
//! the in-memory index by digest that authenticates every request without touching the
//! store, and each key's request-rate bucket.
//!
//! Keys are made with [`ApiKeys::create`] (the secret is returned once), listed without their
//! digest, and revoked (kept, marked, refused from then on). A key's budget is measured against
//! what the usage ledger says it spent ([`ApiKeys::over_budget`]). Knows nothing of HTTP: the guard
//! asks [`ApiKeys::authenticate`] and maps its refusal.

use std::collections::HashMap;
use std::sync::atomic::AtomicI64;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::keys::{NewKey, Scope, digest};
use crate::principal::{Principal, UserId};
use crate::usage::UsageLedger;
use crate::users::Users;
use sdk::limit::Bucket;
use store::{Store, StoreError};

/// Longest key name.
pub const MAX_NAME_LEN: usize = 100;

/// A key as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct KeyRecord {
    id: String,
    name: String,
    /// `bsk-` and the first characters: how a person recognises the key.
    prefix: String,
    /// SHA-256 of the secret, hex.
    hash: String,
    scopes: Vec<Scope>,
    /// Unix milliseconds.
    created_at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    expires_at: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    budget_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rpm: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    revoked_at: Option<i64>,
    /// Whose key it is; `None`: made with the server token (the first admin's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    user_id: Option<UserId>,
}

/// A key as listed: everything but its digest, plus when it was last used.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeyView {
    /// Its id (`key_…`), for revoking it.
    pub id: String,
    /// Who or what it is for.
    pub name: String,
    /// `bsk-` and its first characters.
    pub prefix: String,
    /// What it may do.
    pub scopes: Vec<Scope>,
    /// Unix milliseconds.
    pub created_at: i64,
    /// When it stops working, Unix milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<i64>,
    /// Spending limit in USD.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_usd: Option<f64>,
    /// Requests per minute.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rpm: Option<u32>,
    /// When it was revoked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<i64>,
    /// Its last authenticated request since the server started, Unix milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_used_at: Option<i64>,
    /// Whose key it is (absent: made with the server token; the first admin's).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub user_id: Option<UserId>,
}

/// What a new key may do and until when.
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewKeyRequest {
    /// Who or what it is for (required).
    pub name: String,
    /// At least one of `read`, `write`, `agents`, `models`, `metrics`, `admin`.
    pub scopes: Vec<Scope>,
    /// When it stops working, Unix milliseconds (in the future).
    #[serde(default)]
    pub expires_at: Option<i64>,
    /// Spending limit in USD (positive).
    #[serde(default)]
    pub budget_usd: Option<f64>,
    /// Requests per minute (at least 1).
    #[serde(default)]
    pub rpm: Option<u32>,
}

/// A key just made: the secret, shown this once.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreatedKey {
    /// The key as it will be listed.
    #[serde(flatten)]
    pub view: KeyView,
    /// `bsk-…`: not stored, not shown again.
    pub key: String,
}

/// Why a key operation failed.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// A field of the request is invalid.
    #[error("{message}")]
    Invalid {
        /// The field (`name`, `scopes`, ...).
        field: &'static str,
        /// What is wrong, naming it.
        message: String,
    },
    /// No key with this id.
    #[error("no API key `{0}`")]
    NotFound(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Why a presented key was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Refusal {
    /// Not a key this server made.
    #[error("unknown API key")]
    Unknown,
    /// Revoked.
    #[error("API key `{0}` was revoked")]
    Revoked(String),
    /// Past its expiry.
    #[error("API key `{0}` has expired")]
    Expired(String),
    /// The person it belongs to is disabled or gone.
    #[error("API key `{0}` belongs to a user who is disabled or removed")]
    OwnerGone(String),
    /// Over its requests per minute.
    #[error("API key `{prefix}` is limited to {rpm} requests per minute")]
    RateLimited {
        /// The key's prefix.
        prefix: String,
        /// Its limit.
        rpm: u32,
        /// When the next request is allowed.
        retry_after: Duration,
    },
}

/// One key in memory.
#[derive(Debug)]
struct Entry {
    record: KeyRecord,
    bucket: Option<Bucket>,
    last_used: AtomicI64,
}

impl Entry {
    fn new(record: KeyRecord) -> Self {
        let bucket =
            record.rpm.map(|rpm| Bucket::new(rpm, Duration::from_secs(60), Instant::now()));
        Self { record, bucket, last_used: AtomicI64::new(0) }
    }

    fn view(&self) -> KeyView {
        let r = &self.record;
        let last = self.last_used.load(Relaxed);
        KeyView {
            id: r.id.clone(),
            name: r.name.clone(),
            prefix: r.prefix.clone(),
            scopes: r.scopes.clone(),
            created_at: r.created_at,
            expires_at: r.expires_at,
            budget_usd: r.budget_usd,
            rpm: r.rpm,
            revoked_at: r.revoked_at,
            last_used_at: (last > 0).then_some(last),
            user_id: r.user_id.clone(),
        }
    }
}

/// The key ring.
#[derive(Debug)]
pub struct ApiKeys {
    store: Arc<Store>,
    /// Whose keys they are: a key does no more than its person's role allows.
    users: Arc<Users>,
    /// What each key has spent, for the budgets.
    ledger: Arc<UsageLedger>,
    /// By digest; replaced entries keep their bucket only if their limit is unchanged.
    by_hash: RwLock<HashMap<String, Arc<Entry>>>,
}

fn now_ms() -> i64 {
    i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis()),
    )
    .unwrap_or(i64::MAX)
}

impl ApiKeys {
    /// The keys stored in `store`. A record that cannot be read is skipped with an error in
    /// the log (its key then fails to authenticate, which is the safe side).
    #[base::boxed]
    pub async fn load(
        store: Arc<Store>,
        ledger: Arc<UsageLedger>,
        users: Arc<Users>,
    ) -> Result<Self, StoreError> {
        let keys = Self { store, users, ledger, by_hash: RwLock::new(HashMap::new()) };
        keys.reload().await?;
        Ok(keys)
    }

    /// Re-reads the stored keys (at start, and when another node of a shared store made or
    /// revoked one). An unchanged key keeps its entry, and with it its rate bucket.
    #[base::boxed]
    pub async fn reload(&self) -> Result<(), StoreError> {
        let mut records = Vec::new();
        for value in self.store.api_keys().await? {
            match serde_json::from_value::<KeyRecord>(value) {
                Ok(r) => records.push(r),
                Err(e) => tracing::error!(error = %e, "skipping an unreadable API key record"),
            }
        }
        let mut by_hash = self.by_hash.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        let old = std::mem::take(&mut *by_hash);
        for r in records {
            let entry = match old.get(&r.hash) {
                Some(e) if e.record == r => e.clone(),
                _ => Arc::new(Entry::new(r)),
            };
            by_hash.insert(entry.record.hash.clone(), entry);
        }
        Ok(())
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<String, Arc<Entry>>> {
        self.by_hash.read().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Makes a key for `owner` (`None`: the server token's, i.e. the first admin's); its
    /// secret is in the answer and nowhere else.
    #[base::boxed]
    pub async fn create(
        &self,
        request: NewKeyRequest,
        owner: Option<UserId>,
    ) -> Result<CreatedKey, KeyError> {
        let name = request.name.trim();
        if name.is_empty() || name.chars().count() > MAX_NAME_LEN {
            return Err(KeyError::Invalid {
                field: "name",
                message: format!("`name` must be 1 to {MAX_NAME_LEN} characters"),
            });
        }
        if request.scopes.is_empty() {
            let all: Vec<&str> = Scope::ALL.iter().map(|s| s.as_str()).collect();
            return Err(KeyError::Invalid {
                field: "scopes",
                message: format!("`scopes` must name at least one of: {}", all.join(", ")),
            });
        }
        let now = now_ms();
        if request.expires_at.is_some_and(|t| t <= now) {
            return Err(KeyError::Invalid {
                field: "expiresAt",
                message: "`expiresAt` must be in the future".into(),
            });
        }
        if request.budget_usd.is_some_and(|b| !(b.is_finite() && b > 0.0)) {
            return Err(KeyError::Invalid {
                field: "budgetUsd",
                message: "`budgetUsd` must be a positive number".into(),
            });
        }
        if request.rpm == Some(0) {
            return Err(KeyError::Invalid {
                field: "rpm",
                message: "`rpm` must be at least 1".into(),
            });
        }
        let mut scopes = request.scopes;
        scopes.sort();
        scopes.dedup();
        let new = NewKey::generate();
        let record = KeyRecord {
            id: format!("key_{}", uuid::Uuid::now_v7().simple()),
            name: name.to_owned(),
            prefix: new.prefix.clone(),
            hash: new.hash.clone(),
            scopes,
            created_at: now,
            expires_at: request.expires_at,
            budget_usd: request.budget_usd,
            rpm: request.rpm,
            revoked_at: None,
            user_id: owner,
        };
        self.save(&record).await?;
        let entry = Arc::new(Entry::new(record));
        let view = entry.view();
        self.by_hash
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(new.hash.clone(), entry);
        Ok(CreatedKey { view, key: new.secret })
    }

    async fn save(&self, record: &KeyRecord) -> Result<(), KeyError> {
        let value = serde_json::to_value(record)
            .map_err(|e| KeyError::Store(StoreError::Storage(format!("serialize key: {e}"))))?;
        self.store.put_api_key(&record.id, value).await?;
        Ok(())
    }

    /// Every key, newest first.
    pub fn list(&self) -> Vec<KeyView> {
        let mut keys: Vec<KeyView> = self.read().values().map(|e| e.view()).collect();
        keys.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
        keys
    }

    /// Revokes a key: it is kept (and listed) but refused from now on. Revoking a revoked key
    /// changes nothing.
    #[base::boxed]
    pub async fn revoke(&self, id: &str) -> Result<KeyView, KeyError> {
        let entry = self
            .read()
            .values()
            .find(|e| e.record.id == id)
            .cloned()
            .ok_or_else(|| KeyError::NotFound(id.to_owned()))?;
        if entry.record.revoked_at.is_some() {
            return Ok(entry.view());
        }
        let mut record = entry.record.clone();
        record.revoked_at = Some(now_ms());
        self.save(&record).await?;
        let revoked = Arc::new(Entry::new(record));
        revoked.last_used.store(entry.last_used.load(Relaxed), Relaxed);
        let view = revoked.view();
        self.by_hash
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(entry.record.hash.clone(), revoked);
        Ok(view)
    }

    /// Why key `id` may not spend more (its budget is used up), if it may not.
    pub fn over_budget(&self, id: &str) -> Option<String> {
        let entry = self.read().values().find(|e| e.record.id == id).cloned()?;
        let budget = entry.record.budget_usd?;
        let spent = self.ledger.spent(id);
        (spent >= budget).then(|| {
            format!(
                "API key `{}` has spent ${spent:.4} of its ${budget:.2} budget; the owner can \
                 make a new key or raise the budget",
                entry.record.prefix
            )
        })
    }

    /// Who `secret` is, counting the request against the key's rate.
    pub fn authenticate(&self, secret: &str) -> Result<Principal, Refusal> {
        let entry = self.read().get(&digest(secret)).cloned().ok_or(Refusal::Unknown)?;
        let r = &entry.record;
        if r.revoked_at.is_some() {
            return Err(Refusal::Revoked(r.prefix.clone()));
        }
        let now = now_ms();
        if r.expires_at.is_some_and(|t| t <= now) {
            return Err(Refusal::Expired(r.prefix.clone()));
        }
        if let (Some(bucket), Some(rpm)) = (&entry.bucket, r.rpm)
            && let Err(wait) = bucket.reserve(Instant::now(), Duration::ZERO)
        {
            return Err(Refusal::RateLimited { prefix: r.prefix.clone(), rpm, retry_after: wait });
        }
        let user = match &r.user_id {
            Some(id) => match self.users.get(id).filter(|u| !u.disabled) {
                Some(u) => Some(u.person()),
                None => return Err(Refusal::OwnerGone(r.prefix.clone())),
            },
            None => self.users.first_admin().map(|u| u.person()),
        };
        entry.last_used.store(now, Relaxed);
        Ok(Principal::Key { id: r.id.clone(), scopes: r.scopes.clone(), user })
    }
}
