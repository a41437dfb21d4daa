//! `/api/workflows/...`: workflow definitions (list, node types, validate, CRUD) and runs
//! (start and resume as Event Model v2 SSE streams, state, cancel). Thin: parse, call
//! `app.workflows`, map errors once through [`ApiError`]. What a run does is
//! [`workflow`]'s.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Extension, Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use utoipa::{OpenApi, ToSchema};

use super::envelope::{Envelope, ErrorBody};
use super::query::sse_of;
use super::routes::{Routes, get, post};
use super::{ApiError, created, ok};
use access::keys::Scope;
use access::principal::Principal;
use app::App;
use workflow::def::{self, Issue, WorkflowDef};
use workflow::nodes::KindInfo;
use workflow::runs::RunView;
use workflow::{Entry, Started, Summary, Workflows};

/// The operations of this module, for the OpenAPI document.
#[derive(OpenApi)]
#[openapi(paths(
    list_workflows,
    create_workflow,
    node_types,
    validate_workflow,
    get_workflow,
    put_workflow,
    delete_workflow,
    run_workflow,
    get_run,
    resume_run,
    cancel_run
))]
pub(crate) struct Doc;

/// The routes of this module.
pub fn routes() -> Routes<Arc<App>> {
    // Reading, validating and running workflows is the agents' scope; changing the definitions
    // (create, replace, delete) is the admin's: a tool node acts with the server's rights.
    const RUN: Scope = Scope::Agents;
    const DEFINE: Scope = Scope::Admin;
    Routes::new()
        .route("/api/workflows", get(RUN, list_workflows).post(DEFINE, create_workflow))
        .route("/api/workflows/node-types", get(RUN, node_types))
        .route("/api/workflows/validate", post(RUN, validate_workflow))
        .route(
            "/api/workflows/{id}",
            get(RUN, get_workflow).put(DEFINE, put_workflow).delete(DEFINE, delete_workflow),
        )
        .route("/api/workflows/{id}/run", post(RUN, run_workflow))
        .route("/api/workflows/runs/{run_id}", get(RUN, get_run))
        .route("/api/workflows/runs/{run_id}/resume", post(RUN, resume_run))
        .route("/api/workflows/runs/{run_id}/cancel", post(RUN, cancel_run))
}

/// A definition from a request body; a body that does not fit the format is one issue.
fn definition(body: &[u8]) -> Result<WorkflowDef, ApiError> {
    let text = std::str::from_utf8(body).map_err(|_| ApiError::bad("the body must be UTF-8"))?;
    if text.trim().is_empty() {
        return Err(ApiError::bad("request body is empty; expected a workflow definition"));
    }
    def::parse(text).map_err(|issue| workflow::WorkflowError::Invalid(vec![issue]).into())
}

/// Every workflow (built-in, file, API), with whether it validates on this server.
#[utoipa::path(
    get,
    path = "/api/workflows",
    tag = "workflows",
    responses((status = 200, description = "The workflows.", body = Envelope<Vec<Summary>>), (status = "default", response = ErrorBody))
)]
async fn list_workflows(State(app): State<Arc<App>>) -> Response {
    ok(app.workflows.list().await)
}

/// Creates a workflow (`id` in the body; 409 when one made through the API has it). A file's
/// or built-in's of the same id is overridden. 400 names every problem.
#[utoipa::path(
    post,
    path = "/api/workflows",
    tag = "workflows",
    request_body = WorkflowDef,
    responses((status = 201, description = "Created.", body = Envelope<Entry>), (status = "default", response = ErrorBody))
)]
async fn create_workflow(State(app): State<Arc<App>>, body: Bytes) -> Result<Response, ApiError> {
    let def = definition(&body)?;
    Ok(created(app.workflows.create(def).await?))
}

/// The node kinds, each with its configuration fields (the table the validator uses).
#[utoipa::path(
    get,
    path = "/api/workflows/node-types",
    tag = "workflows",
    responses((status = 200, description = "The node kinds.", body = Envelope<Vec<KindInfo>>), (status = "default", response = ErrorBody))
)]
async fn node_types() -> Response {
    ok(Workflows::node_types())
}

/// What `POST /api/workflows/validate` answers.
#[derive(Serialize, ToSchema)]
struct Validation {
    /// No problems.
    valid: bool,
    /// Every problem, each naming the node and the field.
    errors: Vec<Issue>,
}

