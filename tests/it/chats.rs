//! Chats as their people manage them (`/api/chats`): titles made from the exchange, rename,
//! search, retention; and the tools a query may narrow to (`GET /api/tools`, `tools: [...]`).

use std::sync::Arc;

use boardsmith::llm::mock::MockLlm;
use serde_json::{Value, json};

use crate::support::{self, TestApp};

async fn demo_app() -> (MockLlm, TestApp) {
    let mock = MockLlm::start(MockLlm::demo().unwrap(), 0).await.unwrap();
    let url = mock.url();
    let app = support::spawn_app_with(Arc::new(tempfile::tempdir().unwrap()), false, move |c| {
        c.llm = Some(support::llm_config(Some(&url)));
    })
    .await;
    (mock, app)
}

async fn ask(app: &TestApp, body: Value) -> Value {
    let (status, body) = app.post("/api/query", body).await;
    assert_eq!(status, 200, "{body}");
    body["data"].clone()
}

async fn chats(app: &TestApp, query: &str) -> Vec<Value> {
    let (status, body) = app.get(&format!("/api/chats{query}")).await;
    assert_eq!(status, 200, "{body}");
    body["data"].as_array().unwrap().clone()
}

fn chat<'a>(list: &'a [Value], id: &str) -> &'a Value {
    list.iter().find(|c| c["chatId"] == id).unwrap_or_else(|| panic!("no {id} in {list:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_is_titled_from_its_exchange_renamed_searched_and_expired() {
    let (mock, app) = demo_app().await;
    ask(&app, json!({"message": "Build me a gold dashboard", "agentKey": "dashboard", "chatId": "gold", "stream": false})).await;
    ask(&app, json!({"message": "Can you please tell me about copper?", "chatId": "copper", "stream": false})).await;
    let (_, list) = app.get("/api/dashboards").await;
    let built = list["data"][0]["title"].as_str().unwrap().to_owned();
    let all = chats(&app, "").await;
    // The dashboard the first exchange built names it; the other loses its request words.
    assert_eq!(chat(&all, "gold")["title"], built.as_str(), "{all:?}");
    assert_eq!(chat(&all, "copper")["title"], "Tell me about copper", "{all:?}");
    assert_eq!(chat(&all, "gold")["chatName"], "Build me a", "the seed's name stays");

    let (status, renamed) =
        app.patch("/api/chats/copper", json!({"title": "  Copper notes "})).await;
    assert_eq!(status, 200, "{renamed}");
    assert_eq!(renamed["data"]["title"], "Copper notes");
    assert_eq!(chat(&chats(&app, "").await, "copper")["title"], "Copper notes");
    for bad in [
        json!({"title": ""}),
        json!({"title": "x".repeat(121)}),
        json!({"title": "a\nb"}),
        json!({"name": "x"}),
    ] {
        let (status, body) = app.patch("/api/chats/copper", bad.clone()).await;
        assert_eq!(status, 400, "{bad} → {body}");
        assert_ne!(body["code"], 0);
    }
    assert_eq!(app.patch("/api/chats/nobody", json!({"title": "x"})).await.0, 404);

    // Search: the title, or any message of the person or the agent.
    let ids = |v: Vec<Value>| {
        v.iter().map(|c| c["chatId"].as_str().unwrap().to_owned()).collect::<Vec<_>>()
    };
    assert_eq!(ids(chats(&app, "?q=NOTES").await), ["copper"], "by the title");
    assert_eq!(ids(chats(&app, "?q=tell%20me%20ABOUT").await), ["copper"], "by a message");
    let answered = ids(chats(&app, "?q=offline%20demo").await);
    assert_eq!(answered, ["copper"], "by the agent's answer (the demo's catch-all reply)");
    assert!(chats(&app, "?q=platinum").await.is_empty());
    assert_eq!(app.get("/api/chats?x=1").await.0, 400);

    // Retention: chats untouched for longer are deleted (the sweep's clock moved ahead).
    let (status, body) = app.put("/api/admin/settings", json!({"chatRetentionDays": 0})).await;
    assert_eq!(status, 400, "{body}");
    let now = chrono::Utc::now().timestamp_millis();
    let gone = app.app.chats.expire(30, now).await.unwrap();
    assert!(gone.is_empty(), "nothing is 30 days old yet: {gone:?}");
    let mut gone = app.app.chats.expire(30, now + 31 * 86_400_000).await.unwrap();
    gone.sort();
    assert_eq!(gone, ["copper", "gold"]);
    assert!(chats(&app, "").await.is_empty());
    assert_eq!(app.get("/api/chat?chatId=gold").await.0, 404);
    mock.stop();
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_are_listed_and_a_query_may_narrow_its_agents_tools_but_not_widen_them() {
    let (mock, app) = demo_app().await;
    let (status, tools) = app.get("/api/tools").await;
    assert_eq!(status, 200, "{tools}");
    let tools = tools["data"].as_array().unwrap();
    let mutate = tools.iter().find(|t| t["name"] == "mutate").expect("mutate is listed");
    assert_eq!(mutate["kind"], "backend");
    assert!(mutate["agents"].as_array().unwrap().contains(&json!("dashboard")), "{mutate}");
    assert_eq!(mutate["parameters"]["type"], "object", "{mutate}");
    let (status, one) = app.get("/api/tools/mutate").await;
    assert_eq!(status, 200);
    assert_eq!(&one["data"], mutate);
    assert_eq!(app.get("/api/tools/nothing_here").await.0, 404);

    // Narrowed: the model is offered only `search`.
    ask(&app, json!({"message": "Build me a gold dashboard", "agentKey": "dashboard", "tools": ["search"], "stream": false})).await;
    let offered: Vec<String> = mock.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(offered, ["search"]);
    // Widened: refused before any run, naming the tool.
    let (status, body) = app
        .post("/api/query", json!({"message": "hi", "agentKey": "dashboard", "tools": ["search", "bash"], "stream": false}))
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(body["msg"].as_str().unwrap().contains("`bash`"), "{body}");
    mock.stop();
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_tool_call_answers_422_with_the_tools_result() {
    let app = support::spawn_app().await;
    // A builder that throws: nothing is saved, and the client is told so with a 4xx.
    let (status, body) =
        app.post("/api/tools/execute", json!({"code": "throw new Error('boom')"})).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["code"], 422);
    assert!(body["msg"].as_str().unwrap().contains("boom"), "{body}");
    assert_eq!(body["data"]["error"], body["msg"]);
    assert_eq!(body["data"]["dashboard_id"], "");
    // 49 panels are more than a dashboard holds.
    let panels: Vec<Value> = (0..49)
        .map(|i| json!({"id": format!("p{i}"), "title": "P", "type": "table", "renderer": "custom", "code": "return [];"}))
        .collect();
    let state =
        json!({"title": "Big", "layout": {"columns": 12}, "panels": panels, "variables": []});
    let (status, body) =
        app.post("/api/tools/execute", json!({"code": format!("return {state};")})).await;
    assert_eq!(status, 422, "{body}");
    assert!(body["msg"].as_str().unwrap().contains("panels"), "{body}");
    let (_, list) = app.get("/api/dashboards").await;
    assert!(list["data"].as_array().unwrap().is_empty(), "nothing was saved: {list}");
    app.stop().await;
}
