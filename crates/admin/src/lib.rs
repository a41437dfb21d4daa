//! Admin: the providers, models, agents and settings an administrator defines at run time
//! (`/api/admin/...`), persisted in the store's `admin` table and layered over the files.
//!
//! Which wins: a definition made here wins over the file of the same name (a provider over
//! `[providers.NAME]` or the environment's shortcut, a model entry over the file's, an agent
//! over `agents/NAME.json` and the built-in, the default model over `[llm] default`); deleting
//! it brings the file's back. `BOARDSMITH_MODEL` still forces every call's model. Changes apply
//! at once, without a restart: the model configuration is swapped (providers reconnect with
//! the new settings; calls already running finish on the old ones) and the catalog reloads.
//!
//! Every change is validated before anything is written (the same checks as the files, a 400
//! naming the field), then persisted, then applied, one change at a time. Provider keys are
//! write-only: sealed at rest ([`sealed`]), never returned (a hint of the last four characters
//! is), and bound to where they were sent: a change of a provider's kind or base URL that does
//! not send its key again drops the stored one, so a key never follows its provider to a new
//! address (nor does an environment key: see [`llm::config::Overlay`] on `apiKeyEnv`).
//! Owns the admin records; knows nothing of HTTP.

mod mcp;
pub mod sealed;

pub use mcp::McpServerView;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use agent::catalog::{Catalog, Origin as CatalogOrigin, Section};
use agent::definition;
use agent::prompt_template::{self, PromptTemplate, Templates};
use agent::tools::mcp::{McpHub, McpServerFile};
use llm::config::{
    ModelSpec, Origin, Overlay, OverlayError, OverlayProvider, ProviderConfig, ProviderSpec,
};
use llm::models::Models;
use llm::provider::{ApiKey, Family, ProviderKind};
use sealed::{SealError, Sealer};
use store::{Store, StoreError};

/// Why an admin request was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    /// The definition is invalid; `field` names where (`baseUrl`, `react.maxSteps`).
    #[error("{message}")]
    Invalid {
        /// Where.
        field: String,
        /// What is wrong (every problem, for agents).
        message: String,
    },
    /// Nothing defined here by that name.
    #[error("{0}")]
    NotFound(String),
    /// A name defined only by a file or the environment, which the API does not edit.
    #[error("{0}")]
    NotEditable(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A stored key could not be opened.
    #[error(transparent)]
    Seal(#[from] SealError),
}

impl From<OverlayError> for AdminError {
    fn from(e: OverlayError) -> Self {
        Self::Invalid { message: e.to_string(), field: e.field }
    }
}

/// A provider as `PUT /api/admin/providers/{key}` takes it.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProviderInput {
    /// Wire protocol: `openai` (any OpenAI-compatible server), `anthropic` or `ollama`.
    #[schema(value_type = String, example = "openai")]
    pub kind: ProviderKind,
    /// Base URL (OpenAI-compatible: up to and including `/v1`); may be left out for built-in
    /// keys (`openai`, `deepseek`, ...) and for Anthropic and Ollama.
    #[serde(default)]
    pub base_url: Option<String>,
    /// Dialect of an OpenAI-compatible server: auto, openai, deepseek, qwen, doubao, generic.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub family: Option<Family>,
    /// The key to store (sealed at rest, never shown again). Left out: the stored key is kept
    /// if `kind` and `baseUrl` are unchanged, and dropped otherwise (send it again).
    #[serde(default)]
    pub api_key: Option<String>,
    /// Removes the stored key.
    #[serde(default)]
    pub clear_api_key: bool,
    /// Read the key from this environment variable instead of storing one: only a variable
    /// the server already reads a provider's key from (`OPENAI_API_KEY`, ..., or a file
    /// provider's), for that provider's kind and URL; never `BOARDSMITH_*`.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Whether calls fail without a key (default: every kind but Ollama).
    #[serde(default)]
    pub requires_key: Option<bool>,
    /// The model used when only the provider is named.
    #[serde(default)]
    pub default_model: Option<String>,
}

