//! The `{code, msg, data}` envelope and the one place errors become HTTP statuses.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::{Value, json};

use agent::events::StreamError;
use agent::memory::MemoryError;
use agent::service::QueryError;
use agent::tools::submit::SubmitError;
use dashboard_agent::ToolError;
use llm::LlmError;
use store::StoreError;

/// A successful response: `{code: 0, msg: "ok", data}`.
pub fn ok<T: Serialize>(data: T) -> Response {
    (StatusCode::OK, Json(json!({ "code": 0, "msg": "ok", "data": data }))).into_response()
}

/// Like [`ok`] with `201 Created`.
pub fn created<T: Serialize>(data: T) -> Response {
    (StatusCode::CREATED, Json(json!({ "code": 0, "msg": "created", "data": data })))
        .into_response()
}

/// Errors at the HTTP edge. User errors are shown verbatim; internal ones are logged and shown
/// generically.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// Malformed JSON, wrong types, missing fields, invalid state.
    #[error("{msg}")]
    BadRequest {
        /// What is wrong, naming the field.
        msg: String,
        /// Details (e.g. validation issues).
        data: Value,
    },
    /// No valid credential (server token or session cookie).
    #[error("{0}")]
    Unauthorized(String),
    /// A request the access policy refuses: foreign `Host` or `Origin`, a cross-site write.
    #[error("{0}")]
    Forbidden(String),
    /// A write whose body is not `application/json`.
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// Unknown id or route.
    #[error("{0}")]
    NotFound(String),
    /// A route that exists, asked with a method it does not take (405).
    #[error("{0}")]
    MethodNotAllowed(String),
    /// Version conflict.
    #[error("{msg}")]
    Conflict {
        /// What conflicted.
        msg: String,
        /// `{expected, actual}`.
        data: Value,
    },
    /// A well-formed request whose work was refused: a tool call whose change was not made
    /// (the builder failed, the state broke a rule). `data` is the tool's own result.
    #[error("{msg}")]
    Unprocessable {
        /// Why it was refused.
        msg: String,
        /// The result, as the tool gave it.
        data: Value,
    },
    /// The resource is gone (deleted dashboard).
    #[error("{0}")]
    Gone(String),
    /// A body or stored object over its size limit (413).
    #[error("{msg}")]
    TooLarge {
        /// What is too large, and the limit.
        msg: String,
        /// `{bytes, limit}`.
        data: Value,
    },
    /// The store's quota is used up (507).
    #[error("{msg}")]
    InsufficientStorage {
        /// How full, and what to do.
        msg: String,
        /// `{used, needed, limit}`.
        data: Value,
    },
    /// Too many requests in progress for this server or client; retry later.
    #[error("{0}")]
    TooMany(String),
    /// A rate limit or budget ran out (429 with `Retry-After` when the wait is known).
    #[error("{msg}")]
    RateLimited {
        /// Which limit, and what to do.
        msg: String,
        /// How long to wait.
        retry_after: Option<std::time::Duration>,
    },
    /// An upstream (a model provider) failed or refused our request (502).
    #[error("{0}")]
    BadGateway(String),
    /// An upstream did not answer in time (504).
    #[error("{0}")]
    GatewayTimeout(String),
    /// A dependency is not available (no model configured, ...); the message says what to do.
    #[error("{0}")]
    Unavailable(String),
    /// Stored data failed its check on read: a 500 that says so (and what), since the
    /// analyst can act on it (revert to an earlier version, restore a backup).
    #[error("{0}")]
    Damaged(String),
    /// Something failed on our side: logged with its whole cause chain, answered as
    /// "internal error" (the details stay in the log).
    #[error("internal error")]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl ApiError {
    /// A 400 with a message only.
    pub fn bad(msg: impl Into<String>) -> Self {
        Self::BadRequest { msg: msg.into(), data: Value::Null }
    }

    /// A 500 for `cause`, kept whole so the log shows its chain.
    pub fn internal(cause: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self::Internal(cause.into())
    }
}

