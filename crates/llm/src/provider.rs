//! The provider interface and the settings every provider is built from.

use std::fmt;

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};

use super::error::LlmError;
use super::event::{MessageBuilder, StreamEvent};
use super::http::Transport;
use super::types::{AssistantMessage, ChatRequest};

/// Most inputs in one embeddings request.
pub const MAX_EMBED_BATCH: usize = 64;

/// Longest embeddings response read (64 inputs × 3072 dimensions as JSON fit easily).
pub const MAX_EMBED_RESPONSE: usize = 32 << 20;

/// The vectors of an embeddings answer: OpenAI's `{data: [{index, embedding}]}` (put back in
/// `index` order) or Ollama's `{embeddings: [[...]]}`, checked to be `expected` vectors of one
/// dimension.
pub(crate) fn embeddings_of(
    provider: &str,
    body: &serde_json::Value,
    expected: usize,
) -> Result<Vec<Vec<f32>>, LlmError> {
    let bad = |message: String| LlmError::Protocol { provider: provider.to_owned(), message };
    let vector = |v: &serde_json::Value| -> Option<Vec<f32>> {
        #[allow(clippy::cast_possible_truncation)]
        v.as_array()?.iter().map(|x| x.as_f64().map(|f| f as f32)).collect()
    };
    let mut out: Vec<Vec<f32>> = if let Some(data) = body.get("data").and_then(|d| d.as_array()) {
        let mut items: Vec<(u64, Vec<f32>)> = data
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let index =
                    item.get("index").and_then(serde_json::Value::as_u64).unwrap_or(i as u64);
                let v = item.get("embedding").and_then(vector);
                v.map(|v| (index, v))
                    .ok_or_else(|| bad(format!("data[{i}].embedding is not a list of numbers")))
            })
            .collect::<Result<_, _>>()?;
        items.sort_by_key(|(i, _)| *i);
        items.into_iter().map(|(_, v)| v).collect()
    } else if let Some(list) = body.get("embeddings").and_then(|d| d.as_array()) {
        list.iter()
            .enumerate()
            .map(|(i, v)| {
                vector(v).ok_or_else(|| bad(format!("embeddings[{i}] is not a list of numbers")))
            })
            .collect::<Result<_, _>>()?
    } else {
        return Err(bad("the embeddings answer has neither `data` nor `embeddings`".into()));
    };
    if out.len() != expected {
        return Err(bad(format!("{} embeddings for {expected} inputs", out.len())));
    }
    let dim = out.first().map_or(0, Vec::len);
    if dim == 0 || out.iter().any(|v| v.len() != dim) {
        return Err(bad("embeddings of different or zero dimensions".into()));
    }
    out.shrink_to_fit();
    Ok(out)
}

/// One embeddings request of `settings`' provider: `body` POSTed to `path`, the answer read by
/// [`embeddings_of`] (OpenAI's and Ollama's embed endpoints differ only in path and body).
pub(crate) fn embed_call(
    settings: &ProviderSettings,
    path: &str,
    body: serde_json::Value,
    expected: usize,
) -> BoxFuture<'static, Result<Vec<Vec<f32>>, LlmError>> {
    let s = settings.clone();
    let url = s.url(path);
    Box::pin(async move {
        let answer =
            s.transport.post_json(&s.key, &url, &s.bearer(), &body, MAX_EMBED_RESPONSE).await?;
        embeddings_of(&s.key, &answer, expected)
    })
}

/// The wire protocol a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// OpenAI chat completions (OpenAI, DeepSeek, Qwen/DashScope, SiliconFlow, vLLM, llama.cpp,
    /// Ollama's `/v1`).
    #[serde(alias = "openai-compatible", alias = "openai_compatible")]
    Openai,
    /// Anthropic Messages.
    Anthropic,
    /// Ollama `/api/chat` (NDJSON).
    Ollama,
}

/// Within the OpenAI-compatible kind, whose dialect: decides how reasoning is requested and
/// whether it must be replayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// Guess from the provider key and base URL.
    #[default]
    Auto,
    /// OpenAI (`reasoning_effort`; reasoning is never replayed).
    Openai,
    /// DeepSeek (`thinking` object; `reasoning_content` replayed on tool-call turns).
    Deepseek,
    /// Qwen / DashScope compatible mode (`enable_thinking`).
    Qwen,
    /// Doubao / Volcengine Ark (`thinking` object).
    Doubao,
    /// Anything else OpenAI-compatible (vLLM, llama.cpp, SiliconFlow, ...).
    Generic,
}

impl Family {
    /// Resolves `Auto` from the provider key and base URL.
    pub fn resolve(self, key: &str, base_url: &str) -> Self {
        if self != Self::Auto {
            return self;
        }
        let hay = format!("{key} {base_url}").to_lowercase();
        if hay.contains("deepseek") {
            Self::Deepseek
        } else if hay.contains("dashscope") || hay.contains("qwen") || hay.contains("aliyun") {
            Self::Qwen
        } else if hay.contains("volces") || hay.contains("doubao") || hay.contains("ark.") {
            Self::Doubao
        } else if hay.contains("api.openai.com") || key == "openai" {
            Self::Openai
        } else {
            Self::Generic
        }
    }
}

/// An API key: never printed, logged or serialized.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// The key, for the request header only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

/// What a provider is built from.
#[derive(Debug, Clone)]
pub struct ProviderSettings {
    /// The configured key (`openai`, `deepseek`, `local`, ...), recorded on every message.
    pub key: String,
    /// Wire protocol.
    pub kind: ProviderKind,
    /// Base URL: for OpenAI-compatible providers up to and including `/v1`; for Anthropic and
    /// Ollama the host root.
    pub base_url: String,
    /// API key, when the provider needs one.
    pub api_key: Option<ApiKey>,
    /// Dialect within the OpenAI-compatible kind (resolved, never `Auto`).
    pub family: Family,
    /// HTTP client, timeouts, retries, interaction log.
    pub transport: Transport,
}

