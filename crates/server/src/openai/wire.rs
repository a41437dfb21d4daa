//! OpenAI's chat-completions and models wire format, as serde types: what `/v1` accepts and
//! returns. Requests are strict (an unknown field is a 400 naming it, so a typo is never
//! silently ignored); the OpenAI parameters Boardsmith does not forward are accepted and named
//! in the response's `x-boardsmith-ignored-params` header (see [`ChatCompletionRequest::ignored`]).

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `POST /v1/chat/completions`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ChatCompletionRequest {
    /// A model reference: `provider/model` as `/v1/models` lists it, a bare model id, or a
    /// provider key alone (its default model).
    pub model: String,
    /// The conversation.
    pub messages: Vec<RequestMessage>,
    /// Stream chunks as server-sent events.
    #[serde(default)]
    pub stream: Option<bool>,
    /// Streaming options.
    #[serde(default)]
    pub stream_options: Option<StreamOptions>,
    /// Tools the model may call.
    #[serde(default)]
    pub tools: Option<Vec<ToolSpec>>,
    /// `none`, `auto`, `required` or `{type: "function", function: {name}}`.
    #[serde(default)]
    pub tool_choice: Option<Value>,
    /// Sampling temperature.
    #[serde(default)]
    pub temperature: Option<f32>,
    /// Output token limit (deprecated name).
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// Output token limit.
    #[serde(default)]
    pub max_completion_tokens: Option<u32>,
    /// `none`, `minimal`, `low`, `medium`, `high`, `xhigh`.
    #[serde(default)]
    pub reasoning_effort: Option<String>,
    /// Number of choices: only 1.
    #[serde(default)]
    pub n: Option<u32>,
    /// Log probabilities: not available.
    #[serde(default)]
    pub logprobs: Option<bool>,
    /// Output format: only `text`.
    #[serde(default)]
    pub response_format: Option<Value>,
    /// Output modalities: only `text`.
    #[serde(default)]
    pub modalities: Option<Vec<String>>,
    /// Audio output: not available.
    #[serde(default)]
    pub audio: Option<Value>,
    /// Predicted output: not available.
    #[serde(default)]
    pub prediction: Option<Value>,
    /// Web search: not available.
    #[serde(default)]
    pub web_search_options: Option<Value>,
    /// Legacy function calling: use `tools`.
    #[serde(default)]
    pub functions: Option<Value>,
    /// Legacy function calling: use `tool_choice`.
    #[serde(default)]
    pub function_call: Option<Value>,
    /// Agent completions only: the chat to continue (a Boardsmith extension).
    #[serde(default)]
    pub chat_id: Option<String>,
    /// Agent completions only: what to do when the chat's run is still going (`wait`, `steer`,
    /// `followUp`; a Boardsmith extension).
    #[serde(default)]
    pub busy: Option<agent::service::Busy>,
    // Accepted and not forwarded: sampling knobs (named in a response header by
    // `ignored`) and bookkeeping that means nothing to a provider.
    #[serde(default)]
    top_p: Option<Value>,
    #[serde(default)]
    frequency_penalty: Option<Value>,
    #[serde(default)]
    presence_penalty: Option<Value>,
    #[serde(default)]
    stop: Option<Value>,
    #[serde(default)]
    logit_bias: Option<Value>,
    #[serde(default)]
    top_logprobs: Option<Value>,
    #[serde(default)]
    seed: Option<Value>,
    #[serde(default)]
    verbosity: Option<Value>,
    #[schema(value_type = Option<Value>)]
    #[serde(default, rename = "user")]
    _user: Option<IgnoredAny>,
    #[schema(value_type = Option<Value>)]
    #[serde(default, rename = "safety_identifier")]
    _safety_identifier: Option<IgnoredAny>,
    #[schema(value_type = Option<Value>)]
    #[serde(default, rename = "prompt_cache_key")]
    _prompt_cache_key: Option<IgnoredAny>,
    #[schema(value_type = Option<Value>)]
    #[serde(default, rename = "prompt_cache_retention")]
    _prompt_cache_retention: Option<IgnoredAny>,
    #[schema(value_type = Option<Value>)]
    #[serde(default, rename = "metadata")]
    _metadata: Option<IgnoredAny>,
    #[schema(value_type = Option<Value>)]
    #[serde(default, rename = "store")]
    _store: Option<IgnoredAny>,
    #[schema(value_type = Option<Value>)]
    #[serde(default, rename = "service_tier")]
    _service_tier: Option<IgnoredAny>,
    #[schema(value_type = Option<Value>)]
    #[serde(default, rename = "parallel_tool_calls")]
    _parallel_tool_calls: Option<IgnoredAny>,
}

