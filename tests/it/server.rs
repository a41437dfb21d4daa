//! The server over real HTTP and WebSocket on 127.0.0.1:0: tool round trips, concurrency,
//! live patches and refreshes, slow subscribers, restart, and API errors.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{self, TestApp, ws_next, ws_send, ws_until};

const KLINE: &str = "return await sdk.market.getKline({symbol: 'XAUUSD', limit: 30});";
const BROKEN: &str = "const k = await sdk.market.getKline({limit: 30});\nreturn k.map(b => ({ time: b.time, value: b.clos.toFixed(2) }));";
const FIXED: &str = "const k = await sdk.market.getKline({limit: 30});\nreturn k.map(b => ({ time: b.time, value: b.close }));";

fn builder(panels: &[(&str, &str, &str)]) -> String {
    let panels: Vec<Value> = panels
        .iter()
        .map(|(id, kind, code)| {
            let renderer = match *kind {
                "candlestick" | "line" | "area" => "lightweight-charts",
                "table" | "feed" | "metric_card" => "custom",
                _ => "echarts",
            };
            json!({"id": id, "title": id.to_uppercase(), "type": kind, "renderer": renderer, "code": code})
        })
        .collect();
    format!("return {};", json!({"title": "Gold", "layout": {"columns": 2}, "panels": panels}))
}

