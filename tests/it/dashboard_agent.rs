//! The dashboard agent end to end: a real server (sandbox workers, store, live layer), the
//! scripted mock upstream, real SSE and WebSocket clients. An analyst's chat builds a dashboard
//! (with a panel bug the model sees and fixes), edits it, juggles several dashboards, survives a
//! model's malformed tool calls, and a second query sees the Dashboard Context and the trimmed
//! history. Refreshing panels afterwards needs no model.

use std::sync::Arc;
use std::time::Duration;

use boardsmith::llm::mock::{MockLlm, Script, Step, Turn};
use serde_json::{Value, json};

use crate::support::{self, TestApp, Ws, sse_events, ws_until};

type Events = Vec<(String, String, Value)>;

fn call(id: &str, name: &str, arguments: Value) -> Turn {
    crate::support::tool_call_turn(id, name, arguments, 3)
}

fn say(text: &str) -> Turn {
    Turn {
        steps: vec![Step::Text { text: text.into(), chunk: Some(16) }],
        times: Some(1),
        ..Turn::default()
    }
}

async fn start(turns: Vec<Turn>) -> (MockLlm, TestApp) {
    start_with_fix_rounds(turns, 3).await
}

async fn start_with_fix_rounds(turns: Vec<Turn>, max_fix_rounds: u32) -> (MockLlm, TestApp) {
    let mock = MockLlm::start(Script { turns }, 0).await.unwrap();
    let url = mock.url();
    let app = support::spawn_app_with(Arc::new(tempfile::tempdir().unwrap()), false, move |c| {
        c.llm = Some(support::llm_config(Some(&url)));
        c.max_fix_rounds = max_fix_rounds;
    })
    .await;
    (mock, app)
}

async fn ask(app: &TestApp, chat: Option<&str>, message: &str) -> reqwest::Response {
    let mut body = json!({"message": message, "agentKey": "dashboard"});
    if let Some(c) = chat {
        body["chatId"] = json!(c);
    }
    let r = app.http.post(app.url("/api/query")).json(&body).send().await.unwrap();
    assert_eq!(r.status(), 200);
    r
}

/// `(type, tool name or result)` of the tool-level events, for sequence assertions.
fn tool_trace(events: &Events) -> Vec<String> {
    events
        .iter()
        .filter_map(|(_, t, d)| match t.as_str() {
            "tool.start" => Some(format!("start {}", d["toolName"].as_str().unwrap())),
            "tool.result" if d["result"].get("error").is_some_and(|e| e.is_string()) => {
                Some("result error".into())
            }
            "tool.result" => Some("result".into()),
            "dashboard.update" => Some(format!("update v{}", d["version"])),
            "run.complete" | "run.error" | "run.cancel" => Some(t.clone()),
            _ => None,
        })
        .collect()
}

fn results<'a>(events: &'a Events, event: &str) -> Vec<&'a Value> {
    events.iter().filter(|(_, t, _)| t == event).map(|(_, _, d)| d).collect()
}

const GOLD_V1: &str = r#"return {
  title: 'Gold',
  layout: { columns: 2, gap: 12 },
  panels: [
    { id: 'gold-kline', title: 'Gold daily K-line', type: 'candlestick', renderer: 'lightweight-charts',
      indicators: ['MA(20)', 'MA(60)'],
      code: "const bars = await sdk.market.getKline({ symbol: 'XAUUSD', timeframe: '1D', limit: 200 });\nconst ma20 = utils.sma(bars, 20, 'close');\nconst ma60 = utils.sma(bars, 60, 'close');\nreturn bars.map((b, i) => ({ ...b, ma20: ma20[i], ma60: ma60[i] }));" },
    { id: 'gold-sentiment', title: 'Gold sentiment', type: 'feed', renderer: 'custom',
      code: "const news = await sdk.news.searchNews({ query: 'gold', limit: 20 });\nreturn news.map((n) => ({ time: n.time, title: n.title, text: n.summary, sentiment: n.sentiment.score.toFixed(2) }));" },
    { id: 'gold-macro', title: 'Key macro', type: 'metric_card', renderer: 'custom',
      code: "const [cpi, gdp] = await Promise.all([sdk.macro.getCpi({ country: 'US', limit: 2 }), sdk.macro.getGdp({ country: 'US', limit: 2 })]);\nreturn [{ label: 'US CPI y/y', value: cpi[1].value, unit: '%' }, { label: 'US GDP', value: gdp[1].value, unit: '%' }];" },
  ],
};"#;

