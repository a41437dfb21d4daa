//! The on-disk catalog: agent definitions (`agents/*.json`), tool definitions
//! (`tools/*.backend|*.action|*.html|*.qlc|*.dqlc`) and viewports
//! (`viewports/*.html|*.qlc|*.dqlc|*.json_schema|*.custom`), hot reloaded.
//!
//! Owns the three directories. The built-in files (the repository's `builtin/`) are embedded in
//! the binary and served from memory; a file in a directory replaces the built-in of the same
//! name and adds to the rest, so nothing is ever written into a directory. Each directory is watched
//! (`notify`, debounced) and also polled at its refresh interval, which catches what the watcher
//! misses (a directory replaced, a network file system, an exhausted inotify limit). Every reload
//! builds a complete new [`CatalogSnapshot`] and swaps it in whole, so a reader holds one
//! consistent catalog for as long as it keeps the `Arc`. A bad file is skipped with a warning;
//! its reason stays queryable through [`CatalogSnapshot::problems`] until the file is fixed.
//!
//! Knows nothing of tool executors, runs or HTTP: it only says what exists.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use notify::event::{AccessKind, AccessMode, EventKind, MetadataKind, ModifyKind};
use notify::{RecommendedWatcher, RecursiveMode, Watcher};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, watch};

use super::definition::{self, AgentDefinition};
use super::prompt_template::{self, Templates};
use llm::ToolDefinition;

static BUILTIN_AGENTS: include_dir::Dir<'static> =
    include_dir::include_dir!("$CARGO_MANIFEST_DIR/../../builtin/agents");
static BUILTIN_TOOLS: include_dir::Dir<'static> =
    include_dir::include_dir!("$CARGO_MANIFEST_DIR/../../builtin/tools");
static BUILTIN_VIEWPORTS: include_dir::Dir<'static> =
    include_dir::include_dir!("$CARGO_MANIFEST_DIR/../../builtin/viewports");

/// The built-in files of a section: the repository's `builtin/agents/`, `builtin/tools/` and
/// `builtin/viewports/`, embedded in the binary.
pub fn builtins(section: Section) -> &'static include_dir::Dir<'static> {
    match section {
        Section::Agents => &BUILTIN_AGENTS,
        Section::Tools => &BUILTIN_TOOLS,
        Section::Viewports => &BUILTIN_VIEWPORTS,
    }
}

/// One of the three directories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Section {
    /// `agents/`.
    Agents,
    /// `tools/`.
    Tools,
    /// `viewports/`.
    Viewports,
}

impl Section {
    /// All three, in load order.
    pub const ALL: [Section; 3] = [Section::Agents, Section::Tools, Section::Viewports];

    /// `agents`, `tools`, `viewports` (also the built-in folder name).
    pub fn as_str(self) -> &'static str {
        match self {
            Section::Agents => "agents",
            Section::Tools => "tools",
            Section::Viewports => "viewports",
        }
    }

    fn idx(self) -> usize {
        self as usize
    }
}

/// Where the catalog lives and how it notices changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogConfig {
    /// Agent files (`AGENT_EXTERNAL_DIR`, default `agents/`).
    pub agents_dir: PathBuf,
    /// Tool files (`AGENT_TOOLS_EXTERNAL_DIR`, default `tools/`).
    pub tools_dir: PathBuf,
    /// Viewport files (`AGENT_VIEWPORT_EXTERNAL_DIR`, default `viewports/`).
    pub viewports_dir: PathBuf,
    /// Polling interval of `agents_dir` (`AGENT_REFRESH_INTERVAL_MS`, default 10 s; 0: never).
    pub agents_refresh: Duration,
    /// Polling interval of `tools_dir` (`AGENT_CAPABILITY_REFRESH_INTERVAL_MS`, default 30 s).
    pub tools_refresh: Duration,
    /// Polling interval of `viewports_dir` (`AGENT_VIEWPORT_REFRESH_INTERVAL_MS`, default 30 s).
    pub viewports_refresh: Duration,
    /// Watch the directories for changes (`AGENT_CATALOG_WATCH`, default on; `0`/`false`: off).
    pub watch: bool,
    /// Quiet time after the last file event before reloading (editors write in several steps).
    pub debounce: Duration,
    /// Serve the built-in files under the directories' own (off: the directories alone).
    pub builtins: bool,
}

impl Default for CatalogConfig {
    fn default() -> Self {
        Self::in_dir(Path::new(""))
    }
}

impl CatalogConfig {
    /// Defaults with the three directories under `root`.
    pub fn in_dir(root: &Path) -> Self {
        Self {
            agents_dir: root.join("agents"),
            tools_dir: root.join("tools"),
            viewports_dir: root.join("viewports"),
            agents_refresh: Duration::from_secs(10),
            tools_refresh: Duration::from_secs(30),
            viewports_refresh: Duration::from_secs(30),
            watch: true,
            debounce: Duration::from_millis(150),
            builtins: true,
        }
    }

