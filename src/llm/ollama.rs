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
    ChatRequest, ContentBlock, Effort, Message, StopReason, Thinking, ToolChoice, Usage,
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
                let text = join_text(content);
                if !text.is_empty() || results == 0 {
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
            Err(e) => (Value::String(raw.clone()), Some(e)),
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
mod tests {
    use super::*;
    use crate::llm::event::MessageBuilder;
    use crate::llm::types::{AssistantMessage, ToolDefinition};

    fn request(messages: Vec<Message>) -> ChatRequest {
        ChatRequest { model: "qwen3:8b".into(), messages, ..ChatRequest::default() }
    }

    fn tool(name: &str) -> ToolDefinition {
        ToolDefinition {
            name: name.into(),
            description: format!("{name} tool"),
            input_schema: json!({"type": "object", "properties": {"symbol": {"type": "string"}}}),
        }
    }

    fn decode(lines: &[&str]) -> Vec<StreamEvent> {
        let mut d = Decoder::with_id_suffix("ollama", "t");
        let mut out: Vec<StreamEvent> = lines.iter().flat_map(|l| d.feed(l)).collect();
        out.extend(d.finish());
        out
    }

    fn text(t: &str) -> StreamEvent {
        StreamEvent::TextDelta { text: t.into() }
    }

    fn reasoning(t: &str) -> StreamEvent {
        StreamEvent::ReasoningDelta { text: t.into() }
    }

    fn reasoning_end() -> StreamEvent {
        StreamEvent::ReasoningEnd { signature: None, redacted: None }
    }

    fn usage(input: u64, output: u64) -> StreamEvent {
        StreamEvent::Usage(Usage { input_tokens: input, output_tokens: output, ..Usage::default() })
    }

    fn done(stop_reason: StopReason) -> StreamEvent {
        StreamEvent::Done { stop_reason }
    }

    fn call(index: usize, id: &str, name: &str, args: &str, input: Value) -> [StreamEvent; 3] {
        [
            StreamEvent::ToolCallStart { index, id: id.into(), name: name.into() },
            StreamEvent::ToolCallDelta { index, args_delta: args.into() },
            StreamEvent::ToolCallEnd {
                index,
                id: id.into(),
                name: name.into(),
                input,
                input_error: None,
            },
        ]
    }

    const DONE: &str = r#"{"model":"m","created_at":"t","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":5,"prompt_eval_count":12,"prompt_eval_duration":1,"eval_count":7,"eval_duration":1}"#;

    #[test]
    fn request_carries_model_stream_system_prompt_and_user_text() {
        let body = build_request(&request(vec![
            Message::system("Be brief."),
            Message::user("gold?"),
            Message::system("Use tools."),
            Message::User {
                content: vec![ContentBlock::text("and "), ContentBlock::text("silver?")],
            },
        ]));
        assert_eq!(
            body,
            json!({
                "model": "qwen3:8b",
                "stream": true,
                "messages": [
                    {"role": "system", "content": "Be brief.\n\nUse tools."},
                    {"role": "user", "content": "gold?"},
                    {"role": "user", "content": "and silver?"},
                ],
            })
        );
    }

    #[test]
    fn tools_follow_the_tool_choice() {
        let mut r = request(vec![Message::user("hi")]);
        r.tools = vec![tool("get_price"), tool("get_news")];
        let body = build_request(&r);
        assert_eq!(
            body["tools"][0],
            json!({"type": "function", "function": {
                "name": "get_price",
                "description": "get_price tool",
                "parameters": {"type": "object", "properties": {"symbol": {"type": "string"}}},
            }})
        );
        assert_eq!(body["tools"].as_array().unwrap().len(), 2);
        r.tool_choice = ToolChoice::Required;
        assert_eq!(build_request(&r)["tools"].as_array().unwrap().len(), 2);
        r.tool_choice = ToolChoice::Tool("get_news".into());
        let body = build_request(&r);
        assert_eq!(body["tools"].as_array().unwrap().len(), 1);
        assert_eq!(body["tools"][0]["function"]["name"], "get_news");
        r.tool_choice = ToolChoice::None;
        assert!(build_request(&r).get("tools").is_none());
    }

    #[test]
    fn options_and_thinking_map_to_ollama_fields() {
        let mut r = request(vec![Message::user("hi")]);
        let body = build_request(&r);
        for absent in ["options", "think", "tools"] {
            assert!(body.get(absent).is_none(), "{absent} in {body}");
        }
        r.temperature = Some(0.2);
        r.max_tokens = Some(512);
        r.thinking = Some(Thinking::Disabled);
        let body = build_request(&r);
        assert_eq!(body["options"], json!({"temperature": 0.2, "num_predict": 512}));
        assert_eq!(body["think"], false);
        r.thinking = Some(Thinking::Enabled { effort: Effort::High, budget_tokens: Some(100) });
        assert_eq!(build_request(&r)["think"], true);
        r.model = "gpt-oss:20b".into();
        assert_eq!(build_request(&r)["think"], "high");
        for (effort, level) in [(Effort::Low, "low"), (Effort::Medium, "medium")] {
            r.thinking = Some(Thinking::Enabled { effort, budget_tokens: None });
            assert_eq!(build_request(&r)["think"], level);
        }
        r.thinking = Some(Thinking::Disabled);
        assert_eq!(build_request(&r)["think"], false);
    }

    /// An Anthropic turn (signed reasoning, text, two calls, one with unparseable arguments kept
    /// as a string) answered Anthropic-style (results in a user message), then an OpenAI turn
    /// answered with tool messages.
    fn foreign_history() -> Vec<Message> {
        vec![
            Message::system("sys"),
            Message::user("price of gold and silver?"),
            Message::Assistant(AssistantMessage {
                content: vec![
                    ContentBlock::Reasoning {
                        text: "need two prices".into(),
                        signature: Some("sig-abc".into()),
                        redacted: None,
                    },
                    ContentBlock::Reasoning {
                        text: String::new(),
                        signature: None,
                        redacted: Some("opaque".into()),
                    },
                    ContentBlock::text("Checking."),
                    ContentBlock::ToolUse {
                        id: "toolu_1".into(),
                        name: "get_price".into(),
                        input: json!({"symbol": "XAUUSD"}),
                        input_error: None,
                    },
                    ContentBlock::ToolUse {
                        id: "toolu_2".into(),
                        name: "get_price".into(),
                        input: Value::String("{\"symbol\": XAG".into()),
                        input_error: Some("not valid JSON".into()),
                    },
                ],
                model: "claude-sonnet-4-5".into(),
                provider: "anthropic".into(),
                stop_reason: StopReason::ToolUse,
                usage: Usage::default(),
            }),
            Message::User {
                content: vec![
                    ContentBlock::ToolResult {
                        tool_use_id: "toolu_1".into(),
                        content: "{\"price\":2650}".into(),
                        is_error: false,
                    },
                    ContentBlock::ToolResult {
                        tool_use_id: "toolu_2".into(),
                        content: "the arguments are not valid JSON".into(),
                        is_error: true,
                    },
                ],
            },
            Message::Assistant(AssistantMessage {
                content: vec![
                    ContentBlock::Reasoning {
                        text: "retry silver".into(),
                        signature: None,
                        redacted: None,
                    },
                    ContentBlock::ToolUse {
                        id: "call_abc".into(),
                        name: "get_news".into(),
                        input: Value::String("{\"q\":\"silver\"}<|call|>".into()),
                        input_error: None,
                    },
                    ContentBlock::ToolUse {
                        id: "call_def".into(),
                        name: "get_quote".into(),
                        input: Value::Null,
                        input_error: None,
                    },
                ],
                model: "deepseek-reasoner".into(),
                provider: "deepseek".into(),
                stop_reason: StopReason::ToolUse,
                usage: Usage::default(),
            }),
            Message::tool_result("call_abc", "silver up", false),
            Message::tool_result("call_def", "{}", false),
            Message::tool_result("unknown", "orphan", false),
            Message::user("thanks"),
        ]
    }

    #[test]
    fn history_from_other_providers_replays_without_reasoning() {
        let body = build_request(&request(foreign_history()));
        assert_eq!(
            body["messages"],
            json!([
                {"role": "system", "content": "sys"},
                {"role": "user", "content": "price of gold and silver?"},
                {"role": "assistant", "content": "Checking.", "tool_calls": [
                    {"function": {"name": "get_price", "arguments": {"symbol": "XAUUSD"}}},
                    {"function": {"name": "get_price", "arguments": {"_invalid_arguments": "{\"symbol\": XAG"}}},
                ]},
                {"role": "tool", "content": "{\"price\":2650}", "tool_name": "get_price"},
                {"role": "tool", "content": "Error: the arguments are not valid JSON", "tool_name": "get_price"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"function": {"name": "get_news", "arguments": {"q": "silver"}}},
                    {"function": {"name": "get_quote", "arguments": {}}},
                ]},
                {"role": "tool", "content": "silver up", "tool_name": "get_news"},
                {"role": "tool", "content": "{}", "tool_name": "get_quote"},
                {"role": "tool", "content": "orphan"},
                {"role": "user", "content": "thanks"},
            ])
        );
        assert!(!body.to_string().contains("sig-abc"));
        assert!(!body.to_string().contains("need two prices"));
    }

    #[test]
    fn a_reasoning_only_assistant_turn_is_skipped_and_an_empty_user_turn_kept() {
        let body = build_request(&request(vec![
            Message::User { content: vec![] },
            Message::Assistant(AssistantMessage {
                content: vec![ContentBlock::Reasoning {
                    text: "hmm".into(),
                    signature: None,
                    redacted: None,
                }],
                ..AssistantMessage::default()
            }),
        ]));
        assert_eq!(body["messages"], json!([{"role": "user", "content": ""}]));
    }

    #[test]
    fn text_lines_become_one_bracketed_block_then_usage_and_done() {
        let events = decode(&[
            r#"{"model":"m","created_at":"t","message":{"role":"assistant","content":"Gold "},"done":false}"#,
            r#"{"model":"m","created_at":"t","message":{"role":"assistant","content":"is up."},"done":false}"#,
            DONE,
        ]);
        assert_eq!(
            events,
            [
                StreamEvent::TextStart,
                text("Gold "),
                text("is up."),
                StreamEvent::TextEnd,
                usage(12, 7),
                done(StopReason::EndTurn),
            ]
        );
    }

    #[test]
    fn thinking_then_content_closes_the_reasoning_block_and_back() {
        let events = decode(&[
            r#"{"message":{"role":"assistant","content":"","thinking":"Let me"},"done":false}"#,
            r#"{"message":{"role":"assistant","content":"","thinking":" think"},"done":false}"#,
            r#"{"message":{"role":"assistant","content":"Answer"},"done":false}"#,
            r#"{"message":{"role":"assistant","content":"","thinking":"more"},"done":false}"#,
            r#"{"message":{"role":"assistant","thinking":"a","content":"b"},"done":false}"#,
            DONE,
        ]);
        assert_eq!(
            events,
            [
                StreamEvent::ReasoningStart,
                reasoning("Let me"),
                reasoning(" think"),
                reasoning_end(),
                StreamEvent::TextStart,
                text("Answer"),
                StreamEvent::TextEnd,
                StreamEvent::ReasoningStart,
                reasoning("more"),
                reasoning("a"),
                reasoning_end(),
                StreamEvent::TextStart,
                text("b"),
                StreamEvent::TextEnd,
                usage(12, 7),
                done(StopReason::EndTurn),
            ]
        );
    }

    #[test]
    fn whole_tool_calls_get_synthesized_unique_ids_and_stop_as_tool_use() {
        let events = decode(&[
            r#"{"message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"get_price","arguments":{"symbol":"XAUUSD"}}},{"function":{"name":"get_news","arguments":{}}}]},"done":false}"#,
            DONE,
        ]);
        let mut expected = Vec::new();
        expected.extend(call(
            0,
            "call_0_t",
            "get_price",
            r#"{"symbol":"XAUUSD"}"#,
            json!({"symbol": "XAUUSD"}),
        ));
        expected.extend(call(1, "call_1_t", "get_news", "{}", json!({})));
        expected.extend([usage(12, 7), done(StopReason::ToolUse)]);
        assert_eq!(events, expected);
        let a = Decoder::new("o");
        let b = Decoder::new("o");
        assert_ne!(a.id_suffix, b.id_suffix, "ids differ between messages");
    }

    #[test]
    fn given_ids_are_kept_unless_missing_empty_or_repeated() {
        let events = decode(&[
            r#"{"message":{"role":"assistant","content":"","tool_calls":[{"id":"call_x","function":{"index":0,"name":"a","arguments":{}}},{"id":"call_x","function":{"index":1,"name":"b","arguments":{}}},{"id":"","function":{"name":"c","arguments":{}}},{"id":7,"function":{"name":"d"}}]},"done":false}"#,
            DONE,
        ]);
        let ids: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::ToolCallStart { id, .. } => Some(id.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(ids, ["call_x", "call_1_t", "call_2_t", "7"]);
    }

    #[test]
    fn content_and_tool_calls_share_a_line_or_interleave() {
        let events = decode(&[
            r#"{"message":{"role":"assistant","content":"Checking.","tool_calls":[{"function":{"name":"a","arguments":{"x":1}}}]},"done":false}"#,
            r#"{"message":{"role":"assistant","content":" Then"},"done":false}"#,
            r#"{"message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"b","arguments":{"y":2}}}]},"done":false}"#,
            r#"{"message":{"role":"assistant","content":"done."},"done":true,"done_reason":"stop","prompt_eval_count":3,"eval_count":4}"#,
        ]);
        let mut expected = vec![StreamEvent::TextStart, text("Checking."), StreamEvent::TextEnd];
        expected.extend(call(0, "call_0_t", "a", r#"{"x":1}"#, json!({"x": 1})));
        expected.extend([StreamEvent::TextStart, text(" Then"), StreamEvent::TextEnd]);
        expected.extend(call(1, "call_1_t", "b", r#"{"y":2}"#, json!({"y": 2})));
        expected.extend([
            StreamEvent::TextStart,
            text("done."),
            StreamEvent::TextEnd,
            usage(3, 4),
            done(StopReason::ToolUse),
        ]);
        assert_eq!(events, expected);
    }

    #[test]
    fn string_arguments_go_through_the_repair_policy() {
        let events = decode(&[
            r#"{"message":{"content":"","tool_calls":[{"function":{"name":"a","arguments":"{\"x\":1}<|call|>"}},{"function":{"name":"b","arguments":"{\"x\":?}"}},{"function":{"name":"c","arguments":[1]}}]},"done":false}"#,
            DONE,
        ]);
        let ends: Vec<(&Value, Option<&String>)> = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::ToolCallEnd { input, input_error, .. } => {
                    Some((input, input_error.as_ref()))
                }
                _ => None,
            })
            .collect();
        assert_eq!(ends.len(), 3, "no call dropped");
        assert_eq!(ends[0], (&json!({"x": 1}), None));
        assert_eq!(ends[1].0, &json!("{\"x\":?}"));
        assert!(ends[1].1.unwrap().contains("not valid JSON"));
        assert_eq!(ends[2].0, &json!("[1]"));
        assert!(ends[2].1.unwrap().contains("an array"));
        assert_eq!(
            events[1],
            StreamEvent::ToolCallDelta { index: 0, args_delta: "{\"x\":1}<|call|>".into() }
        );
    }

    #[test]
    fn done_reasons_map_to_stop_reasons() {
        let length =
            r#"{"message":{"content":"cut"},"done":true,"done_reason":"length","eval_count":9}"#;
        assert_eq!(decode(&[length]).last(), Some(&done(StopReason::MaxTokens)));
        assert_eq!(decode(&[length])[3], usage(0, 9));
        let no_reason = r#"{"done":true}"#;
        assert_eq!(decode(&[no_reason]), [usage(0, 0), done(StopReason::EndTurn)]);
    }

    #[test]
    fn an_error_line_ends_the_stream_with_an_api_error() {
        let events = decode(&[
            r#"{"message":{"content":"Hi"},"done":false}"#,
            r#"{"error":"an error was encountered while running the model: unexpected EOF"}"#,
            DONE,
        ]);
        assert_eq!(
            events,
            [
                StreamEvent::TextStart,
                text("Hi"),
                StreamEvent::Error(LlmError::Api {
                    provider: "ollama".into(),
                    error_type: "error".into(),
                    message: "an error was encountered while running the model: unexpected EOF"
                        .into(),
                }),
            ]
        );
    }

    #[test]
    fn malformed_lines_and_truncation_are_protocol_errors() {
        for bad in
            [r#"{"message": {"content": "#, "[1]", "[]", "null", r#"{"message":{"content":5}}"#]
        {
            let events = decode(&[bad, DONE]);
            assert_eq!(events.len(), 1, "{bad}: {events:?}");
            let StreamEvent::Error(LlmError::Protocol { message, .. }) = &events[0] else {
                panic!("{events:?}")
            };
            assert!(message.starts_with("malformed NDJSON line"), "{message}");
        }
        let events = decode(&[r#"{"message":{"content":"Hi"},"done":false}"#]);
        let Some(StreamEvent::Error(LlmError::Protocol { message, .. })) = events.last() else {
            panic!("{events:?}")
        };
        assert!(message.contains("truncated"), "{message}");
        assert_eq!(events.len(), 3);
    }

    #[test]
    fn lines_after_done_are_ignored() {
        let events = decode(&[DONE, r#"{"message":{"content":"late"},"done":false}"#]);
        assert_eq!(events, [usage(12, 7), done(StopReason::EndTurn)]);
    }

    #[test]
    fn the_message_builder_rebuilds_the_message() {
        let mut b = MessageBuilder::new("qwen3:8b", "ollama");
        for e in decode(&[
            r#"{"message":{"content":"","thinking":"hmm"},"done":false}"#,
            r#"{"message":{"content":"Gold"},"done":false}"#,
            r#"{"message":{"content":"","tool_calls":[{"function":{"name":"get_price","arguments":{"symbol":"XAUUSD"}}}]},"done":false}"#,
            DONE,
        ]) {
            b.push(&e);
        }
        let m = b.finish().unwrap();
        assert_eq!(
            m,
            AssistantMessage {
                content: vec![
                    ContentBlock::Reasoning { text: "hmm".into(), signature: None, redacted: None },
                    ContentBlock::text("Gold"),
                    ContentBlock::ToolUse {
                        id: "call_0_t".into(),
                        name: "get_price".into(),
                        input: json!({"symbol": "XAUUSD"}),
                        input_error: None,
                    },
                ],
                model: "qwen3:8b".into(),
                provider: "ollama".into(),
                stop_reason: StopReason::ToolUse,
                usage: Usage { input_tokens: 12, output_tokens: 7, ..Usage::default() },
            }
        );
    }
}
