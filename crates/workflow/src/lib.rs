//! Graph workflows: JSON-configured graphs of nodes (`llm`, `agent`, `tool`, `code`,
//! `condition`, `parallel`/`join`, `human`) with templates between them, validated whole
//! before they run, executed as one Event Model v2 run (each node a task), and persisted node
//! by node so a run a dead process left behind resumes at its last finished node.
//!
//! Owns the definitions (built-ins embedded from `builtin/workflows/`, overlaid by the
//! `workflows/` directory, overlaid by those made through the API and kept in the store's
//! `workflows` table), the run records (the store's `workflow_runs` table) and the running
//! runs. Streams go into the agent service's run logs, so `Last-Event-ID` resume works as for
//! `/api/query`. Knows nothing of HTTP or of dashboards (a workflow reaches them through
//! backend tools).
//!
//! - `def.rs`: the format; `validate.rs`: the checks, into a `Graph`; `template.rs`: the
//!   `{{...}}` references; `nodes/`: one file per kind; `engine.rs`: the executor;
//!   `runs.rs`: the persisted run state; `member.rs`: an agent run as a node's task;
//!   `slots.rs`: the runs in progress, their run slots (a run parked on a human node holds
//!   none) and the per-key cap.

pub mod def;
pub mod engine;
pub mod member;
pub mod nodes;
pub mod runs;
pub mod slots;
pub mod template;
pub mod validate;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use agent::catalog::Catalog;
use agent::events::{StreamError, Subscription, now_ms};
use agent::service::AgentService;
use agent::tools::{BackendTools, FrontendSubmits};
use def::{Issue, WorkflowDef};
use nodes::{CheckContext, KindInfo, NodeKind};
use runs::{RunRecord, RunStatus, RunView, Runs};
use sandbox::Sandbox;
use slots::Slots;
use store::{Store, StoreError};

/// The built-in workflows (the repository's `builtin/workflows/`), embedded.
static BUILTIN: include_dir::Dir<'static> =
    include_dir::include_dir!("$CARGO_MANIFEST_DIR/../../builtin/workflows");

/// Most workflow files read from the directory.
const MAX_FILES: usize = 200;

/// What the nodes use.
pub struct Deps {
    /// `code` nodes.
    pub sandbox: Sandbox,
    /// `tool` nodes, and the tools of `agent` nodes.
    pub backend: BackendTools,
    /// `human` nodes and frontend tools.
    pub submits: FrontendSubmits,
    /// Models and run logs (`llm` and `agent` nodes; every run's stream).
    pub agents: Arc<AgentService>,
    /// Agents and tools of `agent` nodes.
    pub catalog: Arc<Catalog>,
    /// `knowledge` nodes.
    pub knowledge: Arc<knowledge::Knowledge>,
}

/// Settings.
#[derive(Debug, Clone)]
pub struct WorkflowsConfig {
    /// The directory of workflow files (`BOARDSMITH_WORKFLOWS_DIR`, default `workflows`);
    /// a file replaces the built-in of its name.
    pub dir: PathBuf,
    /// Workflow runs in progress at once (`BOARDSMITH_WORKFLOW_MAX_RUNS`, default 16); a run
    /// parked on a human node does not count.
    pub max_runs: usize,
    /// Workflow runs of one API key in progress, parked ones included
    /// (`BOARDSMITH_WORKFLOW_MAX_RUNS_PER_KEY`, default 8); the owner has no such cap.
    pub max_runs_per_key: usize,
    /// How long an `llm` or `agent` node waits for a slot of the agent run cap
    /// (`AGENT_MAX_RUNS`) before it fails (`BOARDSMITH_WORKFLOW_AGENT_WAIT_MS`, default 30 s).
    pub agent_wait: Duration,
}

impl WorkflowsConfig {
    /// From the environment.
    pub fn from_env() -> Self {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        Self {
            dir: var("BOARDSMITH_WORKFLOWS_DIR")
                .map_or_else(|| PathBuf::from("workflows"), PathBuf::from),
            max_runs: var("BOARDSMITH_WORKFLOW_MAX_RUNS")
                .and_then(|v| v.trim().parse().ok())
                .filter(|&n| n > 0)
                .unwrap_or(16),
            max_runs_per_key: var("BOARDSMITH_WORKFLOW_MAX_RUNS_PER_KEY")
                .and_then(|v| v.trim().parse().ok())
                .filter(|&n| n > 0)
                .unwrap_or(8),
            agent_wait: var("BOARDSMITH_WORKFLOW_AGENT_WAIT_MS")
                .and_then(|v| v.trim().parse().ok())
                .map_or(Duration::from_secs(30), Duration::from_millis),
        }
    }
}

