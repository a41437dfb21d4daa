//! Queries to runs: what `POST /api/query` does, without HTTP. [`AgentService::start`] checks the
//! query, resolves its agent and model (failing before any event is sent), opens the run's event
//! log and spawns the run; the caller streams the returned [`Stream`]. The spawned task owns the
//! chat for the whole run (runs of one chat are serialized), replays the chat's memory, sends
//! `request.query` / `chat.start`, runs the agent and appends the run to chat memory.
//!
//! A run outlives its first reader: readers attach to its log and detach when dropped. When the
//! last one detaches before the run ends, the run is cancelled after a grace period unless a
//! reader comes back (`Last-Event-ID`), so a dropped connection stops paying for tokens but a
//! flaky one does not lose its answer.
//!
//! `AGENT_MAX_RUNS` bounds every agent run on the server: queries' runs (a team run is one)
//! and the agent runs of workflow nodes, which hold a [`TaskSlot`] while they run.
//!
//! Knows nothing of HTTP or SSE framing (the gateway does that).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::catalog::Catalog;
use super::definition::AgentDefinition;
use super::events::{
    EventBody, EventSink, Query, RunLogConfig, RunLogs, StreamError, Subscription, Upload,
};
use super::memory::{
    ChatMemory, MemoryError, RunRecord, RunRecorder, after_summary, chat_name, image_block,
    replay_messages, validate_chat_id,
};
use super::message::AgentMessage;
use super::run::{
    ContextSource, FallbackResolver, ModelResolver, ResolvedModel, RunDeps, RunHooks, RunInput,
    run_recorded,
};
use super::tools::mcp::McpHub;
use super::tools::{BackendTools, FrontendSubmits};
use crate::definition::team::{Meter, TeamKind};
use llm::{ContentBlock, ImageSource, LlmError, Models, ProviderKind};
use uploads::Uploads;

mod remote;
mod task;
mod team;

pub use remote::{RemoteRuns, RunHold, SubmitGate};
pub use task::{TaskAgent, TaskRequest};

/// A query as clients send it (`POST /api/query`).
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QueryRequest {
    /// The user's message (required, non-empty).
    pub message: String,
    /// The agent; absent: the configured default agent.
    #[serde(default)]
    pub agent_key: Option<String>,
    /// The chat to continue; absent or empty: a new chat.
    #[serde(default)]
    pub chat_id: Option<String>,
    /// The client's request id; absent: the run id.
    #[serde(default)]
    pub request_id: Option<String>,
    /// Who speaks (default `user`).
    #[serde(default)]
    pub role: Option<String>,
    /// Referenced files, pages or records (kept with the run).
    #[serde(default)]
    pub references: Option<Vec<Value>>,
    /// Free-form parameters.
    #[serde(default)]
    pub params: Option<Value>,
    /// Where the user is.
    #[serde(default)]
    pub scene: Option<Value>,
    /// `false`: answer with the whole event list at the end instead of a stream.
    #[serde(default)]
    pub stream: Option<bool>,
    /// Images for the model (its registry entry must say `vision`): uploads
    /// (`POST /api/uploads`) or `https:` URLs the provider fetches itself (not for Ollama).
    #[serde(default)]
    pub images: Option<Vec<QueryImage>>,
    /// What to do when the chat has a run in progress: wait for it (default), `steer` it or
    /// queue the message as a `followUp`.
    #[serde(default)]
    pub busy: Option<Busy>,
    /// Only these of the agent's tools for this request (by name; never more than the agent
    /// has: a name it does not have is refused). Absent: all of them.
    #[serde(default)]
    pub tools: Option<Vec<String>>,
    /// The conversation before `message` as the client keeps it (clients of the
    /// OpenAI-compatible API send the whole conversation each time): the run's history when
    /// the chat has none of its own. Not part of `POST /api/query`'s body.
    #[serde(skip)]
    pub prior: Vec<llm::Message>,
    /// The API key that asked (`None`: the owner); handed to the run's hooks.
    #[serde(skip)]
    pub caller: Option<String>,
    /// Who asked (`None`: the owner): the run's tools act with their rights.
    #[serde(skip)]
    pub principal: Option<base::principal::Principal>,
}

/// One image of a query: exactly one of the two fields.
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QueryImage {
    /// An upload's id (`POST /api/uploads`).
    #[serde(default)]
    pub upload_id: Option<String>,
    /// An `https:` address.
    #[serde(default)]
    pub url: Option<String>,
}

/// What a query does to a chat whose run is still going.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum Busy {
    /// Start a run of its own once the running one has finished (runs of a chat never overlap).
    #[default]
    Wait,
    /// Give the message to the running run now: the rest of its current step's tool calls are
    /// skipped and the message goes to its next model call (`run.steer`, mode `steer`).
    Steer,
    /// Give the message to the running run for after its answer: it goes on for another turn
    /// (`run.steer`, mode `followUp`).
    FollowUp,
}

impl Busy {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Wait => "wait",
            Self::Steer => "steer",
            Self::FollowUp => "followUp",
        }
    }
}

/// Who a run is for, as the hooks factory sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunContext {
    /// The agent.
    pub agent: String,
    /// The API key that asked (`None`: the owner).
    pub caller: Option<String>,
    /// The model the run starts with, `provider/model`.
    pub model: String,
}

/// Makes a run's hooks (usage accounting, budgets) from who the run is for.
pub type HooksFactory = Arc<dyn Fn(&RunContext) -> Arc<dyn super::run::RunHooks> + Send + Sync>;

/// What a run gets besides its input: the hooks made for it and its model resolver.
struct Extras {
    hooks: Option<Arc<dyn RunHooks>>,
    resolver: Option<Arc<dyn ModelResolver>>,
    /// The model that summarizes the chat's oldest runs when its history is long.
    summarizer: ResolvedModel,
    /// The run's model takes images.
    vision: bool,
    /// The API key that asked (`None`: the owner): a team's members are accounted to it.
    caller: Option<String>,
}

