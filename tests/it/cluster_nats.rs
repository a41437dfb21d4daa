//! Panel results over NATS (`BOARDSMITH_NATS_URL`, the local NATS server at 127.0.0.1:4222 or
//! `BOARDSMITH_TEST_NATS`): the node refreshing a dashboard publishes each result on NATS,
//! the other node's subscribers get the same refreshes, and the database holds none of them.

use std::time::Duration;

use reqwest::Method;
use serde_json::json;

use crate::support::pg::TestDb;
use crate::support::ws_next;

const TOKEN: &str = "cluster-nats-test-token-0123456789";

fn nats_url() -> String {
    std::env::var("BOARDSMITH_TEST_NATS").unwrap_or_else(|_| "nats://127.0.0.1:4222".into())
}

/// The `refreshedAt` of every `panel.data` of `panel` within `window`.
async fn refreshes(ws: &mut crate::support::Ws, panel: &str, window: Duration) -> Vec<i64> {
    let until = tokio::time::Instant::now() + window;
    let mut out = Vec::new();
    while let Ok(m) = tokio::time::timeout_at(until, ws_next(ws)).await {
        if m["type"] == "panel.data" && m["panelId"] == panel {
            out.push(m["refreshedAt"].as_i64().unwrap());
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn panel_results_travel_over_nats_and_never_touch_the_database() {
    let db = TestDb::new().await;
    let env = [("BOARDSMITH_NATS_URL", nats_url())];
    let (_dirs, nodes) = crate::support::node::cluster(&db.url, 2, TOKEN, &env, |_| {}).await;
    let (a, b) = (&nodes[0], &nodes[1]);
    let state = json!({
        "title": "Ticking", "layout": {"columns": 12},
        "panels": [{"id": "p0", "title": "Value", "type": "metric_card", "renderer": "custom",
                    "refresh": "5s", "code": "return { value: Date.now() % 1000000 };"}]
    });
    let (status, body) = a.send(Method::POST, "/api/dashboards", json!({"state": state})).await;
    assert_eq!(status, 201, "{body}");
    let id = body["data"]["id"].as_str().unwrap().to_owned();
    let (mut on_a, _) = a.subscribe(&id).await;
    let (mut on_b, _) = b.subscribe(&id).await;
    // Past the subscribe-time runs (each node's own), only the lease holder refreshes.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let (ra, rb) = tokio::join!(
        refreshes(&mut on_a, "p0", Duration::from_millis(11_000)),
        refreshes(&mut on_b, "p0", Duration::from_millis(11_000))
    );
    assert!(ra.len() >= 2 && rb.len() >= 2, "too few refreshes: A {ra:?} B {rb:?}");
    let common = ra.iter().filter(|t| rb.contains(t)).count();
    assert!(common + 1 >= ra.len().max(rb.len()), "the same runs on both: A {ra:?} B {rb:?}");

    // None of them went through the database: the other node had them from NATS.
    let (client, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(conn);
    let stored: i64 =
        client.query_one("SELECT count(*) FROM panel_results", &[]).await.unwrap().get(0);
    assert_eq!(stored, 0);
    for node in [a, b] {
        assert_eq!(node.get("/readyz").await.0, 200, "ready with NATS connected");
    }
}

#[tokio::test]
async fn a_nats_url_without_a_shared_store_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let out = tokio::process::Command::new(crate::support::program())
        .arg("serve")
        .env_clear()
        .env("BOARDSMITH_OFFLINE", "1")
        .env("BOARDSMITH_ADDR", "127.0.0.1:0")
        .env("BOARDSMITH_TOKEN", TOKEN)
        .env("BOARDSMITH_DATA", dir.path().join("data"))
        .env("BOARDSMITH_NATS_URL", nats_url())
        .current_dir(dir.path())
        .output();
    let out = tokio::time::timeout(Duration::from_secs(30), out).await.unwrap().unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("set BOARDSMITH_DATABASE_URL too"), "{stderr}");
}