    /// Defaults overridden by the environment variables named on the fields.
    pub fn from_env() -> Self {
        let mut c = Self::default();
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let ms =
            |k: &str| var(k).and_then(|v| v.trim().parse::<u64>().ok()).map(Duration::from_millis);
        if let Some(d) = var("AGENT_EXTERNAL_DIR") {
            c.agents_dir = d.into();
        }
        if let Some(d) = var("AGENT_TOOLS_EXTERNAL_DIR") {
            c.tools_dir = d.into();
        }
        if let Some(d) = var("AGENT_VIEWPORT_EXTERNAL_DIR") {
            c.viewports_dir = d.into();
        }
        if let Some(d) = ms("AGENT_REFRESH_INTERVAL_MS") {
            c.agents_refresh = d;
        }
        if let Some(d) = ms("AGENT_CAPABILITY_REFRESH_INTERVAL_MS") {
            c.tools_refresh = d;
        }
        if let Some(d) = ms("AGENT_VIEWPORT_REFRESH_INTERVAL_MS") {
            c.viewports_refresh = d;
        }
        if let Some(v) = var("AGENT_CATALOG_WATCH") {
            c.watch =
                !matches!(v.trim().to_ascii_lowercase().as_str(), "0" | "false" | "off" | "no");
        }
        c
    }

    /// The directory of a section.
    pub fn dir(&self, section: Section) -> &Path {
        match section {
            Section::Agents => &self.agents_dir,
            Section::Tools => &self.tools_dir,
            Section::Viewports => &self.viewports_dir,
        }
    }

    /// The polling interval of a section (zero: no polling).
    pub fn refresh(&self, section: Section) -> Duration {
        match section {
            Section::Agents => self.agents_refresh,
            Section::Tools => self.tools_refresh,
            Section::Viewports => self.viewports_refresh,
        }
    }
}

/// Start-up failures. Everything after start-up is a [`Problem`], never an error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CatalogError {
    /// A directory could not be created.
    #[error("agent catalog: cannot prepare {}: {message}", path.display())]
    Io {
        /// The directory or file.
        path: PathBuf,
        /// The OS error.
        message: String,
    },
}

/// The view a frontend tool renders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ViewType {
    /// An HTML page.
    Html,
    /// A QLC form schema.
    Qlc,
    /// A dynamic QLC form schema.
    Dqlc,
}

impl ViewType {
    /// `html`, `qlc`, `dqlc` (the file suffix and the event's `toolType`).
    pub fn as_str(self) -> &'static str {
        match self {
            ViewType::Html => "html",
            ViewType::Qlc => "qlc",
            ViewType::Dqlc => "dqlc",
        }
    }
}

/// What kind of tool, from the file suffix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolKind {
    /// `.backend`: executed by the server, result goes back to the model.
    Backend,
    /// `.action`: a frontend effect (theme, fireworks); the model gets `"OK"` without waiting.
    Action,
    /// `.html`/`.qlc`/`.dqlc`: rendered by the frontend; the run waits for `/api/submit`.
    Frontend(ViewType),
}

impl ToolKind {
    /// The event's `toolType`: `backend`, `action`, `html`, `qlc` or `dqlc`.
    pub fn tool_type(self) -> &'static str {
        match self {
            ToolKind::Backend => "backend",
            ToolKind::Action => "action",
            ToolKind::Frontend(v) => v.as_str(),
        }
    }

    fn from_suffix(ext: &str) -> Option<Self> {
        Some(match ext {
            "backend" => ToolKind::Backend,
            "action" => ToolKind::Action,
            "html" => ToolKind::Frontend(ViewType::Html),
            "qlc" => ToolKind::Frontend(ViewType::Qlc),
            "dqlc" => ToolKind::Frontend(ViewType::Dqlc),
            _ => return None,
        })
    }
}

impl Serialize for ToolKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.tool_type())
    }
}

/// A tool definition from a tool file.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSpec {
    /// Unique name (`[A-Za-z0-9_-]{1,64}`).
    pub name: String,
    /// What it does, for the model's tool schema.
    pub description: String,
    /// JSON Schema of the arguments (an object schema).
    pub parameters: Value,
    /// Kind, from the file suffix.
    pub kind: ToolKind,
    /// Extra guidance injected into the system prompt of agents using the tool.
    pub prompt: Option<String>,
    /// Any other keys of the entry (e.g. `viewportKey`), kept verbatim.
    pub extra: Map<String, Value>,
    /// The file it came from.
    pub origin: Origin,
}

impl ToolSpec {
    /// The provider-neutral tool schema sent to the model.
    pub fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: self.name.clone(),
            description: self.description.clone(),
            input_schema: self.parameters.clone(),
        }
    }

    /// Frontend tools: the viewport that renders them (`viewportKey`, default the tool name).
    pub fn viewport_key(&self) -> Option<&str> {
        match self.kind {
            ToolKind::Frontend(_) => {
                Some(self.extra.get("viewportKey").and_then(Value::as_str).unwrap_or(&self.name))
            }
            ToolKind::Backend | ToolKind::Action => None,
        }
    }
}

