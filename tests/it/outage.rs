//! Panels when their data provider fails (issue 38), against the real server with Binance
//! pointed at a loopback upstream through `BOARDSMITH_BINANCE_BASE_URL`: one that answers
//! recorded responses and is then stopped and restarted, one that accepts and never answers,
//! one that refuses. A provider's failure is told apart from the code's, names the provider
//! in one plain sentence, keeps the last good data (marked stale, with its age), and the
//! panel recovers alone when the provider answers again.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use boardsmith::sdk::SdkConfig;
use serde_json::{Value, json};

use crate::support::upstream::{Reply, Server};
use crate::support::{TestApp, asof, spawn_app_with, ws_until};

const KLINES: &str = "/api/v3/klines";

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR")))
        .unwrap()
}

/// The server with Binance (and every other provider) at `origin`, and nothing cached (only
/// `origin` is allowed out).
async fn app_with_binance_at(origin: &str, dir: Arc<tempfile::TempDir>) -> TestApp {
    let sdk = crate::support::sdk_at(origin);
    spawn_app_with(dir, false, move |c| c.sdk = sdk).await
}

/// A dashboard with a Binance panel and a demo panel.
async fn dashboard(app: &TestApp) -> String {
    let state = json!({
        "title": "Outage",
        "layout": {"columns": 2},
        "panels": [
            {"id": "btc", "title": "BTC", "type": "table", "renderer": "custom",
             "code": "return await sdk.crypto.getKline({ symbol: 'BTCUSDT', limit: 3 });"},
            {"id": "demo", "title": "Demo", "type": "table", "renderer": "custom",
             "code": "return [{ v: 1 }];"}
        ]
    });
    let (status, body) = app.post("/api/dashboards", json!({"state": state})).await;
    assert_eq!(status, 201, "{body}");
    body["data"]["id"].as_str().unwrap().to_owned()
}

/// `GET /api/sdk/health`, and its Binance row.
async fn binance_health(app: &TestApp) -> (Value, Value) {
    let (_, health) = app.get("/api/sdk/health").await;
    let rows = health["data"]["providers"].as_array().unwrap();
    let binance = rows.iter().find(|p| p["provider"] == "binance").cloned().unwrap();
    (health, binance)
}

fn is_for(m: &Value, panel: &str) -> bool {
    m["panelId"] == panel && (m["type"] == "panel.data" || m["type"] == "panel.error")
}

#[tokio::test]
async fn a_panel_keeps_its_last_good_data_while_its_provider_is_down_and_recovers_alone() {
    let srv = Server::start().await;
    srv.on(KLINES, vec![Reply::Body(200, fixture("binance_klines.json"))]);
    let app = app_with_binance_at(&srv.origin, Arc::new(tempfile::tempdir().unwrap())).await;
    let id = dashboard(&app).await;
    let (mut ws, _) = app.subscribe(&id).await;
    let (good, _) = ws_until(&mut ws, |m| is_for(m, "btc")).await;
    assert_eq!(good["type"], "panel.data", "{good}");
    assert!(good.get("stale").is_none(), "{good}");
    let fresh_data = good["data"].clone();
    assert_eq!(fresh_data.as_array().unwrap().len(), 3);

    // The provider goes away: the refresh keeps the data, marked stale with the reason.
    srv.stop();
    let (s, _) = app.post(&format!("/api/dashboards/{id}/refresh"), json!({})).await;
    assert_eq!(s, 200);
    let (stale, _) = ws_until(&mut ws, |m| is_for(m, "btc") && m.get("stale").is_some()).await;
    assert_eq!(stale["type"], "panel.data", "{stale}");
    assert_eq!(stale["data"], fresh_data, "the last good data, not invented");
    assert_eq!(stale["refreshedAt"], good["refreshedAt"], "its age is the data's");
    let reason = stale["stale"]["reason"].as_str().unwrap();
    assert_eq!(reason, "Binance cannot be reached", "{stale}");
    assert!(stale["stale"]["failingSince"].as_i64() >= good["refreshedAt"].as_i64());
    let error = &stale["error"];
    assert_eq!(error["kind"], "provider", "{error}");
    assert_eq!(error["outage"]["provider"], "binance");
    assert_eq!(error["outage"]["cause"], "unreachable");
    assert_eq!(error["outage"]["host"], "127.0.0.1");
    assert!(!error["outage"]["summary"].as_str().unwrap().contains("BOARDSMITH_"));
    assert!(error["outage"]["details"].as_str().unwrap().contains("/api/v3/klines"), "{error}");

    // REST says the same.
    let (_, data) = app.get(&format!("/api/dashboards/{id}/data")).await;
    let slot = &data["data"]["panels"]["btc"];
    assert_eq!(slot["status"], "stale", "{data}");
    assert_eq!(slot["data"], fresh_data);
    assert_eq!(slot["stale"]["reason"], reason);

    // Back: the panel recovers without anyone asking (it has no refresh schedule).
    let hits = srv.hits(KLINES);
    srv.restart().await;
    let (back, skipped) = tokio::time::timeout(
        Duration::from_secs(30),
        ws_until(&mut ws, |m| {
            is_for(m, "btc") && m["type"] == "panel.data" && m.get("stale").is_none()
        }),
    )
    .await
    .expect("recovery within 30 s");
    assert_eq!(back["data"], fresh_data);
    assert!(back["refreshedAt"].as_i64() > good["refreshedAt"].as_i64(), "fresh data: {back}");
    assert!(srv.hits(KLINES) > hits);
    assert!(skipped.iter().all(|m| m["type"] != "panel.error"), "{skipped:?}");
    let (_, data) = app.get(&format!("/api/dashboards/{id}/data")).await;
    assert_eq!(data["data"]["panels"]["btc"]["status"], "ok");

    // The health of the provider followed: degraded while down, live again now.
    let (health, binance) = binance_health(&app).await;
    assert_eq!(binance["status"], "live", "{binance}");
    assert!(binance["lastSuccessAt"].as_i64().is_some());
    assert_eq!(health["data"]["canChange"], true);
    app.stop().await;
}

