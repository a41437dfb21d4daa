//! The Ollama provider: `POST {base_url}/api/chat` with `stream: true`, answered as NDJSON.
//!
//! Request building ([`build_request`]) and stream decoding ([`Decoder`]) are pure and tested on
//! their own; [`OllamaProvider`] joins them over the shared [`Transport`](super::http::Transport)
//! with no task or channel in between, so every upstream line becomes its events in the
//! consumer's task.
//!
//! Dialect (shared notes, "Ollama `/api/chat`"):
//! * reasoning streams in `message.thinking`, the answer in `message.content`;
//! * tool calls arrive whole in one line, arguments as a JSON *object*, usually without an id
//!   (ids are synthesized: `call_<n>_<random>`); since Ollama 0.8 content and tool calls may share
//!   a line or interleave;
//! * the last line has `done: true`, `done_reason` and the token counts;
//! * an `{"error": "..."}` line may end the stream.
//!
//! Ollama's OpenAI-compatible `/v1` is served by the OpenAI provider, not this one.

use std::collections::HashMap;

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::error::LlmError;
use super::event::StreamEvent;
use super::http;
use super::provider::{Provider, ProviderKind, ProviderSettings, WireDecoder, drive};
use super::repair;
use super::types::{
    ChatRequest, ContentBlock, Effort, ImageSource, Message, StopReason, Thinking, ToolChoice,
    Usage,
};

/// An Ollama server spoken to over its native `/api/chat`.
#[derive(Debug, Clone)]
pub struct OllamaProvider {
    settings: ProviderSettings,
}

impl OllamaProvider {
    /// A provider over these settings (`base_url` is the host root, e.g.
    /// `http://127.0.0.1:11434`).
    pub fn new(settings: ProviderSettings) -> Self {
        Self { settings }
    }
}

impl Provider for OllamaProvider {
    fn key(&self) -> &str {
        &self.settings.key
    }

    fn kind(&self) -> ProviderKind {
        ProviderKind::Ollama
    }

    fn stream(&self, request: ChatRequest) -> BoxStream<'static, StreamEvent> {
        // `Authorization: Bearer` when a key is configured (Ollama behind a proxy, Ollama cloud).
        let s = &self.settings;
        let call = s.call(s.url("api/chat"), s.bearer(), build_request(&request), request.trace_id);
        drive(call, Decoder::new(&self.settings.key))
    }

    /// `POST /api/embed` (`{model, input: [...]}` → `{embeddings}`).
    fn embed(
        &self,
        model: &str,
        inputs: Vec<String>,
    ) -> BoxFuture<'static, Result<Vec<Vec<f32>>, LlmError>> {
        let n = inputs.len();
        let body = serde_json::json!({"model": model, "input": inputs});
        super::provider::embed_call(&self.settings, "api/embed", body, n)
    }

    fn health_check(&self) -> BoxFuture<'_, Result<(), LlmError>> {
        Box::pin(async move {
            let tags = self
                .settings
                .transport
                .get_json(
                    &self.settings.key,
                    &self.settings.url("api/tags"),
                    &self.settings.bearer(),
                )
                .await?;
            if tags["models"].is_array() {
                Ok(())
            } else {
                Err(LlmError::Protocol {
                    provider: self.settings.key.clone(),
                    message: "GET /api/tags answered without a `models` list".into(),
                })
            }
        })
    }
}