/// Why a query was refused before its run started.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    /// A field is missing or invalid (the message names it).
    #[error("{0}")]
    Invalid(String),
    /// This field is invalid (`images[0].uploadId`, ...).
    #[error("`{param}`: {message}")]
    Param {
        /// The field's path.
        param: String,
        /// What is wrong with it.
        message: String,
    },
    /// No agent with this key.
    #[error("agent `{0}` not found")]
    UnknownAgent(String),
    /// The agent's model cannot be used (no provider configured, unknown model, missing key).
    #[error("no usable model for agent `{agent}`: {error}")]
    Model {
        /// The agent.
        agent: String,
        /// What the LLM configuration said.
        error: LlmError,
    },
    /// A `Last-Event-ID` that cannot be resumed.
    #[error(transparent)]
    Resume(#[from] StreamError),
    /// Too many runs in progress (on the server, or waiting for one chat); try again later.
    #[error("{0}")]
    Busy(String),
}

/// [`ServiceConfig::summary_threshold`] by default.
pub const DEFAULT_SUMMARY_THRESHOLD: f64 = 0.5;

/// Settings of the service.
#[derive(Debug, Clone)]
pub struct ServiceConfig {
    /// The agent of queries that name none (`AGENT_DEFAULT_KEY`; default `dashboard`).
    pub default_agent: String,
    /// How long a run with no reader goes on before it is cancelled
    /// (`AGENT_DISCONNECT_GRACE_MS`, default 3 s).
    pub disconnect_grace: Duration,
    /// Replay buffer bounds.
    pub logs: RunLogConfig,
    /// Runs in progress at once on the server, waiting ones included (`AGENT_MAX_RUNS`, 64).
    pub max_runs: usize,
    /// Runs of one chat in progress or waiting for its lock (`AGENT_MAX_RUNS_PER_CHAT`, 4):
    /// runs of a chat are serialized, so more would only queue.
    pub max_runs_per_chat: usize,
    /// Share of the model's context window a chat's replayed history may fill before its
    /// oldest runs are summarized (`AGENT_SUMMARY_THRESHOLD`, default 0.5; 0: never).
    pub summary_threshold: f64,
}

impl ServiceConfig {
    /// The defaults, overridden by `AGENT_DEFAULT_KEY` and `AGENT_DISCONNECT_GRACE_MS`.
    pub fn from_env() -> Self {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        Self {
            default_agent: var("AGENT_DEFAULT_KEY").unwrap_or_else(|| "dashboard".to_owned()),
            disconnect_grace: var("AGENT_DISCONNECT_GRACE_MS")
                .and_then(|v| v.trim().parse().ok())
                .map_or(Duration::from_secs(3), Duration::from_millis),
            logs: RunLogConfig::default(),
            max_runs: var("AGENT_MAX_RUNS").and_then(|v| v.trim().parse().ok()).unwrap_or(64),
            max_runs_per_chat: var("AGENT_MAX_RUNS_PER_CHAT")
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(4),
            summary_threshold: var("AGENT_SUMMARY_THRESHOLD")
                .and_then(|v| v.trim().parse::<f64>().ok())
                .filter(|t| (0.0..=1.0).contains(t))
                .unwrap_or(DEFAULT_SUMMARY_THRESHOLD),
        }
    }
}

/// Runs queries: agents, memory, tools and models put together.
pub struct AgentService {
    catalog: Arc<Catalog>,
    memory: ChatMemory,
    submits: FrontendSubmits,
    backend: BackendTools,
    models: Arc<Models>,
    config: ServiceConfig,
    logs: Arc<RunLogs>,
    /// Other nodes' runs (a shared store), when there are other nodes.
    remote: std::sync::OnceLock<Arc<dyn RemoteRuns>>,
    /// Asked before an answer reaches a waiter here (workflow runs parked on a human node).
    submit_gate: std::sync::OnceLock<Arc<dyn SubmitGate>>,
    live: Mutex<HashMap<String, Arc<LiveRun>>>,
    context: Vec<Arc<dyn ContextSource>>,
    hooks: Option<HooksFactory>,
    /// Agents' MCP servers; `None`: their `mcpServers` are ignored.
    mcp: Option<McpHub>,
    uploads: Option<Arc<Uploads>>,
    /// Slots of `max_runs` held by tasks outside this service's runs ([`TaskSlot`]: a
    /// workflow's `llm` and `agent` nodes). Changed under the `live` lock, so a query and a
    /// node never both take the last slot.
    task_slots: AtomicUsize,
    /// Woken when a run ends or a [`TaskSlot`] is dropped.
    slot_freed: tokio::sync::Notify,
}

/// A slot of the agent run cap (`AGENT_MAX_RUNS`) held by an agent run that is not a query of
/// this service: a workflow's `llm` or `agent` node. Dropping it frees the slot.
#[derive(Debug)]
pub struct TaskSlot {
    service: Arc<AgentService>,
}

impl Drop for TaskSlot {
    fn drop(&mut self) {
        self.service.task_slots.fetch_sub(1, Ordering::AcqRel);
        self.service.slot_freed.notify_waiters();
    }
}

impl std::fmt::Debug for AgentService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentService").field("config", &self.config).finish_non_exhaustive()
    }
}

/// A run in progress: its chat, its cancel token and how many readers it has.
#[derive(Debug, Default)]
struct LiveRun {
    chat_id: String,
    cancel: CancellationToken,
    readers: Mutex<usize>,
    /// Messages for the running loop (`Busy::Steer`, `Busy::FollowUp`).
    steering: super::run::MessageQueue,
    follow_up: super::run::MessageQueue,
    /// Its agent may make more than one model call (a one-call mode cannot take a message
    /// mid-run: such a query waits for a run of its own instead).
    steerable: bool,
}

