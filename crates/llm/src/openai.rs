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
    AssistantMessage, ChatRequest, ContentBlock, Effort, ImageSource, Message, StopReason,
    Thinking, ToolChoice, Usage,
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

    /// `POST {base}/embeddings` in OpenAI's wire shape (`encoding_format: float`).
    fn embed(
        &self,
        model: &str,
        inputs: Vec<String>,
    ) -> BoxFuture<'static, Result<Vec<Vec<f32>>, LlmError>> {
        let n = inputs.len();
        let body = json!({"model": model, "input": inputs, "encoding_format": "float"});
        super::provider::embed_call(&self.settings, "embeddings", body, n)
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

/// Tool results first (they must follow the assistant's calls), then the text as a user message:
/// a string, or content parts (`text`, `image_url`, in order) when it carries images.
fn push_user(out: &mut Vec<Value>, content: &[ContentBlock], is_user: bool) {
    let mut texts = Vec::new();
    let mut parts = Vec::new();
    let mut images = 0;
    let mut results = 0;
    for block in content {
        match block {
            ContentBlock::ToolResult { tool_use_id, content, .. } => {
                results += 1;
                out.push(json!({"role": "tool", "tool_call_id": tool_use_id, "content": content}));
            }
            ContentBlock::Text { text } => {
                texts.push(text.clone());
                parts.push(json!({"type": "text", "text": text}));
            }
            ContentBlock::Image { media_type, source } => match image_url(media_type, source) {
                Some(url) => {
                    images += 1;
                    parts.push(json!({"type": "image_url", "image_url": {"url": url}}));
                }
                None => {
                    let note = ContentBlock::image_note(source);
                    parts.push(json!({"type": "text", "text": note}));
                    texts.push(note);
                }
            },
            // Neither belongs to a user turn; there is nothing to send them as.
            ContentBlock::Reasoning { .. } | ContentBlock::ToolUse { .. } => {}
        }
    }
    if images > 0 {
        out.push(json!({"role": "user", "content": parts}));
    } else if !texts.is_empty() || (is_user && results == 0) {
        out.push(json!({"role": "user", "content": texts.join("\n")}));
    }
}

/// An image as `image_url.url`: a `data:` URL for inline bytes, the address itself for a URL;
/// `None` for an upload that was not loaded.
fn image_url(media_type: &str, source: &ImageSource) -> Option<String> {
    match source {
        ImageSource::Base64 { data } => Some(format!("data:{media_type};base64,{data}")),
        ImageSource::Url { url } => Some(url.clone()),
        ImageSource::Upload { .. } => None,
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
            ContentBlock::ToolResult { .. } | ContentBlock::Image { .. } => {}
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
                Err(e) => (Value::String(call.args.clone()), Some(e.to_string())),
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
mod tests;