pub use base::text::causes;

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound(_) | StoreError::VersionNotFound { .. } => {
                Self::NotFound(e.to_string())
            }
            StoreError::Conflict { expected, actual } => Self::Conflict {
                msg: e.to_string(),
                data: json!({ "expected": expected, "actual": actual }),
            },
            StoreError::Deleted(_) => Self::Gone(e.to_string()),
            StoreError::NotDeleted(_) => Self::Conflict { msg: e.to_string(), data: Value::Null },
            StoreError::TooLarge { bytes, limit } => Self::TooLarge {
                msg: e.to_string(),
                data: json!({ "bytes": bytes, "limit": limit }),
            },
            StoreError::Full { used, needed, limit } => Self::InsufficientStorage {
                msg: e.to_string(),
                data: json!({ "used": used, "needed": needed, "limit": limit }),
            },
            StoreError::Damaged(_) => Self::Damaged(e.to_string()),
            StoreError::Closed | StoreError::Storage(_) => Self::internal(e),
        }
    }
}

impl From<ToolError> for ApiError {
    fn from(e: ToolError) -> Self {
        match e {
            ToolError::UnknownTool(_) => Self::NotFound(e.to_string()),
            ToolError::InvalidInput { .. } => Self::bad(e.to_string()),
            ToolError::Store(s) => s.into(),
            ToolError::Denied(d @ dashboards::sharing::Denied::Hidden(_)) => {
                Self::NotFound(d.to_string())
            }
            ToolError::Denied(d @ dashboards::sharing::Denied::ReadOnly(_)) => {
                Self::Forbidden(d.to_string())
            }
        }
    }
}

impl From<MemoryError> for ApiError {
    fn from(e: MemoryError) -> Self {
        match e {
            MemoryError::InvalidChatId(_) => Self::bad(e.to_string()),
            MemoryError::NotFound(_) => Self::NotFound(e.to_string()),
            MemoryError::Store(s) => s.into(),
            MemoryError::WrongChat { .. }
            | MemoryError::Config(_)
            | MemoryError::Encode(_)
            | MemoryError::Io { .. } => Self::internal(e),
        }
    }
}

impl From<agent::chats::ChatsError> for ApiError {
    fn from(e: agent::chats::ChatsError) -> Self {
        use agent::chats::ChatsError;
        match e {
            ChatsError::Memory(m) => m.into(),
            ChatsError::Store(s) => s.into(),
            ChatsError::BadTitle(_) => Self::bad(e.to_string()),
        }
    }
}

impl From<dashboards::drafts::DraftError> for ApiError {
    fn from(e: dashboards::drafts::DraftError) -> Self {
        use dashboards::drafts::DraftError;
        match e {
            DraftError::NoDraft(_) => Self::NotFound(e.to_string()),
            DraftError::UnknownPanel { .. } | DraftError::Invalid(_) => Self::bad(e.to_string()),
            DraftError::Store(s) => s.into(),
        }
    }
}

impl From<QueryError> for ApiError {
    fn from(e: QueryError) -> Self {
        match e {
            QueryError::Invalid(_) => Self::bad(e.to_string()),
            QueryError::Param { ref param, .. } => {
                Self::BadRequest { data: json!({ "param": param }), msg: e.to_string() }
            }
            QueryError::UnknownAgent(_) => Self::NotFound(e.to_string()),
            QueryError::Model { .. } => Self::Unavailable(e.to_string()),
            QueryError::Busy(_) => Self::TooMany(e.to_string()),
            QueryError::Resume(s) => match s {
                StreamError::BadEventId(_) => Self::bad(format!("`Last-Event-ID`: {s}")),
                StreamError::UnknownRun(_) => Self::NotFound(s.to_string()),
                StreamError::Evicted { .. } => Self::Gone(s.to_string()),
                StreamError::Unavailable(_) => Self::Unavailable(s.to_string()),
                StreamError::DuplicateRun(_) => Self::internal(s),
            },
        }
    }
}

