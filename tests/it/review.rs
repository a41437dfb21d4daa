//! Review mode: the agent's changes to a dashboard (or in a chat) in review mode are a draft
//! that only its analyst sees until they accept it; a rejected draft leaves no trace. On the
//! embedded store and on two PostgreSQL nodes.

use std::sync::Arc;

use boardsmith::llm::mock::MockLlm;
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{self, TestApp};

const PASSWORD: &str = "a long enough password";

async fn send(
    c: &reqwest::Client,
    app: &TestApp,
    m: Method,
    path: &str,
    body: Value,
) -> (u16, Value) {
    let mut req = c.request(m, app.url(path));
    if !body.is_null() {
        req = req.json(&body);
    }
    let r = req.send().await.unwrap();
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}

/// The agent's run of `message` in `chat`, as its events; the `draft` flags its dashboard
/// tools answered with.
async fn run(c: &reqwest::Client, app: &TestApp, chat: &str, message: &str) -> Vec<bool> {
    let body =
        json!({"message": message, "agentKey": "dashboard", "chatId": chat, "stream": false});
    let (status, body) = send(c, app, Method::POST, "/api/query", body).await;
    assert_eq!(status, 200, "{body}");
    let events = body["data"]["events"].as_array().cloned().unwrap_or_default();
    events
        .iter()
        .filter(|e| e["type"] == "tool.result")
        .filter_map(|e| {
            let text =
                e["result"].as_str().map(str::to_owned).unwrap_or_else(|| e["result"].to_string());
            let v: Value = serde_json::from_str(&text).ok()?;
            v.get("dashboard_id").map(|_| v["draft"] == true)
        })
        .collect()
}