/// A configured provider, as the admin API shows it (never its key).
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProviderView {
    /// The provider key.
    pub key: String,
    /// Wire protocol (`openai`, `anthropic`, `ollama`).
    #[schema(value_type = String)]
    pub kind: ProviderKind,
    /// Base URL.
    pub base_url: String,
    /// Where the definition in force comes from: `file`, `env` or `admin`.
    pub origin: String,
    /// A definition made here replaces the file's or the environment's.
    pub overrides: bool,
    /// Whether a key is set (stored, or in its variable).
    pub has_key: bool,
    /// The stored key's last four characters (`…a1b2`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_hint: Option<String>,
    /// The variable the key is read from, when it comes from the environment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// The model used when only the provider is named.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_model: Option<String>,
}

/// Settings of the whole server.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Settings {
    /// The model every agent without its own uses (`provider/model`), over `[llm] default`;
    /// `null` or empty: the file's.
    #[serde(default)]
    pub default_model: Option<String>,
    /// Whether the next provider of a method (demo data, where that is next) serves while one
    /// is unavailable, over `BOARDSMITH_DATA_FALLBACK` and `[data] fallback`; `null`: theirs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_fallback: Option<bool>,
    /// Chats untouched this many days are deleted, over `MEMORY_CHAT_RETENTION_DAYS`; `null`:
    /// that variable's (none: kept for good).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1)]
    pub chat_retention_days: Option<u32>,
    /// The SMTP relay e-mail channels send through, over `[smtp]` in `boardsmith.toml`;
    /// `null`: the file's. Its `password` is sealed at rest and never answered; left out, the
    /// stored one stays while the host is the same; `""` removes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mail: Option<base::mail::MailRelay>,
}

/// The settings and what is in force.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SettingsView {
    /// What was set here.
    pub settings: Settings,
    /// The default model reference in force (here, else the file's), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effective_default_model: Option<String>,
    /// `BOARDSMITH_MODEL`, which forces every call's model, if set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forced_model: Option<String>,
    /// Whether `settings.mail` has a password stored.
    pub mail_password_set: bool,
}

/// An agent in the catalog, as the admin API lists it.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentView {
    /// The agent key (its file name without `.json`).
    pub key: String,
    /// `builtin`, `file` or `admin`.
    pub origin: String,
    /// Its description.
    pub description: String,
    /// A definition made here is stored (whether or not it loaded).
    pub stored: bool,
    /// Why the definition in force did not load, or its warnings.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

/// One stored record, tagged by kind (the `admin` table's value).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
enum Record {
    #[serde(rename_all = "camelCase")]
    Provider {
        spec: ProviderSpec,
        sealed_key: Option<String>,
        key_hint: Option<String>,
    },
    Model {
        spec: ModelSpec,
    },
    #[serde(rename_all = "camelCase")]
    Agent {
        key: String,
        text: String,
    },
    Settings {
        settings: Settings,
    },
    Prompt {
        template: PromptTemplate,
    },
    /// An MCP server agents refer to by name; its `env` and `headers` values sealed.
    McpServer {
        server: McpServerFile,
    },
}

impl Record {
    fn id(&self) -> String {
        match self {
            Record::Provider { spec, .. } => format!("provider:{}", spec.key),
            Record::Model { spec } => model_id(&spec.provider, &spec.id),
            Record::Agent { key, .. } => format!("agent:{key}"),
            Record::Settings { .. } => "settings".to_owned(),
            Record::Prompt { template } => format!("prompt:{}", template.name),
            Record::McpServer { server } => format!("mcp:{}", server.name),
        }
    }
}

fn model_id(provider: &str, id: &str) -> String {
    format!("model:{provider}/{id}")
}

/// What is stored, by record id.
#[derive(Debug, Clone, Default)]
struct State {
    records: BTreeMap<String, Record>,
}

impl State {
    fn with(&self, record: Record) -> State {
        let mut next = self.clone();
        next.records.insert(record.id(), record);
        next
    }

    fn without(&self, id: &str) -> State {
        let mut next = self.clone();
        next.records.remove(id);
        next
    }

    fn agents(&self) -> BTreeMap<String, Arc<str>> {
        self.records
            .values()
            .filter_map(|r| match r {
                Record::Agent { key, text } => Some((key.clone(), Arc::from(text.as_str()))),
                _ => None,
            })
            .collect()
    }

    fn templates(&self) -> Templates {
        self.records
            .values()
            .filter_map(|r| match r {
                Record::Prompt { template } => {
                    Some((template.name.clone(), Arc::from(template.text.as_str())))
                }
                _ => None,
            })
            .collect()
    }