/// Why a workflow request was refused.
#[derive(Debug, thiserror::Error)]
pub enum WorkflowError {
    /// The definition (or the run's inputs) has problems; every one is listed.
    #[error("{}", summary(.0))]
    Invalid(Vec<Issue>),
    /// No workflow or run with this id.
    #[error("{0}")]
    NotFound(String),
    /// The request conflicts with the current state (an existing id, a run not resumable,
    /// a built-in that cannot be deleted).
    #[error("{0}")]
    Conflict(String),
    /// Too many runs in progress.
    #[error("{0}")]
    Busy(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The run's event stream could not be opened.
    #[error(transparent)]
    Stream(#[from] StreamError),
}

fn summary(issues: &[Issue]) -> String {
    match issues {
        [] => "invalid workflow".to_owned(),
        [one] => one.to_string(),
        [first, rest @ ..] => format!("{first} (and {} more problems)", rest.len()),
    }
}

/// Where a definition comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum Origin {
    /// Embedded `builtin/workflows/<id>.json`.
    Builtin,
    /// `workflows/<id>.json` on disk.
    File,
    /// Made through the API (stored).
    Api,
}

/// A definition and where it comes from.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// The id.
    pub id: String,
    /// Where it comes from.
    pub origin: Origin,
    /// The definition.
    pub definition: WorkflowDef,
}

/// One line of `GET /api/workflows`.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// The id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Where it comes from.
    pub origin: Origin,
    /// Its inputs' names.
    pub inputs: Vec<String>,
    /// Number of nodes.
    pub nodes: usize,
    /// Whether it validates on this server now (its tools and agents exist).
    pub valid: bool,
    /// The problems when it does not.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<Issue>,
}

/// A started or resumed run: its ids and its event stream.
#[derive(Debug)]
pub struct Started {
    /// The run.
    pub run_id: String,
    /// The stream's id (`Last-Event-ID: <streamId>:<seq>`).
    pub stream_id: String,
    /// The events from the first.
    pub events: Subscription,
}

/// The workflow service.
pub struct Workflows {
    deps: Arc<Deps>,
    store: Arc<Store>,
    runs: Runs,
    config: WorkflowsConfig,
    /// Definitions made through the API, by id (the store's, cached).
    stored: RwLock<BTreeMap<String, WorkflowDef>>,
    /// Runs in progress, their slots and caps.
    slots: Arc<Slots>,
}

impl std::fmt::Debug for Workflows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workflows").field("config", &self.config).finish_non_exhaustive()
    }
}

impl Workflows {
    /// Loads the stored definitions and marks runs a dead process left `running` as
    /// `interrupted`.
    #[base::boxed]
    pub async fn start(
        deps: Deps,
        store: Arc<Store>,
        config: WorkflowsConfig,
    ) -> Result<Arc<Self>, WorkflowError> {
        let runs = Runs::new(store.clone());
        // On a shared store a run left `running` may be another node's, still going: only
        // the embedded store's are known to be orphans at start.
        if !store.is_shared() {
            let interrupted = runs.recover().await?;
            if interrupted > 0 {
                tracing::info!(
                    interrupted,
                    "workflow runs interrupted by the last stop can be resumed"
                );
            }
        }
        let slots = Arc::new(Slots::new(config.max_runs, config.max_runs_per_key));
        // An answer to a parked run's human node takes its slot back before it is delivered.
        deps.agents.set_submit_gate(Arc::clone(&slots) as _);
        let workflows = Arc::new(Self {
            deps: Arc::new(deps),
            store,
            runs,
            config,
            stored: RwLock::new(BTreeMap::new()),
            slots,
        });
        workflows.reload().await?;
        Ok(workflows)
    }

