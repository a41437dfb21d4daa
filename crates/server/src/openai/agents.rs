//! Boardsmith's agents behind OpenAI's wire format: `GET /v1/agents`, `GET /v1/agents/{slug}`
//! and `POST /v1/agents/{slug}/completions`, which runs the agent (any mode, the dashboard
//! agent included) through `app.agents` exactly as `POST /api/query` does. The answer is
//! `content`, reasoning `reasoning_content`, and every other event of the run travels whole in
//! the extension field `boardsmith`; `chat_id` continues a chat (the response headers
//! `x-boardsmith-chat-id` and `x-boardsmith-run-id` name the run's). `/v1/agents/{slug}` also
//! works as a base URL of its own (`/models`, `/chat/completions` under it), so a client that
//! only knows those paths can talk to an agent.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Extension, Path, State};
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde::Serialize;
use serde_json::{Value, json};

use super::encode::AgentEncoder;
use super::wire::{ChatCompletion, ChatCompletionRequest, ResponseMessage};
use super::{convert, event_stream, json_response, now_secs};
use crate::{ApiError, parse_body};
use access::principal::Principal;
use agent::definition::AgentDefinition;
use agent::events::EventBody;
use app::App;
use llm::Usage;

/// An agent in the `/v1` listing.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct AgentObject<'a> {
    /// The agent's key (its file name), the `{slug}` of its routes.
    id: &'a str,
    /// `agent`.
    object: &'static str,
    /// What it does.
    description: &'a str,
    /// Its mode (`REACT`, `PLAIN`, ...).
    mode: String,
    /// Its tools.
    tools: &'a [String],
    /// Its provider key, when the file names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    provider: Option<&'a str>,
    /// Its model, when the file names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
}

fn agent_object(agent: &AgentDefinition) -> AgentObject<'_> {
    AgentObject {
        id: &agent.key,
        object: "agent",
        description: &agent.description,
        mode: serde_json::to_value(agent.mode)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default(),
        tools: &agent.tools,
        provider: agent.provider_key.as_deref(),
        model: agent.model.as_deref(),
    }
}

fn not_found(slug: &str) -> ApiError {
    ApiError::NotFound(format!("agent `{slug}` not found: GET /v1/agents lists them"))
}

/// `GET /v1/agents`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct AgentList<'a> {
    /// `list`.
    object: &'static str,
    /// The agents.
    data: Vec<AgentObject<'a>>,
}

/// The agents, as OpenAI-style objects.
#[utoipa::path(
    get,
    path = "/v1/agents",
    tag = "openai",
    responses((status = 200, description = "The agents.", body = AgentList), (status = "default", response = crate::envelope::ErrorBody))
)]
pub(super) async fn list(State(app): State<Arc<App>>) -> Response {
    let snapshot = app.catalog.snapshot();
    let data: Vec<AgentObject<'_>> = snapshot.agents().map(|a| agent_object(a)).collect();
    json_response(&AgentList { object: "list", data })
}

/// One agent.
#[utoipa::path(
    get,
    path = "/v1/agents/{slug}",
    tag = "openai",
    params(("slug" = String, Path, description = "The agent's key.")),
    responses((status = 200, description = "The agent.", body = AgentObject), (status = "default", response = crate::envelope::ErrorBody))
)]
pub(super) async fn get(State(app): State<Arc<App>>, Path(slug): Path<String>) -> Response {
    match app.catalog.snapshot().agent(&slug) {
        Some(agent) => json_response(&agent_object(&agent)),
        None => not_found(&slug).into_response(),
    }
}

/// An agent as a model: `agent/<slug>`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct AgentModel {
    /// `agent/<slug>`.
    id: String,
    /// `model`.
    object: &'static str,
    /// Unix seconds (the server's start).
    created: u64,
    /// `boardsmith`.
    owned_by: &'static str,
}

/// `GET /v1/agents/{slug}/models`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct AgentModelList {
    /// `list`.
    object: &'static str,
    /// The one model.
    data: [AgentModel; 1],
}

/// `GET /v1/agents/{slug}/models`: the agent as the one model of its own base URL.
#[utoipa::path(
    get,
    path = "/v1/agents/{slug}/models",
    tag = "openai",
    params(("slug" = String, Path, description = "The agent's key.")),
    responses((status = 200, description = "The agent as the one model.", body = AgentModelList), (status = "default", response = crate::envelope::ErrorBody))
)]
pub(super) async fn models(State(app): State<Arc<App>>, Path(slug): Path<String>) -> Response {
    if app.catalog.snapshot().agent(&slug).is_none() {
        return not_found(&slug).into_response();
    }
    json_response(&AgentModelList {
        object: "list",
        data: [AgentModel {
            id: format!("agent/{slug}"),
            object: "model",
            created: app.started_secs,
            owned_by: "boardsmith",
        }],
    })
}

