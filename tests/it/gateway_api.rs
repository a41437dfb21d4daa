//! The agent gateway's JSON API over real HTTP against the real server: agents and their
//! detail, viewports, chats written through chat memory, and frontend-tool submits.

use std::time::Duration;

use boardsmith::agent::events::Query;
use boardsmith::llm::{AssistantMessage, ContentBlock};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::support::{self, TestApp};

/// Asserts a 4xx envelope whose message contains `needle`.
fn assert_error(status: u16, body: &Value, expected: u16, needle: &str) {
    assert_eq!(status, expected, "{body}");
    assert_eq!(body["code"], expected, "{body}");
    let msg = body["msg"].as_str().unwrap();
    assert!(msg.contains(needle), "`{msg}` should mention `{needle}`");
}

/// Stores one answered run of `chat` through chat memory, as the run loop does.
async fn store_run(app: &TestApp, chat: &str, run: &str, question: &str, answer: &str) {
    let query = Query {
        request_id: format!("req-{run}"),
        chat_id: chat.into(),
        role: "user".into(),
        message: question.into(),
        agent_key: Some("demoModePlain".into()),
        ..Query::default()
    };
    let memory = &app.app.memory;
    let mut rec = memory.recorder(run, query, 1_000);
    let response = AssistantMessage {
        content: vec![ContentBlock::text(answer)],
        model: "mock-model".into(),
        provider: "mock".into(),
        ..AssistantMessage::default()
    };
    rec.assistant(&response, &[], 1_005, Some(5));
    memory.append(rec.finish()).await.unwrap();
}

#[tokio::test]
async fn agents_are_listed_and_detailed() {
    let app = support::spawn_app().await;
    let (status, body) = app.get("/api/agents").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["code"], 0);
    let agents = body["data"].as_array().unwrap();
    let keys: Vec<&str> = agents.iter().map(|a| a["key"].as_str().unwrap()).collect();
    assert_eq!(keys.len(), 14, "{keys:?}");
    for key in ["dashboard", "dashboardZh", "demoAction", "demoModePlain", "demoViewport"] {
        assert!(keys.contains(&key), "{key} missing from {keys:?}");
    }
    let action = agents.iter().find(|a| a["key"] == "demoAction").unwrap();
    assert_eq!(action["mode"], "PLAIN_TOOLING");
    assert_eq!(action["tools"], json!(["switch_theme", "launch_fireworks", "show_modal"]));
    assert!(action["description"].as_str().unwrap().starts_with("Action demo"));
    assert!(action.get("providerKey").is_none(), "empty providerKey is the default: {action}");
    assert!(action.get("type").is_none() && action.get("members").is_none(), "{action}");
    let desk = agents.iter().find(|a| a["key"] == "researchDesk").unwrap();
    assert_eq!(
        (&desk["type"], &desk["members"]),
        (&json!("supervisor"), &json!(["dashboard", "macroWriter"]))
    );

    let (status, body) = app.get("/api/agent?agentKey=demoAction").await;
    assert_eq!(status, 200, "{body}");
    let agent = &body["data"];
    assert_eq!(agent["key"], "demoAction");
    assert_eq!(agent["mode"], "PLAIN_TOOLING");
    let tools = agent["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 3, "{agent}");
    assert_eq!(tools[0]["name"], "switch_theme");
    assert_eq!(tools[0]["kind"], "action");
    assert!(tools[0]["parameters"].is_object());
    assert!(agent["prompts"]["system"].as_str().unwrap().contains("switch_theme"), "{agent}");
    assert_eq!(agent["missingTools"], json!([]));

    let (status, body) = app.get("/api/agent?agentKey=demoModeReact").await;
    assert_eq!(status, 200, "{body}");
    let kinds: Vec<&str> = body["data"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["backend", "backend", "backend"]);
    app.stop().await;
}

#[tokio::test]
async fn agent_and_viewport_errors_name_the_parameter() {
    let app = support::spawn_app().await;
    let (status, body) = app.get("/api/agent?agentKey=nope").await;
    assert_error(status, &body, 404, "nope");
    let (status, body) = app.get("/api/agent").await;
    assert_error(status, &body, 400, "agentKey");
    let (status, body) = app.get("/api/agent?agentKey=").await;
    assert_error(status, &body, 400, "agentKey");
    let (status, body) = app.get("/api/agent?agentKey=demoAction&key=x").await;
    assert_error(status, &body, 400, "`key`");
    let (status, body) = app.get("/api/viewport?viewportKey=nope").await;
    assert_error(status, &body, 404, "nope");
    let (status, body) = app.get("/api/viewport").await;
    assert_error(status, &body, 400, "viewportKey");
    app.stop().await;
}

#[tokio::test]
async fn viewports_answer_html_wrapped_and_ignore_chat_and_run() {
    let app = support::spawn_app().await;
    let (status, body) = app.get("/api/viewport?viewportKey=show_weather_card").await;
    assert_eq!(status, 200, "{body}");
    let html = body["data"]["html"].as_str().unwrap();
    assert!(html.starts_with("<!doctype html>"), "{html}");
    assert_eq!(body["data"].as_object().unwrap().len(), 1);

    let (status, again) =
        app.get("/api/viewport?viewportKey=show_weather_card&chatId=c-1&runId=r-1").await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["data"], body["data"]);

    // A JSON viewport is answered as its object, directly.
    let dir = app.dir.path().join("viewports");
    std::fs::write(
        dir.join("pick_city.qlc"),
        r#"{"type": "object", "properties": {"city": {"type": "string"}}}"#,
    )
    .unwrap();
    app.app.catalog.reload_now().await;
    let (status, body) = app.get("/api/viewport?viewportKey=pick_city").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["properties"]["city"]["type"], "string", "{body}");
    app.stop().await;
}

