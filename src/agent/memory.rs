//! Chat Memory V2: each chat's runs as JSON lines in `<dir>/{chatId}.json`, replayed to the model
//! through a sliding window of runs, listed for `GET /api/chats` and rebuilt into snapshot events
//! for `GET /api/chat`.
//!
//! Owns the line format ([`RunRecord`]: `chatId`, `runId`, `transactionId`, `updatedAt`, the full
//! `query`, `system` only when new or changed, and OpenAI-style `messages` with `_`-prefixed
//! extension fields), the per-chat lock that serializes runs, atomic appends, crash-tolerant
//! loading, the replay to [`crate::llm::Message`]s and the chat index. Knows nothing of HTTP, of
//! the run loop or of providers: the runtime records a run with [`RunRecorder`] and appends it
//! while holding [`ChatMemory::lock_chat`]; the gateway maps [`ChatSummary`] and [`ChatDetail`].
//!
//! Durability: a run is one line written with one `write_all` on an `O_APPEND` file, then
//! `sync_data`. A crash mid-write leaves at most a partial last line; [`ChatMemory::load`] skips
//! it (and any other unreadable line) and reports it as a [`LoadWarning`], and the next append
//! starts on a fresh line. A chat is never lost to one bad line. File work runs on tokio's
//! blocking pool, at most `FILE_OPS` (8) operations at once.
//!
//! Replay keeps reasoning only on assistant turns that made tool calls (DeepSeek requires it
//! back on those turns); the provider layer drops what its API must not receive.
//!
//! Extension fields beyond the seed's `_reasoningId`, `_contentId`, `_toolId`, `_actionId`,
//! `_timing`, `_usage`: `_msgId` (the stored messages one model response was split into share
//! it, so replay can rebuild that one message), `_model`/`_provider` (who produced it), and
//! `_isError` on failed tool results; on the run, `_finishReason` (how it ended, for the
//! history's `run.complete`).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::SystemTime;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Value, json};
use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard, Semaphore};

use super::events::{Event, EventBody, Query, now_ms};
use crate::llm::{AssistantMessage, ContentBlock, Message, StopReason, ToolDefinition, Usage};

/// Runs replayed to the model by default (`MEMORY_CHAT_K`).
pub const DEFAULT_WINDOW: usize = 20;
/// Tools recorded as actions by default (`MEMORY_CHAT_ACTION_TOOLS`).
pub const DEFAULT_ACTION_TOOLS: [&str; 3] = ["switch_theme", "launch_fireworks", "show_modal"];
/// Characters of the first query message that name a chat (the seed's `元素碳的简介，100`).
pub const CHAT_NAME_CHARS: usize = 10;

/// Errors of chat memory.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// The chat id is not `[A-Za-z0-9_-]{1,64}`.
    #[error("invalid chatId `{0}`: expected 1 to 64 of A-Z, a-z, 0-9, `_`, `-`")]
    InvalidChatId(String),
    /// No such chat.
    #[error("chat `{0}` not found")]
    NotFound(String),
    /// A record was appended under another chat's lock.
    #[error("run `{run_id}` belongs to chat `{record}`, not to the locked chat `{locked}`")]
    WrongChat {
        /// The locked chat.
        locked: String,
        /// The record's chat.
        record: String,
        /// The record's run.
        run_id: String,
    },
    /// A `MEMORY_CHAT_*` variable is invalid.
    #[error("invalid chat memory configuration: {0}")]
    Config(String),
    /// A record could not be encoded (not expected: string keys only).
    #[error("chat record does not encode: {0}")]
    Encode(String),
    /// Disk failure.
    #[error("chat memory I/O on {}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> MemoryError + '_ {
    move |source| MemoryError::Io { path: path.to_owned(), source }
}

/// Where chats live and how they are replayed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryConfig {
    /// Directory of the chat files (`MEMORY_CHAT_DIR`, default `<data dir>/chats`).
    pub dir: PathBuf,
    /// Runs replayed to the model (`MEMORY_CHAT_K`, default 20).
    pub window: usize,
    /// Tool names recorded as actions (`_actionId`) rather than tools (`_toolId`)
    /// (`MEMORY_CHAT_ACTION_TOOLS`, comma-separated).
    pub action_tools: BTreeSet<String>,
}

impl MemoryConfig {
    /// The defaults under `data_dir`.
    pub fn new(data_dir: &Path) -> Self {
        Self {
            dir: data_dir.join("chats"),
            window: DEFAULT_WINDOW,
            action_tools: DEFAULT_ACTION_TOOLS.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    /// The defaults overridden by `MEMORY_CHAT_DIR`, `MEMORY_CHAT_K`, `MEMORY_CHAT_ACTION_TOOLS`.
    pub fn from_env(data_dir: &Path) -> Result<Self, MemoryError> {
        Self::from_vars(data_dir, |name| std::env::var(name).ok())
    }

    /// Like [`MemoryConfig::from_env`] with the variables looked up by `var`.
    pub fn from_vars(
        data_dir: &Path,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, MemoryError> {
        let mut config = Self::new(data_dir);
        if let Some(dir) = var("MEMORY_CHAT_DIR").filter(|d| !d.trim().is_empty()) {
            config.dir = PathBuf::from(dir.trim());
        }
        if let Some(k) = var("MEMORY_CHAT_K").filter(|k| !k.trim().is_empty()) {
            config.window = k.trim().parse().map_err(|_| {
                MemoryError::Config(format!("MEMORY_CHAT_K must be a run count, got `{k}`"))
            })?;
        }
        if let Some(list) = var("MEMORY_CHAT_ACTION_TOOLS") {
            config.action_tools = list
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect();
        }
        Ok(config)
    }

    /// True when `tool_name` is recorded as an action.
    pub fn is_action(&self, tool_name: &str) -> bool {
        self.action_tools.contains(tool_name)
    }
}

/// Checks a chat id: `[A-Za-z0-9_-]{1,64}` (UUIDs pass), so it can never name another path.
pub fn validate_chat_id(chat_id: &str) -> Result<(), MemoryError> {
    let ok = (1..=64).contains(&chat_id.len())
        && chat_id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok { Ok(()) } else { Err(MemoryError::InvalidChatId(chat_id.to_owned())) }
}

/// A chat's display name: its first message, trimmed, cut to [`CHAT_NAME_CHARS`] characters.
pub fn chat_name(first_message: &str) -> String {
    let name: String = first_message.trim().chars().take(CHAT_NAME_CHARS).collect();
    name.trim_end().to_owned()
}

// ---------------------------------------------------------------------------------------------
// The line format
// ---------------------------------------------------------------------------------------------

/// One run: one line of the chat file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRecord {
    /// The chat.
    pub chat_id: String,
    /// The run.
    pub run_id: String,
    /// Same as `run_id` (kept for the seed format).
    #[serde(default)]
    pub transaction_id: String,
    /// When the run ended, unix milliseconds.
    #[serde(default)]
    pub updated_at: i64,
    /// The full query.
    pub query: Query,
    /// The model setup; written for a chat's first run and whenever it changed since the last
    /// one written ([`ChatLock::append`] drops an unchanged one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<SystemSnapshot>,
    /// What was said, in order.
    pub messages: Vec<StoredMessage>,
    /// How the run ended: the live `run.complete`'s `finishReason` (`stop`, `stopped`, ...), or
    /// `cancelled` / `error` for a run that ended with `run.cancel` / `run.error`. Absent in
    /// files written before it was stored.
    #[serde(rename = "_finishReason", default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
}

impl RunRecord {
    /// Tokens of all the run's model calls, as the provider reported them.
    pub fn usage(&self) -> Usage {
        let mut total = Usage::default();
        for m in &self.messages {
            if let StoredMessage::Assistant(a) = m
                && let Some(u) = &a.usage
            {
                total.add(&Usage::from(u));
            }
        }
        total
    }
}

/// The model setup of a run, as far as it is known (`model/messages/tools/stream`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SystemSnapshot {
    /// The model id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// System messages (`{"role":"system","content":..}`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<SystemMessage>,
    /// Tools offered, OpenAI style (`{"type":"function","function":{name,description,parameters}}`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Value>,
    /// Whether the model was streamed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
}

impl SystemSnapshot {
    /// The snapshot of a model call setup.
    pub fn new(
        model: &str,
        system_prompt: Option<&str>,
        tools: &[ToolDefinition],
        stream: bool,
    ) -> Self {
        Self {
            model: Some(model.to_owned()),
            messages: system_prompt
                .filter(|p| !p.is_empty())
                .map(|p| SystemMessage { role: "system".into(), content: p.to_owned() })
                .into_iter()
                .collect(),
            tools: tools
                .iter()
                .map(|t| {
                    json!({"type": "function", "function": {
                        "name": t.name, "description": t.description, "parameters": t.input_schema,
                    }})
                })
                .collect(),
            stream: Some(stream),
        }
    }
}

/// A system message of [`SystemSnapshot`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemMessage {
    /// `system`.
    pub role: String,
    /// The prompt.
    pub content: String,
}

