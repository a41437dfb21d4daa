//! `/api/admin` over real HTTP: a provider added with its key serves `/v1` at once (the key
//! sealed at rest, never shown, sent upstream), survives a restart and goes away on delete; a
//! default model; an agent defined through the API wins over the file of its key and runs;
//! bad definitions are 400s naming the field and change nothing.

use std::sync::Arc;

use boardsmith::llm::mock::{MockLlm, Script};
use serde_json::{Value, json};

use crate::openai_api::text_turn;
use crate::support::{self, TestApp};

async fn send(
    app: &TestApp,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut req = app.http.request(method, app.url(path));
    if let Some(b) = body {
        req = req.json(&b);
    }
    let r = req.send().await.unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

async fn put(app: &TestApp, path: &str, body: Value) -> (u16, Value) {
    send(app, reqwest::Method::PUT, path, Some(body)).await
}

async fn delete(app: &TestApp, path: &str) -> (u16, Value) {
    send(app, reqwest::Method::DELETE, path, None).await
}

async fn model_ids(app: &TestApp) -> Vec<String> {
    let (status, body) = app.get("/v1/models").await;
    assert_eq!(status, 200, "{body}");
    body["data"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap().to_owned()).collect()
}

async fn complete(app: &TestApp, model: &str) -> (u16, Value) {
    let r = app
        .http
        .post(app.url("/v1/chat/completions"))
        .json(&json!({"model": model, "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn a_provider_added_through_the_api_serves_at_once_keeps_its_key_sealed_and_survives_a_restart()
 {
    let mock = MockLlm::start(Script { turns: vec![text_turn("Hello from local.", 100)] }, 0)
        .await
        .unwrap();
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let app = support::spawn_app_in(dir.clone(), false).await;
    assert!(model_ids(&app).await.is_empty(), "no provider configured yet");
    assert_ne!(complete(&app, "local/mock-model").await.0, 200);

    let secret = "sk-admin-test-9f8e7d6c";
    let (status, body) = put(
        &app,
        "/api/admin/providers/local",
        json!({"kind": "openai", "baseUrl": format!("{}/v1", mock.url()), "apiKey": secret, "defaultModel": "mock-model"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["origin"], "admin");
    assert_eq!(body["data"]["hasKey"], true);
    assert_eq!(body["data"]["keyHint"], "…7d6c");
    assert!(!body.to_string().contains(secret), "the key is never shown: {body}");

    // In force without a restart: listed, callable, the stored key sent upstream.
    assert_eq!(model_ids(&app).await, ["local/mock-model"]);
    let (status, body) = complete(&app, "local/mock-model").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["choices"][0]["message"]["content"], "Hello from local.");
    assert_eq!(
        mock.requests().last().unwrap().auth.as_deref(),
        Some(format!("Bearer {secret}").as_str())
    );
    let (_, list) = app.get("/api/admin/providers").await;
    assert!(!list.to_string().contains(secret));

    // The default model, checked against what is configured.
    let (status, body) =
        put(&app, "/api/admin/settings", json!({"defaultModel": "nowhere/x"})).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["data"]["param"], "defaultModel");
    let (status, body) =
        put(&app, "/api/admin/settings", json!({"defaultModel": "local/mock-model"})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["effectiveDefaultModel"], "local/mock-model");

    // Sealed at rest: the database file never holds the key in clear.
    app.stop().await;
    let db = std::fs::read(dir.path().join("boardsmith.redb")).unwrap();
    assert!(
        !db.windows(secret.len()).any(|w| w == secret.as_bytes()),
        "the key is sealed in the store"
    );

    let app = support::spawn_app_in(dir.clone(), false).await;
    assert_eq!(model_ids(&app).await, ["local/mock-model"], "kept across a restart");
    let (status, body) = complete(&app, "local/mock-model").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        mock.requests().last().unwrap().auth.as_deref(),
        Some(format!("Bearer {secret}").as_str())
    );

    // The default model uses it: deleting it is refused until the default changes.
    let (status, body) = delete(&app, "/api/admin/providers/local").await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["data"]["param"], "defaultModel");
    assert_eq!(put(&app, "/api/admin/settings", json!({"defaultModel": null})).await.0, 200);
    let (status, body) = delete(&app, "/api/admin/providers/local").await;
    assert_eq!(status, 200, "{body}");
    assert!(model_ids(&app).await.is_empty(), "gone at once");
    assert_eq!(delete(&app, "/api/admin/providers/local").await.0, 404);
    app.stop().await;
}

#[tokio::test]
async fn bad_definitions_are_400s_naming_the_field_and_change_nothing() {
    let app = support::spawn_app().await;
    let cases = [
        ("/api/admin/providers/x", json!({"kind": "openai"}), "providers.x.baseUrl"),
        (
            "/api/admin/providers/x",
            json!({"kind": "openai", "baseUrl": "ftp://h/v1"}),
            "providers.x.baseUrl",
        ),
        ("/api/admin/providers/x%20y", json!({"kind": "ollama"}), "providers.x y"),
        (
            "/api/admin/providers/x",
            json!({"kind": "ollama", "apiKey": "k", "clearApiKey": true}),
            "apiKey",
        ),
        (
            "/api/admin/models",
            json!({"provider": "nope", "id": "m", "contextWindow": 10}),
            "models.nope/m.provider",
        ),
        ("/api/admin/agents/helper", json!({"mode": "SOMETIMES"}), "mode"),
    ];
    for (path, body, field) in cases {
        let (status, answer) = put(&app, path, body.clone()).await;
        assert_eq!(status, 400, "{path} {body}: {answer}");
        assert_eq!(answer["data"]["param"], field, "{path} {body}: {answer}");
        assert_eq!(
            answer["error"]["param"], field,
            "the OpenAI error object names it too: {answer}"
        );
        assert!(answer["msg"].as_str().unwrap().contains('`'), "{answer}");
    }
    // Unknown fields are named by serde.
    let (status, answer) =
        put(&app, "/api/admin/providers/x", json!({"kind": "ollama", "baseURL": "h"})).await;
    assert_eq!(status, 400);
    assert!(answer["msg"].as_str().unwrap().contains("baseURL"), "{answer}");
    // Nothing changed.
    assert!(model_ids(&app).await.is_empty());
    let (_, providers) = app.get("/api/admin/providers").await;
    assert_eq!(providers["data"], json!([]));
    let (_, agents) = app.get("/api/admin/agents").await;
    assert!(agents["data"].as_array().unwrap().iter().all(|a| a["key"] != "helper"), "{agents}");
    // Deleting what is not defined here.
    assert_eq!(delete(&app, "/api/admin/providers/nope").await.0, 404);
    assert_eq!(delete(&app, "/api/admin/agents/nope").await.0, 404);
    let (status, body) = delete(&app, "/api/admin/agents/dashboard").await;
    assert_eq!(status, 409, "a built-in is not the API's to delete: {body}");
    assert_eq!(
        send(&app, reqwest::Method::DELETE, "/api/admin/models?provider=a&id=b", None).await.0,
        404
    );
    app.stop().await;
}

#[tokio::test]
async fn an_agent_defined_through_the_api_wins_over_its_file_runs_and_gives_way_when_deleted() {
    let mock =
        MockLlm::start(Script { turns: vec![text_turn("Answered.", 100)] }, 0).await.unwrap();
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let url = mock.url();
    let app = support::spawn_app_with(dir.clone(), false, move |c| {
        c.llm = Some(support::llm_config(Some(&url)));
    })
    .await;
    let file = json!({"description": "from the file", "mode": "PLAIN", "plain": {"systemPrompt": "FILE PROMPT"}});
    std::fs::write(dir.path().join("agents/helper.json"), file.to_string()).unwrap();
    app.app.catalog.reload_now().await;
    let origin_of = |agents: &Value, key: &str| {
        agents["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["key"] == key)
            .map(|a| a["origin"].clone())
    };
    let (_, agents) = app.get("/api/admin/agents").await;
    assert_eq!(origin_of(&agents, "helper"), Some(json!("file")));
    assert_eq!(origin_of(&agents, "dashboard"), Some(json!("builtin")));

    let stored = json!({"description": "from the API", "mode": "PLAIN", "plain": {"systemPrompt": "ADMIN PROMPT"}});
    let (status, body) = put(&app, "/api/admin/agents/helper", stored.clone()).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["origin"], "admin");
    let (_, listed) = app.get("/api/agents").await;
    let helper =
        listed["data"].as_array().unwrap().iter().find(|a| a["key"] == "helper").unwrap().clone();
    assert_eq!(helper["description"], "from the API", "the API's definition wins over the file");
    let (_, got) = app.get("/api/admin/agents/helper").await;
    assert_eq!(got["data"]["plain"]["systemPrompt"], "ADMIN PROMPT");

    // It runs with its own prompt.
    let r = app
        .http
        .post(app.url("/v1/agents/helper/completions"))
        .json(&json!({"model": "helper", "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .unwrap();
    let status = r.status();
    let answer: Value = r.json().await.unwrap();
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["choices"][0]["message"]["content"], "Answered.", "{answer}");
    let sent = mock.requests().last().unwrap().body.to_string();
    assert!(sent.contains("ADMIN PROMPT") && !sent.contains("FILE PROMPT"), "{sent}");

    // Kept across a restart; deleting it brings the file back.
    app.stop().await;
    let url = mock.url();
    let app = support::spawn_app_with(dir.clone(), false, move |c| {
        c.llm = Some(support::llm_config(Some(&url)));
    })
    .await;
    let (_, agents) = app.get("/api/admin/agents").await;
    assert_eq!(origin_of(&agents, "helper"), Some(json!("admin")));
    assert_eq!(delete(&app, "/api/admin/agents/helper").await.0, 200);
    let (_, agents) = app.get("/api/admin/agents").await;
    assert_eq!(origin_of(&agents, "helper"), Some(json!("file")));
    let (_, got) = app.get("/api/admin/agents/helper").await;
    assert_eq!(got["data"]["description"], "from the file");
    app.stop().await;
}

#[tokio::test]
async fn the_admin_api_needs_the_admin_scope() {
    let app = support::spawn_app().await;
    let (_, key) = app
        .post("/api/keys", json!({"name": "k", "scopes": ["read", "write", "agents", "models"]}))
        .await;
    let client = support::authed_client(key["data"]["key"].as_str().unwrap());
    for path in
        ["/api/admin/providers", "/api/admin/settings", "/api/admin/agents", "/api/admin/models"]
    {
        let r = client.get(app.url(path)).send().await.unwrap();
        assert_eq!(r.status(), 403, "{path}");
    }
    let (_, admin_key) = app.post("/api/keys", json!({"name": "a", "scopes": ["admin"]})).await;
    let client = support::authed_client(admin_key["data"]["key"].as_str().unwrap());
    assert_eq!(client.get(app.url("/api/admin/providers")).send().await.unwrap().status(), 200);
    app.stop().await;
}

#[tokio::test]
async fn prompt_templates_are_shared_by_agents_take_effect_at_once_and_render_with_values() {
    let mock = MockLlm::start(Script { turns: vec![text_turn("Ok.", 100)] }, 0).await.unwrap();
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let url = mock.url();
    let app = support::spawn_app_with(dir.clone(), false, move |c| {
        c.llm = Some(support::llm_config(Some(&url)));
    })
    .await;
    // An agent may not refer to a template that does not exist: nothing is saved.
    let agent = json!({"description": "desk", "mode": "PLAIN", "plain": {"systemPrompt": "You run the desk. {{prompt:house}}"}});
    let (status, body) = put(&app, "/api/admin/agents/desk", agent.clone()).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["data"]["param"], "plain.systemPrompt");
    assert!(body["msg"].as_str().unwrap().contains("`house`"), "{body}");

    let (status, body) = put(
        &app,
        "/api/admin/prompts/house",
        json!({"description": "rules", "text": "HOUSE RULES v1"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(put(&app, "/api/admin/agents/desk", agent).await.0, 200);
    let ask = || async {
        let r = app
            .http
            .post(app.url("/v1/agents/desk/completions"))
            .json(&json!({"model": "desk", "messages": [{"role": "user", "content": "hi"}]}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        mock.requests().last().unwrap().body.to_string()
    };
    let sent = ask().await;
    assert!(sent.contains("You run the desk. HOUSE RULES v1"), "{sent}");

    // A new text reaches the agent without touching it.
    assert_eq!(
        put(&app, "/api/admin/prompts/house", json!({"text": "HOUSE RULES v2"})).await.0,
        200
    );
    let sent = ask().await;
    assert!(sent.contains("HOUSE RULES v2") && !sent.contains("v1"), "{sent}");

    // In use: not deleted.
    let (status, body) = delete(&app, "/api/admin/prompts/house").await;
    assert_eq!(status, 409, "{body}");
    assert!(body["msg"].as_str().unwrap().contains("desk"), "{body}");

    // Rendering fills placeholders and names what does not match.
    put(&app, "/api/admin/prompts/brief", json!({"text": "Brief on {{region}}, top {{n}}."})).await;
    let (status, body) = app
        .post("/api/admin/prompts/brief/render", json!({"vars": {"region": "EMEA", "n": 5}}))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["text"], "Brief on EMEA, top 5.");
    let (status, body) =
        app.post("/api/admin/prompts/brief/render", json!({"vars": {"region": "EMEA"}})).await;
    assert_eq!(status, 400);
    assert_eq!(body["data"]["param"], "vars.n");
    let (status, body) = put(&app, "/api/admin/prompts/bad%20name", json!({"text": "x"})).await;
    assert_eq!((status, body["data"]["param"].clone()), (400, json!("name")));

    // Kept across a restart, the agent still expanded.
    app.stop().await;
    let url = mock.url();
    let app = support::spawn_app_with(dir.clone(), false, move |c| {
        c.llm = Some(support::llm_config(Some(&url)));
    })
    .await;
    let (_, list) = app.get("/api/admin/prompts").await;
    let names: Vec<&str> =
        list["data"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["brief", "house"]);
    let (_, agents) = app.get("/api/admin/agents").await;
    let desk = agents["data"].as_array().unwrap().iter().find(|a| a["key"] == "desk").unwrap();
    assert_eq!(desk["problems"], json!(null), "{desk}");
    app.stop().await;
}

/// Issue 36: changing a provider's URL without re-sending its key sent the sealed key to the
/// new URL. Now the key stays only while kind and URL do; the new listener never sees it.
#[tokio::test]
async fn a_stored_key_never_follows_its_provider_to_a_new_url_or_kind() {
    let turns = || Script { turns: vec![text_turn("hi", 100)] };
    let first = MockLlm::start(turns(), 0).await.unwrap();
    let second = MockLlm::start(turns(), 0).await.unwrap();
    let app = support::spawn_app().await;
    let secret = "sk-admin-follow-1a2b3c4d";
    let at = |mock: &MockLlm| {
        json!({"kind": "openai", "baseUrl": format!("{}/v1", mock.url()),
                                     "defaultModel": "mock-model"})
    };
    let mut with_key = at(&first);
    with_key["apiKey"] = json!(secret);
    let (status, body) = put(&app, "/api/admin/providers/local", with_key).await;
    assert_eq!(status, 200, "{body}");

    // The same destination (spelled with a trailing slash), another default model: kept.
    let mut same = at(&first);
    same["baseUrl"] = json!(format!("{}/v1/", first.url()));
    same["defaultModel"] = json!("mock-model-2");
    let (status, body) = put(&app, "/api/admin/providers/local", same).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["hasKey"], true, "{body}");
    assert_eq!(complete(&app, "local/mock-model").await.0, 200);
    let bearer = format!("Bearer {secret}");
    assert_eq!(first.requests().last().unwrap().auth.as_deref(), Some(bearer.as_str()));

    // Another URL without the key: dropped, and never sent there.
    let (status, body) = put(&app, "/api/admin/providers/local", at(&second)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["hasKey"], false, "{body}");
    assert!(body["data"].get("keyHint").is_none(), "{body}");
    let _ = complete(&app, "local/mock-model").await;
    // Back to the first URL: the key does not come back either.
    let (status, body) = put(&app, "/api/admin/providers/local", at(&first)).await;
    assert_eq!((status, &body["data"]["hasKey"]), (200, &json!(false)), "{body}");
    let _ = complete(&app, "local/mock-model").await;
    assert!(
        second.requests().iter().all(|r| r.auth.as_deref() != Some(bearer.as_str())),
        "the new URL never received the key: {:?}",
        second.requests().iter().map(|r| r.auth.clone()).collect::<Vec<_>>()
    );
    let sent =
        first.requests().iter().filter(|r| r.auth.as_deref() == Some(bearer.as_str())).count();
    assert_eq!(sent, 1, "only the call made before the change carried it");

    // Another kind at the same URL is another destination too.
    let mut with_key = at(&second);
    with_key["apiKey"] = json!(secret);
    assert_eq!(put(&app, "/api/admin/providers/local", with_key).await.0, 200);
    let mut other_kind = at(&second);
    other_kind["kind"] = json!("anthropic");
    let (status, body) = put(&app, "/api/admin/providers/local", other_kind).await;
    assert_eq!((status, &body["data"]["hasKey"]), (200, &json!(false)), "{body}");
    app.stop().await;
}

/// Issue 36: `apiKeyEnv: "BOARDSMITH_TOKEN"` sent the master token to the provider's URL, and
/// `"OPENAI_API_KEY"` the OpenAI key to any URL.
#[tokio::test]
async fn api_key_env_names_only_provider_keys_and_only_for_their_own_url() {
    let mock = MockLlm::start(Script { turns: vec![text_turn("hi", 100)] }, 0).await.unwrap();
    let app = support::spawn_app().await;
    let url = format!("{}/v1", mock.url());
    let cases = [
        ("BOARDSMITH_TOKEN", "is one of the server's own settings"),
        ("BOARDSMITH_DATABASE_URL", "is one of the server's own settings"),
        ("OPENAI_API_KEY", "is sent only to https://api.openai.com/v1 (openai)"),
        ("HOME", "is not a provider key variable of this server"),
        ("AWS_SECRET_ACCESS_KEY", "is not a provider key variable of this server"),
    ];
    for (name, why) in cases {
        let body = json!({"kind": "openai", "baseUrl": url, "apiKeyEnv": name,
                          "defaultModel": "mock-model"});
        let (status, answer) = put(&app, "/api/admin/providers/local", body).await;
        assert_eq!(status, 400, "{name}: {answer}");
        assert_eq!(answer["data"]["param"], "providers.local.apiKeyEnv", "{answer}");
        let msg = answer["msg"].as_str().unwrap();
        assert!(msg.contains(&format!("`{name}` {why}")), "{name}: {msg}");
    }
    // The official URL may use the environment's OpenAI key (left out: the built-in's URL).
    let (status, body) = put(
        &app,
        "/api/admin/providers/openai",
        json!({"kind": "openai", "apiKeyEnv": "OPENAI_API_KEY"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    // Nothing was defined by the refusals, and nothing reached the listener.
    let (_, providers) = app.get("/api/admin/providers").await;
    let keys: Vec<&str> =
        providers["data"].as_array().unwrap().iter().map(|p| p["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["openai"]);
    assert!(mock.requests().is_empty());
    app.stop().await;
}

/// A stdio MCP server may not bind the host's `/proc`, `/sys` or `/dev` (or `/`): 400 naming
/// the entry.
#[tokio::test]
async fn mcp_read_only_paths_never_reach_the_hosts_kernel_views() {
    let app = support::spawn_app().await;
    for path in ["/proc", "/", "/sys/kernel", "/opt/../dev"] {
        let body = json!({"command": "cat", "readOnlyPaths": ["/opt/tools", path]});
        let (status, answer) = put(&app, "/api/admin/mcp-servers/fs", body).await;
        assert_eq!(status, 400, "{path}: {answer}");
        assert_eq!(answer["data"]["param"], "readOnlyPaths[1]", "{answer}");
        assert!(answer["msg"].as_str().unwrap().contains("would show the host's"), "{answer}");
    }
    let body = json!({"command": "cat", "readOnlyPaths": ["/opt/tools"]});
    assert_eq!(put(&app, "/api/admin/mcp-servers/fs", body).await.0, 200);
    app.stop().await;
}
