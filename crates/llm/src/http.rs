//! The HTTP side shared by all providers: one `reqwest` client with connect, first-byte and idle
//! timeouts; retries with jittered backoff (honouring `Retry-After`) *before the first byte
//! only*; SSE decoding (`eventsource-stream`: CRLF and UTF-8 split across chunks are handled);
//! NDJSON lines; and the interaction log (every request and delta at debug, secrets masked).

use std::time::Duration;

use backon::BackoffBuilder;
use bytes::Bytes;
use futures::stream::BoxStream;
use futures::{Stream, StreamExt, TryStreamExt};
use serde_json::Value;

use super::error::{LlmError, TimeoutStage};

/// The log target of the interaction log (`RUST_LOG=boardsmith::llm::interaction=debug`).
pub const LOG_TARGET: &str = "boardsmith::llm::interaction";

/// How long each wait may take.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    /// TCP/TLS connect.
    pub connect: Duration,
    /// From sending the request to the first byte of the body.
    pub first_byte: Duration,
    /// Between two chunks of a stream.
    pub idle: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(10),
            first_byte: Duration::from_secs(120),
            idle: Duration::from_secs(90),
        }
    }
}

/// Retries of a call that failed before its first byte.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Attempts after the first.
    pub max_retries: usize,
    /// First backoff delay (then doubling, jittered).
    pub min_delay: Duration,
    /// Longest wait, also the cap on a provider's `Retry-After`.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 3,
            min_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
        }
    }
}

/// The interaction-log switches (`agent.llm.interaction-log.*`).
#[derive(Debug, Clone, Copy)]
pub struct InteractionLog {
    /// Log requests and deltas at debug.
    pub enabled: bool,
    /// Mask `authorization`, `apiKey`, `token`, `secret`, `password` values.
    pub mask_sensitive: bool,
}

impl Default for InteractionLog {
    fn default() -> Self {
        Self { enabled: true, mask_sensitive: true }
    }
}

/// Everything a provider needs to talk HTTP.
#[derive(Debug, Clone)]
pub struct Transport {
    client: reqwest::Client,
    /// Timeouts.
    pub timeouts: Timeouts,
    /// Retry policy.
    pub retry: RetryPolicy,
    /// Interaction log switches.
    pub log: InteractionLog,
}

/// The body of a successful streaming response, chunk by chunk (idle timeout applied).
pub type ByteStream = BoxStream<'static, Result<Bytes, LlmError>>;

/// One server-sent event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// `event:` field (`message` when absent).
    pub event: String,
    /// `data:` field (lines joined by `\n`).
    pub data: String,
}

impl Transport {
    /// A transport with these settings.
    pub fn new(timeouts: Timeouts, retry: RetryPolicy, log: InteractionLog) -> Self {
        let client = reqwest::Client::builder()
            .connect_timeout(timeouts.connect)
            .tcp_nodelay(true)
            .build()
            .unwrap_or_default();
        Self { client, timeouts, retry, log }
    }

    /// Logs one streamed item (a raw SSE data field or NDJSON line) when the log is on.
    pub fn log_delta(&self, provider: &str, trace_id: &str, data: &str) {
        if self.log.enabled {
            tracing::debug!(target: LOG_TARGET, trace_id, provider, stage = "delta", data);
        }
    }

    /// GETs a URL and returns the JSON body (health checks, model lists).
    #[base::boxed]
    pub async fn get_json(
        &self,
        provider: &str,
        url: &str,
        headers: &[(&str, String)],
    ) -> Result<Value, LlmError> {
        let mut req = self.client.get(url).timeout(self.timeouts.first_byte);
        for (k, v) in headers {
            req = req.header(*k, v);
        }
        let resp = req.send().await.map_err(|e| send_error(provider, &e, self.timeouts))?;
        let status = resp.status();
        if !status.is_success() {
            return Err(status_error(provider, resp).await);
        }
        resp.json().await.map_err(|e| LlmError::Protocol {
            provider: provider.to_owned(),
            message: format!("the response is not JSON: {e}"),
        })
    }

