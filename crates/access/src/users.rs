//! User accounts: the one owner of the user records (kept in the store, passwords only as
//! argon2id PHC strings), an in-memory index by id and by name, and password checks.
//!
//! Names are case-insensitive (kept lowercased). The server always keeps one enabled admin:
//! removing, disabling or demoting the last one is refused. The *first admin* (the earliest
//! enabled admin) owns what was made before accounts existed and is who the server token's
//! sign-in link signs in as ([`Users::first_admin`], [`Users::ensure_first_admin`]).
//!
//! Password hashing is slow on purpose (tens of milliseconds and 19 MiB each), so it runs on
//! the blocking pool, at most [`HASHES_AT_ONCE`] at a time: a flood of sign-in attempts waits
//! for a slot instead of taking every core and the memory. Knows nothing of HTTP or sessions.

use std::collections::HashMap;
use std::sync::{Arc, RwLock, RwLockReadGuard};

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher as _, PasswordVerifier as _, SaltString};
use rand::RngCore as _;
use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;

use crate::principal::{Person, Role, UserId};
use store::{Record, Store, StoreError};

/// Shortest password accepted.
pub const MIN_PASSWORD_LEN: usize = 10;
/// Longest password accepted (bytes): hashing a megabyte on every attempt is a cost anyone could
/// make us pay.
pub const MAX_PASSWORD_BYTES: usize = 1024;
/// Longest user name.
pub const MAX_USERNAME_LEN: usize = 64;
/// Longest display name or email.
const MAX_TEXT_LEN: usize = 200;
/// Password hashes computed at once.
pub const HASHES_AT_ONCE: usize = 2;

/// A user as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct UserRecord {
    id: UserId,
    /// Lowercased; unique.
    username: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    display_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    email: Option<String>,
    role: Role,
    /// argon2id PHC string; `None`: no password sign-in (a new bootstrap admin, an OpenID user).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    password_hash: Option<String>,
    #[serde(default)]
    disabled: bool,
    /// Unix milliseconds.
    created_at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_sign_in_at: Option<i64>,
    /// The OpenID Connect identity this account is linked to (`issuer`, `subject`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    oidc: Option<OidcLink>,
}

/// An account's OpenID Connect identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OidcLink {
    /// The issuer URL.
    pub issuer: String,
    /// The `sub` claim.
    pub subject: String,
}

/// A user as listed (never the hash).
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserView {
    /// `u_…`.
    #[schema(value_type = String)]
    pub id: UserId,
    /// Sign-in name.
    pub username: String,
    /// Name shown in the app.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// Email address.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// What they may do.
    pub role: Role,
    /// Refused at sign-in, their sessions and keys refused.
    pub disabled: bool,
    /// Whether they can sign in with a password.
    pub has_password: bool,
    /// Whether they sign in through OpenID Connect.
    pub sso: bool,
    /// Unix milliseconds.
    pub created_at: i64,
    /// Their latest sign-in, Unix milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_sign_in_at: Option<i64>,
}

impl UserView {
    /// The person a request of this user carries.
    pub fn person(&self) -> Person {
        Person { id: self.id.clone(), username: self.username.clone(), role: self.role }
    }
}

/// A new account.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewUser {
    /// Sign-in name: 1 to 64 of `a-z 0-9 . _ @ -` (case-insensitive).
    pub username: String,
    /// At least 10 characters; absent: one is generated and answered once.
    #[serde(default)]
    pub password: Option<String>,
    /// What they may do.
    pub role: Role,
    /// Name shown in the app.
    #[serde(default)]
    pub display_name: Option<String>,
    /// Email address.
    #[serde(default)]
    pub email: Option<String>,
}

