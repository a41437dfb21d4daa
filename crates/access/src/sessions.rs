//! Sign-in sessions: what a browser's session cookie stands for. The cookie holds an opaque
//! random id (256 bits); the store keeps the session under the id's SHA-256 (a copy of the
//! store gives no usable cookie), with its person, role, how it signed in, and its idle and
//! absolute expiry. Every node reads the same records, so a sign-out on one is a sign-out on
//! all: nodes cache what they read and drop the cache when another node writes a session or an
//! account ([`Sessions::forget_cached`], driven by the store's notices).
//!
//! A session whose person's role changed is replaced by a new one (a new id, so an id seen
//! before the change never carries the new rights); one whose person is disabled or deleted is
//! over. Knows nothing of HTTP: `server::guard` reads the cookie and sets it.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::keys::{digest, random_base62};
use crate::principal::{Person, Role, UserId};
use crate::users::{UserView, Users};
use store::{Record, Store, StoreError};

/// How long sessions last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLimits {
    /// Unused this long, a session ends.
    pub idle: Duration,
    /// A session ends this long after sign-in, however used.
    pub absolute: Duration,
}

impl Default for SessionLimits {
    fn default() -> Self {
        Self {
            idle: Duration::from_secs(7 * 24 * 3600),
            absolute: Duration::from_secs(30 * 24 * 3600),
        }
    }
}

/// How a session was signed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Via {
    /// User name and password.
    Password,
    /// The server token's sign-in link.
    Token,
    /// OpenID Connect.
    Oidc,
}

/// A session as stored (under the digest of its cookie).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SessionRecord {
    user_id: UserId,
    /// The role it was signed in with: a different role now means a new session id.
    role: Role,
    via: Via,
    /// Unix milliseconds.
    created_at: i64,
    last_seen_at: i64,
    expires_at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    address: Option<String>,
}

/// A session just made: the cookie's value (given to the browser once, never stored).
pub struct NewSession {
    /// The cookie's value.
    pub cookie: String,
    /// When it ends at the latest, Unix milliseconds.
    pub expires_at: i64,
}

impl std::fmt::Debug for NewSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewSession").field("expires_at", &self.expires_at).finish_non_exhaustive()
    }
}

/// What a request learns of its session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// How it was signed in.
    pub via: Via,
    /// Unix milliseconds.
    pub created_at: i64,
    /// When it ends at the latest.
    pub expires_at: i64,
}

/// A valid session.
#[derive(Debug)]
pub struct Resolved {
    /// Who it is, with their role now.
    pub person: Person,
    /// The session.
    pub info: SessionInfo,
    /// The session was replaced (the role changed): the browser gets this cookie instead.
    pub replaced: Option<NewSession>,
}

/// Sessions read from the store and kept until another node's write (or this long).
const CACHED_AT_MOST: usize = 10_000;
/// A session's last use is written back at most this often.
const TOUCH_EVERY_MS: i64 = 60_000;