#[tokio::test]
async fn chats_are_empty_then_listed_and_detailed_with_snapshot_events() {
    let app = support::spawn_app().await;
    let (status, body) = app.get("/api/chats").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"], json!([]));

    store_run(&app, "chat-1", "run-1", "What is carbon?", "Carbon is element 6.").await;
    let (status, body) = app.get("/api/chats").await;
    assert_eq!(status, 200, "{body}");
    let chats = body["data"].as_array().unwrap();
    assert_eq!(chats.len(), 1, "{body}");
    assert_eq!(chats[0]["chatId"], "chat-1");
    assert_eq!(chats[0]["chatName"], "What is ca");
    assert_eq!(chats[0]["firstAgentKey"], "demoModePlain");
    assert!(chats[0]["createdAt"].is_i64() && chats[0]["updatedAt"].is_i64(), "{body}");

    let (status, body) = app.get("/api/chat?chatId=chat-1").await;
    assert_eq!(status, 200, "{body}");
    let chat = &body["data"];
    assert_eq!(chat["chatId"], "chat-1");
    assert!(chat.get("messages").is_none_or(Value::is_null), "{chat}");
    let events = chat["events"].as_array().unwrap();
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types.first(), Some(&"request.query"), "{types:?}");
    assert!(types.contains(&"content.snapshot"), "{types:?}");
    assert_eq!(types.last(), Some(&"run.complete"), "{types:?}");
    let content = events.iter().find(|e| e["type"] == "content.snapshot").unwrap();
    assert_eq!(content["text"], "Carbon is element 6.");
    assert_eq!(events[0]["seq"], 1);

    let (status, body) = app.get("/api/chat?chatId=chat-1&includeRawMessages=true").await;
    assert_eq!(status, 200, "{body}");
    let messages = body["data"]["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{body}");
    assert_eq!(messages[0]["role"], "user");
    assert_eq!(messages[0]["runId"], "run-1");
    app.stop().await;
}

#[tokio::test]
async fn chat_errors_are_4xx_naming_the_problem() {
    let app = support::spawn_app().await;
    let (status, body) = app.get("/api/chat?chatId=chat-1&includeEvents=true").await;
    assert_error(status, &body, 400, "deprecated");
    let (status, body) = app.get("/api/chat?chatId=missing").await;
    assert_error(status, &body, 404, "missing");
    let (status, body) = app.get("/api/chat?chatId=..%2Fetc").await;
    assert_error(status, &body, 400, "chatId");
    let (status, body) = app.get("/api/chat").await;
    assert_error(status, &body, 400, "chatId");
    let (status, body) = app.get("/api/chat?chatId=c&includeRawMessages=yes").await;
    assert_error(status, &body, 400, "includeRawMessages");
    app.stop().await;
}

#[tokio::test]
async fn submit_rejects_unknown_waiters_and_bad_bodies() {
    let app = support::spawn_app().await;
    let (status, body) = app
        .post("/api/submit", json!({"runId": "r-1", "toolId": "t-1", "payload": {"params": {}}}))
        .await;
    assert_error(status, &body, 404, "r-1");
    let (status, body) = app.post("/api/submit", json!({"runId": "r-1", "payload": {}})).await;
    assert_error(status, &body, 400, "toolId");
    let (status, body) =
        app.post("/api/submit", json!({"runId": 7, "toolId": "t", "payload": {}})).await;
    assert_error(status, &body, 400, "runId");
    let (status, body) =
        app.post("/api/submit", json!({"runId": " ", "toolId": "t", "payload": {}})).await;
    assert_error(status, &body, 400, "runId");
    let (status, body) = app.post("/api/submit", json!({"runId": "r", "toolId": "t"})).await;
    assert_error(status, &body, 400, "payload");
    let r = app
        .http
        .post(app.url("/api/submit"))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    app.stop().await;
}

#[tokio::test]
async fn a_waiting_frontend_tool_is_released_by_submit() {
    let app = support::spawn_app().await;
    let pending = app.app.submits.expect("run-9", "tool-9").unwrap();
    let waiter = tokio::spawn(async move {
        pending.wait(Some(Duration::from_secs(10)), &CancellationToken::new()).await
    });

    // Another tool of the same run is not waiting.
    let (status, body) =
        app.post("/api/submit", json!({"runId": "run-9", "toolId": "other", "payload": {}})).await;
    assert_error(status, &body, 404, "other");

    let (status, body) = app
        .post(
            "/api/submit",
            json!({"requestId": "req-9", "chatId": "chat-9", "runId": "run-9", "toolId": "tool-9",
                   "viewId": "view-1", "payload": {"params": {"confirmed": true}}}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["accepted"], true);
    assert_eq!(body["data"]["runId"], "run-9");
    assert_eq!(body["data"]["toolId"], "tool-9");
    let result = tokio::time::timeout(Duration::from_secs(5), waiter).await.unwrap().unwrap();
    assert_eq!(result.unwrap(), json!({"confirmed": true}));
    assert!(!app.app.submits.is_waiting("run-9", "tool-9"));

    // Released once: a second submit finds nobody waiting.
    let (status, body) =
        app.post("/api/submit", json!({"runId": "run-9", "toolId": "tool-9", "payload": {}})).await;
    assert_error(status, &body, 404, "run-9");
    app.stop().await;
}