/// Checks a definition without storing or running it: every problem at once.
#[utoipa::path(
    post,
    path = "/api/workflows/validate",
    tag = "workflows",
    request_body = WorkflowDef,
    responses((status = 200, description = "The verdict (a definition that does not fit the format is one error).", body = Envelope<Validation>), (status = "default", response = ErrorBody))
)]
async fn validate_workflow(State(app): State<Arc<App>>, body: Bytes) -> Result<Response, ApiError> {
    let text = std::str::from_utf8(&body).map_err(|_| ApiError::bad("the body must be UTF-8"))?;
    if serde_json::from_str::<Value>(text).is_err() {
        return Err(ApiError::bad("malformed JSON: expected a workflow definition"));
    }
    let errors = match def::parse(text) {
        Ok(d) => app.workflows.validate(&d),
        Err(issue) => vec![issue],
    };
    Ok(ok(Validation { valid: errors.is_empty(), errors }))
}

/// One workflow's definition and origin.
#[utoipa::path(
    get,
    path = "/api/workflows/{id}",
    tag = "workflows",
    params(("id" = String, Path, description = "The workflow id.")),
    responses((status = 200, description = "The workflow.", body = Envelope<Entry>), (status = "default", response = ErrorBody))
)]
async fn get_workflow(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    Ok(ok(app.workflows.get(&id).await?))
}

/// Creates or replaces the API definition `id` (it wins over a file's or built-in's).
#[utoipa::path(
    put,
    path = "/api/workflows/{id}",
    tag = "workflows",
    params(("id" = String, Path, description = "The workflow id.")),
    request_body = WorkflowDef,
    responses((status = 200, description = "The workflow in force.", body = Envelope<Entry>), (status = "default", response = ErrorBody))
)]
async fn put_workflow(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let def = definition(&body)?;
    Ok(ok(app.workflows.put(&id, def).await?))
}

/// Deletes a workflow made through the API (409 for a file's or built-in).
#[utoipa::path(
    delete,
    path = "/api/workflows/{id}",
    tag = "workflows",
    params(("id" = String, Path, description = "The workflow id.")),
    responses((status = 200, description = "Deleted.", body = Envelope<Value>), (status = "default", response = ErrorBody))
)]
async fn delete_workflow(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    app.workflows.delete(&id).await?;
    Ok(ok(json!({ "deleted": id })))
}

/// The body of `POST /api/workflows/{id}/run`.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RunBody {
    /// Input values by name (defaults fill the rest).
    #[serde(default)]
    #[schema(value_type = Object)]
    inputs: Map<String, Value>,
    /// `false`: answer with every event once the run ends instead of a stream.
    #[serde(default)]
    stream: Option<bool>,
}

/// What a run answers with `"stream": false`.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct Collected {
    /// The run.
    run_id: String,
    /// The attempt's stream id.
    stream_id: String,
    /// Every event, in order.
    #[schema(value_type = Vec<Object>)]
    events: Vec<Arc<agent::events::Event>>,
}

async fn answer(started: Started, collect: bool) -> Response {
    if !collect {
        return sse_of(started.stream_id, started.events);
    }
    let Started { run_id, stream_id, mut events } = started;
    let mut all = Vec::new();
    while let Ok(Some(event)) = events.next().await {
        all.push(event);
    }
    ok(Collected { run_id, stream_id, events: all })
}