/// The type of a viewport file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ViewportKind {
    /// `.html`.
    Html,
    /// `.qlc`.
    Qlc,
    /// `.dqlc`.
    Dqlc,
    /// `.json_schema`.
    JsonSchema,
    /// `.custom`.
    Custom,
}

impl ViewportKind {
    fn from_suffix(ext: &str) -> Option<Self> {
        Some(match ext {
            "html" => ViewportKind::Html,
            "qlc" => ViewportKind::Qlc,
            "dqlc" => ViewportKind::Dqlc,
            "json_schema" => ViewportKind::JsonSchema,
            "custom" => ViewportKind::Custom,
            _ => return None,
        })
    }
}

/// A viewport: what `/api/viewport?viewportKey=` answers.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Viewport {
    /// The file stem.
    pub key: String,
    /// The file type.
    pub kind: ViewportKind,
    /// `{"html": "<text>"}` for HTML, otherwise the file's JSON object.
    pub payload: Value,
    /// The file it came from.
    pub origin: Origin,
}

/// Where a catalog entry was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Embedded in the binary: `builtin/<section>/<name>` in the repository.
    Builtin {
        /// Its section.
        section: Section,
        /// Its file name.
        name: &'static str,
    },
    /// A file (or, for a problem, the directory) on disk.
    File(PathBuf),
    /// Defined through the admin API and kept in the store (see [`Catalog::set_stored_agents`]).
    Stored {
        /// Its file name (`<key>.json`).
        name: String,
        /// The definition's text.
        text: Arc<str>,
    },
    /// Listed by an MCP server an agent uses (its tools only; see `tools::mcp`).
    Mcp {
        /// The server's name.
        server: String,
    },
    /// A supervisor team's member, offered to the supervisor as a tool (its tools only).
    Member {
        /// The member's agent key.
        agent: String,
    },
}

impl Origin {
    /// Whether it is a built-in file.
    pub fn is_builtin(&self) -> bool {
        matches!(self, Origin::Builtin { .. })
    }

    /// The file name (`bash.backend`).
    pub fn file_name(&self) -> String {
        match self {
            Origin::Builtin { name, .. } => (*name).to_owned(),
            Origin::File(p) => p.file_name().unwrap_or_default().to_string_lossy().into_owned(),
            Origin::Stored { name, .. } => name.clone(),
            Origin::Mcp { server } => server.clone(),
            Origin::Member { agent } => agent.clone(),
        }
    }

    fn read(&self) -> std::io::Result<String> {
        match self {
            Origin::Builtin { section, name } => builtins(*section)
                .get_file(name)
                .and_then(include_dir::File::contents_utf8)
                .map(str::to_owned)
                .ok_or_else(|| std::io::Error::other("built-in file is not UTF-8")),
            Origin::File(p) => std::fs::read_to_string(p),
            Origin::Stored { text, .. } => Ok(text.to_string()),
            Origin::Mcp { server } => {
                Err(std::io::Error::other(format!("MCP server `{server}` has no file")))
            }
            Origin::Member { agent } => {
                Err(std::io::Error::other(format!("team member `{agent}` has no tool file")))
            }
        }
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Builtin { section, name } => write!(f, "built-in {}/{name}", section.as_str()),
            Origin::File(p) => write!(f, "{}", p.display()),
            Origin::Stored { name, .. } => write!(f, "admin agents/{name}"),
            Origin::Mcp { server } => write!(f, "MCP server {server}"),
            Origin::Member { agent } => write!(f, "team member {agent}"),
        }
    }
}

impl Serialize for Origin {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// What went wrong with one file at the last load.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Problem {
    /// The directory it is in.
    pub section: Section,
    /// The file name (`demoX.json`), or the directory's path when the directory itself failed.
    pub name: String,
    /// The file (or the directory).
    pub origin: Origin,
    /// Whether anything from the file was loaded (warnings, or some tool entries skipped).
    pub loaded: bool,
    /// The reasons, each naming the field (`react.maxSteps: must be 1..=50 (got 0)`).
    pub messages: Vec<String>,
}

/// An agent's tool names resolved against the catalog.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedTools<'a> {
    /// Tools that exist, in the agent's order.
    pub found: Vec<&'a ToolSpec>,
    /// Names with no tool file entry.
    pub missing: Vec<&'a str>,
}

type Fingerprint = Vec<(String, u64, Option<SystemTime>)>;

#[derive(Debug)]
struct Loaded<T> {
    items: BTreeMap<String, T>,
    problems: Vec<Problem>,
    fingerprint: Fingerprint,
}

impl<T> Default for Loaded<T> {
    fn default() -> Self {
        Self { items: BTreeMap::new(), problems: Vec::new(), fingerprint: Vec::new() }
    }
}

/// One consistent state of the whole catalog. Cheap to hold: sections are shared between
/// snapshots until they change.
#[derive(Debug, Default)]
pub struct CatalogSnapshot {
    version: u64,
    agents: Arc<Loaded<Arc<AgentDefinition>>>,
    tools: Arc<Loaded<ToolSpec>>,
    viewports: Arc<Loaded<Viewport>>,
}

