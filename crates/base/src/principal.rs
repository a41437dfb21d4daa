//! Who a request is ([`Principal`]), what people may do ([`Role`]) and what a credential may do
//! ([`Scope`]): the values every service checks, whichever door (REST, WebSocket, `/v1`,
//! `/mcp`, an agent's tools) the request came through. Here, at the bottom, so every layer can
//! take a caller.
//!
//! Knows nothing of HTTP or storage: `server::guard` makes a principal from a credential,
//! `access` keeps the accounts, sessions and keys behind it.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// What a key may do. The server token may do everything.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Read dashboards, their data and the data-source registry; watch them over `/ws`; the
    /// read tools and resources of `/mcp`.
    Read,
    /// Change dashboards; call the dashboard tools (over `/mcp` too); preview panel code.
    Write,
    /// Run agents and read their chats (`/api/query`, `/v1/agents/...`).
    Agents,
    /// Call models through the OpenAI-compatible API (`/v1/models`, `/v1/chat/completions`).
    Models,
    /// Read `/metrics`.
    Metrics,
    /// Everything, including keys, usage and settings.
    Admin,
}

impl Scope {
    /// Every scope, in order.
    pub const ALL: [Scope; 6] =
        [Scope::Read, Scope::Write, Scope::Agents, Scope::Models, Scope::Metrics, Scope::Admin];

    /// The scope's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
            Self::Agents => "agents",
            Self::Models => "models",
            Self::Metrics => "metrics",
            Self::Admin => "admin",
        }
    }
}

/// A user's id (`u_` and a time-ordered UUID).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct UserId(Arc<str>);

impl UserId {
    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&str> for UserId {
    fn from(s: &str) -> Self {
        Self(s.into())
    }
}

impl fmt::Display for UserId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a person may do, ordered from least to most.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Sees the dashboards shared with them, refreshes them and sets their own variable
    /// values; never writes, never runs an agent, never the shell.
    Viewer,
    /// Creates and edits dashboards, runs agents, calls models.
    Editor,
    /// Everything: users, providers, settings, every key, every dashboard.
    Admin,
}

impl Role {
    /// Every role, least first.
    pub const ALL: [Role; 3] = [Role::Viewer, Role::Editor, Role::Admin];

    /// The role's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Viewer => "viewer",
            Self::Editor => "editor",
            Self::Admin => "admin",
        }
    }

    /// The role named `s`.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str().eq_ignore_ascii_case(s.trim()))
    }

    /// Whether the role allows what `scope` stands for: a viewer reads, an editor also writes,
    /// runs agents and calls models, an admin does everything (metrics and administration too).
    pub fn allows(self, scope: Scope) -> bool {
        match self {
            Self::Admin => true,
            Self::Editor => {
                matches!(scope, Scope::Read | Scope::Write | Scope::Agents | Scope::Models)
            }
            Self::Viewer => scope == Scope::Read,
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A person as a request carries them: who, and with what role as of this request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    /// Their id.
    pub id: UserId,
    /// Their sign-in name.
    pub username: String,
    /// Their role now.
    pub role: Role,
}

/// Who a request is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    /// The server token as a bearer credential (the CLI, emergencies), or anyone when the
    /// server runs without authentication: everything.
    Owner,
    /// A signed-in person (a session cookie).
    User(Person),
    /// An API key. It never does more than its scopes, nor more than the role of the person
    /// it belongs to (`None`: a key made with the server token, before accounts existed).
    Key {
        /// The key's id.
        id: String,
        /// What it may do.
        scopes: Vec<Scope>,
        /// Whose it is.
        user: Option<Person>,
    },
}

impl Principal {
    /// Whether it may do what `scope` allows (`admin` allows everything).
    pub fn allows(&self, scope: Scope) -> bool {
        match self {
            Self::Owner => true,
            Self::User(p) => p.role.allows(scope),
            Self::Key { scopes, user, .. } => {
                (scopes.contains(&scope) || scopes.contains(&Scope::Admin))
                    && user.as_ref().is_none_or(|p| p.role.allows(scope))
            }
        }
    }

