//! Alert rules (issue 41) against the real server, with Binance pointed at a loopback
//! upstream whose price the test moves: rules are judged on scheduled runs with nobody
//! watching, a crossing makes exactly one `firing` and later one `resolved` notification per
//! rule (declarative and code), and a provider outage leaves the state alone and says "no data".

#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::upstream::{Reply, Server};
use crate::support::{TestApp, spawn_app_with};

pub(crate) const TICKER: &str = "/api/v3/ticker/24hr";

pub(crate) fn ticker(price: f64) -> Reply {
    Reply::Body(
        200,
        json!({"symbol": "BTCUSDT", "lastPrice": price.to_string(), "priceChange": "1.0",
        "priceChangePercent": "0.1", "weightedAvgPrice": "1", "prevClosePrice": "1",
        "openPrice": "1", "highPrice": "1", "lowPrice": "1", "volume": "1", "quoteVolume": "1",
        "openTime": 1717200000000_i64, "closeTime": 1717286399999_i64})
        .to_string(),
    )
}

pub(crate) async fn app_at(origin: &str) -> TestApp {
    app_at_with(origin, |_| {}).await
}

/// [`app_at`] with `configure` applied last.
pub(crate) async fn app_at_with(
    origin: &str,
    configure: impl FnOnce(&mut boardsmith::app::AppConfig),
) -> TestApp {
    let sdk = crate::support::sdk_at(origin);
    spawn_app_with(Arc::new(tempfile::tempdir().unwrap()), false, move |c| {
        c.sdk = sdk;
        c.alerting.every = Duration::from_millis(300);
        c.alerting.no_data_after = Duration::from_millis(600);
        configure(c);
    })
    .await
}

pub(crate) fn state(alerts: Value) -> Value {
    json!({
        "title": "BTC watch",
        "layout": {"columns": 2},
        "panels": [{"id": "btc", "title": "BTC", "type": "metric_card", "renderer": "custom",
                    "code": "const t = await sdk.binance.ticker24h({symbol: 'BTCUSDT'});\nreturn {value: t.lastPrice, label: 'BTC'};"}],
        "alerts": alerts,
    })
}

