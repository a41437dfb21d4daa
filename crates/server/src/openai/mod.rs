//! The OpenAI-compatible API (`/v1`), so any OpenAI client can use the models Boardsmith is
//! configured with: `GET /v1/models`, `GET /v1/models/{id}`, `POST /v1/chat/completions`
//! (streamed or not), routed through the provider layer (`app.models`) to any configured
//! provider, OpenAI-compatible, Anthropic or Ollama alike; and its agents (`agents`:
//! `/v1/agents/...`), run through `app.agents`.
//!
//! `wire` is the format, `convert` maps requests to the provider layer, `encode` maps its
//! events back (one chunk out per delta in). Errors are the server's envelope, which carries
//! OpenAI's `error` object too; a failure before the first upstream byte of a stream is a
//! plain error status, one after it an `{error}` frame. Credentials and origins are the
//! guard's, as for every protected path.

mod agents;
mod convert;
mod encode;
mod wire;

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::body::{Body, Bytes};
use axum::extract::{Extension, Path, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use std::time::Instant;

use super::routes::{Routes, get, post};
use crate::{ApiError, parse_body};
use access::keys::Scope;
use access::principal::Principal;
use app::App;
use encode::ChunkEncoder;
use llm::{LlmError, ServedModel, StreamEvent};
use utoipa::OpenApi;
use wire::{Capabilities, ChatCompletion, ChatCompletionRequest, ModelList, ModelObject, Pricing};

/// The operations of `/v1`, for the OpenAPI document.
#[derive(OpenApi)]
#[openapi(paths(
    list_models,
    get_model,
    chat_completions,
    agents::list,
    agents::get,
    agents::completions,
    agents::chat_completions,
    agents::models,
))]
pub(crate) struct Doc;

/// The `/v1` routes.
pub fn routes() -> Routes<Arc<App>> {
    Routes::new()
        .route("/v1/models", get(Scope::Models, list_models))
        // `{*id}`: model ids have slashes (`provider/model`); the document says `{id}`.
        .route("/v1/models/{*id}", get(Scope::Models, get_model))
        .route("/v1/chat/completions", post(Scope::Models, chat_completions))
        // Agents are the `agents` scope's, under `/v1` too.
        .route("/v1/agents", get(Scope::Agents, agents::list))
        .route("/v1/agents/{slug}", get(Scope::Agents, agents::get))
        .route("/v1/agents/{slug}/completions", post(Scope::Agents, agents::completions))
        // An agent as a base URL of its own (`/v1/agents/{slug}`), for clients that only know
        // `/models` and `/chat/completions` under a base URL.
        .route("/v1/agents/{slug}/chat/completions", post(Scope::Agents, agents::chat_completions))
        .route("/v1/agents/{slug}/models", get(Scope::Agents, agents::models))
}

fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

fn model_object(m: ServedModel, created: u64) -> ModelObject {
    let pricing = match (m.info.input_price, m.info.output_price) {
        (Some(input), Some(output)) => {
            Some(Pricing { input, output, cached_input: m.info.cache_read_price })
        }
        _ => None,
    };
    ModelObject {
        id: m.qualified_id(),
        object: "model",
        created,
        owned_by: m.provider,
        context_window: m.info.context_window,
        max_output_tokens: m.info.max_output,
        capabilities: Capabilities {
            tools: m.info.tools,
            reasoning: m.info.reasoning,
            vision: m.info.vision,
        },
        pricing,
        known: m.info.known,
    }
}

/// A `text/event-stream` response whose body is the frames, sent as they come.
fn event_stream(frames: impl futures::Stream<Item = Vec<Bytes>> + Send + 'static) -> Response {
    let body = frames
        .flat_map(|batch| futures::stream::iter(batch.into_iter().map(Ok::<_, std::io::Error>)));
    let mut r = Response::new(Body::from_stream(body));
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    r
}

fn json_response<T: serde::Serialize>(value: &T) -> Response {
    axum::Json(value).into_response()
}

/// Every model that can be called now (`provider/model` ids), with the registry's facts.
#[utoipa::path(
    get,
    path = "/v1/models",
    tag = "openai",
    responses((status = 200, description = "OpenAI's model list.", body = ModelList), (status = "default", response = crate::envelope::ErrorBody))
)]
async fn list_models(State(app): State<Arc<App>>) -> Response {
    let created = app.started_secs;
    let data = app.models.served().into_iter().map(|m| model_object(m, created)).collect();
    json_response(&ModelList { object: "list", data })
}

/// One model (404 unless `GET /v1/models` lists it).
#[utoipa::path(
    get,
    path = "/v1/models/{id}",
    tag = "openai",
    params(("id" = String, Path, description = "A model id as listed: `provider/model` (the slash unescaped).")),
    responses((status = 200, description = "The model.", body = ModelObject), (status = "default", response = crate::envelope::ErrorBody))
)]
async fn get_model(State(app): State<Arc<App>>, Path(id): Path<String>) -> Response {
    match app.models.find(&id) {
        Some(m) => json_response(&model_object(m, app.started_secs)),
        None => ApiError::NotFound(format!(
            "model `{id}` is not served here: GET /v1/models lists the configured models"
        ))
        .into_response(),
    }
}