    /// POSTs a JSON body and returns the response body as a stream once its first byte has
    /// arrived. Retryable failures up to that point are retried with jittered exponential
    /// backoff, waiting at least the provider's `Retry-After`; after the first byte nothing is
    /// ever re-sent.
    #[base::boxed]
    pub async fn post_stream(
        &self,
        provider: &str,
        url: &str,
        headers: &[(&str, String)],
        body: &Value,
        trace_id: &str,
    ) -> Result<ByteStream, LlmError> {
        if self.log.enabled {
            let shown = if self.log.mask_sensitive { mask(body) } else { body.clone() };
            tracing::debug!(target: LOG_TARGET, trace_id, provider, stage = "request", url, body = %shown);
        }
        let mut delays = backon::ExponentialBuilder::default()
            .with_min_delay(self.retry.min_delay)
            .with_max_delay(self.retry.max_delay)
            .with_max_times(self.retry.max_retries)
            .with_jitter()
            .build();
        let mut attempt = 0;
        loop {
            attempt += 1;
            let err = match self.attempt(provider, url, headers, body).await {
                Ok(stream) => return Ok(stream),
                Err(e) => e,
            };
            let Some(delay) = delays.next().filter(|_| err.is_retryable()) else {
                if self.log.enabled {
                    tracing::debug!(target: LOG_TARGET, trace_id, provider, stage = "failed", attempt, error = %err);
                }
                return Err(err);
            };
            let delay =
                err.retry_after().map_or(delay, |ra| ra.max(delay)).min(self.retry.max_delay);
            tracing::warn!(target: LOG_TARGET, trace_id, provider, attempt, error = %err, "retrying in {delay:?}");
            tokio::time::sleep(delay).await;
        }
    }

    /// POSTs a JSON body and returns the JSON response (embeddings), at most `max_bytes`
    /// long, with the same retries and first-byte timeout as [`Self::post_stream`] and the
    /// idle timeout between chunks.
    #[base::boxed]
    pub async fn post_json(
        &self,
        provider: &str,
        url: &str,
        headers: &[(&str, String)],
        body: &Value,
        max_bytes: usize,
    ) -> Result<Value, LlmError> {
        let mut stream = self.post_stream(provider, url, headers, body, "").await?;
        let mut buf = Vec::new();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk?;
            if buf.len() + chunk.len() > max_bytes {
                return Err(LlmError::Protocol {
                    provider: provider.to_owned(),
                    message: format!("the response is larger than {max_bytes} bytes"),
                });
            }
            buf.extend_from_slice(&chunk);
        }
        serde_json::from_slice(&buf).map_err(|e| LlmError::Protocol {
            provider: provider.to_owned(),
            message: format!("the response is not JSON: {e}"),
        })
    }

    async fn attempt(
        &self,
        provider: &str,
        url: &str,
        headers: &[(&str, String)],
        body: &Value,
    ) -> Result<ByteStream, LlmError> {
        let timeouts = self.timeouts;
        let first = async {
            let mut req = self.client.post(url).json(body);
            for (k, v) in headers {
                req = req.header(*k, v);
            }
            let resp = req.send().await.map_err(|e| send_error(provider, &e, timeouts))?;
            if !resp.status().is_success() {
                return Err(status_error(provider, resp).await);
            }
            let mut bytes = resp.bytes_stream();
            match bytes.next().await {
                Some(Ok(chunk)) => Ok((chunk, bytes)),
                Some(Err(e)) => Err(send_error(provider, &e, timeouts)),
                None => Err(LlmError::Protocol {
                    provider: provider.to_owned(),
                    message: "the response body is empty".into(),
                }),
            }
        };
        let (chunk, rest) = tokio::time::timeout(timeouts.first_byte, first)
            .await
            .map_err(|_| timeout(provider, TimeoutStage::FirstByte, timeouts.first_byte))??;
        let provider = provider.to_owned();
        let rest = async_stream::stream! {
            yield Ok(chunk);
            let mut rest = rest;
            // One timer for the whole stream, pushed back on every chunk: moving a deadline
            // later is a store in tokio's timer (no wheel insert, no lock, no driver wake-up),
            // where a fresh `timeout` per chunk registered and cancelled a wheel entry each time.
            let idle = tokio::time::sleep(timeouts.idle);
            tokio::pin!(idle);
            loop {
                let next = tokio::select! {
                    biased;
                    next = rest.next() => next,
                    () = &mut idle => {
                        yield Err(timeout(&provider, TimeoutStage::Idle, timeouts.idle));
                        break;
                    }
                };
                match next {
                    None => break,
                    Some(Ok(b)) => {
                        idle.as_mut().reset(tokio::time::Instant::now() + timeouts.idle);
                        yield Ok(b);
                    }
                    Some(Err(e)) => {
                        yield Err(LlmError::Connection { provider: provider.clone(), message: e.to_string() });
                        break;
                    }
                }
            }
        };
        Ok(rest.boxed())
    }
}