/// The `/api/chat` body of a request.
///
/// * All system messages become one leading `system` message.
/// * User text blocks are joined; tool results (in `tool` or Anthropic-style `user` messages)
///   become `{role: "tool", content, tool_name}` messages, the name found from the earlier tool
///   call with that id (failed results are prefixed `Error: `, Ollama has no error flag).
/// * Assistant messages from any provider replay as `content` plus
///   `tool_calls: [{function: {name, arguments: <object>}}]`; reasoning is never replayed.
///   Arguments that were kept as a string (unparseable) are repaired when possible, else sent as
///   `{"_invalid_arguments": <the text>}` so the body stays valid.
/// * Ollama has no `tool_choice`: `none` sends no tools, a named tool sends only that tool,
///   `required` sends them all (the model decides).
/// * `options.temperature`, `options.num_predict` (max tokens); `think`: `false`, `true`, or the
///   effort (`low`/`medium`/`high`) for `gpt-oss` models; omitted when not set.
pub fn build_request(request: &ChatRequest) -> Value {
    let mut messages = Vec::new();
    if let Some(system) = request.system_prompt() {
        messages.push(json!({"role": "system", "content": system}));
    }
    let mut tool_names: HashMap<&str, &str> = HashMap::new();
    for message in &request.messages {
        match message {
            Message::System { .. } => {}
            Message::User { content } => {
                let results = push_tool_results(content, &tool_names, &mut messages);
                let (text, images) = text_and_images(content);
                if !images.is_empty() {
                    messages.push(json!({"role": "user", "content": text, "images": images}));
                } else if !text.is_empty() || results == 0 {
                    messages.push(json!({"role": "user", "content": text}));
                }
            }
            Message::Tool { content } => {
                push_tool_results(content, &tool_names, &mut messages);
                let text = join_text(content);
                if !text.is_empty() {
                    messages.push(json!({"role": "user", "content": text}));
                }
            }
            Message::Assistant(assistant) => {
                let mut calls = Vec::new();
                for block in &assistant.content {
                    if let ContentBlock::ToolUse { id, name, input, .. } = block {
                        tool_names.insert(id, name);
                        let arguments = replay_arguments(input);
                        calls.push(json!({"function": {"name": name, "arguments": arguments}}));
                    }
                }
                let text = join_text(&assistant.content);
                if text.is_empty() && calls.is_empty() {
                    continue;
                }
                let mut m = json!({"role": "assistant", "content": text});
                if !calls.is_empty() {
                    m["tool_calls"] = Value::Array(calls);
                }
                messages.push(m);
            }
        }
    }

    let mut body = json!({"model": request.model, "messages": messages, "stream": true});
    let tools: Vec<Value> = request
        .tools
        .iter()
        .filter(|t| match &request.tool_choice {
            ToolChoice::None => false,
            ToolChoice::Tool(name) => &t.name == name,
            ToolChoice::Auto | ToolChoice::Required => true,
        })
        .map(|t| {
            json!({"type": "function", "function": {
                "name": t.name, "description": t.description, "parameters": t.input_schema,
            }})
        })
        .collect();
    if !tools.is_empty() {
        body["tools"] = Value::Array(tools);
    }
    let mut options = Map::new();
    if let Some(t) = request.temperature {
        options.insert("temperature".into(), number_f32(t));
    }
    if let Some(n) = request.max_tokens {
        options.insert("num_predict".into(), n.into());
    }
    if !options.is_empty() {
        body["options"] = Value::Object(options);
    }
    if let Some(thinking) = &request.thinking {
        body["think"] = think(&request.model, thinking);
    }
    body
}

/// `think`: a boolean, or the effort level for gpt-oss models (which only take levels).
fn think(model: &str, thinking: &Thinking) -> Value {
    match thinking {
        Thinking::Disabled => Value::Bool(false),
        Thinking::Enabled { effort, .. } if model.to_ascii_lowercase().starts_with("gpt-oss") => {
            Value::from(match effort {
                Effort::Low => "low",
                Effort::Medium => "medium",
                Effort::High => "high",
            })
        }
        Thinking::Enabled { .. } => Value::Bool(true),
    }
}

/// An `f32` as the decimal it was written as (`0.2`, not `0.20000000298023224`).
fn number_f32(x: f32) -> Value {
    x.to_string()
        .parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map_or(Value::Null, Value::Number)
}