impl ChatCompletionRequest {
    /// What an agent completion does not use: [`Self::ignored`] plus the generation settings,
    /// which the agent's file decides.
    pub fn ignored_by_agents(&self) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = [
            ("temperature", self.temperature.is_some()),
            ("max_tokens", self.max_tokens.is_some()),
            ("max_completion_tokens", self.max_completion_tokens.is_some()),
            ("reasoning_effort", self.reasoning_effort.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, set)| set.then_some(name))
        .collect();
        out.extend(self.ignored());
        out
    }

    /// The sampling parameters the request set that no provider receives.
    pub fn ignored(&self) -> Vec<&'static str> {
        let p = self;
        [
            ("top_p", &p.top_p),
            ("frequency_penalty", &p.frequency_penalty),
            ("presence_penalty", &p.presence_penalty),
            ("stop", &p.stop),
            ("logit_bias", &p.logit_bias),
            ("top_logprobs", &p.top_logprobs),
            ("seed", &p.seed),
            ("verbosity", &p.verbosity),
        ]
        .into_iter()
        .filter(|(_, v)| v.as_ref().is_some_and(|v| !v.is_null()))
        .map(|(name, _)| name)
        .collect()
    }
}

/// `stream_options`.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StreamOptions {
    /// Send a last chunk with `usage` and no choices.
    #[serde(default)]
    pub include_usage: Option<bool>,
    /// Obfuscation padding: meaningless here.
    #[schema(value_type = Option<Value>)]
    #[serde(default, rename = "include_obfuscation")]
    _include_obfuscation: Option<IgnoredAny>,
}

/// One message of the conversation. The content of `system`, `developer`, `user` and `tool`
/// messages is a string or an array of parts; only text parts can be sent on. Unlike the
/// request's own fields, a message's unknown fields are ignored: clients send back the
/// message objects they received, with their SDK's additions (`parsed`, `annotations`, ...).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum RequestMessage {
    /// Instructions.
    System {
        /// Text.
        content: Content,
        /// Participant name (not forwarded).
        #[schema(value_type = Option<Value>)]
        #[serde(default, rename = "name")]
        _name: Option<IgnoredAny>,
    },
    /// Instructions (OpenAI's newer name for system).
    Developer {
        /// Text.
        content: Content,
        /// Participant name (not forwarded).
        #[schema(value_type = Option<Value>)]
        #[serde(default, rename = "name")]
        _name: Option<IgnoredAny>,
    },
    /// The user's turn.
    User {
        /// Text.
        content: Content,
        /// Participant name (not forwarded).
        #[schema(value_type = Option<Value>)]
        #[serde(default, rename = "name")]
        _name: Option<IgnoredAny>,
    },
    /// An earlier model turn.
    Assistant {
        /// Text (absent or null with tool calls).
        #[serde(default)]
        content: Option<Content>,
        /// Tool calls made.
        #[serde(default)]
        tool_calls: Option<Vec<ToolCall>>,
        /// Reasoning (DeepSeek's extension; replayed where the provider wants it).
        #[serde(default)]
        reasoning_content: Option<String>,
        /// A refusal (kept as text).
        #[serde(default)]
        refusal: Option<String>,
        /// Participant name (not forwarded).
        #[schema(value_type = Option<Value>)]
        #[serde(default, rename = "name")]
        _name: Option<IgnoredAny>,
        /// Legacy: use `tool_calls`.
        #[serde(default)]
        function_call: Option<Value>,
        /// Audio output reference: not available.
        #[serde(default)]
        audio: Option<Value>,
    },
    /// A tool's result.
    Tool {
        /// The result.
        content: Content,
        /// The call it answers.
        tool_call_id: String,
    },
    /// Legacy function result: use `tool`.
    Function {
        /// The result.
        #[schema(value_type = Option<Value>)]
        #[serde(default, rename = "content")]
        _content: Option<IgnoredAny>,
        /// The function.
        #[schema(value_type = Option<Value>)]
        #[serde(default, rename = "name")]
        _name: Option<IgnoredAny>,
    },
}