/// `GET /api/alerts` until `pred` holds for every entry (10 s at most).
pub(crate) async fn alerts_until(
    app: &TestApp,
    what: &str,
    pred: impl Fn(&Value) -> bool,
) -> Vec<Value> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (s, body) = app.get("/api/alerts").await;
        assert_eq!(s, 200, "{body}");
        let list = body["data"].as_array().unwrap().clone();
        if !list.is_empty() && list.iter().all(&pred) {
            return list;
        }
        assert!(tokio::time::Instant::now() < deadline, "waiting for {what}: {list:#?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

pub(crate) async fn notifications(app: &TestApp) -> Vec<Value> {
    let (s, body) = app.get("/api/notifications").await;
    assert_eq!(s, 200, "{body}");
    body["data"].as_array().unwrap().clone()
}

#[tokio::test]
async fn a_price_crossing_fires_once_and_resolves_once_with_nobody_watching() {
    let srv = Server::start().await;
    srv.on(TICKER, vec![ticker(67_706.94)]);
    let app = app_at(&srv.origin).await;
    let rules = json!([
        {"id": "btc-high", "name": "BTC above 70k", "panelId": "btc",
         "when": {"op": ">", "value": 70000}, "severity": "critical"},
        {"id": "btc-code", "name": "BTC above 70k (code)", "panelId": "btc",
         "when": "return {firing: data.value > 70000, value: data.value, message: `BTC at ${data.value}`};"},
    ]);
    let (s, body) = app.post("/api/dashboards", json!({"state": state(rules)})).await;
    assert_eq!(s, 201, "{body}");
    let id = body["data"]["id"].as_str().unwrap().to_owned();

    // Judged without any viewer: ok at the first price.
    let list =
        alerts_until(&app, "a first judgement", |a| a["evaluatedAt"].as_i64() > Some(0)).await;
    assert_eq!(list.len(), 2);
    for a in &list {
        assert_eq!(a["status"], "ok", "{a}");
        assert_eq!(a["value"], 67_706.94, "{a}");
        assert_eq!(a["dashboardId"], id.as_str());
        assert_eq!(a["noData"], false);
    }
    assert!(notifications(&app).await.is_empty());

    // The price moves above the threshold: both rules fire.
    srv.on(TICKER, vec![ticker(71_000.0)]);
    alerts_until(&app, "firing", |a| a["status"] == "firing").await;
    let (_, only) = app.get(&format!("/api/alerts?status=firing&dashboardId={id}")).await;
    assert_eq!(only["data"].as_array().unwrap().len(), 2, "{only}");
    let (_, none) = app.get("/api/alerts?status=pending").await;
    assert_eq!(none["data"], json!([]));
    let (s, bad) = app.get("/api/alerts?status=burning").await;
    assert_eq!((s, bad["code"] != 0), (400, true), "{bad}");
    let fired = notifications(&app).await;
    assert_eq!(fired.len(), 2, "{fired:#?}");
    for n in &fired {
        assert_eq!(n["status"], "firing");
        assert_eq!(n["value"], 71_000.0);
        assert_eq!(n["dashboardId"], id.as_str());
        assert_eq!(n["dashboardTitle"], "BTC watch");
        assert_eq!(n["panelTitle"], "BTC");
        assert_eq!(n["link"], format!("/#d={id}"));
    }
    let high = fired.iter().find(|n| n["ruleId"] == "btc-high").unwrap();
    assert_eq!(high["threshold"], 70000.0);
    assert_eq!(high["severity"], "critical");
    let code = fired.iter().find(|n| n["ruleId"] == "btc-code").unwrap();
    assert_eq!(code["message"], "BTC at 71000");
    assert!(code.get("threshold").is_none());

    // The provider goes away: not a market move. The rules stay firing and say "no data".
    srv.stop();
    let list = alerts_until(&app, "no data", |a| a["noData"] == true).await;
    for a in &list {
        assert_eq!(a["status"], "firing", "{a}");
        assert!(a["error"].as_str().unwrap().contains("Binance"), "{a}");
    }
    assert_eq!(notifications(&app).await.len(), 2, "an outage notifies nothing");

    // Back, below the threshold: each rule resolves once.
    srv.on(TICKER, vec![ticker(69_000.0)]);
    srv.restart().await;
    alerts_until(&app, "resolved", |a| a["status"] == "ok" && a["noData"] == false).await;
    tokio::time::sleep(Duration::from_millis(900)).await;
    let all = notifications(&app).await;
    let count = |rule: &str, status: &str| {
        all.iter().filter(|n| n["ruleId"] == rule && n["status"] == status).count()
    };
    for rule in ["btc-high", "btc-code"] {
        assert_eq!((count(rule, "firing"), count(rule, "resolved")), (1, 1), "{all:#?}");
    }
    assert_eq!(all[0]["status"], "resolved", "newest first");
    app.stop().await;
}

#[tokio::test]
async fn a_rule_fans_out_over_a_variable_and_bad_rules_are_named() {
    let srv = Server::start().await;
    srv.on(TICKER, vec![ticker(100.0)]);
    let app = app_at(&srv.origin).await;
    let mut doc = state(json!([{"id": "any-high", "name": "Pair above 50", "panelId": "btc",
                                 "when": {"op": ">", "value": 50}, "forEach": "symbol"}]));
    doc["variables"] = json!([{"name": "symbol", "label": "Pair", "type": "select",
                               "options": ["BTCUSDT", "ETHUSDT"], "default": "BTCUSDT"}]);
    doc["panels"][0]["code"] = json!(
        "const t = await sdk.binance.ticker24h({symbol: vars.symbol});\nreturn {value: t.lastPrice, label: vars.symbol};"
    );
    let (s, body) = app.post("/api/dashboards", json!({"state": doc})).await;
    assert_eq!(s, 201, "{body}");
    let list = alerts_until(&app, "both values firing", |a| a["status"] == "firing").await;
    let keys: Vec<&str> = list.iter().map(|a| a["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["BTCUSDT", "ETHUSDT"]);
    let queried: Vec<String> = srv.queries(TICKER);
    assert!(
        queried.iter().any(|q| q.contains("ETHUSDT")),
        "the fan-out ran its own value: {queried:?}"
    );
    let n = notifications(&app).await;
    assert_eq!(n.len(), 2, "{n:#?}");

    // A rule on a panel that does not exist, and one reading a feed: each named by its path.
    let id = body["data"]["id"].as_str().unwrap();
    let mut bad = doc.clone();
    bad["alerts"] =
        json!([{"id": "x", "name": "X", "panelId": "nope", "when": {"op": ">", "value": 1}}]);
    let (s, body) =
        app.put(&format!("/api/dashboards/{id}"), json!({"state": bad, "baseVersion": 1})).await;
    assert_eq!(s, 400, "{body}");
    assert!(body["msg"].as_str().unwrap().contains("alerts[0].panelId"), "{body}");
    // The agent's tools refuse a channel that does not exist, naming it, as REST does.
    let code = "async (state) => { state.alerts[0].notify = ['desk']; return state; }";
    let (s, body) = app.post("/api/tools/mutate", json!({"code": code, "dashboard_id": id})).await;
    assert_eq!(s, 422, "{body}");
    let msg = body["msg"].as_str().unwrap();
    assert!(
        msg.contains("alerts[0].notify[0]") && msg.contains("no channel named \"desk\""),
        "{msg}"
    );
    app.stop().await;
}

/// Checks `X-Boardsmith-Signature` (`t=…,v1=hex`) over the body with `secret`, independently
/// of the server's code.
fn signature_holds(secret: &str, header: &str, body: &str) -> bool {
    use hmac::{KeyInit, Mac};
    let mut parts = header.split(',');
    let t = parts.next().and_then(|p| p.strip_prefix("t=")).unwrap();
    let v1 = parts.next().and_then(|p| p.strip_prefix("v1=")).unwrap();
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("{t}.{body}").as_bytes());
    let want: String = mac.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect();
    want == v1
}

#[tokio::test]
async fn a_webhook_channel_gets_one_signed_post_per_transition_and_retries_a_busy_receiver() {
    let srv = Server::start().await;
    srv.on(TICKER, vec![ticker(69_000.0)]);
    // The receiver is busy once, then takes everything.
    srv.on("/hook", vec![Reply::Body(503, "{}".into()), Reply::Body(200, "{}".into())]);
    let app = app_at(&srv.origin).await;

    // Only admins make channels; a host that is not allowed out is refused with the setting.
    let (s, body) = app
        .post(
            "/api/channels",
            json!({"name": "desk", "type": "webhook", "url": "http://10.1.2.3/x"}),
        )
        .await;
    assert_eq!(s, 400, "{body}");
    assert!(body["msg"].as_str().unwrap().contains("BOARDSMITH_OUTBOUND_ALLOW"), "{body}");
    let url = format!("{}/hook", srv.origin);
    let (s, made) =
        app.post("/api/channels", json!({"name": "desk", "type": "webhook", "url": url})).await;
    assert_eq!(s, 201, "{made}");
    let secret = made["data"]["secret"].as_str().unwrap().to_owned();
    let (_, listed) = app.get("/api/channels").await;
    assert_eq!(listed["data"][0]["name"], "desk");
    assert_eq!(listed["data"][0]["target"], srv.origin.as_str());
    assert!(listed["data"][0].get("secret").is_none() && !listed.to_string().contains("/hook"));

    // A rule naming a channel that does not exist is refused, naming it.
    let mut doc = state(json!([{"id": "btc-high", "name": "BTC above 70k", "panelId": "btc",
                                 "when": {"op": ">", "value": 70000}, "notify": ["nope"]}]));
    let (s, body) = app.post("/api/dashboards", json!({"state": doc})).await;
    assert_eq!(s, 400, "{body}");
    assert!(body["msg"].as_str().unwrap().contains("alerts[0].notify[0]"), "{body}");
    doc["alerts"][0]["notify"] = json!(["desk"]);
    let (s, body) = app.post("/api/dashboards", json!({"state": doc})).await;
    assert_eq!(s, 201, "{body}");
    let id = body["data"]["id"].as_str().unwrap().to_owned();
    alerts_until(&app, "a first judgement", |a| a["evaluatedAt"].as_i64() > Some(0)).await;
    // A signed-in socket (subscribed to nothing) is told of the transition.
    let mut ws = app.ws().await;

    srv.on(TICKER, vec![ticker(71_000.0)]);
    alerts_until(&app, "firing", |a| a["status"] == "firing").await;
    let (pushed, _) =
        crate::support::ws_until(&mut ws, |m| m["type"] == "alert.notification").await;
    assert_eq!(pushed["notification"]["status"], "firing", "{pushed}");
    assert_eq!(pushed["notification"]["ruleId"], "btc-high");
    // Delivered after one retry (the 503): two POSTs, one notification.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while srv.posts("/hook").len() < 2 {
        assert!(tokio::time::Instant::now() < deadline, "no retry: {:?}", srv.posts("/hook"));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    srv.on(TICKER, vec![ticker(68_000.0)]);
    alerts_until(&app, "resolved", |a| a["status"] == "ok").await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while srv.posts("/hook").len() < 3 {
        assert!(tokio::time::Instant::now() < deadline, "no resolved post");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(900)).await;
    let posts = srv.posts("/hook");
    assert_eq!(posts.len(), 3, "one retry, then one POST per transition: {posts:?}");
    let bodies: Vec<Value> = posts.iter().map(|(_, b)| serde_json::from_str(b).unwrap()).collect();
    assert_eq!(bodies[0], bodies[1], "the retry sends the same notification");
    assert_eq!(posts[0].0["x-boardsmith-delivery"], posts[1].0["x-boardsmith-delivery"]);
    for ((headers, raw), body) in posts.iter().zip(&bodies) {
        let sig = headers["x-boardsmith-signature"].to_str().unwrap();
        assert!(signature_holds(&secret, sig, raw), "bad signature {sig} on {raw}");
        assert!(!signature_holds("whsec_other", sig, raw));
        assert_eq!(body["dashboardId"], id.as_str());
        assert_eq!(body["ruleId"], "btc-high");
        assert_eq!(body["threshold"], 70000.0);
    }
    assert_eq!(bodies[0]["status"], "firing");
    assert_eq!(bodies[0]["value"], 71_000.0);
    assert_eq!(posts[0].0["x-boardsmith-event"], "alert.firing");
    assert_eq!(bodies[2]["status"], "resolved");
    assert_eq!(bodies[2]["value"], 68_000.0);
    // The history says what each delivery did.
    let n = notifications(&app).await;
    let firing = n.iter().find(|n| n["status"] == "firing").unwrap();
    assert_eq!(firing["deliveries"][0]["status"], "sent", "{firing}");
    assert_eq!(firing["deliveries"][0]["attempts"], 2);
    app.stop().await;
}

/// Two `boardsmith serve` nodes on PostgreSQL with every provider at `origin`.
async fn two_nodes(
    db: &crate::support::pg::TestDb,
    origin: &str,
) -> (Vec<tempfile::TempDir>, Vec<crate::support::node::Node>) {
    two_nodes_with(db, origin, &[]).await
}

/// [`two_nodes`] with `extra` in their environment.
async fn two_nodes_with(
    db: &crate::support::pg::TestDb,
    origin: &str,
    extra: &[(&str, &str)],
) -> (Vec<tempfile::TempDir>, Vec<crate::support::node::Node>) {
    let mut owned: Vec<(String, String)> = vec![
        ("BOARDSMITH_OFFLINE".into(), "0".into()),
        ("BOARDSMITH_OUTBOUND_ALLOW".into(), origin.into()),
        ("BOARDSMITH_SDK_CACHE_BYTES".into(), "0".into()),
        ("BOARDSMITH_ALERT_EVERY".into(), "300ms".into()),
    ];
    owned.extend(extra.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    // Every provider at `origin`: the start-up check never reaches a real host.
    let registry = boardsmith::sdk::Registry::embedded(&|_| true).unwrap();
    owned.extend(
        boardsmith::sdk::provider::base_url_vars(&registry)
            .into_iter()
            .map(|v| (v, origin.to_owned())),
    );
    let env: Vec<(&str, String)> = owned.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
    crate::support::node::cluster(&db.url, 2, "alerts-test-token-0123456789abcdef", &env, |_| {})
        .await
}

/// A node's first alert entry.
async fn first_alert(node: &crate::support::node::Node) -> Value {
    node.get("/api/alerts").await.1["data"][0].clone()
}

/// The webhook channel `desk` (at `origin`'s `/hook`) made on one node and a dashboard whose
/// rule `btc-high` notifies it made on the other: its id.
async fn desk_on(nodes: &[crate::support::node::Node], origin: &str) -> String {
    use reqwest::Method;
    let url = format!("{origin}/hook");
    let (s, made) = nodes[0]
        .send(Method::POST, "/api/channels", json!({"name": "desk", "type": "webhook", "url": url}))
        .await;
    assert_eq!(s, 201, "{made}");
    let doc = state(json!([{"id": "btc-high", "name": "BTC above 70k", "panelId": "btc",
                             "when": {"op": ">", "value": 70000}, "notify": ["desk"]}]));
    let (s, body) = nodes[1].send(Method::POST, "/api/dashboards", json!({"state": doc})).await;
    assert_eq!(s, 201, "{body}");
    body["data"]["id"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_judging_node_dies_between_firing_and_resolved_and_each_is_sent_once() {
    let db = crate::support::pg::TestDb::new().await;
    let srv = Server::start().await;
    srv.on(TICKER, vec![ticker(69_000.0)]);
    srv.on("/hook", vec![Reply::Body(200, "{}".into())]);
    let (_dirs, mut nodes) = two_nodes(&db, &srv.origin).await;
    let id = desk_on(&nodes, &srv.origin).await;

    let wait = |what: &'static str| {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        move || assert!(tokio::time::Instant::now() < deadline, "waiting for {what}")
    };
    let check = wait("a first judgement");
    while first_alert(&nodes[0]).await["evaluatedAt"].as_i64().unwrap_or(0) == 0 {
        check();
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // A socket on each node: both are told, whichever node judges.
    let mut sockets = vec![nodes[0].ws().await, nodes[1].ws().await];
    srv.on(TICKER, vec![ticker(71_000.0)]);
    let check = wait("the firing POST");
    while srv.posts("/hook").is_empty() {
        check();
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for ws in &mut sockets {
        let (pushed, _) = crate::support::ws_until(ws, |m| m["type"] == "alert.notification").await;
        assert_eq!(pushed["notification"]["status"], "firing", "{pushed}");
        assert_eq!(pushed["notification"]["dashboardId"], id.as_str());
    }

    // The node holding the dashboard's lease judges it: kill that one.
    let owner = crate::support::node::lease_owner(&db.url, &id, &nodes).await;
    nodes[owner].kill();
    let survivor = &nodes[1 - owner];
    srv.on(TICKER, vec![ticker(68_000.0)]);
    let check = wait("the resolved POST from the survivor");
    while srv.posts("/hook").len() < 2 {
        check();
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Settled: the survivor keeps judging, and sends nothing more.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let posts = srv.posts("/hook");
    let statuses: Vec<String> = posts
        .iter()
        .map(|(_, b)| {
            serde_json::from_str::<Value>(b).unwrap()["status"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(statuses, ["firing", "resolved"], "exactly one of each");
    let (_, n) = survivor.get("/api/notifications").await;
    assert_eq!(n["data"].as_array().unwrap().len(), 2, "{n}");
    assert_eq!(first_alert(survivor).await["status"], "ok");
}

#[tokio::test]
async fn the_agent_adds_a_rule_from_chat_and_sees_it_judged_on_the_test_run() {
    use boardsmith::llm::mock::{MockLlm, Script, Step, Turn};
    let build = r#"return { title: 'Desk', layout: { columns: 1 }, panels: [
      { id: 'funding', title: 'BTC funding', type: 'metric_card', renderer: 'custom',
        code: "return { value: 0.061, label: 'BTC funding', unit: '%' };" } ] };"#;
    let add_rule = r#"async (state) => {
      state.alerts = [{ id: 'funding-high', name: 'BTC funding above 0.05%', panelId: 'funding',
                        when: { op: '>', value: 0.05 } }];
      return state;
    }"#;
    let say = |text: &str| Turn {
        steps: vec![Step::Text { text: text.into(), chunk: Some(16) }],
        times: Some(1),
        ..Turn::default()
    };
    let turns = vec![
        crate::support::tool_call_turn("c1", "execute", json!({"code": build}), 2),
        crate::support::tool_call_turn("c2", "mutate", json!({"code": add_rule}), 2),
        say("I will tell you when BTC funding goes above 0.05%; it is above it now."),
    ];
    let mock = MockLlm::start(Script { turns }, 0).await.unwrap();
    let url = mock.url();
    let app = spawn_app_with(Arc::new(tempfile::tempdir().unwrap()), false, move |c| {
        c.llm = Some(crate::support::llm_config(Some(&url)));
        c.alerting.every = Duration::from_millis(300);
    })
    .await;
    let (s, body) = app
        .post(
            "/api/query",
            json!({"message": "Tell me when BTC funding goes above 0.05%", "agentKey": "dashboard",
                   "stream": false}),
        )
        .await;
    assert_eq!(s, 200, "{body}");
    let events = body["data"]["events"].as_array().unwrap();
    let mutate = events
        .iter()
        .filter(|e| e["type"] == "tool.result")
        .nth(1)
        .unwrap_or_else(|| panic!("no mutate result: {events:#?}"));
    let dry = &mutate["result"]["validation"]["alerts"][0];
    assert_eq!(dry["ruleId"], "funding-high", "{mutate}");
    assert_eq!(dry["status"], "firing", "the dry run judged the test run's data: {dry}");
    assert_eq!(dry["value"], 0.061);
    let changes = mutate["result"]["changes"].as_array().unwrap();
    assert!(changes.iter().any(|c| c["type"] == "alerts_changed"), "{changes:?}");
    // The model was told how: the prompt and the tool's description document rules.
    let first = &mock.requests()[0].body;
    assert!(first.to_string().contains("## Alerts"), "the system prompt documents alerts");
    assert!(first.to_string().contains("change_pct_over"), "the execute tool documents `when`");
    // And the server judges it without the model.
    let list = alerts_until(&app, "firing", |a| a["status"] == "firing").await;
    assert_eq!(list[0]["ruleId"], "funding-high");
    assert_eq!(notifications(&app).await.len(), 1);
    assert_eq!(mock.requests().len(), 3, "no model call after the answer");
    mock.stop();
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notification_whose_node_died_before_sending_it_is_sent_by_the_survivor() {
    let db = crate::support::pg::TestDb::new().await;
    let srv = Server::start().await;
    srv.on(TICKER, vec![ticker(69_000.0)]);
    // The receiver takes the first POST and never answers; its sender dies meanwhile.
    srv.on("/hook", vec![Reply::Hang, Reply::Body(200, "{}".into())]);
    let (_dirs, mut nodes) =
        two_nodes_with(&db, &srv.origin, &[("BOARDSMITH_ALERT_REDELIVER_AFTER", "2s")]).await;
    let id = desk_on(&nodes, &srv.origin).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while first_alert(&nodes[0]).await["evaluatedAt"].as_i64().unwrap_or(0) == 0 {
        assert!(tokio::time::Instant::now() < deadline, "no first judgement");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    srv.on(TICKER, vec![ticker(71_000.0)]);
    while srv.posts("/hook").is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "no firing POST");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let owner = crate::support::node::lease_owner(&db.url, &id, &nodes).await;
    nodes[owner].kill();
    let survivor = &nodes[1 - owner];
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while srv.posts("/hook").len() < 2 {
        assert!(tokio::time::Instant::now() < deadline, "the survivor never sent it");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let posts = srv.posts("/hook");
    assert_eq!(posts.len(), 2, "sent again once: {posts:?}");
    assert_eq!(posts[0].0["x-boardsmith-delivery"], posts[1].0["x-boardsmith-delivery"]);
    assert_eq!(posts[0].1, posts[1].1, "the same notification");
    let (_, n) = survivor.get("/api/notifications").await;
    let firing = &n["data"][0];
    assert_eq!(firing["status"], "firing", "{n}");
    assert_eq!(firing["deliveries"][0]["status"], "sent", "{firing}");
}
