//! Usage accounting and budgets over real HTTP: model calls through `/v1` and agent runs
//! counted per key, model and agent with their cost from the model's prices, reported by
//! `GET /api/usage`, kept across a restart, and a key's budget enforced with a 429.

use std::sync::Arc;

use boardsmith::llm::mock::{MockLlm, Script};
use serde_json::{Value, json};

use crate::openai_api::{app_with, text_turn};
use crate::support::authed_client;

#[tokio::test]
async fn calls_are_counted_per_key_model_and_agent_and_budgets_hold() {
    let mock = MockLlm::start(Script { turns: vec![text_turn("Carbon is element six.", 5)] }, 0)
        .await
        .unwrap();
    let app = app_with(&mock).await;
    // mock-model costs $1 / $2 per million tokens: a call of 12 in and 5 out is $0.000022.
    let (status, body) = app
        .post(
            "/api/keys",
            json!({"name": "metered", "scopes": ["models", "agents"], "budgetUsd": 0.00003}),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let key_id = body["data"]["id"].as_str().unwrap().to_owned();
    let client = authed_client(body["data"]["key"].as_str().unwrap());
    let ask =
        json!({"model": "mock/mock-model", "messages": [{"role": "user", "content": "carbon?"}]});
    let post = |body: Value| {
        let (client, url) = (client.clone(), app.url("/v1/chat/completions"));
        async move { client.post(url).json(&body).send().await.unwrap() }
    };
    assert_eq!(post(ask.clone()).await.status(), 200);
    let streamed = json!({"model": "mock/mock-model", "stream": true, "messages": [{"role": "user", "content": "carbon?"}]});
    let r = post(streamed).await;
    assert_eq!(r.status(), 200);
    r.text().await.unwrap();
    // The budget is used up: the next call is refused, reading still works.
    let r = post(ask.clone()).await;
    assert_eq!(r.status(), 429);
    let body: Value = r.json().await.unwrap();
    assert!(body["msg"].as_str().unwrap().contains("budget"), "{body}");
    assert_eq!(client.get(app.url("/v1/models")).send().await.unwrap().status(), 200);

    // The owner's own agent run is counted too, under the agent.
    let r = app
        .http
        .post(app.url("/v1/agents/demoModePlain/completions"))
        .json(&json!({"model": "x", "messages": [{"role": "user", "content": "carbon?"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);

    let (status, report) = app.get("/api/usage?groupBy=key,model,agent").await;
    assert_eq!(status, 200, "{report}");
    let rows = report["data"]["rows"].as_array().unwrap();
    let keyed = rows.iter().find(|r| r["key"] == key_id.as_str()).expect("the key's row");
    assert_eq!(keyed["model"], "mock/mock-model");
    assert_eq!(keyed["agent"], "none");
    assert_eq!(keyed["requests"], 2, "the refused call is not a model call: {keyed}");
    assert_eq!(keyed["inputTokens"], 24);
    assert_eq!(keyed["outputTokens"], 10);
    assert_eq!(keyed["cachedTokens"], 8);
    let cost = keyed["costUsd"].as_f64().unwrap();
    assert!((cost - 0.000044).abs() < 1e-9, "{cost}");
    let owner = rows.iter().find(|r| r["key"] == "owner").expect("the owner's row");
    assert_eq!(owner["agent"], "demoModePlain");
    assert_eq!(owner["requests"], 1);

    let (status, _) = app.get("/api/usage?groupBy=colour").await;
    assert_eq!(status, 400);
    let (status, _) = app.get("/api/usage?from=2026-02-01&to=2026-01-01").await;
    assert_eq!(status, 400);
    let (status, body) = app.get("/api/usage?from=2020-01-01&to=2020-01-02").await;
    assert_eq!((status, body["data"]["rows"].clone()), (200, json!([])));
    // A key without admin does not see the report.
    assert_eq!(client.get(app.url("/api/usage")).send().await.unwrap().status(), 403);

    // Counted usage survives a restart (written at shutdown at the latest).
    let dir = Arc::clone(&app.dir);
    app.stop().await;
    let app = crate::support::spawn_app_in(dir, false).await;
    let (_, after) = app.get("/api/usage?groupBy=key").await;
    let keyed = after["data"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"] == key_id.as_str())
        .cloned();
    assert_eq!(keyed.map(|r| r["requests"].clone()), Some(json!(2)), "{after}");
}