    fn settings(&self) -> Settings {
        match self.records.get("settings") {
            Some(Record::Settings { settings }) => settings.clone(),
            _ => Settings::default(),
        }
    }
}

/// A relay's fields as a sender needs them (the sending itself checks the addresses).
fn check_mail(mail: &mut base::mail::MailRelay) -> Result<(), AdminError> {
    let bad = |field: &str, message: &str| {
        Err(AdminError::Invalid { field: format!("mail.{field}"), message: message.into() })
    };
    mail.host = mail.host.trim().to_owned();
    mail.from = mail.from.trim().to_owned();
    if mail.host.is_empty() || mail.host.contains(['/', ' ', ':']) {
        return bad(
            "host",
            "mail.host is the relay's host name or address, without port or scheme",
        );
    }
    if mail.port == Some(0) {
        return bad("port", "mail.port is 1 to 65535 (null: the usual one)");
    }
    if !mail.from.contains('@') {
        return bad("from", "mail.from is the sender's address, such as alerts@example.com");
    }
    if mail.username.as_deref().is_some_and(|u| u.trim().is_empty()) {
        mail.username = None;
    }
    Ok(())
}

/// The admin service.
pub struct Admin {
    store: Arc<Store>,
    models: Arc<Models>,
    catalog: Arc<Catalog>,
    sealer: Sealer,
    /// Where MCP servers defined here go (`None`: nowhere; they are still stored).
    mcp: Option<McpHub>,
    /// One change at a time: validate, persist, apply.
    state: tokio::sync::Mutex<State>,
}

/// Reads the process environment (only the variables an admin provider names).
fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

impl Admin {
    /// Loads what is stored and applies it. A stored definition that no longer applies (a
    /// key sealed under another key file, a provider the file now lacks) is logged and left
    /// out rather than keeping the server from starting.
    #[base::boxed]
    pub async fn load(
        store: Arc<Store>,
        models: Arc<Models>,
        catalog: Arc<Catalog>,
        sealer: Sealer,
        mcp: Option<McpHub>,
    ) -> Result<Self, AdminError> {
        let admin = Self {
            store,
            models,
            catalog,
            sealer,
            mcp,
            state: tokio::sync::Mutex::new(State::default()),
        };
        admin.reload().await?;
        Ok(admin)
    }

    /// Reads the stored definitions and applies them (at start, and when another node of a
    /// shared store changed one), leniently: what does not apply is logged and left out.
    #[base::boxed]
    pub async fn reload(&self) -> Result<(), AdminError> {
        let mut guard = self.state.lock().await;
        let mut state = State::default();
        for value in self.store.admin_records().await? {
            match serde_json::from_value::<Record>(value) {
                Ok(r) => {
                    state.records.insert(r.id(), r);
                }
                Err(e) => tracing::warn!("admin: a stored definition is unreadable: {e}"),
            }
        }
        let overlay = self.overlay(&state, true)?;
        if let Err(e) = self.models.apply(&overlay, &process_env) {
            tracing::warn!(
                "admin: stored providers and models do not apply ({e}); leaving them out"
            );
        }
        self.catalog.set_prompt_templates(state.templates()).await;
        self.catalog.set_stored_agents(state.agents()).await;
        self.apply_mcp(&state, true);
        *guard = state;
        Ok(())
    }

    /// The overlay of `state`. A stored key that cannot be opened is an error, or with
    /// `lenient` (at start) a warning and no key.
    fn overlay(&self, state: &State, lenient: bool) -> Result<Overlay, AdminError> {
        let mut overlay =
            Overlay { default_model: state.settings().default_model, ..Overlay::default() };
        for r in state.records.values() {
            match r {
                Record::Provider { spec, sealed_key, .. } => {
                    let key = match sealed_key.as_deref().map(|s| self.sealer.open(s)) {
                        None => None,
                        Some(Ok(k)) => Some(ApiKey::new(k)),
                        Some(Err(e)) if lenient => {
                            tracing::warn!(provider = %spec.key, "admin: {e}");
                            None
                        }
                        Some(Err(e)) => return Err(e.into()),
                    };
                    overlay.providers.push(OverlayProvider { spec: spec.clone(), key });
                }
                Record::Model { spec } => overlay.models.push(spec.clone()),
                Record::Agent { .. }
                | Record::Settings { .. }
                | Record::Prompt { .. }
                | Record::McpServer { .. } => {}
            }
        }
        Ok(overlay)
    }

