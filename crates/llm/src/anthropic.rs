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
use super::types::{
    ChatRequest, ContentBlock, ImageSource, Message, StopReason, ToolChoice, Usage,
};

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
        ContentBlock::Image { media_type, source } => Some(match source {
            ImageSource::Base64 { data } => json!({"type": "image", "source": {
                "type": "base64", "media_type": media_type, "data": data,
            }}),
            ImageSource::Url { url } => {
                json!({"type": "image", "source": {"type": "url", "url": url}})
            }
            ImageSource::Upload { .. } => {
                json!({"type": "text", "text": ContentBlock::image_note(source)})
            }
        }),
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
        ContentBlock::ToolResult { .. } | ContentBlock::Image { .. } => None,
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
                        Err(e) => (Value::String(args), Some(e.to_string())),
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
mod tests;