/// Message content: a string or parts.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(untagged)]
pub enum Content {
    /// Plain text.
    Text(String),
    /// Typed parts.
    Parts(Vec<ContentPart>),
}

/// One content part: its `type` and the rest, checked by the converter (so the error can say
/// which kinds are supported rather than serde's list of variants).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct ContentPart {
    /// `text`, `image_url`, `input_audio`, `file`, `refusal`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The text of a `text` part.
    #[serde(default)]
    pub text: Option<String>,
    /// The refusal of a `refusal` part.
    #[serde(default)]
    pub refusal: Option<String>,
    /// The image of an `image_url` part: `{url, detail?}` (or the URL alone, as Ollama's
    /// examples send it).
    #[serde(default)]
    pub image_url: Option<Value>,
    /// Anything else the part carries (`input_audio`, ...: refused by kind).
    #[serde(flatten)]
    _other: serde_json::Map<String, Value>,
}

/// A tool definition.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolSpec {
    /// Only `function`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The function.
    pub function: FunctionSpec,
}

/// A function tool.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FunctionSpec {
    /// Name.
    pub name: String,
    /// What it does.
    #[serde(default)]
    pub description: Option<String>,
    /// JSON Schema of the arguments.
    #[serde(default)]
    pub parameters: Option<Value>,
    /// Strict schema adherence (not forwarded).
    #[schema(value_type = Option<Value>)]
    #[serde(default, rename = "strict")]
    _strict: Option<IgnoredAny>,
}

/// A tool call, in requests (history) and responses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ToolCall {
    /// Call id.
    pub id: String,
    /// Only `function`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Name and JSON arguments text.
    pub function: FunctionCall,
}

/// A function call's name and arguments (JSON text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct FunctionCall {
    /// Name.
    pub name: String,
    /// Arguments as JSON text.
    pub arguments: String,
}

/// A non-streamed answer.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ChatCompletion {
    /// `chatcmpl-…`.
    pub id: String,
    /// `chat.completion`.
    pub object: &'static str,
    /// Unix seconds.
    pub created: u64,
    /// `provider/model` that answered.
    pub model: String,
    /// The one choice.
    pub choices: Vec<Choice>,
    /// Tokens as the provider reported them.
    pub usage: WireUsage,
    /// Agent completions: `{run_id, chat_id, finish_reason, events}`, the run's events other
    /// than its text and reasoning deltas (an extension field OpenAI clients pass over).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boardsmith: Option<Value>,
}

impl ChatCompletion {
    /// The answer with its one choice.
    pub fn answer(
        head: (String, u64, String),
        message: ResponseMessage,
        finish_reason: &'static str,
        usage: &llm::Usage,
        boardsmith: Option<Value>,
    ) -> Self {
        let (id, created, model) = head;
        Self {
            id,
            object: "chat.completion",
            created,
            model,
            choices: vec![Choice { index: 0, message, finish_reason, logprobs: None }],
            usage: WireUsage::from(usage),
            boardsmith,
        }
    }
}

impl ResponseMessage {
    /// The assistant's message: `content` null only when it made tool calls and said nothing.
    pub fn assistant(content: String, reasoning: String, tool_calls: Vec<ToolCall>) -> Self {
        Self {
            role: "assistant",
            content: (!content.is_empty() || tool_calls.is_empty()).then_some(content),
            reasoning_content: (!reasoning.is_empty()).then_some(reasoning),
            tool_calls,
            refusal: None,
        }
    }
}

/// A choice of a non-streamed answer.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Choice {
    /// Always 0.
    pub index: u32,
    /// The answer.
    pub message: ResponseMessage,
    /// `stop`, `length`, `tool_calls`, `content_filter`.
    pub finish_reason: &'static str,
    /// Never available.
    pub logprobs: Option<()>,
}

/// The assistant message of a non-streamed answer.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ResponseMessage {
    /// `assistant`.
    pub role: &'static str,
    /// The answer text (null when the model only called tools).
    pub content: Option<String>,
    /// Reasoning, when the model produced some.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    /// The tool calls.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Never set: a refusal arrives as content with `finish_reason: content_filter`.
    pub refusal: Option<String>,
}

/// OpenAI's usage object.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, utoipa::ToSchema)]
pub struct WireUsage {
    /// Input tokens (cached included).
    pub prompt_tokens: u64,
    /// Output tokens (reasoning included).
    pub completion_tokens: u64,
    /// The sum.
    pub total_tokens: u64,
    /// `{cached_tokens}`.
    pub prompt_tokens_details: PromptDetails,
    /// `{reasoning_tokens}`.
    pub completion_tokens_details: CompletionDetails,
}