    /// Writes `record` to the store under its id.
    async fn persist(&self, record: &Record) -> Result<(), AdminError> {
        let value = serde_json::to_value(record).map_err(|e| StoreError::Storage(e.to_string()))?;
        Ok(self.store.put_admin(&record.id(), value).await?)
    }

    /// Validates `next` (providers, models and settings together), persists `put` or removes
    /// `delete`, then applies it.
    async fn commit(
        &self,
        current: &mut State,
        next: State,
        change: Change,
    ) -> Result<(), AdminError> {
        let overlay = self.overlay(&next, false)?;
        self.models.check(&overlay, &process_env)?;
        match change {
            Change::Put(record) => self.persist(&record).await?,
            Change::Delete(id) => self.store.delete_admin(&id).await?,
        }
        self.models.apply(&overlay, &process_env)?;
        *current = next;
        Ok(())
    }

    // ---- providers ----------------------------------------------------------------------

    /// Every configured provider (file, environment and admin), in resolution order.
    #[base::boxed]
    pub async fn providers(&self) -> Vec<ProviderView> {
        let state = self.state.lock().await;
        let config = self.models.config();
        config.providers().iter().map(|p| self.provider_view(&state, p)).collect()
    }

    fn provider_view(&self, state: &State, p: &ProviderConfig) -> ProviderView {
        let stored = match state.records.get(&format!("provider:{}", p.key)) {
            Some(Record::Provider { key_hint, .. }) => Some(key_hint.clone()),
            _ => None,
        };
        let overrides = p.origin == Origin::Admin && self.models.base().provider(&p.key).is_some();
        ProviderView {
            key: p.key.clone(),
            kind: p.kind,
            base_url: p.base_url.clone(),
            origin: match p.origin {
                Origin::File => "file",
                Origin::Env => "env",
                Origin::Admin => "admin",
            }
            .to_owned(),
            overrides,
            has_key: p.has_key(),
            key_hint: stored.flatten(),
            api_key_env: p.api_key_env.clone(),
            default_model: p.default_model.clone(),
        }
    }

    /// Creates or replaces the provider `key`; the answer is its view.
    #[base::boxed]
    pub async fn put_provider(
        &self,
        key: &str,
        input: ProviderInput,
    ) -> Result<ProviderView, AdminError> {
        let mut state = self.state.lock().await;
        let spec = ProviderSpec {
            key: key.to_owned(),
            kind: input.kind,
            base_url: input.base_url,
            family: input.family,
            api_key_env: input.api_key_env,
            requires_key: input.requires_key,
            default_model: input.default_model,
        };
        // The stored key stays only while it is sent where it was sent before.
        let previous = match state.records.get(&format!("provider:{key}")) {
            Some(Record::Provider { spec: before, sealed_key, key_hint })
                if before.destination().is_some() && before.destination() == spec.destination() =>
            {
                (sealed_key.clone(), key_hint.clone())
            }
            _ => (None, None),
        };
        let (sealed_key, key_hint) = match (
            input.api_key.as_deref().map(str::trim),
            input.clear_api_key,
        ) {
            (Some(_), true) => {
                return Err(AdminError::Invalid {
                    field: "apiKey".into(),
                    message: "`apiKey` and `clearApiKey` together: send one".into(),
                });
            }
            (Some(""), false) => {
                return Err(AdminError::Invalid {
                    field: "apiKey".into(),
                    message: "empty: leave `apiKey` out to keep the stored key, or send `clearApiKey: true`".into(),
                });
            }
            (Some(k), false) => (Some(self.sealer.seal(k)), Some(hint(k))),
            (None, true) => (None, None),
            (None, false) => previous,
        };
        let record = Record::Provider { spec, sealed_key, key_hint };
        let next = state.with(record.clone());
        self.commit(&mut state, next, Change::Put(record)).await?;
        let config = self.models.config();
        let p = config
            .provider(key)
            .ok_or_else(|| AdminError::NotFound(format!("provider `{key}`")))?;
        Ok(self.provider_view(&state, p))
    }