/// A change to an account; absent fields stay as they are.
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UserPatch {
    /// A new role.
    #[serde(default)]
    pub role: Option<Role>,
    /// A new display name (empty: none).
    #[serde(default)]
    pub display_name: Option<String>,
    /// A new email (empty: none).
    #[serde(default)]
    pub email: Option<String>,
    /// Disable or enable.
    #[serde(default)]
    pub disabled: Option<bool>,
    /// A new password.
    #[serde(default)]
    pub password: Option<String>,
}

/// An account just made, with the password generated for it (shown once) when none was given.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreatedUser {
    /// The account.
    #[serde(flatten)]
    pub user: UserView,
    /// The generated password: not stored, not shown again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
}

/// What changed in an update, for the caller to act on (sessions, the audit trail).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Changed {
    /// The role changed.
    pub role: bool,
    /// The account was disabled.
    pub disabled: bool,
    /// The password changed.
    pub password: bool,
}

/// Why an account operation failed.
#[derive(Debug, thiserror::Error)]
pub enum UserError {
    /// A field is invalid.
    #[error("{message}")]
    Invalid {
        /// The field.
        field: &'static str,
        /// What is wrong, naming it.
        message: String,
    },
    /// No such user.
    #[error("no user `{0}`")]
    NotFound(String),
    /// The name is taken.
    #[error("the user name `{0}` is taken")]
    Taken(String),
    /// The change would leave no enabled admin.
    #[error("this would leave the server without an enabled admin; make another user admin first")]
    LastAdmin,
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The account ring.
#[derive(Debug)]
pub struct Users {
    store: Arc<Store>,
    by_id: RwLock<HashMap<UserId, UserRecord>>,
    hashing: Semaphore,
    /// Verified against when a name is unknown, so an unknown name costs what a wrong password
    /// costs (no timing tells which names exist).
    decoy: String,
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

impl Users {
    /// The accounts stored in `store`. An unreadable record is skipped with an error in the
    /// log (that user cannot sign in: the safe side).
    #[base::boxed]
    pub async fn load(store: Arc<Store>) -> Result<Arc<Self>, StoreError> {
        let decoy = hash_blocking(&crate::keys::random_base62())
            .map_err(|e| StoreError::Storage(format!("password hashing: {e}")))?;
        let users = Arc::new(Self {
            store,
            by_id: RwLock::new(HashMap::new()),
            hashing: Semaphore::new(HASHES_AT_ONCE),
            decoy,
        });
        users.reload().await?;
        Ok(users)
    }

    /// Re-reads the accounts (at start, and when another node changed one).
    #[base::boxed]
    pub async fn reload(&self) -> Result<(), StoreError> {
        let mut by_id = HashMap::new();
        for value in self.store.records(Record::User).await? {
            match serde_json::from_value::<UserRecord>(value) {
                Ok(r) => {
                    by_id.insert(r.id.clone(), r);
                }
                Err(e) => tracing::error!(error = %e, "skipping an unreadable user record"),
            }
        }
        *self.by_id.write().unwrap_or_else(std::sync::PoisonError::into_inner) = by_id;
        Ok(())
    }

    fn read(&self) -> RwLockReadGuard<'_, HashMap<UserId, UserRecord>> {
        self.by_id.read().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether any account exists.
    pub fn is_empty(&self) -> bool {
        self.read().is_empty()
    }

    /// Every account, by name.
    pub fn list(&self) -> Vec<UserView> {
        let mut users: Vec<UserView> = self.read().values().map(view).collect();
        users.sort_by(|a, b| a.username.cmp(&b.username));
        users
    }

    /// One account.
    pub fn get(&self, id: &UserId) -> Option<UserView> {
        self.read().get(id).map(view)
    }

    /// The account named `username` (any case).
    pub fn by_name(&self, username: &str) -> Option<UserView> {
        let name = username.trim().to_lowercase();
        self.read().values().find(|r| r.username == name).map(view)
    }

    /// The account linked to this OpenID identity.
    pub fn by_oidc(&self, issuer: &str, subject: &str) -> Option<UserView> {
        self.read()
            .values()
            .find(|r| r.oidc.as_ref().is_some_and(|o| o.issuer == issuer && o.subject == subject))
            .map(view)
    }