#[tokio::test]
async fn a_hanging_provider_fails_as_not_answering_and_holds_no_other_panel() {
    let srv = Server::start().await;
    srv.on(KLINES, vec![Reply::Hang]);
    let app = app_with_binance_at(&srv.origin, Arc::new(tempfile::tempdir().unwrap())).await;
    let id = dashboard(&app).await;
    let (mut ws, _) = app.subscribe(&id).await;
    let (first, _) = ws_until(&mut ws, |m| is_for(m, "btc") || is_for(m, "demo")).await;
    // The demo panel does not wait for the hanging one.
    assert_eq!(
        (first["panelId"].as_str(), first["type"].as_str()),
        (Some("demo"), Some("panel.data"))
    );
    let (failed, _) = ws_until(&mut ws, |m| is_for(m, "btc")).await;
    assert_eq!(failed["type"], "panel.error", "nothing kept yet: {failed}");
    let error = &failed["error"];
    assert_eq!(error["kind"], "provider", "the provider's fault, not the code's: {error}");
    assert_eq!(error["outage"]["cause"], "timeout");
    assert_eq!(error["outage"]["summary"], "Binance is not answering");
    let message = error["message"].as_str().unwrap();
    assert!(!message.contains("endless loops"), "{message}");
    assert!(message.contains("not answering"), "{message}");
    app.stop().await;
}

#[tokio::test]
async fn a_refusing_provider_is_cut_off_and_then_fails_at_once() {
    // A port bound but never listening: connections to it are refused, and no other test's
    // server can take it meanwhile (a port bound and dropped could be, and answer).
    let held = tokio::net::TcpSocket::new_v4().unwrap();
    held.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let port = held.local_addr().unwrap().port();
    let origin = format!("http://127.0.0.1:{port}");
    let app = app_with_binance_at(&origin, Arc::new(tempfile::tempdir().unwrap())).await;
    let code = "return await sdk.crypto.getKline({ symbol: 'BTCUSDT', limit: 3 });";
    let mut last = Value::Null;
    // Each call tries three times; five calls open the breaker.
    for _ in 0..6 {
        let (_, body) = app.post("/api/panels/preview", json!({"code": code})).await;
        last = body;
    }
    let error = &last["data"]["error"];
    assert_eq!(error["kind"], "provider", "{last}");
    assert_eq!(error["outage"]["cause"], "unreachable");
    assert!(error["outage"]["retryInMs"].as_u64().unwrap() > 0, "breaker open: {error}");
    let (_, binance) = binance_health(&app).await;
    assert_eq!(binance["status"], "down", "{binance}");
    assert_eq!(binance["lastError"]["cause"], "unreachable");

    // An administrator lets demo data serve meanwhile: the panel draws, marked demo.
    let (s, body) = app.put("/api/sdk/fallback", json!({"fallback": true})).await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(body["data"]["fallback"], true);
    let (_, body) = app.post("/api/panels/preview", json!({"code": code})).await;
    assert!(body["data"]["error"].is_null(), "{body}");
    assert_eq!(body["data"]["provenance"][0]["demo"], true, "{body}");
    app.stop().await;
}

