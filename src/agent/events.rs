//! Event Model v2: the events a run streams to its client, their SSE encoding, and the per-run
//! replay buffer a reconnecting client resumes from.
//!
//! Owns the wire shape (flat JSON: `seq`, `type`, the event's camelCase fields, `timestamp` in
//! unix milliseconds), the sequencer ([`EventSink`]: `seq` is 1-based per run stream), the SSE
//! event ids ([`event_id`]: `<runId>:<seq>` for `Last-Event-ID`) and [`RunLogs`]/[`RunLog`], which
//! keep each run's events for a bounded time after the run ends and a bounded count, so a client
//! that reconnects gets the events it missed and then the live tail, with no gap and no duplicate.
//!
//! Knows nothing of HTTP, of the run loop or of chat storage: the runtime emits, the gateway
//! writes frames, memory rebuilds snapshot events from storage.
//!
//! Zero buffering: [`EventSink::emit`] appends to the log and wakes subscribers at once; a
//! subscriber reads straight from the log, so there is no second queue that could reorder, merge
//! or drop events.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use futures::Stream;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::watch;

/// One event as it goes on the wire: the envelope (`seq`, `timestamp`) around the typed body,
/// serialized flat (`{"seq":1,"type":"run.start","runId":"..","chatId":"..","timestamp":..}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Position in the run stream, from 1 (in chat history: position in the rebuilt list).
    pub seq: u64,
    /// The typed body; its `type` tag and fields are inlined.
    #[serde(flatten)]
    pub body: EventBody,
    /// When the event was produced, unix milliseconds.
    pub timestamp: i64,
}

impl Event {
    /// The wire `type` (`content.delta`, ...).
    pub fn type_name(&self) -> &'static str {
        self.body.type_name()
    }
}

/// The full query object: the body of `request.query` and the `query` stored with each run.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Query {
    /// Request id (defaults to the run id when the client gave none).
    pub request_id: String,
    /// The chat this query belongs to.
    pub chat_id: String,
    /// Who speaks (`user`, the default when absent).
    #[serde(default = "user_role")]
    pub role: String,
    /// The message text.
    pub message: String,
    /// The agent asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_key: Option<String>,
    /// Referenced files, pages or records, as the client sent them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub references: Option<Vec<Value>>,
    /// Free-form parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
    /// Where the user is (page url, title, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scene: Option<Value>,
    /// Whether the client asked for a stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
}

fn user_role() -> String {
    "user".into()
}

/// The file described by `request.upload`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Upload {
    /// Kind of upload (`file`, `image`, ...).
    #[serde(rename = "type")]
    pub kind: String,
    /// File name.
    pub name: String,
    /// Size in bytes.
    pub size_bytes: u64,
    /// MIME type.
    pub mime_type: String,
    /// Hex SHA-256 of the content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