    /// Removes the provider defined here as `key` (a file's or the environment's of the same
    /// name comes back), and the model entries defined here for it.
    #[base::boxed]
    pub async fn delete_provider(&self, key: &str) -> Result<(), AdminError> {
        let mut state = self.state.lock().await;
        let id = format!("provider:{key}");
        if !state.records.contains_key(&id) {
            return Err(self.not_here("provider", key, self.models.base().provider(key).is_some()));
        }
        let mut next = state.without(&id);
        let orphans: Vec<String> = next
            .records
            .iter()
            .filter(|(_, r)| matches!(r, Record::Model { spec } if spec.provider == key))
            .map(|(id, _)| id.clone())
            .collect();
        if self.models.base().provider(key).is_none() {
            for o in &orphans {
                next.records.remove(o);
                self.store.delete_admin(o).await?;
            }
        }
        self.commit(&mut state, next, Change::Delete(id)).await
    }

    fn not_here(&self, what: &str, name: &str, in_files: bool) -> AdminError {
        if in_files {
            AdminError::NotEditable(format!(
                "{what} `{name}` is defined by the configuration file or the environment, not \
                 here: change it there, or PUT a definition here to replace it"
            ))
        } else {
            AdminError::NotFound(format!("no {what} `{name}` is defined here"))
        }
    }

    // ---- models ---------------------------------------------------------------------------

    /// The model entries defined here.
    #[base::boxed]
    pub async fn models(&self) -> Vec<ModelSpec> {
        let state = self.state.lock().await;
        state
            .records
            .values()
            .filter_map(|r| match r {
                Record::Model { spec } => Some(spec.clone()),
                _ => None,
            })
            .collect()
    }

    /// Creates or replaces the entry of `spec.provider`/`spec.id`.
    #[base::boxed]
    pub async fn put_model(&self, spec: ModelSpec) -> Result<ModelSpec, AdminError> {
        let mut state = self.state.lock().await;
        let record = Record::Model { spec: spec.clone() };
        let next = state.with(record.clone());
        self.commit(&mut state, next, Change::Put(record)).await?;
        Ok(spec)
    }

    /// Removes the entry defined here for `provider`/`id`.
    #[base::boxed]
    pub async fn delete_model(&self, provider: &str, id: &str) -> Result<(), AdminError> {
        let mut state = self.state.lock().await;
        let rid = model_id(provider, id);
        if !state.records.contains_key(&rid) {
            return Err(AdminError::NotFound(format!(
                "no model entry `{provider}/{id}` is defined here"
            )));
        }
        let next = state.without(&rid);
        self.commit(&mut state, next, Change::Delete(rid)).await
    }

    // ---- settings -------------------------------------------------------------------------

    /// The settings and what is in force.
    #[base::boxed]
    pub async fn settings(&self) -> SettingsView {
        let state = self.state.lock().await;
        self.settings_view(&state)
    }

    fn settings_view(&self, state: &State) -> SettingsView {
        let config = self.models.config();
        let mut settings = state.settings();
        let mail_password_set = settings.mail.as_mut().and_then(|m| m.password.take()).is_some();
        SettingsView {
            settings,
            effective_default_model: config.default_model().map(str::to_owned),
            forced_model: config.forced_model().map(str::to_owned),
            mail_password_set,
        }
    }

    /// The mail relay set here, its password opened; `None`: none is set (or its password
    /// cannot be opened, which is logged).
    #[base::boxed]
    pub async fn mail_relay(&self) -> Option<base::mail::MailRelay> {
        let mut relay = self.state.lock().await.settings().mail?;
        if let Some(sealed) = relay.password.take() {
            match self.sealer.open(&sealed) {
                Ok(p) => relay.password = Some(p),
                Err(e) => {
                    tracing::warn!(error = %e, "the mail relay's password cannot be opened");
                    return None;
                }
            }
        }
        Some(relay)
    }

    /// Replaces the settings.
    #[base::boxed]
    pub async fn put_settings(&self, mut settings: Settings) -> Result<SettingsView, AdminError> {
        if settings.chat_retention_days == Some(0) {
            return Err(AdminError::Invalid {
                field: "chatRetentionDays".into(),
                message: "chatRetentionDays is a number of days, 1 or more (null: keep chats)"
                    .into(),
            });
        }
        let mut state = self.state.lock().await;
        settings.default_model =
            settings.default_model.map(|m| m.trim().to_owned()).filter(|m| !m.is_empty());
        if let Some(mail) = &mut settings.mail {
            check_mail(mail)?;
            // The stored password stays only while mail goes to the same host.
            let previous = state.settings().mail.filter(|m| m.host == mail.host);
            mail.password = match mail.password.as_deref() {
                Some("") => None,
                Some(p) => Some(self.sealer.seal(p)),
                None => previous.and_then(|m| m.password),
            };
        }
        let record = Record::Settings { settings };
        let next = state.with(record.clone());
        self.commit(&mut state, next, Change::Put(record)).await?;
        Ok(self.settings_view(&state))
    }