    /// The earliest enabled admin: owner of what was made before accounts existed.
    pub fn first_admin(&self) -> Option<UserView> {
        self.read()
            .values()
            .filter(|r| r.role == Role::Admin && !r.disabled)
            .min_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)))
            .map(view)
    }

    /// The first admin, made (`admin`, no password) when there is none: what the server
    /// token's sign-in link signs in as. `true`: it was made now.
    #[base::boxed]
    pub async fn ensure_first_admin(&self) -> Result<(UserView, bool), UserError> {
        if let Some(admin) = self.first_admin() {
            return Ok((admin, false));
        }
        let name = self.free_name("admin");
        let record = UserRecord {
            id: crate::principal::new_user_id(),
            username: name,
            display_name: None,
            email: None,
            role: Role::Admin,
            password_hash: None,
            disabled: false,
            created_at: now_ms(),
            last_sign_in_at: None,
            oidc: None,
        };
        self.save(record.clone()).await?;
        Ok((view(&record), true))
    }

    /// Makes an account; a password is generated (and answered once) when none is given.
    #[base::boxed]
    pub async fn create(&self, new: NewUser) -> Result<CreatedUser, UserError> {
        let username = check_username(&new.username)?;
        if self.by_name(&username).is_some() {
            return Err(UserError::Taken(username));
        }
        let (password, generated) = match new.password {
            Some(p) => (p, false),
            None => (generate_password(), true),
        };
        check_password(&password)?;
        let hash = self.hash(&password).await?;
        let record = UserRecord {
            id: crate::principal::new_user_id(),
            username,
            display_name: clean_text("displayName", new.display_name)?,
            email: clean_email(new.email)?,
            role: new.role,
            password_hash: Some(hash),
            disabled: false,
            created_at: now_ms(),
            last_sign_in_at: None,
            oidc: None,
        };
        self.save(record.clone()).await?;
        Ok(CreatedUser { user: view(&record), password: generated.then_some(password) })
    }

    /// Makes an account for an OpenID identity seen for the first time (no password).
    #[base::boxed]
    pub async fn create_linked(
        &self,
        username: &str,
        display_name: Option<String>,
        email: Option<String>,
        role: Role,
        link: OidcLink,
    ) -> Result<UserView, UserError> {
        let name = self.free_name(&check_username(username).unwrap_or_else(|_| "user".into()));
        let record = UserRecord {
            id: crate::principal::new_user_id(),
            username: name,
            display_name: clean_text("displayName", display_name).ok().flatten(),
            email: clean_email(email).ok().flatten(),
            role,
            password_hash: None,
            disabled: false,
            created_at: now_ms(),
            last_sign_in_at: None,
            oidc: Some(link),
        };
        self.save(record.clone()).await?;
        Ok(view(&record))
    }

    /// The account an OpenID identity signs in as: made on its first sign-in (its name
    /// from the identity, made free), and after that given the role the provider's claims say
    /// now (except where that would leave no enabled admin: then it keeps its role). `None`:
    /// the account is disabled.
    #[base::boxed]
    pub async fn linked(&self, who: &crate::oidc::Identity) -> Result<Option<UserView>, UserError> {
        let Some(user) = self.by_oidc(&who.issuer, &who.subject) else {
            let link = OidcLink { issuer: who.issuer.clone(), subject: who.subject.clone() };
            let (name, email) = (who.display_name.clone(), who.email.clone());
            return self.create_linked(&who.username, name, email, who.role, link).await.map(Some);
        };
        if user.disabled {
            return Ok(None);
        }
        if user.role == who.role {
            return Ok(Some(user));
        }
        let patch = UserPatch { role: Some(who.role), ..UserPatch::default() };
        match self.update(&user.id, patch).await {
            Ok((changed, _)) => Ok(Some(changed)),
            Err(UserError::LastAdmin) => Ok(Some(user)),
            Err(e) => Err(e),
        }
    }

    /// Changes an account. Refused when it would leave no enabled admin.
    #[base::boxed]
    pub async fn update(
        &self,
        id: &UserId,
        patch: UserPatch,
    ) -> Result<(UserView, Changed), UserError> {
        let old =
            self.read().get(id).cloned().ok_or_else(|| UserError::NotFound(id.to_string()))?;
        let mut r = old.clone();
        if let Some(role) = patch.role {
            r.role = role;
        }
        if let Some(d) = patch.disabled {
            r.disabled = d;
        }
        if patch.display_name.is_some() {
            r.display_name = clean_text("displayName", patch.display_name)?;
        }
        if patch.email.is_some() {
            r.email = clean_email(patch.email)?;
        }
        if let Some(p) = &patch.password {
            check_password(p)?;
        }
        let was_admin = old.role == Role::Admin && !old.disabled;
        let is_admin = r.role == Role::Admin && !r.disabled;
        if was_admin && !is_admin && self.enabled_admins() <= 1 {
            return Err(UserError::LastAdmin);
        }
        let changed = Changed {
            role: r.role != old.role,
            disabled: r.disabled && !old.disabled,
            password: patch.password.is_some(),
        };
        if let Some(p) = patch.password {
            r.password_hash = Some(self.hash(&p).await?);
        }
        self.save(r.clone()).await?;
        Ok((view(&r), changed))
    }

    /// Removes an account. Refused for the last enabled admin.
    #[base::boxed]
    pub async fn delete(&self, id: &UserId) -> Result<UserView, UserError> {
        let r = self.read().get(id).cloned().ok_or_else(|| UserError::NotFound(id.to_string()))?;
        if r.role == Role::Admin && !r.disabled && self.enabled_admins() <= 1 {
            return Err(UserError::LastAdmin);
        }
        self.store.delete_record(Record::User, id.as_str()).await?;
        self.by_id.write().unwrap_or_else(std::sync::PoisonError::into_inner).remove(id);
        Ok(view(&r))
    }

    /// Notes a successful sign-in.
    #[base::boxed]
    pub async fn signed_in(&self, id: &UserId) -> Result<(), UserError> {
        let Some(mut r) = self.read().get(id).cloned() else { return Ok(()) };
        r.last_sign_in_at = Some(now_ms());
        self.save(r).await
    }

    /// The enabled account `username` names when `password` is its password; `None` for an
    /// unknown name, a wrong password, a disabled account or one without a password, all
    /// taking the same time.
    #[base::boxed]
    pub async fn verify(&self, username: &str, password: &str) -> Option<UserView> {
        let name = username.trim().to_lowercase();
        let found = self.read().values().find(|r| r.username == name).cloned();
        let hash = found
            .as_ref()
            .and_then(|r| r.password_hash.clone())
            .unwrap_or_else(|| self.decoy.clone());
        let too_long = password.len() > MAX_PASSWORD_BYTES;
        let ok = !too_long && self.check(&hash, password).await;
        match found {
            Some(r) if ok && !r.disabled && r.password_hash.is_some() => Some(view(&r)),
            _ => None,
        }
    }

    /// Whether `password` is user `id`'s password.
    #[base::boxed]
    pub async fn password_matches(&self, id: &UserId, password: &str) -> bool {
        let Some(hash) = self.read().get(id).and_then(|r| r.password_hash.clone()) else {
            return false;
        };
        password.len() <= MAX_PASSWORD_BYTES && self.check(&hash, password).await
    }

    /// `base`, or `base2`, `base3`, … whichever is not taken.
    fn free_name(&self, base: &str) -> String {
        let mut name = base.to_owned();
        let mut n = 1;
        while self.by_name(&name).is_some() {
            n += 1;
            name = format!("{base}{n}");
        }
        name
    }

    fn enabled_admins(&self) -> usize {
        self.read().values().filter(|r| r.role == Role::Admin && !r.disabled).count()
    }

    async fn save(&self, record: UserRecord) -> Result<(), UserError> {
        let value = serde_json::to_value(&record)
            .map_err(|e| StoreError::Storage(format!("serialize user: {e}")))?;
        self.store.put_record(Record::User, record.id.as_str(), &value).await?;
        self.by_id
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(record.id.clone(), record);
        Ok(())
    }

    async fn hash(&self, password: &str) -> Result<String, UserError> {
        let _slot = self.hashing.acquire().await.map_err(|_| StoreError::Closed)?;
        let password = password.to_owned();
        tokio::task::spawn_blocking(move || hash_blocking(&password))
            .await
            .map_err(|e| StoreError::Storage(format!("password hashing: {e}")))?
            .map_err(|e| UserError::Store(StoreError::Storage(format!("password hashing: {e}"))))
    }

    async fn check(&self, hash: &str, password: &str) -> bool {
        let Ok(_slot) = self.hashing.acquire().await else { return false };
        let (hash, password) = (hash.to_owned(), password.to_owned());
        tokio::task::spawn_blocking(move || {
            PasswordHash::new(&hash)
                .is_ok_and(|h| Argon2::default().verify_password(password.as_bytes(), &h).is_ok())
        })
        .await
        .unwrap_or(false)
    }
}