/// The typed event body. The variant's wire name is its `type`; fields are camelCase; optional
/// fields are left out when absent (never `null`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all_fields = "camelCase")]
pub enum EventBody {
    /// The user's query (first event of a run stream).
    #[serde(rename = "request.query")]
    RequestQuery(Query),
    /// A file upload announced by the client.
    #[serde(rename = "request.upload")]
    RequestUpload {
        /// Request id.
        request_id: String,
        /// The chat, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        chat_id: Option<String>,
        /// The file.
        upload: Upload,
    },
    /// A human-in-the-loop submission answering a frontend tool.
    #[serde(rename = "request.submit")]
    RequestSubmit {
        /// Request id of the submission.
        request_id: String,
        /// The chat.
        chat_id: String,
        /// The waiting run.
        run_id: String,
        /// The tool call answered.
        tool_id: String,
        /// What the frontend submitted.
        payload: Value,
        /// The view that submitted.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        view_id: Option<String>,
    },
    /// The chat's first run starts (sent once per chat).
    #[serde(rename = "chat.start")]
    ChatStart {
        /// The chat.
        chat_id: String,
        /// Its display name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        chat_name: Option<String>,
    },
    /// A plan was made.
    #[serde(rename = "plan.create")]
    PlanCreate {
        /// Plan id.
        plan_id: String,
        /// The chat.
        chat_id: String,
        /// The plan (tasks and their status).
        plan: Value,
    },
    /// A plan changed.
    #[serde(rename = "plan.update")]
    PlanUpdate {
        /// Plan id.
        plan_id: String,
        /// The chat (always present).
        chat_id: String,
        /// The plan.
        plan: Value,
    },
    /// A run starts.
    #[serde(rename = "run.start")]
    RunStart {
        /// The run.
        run_id: String,
        /// Its chat.
        chat_id: String,
    },
    /// The run's next model call goes to another provider or model than its previous one.
    #[serde(rename = "model.switch")]
    ModelSwitch {
        /// The run.
        run_id: String,
        /// Provider key of the previous call.
        from_provider: String,
        /// Model of the previous call.
        from_model: String,
        /// Provider key of the next call.
        to_provider: String,
        /// Model of the next call.
        to_model: String,
    },
    /// A run ended normally.
    #[serde(rename = "run.complete")]
    RunComplete {
        /// The run.
        run_id: String,
        /// Why it ended (`stop`, `max_steps`, ...).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        finish_reason: Option<String>,
    },
    /// A run was cancelled.
    #[serde(rename = "run.cancel")]
    RunCancel {
        /// The run.
        run_id: String,
    },
    /// A run failed (with no active task, only this is sent).
    #[serde(rename = "run.error")]
    RunError {
        /// The run.
        run_id: String,
        /// What went wrong: a message string or an object with at least `message`.
        error: Value,
    },
    /// A planned task starts (only with a plan and an explicit task start).
    #[serde(rename = "task.start")]
    TaskStart {
        /// Task id.
        task_id: String,
        /// The run.
        run_id: String,
        /// Short name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        task_name: Option<String>,
        /// What the task does.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
    /// A task finished.
    #[serde(rename = "task.complete")]
    TaskComplete {
        /// Task id.
        task_id: String,
        /// The run.
        run_id: String,
    },
    /// A task failed.
    #[serde(rename = "task.fail")]
    TaskFail {
        /// Task id.
        task_id: String,
        /// The run.
        run_id: String,
        /// What went wrong.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<Value>,
    },
    /// A reasoning block starts.
    #[serde(rename = "reasoning.start")]
    ReasoningStart {
        /// Block id.
        reasoning_id: String,
        /// The run.
        run_id: String,
        /// The task, when a plan is active.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        task_id: Option<String>,
    },
    /// Reasoning text, one upstream delta.
    #[serde(rename = "reasoning.delta")]
    ReasoningDelta {
        /// Block id.
        reasoning_id: String,
        /// The fragment.
        delta: String,
    },
    /// The reasoning block ends.
    #[serde(rename = "reasoning.end")]
    ReasoningEnd {
        /// Block id.
        reasoning_id: String,
    },
    /// A whole reasoning block (history).
    #[serde(rename = "reasoning.snapshot")]
    ReasoningSnapshot {
        /// Block id.
        reasoning_id: String,
        /// The full text.
        text: String,
        /// The task.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        task_id: Option<String>,
    },
    /// An answer block starts.
    #[serde(rename = "content.start")]
    ContentStart {
        /// Block id.
        content_id: String,
        /// The run.
        run_id: String,
        /// The task.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        task_id: Option<String>,
    },
    /// Answer text, one upstream delta.
    #[serde(rename = "content.delta")]
    ContentDelta {
        /// Block id.
        content_id: String,
        /// The fragment.
        delta: String,
    },
    /// The answer block ends.
    #[serde(rename = "content.end")]
    ContentEnd {
        /// Block id.
        content_id: String,
    },
    /// A whole answer block (history).
    #[serde(rename = "content.snapshot")]
    ContentSnapshot {
        /// Block id.
        content_id: String,
        /// The full text.
        text: String,
        /// The task.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        task_id: Option<String>,
    },
    /// A tool call starts.
    #[serde(rename = "tool.start")]
    ToolStart {
        /// Call id.
        tool_id: String,
        /// The run.
        run_id: String,
        /// The task.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        task_id: Option<String>,
        /// Tool name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_name: Option<String>,
        /// `backend`, or the frontend view type (`html`, `qlc`, `dqlc`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_type: Option<String>,
        /// The frontend view to open (frontend tools).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_api: Option<String>,
        /// Parameters for the frontend view.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_params: Option<Value>,
        /// What the tool does.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
    /// A fragment of the call's JSON arguments, one upstream delta (the field is `delta`).
    #[serde(rename = "tool.args")]
    ToolArgs {
        /// Call id.
        tool_id: String,
        /// The fragment.
        delta: String,
        /// Position of the fragment, from 0.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        chunk_index: Option<u64>,
    },
    /// The call's arguments are complete.
    #[serde(rename = "tool.end")]
    ToolEnd {
        /// Call id.
        tool_id: String,
    },
    /// A backend tool waits for the user's go-ahead (a shell command of an agent with
    /// `confirmShell`); answered through `POST /api/submit` with `params.approved`.
    #[serde(rename = "tool.confirm")]
    ToolConfirm {
        /// Call id (the submit's `toolId`).
        tool_id: String,
        /// The run that waits.
        run_id: String,
        /// The tool.
        tool_name: String,
        /// What would run, as the user should read it (the shell command).
        command: String,
        /// How long the run waits before treating silence as a no.
        timeout_ms: u64,
    },
    /// The tool's result.
    #[serde(rename = "tool.result")]
    ToolResult {
        /// Call id.
        tool_id: String,
        /// The result (JSON or text).
        result: Value,
    },
    /// A whole tool call (history).
    #[serde(rename = "tool.snapshot")]
    ToolSnapshot {
        /// Call id.
        tool_id: String,
        /// Tool name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_name: Option<String>,
        /// The task.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        task_id: Option<String>,
        /// Tool type.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_type: Option<String>,
        /// Frontend view.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_api: Option<String>,
        /// Frontend view parameters.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_params: Option<Value>,
        /// What the tool does.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// The full JSON arguments text.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arguments: Option<String>,
    },
    /// An action (frontend effect, answered `OK` at once) starts.
    #[serde(rename = "action.start")]
    ActionStart {
        /// Action id.
        action_id: String,
        /// The run.
        run_id: String,
        /// The task.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        task_id: Option<String>,
        /// Action name (`switch_theme`, ...).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        action_name: Option<String>,
        /// What it does.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
    /// A fragment of the action's JSON arguments.
    #[serde(rename = "action.args")]
    ActionArgs {
        /// Action id.
        action_id: String,
        /// The fragment.
        delta: String,
    },
    /// The action's arguments are complete.
    #[serde(rename = "action.end")]
    ActionEnd {
        /// Action id.
        action_id: String,
    },
    /// The parsed parameters the frontend applies.
    #[serde(rename = "action.param")]
    ActionParam {
        /// Action id.
        action_id: String,
        /// The parameters.
        param: Value,
    },
    /// The action's result (what the model was told).
    #[serde(rename = "action.result")]
    ActionResult {
        /// Action id.
        action_id: String,
        /// The result.
        result: Value,
    },
    /// A whole action (history).
    #[serde(rename = "action.snapshot")]
    ActionSnapshot {
        /// Action id.
        action_id: String,
        /// Action name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        action_name: Option<String>,
        /// The task.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        task_id: Option<String>,
        /// What it does.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// The full JSON arguments text.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arguments: Option<String>,
    },
    /// A source the answer drew on.
    #[serde(rename = "source.snapshot")]
    SourceSnapshot {
        /// Source id.
        source_id: String,
        /// The run.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        run_id: Option<String>,
        /// The task.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        task_id: Option<String>,
        /// Icon URL.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        icon: Option<String>,
        /// Title.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// Link.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        url: Option<String>,
    },
    /// The dashboard agent saved a new dashboard version.
    #[serde(rename = "dashboard.update")]
    DashboardUpdate {
        /// Dashboard id.
        dashboard_id: String,
        /// The new version.
        version: u64,
        /// What changed (patch or change list).
        changes: Value,
        /// Per-panel validation of the new version.
        validation: Value,
        /// The tool deleted the dashboard (then `changes` is empty and `validation` null).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        deleted: bool,
    },
}

impl EventBody {
    /// The wire `type`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::RequestQuery(_) => "request.query",
            Self::RequestUpload { .. } => "request.upload",
            Self::RequestSubmit { .. } => "request.submit",
            Self::ChatStart { .. } => "chat.start",
            Self::PlanCreate { .. } => "plan.create",
            Self::PlanUpdate { .. } => "plan.update",
            Self::RunStart { .. } => "run.start",
            Self::ModelSwitch { .. } => "model.switch",
            Self::RunComplete { .. } => "run.complete",
            Self::RunCancel { .. } => "run.cancel",
            Self::RunError { .. } => "run.error",
            Self::TaskStart { .. } => "task.start",
            Self::TaskComplete { .. } => "task.complete",
            Self::TaskFail { .. } => "task.fail",
            Self::ReasoningStart { .. } => "reasoning.start",
            Self::ReasoningDelta { .. } => "reasoning.delta",
            Self::ReasoningEnd { .. } => "reasoning.end",
            Self::ReasoningSnapshot { .. } => "reasoning.snapshot",
            Self::ContentStart { .. } => "content.start",
            Self::ContentDelta { .. } => "content.delta",
            Self::ContentEnd { .. } => "content.end",
            Self::ContentSnapshot { .. } => "content.snapshot",
            Self::ToolStart { .. } => "tool.start",
            Self::ToolArgs { .. } => "tool.args",
            Self::ToolEnd { .. } => "tool.end",
            Self::ToolConfirm { .. } => "tool.confirm",
            Self::ToolResult { .. } => "tool.result",
            Self::ToolSnapshot { .. } => "tool.snapshot",
            Self::ActionStart { .. } => "action.start",
            Self::ActionArgs { .. } => "action.args",
            Self::ActionEnd { .. } => "action.end",
            Self::ActionParam { .. } => "action.param",
            Self::ActionResult { .. } => "action.result",
            Self::ActionSnapshot { .. } => "action.snapshot",
            Self::SourceSnapshot { .. } => "source.snapshot",
            Self::DashboardUpdate { .. } => "dashboard.update",
        }
    }

    /// True for the events that end a run stream (`run.complete`, `run.cancel`, `run.error`).
    pub fn is_terminal(&self) -> bool {
        matches!(self, Self::RunComplete { .. } | Self::RunCancel { .. } | Self::RunError { .. })
    }
}

/// The current time, unix milliseconds.
pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// The SSE id / `Last-Event-ID` of an event: `<runId>:<seq>` ([`parse_event_id`] reverses it).
pub fn event_id(run_id: &str, seq: u64) -> String {
    format!("{run_id}:{seq}")
}

/// Splits an SSE id / `Last-Event-ID` value `<runId>:<seq>` (the run id may itself contain `:`;
/// the last one separates). None when malformed.
pub fn parse_event_id(id: &str) -> Option<(&str, u64)> {
    let (run, seq) = id.trim().rsplit_once(':')?;
    if run.is_empty() {
        return None;
    }
    Some((run, seq.parse().ok()?))
}

/// Errors of the replay buffer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StreamError {
    /// No log for this run (never started, or expired after the retention time).
    #[error("run `{0}` is unknown or its events have expired")]
    UnknownRun(String),
    /// A log for this run already exists.
    #[error("run `{0}` already has an event stream")]
    DuplicateRun(String),
    /// `Last-Event-ID` is not `<runId>:<seq>`.
    #[error("malformed event id `{0}` (expected <runId>:<seq>)")]
    BadEventId(String),
    /// The events after `after` are no longer all buffered (the run produced more than the
    /// count bound since then): the client must reload the chat instead.
    #[error("events after seq {after} of run `{run_id}` were evicted (oldest kept: {oldest})")]
    Evicted {
        /// The run.
        run_id: String,
        /// The last seq the client had.
        after: u64,
        /// The oldest seq still buffered.
        oldest: u64,
    },
}