const GOLD_FIX: &str = r#"async (state) => {
  const p = state.panels.find((p) => p.id === 'gold-sentiment');
  p.code = "const news = await sdk.news.searchNews({ query: 'gold', limit: 20 });\nreturn news.map((n) => ({ time: n.time, title: n.title, text: n.summary, sentiment: n.sentiment }));";
  return state;
}"#;

const SEARCH: &str = "return spec.sources.filter((s) => ['market', 'news', 'macro'].includes(s.name)).map((s) => s.name);";

/// The messages of the `n`th model request.
fn request_messages(mock: &MockLlm, n: usize) -> Vec<Value> {
    mock.requests()[n].body["messages"].as_array().unwrap().clone()
}

fn system_text(messages: &[Value]) -> String {
    messages
        .iter()
        .filter(|m| m["role"] == "system")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Builds the gold dashboard in a new chat while a WebSocket subscriber joins as soon as the
/// SSE stream names the dashboard. Returns the events, the chat, the dashboard id and the
/// subscriber with its state after applying every patch it received up to the fix.
async fn build_gold(app: &TestApp) -> (Events, String, String, Ws, Value) {
    use eventsource_stream::Eventsource;
    use futures::StreamExt;
    let r = ask(
        app,
        None,
        "Build me a gold dashboard: daily K-line with MA20/MA60, gold sentiment feed, and key macro indicators",
    )
    .await;
    let mut stream = r.bytes_stream().eventsource();
    let mut events: Events = Vec::new();
    let mut sub: Option<(Ws, Value)> = None;
    while let Some(frame) =
        tokio::time::timeout(Duration::from_secs(20), stream.next()).await.unwrap()
    {
        let frame = frame.unwrap();
        let data: Value = serde_json::from_str(&frame.data).unwrap();
        if frame.event == "dashboard.update" && sub.is_none() {
            // Subscribe while the agent is still working (the fix comes later).
            let (ws, snap) = app.subscribe(data["dashboardId"].as_str().unwrap()).await;
            assert_eq!(snap["version"], data["version"], "{snap}");
            sub = Some((ws, snap));
        }
        events.push((frame.id, frame.event, data));
    }
    let chat = events[0].2["chatId"].as_str().unwrap().to_owned();
    let (mut ws, snap) = sub.expect("a dashboard.update");
    let id = snap["dashboardId"].as_str().unwrap().to_owned();
    let mut state = snap["state"].clone();
    let (patch, _) = ws_until(&mut ws, |m| m["type"] == "dashboard.patch").await;
    assert_eq!(patch["baseVersion"], snap["version"]);
    let ops: json_patch::Patch = serde_json::from_value(patch["patch"].clone()).unwrap();
    json_patch::patch(&mut state, &ops).expect("the patch applies to the snapshot");
    (events, chat, id, ws, state)
}

fn gold_script() -> Vec<Turn> {
    vec![
        call("c1", "search", json!({"code": SEARCH})),
        call("c2", "execute", json!({"code": GOLD_V1})),
        // Slow enough that the subscriber is in before the fix lands.
        Turn { delay_ms: 150, ..call("c3", "mutate", json!({"code": GOLD_FIX})) },
        say(
            "Your gold dashboard is ready: K-line with MA20/MA60, sentiment feed and macro cards all work.",
        ),
    ]
}

#[tokio::test]
async fn a_gold_dashboard_is_built_its_bug_fixed_and_subscribers_see_it_live() {
    let (mock, app) = start(gold_script()).await;
    let (events, _chat, id, mut ws, state) = build_gold(&app).await;
    assert_eq!(
        tool_trace(&events),
        [
            "start search",
            "result",
            "start execute",
            "result",
            "update v1",
            "start mutate",
            "result",
            "update v2",
            "run.complete"
        ]
    );
    // The execute result told the model which panel failed, where and why.
    let tool_results = results(&events, "tool.result");
    let v1 = &tool_results[1]["result"]["validation"];
    assert_eq!(v1["allOk"], false, "{v1}");
    let failed: Vec<&Value> =
        v1["panels"].as_array().unwrap().iter().filter(|p| p["status"] == "error").collect();
    assert_eq!(failed.len(), 1, "{v1}");
    assert_eq!(failed[0]["panelId"], "gold-sentiment");
    let error = failed[0]["error"].as_str().unwrap();
    assert!(error.contains("line 2"), "the error names the line: {error}");
    let seen_by_model = request_messages(&mock, 2);
    let tool_msg = seen_by_model.iter().rev().find(|m| m["role"] == "tool").unwrap();
    assert!(tool_msg["content"].as_str().unwrap().contains("gold-sentiment"), "{tool_msg}");
    // The fix validated, and dashboard.update says so.
    assert_eq!(tool_results[2]["result"]["validation"]["allOk"], true);
    let updates = results(&events, "dashboard.update");
    assert_eq!(updates[0]["dashboardId"], id.as_str());
    assert_eq!(updates[1]["version"], 2);
    assert_eq!(updates[1]["changes"][0]["type"], "modified_panel", "{}", updates[1]);
    assert_eq!(updates[1]["validation"]["allOk"], true);
    // Stored: two versions; the subscriber's patched snapshot equals the stored state.
    let (_, versions) = app.get(&format!("/api/dashboards/{id}/versions")).await;
    assert_eq!(versions["data"].as_array().unwrap().len(), 2, "{versions}");
    let (_, current) = app.get(&format!("/api/dashboards/{id}")).await;
    assert_eq!(state, current["data"]["state"]);
    // The fixed panel's data reached the subscriber.
    let (data, _) =
        ws_until(&mut ws, |m| m["type"] == "panel.data" && m["panelId"] == "gold-sentiment").await;
    assert!(!data["data"].as_array().unwrap().is_empty(), "{data}");
    // The Dashboard Context reached the model after the dashboard existed, not before.
    let before = system_text(&request_messages(&mock, 1));
    assert!(before.contains("No active dashboard in this chat yet"), "{before}");
    let context = system_text(&request_messages(&mock, 2));
    assert!(context.contains("Dashboard Context"), "{context}");
    assert!(
        context.contains(&id) && context.contains("gold-kline (Gold daily K-line, candlestick)")
    );
    // Its panels ran on the demo generators, and the context says so.
    let demo = context.lines().find(|l| l.starts_with("Demo data")).expect("demo line");
    assert!(demo.contains("gold-kline"), "{context}");

    // Refresh needs no agent: the model is gone, panels still refresh and push.
    mock.stop();
    let requests_before = mock.requests().len();
    let (status, body) =
        app.post(&format!("/api/dashboards/{id}/refresh"), json!({"panelId": "gold-kline"})).await;
    assert_eq!(status, 200, "{body}");
    let (data, _) =
        ws_until(&mut ws, |m| m["type"] == "panel.data" && m["panelId"] == "gold-kline").await;
    assert!(data["rowCount"].as_u64().unwrap() > 60, "{data}");
    assert_eq!(mock.requests().len(), requests_before);
    app.stop().await;
}

const BTC_HEATMAP_AND_3_COLUMNS: &str = r#"async (state) => {
  state.layout.columns = 3;
  state.panels.push({
    id: 'btc-sentiment', title: 'BTC sentiment heatmap', type: 'heatmap', renderer: 'echarts',
    code: "return await sdk.correlation.getMatrix({ symbols: ['BTCUSDT', 'ETHUSDT', 'XAUUSD'], window: 90 });",
  });
  return state;
}"#;