/// A stored message, OpenAI style, tagged by `role`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum StoredMessage {
    /// The user's message.
    User(UserEntry),
    /// One block of a model response (text, reasoning or one tool call).
    Assistant(AssistantEntry),
    /// One tool result.
    Tool(ToolEntry),
}

/// A content part: `{"type":"text","text":..}` (reasoning parts may carry replay tokens).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Part {
    /// `text`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The text.
    #[serde(default)]
    pub text: String,
    /// Anthropic's signature over a thinking block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// Anthropic's redacted thinking data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redacted: Option<String>,
}

impl Part {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self { kind: "text".into(), text: text.into(), signature: None, redacted: None }
    }
}

fn joined(parts: &[Part]) -> String {
    parts.iter().map(|p| p.text.as_str()).collect()
}

/// `role=user`: `content[]` text parts and `ts`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserEntry {
    /// Text parts.
    pub content: Vec<Part>,
    /// When it was sent, unix milliseconds.
    #[serde(default)]
    pub ts: i64,
}

/// `role=assistant` in one of three snapshot shapes: `content[]`, `reasoning_content[]` or
/// `tool_calls[]`, plus extension fields.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AssistantEntry {
    /// Answer text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<Part>>,
    /// Reasoning text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<Vec<Part>>,
    /// A tool call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<StoredToolCall>>,
    /// When the block ended, unix milliseconds.
    #[serde(default)]
    pub ts: i64,
    /// Shared by the entries of one model response.
    #[serde(rename = "_msgId", default, skip_serializing_if = "Option::is_none")]
    pub msg_id: Option<String>,
    /// The `reasoningId` of the stream.
    #[serde(rename = "_reasoningId", default, skip_serializing_if = "Option::is_none")]
    pub reasoning_id: Option<String>,
    /// The `contentId` of the stream.
    #[serde(rename = "_contentId", default, skip_serializing_if = "Option::is_none")]
    pub content_id: Option<String>,
    /// The `toolId` of the stream (tool calls).
    #[serde(rename = "_toolId", default, skip_serializing_if = "Option::is_none")]
    pub tool_id: Option<String>,
    /// The `actionId` of the stream (action calls).
    #[serde(rename = "_actionId", default, skip_serializing_if = "Option::is_none")]
    pub action_id: Option<String>,
    /// Duration of the model call, milliseconds (on the response's last entry).
    #[serde(rename = "_timing", default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<u64>,
    /// Tokens of the model call (on the response's last entry).
    #[serde(rename = "_usage", default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<StoredUsage>,
    /// The model id.
    #[serde(rename = "_model", default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The provider key.
    #[serde(rename = "_provider", default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
}

/// A tool call, OpenAI style.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredToolCall {
    /// The provider's call id.
    pub id: String,
    /// `function`.
    #[serde(rename = "type", default = "function_kind")]
    pub kind: String,
    /// Name and arguments.
    pub function: StoredFunction,
}

fn function_kind() -> String {
    "function".into()
}

/// The function of a [`StoredToolCall`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredFunction {
    /// Tool name.
    pub name: String,
    /// The JSON arguments text (the raw text when it was not valid JSON).
    #[serde(default)]
    pub arguments: String,
}

/// `role=tool`: `name`, `tool_call_id`, `content[]`, `ts`, plus extension fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolEntry {
    /// Tool name.
    pub name: String,
    /// The call answered.
    pub tool_call_id: String,
    /// The result text.
    pub content: Vec<Part>,
    /// When the result came, unix milliseconds.
    #[serde(default)]
    pub ts: i64,
    /// The `toolId` of the stream.
    #[serde(rename = "_toolId", default, skip_serializing_if = "Option::is_none")]
    pub tool_id: Option<String>,
    /// The `actionId` of the stream.
    #[serde(rename = "_actionId", default, skip_serializing_if = "Option::is_none")]
    pub action_id: Option<String>,
    /// Duration of the tool, milliseconds.
    #[serde(rename = "_timing", default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<u64>,
    /// The tool failed.
    #[serde(rename = "_isError", default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
}

/// Token counts as stored (`total_tokens` = input + output).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StoredUsage {
    /// Prompt tokens.
    #[serde(default, deserialize_with = "zero_if_null")]
    pub input_tokens: u64,
    /// Generated tokens.
    #[serde(default, deserialize_with = "zero_if_null")]
    pub output_tokens: u64,
    /// Input plus output.
    #[serde(default, deserialize_with = "zero_if_null")]
    pub total_tokens: u64,
    /// Of the output, reasoning tokens.
    #[serde(default, deserialize_with = "zero_if_null", skip_serializing_if = "is_zero")]
    pub reasoning_tokens: u64,
    /// Prompt tokens read from cache.
    #[serde(default, deserialize_with = "zero_if_null", skip_serializing_if = "is_zero")]
    pub cache_read_tokens: u64,
    /// Prompt tokens written to cache.
    #[serde(default, deserialize_with = "zero_if_null", skip_serializing_if = "is_zero")]
    pub cache_write_tokens: u64,
}