/// A reader of one run's events. Dropping it detaches from the run (see the module doc).
#[derive(Debug)]
pub struct Stream {
    /// The run.
    pub run_id: String,
    /// The chat.
    pub chat_id: String,
    /// The events (from the start, or after the `Last-Event-ID`).
    pub events: Subscription,
    /// Set when the query went to a run already in progress instead of starting one.
    pub queued: Option<Busy>,
    _reader: Option<Reader>,
}

/// Attachment of one reader to a live run.
#[derive(Debug)]
struct Reader {
    run: Arc<LiveRun>,
    grace: Duration,
}

impl Reader {
    fn attach(run: Arc<LiveRun>, grace: Duration) -> Self {
        *lock(&run.readers) += 1;
        Self { run, grace }
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        let left = {
            let mut n = lock(&self.run.readers);
            *n = n.saturating_sub(1);
            *n
        };
        if left > 0 || self.run.cancel.is_cancelled() {
            return;
        }
        let run = Arc::clone(&self.run);
        let grace = self.grace;
        let cancel_if_alone = move || {
            if *lock(&run.readers) == 0 {
                run.cancel.cancel();
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(handle) if !grace.is_zero() => {
                handle.spawn(async move {
                    tokio::time::sleep(grace).await;
                    cancel_if_alone();
                });
            }
            _ => cancel_if_alone(),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl AgentService {
    /// The service over the app's catalog, memory, submit hub and backend tools.
    pub fn new(
        catalog: Arc<Catalog>,
        memory: ChatMemory,
        submits: FrontendSubmits,
        backend: BackendTools,
        models: Arc<Models>,
        config: ServiceConfig,
    ) -> Self {
        let logs = Arc::new(RunLogs::new(config.logs));
        let mut backend = backend;
        if backend.contains(super::tools::agent_file::NAME) {
            // The registry's executor cannot see the catalog, so it composes no team; this one
            // checks a team's members there (it writes where the catalog reads agents).
            backend.register(Arc::new(
                super::tools::AgentFileCreate::new(catalog.config().agents_dir.clone())
                    .with_catalog(Arc::clone(&catalog)),
            ));
        }
        Self {
            catalog,
            memory,
            submits,
            backend,
            models,
            config,
            logs,
            remote: std::sync::OnceLock::new(),
            submit_gate: std::sync::OnceLock::new(),
            live: Mutex::new(HashMap::new()),
            context: Vec::new(),
            hooks: None,
            mcp: None,
            uploads: None,
            task_slots: AtomicUsize::new(0),
            slot_freed: tokio::sync::Notify::new(),
        }
    }

    /// Connects agents' `mcpServers` through `hub`: their tools join each run's tools.
    #[must_use]
    pub fn with_mcp(mut self, hub: McpHub) -> Self {
        self.mcp = Some(hub);
        self
    }

    /// The MCP connections, if this service has them.
    pub fn mcp(&self) -> Option<&McpHub> {
        self.mcp.as_ref()
    }

    /// Takes queries' uploaded images from `uploads` (without it, `images[].uploadId` is
    /// refused).
    #[must_use]
    pub fn with_uploads(mut self, uploads: Arc<Uploads>) -> Self {
        self.uploads = Some(uploads);
        self
    }

    /// Gives every run the hooks `factory` makes for it.
    #[must_use]
    pub fn with_hooks(mut self, factory: HooksFactory) -> Self {
        self.hooks = Some(factory);
        self
    }

    /// Adds a live context source (asked before every model call of the agents it serves).
    #[must_use]
    pub fn with_context(mut self, source: Arc<dyn ContextSource>) -> Self {
        self.context.push(source);
        self
    }

    /// The run logs (replay for `Last-Event-ID`): workflow runs stream into them too.
    pub fn logs(&self) -> &Arc<RunLogs> {
        &self.logs
    }

    /// The models the service calls.
    pub fn models(&self) -> &Arc<Models> {
        &self.models
    }

    /// Takes a slot of the agent run cap for an agent run outside this service's queries (a
    /// workflow's `llm` or `agent` node), waiting up to `wait` for one to free; past that,
    /// [`QueryError::Busy`] naming the cap. Team members take none: their team is one run.
    pub fn task_slot<'a>(
        self: &'a Arc<Self>,
        wait: Duration,
    ) -> base::BoxFuture<'a, Result<TaskSlot, QueryError>> {
        Box::pin(async move {
            let deadline = tokio::time::Instant::now() + wait;
            loop {
                // Registered before looking, so a slot freed in between still wakes this wait.
                let freed = self.slot_freed.notified();
                tokio::pin!(freed);
                freed.as_mut().enable();
                let held = {
                    let runs = lock(&self.live);
                    let held = runs.len() + self.task_slots.load(Ordering::Acquire);
                    if held < self.config.max_runs {
                        self.task_slots.fetch_add(1, Ordering::AcqRel);
                        return Ok(TaskSlot { service: Arc::clone(self) });
                    }
                    held
                };
                tokio::select! {
                    () = &mut freed => {}
                    () = tokio::time::sleep_until(deadline) => {
                        return Err(QueryError::Busy(format!(
                            "no agent run slot freed within {} ms: {held} agent runs are in \
                             progress (workflow nodes included), the most this server runs at once \
                             (AGENT_MAX_RUNS)",
                            wait.as_millis()
                        )));
                    }
                }
            }
        })
    }

    /// Number of runs in progress.
    pub fn live_runs(&self) -> usize {
        lock(&self.live).len()
    }

    /// The ids of the runs in progress.
    pub fn live_run_ids(&self) -> Vec<String> {
        lock(&self.live).keys().cloned().collect()
    }

    /// Cancels a run in progress (it ends with `run.cancel`); false if it is not running.
    pub fn cancel(&self, run_id: &str) -> bool {
        match lock(&self.live).get(run_id) {
            Some(run) => {
                run.cancel.cancel();
                true
            }
            None => false,
        }
    }

    /// Checks `request`, resolves agent and model, and starts the run. Errors come before any
    /// event exists.
    pub fn start<'a>(
        self: &'a Arc<Self>,
        request: QueryRequest,
    ) -> base::BoxFuture<'a, Result<Stream, QueryError>> {
        Box::pin(async move {
            let message = request.message.trim();
            if message.is_empty() {
                return Err(QueryError::Invalid("`message` must be a non-empty string".into()));
            }
            let new_chat = request.chat_id.as_deref().is_none_or(|c| c.trim().is_empty());
            let chat_id = match request.chat_id.as_deref().map(str::trim) {
                None | Some("") => uuid::Uuid::now_v7().to_string(),
                Some(id) => {
                    validate_chat_id(id)
                        .map_err(|e| QueryError::Invalid(format!("`chatId`: {e}")))?;
                    id.to_owned()
                }
            };
            let has_images = request.images.as_ref().is_some_and(|i| !i.is_empty());
            if has_images && matches!(request.busy, Some(Busy::Steer | Busy::FollowUp)) {
                // A running run takes text only: its next model call is already being built.
                return Err(QueryError::Param {
                    param: "images".into(),
                    message: "images go with a message of its own, not one that steers or follows \
                              up a running run (`busy`: `wait`)"
                        .into(),
                });
            }
            if !new_chat && let Some(mode @ (Busy::Steer | Busy::FollowUp)) = request.busy {
                if let Some(stream) = self.queue_into_running(&chat_id, mode, message) {
                    return Ok(stream);
                }
                if let Some(stream) = self.queue_elsewhere(&chat_id, mode, message).await {
                    return Ok(stream);
                }
            }
            let agent_key = match request.agent_key.as_deref().map(str::trim) {
                None | Some("") => self.config.default_agent.clone(),
                Some(k) => k.to_owned(),
            };
            let snapshot = self.catalog.snapshot();
            let agent = snapshot
                .agent(&agent_key)
                .ok_or_else(|| QueryError::UnknownAgent(agent_key.clone()))?;
            let connected = self
                .model_for(&agent)
                .map_err(|error| QueryError::Model { agent: agent_key.clone(), error })?;
            let images = self
                .attach(request.images.as_deref().unwrap_or_default(), &connected, &agent_key)
                .await?;
            let vision = connected.model.vision;
            let primary = resolved(connected);
            let (provider, model, context_tokens, reasoning) = (
                Arc::clone(&primary.provider),
                primary.model.clone(),
                primary.context_tokens,
                primary.reasoning,
            );
            let summarizer = match agent.summary_model.as_deref() {
                None => primary.clone(),
                Some(reference) => {
                    let (p, m) = reference.split_once('/').unwrap_or((reference, ""));
                    let c =
                        self.models.connect_with_provider(p, m).map_err(|e| QueryError::Model {
                            agent: agent_key.clone(),
                            error: LlmError::Config {
                                message: format!("summaryModel `{reference}`: {e}"),
                            },
                        })?;
                    resolved(c)
                }
            };
            let resolver = self
                .with_fallbacks(&agent, primary, !images.is_empty())
                .map_err(|error| QueryError::Model { agent: agent_key.clone(), error })?
                .map(|r| Arc::new(r) as Arc<dyn ModelResolver>);
            let mut tools = RunInput::tools_from(&snapshot, &agent);
            if let Some(only) = &request.tools {
                let unknown: Vec<&str> = only
                    .iter()
                    .filter(|n| !tools.iter().any(|t| &t.name == *n))
                    .map(String::as_str)
                    .collect();
                if !unknown.is_empty() {
                    let has: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
                    return Err(QueryError::Invalid(format!(
                        "`tools` may only narrow agent `{agent_key}`'s tools ({}); it has no {}",
                        if has.is_empty() { "it has none".to_owned() } else { has.join(", ") },
                        unknown.iter().map(|u| format!("`{u}`")).collect::<Vec<_>>().join(", ")
                    )));
                }
                tools.retain(|t| only.contains(&t.name));
            }
            let run_id = uuid::Uuid::now_v7().to_string();
            let hooks = self.hooks.as_ref().map(|make| {
                make(&RunContext {
                    agent: agent_key.clone(),
                    caller: request.caller.clone(),
                    model: format!("{}/{model}", provider.key()),
                })
            });
            let query = Query {
                request_id: request
                    .request_id
                    .filter(|r| !r.trim().is_empty())
                    .unwrap_or_else(|| run_id.clone()),
                chat_id: chat_id.clone(),
                role: request.role.unwrap_or_else(|| "user".to_owned()),
                message: request.message.clone(),
                agent_key: Some(agent_key),
                references: request.references,
                params: request.params,
                scene: request.scene,
                stream: request.stream,
            };
            let live = Arc::new(LiveRun {
                chat_id: chat_id.clone(),
                // A sequential, parallel or routing team has no loop of its own to take a message.
                steerable: agent.policy.budget.max_model_calls > 1
                    && agent.team.as_ref().is_none_or(|t| t.kind == TeamKind::Supervisor),
                ..LiveRun::default()
            });
            {
                // Checked and taken under one lock, before any event exists.
                let mut runs = lock(&self.live);
                let held = runs.len() + self.task_slots.load(Ordering::Acquire);
                if held >= self.config.max_runs {
                    return Err(QueryError::Busy(format!(
                        "{held} agent runs are in progress (workflow nodes included), the most this \
                         server runs at once (AGENT_MAX_RUNS); try again when one has finished"
                    )));
                }
                let of_chat = runs.values().filter(|r| r.chat_id == chat_id).count();
                if of_chat >= self.config.max_runs_per_chat {
                    return Err(QueryError::Busy(format!(
                        "chat `{chat_id}` already has {of_chat} runs in progress or waiting \
                         (AGENT_MAX_RUNS_PER_CHAT); wait for them or cancel one"
                    )));
                }
                runs.insert(run_id.clone(), Arc::clone(&live));
            }
            let (sink, events) = match self.logs.start(&run_id).and_then(|sink| {
                let events = sink.subscribe(0)?;
                Ok((sink, events))
            }) {
                Ok(pair) => pair,
                Err(e) => {
                    lock(&self.live).remove(&run_id);
                    return Err(e.into());
                }
            };
            let reader = Reader::attach(Arc::clone(&live), self.config.disconnect_grace);
            let input = RunInput {
                run_id: run_id.clone(),
                chat_id: chat_id.clone(),
                tools,
                agent,
                history: request
                    .prior
                    .into_iter()
                    .map(super::message::AgentMessage::from)
                    .collect(),
                user_message: request.message,
                user_images: images.iter().filter_map(image_block).collect(),
                provider,
                model,
                context_tokens,
                reasoning,
                principal: request.principal.clone(),
            };
            let service = Arc::clone(self);
            tokio::spawn(async move {
                service
                    .drive(
                        input,
                        (query, images),
                        new_chat,
                        sink,
                        &live,
                        Extras { hooks, resolver, summarizer, vision, caller: request.caller },
                    )
                    .await;
                lock(&service.live).remove(&run_id);
                service.slot_freed.notify_waiters();
            });
            Ok(Stream {
                run_id: events.run_id().to_owned(),
                chat_id,
                events,
                queued: None,
                _reader: Some(reader),
            })
        })
    }

