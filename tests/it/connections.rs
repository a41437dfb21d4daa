//! The HTTP layer's bounds from the outside, over raw TCP: a connection that never finishes its
//! request head is closed at the header-read timeout (idle, half-open, trickling, kept-alive),
//! and connections past the cap get a 503 envelope at once while `/healthz` comes back as soon
//! as slots free up. A flood of idle sockets never exhausts the server.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use crate::support::{TestApp, spawn_app_with};

async fn app_with(max_connections: usize, header_ms: u64) -> TestApp {
    spawn_app_with(Arc::new(tempfile::tempdir().unwrap()), false, |c| {
        c.server = boardsmith::server::connections::ServerLimits {
            max_connections,
            header_read_timeout: Duration::from_millis(header_ms),
        };
    })
    .await
}

/// Reads until the server closes the connection; returns what it sent and when it closed
/// (since `t0`).
async fn until_closed(tcp: &mut TcpStream, t0: Instant, within: Duration) -> (String, Duration) {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout(within.saturating_sub(t0.elapsed()), tcp.read(&mut buf)).await {
            Ok(Ok(0) | Err(_)) => {
                return (String::from_utf8_lossy(&out).into_owned(), t0.elapsed());
            }
            Ok(Ok(n)) => out.extend_from_slice(&buf[..n]),
            Err(_) => {
                panic!("still open after {within:?}; got {:?}", String::from_utf8_lossy(&out))
            }
        }
    }
}

fn get(path: &str, host: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n")
}

#[tokio::test]
async fn connections_that_never_finish_a_request_head_are_closed() {
    let app = app_with(256, 400).await;
    let host = app.addr.to_string();
    let t0 = Instant::now();

    // Idle from the start.
    let mut idle = TcpStream::connect(app.addr).await.unwrap();
    // Half a request head, then nothing.
    let mut half = TcpStream::connect(app.addr).await.unwrap();
    half.write_all(b"GET /healthz HTTP/1.1\r\nHost: ").await.unwrap();
    // A trickle: one byte every 100 ms never completes in time.
    let mut trickle = TcpStream::connect(app.addr).await.unwrap();
    let trickler = tokio::spawn(async move {
        for b in get("/healthz", "x").bytes().take(30) {
            if trickle.write_all(&[b]).await.is_err() {
                return trickle;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        trickle
    });
    // Kept alive after one answered request, then silent.
    let mut kept = TcpStream::connect(app.addr).await.unwrap();
    kept.write_all(get("/healthz", &host).as_bytes()).await.unwrap();

    for (name, tcp) in [("idle", &mut idle), ("half", &mut half), ("kept-alive", &mut kept)] {
        let (_, after) = until_closed(tcp, t0, Duration::from_secs(5)).await;
        assert!(after >= Duration::from_millis(300), "{name} closed after {after:?}");
    }
    let mut trickle = trickler.await.unwrap();
    let (sent, _) = until_closed(&mut trickle, t0, Duration::from_secs(5)).await;
    assert!(!sent.contains("200 OK"), "{sent}");

    // An honest request on a fresh connection is served.
    let mut ok = TcpStream::connect(app.addr).await.unwrap();
    ok.write_all(get("/healthz", &host).as_bytes()).await.unwrap();
    let mut buf = [0u8; 1024];
    let n = ok.read(&mut buf).await.unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
    app.stop().await;
}

#[tokio::test]
async fn past_the_cap_connections_get_503_and_the_server_recovers() {
    let app = app_with(16, 3000).await;
    let host = app.addr.to_string();
    // A flood of idle sockets: far more than the cap.
    let mut flood = Vec::new();
    for _ in 0..400 {
        flood.push(TcpStream::connect(app.addr).await.unwrap());
    }
    // Let the refusals of the flood's own surplus finish (they wait 500 ms for a request
    // head that never comes, 256 at once; the rest are closed at once).
    tokio::time::sleep(Duration::from_millis(1000)).await;
    // New requests are answered at once with the envelope, not left hanging.
    let t0 = Instant::now();
    let r = reqwest::get(app.url("/healthz")).await.unwrap();
    assert_eq!(r.status(), 503);
    assert_eq!(r.headers()["retry-after"], "1");
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["code"], 503);
    assert!(body["msg"].as_str().unwrap().contains("too many open connections"), "{body}");
    assert!(t0.elapsed() < Duration::from_secs(1), "{:?}", t0.elapsed());

    // The idle ones time out; /healthz answers again without closing anything ourselves.
    let t0 = Instant::now();
    loop {
        let mut tcp = TcpStream::connect(app.addr).await.unwrap();
        tcp.write_all(get("/healthz", &host).as_bytes()).await.unwrap();
        let mut buf = [0u8; 512];
        let n = tcp.read(&mut buf).await.unwrap_or(0);
        if String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200") {
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(8), "the server did not recover");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        t0.elapsed() >= Duration::from_millis(500),
        "recovered at once: the cap was not reached"
    );
    drop(flood);
    let (s, _) = app.get("/api/dashboards").await;
    assert_eq!(s, 200);
    app.stop().await;
}