fn zero_if_null<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    Ok(Option::<u64>::deserialize(d)?.unwrap_or(0))
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl From<&Usage> for StoredUsage {
    fn from(u: &Usage) -> Self {
        Self {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            total_tokens: u.input_tokens + u.output_tokens,
            reasoning_tokens: u.reasoning_tokens,
            cache_read_tokens: u.cache_read_tokens,
            cache_write_tokens: u.cache_write_tokens,
        }
    }
}

impl From<&StoredUsage> for Usage {
    fn from(u: &StoredUsage) -> Self {
        Self {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            reasoning_tokens: u.reasoning_tokens,
            cache_read_tokens: u.cache_read_tokens,
            cache_write_tokens: u.cache_write_tokens,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Recording a run
// ---------------------------------------------------------------------------------------------

/// Builds the [`RunRecord`] of a run as it happens. Made by [`ChatMemory::recorder`], which
/// records the query's message as the user message.
#[derive(Debug)]
pub struct RunRecorder {
    record: RunRecord,
    action_tools: Arc<BTreeSet<String>>,
    responses: u32,
    /// Counters for derived block ids, by kind.
    counters: HashMap<&'static str, u32>,
    /// Call id → (tool name, stream id, is action), for the results.
    calls: HashMap<String, (String, String, bool)>,
}

impl RunRecorder {
    /// Records one model response. `block_ids[i]` is the stream id (`reasoningId`, `contentId`,
    /// `toolId` or `actionId`) used for `message.content[i]`; missing ids are derived as
    /// `<runId>_<kind>_<n>`. Empty text blocks are not stored. `timing_ms` is the call's
    /// duration; it and the usage go on the response's last entry.
    pub fn assistant(
        &mut self,
        message: &AssistantMessage,
        block_ids: &[String],
        ts: i64,
        timing_ms: Option<u64>,
    ) {
        self.responses += 1;
        let msg_id = msg_id(&self.record.run_id, self.responses);
        let first = self.record.messages.len();
        for (i, block) in message.content.iter().enumerate() {
            let given = block_ids.get(i).filter(|id| !id.is_empty()).cloned();
            let mut entry = AssistantEntry {
                ts,
                msg_id: Some(msg_id.clone()),
                model: Some(message.model.clone()).filter(|m| !m.is_empty()),
                provider: Some(message.provider.clone()).filter(|p| !p.is_empty()),
                ..AssistantEntry::default()
            };
            match block {
                ContentBlock::Reasoning { text, signature, redacted } => {
                    if text.is_empty() && signature.is_none() && redacted.is_none() {
                        continue;
                    }
                    entry.reasoning_content = Some(vec![Part {
                        signature: signature.clone(),
                        redacted: redacted.clone(),
                        ..Part::text(text.clone())
                    }]);
                    entry.reasoning_id = Some(given.unwrap_or_else(|| self.derive_id("reasoning")));
                }
                ContentBlock::Text { text } => {
                    if text.is_empty() {
                        continue;
                    }
                    entry.content = Some(vec![Part::text(text.clone())]);
                    entry.content_id = Some(given.unwrap_or_else(|| self.derive_id("content")));
                }
                ContentBlock::ToolUse { id, name, input, input_error } => {
                    let arguments = match (input, input_error) {
                        (Value::String(raw), Some(_)) => raw.clone(),
                        _ => input.to_string(),
                    };
                    let is_action = self.action_tools.contains(name);
                    let stream_id = given.unwrap_or_else(|| {
                        self.derive_id(if is_action { "action" } else { "tool" })
                    });
                    entry.tool_calls = Some(vec![StoredToolCall {
                        id: id.clone(),
                        kind: function_kind(),
                        function: StoredFunction { name: name.clone(), arguments },
                    }]);
                    if is_action {
                        entry.action_id = Some(stream_id.clone());
                    } else {
                        entry.tool_id = Some(stream_id.clone());
                    }
                    self.calls.insert(id.clone(), (name.clone(), stream_id, is_action));
                }
                ContentBlock::ToolResult { .. } => continue,
            }
            self.record.messages.push(StoredMessage::Assistant(entry));
        }
        if self.record.messages.len() > first
            && let Some(StoredMessage::Assistant(last)) = self.record.messages.last_mut()
        {
            last.timing = timing_ms;
            last.usage = Some(StoredUsage::from(&message.usage));
        }
    }

    /// Records the result of a call recorded by [`RunRecorder::assistant`] (its name and
    /// stream id are taken from there).
    pub fn tool_result(
        &mut self,
        call_id: &str,
        content: &str,
        is_error: bool,
        ts: i64,
        timing_ms: Option<u64>,
    ) {
        let (name, stream_id, is_action) = self
            .calls
            .get(call_id)
            .cloned()
            .unwrap_or_else(|| (String::new(), call_id.to_owned(), false));
        self.record.messages.push(StoredMessage::Tool(ToolEntry {
            name,
            tool_call_id: call_id.to_owned(),
            content: vec![Part::text(content)],
            ts,
            tool_id: (!is_action).then(|| stream_id.clone()),
            action_id: is_action.then_some(stream_id),
            timing: timing_ms,
            is_error,
        }));
    }

    /// Records a user message sent while the run worked (steering, follow-up), so replay and
    /// history see it where it was injected.
    pub fn user(&mut self, text: &str, ts: i64) {
        self.record
            .messages
            .push(StoredMessage::User(UserEntry { content: vec![Part::text(text)], ts }));
    }

    /// Sets the run's model setup (dropped on append when unchanged since the last one stored).
    pub fn system(&mut self, snapshot: SystemSnapshot) {
        self.record.system = Some(snapshot);
    }

    /// The record so far.
    pub fn record(&self) -> &RunRecord {
        &self.record
    }

    /// Records how the run ended (see [`RunRecord::finish_reason`]).
    pub fn finish_reason(&mut self, reason: &str) {
        self.record.finish_reason = Some(reason.to_owned());
    }

    /// The finished record, `updatedAt` = now.
    pub fn finish(mut self) -> RunRecord {
        self.record.updated_at = now_ms();
        self.record
    }

    fn derive_id(&mut self, kind: &'static str) -> String {
        let n = self.counters.entry(kind).or_insert(0);
        let id = format!("{}_{kind}_{n}", self.record.run_id);
        *n += 1;
        id
    }
}

/// `m_` + 8 hex digits, stable for (run, response number).
fn msg_id(run_id: &str, n: u32) -> String {
    let hash = xxhash_rust::xxh3::xxh3_64(format!("{run_id}/{n}").as_bytes());
    format!("m_{:08x}", hash as u32)
}

// ---------------------------------------------------------------------------------------------
// Replay
// ---------------------------------------------------------------------------------------------

/// The model context from stored runs: the last `window` runs, each as user message, assistant
/// messages (one per model response) and tool results. Reasoning is kept only on responses that
/// made tool calls; tool calls without a stored result (an interrupted run) and results without
/// their call are left out, so the history is always well-formed for the providers.
pub fn replay_messages(runs: &[RunRecord], window: usize) -> Vec<Message> {
    let mut out = Vec::new();
    for run in &runs[runs.len().saturating_sub(window)..] {
        replay_run(run, &mut out);
    }
    out
}

#[derive(Default)]
struct Turn {
    blocks: Vec<ContentBlock>,
    msg_id: Option<String>,
    model: String,
    provider: String,
    usage: Usage,
    /// 0 reasoning, 1 text, 2 tool calls: the last kind added (for entries without `_msgId`).
    rank: u8,
}

impl Turn {
    fn accepts(&self, entry: &AssistantEntry) -> bool {
        if let (Some(a), Some(b)) = (&self.msg_id, &entry.msg_id) {
            return a == b;
        }
        // Without ids: one response is reasoning, then text, then tool calls.
        let rank = entry_rank(entry);
        rank > self.rank || (rank == 2 && self.rank == 2)
    }

    fn add(&mut self, entry: &AssistantEntry, answered: &HashSet<&str>) {
        if self.msg_id.is_none() {
            self.msg_id = entry.msg_id.clone();
        }
        if self.model.is_empty() {
            self.model = entry.model.clone().unwrap_or_default();
        }
        if self.provider.is_empty() {
            self.provider = entry.provider.clone().unwrap_or_default();
        }
        if let Some(usage) = &entry.usage {
            self.usage.add(&Usage::from(usage));
        }
        self.rank = entry_rank(entry);
        for part in entry.reasoning_content.iter().flatten() {
            if !part.text.is_empty() || part.signature.is_some() || part.redacted.is_some() {
                self.blocks.push(ContentBlock::Reasoning {
                    text: part.text.clone(),
                    signature: part.signature.clone(),
                    redacted: part.redacted.clone(),
                });
            }
        }
        if let Some(content) = &entry.content {
            let text = joined(content);
            if !text.is_empty() {
                self.blocks.push(ContentBlock::Text { text });
            }
        }
        for call in entry.tool_calls.iter().flatten() {
            if !answered.contains(call.id.as_str()) {
                continue;
            }
            let (input, input_error) = parse_arguments(&call.function.arguments);
            self.blocks.push(ContentBlock::ToolUse {
                id: call.id.clone(),
                name: call.function.name.clone(),
                input,
                input_error,
            });
        }
    }

    fn finish(self, out: &mut Vec<Message>) {
        let has_calls = self.blocks.iter().any(|b| matches!(b, ContentBlock::ToolUse { .. }));
        let content: Vec<ContentBlock> = if has_calls {
            self.blocks
        } else {
            self.blocks
                .into_iter()
                .filter(|b| !matches!(b, ContentBlock::Reasoning { .. }))
                .collect()
        };
        if content.is_empty() {
            return;
        }
        out.push(Message::Assistant(AssistantMessage {
            content,
            model: self.model,
            provider: self.provider,
            stop_reason: if has_calls { StopReason::ToolUse } else { StopReason::EndTurn },
            usage: self.usage,
        }));
    }
}

fn entry_rank(entry: &AssistantEntry) -> u8 {
    if entry.tool_calls.is_some() {
        2
    } else if entry.content.is_some() {
        1
    } else {
        0
    }
}

fn parse_arguments(arguments: &str) -> (Value, Option<String>) {
    if arguments.trim().is_empty() {
        return (json!({}), None);
    }
    match serde_json::from_str(arguments) {
        Ok(value) => (value, None),
        Err(e) => {
            (Value::String(arguments.to_owned()), Some(format!("invalid JSON arguments: {e}")))
        }
    }
}

fn replay_run(run: &RunRecord, out: &mut Vec<Message>) {
    let mut called = HashSet::new();
    let mut answered = HashSet::new();
    for message in &run.messages {
        match message {
            StoredMessage::Assistant(a) => {
                called.extend(a.tool_calls.iter().flatten().map(|c| c.id.as_str()));
            }
            StoredMessage::Tool(t) => {
                answered.insert(t.tool_call_id.as_str());
            }
            StoredMessage::User(_) => {}
        }
    }
    let mut turn: Option<Turn> = None;
    let mut results: Vec<ContentBlock> = Vec::new();
    let flush_results = |results: &mut Vec<ContentBlock>, out: &mut Vec<Message>| {
        if !results.is_empty() {
            out.push(Message::Tool { content: std::mem::take(results) });
        }
    };
    for message in &run.messages {
        match message {
            StoredMessage::User(u) => {
                if let Some(t) = turn.take() {
                    t.finish(out);
                }
                flush_results(&mut results, out);
                let text = joined(&u.content);
                if !text.is_empty() {
                    out.push(Message::user(text));
                }
            }
            StoredMessage::Assistant(a) => {
                flush_results(&mut results, out);
                if turn.as_ref().is_some_and(|t| !t.accepts(a))
                    && let Some(t) = turn.take()
                {
                    t.finish(out);
                }
                turn.get_or_insert_with(Turn::default).add(a, &answered);
            }
            StoredMessage::Tool(t) => {
                if let Some(t) = turn.take() {
                    t.finish(out);
                }
                if called.contains(t.tool_call_id.as_str()) {
                    results.push(ContentBlock::ToolResult {
                        tool_use_id: t.tool_call_id.clone(),
                        content: joined(&t.content),
                        is_error: t.is_error,
                    });
                }
            }
        }
    }
    if let Some(t) = turn.take() {
        t.finish(out);
    }
    flush_results(&mut results, out);
}

// ---------------------------------------------------------------------------------------------
// Snapshot events and chat views
// ---------------------------------------------------------------------------------------------

/// One row of `GET /api/chats`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatSummary {
    /// The chat.
    pub chat_id: String,
    /// Its first query message, cut to [`CHAT_NAME_CHARS`] characters.
    pub chat_name: String,
    /// The agent of its first run.
    pub first_agent_key: Option<String>,
    /// Its first message's time, unix milliseconds.
    pub created_at: i64,
    /// Its last run's end, unix milliseconds.
    pub updated_at: i64,
}

/// `GET /api/chat`: snapshot events rebuilt from storage, and on request the raw messages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatDetail {
    /// The chat.
    pub chat_id: String,
    /// Its name.
    pub chat_name: String,
    /// `chat.start` once, then per run `request.query`, `run.start`, the snapshots and results,
    /// `run.complete`; `seq` from 1.
    pub events: Vec<Event>,
    /// Every stored message with its `runId` (only with `includeRawMessages=true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages: Option<Vec<Value>>,
    /// The references of all queries, first occurrence of each `id`.
    pub references: Vec<Value>,
    /// Lines of the chat file that could not be read and were left out (damage on disk, or a
    /// write cut short by a crash); absent when every line was read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub damaged: Vec<LoadWarning>,
}

/// The history of stored runs as Event Model v2 snapshot events: per run `request.query`,
/// `chat.start` (first run only), `run.start`, then in stored order `reasoning.snapshot`,
/// `content.snapshot`, `tool.snapshot` + `tool.result`, `action.snapshot` + `action.result`,
/// and `run.complete`. `seq` is renumbered from 1. A call counts as an action when it was
/// stored with `_actionId`, else when `action_tools` names it.
pub fn snapshot_events(runs: &[RunRecord], action_tools: &BTreeSet<String>) -> Vec<Event> {
    let mut events: Vec<Event> = Vec::new();
    let mut push = |body: EventBody, timestamp: i64| {
        let seq = events.len() as u64 + 1;
        events.push(Event { seq, body, timestamp });
    };
    for (index, run) in runs.iter().enumerate() {
        let started = run
            .messages
            .iter()
            .find_map(|m| match m {
                StoredMessage::User(u) if u.ts > 0 => Some(u.ts),
                _ => None,
            })
            .unwrap_or(run.updated_at);
        push(EventBody::RequestQuery(run.query.clone()), started);
        if index == 0 {
            let name = chat_name(&run.query.message);
            push(
                EventBody::ChatStart {
                    chat_id: run.chat_id.clone(),
                    chat_name: (!name.is_empty()).then_some(name),
                },
                started,
            );
        }
        push(
            EventBody::RunStart { run_id: run.run_id.clone(), chat_id: run.chat_id.clone() },
            started,
        );
        // Call id → (stream id, is action), for the results.
        let mut calls: HashMap<&str, (String, bool)> = HashMap::new();
        let mut last = started;
        let mut derived = 0usize;
        let mut derive = |kind: &str| {
            derived += 1;
            format!("{}_{kind}_{}", run.run_id, derived - 1)
        };
        for message in &run.messages {
            let ts = match message {
                StoredMessage::User(u) => u.ts,
                StoredMessage::Assistant(a) => a.ts,
                StoredMessage::Tool(t) => t.ts,
            };
            last = if ts > 0 { ts } else { last };
            match message {
                StoredMessage::User(_) => {}
                StoredMessage::Assistant(a) => {
                    if let Some(parts) = &a.reasoning_content {
                        let reasoning_id =
                            a.reasoning_id.clone().unwrap_or_else(|| derive("reasoning"));
                        push(
                            EventBody::ReasoningSnapshot {
                                reasoning_id,
                                text: joined(parts),
                                task_id: None,
                            },
                            last,
                        );
                    }
                    if let Some(parts) = &a.content {
                        let content_id = a.content_id.clone().unwrap_or_else(|| derive("content"));
                        push(
                            EventBody::ContentSnapshot {
                                content_id,
                                text: joined(parts),
                                task_id: None,
                            },
                            last,
                        );
                    }
                    for call in a.tool_calls.iter().flatten() {
                        let is_action = match (&a.action_id, &a.tool_id) {
                            (Some(_), _) => true,
                            (None, Some(_)) => false,
                            (None, None) => action_tools.contains(&call.function.name),
                        };
                        // One stream id per entry; entries holding several calls (not
                        // written by us) fall back to the call ids.
                        let single = a.tool_calls.as_ref().is_some_and(|c| c.len() == 1);
                        let id = a
                            .action_id
                            .clone()
                            .or_else(|| a.tool_id.clone())
                            .filter(|_| single)
                            .unwrap_or_else(|| call.id.clone());
                        let name = Some(call.function.name.clone()).filter(|n| !n.is_empty());
                        let arguments = Some(call.function.arguments.clone());
                        calls.insert(call.id.as_str(), (id.clone(), is_action));
                        let body = if is_action {
                            EventBody::ActionSnapshot {
                                action_id: id,
                                action_name: name,
                                task_id: None,
                                description: None,
                                arguments,
                            }
                        } else {
                            EventBody::ToolSnapshot {
                                tool_id: id,
                                tool_name: name,
                                task_id: None,
                                tool_type: None,
                                tool_api: None,
                                tool_params: None,
                                description: None,
                                arguments,
                            }
                        };
                        push(body, last);
                    }
                }
                StoredMessage::Tool(t) => {
                    let (id, is_action) = match (&t.action_id, &t.tool_id) {
                        (Some(id), _) => (id.clone(), true),
                        (None, Some(id)) => (id.clone(), false),
                        (None, None) => {
                            calls.get(t.tool_call_id.as_str()).cloned().unwrap_or_else(|| {
                                (t.tool_call_id.clone(), action_tools.contains(&t.name))
                            })
                        }
                    };
                    let result = result_value(&joined(&t.content));
                    let body = if is_action {
                        EventBody::ActionResult { action_id: id, result }
                    } else {
                        EventBody::ToolResult { tool_id: id, result }
                    };
                    push(body, last);
                }
            }
        }
        push(
            EventBody::RunComplete {
                run_id: run.run_id.clone(),
                finish_reason: run.finish_reason.clone(),
            },
            run.updated_at.max(last),
        );
    }
    events
}

/// A stored result as the stream showed it: JSON objects and arrays as JSON, anything else as
/// text (`"OK"` stays a string, `"42"` is not turned into a number).
fn result_value(text: &str) -> Value {
    let trimmed = text.trim_start();
    if (trimmed.starts_with('{') || trimmed.starts_with('['))
        && let Ok(value) = serde_json::from_str(text)
    {
        return value;
    }
    Value::String(text.to_owned())
}

fn summary_of(chat_id: &str, runs: &[RunRecord]) -> Option<ChatSummary> {
    let first = runs.first()?;
    let last = runs.last()?;
    let created_at = first
        .messages
        .iter()
        .find_map(|m| match m {
            StoredMessage::User(u) if u.ts > 0 => Some(u.ts),
            _ => None,
        })
        .unwrap_or(first.updated_at);
    Some(ChatSummary {
        chat_id: chat_id.to_owned(),
        chat_name: chat_name(&first.query.message),
        first_agent_key: first.query.agent_key.clone(),
        created_at,
        updated_at: last.updated_at,
    })
}

// ---------------------------------------------------------------------------------------------
// Files
// ---------------------------------------------------------------------------------------------

/// A line that could not be read (skipped; the rest of the chat loads).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadWarning {
    /// 1-based line number.
    pub line: usize,
    /// The last line, without its newline: a write cut short by a crash.
    pub partial: bool,
    /// What was wrong.
    pub reason: String,
}