    /// Hands `message` to the run in progress on `chat_id`, if there is one that can take it,
    /// and returns a reader of that run from now on (its `run.steer` says when the message
    /// reached it). A message the run never takes (it failed or was cancelled first) is lost
    /// with it; the reader sees that end.
    fn queue_into_running(&self, chat_id: &str, mode: Busy, message: &str) -> Option<Stream> {
        let (run_id, run) = lock(&self.live)
            .iter()
            .find(|(_, r)| r.chat_id == chat_id && r.steerable && !r.cancel.is_cancelled())
            .map(|(id, r)| (id.clone(), Arc::clone(r)))?;
        let log = self.logs.get(&run_id).filter(|l| !l.is_finished())?;
        let events = log.subscribe(log.last_seq()).ok()?;
        match mode {
            Busy::Steer => run.steering.push(message),
            _ => run.follow_up.push(message),
        }
        let reader = Reader::attach(Arc::clone(&run), self.config.disconnect_grace);
        Some(Stream {
            run_id,
            chat_id: chat_id.to_owned(),
            events,
            queued: Some(mode),
            _reader: Some(reader),
        })
    }

    /// The provider and model of an agent: its `providerKey`/`model`, or the configured
    /// default (`BOARDSMITH_MODEL` overrides both).
    fn model_for(&self, agent: &AgentDefinition) -> Result<llm::Connected, LlmError> {
        let provider_key = agent.provider_key.as_deref().unwrap_or("").trim();
        let model = agent.model.as_deref().unwrap_or("").trim();
        if provider_key.is_empty() {
            self.models.connect(model)
        } else {
            self.models.connect_with_provider(provider_key, model)
        }
    }