/// Counts one model call in the usage ledger exactly once: when it ends, fails, or its
/// stream is dropped (the client went away; what was reported so far is counted).
struct Meter {
    usage: Arc<access::usage::UsageLedger>,
    call: access::usage::Call,
    price: llm::ModelInfo,
    started: Instant,
    done: bool,
}

impl Meter {
    fn new(app: &App, principal: &Principal, model: String, price: llm::ModelInfo) -> Self {
        let call = access::usage::Call {
            key: principal.key_id().map(str::to_owned),
            model,
            agent: None,
            usage: llm::Usage::default(),
            cost_usd: None,
            latency: std::time::Duration::ZERO,
            first_chunk: None,
            error: false,
        };
        Self { usage: app.usage.clone(), call, price, started: Instant::now(), done: false }
    }

    /// Follows a streamed event; counts the call at its end.
    fn see(&mut self, event: &StreamEvent) {
        match event {
            StreamEvent::TextDelta { .. }
            | StreamEvent::ReasoningDelta { .. }
            | StreamEvent::ToolCallStart { .. }
                if self.call.first_chunk.is_none() =>
            {
                self.call.first_chunk = Some(self.started.elapsed());
            }
            StreamEvent::Usage(u) => self.call.usage = *u,
            StreamEvent::Done { .. } => self.finish(false),
            StreamEvent::Error(_) => self.finish(true),
            _ => {}
        }
    }

    fn finish(&mut self, error: bool) {
        if self.done {
            return;
        }
        self.done = true;
        self.call.error = error;
        self.call.latency = self.started.elapsed();
        self.call.cost_usd = if error { None } else { self.price.cost(&self.call.usage) };
        self.usage.record(&self.call);
    }
}

impl Drop for Meter {
    fn drop(&mut self) {
        self.finish(false);
    }
}

/// OpenAI's chat completions, streamed (`stream: true`) or not, to any configured model.
/// Unknown parameters are a 400 naming them; the sampling knobs no provider receives here are
/// named in the `x-boardsmith-ignored-params` response header.
#[utoipa::path(
    post,
    path = "/v1/chat/completions",
    tag = "openai",
    request_body = ChatCompletionRequest,
    responses(
        (status = 200, description = "The completion, or with `stream: true` its chunks as \
            server-sent events (`data: <chunk JSON>`, then `data: [DONE]`; a failure after the \
            first byte is a `data: {error}` frame).",
            content(
                (ChatCompletion = "application/json"),
                (crate::envelope::SseEvent = "text/event-stream"),
            ),
            headers(("x-boardsmith-ignored-params" = String, description = "The parameters accepted but not sent on, comma-separated."))),
        (status = "default", response = crate::envelope::ErrorBody),
    )
)]
async fn chat_completions(
    State(app): State<Arc<App>>,
    Extension(principal): Extension<Principal>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let req: ChatCompletionRequest = parse_body(&body)?;
    for (param, set) in [("chat_id", req.chat_id.is_some()), ("busy", req.busy.is_some())] {
        if set {
            return Err(convert::unsupported(
                param,
                &format!(
                    "`{param}` on a model completion (it is about an agent's chat: use \
                     POST /v1/agents/{{slug}}/completions)"
                ),
            ));
        }
    }
    let connected = app.models.connect(&req.model).map_err(|e| match e {
        // Nothing to route to at all is the server's state, not the client's mistake.
        LlmError::Config { message } if app.models.config().providers().is_empty() => {
            ApiError::Unavailable(message)
        }
        e => ApiError::from(e),
    })?;
    let model = connected.qualified_id();
    convert::check_images(&req.messages, &connected)?;
    let request = convert::to_chat_request(&req, &connected.model.id, connected.provider.key())?;
    let id = format!("chatcmpl-{}", uuid::Uuid::now_v7().simple());
    let created = now_secs();
    let ignored = req.ignored().join(",");
    let mut response = if req.stream == Some(true) {
        let include_usage =
            req.stream_options.as_ref().and_then(|o| o.include_usage).unwrap_or(false);
        let mut meter = Meter::new(&app, &principal, model.clone(), connected.model.clone());
        let mut events = connected.provider.stream(request);
        // The status is decided by the first event: a call refused before its first byte
        // (bad key, unknown model, rate limit) is an error status, not a 200 with an error.
        let first = events.next().await;
        if let Some(StreamEvent::Error(e)) = first {
            meter.finish(true);
            return Err(ApiError::from(e));
        }
        let mut encoder = ChunkEncoder::new(id, created, model, include_usage);
        event_stream(futures::stream::iter(first).chain(events).map(move |event| {
            meter.see(&event);
            encoder.event(&event)
        }))
    } else {
        let mut meter = Meter::new(&app, &principal, model.clone(), connected.model.clone());
        let message = connected.provider.complete(request).await;
        match &message {
            Ok(m) => {
                meter.call.usage = m.usage;
                meter.finish(false);
            }
            Err(_) => meter.finish(true),
        }
        json_response(&encode::completion(id, created, model, &message?))
    };
    if !ignored.is_empty()
        && let Ok(v) = HeaderValue::from_str(&ignored)
    {
        response.headers_mut().insert("x-boardsmith-ignored-params", v);
    }
    Ok(response)
}
