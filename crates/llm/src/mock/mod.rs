//! A scripted mock upstream: replays script files as OpenAI-, Anthropic- and Ollama-shaped
//! streams on loopback, for the tests of every layer above and for `boardsmith mock-llm`.
//!
//! A [`Script`] is a list of [`Turn`]s. Each request is answered by the first turn whose
//! [`Match`] fits it and that is not used up (`times`). A turn is either rendered from
//! provider-neutral [`Step`]s (reasoning, text, tool calls split into fragments, usage) in the
//! dialect of the endpoint called, or sent as exact `raw` chunks (wire quirks). Pacing
//! (`delay_ms` per chunk) and [`Fault`]s (error status with `Retry-After`, malformed chunk,
//! truncated stream, stall) are per turn. Every request and the time each chunk was sent are
//! recorded for assertions.
//!
//! Endpoints: `POST /v1/chat/completions` (OpenAI), `POST /v1/messages` (Anthropic),
//! `POST /api/chat` (Ollama), `GET /v1/models`, `GET /api/tags` for health checks, and
//! deterministic embeddings at `POST /v1/embeddings` and `POST /api/embed` ([`embed`]).

mod anthropic;
pub mod embed;
mod ollama;
mod openai;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use bytes::Bytes;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A script that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The file cannot be read.
    #[error("{}: {source}", path.display())]
    Read {
        /// The script file.
        path: std::path::PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The JSON does not describe a script.
    #[error("{origin}: {path}: {source}")]
    Invalid {
        /// The file or `the built-in demo script`.
        origin: String,
        /// The JSON path of the first problem.
        path: String,
        /// What is wrong there.
        source: serde_json::Error,
    },
}

/// The text of [`MockLlm::demo`].
const DEMO_SCRIPT: &str = include_str!("../../../../tests/mock-llm/demo.json");

use super::types::{StopReason, Usage};

/// A script: the turns the mock can answer with.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// Turns, tried in order.
    pub turns: Vec<Turn>,
}

/// One scripted response.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// Which requests this turn answers (all when empty).
    #[serde(default, rename = "match")]
    pub when: Match,
    /// How many requests it answers before it is used up (unlimited when absent).
    #[serde(default)]
    pub times: Option<u32>,
    /// Pause before each chunk, in milliseconds.
    #[serde(default)]
    pub delay_ms: u64,
    /// The content, rendered in the dialect of the endpoint called.
    #[serde(default)]
    pub steps: Vec<Step>,
    /// Stop reason (default: `tool_use` when there are tool calls, else `end_turn`).
    #[serde(default)]
    pub stop: Option<StopReason>,
    /// Usage reported at the end.
    #[serde(default)]
    pub usage: Option<Usage>,
    /// Exact body chunks, sent instead of rendering `steps` (wire quirks).
    #[serde(default)]
    pub raw: Option<Vec<String>>,
    /// Content type for `raw` (default: the dialect's).
    #[serde(default)]
    pub content_type: Option<String>,
    /// A failure to inject.
    #[serde(default)]
    pub fault: Option<Fault>,
}

/// Conditions on a request; all given ones must hold.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Match {
    /// The last user message's text contains this.
    #[serde(default)]
    pub last_user_contains: Option<String>,
    /// Tool results are present after the last user message (or not).
    #[serde(default)]
    pub has_tool_results: Option<bool>,
    /// Some tool result after the last user message contains this.
    #[serde(default)]
    pub tool_result_contains: Option<String>,
    /// The requested model is this one.
    #[serde(default)]
    pub model: Option<String>,
    /// The endpoint's dialect is this one.
    #[serde(default)]
    pub dialect: Option<Dialect>,
    /// The last user message carries an image (or not), in its dialect's form (`image_url`
    /// part, `image` block, `images`).
    #[serde(default)]
    pub has_image: Option<bool>,
}

/// A piece of content.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Step {
    /// Reasoning, sent in pieces of `chunk` characters (whole when absent).
    Reasoning {
        /// The text.
        text: String,
        /// Characters per delta.
        #[serde(default)]
        chunk: Option<usize>,
        /// Anthropic signature (a fixed one is made up when absent).
        #[serde(default)]
        signature: Option<String>,
    },
    /// Answer text, in pieces of `chunk` characters.
    Text {
        /// The text.
        text: String,
        /// Characters per delta.
        #[serde(default)]
        chunk: Option<usize>,
    },
    /// A tool call; consecutive calls are parallel calls of one message.
    ToolCall {
        /// Call id (made up when absent; Ollama sends none).
        #[serde(default)]
        id: Option<String>,
        /// Tool name.
        name: String,
        /// Arguments: an object, or a string sent verbatim.
        #[serde(default)]
        arguments: Value,
        /// Number of argument fragments (1 when absent).
        #[serde(default)]
        fragments: Option<usize>,
    },
}