/// Bounds of the replay buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunLogConfig {
    /// How long a finished run's events stay available (default 5 minutes).
    pub retention: Duration,
    /// Most events kept per run; older ones are dropped (default 20,000).
    pub max_events: usize,
}

impl Default for RunLogConfig {
    fn default() -> Self {
        Self { retention: Duration::from_secs(300), max_events: 20_000 }
    }
}

/// The event log of one run: the sequencer's state, the bounded buffer and the wake-up signal.
#[derive(Debug)]
pub struct RunLog {
    run_id: String,
    max_events: usize,
    state: Mutex<LogState>,
    /// Carries the last seq emitted; subscribers wait on it, then read from `state`.
    signal: watch::Sender<u64>,
}

#[derive(Debug, Default)]
struct LogState {
    events: VecDeque<Arc<Event>>,
    /// The seq the next event gets.
    next_seq: u64,
    /// Timestamps never go backwards within a run, even if the wall clock does.
    last_timestamp: i64,
    finished_at: Option<Instant>,
}

impl LogState {
    fn oldest_seq(&self) -> u64 {
        self.next_seq - self.events.len() as u64
    }
}

impl RunLog {
    fn new(run_id: &str, max_events: usize) -> Self {
        Self {
            run_id: run_id.to_owned(),
            max_events: max_events.max(1),
            state: Mutex::new(LogState { next_seq: 1, ..LogState::default() }),
            signal: watch::Sender::new(0),
        }
    }