/// The sessions of every signed-in browser.
#[derive(Debug)]
pub struct Sessions {
    store: Arc<Store>,
    users: Arc<Users>,
    limits: SessionLimits,
    /// By digest: what this node read or wrote.
    cache: Mutex<HashMap<String, SessionRecord>>,
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

impl Sessions {
    /// Sessions kept in `store` for the accounts of `users`.
    pub fn new(store: Arc<Store>, users: Arc<Users>, limits: SessionLimits) -> Arc<Self> {
        Arc::new(Self { store, users, limits, cache: Mutex::default() })
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, HashMap<String, SessionRecord>> {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Signs `user` in: a new session and its cookie.
    #[base::boxed]
    pub async fn start(
        &self,
        user: &UserView,
        via: Via,
        address: Option<IpAddr>,
    ) -> Result<NewSession, StoreError> {
        let now = now_ms();
        let record = SessionRecord {
            user_id: user.id.clone(),
            role: user.role,
            via,
            created_at: now,
            last_seen_at: now,
            expires_at: now.saturating_add(ms(self.limits.absolute)),
            address: address.map(|a| a.to_string()),
        };
        self.begin(record).await
    }

    async fn begin(&self, record: SessionRecord) -> Result<NewSession, StoreError> {
        let cookie = random_base62();
        let id = digest(&cookie);
        self.put(&id, &record).await?;
        Ok(NewSession { cookie, expires_at: record.expires_at })
    }

    async fn put(&self, id: &str, record: &SessionRecord) -> Result<(), StoreError> {
        let value = serde_json::to_value(record)
            .map_err(|e| StoreError::Storage(format!("serialize session: {e}")))?;
        self.store.put_record(Record::SignIn, id, &value).await?;
        let mut cache = self.cache();
        if cache.len() >= CACHED_AT_MOST {
            cache.clear();
        }
        cache.insert(id.to_owned(), record.clone());
        Ok(())
    }

    async fn lookup(&self, id: &str) -> Result<Option<SessionRecord>, StoreError> {
        if let Some(r) = self.cache().get(id) {
            return Ok(Some(r.clone()));
        }
        let Some(value) = self.store.record(Record::SignIn, id).await? else { return Ok(None) };
        let record: SessionRecord = serde_json::from_value(value)
            .map_err(|e| StoreError::Damaged(format!("a session record: {e}")))?;
        let mut cache = self.cache();
        if cache.len() >= CACHED_AT_MOST {
            cache.clear();
        }
        cache.insert(id.to_owned(), record.clone());
        Ok(Some(record))
    }

    /// Who the session with this cookie is, if it is valid now. A store failure is logged and
    /// reads as no session (the safe side).
    #[base::boxed]
    pub async fn resolve(&self, cookie: &str) -> Option<Resolved> {
        // Our cookies are 43 base62 characters: anything else is not worth a store read.
        if cookie.len() != 43 || !cookie.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return None;
        }
        let id = digest(cookie);
        let record = match self.lookup(&id).await {
            Ok(r) => r?,
            Err(e) => {
                tracing::error!(error = %e, "reading a session failed");
                return None;
            }
        };
        let now = now_ms();
        let user = self.users.get(&record.user_id);
        let over = record.expires_at <= now
            || record.last_seen_at.saturating_add(ms(self.limits.idle)) <= now
            || user.as_ref().is_none_or(|u| u.disabled);
        let Some(user) = user.filter(|_| !over) else {
            self.remove(&id).await;
            return None;
        };
        if user.role != record.role {
            // A new id for the new rights; the old one ends now.
            let renewed = SessionRecord { role: user.role, last_seen_at: now, ..record.clone() };
            let replaced = match self.begin(renewed).await {
                Ok(s) => s,
                Err(e) => {
                    tracing::error!(error = %e, "replacing a session after a role change failed");
                    return None;
                }
            };
            self.remove(&id).await;
            return Some(Resolved {
                person: user.person(),
                info: info(&record),
                replaced: Some(replaced),
            });
        }
        if now - record.last_seen_at >= TOUCH_EVERY_MS {
            let touched = SessionRecord { last_seen_at: now, ..record.clone() };
            if let Err(e) = self.put(&id, &touched).await {
                tracing::warn!(error = %e, "noting a session's use failed");
            }
        }
        Some(Resolved { person: user.person(), info: info(&record), replaced: None })
    }

    /// Who the session with this cookie is now, if it is still valid — without noting its use
    /// or replacing it (a long-lived connection checking that its session still stands).
    #[base::boxed]
    pub async fn peek(&self, cookie: &str) -> Option<Person> {
        let record = self.lookup(&digest(cookie)).await.ok().flatten()?;
        let now = now_ms();
        if record.expires_at <= now
            || record.last_seen_at.saturating_add(ms(self.limits.idle)) <= now
        {
            return None;
        }
        self.users.get(&record.user_id).filter(|u| !u.disabled).map(|u| u.person())
    }

    async fn remove(&self, id: &str) {
        self.cache().remove(id);
        if let Err(e) = self.store.delete_record(Record::SignIn, id).await {
            tracing::warn!(error = %e, "removing a session failed");
        }
    }

    /// Ends the session with this cookie (signing out): whose it was.
    #[base::boxed]
    pub async fn end(&self, cookie: &str) -> Option<UserId> {
        let id = digest(cookie);
        let record = self.lookup(&id).await.ok().flatten();
        self.remove(&id).await;
        record.map(|r| r.user_id)
    }

    /// Ends every session of `user` on every node: how many there were.
    #[base::boxed]
    pub async fn end_all(&self, user: &UserId) -> Result<usize, StoreError> {
        let mut ended = 0;
        for (id, value) in self.store.records_with_ids(Record::SignIn).await? {
            let theirs =
                serde_json::from_value::<SessionRecord>(value).map_or(true, |r| r.user_id == *user);
            if theirs {
                self.remove(&id).await;
                ended += 1;
            }
        }
        Ok(ended)
    }

    /// Removes sessions past their expiry: how many.
    #[base::boxed]
    pub async fn sweep(&self) -> Result<usize, StoreError> {
        let now = now_ms();
        let mut swept = 0;
        for (id, value) in self.store.records_with_ids(Record::SignIn).await? {
            let over = serde_json::from_value::<SessionRecord>(value).map_or(true, |r| {
                r.expires_at <= now || r.last_seen_at.saturating_add(ms(self.limits.idle)) <= now
            });
            if over {
                self.remove(&id).await;
                swept += 1;
            }
        }
        Ok(swept)
    }

    /// Drops what this node read: another node wrote a session or an account.
    pub fn forget_cached(&self) {
        self.cache().clear();
    }
}

fn info(r: &SessionRecord) -> SessionInfo {
    SessionInfo { via: r.via, created_at: r.created_at, expires_at: r.expires_at }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::users::{NewUser, UserPatch};

    async fn setup(limits: SessionLimits) -> (tempfile::TempDir, Arc<Users>, Arc<Sessions>) {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Store::open(dir.path()).unwrap());
        let users = Users::load(store.clone()).await.unwrap();
        let sessions = Sessions::new(store, users.clone(), limits);
        (dir, users, sessions)
    }