/// A chat as loaded: its readable runs, in order, and what was skipped.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LoadedChat {
    /// The runs.
    pub runs: Vec<RunRecord>,
    /// Skipped lines.
    pub warnings: Vec<LoadWarning>,
}

/// What the index cache keeps per chat file; valid while the file's length and mtime match.
#[derive(Debug, Clone)]
struct CachedChat {
    len: u64,
    modified: Option<SystemTime>,
    summary: Option<ChatSummary>,
    last_system: Option<SystemSnapshot>,
}

fn parse_lines(chat_id: &str, bytes: &[u8]) -> LoadedChat {
    let mut loaded = LoadedChat::default();
    let ends_clean = bytes.last().is_none_or(|b| *b == b'\n');
    let mut lines = bytes.split(|b| *b == b'\n').enumerate().peekable();
    while let Some((index, line)) = lines.next() {
        let is_last = lines.peek().is_none();
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<RunRecord>(line) {
            Ok(run) => loaded.runs.push(run),
            Err(e) => {
                let partial = is_last && !ends_clean;
                let reason = if partial {
                    format!("partial last line ({} bytes) ignored: {e}", line.len())
                } else {
                    format!("unreadable line ignored: {e}")
                };
                tracing::warn!(chat_id, line = index + 1, partial, "{reason}");
                loaded.warnings.push(LoadWarning { line: index + 1, partial, reason });
            }
        }
    }
    loaded
}