impl CatalogSnapshot {
    /// Increases with every reload (1 after start).
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Valid agents, by key.
    pub fn agents(&self) -> impl Iterator<Item = &Arc<AgentDefinition>> {
        self.agents.items.values()
    }

    /// One agent.
    pub fn agent(&self, key: &str) -> Option<Arc<AgentDefinition>> {
        self.agents.items.get(key).cloned()
    }

    /// All tools, by name.
    pub fn tools(&self) -> impl Iterator<Item = &ToolSpec> {
        self.tools.items.values()
    }

    /// One tool.
    pub fn tool(&self, name: &str) -> Option<&ToolSpec> {
        self.tools.items.get(name)
    }

    /// All viewports, by key.
    pub fn viewports(&self) -> impl Iterator<Item = &Viewport> {
        self.viewports.items.values()
    }

    /// One viewport.
    pub fn viewport(&self, key: &str) -> Option<&Viewport> {
        self.viewports.items.get(key)
    }

    /// Problems of the last load of each directory: agents, then tools, then viewports.
    pub fn problems(&self) -> impl Iterator<Item = &Problem> {
        self.agents
            .problems
            .iter()
            .chain(self.tools.problems.iter())
            .chain(self.viewports.problems.iter())
    }

    /// The problem of one file (`problem(Section::Agents, "demoX.json")`).
    pub fn problem(&self, section: Section, file_name: &str) -> Option<&Problem> {
        self.section_problems(section).iter().find(|p| p.name == file_name)
    }

    /// Resolves an agent's tool names.
    pub fn agent_tools<'a>(&'a self, agent: &'a AgentDefinition) -> ResolvedTools<'a> {
        let mut r = ResolvedTools { found: Vec::new(), missing: Vec::new() };
        for name in &agent.tools {
            match self.tool(name) {
                Some(t) => r.found.push(t),
                None => r.missing.push(name),
            }
        }
        r
    }

    fn section_problems(&self, section: Section) -> &[Problem] {
        match section {
            Section::Agents => &self.agents.problems,
            Section::Tools => &self.tools.problems,
            Section::Viewports => &self.viewports.problems,
        }
    }

    fn fingerprint(&self, section: Section) -> &Fingerprint {
        match section {
            Section::Agents => &self.agents.fingerprint,
            Section::Tools => &self.tools.fingerprint,
            Section::Viewports => &self.viewports.fingerprint,
        }
    }
}

/// The live catalog. Dropping it stops watching and polling.
pub struct Catalog {
    inner: Arc<Inner>,
    watching: bool,
    task: tokio::task::AbortHandle,
}

struct Inner {
    config: CatalogConfig,
    tx: watch::Sender<Arc<CatalogSnapshot>>,
    // Reloads run one at a time so a slow one never overwrites a newer one.
    reload_lock: tokio::sync::Mutex<()>,
    /// Agent definitions made through the admin API, by key: they win over the directory's
    /// file and the built-in of the same name.
    stored_agents: std::sync::RwLock<Arc<BTreeMap<String, Arc<str>>>>,
    /// Prompt templates agents refer to with `{{prompt:NAME}}`.
    templates: std::sync::RwLock<Arc<Templates>>,
}

impl Catalog {
    /// Creates the directories if missing, loads the catalog, then watches and polls
    /// them in a background task. Needs a tokio runtime.
    #[base::boxed]
    pub async fn start(config: CatalogConfig) -> Result<Arc<Catalog>, CatalogError> {
        let prep = config.clone();
        tokio::task::spawn_blocking(move || create_dirs(&prep))
            .await
            .map_err(|e| CatalogError::Io { path: PathBuf::new(), message: e.to_string() })??;

        let (tx, _) = watch::channel(Arc::new(CatalogSnapshot::default()));
        let inner = Arc::new(Inner {
            config,
            tx,
            reload_lock: tokio::sync::Mutex::new(()),
            stored_agents: std::sync::RwLock::default(),
            templates: std::sync::RwLock::default(),
        });
        for section in Section::ALL {
            inner.reload(section, true).await;
        }

        let (events_tx, events) = mpsc::unbounded_channel();
        let watcher =
            if inner.config.watch { start_watcher(&inner.config, events_tx) } else { None };
        let watching = watcher.is_some();
        let task = tokio::spawn(run(inner.clone(), events, watcher)).abort_handle();
        let snap = inner.tx.borrow().clone();
        tracing::info!(
            agents = snap.agents.items.len(),
            tools = snap.tools.items.len(),
            viewports = snap.viewports.items.len(),
            problems = snap.problems().count(),
            watching,
            "agent catalog loaded"
        );
        Ok(Arc::new(Catalog { inner, watching, task }))
    }

    /// The current snapshot.
    pub fn snapshot(&self) -> Arc<CatalogSnapshot> {
        self.inner.tx.borrow().clone()
    }

    /// A receiver that sees every new snapshot (`changed().await`).
    pub fn subscribe(&self) -> watch::Receiver<Arc<CatalogSnapshot>> {
        self.inner.tx.subscribe()
    }

