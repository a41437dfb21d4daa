//! The shapes every operation shares: the `{code, msg, data}` envelope of a success, the error
//! body (the envelope plus OpenAI's `error` object) and a server-sent event. A leaf of the HTTP
//! edge: handlers answer with them and `openapi` documents them.

use serde::Serialize;
use serde_json::Value;
use utoipa::{ToResponse, ToSchema};

/// A successful JSON response of `/api`: `code` 0, `msg` `ok` (or `created`), and `data`, the
/// business content itself.
#[derive(Serialize, ToSchema)]
pub struct Envelope<T> {
    /// Always 0 on success.
    #[schema(minimum = 0, maximum = 0)]
    pub code: u16,
    /// `ok`, or `created` for a 201.
    pub msg: String,
    /// The content.
    pub data: T,
}

/// Every error, on every path (`/v1` included): the envelope with `code` = the HTTP status,
/// plus OpenAI's error object so OpenAI clients read it natively.
#[derive(Serialize, ToSchema, ToResponse)]
#[response(description = "An error: the envelope (`code` = the HTTP status, `msg` says what is \
    wrong, naming the field or JSON path) plus OpenAI's `error` object. 400 invalid input, 401 \
    no valid credential, 403 a foreign Host or Origin or an API key without the scope, 404 \
    unknown id or route, 405 a method the route does not take, 409 version conflict \
    (`data: {expected, actual}`), 410 deleted, 413 too large (`data: {bytes, limit}`), 415 a \
    body that is not JSON, 429 too many requests (`Retry-After` when known), 502/504 an \
    upstream model failed or timed out, 503 no usable model, 507 the store is full \
    (`data: {used, needed, limit}`), 500 damaged stored data or an internal error.")]
pub struct ErrorBody {
    /// The HTTP status.
    #[schema(minimum = 400, maximum = 599)]
    pub code: u16,
    /// What went wrong.
    pub msg: String,
    /// Details, when there are any (`null` otherwise).
    pub data: Value,
    /// The same error as OpenAI's `{message, type, param, code}`.
    pub error: OpenAiError,
}

/// One server-sent event of a `text/event-stream` response, as a client parses it (the schema
/// applies to each event; OpenAPI 3.2 calls it `itemSchema`).
#[derive(Serialize, ToSchema)]
#[allow(dead_code)] // Only its schema is used.
pub struct SseEvent {
    /// `<runId>:<seq>` on `/api/query` (send it back as `Last-Event-ID` to resume); absent on
    /// `/v1` streams.
    pub id: Option<String>,
    /// The event type (`run.start`, `content.delta`, ...; `message` when absent, as on `/v1`).
    pub event: Option<String>,
    /// The event as JSON (`/api/query`: an Event Model v2 event; `/v1`: a `chat.completion.chunk`
    /// or an `{error}` object), or `[DONE]` at the end of a `/v1` stream.
    #[schema(content_media_type = "application/json")]
    pub data: String,
    /// Reconnection delay in milliseconds, when the server sets one.
    pub retry: Option<u64>,
}

/// OpenAI's error object.
#[derive(Serialize, ToSchema)]
pub struct OpenAiError {
    /// What went wrong (the envelope's `msg`).
    pub message: String,
    /// `invalid_request_error`, `authentication_error`, `permission_error`,
    /// `not_found_error`, `conflict_error`, `rate_limit_error` or `api_error`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The request parameter at fault, when known.
    pub param: Option<String>,
    /// A machine-readable code, when there is one.
    pub code: Option<String>,
}