/// `POST /v1/agents/{slug}/chat/completions`: [`completions`] under the agent's own base URL.
#[utoipa::path(
    post,
    path = "/v1/agents/{slug}/chat/completions",
    tag = "openai",
    params(("slug" = String, Path, description = "The agent's key.")),
    request_body = ChatCompletionRequest,
    responses(
        (status = 200, description = "As `POST /v1/agents/{slug}/completions`.",
            content((ChatCompletion = "application/json"), (crate::envelope::SseEvent = "text/event-stream"))),
        (status = "default", response = crate::envelope::ErrorBody),
    )
)]
pub(super) async fn chat_completions(
    state: State<Arc<App>>,
    slug: Path<String>,
    principal: Extension<Principal>,
    body: Bytes,
) -> Result<Response, ApiError> {
    completions(state, slug, principal, body).await
}

/// Runs the agent as `POST /api/query` does, answered in the chat-completions format: the
/// answer as `content`, reasoning as `reasoning_content`, every other event of the run in the
/// extension field `boardsmith`. `chat_id` continues a chat; `busy` as on `/api/query`.
#[utoipa::path(
    post,
    path = "/v1/agents/{slug}/completions",
    tag = "openai",
    params(("slug" = String, Path, description = "The agent's key.")),
    request_body = ChatCompletionRequest,
    responses(
        (status = 200, description = "The answer, or with `stream: true` its chunks as server-sent \
            events (one chunk with an empty delta per other event, in `boardsmith`).",
            content((ChatCompletion = "application/json"), (crate::envelope::SseEvent = "text/event-stream")),
            headers(
                ("x-boardsmith-run-id" = String, description = "The run."),
                ("x-boardsmith-chat-id" = String, description = "Its chat."),
            )),
        (status = "default", response = crate::envelope::ErrorBody),
    )
)]
pub(super) async fn completions(
    State(app): State<Arc<App>>,
    Path(slug): Path<String>,
    Extension(principal): Extension<Principal>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let req: ChatCompletionRequest = parse_body(&body)?;
    if app.catalog.snapshot().agent(&slug).is_none() {
        return Err(not_found(&slug));
    }
    let mut query = convert::to_agent_query(&req, &slug)?;
    query.caller = principal.key_id().map(str::to_owned);
    query.principal = Some(principal.clone());
    let mut stream = app.agents.start(query).await?;
    let id = format!("chatcmpl-{}", uuid::Uuid::now_v7().simple());
    let created = now_secs();
    let model = format!("agent/{slug}");
    let (run_id, chat_id) = (stream.run_id.clone(), stream.chat_id.clone());
    let queued = stream.queued;
    let mut response = if req.stream == Some(true) {
        let include_usage =
            req.stream_options.as_ref().and_then(|o| o.include_usage).unwrap_or(false);
        let mut encoder = AgentEncoder::new(id, created, model, include_usage);
        // The reader guard lives in the stream state: dropped with the body (client gone).
        let events = futures::stream::unfold(stream, |mut s| async move {
            match s.events.next().await {
                Ok(Some(event)) => Some((event, s)),
                Ok(None) | Err(_) => None,
            }
        });
        event_stream(events.map(move |event| encoder.event(&event)))
    } else {
        let (mut content, mut reasoning) = (String::new(), String::new());
        let mut events = Vec::new();
        let mut usage = Usage::default();
        let mut finish_reason = None;
        let mut failure = None;
        while let Ok(Some(event)) = stream.events.next().await {
            match &event.body {
                EventBody::ContentDelta { delta, .. } => content.push_str(delta),
                EventBody::ReasoningDelta { delta, .. } => reasoning.push_str(delta),
                body => {
                    match body {
                        EventBody::RunComplete { usage: u, finish_reason: f, .. } => {
                            usage = u.map(Usage::from).unwrap_or_default();
                            finish_reason.clone_from(f);
                        }
                        EventBody::RunError { error, .. } => failure = Some(error.clone()),
                        EventBody::RunCancel { .. } => failure = Some(json!("cancelled")),
                        _ => {}
                    }
                    events.push(serde_json::to_value(&*event).unwrap_or(Value::Null));
                }
            }
        }
        if let Some(error) = failure {
            let message = error.get("message").and_then(Value::as_str).map(str::to_owned);
            let message = message.unwrap_or_else(|| error.to_string());
            return Err(ApiError::BadGateway(format!("the agent run failed: {message}")));
        }
        json_response(&ChatCompletion::answer(
            (id, created, model),
            ResponseMessage::assistant(content, reasoning, Vec::new()),
            "stop",
            &usage,
            Some(json!({
                "run_id": run_id,
                "chat_id": chat_id,
                "finish_reason": finish_reason,
                "events": events,
            })),
        ))
    };
    let h = response.headers_mut();
    for (name, value) in [("x-boardsmith-run-id", &run_id), ("x-boardsmith-chat-id", &chat_id)] {
        if let Ok(v) = HeaderValue::from_str(value) {
            h.insert(name, v);
        }
    }
    if let Some(mode) = queued {
        h.insert("x-boardsmith-queued", HeaderValue::from_static(mode.as_str()));
    }
    let ignored = req.ignored_by_agents().join(",");
    if !ignored.is_empty()
        && let Ok(v) = HeaderValue::from_str(&ignored)
    {
        h.insert("x-boardsmith-ignored-params", v);
    }
    Ok(response)
}