    /// Re-reads all three directories now and returns the resulting snapshot.
    #[base::boxed]
    pub async fn reload_now(&self) -> Arc<CatalogSnapshot> {
        for section in Section::ALL {
            self.inner.reload(section, true).await;
        }
        self.snapshot()
    }

    /// Replaces the agent definitions kept in the store (key → JSON text) and reloads the
    /// agents: each wins over the file and the built-in of its name until it is removed.
    #[base::boxed]
    pub async fn set_stored_agents(
        &self,
        agents: BTreeMap<String, Arc<str>>,
    ) -> Arc<CatalogSnapshot> {
        *self.inner.stored_agents.write().unwrap_or_else(std::sync::PoisonError::into_inner) =
            Arc::new(agents);
        self.inner.reload(Section::Agents, true).await;
        self.snapshot()
    }

    /// Replaces the prompt templates and reloads the agents, which take the new texts.
    #[base::boxed]
    pub async fn set_prompt_templates(&self, templates: Templates) -> Arc<CatalogSnapshot> {
        *self.inner.templates.write().unwrap_or_else(std::sync::PoisonError::into_inner) =
            Arc::new(templates);
        self.inner.reload(Section::Agents, true).await;
        self.snapshot()
    }

    /// The configuration it runs with (e.g. the agents directory for `agent_file_create`).
    pub fn config(&self) -> &CatalogConfig {
        &self.inner.config
    }

    /// Whether the file watcher is running (otherwise only polling notices changes).
    pub fn is_watching(&self) -> bool {
        self.watching
    }
}

impl Drop for Catalog {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Inner {
    /// Loads one section and publishes a snapshot with it. Without `force`, a section whose
    /// file names, sizes and mtimes are unchanged is left alone (the cheap polling path).
    async fn reload(&self, section: Section, force: bool) {
        let _guard = self.reload_lock.lock().await;
        let dir = self.config.dir(section).to_path_buf();
        let current = self.tx.borrow().clone();
        if !force {
            let d = dir.clone();
            match tokio::task::spawn_blocking(move || fingerprint(section, &d)).await {
                Ok(fp) if &fp == current.fingerprint(section) => return,
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(section = section.as_str(), "agent catalog: scan failed: {e}");
                    return;
                }
            }
        }
        let mut next = CatalogSnapshot {
            version: current.version + 1,
            agents: current.agents.clone(),
            tools: current.tools.clone(),
            viewports: current.viewports.clone(),
        };
        let with_builtins = self.config.builtins;
        let stored = match section {
            Section::Agents => Arc::clone(
                &self.stored_agents.read().unwrap_or_else(std::sync::PoisonError::into_inner),
            ),
            _ => Arc::default(),
        };
        let templates =
            Arc::clone(&self.templates.read().unwrap_or_else(std::sync::PoisonError::into_inner));
        let loaded = tokio::task::spawn_blocking(move || {
            let mut files = Files::list(section, &dir, with_builtins);
            files.overlay(&stored);
            match section {
                Section::Agents => LoadedAny::Agents(load_agents(files, &templates)),
                Section::Tools => LoadedAny::Tools(load_tools(files)),
                Section::Viewports => LoadedAny::Viewports(load_viewports(files)),
            }
        })
        .await;
        let problems = match loaded {
            Ok(LoadedAny::Agents(l)) => {
                next.agents = Arc::new(l);
                &next.agents.problems
            }
            Ok(LoadedAny::Tools(l)) => {
                next.tools = Arc::new(l);
                &next.tools.problems
            }
            Ok(LoadedAny::Viewports(l)) => {
                next.viewports = Arc::new(l);
                &next.viewports.problems
            }
            Err(e) => {
                tracing::warn!(section = section.as_str(), "agent catalog: load failed: {e}");
                return;
            }
        };
        // Warn once per new or changed problem, not at every reload.
        let before = current.section_problems(section);
        for p in problems.iter().filter(|p| !before.contains(p)) {
            for m in &p.messages {
                tracing::warn!(file = %p.origin, loaded = p.loaded, "agent catalog: {m}");
            }
        }
        tracing::debug!(
            section = section.as_str(),
            version = next.version,
            "agent catalog reloaded"
        );
        self.tx.send_replace(Arc::new(next));
    }
}

enum LoadedAny {
    Agents(Loaded<Arc<AgentDefinition>>),
    Tools(Loaded<ToolSpec>),
    Viewports(Loaded<Viewport>),
}