    fn state(&self) -> MutexGuard<'_, LogState> {
        // Nothing panics while holding the lock; survive poisoning anyway.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The run id.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// The seq of the last event emitted (0 before the first).
    pub fn last_seq(&self) -> u64 {
        self.state().next_seq - 1
    }

    /// True once the run's sink is finished or dropped.
    pub fn is_finished(&self) -> bool {
        self.state().finished_at.is_some()
    }

    /// The buffered events with seq > `after`, and then the live tail until the run finishes.
    pub fn subscribe(self: &Arc<Self>, after: u64) -> Result<Subscription, StreamError> {
        let state = self.state();
        // Replay must start inside the buffer; `after + 1 == oldest` is the first kept event.
        let oldest = state.oldest_seq();
        if after.saturating_add(1) < oldest {
            return Err(StreamError::Evicted { run_id: self.run_id.clone(), after, oldest });
        }
        let next = after.saturating_add(1);
        Ok(Subscription { log: Arc::clone(self), next, signal: self.signal.subscribe() })
    }

    fn push(&self, body: EventBody) -> Arc<Event> {
        let mut state = self.state();
        let timestamp = now_ms().max(state.last_timestamp);
        let event = Arc::new(Event { seq: state.next_seq, body, timestamp });
        state.next_seq += 1;
        state.last_timestamp = timestamp;
        state.events.push_back(Arc::clone(&event));
        if state.events.len() > self.max_events {
            state.events.pop_front();
        }
        // Signalled under the state lock: a subscriber that found nothing new marked the
        // signal seen under the same lock, so it cannot miss this wake-up.
        self.signal.send_replace(event.seq);
        event
    }

