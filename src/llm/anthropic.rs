//! Anthropic Messages: `POST {base_url}/v1/messages` with `stream: true`, decoded from SSE.
//!
//! Owns the mapping between the provider-neutral types and Anthropic's wire format: the request
//! body ([`request_body`], a pure function), the stream decoder ([`Decoder`], a pure state
//! machine fed one SSE event at a time) and [`AnthropicProvider`], which drives them over the
//! shared [`Transport`](super::http::Transport) in the consumer's task (no spawned task, no
//! channel: each upstream event becomes its stream events as soon as it is read).
//!
//! Replay rules (context handoff): thinking blocks are sent back only when Anthropic made them
//! (a signature or redacted data); unsigned reasoning from other providers is dropped, since
//! Anthropic rejects unsigned thinking. Tool inputs that are not objects replay as `{}`; tool
//! call ids are made to fit Anthropic's `[A-Za-z0-9_-]+`. Tool results become `user` messages
//! with `tool_result` blocks first, and consecutive messages of one role are merged.
//!
//! Knows nothing of agents, chat memory or HTTP handlers.

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::error::LlmError;
use super::event::StreamEvent;
use super::http::{self, SseEvent};
use super::provider::{Provider, ProviderKind, ProviderSettings, WireDecoder, drive};
use super::repair;
use super::types::{ChatRequest, ContentBlock, Message, StopReason, ToolChoice, Usage};

/// The `anthropic-version` header sent with every request.
pub const API_VERSION: &str = "2023-06-01";

/// `max_tokens` when the request has none (Anthropic requires one).
pub const DEFAULT_MAX_TOKENS: u32 = 8_192;

/// The smallest `budget_tokens` Anthropic accepts; smaller budgets are raised to it.
pub const MIN_THINKING_BUDGET: u32 = 1_024;

/// A provider speaking Anthropic Messages.
#[derive(Debug)]
pub struct AnthropicProvider {
    settings: ProviderSettings,
}

impl AnthropicProvider {
    /// A provider with these settings (`base_url` is the host root; a trailing `/v1` is
    /// tolerated).
    pub fn new(settings: ProviderSettings) -> Self {
        Self { settings }
    }

    fn url(&self, path: &str) -> String {
        let base = self.settings.base_url.trim_end_matches('/');
        let base = base.strip_suffix("/v1").unwrap_or(base);
        format!("{base}{path}")
    }

    /// `anthropic-version` and `x-api-key` (the JSON body sets `content-type`).
    fn headers(&self) -> Vec<(&'static str, String)> {
        let mut headers = vec![("anthropic-version", API_VERSION.to_owned())];
        if let Some(key) = &self.settings.api_key {
            headers.push(("x-api-key", key.expose().to_owned()));
        }
        headers
    }
}

impl Provider for AnthropicProvider {
    fn key(&self) -> &str {
        &self.settings.key
    }

    fn kind(&self) -> ProviderKind {
        ProviderKind::Anthropic
    }

    fn stream(&self, request: ChatRequest) -> BoxStream<'static, StreamEvent> {
        let call = self.settings.call(
            self.url("/v1/messages"),
            self.headers(),
            request_body(&request),
            request.trace_id,
        );
        drive(call, Decoder::new(&self.settings.key))
    }

    fn health_check(&self) -> BoxFuture<'_, Result<(), LlmError>> {
        Box::pin(async move {
            let headers = self.headers();
            let url = self.url("/v1/models");
            self.settings.transport.get_json(&self.settings.key, &url, &headers).await.map(|_| ())
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Request

/// The JSON body of a streaming Messages call for `request`.
///
/// `max_tokens` defaults to [`DEFAULT_MAX_TOKENS`]; with thinking it is raised above the budget
/// (`budget + max_tokens`) when it would not exceed it. Thinking is sent as
/// `{type: enabled, budget_tokens}` (at least [`MIN_THINKING_BUDGET`]) without `temperature`,
/// and left out where Anthropic would reject it: with a forced tool choice (`any`/`tool`), and
/// when the conversation continues a tool-use turn whose replayed assistant message does not
/// start with a thinking block (a turn made by another provider or without thinking).
/// `temperature` is clamped to Anthropic's 0..=1.
pub fn request_body(request: &ChatRequest) -> Value {
    let messages = messages(&request.messages);
    let forced_tool = !request.tools.is_empty()
        && matches!(request.tool_choice, ToolChoice::Required | ToolChoice::Tool(_));
    let budget = request
        .thinking
        .and_then(|t| t.budget())
        .map(|b| b.max(MIN_THINKING_BUDGET))
        .filter(|_| !forced_tool && tool_turn_can_think(&messages));
    let mut max_tokens = request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS).max(1);
    if let Some(budget) = budget
        && max_tokens <= budget
    {
        max_tokens = budget.saturating_add(max_tokens);
    }

    let mut body = Map::new();
    body.insert("model".into(), Value::String(request.model.clone()));
    body.insert("max_tokens".into(), max_tokens.into());
    if let Some(system) = request.system_prompt() {
        body.insert("system".into(), Value::String(system));
    }
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let tools = request
            .tools
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "description": t.description,
                    "input_schema": t.input_schema,
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        let choice = match &request.tool_choice {
            ToolChoice::Auto => json!({"type": "auto"}),
            ToolChoice::None => json!({"type": "none"}),
            ToolChoice::Required => json!({"type": "any"}),
            ToolChoice::Tool(name) => json!({"type": "tool", "name": name}),
        };
        body.insert("tool_choice".into(), choice);
    }
    match budget {
        Some(budget) => {
            body.insert("thinking".into(), json!({"type": "enabled", "budget_tokens": budget}));
        }
        None => {
            if let Some(t) = request.temperature.filter(|t| t.is_finite()) {
                body.insert("temperature".into(), decimal(t.clamp(0.0, 1.0)));
            }
        }
    }
    body.insert("stream".into(), Value::Bool(true));
    Value::Object(body)
}

/// An `f32` as the decimal it was written as (`0.7`, not `0.699999988079071`).
fn decimal(x: f32) -> Value {
    x.to_string()
        .parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map_or(Value::Null, Value::Number)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    User,
    Assistant,
}