fn view(r: &UserRecord) -> UserView {
    UserView {
        id: r.id.clone(),
        username: r.username.clone(),
        display_name: r.display_name.clone(),
        email: r.email.clone(),
        role: r.role,
        disabled: r.disabled,
        has_password: r.password_hash.is_some(),
        sso: r.oidc.is_some(),
        created_at: r.created_at,
        last_sign_in_at: r.last_sign_in_at,
    }
}

/// argon2id with the crate's default (OWASP-recommended) parameters and a random salt.
fn hash_blocking(password: &str) -> Result<String, argon2::password_hash::Error> {
    let mut salt = [0u8; 16];
    rand::rng().fill_bytes(&mut salt);
    let salt = SaltString::encode_b64(&salt)?;
    Ok(Argon2::default().hash_password(password.as_bytes(), &salt)?.to_string())
}

/// A password for an account made without one: 20 base62 characters (119 bits).
pub fn generate_password() -> String {
    crate::keys::random_base62().chars().take(20).collect()
}

fn check_username(name: &str) -> Result<String, UserError> {
    let name = name.trim().to_lowercase();
    let ok = !name.is_empty()
        && name.chars().count() <= MAX_USERNAME_LEN
        && name.chars().all(|c| c.is_ascii_alphanumeric() || "._@-".contains(c));
    if ok {
        Ok(name)
    } else {
        Err(UserError::Invalid {
            field: "username",
            message: format!(
                "`username` must be 1 to {MAX_USERNAME_LEN} of the characters a-z 0-9 . _ @ -"
            ),
        })
    }
}

