//! Scopes come from the route table, never from the shape of a path: every operation of the
//! served OpenAPI document, sent over real HTTP with an API key of each scope, is refused (403
//! naming the scope) exactly when the key lacks the one scope the operation declares (`admin`
//! allows all). An operation that declares no scope fails here. Paths that look like other
//! routes (`PUT /api/workflows/cancel`, `DELETE …/search`) get the scope of the route axum
//! matched, and what no route takes is the admin's.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::openapi::concrete;
use crate::support::{self, TestApp, authed_client};

const SCOPES: [&str; 6] = ["read", "write", "agents", "models", "metrics", "admin"];

/// One key per scope, each with exactly that scope.
async fn keys(app: &TestApp) -> Vec<(&'static str, reqwest::Client)> {
    let mut keys = Vec::new();
    for scope in SCOPES {
        let (status, body) = app
            .post("/api/keys", json!({"name": format!("only {scope}"), "scopes": [scope]}))
            .await;
        assert_eq!(status, 201, "{body}");
        keys.push((scope, authed_client(body["data"]["key"].as_str().unwrap())));
    }
    keys
}

/// The guard's refusal for want of a scope: `Some(message)` for a 403 that names a missing
/// scope, `None` for any other answer (the handler ran, or refused for its own reasons).
async fn scope_refusal(client: &reqwest::Client, method: Method, url: &str) -> Option<String> {
    let mut request = client.request(method.clone(), url).timeout(Duration::from_secs(60));
    if [Method::POST, Method::PUT, Method::PATCH].contains(&method) {
        request = request.json(&json!({}));
    }
    let r = request.send().await.unwrap();
    if r.status() != 403 {
        return None;
    }
    let body: Value = r.json().await.unwrap_or_default();
    let msg = body["msg"].as_str().unwrap_or_default().to_owned();
    msg.contains("lacks the").then_some(msg)
}

/// What an operation declares: `Some(None)` public (`security: [{}]`), `Some(Some(scope))` the
/// bearer credential with one scope, `None` anything else (no scope declared).
fn declared(operation: &Value) -> Option<Option<String>> {
    let security = operation["security"].as_array()?;
    if security.as_slice() == [json!({})] {
        return Some(None);
    }
    let scopes = security.iter().find_map(|s| s["bearer"].as_array())?;
    match scopes.as_slice() {
        [scope] => Some(Some(scope.as_str()?.to_owned())),
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_operation_refuses_exactly_the_keys_without_its_scope() {
    let app = support::spawn_app().await;
    let keys = keys(&app).await;
    let doc: Value = reqwest::get(app.url("/openapi.json")).await.unwrap().json().await.unwrap();

    let (mut undeclared, mut wrong, mut checked) = (Vec::new(), Vec::new(), 0);
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            if !["get", "put", "post", "delete", "patch"].contains(&method.as_str()) {
                continue;
            }
            let Some(needed) = declared(operation) else {
                undeclared.push(format!("{method} {path}: {}", operation["security"]));
                continue;
            };
            let url = app.url(&concrete(path));
            let http_method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            for (scope, client) in &keys {
                let refusal = scope_refusal(client, http_method.clone(), &url).await;
                let insufficient =
                    needed.as_deref().is_some_and(|n| n != *scope && *scope != "admin");
                match (&refusal, &needed) {
                    (Some(msg), Some(n)) if insufficient && msg.contains(&format!("`{n}`")) => {}
                    (None, _) if !insufficient => {}
                    _ => wrong.push(format!(
                        "{method} {path} with a `{scope}` key (needs {needed:?}): {refusal:?}"
                    )),
                }
            }
            checked += 1;
        }
    }
    assert!(
        undeclared.is_empty(),
        "operations without a declared scope (give the route its scope in `server::routes`): \
         {undeclared:#?}"
    );
    assert!(wrong.is_empty(), "scopes not as declared:\n{}", wrong.join("\n"));
    assert!(checked >= 70, "only {checked} operations: the document was not read whole");
    app.stop().await;
}

#[tokio::test]
async fn the_route_axum_matched_decides_not_the_paths_suffix() {
    let app = support::spawn_app().await;
    let keys = keys(&app).await;
    let key = |scope: &str| &keys.iter().find(|(s, _)| *s == scope).unwrap().1;
    let status = |client: &reqwest::Client, method: Method, path: &str| {
        let request = client.request(method, app.url(path)).json(&json!({}));
        async move { request.send().await.unwrap().status().as_u16() }
    };

    // `PUT /api/workflows/cancel` is `PUT /api/workflows/{id}`: saving a definition, admin's.
    let definition = json!({"name": "cancel", "nodes": [], "edges": []});
    let r =
        key("agents").put(app.url("/api/workflows/cancel")).json(&definition).send().await.unwrap();
    assert_eq!(r.status(), 403);
    let body: Value = r.json().await.unwrap();
    assert!(body["msg"].as_str().unwrap().contains("`admin`"), "{body}");
    assert_ne!(status(key("agents"), Method::POST, "/api/workflows/runs/r1/cancel").await, 403);

    // Methods no route takes at these paths are the admin's: refused to lesser keys, 405 after.
    for path in ["/api/kb/kb_1/search", "/api/dashboards/d1/refresh"] {
        for scope in ["read", "write", "agents"] {
            assert_eq!(
                status(key(scope), Method::DELETE, path).await,
                403,
                "DELETE {path} {scope}"
            );
        }
        assert_eq!(status(key("admin"), Method::DELETE, path).await, 405, "DELETE {path}");
    }
    // A search only reads; a refresh runs panels and stores nothing.
    assert_ne!(status(key("read"), Method::POST, "/api/kb/kb_1/search").await, 403);
    assert_ne!(status(key("read"), Method::POST, "/api/dashboards/d1/refresh").await, 403);

    // No route at all: the admin's (403), then 404.
    assert_eq!(status(key("write"), Method::GET, "/api/nope").await, 403);
    assert_eq!(status(key("admin"), Method::GET, "/api/nope").await, 404);

    // `/mcp` is one service: `read` for every message (tools check `write` per call).
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let mcp = |client: &reqwest::Client| {
        client
            .post(app.url("/mcp"))
            .header("accept", "application/json, text/event-stream")
            .json(&ping)
            .send()
    };
    assert_ne!(mcp(key("read")).await.unwrap().status(), 403);
    assert_eq!(mcp(key("models")).await.unwrap().status(), 403);
    app.stop().await;
}
