//! The OpenAI-compatible provider: `POST {base_url}/chat/completions` streamed as SSE, for OpenAI,
//! DeepSeek, Qwen (DashScope compatible mode), Doubao, SiliconFlow, vLLM, llama.cpp and Ollama's
//! `/v1`.
//!
//! Owns the request body ([`request_body`], a pure function of the [`ChatRequest`] and the
//! resolved [`Family`]: thinking controls and reasoning replay differ per family) and the stream
//! [`Decoder`] (a pure state machine from SSE data fields to [`StreamEvent`]s that handles the
//! dialect's quirks: tool-call fragments keyed by `index` or `id`, odd ids, a missing
//! `finish_reason`, reasoning before the role chunk, the usage chunk). [`OpenAiProvider`] runs
//! them over the [`Transport`](super::http::Transport) in the consumer's task: every upstream
//! delta becomes its events as it arrives, with no task or channel in between.
//!
//! Knows nothing of agents, tools beyond their definitions, or HTTP handlers.

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value, json};

use super::error::LlmError;
use super::event::StreamEvent;
use super::http::{self, SseEvent};
use super::provider::{Family, Provider, ProviderKind, ProviderSettings, WireDecoder, drive};
use super::repair;
use super::types::{
    AssistantMessage, ChatRequest, ContentBlock, Effort, Message, StopReason, Thinking, ToolChoice,
    Usage,
};

/// An OpenAI-compatible chat-completions provider.
#[derive(Debug)]
pub struct OpenAiProvider {
    settings: ProviderSettings,
    family: Family,
}

impl OpenAiProvider {
    /// A provider from its settings (a family left at `Auto` is resolved from the key and URL).
    pub fn new(settings: ProviderSettings) -> Self {
        let family = settings.family.resolve(&settings.key, &settings.base_url);
        Self { settings, family }
    }

    /// The dialect this provider speaks.
    pub fn family(&self) -> Family {
        self.family
    }
}

impl Provider for OpenAiProvider {
    fn key(&self) -> &str {
        &self.settings.key
    }

    fn kind(&self) -> ProviderKind {
        ProviderKind::Openai
    }

    fn stream(&self, request: ChatRequest) -> BoxStream<'static, StreamEvent> {
        let s = &self.settings;
        let body = request_body(&request, self.family);
        let call = s.call(s.url("chat/completions"), s.bearer(), body, request.trace_id);
        drive(call, Decoder::new(&self.settings.key))
    }

    fn health_check(&self) -> BoxFuture<'_, Result<(), LlmError>> {
        Box::pin(async move {
            let s = &self.settings;
            s.transport.get_json(&s.key, &s.url("models"), &s.bearer()).await.map(|_| ())
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Request

/// The JSON body of a streaming chat-completions call for this family.
///
/// System messages are joined into one leading system message; tool results (from `tool`
/// messages or Anthropic-style user messages) become one `role: "tool"` message each; assistant
/// tool calls carry their arguments as a JSON string (a string input, i.e. arguments that could
/// not be parsed, is sent verbatim). Reasoning is replayed only for DeepSeek, as
/// `reasoning_content` on assistant messages with tool calls (DeepSeek rejects the request
/// otherwise); every other family never gets reasoning back.
pub fn request_body(request: &ChatRequest, family: Family) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("messages".into(), Value::Array(messages(request, family)));
    body.insert("stream".into(), json!(true));
    body.insert("stream_options".into(), json!({"include_usage": true}));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                let parameters = if t.input_schema.is_object() {
                    t.input_schema.clone()
                } else {
                    json!({"type": "object", "properties": {}})
                };
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": parameters,
                }})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        let choice = match &request.tool_choice {
            ToolChoice::Auto => json!("auto"),
            ToolChoice::None => json!("none"),
            ToolChoice::Required => json!("required"),
            ToolChoice::Tool(name) => json!({"type": "function", "function": {"name": name}}),
        };
        body.insert("tool_choice".into(), choice);
    }
    if let Some(max) = request.max_tokens {
        // OpenAI's reasoning models reject `max_tokens`; everyone else knows only `max_tokens`.
        let key = if family == Family::Openai { "max_completion_tokens" } else { "max_tokens" };
        body.insert(key.into(), json!(max));
    }
    if let Some(t) = request.temperature {
        // Through the decimal text, so 0.7f32 is sent as 0.7 and not 0.699999988079071.
        let t: f64 = t.to_string().parse().unwrap_or(f64::from(t));
        body.insert("temperature".into(), json!(t));
    }
    if let Some(thinking) = request.thinking {
        thinking_fields(&mut body, thinking, family);
    }
    Value::Object(body)
}

fn effort(e: Effort) -> &'static str {
    match e {
        Effort::Low => "low",
        Effort::Medium => "medium",
        Effort::High => "high",
    }
}

fn thinking_fields(body: &mut Map<String, Value>, thinking: Thinking, family: Family) {
    match (family, thinking) {
        (Family::Deepseek | Family::Doubao, Thinking::Disabled) => {
            body.insert("thinking".into(), json!({"type": "disabled"}));
        }
        (Family::Deepseek | Family::Doubao, Thinking::Enabled { effort: e, .. }) => {
            body.insert("thinking".into(), json!({"type": "enabled"}));
            body.insert("reasoning_effort".into(), json!(effort(e)));
        }
        (Family::Qwen, Thinking::Disabled) => {
            body.insert("enable_thinking".into(), json!(false));
        }
        (Family::Qwen, Thinking::Enabled { budget_tokens, .. }) => {
            body.insert("enable_thinking".into(), json!(true));
            if let Some(b) = budget_tokens {
                body.insert("thinking_budget".into(), json!(b));
            }
        }
        (Family::Openai | Family::Generic | Family::Auto, Thinking::Enabled { effort: e, .. }) => {
            body.insert("reasoning_effort".into(), json!(effort(e)));
        }
        (Family::Openai | Family::Generic | Family::Auto, Thinking::Disabled) => {}
    }
}

fn messages(request: &ChatRequest, family: Family) -> Vec<Value> {
    let mut out = Vec::with_capacity(request.messages.len() + 1);
    if let Some(system) = request.system_prompt() {
        out.push(json!({"role": "system", "content": system}));
    }
    for m in &request.messages {
        match m {
            Message::System { .. } => {}
            Message::User { content } => push_user(&mut out, content, true),
            Message::Tool { content } => push_user(&mut out, content, false),
            Message::Assistant(a) => out.push(assistant(a, family)),
        }
    }
    out
}

