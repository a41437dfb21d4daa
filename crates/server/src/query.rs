//! `POST /api/query`: a query in, its run's Event Model v2 events out as SSE (ids
//! `<runId>:<seq>`). With a `Last-Event-ID` header the same endpoint resumes a run's stream
//! after that event instead of starting a run. `"stream": false` answers with the whole event
//! list in the envelope once the run ends. With `"busy": "steer"` or `"followUp"` a query to a
//! chat whose run is still going hands its message to that run and reads the rest of it
//! (header `x-boardsmith-queued`). Thin: [`AgentService`](agent::service) does
//! the work; dropping the response stream (client gone) detaches its reader from the run.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Extension, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;

use super::{ApiError, ok, parse_body};
use access::principal::Principal;
use agent::events::{Event, Subscription, event_id};
use agent::service::{Busy, QueryRequest, Stream};
use app::App;

/// Comment frames on an idle stream: keep proxies from closing it and notice a gone client
/// while the run waits (frontend tools wait up to minutes).
const KEEP_ALIVE: Duration = Duration::from_secs(10);

/// The SSE frame of one event.
fn frame(run_id: &str, event: &Event) -> SseEvent {
    // Serializing an event cannot fail (string keys, no custom serializers).
    let data = serde_json::to_string(event).unwrap_or_default();
    SseEvent::default().id(event_id(run_id, event.seq)).event(event.type_name()).data(data)
}

/// What an SSE body reads events from: a run's [`Stream`] (whose reader guard lives as long
/// as the body) or a bare [`Subscription`] (a workflow run's).
pub(super) trait Events: Send + 'static {
    /// The subscription to read.
    fn events(&mut self) -> &mut Subscription;
}

impl Events for Stream {
    fn events(&mut self) -> &mut Subscription {
        &mut self.events
    }
}

impl Events for Subscription {
    fn events(&mut self) -> &mut Subscription {
        self
    }
}

fn sse(stream: Stream) -> Response {
    let run_id = stream.run_id.clone();
    sse_of(run_id, stream)
}

/// The events of `source` as server-sent events with ids `<run_id>:<seq>`.
pub(super) fn sse_of(run_id: String, source: impl Events) -> Response {
    // The reader guard lives inside the stream state: dropped when the body is.
    let events = futures::stream::unfold(source, |mut s| async move {
        match s.events().next().await {
            Ok(Some(event)) => Some((event, s)),
            // Evicted (fell behind the buffer): end; a reconnect gets 410.
            Ok(None) | Err(_) => None,
        }
    })
    .map(move |event| Ok::<_, Infallible>(frame(&run_id, &event)));
    Sse::new(events).keep_alive(KeepAlive::new().interval(KEEP_ALIVE)).into_response()
}

/// What `POST /api/query` answers with `"stream": false`, once the run has ended.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Collected {
    /// The run.
    pub run_id: String,
    /// Its chat.
    pub chat_id: String,
    /// `steer` or `followUp` when the message went to the chat's running run.
    pub queued: Option<&'static str>,
    /// Every event of the run, in order (Event Model v2).
    #[schema(value_type = Vec<Object>)]
    pub events: Vec<std::sync::Arc<Event>>,
}

/// Runs an agent: its Event Model v2 events as server-sent events (`id: <runId>:<seq>`,
/// `event: <type>`, `data: <event JSON>`), from `request.query` and `run.start` to one of
/// `run.complete`, `run.error`, `run.cancel`. With a `Last-Event-ID: <runId>:<seq>` header it
/// resumes that run's stream after that event instead of starting a run. See the README for
/// the fields and `busy`.
#[utoipa::path(
    post,
    path = "/api/query",
    tag = "agents",
    params(("Last-Event-ID" = Option<String>, Header, description = "`<runId>:<seq>`: resume that run's stream after that event.")),
    request_body = QueryRequest,
    responses(
        (status = 200, description = "The run's events: a stream, or with `\"stream\": false` the whole list once the run ends.",
            content(
                (crate::envelope::SseEvent = "text/event-stream"),
                (crate::envelope::Envelope<Collected> = "application/json"),
            )),
        (status = "default", response = crate::envelope::ErrorBody),
    )
)]
#[base::boxed]
pub async fn query(
    State(app): State<Arc<App>>,
    Extension(principal): Extension<Principal>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    if let Some(last) = headers.get("last-event-id") {
        let last = last.to_str().map_err(|_| ApiError::bad("`Last-Event-ID` must be ASCII"))?;
        // Another person's run is not there to follow.
        if let Some((run_id, _)) = last.rsplit_once(':')
            && let Some(chat) = app.agents.chat_of_run(run_id).await
        {
            crate::chat_access::own_chat(&app, &principal, &chat).await?;
        }
        return Ok(sse(app.agents.resume(last).await?));
    }
    let mut request: QueryRequest = parse_body(&body)?;
    // Another person's chat is not there to continue.
    if let Some(chat) = request.chat_id.as_deref().filter(|c| !c.is_empty()) {
        crate::chat_access::own_chat(&app, &principal, chat).await?;
    }
    request.caller = principal.key_id().map(str::to_owned);
    request.principal = Some(principal.clone());
    let collect = request.stream == Some(false);
    let mut stream = app.agents.start(request).await?;
    let queued = stream.queued.map(Busy::as_str);
    if !collect {
        let mut response = sse(stream);
        if let Some(q) = queued {
            response
                .headers_mut()
                .insert("x-boardsmith-queued", axum::http::HeaderValue::from_static(q));
        }
        return Ok(response);
    }
    let mut events = Vec::new();
    while let Ok(Some(event)) = stream.events.next().await {
        events.push(event);
    }
    Ok(ok(Collected { run_id: stream.run_id, chat_id: stream.chat_id, queued, events }))
}