    // ---- agents ---------------------------------------------------------------------------

    /// Every agent of the catalog, with where its definition comes from.
    #[base::boxed]
    pub async fn agents(&self) -> Vec<AgentView> {
        let state = self.state.lock().await;
        let snap = self.catalog.snapshot();
        let dir = self.catalog.config().dir(Section::Agents).to_path_buf();
        let mut out: Vec<AgentView> = snap
            .agents()
            .map(|a| {
                let file = format!("{}.json", a.key);
                let stored = state.records.contains_key(&format!("agent:{}", a.key));
                let origin = if stored {
                    "admin"
                } else if dir.join(&file).is_file() {
                    "file"
                } else {
                    "builtin"
                };
                AgentView {
                    key: a.key.clone(),
                    origin: origin.to_owned(),
                    description: a.description.clone(),
                    stored,
                    problems: snap
                        .problem(Section::Agents, &file)
                        .map(|p| p.messages.clone())
                        .unwrap_or_default(),
                }
            })
            .collect();
        // Stored definitions that did not load are listed too, with their reasons.
        for p in snap.problems().filter(|p| p.section == Section::Agents && !p.loaded) {
            if let CatalogOrigin::Stored { name, .. } = &p.origin {
                let key = name.trim_end_matches(".json").to_owned();
                if out.iter().all(|a| a.key != key) {
                    out.push(AgentView {
                        key,
                        origin: "admin".into(),
                        description: String::new(),
                        stored: true,
                        problems: p.messages.clone(),
                    });
                }
            }
        }
        out.sort_by(|a, b| a.key.cmp(&b.key));
        out
    }

    /// The definition in force for agent `key` as JSON (a stored one, else the file's).
    #[base::boxed]
    pub async fn agent(&self, key: &str) -> Result<Value, AdminError> {
        let state = self.state.lock().await;
        if let Some(Record::Agent { text, .. }) = state.records.get(&format!("agent:{key}")) {
            return serde_json::from_str(text)
                .map_err(|e| StoreError::Damaged(e.to_string()).into());
        }
        let snap = self.catalog.snapshot();
        let agent =
            snap.agent(key).ok_or_else(|| AdminError::NotFound(format!("no agent `{key}`")))?;
        serde_json::to_value(&agent.file).map_err(|e| StoreError::Storage(e.to_string()).into())
    }

    /// Creates or replaces agent `key` with `definition`, validated exactly as an agent file:
    /// every problem is named in the error, and nothing is saved.
    #[base::boxed]
    pub async fn put_agent(&self, key: &str, definition: &Value) -> Result<AgentView, AdminError> {
        let mut state = self.state.lock().await;
        let text = serde_json::to_string_pretty(definition)
            .map_err(|e| StoreError::Storage(e.to_string()))?;
        let parsed = definition::parse(key, &text).map_err(|e| AdminError::Invalid {
            field: e.errors.first().map(|f| f.path.clone()).unwrap_or_default(),
            message: e.to_string(),
        })?;
        prompt_template::apply(parsed, &state.templates())
            .map_err(|e| AdminError::Invalid { message: e.to_string(), field: e.field })?;
        let record = Record::Agent { key: key.to_owned(), text };
        let next = state.with(record.clone());
        self.persist(&record).await?;
        let snap = self.catalog.set_stored_agents(next.agents()).await;
        *state = next;
        let agent =
            snap.agent(key).ok_or_else(|| AdminError::NotFound(format!("agent `{key}`")))?;
        Ok(AgentView {
            key: key.to_owned(),
            origin: "admin".into(),
            description: agent.description.clone(),
            stored: true,
            problems: snap
                .problem(Section::Agents, &format!("{key}.json"))
                .map(|p| p.messages.clone())
                .unwrap_or_default(),
        })
    }