fn read_chat(chat_id: &str, path: &Path) -> Result<(LoadedChat, CachedChat), MemoryError> {
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(MemoryError::NotFound(chat_id.to_owned()));
        }
        Err(e) => return Err(io_err(path)(e)),
    };
    let meta = file.metadata().map_err(io_err(path))?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.read_to_end(&mut bytes).map_err(io_err(path))?;
    let loaded = parse_lines(chat_id, &bytes);
    let cached = CachedChat {
        len: bytes.len() as u64,
        modified: meta.modified().ok(),
        summary: summary_of(chat_id, &loaded.runs),
        last_system: loaded.runs.iter().rev().find_map(|r| r.system.clone()),
    };
    Ok((loaded, cached))
}

/// Appends one line atomically; returns the file's new length and mtime.
fn append_line(path: &Path, line: &[u8]) -> io::Result<(u64, Option<SystemTime>)> {
    let mut file = OpenOptions::new().read(true).append(true).create(true).open(path)?;
    let len = file.metadata()?.len();
    let mut buf = Vec::with_capacity(line.len() + 2);
    if len > 0 {
        // A crash may have left a partial last line: never glue this run onto it.
        file.seek(SeekFrom::End(-1))?;
        let mut last = [0u8; 1];
        file.read_exact(&mut last)?;
        if last[0] != b'\n' {
            buf.push(b'\n');
        }
    }
    buf.extend_from_slice(line);
    buf.push(b'\n');
    file.write_all(&buf)?;
    file.sync_data()?;
    if len == 0
        && let Some(dir) = path.parent()
    {
        // Make the new file's directory entry durable too.
        File::open(dir)?.sync_all()?;
    }
    let meta = file.metadata()?;
    Ok((meta.len(), meta.modified().ok()))
}