/// The `messages` array: system messages left out (they are the top-level `system`), empty
/// messages dropped, consecutive messages of one role merged, `tool_result` blocks first in
/// each user message.
fn messages(history: &[Message]) -> Vec<Value> {
    let mut turns: Vec<(Role, Vec<Value>)> = Vec::new();
    for message in history {
        let (role, blocks): (Role, Vec<Value>) = match message {
            Message::System { .. } => continue,
            Message::User { content } | Message::Tool { content } => {
                (Role::User, content.iter().filter_map(user_block).collect())
            }
            Message::Assistant(m) => {
                (Role::Assistant, m.content.iter().filter_map(assistant_block).collect())
            }
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last, content)) if *last == role => content.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    turns
        .into_iter()
        .map(|(role, mut content)| {
            let role = match role {
                Role::User => {
                    // Stable: results keep their order, text keeps its order after them.
                    content.sort_by_key(|b| b["type"] != "tool_result");
                    "user"
                }
                Role::Assistant => "assistant",
            };
            json!({"role": role, "content": content})
        })
        .collect()
}

fn user_block(block: &ContentBlock) -> Option<Value> {
    match block {
        ContentBlock::Text { text } if !text.is_empty() => {
            Some(json!({"type": "text", "text": text}))
        }
        ContentBlock::ToolResult { tool_use_id, content, is_error } => {
            let mut b = Map::new();
            b.insert("type".into(), "tool_result".into());
            b.insert("tool_use_id".into(), Value::String(tool_use_id_for(tool_use_id)));
            if !content.is_empty() {
                b.insert("content".into(), Value::String(content.clone()));
            }
            b.insert("is_error".into(), Value::Bool(*is_error));
            Some(Value::Object(b))
        }
        // Reasoning and tool calls are not user content.
        _ => None,
    }
}

fn assistant_block(block: &ContentBlock) -> Option<Value> {
    match block {
        ContentBlock::Reasoning { redacted: Some(data), .. } if !data.is_empty() => {
            Some(json!({"type": "redacted_thinking", "data": data}))
        }
        ContentBlock::Reasoning { text, signature: Some(signature), .. }
            if !signature.is_empty() =>
        {
            Some(json!({"type": "thinking", "thinking": text, "signature": signature}))
        }
        // Unsigned reasoning (another provider's): Anthropic would reject it.
        ContentBlock::Reasoning { .. } => None,
        ContentBlock::Text { text } if !text.is_empty() => {
            Some(json!({"type": "text", "text": text}))
        }
        ContentBlock::Text { .. } => None,
        ContentBlock::ToolUse { id, name, input, .. } => {
            // Unparseable arguments (kept as a string) replay as an empty object.
            let input = if input.is_object() { input.clone() } else { json!({}) };
            Some(
                json!({"type": "tool_use", "id": tool_use_id_for(id), "name": name, "input": input}),
            )
        }
        ContentBlock::ToolResult { .. } => None,
    }
}

/// A tool call id as Anthropic accepts it (`[A-Za-z0-9_-]+`): other providers' ids
/// (`functions.get_price:0`) get `_` for each other character. Applied to calls and results
/// alike, so they still pair.
fn tool_use_id_for(id: &str) -> String {
    if id.is_empty() {
        return "toolu_missing_id".to_owned();
    }
    id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect()
}

/// Whether thinking may be enabled: a conversation that continues a tool-use turn must replay
/// that turn starting with a thinking block, or Anthropic rejects the request.
fn tool_turn_can_think(messages: &[Value]) -> bool {
    let Some(last) = messages.iter().rev().find(|m| m["role"] == "assistant") else {
        return true;
    };
    let content = last["content"].as_array().map(Vec::as_slice).unwrap_or_default();
    let uses_tools = content.iter().any(|b| b["type"] == "tool_use");
    !uses_tools
        || content
            .first()
            .is_some_and(|b| b["type"] == "thinking" || b["type"] == "redacted_thinking")
}

// ---------------------------------------------------------------------------------------------
// Stream

/// One SSE `data` payload, by its `type`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Wire {
    MessageStart {
        message: WireMessage,
    },
    ContentBlockStart {
        index: u64,
        content_block: WireBlock,
    },
    ContentBlockDelta {
        index: u64,
        delta: WireDelta,
    },
    ContentBlockStop {
        index: u64,
    },
    MessageDelta {
        #[serde(default)]
        delta: WireMessageDelta,
        #[serde(default)]
        usage: Option<WireUsage>,
    },
    MessageStop,
    Ping,
    Error {
        error: WireError,
    },
    /// Event types added after this was written.
    #[serde(other)]
    Unknown,
}

#[derive(Debug, Deserialize)]
struct WireMessage {
    #[serde(default)]
    usage: Option<WireUsage>,
}

/// Token counts; `message_delta` repeats them as running totals.
#[derive(Debug, Default, Deserialize)]
struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireBlock {
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        signature: String,
    },
    RedactedThinking {
        data: String,
    },
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
    },
    /// Server tools, results and block types added later: skipped with their deltas.
    #[serde(other)]
    Unknown,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireDelta {
    ThinkingDelta {
        thinking: String,
    },
    SignatureDelta {
        signature: String,
    },
    TextDelta {
        text: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    /// `citations_delta` and delta types added later.
    #[serde(other)]
    Unknown,
}

impl WireDelta {
    fn name(&self) -> &'static str {
        match self {
            Self::ThinkingDelta { .. } => "thinking_delta",
            Self::SignatureDelta { .. } => "signature_delta",
            Self::TextDelta { .. } => "text_delta",
            Self::InputJsonDelta { .. } => "input_json_delta",
            Self::Unknown => "unknown delta",
        }
    }
}

