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

/// Who did something, as it is written down (the audit trail, a version's author): the
/// person, the key, or the server token. Names as they were then.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Actor {
    /// The person.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    /// Their name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// The API key, when one was used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_id: Option<String>,
    /// The server token (the CLI, emergencies, or a server without authentication).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub token: bool,
}

impl Actor {
    /// The actor of a request.
    pub fn of(principal: &Principal) -> Self {
        let person = principal.person();
        Self {
            user_id: person.map(|p| p.id.to_string()),
            username: person.map(|p| p.username.clone()),
            key_id: principal.key_id().map(str::to_owned),
            token: matches!(principal, Principal::Owner),
        }
    }
}

/// Through what a dashboard changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Via {
    /// The web app or the REST API (`/api/dashboards`, `/api/tools`).
    Rest,
    /// An agent's tool call in a chat, for the person the run is for.
    Agent,
    /// An MCP client's tool call.
    Mcp,
    /// A workflow step.
    Workflow,
    /// The server itself: the starter templates, a command-line import.
    System,
}

/// Who saved a dashboard version: the actor, through what, and where (the chat of an agent,
/// the name an MCP client gave). A share link never writes, so never authors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Author {
    /// Who.
    #[serde(flatten)]
    pub actor: Actor,
    /// Through what.
    pub via: Via,
    /// The chat the agent ran in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat: Option<String>,
    /// The MCP client's name (its `clientInfo`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
}

impl Author {
    /// `principal` through `via`.
    pub fn new(principal: &Principal, via: Via) -> Self {
        Self { actor: Actor::of(principal), via, chat: None, client: None }
    }

    /// The server itself (templates, imports).
    pub fn system() -> Self {
        Self { actor: Actor::default(), via: Via::System, chat: None, client: None }
    }

    /// An agent run for `principal` in `chat`.
    pub fn agent(principal: &Principal, chat: &str) -> Self {
        let chat = (!chat.is_empty()).then(|| chat.to_owned());
        Self { chat, ..Self::new(principal, Via::Agent) }
    }

    /// An MCP client's call for `principal`.
    pub fn mcp(principal: &Principal, client: Option<&str>) -> Self {
        Self { client: client.map(str::to_owned), ..Self::new(principal, Via::Mcp) }
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
    fn an_author_is_written_flat_and_reads_back() {
        let key =
            Principal::Key { id: "key_1".into(), scopes: vec![], user: Some(person(Role::Editor)) };
        let a = Author::agent(&key, "chat_9");
        let v = serde_json::to_value(&a).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"userId": "u_1", "username": "ann", "keyId": "key_1",
                               "via": "agent", "chat": "chat_9"})
        );
        assert_eq!(serde_json::from_value::<Author>(v).unwrap(), a);
        let token = serde_json::to_value(Author::new(&Principal::Owner, Via::Rest)).unwrap();
        assert_eq!(token, serde_json::json!({"token": true, "via": "rest"}));
        assert_eq!(Author::agent(&Principal::Owner, "").chat, None);
    }

    #[test]
    fn admin_allows_every_scope() {
        let key = Principal::Key { id: "k".into(), scopes: vec![Scope::Read], user: None };
        assert!(key.allows(Scope::Read) && !key.allows(Scope::Write));
        let admin = Principal::Key { id: "k".into(), scopes: vec![Scope::Admin], user: None };
        assert!(Scope::ALL.iter().all(|s| admin.allows(*s) && Principal::Owner.allows(*s)));
    }
}