    /// The key's id (none for the owner and people).
    pub fn key_id(&self) -> Option<&str> {
        match self {
            Self::Key { id, .. } => Some(id),
            Self::Owner | Self::User(_) => None,
        }
    }

    /// The person behind the request: the signed-in user, or the user a key belongs to.
    pub fn person(&self) -> Option<&Person> {
        match self {
            Self::User(p) => Some(p),
            Self::Key { user, .. } => user.as_ref(),
            Self::Owner => None,
        }
    }

    /// Whose data the request acts on: the person's id; `None` for the owner (and for a key
    /// made before accounts), whose data is the first admin's.
    pub fn user_id(&self) -> Option<&UserId> {
        self.person().map(|p| &p.id)
    }

    /// Whether it sees and manages everyone's data: the owner, an admin, an admin's key with
    /// the `admin` scope.
    pub fn is_admin(&self) -> bool {
        self.allows(Scope::Admin)
    }

    /// The name what a credential holds is counted and kept under: `owner`, `key:ID`, or
    /// `user:ID` (all of a person's browser sessions together).
    pub fn holder(&self) -> String {
        match self {
            Self::Owner => "owner".into(),
            Self::User(p) => format!("user:{}", p.id),
            Self::Key { id, .. } => format!("key:{id}"),
        }
    }

    /// A short name for logs and the audit trail (`owner`, `user:alice`, `key:key_…`).
    pub fn label(&self) -> String {
        match self {
            Self::Owner => "owner".into(),
            Self::User(p) => format!("user:{}", p.username),
            Self::Key { id, .. } => format!("key:{id}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn person(role: Role) -> Person {
        Person { id: "u_1".into(), username: "ann".into(), role }
    }

    #[test]
    fn roles_allow_what_they_say_and_keys_never_exceed_their_person() {
        assert!(Role::Viewer < Role::Editor && Role::Editor < Role::Admin);
        for scope in Scope::ALL {
            assert!(Role::Admin.allows(scope));
            assert_eq!(Role::Viewer.allows(scope), scope == Scope::Read, "{scope:?}");
        }
        assert!(Role::Editor.allows(Scope::Write) && !Role::Editor.allows(Scope::Admin));
        assert!(!Role::Editor.allows(Scope::Metrics));
        let viewer_admin_key = Principal::Key {
            id: "k".into(),
            scopes: vec![Scope::Admin],
            user: Some(person(Role::Viewer)),
        };
        assert!(viewer_admin_key.allows(Scope::Read));
        assert!(!viewer_admin_key.allows(Scope::Write), "a key never exceeds its person's role");
        assert!(!viewer_admin_key.is_admin());
        let legacy = Principal::Key { id: "k".into(), scopes: vec![Scope::Write], user: None };
        assert!(legacy.allows(Scope::Write) && !legacy.allows(Scope::Agents));
        assert!(Principal::Owner.is_admin() && Principal::User(person(Role::Admin)).is_admin());
        assert!(!Principal::User(person(Role::Editor)).is_admin());
        assert_eq!(Role::parse(" Editor "), Some(Role::Editor));
        assert_eq!(Role::parse("root"), None);
        assert_eq!(Principal::User(person(Role::Viewer)).label(), "user:ann");
    }

    #[test]
    fn admin_allows_every_scope() {
        let key = Principal::Key { id: "k".into(), scopes: vec![Scope::Read], user: None };
        assert!(key.allows(Scope::Read) && !key.allows(Scope::Write));
        let admin = Principal::Key { id: "k".into(), scopes: vec![Scope::Admin], user: None };
        assert!(Scope::ALL.iter().all(|s| admin.allows(*s) && Principal::Owner.allows(*s)));
    }
}