/// A model provider's failure as seen by a client of Boardsmith: the client's own mistakes
/// (a request the provider rejects as invalid) stay 400; our configuration's (a refused key)
/// and the provider's (5xx, protocol, connection) are 502; waits that ran out 504; rate limits
/// 429 with the provider's `Retry-After`; a model that is not configured 404.
impl From<LlmError> for ApiError {
    fn from(e: LlmError) -> Self {
        let msg = e.to_string();
        match &e {
            LlmError::Config { .. } => Self::NotFound(msg),
            LlmError::Http { status: 429, retry_after, .. } => {
                Self::RateLimited { msg, retry_after: *retry_after }
            }
            LlmError::Api { error_type, .. } if error_type == "rate_limit_error" => {
                Self::RateLimited { msg, retry_after: None }
            }
            LlmError::Http { status: 404, .. } => Self::NotFound(msg),
            LlmError::Http { status: 400 | 413 | 422, .. } => Self::bad(msg),
            LlmError::Api { error_type, .. } if error_type == "invalid_request_error" => {
                Self::bad(msg)
            }
            LlmError::Timeout { .. } => Self::GatewayTimeout(msg),
            LlmError::Http { .. }
            | LlmError::Api { .. }
            | LlmError::Connection { .. }
            | LlmError::Protocol { .. } => Self::BadGateway(msg),
        }
    }
}

impl From<uploads::UploadError> for ApiError {
    fn from(e: uploads::UploadError) -> Self {
        use uploads::UploadError;
        let msg = e.to_string();
        match e {
            UploadError::TooLarge { limit } => {
                Self::TooLarge { msg, data: json!({ "limit": limit }) }
            }
            UploadError::UnsupportedType(_) | UploadError::Mismatch { .. } => {
                Self::UnsupportedMediaType(msg)
            }
            UploadError::NotFound(_) => Self::NotFound(msg),
            UploadError::InvalidId(_) => Self::bad(msg),
            UploadError::QuotaFull { used, needed, limit }
            | UploadError::ShareFull { used, needed, limit } => Self::InsufficientStorage {
                msg,
                data: json!({ "used": used, "needed": needed, "limit": limit }),
            },
            UploadError::NotYours(_) => Self::Forbidden(msg),
            UploadError::Io(_) => Self::internal(e),
        }
    }
}

impl From<workflow::WorkflowError> for ApiError {
    fn from(e: workflow::WorkflowError) -> Self {
        use workflow::WorkflowError;
        match e {
            WorkflowError::Invalid(ref issues) => {
                // The first problem's field is the `param`; `errors` lists them all.
                let param = issues.first().map(|i| match &i.node {
                    Some(node) => format!("nodes.{node}.{}", i.field),
                    None => i.field.clone(),
                });
                Self::BadRequest {
                    msg: e.to_string(),
                    data: json!({ "param": param, "errors": issues }),
                }
            }
            WorkflowError::NotFound(msg) => Self::NotFound(msg),
            WorkflowError::Conflict(msg) => Self::Conflict { msg, data: Value::Null },
            WorkflowError::Busy(msg) => Self::TooMany(msg),
            WorkflowError::Store(s) => s.into(),
            WorkflowError::Stream(s) => Self::internal(s),
        }
    }
}

impl From<knowledge::KnowledgeError> for ApiError {
    fn from(e: knowledge::KnowledgeError) -> Self {
        use knowledge::KnowledgeError;
        let msg = e.to_string();
        match e {
            KnowledgeError::Invalid { field, .. } => {
                Self::BadRequest { msg, data: json!({ "param": field }) }
            }
            KnowledgeError::NotFound(_) => Self::NotFound(msg),
            KnowledgeError::Conflict(_) => Self::Conflict { msg, data: Value::Null },
            KnowledgeError::TooLarge { limit, .. } => {
                Self::TooLarge { msg, data: json!({ "limit": limit }) }
            }
            KnowledgeError::Unsupported(_) => Self::UnsupportedMediaType(msg),
            KnowledgeError::ParserLimit { limit: knowledge::worker::ParseLimit::Busy, .. } => {
                Self::TooMany(msg)
            }
            KnowledgeError::ParserLimit { limit, .. } => {
                Self::TooLarge { msg, data: json!({ "parserLimit": limit }) }
            }
            KnowledgeError::Refused(_) => Self::Forbidden(msg),
            KnowledgeError::Fetch(_) => Self::BadGateway(msg),
            KnowledgeError::Embedding(inner) => match Self::from(inner) {
                // The model's own refusals are ours to fix, not the caller's.
                Self::BadRequest { msg, .. } | Self::NotFound(msg) => Self::BadGateway(msg),
                other => other,
            },
            KnowledgeError::Index(_) => Self::internal(e),
        }
    }
}