/// Runs a workflow: one Event Model v2 run as server-sent events (`id: <streamId>:<seq>`),
/// each node a task (`task.start` → its events with `taskId` → `task.complete` or
/// `task.fail`), ending with `run.complete`, `run.error` or `run.cancel`. With a
/// `Last-Event-ID` header it resumes that stream after that event instead.
#[utoipa::path(
    post,
    path = "/api/workflows/{id}/run",
    tag = "workflows",
    params(
        ("id" = String, Path, description = "The workflow id."),
        ("Last-Event-ID" = Option<String>, Header, description = "`<streamId>:<seq>`: resume that stream after that event."),
    ),
    request_body = RunBody,
    responses(
        (status = 200, description = "The run's events: a stream, or with `\"stream\": false` the whole list once it ends.",
            content(
                (crate::envelope::SseEvent = "text/event-stream"),
                (Envelope<Collected> = "application/json"),
            )),
        (status = "default", response = ErrorBody),
    )
)]
async fn run_workflow(
    State(app): State<Arc<App>>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    if let Some(last) = headers.get("last-event-id") {
        let last = last.to_str().map_err(|_| ApiError::bad("`Last-Event-ID` must be ASCII"))?;
        // `<runId>[.<attempt>]:<seq>`: another person's run is not there to follow.
        let stream = last.rsplit_once(':').map_or(last, |(s, _)| s);
        let run_id = stream.split_once('.').map_or(stream, |(r, _)| r);
        own_run(&app, &principal, run_id).await?;
        let events = app.agents.resume_events(last).await?;
        let stream_id = events.run_id().to_owned();
        return Ok(sse_of(stream_id, events));
    }
    let body: RunBody =
        if body.is_empty() { RunBody::default() } else { super::parse_body(&body)? };
    let caller = principal.key_id().map(str::to_owned);
    let started = app.workflows.run(&id, body.inputs, caller, Some(principal)).await?;
    Ok(answer(started, body.stream == Some(false)).await)
}

/// A run's state: status, finished nodes with their outputs, the results.
#[utoipa::path(
    get,
    path = "/api/workflows/runs/{run_id}",
    tag = "workflows",
    params(("run_id" = String, Path, description = "The run id.")),
    responses((status = 200, description = "The run.", body = Envelope<RunView>), (status = "default", response = ErrorBody))
)]
async fn get_run(
    State(app): State<Arc<App>>,
    Extension(principal): Extension<Principal>,
    Path(run_id): Path<String>,
) -> Result<Response, ApiError> {
    own_run(&app, &principal, &run_id).await?;
    Ok(ok(app.workflows.run_state(&run_id).await?))
}

/// Refuses, as missing, a run of another person (admins see every run).
async fn own_run(app: &App, who: &Principal, run_id: &str) -> Result<(), ApiError> {
    let owner = match app.workflows.owner_of(run_id).await {
        Ok(owner) => owner,
        // A stream that has no run record (yet) is the event log's to answer.
        Err(workflow::WorkflowError::NotFound(_)) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    if crate::chat_access::sees_chat(who, owner.as_deref()) {
        Ok(())
    } else {
        Err(ApiError::NotFound(format!("no workflow run `{run_id}`")))
    }
}

/// The body of `POST /api/workflows/runs/{run_id}/resume`.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ResumeBody {
    /// `false`: answer with every event once the run ends instead of a stream.
    #[serde(default)]
    stream: Option<bool>,
}

/// Continues a failed, cancelled or interrupted run from its last finished nodes (they do
/// not run again), as a new stream `<runId>.<attempt>`.
#[utoipa::path(
    post,
    path = "/api/workflows/runs/{run_id}/resume",
    tag = "workflows",
    params(("run_id" = String, Path, description = "The run id.")),
    request_body = ResumeBody,
    responses(
        (status = 200, description = "The resumed run's events.",
            content(
                (crate::envelope::SseEvent = "text/event-stream"),
                (Envelope<Collected> = "application/json"),
            )),
        (status = "default", response = ErrorBody),
    )
)]
async fn resume_run(
    State(app): State<Arc<App>>,
    Extension(principal): Extension<Principal>,
    Path(run_id): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    own_run(&app, &principal, &run_id).await?;
    let body: ResumeBody =
        if body.is_empty() { ResumeBody::default() } else { super::parse_body(&body)? };
    let started = app.workflows.resume(&run_id, Some(principal)).await?;
    Ok(answer(started, body.stream == Some(false)).await)
}

/// Cancels a run in progress: nothing more starts, running nodes stop, the stream ends with
/// `run.cancel`.
#[utoipa::path(
    post,
    path = "/api/workflows/runs/{run_id}/cancel",
    tag = "workflows",
    params(("run_id" = String, Path, description = "The run id.")),
    responses((status = 200, description = "Cancelling.", body = Envelope<Value>), (status = "default", response = ErrorBody))
)]
async fn cancel_run(
    State(app): State<Arc<App>>,
    Extension(principal): Extension<Principal>,
    Path(run_id): Path<String>,
) -> Result<Response, ApiError> {
    own_run(&app, &principal, &run_id).await?;
    app.workflows.cancel(&run_id)?;
    Ok(ok(json!({ "cancelled": run_id })))
}