fn panel_ids(record: &Value) -> Vec<String> {
    record["state"]["panels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn review_mode_keeps_the_agents_edits_a_draft_for_its_analyst_until_accepted() {
    let mock = MockLlm::start(MockLlm::demo().unwrap(), 0).await.unwrap();
    let url = mock.url();
    let app = support::spawn_app_with(Arc::new(tempfile::tempdir().unwrap()), false, move |c| {
        c.llm = Some(support::llm_config(Some(&url)));
    })
    .await;
    app.add_user("ann", PASSWORD, "editor").await;
    app.add_user("vic", PASSWORD, "viewer").await;
    let ann = app.cookie_client(&app.password_cookie("ann", PASSWORD).await);
    let vic = app.cookie_client(&app.password_cookie("vic", PASSWORD).await);
    assert_eq!(run(&ann, &app, "c1", "Build me a gold dashboard").await.last(), Some(&false));
    let (_, list) = send(&ann, &app, Method::GET, "/api/dashboards", Value::Null).await;
    let id = list["data"][0]["id"].as_str().unwrap().to_owned();
    let at = |p: &str| format!("/api/dashboards/{id}{p}");
    assert_eq!(
        send(&ann, &app, Method::PUT, &at("/access"), json!({"visibility": "team"})).await.0,
        200
    );
    let (_, published) = send(&vic, &app, Method::GET, &at(""), Value::Null).await;
    let (_, history) = send(&ann, &app, Method::GET, &at("/versions"), Value::Null).await;

    // Review mode is the editors' to turn on; a viewer reads it only.
    assert_eq!(
        send(&vic, &app, Method::PUT, &at("/review"), json!({"enabled": true})).await.0,
        403
    );
    assert_eq!(
        send(&ann, &app, Method::PUT, &at("/review"), json!({"enabled": true})).await.0,
        200
    );
    assert_eq!(
        send(&vic, &app, Method::GET, &at("/review"), Value::Null).await.1["data"]["enabled"],
        true
    );

    // The agent's mutate goes into ann's draft: nothing new is published.
    assert_eq!(run(&ann, &app, "c1", "Add a gold news feed").await, [true]);
    let (_, now) = send(&vic, &app, Method::GET, &at(""), Value::Null).await;
    assert_eq!(now["data"]["version"], published["data"]["version"]);
    assert_eq!(panel_ids(&now["data"]), panel_ids(&published["data"]));
    let (status, draft) = send(&ann, &app, Method::GET, &at("/draft"), Value::Null).await;
    assert_eq!(status, 200, "{draft}");
    let draft = &draft["data"];
    let added: Vec<&Value> = draft["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["type"] == "added_panel")
        .collect();
    assert_eq!(added.len(), 1, "{draft}");
    let news = added[0]["panel_id"].as_str().unwrap().to_owned();
    assert!(draft["tests"][&news]["ok"].is_boolean(), "the new panel was test-run: {draft}");
    assert_eq!(draft["author"]["via"], "agent");
    assert_eq!(draft["author"]["chat"], "c1");
    assert_eq!(draft["baseVersion"], published["data"]["version"]);
    // Nobody else sees it.
    assert_eq!(send(&vic, &app, Method::GET, &at("/draft"), Value::Null).await.0, 404);
    let has = |c: reqwest::Client| {
        let url = app.url(&at("/review"));
        async move {
            c.get(url).send().await.unwrap().json::<Value>().await.unwrap()["data"]["hasDraft"]
                .clone()
        }
    };
    assert_eq!((has(ann.clone()).await, has(vic.clone()).await), (json!(true), json!(false)));
    assert_eq!(send(&app.http, &app, Method::GET, &at("/draft"), Value::Null).await.0, 404);
    let (status, body) =
        send(&ann, &app, Method::POST, &at("/draft/accept"), json!({"panels": ["nope"]})).await;
    assert_eq!(status, 400, "{body}");
    assert!(body["msg"].as_str().unwrap().contains(&news), "names what it changes: {body}");

    // Accepting the panel publishes it for everyone; nothing is left of the draft.
    let (status, outcome) =
        send(&ann, &app, Method::POST, &at("/draft/accept"), json!({"panels": [news]})).await;
    assert_eq!(status, 200, "{outcome}");
    assert_eq!(outcome["data"]["draft"], Value::Null);
    let version = outcome["data"]["version"].as_u64().unwrap();
    assert_eq!(version, published["data"]["version"].as_u64().unwrap() + 1);
    let (_, now) = send(&vic, &app, Method::GET, &at(""), Value::Null).await;
    assert_eq!(now["data"]["version"], version);
    assert!(panel_ids(&now["data"]).contains(&news));
    assert_eq!(send(&ann, &app, Method::GET, &at("/draft"), Value::Null).await.0, 404);
    let (_, after) = send(&ann, &app, Method::GET, &at("/versions"), Value::Null).await;
    assert_eq!(
        after["data"].as_array().unwrap().len(),
        history["data"].as_array().unwrap().len() + 1
    );
    mock.stop();
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_in_review_mode_drafts_and_a_rejected_draft_leaves_no_trace() {
    let mock = MockLlm::start(MockLlm::demo().unwrap(), 0).await.unwrap();
    let url = mock.url();
    let app = support::spawn_app_with(Arc::new(tempfile::tempdir().unwrap()), false, move |c| {
        c.llm = Some(support::llm_config(Some(&url)));
    })
    .await;
    let http = app.http.clone();
    assert_eq!(run(&http, &app, "c2", "Build me a gold dashboard").await.last(), Some(&false));
    let (_, list) = app.get("/api/dashboards").await;
    let id = list["data"][0]["id"].as_str().unwrap().to_owned();
    let (_, before) = app.get(&format!("/api/dashboards/{id}/versions")).await;
    let (status, chat) = app.patch("/api/chats/c2", json!({"review": true})).await;
    assert_eq!(status, 200, "{chat}");
    assert_eq!(chat["data"]["review"], true);
    assert_eq!(app.get(&format!("/api/dashboards/{id}/review")).await.1["data"]["enabled"], false);

    assert_eq!(run(&http, &app, "c2", "Add a gold news feed").await, [true]);
    // The agent goes on from its draft: get_state shows the drafted panel.
    let state = app.tool("get_state", json!({"dashboard_id": id, "detail_level": "full"})).await;
    assert!(state.get("draft").is_none(), "REST is not the agent: it reads the published state");
    let (status, draft) = app.get(&format!("/api/dashboards/{id}/draft")).await;
    assert_eq!(status, 200, "{draft}");
    assert!(
        !draft["data"]["code"].as_object().unwrap().is_empty()
            || !draft["data"]["changes"].as_array().unwrap().is_empty()
    );

    let (status, outcome) =
        app.post(&format!("/api/dashboards/{id}/draft/reject"), Value::Null).await;
    assert_eq!(status, 200, "{outcome}");
    assert_eq!(outcome["data"]["draft"], Value::Null);
    assert_eq!(app.get(&format!("/api/dashboards/{id}/draft")).await.0, 404);
    let (_, after) = app.get(&format!("/api/dashboards/{id}/versions")).await;
    assert_eq!(after["data"], before["data"], "the published history is untouched");
    mock.stop();
    app.stop().await;
}

#[tokio::test]
async fn a_draft_made_on_one_node_is_reviewed_and_accepted_on_another() {
    use crate::support::pg::TestDb;
    let mock = MockLlm::start(MockLlm::demo().unwrap(), 0).await.unwrap();
    let db = TestDb::new().await;
    let token = "review-test-token-0123456789abcdef";
    let url = mock.url();
    let prepare = move |dir: &std::path::Path| {
        crate::support::node::mock_model(dir, &url, "mock-model", false);
    };
    let (_dirs, nodes) = crate::support::node::cluster(&db.url, 2, token, &[], prepare).await;
    let (a, b) = (&nodes[0], &nodes[1]);
    let ask = |message: &str| json!({"message": message, "agentKey": "dashboard", "chatId": "c3", "stream": false});
    let (status, body) = a.send(Method::POST, "/api/query", ask("Build me a gold dashboard")).await;
    assert_eq!(status, 200, "{body}");
    let (_, list) = a.send(Method::GET, "/api/dashboards", Value::Null).await;
    let id = list["data"][0]["id"].as_str().unwrap().to_owned();
    let (_, published) = b.send(Method::GET, &format!("/api/dashboards/{id}"), Value::Null).await;
    let (status, _) = b
        .send(Method::PUT, &format!("/api/dashboards/{id}/review"), json!({"enabled": true}))
        .await;
    assert_eq!(status, 200);
    let (status, body) = a.send(Method::POST, "/api/query", ask("Add a gold news feed")).await;
    assert_eq!(status, 200, "{body}");
    let (status, draft) =
        b.send(Method::GET, &format!("/api/dashboards/{id}/draft"), Value::Null).await;
    assert_eq!(status, 200, "B reads the draft A's agent made: {draft}");
    let (_, still) = b.send(Method::GET, &format!("/api/dashboards/{id}"), Value::Null).await;
    assert_eq!(still["data"]["version"], published["data"]["version"]);
    let (status, outcome) =
        b.send(Method::POST, &format!("/api/dashboards/{id}/draft/accept"), json!({})).await;
    assert_eq!(status, 200, "{outcome}");
    let version = outcome["data"]["version"].clone();
    assert_eq!(version, json!(published["data"]["version"].as_u64().unwrap() + 1));
    let (_, on_a) = a.send(Method::GET, &format!("/api/dashboards/{id}"), Value::Null).await;
    assert_eq!(on_a["data"]["version"], version);
    assert_eq!(panel_ids(&on_a["data"]).len(), panel_ids(&published["data"]).len() + 1);
    assert_eq!(
        a.send(Method::GET, &format!("/api/dashboards/{id}/draft"), Value::Null).await.0,
        404
    );
    mock.stop();
}
