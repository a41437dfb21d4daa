//! Who may see and change each dashboard: its owner, its visibility (`private`: the owner, the
//! people it is shared with and admins; `team`: every signed-in person may look) and the people
//! it is shared with (`view` or `edit`). Kept in the store (kind `sharing`, by dashboard id) and
//! in memory here, re-read when another node changes one.
//!
//! The rules ([`Sharings::may`]): admins (and the server token, and keys made before accounts,
//! whose data is the first admin's) see and change everything; others see what they own, what
//! is shared with them and `team` dashboards, and change what they own or were given `edit` on —
//! and only if their role writes at all (a viewer given `edit` still only looks). A dashboard
//! made before accounts has no owner: it is the first admin's, so only admins see it until they
//! share it. A hidden dashboard is answered as missing, so its id tells nothing.

use std::collections::HashMap;
use std::sync::{Arc, RwLock, RwLockReadGuard};

use base::principal::{Principal, Scope, UserId};
use serde::{Deserialize, Serialize};
use store::{Record, Store, StoreError};

/// Who may look at a dashboard besides its owner and the people it is shared with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Visibility {
    /// Nobody else (admins always may).
    #[default]
    Private,
    /// Every signed-in person may look.
    Team,
}

/// What a person the dashboard is shared with may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Grant {
    /// Look (and refresh, and set their own variable values).
    View,
    /// Also change it (if their role writes).
    Edit,
}

/// One person a dashboard is shared with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Share {
    /// The person.
    #[schema(value_type = String)]
    pub user_id: UserId,
    /// What they may do.
    pub role: Grant,
}

/// A dashboard's owner and access.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Sharing {
    /// Who made it (absent: made before accounts, the first admin's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub owner: Option<UserId>,
    /// Who else may look.
    #[serde(default)]
    pub visibility: Visibility,
    /// The people it is shared with.
    #[serde(default)]
    pub users: Vec<Share>,
}

/// What a caller wants to do with a dashboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Read it, its versions and data; watch it; refresh it.
    View,
    /// Change it.
    Edit,
}

/// Why a caller may not.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Denied {
    /// They may not even see it: answered as missing.
    #[error("dashboard `{0}` not found")]
    Hidden(String),
    /// They may look but not change it.
    #[error(
        "dashboard `{0}` is shared with you to look at, not to change; ask its owner for edit \
         access"
    )]
    ReadOnly(String),
}

/// Every dashboard's sharing, in memory.
#[derive(Debug)]
pub struct Sharings {
    store: Arc<Store>,
    by_id: RwLock<HashMap<String, Sharing>>,
}

impl Sharings {
    /// Nothing loaded yet ([`Sharings::reload`]).
    pub fn new(store: Arc<Store>) -> Self {
        Self { store, by_id: RwLock::default() }
    }

    fn read(&self) -> RwLockReadGuard<'_, HashMap<String, Sharing>> {
        self.by_id.read().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Re-reads every dashboard's sharing (at start, and when another node changed one).
    #[base::boxed]
    pub async fn reload(&self) -> Result<(), StoreError> {
        let mut by_id = HashMap::new();
        for (id, value) in self.store.records_with_ids(Record::Sharing).await? {
            match serde_json::from_value::<Sharing>(value) {
                Ok(s) => {
                    by_id.insert(id, s);
                }
                Err(e) => tracing::error!(%id, error = %e, "skipping an unreadable sharing record"),
            }
        }
        *self.by_id.write().unwrap_or_else(std::sync::PoisonError::into_inner) = by_id;
        Ok(())
    }

    /// A dashboard's sharing (the default, ownerless and private, when none is stored).
    pub fn get(&self, id: &str) -> Sharing {
        self.read().get(id).cloned().unwrap_or_default()
    }

    /// Stores a dashboard's sharing.
    #[base::boxed]
    pub async fn set(&self, id: &str, sharing: Sharing) -> Result<(), StoreError> {
        let value = serde_json::to_value(&sharing)
            .map_err(|e| StoreError::Storage(format!("serialize sharing: {e}")))?;
        self.store.put_record(Record::Sharing, id, &value).await?;
        self.by_id
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(id.to_owned(), sharing);
        Ok(())
    }