    fn finish(&self) {
        let mut state = self.state();
        if state.finished_at.is_none() {
            state.finished_at = Some(Instant::now());
            let last = state.next_seq - 1;
            self.signal.send_replace(last);
        }
    }

    fn expired(&self, now: Instant, retention: Duration) -> bool {
        self.state().finished_at.is_some_and(|at| now.duration_since(at) >= retention)
    }
}

/// A reader of one run's events: buffered ones first, then live ones as they are emitted.
#[derive(Debug)]
pub struct Subscription {
    log: Arc<RunLog>,
    next: u64,
    signal: watch::Receiver<u64>,
}

impl Subscription {
    /// The run id.
    pub fn run_id(&self) -> &str {
        &self.log.run_id
    }

    /// The next event; `Ok(None)` once the run has finished and every event was read.
    /// [`StreamError::Evicted`] when this reader fell further behind than the buffer holds.
    pub async fn next(&mut self) -> Result<Option<Arc<Event>>, StreamError> {
        loop {
            {
                let state = self.log.state();
                let oldest = state.oldest_seq();
                if self.next < oldest {
                    return Err(StreamError::Evicted {
                        run_id: self.log.run_id.clone(),
                        after: self.next - 1,
                        oldest,
                    });
                }
                if self.next < state.next_seq {
                    let index = (self.next - oldest) as usize;
                    let event = Arc::clone(&state.events[index]);
                    self.next += 1;
                    return Ok(Some(event));
                }
                if state.finished_at.is_some() {
                    return Ok(None);
                }
                self.signal.borrow_and_update();
            }
            // The sender lives in the log we hold, so this only errs if it was dropped, which
            // cannot happen while we hold the log.
            if self.signal.changed().await.is_err() {
                return Ok(None);
            }
        }
    }

    /// The subscription as a stream (ends after the last event or the first error).
    pub fn into_stream(self) -> impl Stream<Item = Result<Arc<Event>, StreamError>> + Send {
        futures::stream::unfold(Some(self), |sub| async move {
            let mut sub = sub?;
            match sub.next().await {
                Ok(Some(event)) => Some((Ok(event), Some(sub))),
                Ok(None) => None,
                Err(e) => Some((Err(e), None)),
            }
        })
    }
}