async fn create(app: &TestApp, session: &str) -> String {
    let out = app
        .tool(
            "execute",
            json!({"code": builder(&[("gold-kline", "candlestick", KLINE)]), "session": session}),
        )
        .await;
    assert_eq!(out["validation"]["allOk"], true, "{out}");
    out["dashboard_id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn execute_reports_a_failing_panel_and_mutate_fixes_it() {
    let app = support::spawn_app().await;
    let code = builder(&[("gold-kline", "candlestick", KLINE), ("gold-close", "line", BROKEN)]);
    let out = app.tool("execute", json!({"code": code, "session": "s"})).await;
    let id = out["dashboard_id"].as_str().unwrap().to_owned();
    assert_eq!(out["validation"]["allOk"], false);
    let panels = out["validation"]["panels"].as_array().unwrap();
    assert_eq!(panels[0]["status"], "success");
    assert_eq!(panels[0]["rowCount"], 30);
    assert_eq!(panels[1]["panelId"], "gold-close");
    assert_eq!(panels[1]["status"], "error");
    let err = panels[1]["error"].as_str().unwrap();
    assert!(err.starts_with("TypeError") && err.contains("(line 2, column"), "{err}");

    // The model fixes the panel without giving the id: the session's active dashboard.
    let fix = format!(
        "async (state) => {{ state.panels.find(p => p.id === 'gold-close').code = {}; return state; }}",
        serde_json::to_string(FIXED).unwrap()
    );
    let out = app.tool("mutate", json!({"code": fix, "session": "s"})).await;
    assert_eq!(out["dashboard_id"], id.as_str());
    assert_eq!(out["changes"][0]["type"], "modified_panel", "{out}");
    assert_eq!(out["changes"][0]["panel_id"], "gold-close");
    assert_eq!(out["validation"]["allOk"], true, "{out}");
    assert_eq!(
        out["validation"]["panels"].as_array().unwrap().len(),
        1,
        "only the changed panel runs"
    );

    let (status, body) = app.get(&format!("/api/dashboards/{id}/versions")).await;
    assert_eq!(status, 200);
    assert_eq!(body["data"].as_array().unwrap().len(), 2);
    let summary = app.tool("get_state", json!({"session": "s"})).await;
    assert_eq!(summary["state"]["panels"][1]["id"], "gold-close");
    assert!(summary["state"]["panels"][1]["codePreview"].as_str().unwrap().len() <= 170);
    app.stop().await;
}

#[tokio::test]
async fn builder_and_state_errors_are_returned_to_the_model_and_nothing_is_saved() {
    let app = support::spawn_app().await;
    let out = app
        .tool("execute", json!({"code": "return {title: 'x', layout: {columns: 20}, panels: []};"}))
        .await;
    assert!(out["error"].as_str().unwrap().contains("layout.columns"), "{out}");
    let out = app.tool("execute", json!({"code": "const x = ;"})).await;
    assert!(out["error"].as_str().unwrap().contains("SyntaxError"), "{out}");
    let code = builder(&[("a", "line", "return [;")]);
    let out = app.tool("execute", json!({"code": code})).await;
    assert!(out["error"].as_str().unwrap().contains("panels[0].code"), "{out}");
    let (_, list) = app.get("/api/dashboards").await;
    assert_eq!(list["data"], json!([]));
    app.stop().await;
}

#[tokio::test]
async fn fifty_concurrent_mutates_each_adding_a_panel_all_land() {
    // A dashboard holds at most 48 panels, so the 50 concurrent writers are split over two.
    let app = support::spawn_app().await;
    let ids = [create(&app, "c1").await, create(&app, "c2").await];
    let add = |i: usize| {
        format!(
            "async (s) => {{ s.panels.push({{id: 'p{i}', title: 'P{i}', type: 'table', renderer: 'custom', \
             code: 'return [{{n: {i}}}];'}}); return s; }}"
        )
    };
    let calls = (0..50).map(|i| {
        let (app, id, code) = (&app, ids[i % 2].clone(), add(i));
        async move { app.tool("mutate", json!({"code": code, "dashboard_id": id})).await }
    });
    for o in futures::future::join_all(calls).await {
        assert!(o["error"].is_null(), "{o}");
    }
    for (k, id) in ids.iter().enumerate() {
        let (_, body) = app.get(&format!("/api/dashboards/{id}")).await;
        let present: Vec<&str> = body["data"]["state"]["panels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["id"].as_str().unwrap())
            .collect();
        for i in (k..50).step_by(2) {
            assert!(present.contains(&format!("p{i}").as_str()), "p{i} missing from {present:?}");
        }
        assert_eq!(body["data"]["version"], 26, "one version per mutate, none lost");
    }

    // Filling one dashboard up: the 49th panel is refused with the limit named.
    let fill = "async (s) => { while (s.panels.length < 48) s.panels.push({id: 'f' + s.panels.length, \
                title: 'F', type: 'table', renderer: 'custom', code: 'return [];'}); return s; }";
    let out = app.tool("mutate", json!({"code": fill, "dashboard_id": ids[0]})).await;
    assert!(out["error"].is_null(), "{out}");
    let out = app.tool("mutate", json!({"code": add(99), "dashboard_id": ids[0]})).await;
    assert!(out["error"].as_str().unwrap().contains("at most 48"), "{out}");
    app.stop().await;
}

#[tokio::test]
async fn a_subscriber_applying_patches_to_its_snapshot_matches_the_store() {
    let app = support::spawn_app().await;
    let id = create(&app, "w").await;
    let (mut ws, snap) = app.subscribe(&id).await;
    let mut state = snap["state"].clone();
    let mut version = snap["version"].as_u64().unwrap();

    let edits = [
        "async (s) => ({...s, title: 'Gold & Silver', layout: {columns: 3}})",
        "async (s) => { s.panels.push({id: 'silver', title: 'Silver', type: 'line', renderer: 'lightweight-charts', \
         code: \"const k = await sdk.market.getKline({symbol: 'XAGUSD', limit: 10}); return k.map(b => ({time: b.time, close: b.close}));\"}); return s; }",
        "async (s) => { s.panels.reverse(); s.panels[0].title = 'Silver spot'; return s; }",
    ];
    for code in edits {
        app.tool("mutate", json!({"code": code, "dashboard_id": id})).await;
        let (patch, _) = ws_until(&mut ws, |m| m["type"] == "dashboard.patch").await;
        assert_eq!(patch["baseVersion"].as_u64(), Some(version), "{patch}");
        let ops: json_patch::Patch = serde_json::from_value(patch["patch"].clone()).unwrap();
        json_patch::patch(&mut state, &ops).unwrap();
        version = patch["version"].as_u64().unwrap();
        assert!(!patch["changes"].as_array().unwrap().is_empty());
    }
    let (_, body) = app.get(&format!("/api/dashboards/{id}")).await;
    assert_eq!(body["data"]["version"].as_u64(), Some(version));
    assert_eq!(state, body["data"]["state"]);
    // The added panel's data follows its patch.
    let (data, _) =
        ws_until(&mut ws, |m| m["type"] == "panel.data" && m["panelId"] == "silver").await;
    assert_eq!(data["rowCount"], 10);
    app.stop().await;
}

#[tokio::test]
async fn refresh_pushes_panel_data_without_any_agent() {
    let app = support::spawn_app().await;
    let id = create(&app, "r").await;
    let (mut ws, snap) = app.subscribe(&id).await;
    let seq0 = snap["panels"]["gold-kline"]["seq"].as_u64().unwrap();
    assert_eq!(snap["panels"]["gold-kline"]["status"], "ok", "{snap}");

    ws_send(&mut ws, json!({"type": "refresh", "dashboardId": id, "panelId": "gold-kline"})).await;
    let (d1, _) = ws_until(&mut ws, |m| m["type"] == "panel.data").await;
    assert!(d1["seq"].as_u64().unwrap() > seq0);
    assert_eq!(d1["rowCount"], 30);
    // The data says where it came from: the generators are demo data, in the snapshot too.
    let origin = &d1["provenance"][0];
    assert_eq!((&origin["provider"], &origin["demo"]), (&json!("demo"), &json!(true)), "{d1}");
    assert!(origin["fetchedAt"].as_i64().unwrap() > 0);
    assert_eq!(snap["panels"]["gold-kline"]["provenance"][0]["demo"], true, "{snap}");

    let (status, body) = app.post(&format!("/api/dashboards/{id}/refresh"), json!({})).await;
    assert_eq!(status, 200, "{body}");
    let (d2, _) = ws_until(&mut ws, |m| m["type"] == "panel.data").await;
    assert!(d2["seq"].as_u64().unwrap() > d1["seq"].as_u64().unwrap());
    app.stop().await;
}

#[tokio::test]
async fn scheduled_refresh_runs_only_while_someone_watches() {
    let app = support::spawn_app().await;
    let mut code = builder(&[("gold-kline", "candlestick", KLINE)]);
    code = code.replace("\"title\":\"Gold\"", "\"title\":\"Gold\",\"refresh\":\"5s\"");
    let out = app.tool("execute", json!({"code": code})).await;
    assert!(out["error"].is_null(), "{out}");
    let id = out["dashboard_id"].as_str().unwrap().to_owned();
    let (mut ws, snap) = app.subscribe(&id).await;
    let seq0 = snap["panels"]["gold-kline"]["seq"].as_u64().unwrap();
    let started = Instant::now();
    let (d, _) = ws_until(&mut ws, |m| m["type"] == "panel.data").await;
    assert!(d["seq"].as_u64().unwrap() > seq0);
    assert!(started.elapsed() < Duration::from_secs(8), "{:?}", started.elapsed());
    app.stop().await;
}

#[tokio::test]
async fn a_slow_subscriber_does_not_delay_others() {
    let app = support::spawn_app().await;
    let big = "return await sdk.market.getKline({symbol: 'XAUUSD', limit: 5000});";
    let out = app.tool("execute", json!({"code": builder(&[("big", "candlestick", big)])})).await;
    let id = out["dashboard_id"].as_str().unwrap().to_owned();
    // The slow client subscribes and then never reads.
    let (_slow, _) = app.subscribe(&id).await;
    let (mut fast, _) = app.subscribe(&id).await;
    let started = Instant::now();
    for _ in 0..30 {
        let (status, _) = app.post(&format!("/api/dashboards/{id}/refresh"), json!({})).await;
        assert_eq!(status, 200);
        let (d, _) = ws_until(&mut fast, |m| m["type"] == "panel.data").await;
        assert_eq!(d["rowCount"], 5000);
    }
    // ~12 MB went to the slow client's socket: its queue coalesced instead of blocking anyone.
    assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
    app.stop().await;
}

#[tokio::test]
async fn a_subscriber_too_far_behind_is_closed_with_a_reason_and_others_go_on() {
    use futures::StreamExt;
    use tokio_tungstenite::tungstenite::Message;
    // This client is meant to outpace its queue, not the message rate limit.
    let app = support::spawn_app_with(Arc::new(tempfile::tempdir().unwrap()), false, |c| {
        c.live.viewers.messages_per_second = 100_000;
        c.live.viewers.message_burst = 100_000;
    })
    .await;
    let big = "return await sdk.market.getKline({symbol: 'XAUUSD', limit: 1000});";
    let out = app.tool("execute", json!({"code": builder(&[("big", "candlestick", big)])})).await;
    let id = out["dashboard_id"].as_str().unwrap().to_owned();
    // Snapshots of ~64 KB: the requested ones far exceed what socket buffers absorb.
    let out = app
        .tool("mutate", json!({"code": "async (s) => { s.panels[0].config = { note: 'x'.repeat(64000) }; return s; }", "dashboard_id": id}))
        .await;
    assert!(out["error"].is_null(), "{out}");
    // The slow client's socket takes little before the server's writes block.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let tcp = socket.connect(app.addr).await.unwrap();
    let (mut slow, _) = tokio_tungstenite::client_async(
        app.ws_request(),
        tokio_tungstenite::MaybeTlsStream::Plain(tcp),
    )
    .await
    .unwrap();
    ws_send(&mut slow, json!({"type": "subscribe", "dashboardId": id})).await;
    let (mut fast, _) = app.subscribe(&id).await;
    // The slow client keeps asking for snapshots (never dropped, unlike panel data) and reads
    // nothing: its queue grows past the cap once the socket buffers are full.
    let asked = boardsmith::server::ws::OUTBOX_CAPACITY * 2;
    for _ in 0..asked {
        ws_send(&mut slow, json!({"type": "subscribe", "dashboardId": id})).await;
    }
    // Everyone else is unaffected.
    let out = app
        .tool("mutate", json!({"code": "async (s) => { s.title = 'Still live'; return s; }", "dashboard_id": id}))
        .await;
    assert!(out["error"].is_null(), "{out}");
    let (patch, _) = ws_until(&mut fast, |m| m["type"] == "dashboard.patch").await;
    assert_eq!(patch["version"], 3);
    // The slow client, reading at last, gets what was in flight and then the close frame.
    let mut snapshots = 0;
    let frame = loop {
        // Generous: building a thousand 64 KB snapshots is slow on a loaded 2-core machine.
        let msg = tokio::time::timeout(Duration::from_secs(30), slow.next())
            .await
            .expect("the close frame within 30 s")
            .expect("socket open")
            .unwrap();
        match msg {
            Message::Text(t) if t.starts_with("{\"type\":\"dashboard.snapshot\"") => snapshots += 1,
            Message::Close(frame) => break frame.expect("a close frame with a reason"),
            _ => {}
        }
    };
    assert_eq!(u16::from(frame.code), boardsmith::live::CLOSE_TOO_FAR_BEHIND);
    assert!(frame.reason.contains("too far behind"), "{}", frame.reason);
    assert!(snapshots < asked, "{snapshots} of {asked} snapshots were delivered");
    // Nothing follows the close frame, and the server then ends the connection.
    let rest = tokio::time::timeout(Duration::from_secs(10), async {
        let mut n = 0;
        while let Some(Ok(_)) = slow.next().await {
            n += 1;
        }
        n
    })
    .await
    .expect("the connection ends");
    assert_eq!(rest, 0);
    app.stop().await;
}

#[tokio::test]
async fn restart_keeps_dashboards_versions_and_sessions() {
    let dir = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let app = support::spawn_app_in(dir.clone(), false).await;
    let id = create(&app, "persist").await;
    app.tool(
        "mutate",
        json!({"code": "async (s) => ({...s, title: 'Gold v2'})", "session": "persist"}),
    )
    .await;
    app.stop().await;

    let app = support::spawn_app_in(dir, false).await;
    let (_, body) = app.get(&format!("/api/dashboards/{id}")).await;
    assert_eq!(body["data"]["version"], 2);
    assert_eq!(body["data"]["state"]["title"], "Gold v2");
    let (_, versions) = app.get(&format!("/api/dashboards/{id}/versions")).await;
    assert_eq!(versions["data"].as_array().unwrap().len(), 2);
    let state = app.tool("get_state", json!({"session": "persist"})).await;
    assert_eq!(state["dashboard_id"], id.as_str(), "the session's active dashboard survived");
    app.stop().await;
}

#[tokio::test]
async fn api_errors_use_the_envelope_and_proper_statuses() {
    let app = support::spawn_app().await;
    let id = create(&app, "e").await;
    let raw = app
        .http
        .post(app.url("/api/tools/execute"))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(raw.status(), 400);
    let body: Value = raw.json().await.unwrap();
    assert_eq!(body["code"], 400);
    assert!(body["msg"].as_str().unwrap().contains("malformed JSON"), "{body}");

    let (s, b) = app
        .post(
            "/api/dashboards",
            json!({"state": {"title": "x", "layout": {"columns": 2}, "panels": [], "bogus": 1}}),
        )
        .await;
    assert_eq!(s, 400, "{b}");
    assert!(b["msg"].as_str().unwrap().contains("bogus"), "{b}");
    let (s, b) = app.get("/api/dashboards/db_nope").await;
    assert_eq!((s, b["code"].as_u64()), (404, Some(404)), "{b}");
    let (s, _) = app.post("/api/tools/frobnicate", json!({})).await;
    assert_eq!(s, 404);
    let (s, b) = app.post(&format!("/api/dashboards/{id}/revert"), json!({"version": "one"})).await;
    assert_eq!(s, 400);
    assert!(b["msg"].as_str().unwrap().contains("version"), "{b}");

    // Optimistic concurrency over REST: a save based on a stale version is a 409.
    let (_, cur) = app.get(&format!("/api/dashboards/{id}")).await;
    let state = cur["data"]["state"].clone();
    let r = app
        .http
        .put(app.url(&format!("/api/dashboards/{id}")))
        .json(&json!({"baseVersion": 1, "state": state}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = app
        .http
        .put(app.url(&format!("/api/dashboards/{id}")))
        .json(&json!({"baseVersion": 1, "state": state}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 409);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["data"], json!({"expected": 1, "actual": 2}));

    let r = app.http.delete(app.url(&format!("/api/dashboards/{id}"))).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let (s, _) = app.post("/api/tools/get_state", json!({"dashboard_id": id})).await;
    assert_eq!(s, 410);
    let (s, b) = app.post(&format!("/api/dashboards/{id}/restore"), json!({})).await;
    assert_eq!((s, &b["data"]["deleted"]), (200, &json!(false)));
    app.stop().await;
}

#[tokio::test]
async fn preview_sources_and_ws_errors() {
    let app = support::spawn_app().await;
    let (s, b) = app
        .post("/api/panels/preview", json!({"code": "return [vars.x, 2];", "vars": {"x": 1}}))
        .await;
    assert_eq!((s, &b["data"]["data"]), (200, &json!([1, 2])), "{b}");
    assert_eq!(b["data"]["provenance"], json!([]), "no sdk call, no origin: {b}");
    let code = "await sdk.market.getKline({symbol: 'XAUUSD'}); \
                return await sdk.market.getQuote({symbol: 'XAUUSD'});";
    let (_, b) = app.post("/api/panels/preview", json!({"code": code})).await;
    let providers: Vec<(&str, bool)> = b["data"]["provenance"]
        .as_array()
        .unwrap_or_else(|| panic!("{b}"))
        .iter()
        .map(|p| (p["provider"].as_str().unwrap(), p["demo"].as_bool().unwrap()))
        .collect();
    assert_eq!(providers, [("demo", true)], "two calls, one provider: {b}");
    let (_, b) = app.post("/api/panels/preview", json!({"code": "return nope;"})).await;
    assert_eq!(b["data"]["status"], "error");
    assert_eq!(b["data"]["error"]["kind"], "runtime");
    let (_, b) = app.get("/api/sdk/sources").await;
    assert!(b["data"]["sources"].as_array().unwrap().len() >= 30);

    let mut ws = app.ws().await;
    ws_send(&mut ws, json!({"type": "subscribe"})).await;
    let e = ws_next(&mut ws).await;
    assert_eq!(e["type"], "error");
    assert!(e["message"].as_str().unwrap().contains("dashboardId"), "{e}");
    ws_send(&mut ws, json!({"type": "subscribe", "dashboardId": "db_missing"})).await;
    let e = ws_next(&mut ws).await;
    assert!(e["message"].as_str().unwrap().contains("not found"), "{e}");
    app.stop().await;
}

/// Previews are capped (half the workers): past the cap a preview is 429 at once instead of
/// queueing, and while previews hold their workers a dashboard refresh still runs.
#[tokio::test]
async fn previews_past_the_cap_are_429_and_refreshes_are_not_starved() {
    let app = support::spawn_app_with(Arc::new(tempfile::tempdir().unwrap()), false, |c| {
        c.live.max_previews = 1;
    })
    .await;
    let id = create(&app, "p").await;
    // A preview that keeps its worker busy for 1.5 s.
    let busy = json!({"code": "const t = Date.now(); while (Date.now() - t < 1500) {} return 1;"});
    let slow = tokio::spawn({
        let (http, url) = (app.http.clone(), app.url("/api/panels/preview"));
        let busy = busy.clone();
        async move {
            let r = http.post(url).json(&busy).send().await.unwrap();
            (r.status().as_u16(), Instant::now())
        }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (s, b) = app.post("/api/panels/preview", busy.clone()).await;
    assert_eq!(s, 429, "{b}");
    assert_eq!(b["code"], 429);
    assert!(b["msg"].as_str().unwrap().contains("BOARDSMITH_MAX_PREVIEWS"), "{b}");
    // The other worker serves the dashboard meanwhile: its refresh ends before the preview.
    let (s, b) = app.post(&format!("/api/dashboards/{id}/refresh"), json!({})).await;
    let refreshed = Instant::now();
    assert_eq!(s, 200, "{b}");
    let (status, previewed) = slow.await.unwrap();
    assert_eq!(status, 200);
    assert!(refreshed < previewed, "the refresh waited for the preview");
    // The slot is free again.
    let (s, b) = app.post("/api/panels/preview", json!({"code": "return 2"})).await;
    assert_eq!((s, &b["data"]["data"]), (200, &json!(2)), "{b}");
    app.stop().await;
}

/// Every connection, subscribed or not, hears of every dashboard created, saved, deleted or
/// restored, whoever did it: the web app's list stays current when an MCP client or another
/// tab changes dashboards.
#[tokio::test]
async fn every_connection_hears_dashboards_change() {
    let app = support::spawn_app().await;
    let mut ws = app.ws().await;
    let changed = |kind: &'static str| {
        move |m: &Value| m["type"] == "dashboards.changed" && m["change"] == kind
    };
    let id = create(&app, "listener").await;
    let (m, _) = ws_until(&mut ws, changed("created")).await;
    assert_eq!((m["dashboardId"].as_str(), m["version"].as_u64()), (Some(id.as_str()), Some(1)));
    let add = "async (s) => { s.title = 'Gold again'; return s; }";
    app.tool("mutate", json!({"code": add, "dashboard_id": id, "session": "listener"})).await;
    let (m, _) = ws_until(&mut ws, changed("saved")).await;
    assert_eq!((m["dashboardId"].as_str(), m["version"].as_u64()), (Some(id.as_str()), Some(2)));
    let r = app.http.delete(app.url(&format!("/api/dashboards/{id}"))).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let (m, _) = ws_until(&mut ws, changed("deleted")).await;
    assert_eq!(m["dashboardId"], id.as_str());
    assert!(m.get("version").is_none(), "{m}");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_versions_compare_panel_by_panel_with_each_changed_panels_code() {
    let app = support::spawn_app().await;
    let panel = |id: &str, title: &str, code: &str| json!({"id": id, "title": title, "type": "table", "renderer": "custom", "code": code});
    let v1 = json!({"title": "Desk", "layout": {"columns": 12}, "panels": [
        panel("a", "Alpha", "const x = 1;\nreturn [{ x }];"),
        panel("b", "Beta", "return [];")
    ]});
    let (status, made) = app.post("/api/dashboards", json!({"state": v1})).await;
    assert_eq!(status, 201, "{made}");
    let id = made["data"]["id"].as_str().unwrap().to_owned();
    let v2 = json!({"title": "Desk", "layout": {"columns": 12}, "panels": [
        panel("a", "Alpha", "const x = 2;\nreturn [{ x }];"),
        panel("c", "Gamma", "return [];")
    ]});
    let (status, _) =
        app.put(&format!("/api/dashboards/{id}"), json!({"baseVersion": 1, "state": v2})).await;
    assert_eq!(status, 200);
    let (status, diff) = app.get(&format!("/api/dashboards/{id}/diff?from=1&to=2")).await;
    assert_eq!(status, 200, "{diff}");
    let kinds: Vec<(String, String)> = diff["data"]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["type"].as_str().unwrap().to_owned(),
                c["panel_id"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    for expected in [("modified_panel", "a"), ("removed_panel", "b"), ("added_panel", "c")] {
        assert!(
            kinds.iter().any(|(k, p)| k == expected.0 && p == expected.1),
            "{expected:?} in {kinds:?}"
        );
    }
    let code = diff["data"]["code"].as_object().unwrap();
    assert_eq!(code.keys().collect::<Vec<_>>(), ["a"], "only a's code changed");
    let a = code["a"].as_str().unwrap();
    assert!(a.contains("-const x = 1;") && a.contains("+const x = 2;"), "{a}");
    // Backwards too; a missing version and a bad query are clear errors.
    let (_, back) = app.get(&format!("/api/dashboards/{id}/diff?from=2&to=1")).await;
    assert!(back["data"]["code"]["a"].as_str().unwrap().contains("+const x = 1;"));
    assert_eq!(app.get(&format!("/api/dashboards/{id}/diff?from=1&to=9")).await.0, 404);
    assert_eq!(app.get(&format!("/api/dashboards/{id}/diff?from=one&to=2")).await.0, 400);
    assert_eq!(app.get(&format!("/api/dashboards/{id}/diff?from=1")).await.0, 400);
    app.stop().await;
}