/// Input token details.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, utoipa::ToSchema)]
pub struct PromptDetails {
    /// Read from the provider's cache.
    pub cached_tokens: u64,
}

/// Output token details.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, utoipa::ToSchema)]
pub struct CompletionDetails {
    /// Spent reasoning.
    pub reasoning_tokens: u64,
}

impl From<&llm::Usage> for WireUsage {
    fn from(u: &llm::Usage) -> Self {
        Self {
            prompt_tokens: u.input_tokens,
            completion_tokens: u.output_tokens,
            total_tokens: u.input_tokens + u.output_tokens,
            prompt_tokens_details: PromptDetails { cached_tokens: u.cache_read_tokens },
            completion_tokens_details: CompletionDetails { reasoning_tokens: u.reasoning_tokens },
        }
    }
}

/// One streamed chunk.
#[derive(Debug, Serialize)]
pub struct Chunk<'a> {
    /// The completion's id (the same in every chunk).
    pub id: &'a str,
    /// `chat.completion.chunk`.
    pub object: &'static str,
    /// Unix seconds (the same in every chunk).
    pub created: u64,
    /// `provider/model`.
    pub model: &'a str,
    /// One choice, or none in the usage chunk.
    pub choices: Vec<ChunkChoice<'a>>,
    /// Only in the last chunk, with `stream_options.include_usage`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<WireUsage>,
    /// Agent completions: the run event this chunk carries (an extension field OpenAI clients
    /// pass over).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boardsmith: Option<&'a agent::events::Event>,
}

/// A streamed choice.
#[derive(Debug, Serialize)]
pub struct ChunkChoice<'a> {
    /// Always 0.
    pub index: u32,
    /// What this chunk adds.
    pub delta: Delta<'a>,
    /// Set on the last content chunk.
    pub finish_reason: Option<&'static str>,
    /// Never available.
    pub logprobs: Option<()>,
}

/// What a chunk adds to the message.
#[derive(Debug, Default, Serialize)]
pub struct Delta<'a> {
    /// `assistant`, in the first chunk.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<&'static str>,
    /// Answer text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<&'a str>,
    /// Reasoning text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<&'a str>,
    /// A tool call's start or argument fragment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<[ToolCallDelta<'a>; 1]>,
}

/// A tool call in a chunk: the first carries id, type and name; later ones argument text.
#[derive(Debug, Serialize)]
pub struct ToolCallDelta<'a> {
    /// Which call of the message.
    pub index: usize,
    /// Call id (first chunk of the call).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<&'a str>,
    /// `function` (first chunk of the call).
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
    /// Name and/or argument fragment.
    pub function: FunctionDelta<'a>,
}

/// A function call's name (first chunk) and argument fragment.
#[derive(Debug, Serialize)]
pub struct FunctionDelta<'a> {
    /// Name (first chunk of the call).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<&'a str>,
    /// Argument text fragment.
    pub arguments: &'a str,
}

/// `GET /v1/models` and `GET /v1/models/{id}`: OpenAI's model object plus what the registry
/// knows (extension fields official clients keep as extra attributes).
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ModelObject {
    /// `provider/model`.
    pub id: String,
    /// `model`.
    pub object: &'static str,
    /// Unix seconds (the server's start: models have no creation date here).
    pub created: u64,
    /// The provider key.
    pub owned_by: String,
    /// Context window in tokens.
    pub context_window: u64,
    /// Longest output in tokens.
    pub max_output_tokens: u64,
    /// `{tools, reasoning, vision}`.
    pub capabilities: Capabilities,
    /// USD per million tokens, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pricing: Option<Pricing>,
    /// Whether the registry or the config describes it (false: conservative defaults).
    pub known: bool,
}

/// What a model can do.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Capabilities {
    /// Tool calls.
    pub tools: bool,
    /// Reasoning output.
    pub reasoning: bool,
    /// Image input.
    pub vision: bool,
}

/// Prices in USD per million tokens.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Pricing {
    /// Input.
    pub input: f64,
    /// Output.
    pub output: f64,
    /// Cached input.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cached_input: Option<f64>,
}

/// `GET /v1/models`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ModelList {
    /// `list`.
    pub object: &'static str,
    /// The models.
    pub data: Vec<ModelObject>,
}
