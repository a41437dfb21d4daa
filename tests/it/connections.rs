//! The HTTP layer's bounds from the outside, over raw TCP: a connection that never finishes its
//! request head is closed at the header-read timeout (idle, half-open, trickling, kept-alive),
//! and connections past the cap get a 503 envelope at once while `/healthz` comes back as soon
//! as slots free up. A flood of idle sockets never exhausts the server. A request body that
//! trickles is answered 408 at its deadline and its connection closed; one credential holding
//! its share of connections and requests in flight (slow bodies) gets 429s while another
//! credential, the owner and `/healthz` are served.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use boardsmith::server::connections::ServerLimits;
use serde_json::json;

use crate::support::{TestApp, authed_client, spawn_app_with_limits};

async fn app_with(max_connections: usize, header_ms: u64) -> TestApp {
    app_with_limits(ServerLimits {
        max_connections,
        header_read_timeout: Duration::from_millis(header_ms),
        ..ServerLimits::default()
    })
    .await
}

async fn app_with_limits(limits: ServerLimits) -> TestApp {
    spawn_app_with_limits(Arc::new(tempfile::tempdir().unwrap()), false, |_| {}, limits).await
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

/// The head of a JSON POST to `path` announcing a `len`-byte body, with `token` as its
/// credential.
fn post_head(path: &str, host: &str, token: &str, len: usize) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {len}\r\n\r\n"
    )
}

/// Sends `head`, then a JSON body one byte every `every`, while reading what the server
/// answers (at once, so a reset after the server's close loses nothing); returns the answer
/// and when the server closed the connection, since the start. Gives up after 20 s.
fn trickle(
    tcp: TcpStream,
    head: String,
    every: Duration,
) -> tokio::task::JoinHandle<(String, Duration)> {
    tokio::spawn(async move {
        let t0 = Instant::now();
        let (mut rd, mut wr) = tcp.into_split();
        let writer = async move {
            if wr.write_all(head.as_bytes()).await.is_ok() {
                for b in b"{\"name\": \"".iter().chain(std::iter::repeat(&b'x')) {
                    tokio::time::sleep(every).await;
                    if wr.write_all(&[*b]).await.is_err() {
                        break;
                    }
                }
            }
            // Keep the write half open: the server decides when this ends.
            std::future::pending::<()>().await;
        };
        let reader = async move {
            let mut out = Vec::new();
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = rd.read(&mut buf).await {
                out.extend_from_slice(&buf[..n]);
            }
            (String::from_utf8_lossy(&out).into_owned(), t0.elapsed())
        };
        tokio::select! {
            answer = reader => answer,
            () = writer => unreachable!(),
            () = tokio::time::sleep(Duration::from_secs(20)) => panic!("still open after 20 s"),
        }
    })
}

/// A new API key with `scopes`, made by the owner.
async fn key(app: &TestApp, scopes: serde_json::Value) -> String {
    let (status, body) = app.post("/api/keys", json!({"name": "k", "scopes": scopes})).await;
    assert_eq!(status, 201, "{body}");
    body["data"]["key"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_trickled_body_gets_408_at_its_deadline_and_the_connection_is_closed() {
    let app = app_with_limits(ServerLimits {
        body_timeout: Duration::from_millis(800),
        ..ServerLimits::default()
    })
    .await;
    let host = app.addr.to_string();
    let tcp = TcpStream::connect(app.addr).await.unwrap();
    // One byte every 100 ms of a 10,000-byte body: never done in time.
    let head = post_head("/api/dashboards", &host, app.token(), 10_000);
    let (answer, after) = trickle(tcp, head, Duration::from_millis(100)).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.to_ascii_lowercase().contains("connection: close"), "{answer}");
    let body = &answer[answer.find("\r\n\r\n").unwrap() + 4..];
    let body: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(body["code"], 408, "{body}");
    assert!(body["msg"].as_str().unwrap().contains("did not arrive in time"), "{body}");
    assert!(after >= Duration::from_millis(700) && after < Duration::from_secs(5), "{after:?}");

    // A body sent at once is served as before.
    let (status, body) = app.post("/api/dashboards", json!({"template": "gold"})).await;
    assert!(status == 200 || status == 201, "{status} {body}");
    app.stop().await;
}

#[tokio::test]
async fn one_credential_cannot_hold_everyones_connections_or_requests() {
    let app = app_with_limits(ServerLimits {
        max_connections: 64,
        body_timeout: Duration::from_secs(3),
        connections_per_credential: 8,
        requests_per_credential: 4,
        ..ServerLimits::default()
    })
    .await;
    let host = app.addr.to_string();
    let hog = key(&app, json!(["read", "write"])).await;
    let other = key(&app, json!(["read", "write"])).await;

    // The hog opens 20 connections, each a POST whose body trickles.
    let mut held = Vec::new();
    for _ in 0..20 {
        let tcp = TcpStream::connect(app.addr).await.unwrap();
        let head = post_head("/api/dashboards", &host, &hog, 1000);
        held.push(trickle(tcp, head, Duration::from_millis(200)));
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;

    // Meanwhile everyone else is served at once.
    let t0 = Instant::now();
    let r = reqwest::get(app.url("/healthz")).await.unwrap();
    assert_eq!(r.status(), 200);
    let (status, _) = app.get("/api/dashboards").await;
    assert_eq!(status, 200, "the owner");
    let r = authed_client(&other).get(app.url("/api/dashboards")).send().await.unwrap();
    assert_eq!(r.status(), 200, "another key");
    let r = authed_client(&other)
        .post(app.url("/api/dashboards"))
        .json(&json!({"template": "gold"}))
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "another key writes: {}", r.status());
    assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());

    // The hog itself is refused past its share: 429 with Retry-After.
    let r = authed_client(&hog).get(app.url("/api/dashboards")).send().await.unwrap();
    assert_eq!(r.status(), 429);
    assert_eq!(r.headers()["retry-after"], "1");
    let body: serde_json::Value = r.json().await.unwrap();
    assert!(body["msg"].as_str().unwrap().contains("this credential already"), "{body}");

    // Of the hog's 20 connections, 4 were in flight until their body deadline; the others got
    // a 429 at once (in flight past 4, or connections past 8) and were closed.
    let mut answers = Vec::new();
    for h in held {
        let (answer, _) = h.await.unwrap();
        answers.push(answer.lines().next().unwrap_or("").to_owned());
    }
    let count = |prefix: &str| answers.iter().filter(|a| a.starts_with(prefix)).count();
    assert_eq!(count("HTTP/1.1 408"), 4, "{answers:?}");
    assert_eq!(count("HTTP/1.1 429"), 16, "{answers:?}");

    // Once they are gone the hog is served again.
    let r = authed_client(&hog).get(app.url("/api/dashboards")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    app.stop().await;
}
