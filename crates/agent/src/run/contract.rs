//! What a run is given — its input, the dependencies and hooks the application injects, the
//! queues a caller steers it with, the model resolver — and what it returns.

use super::*;

/// What one run needs to know.
#[derive(Clone)]
pub struct RunInput {
    /// The run id (event ids derive from it).
    pub run_id: String,
    /// The chat.
    pub chat_id: String,
    /// The agent.
    pub agent: Arc<AgentDefinition>,
    /// The agent's tools resolved against the catalog, in the agent's order (see
    /// [`RunInput::tools_from`]). Tools the model calls that are not here are unknown.
    pub tools: Vec<ToolSpec>,
    /// Earlier messages of the chat (no system messages needed: the agent's prompt is added);
    /// app-only entries stay out of model calls.
    pub history: Vec<AgentMessage>,
    /// The user's message.
    pub user_message: String,
    /// Images sent with it ([`ContentBlock::Image`], loaded), before its text.
    pub user_images: Vec<ContentBlock>,
    /// The model provider (every call's, unless [`RunDeps::resolver`] picks one).
    pub provider: Arc<dyn Provider>,
    /// The model id (likewise).
    pub model: String,
    /// The model's context window in tokens (for the default context transform; likewise).
    pub context_tokens: usize,
    /// Whether the model reasons (its registry entry says so): thinking parameters are sent
    /// to it only then (likewise).
    pub reasoning: bool,
    /// Who the run acts for (`None`: the owner): its tools act with their rights.
    pub principal: Option<base::principal::Principal>,
}

impl fmt::Debug for RunInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunInput")
            .field("run_id", &self.run_id)
            .field("chat_id", &self.chat_id)
            .field("agent", &self.agent.key)
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl RunInput {
    /// The agent's tools that exist in `catalog`, in the agent's order.
    pub fn tools_from(catalog: &CatalogSnapshot, agent: &AgentDefinition) -> Vec<ToolSpec> {
        catalog.agent_tools(agent).found.into_iter().cloned().collect()
    }
}

/// A run inside another run's stream, as one of its tasks (a team member, a workflow node): its
/// events carry `taskId` and its ids are derived from the task's, and it is framed by
/// `task.start` … `task.complete` | `task.fail` instead of `run.start` … a terminal event, which
/// stay the enclosing run's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskFrame {
    /// `<runId>_agent_<n>`: the `taskId` of its events, and the base of its block ids.
    pub task_id: String,
    /// `task.start`'s `taskName` (a member's agent key, a node's id).
    pub name: String,
    /// `task.start`'s `description`.
    pub description: Option<String>,
    /// Short and unique within the run (`a<n>`): prefixes the task's tool-call ids, which go
    /// back to the provider (OpenAI takes at most 40 characters) and must not collide with
    /// another task's running at the same time.
    pub tag: String,
    /// Whether the run sends the task's `task.start` and `task.complete` / `task.fail`
    /// itself. `false`: the caller frames the task (a workflow node, complete only once its
    /// output is committed) and the run sends only the leaf events, with the task's id.
    pub announce: bool,
}

impl TaskFrame {
    /// The `n`-th task (from 1) of run `run_id`.
    pub fn new(run_id: &str, n: u32, name: impl Into<String>, description: Option<String>) -> Self {
        Self {
            task_id: format!("{run_id}_agent_{n}"),
            name: name.into(),
            description,
            tag: format!("a{n}"),
            announce: true,
        }
    }
}

/// A queue of user messages a caller pushes into while a run is going (steering, follow-up).
/// Clones share the queue.
#[derive(Debug, Clone, Default)]
pub struct MessageQueue(Arc<Mutex<VecDeque<String>>>);

impl MessageQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a message.
    pub fn push(&self, text: impl Into<String>) {
        self.lock().push_back(text.into());
    }

    /// Takes every queued message, oldest first.
    pub fn drain(&self) -> Vec<String> {
        self.lock().drain(..).collect()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<String>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The provider and model for one model call.
#[derive(Debug, Clone)]
pub struct ResolvedModel {
    /// The provider.
    pub provider: Arc<dyn Provider>,
    /// The model id.
    pub model: String,
    /// The model's context window in tokens.
    pub context_tokens: usize,
    /// Whether the model reasons (thinking parameters are sent only then).
    pub reasoning: bool,
}

/// Why a [`ModelResolver`] could not pick a model (the run ends with `run.error`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ResolveError {
    /// What went wrong.
    pub message: String,
    /// Whether trying again later may succeed (told to [`RunHooks::on_error`]).
    pub retryable: bool,
}

/// Picks the provider and model before every model call (credit checks, fallbacks): a run may
/// switch models between calls.
pub trait ModelResolver: Send + Sync {
    /// The model for the run's `turn`-th model call (from 1; planning, answer, review and
    /// summary calls all count).
    fn resolve(&self, turn: u32) -> BoxFuture<'_, Result<ResolvedModel, ResolveError>>;

    /// The model to send the `turn`-th call to instead of `failed`, which failed with a
    /// retryable `error` before any of its output reached the run (the run asks nothing after
    /// output has started). `None` (the default): no fallback, the error ends the run.
    fn fallback(
        &self,
        _turn: u32,
        _failed: &ResolvedModel,
        _error: &llm::LlmError,
    ) -> Option<ResolvedModel> {
        None
    }
}

/// One finished model call, as [`RunHooks::on_turn_end`] sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnInfo {
    /// The model call's number in the run, from 1.
    pub turn: u32,
    /// Its tokens.
    pub usage: Usage,
    /// The model that answered.
    pub model: String,
    /// Its provider key.
    pub provider: String,
    /// From sending the request to the response's end.
    pub duration: std::time::Duration,
}