    async fn ann(users: &Users) -> UserView {
        users
            .create(NewUser {
                username: "ann".into(),
                password: Some("long enough password".into()),
                role: Role::Editor,
                display_name: None,
                email: None,
            })
            .await
            .unwrap()
            .user
    }

    #[tokio::test]
    async fn a_cookie_is_opaque_stored_as_a_digest_and_ends_on_sign_out() {
        let (_dir, users, sessions) = setup(SessionLimits::default()).await;
        let ann = ann(&users).await;
        let s = sessions.start(&ann, Via::Password, None).await.unwrap();
        assert_eq!(s.cookie.len(), 43);
        assert!(!format!("{s:?}").contains(&s.cookie));
        let stored = sessions.store.records_with_ids(Record::SignIn).await.unwrap();
        assert_eq!(stored.len(), 1);
        assert_eq!(stored[0].0, digest(&s.cookie), "stored under the digest, never the cookie");
        assert!(!stored[0].1.to_string().contains(&s.cookie));
        let r = sessions.resolve(&s.cookie).await.unwrap();
        assert_eq!(r.person.id, ann.id);
        assert!(r.replaced.is_none());
        assert!(sessions.resolve("x").await.is_none());
        assert_eq!(sessions.end(&s.cookie).await, Some(ann.id.clone()));
        assert!(sessions.resolve(&s.cookie).await.is_none());
    }

    #[tokio::test]
    async fn role_changes_replace_the_id_and_disabling_ends_every_session() {
        let (_dir, users, sessions) = setup(SessionLimits::default()).await;
        let ann = ann(&users).await;
        let a = sessions.start(&ann, Via::Password, None).await.unwrap();
        let b = sessions.start(&ann, Via::Password, None).await.unwrap();
        users
            .update(&ann.id, UserPatch { role: Some(Role::Viewer), ..UserPatch::default() })
            .await
            .unwrap();
        let r = sessions.resolve(&a.cookie).await.unwrap();
        assert_eq!(r.person.role, Role::Viewer);
        let new = r.replaced.expect("a new id after the role change");
        assert!(sessions.resolve(&a.cookie).await.is_none(), "the old id is over");
        assert!(sessions.resolve(&new.cookie).await.unwrap().replaced.is_none());
        assert_eq!(sessions.end_all(&ann.id).await.unwrap(), 2);
        assert!(sessions.resolve(&new.cookie).await.is_none());
        assert!(sessions.resolve(&b.cookie).await.is_none());
        let c = sessions.start(&ann, Via::Password, None).await.unwrap();
        users
            .update(&ann.id, UserPatch { disabled: Some(true), ..UserPatch::default() })
            .await
            .unwrap();
        assert!(sessions.resolve(&c.cookie).await.is_none(), "a disabled person has none");
    }

    #[tokio::test]
    async fn idle_and_absolute_expiry_end_sessions() {
        let limits =
            SessionLimits { idle: Duration::from_millis(50), absolute: Duration::from_secs(60) };
        let (_dir, users, sessions) = setup(limits).await;
        let ann = ann(&users).await;
        let s = sessions.start(&ann, Via::Password, None).await.unwrap();
        tokio::time::sleep(Duration::from_millis(80)).await;
        assert!(sessions.resolve(&s.cookie).await.is_none(), "idle too long");
        let limits =
            SessionLimits { idle: Duration::from_secs(60), absolute: Duration::from_millis(50) };
        let (_dir, users, sessions) = setup(limits).await;
        let ann = self::ann(&users).await;
        let s = sessions.start(&ann, Via::Password, None).await.unwrap();
        let t = sessions.start(&ann, Via::Password, None).await.unwrap();
        assert!(sessions.resolve(&s.cookie).await.is_some());
        tokio::time::sleep(Duration::from_millis(80)).await;
        assert!(sessions.resolve(&s.cookie).await.is_none(), "past the absolute limit");
        assert_eq!(sessions.sweep().await.unwrap(), 1, "the other one is swept");
        assert!(sessions.resolve(&t.cookie).await.is_none());
    }
}