/// Tool results first (they must follow the assistant's calls), then the text as a user message.
fn push_user(out: &mut Vec<Value>, content: &[ContentBlock], is_user: bool) {
    let mut texts = Vec::new();
    let mut results = 0;
    for block in content {
        match block {
            ContentBlock::ToolResult { tool_use_id, content, .. } => {
                results += 1;
                out.push(json!({"role": "tool", "tool_call_id": tool_use_id, "content": content}));
            }
            ContentBlock::Text { text } => texts.push(text.as_str()),
            // Neither belongs to a user turn; there is nothing to send them as.
            ContentBlock::Reasoning { .. } | ContentBlock::ToolUse { .. } => {}
        }
    }
    if !texts.is_empty() || (is_user && results == 0) {
        out.push(json!({"role": "user", "content": texts.join("\n")}));
    }
}

fn assistant(message: &AssistantMessage, family: Family) -> Value {
    let mut text = String::new();
    let mut reasoning = String::new();
    let mut calls = Vec::new();
    for block in &message.content {
        match block {
            ContentBlock::Text { text: t } => text.push_str(t),
            ContentBlock::Reasoning { text: t, .. } => reasoning.push_str(t),
            ContentBlock::ToolUse { id, name, input, .. } => calls.push(json!({
                "id": id, "type": "function",
                "function": {"name": name, "arguments": arguments_text(input)},
            })),
            ContentBlock::ToolResult { .. } => {}
        }
    }
    let mut m = Map::new();
    m.insert("role".into(), json!("assistant"));
    let content = if text.is_empty() && !calls.is_empty() { Value::Null } else { json!(text) };
    m.insert("content".into(), content);
    if !calls.is_empty() {
        m.insert("tool_calls".into(), Value::Array(calls));
        if family == Family::Deepseek {
            m.insert("reasoning_content".into(), json!(reasoning));
        }
    }
    Value::Object(m)
}

/// A tool input as the `arguments` string: a string verbatim (unparseable arguments replay as
/// they came), anything else as JSON text.
fn arguments_text(input: &Value) -> String {
    match input {
        Value::String(s) => s.clone(),
        Value::Null => "{}".to_owned(),
        other => other.to_string(),
    }
}

// ---------------------------------------------------------------------------------------------
// Stream