#[derive(Debug, Default, Deserialize)]
struct WireMessageDelta {
    #[serde(default)]
    stop_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
struct WireError {
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    message: String,
}

/// The content block being streamed (Anthropic sends blocks one after another).
#[derive(Debug)]
enum Block {
    Reasoning {
        signature: String,
        redacted: Option<String>,
    },
    Text,
    Tool {
        call: usize,
        id: String,
        name: String,
        args: String,
        start_input: Option<Value>,
    },
    /// A block type this decoder does not know: skipped.
    Skipped,
}

impl Block {
    fn name(&self) -> &'static str {
        match self {
            Self::Reasoning { redacted: Some(_), .. } => "redacted_thinking",
            Self::Reasoning { .. } => "thinking",
            Self::Text => "text",
            Self::Tool { .. } => "tool_use",
            Self::Skipped => "unknown",
        }
    }
}

/// The stream decoder: one SSE event in, the [`StreamEvent`]s it means out.
///
/// `message_start` and `message_delta` only update the usage and stop reason; content blocks
/// map to bracketed reasoning, text and tool-call events (block indices become 0-based call
/// indices); `message_stop` yields the final [`Usage`] and [`StreamEvent::Done`]. An `error`
/// event, a malformed event or a stream that ends early yields one final
/// [`StreamEvent::Error`]. `ping` and unknown event, block and delta types are ignored.
#[derive(Debug)]
pub struct Decoder {
    provider: String,
    open: Option<(u64, Block)>,
    calls: usize,
    input_tokens: u64,
    output_tokens: u64,
    cache_read_tokens: u64,
    cache_write_tokens: u64,
    stop_reason: Option<StopReason>,
    finished: bool,
}

impl Decoder {
    /// A decoder for a stream of this provider (named in errors).
    pub fn new(provider: &str) -> Self {
        Self {
            provider: provider.to_owned(),
            open: None,
            calls: 0,
            input_tokens: 0,
            output_tokens: 0,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            stop_reason: None,
            finished: false,
        }
    }

    /// True once `Done` or an error was emitted; later input is ignored.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Decodes one SSE event.
    pub fn feed(&mut self, event: &SseEvent) -> Vec<StreamEvent> {
        if self.finished {
            return Vec::new();
        }
        let decoded = if event.data.trim().is_empty() {
            self.without_data(&event.event)
        } else {
            match serde_json::from_str::<Wire>(&event.data) {
                Ok(wire) => self.apply(wire),
                Err(e) => Err(format!(
                    "malformed {} event ({e}): {}",
                    event.event,
                    super::repair::preview(&event.data)
                )),
            }
        };
        match decoded {
            Ok(events) => events,
            Err(message) => {
                self.finished = true;
                vec![StreamEvent::Error(self.protocol(message))]
            }
        }
    }

    /// Ends the stream: nothing when the message (or an error) was complete, else a
    /// truncation error.
    pub fn finish(self) -> Vec<StreamEvent> {
        if self.finished {
            return Vec::new();
        }
        let message = match &self.open {
            Some((index, block)) => format!(
                "truncated stream: it ended inside {} block {index}, before message_stop",
                block.name()
            ),
            None => "truncated stream: it ended before message_stop".to_owned(),
        };
        vec![StreamEvent::Error(self.protocol(message))]
    }

    fn protocol(&self, message: String) -> LlmError {
        LlmError::Protocol { provider: self.provider.clone(), message }
    }

    /// An event with an empty `data` field: only its name tells what it was.
    fn without_data(&mut self, name: &str) -> Result<Vec<StreamEvent>, String> {
        match name {
            "message_stop" => self.apply(Wire::MessageStop),
            "message_start"
            | "content_block_start"
            | "content_block_delta"
            | "content_block_stop"
            | "message_delta"
            | "error" => Err(format!("malformed {name} event: it has no data")),
            _ => Ok(Vec::new()),
        }
    }

    fn apply(&mut self, wire: Wire) -> Result<Vec<StreamEvent>, String> {
        Ok(match wire {
            Wire::MessageStart { message } => {
                self.usage(message.usage);
                Vec::new()
            }
            Wire::ContentBlockStart { index, content_block } => self.start(index, content_block)?,
            Wire::ContentBlockDelta { index, delta } => self.delta(index, delta)?,
            Wire::ContentBlockStop { index } => self.stop(index)?,
            Wire::MessageDelta { delta, usage } => {
                if let Some(reason) = delta.stop_reason {
                    self.stop_reason = Some(stop_reason(&reason));
                }
                self.usage(usage);
                Vec::new()
            }
            Wire::MessageStop => {
                if let Some((index, block)) = &self.open {
                    return Err(format!(
                        "message_stop arrived while {} block {index} was open",
                        block.name()
                    ));
                }
                self.finished = true;
                let stop_reason = self.stop_reason.unwrap_or(if self.calls > 0 {
                    StopReason::ToolUse
                } else {
                    StopReason::EndTurn
                });
                let usage = Usage {
                    // Anthropic's input_tokens leaves out the cached part; ours includes it.
                    input_tokens: self.input_tokens
                        + self.cache_read_tokens
                        + self.cache_write_tokens,
                    output_tokens: self.output_tokens,
                    reasoning_tokens: 0,
                    cache_read_tokens: self.cache_read_tokens,
                    cache_write_tokens: self.cache_write_tokens,
                };
                vec![StreamEvent::Usage(usage), StreamEvent::Done { stop_reason }]
            }
            Wire::Error { error } => {
                self.finished = true;
                vec![StreamEvent::Error(LlmError::Api {
                    provider: self.provider.clone(),
                    error_type: error.kind,
                    message: error.message,
                })]
            }
            Wire::Ping | Wire::Unknown => Vec::new(),
        })
    }

    /// Usage counts are running totals: each one given replaces the last (never added).
    fn usage(&mut self, usage: Option<WireUsage>) {
        let Some(u) = usage else { return };
        let fields = [
            (u.input_tokens, &mut self.input_tokens),
            (u.output_tokens, &mut self.output_tokens),
            (u.cache_read_input_tokens, &mut self.cache_read_tokens),
            (u.cache_creation_input_tokens, &mut self.cache_write_tokens),
        ];
        for (given, total) in fields {
            if let Some(n) = given {
                *total = n;
            }
        }
    }