/// An injected failure.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Fault {
    /// Answer with this status (and `Retry-After` seconds) instead of a stream.
    Status {
        /// HTTP status.
        status: u16,
        /// `Retry-After` in seconds.
        #[serde(default)]
        retry_after: Option<f64>,
        /// Error message.
        #[serde(default)]
        message: Option<String>,
    },
    /// After `after` chunks, send a chunk that is not valid JSON.
    Malformed {
        /// Chunks before it.
        after: usize,
    },
    /// End the body after `after` chunks (no terminator).
    Truncate {
        /// Chunks sent.
        after: usize,
    },
    /// After `after` chunks, send nothing for `ms` milliseconds, then continue.
    Stall {
        /// Chunks before the stall.
        after: usize,
        /// Its length.
        ms: u64,
    },
}

/// The endpoint families.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    /// `/v1/chat/completions`.
    Openai,
    /// `/v1/messages`.
    Anthropic,
    /// `/api/chat`.
    Ollama,
}

/// A request the mock received.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// Endpoint dialect.
    pub dialect: Dialect,
    /// The JSON body.
    pub body: Value,
    /// The `authorization` or `x-api-key` header, if any.
    pub auth: Option<String>,
    /// Index of the turn that answered (None: no match).
    pub turn: Option<usize>,
}

/// A chunk the mock sent.
#[derive(Debug, Clone)]
pub struct Sent {
    /// Request number (0-based, in arrival order).
    pub request: usize,
    /// Chunk number within the response.
    pub index: usize,
    /// When it was handed to the connection.
    pub at: Instant,
}

#[derive(Debug, Default)]
struct Shared {
    script: Script,
    used: Vec<u32>,
    requests: Vec<Recorded>,
    sent: Vec<Sent>,
}

/// A running mock upstream.
#[derive(Debug, Clone)]
pub struct MockLlm {
    /// `127.0.0.1:port`.
    pub addr: std::net::SocketAddr,
    shared: Arc<Mutex<Shared>>,
    stop: Arc<tokio::sync::Notify>,
}

impl MockLlm {
    /// Starts the mock on `127.0.0.1:port` (0 = any free port).
    #[base::boxed]
    pub async fn start(script: Script, port: u16) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
        let addr = listener.local_addr()?;
        let used = vec![0; script.turns.len()];
        let shared = Arc::new(Mutex::new(Shared { script, used, ..Shared::default() }));
        let stop = Arc::new(tokio::sync::Notify::new());
        let app = Router::new()
            .route("/v1/chat/completions", post(|s, h, b| answer(s, h, b, Dialect::Openai)))
            .route("/v1/messages", post(|s, h, b| answer(s, h, b, Dialect::Anthropic)))
            .route("/api/chat", post(|s, h, b| answer(s, h, b, Dialect::Ollama)))
            .route("/v1/embeddings", post(embed::openai))
            .route("/api/embed", post(embed::ollama))
            .route(
                "/v1/models",
                get(|| async {
                    axum::Json(
                        json!({"object": "list", "data": [{"id": "mock", "object": "model"}]}),
                    )
                }),
            )
            .route("/api/tags", get(|| async { axum::Json(json!({"models": [{"name": "mock"}]})) }))
            .with_state(shared.clone());
        let stopped = stop.clone();
        tokio::spawn(async move {
            // No Nagle, like real providers' streams: chunks are small separate writes.
            let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
                let _ = tcp.set_nodelay(true);
            });
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async move { stopped.notified().await })
                .await;
        });
        Ok(Self { addr, shared, stop })
    }

    /// Loads a script file (JSON).
    pub fn load(path: &std::path::Path) -> Result<Script, ScriptError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| ScriptError::Read { path: path.to_owned(), source })?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses a script's JSON; errors name `origin` and the JSON path.
    pub fn parse(text: &str, origin: &str) -> Result<Script, ScriptError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(de).map_err(|e| ScriptError::Invalid {
            origin: origin.to_owned(),
            path: e.path().to_string(),
            source: e.into_inner(),
        })
    }

    /// The built-in offline demo (`boardsmith mock-llm --demo`, `tests/mock-llm/demo.json`):
    /// "Build me a gold dashboard" searches the registry, builds a dashboard with one broken
    /// panel, fixes it from the test run's error and answers; "Add a gold news feed" edits it.
    pub fn demo() -> Result<Script, ScriptError> {
        Self::parse(DEMO_SCRIPT, "the built-in demo script")
    }

    /// `http://127.0.0.1:port`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The requests received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.lock().requests.clone()
    }

    /// The chunks sent so far.
    pub fn sent(&self) -> Vec<Sent> {
        self.lock().sent.clone()
    }

    /// Replaces the script (and resets the use counts).
    pub fn set_script(&self, script: Script) {
        let mut s = self.lock();
        s.used = vec![0; script.turns.len()];
        s.script = script;
    }

    /// Stops accepting connections (open streams finish).
    pub fn stop(&self) {
        self.stop.notify_one();
    }
}