/// The producer side of one run's stream: assigns `seq` and `timestamp` and publishes at once.
/// Dropping it (or [`EventSink::finish`]) marks the run finished; its events then stay
/// available for the retention time.
#[derive(Debug)]
pub struct EventSink {
    log: Arc<RunLog>,
}

impl EventSink {
    /// The run id.
    pub fn run_id(&self) -> &str {
        &self.log.run_id
    }

    /// Stamps and publishes one event; returns it as published.
    pub fn emit(&self, body: EventBody) -> Arc<Event> {
        self.log.push(body)
    }

    /// The seq of the last event emitted (0 before the first).
    pub fn last_seq(&self) -> u64 {
        self.log.last_seq()
    }

    /// A reader from seq `after + 1` (0 = from the start).
    pub fn subscribe(&self, after: u64) -> Result<Subscription, StreamError> {
        self.log.subscribe(after)
    }

    /// The run's log.
    pub fn log(&self) -> &Arc<RunLog> {
        &self.log
    }

    /// Ends the stream: readers get the remaining events, then the end.
    pub fn finish(self) {
        // Drop does it.
    }
}

impl Drop for EventSink {
    fn drop(&mut self) {
        self.log.finish();
    }
}

/// The logs of live and recently finished runs, by run id. Expired logs are swept lazily on
/// [`RunLogs::start`] (at most once per second: a sweep visits every log, and a busy server
/// holds thousands) and refused by [`RunLogs::get`], so no background task is needed.
#[derive(Debug)]
pub struct RunLogs {
    config: RunLogConfig,
    runs: Mutex<Runs>,
}

#[derive(Debug)]
struct Runs {
    logs: HashMap<String, Arc<RunLog>>,
    last_sweep: Instant,
}

impl Default for RunLogs {
    fn default() -> Self {
        Self::new(RunLogConfig::default())
    }
}

impl RunLogs {
    /// An empty registry.
    pub fn new(config: RunLogConfig) -> Self {
        Self { config, runs: Mutex::new(Runs { logs: HashMap::new(), last_sweep: Instant::now() }) }
    }

    fn runs(&self) -> MutexGuard<'_, Runs> {
        self.runs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Opens the stream of a new run.
    pub fn start(&self, run_id: &str) -> Result<EventSink, StreamError> {
        let mut runs = self.runs();
        let now = Instant::now();
        if now.duration_since(runs.last_sweep) >= self.config.retention.min(Duration::from_secs(1))
        {
            Self::sweep_locked(&mut runs, now, self.config.retention);
        }
        if runs.logs.contains_key(run_id) {
            return Err(StreamError::DuplicateRun(run_id.to_owned()));
        }
        let log = Arc::new(RunLog::new(run_id, self.config.max_events));
        runs.logs.insert(run_id.to_owned(), Arc::clone(&log));
        Ok(EventSink { log })
    }

    /// The log of a live or recently finished run.
    pub fn get(&self, run_id: &str) -> Option<Arc<RunLog>> {
        let mut runs = self.runs();
        let log = runs.logs.get(run_id)?;
        if log.expired(Instant::now(), self.config.retention) {
            runs.logs.remove(run_id);
            return None;
        }
        Some(Arc::clone(log))
    }

    /// Resumes from a `Last-Event-ID` header value (`<runId>:<seq>`): the events after that seq,
    /// then the live tail.
    pub fn resume(&self, last_event_id: &str) -> Result<Subscription, StreamError> {
        let (run_id, seq) = parse_event_id(last_event_id)
            .ok_or_else(|| StreamError::BadEventId(last_event_id.to_owned()))?;
        let log = self.get(run_id).ok_or_else(|| StreamError::UnknownRun(run_id.to_owned()))?;
        log.subscribe(seq)
    }

    /// Drops the logs of runs finished longer ago than the retention time; returns how many.
    pub fn sweep(&self) -> usize {
        Self::sweep_locked(&mut self.runs(), Instant::now(), self.config.retention)
    }

    /// Number of logs held (live and retained, including expired ones not yet swept).
    pub fn len(&self) -> usize {
        self.runs().logs.len()
    }

    /// True when no log is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn sweep_locked(runs: &mut Runs, now: Instant, retention: Duration) -> usize {
        let before = runs.logs.len();
        runs.logs.retain(|_, log| !log.expired(now, retention));
        runs.last_sweep = now;
        before - runs.logs.len()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