    /// Removes the definition stored for agent `key` (the file's or built-in comes back).
    #[base::boxed]
    pub async fn delete_agent(&self, key: &str) -> Result<(), AdminError> {
        let mut state = self.state.lock().await;
        let id = format!("agent:{key}");
        if !state.records.contains_key(&id) {
            let exists = self.catalog.snapshot().agent(key).is_some();
            return Err(if exists {
                AdminError::NotEditable(format!(
                    "agent `{key}` comes from a file or is built in, not from here: change the \
                     file, or PUT a definition here to replace it"
                ))
            } else {
                AdminError::NotFound(format!("no agent `{key}`"))
            });
        }
        let next = state.without(&id);
        self.store.delete_admin(&id).await?;
        self.catalog.set_stored_agents(next.agents()).await;
        *state = next;
        Ok(())
    }
}

/// A prompt template as `PUT /api/admin/prompts/{name}` takes it.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PromptInput {
    /// What it is for.
    #[serde(default)]
    pub description: String,
    /// The text (`{{variable}}` placeholders for `render`).
    pub text: String,
}

impl Admin {
    // ---- prompt templates -----------------------------------------------------------------

    /// Every prompt template, by name.
    #[base::boxed]
    pub async fn prompts(&self) -> Vec<PromptTemplate> {
        let state = self.state.lock().await;
        state
            .records
            .values()
            .filter_map(|r| match r {
                Record::Prompt { template } => Some(template.clone()),
                _ => None,
            })
            .collect()
    }

    /// One prompt template.
    #[base::boxed]
    pub async fn prompt(&self, name: &str) -> Result<PromptTemplate, AdminError> {
        let state = self.state.lock().await;
        match state.records.get(&format!("prompt:{name}")) {
            Some(Record::Prompt { template }) => Ok(template.clone()),
            _ => Err(AdminError::NotFound(format!("no prompt template `{name}`"))),
        }
    }

    /// Creates or replaces a template; agents that refer to it take the new text at once.
    #[base::boxed]
    pub async fn put_prompt(
        &self,
        name: &str,
        input: PromptInput,
    ) -> Result<PromptTemplate, AdminError> {
        let template = PromptTemplate {
            name: name.to_owned(),
            description: input.description,
            text: input.text,
        };
        template
            .validate()
            .map_err(|e| AdminError::Invalid { message: e.to_string(), field: e.field })?;
        let mut state = self.state.lock().await;
        let record = Record::Prompt { template: template.clone() };
        let next = state.with(record.clone());
        self.persist(&record).await?;
        self.catalog.set_prompt_templates(next.templates()).await;
        *state = next;
        Ok(template)
    }

    /// Removes a template no loaded agent refers to (otherwise 409 naming them).
    #[base::boxed]
    pub async fn delete_prompt(&self, name: &str) -> Result<(), AdminError> {
        let mut state = self.state.lock().await;
        let id = format!("prompt:{name}");
        if !state.records.contains_key(&id) {
            return Err(AdminError::NotFound(format!("no prompt template `{name}`")));
        }
        let users: Vec<String> = self
            .catalog
            .snapshot()
            .agents()
            .filter(|a| {
                serde_json::to_string(&a.file)
                    .is_ok_and(|raw| prompt_template::references(&raw).iter().any(|r| r == name))
            })
            .map(|a| a.key.clone())
            .collect();
        if !users.is_empty() {
            return Err(AdminError::NotEditable(format!(
                "prompt template `{name}` is used by agent(s) {}: change them first",
                users.join(", ")
            )));
        }
        let next = state.without(&id);
        self.store.delete_admin(&id).await?;
        self.catalog.set_prompt_templates(next.templates()).await;
        *state = next;
        Ok(())
    }

    /// Template `name`'s text with its placeholders filled from `vars`.
    #[base::boxed]
    pub async fn render_prompt(
        &self,
        name: &str,
        vars: &Map<String, Value>,
    ) -> Result<String, AdminError> {
        let template = self.prompt(name).await?;
        prompt_template::render(&template.text, vars)
            .map_err(|e| AdminError::Invalid { message: e.to_string(), field: e.field })
    }
}

impl std::fmt::Debug for Admin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Admin").finish_non_exhaustive()
    }
}

enum Change {
    Put(Record),
    Delete(String),
}

/// `…a1b2`: enough to tell two keys apart, too little to use.
fn hint(key: &str) -> String {
    let tail: String = key.chars().rev().take(4).collect::<Vec<_>>().into_iter().rev().collect();
    format!("…{tail}")
}