fn last_user_and_results(dialect: Dialect, body: &Value) -> (String, Vec<String>) {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let text_of = |content: &Value| -> String {
        match content {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts
                .iter()
                .filter(|p| p["type"] == "text")
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join(""),
            _ => String::new(),
        }
    };
    let mut last_user = String::new();
    let mut results = Vec::new();
    for m in &messages {
        let role = m["role"].as_str().unwrap_or_default();
        let is_anthropic_results = dialect == Dialect::Anthropic
            && m["content"]
                .as_array()
                .is_some_and(|p| p.iter().any(|b| b["type"] == "tool_result"));
        if role == "tool" {
            results.push(text_of(&m["content"]));
        } else if is_anthropic_results {
            for b in
                m["content"].as_array().into_iter().flatten().filter(|b| b["type"] == "tool_result")
            {
                results.push(match &b["content"] {
                    Value::String(s) => s.clone(),
                    other => text_of(other),
                });
            }
        } else if role == "user" {
            last_user = text_of(&m["content"]);
            results.clear();
        }
    }
    (last_user, results)
}

impl Match {
    fn fits(&self, dialect: Dialect, body: &Value) -> bool {
        let (last_user, results) = last_user_and_results(dialect, body);
        self.dialect.is_none_or(|d| d == dialect)
            && self.model.as_ref().is_none_or(|m| body["model"] == m.as_str())
            && self.last_user_contains.as_ref().is_none_or(|s| last_user.contains(s.as_str()))
            && self.has_tool_results.is_none_or(|h| h != results.is_empty())
            && self
                .tool_result_contains
                .as_ref()
                .is_none_or(|s| results.iter().any(|r| r.contains(s.as_str())))
            && self.has_image.is_none_or(|h| h == last_user_has_image(body))
    }
}

/// Whether the last user message that is not only tool results carries an image.
fn last_user_has_image(body: &Value) -> bool {
    let messages = body["messages"].as_array().map(Vec::as_slice).unwrap_or_default();
    let is_image = |p: &Value| p["type"] == "image_url" || p["type"] == "image";
    messages
        .iter()
        .rev()
        .filter(|m| m["role"] == "user")
        .find(|m| {
            !m["content"].as_array().is_some_and(|p| p.iter().all(|b| b["type"] == "tool_result"))
        })
        .is_some_and(|m| {
            m["images"].as_array().is_some_and(|i| !i.is_empty())
                || m["content"].as_array().is_some_and(|p| p.iter().any(is_image))
        })
}