#[derive(Deserialize)]
struct WireChunk {
    #[serde(default)]
    choices: Option<Vec<WireChoice>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct WireChoice {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    delta: Option<WireDelta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireDelta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    reasoning_content: Option<String>,
    /// vLLM, OpenRouter and Ollama's `/v1` name it `reasoning`; other shapes are ignored.
    #[serde(default, deserialize_with = "lenient_text")]
    reasoning: Option<String>,
    #[serde(default, deserialize_with = "lenient_text")]
    refusal: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<WireToolCall>>,
}

#[derive(Deserialize)]
struct WireToolCall {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    id: Option<WireId>,
    #[serde(default)]
    function: Option<WireFunction>,
}

#[derive(Deserialize)]
struct WireFunction {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<WireArgs>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum WireId {
    Text(String),
    Number(serde_json::Number),
    Other(serde::de::IgnoredAny),
}

impl WireId {
    /// The id, if it is one: numbers become text; `""` and the string `"null"` are no id.
    fn into_id(self) -> Option<String> {
        match self {
            Self::Text(s) => {
                let t = s.trim();
                (!t.is_empty() && t != "null").then(|| t.to_owned())
            }
            Self::Number(n) => Some(n.to_string()),
            Self::Other(_) => None,
        }
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum WireArgs {
    Text(String),
    /// Some servers send the arguments as an object.
    Json(Value),
}

#[derive(Deserialize, Default)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
    #[serde(default)]
    completion_tokens_details: Option<CompletionDetails>,
    /// DeepSeek's name for cached prompt tokens.
    #[serde(default)]
    prompt_cache_hit_tokens: Option<u64>,
}

#[derive(Deserialize, Default)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

#[derive(Deserialize, Default)]
struct CompletionDetails {
    #[serde(default)]
    reasoning_tokens: Option<u64>,
}

impl From<WireUsage> for Usage {
    fn from(u: WireUsage) -> Self {
        Usage {
            input_tokens: u.prompt_tokens.unwrap_or(0),
            output_tokens: u.completion_tokens.unwrap_or(0),
            reasoning_tokens: u
                .completion_tokens_details
                .and_then(|d| d.reasoning_tokens)
                .unwrap_or(0),
            cache_read_tokens: u
                .prompt_tokens_details
                .and_then(|d| d.cached_tokens)
                .or(u.prompt_cache_hit_tokens)
                .unwrap_or(0),
            cache_write_tokens: 0,
        }
    }
}

/// A string field that some servers fill with other shapes: anything but a string is absent.
fn lenient_text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Option::<Value>::deserialize(d)? {
        Some(Value::String(s)) => Some(s),
        _ => None,
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Block {
    None,
    Reasoning,
    Text,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Streaming,
    Done,
    Failed,
}

#[derive(Debug)]
struct Call {
    /// The `index` the server gave its fragments.
    wire_index: Option<u64>,
    /// The id the server gave (none yet: `id` is synthesized).
    wire_id: Option<String>,
    id: String,
    name: String,
    args: String,
    ended: bool,
}

/// Decodes one chat-completions stream into [`StreamEvent`]s, one SSE data field at a time.
///
/// Reasoning (`reasoning_content` or `reasoning`) and text deltas are bracketed into blocks.
/// Tool-call fragments are assembled per `index`, falling back to the `id` when the index is
/// missing; a new id at an index already taken is a new call (servers that put every call at
/// index 0), a re-sent id is the same call, numeric ids become text and `""`/`"null"` are no id
/// (one is synthesized). Argument fragments are passed on as received and parsed once, under
/// [`repair::parse_arguments`], when the choice finishes. `finish_reason` ends the blocks and
/// calls; `[DONE]` (or, when a `finish_reason` came, the end of the body) emits the usage and
/// `Done`. Without `finish_reason` (xAI) everything ends at `[DONE]`.
#[derive(Debug)]
pub struct Decoder {
    provider: String,
    block: Block,
    calls: Vec<Call>,
    finish_reason: Option<String>,
    refusal: bool,
    usage: Option<Usage>,
    state: State,
}

impl Decoder {
    /// A decoder for a stream of this provider (named in errors).
    pub fn new(provider: &str) -> Self {
        Self {
            provider: provider.to_owned(),
            block: Block::None,
            calls: Vec::new(),
            finish_reason: None,
            refusal: false,
            usage: None,
            state: State::Streaming,
        }
    }

    /// True once `Done` or an error was emitted: nothing more will come out.
    pub fn is_over(&self) -> bool {
        self.state != State::Streaming
    }

    /// Decodes one server-sent event (an `error` event is the provider's error).
    pub fn feed_sse(&mut self, event: &SseEvent) -> Vec<StreamEvent> {
        if event.event == "error" {
            if self.is_over() {
                return Vec::new();
            }
            let v = serde_json::from_str(&event.data).unwrap_or(Value::Null);
            let e = self.api_error(&v, &event.data);
            return self.fail(e);
        }
        self.feed(&event.data)
    }

    /// Decodes one SSE data field: a JSON chunk or `[DONE]`.
    pub fn feed(&mut self, data: &str) -> Vec<StreamEvent> {
        let mut out = Vec::new();
        let data = data.trim();
        if self.is_over() || data.is_empty() {
            return out;
        }
        if data == "[DONE]" {
            self.complete(&mut out);
            return out;
        }
        let chunk: WireChunk = match serde_json::from_str(data) {
            Ok(c) => c,
            Err(e) => {
                let message = format!("malformed chunk ({e}): {}", super::repair::preview(data));
                return self.fail(self.protocol(message));
            }
        };
        if let Some(error) = chunk.error.filter(|e| !e.is_null()) {
            let e = self.api_error(&json!({ "error": error }), data);
            return self.fail(e);
        }
        // Only the first choice: we never ask for more than one.
        for choice in chunk.choices.into_iter().flatten().filter(|c| c.index.unwrap_or(0) == 0) {
            if let Some(delta) = choice.delta {
                self.delta(delta, &mut out);
            }
            if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
                self.close_all(&mut out);
                self.finish_reason = Some(reason);
            }
        }
        if let Some(usage) = chunk.usage {
            self.usage = Some(usage.into());
        }
        out
    }

    /// Ends the stream with this error (a transport failure): the error, and nothing after.
    pub fn fail(&mut self, error: LlmError) -> Vec<StreamEvent> {
        if self.is_over() {
            return Vec::new();
        }
        self.state = State::Failed;
        vec![StreamEvent::Error(error)]
    }

    /// The body ended. Without `[DONE]` and without a `finish_reason` the stream was cut off:
    /// a protocol error.
    pub fn finish(mut self) -> Vec<StreamEvent> {
        let mut out = Vec::new();
        if self.is_over() {
            return out;
        }
        if self.finish_reason.is_some() {
            self.complete(&mut out);
            return out;
        }
        let e =
            self.protocol("truncated: the stream ended before its finish_reason and [DONE]".into());
        self.fail(e)
    }

    fn protocol(&self, message: String) -> LlmError {
        LlmError::Protocol { provider: self.provider.clone(), message }
    }

    /// An error the provider reported inside the stream (`{"error": {...}}` or `event: error`).
    fn api_error(&self, v: &Value, raw: &str) -> LlmError {
        let error_type = v["error"]["type"]
            .as_str()
            .map(str::to_owned)
            .or_else(|| match &v["error"]["code"] {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
            .unwrap_or_else(|| "error".to_owned());
        LlmError::Api {
            provider: self.provider.clone(),
            error_type,
            message: http::error_message(raw),
        }
    }

    fn delta(&mut self, delta: WireDelta, out: &mut Vec<StreamEvent>) {
        let reasoning = delta.reasoning_content.filter(|r| !r.is_empty()).or(delta.reasoning);
        if let Some(text) = reasoning {
            self.reasoning(text, out);
        }
        if let Some(text) = delta.content {
            self.text(text, out);
        }
        if let Some(text) = delta.refusal.filter(|r| !r.is_empty()) {
            self.refusal = true;
            self.text(text, out);
        }
        for fragment in delta.tool_calls.into_iter().flatten() {
            self.tool_fragment(fragment, out);
        }
    }

    fn reasoning(&mut self, text: String, out: &mut Vec<StreamEvent>) {
        if text.is_empty() {
            return;
        }
        if self.block != Block::Reasoning {
            self.close_block(out);
            out.push(StreamEvent::ReasoningStart);
            self.block = Block::Reasoning;
        }
        out.push(StreamEvent::ReasoningDelta { text });
    }

    fn text(&mut self, text: String, out: &mut Vec<StreamEvent>) {
        if text.is_empty() {
            return;
        }
        if self.block != Block::Text {
            self.close_block(out);
            out.push(StreamEvent::TextStart);
            self.block = Block::Text;
        }
        out.push(StreamEvent::TextDelta { text });
    }

    fn close_block(&mut self, out: &mut Vec<StreamEvent>) {
        match self.block {
            Block::Reasoning => {
                out.push(StreamEvent::ReasoningEnd { signature: None, redacted: None })
            }
            Block::Text => out.push(StreamEvent::TextEnd),
            Block::None => {}
        }
        self.block = Block::None;
    }

    /// Closes the open block and ends every open call, in order.
    fn close_all(&mut self, out: &mut Vec<StreamEvent>) {
        self.close_block(out);
        for (index, call) in self.calls.iter_mut().enumerate().filter(|(_, c)| !c.ended) {
            call.ended = true;
            let (input, input_error) = match repair::parse_arguments(&call.args) {
                Ok(v) => (v, None),
                Err(e) => (Value::String(call.args.clone()), Some(e)),
            };
            out.push(StreamEvent::ToolCallEnd {
                index,
                id: call.id.clone(),
                name: call.name.clone(),
                input,
                input_error,
            });
        }
    }

    fn complete(&mut self, out: &mut Vec<StreamEvent>) {
        self.close_all(out);
        if let Some(usage) = self.usage {
            out.push(StreamEvent::Usage(usage));
        }
        out.push(StreamEvent::Done { stop_reason: self.stop_reason() });
        self.state = State::Done;
    }

    fn stop_reason(&self) -> StopReason {
        match self.finish_reason.as_deref() {
            Some("length") => StopReason::MaxTokens,
            Some("content_filter") => StopReason::ContentFilter,
            Some("tool_calls" | "function_call") => StopReason::ToolUse,
            // Some servers say `stop` (or nothing, xAI) after tool calls.
            _ if !self.calls.is_empty() => StopReason::ToolUse,
            _ if self.refusal => StopReason::Refusal,
            _ => StopReason::EndTurn,
        }
    }

    /// Which open call a fragment continues, if any.
    fn find_call(&self, index: Option<u64>, id: Option<&str>, name: Option<&str>) -> Option<usize> {
        let last =
            |pred: &dyn Fn(&Call) -> bool| self.calls.iter().rposition(|c| !c.ended && pred(c));
        if let Some(id) = id {
            // The id re-sent (on every chunk, or twice): the same call.
            if let Some(p) = last(&|c| c.wire_id.as_deref() == Some(id)) {
                return Some(p);
            }
            // The id arriving after the call began without one. Otherwise a new id is a new
            // call, even at an index already taken (servers that put every call at index 0).
            return index
                .and_then(|i| last(&|c| c.wire_index == Some(i)))
                .filter(|p| self.calls[*p].wire_id.is_none());
        }
        let p = match index {
            Some(i) => last(&|c| c.wire_index == Some(i))?,
            None => last(&|_| true)?,
        };
        // Without ids, another tool's name at the same place is another call.
        let current = &self.calls[p].name;
        let other_name = name.is_some_and(|n| !current.is_empty() && current != n);
        (!other_name).then_some(p)
    }

    fn tool_fragment(&mut self, fragment: WireToolCall, out: &mut Vec<StreamEvent>) {
        let id = fragment.id.and_then(WireId::into_id);
        let (name, args) = match fragment.function {
            Some(f) => (
                f.name.filter(|n| !n.is_empty()),
                f.arguments.map(|a| match a {
                    WireArgs::Text(s) => s,
                    WireArgs::Json(Value::Null) => String::new(),
                    WireArgs::Json(v) => v.to_string(),
                }),
            ),
            None => (None, None),
        };
        let pos = match self.find_call(fragment.index, id.as_deref(), name.as_deref()) {
            Some(p) => p,
            None => {
                self.close_block(out);
                let call = Call {
                    wire_index: fragment.index,
                    wire_id: id.clone(),
                    id: id.clone().unwrap_or_else(synthesized_id),
                    name: name.clone().unwrap_or_default(),
                    args: String::new(),
                    ended: false,
                };
                out.push(StreamEvent::ToolCallStart {
                    index: self.calls.len(),
                    id: call.id.clone(),
                    name: call.name.clone(),
                });
                self.calls.push(call);
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[pos];
        if call.wire_id.is_none()
            && let Some(id) = id
        {
            call.id.clone_from(&id);
            call.wire_id = Some(id);
        }
        if call.name.is_empty()
            && let Some(name) = name
        {
            call.name = name;
        }
        if call.wire_index.is_none() {
            call.wire_index = fragment.index;
        }
        if let Some(args) = args.filter(|a| !a.is_empty()) {
            call.args.push_str(&args);
            out.push(StreamEvent::ToolCallDelta { index: pos, args_delta: args });
        }
    }
}

/// An id for a call the server sent without one.
fn synthesized_id() -> String {
    format!("call_{}", uuid::Uuid::now_v7().simple())
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
        self.feed_sse(item)
    }

    fn over(&self) -> bool {
        self.is_over()
    }

    fn end(self) -> Vec<StreamEvent> {
        self.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::event::MessageBuilder;
    use crate::llm::types::ToolDefinition;
    use StreamEvent as E;

    // -- request --------------------------------------------------------------------------

    fn request(messages: Vec<Message>) -> ChatRequest {
        ChatRequest { model: "m".into(), messages, ..ChatRequest::default() }
    }

    fn tool_use(id: &str, name: &str, input: Value) -> ContentBlock {
        ContentBlock::ToolUse { id: id.into(), name: name.into(), input, input_error: None }
    }

    fn reasoning(text: &str) -> ContentBlock {
        ContentBlock::Reasoning { text: text.into(), signature: None, redacted: None }
    }

    fn assistant_msg(provider: &str, content: Vec<ContentBlock>) -> Message {
        Message::Assistant(AssistantMessage {
            content,
            model: "x".into(),
            provider: provider.into(),
            ..AssistantMessage::default()
        })
    }

    #[test]
    fn a_plain_request_streams_with_usage_and_one_system_message() {
        let mut r = request(vec![
            Message::system("You build dashboards."),
            Message::user("gold price"),
            Message::system("Be brief."),
        ]);
        r.max_tokens = Some(512);
        r.temperature = Some(0.7);
        assert_eq!(
            request_body(&r, Family::Generic),
            json!({
                "model": "m",
                "messages": [
                    {"role": "system", "content": "You build dashboards.\n\nBe brief."},
                    {"role": "user", "content": "gold price"},
                ],
                "stream": true,
                "stream_options": {"include_usage": true},
                "max_tokens": 512,
                "temperature": 0.7,
            })
        );
        let openai = request_body(&r, Family::Openai);
        assert_eq!(openai["max_completion_tokens"], 512);
        assert!(openai.get("max_tokens").is_none());
        let bare = request_body(&request(vec![Message::user("hi")]), Family::Openai);
        for absent in ["tools", "tool_choice", "max_tokens", "temperature", "reasoning_effort"] {
            assert!(bare.get(absent).is_none(), "{absent}: {bare}");
        }
    }

    #[test]
    fn tools_and_every_tool_choice() {
        let mut r = request(vec![Message::user("hi")]);
        r.tools = vec![
            ToolDefinition {
                name: "execute".into(),
                description: "Runs code".into(),
                input_schema: json!({"type": "object", "properties": {"code": {"type": "string"}}}),
            },
            ToolDefinition {
                name: "ping".into(),
                description: "No arguments".into(),
                input_schema: Value::Null,
            },
        ];
        let body = request_body(&r, Family::Openai);
        assert_eq!(
            body["tools"],
            json!([
                {"type": "function", "function": {"name": "execute", "description": "Runs code",
                 "parameters": {"type": "object", "properties": {"code": {"type": "string"}}}}},
                {"type": "function", "function": {"name": "ping", "description": "No arguments",
                 "parameters": {"type": "object", "properties": {}}}},
            ])
        );
        let cases = [
            (ToolChoice::Auto, json!("auto")),
            (ToolChoice::None, json!("none")),
            (ToolChoice::Required, json!("required")),
            (
                ToolChoice::Tool("execute".into()),
                json!({"type": "function", "function": {"name": "execute"}}),
            ),
        ];
        for (choice, wire) in cases {
            r.tool_choice = choice;
            assert_eq!(request_body(&r, Family::Openai)["tool_choice"], wire);
        }
    }

    #[test]
    fn thinking_maps_per_family() {
        let enabled = |effort, budget_tokens| Some(Thinking::Enabled { effort, budget_tokens });
        let fields = ["reasoning_effort", "thinking", "enable_thinking", "thinking_budget"];
        let cases = [
            (Family::Openai, enabled(Effort::High, None), json!({"reasoning_effort": "high"})),
            (Family::Openai, Some(Thinking::Disabled), json!({})),
            (Family::Openai, None, json!({})),
            (
                Family::Deepseek,
                enabled(Effort::Low, None),
                json!({"thinking": {"type": "enabled"}, "reasoning_effort": "low"}),
            ),
            (Family::Deepseek, Some(Thinking::Disabled), json!({"thinking": {"type": "disabled"}})),
            (Family::Deepseek, None, json!({})),
            (
                Family::Doubao,
                enabled(Effort::Medium, Some(100)),
                json!({"thinking": {"type": "enabled"}, "reasoning_effort": "medium"}),
            ),
            (Family::Doubao, Some(Thinking::Disabled), json!({"thinking": {"type": "disabled"}})),
            (Family::Qwen, enabled(Effort::High, None), json!({"enable_thinking": true})),
            (
                Family::Qwen,
                enabled(Effort::High, Some(4096)),
                json!({"enable_thinking": true, "thinking_budget": 4096}),
            ),
            (Family::Qwen, Some(Thinking::Disabled), json!({"enable_thinking": false})),
            (Family::Generic, enabled(Effort::Medium, None), json!({"reasoning_effort": "medium"})),
            (Family::Generic, Some(Thinking::Disabled), json!({})),
        ];
        for (family, thinking, expected) in cases {
            let mut r = request(vec![Message::user("hi")]);
            r.thinking = thinking;
            let body = request_body(&r, family);
            let got: Map<String, Value> = fields
                .iter()
                .filter_map(|f| body.get(*f).map(|v| ((*f).to_owned(), v.clone())))
                .collect();
            assert_eq!(Value::Object(got), expected, "{family:?} {thinking:?}");
        }
    }

    /// A turn with reasoning, text and two calls (one with unparseable arguments), its results
    /// as a `tool` message, then an Anthropic-style user message carrying a result and text.
    fn tool_history(provider: &str) -> Vec<Message> {
        vec![
            Message::user("chart gold"),
            assistant_msg(
                provider,
                vec![
                    ContentBlock::Reasoning {
                        text: "Need the kline.".into(),
                        signature: Some("sig-1".into()),
                        redacted: None,
                    },
                    ContentBlock::Reasoning {
                        text: String::new(),
                        signature: None,
                        redacted: Some("opaque".into()),
                    },
                    ContentBlock::text("Fetching."),
                    tool_use("call_1", "execute", json!({"code": "return 1;"})),
                    ContentBlock::ToolUse {
                        id: "call_2".into(),
                        name: "search".into(),
                        input: json!(r#"{"q":?}"#),
                        input_error: Some("not valid JSON".into()),
                    },
                ],
            ),
            Message::Tool {
                content: vec![
                    ContentBlock::ToolResult {
                        tool_use_id: "call_1".into(),
                        content: "{\"ok\":true}".into(),
                        is_error: false,
                    },
                    ContentBlock::ToolResult {
                        tool_use_id: "call_2".into(),
                        content: "bad arguments".into(),
                        is_error: true,
                    },
                ],
            },
            assistant_msg(provider, vec![reasoning("Done thinking."), ContentBlock::text("Here.")]),
            Message::user("and silver"),
            assistant_msg(provider, vec![tool_use("call_3", "ping", json!({}))]),
            Message::User {
                content: vec![
                    ContentBlock::ToolResult {
                        tool_use_id: "call_3".into(),
                        content: "pong".into(),
                        is_error: false,
                    },
                    ContentBlock::text("thanks"),
                ],
            },
        ]
    }

    fn expected_history(reasoning_replay: bool) -> Value {
        let mut first = json!({
            "role": "assistant", "content": "Fetching.",
            "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "execute", "arguments": "{\"code\":\"return 1;\"}"}},
                {"id": "call_2", "type": "function",
                 "function": {"name": "search", "arguments": "{\"q\":?}"}},
            ],
        });
        let mut third = json!({
            "role": "assistant", "content": null,
            "tool_calls": [{"id": "call_3", "type": "function",
                            "function": {"name": "ping", "arguments": "{}"}}],
        });
        if reasoning_replay {
            first["reasoning_content"] = json!("Need the kline.");
            third["reasoning_content"] = json!("");
        }
        json!([
            {"role": "user", "content": "chart gold"},
            first,
            {"role": "tool", "tool_call_id": "call_1", "content": "{\"ok\":true}"},
            {"role": "tool", "tool_call_id": "call_2", "content": "bad arguments"},
            {"role": "assistant", "content": "Here."},
            {"role": "user", "content": "and silver"},
            third,
            {"role": "tool", "tool_call_id": "call_3", "content": "pong"},
            {"role": "user", "content": "thanks"},
        ])
    }

    #[test]
    fn deepseek_gets_reasoning_back_on_tool_call_turns_only() {
        let body = request_body(&request(tool_history("deepseek")), Family::Deepseek);
        assert_eq!(body["messages"], expected_history(true));
    }

    #[test]
    fn other_families_never_get_reasoning_back() {
        for family in [Family::Openai, Family::Qwen, Family::Doubao, Family::Generic] {
            let body = request_body(&request(tool_history("openai")), family);
            assert_eq!(body["messages"], expected_history(false), "{family:?}");
        }
    }

    #[test]
    fn history_from_another_provider_replays_without_its_opaque_data() {
        let body = request_body(&request(tool_history("anthropic")), Family::Deepseek);
        assert_eq!(body["messages"], expected_history(true));
        let text = body.to_string();
        assert!(!text.contains("sig-1") && !text.contains("opaque"), "{text}");
    }

    // -- stream ---------------------------------------------------------------------------

    fn chunk(choices: Value) -> String {
        json!({"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": choices})
            .to_string()
    }

    fn delta(d: Value) -> String {
        chunk(json!([{"index": 0, "delta": d, "finish_reason": null}]))
    }

    fn finish(reason: &str) -> String {
        chunk(json!([{"index": 0, "delta": {}, "finish_reason": reason}]))
    }

    fn call(index: u64, id: Option<&str>, name: Option<&str>, args: &str) -> String {
        let mut c = json!({"index": index, "function": {"arguments": args}});
        if let Some(id) = id {
            c["id"] = json!(id);
            c["type"] = json!("function");
        }
        if let Some(name) = name {
            c["function"]["name"] = json!(name);
        }
        delta(json!({"tool_calls": [c]}))
    }

    fn decode(items: &[String]) -> Vec<StreamEvent> {
        let mut d = Decoder::new("p");
        let mut out = Vec::new();
        for item in items {
            out.extend(d.feed(item));
        }
        out.extend(d.finish());
        out
    }

    fn role() -> String {
        delta(json!({"role": "assistant", "content": ""}))
    }

    fn done() -> String {
        "[DONE]".to_owned()
    }

    fn text(t: &str) -> E {
        E::TextDelta { text: t.into() }
    }

    fn end(index: usize, id: &str, name: &str, input: Value) -> E {
        E::ToolCallEnd { index, id: id.into(), name: name.into(), input, input_error: None }
    }

    fn start(index: usize, id: &str, name: &str) -> E {
        E::ToolCallStart { index, id: id.into(), name: name.into() }
    }

    fn args(index: usize, a: &str) -> E {
        E::ToolCallDelta { index, args_delta: a.into() }
    }

    fn r_end() -> E {
        E::ReasoningEnd { signature: None, redacted: None }
    }

    fn done_ev(stop_reason: StopReason) -> E {
        E::Done { stop_reason }
    }

    #[test]
    fn reasoning_then_text_is_two_bracketed_blocks() {
        let got = decode(&[
            delta(json!({"reasoning_content": "Hmm"})),
            role(),
            delta(json!({"reasoning_content": ", gold."})),
            delta(json!({"content": "Gold"})),
            delta(json!({"content": " is up."})),
            finish("stop"),
            done(),
        ]);
        assert_eq!(
            got,
            [
                E::ReasoningStart,
                E::ReasoningDelta { text: "Hmm".into() },
                E::ReasoningDelta { text: ", gold.".into() },
                r_end(),
                E::TextStart,
                text("Gold"),
                text(" is up."),
                E::TextEnd,
                done_ev(StopReason::EndTurn),
            ]
        );
    }

    #[test]
    fn the_reasoning_field_is_accepted_and_never_doubled() {
        let got = decode(&[
            delta(json!({"reasoning": "a"})),
            delta(json!({"reasoning": "b", "reasoning_content": "b"})),
            delta(json!({"reasoning": {"summary": "ignored shape"}, "content": "x"})),
            finish("stop"),
            done(),
        ]);
        assert_eq!(
            got,
            [
                E::ReasoningStart,
                E::ReasoningDelta { text: "a".into() },
                E::ReasoningDelta { text: "b".into() },
                r_end(),
                E::TextStart,
                text("x"),
                E::TextEnd,
                done_ev(StopReason::EndTurn),
            ]
        );
    }

    #[test]
    fn parallel_calls_with_ids_on_first_fragments_only() {
        let got = decode(&[
            role(),
            delta(json!({"content": "Let me look."})),
            call(0, Some("call_a"), Some("get_weather"), ""),
            call(0, None, None, "{\"locati"),
            call(0, None, None, "on\":\"Paris\"}"),
            call(1, Some("call_b"), Some("get_time"), ""),
            call(1, None, None, "{\"tz\":\"CET\"}"),
            finish("tool_calls"),
            chunk(json!([])),
            done(),
        ]);
        assert_eq!(
            got,
            [
                E::TextStart,
                text("Let me look."),
                E::TextEnd,
                start(0, "call_a", "get_weather"),
                args(0, "{\"locati"),
                args(0, "on\":\"Paris\"}"),
                start(1, "call_b", "get_time"),
                args(1, "{\"tz\":\"CET\"}"),
                end(0, "call_a", "get_weather", json!({"location": "Paris"})),
                end(1, "call_b", "get_time", json!({"tz": "CET"})),
                done_ev(StopReason::ToolUse),
            ]
        );
    }

    #[test]
    fn odd_ids_resent_numeric_null_and_all_at_index_zero() {
        // The id re-sent on every chunk: one call.
        let got = decode(&[
            call(0, Some("c1"), Some("f"), "{\"a\""),
            call(0, Some("c1"), None, ":1}"),
            call(0, Some("c1"), Some("f"), ""),
            finish("tool_calls"),
            done(),
        ]);
        assert_eq!(
            got,
            [
                start(0, "c1", "f"),
                args(0, "{\"a\""),
                args(0, ":1}"),
                end(0, "c1", "f", json!({"a": 1})),
                done_ev(StopReason::ToolUse)
            ]
        );
        // A numeric id is text.
        let numeric = delta(json!({"tool_calls": [
            {"index": 0, "id": 7, "function": {"name": "f", "arguments": "{}"}}]}));
        let got = decode(&[numeric, finish("tool_calls"), done()]);
        assert_eq!(got[0], start(0, "7", "f"));
        assert_eq!(got[1], args(0, "{}"));
        assert_eq!(got[2], end(0, "7", "f", json!({})));
        // The string "null" is no id: one is made up, and later fragments still join.
        let got = decode(&[
            call(0, Some("null"), Some("f"), "{\"a\":"),
            call(0, Some("null"), None, "2}"),
            finish("tool_calls"),
            done(),
        ]);
        let E::ToolCallStart { id, .. } = &got[0] else { panic!("{got:?}") };
        assert!(id.starts_with("call_") && id != "call_null", "{id}");
        assert_eq!(got[3], end(0, id, "f", json!({"a": 2})));
        assert_eq!(got.len(), 5, "{got:?}");
        // Every call at index 0 with distinct ids: distinct calls.
        let got = decode(&[
            call(0, Some("x1"), Some("f"), "{\"n\":"),
            call(0, None, None, "1}"),
            call(0, Some("x2"), Some("f"), "{\"n\":2}"),
            finish("tool_calls"),
            done(),
        ]);
        assert_eq!(
            got,
            [
                start(0, "x1", "f"),
                args(0, "{\"n\":"),
                args(0, "1}"),
                start(1, "x2", "f"),
                args(1, "{\"n\":2}"),
                end(0, "x1", "f", json!({"n": 1})),
                end(1, "x2", "f", json!({"n": 2})),
                done_ev(StopReason::ToolUse),
            ]
        );
    }

    #[test]
    fn a_missing_index_falls_back_to_the_id() {
        let frag = |id: &str, a: &str| {
            delta(json!({"tool_calls": [{"id": id, "function": {"name": id, "arguments": a}}]}))
        };
        let got = decode(&[
            frag("a", "{\"x\":"),
            frag("b", "{\"y\":"),
            frag("a", "1}"),
            frag("b", "2}"),
            delta(json!({"tool_calls": [{"function": {"arguments": ""}}]})),
            finish("tool_calls"),
            done(),
        ]);
        assert_eq!(
            got,
            [
                start(0, "a", "a"),
                args(0, "{\"x\":"),
                start(1, "b", "b"),
                args(1, "{\"y\":"),
                args(0, "1}"),
                args(1, "2}"),
                end(0, "a", "a", json!({"x": 1})),
                end(1, "b", "b", json!({"y": 2})),
                done_ev(StopReason::ToolUse),
            ]
        );
    }

    #[test]
    fn without_ids_another_name_at_the_same_index_is_another_call() {
        let got = decode(&[
            call(0, None, Some("f"), "{}"),
            call(0, None, Some("g"), "{\"b\":1}"),
            finish("tool_calls"),
            done(),
        ]);
        let names: Vec<&str> = got
            .iter()
            .filter_map(|e| match e {
                E::ToolCallEnd { name, .. } => Some(name.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(names, ["f", "g"]);
    }

    #[test]
    fn a_whole_call_with_finish_reason_in_one_chunk() {
        let whole = chunk(json!([{"index": 0, "finish_reason": "tool_calls", "delta": {
            "content": "On it.",
            "tool_calls": [{"index": 0, "id": "c", "type": "function",
                            "function": {"name": "f", "arguments": "{\"a\":1}"}}]}}]));
        let got = decode(&[whole, done()]);
        assert_eq!(
            got,
            [
                E::TextStart,
                text("On it."),
                E::TextEnd,
                start(0, "c", "f"),
                args(0, "{\"a\":1}"),
                end(0, "c", "f", json!({"a": 1})),
                done_ev(StopReason::ToolUse),
            ]
        );
        // Arguments sent as an object by some servers.
        let object = delta(json!({"tool_calls": [{"index": 0, "id": "c",
            "function": {"name": "f", "arguments": {"a": 1}}}]}));
        let got = decode(&[object, finish("tool_calls"), done()]);
        assert_eq!(got[2], end(0, "c", "f", json!({"a": 1})));
    }

    #[test]
    fn finish_reason_in_the_content_chunk_and_missing_finish_reason() {
        let last =
            chunk(json!([{"index": 0, "delta": {"content": "Bye."}, "finish_reason": "stop"}]));
        let got = decode(&[role(), last, done()]);
        assert_eq!(got, [E::TextStart, text("Bye."), E::TextEnd, done_ev(StopReason::EndTurn)]);
        // xAI: no finish_reason at all; [DONE] ends everything.
        let got =
            decode(&[delta(json!({"content": "x"})), call(0, Some("c"), Some("f"), "{}"), done()]);
        assert_eq!(
            got,
            [
                E::TextStart,
                text("x"),
                E::TextEnd,
                start(0, "c", "f"),
                args(0, "{}"),
                end(0, "c", "f", json!({})),
                done_ev(StopReason::ToolUse),
            ]
        );
        let got = decode(&[delta(json!({"content": "x"})), done()]);
        assert_eq!(got.last(), Some(&done_ev(StopReason::EndTurn)));
    }

    #[test]
    fn finish_reasons_map_to_stop_reasons() {
        let cases = [
            ("stop", StopReason::EndTurn),
            ("length", StopReason::MaxTokens),
            ("tool_calls", StopReason::ToolUse),
            ("content_filter", StopReason::ContentFilter),
            ("eos", StopReason::EndTurn),
        ];
        for (reason, stop) in cases {
            let got = decode(&[delta(json!({"content": "x"})), finish(reason), done()]);
            assert_eq!(got.last(), Some(&done_ev(stop)), "{reason}");
        }
        // `stop` after tool calls (some servers) is still a tool-use turn.
        let got = decode(&[call(0, Some("c"), Some("f"), "{}"), finish("stop"), done()]);
        assert_eq!(got.last(), Some(&done_ev(StopReason::ToolUse)));
        // A refusal is text, and the turn a refusal.
        let got = decode(&[delta(json!({"refusal": "I can't."})), finish("stop"), done()]);
        assert_eq!(got[1], text("I can't."));
        assert_eq!(got.last(), Some(&done_ev(StopReason::Refusal)));
    }

    #[test]
    fn usage_comes_from_the_last_chunk_before_done() {
        let usage = json!({"id": "c", "choices": [], "usage": {
            "prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150,
            "prompt_tokens_details": {"cached_tokens": 100},
            "completion_tokens_details": {"reasoning_tokens": 12}}})
        .to_string();
        let got = decode(&[delta(json!({"content": "x"})), finish("stop"), usage, done()]);
        let expected = Usage {
            input_tokens: 120,
            output_tokens: 30,
            reasoning_tokens: 12,
            cache_read_tokens: 100,
            cache_write_tokens: 0,
        };
        assert_eq!(got[got.len() - 2..], [E::Usage(expected), done_ev(StopReason::EndTurn)]);
        // DeepSeek names cached tokens differently.
        let deepseek = json!({"choices": [], "usage": {"prompt_tokens": 50,
            "completion_tokens": 5, "prompt_cache_hit_tokens": 40, "prompt_cache_miss_tokens": 10,
            "completion_tokens_details": null}})
        .to_string();
        let got = decode(&[finish("stop"), deepseek, done()]);
        assert_eq!(
            got[0],
            E::Usage(Usage {
                input_tokens: 50,
                output_tokens: 5,
                cache_read_tokens: 40,
                ..Usage::default()
            })
        );
    }

    #[test]
    fn unknown_fields_and_obfuscation_are_ignored() {
        let odd = json!({"id": "c", "obfuscation": "x7Qz", "system_fingerprint": "fp",
            "choices": [{"index": 0, "logprobs": null, "finish_reason": null,
                         "delta": {"content": "hi", "obfuscation": "ab", "annotations": []}}],
            "usage": null, "x_new": {"nested": [1]}})
        .to_string();
        let got = decode(&[odd, finish("stop"), done()]);
        assert_eq!(got, [E::TextStart, text("hi"), E::TextEnd, done_ev(StopReason::EndTurn)]);
    }

    #[test]
    fn the_repair_policy_never_drops_a_call() {
        let run = |raw: &str| -> (Value, Option<String>) {
            let got = decode(&[call(0, Some("c"), Some("f"), raw), finish("tool_calls"), done()]);
            match got.iter().find(|e| matches!(e, E::ToolCallEnd { .. })) {
                Some(E::ToolCallEnd { input, input_error, .. }) => {
                    (input.clone(), input_error.clone())
                }
                _ => panic!("no call end: {got:?}"),
            }
        };
        assert_eq!(run(""), (json!({}), None));
        assert_eq!(run("{}{\"stock\":\"MSFT\"}"), (json!({"stock": "MSFT"}), None));
        assert_eq!(run("{\"a\":1}<|call|>"), (json!({"a": 1}), None));
        let (input, error) = run("{\"a\":1}{\"b\":2}");
        assert_eq!(input, json!("{\"a\":1}{\"b\":2}"));
        assert!(error.is_some_and(|e| e.contains("2 JSON values")));
        let (input, error) = run("{\"x\":?}");
        assert_eq!(input, json!("{\"x\":?}"));
        assert!(error.is_some());
    }

    #[test]
    fn malformed_chunks_truncation_and_provider_errors_end_the_stream() {
        let got = decode(&[delta(json!({"content": "x"})), "{\"choices\": [".into(), done()]);
        let E::Error(LlmError::Protocol { message, .. }) = &got[2] else { panic!("{got:?}") };
        assert!(message.contains("malformed chunk") && message.contains("{\"choices\": ["));
        assert_eq!(got.len(), 3, "nothing after the error: {got:?}");

        let wrong_type = delta(json!({"content": 5}));
        let got = decode(&[wrong_type]);
        let [E::Error(LlmError::Protocol { message, .. })] = got.as_slice() else {
            panic!("{got:?}")
        };
        assert!(message.contains("invalid type"), "{message}");

        let got = decode(&[role(), delta(json!({"content": "x"}))]);
        let E::Error(LlmError::Protocol { message, .. }) = &got[2] else { panic!("{got:?}") };
        assert!(message.contains("truncated"), "{message}");

        let error = json!({"error": {"message": "overloaded, retry later", "type": "server_error",
            "code": 503}})
        .to_string();
        let got = decode(&[delta(json!({"content": "x"})), error, done()]);
        assert_eq!(
            got[2..],
            [E::Error(LlmError::Api {
                provider: "p".into(),
                error_type: "server_error".into(),
                message: "overloaded, retry later".into(),
            })]
        );

        let mut d = Decoder::new("p");
        let sse = SseEvent { event: "error".into(), data: "{\"message\":\"boom\"}".into() };
        assert_eq!(
            d.feed_sse(&sse),
            [E::Error(LlmError::Api {
                provider: "p".into(),
                error_type: "error".into(),
                message: "boom".into()
            })]
        );
        assert!(d.is_over());
        assert!(d.feed(&done()).is_empty());
    }

    #[test]
    fn a_finish_reason_without_done_completes_and_done_ends_decoding() {
        let got = decode(&[delta(json!({"content": "x"})), finish("stop")]);
        assert_eq!(got.last(), Some(&done_ev(StopReason::EndTurn)));
        let mut d = Decoder::new("p");
        assert_eq!(d.feed(&done()), [done_ev(StopReason::EndTurn)]);
        assert!(d.is_over());
        assert!(d.feed(&delta(json!({"content": "late"}))).is_empty());
        assert!(d.finish().is_empty());
    }

    #[test]
    fn the_message_builder_rebuilds_the_message() {
        let events = decode(&[
            delta(json!({"reasoning_content": "think"})),
            role(),
            delta(json!({"content": "Hi"})),
            call(0, Some("c1"), Some("f"), "{\"a\":"),
            call(0, None, None, "1}"),
            call(1, Some("c2"), Some("g"), "{\"b\":1}{\"c\":2}"),
            finish("tool_calls"),
            json!({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 4}})
                .to_string(),
            done(),
        ]);
        let mut b = MessageBuilder::new("m", "p");
        for e in &events {
            b.push(e);
        }
        let message = b.finish().unwrap();
        assert_eq!(
            message,
            AssistantMessage {
                content: vec![
                    reasoning("think"),
                    ContentBlock::text("Hi"),
                    tool_use("c1", "f", json!({"a": 1})),
                    ContentBlock::ToolUse {
                        id: "c2".into(),
                        name: "g".into(),
                        input: json!("{\"b\":1}{\"c\":2}"),
                        input_error: Some(
                            repair::parse_arguments("{\"b\":1}{\"c\":2}").unwrap_err()
                        ),
                    },
                ],
                model: "m".into(),
                provider: "p".into(),
                stop_reason: StopReason::ToolUse,
                usage: Usage { input_tokens: 3, output_tokens: 4, ..Usage::default() },
            }
        );
    }
}