impl Default for Transport {
    fn default() -> Self {
        Self::new(Timeouts::default(), RetryPolicy::default(), InteractionLog::default())
    }
}

fn timeout(provider: &str, stage: TimeoutStage, after: Duration) -> LlmError {
    LlmError::Timeout {
        provider: provider.to_owned(),
        stage,
        after_ms: u64::try_from(after.as_millis()).unwrap_or(u64::MAX),
    }
}

fn send_error(provider: &str, e: &reqwest::Error, timeouts: Timeouts) -> LlmError {
    if e.is_timeout() {
        let stage = if e.is_connect() { TimeoutStage::Connect } else { TimeoutStage::FirstByte };
        let after = if e.is_connect() { timeouts.connect } else { timeouts.first_byte };
        return timeout(provider, stage, after);
    }
    // The source chain says what actually failed (refused, reset, DNS).
    let mut message = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        message = format!("{message}: {s}");
        source = s.source();
    }
    LlmError::Connection { provider: provider.to_owned(), message }
}

/// Longest error body read from a failed response.
const MAX_ERROR_BODY: usize = 16 * 1024;

async fn status_error(provider: &str, resp: reqwest::Response) -> LlmError {
    let status = resp.status().as_u16();
    let retry_after = resp
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64);
    let body = resp.bytes().await.unwrap_or_default();
    let body = String::from_utf8_lossy(&body[..body.len().min(MAX_ERROR_BODY)]).into_owned();
    LlmError::Http {
        provider: provider.to_owned(),
        status,
        message: error_message(&body),
        retry_after,
    }
}

/// The provider's message inside an error body: `error.message` (OpenAI, Anthropic),
/// `error` as a string (Ollama), `message`, or the body itself.
pub fn error_message(body: &str) -> String {
    let Ok(v) = serde_json::from_str::<Value>(body) else {
        return body.trim().chars().take(500).collect();
    };
    let found = v["error"]["message"]
        .as_str()
        .or_else(|| v["error"].as_str())
        .or_else(|| v["message"].as_str())
        .or_else(|| v["msg"].as_str());
    found.map_or_else(|| body.trim().chars().take(500).collect(), str::to_owned)
}

/// Decodes a byte stream as server-sent events.
pub fn sse(
    provider: &str,
    bytes: ByteStream,
) -> impl Stream<Item = Result<SseEvent, LlmError>> + Send + 'static {
    use eventsource_stream::{EventStreamError, Eventsource};
    let provider = provider.to_owned();
    bytes.eventsource().map(move |r| match r {
        Ok(e) => Ok(SseEvent { event: e.event, data: e.data }),
        Err(EventStreamError::Transport(e)) => Err(e),
        Err(e) => Err(LlmError::Protocol { provider: provider.clone(), message: e.to_string() }),
    })
}