/// Callbacks the application injects into a run (credit use, persistence, error reporting);
/// every method defaults to doing nothing.
pub trait RunHooks: Send + Sync {
    /// A model response is complete, before it is added and its tools run. `Ok(false)` stops
    /// the run (`run.complete`, finish reason `stopped`); `Err` ends it with `run.error`.
    fn on_turn_end<'a>(&'a self, _turn: &'a TurnInfo) -> BoxFuture<'a, Result<bool, String>> {
        Box::pin(std::future::ready(Ok(true)))
    }

    /// An assistant message or a tool result was added. `Err` is logged; the run goes on (the
    /// message is already in the conversation).
    fn on_message<'a>(&'a self, _message: &'a AgentMessage) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(std::future::ready(Ok(())))
    }

    /// A model call failed before any output and is sent to another model instead
    /// ([`ModelResolver::fallback`]); `turn` names the failed model. Only for accounting: the run
    /// goes on whatever this does.
    fn on_fallback<'a>(
        &'a self,
        _failed: &'a TurnInfo,
        _error: &'a llm::LlmError,
    ) -> BoxFuture<'a, ()> {
        Box::pin(std::future::ready(()))
    }

    /// A model call or the resolver failed; the run ends with `run.error` after this returns.
    /// `Err` is ignored so it cannot hide the original error.
    fn on_error<'a>(
        &'a self,
        _error: &'a str,
        _retryable: bool,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(std::future::ready(Ok(())))
    }
}

/// Live context for the model, recomputed before every model call and sent as a system message
/// after the agent's prompt (e.g. the dashboard the chat is on, which tools change mid-run).
pub trait ContextSource: Send + Sync {
    /// Whether this source serves `agent` (asked before each model call; keep it cheap).
    fn applies(&self, agent: &AgentDefinition) -> bool;
    /// The context of `chat_id` now; `None`: nothing to say.
    fn context<'a>(&'a self, chat_id: &'a str) -> BoxFuture<'a, Option<String>>;
}

/// Hooks that do nothing (the default of [`RunDeps`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHooks;

impl RunHooks for NoHooks {}

/// What a run uses besides its input: tool executors, the submit hub, cancellation, queues,
/// the context transform, the model resolver and the application's hooks.
#[derive(Clone)]
pub struct RunDeps {
    /// Backend tool executors.
    pub backend: BackendTools,
    /// The frontend-submit hub.
    pub submits: FrontendSubmits,
    /// Cancelling it ends the run with `run.cancel`.
    pub cancel: CancellationToken,
    /// Messages the user sends while the run works: checked between tool executions.
    pub steering: MessageQueue,
    /// Messages to handle after the run would otherwise end.
    pub follow_up: MessageQueue,
    /// Applied before every model call.
    pub transform: Arc<dyn ContextTransform>,
    /// Wait of frontend tools; `None`: the hub's default.
    pub frontend_timeout: Option<Duration>,
    /// Picks each model call's provider and model; `None`: the input's for every call.
    pub resolver: Option<Arc<dyn ModelResolver>>,
    /// The application's callbacks.
    pub hooks: Arc<dyn RunHooks>,
    /// Live context injected before every model call (only the sources that apply to the
    /// agent are asked).
    pub context: Vec<Arc<dyn ContextSource>>,
}

impl fmt::Debug for RunDeps {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunDeps")
            .field("backend", &self.backend)
            .field("submits", &self.submits)
            .finish_non_exhaustive()
    }
}

impl RunDeps {
    /// Deps with fresh token and queues, the [`WindowTransform`], no resolver and [`NoHooks`].
    pub fn new(backend: BackendTools, submits: FrontendSubmits) -> Self {
        Self {
            backend,
            submits,
            cancel: CancellationToken::new(),
            steering: MessageQueue::new(),
            follow_up: MessageQueue::new(),
            transform: Arc::new(WindowTransform),
            frontend_timeout: None,
            resolver: None,
            hooks: Arc::new(NoHooks),
            context: Vec::new(),
        }
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunEnd {
    /// `run.complete` with this finish reason (`stop`, `max_tokens`, ...).
    Complete(String),
    /// `run.error` with this message.
    Error(String),
    /// `run.cancel`.
    Cancelled,
}

impl RunEnd {
    /// Why the run finished, as chat memory stores it: the `run.complete` reason, or
    /// `cancelled` / `error`.
    pub fn finish_reason(&self) -> &str {
        match self {
            RunEnd::Complete(reason) => reason,
            RunEnd::Error(_) => "error",
            RunEnd::Cancelled => "cancelled",
        }
    }
}

/// The result of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    /// How it ended (the terminal event sent).
    pub end: RunEnd,
    /// Messages produced, in order: the user's message is not included; assistant messages,
    /// tool results, steering/follow-up messages and app-only notes (model switches) are, ready
    /// to append to the chat history.
    pub messages: Vec<AgentMessage>,
    /// Tokens of all model calls.
    pub usage: Usage,
    /// Model calls made.
    pub model_calls: u32,
    /// Tool calls executed (or answered).
    pub tool_calls: u32,
}

impl RunOutcome {
    /// The text of the last assistant message.
    pub fn final_text(&self) -> String {
        self.messages
            .iter()
            .rev()
            .find_map(|m| match m.as_llm() {
                Some(Message::Assistant(a)) => Some(a.text()),
                _ => None,
            })
            .unwrap_or_default()
    }
}