async fn run(
    inner: Arc<Inner>,
    mut events: mpsc::UnboundedReceiver<Section>,
    _watcher: Option<RecommendedWatcher>,
) {
    let mut ticks = Section::ALL.map(|s| {
        let period = inner.config.refresh(s);
        (!period.is_zero()).then(|| {
            let mut i = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
            i.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            i
        })
    });
    let [agents_tick, tools_tick, viewports_tick] = &mut ticks;
    let debounce = inner.config.debounce;
    loop {
        tokio::select! {
            Some(first) = events.recv() => {
                let mut dirty = [false; 3];
                dirty[first.idx()] = true;
                while let Ok(Some(s)) = tokio::time::timeout(debounce, events.recv()).await {
                    dirty[s.idx()] = true;
                }
                for s in Section::ALL.into_iter().filter(|s| dirty[s.idx()]) {
                    inner.reload(s, true).await;
                }
            }
            () = tick(agents_tick) => inner.reload(Section::Agents, false).await,
            () = tick(tools_tick) => inner.reload(Section::Tools, false).await,
            () = tick(viewports_tick) => inner.reload(Section::Viewports, false).await,
        }
    }
}

async fn tick(interval: &mut Option<tokio::time::Interval>) {
    match interval {
        Some(i) => {
            i.tick().await;
        }
        None => std::future::pending().await,
    }
}

/// Starts one watcher over the distinct directories; `None` (and a warning) if the platform
/// refuses, in which case polling carries on alone.
fn start_watcher(
    config: &CatalogConfig,
    events: mpsc::UnboundedSender<Section>,
) -> Option<RecommendedWatcher> {
    let dirs: Vec<(Section, PathBuf)> =
        Section::ALL.iter().map(|&s| (s, absolute(config.dir(s)))).collect();
    let routes = dirs.clone();
    let handler = move |res: notify::Result<notify::Event>| {
        let Ok(event) = res else { return };
        if !relevant(&event.kind) {
            return;
        }
        for (section, dir) in &routes {
            if event.paths.iter().any(|p| p.starts_with(dir)) {
                let _ = events.send(*section);
            }
        }
    };
    let mut watcher = match notify::recommended_watcher(handler) {
        Ok(w) => w,
        Err(e) => {
            tracing::warn!("agent catalog: file watching unavailable, polling only: {e}");
            return None;
        }
    };
    let mut watched: Vec<&PathBuf> = Vec::new();
    for (_, dir) in &dirs {
        if watched.contains(&dir) {
            continue;
        }
        if let Err(e) = watcher.watch(dir, RecursiveMode::NonRecursive) {
            tracing::warn!(dir = %dir.display(), "agent catalog: cannot watch, polling only: {e}");
            return None;
        }
        watched.push(dir);
    }
    Some(watcher)
}

/// Changes only: our own reads raise open/close-nowrite events, which must not trigger reloads.
fn relevant(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        EventKind::Modify(ModifyKind::Metadata(MetadataKind::AccessTime)) => false,
        EventKind::Any | EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_) => true,
        EventKind::Other => true,
    }
}

fn absolute(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).or_else(|_| std::path::absolute(p)).unwrap_or_else(|_| p.to_path_buf())
}

/// Creates the directories (empty: the built-ins stay in memory), so they can be watched and
/// so a user sees where their own files go.
fn create_dirs(config: &CatalogConfig) -> Result<(), CatalogError> {
    for section in Section::ALL {
        let dir = config.dir(section);
        std::fs::create_dir_all(dir)
            .map_err(|e| CatalogError::Io { path: dir.to_path_buf(), message: e.to_string() })?;
    }
    Ok(())
}

/// Regular, non-hidden files of `dir` with an accepted suffix, sorted by name (the order that
/// decides which of two conflicting entries wins).
fn list(
    section: Section,
    dir: &Path,
) -> std::io::Result<Vec<(String, PathBuf, std::fs::Metadata)>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || suffix(section, &name).is_none() {
            continue;
        }
        // Follows symlinks, so a linked file counts.
        let Ok(meta) = std::fs::metadata(entry.path()) else { continue };
        if meta.is_file() {
            files.push((name, entry.path(), meta));
        }
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(files)
}

/// `(stem, suffix)` if the name belongs in `section`.
fn suffix(section: Section, name: &str) -> Option<(&str, &str)> {
    let (stem, ext) = name.rsplit_once('.')?;
    let ok = match section {
        Section::Agents => ext == "json",
        Section::Tools => ToolKind::from_suffix(ext).is_some(),
        Section::Viewports => ViewportKind::from_suffix(ext).is_some(),
    };
    (ok && !stem.is_empty()).then_some((stem, ext))
}

fn fingerprint(section: Section, dir: &Path) -> Fingerprint {
    list(section, dir)
        .map(|files| {
            files.into_iter().map(|(name, _, m)| (name, m.len(), m.modified().ok())).collect()
        })
        .unwrap_or_default()
}

/// The files of one section, sorted by name: the built-ins, each replaced by a directory file
/// of the same name, plus the directory's other files.
struct Files {
    files: Vec<(String, Origin)>,
    fingerprint: Fingerprint,
    /// The directory could not be listed (the built-ins are still there).
    problem: Option<Problem>,
}