    fn start(&mut self, index: u64, block: WireBlock) -> Result<Vec<StreamEvent>, String> {
        if let Some((open, kind)) = &self.open {
            return Err(format!(
                "content block {index} started while {} block {open} was open",
                kind.name()
            ));
        }
        let (block, events) = match block {
            WireBlock::Thinking { thinking, signature } => {
                let mut events = vec![StreamEvent::ReasoningStart];
                if !thinking.is_empty() {
                    events.push(StreamEvent::ReasoningDelta { text: thinking });
                }
                (Block::Reasoning { signature, redacted: None }, events)
            }
            WireBlock::RedactedThinking { data } => (
                Block::Reasoning { signature: String::new(), redacted: Some(data) },
                vec![StreamEvent::ReasoningStart],
            ),
            WireBlock::Text { text } => {
                let mut events = vec![StreamEvent::TextStart];
                if !text.is_empty() {
                    events.push(StreamEvent::TextDelta { text });
                }
                (Block::Text, events)
            }
            WireBlock::ToolUse { id, name, input } => {
                let call = self.calls;
                self.calls += 1;
                let start_input = input.as_object().is_some_and(|o| !o.is_empty()).then_some(input);
                let event =
                    StreamEvent::ToolCallStart { index: call, id: id.clone(), name: name.clone() };
                (Block::Tool { call, id, name, args: String::new(), start_input }, vec![event])
            }
            WireBlock::Unknown => (Block::Skipped, Vec::new()),
        };
        self.open = Some((index, block));
        Ok(events)
    }

    fn delta(&mut self, index: u64, delta: WireDelta) -> Result<Vec<StreamEvent>, String> {
        let block = match &mut self.open {
            Some((open, block)) if *open == index => block,
            _ => return Err(format!("content_block_delta for block {index}, which is not open")),
        };
        Ok(match (block, delta) {
            (Block::Skipped, _) | (_, WireDelta::Unknown) => Vec::new(),
            (Block::Reasoning { .. }, WireDelta::ThinkingDelta { thinking }) => {
                vec![StreamEvent::ReasoningDelta { text: thinking }]
            }
            (Block::Reasoning { signature, .. }, WireDelta::SignatureDelta { signature: s }) => {
                signature.push_str(&s);
                Vec::new()
            }
            (Block::Text, WireDelta::TextDelta { text }) => vec![StreamEvent::TextDelta { text }],
            (Block::Tool { call, args, .. }, WireDelta::InputJsonDelta { partial_json }) => {
                if partial_json.is_empty() {
                    Vec::new()
                } else {
                    args.push_str(&partial_json);
                    vec![StreamEvent::ToolCallDelta { index: *call, args_delta: partial_json }]
                }
            }
            (block, delta) => {
                return Err(format!(
                    "unexpected {} in {} block {index}",
                    delta.name(),
                    block.name()
                ));
            }
        })
    }

    fn stop(&mut self, index: u64) -> Result<Vec<StreamEvent>, String> {
        let block = match self.open.take() {
            Some((open, block)) if open == index => block,
            other => {
                let open = other.as_ref().map(|(i, _)| *i);
                self.open = other;
                return Err(match open {
                    Some(open) => {
                        format!("content_block_stop for block {index} while block {open} is open")
                    }
                    None => format!("content_block_stop for block {index}, which is not open"),
                });
            }
        };
        Ok(match block {
            Block::Reasoning { signature, redacted } => vec![StreamEvent::ReasoningEnd {
                signature: (!signature.is_empty()).then_some(signature),
                redacted,
            }],
            Block::Text => vec![StreamEvent::TextEnd],
            Block::Tool { call, id, name, args, start_input } => {
                let (input, input_error) = match start_input {
                    Some(input) if args.trim().is_empty() => (input, None),
                    _ => match repair::parse_arguments(&args) {
                        Ok(input) => (input, None),
                        Err(e) => (Value::String(args), Some(e)),
                    },
                };
                vec![StreamEvent::ToolCallEnd { index: call, id, name, input, input_error }]
            }
            Block::Skipped => Vec::new(),
        })
    }
}

/// Anthropic's stop reasons; `pause_turn` (a server tool paused) ends the turn, reasons added
/// later count as `end_turn`.
fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "max_tokens" | "model_context_window_exceeded" => StopReason::MaxTokens,
        "tool_use" => StopReason::ToolUse,
        "stop_sequence" => StopReason::StopSequence,
        "refusal" => StopReason::Refusal,
        _ => StopReason::EndTurn,
    }
}

impl WireDecoder for Decoder {
    type Item = SseEvent;