/// Checks a new password's length.
pub fn check_password(password: &str) -> Result<(), UserError> {
    if password.chars().count() < MIN_PASSWORD_LEN || password.len() > MAX_PASSWORD_BYTES {
        return Err(UserError::Invalid {
            field: "password",
            message: format!(
                "the password must be at least {MIN_PASSWORD_LEN} characters (and at most \
                 {MAX_PASSWORD_BYTES} bytes)"
            ),
        });
    }
    Ok(())
}

fn clean_text(field: &'static str, text: Option<String>) -> Result<Option<String>, UserError> {
    let Some(t) = text.map(|t| t.trim().to_owned()).filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    if t.chars().count() > MAX_TEXT_LEN || t.chars().any(char::is_control) {
        return Err(UserError::Invalid {
            field,
            message: format!("`{field}` must be at most {MAX_TEXT_LEN} printable characters"),
        });
    }
    Ok(Some(t))
}

fn clean_email(email: Option<String>) -> Result<Option<String>, UserError> {
    let email = clean_text("email", email)?;
    if let Some(e) = &email
        && !(e.contains('@') && !e.starts_with('@') && !e.ends_with('@') && !e.contains(' '))
    {
        return Err(UserError::Invalid {
            field: "email",
            message: format!("`email` `{e}` is not an email address"),
        });
    }
    Ok(email)
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn users() -> (tempfile::TempDir, Arc<Users>) {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Store::open(dir.path()).unwrap());
        (dir, Users::load(store).await.unwrap())
    }

    fn new(name: &str, role: Role) -> NewUser {
        NewUser {
            username: name.into(),
            password: Some("correct horse battery".into()),
            role,
            display_name: None,
            email: None,
        }
    }

    #[tokio::test]
    async fn passwords_are_argon2id_and_verify_only_for_enabled_accounts() {
        let (dir, users) = users().await;
        let ann = users.create(new("Ann", Role::Editor)).await.unwrap().user;
        assert_eq!(ann.username, "ann", "names are case-insensitive");
        assert!(users.verify("ANN", "correct horse battery").await.is_some());
        assert!(users.verify("ann", "correct horse batterx").await.is_none());
        assert!(users.verify("nobody", "correct horse battery").await.is_none());
        let stored = users.store.record(Record::User, ann.id.as_str()).await.unwrap().unwrap();
        let hash = stored["passwordHash"].as_str().unwrap();
        assert!(hash.starts_with("$argon2id$"), "{hash}");
        assert!(!stored.to_string().contains("correct horse"));
        users
            .update(&ann.id, UserPatch { disabled: Some(true), ..UserPatch::default() })
            .await
            .unwrap();
        assert!(users.verify("ann", "correct horse battery").await.is_none(), "disabled");
        // A reload (another node's view) reads the same.
        let again = Users::load(users.store.clone()).await.unwrap();
        assert!(again.get(&ann.id).unwrap().disabled);
        drop(dir);
    }

    #[tokio::test]
    async fn names_passwords_and_the_last_admin_are_guarded() {
        let (_dir, users) = users().await;
        let (admin, made) = users.ensure_first_admin().await.unwrap();
        assert!(made && admin.username == "admin" && !admin.has_password);
        let (same, made) = users.ensure_first_admin().await.unwrap();
        assert!(!made && same.id == admin.id);
        assert!(matches!(users.create(new("ADMIN", Role::Viewer)).await, Err(UserError::Taken(_))));
        for bad in ["", "a b", "x/y", &"a".repeat(65)] {
            assert!(matches!(
                users.create(new(bad, Role::Viewer)).await,
                Err(UserError::Invalid { field: "username", .. })
            ));
        }
        let mut short = new("bob", Role::Viewer);
        short.password = Some("short".into());
        assert!(matches!(
            users.create(short).await,
            Err(UserError::Invalid { field: "password", .. })
        ));
        let mut generated = new("bob", Role::Viewer);
        generated.password = None;
        let bob = users.create(generated).await.unwrap();
        let pw = bob.password.clone().unwrap();
        assert_eq!(pw.len(), 20);
        assert!(users.verify("bob", &pw).await.is_some());
        // The only admin cannot be demoted, disabled or deleted.
        let demote = UserPatch { role: Some(Role::Editor), ..UserPatch::default() };
        assert!(matches!(users.update(&admin.id, demote.clone()).await, Err(UserError::LastAdmin)));
        assert!(matches!(users.delete(&admin.id).await, Err(UserError::LastAdmin)));
        let promote = UserPatch { role: Some(Role::Admin), ..UserPatch::default() };
        let (_, changed) = users.update(&bob.user.id, promote).await.unwrap();
        assert!(changed.role && !changed.password);
        users.update(&admin.id, demote).await.unwrap();
        assert_eq!(users.first_admin().unwrap().id, bob.user.id);
    }
}