#[tokio::test]
async fn an_edit_in_the_same_chat_sees_the_context_and_the_trimmed_history() {
    let mut script = gold_script();
    script.push(call("c4", "mutate", json!({"code": BTC_HEATMAP_AND_3_COLUMNS})));
    script.push(say("Added the BTC heatmap; the grid has 3 columns now."));
    let (mock, app) = start(script).await;
    let (_, chat, id, mut ws, _) = build_gold(&app).await;
    let events = sse_events(
        ask(&app, Some(&chat), "add a BTC sentiment heatmap and make it 3 columns").await,
    )
    .await;
    assert_eq!(tool_trace(&events), ["start mutate", "result", "update v3", "run.complete"]);
    let update = results(&events, "dashboard.update")[0];
    let mut kinds: Vec<&str> =
        update["changes"].as_array().unwrap().iter().map(|c| c["type"].as_str().unwrap()).collect();
    kinds.sort_unstable();
    assert_eq!(kinds, ["added_panel", "layout_changed"], "{update}");
    let (patch, _) =
        ws_until(&mut ws, |m| m["type"] == "dashboard.patch" && m["version"] == 3).await;
    assert!(patch["patch"].to_string().contains("btc-sentiment"));

    // What the model saw on the second query: the context (3 panels now known from v2), the
    // first query's turns, with the execute result trimmed to summary + validation.
    let second = request_messages(&mock, 4);
    let context = system_text(&second);
    assert!(context.contains(&format!("({id})")) && context.contains("gold-macro"), "{context}");
    let roles: Vec<&str> = second.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles.iter().filter(|r| **r == "user").count(), 2, "{roles:?}");
    let execute_result = second
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == "c2")
        .expect("the first query's execute result is replayed");
    let replayed: Value =
        serde_json::from_str(execute_result["content"].as_str().unwrap()).unwrap();
    assert!(replayed.get("state").is_none(), "state trimmed: {replayed}");
    assert_eq!(replayed["summary"]["title"], "Gold");
    assert_eq!(replayed["validation"]["allOk"], false);
    let execute_call = second
        .iter()
        .find_map(|m| m["tool_calls"].as_array().and_then(|c| c.iter().find(|c| c["id"] == "c2")))
        .expect("the execute call is replayed");
    assert!(
        execute_call["function"]["arguments"].as_str().unwrap().contains("gold-sentiment"),
        "code kept"
    );
    app.stop().await;
}

