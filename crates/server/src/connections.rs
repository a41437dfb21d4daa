//! HTTP connections: the accept loop. It accepts TCP connections and serves each with hyper's HTTP/1.1
//! (upgrades for the WebSocket), with the bounds `axum::serve` does not set:
//!
//! - a **header-read timeout** (hyper needs a timer for it; `axum::serve` gives none): a
//!   connection that does not send a complete request head in time, first or next on a kept-alive
//!   connection, is closed, so idle or half-open sockets cannot pile up;
//! - a **body deadline**: a request body must arrive within `body_timeout` of its head, plus
//!   one second per `body_min_rate` bytes received (a large upload on a fair link finishes, a
//!   trickle does not); past it the request is answered `408` with the envelope and the
//!   connection is closed;
//! - a **connection cap** below the process's file-descriptor limit: past it, a new connection
//!   gets an immediate `503` envelope and is closed, instead of the accept loop failing on
//!   `EMFILE` while the store and the sandbox need descriptors too;
//! - each connection's **tag** on its requests, by which the guard counts what each credential
//!   holds (`shares`).
//!
//! Graceful shutdown: stop accepting, ask every connection to finish its request, wait.
//! Knows nothing of routes or the app: it serves a `Router` (`server` builds it).

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::http::{HeaderValue, Request, Response, StatusCode, header};
use hyper::body::{Body as _, Frame, Incoming, SizeHint};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::shares::{Connection, ConnectionTag, ShareLimits, Shares};

/// Connections refused with a 503 at once, at most; beyond that they are just closed.
const REFUSING_AT_ONCE: usize = 256;

/// Bounds of the HTTP layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerLimits {
    /// Open HTTP connections at most (`BOARDSMITH_MAX_CONNECTIONS`; default a quarter of the
    /// file-descriptor limit, between 256 and 16,384). A WebSocket leaves this count once
    /// upgraded (`ws` bounds those).
    pub max_connections: usize,
    /// Time allowed to receive a request head (`BOARDSMITH_HEADER_TIMEOUT_MS`, 10 s).
    pub header_read_timeout: Duration,
    /// Time allowed to receive a request body after its head (`BOARDSMITH_BODY_TIMEOUT_MS`,
    /// 30 s), extended by `body_min_rate`.
    pub body_timeout: Duration,
    /// Bytes per second a body may arrive at and still finish (`BOARDSMITH_BODY_MIN_RATE`,
    /// 64 KiB/s): each such amount received adds a second to the deadline.
    pub body_min_rate: u64,
    /// Connections one credential may hold (`BOARDSMITH_MAX_CONNECTIONS_PER_KEY`; default a
    /// quarter of `max_connections`).
    pub connections_per_credential: usize,
    /// Requests of one credential in flight at once (`BOARDSMITH_MAX_REQUESTS_PER_KEY`, 64).
    pub requests_per_credential: usize,
    /// MCP sessions per credential and in all, and their idle expiry (`BOARDSMITH_MCP_*`);
    /// `server::app` hands them to `/mcp`.
    pub mcp_sessions: mcp::SessionLimits,
}

impl Default for ServerLimits {
    fn default() -> Self {
        let fds = rlimit::getrlimit(rlimit::Resource::NOFILE).map_or(4096, |(soft, _)| soft);
        let quarter = usize::try_from(fds / 4).unwrap_or(usize::MAX);
        let max_connections = quarter.clamp(256, 16_384);
        Self {
            max_connections,
            header_read_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            body_min_rate: 64 * 1024,
            connections_per_credential: (max_connections / 4).max(1),
            requests_per_credential: 64,
            mcp_sessions: mcp::SessionLimits::default(),
        }
    }
}

