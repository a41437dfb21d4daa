//! MCP sessions at `/mcp` over real HTTP, as a pre-2026 client keeps them: a credential past
//! its cap loses its least recently used session (404, which the SDKs answer by initializing
//! again), the total cap takes from the heaviest credential, a session is only its maker's,
//! and sessions nobody uses expire.

use std::sync::Arc;
use std::time::Duration;

use boardsmith::mcp::SessionLimits;
use boardsmith::server::connections::ServerLimits;
use serde_json::{Value, json};

use crate::support::{TestApp, authed_client, spawn_app_with_limits};

/// The protocol version that keeps sessions.
const VERSION: &str = "2025-06-18";

async fn app(per_credential: usize, total: usize, idle: Duration) -> TestApp {
    let limits = ServerLimits {
        mcp_sessions: SessionLimits { per_credential, total, idle },
        ..ServerLimits::default()
    };
    spawn_app_with_limits(Arc::new(tempfile::tempdir().unwrap()), false, |_| {}, limits).await
}

async fn key(app: &TestApp) -> reqwest::Client {
    let (status, body) = app.post("/api/keys", json!({"name": "k", "scopes": ["read"]})).await;
    assert_eq!(status, 201, "{body}");
    authed_client(body["data"]["key"].as_str().unwrap())
}

/// POSTs a JSON-RPC message to `/mcp` (in `session`, if given); returns the status, the
/// session id the server named and the body.
async fn post(
    app: &TestApp,
    client: &reqwest::Client,
    session: Option<&str>,
    msg: Value,
) -> (u16, Option<String>, String) {
    let mut req = client
        .post(app.url("/mcp"))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", VERSION)
        .json(&msg);
    if let Some(s) = session {
        req = req.header("mcp-session-id", s);
    }
    let r = req.send().await.unwrap();
    let status = r.status().as_u16();
    let id = r.headers().get("mcp-session-id").map(|v| v.to_str().unwrap().to_owned());
    (status, id, r.text().await.unwrap())
}

/// Initializes a session and says so; returns its id.
async fn session(app: &TestApp, client: &reqwest::Client) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": {},
        "clientInfo": {"name": "sessions-test", "version": "1"}}});
    let (status, id, body) = post(app, client, None, init).await;
    assert_eq!(status, 200, "{body}");
    let id = id.expect("a session id");
    let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, _, body) = post(app, client, Some(&id), done).await;
    assert_eq!(status, 202, "{body}");
    id
}

/// The status of a `ping` in `session`.
async fn ping(app: &TestApp, client: &reqwest::Client, session: &str) -> u16 {
    let (status, _, _) =
        post(app, client, Some(session), json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}))
            .await;
    status
}

#[tokio::test]
async fn sessions_are_capped_per_credential_and_in_all_and_belong_to_their_maker() {
    let app = app(3, 4, Duration::from_secs(600)).await;
    let a = key(&app).await;
    let b = key(&app).await;
    let mut of_a = Vec::new();
    for _ in 0..3 {
        of_a.push(session(&app, &a).await);
    }
    // a0 is used again: a1 is now a's least recently used session.
    assert_eq!(ping(&app, &a, &of_a[0]).await, 200);
    let a3 = session(&app, &a).await;
    assert_eq!(ping(&app, &a, &of_a[1]).await, 404, "a's least recently used was closed");
    for s in [&of_a[0], &of_a[2], &a3] {
        assert_eq!(ping(&app, &a, s).await, 200);
    }

    // Another credential cannot use a's session (nor close it).
    assert_eq!(ping(&app, &b, &of_a[0]).await, 404);
    let r = b
        .delete(app.url("/mcp"))
        .header("mcp-session-id", &of_a[0])
        .header("mcp-protocol-version", VERSION)
        .send()
        .await
        .unwrap();
    assert!(r.status().as_u16() < 500, "{}", r.status());
    assert_eq!(ping(&app, &a, &of_a[0]).await, 200, "b's DELETE closed nothing");

    // The total cap (4) takes from the heaviest credential, its least recently used first.
    let b0 = session(&app, &b).await;
    let owner = session(&app, &app.http).await;
    assert_eq!(ping(&app, &a, &of_a[2]).await, 404, "a2 made room for the owner's");
    let b1 = session(&app, &b).await;
    assert_eq!(ping(&app, &a, &a3).await, 404, "a3 made room for b1");
    for (client, s) in [(&b, &b0), (&b, &b1), (&app.http, &owner), (&a, &of_a[0])] {
        assert_eq!(ping(&app, client, s).await, 200);
    }
    // An evicted client initializes again and carries on; now b is the heaviest and pays.
    let again = session(&app, &a).await;
    assert_eq!(ping(&app, &a, &again).await, 200);
    assert_eq!(ping(&app, &b, &b0).await, 404, "b0 made room for a's new one");
    assert_eq!(ping(&app, &b, &b1).await, 200);
    app.stop().await;
}

#[tokio::test]
async fn sessions_nobody_uses_expire() {
    let app = app(64, 1024, Duration::from_millis(800)).await;
    let a = key(&app).await;
    let kept = session(&app, &a).await;
    let left = session(&app, &a).await;
    // `kept` is used every 300 ms; `left` is not.
    for _ in 0..6 {
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(ping(&app, &a, &kept).await, 200);
    }
    assert_eq!(ping(&app, &a, &left).await, 404, "the idle session expired");
    assert_eq!(ping(&app, &a, &kept).await, 200);
    app.stop().await;
}