    /// Checks a query's images against the limits, the store and the model (before any event
    /// exists) and describes each as its `request.upload` will: an upload by its sha256, a URL
    /// by its address.
    async fn attach(
        &self,
        images: &[QueryImage],
        connected: &llm::Connected,
        agent: &str,
    ) -> Result<Vec<Upload>, QueryError> {
        let param = |param: String, message: String| QueryError::Param { param, message };
        if images.is_empty() {
            return Ok(Vec::new());
        }
        let limits = self.uploads.as_ref().map(|u| u.limits()).unwrap_or_default();
        if images.len() > limits.max_per_message {
            return Err(param(
                "images".into(),
                format!(
                    "{} images; a message takes at most {} (BOARDSMITH_UPLOAD_MAX_PER_MESSAGE)",
                    images.len(),
                    limits.max_per_message
                ),
            ));
        }
        if !connected.model.vision {
            return Err(param(
                "images".into(),
                format!(
                    "model `{}` of agent `{agent}` does not take images (its registry entry has \
                     no `vision`); use an agent with a vision model or send no images",
                    connected.qualified_id()
                ),
            ));
        }
        let mut out = Vec::with_capacity(images.len());
        let mut total = 0u64;
        for (i, image) in images.iter().enumerate() {
            match (image.upload_id.as_deref(), image.url.as_deref()) {
                (Some(id), None) => {
                    let Some(uploads) = &self.uploads else {
                        return Err(param(
                            format!("images[{i}].uploadId"),
                            "this server takes no uploads".into(),
                        ));
                    };
                    let info = uploads
                        .info(id.trim())
                        .await
                        .map_err(|e| param(format!("images[{i}].uploadId"), e.to_string()))?;
                    total += info.size_bytes;
                    out.push(Upload {
                        kind: "image".into(),
                        name: info.name,
                        size_bytes: info.size_bytes,
                        mime_type: info.mime_type,
                        sha256: Some(info.sha256),
                        url: None,
                    });
                }
                (None, Some(url)) => {
                    let url = url.trim();
                    let https = url.len() > 8
                        && url[..8].eq_ignore_ascii_case("https://")
                        && !url.chars().any(char::is_whitespace);
                    if !https {
                        return Err(param(
                            format!("images[{i}].url"),
                            "must be an `https:` address (upload the image to send its bytes)"
                                .into(),
                        ));
                    }
                    if connected.provider.kind() == ProviderKind::Ollama {
                        return Err(param(
                            format!("images[{i}].url"),
                            format!(
                                "`{}` is an Ollama model, which takes only uploaded images",
                                connected.qualified_id()
                            ),
                        ));
                    }
                    let name = url.rsplit('/').next().unwrap_or_default();
                    out.push(Upload {
                        kind: "image".into(),
                        name: base::text::clip(name.split(['?', '#']).next().unwrap_or(""), 120),
                        size_bytes: 0,
                        mime_type: String::new(),
                        sha256: None,
                        url: Some(url.to_owned()),
                    });
                }
                _ => {
                    return Err(param(
                        format!("images[{i}]"),
                        "give exactly one of `uploadId` and `url`".into(),
                    ));
                }
            }
        }
        if total > limits.max_message_bytes {
            return Err(param(
                "images".into(),
                format!(
                    "{total} bytes of images; a message takes at most {} \
                     (BOARDSMITH_UPLOAD_MAX_MESSAGE_BYTES)",
                    limits.max_message_bytes
                ),
            ));
        }
        Ok(out)
    }