impl Files {
    fn list(section: Section, dir: &Path, with_builtins: bool) -> Files {
        let mut files: BTreeMap<String, Origin> = BTreeMap::new();
        if with_builtins {
            for file in builtins(section).files() {
                let Some(name) = file.path().file_name().and_then(|n| n.to_str()) else { continue };
                if suffix(section, name).is_some() {
                    files.insert(name.to_owned(), Origin::Builtin { section, name });
                }
            }
        }
        let mut fingerprint = Vec::new();
        let mut problem = None;
        match list(section, dir) {
            Ok(listed) => {
                for (name, path, meta) in listed {
                    fingerprint.push((name.clone(), meta.len(), meta.modified().ok()));
                    let replaced = files.insert(name, Origin::File(path.clone()));
                    if replaced.is_some() {
                        tracing::info!(file = %path.display(), "agent catalog: replaces the built-in");
                    }
                }
            }
            Err(e) => {
                problem = Some(Problem {
                    section,
                    name: dir.display().to_string(),
                    origin: Origin::File(dir.to_path_buf()),
                    loaded: false,
                    messages: vec![format!("cannot read directory: {e}")],
                });
            }
        }
        Files { files: files.into_iter().collect(), fingerprint, problem }
    }

    /// Puts the stored definitions (agents, by key) over the listed files of the same name.
    fn overlay(&mut self, stored: &BTreeMap<String, Arc<str>>) {
        for (key, text) in stored {
            let name = format!("{key}.json");
            let origin = Origin::Stored { name: name.clone(), text: Arc::clone(text) };
            match self.files.iter_mut().find(|(n, _)| *n == name) {
                Some(slot) => slot.1 = origin,
                None => self.files.push((name, origin)),
            }
        }
        self.files.sort_by(|a, b| a.0.cmp(&b.0));
    }

    /// An empty result carrying the listing's fingerprint and problem, and the files to load.
    fn begin<T>(self) -> (Loaded<T>, Vec<(String, Origin)>) {
        let loaded = Loaded {
            items: BTreeMap::new(),
            problems: self.problem.into_iter().collect(),
            fingerprint: self.fingerprint,
        };
        (loaded, self.files)
    }
}

fn problem(
    section: Section,
    name: &str,
    origin: &Origin,
    loaded: bool,
    messages: Vec<String>,
) -> Problem {
    Problem { section, name: name.to_owned(), origin: origin.clone(), loaded, messages }
}

fn load_agents(files: Files, templates: &Templates) -> Loaded<Arc<AgentDefinition>> {
    let (mut out, files) = files.begin();
    for (name, origin) in files {
        let Some((key, _)) = suffix(Section::Agents, &name) else { continue };
        let text = match origin.read() {
            Ok(t) => t,
            Err(e) => {
                out.problems.push(problem(
                    Section::Agents,
                    &name,
                    &origin,
                    false,
                    vec![e.to_string()],
                ));
                continue;
            }
        };
        match definition::parse(key, &text)
            .map_err(|e| e.errors.iter().map(ToString::to_string).collect())
            .and_then(|def| prompt_template::apply(def, templates).map_err(|e| vec![e.to_string()]))
        {
            Ok(def) => {
                if !def.warnings.is_empty() {
                    let messages = def.warnings.iter().map(ToString::to_string).collect();
                    out.problems.push(problem(Section::Agents, &name, &origin, true, messages));
                }
                out.items.insert(def.key.clone(), Arc::new(def));
            }
            Err(messages) => {
                out.problems.push(problem(Section::Agents, &name, &origin, false, messages));
            }
        }
    }
    out
}

#[derive(Deserialize)]
struct ToolFile {
    tools: Vec<Value>,
}

