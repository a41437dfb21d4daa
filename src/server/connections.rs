//! HTTP connections: the accept loop. It accepts TCP connections and serves each with hyper's HTTP/1.1
//! (upgrades for the WebSocket), with the bounds `axum::serve` does not set:
//!
//! - a **header-read timeout** (hyper needs a timer for it; `axum::serve` gives none): a
//!   connection that does not send a complete request head in time, first or next on a kept-alive
//!   connection, is closed, so idle or half-open sockets cannot pile up;
//! - a **connection cap** below the process's file-descriptor limit: past it, a new connection
//!   gets an immediate `503` envelope and is closed, instead of the accept loop failing on
//!   `EMFILE` while the store and the sandbox need descriptors too.
//!
//! Graceful shutdown: stop accepting, ask every connection to finish its request, wait.
//! Knows nothing of routes or the app: it serves a `Router` (`server` builds it).

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

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
}

impl Default for ServerLimits {
    fn default() -> Self {
        let fds = rlimit::getrlimit(rlimit::Resource::NOFILE).map_or(4096, |(soft, _)| soft);
        let quarter = usize::try_from(fds / 4).unwrap_or(usize::MAX);
        Self {
            max_connections: quarter.clamp(256, 16_384),
            header_read_timeout: Duration::from_secs(10),
        }
    }
}

impl ServerLimits {
    /// The defaults, overridden by `BOARDSMITH_MAX_CONNECTIONS` and
    /// `BOARDSMITH_HEADER_TIMEOUT_MS`.
    pub fn from_env() -> Self {
        let num = |k: &str| std::env::var(k).ok().and_then(|v| v.trim().parse::<u64>().ok());
        let mut limits = Self::default();
        if let Some(n) = num("BOARDSMITH_MAX_CONNECTIONS").filter(|n| *n > 0) {
            limits.max_connections = usize::try_from(n).unwrap_or(usize::MAX);
        }
        if let Some(ms) = num("BOARDSMITH_HEADER_TIMEOUT_MS").filter(|ms| *ms > 0) {
            limits.header_read_timeout = Duration::from_millis(ms);
        }
        limits
    }
}

/// Serves `router` on `listener` until `shutdown` completes, then lets every connection finish
/// its current request and waits for them.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ServerLimits,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let permits = Arc::new(Semaphore::new(limits.max_connections));
    let refusing = Arc::new(Semaphore::new(REFUSING_AT_ONCE));
    let connections = TaskTracker::new();
    let closing = CancellationToken::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let tcp = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
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
        let service = TowerToHyperService::new(router.clone());
        let closing = closing.clone();
        let header_read_timeout = limits.header_read_timeout;
        connections.spawn(async move {
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