    /// Replaces every [`ImageSource::Upload`] in `messages` with the upload's bytes, read now
    /// (chat memory keeps only references); one that cannot be read any more stays a
    /// reference, which the dialects send as a note. For a model without `vision` (a chat
    /// continued with another agent) every image becomes a note instead.
    async fn load_images(&self, messages: &mut [AgentMessage], vision: bool) {
        for m in messages {
            if let AgentMessage::Llm(llm::Message::User { content }) = m {
                self.load_blocks(content, vision).await;
            }
        }
    }

    /// [`Self::load_images`] for one message's content.
    async fn load_blocks(&self, content: &mut [ContentBlock], vision: bool) {
        for block in content {
            let ContentBlock::Image { media_type, source } = block else { continue };
            if !vision {
                *block = ContentBlock::text("[the user attached an image here]");
                continue;
            }
            let (ImageSource::Upload { id }, Some(uploads)) = (&*source, &self.uploads) else {
                continue;
            };
            match uploads.read(id).await {
                Ok((info, bytes)) => {
                    use base64::Engine as _;
                    *media_type = info.mime_type;
                    *source = ImageSource::Base64 {
                        data: base64::engine::general_purpose::STANDARD.encode(bytes),
                    };
                }
                Err(e) => {
                    tracing::warn!(upload = %id, error = %e, "an image of the chat cannot be loaded");
                }
            }
        }
    }

    /// The agent's model followed by its fallbacks (`fallbackModels`, else `[llm] fallback`),
    /// each connected now so a bad reference refuses the query before any event; `None` when
    /// there is nothing to fall back to. Repeats and the model itself are skipped.
    fn with_fallbacks(
        &self,
        agent: &AgentDefinition,
        primary: ResolvedModel,
        needs_vision: bool,
    ) -> Result<Option<FallbackResolver>, LlmError> {
        let config = self.models.config();
        let (field, list) = match &agent.fallback_models {
            Some(list) => ("fallbackModels", list.as_slice()),
            None => ("[llm] fallback", config.fallback_models()),
        };
        let mut candidates = vec![primary];
        for (i, reference) in list.iter().enumerate() {
            let (provider, model) = reference.split_once('/').unwrap_or((reference, ""));
            let connected = self.models.connect_with_provider(provider, model).map_err(|e| {
                LlmError::Config { message: format!("{field}[{i}] `{reference}`: {e}") }
            })?;
            let seen = candidates.iter().any(|c| {
                c.provider.key() == connected.provider.key() && c.model == connected.model.id
            });
            // A model that cannot see the query's images is no substitute.
            if !seen && (connected.model.vision || !needs_vision) {
                candidates.push(resolved(connected));
            }
        }
        Ok(FallbackResolver::new(candidates))
    }

    /// The backend tools of a run of `agent`: the app's, plus its MCP servers' tools (added to
    /// `tools`). A server that is down leaves its tools out; the run goes on without them.
    async fn backend_for(
        &self,
        agent: &AgentDefinition,
        tools: &mut Vec<super::catalog::ToolSpec>,
        cancel: &CancellationToken,
    ) -> BackendTools {
        let mut backend = self.backend.clone();
        if let Some(hub) = &self.mcp
            && !agent.mcp_servers.is_empty()
        {
            let found = tokio::select! {
                biased;
                () = cancel.cancelled() => Default::default(),
                found = hub.tools_for(&agent.mcp_servers) => found,
            };
            // The catalog's tools win over an MCP tool of the same name.
            for (spec, tool) in found.specs.into_iter().zip(found.executors) {
                if tools.iter().all(|t| t.name != spec.name) && !backend.contains(&spec.name) {
                    tools.push(spec);
                    backend.register(tool);
                }
            }
        }
        backend
    }