// ---------------------------------------------------------------------------------------------
// The store
// ---------------------------------------------------------------------------------------------

/// Chat memory over a directory of chat files. Cheap to clone (shared state).
#[derive(Debug, Clone)]
pub struct ChatMemory {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    config: MemoryConfig,
    action_tools: Arc<BTreeSet<String>>,
    locks: Mutex<HashMap<String, Arc<AsyncMutex<()>>>>,
    cache: Mutex<HashMap<String, CachedChat>>,
    /// Permits for file operations in flight (see [`FILE_OPS`]).
    file_ops: Arc<Semaphore>,
}

impl Inner {
    fn path(&self, chat_id: &str) -> PathBuf {
        self.config.dir.join(format!("{chat_id}.json"))
    }

    fn cache(&self) -> MutexGuard<'_, HashMap<String, CachedChat>> {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The cached head of a chat, re-read when the file changed behind the cache.
    fn cached(&self, chat_id: &str) -> Result<Option<CachedChat>, MemoryError> {
        let path = self.path(chat_id);
        let meta = match fs::metadata(&path) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                self.cache().remove(chat_id);
                return Ok(None);
            }
            Err(e) => return Err(io_err(&path)(e)),
        };
        let modified = meta.modified().ok();
        if let Some(hit) = self.cache().get(chat_id)
            && hit.len == meta.len()
            && hit.modified == modified
        {
            return Ok(Some(hit.clone()));
        }
        match read_chat(chat_id, &path) {
            Ok((_, cached)) => {
                self.cache().insert(chat_id.to_owned(), cached.clone());
                Ok(Some(cached))
            }
            Err(MemoryError::NotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn append(&self, chat_id: &str, mut record: RunRecord) -> Result<RunRecord, MemoryError> {
        let head = self.cached(chat_id)?;
        let last_system = head.as_ref().and_then(|h| h.last_system.clone());
        if record.system.is_some() && record.system == last_system {
            record.system = None;
        }
        // Compact JSON has no raw newline (strings escape it): the run is one line.
        let line = serde_json::to_vec(&record).map_err(|e| MemoryError::Encode(e.to_string()))?;
        fs::create_dir_all(&self.config.dir).map_err(io_err(&self.config.dir))?;
        let path = self.path(chat_id);
        let (len, modified) = append_line(&path, &line).map_err(io_err(&path))?;
        let summary = match head.as_ref().and_then(|h| h.summary.clone()) {
            Some(mut s) => {
                s.updated_at = record.updated_at;
                Some(s)
            }
            None => summary_of(chat_id, std::slice::from_ref(&record)),
        };
        let cached = CachedChat {
            len,
            modified,
            summary,
            last_system: record.system.clone().or(last_system),
        };
        self.cache().insert(chat_id.to_owned(), cached);
        Ok(record)
    }
}

/// Chat file operations running at once. An append ends in `fdatasync` (a new chat's also syncs
/// its directory), which holds a thread for milliseconds; unbounded, a burst of runs finishing
/// together grew tokio's blocking pool to its cap of 512 threads, and live streams on the same
/// server saw gaps of 40–100 ms (`bench gateway`'s paced phases; none at 500 streams since).
/// Journalling filesystems share one commit among concurrent syncs, so a few at a time keep
/// the throughput.
const FILE_OPS: usize = 8;

/// Runs `f` on the blocking pool once one of `inner`'s [`FILE_OPS`] permits is free; the permit
/// is held until `f` returns (even if the caller stops waiting). Every chat file operation goes
/// through here, so none escapes the bound.
async fn blocking<T: Send + 'static>(
    inner: &Arc<Inner>,
    f: impl FnOnce(&Inner) -> Result<T, MemoryError> + Send + 'static,
) -> Result<T, MemoryError> {
    // The semaphore is never closed.
    let permit = Arc::clone(&inner.file_ops).acquire_owned().await.ok();
    let inner = Arc::clone(inner);
    let f = move || {
        let result = f(&inner);
        drop(permit);
        result
    };
    match tokio::task::spawn_blocking(f).await {
        Ok(result) => result,
        // A panic in file code is a bug: let it surface in the caller.
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => Err(MemoryError::Io { path: PathBuf::new(), source: io::Error::other(e) }),
    }
}