const CRYPTO: &str = r#"return {
  title: 'Crypto',
  layout: { columns: 1 },
  panels: [{ id: 'btc-quote', title: 'BTC', type: 'metric_card', renderer: 'custom',
    code: "const q = await sdk.crypto.getQuote({ symbol: 'BTCUSDT' });\nreturn { label: q.symbol, value: q.price, change: q.changePct };" }],
};"#;

#[tokio::test]
async fn a_chat_creates_switches_between_and_deletes_dashboards() {
    let mut script = gold_script();
    script.push(call("d1", "execute", json!({"code": CRYPTO})));
    script.push(say("Created the crypto dashboard."));
    let (mock, app) = start(script).await;
    let (_, chat, gold, _ws, _) = build_gold(&app).await;
    let created = sse_events(ask(&app, Some(&chat), "new crypto dashboard").await).await;
    let crypto =
        results(&created, "dashboard.update")[0]["dashboardId"].as_str().unwrap().to_owned();
    assert_ne!(crypto, gold);
    let session = app.app.tools.session(Some(&chat)).await.unwrap();
    assert_eq!(session.active.as_deref(), Some(crypto.as_str()));

    mock.set_script(Script {
        turns: vec![
            call("s1", "get_state", json!({"dashboard_id": gold})),
            say("Back on the gold dashboard."),
            call("x1", "mutate", json!({"code": "async (state) => null", "dashboard_id": crypto})),
            say("Deleted the crypto dashboard."),
        ],
    });
    let switched = sse_events(ask(&app, Some(&chat), "back to the gold one").await).await;
    assert_eq!(tool_trace(&switched), ["start get_state", "result", "run.complete"]);
    let session = app.app.tools.session(Some(&chat)).await.unwrap();
    assert_eq!(session.active.as_deref(), Some(gold.as_str()));
    // The switch shows in the next call's context: both dashboards, gold active.
    let deleted = sse_events(ask(&app, Some(&chat), "delete the crypto dashboard").await).await;
    let context = system_text(&request_messages(&mock, mock.requests().len() - 2));
    assert!(context.contains(&format!("Active dashboard: \"Gold\" ({gold})")), "{context}");
    assert!(context.contains(&format!("\"Crypto\" ({crypto})")), "{context}");
    let update = results(&deleted, "dashboard.update")[0];
    assert_eq!(update["deleted"], true, "{update}");
    assert_eq!(update["dashboardId"], crypto.as_str());
    let (_, list) = app.get("/api/dashboards").await;
    let ids: Vec<&str> =
        list["data"].as_array().unwrap().iter().map(|d| d["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [gold.as_str()], "the crypto dashboard is deleted");
    let session = app.app.tools.session(Some(&chat)).await.unwrap();
    assert_eq!(session.active.as_deref(), Some(gold.as_str()));
    assert!(session.dashboards.iter().all(|d| d.id != crypto));
    app.stop().await;
}

#[tokio::test]
async fn malformed_tool_calls_and_unknown_tools_get_errors_the_model_can_act_on() {
    let (mock, app) = start(vec![
        call("m1", "execute", json!({"cod": "return {}"})),
        call("m2", "plot_chart", json!({"symbol": "XAUUSD"})),
        Turn {
            steps: vec![Step::ToolCall {
                id: Some("m3".into()),
                name: "mutate".into(),
                arguments: json!("{\"code\": \"async (s) => s"),
                fragments: None,
            }],
            times: Some(1),
            ..Turn::default()
        },
        say("Sorry, I could not build it."),
    ])
    .await;
    let events = sse_events(ask(&app, None, "build something").await).await;
    let errors: Vec<String> = results(&events, "tool.result")
        .iter()
        .map(|r| r["result"]["error"].as_str().unwrap_or("NO ERROR").to_owned())
        .collect();
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(errors[0].contains("\"cod\"") && errors[0].contains("\"code\""), "{}", errors[0]);
    assert!(errors[1].contains("unknown tool `plot_chart`"), "{}", errors[1]);
    assert!(errors[1].contains("execute") && errors[1].contains("mutate"), "names the tools");
    assert!(errors[2].contains("invalid arguments for `mutate`"), "{}", errors[2]);
    assert_eq!(events.last().unwrap().1, "run.complete");
    assert_eq!(mock.requests().len(), 4, "the run went on after each error");
    let (_, list) = app.get("/api/dashboards").await;
    assert_eq!(list["data"], json!([]), "nothing was saved");
    app.stop().await;
}

/// A mutate that leaves the sentiment panel broken (a different bug each time).
fn still_broken(n: u32) -> String {
    format!(
        r#"async (state) => {{
  state.panels.find((p) => p.id === 'gold-sentiment').code = "return missing{n}.value;";
  return state;
}}"#
    )
}