#[tokio::test]
async fn the_last_good_data_survives_a_restart_with_the_provider_down() {
    let srv = Server::start().await;
    srv.on(KLINES, vec![Reply::Body(200, fixture("binance_klines.json"))]);
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let app = app_with_binance_at(&srv.origin, dir.clone()).await;
    let id = dashboard(&app).await;
    let (mut ws, _) = app.subscribe(&id).await;
    let (good, _) = ws_until(&mut ws, |m| is_for(m, "btc")).await;
    assert_eq!(good["type"], "panel.data", "{good}");
    // Kept in the background: wait until the store has it before stopping.
    let started = std::time::Instant::now();
    while app.app.store_stats().last_good_bytes == 0 {
        assert!(started.elapsed() < Duration::from_secs(10), "never kept");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    drop(ws);
    app.stop().await;

    srv.stop();
    let app = app_with_binance_at(&srv.origin, dir).await;
    let (mut ws, _) = app.subscribe(&id).await;
    let (stale, _) = ws_until(&mut ws, |m| is_for(m, "btc")).await;
    assert_eq!(stale["type"], "panel.data", "kept data from the store: {stale}");
    assert_eq!(stale["data"], good["data"]);
    assert_eq!(stale["refreshedAt"], good["refreshedAt"]);
    assert_eq!(stale["stale"]["dataAt"], good["refreshedAt"]);
    assert_eq!(stale["error"]["outage"]["cause"], "unreachable");
    app.stop().await;
}

/// The log of a real `boardsmith serve` says once when a provider starts failing, once when it
/// is down and once when it answers again, whatever the number of failing calls.
#[tokio::test]
async fn the_log_says_once_per_change_of_a_providers_state() {
    let srv = Server::start().await;
    srv.on(KLINES, vec![Reply::Body(200, fixture("binance_klines.json"))]);
    let dir = tempfile::tempdir().unwrap();
    // Every provider at the upstream (the start-up check must not reach real hosts).
    let registry = boardsmith::sdk::Registry::embedded(&|_| true).unwrap();
    let mut env: Vec<(&str, String)> = vec![
        ("BOARDSMITH_OUTBOUND_ALLOW", srv.origin.trim_start_matches("http://").to_owned()),
        ("BOARDSMITH_SDK_CACHE_BYTES", "0".to_owned()),
        ("BOARDSMITH_OFFLINE", "0".to_owned()),
    ];
    let vars = boardsmith::sdk::provider::base_url_vars(&registry);
    env.extend(vars.iter().map(|v| (v.as_str(), srv.origin.clone())));
    let node = crate::support::node::Node::start(dir.path(), "outage-token-0123456789", &env).await;
    let code = "return await sdk.crypto.getKline({ symbol: 'BTCUSDT', limit: 3 });";
    let preview = || node.send(reqwest::Method::POST, "/api/panels/preview", json!({"code": code}));
    let (_, ok) = preview().await;
    assert_eq!(ok["data"]["status"], "ok", "{ok}");

    srv.stop();
    for _ in 0..2 {
        let (_, body) = preview().await;
        assert_eq!(body["data"]["error"]["kind"], "provider", "{body}");
    }
    srv.restart().await;
    let (_, ok) = preview().await;
    assert_eq!(ok["data"]["status"], "ok", "{ok}");
    srv.stop();
    for _ in 0..8 {
        let (_, body) = preview().await;
        assert_eq!(body["data"]["error"]["kind"], "provider", "{body}");
    }
    let log = std::fs::read_to_string(dir.path().join("server.log")).unwrap();
    let lines: Vec<&str> = log.lines().filter(|l| l.contains("data provider binance")).collect();
    let count = |s: &str| lines.iter().filter(|l| l.contains(s)).count();
    assert_eq!(count("binance failed"), 2, "{lines:#?}");
    assert_eq!(count("binance answers again"), 1, "{lines:#?}");
    assert_eq!(count("binance is down"), 1, "{lines:#?}");
    assert_eq!(lines.len(), 4, "one line per change of state, not per call: {lines:#?}");
}

/// A provider that is down is probed in the background each time its breaker lets a call
/// through, so its health comes back when it answers again, without a panel asking.
#[tokio::test]
async fn a_provider_that_is_down_is_probed_until_it_answers_again() {
    let srv = Server::start().await;
    srv.on(KLINES, vec![Reply::Body(200, fixture("binance_klines.json"))]);
    let config = SdkConfig {
        asof: Some(asof()),
        outbound_allow: vec![srv.origin.clone()],
        env: [("BOARDSMITH_BINANCE_BASE_URL".to_owned(), srv.origin.clone())].into(),
        cache_bytes: Some(0),
        breaker_cooldown: Some(Duration::from_millis(200)),
        ..SdkConfig::default()
    };
    let sdk = boardsmith::sdk::Sdk::shared(config).unwrap();
    let status = |sdk: &boardsmith::sdk::Sdk| {
        let report = serde_json::to_value(sdk.health()).unwrap();
        let rows = report["providers"].as_array().unwrap().clone();
        rows.into_iter().find(|p| p["provider"] == "binance").unwrap()["status"].clone()
    };
    srv.stop();
    let params = json!({"symbol": "BTCUSDT", "limit": 3});
    for _ in 0..5 {
        sdk.call("crypto", "getKline", params.clone()).await.unwrap_err();
    }
    assert_eq!(status(&sdk), "down");
    let hits = srv.hits(KLINES);
    srv.restart().await;
    let started = std::time::Instant::now();
    while status(&sdk) != "live" {
        assert!(started.elapsed() < Duration::from_secs(10), "still {}", status(&sdk));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(srv.hits(KLINES) > hits, "the probe reached it");
}