    /// The run task: owns the chat, replays memory, runs, stores.
    async fn drive(
        self: &Arc<Self>,
        mut input: RunInput,
        (query, images): (Query, Vec<Upload>),
        new_chat: bool,
        sink: EventSink,
        live: &LiveRun,
        extras: Extras,
    ) {
        // Shared with a supervisor's member tools, which stream into it while it runs.
        let sink = Arc::new(sink);
        let cancel = live.cancel.clone();
        sink.emit(EventBody::RequestQuery(query.clone()));
        for upload in &images {
            sink.emit(EventBody::RequestUpload {
                request_id: query.request_id.clone(),
                chat_id: Some(query.chat_id.clone()),
                upload: upload.clone(),
            });
        }
        let chat = tokio::select! {
            biased;
            () = cancel.cancelled() => Err(None),
            chat = self.lock_chat_everywhere(&input.chat_id, &input.run_id) => chat.map_err(Some),
        };
        let prepared = match chat {
            Ok(chat) => match self.prepare(&chat, new_chat, &sink, &query.message).await {
                Ok(history) => Ok((chat, history)),
                Err(e) => Err(Some(e)),
            },
            Err(e) => Err(e),
        };
        let (chat, runs) = match prepared {
            Ok(p) => p,
            Err(e) => {
                // Failed before the run started: still exactly one run.start and one end.
                let run_id = input.run_id.clone();
                sink.emit(EventBody::RunStart {
                    run_id: run_id.clone(),
                    chat_id: input.chat_id.clone(),
                });
                match e {
                    None => sink.emit(EventBody::RunCancel { run_id }),
                    Some(e) => {
                        tracing::error!(run = %run_id, error = %e, "chat memory unavailable");
                        sink.emit(EventBody::RunError {
                            run_id,
                            error: json!({ "message": format!("chat memory unavailable: {e}") }),
                        })
                    }
                };
                return;
            }
        };
        let mut recorder = self.memory.recorder(&input.run_id, query, super::events::now_ms());
        recorder.images(&images);
        recorder.owner(input.principal.as_ref().and_then(|p| p.user_id()).map(ToString::to_string));
        let history = tokio::select! {
            biased;
            () = cancel.cancelled() => None,
            h = self.history(&runs, &input, &extras, &sink, &mut recorder) => Some(h),
        };
        // The chat's own history wins over one the client sent.
        match history {
            Some(history) if !history.is_empty() => input.history = history,
            _ => {}
        }
        self.load_images(&mut input.history, extras.vision).await;
        self.load_blocks(&mut input.user_images, true).await;
        let backend = self.backend_for(&input.agent, &mut input.tools, &cancel).await;
        let mut deps = RunDeps::new(backend, self.submits.clone());
        deps.cancel = cancel;
        deps.context = self.context.clone();
        deps.steering = live.steering.clone();
        deps.follow_up = live.follow_up.clone();
        if let Some(hooks) = extras.hooks {
            deps.hooks = hooks;
        }
        deps.resolver = extras.resolver;
        let run_id = input.run_id.clone();
        let outcome = match input.agent.team.clone() {
            None => run_recorded(input, &deps, &sink, &mut recorder).await,
            Some(team) => {
                let mut tools = std::mem::take(&mut input.tools);
                let run = team::TeamRun {
                    input: &input,
                    team: &team,
                    sink: &sink,
                    cancel: deps.cancel.clone(),
                    caller: extras.caller.clone(),
                    meter: Arc::new(Meter::new(team.budget)),
                };
                if team.kind == TeamKind::Supervisor {
                    self.supervise(&run, &mut tools, &mut deps, &sink);
                    drop(run);
                    input.tools = tools;
                    run_recorded(input, &deps, &sink, &mut recorder).await
                } else {
                    self.run_team(run, &mut recorder).await
                }
            }
        };
        tracing::info!(run = %run_id, end = ?outcome.end, model_calls = outcome.model_calls, tool_calls = outcome.tool_calls, "run finished");
        if let Err(e) = chat.append(recorder.finish()).await {
            tracing::error!(run = %run_id, error = %e, "storing the run in chat memory failed");
        }
    }

    /// Sends `chat.start` for a new chat and returns the chat's replayed history.
    async fn prepare(
        &self,
        chat: &super::memory::ChatLock,
        new_chat: bool,
        sink: &EventSink,
        message: &str,
    ) -> Result<Vec<RunRecord>, MemoryError> {
        // One read of the chat; none for a chat id we just made (it has no file, and a
        // blocking-pool hop would delay the first token).
        let runs = if new_chat { Vec::new() } else { chat.runs().await? };
        if runs.is_empty() {
            let name = chat_name(message);
            sink.emit(EventBody::ChatStart {
                chat_id: chat.chat_id().to_owned(),
                chat_name: (!name.is_empty()).then_some(name),
            });
        }
        Ok(runs)
    }

