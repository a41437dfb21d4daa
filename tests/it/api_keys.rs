//! API keys over real HTTP and WebSocket: made by the owner (the server token) and shown once,
//! listed without their secret or digest, held to their scopes, their rate and their expiry,
//! revoked, and kept across a restart.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{self, TestApp, authed_client};

async fn create_key(app: &TestApp, body: Value) -> (u16, Value) {
    app.post("/api/keys", body).await
}

async fn status_with(client: &reqwest::Client, app: &TestApp, path: &str) -> (u16, Value) {
    let r = client.get(app.url(path)).send().await.unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn a_key_is_shown_once_and_does_what_its_scopes_allow() {
    let app = support::spawn_app().await;
    let (status, body) =
        create_key(&app, json!({"name": "notebook", "scopes": ["models", "read"]})).await;
    assert_eq!(status, 201, "{body}");
    let key = body["data"]["key"].as_str().unwrap().to_owned();
    assert!(key.starts_with("bsk-") && key.len() == 47, "{key}");
    assert_eq!(body["data"]["scopes"], json!(["read", "models"]));
    let prefix = body["data"]["prefix"].as_str().unwrap();
    assert!(key.starts_with(prefix));

    // Listed without the secret or its digest.
    let (status, list) = app.get("/api/keys").await;
    assert_eq!(status, 200);
    let listed = list["data"].to_string();
    assert!(!listed.contains(&key[4..]), "the secret is never listed: {listed}");
    assert!(list["data"][0].get("hash").is_none(), "{listed}");
    assert_eq!(list["data"][0]["name"], "notebook");

    let client = authed_client(&key);
    assert_eq!(status_with(&client, &app, "/v1/models").await.0, 200);
    assert_eq!(status_with(&client, &app, "/api/dashboards").await.0, 200);
    // Outside its scopes: 403 naming the scope.
    let r = client
        .post(app.url("/api/tools/search"))
        .json(&json!({"code": "return 1"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let body: Value = r.json().await.unwrap();
    assert!(body["msg"].as_str().unwrap().contains("`write`"), "{body}");
    let (status, body) = status_with(&client, &app, "/api/keys").await;
    assert_eq!(status, 403, "a key cannot list keys: {body}");
    let r = client
        .post(app.url("/api/keys"))
        .json(&json!({"name": "x", "scopes": ["admin"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403, "nor make one");
    let r =
        client.post(app.url("/api/query")).json(&json!({"message": "hi"})).send().await.unwrap();
    assert_eq!(r.status(), 403, "nor run agents");

    // The WebSocket takes a key too, by its read scope.
    let mut req = app.ws_request();
    req.headers_mut().insert("authorization", format!("Bearer {key}").parse().unwrap());
    assert!(tokio_tungstenite::connect_async(req).await.is_ok());
    let (_, models_only) = create_key(&app, json!({"name": "m", "scopes": ["models"]})).await;
    let mut req = app.ws_request();
    let other = models_only["data"]["key"].as_str().unwrap();
    req.headers_mut().insert("authorization", format!("Bearer {other}").parse().unwrap());
    match tokio_tungstenite::connect_async(req).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(r)) => assert_eq!(r.status(), 403),
        other => panic!("a key without `read` must not watch dashboards: {other:?}"),
    }

    // A made-up key of the right shape, and the owner's session, are told apart.
    let fake = authed_client(&format!("bsk-{}", "A".repeat(43)));
    let (status, body) = status_with(&fake, &app, "/v1/models").await;
    assert_eq!(status, 401);
    assert!(body["msg"].as_str().unwrap().contains("unknown API key"), "{body}");
}

#[tokio::test]
async fn rate_limits_expiry_and_revocation_are_enforced() {
    let app = support::spawn_app().await;
    let (_, body) = create_key(&app, json!({"name": "slow", "scopes": ["models"], "rpm": 2})).await;
    let slow = authed_client(body["data"]["key"].as_str().unwrap());
    assert_eq!(status_with(&slow, &app, "/v1/models").await.0, 200);
    assert_eq!(status_with(&slow, &app, "/v1/models").await.0, 200);
    let r = slow.get(app.url("/v1/models")).send().await.unwrap();
    assert_eq!(r.status(), 429);
    let wait: u64 = r.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=30).contains(&wait), "one request comes back every 30 s: {wait}");
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["type"], "rate_limit_error", "{body}");
    assert!(body["msg"].as_str().unwrap().contains("2 requests per minute"), "{body}");

    let soon = chrono::Utc::now().timestamp_millis() + 800;
    let (status, body) =
        create_key(&app, json!({"name": "brief", "scopes": ["models"], "expiresAt": soon})).await;
    assert_eq!(status, 201, "{body}");
    let brief = authed_client(body["data"]["key"].as_str().unwrap());
    assert_eq!(status_with(&brief, &app, "/v1/models").await.0, 200);
    tokio::time::sleep(Duration::from_millis(900)).await;
    let (status, body) = status_with(&brief, &app, "/v1/models").await;
    assert_eq!(status, 401);
    assert!(body["msg"].as_str().unwrap().contains("expired"), "{body}");

    let (_, body) = create_key(&app, json!({"name": "gone", "scopes": ["models"]})).await;
    let id = body["data"]["id"].as_str().unwrap().to_owned();
    let gone = authed_client(body["data"]["key"].as_str().unwrap());
    assert_eq!(status_with(&gone, &app, "/v1/models").await.0, 200);
    let r = app.http.delete(app.url(&format!("/api/keys/{id}"))).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let (status, body) = status_with(&gone, &app, "/v1/models").await;
    assert_eq!(status, 401);
    assert!(body["msg"].as_str().unwrap().contains("revoked"), "{body}");
    let (_, list) = app.get("/api/keys").await;
    let row = list["data"].as_array().unwrap().iter().find(|k| k["id"] == id.as_str()).unwrap();
    assert!(row["revokedAt"].is_i64() && row["lastUsedAt"].is_i64(), "{row}");
    let r = app.http.delete(app.url("/api/keys/key_nope")).send().await.unwrap();
    assert_eq!(r.status(), 404);
}

#[tokio::test]
async fn bad_requests_name_the_field_and_keys_survive_a_restart() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let app = support::spawn_app_in(dir.clone(), false).await;
    for (body, needle) in [
        (json!({"name": "x", "scopes": []}), "scopes"),
        (json!({"name": " ", "scopes": ["read"]}), "name"),
        (json!({"name": "x", "scopes": ["everything"]}), "scopes[0]"),
        (json!({"name": "x", "scopes": ["read"], "rpm": 0}), "rpm"),
        (json!({"name": "x", "scopes": ["read"], "budgetUsd": -1}), "budgetUsd"),
        (json!({"name": "x", "scopes": ["read"], "expiresAt": 1000}), "expiresAt"),
        (json!({"name": "x", "scopes": ["read"], "owner": "me"}), "owner"),
    ] {
        let (status, b) = create_key(&app, body.clone()).await;
        assert_eq!(status, 400, "{body}: {b}");
        assert!(b["msg"].as_str().unwrap().contains(needle), "{body}: {b}");
        // What the key ring checks names its field for forms (the web app's settings page).
        if !needle.contains('[') && needle != "owner" {
            assert_eq!(b["data"]["param"], needle, "{body}: {b}");
        }
    }
    let (_, body) = create_key(&app, json!({"name": "kept", "scopes": ["read"], "rpm": 100})).await;
    let key = body["data"]["key"].as_str().unwrap().to_owned();
    app.stop().await;

    let app = support::spawn_app_in(dir, false).await;
    let (status, _) = status_with(&authed_client(&key), &app, "/api/dashboards").await;
    assert_eq!(status, 200, "the key works after a restart");
    let (_, list) = app.get("/api/keys").await;
    assert_eq!(list["data"][0]["name"], "kept");
    assert_eq!(list["data"][0]["rpm"], 100);
}