impl ProviderSettings {
    /// `base_url` and `path` joined with exactly one `/`.
    pub fn url(&self, path: &str) -> String {
        format!("{}/{}", self.base_url.trim_end_matches('/'), path.trim_start_matches('/'))
    }

    /// `Authorization: Bearer <key>` when a key is configured (none otherwise).
    pub(crate) fn bearer(&self) -> Vec<(&'static str, String)> {
        self.api_key.iter().map(|k| ("authorization", format!("Bearer {}", k.expose()))).collect()
    }

    /// A streaming call of this provider: `body` to `url` with `headers`.
    pub(crate) fn call(
        &self,
        url: String,
        headers: Vec<(&'static str, String)>,
        body: serde_json::Value,
        trace_id: Option<String>,
    ) -> StreamCall {
        StreamCall {
            transport: self.transport.clone(),
            provider: self.key.clone(),
            url,
            headers,
            body,
            trace_id: trace_id.unwrap_or_default(),
        }
    }
}

/// A model provider. Implementations convert [`ChatRequest`]s to their wire format and their
/// stream back to [`StreamEvent`]s, one event per upstream delta.
pub trait Provider: Send + Sync + fmt::Debug {
    /// The configured provider key.
    fn key(&self) -> &str;

    /// The wire protocol.
    fn kind(&self) -> ProviderKind;

    /// Streams one model call. Failures arrive as a final [`StreamEvent::Error`]; a call that
    /// fails before its first byte has already been retried per the transport's policy.
    fn stream(&self, request: ChatRequest) -> BoxStream<'static, StreamEvent>;

    /// One model call, collected.
    fn complete(
        &self,
        request: ChatRequest,
    ) -> BoxFuture<'static, Result<AssistantMessage, LlmError>> {
        let mut builder = MessageBuilder::new(&request.model, self.key());
        let mut events = self.stream(request);
        Box::pin(async move {
            while let Some(e) = events.next().await {
                builder.push(&e);
            }
            builder.finish()
        })
    }

    /// Embeds `inputs` with `model`: one vector per input, in order. At most
    /// [`MAX_EMBED_BATCH`] inputs per call ([`super::Models::embed`] batches). Default: the
    /// provider has no embeddings API (Anthropic).
    fn embed(
        &self,
        model: &str,
        inputs: Vec<String>,
    ) -> BoxFuture<'static, Result<Vec<Vec<f32>>, LlmError>> {
        let _ = (model, inputs);
        let message = format!(
            "provider `{}` ({:?}) has no embeddings API; configure an OpenAI-compatible or \
             Ollama provider's model as the embedding model",
            self.key(),
            self.kind()
        );
        Box::pin(std::future::ready(Err(LlmError::Config { message })))
    }

    /// Checks that the provider answers and accepts the key (lists models).
    fn health_check(&self) -> BoxFuture<'_, Result<(), LlmError>>;
}

/// A provider's wire decoder: upstream items (SSE events, NDJSON lines) in, events out. The
/// three providers share one driving loop ([`drive`]) over it.
pub(crate) trait WireDecoder: Send + 'static {
    /// One framed upstream item.
    type Item: Send + 'static;
    /// Frames the response body into items.
    fn frames(
        provider: &str,
        bytes: super::http::ByteStream,
    ) -> BoxStream<'static, Result<Self::Item, LlmError>>;
    /// The item's text, for the interaction log.
    fn text(item: &Self::Item) -> &str;
    /// Decodes one item.
    fn decode(&mut self, item: &Self::Item) -> Vec<StreamEvent>;
    /// True once `Done` or an error was emitted.
    fn over(&self) -> bool;
    /// The body ended: what the decoder still owes (or the truncation error).
    fn end(self) -> Vec<StreamEvent>;
}

/// One streaming call: where it goes and what it sends.
pub(crate) struct StreamCall {
    /// HTTP client and policies.
    pub transport: Transport,
    /// Provider key (errors, log).
    pub provider: String,
    /// Endpoint.
    pub url: String,
    /// Request headers (auth, version).
    pub headers: Vec<(&'static str, String)>,
    /// JSON body.
    pub body: serde_json::Value,
    /// Interaction-log trace id.
    pub trace_id: String,
}

/// Sends `call` and decodes its body in the consumer's task: each upstream item becomes its
/// events at once (logged first); a transport error ends the stream with `Error`; nothing
/// follows `Done` or `Error`.
pub(crate) fn drive<D: WireDecoder>(
    call: StreamCall,
    mut decoder: D,
) -> BoxStream<'static, StreamEvent> {
    let StreamCall { transport, provider, url, headers, body, trace_id } = call;
    async_stream::stream! {
        let bytes = match transport.post_stream(&provider, &url, &headers, &body, &trace_id).await {
            Ok(bytes) => bytes,
            Err(e) => {
                yield StreamEvent::Error(e);
                return;
            }
        };
        let mut items = D::frames(&provider, bytes);
        while let Some(item) = items.next().await {
            let item = match item {
                Ok(item) => item,
                Err(e) => {
                    yield StreamEvent::Error(e);
                    return;
                }
            };
            transport.log_delta(&provider, &trace_id, D::text(&item));
            for event in decoder.decode(&item) {
                yield event;
            }
            if decoder.over() {
                return;
            }
        }
        for event in decoder.end() {
            yield event;
        }
    }
    .boxed()
}