    /// The run's history from the chat's stored runs: its latest summary (as a user message)
    /// and the runs after it, the last `window` of them, earlier tool results condensed. When
    /// that passes [`ServiceConfig::summary_threshold`] of the model's context window, the
    /// oldest runs (with the previous summary) are first condensed by `summarizer` into a new
    /// summary: sent as `context.summarized` and stored with this run. A failed summary call
    /// is logged and the history used as it is (the run loop's window still trims it).
    async fn history(
        &self,
        runs: &[RunRecord],
        input: &RunInput,
        extras: &Extras,
        sink: &EventSink,
        recorder: &mut RunRecorder,
    ) -> Vec<AgentMessage> {
        let summarizer = &extras.summarizer;
        use super::run::message_tokens;
        use super::summary;
        let (previous, after) = after_summary(runs);
        let per_run: Vec<Vec<llm::Message>> = after
            .iter()
            .map(|r| condense_history(replay_messages(std::slice::from_ref(r), 1), &self.backend))
            .collect();
        let tokens = |ms: &[llm::Message]| ms.iter().map(message_tokens).sum::<usize>();
        let run_tokens: Vec<usize> = per_run.iter().map(|ms| tokens(ms)).collect();
        let previous_text = previous.map(|s| summary::as_context(&s.summary));
        let previous_tokens =
            previous_text.as_deref().map_or(0, |t| message_tokens(&llm::Message::user(t)));
        let window = self.memory.config().window;
        let assemble = |summary: Option<String>, from: usize| -> Vec<AgentMessage> {
            let from = from.max(per_run.len().saturating_sub(window));
            summary
                .map(AgentMessage::Summary)
                .into_iter()
                .chain(per_run[from..].iter().flatten().cloned().map(AgentMessage::from))
                .collect()
        };
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let budget = (self.config.summary_threshold * input.context_tokens as f64) as usize;
        let split =
            if budget == 0 { None } else { summary::plan(previous_tokens, &run_tokens, budget) };
        let Some(split) = split else { return assemble(previous_text, 0) };
        let older: Vec<llm::Message> = per_run[..split].iter().flatten().cloned().collect();
        let request =
            summary::request(&summarizer.model, previous.map(|s| s.summary.as_str()), &older);
        let model = format!("{}/{}", summarizer.provider.key(), summarizer.model);
        let started = std::time::Instant::now();
        let answer = summarizer.provider.complete(request).await;
        if let (Ok(m), Some(hooks)) = (&answer, &extras.hooks) {
            // Counted like any model call (turn 0: before the run's own); whether a key is
            // over its budget is the run's own calls' question.
            let turn = super::run::TurnInfo {
                turn: 0,
                usage: m.usage,
                model: summarizer.model.clone(),
                provider: summarizer.provider.key().to_owned(),
                duration: started.elapsed(),
            };
            let _ = hooks.on_turn_end(&turn).await;
        }
        let text = match answer {
            Ok(m) if !m.text().trim().is_empty() => m.text().trim().to_owned(),
            Ok(_) => {
                tracing::warn!(run = %input.run_id, %model, "the summary call answered nothing; history kept whole");
                return assemble(previous_text, 0);
            }
            Err(e) => {
                tracing::warn!(run = %input.run_id, %model, error = %e, "summarizing the chat failed; history kept whole");
                return assemble(previous_text, 0);
            }
        };
        let context = summary::as_context(&text);
        let kept: usize = run_tokens[split..].iter().sum();
        let summary = super::events::ContextSummary {
            summary: text,
            through_run_id: after[split - 1].run_id.clone(),
            summarized_runs: u32::try_from(split).unwrap_or(u32::MAX),
            summarized_messages: u32::try_from(older.len()).unwrap_or(u32::MAX),
            tokens_before: (previous_tokens + run_tokens.iter().sum::<usize>()) as u64,
            tokens_after: (message_tokens(&llm::Message::user(context.clone())) + kept) as u64,
            model,
        };
        sink.emit(EventBody::ContextSummarized {
            chat_id: input.chat_id.clone(),
            summary: summary.clone(),
        });
        recorder.summary(summary);
        assemble(Some(context), split)
    }
}

/// A connected model as a run uses it.
fn resolved(c: llm::Connected) -> ResolvedModel {
    ResolvedModel {
        context_tokens: usize::try_from(c.model.context_window).unwrap_or(usize::MAX),
        reasoning: c.model.reasoning,
        provider: c.provider,
        model: c.model.id,
    }
}

/// Earlier runs' tool results as the model sees them again: each through its executor's
/// [`BackendTool::condense`](super::tools::BackendTool::condense) (the call's name is found on
/// the assistant message that made it).
fn condense_history(mut history: Vec<llm::Message>, backend: &BackendTools) -> Vec<llm::Message> {
    use llm::{ContentBlock, Message};
    let mut names: HashMap<String, String> = HashMap::new();
    for m in &mut history {
        match m {
            Message::Assistant(a) => {
                for b in &a.content {
                    if let ContentBlock::ToolUse { id, name, .. } = b {
                        names.insert(id.clone(), name.clone());
                    }
                }
            }
            Message::Tool { content } => {
                for b in content {
                    if let ContentBlock::ToolResult { tool_use_id, content, is_error: false } = b
                        && let Some(tool) = names.get(tool_use_id).and_then(|n| backend.get(n))
                        && let Some(short) = tool.condense(content)
                    {
                        *content = short;
                    }
                }
            }
            Message::System { .. } | Message::User { .. } => {}
        }
    }
    history
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use futures::future::BoxFuture;

    use super::*;
    use crate::tools::{BackendTool, ToolContext, ToolError};
    use llm::{AssistantMessage, ContentBlock, Message};

    struct Bulky;

    impl BackendTool for Bulky {
        fn name(&self) -> &str {
            "bulky"
        }
        fn call(&self, _: Value, _: ToolContext) -> BoxFuture<'static, Result<Value, ToolError>> {
            Box::pin(async { Ok(json!("x".repeat(1000))) })
        }
        fn condense(&self, result: &str) -> Option<String> {
            Some(format!("{} bytes", result.len()))
        }
    }

    fn call(id: &str, name: &str) -> Message {
        Message::Assistant(AssistantMessage {
            content: vec![ContentBlock::ToolUse {
                id: id.into(),
                name: name.into(),
                input: json!({}),
                input_error: None,
            }],
            ..AssistantMessage::default()
        })
    }

    #[test]
    fn history_condenses_only_the_results_of_tools_that_ask_for_it() {
        let mut backend = BackendTools::new();
        backend.register(Arc::new(Bulky));
        let history = vec![
            Message::user("q"),
            call("c1", "bulky"),
            Message::tool_result("c1", "y".repeat(500), false),
            call("c2", "other"),
            Message::tool_result("c2", "kept as is", false),
            call("c3", "bulky"),
            Message::tool_result("c3", "an error stays readable", true),
        ];
        let out = condense_history(history, &backend);
        let results: Vec<&str> = out
            .iter()
            .filter_map(|m| match m {
                Message::Tool { content } => content.iter().find_map(|b| match b {
                    ContentBlock::ToolResult { content, .. } => Some(content.as_str()),
                    _ => None,
                }),
                _ => None,
            })
            .collect();
        assert_eq!(results, ["500 bytes", "kept as is", "an error stays readable"]);
    }
}