    /// Re-reads the definitions made through the API (at start, and when another node of a
    /// shared store changed one).
    #[base::boxed]
    pub async fn reload(&self) -> Result<(), WorkflowError> {
        let mut stored = BTreeMap::new();
        for v in self.store.workflows().await? {
            match serde_json::from_value::<WorkflowDef>(v) {
                Ok(def) => {
                    if let Some(id) = def.id.clone() {
                        stored.insert(id, def);
                    }
                }
                Err(e) => tracing::warn!(error = %e, "skipping an unreadable stored workflow"),
            }
        }
        *self.stored.write().unwrap_or_else(PoisonError::into_inner) = stored;
        Ok(())
    }

    /// The node kinds with their fields.
    pub fn node_types() -> Vec<KindInfo> {
        NodeKind::ALL.iter().map(|k| k.info()).collect()
    }

    fn check_context(&self) -> CheckContext {
        CheckContext {
            tools: self.deps.backend.names().into_iter().map(str::to_owned).collect(),
            agents: self.deps.catalog.snapshot().agents().map(|a| a.key.clone()).collect(),
            knowledge_bases: self
                .deps
                .knowledge
                .list()
                .into_iter()
                .map(|b| (b.id, b.name))
                .collect(),
        }
    }

    /// Every problem of `def` on this server (empty: valid).
    pub fn validate(&self, def: &WorkflowDef) -> Vec<Issue> {
        match validate::validate(def, &self.check_context()) {
            Ok(_) => Vec::new(),
            Err(issues) => issues,
        }
    }

    /// Built-ins, then files over them, then API definitions over both.
    async fn entries(&self) -> BTreeMap<String, Entry> {
        let mut out = BTreeMap::new();
        let mut add = |id: String, origin: Origin, text: &str| match def::parse(text) {
            Ok(mut d) => {
                d.id = Some(id.clone());
                out.insert(id.clone(), Entry { id, origin, definition: d });
            }
            Err(e) => {
                tracing::warn!(workflow = %id, ?origin, error = %e, "skipping a workflow file")
            }
        };
        for f in BUILTIN.files() {
            if let (Some(id), Some(text)) = (json_stem(f.path()), f.contents_utf8()) {
                add(id, Origin::Builtin, text);
            }
        }
        let dir = self.config.dir.clone();
        let files = tokio::task::spawn_blocking(move || read_dir(&dir)).await.unwrap_or_default();
        for (id, text) in files {
            add(id, Origin::File, &text);
        }
        let stored = self.stored.read().unwrap_or_else(PoisonError::into_inner).clone();
        for (id, d) in stored {
            out.insert(id.clone(), Entry { id, origin: Origin::Api, definition: d });
        }
        out
    }

    /// Every workflow with whether it validates here.
    #[base::boxed]
    pub async fn list(&self) -> Vec<Summary> {
        let cx = self.check_context();
        self.entries()
            .await
            .into_values()
            .map(|e| {
                let problems = validate::validate(&e.definition, &cx).err().unwrap_or_default();
                Summary {
                    name: e.definition.name.clone(),
                    description: e.definition.description.clone(),
                    origin: e.origin,
                    inputs: e.definition.inputs.keys().cloned().collect(),
                    nodes: e.definition.nodes.len(),
                    valid: problems.is_empty(),
                    problems,
                    id: e.id,
                }
            })
            .collect()
    }

    /// The workflow `id`.
    #[base::boxed]
    pub async fn get(&self, id: &str) -> Result<Entry, WorkflowError> {
        self.entries()
            .await
            .remove(id)
            .ok_or_else(|| WorkflowError::NotFound(format!("no workflow `{id}`")))
    }

    /// Creates a workflow through the API; its `id` must not be taken by another API one.
    #[base::boxed]
    pub async fn create(&self, def: WorkflowDef) -> Result<Entry, WorkflowError> {
        let Some(id) = def.id.clone() else {
            return Err(WorkflowError::Invalid(vec![Issue::workflow("id", "required")]));
        };
        if self.stored.read().unwrap_or_else(PoisonError::into_inner).contains_key(&id) {
            return Err(WorkflowError::Conflict(format!(
                "workflow `{id}` exists; replace it with PUT /api/workflows/{id}"
            )));
        }
        self.put(&id, def).await
    }