    /// Forgets a purged dashboard's sharing.
    #[base::boxed]
    pub async fn remove(&self, id: &str) -> Result<(), StoreError> {
        self.store.delete_record(Record::Sharing, id).await?;
        self.by_id.write().unwrap_or_else(std::sync::PoisonError::into_inner).remove(id);
        Ok(())
    }

    /// Whether `principal` may do `need` with dashboard `id` (see the module doc).
    pub fn may(&self, principal: &Principal, id: &str, need: Need) -> Result<(), Denied> {
        let writes = principal.allows(Scope::Write);
        // The token, admins, and keys made before accounts (the first admin's) see all.
        let Some(person) = principal.person().filter(|_| !principal.is_admin()) else {
            return if need == Need::Edit && !writes {
                Err(Denied::ReadOnly(id.to_owned()))
            } else {
                Ok(())
            };
        };
        let sharing = self.read().get(id).cloned().unwrap_or_default();
        let grant = if sharing.owner.as_ref() == Some(&person.id) {
            Some(Grant::Edit)
        } else {
            let shared = sharing.users.iter().find(|s| s.user_id == person.id).map(|s| s.role);
            match (shared, sharing.visibility) {
                (Some(g), _) => Some(g),
                (None, Visibility::Team) => Some(Grant::View),
                (None, Visibility::Private) => None,
            }
        };
        match (grant, need) {
            (None, _) => Err(Denied::Hidden(id.to_owned())),
            (Some(_), Need::View) => Ok(()),
            (Some(Grant::Edit), Need::Edit) if writes => Ok(()),
            (Some(_), Need::Edit) => Err(Denied::ReadOnly(id.to_owned())),
        }
    }

    /// Whether `principal` may see dashboard `id`.
    pub fn sees(&self, principal: &Principal, id: &str) -> bool {
        self.may(principal, id, Need::View).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base::principal::{Person, Role};

    fn person(id: &str, role: Role) -> Principal {
        Principal::User(Person { id: id.into(), username: id.into(), role })
    }

    #[tokio::test]
    async fn owners_shares_team_and_roles_decide() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Store::open(dir.path()).unwrap());
        let s = Sharings::new(store.clone());
        let ann = person("ann", Role::Editor);
        let bob = person("bob", Role::Editor);
        let vic = person("vic", Role::Viewer);
        let admin = person("root", Role::Admin);
        // Made before accounts: only admins (and the token) see it.
        assert_eq!(s.may(&ann, "old", Need::View), Err(Denied::Hidden("old".into())));
        assert!(s.sees(&admin, "old") && s.sees(&Principal::Owner, "old"));
        let mine = Sharing { owner: Some("ann".into()), ..Sharing::default() };
        s.set("d1", mine).await.unwrap();
        assert!(s.may(&ann, "d1", Need::Edit).is_ok());
        assert!(!s.sees(&bob, "d1") && !s.sees(&vic, "d1"));
        assert!(s.may(&admin, "d1", Need::Edit).is_ok());
        let shared = Sharing {
            owner: Some("ann".into()),
            visibility: Visibility::Team,
            users: vec![
                Share { user_id: "bob".into(), role: Grant::Edit },
                Share { user_id: "vic".into(), role: Grant::Edit },
            ],
        };
        s.set("d1", shared).await.unwrap();
        assert!(s.may(&bob, "d1", Need::Edit).is_ok());
        assert_eq!(
            s.may(&vic, "d1", Need::Edit),
            Err(Denied::ReadOnly("d1".into())),
            "a viewer given edit still only looks"
        );
        let cid = person("cid", Role::Editor);
        assert!(s.sees(&cid, "d1"), "team");
        assert_eq!(s.may(&cid, "d1", Need::Edit), Err(Denied::ReadOnly("d1".into())));
        // Another node's view reads the same; a purge forgets it.
        let other = Sharings::new(store);
        other.reload().await.unwrap();
        assert_eq!(other.get("d1").users.len(), 2);
        other.remove("d1").await.unwrap();
        assert_eq!(other.get("d1"), Sharing::default());
    }
}