impl From<admin::AdminError> for ApiError {
    fn from(e: admin::AdminError) -> Self {
        use admin::AdminError;
        match e {
            AdminError::Invalid { field, message } => {
                Self::BadRequest { msg: message, data: serde_json::json!({ "param": field }) }
            }
            AdminError::NotFound(msg) => Self::NotFound(msg),
            AdminError::NotEditable(msg) => Self::Conflict { msg, data: Value::Null },
            AdminError::Seal(e) => Self::Conflict { msg: e.to_string(), data: Value::Null },
            AdminError::Store(s) => s.into(),
        }
    }
}

impl From<access::api_keys::KeyError> for ApiError {
    fn from(e: access::api_keys::KeyError) -> Self {
        use access::api_keys::KeyError;
        match e {
            KeyError::Invalid { field, message } => {
                Self::BadRequest { msg: message, data: serde_json::json!({ "param": field }) }
            }
            KeyError::NotFound(_) => Self::NotFound(e.to_string()),
            KeyError::Store(s) => s.into(),
        }
    }
}

impl From<access::users::UserError> for ApiError {
    fn from(e: access::users::UserError) -> Self {
        use access::users::UserError;
        match e {
            UserError::Invalid { field, message } => {
                Self::BadRequest { msg: message, data: serde_json::json!({ "param": field }) }
            }
            UserError::NotFound(_) => Self::NotFound(e.to_string()),
            UserError::Taken(_) | UserError::LastAdmin => {
                Self::Conflict { msg: e.to_string(), data: Value::Null }
            }
            UserError::Store(s) => s.into(),
        }
    }
}

impl From<access::links::LinkError> for ApiError {
    fn from(e: access::links::LinkError) -> Self {
        use access::links::LinkError;
        match e {
            LinkError::Invalid { field, message } => {
                Self::BadRequest { msg: message, data: serde_json::json!({ "param": field }) }
            }
            LinkError::Unknown => Self::NotFound(e.to_string()),
            LinkError::Expired => Self::Gone(e.to_string()),
            LinkError::TooMany => Self::Conflict { msg: e.to_string(), data: Value::Null },
            LinkError::Store(s) => s.into(),
        }
    }
}

impl From<SubmitError> for ApiError {
    fn from(e: SubmitError) -> Self {
        match e {
            SubmitError::UnknownRun(_) | SubmitError::UnknownTool { .. } => {
                Self::NotFound(e.to_string())
            }
            SubmitError::AlreadyWaiting { .. } => {
                Self::Conflict { msg: e.to_string(), data: Value::Null }
            }
            SubmitError::Busy(msg) => Self::TooMany(msg),
        }
    }
}

/// What an error becomes on the wire: status, message, details and the wait to ask for.
struct Parts {
    status: StatusCode,
    msg: String,
    data: Value,
    retry_after: Option<std::time::Duration>,
}

impl ApiError {
    /// The OpenAI `{error: {message, type, param, code}}` body alone, for an error that
    /// happens inside a stream already answered `200` (`/v1` chunks).
    pub fn openai_body(self) -> Value {
        let p = self.parts();
        json!({ "error": error_object(p.status, &p.msg, &p.data) })
    }