/// Decodes a byte stream as newline-delimited JSON lines (blank lines skipped).
pub fn ndjson(
    provider: &str,
    bytes: ByteStream,
) -> impl Stream<Item = Result<String, LlmError>> + Send + 'static {
    use tokio_util::codec::{FramedRead, LinesCodec, LinesCodecError};
    let provider = provider.to_owned();
    let reader = tokio_util::io::StreamReader::new(bytes.map_err(std::io::Error::other));
    FramedRead::new(reader, LinesCodec::new_with_max_length(16 * 1024 * 1024))
        .try_filter(|line| futures::future::ready(!line.trim().is_empty()))
        .map(move |r| {
            r.map_err(|e| match e {
                LinesCodecError::Io(io) => {
                    match io.get_ref().and_then(|i| i.downcast_ref::<LlmError>()) {
                        Some(inner) => inner.clone(),
                        None => LlmError::Protocol {
                            provider: provider.clone(),
                            message: io.to_string(),
                        },
                    }
                }
                LinesCodecError::MaxLineLengthExceeded => LlmError::Protocol {
                    provider: provider.clone(),
                    message: "an NDJSON line is longer than 16 MiB".into(),
                },
            })
        })
}

/// A copy of `v` with the values of sensitive keys (`authorization`, `apiKey`, `token`,
/// `secret`, `password`, and keys ending in those) replaced by `***`.
pub fn mask(v: &Value) -> Value {
    fn sensitive(key: &str) -> bool {
        let k: String =
            key.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).collect();
        ["authorization", "apikey", "token", "secret", "password"].iter().any(|s| k.ends_with(s))
    }
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let v = if sensitive(k) && !v.is_object() && !v.is_array() {
                        Value::String("***".into())
                    } else {
                        mask(v)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(mask).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn masking_hides_secrets_and_keeps_token_counts() {
        let body = json!({
            "model": "m",
            "max_tokens": 100,
            "api_key": "sk-1",
            "headers": {"Authorization": "Bearer sk-2", "X-Api-Key": "k"},
            "nested": [{"password": "p", "access_token": "t", "client_secret": "s"}],
            "thinking": {"budget_tokens": 2048}
        });
        let m = mask(&body);
        let text = m.to_string();
        for secret in ["sk-1", "sk-2", "\"k\"", "\"p\"", "\"t\"", "\"s\""] {
            assert!(!text.contains(secret), "{secret} leaked: {text}");
        }
        assert_eq!(m["max_tokens"], 100);
        assert_eq!(m["thinking"]["budget_tokens"], 2048);
    }

    #[test]
    fn provider_messages_are_found_in_error_bodies() {
        assert_eq!(error_message(r#"{"error":{"message":"bad key","type":"x"}}"#), "bad key");
        assert_eq!(error_message(r#"{"error":"model not found"}"#), "model not found");
        assert_eq!(error_message("upstream exploded"), "upstream exploded");
    }

    fn chunks(parts: &[&[u8]]) -> ByteStream {
        let items: Vec<Result<Bytes, LlmError>> =
            parts.iter().map(|p| Ok(Bytes::copy_from_slice(p))).collect();
        futures::stream::iter(items).boxed()
    }

    #[tokio::test]
    async fn sse_handles_crlf_and_utf8_split_across_chunks() {
        let text = "data: {\"t\":\"金价\"}\r\n\r\n".as_bytes();
        let split_utf8: Vec<&[u8]> = vec![&text[..13], &text[13..]];
        let got: Vec<_> = sse("p", chunks(&split_utf8)).collect().await;
        assert_eq!(
            got,
            [Ok(SseEvent { event: "message".into(), data: "{\"t\":\"金价\"}".into() })]
        );
        let crlf: Vec<&[u8]> = vec![b"data: a\r", b"\n\r", b"\ndata:b\r\n\r\n"];
        let got: Vec<String> = sse("p", chunks(&crlf)).map(|e| e.unwrap().data).collect().await;
        assert_eq!(got, ["a", "b"]);
    }

    #[tokio::test]
    async fn ndjson_splits_lines_across_chunks() {
        let parts: Vec<&[u8]> = vec![b"{\"a\":\"\xe9", b"\x87\x91\"}\n\n{\"b\"", b":2}\n"];
        let got: Vec<String> = ndjson("p", chunks(&parts)).map(Result::unwrap).collect().await;
        assert_eq!(got, ["{\"a\":\"金\"}", "{\"b\":2}"]);
    }
}
