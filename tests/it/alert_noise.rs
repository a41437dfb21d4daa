//! Alert noise (issue 41): a silence records without sending and channels hear the state in
//! force when it ends; a flapping rule says so once, then records only until it settles.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use serde_json::{Value, json};

use crate::alerts::{TICKER, alerts_until, app_at_with, notifications, state, ticker};
use crate::support::TestApp;
use crate::support::upstream::{Reply, Server};

/// A dashboard whose rule `btc-high` (above 70k) notifies the webhook `desk` at `/hook`.
async fn watched(app: &TestApp, srv: &Server) -> String {
    srv.on("/hook", vec![Reply::Body(200, "{}".into())]);
    let url = format!("{}/hook", srv.origin);
    let (s, made) =
        app.post("/api/channels", json!({"name": "desk", "type": "webhook", "url": url})).await;
    assert_eq!(s, 201, "{made}");
    let doc = state(json!([{"id": "btc-high", "name": "BTC above 70k", "panelId": "btc",
                             "when": {"op": ">", "value": 70000}, "notify": ["desk"]}]));
    let (s, body) = app.post("/api/dashboards", json!({"state": doc})).await;
    assert_eq!(s, 201, "{body}");
    alerts_until(app, "a first judgement", |a| a["evaluatedAt"].as_i64() > Some(0)).await;
    body["data"]["id"].as_str().unwrap().to_owned()
}

/// The webhook's bodies once there are `n` (10 s at most).
async fn posts(srv: &Server, n: usize) -> Vec<Value> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let got: Vec<Value> =
            srv.posts("/hook").iter().map(|(_, b)| serde_json::from_str(b).unwrap()).collect();
        if got.len() >= n {
            return got;
        }
        assert!(tokio::time::Instant::now() < deadline, "{} of {n} posts: {got:#?}", got.len());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_silence_records_without_sending_and_channels_hear_the_state_when_it_ends() {
    let srv = Server::start().await;
    srv.on(TICKER, vec![ticker(69_000.0)]);
    let app = app_at_with(&srv.origin, |_| {}).await;
    let id = watched(&app, &srv).await;

    // Bad silences are named.
    let (s, bad) = app
        .post("/api/silences", json!({"dashboardId": id, "ruleId": "nope", "duration": "1h"}))
        .await;
    assert_eq!(s, 400, "{bad}");
    assert!(bad["msg"].as_str().unwrap().contains("btc-high"), "lists the rules: {bad}");
    let (s, bad) = app.post("/api/silences", json!({"dashboardId": id, "duration": "soon"})).await;
    assert_eq!(s, 400, "{bad}");
    let (s, made) = app
        .post(
            "/api/silences",
            json!({"dashboardId": id, "ruleId": "btc-high", "duration": "1h", "comment": "FOMC"}),
        )
        .await;
    assert_eq!(s, 201, "{made}");
    let silence = made["data"]["id"].as_str().unwrap().to_owned();

    srv.on(TICKER, vec![ticker(71_000.0)]);
    alerts_until(&app, "firing", |a| a["status"] == "firing").await;
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert!(srv.posts("/hook").is_empty(), "silenced");
    let n = notifications(&app).await;
    assert_eq!(n[0]["status"], "firing", "{n:#?}");
    assert_eq!(n[0]["muted"], "silenced");
    assert_eq!(n[0]["silence"], silence.as_str());
    assert_eq!(n[0]["deliveries"], json!([]));

    // The silence ends while the rule still fires: channels hear it now.
    let r = app.http.delete(app.url(&format!("/api/silences/{silence}"))).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let got = posts(&srv, 1).await;
    assert_eq!(
        (got[0]["status"].as_str(), got[0]["reason"].as_str()),
        (Some("firing"), Some("settled"))
    );
    let (_, listed) = app.get("/api/silences").await;
    assert!(listed["data"][0]["endsAt"].as_i64() <= Some(chrono::Utc::now().timestamp_millis()));

    srv.on(TICKER, vec![ticker(68_000.0)]);
    let got = posts(&srv, 2).await;
    assert_eq!(
        (got[1]["status"].as_str(), got[1]["reason"].as_str()),
        (Some("resolved"), Some("change"))
    );
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert_eq!(srv.posts("/hook").len(), 2, "nothing more");
    app.stop().await;
}

#[tokio::test]
async fn a_flapping_rule_says_so_once_then_records_until_it_settles() {
    let srv = Server::start().await;
    srv.on(TICKER, vec![ticker(69_000.0)]);
    let app = app_at_with(&srv.origin, |c| {
        c.alerting.noise.flap_limit = 2;
        c.alerting.noise.flap_window = Duration::from_secs(60);
        c.alerting.noise.settle = Duration::from_secs(2);
    })
    .await;
    watched(&app, &srv).await;

    // Up, down, up: the third change within a minute is the flapping notice.
    for (price, status) in [(71_000.0, "firing"), (69_000.0, "ok"), (71_000.0, "firing")] {
        srv.on(TICKER, vec![ticker(price)]);
        alerts_until(&app, status, |a| a["status"] == status).await;
    }
    let got = posts(&srv, 3).await;
    let seen: Vec<(&str, &str)> = got
        .iter()
        .map(|b| (b["status"].as_str().unwrap(), b["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(seen, [("firing", "change"), ("resolved", "change"), ("firing", "flapping")]);
    assert!(got[2]["message"].as_str().unwrap().contains("flapping"), "{}", got[2]);

    // Down again while flapping: recorded, not sent.
    srv.on(TICKER, vec![ticker(69_000.0)]);
    alerts_until(&app, "ok", |a| a["status"] == "ok").await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(srv.posts("/hook").len(), 3);
    let n = notifications(&app).await;
    assert_eq!(
        (n[0]["status"].as_str(), n[0]["muted"].as_str()),
        (Some("resolved"), Some("flapping"))
    );

    // It holds ok for the settle time: channels, who last heard firing, hear resolved.
    let got = posts(&srv, 4).await;
    assert_eq!(
        (got[3]["status"].as_str(), got[3]["reason"].as_str()),
        (Some("resolved"), Some("settled"))
    );
    app.stop().await;
}