impl ServerLimits {
    /// The defaults, overridden by `BOARDSMITH_MAX_CONNECTIONS`,
    /// `BOARDSMITH_HEADER_TIMEOUT_MS`, `BOARDSMITH_BODY_TIMEOUT_MS`, `BOARDSMITH_BODY_MIN_RATE`,
    /// `BOARDSMITH_MAX_CONNECTIONS_PER_KEY`, `BOARDSMITH_MAX_REQUESTS_PER_KEY` and the
    /// `BOARDSMITH_MCP_*` session bounds (zero is ignored).
    pub fn from_env() -> Self {
        let num = |k: &str| {
            std::env::var(k).ok().and_then(|v| v.trim().parse::<u64>().ok()).filter(|n| *n > 0)
        };
        let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        let mut limits = Self::default();
        if let Some(n) = num("BOARDSMITH_MAX_CONNECTIONS") {
            limits.max_connections = size(n);
            limits.connections_per_credential = (limits.max_connections / 4).max(1);
        }
        if let Some(ms) = num("BOARDSMITH_HEADER_TIMEOUT_MS") {
            limits.header_read_timeout = Duration::from_millis(ms);
        }
        if let Some(ms) = num("BOARDSMITH_BODY_TIMEOUT_MS") {
            limits.body_timeout = Duration::from_millis(ms);
        }
        if let Some(n) = num("BOARDSMITH_BODY_MIN_RATE") {
            limits.body_min_rate = n;
        }
        if let Some(n) = num("BOARDSMITH_MAX_CONNECTIONS_PER_KEY") {
            limits.connections_per_credential = size(n);
        }
        if let Some(n) = num("BOARDSMITH_MAX_REQUESTS_PER_KEY") {
            limits.requests_per_credential = size(n);
        }
        limits.mcp_sessions = mcp::SessionLimits::from_env();
        limits
    }

    /// The per-credential bounds; an eighth of the connection cap is never attributable.
    fn shares(&self) -> ShareLimits {
        ShareLimits {
            connections_per_credential: self.connections_per_credential.max(1),
            requests_per_credential: self.requests_per_credential.max(1),
            attributable: (self.max_connections - self.max_connections / 8).max(1),
        }
    }
}

/// Serves `router` on `listener` until `shutdown` completes, then lets every connection finish
/// its current request and waits for them.
#[base::boxed]
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ServerLimits,
    shutdown: futures::future::BoxFuture<'static, ()>,
) -> std::io::Result<()> {
    let permits = Arc::new(Semaphore::new(limits.max_connections));
    let shares = Shares::new(limits.shares());
    let body = BodyLimits { timeout: limits.body_timeout, min_rate: limits.body_min_rate };
    let refusing = Arc::new(Semaphore::new(REFUSING_AT_ONCE));
    let connections = TaskTracker::new();
    let closing = CancellationToken::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (tcp, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(e) => {
                    // EMFILE and friends: the condition passes as connections close.
                    tracing::warn!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // No Nagle: SSE frames and WebSocket messages are small separate writes that would
        // otherwise wait for the peer's delayed ACK (~40 ms on Linux).
        let _ = tcp.set_nodelay(true);
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            if let Ok(slot) = refusing.clone().try_acquire_owned() {
                tokio::spawn(refuse(tcp, slot));
            }
            continue;
        };
        let conn = Connection::new(shares.clone());
        let service = Tagged { router: TowerToHyperService::new(router.clone()), conn, body, peer };
        let closing = closing.clone();
        let header_read_timeout = limits.header_read_timeout;
        connections.spawn(async move {
            // Released when the connection ends, however it ends.
            let _release = Release(service.conn.clone());
            let mut builder = http1::Builder::new();
            builder.timer(TokioTimer::new()).header_read_timeout(header_read_timeout);
            let conn = builder.serve_connection(TokioIo::new(tcp), service).with_upgrades();
            let mut conn = std::pin::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                () = closing.cancelled() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
            drop(permit);
        });
    }
    closing.cancel();
    connections.close();
    connections.wait().await;
    Ok(())
}

/// Answers a connection over the cap with a 503 envelope and closes it. The request head is
/// read first (clients treat an answer before their request as a protocol error), at most for
/// half a second; after the answer, what else the client sent is drained briefly, so closing
/// with unread bytes does not reset the connection before the client has read the answer.
async fn refuse(mut tcp: TcpStream, _slot: OwnedSemaphorePermit) {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    let _ = tokio::time::timeout(Duration::from_millis(500), async {
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 64 * 1024 {
            match tcp.read(&mut buf).await {
                Ok(n) if n > 0 => head.extend_from_slice(&buf[..n]),
                _ => break,
            }
        }
    })
    .await;
    let body = r#"{"code":503,"msg":"too many open connections; try again shortly","data":null}"#;
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nretry-after: 1\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = tokio::time::timeout(Duration::from_millis(500), async {
        tcp.write_all(response.as_bytes()).await?;
        tcp.shutdown().await
    })
    .await;
    let _ = tokio::time::timeout(Duration::from_millis(100), async {
        while matches!(tcp.read(&mut buf).await, Ok(n) if n > 0) {}
    })
    .await;
}