    fn parts(self) -> Parts {
        let mut retry_after = None;
        let (status, msg, data) = match self {
            Self::BadRequest { msg, data } => (StatusCode::BAD_REQUEST, msg, data),
            Self::Unauthorized(msg) => (StatusCode::UNAUTHORIZED, msg, Value::Null),
            Self::Forbidden(msg) => (StatusCode::FORBIDDEN, msg, Value::Null),
            Self::UnsupportedMediaType(msg) => {
                (StatusCode::UNSUPPORTED_MEDIA_TYPE, msg, Value::Null)
            }
            Self::NotFound(msg) => (StatusCode::NOT_FOUND, msg, Value::Null),
            Self::MethodNotAllowed(msg) => (StatusCode::METHOD_NOT_ALLOWED, msg, Value::Null),
            Self::Conflict { msg, data } => (StatusCode::CONFLICT, msg, data),
            Self::Gone(msg) => (StatusCode::GONE, msg, Value::Null),
            Self::Unprocessable { msg, data } => (StatusCode::UNPROCESSABLE_ENTITY, msg, data),
            Self::TooLarge { msg, data } => (StatusCode::PAYLOAD_TOO_LARGE, msg, data),
            Self::InsufficientStorage { msg, data } => {
                (StatusCode::INSUFFICIENT_STORAGE, msg, data)
            }
            Self::TooMany(msg) => (StatusCode::TOO_MANY_REQUESTS, msg, Value::Null),
            Self::RateLimited { msg, retry_after: wait } => {
                retry_after = wait;
                (StatusCode::TOO_MANY_REQUESTS, msg, Value::Null)
            }
            Self::BadGateway(msg) => (StatusCode::BAD_GATEWAY, msg, Value::Null),
            Self::GatewayTimeout(msg) => (StatusCode::GATEWAY_TIMEOUT, msg, Value::Null),
            Self::Unavailable(msg) => (StatusCode::SERVICE_UNAVAILABLE, msg, Value::Null),
            Self::Damaged(msg) => {
                tracing::error!(%msg, "damaged data in the store");
                (StatusCode::INTERNAL_SERVER_ERROR, msg, Value::Null)
            }
            Self::Internal(cause) => {
                tracing::error!(error = %causes(&*cause), "internal error");
                (StatusCode::INTERNAL_SERVER_ERROR, "internal error".to_owned(), Value::Null)
            }
        };
        Parts { status, msg, data, retry_after }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let Parts { status, msg, data, retry_after } = self.parts();
        let error = error_object(status, &msg, &data);
        let body = json!({ "code": status.as_u16(), "msg": msg, "data": data, "error": error });
        let mut response = (status, Json(body)).into_response();
        if let Some(wait) = retry_after {
            // Whole seconds, rounded up: a client that waits exactly this long is not early.
            let secs = wait.as_millis().div_ceil(1000).max(1);
            response.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from(u64::try_from(secs).unwrap_or(u64::MAX)),
            );
        }
        response
    }
}

/// The same error as OpenAI's `{message, type, param, code}` object, which every error body
/// carries beside the envelope so OpenAI clients of `/v1` (and anyone else) read it natively.
/// `param` and `code` come from `data.param` and `data.code` when a handler set them.
pub fn error_object(status: StatusCode, msg: &str, data: &Value) -> Value {
    let kind = match status.as_u16() {
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        409 => "conflict_error",
        429 => "rate_limit_error",
        400..=499 => "invalid_request_error",
        _ => "api_error",
    };
    let field = |name: &str| data.get(name).filter(|v| v.is_string()).cloned();
    json!({
        "message": msg,
        "type": kind,
        "param": field("param").unwrap_or(Value::Null),
        "code": field("code").unwrap_or(Value::Null),
    })
}

/// Parses a JSON body into `T`, naming the path of the first problem (`panels[2].type: ...`).
pub fn parse_body<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    if body.is_empty() {
        return Err(ApiError::bad("request body is empty; expected a JSON object"));
    }
    let de = &mut serde_json::Deserializer::from_slice(body);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if inner.is_syntax() || inner.is_eof() {
            ApiError::bad(format!("malformed JSON: {inner}"))
        } else if path == "." {
            ApiError::bad(format!("invalid request: {inner}"))
        } else {
            ApiError::bad(format!("invalid request at `{path}`: {inner}"))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_errors_log_their_cause_chain() {
        let source = std::io::Error::other("disk on fire");
        let e = MemoryError::Io { path: "/chats/c1".into(), source };
        let api = ApiError::from(e);
        let ApiError::Internal(cause) = &api else { panic!("{api:?}") };
        let text = causes(&**cause);
        assert!(text.starts_with("chat memory I/O on /chats/c1"), "{text}");
        assert!(text.ends_with("disk on fire"), "{text}");
        assert_eq!(api.to_string(), "internal error");
    }
}
