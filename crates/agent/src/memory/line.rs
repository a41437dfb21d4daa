//! The line format of a chat file: [`RunRecord`] and the stored messages with their
//! `_`-prefixed extension fields (see the module above).

use super::*;

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
    /// The summary of earlier runs this run started from, made just before it (see
    /// [`after_summary`]); replay starts from the latest one.
    #[serde(rename = "_summary", default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<ContextSummary>,
    /// The person the run was for (their user id); absent for the server token and in files
    /// written before accounts (the first admin's). A chat is its first run's person's.
    #[serde(rename = "_owner", default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
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

/// A content part: `{"type":"text","text":..}` (reasoning parts may carry replay tokens), or
/// on a user message `{"type":"image","upload":{..}}`: the image by reference (its upload's
/// sha256, or its URL), never its bytes.
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
    /// An image part's image, as `request.upload` described it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upload: Option<Upload>,
}

impl Part {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            kind: "text".into(),
            text: text.into(),
            signature: None,
            redacted: None,
            upload: None,
        }
    }

    /// An image part.
    pub fn image(upload: Upload) -> Self {
        Self { kind: "image".into(), upload: Some(upload), ..Self::text("") }
    }
}

pub(super) fn joined(parts: &[Part]) -> String {
    parts.iter().map(|p| p.text.as_str()).collect()
}

/// The image parts' images.
pub(super) fn images(parts: &[Part]) -> impl Iterator<Item = &Upload> {
    parts.iter().filter(|p| p.kind == "image").filter_map(|p| p.upload.as_ref())
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
    /// The block was never shown live (reasoning with `exposeReasoningToUser: false`, text of
    /// a hidden call): kept for replay to the model, left out of the history a client reads.
    #[serde(rename = "_hidden", default, skip_serializing_if = "std::ops::Not::not")]
    pub hidden: bool,
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

pub(super) fn function_kind() -> String {
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
    /// The events the tool streamed after its result (e.g. `dashboard.update`), as sent, so the
    /// chat's history shows them too.
    #[serde(rename = "_events", default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<serde_json::Value>,
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