/// Closes a connection's attribution when its task ends.
struct Release(Arc<Connection>);

impl Drop for Release {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// How long a request body may take.
#[derive(Debug, Clone, Copy)]
struct BodyLimits {
    timeout: Duration,
    min_rate: u64,
}

/// The router as one connection's hyper service: each request gets the connection's tag and
/// a body deadline; a request whose body missed it is answered `408` and the connection closed.
#[derive(Clone)]
struct Tagged {
    router: TowerToHyperService<Router>,
    conn: Arc<Connection>,
    body: BodyLimits,
    /// The client's address (sign-in limits and the audit trail read it as `ConnectInfo`).
    peer: std::net::SocketAddr,
}

impl hyper::service::Service<Request<Incoming>> for Tagged {
    type Response = Response<axum::body::Body>;
    type Error = std::convert::Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn call(&self, req: Request<Incoming>) -> Self::Future {
        let (mut parts, body) = req.into_parts();
        parts.extensions.insert(ConnectionTag(self.conn.clone()));
        parts.extensions.insert(axum::extract::ConnectInfo(self.peer));
        // Most requests have no body: nothing to time, nothing to allocate.
        let expired = (!body.is_end_stream()).then(|| Arc::new(AtomicBool::new(false)));
        let body = Deadline::new(body, self.body, expired.clone());
        let answer = self.router.call(Request::from_parts(parts, body));
        Box::pin(async move {
            let response = answer.await?;
            Ok(match expired {
                Some(flag) if flag.load(Ordering::Acquire) => body_timed_out(),
                _ => response,
            })
        })
    }
}

/// The `408` envelope for a body that missed its deadline; hyper closes the connection after
/// it (the rest of the body is not worth waiting for).
fn body_timed_out() -> Response<axum::body::Body> {
    let status = StatusCode::REQUEST_TIMEOUT;
    let msg = "the request body did not arrive in time; send it at a steady rate";
    let data = serde_json::Value::Null;
    let envelope = serde_json::json!({
        "code": status.as_u16(),
        "msg": msg,
        "data": data,
        "error": super::error::error_object(status, msg, &data),
    });
    let mut response = Response::new(axum::body::Body::from(envelope.to_string()));
    *response.status_mut() = status;
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    h.insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// Why a request body ended early.
#[derive(Debug, thiserror::Error)]
enum BodyError {
    /// It did not arrive in time.
    #[error("the request body did not arrive in time")]
    TimedOut,
    /// Reading it failed (the client went away, bad framing).
    #[error(transparent)]
    Read(#[from] hyper::Error),
}

/// A request body with a deadline: `timeout` after the head, plus a second per `min_rate`
/// bytes received. The timer exists only once the body is waited for.
struct Deadline {
    inner: Incoming,
    limits: BodyLimits,
    started: Instant,
    received: u64,
    timer: Option<Pin<Box<Sleep>>>,
    /// Set when the deadline passed (`None`: the body was empty from the start).
    expired: Option<Arc<AtomicBool>>,
}

impl Deadline {
    fn new(inner: Incoming, limits: BodyLimits, expired: Option<Arc<AtomicBool>>) -> Self {
        Self { inner, limits, started: Instant::now(), received: 0, timer: None, expired }
    }

    fn deadline(&self) -> Instant {
        let earned = if self.limits.min_rate == 0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(self.received as f64 / self.limits.min_rate as f64)
        };
        // A timeout from the environment may be absurdly large: never overflow the clock.
        let far = Duration::from_secs(30 * 365 * 86_400);
        let allowed = self.limits.timeout.saturating_add(earned).min(far);
        self.started + allowed
    }
}

impl hyper::body::Body for Deadline {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        let this = &mut *self;
        if this.expired.as_ref().is_some_and(|e| e.load(Ordering::Acquire)) {
            return Poll::Ready(Some(Err(BodyError::TimedOut)));
        }
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    this.received += data.len() as u64;
                }
                return Poll::Ready(Some(Ok(frame)));
            }
            Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e.into()))),
            Poll::Ready(None) => return Poll::Ready(None),
            Poll::Pending => {}
        }
        let deadline = this.deadline();
        let timer = this.timer.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if timer.deadline() != deadline {
            timer.as_mut().reset(deadline);
        }
        if timer.as_mut().poll(cx).is_ready() {
            if let Some(e) = &this.expired {
                e.store(true, Ordering::Release);
            }
            return Poll::Ready(Some(Err(BodyError::TimedOut)));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