impl ChatMemory {
    /// Chat memory over `config.dir` (created on the first append).
    pub fn new(config: MemoryConfig) -> Self {
        let action_tools = Arc::new(config.action_tools.clone());
        Self {
            inner: Arc::new(Inner {
                config,
                action_tools,
                locks: Mutex::new(HashMap::new()),
                cache: Mutex::new(HashMap::new()),
                file_ops: Arc::new(Semaphore::new(FILE_OPS)),
            }),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &MemoryConfig {
        &self.inner.config
    }

    /// Starts recording a run: the record of `query` (its chat, its message as the user
    /// message at `ts`), `transactionId` = `run_id`.
    pub fn recorder(&self, run_id: &str, query: Query, ts: i64) -> RunRecorder {
        let user = StoredMessage::User(UserEntry { content: vec![Part::text(&query.message)], ts });
        RunRecorder {
            record: RunRecord {
                chat_id: query.chat_id.clone(),
                run_id: run_id.to_owned(),
                transaction_id: run_id.to_owned(),
                updated_at: ts,
                query,
                system: None,
                messages: vec![user],
                finish_reason: None,
            },
            action_tools: Arc::clone(&self.inner.action_tools),
            responses: 0,
            counters: HashMap::new(),
            calls: HashMap::new(),
        }
    }

    /// Waits for exclusive use of a chat; the runtime holds it for a whole run so the runs of
    /// one chat never overlap.
    pub async fn lock_chat(&self, chat_id: &str) -> Result<ChatLock, MemoryError> {
        validate_chat_id(chat_id)?;
        let mutex = {
            let mut locks = self.inner.locks.lock().unwrap_or_else(PoisonError::into_inner);
            // Forget the mutexes nobody holds or waits for.
            locks.retain(|_, m| Arc::strong_count(m) > 1);
            Arc::clone(locks.entry(chat_id.to_owned()).or_default())
        };
        let guard = mutex.lock_owned().await;
        Ok(ChatLock { memory: self.clone(), chat_id: chat_id.to_owned(), _guard: guard })
    }

    /// Appends a run under the chat's lock (waits for a run in progress to release it). While
    /// holding a [`ChatLock`] of that chat, append through [`ChatLock::append`] instead: this
    /// would wait for the lock you hold.
    pub async fn append(&self, record: RunRecord) -> Result<RunRecord, MemoryError> {
        self.lock_chat(&record.chat_id).await?.append(record).await
    }

    /// Loads a chat ([`MemoryError::NotFound`] if it has no file). Readers do not take the
    /// chat lock: appends are whole lines.
    pub async fn load(&self, chat_id: &str) -> Result<LoadedChat, MemoryError> {
        validate_chat_id(chat_id)?;
        let chat_id = chat_id.to_owned();
        blocking(&self.inner, move |inner| {
            let (loaded, cached) = read_chat(&chat_id, &inner.path(&chat_id))?;
            inner.cache().insert(chat_id, cached);
            Ok(loaded)
        })
        .await
    }

    /// The readable runs of a chat, oldest first (none for a new chat).
    pub async fn runs(&self, chat_id: &str) -> Result<Vec<RunRecord>, MemoryError> {
        match self.load(chat_id).await {
            Ok(loaded) => Ok(loaded.runs),
            Err(MemoryError::NotFound(_)) => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }

    /// The model context of a chat: [`replay_messages`] over its last `window` runs (none for
    /// a new chat).
    pub async fn replay(&self, chat_id: &str) -> Result<Vec<Message>, MemoryError> {
        Ok(replay_messages(&self.runs(chat_id).await?, self.inner.config.window))
    }

    /// Every chat with at least one readable run, most recently updated first (ties by id).
    /// Derived from the files; unchanged files are answered from a cache.
    pub async fn list_chats(&self) -> Result<Vec<ChatSummary>, MemoryError> {
        blocking(&self.inner, |inner| {
            let dir = &inner.config.dir;
            let entries = match fs::read_dir(dir) {
                Ok(entries) => entries,
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
                Err(e) => return Err(io_err(dir)(e)),
            };
            let mut chats = Vec::new();
            let mut seen = HashSet::new();
            for entry in entries {
                let entry = entry.map_err(io_err(dir))?;
                let name = entry.file_name();
                let Some(chat_id) = name.to_str().and_then(|n| n.strip_suffix(".json")) else {
                    continue;
                };
                if validate_chat_id(chat_id).is_err() {
                    continue;
                }
                seen.insert(chat_id.to_owned());
                if let Some(summary) = inner.cached(chat_id)?.and_then(|c| c.summary) {
                    chats.push(summary);
                }
            }
            inner.cache().retain(|id, _| seen.contains(id));
            chats.sort_by(|a: &ChatSummary, b| {
                b.updated_at.cmp(&a.updated_at).then_with(|| a.chat_id.cmp(&b.chat_id))
            });
            Ok(chats)
        })
        .await
    }

    /// A chat's history for `GET /api/chat`: [`snapshot_events`], and with
    /// `include_raw_messages` every stored message with its `runId`.
    pub async fn chat_detail(
        &self,
        chat_id: &str,
        include_raw_messages: bool,
    ) -> Result<ChatDetail, MemoryError> {
        let loaded = self.load(chat_id).await?;
        let runs = &loaded.runs;
        let messages = include_raw_messages.then(|| {
            runs.iter()
                .flat_map(|run| {
                    run.messages.iter().map(|m| {
                        let mut value = serde_json::to_value(m).unwrap_or_default();
                        if let Value::Object(map) = &mut value {
                            map.insert("runId".into(), Value::String(run.run_id.clone()));
                        }
                        value
                    })
                })
                .collect()
        });
        let mut references = Vec::new();
        let mut seen_ids = HashSet::new();
        for reference in runs.iter().flat_map(|r| r.query.references.iter().flatten()) {
            let fresh = match reference.get("id").and_then(Value::as_str) {
                Some(id) => seen_ids.insert(id.to_owned()),
                None => !references.contains(reference),
            };
            if fresh {
                references.push(reference.clone());
            }
        }
        Ok(ChatDetail {
            chat_id: chat_id.to_owned(),
            chat_name: runs.first().map(|r| chat_name(&r.query.message)).unwrap_or_default(),
            events: snapshot_events(runs, &self.inner.action_tools),
            messages,
            references,
            damaged: loaded.warnings.clone(),
        })
    }
}

/// Exclusive use of one chat (see [`ChatMemory::lock_chat`]); released on drop.
#[derive(Debug)]
pub struct ChatLock {
    memory: ChatMemory,
    chat_id: String,
    _guard: OwnedMutexGuard<()>,
}

impl ChatLock {
    /// The chat.
    pub fn chat_id(&self) -> &str {
        &self.chat_id
    }

    /// The chat's readable runs (see [`ChatMemory::runs`]); none for a chat with no stored
    /// run yet (its run then sends `chat.start`).
    pub async fn runs(&self) -> Result<Vec<RunRecord>, MemoryError> {
        self.memory.runs(&self.chat_id).await
    }

    /// Loads the chat (see [`ChatMemory::load`]).
    pub async fn load(&self) -> Result<LoadedChat, MemoryError> {
        self.memory.load(&self.chat_id).await
    }

    /// Appends a run of this chat as one line (`system` dropped when unchanged since the last
    /// one stored); returns the record as written.
    pub async fn append(&self, record: RunRecord) -> Result<RunRecord, MemoryError> {
        if record.chat_id != self.chat_id {
            return Err(MemoryError::WrongChat {
                locked: self.chat_id.clone(),
                record: record.chat_id,
                run_id: record.run_id,
            });
        }
        let chat_id = self.chat_id.clone();
        blocking(&self.memory.inner, move |inner| inner.append(&chat_id, record)).await
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn file_operations_run_at_most_file_ops_at_once_and_release_their_permits() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let memory = ChatMemory::new(MemoryConfig::new(Path::new("/unused")));
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let calls: Vec<_> = (0..FILE_OPS * 4)
            .map(|_| {
                let (inner, running, most) = (memory.inner.clone(), running.clone(), most.clone());
                tokio::spawn(async move {
                    blocking(&inner, move |_| {
                        let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        std::thread::sleep(std::time::Duration::from_millis(5));
                        running.fetch_sub(1, Ordering::SeqCst);
                        Ok(())
                    })
                    .await
                })
            })
            .collect();
        for c in calls {
            c.await.unwrap().unwrap();
        }
        let most = most.load(Ordering::SeqCst);
        assert!((2..=FILE_OPS).contains(&most), "{most} at once");
        assert_eq!(memory.inner.file_ops.available_permits(), FILE_OPS);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_burst_of_appends_to_new_chats_all_land() {
        let dir = tempfile::tempdir().unwrap();
        let memory = ChatMemory::new(MemoryConfig::new(dir.path()));
        let appends: Vec<_> = (0..FILE_OPS * 5)
            .map(|i| {
                let memory = memory.clone();
                tokio::spawn(async move {
                    let query = Query {
                        chat_id: format!("chat-{i}"),
                        message: format!("question {i}"),
                        ..Query::default()
                    };
                    memory.append(memory.recorder(&format!("run-{i}"), query, 1_000).finish()).await
                })
            })
            .collect();
        for a in appends {
            a.await.unwrap().unwrap();
        }
        assert_eq!(memory.list_chats().await.unwrap().len(), FILE_OPS * 5);
        assert_eq!(memory.inner.file_ops.available_permits(), FILE_OPS);
    }

    #[test]
    fn chat_ids_are_checked() {
        for ok in ["d0e5b9ab-af21-4e3b-8e1a-a977dc6d5656", "chat_1", "a", &"x".repeat(64)] {
            assert!(validate_chat_id(ok).is_ok(), "{ok}");
        }
        for bad in ["", "../etc", "a/b", "a.json", ".", "..", "a b", &"x".repeat(65), "ä"] {
            assert!(matches!(validate_chat_id(bad), Err(MemoryError::InvalidChatId(_))), "{bad}");
        }
    }

    #[test]
    fn config_reads_the_variables() {
        let data = Path::new("/data");
        let config = MemoryConfig::from_vars(data, |_| None).unwrap();
        assert_eq!(config.dir, Path::new("/data/chats"));
        assert_eq!(config.window, 20);
        assert!(config.is_action("show_modal") && !config.is_action("bash"));

        let vars = HashMap::from([
            ("MEMORY_CHAT_DIR", "/elsewhere"),
            ("MEMORY_CHAT_K", "5"),
            ("MEMORY_CHAT_ACTION_TOOLS", " confetti , ,switch_theme"),
        ]);
        let config =
            MemoryConfig::from_vars(data, |k| vars.get(k).map(|v| (*v).to_owned())).unwrap();
        assert_eq!(config.dir, Path::new("/elsewhere"));
        assert_eq!(config.window, 5);
        assert_eq!(config.action_tools, BTreeSet::from(["confetti".into(), "switch_theme".into()]));

        let bad = MemoryConfig::from_vars(data, |k| (k == "MEMORY_CHAT_K").then(|| "many".into()));
        assert!(matches!(bad, Err(MemoryError::Config(_))));
    }

    #[test]
    fn chat_names_are_cut_by_characters() {
        assert_eq!(chat_name("元素碳的简介，100字"), "元素碳的简介，100");
        assert_eq!(chat_name("  hi  "), "hi");
    }

    #[test]
    fn stored_messages_use_the_seed_shapes() {
        let memory = ChatMemory::new(MemoryConfig::new(Path::new("/unused")));
        let query = Query {
            request_id: "req".into(),
            chat_id: "chat".into(),
            role: "user".into(),
            message: "switch to dark".into(),
            ..Query::default()
        };
        let mut rec = memory.recorder("run", query, 100);
        let message = AssistantMessage {
            content: vec![
                ContentBlock::Reasoning { text: "hmm".into(), signature: None, redacted: None },
                ContentBlock::text(""),
                ContentBlock::ToolUse {
                    id: "call_1".into(),
                    name: "switch_theme".into(),
                    input: json!({"theme": "dark"}),
                    input_error: None,
                },
            ],
            model: "deepseek-chat".into(),
            provider: "deepseek".into(),
            usage: Usage { input_tokens: 10, output_tokens: 5, ..Usage::default() },
            ..AssistantMessage::default()
        };
        rec.assistant(&message, &["r_1".into(), "c_1".into()], 110, Some(9));
        rec.tool_result("call_1", "OK", false, 120, Some(1));
        let record = rec.finish();
        let v = serde_json::to_value(&record.messages).unwrap();
        let msg_id = v[1]["_msgId"].as_str().unwrap();
        assert!(msg_id.starts_with("m_") && msg_id.len() == 10, "{msg_id}");
        assert_eq!(
            v,
            json!([
                {"role": "user", "content": [{"type": "text", "text": "switch to dark"}], "ts": 100},
                {"role": "assistant", "reasoning_content": [{"type": "text", "text": "hmm"}],
                 "ts": 110, "_msgId": msg_id, "_reasoningId": "r_1", "_model": "deepseek-chat",
                 "_provider": "deepseek"},
                {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function",
                  "function": {"name": "switch_theme", "arguments": "{\"theme\":\"dark\"}"}}],
                 "ts": 110, "_msgId": msg_id, "_actionId": "run_action_0", "_timing": 9,
                 "_usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
                 "_model": "deepseek-chat", "_provider": "deepseek"},
                {"role": "tool", "name": "switch_theme", "tool_call_id": "call_1",
                 "content": [{"type": "text", "text": "OK"}], "ts": 120,
                 "_actionId": "run_action_0", "_timing": 1},
            ])
        );
        assert_eq!(record.transaction_id, "run");
    }

    #[test]
    fn a_partial_last_line_is_reported_not_fatal() {
        let good = r#"{"chatId":"c","runId":"r","transactionId":"r","updatedAt":1,"query":{"requestId":"r","chatId":"c","role":"user","message":"m"},"messages":[]}"#;
        let bytes = format!("{good}\n{}", &good[..40]);
        let loaded = parse_lines("c", bytes.as_bytes());
        assert_eq!(loaded.runs.len(), 1);
        assert_eq!(loaded.warnings.len(), 1);
        assert!(loaded.warnings[0].partial && loaded.warnings[0].line == 2);
        // A bad line in the middle is skipped too, and is not "partial".
        let bytes = format!("{good}\n{{oops\n{good}\n");
        let loaded = parse_lines("c", bytes.as_bytes());
        assert_eq!(loaded.runs.len(), 2);
        assert!(!loaded.warnings[0].partial && loaded.warnings[0].line == 2);
    }
}