fn join_text(content: &[ContentBlock]) -> String {
    content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// A user message's text and its images as Ollama takes them: base64 only, in the message's
/// `images`. An image it cannot take (a URL, an unloaded upload) becomes a note in the text.
fn text_and_images(content: &[ContentBlock]) -> (String, Vec<Value>) {
    let mut notes = Vec::new();
    let mut images = Vec::new();
    for block in content {
        match block {
            ContentBlock::Image { source: ImageSource::Base64 { data }, .. } => {
                images.push(Value::from(data.as_str()));
            }
            ContentBlock::Image { source, .. } => notes.push(ContentBlock::image_note(source)),
            _ => {}
        }
    }
    let text = join_text(content);
    if notes.is_empty() {
        return (text, images);
    }
    notes.push(text);
    (notes.join("\n"), images)
}

/// Pushes one `tool` message per result block; returns how many.
fn push_tool_results(
    content: &[ContentBlock],
    tool_names: &HashMap<&str, &str>,
    messages: &mut Vec<Value>,
) -> usize {
    let mut n = 0;
    for block in content {
        if let ContentBlock::ToolResult { tool_use_id, content, is_error } = block {
            let content = if *is_error { format!("Error: {content}") } else { content.clone() };
            let mut m = json!({"role": "tool", "content": content});
            if let Some(name) = tool_names.get(tool_use_id.as_str()) {
                m["tool_name"] = Value::from(*name);
            }
            messages.push(m);
            n += 1;
        }
    }
    n
}

/// A stored tool-call input as the object Ollama requires.
fn replay_arguments(input: &Value) -> Value {
    match input {
        Value::Object(_) => input.clone(),
        Value::Null => Value::Object(Map::new()),
        Value::String(raw) => {
            repair::parse_arguments(raw).unwrap_or_else(|_| json!({"_invalid_arguments": raw}))
        }
        other => json!({"_invalid_arguments": other.to_string()}),
    }
}

#[derive(Debug, Deserialize)]
struct WireLine {
    #[serde(default)]
    message: Option<WireMessage>,
    #[serde(default)]
    done: Option<bool>,
    #[serde(default)]
    done_reason: Option<String>,
    #[serde(default)]
    prompt_eval_count: Option<u64>,
    #[serde(default)]
    eval_count: Option<u64>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct WireMessage {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    thinking: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<WireCall>>,
}

#[derive(Debug, Deserialize)]
struct WireCall {
    /// Newer Ollama versions send one; classic ones none.
    #[serde(default)]
    id: Option<Value>,
    function: WireFunction,
}

#[derive(Debug, Deserialize)]
struct WireFunction {
    name: String,
    #[serde(default)]
    arguments: Value,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    Nothing,
    Reasoning,
    Text,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Streaming,
    Done,
    Failed,
}

/// The stream decoder: one NDJSON line in, its events out (a pure state machine).
#[derive(Debug)]
pub struct Decoder {
    provider: String,
    /// Random part of synthesized call ids (one per message).
    id_suffix: String,
    open: Open,
    /// Ids of the calls so far (their count is the next call's index).
    call_ids: Vec<String>,
    state: State,
}

impl Decoder {
    /// A decoder for one response of this provider key.
    pub fn new(provider: &str) -> Self {
        Self::with_id_suffix(provider, &format!("{:08x}", rand::random::<u32>()))
    }

    /// A decoder whose synthesized call ids are `call_<n>_<suffix>` (tests).
    pub fn with_id_suffix(provider: &str, suffix: &str) -> Self {
        Self {
            provider: provider.to_owned(),
            id_suffix: suffix.to_owned(),
            open: Open::Nothing,
            call_ids: Vec::new(),
            state: State::Streaming,
        }
    }

    /// True once the final line or an error was decoded (nothing more will be emitted).
    pub fn is_finished(&self) -> bool {
        self.state != State::Streaming
    }

    /// Decodes one NDJSON line.
    pub fn feed(&mut self, line: &str) -> Vec<StreamEvent> {
        let mut out = Vec::new();
        if self.is_finished() {
            return out;
        }
        let parsed = if line.trim_start().starts_with('{') {
            serde_json::from_str::<WireLine>(line).map_err(|e| e.to_string())
        } else {
            Err("not a JSON object".to_owned())
        };
        let line = match parsed {
            Ok(l) => l,
            Err(e) => {
                let message =
                    format!("malformed NDJSON line ({e}): {}", super::repair::preview(line));
                return self.fail(LlmError::Protocol { provider: self.provider.clone(), message });
            }
        };
        if let Some(error) = line.error.filter(|e| !e.is_null()) {
            let message = match &error {
                Value::String(s) => s.clone(),
                other => other["message"].as_str().map_or_else(|| other.to_string(), str::to_owned),
            };
            return self.fail(LlmError::Api {
                provider: self.provider.clone(),
                error_type: "error".into(),
                message,
            });
        }
        if let Some(message) = line.message {
            if let Some(thinking) = message.thinking.filter(|t| !t.is_empty()) {
                if self.open != Open::Reasoning {
                    self.close(&mut out);
                    out.push(StreamEvent::ReasoningStart);
                    self.open = Open::Reasoning;
                }
                out.push(StreamEvent::ReasoningDelta { text: thinking });
            }
            if let Some(content) = message.content.filter(|c| !c.is_empty()) {
                if self.open != Open::Text {
                    self.close(&mut out);
                    out.push(StreamEvent::TextStart);
                    self.open = Open::Text;
                }
                out.push(StreamEvent::TextDelta { text: content });
            }
            for call in message.tool_calls.into_iter().flatten() {
                self.close(&mut out);
                self.tool_call(call, &mut out);
            }
        }
        if line.done == Some(true) {
            self.close(&mut out);
            out.push(StreamEvent::Usage(Usage {
                input_tokens: line.prompt_eval_count.unwrap_or(0),
                output_tokens: line.eval_count.unwrap_or(0),
                ..Usage::default()
            }));
            let stop_reason = match line.done_reason.as_deref() {
                Some("length") => StopReason::MaxTokens,
                _ if !self.call_ids.is_empty() => StopReason::ToolUse,
                _ => StopReason::EndTurn,
            };
            out.push(StreamEvent::Done { stop_reason });
            self.state = State::Done;
        }
        out
    }

    /// The end of the body: a stream without its `done: true` line is truncated.
    pub fn finish(self) -> Vec<StreamEvent> {
        match self.state {
            State::Streaming => vec![StreamEvent::Error(LlmError::Protocol {
                provider: self.provider,
                message: "truncated: the stream ended before its final `done: true` line".into(),
            })],
            State::Done | State::Failed => Vec::new(),
        }
    }

    fn fail(&mut self, error: LlmError) -> Vec<StreamEvent> {
        self.state = State::Failed;
        vec![StreamEvent::Error(error)]
    }

    fn close(&mut self, out: &mut Vec<StreamEvent>) {
        match self.open {
            Open::Nothing => {}
            Open::Reasoning => {
                out.push(StreamEvent::ReasoningEnd { signature: None, redacted: None })
            }
            Open::Text => out.push(StreamEvent::TextEnd),
        }
        self.open = Open::Nothing;
    }

    /// A whole call: start, its arguments as one delta, end.
    fn tool_call(&mut self, call: WireCall, out: &mut Vec<StreamEvent>) {
        let index = self.call_ids.len();
        let given = match call.id {
            Some(Value::String(s)) => Some(s),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        let id = given
            .filter(|s| !s.is_empty() && s != "null" && !self.call_ids.contains(s))
            .unwrap_or_else(|| format!("call_{index}_{}", self.id_suffix));
        self.call_ids.push(id.clone());
        let name = call.function.name;
        let (raw, parsed) = match call.function.arguments {
            Value::Null => ("{}".to_owned(), Ok(Value::Object(Map::new()))),
            v @ Value::Object(_) => (v.to_string(), Ok(v)),
            Value::String(s) => {
                let parsed = repair::parse_arguments(&s);
                (s, parsed)
            }
            other => {
                let s = other.to_string();
                let parsed = repair::parse_arguments(&s);
                (s, parsed)
            }
        };
        out.push(StreamEvent::ToolCallStart { index, id: id.clone(), name: name.clone() });
        let (input, input_error) = match parsed {
            Ok(v) => (v, None),
            Err(e) => (Value::String(raw.clone()), Some(e.to_string())),
        };
        out.push(StreamEvent::ToolCallDelta { index, args_delta: raw });
        out.push(StreamEvent::ToolCallEnd { index, id, name, input, input_error });
    }
}

impl WireDecoder for Decoder {
    type Item = String;

    fn frames(
        provider: &str,
        bytes: http::ByteStream,
    ) -> BoxStream<'static, Result<String, LlmError>> {
        http::ndjson(provider, bytes).boxed()
    }

    fn text(item: &String) -> &str {
        item
    }

    fn decode(&mut self, item: &String) -> Vec<StreamEvent> {
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