#[derive(Deserialize)]
struct ToolEntry {
    name: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    parameters: Option<Value>,
    #[serde(default)]
    prompt: Option<String>,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

fn load_tools(files: Files) -> Loaded<ToolSpec> {
    let (mut out, files) = files.begin::<ToolSpec>();
    for (name, origin) in files {
        let Some(kind) =
            suffix(Section::Tools, &name).and_then(|(_, ext)| ToolKind::from_suffix(ext))
        else {
            continue;
        };
        let mut messages = Vec::new();
        let entries = origin.read().map_err(|e| e.to_string()).and_then(|text| {
            let mut de = serde_json::Deserializer::from_str(&text);
            let file: ToolFile = serde_path_to_error::deserialize(&mut de).map_err(|e| {
                let p = e.path().to_string();
                if p == "." { e.inner().to_string() } else { format!("{p}: {}", e.inner()) }
            })?;
            de.end().map_err(|e| e.to_string())?;
            Ok(file.tools)
        });
        let entries = match entries {
            Ok(entries) => entries,
            Err(m) => {
                out.problems.push(problem(Section::Tools, &name, &origin, false, vec![m]));
                continue;
            }
        };
        let mut any = false;
        for (i, raw) in entries.into_iter().enumerate() {
            match tool_entry(raw, kind, &origin) {
                Ok(spec) => {
                    if let Some(first) = out.items.get(&spec.name) {
                        let first = first.origin.file_name();
                        messages.push(format!(
                            "tools[{i}]: name `{}` is already defined in {first}; skipped",
                            spec.name
                        ));
                    } else {
                        any = true;
                        out.items.insert(spec.name.clone(), spec);
                    }
                }
                Err(m) => messages.push(format!("tools[{i}].{m}; skipped")),
            }
        }
        if !messages.is_empty() {
            out.problems.push(problem(Section::Tools, &name, &origin, any, messages));
        }
    }
    out
}

fn tool_entry(raw: Value, kind: ToolKind, origin: &Origin) -> Result<ToolSpec, String> {
    let entry: ToolEntry = serde_path_to_error::deserialize(raw)
        .map_err(|e| format!("{}: {}", e.path(), e.inner()))?;
    let name = entry.name.map(|n| n.trim().to_owned()).unwrap_or_default();
    if !definition::is_valid_key(&name) {
        return Err(format!("name: `{name}` must be 1-64 characters of A-Z a-z 0-9 _ -"));
    }
    let parameters = match entry.parameters {
        None | Some(Value::Null) => json!({"type": "object", "properties": {}}),
        Some(p) if p.get("type").and_then(Value::as_str) == Some("object") => p,
        Some(_) => {
            return Err(format!(
                "parameters: `{name}` needs a JSON Schema with \"type\": \"object\""
            ));
        }
    };
    Ok(ToolSpec {
        name,
        description: entry.description.unwrap_or_default().trim().to_owned(),
        parameters,
        kind,
        prompt: entry.prompt.filter(|p| !p.trim().is_empty()),
        extra: entry.extra,
        origin: origin.clone(),
    })
}

fn load_viewports(files: Files) -> Loaded<Viewport> {
    let (mut out, files) = files.begin::<Viewport>();
    for (name, origin) in files {
        let Some((key, ext)) = suffix(Section::Viewports, &name) else { continue };
        let Some(kind) = ViewportKind::from_suffix(ext) else { continue };
        let fail = |m: String| problem(Section::Viewports, &name, &origin, false, vec![m]);
        if let Some(first) = out.items.get(key) {
            let first = first.origin.file_name();
            out.problems
                .push(fail(format!("viewport key `{key}` is already defined by {first}; skipped")));
            continue;
        }
        let text = match origin.read() {
            Ok(t) => t,
            Err(e) => {
                out.problems.push(fail(e.to_string()));
                continue;
            }
        };
        let payload = if kind == ViewportKind::Html {
            json!({ "html": text })
        } else {
            match serde_json::from_str::<Value>(&text) {
                Ok(v @ Value::Object(_)) => v,
                Ok(_) => {
                    out.problems.push(fail("must be a JSON object".into()));
                    continue;
                }
                Err(e) => {
                    out.problems.push(fail(e.to_string()));
                    continue;
                }
            }
        };
        out.items.insert(
            key.to_owned(),
            Viewport { key: key.to_owned(), kind, payload, origin: origin.clone() },
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes_route_files_to_sections() {
        assert_eq!(suffix(Section::Agents, "a.json"), Some(("a", "json")));
        assert_eq!(suffix(Section::Agents, "a.json~"), None);
        assert_eq!(suffix(Section::Tools, "x.backend"), Some(("x", "backend")));
        assert_eq!(suffix(Section::Tools, "x.json"), None);
        assert_eq!(suffix(Section::Viewports, "card.json_schema"), Some(("card", "json_schema")));
        assert_eq!(suffix(Section::Viewports, ".html"), None);
        assert_eq!(ToolKind::from_suffix("dqlc"), Some(ToolKind::Frontend(ViewType::Dqlc)));
    }

    #[test]
    fn read_events_do_not_trigger_reloads() {
        assert!(!relevant(&EventKind::Access(AccessKind::Open(AccessMode::Any))));
        assert!(!relevant(&EventKind::Access(AccessKind::Close(AccessMode::Read))));
        assert!(relevant(&EventKind::Access(AccessKind::Close(AccessMode::Write))));
        assert!(relevant(&EventKind::Modify(ModifyKind::Any)));
        assert!(relevant(&EventKind::Remove(notify::event::RemoveKind::File)));
    }

    #[test]
    fn tool_entries_need_a_name_and_an_object_schema() {
        let f = &Origin::File("t.backend".into());
        let ok = tool_entry(json!({"name": "a", "description": "d", "x": 1}), ToolKind::Backend, f)
            .unwrap();
        assert_eq!(ok.parameters["type"], "object");
        assert_eq!(ok.extra["x"], 1);
        let err = tool_entry(json!({"description": "d"}), ToolKind::Backend, f).unwrap_err();
        assert!(err.starts_with("name:"), "{err}");
        let err =
            tool_entry(json!({"name": "a", "parameters": {"type": "string"}}), ToolKind::Action, f)
                .unwrap_err();
        assert!(err.starts_with("parameters:"), "{err}");
        let err =
            tool_entry(json!({"name": "a", "description": 3}), ToolKind::Action, f).unwrap_err();
        assert!(err.starts_with("description:"), "{err}");
    }

    #[test]
    fn builtins_are_embedded() {
        for s in Section::ALL {
            assert!(builtins(s).files().count() > 0, "{s:?}");
        }
    }
}