#[tokio::test]
async fn the_fix_round_cap_tells_the_model_to_stop_and_refuses_further_writes() {
    let (mock, app) = start_with_fix_rounds(
        vec![
            call("c1", "execute", json!({"code": GOLD_V1})),
            call("c2", "mutate", json!({"code": still_broken(1)})),
            call("c3", "mutate", json!({"code": still_broken(2)})),
            call("c4", "mutate", json!({"code": GOLD_FIX})),
            say("gold-kline and gold-macro work; gold-sentiment still fails."),
        ],
        1,
    )
    .await;
    let events = sse_events(ask(&app, None, "gold dashboard please").await).await;
    let results: Vec<&Value> =
        results(&events, "tool.result").iter().map(|r| &r["result"]).collect();
    assert_eq!(results[0]["fix_rounds_left"], 1, "{}", results[0]);
    assert_eq!(results[1]["fix_rounds_left"], 0, "{}", results[1]);
    assert!(results[1]["note"].as_str().unwrap().contains("which panels work"), "{}", results[1]);
    assert!(results[2]["note"].is_null());
    assert!(
        results[2]["error"]
            .as_str()
            .unwrap()
            .contains("fix-round cap reached (at most 1 per turn)")
    );
    let refused = results[3]["error"].as_str().unwrap_or_default();
    assert!(refused.contains("fix-round cap"), "still refused: {}", results[3]);
    assert_eq!(events.last().unwrap().1, "run.complete");
    assert_eq!(mock.requests().len(), 5);
    // Refused writes saved nothing: the dashboard stays at the first fix attempt.
    let id = results[0]["dashboard_id"].as_str().unwrap();
    let (_, versions) = app.get(&format!("/api/dashboards/{id}/versions")).await;
    assert_eq!(versions["data"].as_array().unwrap().len(), 2);
    app.stop().await;
}
