//! Provider-neutral conversation types: content blocks, messages, usage, tools and requests.
//!
//! These are what the rest of the server stores and replays; each provider converts them to and
//! from its own wire format. Serialized with `serde` for chat memory (JSON lines).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One piece of message content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// Model reasoning ("thinking"). Signature and redacted data are opaque provider tokens kept
    /// verbatim so the block can be replayed to the provider that produced it.
    Reasoning {
        /// The visible reasoning text (empty for redacted reasoning).
        text: String,
        /// Anthropic's signature over the thinking block.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
        /// Anthropic's `redacted_thinking` data.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        redacted: Option<String>,
    },
    /// A tool call made by the model.
    ToolUse {
        /// Call id (provider-issued or synthesized).
        id: String,
        /// Tool name.
        name: String,
        /// Arguments: a JSON object, or the raw text as a string when it could not be parsed
        /// (then [`ContentBlock::ToolUse::input_error`] says why).
        input: Value,
        /// Why the arguments are unusable; the runtime answers the call with this error.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        input_error: Option<String>,
    },
    /// The result of a tool call.
    ToolResult {
        /// The call this answers.
        tool_use_id: String,
        /// The result text (JSON for structured results).
        content: String,
        /// True when the tool failed.
        #[serde(default)]
        is_error: bool,
    },
    /// An image the user attached (only vision models get one; see `ModelInfo::vision`).
    Image {
        /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`; empty for a URL whose type
        /// is unknown.
        #[serde(default)]
        media_type: String,
        /// Where its bytes are.
        source: ImageSource,
    },
}

/// Where an image's bytes are. Each dialect sends [`ImageSource::Base64`] inline and
/// [`ImageSource::Url`] as a URL the provider fetches itself (Ollama cannot: it takes only
/// inline images). [`ImageSource::Upload`] is a reference the caller replaces with the bytes
/// before the request is built (chat memory keeps references, never the bytes); a dialect that
/// meets one sends a text note instead.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ImageSource {
    /// The bytes, base64 (standard alphabet, padded).
    Base64 {
        /// The base64 text.
        data: String,
    },
    /// An `https:` address.
    Url {
        /// The address.
        url: String,
    },
    /// A stored upload by id, not loaded yet.
    Upload {
        /// The upload id.
        id: String,
    },
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }

    /// The note a dialect sends for an image it cannot send (an unloaded upload, a URL to a
    /// provider that takes only inline images).
    pub fn image_note(source: &ImageSource) -> String {
        match source {
            ImageSource::Upload { id } => format!("[image {id} is no longer available]"),
            ImageSource::Url { url } => {
                format!("[image at {url} not sent: this model takes only uploaded images]")
            }
            ImageSource::Base64 { .. } => String::new(),
        }
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model finished its turn.
    #[default]
    EndTurn,
    /// The output hit the token limit.
    MaxTokens,
    /// The model wants tool results.
    ToolUse,
    /// A stop sequence matched.
    StopSequence,
    /// The provider filtered the output.
    ContentFilter,
    /// The provider refused.
    Refusal,
}

/// Token counts of one model call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens (including cached ones).
    #[serde(default)]
    pub input_tokens: u64,
    /// Generated tokens (including reasoning).
    #[serde(default)]
    pub output_tokens: u64,
    /// Of the output, reasoning tokens (when the provider reports them).
    #[serde(default)]
    pub reasoning_tokens: u64,
    /// Prompt tokens read from the provider's cache.
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider's cache.
    #[serde(default)]
    pub cache_write_tokens: u64,
}

impl Usage {
    /// Sums two usages (several model calls of one run).
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.reasoning_tokens += other.reasoning_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
    }
}

/// A message the model produced, with who produced it (so a history can be replayed to another
/// provider: context handoff).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AssistantMessage {
    /// Reasoning, text and tool calls, in the order produced.
    pub content: Vec<ContentBlock>,
    /// The model id.
    pub model: String,
    /// The provider key (as configured: `openai`, `deepseek`, ...).
    pub provider: String,
    /// Why the model stopped.
    #[serde(default)]
    pub stop_reason: StopReason,
    /// Tokens used.
    #[serde(default)]
    pub usage: Usage,
}

impl AssistantMessage {
    /// The concatenated text blocks.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The tool calls, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ContentBlock> {
        self.content.iter().filter(|b| matches!(b, ContentBlock::ToolUse { .. }))
    }
}

/// A conversation message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// Instructions (providers that take one system prompt get all of them joined).
    System {
        /// The text.
        content: String,
    },
    /// The user's turn.
    User {
        /// Text (and, after tool calls in Anthropic style, results).
        content: Vec<ContentBlock>,
    },
    /// The model's turn.
    Assistant(AssistantMessage),
    /// Tool results answering the previous assistant message's calls.
    Tool {
        /// [`ContentBlock::ToolResult`] blocks.
        content: Vec<ContentBlock>,
    },
}

impl Message {
    /// A system message.
    pub fn system(text: impl Into<String>) -> Self {
        Self::System { content: text.into() }
    }

    /// A user message with one text block.
    pub fn user(text: impl Into<String>) -> Self {
        Self::User { content: vec![ContentBlock::text(text)] }
    }

    /// One tool result.
    pub fn tool_result(
        tool_use_id: impl Into<String>,
        content: impl Into<String>,
        is_error: bool,
    ) -> Self {
        Self::Tool {
            content: vec![ContentBlock::ToolResult {
                tool_use_id: tool_use_id.into(),
                content: content.into(),
                is_error,
            }],
        }
    }
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// Name (`[A-Za-z0-9_-]{1,64}` for every provider).
    pub name: String,
    /// What it does and when to use it.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub input_schema: Value,
}

/// Whether and which tool the model must call.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolChoice {
    /// The model decides.
    #[default]
    Auto,
    /// No tool calls.
    None,
    /// At least one tool call.
    Required,
    /// This tool.
    Tool(String),
}

/// How hard the model should think.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effort {
    /// Little reasoning.
    Low,
    /// The provider's default.
    #[default]
    Medium,
    /// Much reasoning.
    High,
}

/// Reasoning control, mapped per provider family (OpenAI `reasoning_effort`, DeepSeek/Doubao
/// `thinking` object, Anthropic `thinking.budget_tokens`, Ollama `think`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum Thinking {
    /// Ask for no reasoning (providers that always reason ignore it).
    Disabled,
    /// Reason with this effort; `budget_tokens` overrides the effort where budgets exist.
    Enabled {
        /// Effort level.
        #[serde(default)]
        effort: Effort,
        /// Token budget (Anthropic); derived from the effort when absent.
        #[serde(default)]
        budget_tokens: Option<u32>,
    },
}

impl Thinking {
    /// The Anthropic budget: explicit, or by effort.
    pub fn budget(&self) -> Option<u32> {
        match self {
            Self::Disabled => None,
            Self::Enabled { budget_tokens: Some(b), .. } => Some(*b),
            Self::Enabled { effort, .. } => Some(match effort {
                Effort::Low => 2_048,
                Effort::Medium => 8_192,
                Effort::High => 24_576,
            }),
        }
    }
}

/// One model call.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ChatRequest {
    /// Model id at the provider.
    pub model: String,
    /// The conversation (system messages anywhere are joined into the system prompt).
    pub messages: Vec<Message>,
    /// Tools offered.
    #[serde(default)]
    pub tools: Vec<ToolDefinition>,
    /// Tool choice.
    #[serde(default)]
    pub tool_choice: ToolChoice,
    /// Output token limit (the model's registry default when absent).
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// Sampling temperature.
    #[serde(default)]
    pub temperature: Option<f32>,
    /// Reasoning control; absent = the provider's default.
    #[serde(default)]
    pub thinking: Option<Thinking>,
    /// Correlates the interaction log lines of this call (run id, ...).
    #[serde(default)]
    pub trace_id: Option<String>,
}

impl ChatRequest {
    /// The system prompt: every system message's text, joined by blank lines.
    pub fn system_prompt(&self) -> Option<String> {
        let parts: Vec<&str> = self
            .messages
            .iter()
            .filter_map(|m| match m {
                Message::System { content } => Some(content.as_str()),
                _ => None,
            })
            .collect();
        (!parts.is_empty()).then(|| parts.join("\n\n"))
    }
}

/// The conversation every dialect's golden image request is built from: a user message with
/// text, an inline PNG, an image URL and an upload that was not loaded, then an answer and a
/// text-only follow-up.
#[cfg(test)]
pub(crate) fn image_conversation() -> Vec<Message> {
    vec![
        Message::system("You build dashboards."),
        Message::User {
            content: vec![
                ContentBlock::Image {
                    media_type: "image/png".into(),
                    source: ImageSource::Base64 { data: "iVBORw0KGgo=".into() },
                },
                ContentBlock::Image {
                    media_type: "image/jpeg".into(),
                    source: ImageSource::Url { url: "https://example.com/chart.jpg".into() },
                },
                ContentBlock::Image {
                    media_type: "image/png".into(),
                    source: ImageSource::Upload { id: "0f0f".into() },
                },
                ContentBlock::text("build me this"),
            ],
        },
        Message::Assistant(AssistantMessage {
            content: vec![ContentBlock::text("A candlestick chart with volume.")],
            model: "m".into(),
            provider: "p".into(),
            ..AssistantMessage::default()
        }),
        Message::user("thanks"),
    ]
}