    fn frames(
        provider: &str,
        bytes: http::ByteStream,
    ) -> BoxStream<'static, Result<SseEvent, LlmError>> {
        http::sse(provider, bytes).boxed()
    }

    fn text(item: &SseEvent) -> &str {
        &item.data
    }

    fn decode(&mut self, item: &SseEvent) -> Vec<StreamEvent> {
        self.feed(item)
    }

    fn over(&self) -> bool {
        self.is_finished()
    }

    fn end(self) -> Vec<StreamEvent> {
        self.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::event::MessageBuilder;
    use crate::llm::types::{AssistantMessage, Effort, Thinking, ToolDefinition};

    fn request(messages: Vec<Message>) -> ChatRequest {
        ChatRequest { model: "claude-test".into(), messages, ..ChatRequest::default() }
    }

    fn tool(name: &str) -> ToolDefinition {
        ToolDefinition {
            name: name.into(),
            description: format!("{name} does things"),
            input_schema: json!({"type": "object", "properties": {"symbol": {"type": "string"}}}),
        }
    }

    fn assistant(provider: &str, content: Vec<ContentBlock>) -> Message {
        Message::Assistant(AssistantMessage {
            content,
            model: "m".into(),
            provider: provider.into(),
            ..AssistantMessage::default()
        })
    }

    fn reasoning(text: &str, signature: Option<&str>, redacted: Option<&str>) -> ContentBlock {
        ContentBlock::Reasoning {
            text: text.into(),
            signature: signature.map(Into::into),
            redacted: redacted.map(Into::into),
        }
    }

    fn tool_use(id: &str, name: &str, input: Value) -> ContentBlock {
        ContentBlock::ToolUse { id: id.into(), name: name.into(), input, input_error: None }
    }

    fn enabled(effort: Effort, budget_tokens: Option<u32>) -> Option<Thinking> {
        Some(Thinking::Enabled { effort, budget_tokens })
    }

    #[test]
    fn a_plain_request_has_model_max_tokens_system_messages_and_stream() {
        let mut r = request(vec![
            Message::system("You build dashboards."),
            Message::user("Gold price?"),
            Message::system("Answer briefly."),
        ]);
        r.temperature = Some(0.7);
        assert_eq!(
            request_body(&r),
            json!({
                "model": "claude-test",
                "max_tokens": 8192,
                "system": "You build dashboards.\n\nAnswer briefly.",
                "messages": [{"role": "user", "content": [{"type": "text", "text": "Gold price?"}]}],
                "temperature": 0.7,
                "stream": true,
            })
        );
    }

    #[test]
    fn max_tokens_and_temperature_are_kept_in_range() {
        let mut r = request(vec![Message::user("hi")]);
        r.max_tokens = Some(512);
        r.temperature = Some(1.6);
        let body = request_body(&r);
        assert_eq!(body["max_tokens"], 512);
        assert_eq!(body["temperature"], 1.0);
        assert!(body.get("system").is_none());
        assert!(body.get("thinking").is_none());
        assert!(body.get("tools").is_none() && body.get("tool_choice").is_none());
    }

    #[test]
    fn thinking_maps_to_a_budget_without_temperature_and_raises_max_tokens() {
        let mut r = request(vec![Message::user("hi")]);
        r.temperature = Some(0.2);
        // (thinking, max_tokens asked) -> (budget sent, max_tokens sent)
        let cases = [
            (enabled(Effort::Low, None), None, 2_048, 8_192),
            (enabled(Effort::Medium, None), None, 8_192, 16_384),
            (enabled(Effort::High, None), None, 24_576, 32_768),
            (enabled(Effort::High, Some(4_000)), Some(4_001), 4_000, 4_001),
            (enabled(Effort::Low, Some(4_000)), Some(1_000), 4_000, 5_000),
            (enabled(Effort::Low, Some(100)), Some(900), 1_024, 1_924),
        ];
        for (thinking, max_tokens, budget, sent_max) in cases {
            r.thinking = thinking;
            r.max_tokens = max_tokens;
            let body = request_body(&r);
            assert_eq!(body["thinking"], json!({"type": "enabled", "budget_tokens": budget}));
            assert_eq!(body["max_tokens"], sent_max, "{thinking:?} {max_tokens:?}");
            assert!(body.get("temperature").is_none(), "{body}");
        }
        r.thinking = Some(Thinking::Disabled);
        r.max_tokens = None;
        let body = request_body(&r);
        assert!(body.get("thinking").is_none());
        assert_eq!(body["max_tokens"], 8192);
        assert_eq!(body["temperature"], 0.2);
    }

    #[test]
    fn tools_and_every_tool_choice() {
        let mut r = request(vec![Message::user("price of gold")]);
        r.tools = vec![tool("get_price")];
        let cases = [
            (ToolChoice::Auto, json!({"type": "auto"})),
            (ToolChoice::Required, json!({"type": "any"})),
            (ToolChoice::None, json!({"type": "none"})),
            (ToolChoice::Tool("get_price".into()), json!({"type": "tool", "name": "get_price"})),
        ];
        for (choice, wire) in cases {
            r.tool_choice = choice;
            let body = request_body(&r);
            assert_eq!(
                body["tools"],
                json!([{
                    "name": "get_price",
                    "description": "get_price does things",
                    "input_schema": {"type": "object", "properties": {"symbol": {"type": "string"}}},
                }])
            );
            assert_eq!(body["tool_choice"], wire);
        }
    }

    #[test]
    fn a_forced_tool_choice_leaves_thinking_out() {
        let mut r = request(vec![Message::user("price of gold")]);
        r.tools = vec![tool("get_price")];
        r.thinking = enabled(Effort::Medium, None);
        r.tool_choice = ToolChoice::Auto;
        assert!(request_body(&r).get("thinking").is_some());
        for choice in [ToolChoice::Required, ToolChoice::Tool("get_price".into())] {
            r.tool_choice = choice;
            let body = request_body(&r);
            assert!(body.get("thinking").is_none(), "{body}");
            assert_eq!(body["max_tokens"], 8192);
        }
    }

    #[test]
    fn anthropic_thinking_replays_unmodified_and_tool_results_become_a_user_message() {
        let mut r = request(vec![
            Message::user("gold and silver?"),
            assistant(
                "anthropic",
                vec![
                    reasoning("I need both prices.", Some("sig-abc=="), None),
                    reasoning("", None, Some("EncRyPtEd")),
                    ContentBlock::text("Fetching."),
                    tool_use("toolu_01", "get_price", json!({"symbol": "XAU"})),
                    tool_use("toolu_02", "get_price", json!({"symbol": "XAG"})),
                ],
            ),
            Message::tool_result("toolu_01", "2400", false),
            Message::tool_result("toolu_02", "unknown symbol", true),
        ]);
        r.thinking = enabled(Effort::Low, None);
        let body = request_body(&r);
        assert_eq!(
            body["messages"],
            json!([
                {"role": "user", "content": [{"type": "text", "text": "gold and silver?"}]},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "I need both prices.", "signature": "sig-abc=="},
                    {"type": "redacted_thinking", "data": "EncRyPtEd"},
                    {"type": "text", "text": "Fetching."},
                    {"type": "tool_use", "id": "toolu_01", "name": "get_price", "input": {"symbol": "XAU"}},
                    {"type": "tool_use", "id": "toolu_02", "name": "get_price", "input": {"symbol": "XAG"}},
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_01", "content": "2400", "is_error": false},
                    {"type": "tool_result", "tool_use_id": "toolu_02", "content": "unknown symbol", "is_error": true},
                ]},
            ])
        );
        // The tool turn starts with signed thinking: thinking stays on.
        assert_eq!(body["thinking"]["budget_tokens"], 2048);
    }

    #[test]
    fn another_providers_history_replays_validly() {
        let mut r = request(vec![
            Message::system("sys"),
            Message::user("gold?"),
            assistant(
                "deepseek",
                vec![
                    reasoning("unsigned chain of thought", None, None),
                    ContentBlock::text(""),
                    tool_use("functions.get_price:0", "get_price", json!({"symbol": "XAU"})),
                    ContentBlock::ToolUse {
                        id: "call 2".into(),
                        name: "get_price".into(),
                        input: json!("{\"symbol\": XAG"),
                        input_error: Some("not valid JSON".into()),
                    },
                ],
            ),
            Message::tool_result("functions.get_price:0", "2400", false),
            Message::tool_result("call 2", "the arguments are not valid JSON", true),
            Message::user("and in euros?"),
            // Only unsigned reasoning: nothing to send, the message is dropped and the users merge.
            assistant("openai", vec![reasoning("hmm", None, None)]),
            Message::user("please"),
        ]);
        r.thinking = enabled(Effort::Medium, None);
        let body = request_body(&r);
        assert_eq!(body["system"], "sys");
        assert_eq!(
            body["messages"],
            json!([
                {"role": "user", "content": [{"type": "text", "text": "gold?"}]},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "functions_get_price_0", "name": "get_price", "input": {"symbol": "XAU"}},
                    {"type": "tool_use", "id": "call_2", "name": "get_price", "input": {}},
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "functions_get_price_0", "content": "2400", "is_error": false},
                    {"type": "tool_result", "tool_use_id": "call_2", "content": "the arguments are not valid JSON", "is_error": true},
                    {"type": "text", "text": "and in euros?"},
                    {"type": "text", "text": "please"},
                ]},
            ])
        );
        // The last assistant turn used tools without a thinking block: Anthropic would reject
        // thinking, so it is left out.
        assert!(body.get("thinking").is_none(), "{body}");
        assert_eq!(body["max_tokens"], 8192);
    }

    #[test]
    fn thinking_stays_on_when_the_last_assistant_turn_used_no_tools() {
        let mut r = request(vec![
            Message::user("hi"),
            assistant("openai", vec![reasoning("x", None, None), ContentBlock::text("Hello")]),
            Message::user("gold?"),
        ]);
        r.thinking = enabled(Effort::Low, None);
        let body = request_body(&r);
        assert_eq!(body["thinking"]["budget_tokens"], 2048);
        assert_eq!(
            body["messages"][1],
            json!({"role": "assistant", "content": [{"type": "text", "text": "Hello"}]})
        );
    }

    #[test]
    fn results_go_before_text_in_a_merged_user_message_and_empty_content_is_omitted() {
        let r = request(vec![
            Message::user("q"),
            assistant("anthropic", vec![tool_use("t1", "noop", json!({}))]),
            Message::User {
                content: vec![
                    ContentBlock::text("also this"),
                    ContentBlock::ToolResult {
                        tool_use_id: "t1".into(),
                        content: String::new(),
                        is_error: false,
                    },
                ],
            },
        ]);
        assert_eq!(
            request_body(&r)["messages"][2],
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "is_error": false},
                {"type": "text", "text": "also this"},
            ]})
        );
    }

    // --- decoding -------------------------------------------------------------------------

    fn sse(data: Value) -> SseEvent {
        SseEvent {
            event: data["type"].as_str().unwrap_or("message").to_owned(),
            data: data.to_string(),
        }
    }

    fn decode(events: &[Value]) -> Vec<StreamEvent> {
        let mut d = Decoder::new("anthropic");
        let mut out = Vec::new();
        for e in events {
            out.extend(d.feed(&sse(e.clone())));
        }
        out.extend(d.finish());
        out
    }

    fn start(input: u64, cache_read: u64, cache_write: u64) -> Value {
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
            "content": [], "model": "claude-test", "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": input, "output_tokens": 1,
                      "cache_read_input_tokens": cache_read, "cache_creation_input_tokens": cache_write}}})
    }

    fn block_start(index: u64, block: Value) -> Value {
        json!({"type": "content_block_start", "index": index, "content_block": block})
    }

    fn delta(index: u64, delta: Value) -> Value {
        json!({"type": "content_block_delta", "index": index, "delta": delta})
    }

    fn block_stop(index: u64) -> Value {
        json!({"type": "content_block_stop", "index": index})
    }

    fn message_delta(stop: &str, output: u64) -> Value {
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
               "usage": {"output_tokens": output}})
    }

    fn stop() -> Value {
        json!({"type": "message_stop"})
    }

    fn usage(input: u64, output: u64) -> StreamEvent {
        StreamEvent::Usage(Usage { input_tokens: input, output_tokens: output, ..Usage::default() })
    }

    fn protocol(message: &str) -> StreamEvent {
        StreamEvent::Error(LlmError::Protocol {
            provider: "anthropic".into(),
            message: message.into(),
        })
    }

    #[test]
    fn reasoning_text_and_tool_calls_decode_in_order() {
        let events = decode(&[
            start(10, 0, 0),
            json!({"type": "ping"}),
            block_start(0, json!({"type": "thinking", "thinking": "", "signature": ""})),
            delta(0, json!({"type": "thinking_delta", "thinking": "Need "})),
            delta(0, json!({"type": "thinking_delta", "thinking": "prices."})),
            delta(0, json!({"type": "signature_delta", "signature": "sig=="})),
            block_stop(0),
            block_start(1, json!({"type": "text", "text": ""})),
            delta(1, json!({"type": "text_delta", "text": "Checking."})),
            block_stop(1),
            block_start(
                2,
                json!({"type": "tool_use", "id": "toolu_a", "name": "get_price", "input": {}}),
            ),
            delta(2, json!({"type": "input_json_delta", "partial_json": ""})),
            delta(2, json!({"type": "input_json_delta", "partial_json": "{\"symbol\":"})),
            delta(2, json!({"type": "input_json_delta", "partial_json": "\"XAU\"}"})),
            block_stop(2),
            block_start(
                3,
                json!({"type": "tool_use", "id": "toolu_b", "name": "list", "input": {}}),
            ),
            block_stop(3),
            message_delta("tool_use", 57),
            stop(),
        ]);
        assert_eq!(
            events,
            vec![
                StreamEvent::ReasoningStart,
                StreamEvent::ReasoningDelta { text: "Need ".into() },
                StreamEvent::ReasoningDelta { text: "prices.".into() },
                StreamEvent::ReasoningEnd { signature: Some("sig==".into()), redacted: None },
                StreamEvent::TextStart,
                StreamEvent::TextDelta { text: "Checking.".into() },
                StreamEvent::TextEnd,
                StreamEvent::ToolCallStart {
                    index: 0,
                    id: "toolu_a".into(),
                    name: "get_price".into()
                },
                StreamEvent::ToolCallDelta { index: 0, args_delta: "{\"symbol\":".into() },
                StreamEvent::ToolCallDelta { index: 0, args_delta: "\"XAU\"}".into() },
                StreamEvent::ToolCallEnd {
                    index: 0,
                    id: "toolu_a".into(),
                    name: "get_price".into(),
                    input: json!({"symbol": "XAU"}),
                    input_error: None,
                },
                StreamEvent::ToolCallStart { index: 1, id: "toolu_b".into(), name: "list".into() },
                StreamEvent::ToolCallEnd {
                    index: 1,
                    id: "toolu_b".into(),
                    name: "list".into(),
                    input: json!({}),
                    input_error: None,
                },
                usage(10, 57),
                StreamEvent::Done { stop_reason: StopReason::ToolUse },
            ]
        );
        let mut builder = MessageBuilder::new("claude-test", "anthropic");
        for e in &events {
            builder.push(e);
        }
        assert_eq!(
            builder.finish().unwrap(),
            AssistantMessage {
                content: vec![
                    reasoning("Need prices.", Some("sig=="), None),
                    ContentBlock::text("Checking."),
                    tool_use("toolu_a", "get_price", json!({"symbol": "XAU"})),
                    tool_use("toolu_b", "list", json!({})),
                ],
                model: "claude-test".into(),
                provider: "anthropic".into(),
                stop_reason: StopReason::ToolUse,
                usage: Usage { input_tokens: 10, output_tokens: 57, ..Usage::default() },
            }
        );
    }

    #[test]
    fn redacted_thinking_keeps_its_data() {
        let events = decode(&[
            start(5, 0, 0),
            block_start(0, json!({"type": "redacted_thinking", "data": "opaque=="})),
            block_stop(0),
            block_start(1, json!({"type": "text", "text": ""})),
            block_stop(1),
            message_delta("end_turn", 3),
            stop(),
        ]);
        assert_eq!(
            events,
            vec![
                StreamEvent::ReasoningStart,
                StreamEvent::ReasoningEnd { signature: None, redacted: Some("opaque==".into()) },
                StreamEvent::TextStart,
                StreamEvent::TextEnd,
                usage(5, 3),
                StreamEvent::Done { stop_reason: StopReason::EndTurn },
            ]
        );
    }

    #[test]
    fn usage_is_cumulative_and_counts_cached_input() {
        let events = decode(&[
            start(100, 2000, 300),
            message_delta("end_turn", 40),
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                   "usage": {"output_tokens": 42, "input_tokens": 101, "cache_read_input_tokens": null}}),
            stop(),
        ]);
        assert_eq!(
            events,
            vec![
                StreamEvent::Usage(Usage {
                    input_tokens: 101 + 2000 + 300,
                    output_tokens: 42,
                    reasoning_tokens: 0,
                    cache_read_tokens: 2000,
                    cache_write_tokens: 300,
                }),
                StreamEvent::Done { stop_reason: StopReason::EndTurn },
            ]
        );
    }

    #[test]
    fn stop_reasons_map() {
        for (wire, ours) in [
            ("end_turn", StopReason::EndTurn),
            ("max_tokens", StopReason::MaxTokens),
            ("tool_use", StopReason::ToolUse),
            ("stop_sequence", StopReason::StopSequence),
            ("refusal", StopReason::Refusal),
            ("pause_turn", StopReason::EndTurn),
            ("model_context_window_exceeded", StopReason::MaxTokens),
            ("something_new", StopReason::EndTurn),
        ] {
            let events = decode(&[start(1, 0, 0), message_delta(wire, 1), stop()]);
            assert_eq!(events.last(), Some(&StreamEvent::Done { stop_reason: ours }), "{wire}");
        }
    }

    #[test]
    fn unknown_events_blocks_and_deltas_are_ignored() {
        let events = decode(&[
            start(1, 0, 0),
            json!({"type": "brand_new_event", "payload": [1, 2]}),
            block_start(
                0,
                json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}),
            ),
            delta(0, json!({"type": "input_json_delta", "partial_json": "{\"query\":\"gold\"}"})),
            block_stop(0),
            block_start(1, json!({"type": "text", "text": "", "citations": null})),
            delta(1, json!({"type": "citations_delta", "citation": {"type": "char_location"}})),
            json!({"type": "ping"}),
            delta(1, json!({"type": "text_delta", "text": "ok"})),
            block_stop(1),
            message_delta("end_turn", 2),
            stop(),
        ]);
        assert_eq!(
            events,
            vec![
                StreamEvent::TextStart,
                StreamEvent::TextDelta { text: "ok".into() },
                StreamEvent::TextEnd,
                usage(1, 2),
                StreamEvent::Done { stop_reason: StopReason::EndTurn },
            ]
        );
    }

    #[test]
    fn unusable_arguments_keep_the_call_with_an_error() {
        let events = decode(&[
            start(1, 0, 0),
            block_start(0, json!({"type": "tool_use", "id": "t", "name": "f", "input": {}})),
            delta(0, json!({"type": "input_json_delta", "partial_json": "{\"a\":1}{\"b\":2}"})),
            block_stop(0),
            message_delta("tool_use", 2),
            stop(),
        ]);
        let StreamEvent::ToolCallEnd { input, input_error: Some(error), .. } = &events[2] else {
            panic!("{events:?}");
        };
        assert_eq!(input, &json!("{\"a\":1}{\"b\":2}"));
        assert!(error.contains("2 JSON values"), "{error}");
    }

    #[test]
    fn an_error_event_ends_the_stream() {
        let mut d = Decoder::new("anthropic");
        let mut out = d.feed(&sse(start(1, 0, 0)));
        out.extend(d.feed(&sse(block_start(0, json!({"type": "text", "text": ""})))));
        out.extend(d.feed(&sse(json!({"type": "error",
            "error": {"type": "overloaded_error", "message": "Overloaded"}}))));
        assert!(d.is_finished());
        out.extend(d.feed(&sse(stop())));
        out.extend(d.finish());
        assert_eq!(
            out,
            vec![
                StreamEvent::TextStart,
                StreamEvent::Error(LlmError::Api {
                    provider: "anthropic".into(),
                    error_type: "overloaded_error".into(),
                    message: "Overloaded".into(),
                }),
            ]
        );
    }

    #[test]
    fn malformed_events_are_protocol_errors_naming_what_was_wrong() {
        let mut d = Decoder::new("anthropic");
        let bad = SseEvent {
            event: "content_block_delta".into(),
            data: "{\"type\": \"content_block_delta\", \"index\": ".into(),
        };
        let out = d.feed(&bad);
        let [StreamEvent::Error(LlmError::Protocol { message, .. })] = out.as_slice() else {
            panic!("{out:?}");
        };
        assert!(message.starts_with("malformed content_block_delta event ("), "{message}");
        assert!(message.contains("\"index\": "), "{message}");
        assert!(d.finish().is_empty());

        let missing = decode(&[
            start(1, 0, 0),
            json!({"type": "content_block_delta", "delta": {"type": "text_delta", "text": "x"}}),
        ]);
        let [StreamEvent::Error(LlmError::Protocol { message, .. })] = missing.as_slice() else {
            panic!("{missing:?}");
        };
        assert!(message.contains("missing field `index`"), "{message}");

        let no_data = decode(&[start(1, 0, 0)]);
        assert_eq!(no_data, vec![protocol("truncated stream: it ended before message_stop")]);
        let mut d = Decoder::new("anthropic");
        assert_eq!(
            d.feed(&SseEvent { event: "message_delta".into(), data: String::new() }),
            vec![protocol("malformed message_delta event: it has no data")]
        );
        let mut d = Decoder::new("anthropic");
        assert!(d.feed(&SseEvent { event: "ping".into(), data: String::new() }).is_empty());
    }

    #[test]
    fn blocks_out_of_order_are_protocol_errors() {
        let text = json!({"type": "text", "text": ""});
        assert_eq!(
            decode(&[start(1, 0, 0), delta(0, json!({"type": "text_delta", "text": "x"}))]),
            vec![protocol("content_block_delta for block 0, which is not open")]
        );
        assert_eq!(
            decode(&[start(1, 0, 0), block_start(0, text.clone()), block_start(1, text.clone())]),
            vec![
                StreamEvent::TextStart,
                protocol("content block 1 started while text block 0 was open")
            ]
        );
        assert_eq!(
            decode(&[
                start(1, 0, 0),
                block_start(0, text.clone()),
                delta(0, json!({"type": "input_json_delta", "partial_json": "{"}))
            ]),
            vec![StreamEvent::TextStart, protocol("unexpected input_json_delta in text block 0")]
        );
        assert_eq!(
            decode(&[start(1, 0, 0), block_start(0, text.clone()), stop()]),
            vec![
                StreamEvent::TextStart,
                protocol("message_stop arrived while text block 0 was open")
            ]
        );
        assert_eq!(
            decode(&[start(1, 0, 0), block_stop(0)]),
            vec![protocol("content_block_stop for block 0, which is not open")]
        );
    }

    #[test]
    fn a_stream_cut_inside_a_block_is_truncated() {
        assert_eq!(
            decode(&[
                start(1, 0, 0),
                block_start(0, json!({"type": "tool_use", "id": "t", "name": "f", "input": {}})),
                delta(0, json!({"type": "input_json_delta", "partial_json": "{\"a\""})),
            ]),
            vec![
                StreamEvent::ToolCallStart { index: 0, id: "t".into(), name: "f".into() },
                StreamEvent::ToolCallDelta { index: 0, args_delta: "{\"a\"".into() },
                protocol("truncated stream: it ended inside tool_use block 0, before message_stop"),
            ]
        );
    }

    #[test]
    fn a_tool_input_given_whole_at_block_start_is_used() {
        let events = decode(&[
            start(1, 0, 0),
            block_start(0, json!({"type": "tool_use", "id": "t", "name": "f", "input": {"a": 1}})),
            block_stop(0),
            stop(),
        ]);
        assert_eq!(
            events[1],
            StreamEvent::ToolCallEnd {
                index: 0,
                id: "t".into(),
                name: "f".into(),
                input: json!({"a": 1}),
                input_error: None
            }
        );
        // No message_delta: the stop reason follows from the calls.
        assert_eq!(events[3], StreamEvent::Done { stop_reason: StopReason::ToolUse });
    }

    #[test]
    fn urls_and_headers() {
        let settings = |base: &str, key: Option<&str>| ProviderSettings {
            key: "claude".into(),
            kind: ProviderKind::Anthropic,
            base_url: base.into(),
            api_key: key.map(crate::llm::ApiKey::new),
            family: crate::llm::Family::Generic,
            transport: crate::llm::http::Transport::default(),
        };
        for base in [
            "https://api.anthropic.com",
            "https://api.anthropic.com/",
            "https://api.anthropic.com/v1/",
        ] {
            let p = AnthropicProvider::new(settings(base, None));
            assert_eq!(p.url("/v1/messages"), "https://api.anthropic.com/v1/messages");
        }
        let p = AnthropicProvider::new(settings("http://h", Some("sk-ant-1")));
        assert_eq!(
            p.headers(),
            vec![
                ("anthropic-version", "2023-06-01".to_owned()),
                ("x-api-key", "sk-ant-1".to_owned())
            ]
        );
        assert!(!format!("{p:?}").contains("sk-ant-1"));
        assert_eq!((p.key(), p.kind()), ("claude", ProviderKind::Anthropic));
    }
}