    /// Creates or replaces the API definition `id` (it wins over a file or built-in).
    #[base::boxed]
    pub async fn put(&self, id: &str, mut def: WorkflowDef) -> Result<Entry, WorkflowError> {
        if def.id.as_deref().is_some_and(|given| given != id) {
            return Err(WorkflowError::Invalid(vec![Issue::workflow(
                "id",
                format!("`{}` differs from the path's `{id}`", def.id.as_deref().unwrap_or("")),
            )]));
        }
        def.id = Some(id.to_owned());
        let issues = self.validate(&def);
        if !issues.is_empty() {
            return Err(WorkflowError::Invalid(issues));
        }
        let value = serde_json::to_value(&def)
            .map_err(|e| StoreError::Storage(format!("encoding workflow: {e}")))?;
        self.store.put_workflow(id, value).await?;
        self.stored
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.to_owned(), def.clone());
        Ok(Entry { id: id.to_owned(), origin: Origin::Api, definition: def })
    }

    /// Deletes the API definition `id` (a file's or built-in of that id comes back).
    #[base::boxed]
    pub async fn delete(&self, id: &str) -> Result<(), WorkflowError> {
        let exists = self.stored.read().unwrap_or_else(PoisonError::into_inner).contains_key(id);
        if !exists {
            return Err(match self.get(id).await {
                Ok(_) => WorkflowError::Conflict(format!(
                    "workflow `{id}` comes from a file or is built in; only workflows made \
                     through the API can be deleted"
                )),
                Err(e) => e,
            });
        }
        self.store.delete_workflow(id).await?;
        self.stored.write().unwrap_or_else(PoisonError::into_inner).remove(id);
        Ok(())
    }

    /// Starts a run of workflow `id` with `inputs`; refused (before any event) when the
    /// workflow or the inputs are invalid.
    pub fn run<'a>(
        self: &'a Arc<Self>,
        id: &'a str,
        inputs: Map<String, Value>,
        caller: Option<String>,
        principal: Option<base::principal::Principal>,
    ) -> base::BoxFuture<'a, Result<Started, WorkflowError>> {
        Box::pin(async move {
            let entry = self.get(id).await?;
            let graph = validate::validate(&entry.definition, &self.check_context())
                .map_err(WorkflowError::Invalid)?;
            let inputs =
                def::resolve_inputs(&entry.definition, &inputs).map_err(WorkflowError::Invalid)?;
            let run_id = uuid::Uuid::now_v7().to_string();
            let now = now_ms();
            let record = RunRecord {
                run_id: run_id.clone(),
                workflow_id: entry.id,
                definition: entry.definition,
                inputs,
                caller,
                owner: principal.as_ref().and_then(|p| p.user_id()).map(|u| u.to_string()),
                status: RunStatus::Running,
                finished: Vec::new(),
                steps: 0,
                usage: Default::default(),
                attempts: 1,
                stream_id: run_id.clone(),
                error: None,
                started_at: now,
                updated_at: now,
            };
            self.launch(graph, record, principal).await
        })
    }

    /// Continues a failed, cancelled or interrupted run from its finished nodes (they are
    /// not run again) in a new event stream (`<runId>.<attempt>`).
    pub fn resume<'a>(
        self: &'a Arc<Self>,
        run_id: &'a str,
        principal: Option<base::principal::Principal>,
    ) -> base::BoxFuture<'a, Result<Started, WorkflowError>> {
        Box::pin(async move {
            let mut record =
                self.runs.get(run_id).await?.ok_or_else(|| {
                    WorkflowError::NotFound(format!("no workflow run `{run_id}`"))
                })?;
            if self.slots.contains(run_id) {
                return Err(WorkflowError::Conflict(format!("workflow run `{run_id}` is running")));
            }
            if !record.status.resumable() {
                return Err(WorkflowError::Conflict(format!(
                    "workflow run `{run_id}` is {:?}; only failed, cancelled or interrupted runs \
                     resume",
                    record.status
                )));
            }
            let graph = validate::validate(&record.definition, &self.check_context())
                .map_err(WorkflowError::Invalid)?;
            record.attempts += 1;
            record.stream_id = format!("{run_id}.{}", record.attempts);
            record.status = RunStatus::Running;
            record.error = None;
            record.updated_at = now_ms();
            self.launch(graph, record, principal).await
        })
    }

    /// The node running the event stream `stream_id` died (a shared store): if that stream is
    /// a workflow run's current attempt and the record still says `running`, the run becomes
    /// `interrupted`, resumable on any node.
    #[base::boxed]
    pub async fn stream_lost(&self, stream_id: &str) -> Result<(), WorkflowError> {
        let run_id = stream_id.split_once('.').map_or(stream_id, |(run, _)| run);
        if self.slots.contains(run_id) {
            return Ok(());
        }
        let Some(mut record) = self.runs.get(run_id).await? else { return Ok(()) };
        if record.stream_id != stream_id || record.status != RunStatus::Running {
            return Ok(());
        }
        record.status = RunStatus::Interrupted;
        record.updated_at = now_ms();
        self.runs.save(&record).await?;
        tracing::info!(run = run_id, "a workflow run's node died: it is interrupted, resumable");
        Ok(())
    }

    /// Registers, commits and spawns an attempt.
    async fn launch(
        self: &Arc<Self>,
        graph: validate::Graph,
        record: RunRecord,
        principal: Option<base::principal::Principal>,
    ) -> Result<Started, WorkflowError> {
        let run_id = record.run_id.clone();
        let cancel = CancellationToken::new();
        // Before anything is stored: a refused start or resume changes nothing.
        self.slots.admit(&run_id, record.caller.as_deref(), cancel.clone())?;
        let opened = async {
            self.runs.save(&record).await?;
            let sink = self.deps.agents.logs().start(&record.stream_id)?;
            let events = sink.subscribe(0)?;
            Ok::<_, WorkflowError>((sink, events))
        }
        .await;
        let (sink, events) = match opened {
            Ok(pair) => pair,
            Err(e) => {
                self.slots.finish(&run_id);
                return Err(e);
            }
        };
        let stream_id = record.stream_id.clone();
        let execution = engine::Execution {
            graph: Arc::new(graph),
            record,
            deps: Arc::clone(&self.deps),
            runs: self.runs.clone(),
            sink: Arc::new(sink),
            cancel,
            slots: Arc::clone(&self.slots),
            agent_wait: self.config.agent_wait,
            principal,
        };
        let service = Arc::clone(self);
        let id = run_id.clone();
        tokio::spawn(async move {
            let status = engine::execute(execution).await;
            tracing::info!(run = %id, ?status, "workflow run finished");
            service.slots.finish(&id);
        });
        Ok(Started { run_id, stream_id, events })
    }

    /// Cancels a run in progress (it ends with `run.cancel`).
    pub fn cancel(&self, run_id: &str) -> Result<(), WorkflowError> {
        if self.slots.cancel(run_id) {
            Ok(())
        } else {
            Err(WorkflowError::NotFound(format!(
                "workflow run `{run_id}` is not running in this server"
            )))
        }
    }

    /// The person run `run_id` is for (`None`: the server token's, or from before accounts).
    #[base::boxed]
    pub async fn owner_of(&self, run_id: &str) -> Result<Option<String>, WorkflowError> {
        self.runs
            .get(run_id)
            .await?
            .map(|r| r.owner)
            .ok_or_else(|| WorkflowError::NotFound(format!("no workflow run `{run_id}`")))
    }

    /// A run's state.
    #[base::boxed]
    pub async fn run_state(&self, run_id: &str) -> Result<RunView, WorkflowError> {
        self.runs
            .get(run_id)
            .await?
            .map(|r| r.view())
            .ok_or_else(|| WorkflowError::NotFound(format!("no workflow run `{run_id}`")))
    }

    /// Number of runs in progress (parked on a human node included).
    pub fn live_runs(&self) -> usize {
        self.slots.len()
    }
}

fn json_stem(path: &std::path::Path) -> Option<String> {
    if path.extension().is_some_and(|x| x == "json") {
        let stem = path.file_stem()?.to_string_lossy().into_owned();
        def::is_valid_id(&stem).then_some(stem)
    } else {
        None
    }
}

/// The `*.json` files of `dir` (absent dir: none), at most [`MAX_FILES`], each bounded.
fn read_dir(dir: &std::path::Path) -> Vec<(String, String)> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut out = Vec::new();
    for entry in entries.flatten().take(MAX_FILES) {
        let path = entry.path();
        let Some(id) = json_stem(&path) else { continue };
        let too_big = entry.metadata().map_or(true, |m| m.len() > def::MAX_DEFINITION_BYTES as u64);
        if too_big {
            tracing::warn!(file = %path.display(), "skipping a workflow file: too large");
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(text) => out.push((id, text)),
            Err(e) => {
                tracing::warn!(file = %path.display(), error = %e, "skipping a workflow file")
            }
        }
    }
    out.sort();
    out
}