/// Splits `text` into pieces of `size` characters (one piece when `size` is absent or 0).
pub(crate) fn pieces(text: &str, size: Option<usize>) -> Vec<String> {
    let size = size.unwrap_or(0);
    if size == 0 || text.is_empty() {
        return vec![text.to_owned()];
    }
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

/// Splits `text` into `n` nearly equal pieces (by characters).
pub(crate) fn fragments(text: &str, n: Option<usize>) -> Vec<String> {
    let n = n.unwrap_or(1).max(1);
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    let size = chars.len().div_ceil(n);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

/// A tool call's arguments as the text to stream.
pub(crate) fn arguments_text(arguments: &Value) -> String {
    match arguments {
        Value::String(s) => s.clone(),
        Value::Null => "{}".to_owned(),
        other => other.to_string(),
    }
}

impl Turn {
    /// The stop reason: explicit, or from the steps.
    pub(crate) fn stop_reason(&self) -> StopReason {
        self.stop.unwrap_or(if self.steps.iter().any(|s| matches!(s, Step::ToolCall { .. })) {
            StopReason::ToolUse
        } else {
            StopReason::EndTurn
        })
    }
}

fn error_body(dialect: Dialect, status: u16, message: &str) -> String {
    let kind = match status {
        429 => "rate_limit_error",
        529 => "overloaded_error",
        400 => "invalid_request_error",
        401 => "authentication_error",
        _ => "api_error",
    };
    match dialect {
        Dialect::Anthropic => json!({"type": "error", "error": {"type": kind, "message": message}}),
        Dialect::Openai => json!({"error": {"message": message, "type": kind, "code": null}}),
        Dialect::Ollama => json!({"error": message}),
    }
    .to_string()
}

async fn answer(
    State(shared): State<Arc<Mutex<Shared>>>,
    headers: axum::http::HeaderMap,
    body: Bytes,
    dialect: Dialect,
) -> Response {
    let auth = ["authorization", "x-api-key"]
        .iter()
        .find_map(|h| headers.get(*h).and_then(|v| v.to_str().ok()).map(str::to_owned));
    fn lock(shared: &Mutex<Shared>) -> std::sync::MutexGuard<'_, Shared> {
        shared.lock().unwrap_or_else(|p| p.into_inner())
    }
    let body: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            let msg = format!("mock: the request body is not JSON: {e}");
            return (StatusCode::BAD_REQUEST, error_body(dialect, 400, &msg)).into_response();
        }
    };
    let (request, turn) = {
        let mut s = lock(&shared);
        let found = s.script.turns.iter().enumerate().position(|(i, t)| {
            t.times.is_none_or(|n| s.used[i] < n) && t.when.fits(dialect, &body)
        });
        if let Some(i) = found {
            s.used[i] += 1;
        }
        let turn = found.map(|i| s.script.turns[i].clone());
        s.requests.push(Recorded { dialect, body: body.clone(), auth, turn: found });
        (s.requests.len() - 1, turn)
    };
    let Some(turn) = turn else {
        let (last_user, _) = last_user_and_results(dialect, &body);
        let msg = format!(
            "mock: no scripted turn matches this request (last user message: {last_user:?})"
        );
        return (StatusCode::INTERNAL_SERVER_ERROR, error_body(dialect, 500, &msg)).into_response();
    };
    if let Some(Fault::Status { status, retry_after, message }) = &turn.fault {
        let code = StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let msg = message.clone().unwrap_or_else(|| format!("mock fault {status}"));
        let mut resp = (code, error_body(dialect, *status, &msg)).into_response();
        if let Some(ra) = retry_after
            && let Ok(v) = HeaderValue::from_str(&ra.to_string())
        {
            resp.headers_mut().insert("retry-after", v);
        }
        resp.headers_mut().insert("content-type", HeaderValue::from_static("application/json"));
        return resp;
    }
    let model = body["model"].as_str().unwrap_or("mock").to_owned();
    let chunks: Vec<Bytes> = match &turn.raw {
        Some(raw) => raw.iter().map(|c| Bytes::from(c.clone())).collect(),
        None => match dialect {
            Dialect::Openai => openai::render(&turn, &model, &body),
            Dialect::Anthropic => anthropic::render(&turn, &model),
            Dialect::Ollama => ollama::render(&turn, &model),
        },
    };
    let content_type = turn.content_type.clone().unwrap_or_else(|| {
        match dialect {
            Dialect::Ollama => "application/x-ndjson",
            _ => "text/event-stream",
        }
        .to_owned()
    });
    let malformed: Bytes = match dialect {
        Dialect::Ollama => Bytes::from_static(b"{\"message\": {\"content\": \n"),
        _ => Bytes::from_static(b"data: {\"choices\": [{\"delta\": \n\n"),
    };
    let delay = Duration::from_millis(turn.delay_ms);
    let fault = turn.fault.clone();
    let stream = async_stream::stream! {
        for (index, chunk) in chunks.into_iter().enumerate() {
            match &fault {
                Some(Fault::Truncate { after }) if index == *after => break,
                Some(Fault::Malformed { after }) if index == *after => {
                    yield Ok::<Bytes, std::convert::Infallible>(malformed.clone());
                }
                Some(Fault::Stall { after, ms }) if index == *after => {
                    tokio::time::sleep(Duration::from_millis(*ms)).await;
                }
                _ => {}
            }
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            lock(&shared).sent.push(Sent { request, index, at: Instant::now() });
            yield Ok(chunk);
        }
    };
    let mut resp = Response::new(Body::from_stream(stream));
    if let Ok(v) = HeaderValue::from_str(&content_type) {
        resp.headers_mut().insert("content-type", v);
    }
    resp
}
