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

mod log;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use log::{
    EventSink, Follower, RunLog, RunLogConfig, RunLogs, RunMirror, StreamError, Subscription,
};

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

/// A summary of a chat's earlier turns: the body of `context.summarized` and the `_summary`
/// stored with the run that started from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextSummary {
    /// The summary, as the model reads it.
    pub summary: String,
    /// The last run it covers: it stands for that run and every one before it.
    pub through_run_id: String,
    /// Runs condensed into it by this summarization (the previous summary, if any, included).
    pub summarized_runs: u32,
    /// Model messages condensed by this summarization.
    pub summarized_messages: u32,
    /// Estimated tokens of the chat's history before.
    pub tokens_before: u64,
    /// Estimated tokens after (the summary plus the turns kept).
    pub tokens_after: u64,
    /// `provider/model` that wrote it.
    pub model: String,
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
    /// Hex SHA-256 of the content; for an uploaded image also its id (`GET /api/uploads/{id}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// The address of an image given by URL (not in the seed's event: its `name` is the URL's
    /// last segment, `sizeBytes` 0, as the server never fetched it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// Token counts in events (camelCase like every event field).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsage {
    /// Prompt tokens, cached ones included.
    pub input_tokens: u64,
    /// Generated tokens, reasoning included.
    pub output_tokens: u64,
    /// Of the output, reasoning.
    #[serde(default)]
    pub reasoning_tokens: u64,
    /// Prompt tokens read from the provider's cache.
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider's cache.
    #[serde(default)]
    pub cache_write_tokens: u64,
}

impl From<&llm::Usage> for TokenUsage {
    fn from(u: &llm::Usage) -> Self {
        Self {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            reasoning_tokens: u.reasoning_tokens,
            cache_read_tokens: u.cache_read_tokens,
            cache_write_tokens: u.cache_write_tokens,
        }
    }
}

impl From<TokenUsage> for llm::Usage {
    fn from(u: TokenUsage) -> Self {
        Self {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            reasoning_tokens: u.reasoning_tokens,
            cache_read_tokens: u.cache_read_tokens,
            cache_write_tokens: u.cache_write_tokens,
        }
    }
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
    /// User messages sent to the chat while the run was busy reached it: `steer` (the rest of
    /// the step's tool calls were skipped and the messages go to the next model call) or
    /// `followUp` (the run went on for another turn after its answer).
    #[serde(rename = "run.steer")]
    RunSteer {
        /// The run.
        run_id: String,
        /// `steer` or `followUp`.
        mode: String,
        /// The messages, oldest first.
        messages: Vec<String>,
        /// Tool calls skipped (steer only).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        skipped_tools: Vec<String>,
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
        /// Why, when the run chose it itself: `fallback` (the previous model failed with a
        /// retryable error before any output, and the same call was sent to the next model of
        /// the agent's fallback list). Absent: the resolver picked another model for this call.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// The failure that caused a `fallback` switch, as the provider layer reported it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// Before the run: the chat's oldest turns were condensed into a summary (a cheap model
    /// call), so the run starts from that summary plus the recent turns. The summary is kept
    /// with the run in chat memory, and later runs start from it too.
    #[serde(rename = "context.summarized")]
    ContextSummarized {
        /// The chat.
        chat_id: String,
        /// The summary and what it replaced.
        #[serde(flatten)]
        summary: ContextSummary,
    },
    /// A run ended normally.
    #[serde(rename = "run.complete")]
    RunComplete {
        /// The run.
        run_id: String,
        /// Why it ended (`stop`, `max_steps`, ...).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        finish_reason: Option<String>,
        /// Tokens of all the run's model calls, as the providers reported them (live runs
        /// only; a history replay has none).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<TokenUsage>,
        /// Panels of the dashboards this run wrote whose last test run still fails: a run
        /// never ends as if all were well while they do.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        failing_panels: Vec<FailingPanel>,
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

/// A panel whose last test run in a run failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FailingPanel {
    /// Its dashboard.
    pub dashboard_id: String,
    /// The panel.
    pub panel_id: String,
    /// Its error, as the validation gave it.
    pub error: String,
}

/// The panels still failing after `updates`, a run's `dashboard.update` events in order: each
/// dashboard's last validation counts (a later version's test runs replace the earlier ones'
/// for the panels it ran), a deleted dashboard has none.
pub fn failing_panels<'a>(updates: impl IntoIterator<Item = &'a EventBody>) -> Vec<FailingPanel> {
    let mut by_panel: std::collections::BTreeMap<(String, String), Option<String>> =
        std::collections::BTreeMap::new();
    for u in updates {
        let EventBody::DashboardUpdate { dashboard_id, validation, deleted, .. } = u else {
            continue;
        };
        if *deleted {
            by_panel.retain(|(d, _), _| d != dashboard_id);
            continue;
        }
        for p in validation.get("panels").and_then(Value::as_array).into_iter().flatten() {
            let Some(panel) = p.get("panelId").and_then(Value::as_str) else { continue };
            let error = (p.get("status").and_then(Value::as_str) != Some("success"))
                .then(|| p.get("error").and_then(Value::as_str).unwrap_or("failed").to_owned());
            by_panel.insert((dashboard_id.clone(), panel.to_owned()), error);
        }
    }
    by_panel
        .into_iter()
        .filter_map(|((dashboard_id, panel_id), error)| {
            Some(FailingPanel { dashboard_id, panel_id, error: error? })
        })
        .collect()
}

impl EventBody {
    /// Gives an event a tool returned (a `source.snapshot`) the task of the run that called
    /// the tool, when the tool could not say (tools know the run, not the task).
    pub fn adopt_task(&mut self, task: &str) {
        if let Self::SourceSnapshot { task_id, .. } = self
            && task_id.is_none()
        {
            *task_id = Some(task.to_owned());
        }
    }

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
            Self::ContextSummarized { .. } => "context.summarized",
            Self::RunSteer { .. } => "run.steer",
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
