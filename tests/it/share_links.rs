//! Share links, from the outside: a link shows its one dashboard read-only and live to a visitor
//! with no account, in the variable values it fixes; the token reaches nothing else (no other
//! dashboard, no API route, no variable change unless allowed, no provider endpoint); it stops
//! at revoke (open views close with 1008) and at expiry (410), goes with a purged dashboard, and
//! only those who may change a dashboard make, list and revoke its links. Made, used and
//! revoked are in the audit trail, never the token.

use std::time::Duration;

use futures::StreamExt as _;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::support::{self, TestApp, Ws, ws_next, ws_send, ws_until};

const PASSWORD: &str = "a long enough password";

/// A dashboard with a `sym` variable whose panel shows the value it ran with.
fn state(title: &str) -> Value {
    json!({
        "title": title,
        "layout": {"columns": 2},
        "variables": [{
            "name": "sym", "label": "Symbol", "type": "select",
            "options": ["XAUUSD", "XAGUSD"], "default": "XAUUSD"
        }],
        "panels": [{
            "id": "a", "title": "A", "type": "table", "renderer": "custom",
            "code": "return [{ sym: vars.sym }];"
        }]
    })
}

async fn create(c: &reqwest::Client, app: &TestApp, title: &str) -> String {
    let r = c.post(app.url("/api/dashboards")).json(&json!({"state": state(title)})).send().await;
    let body: Value = r.unwrap().json().await.unwrap();
    body["data"]["id"].as_str().unwrap().to_owned()
}

async fn send(c: &reqwest::Client, m: reqwest::Method, url: String, body: Value) -> (u16, Value) {
    let mut req = c.request(m, url);
    if !body.is_null() {
        req = req.json(&body);
    }
    let r = req.send().await.unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

async fn link_ws(app: &TestApp, token: &str) -> Result<Ws, u16> {
    let url = format!("ws://{}/api/shared/{token}/ws", app.addr);
    match tokio_tungstenite::connect_async(url).await {
        Ok((ws, _)) => Ok(ws),
        Err(tokio_tungstenite::tungstenite::Error::Http(r)) => Err(r.status().as_u16()),
        Err(e) => panic!("connect: {e}"),
    }
}

/// Reads until the server closes; the close code and reason.
async fn closed(ws: &mut Ws) -> (u16, String) {
    loop {
        match tokio::time::timeout(Duration::from_secs(10), ws.next()).await {
            Ok(Some(Ok(Message::Close(Some(f))))) => return (f.code.into(), f.reason.to_string()),
            Ok(Some(Ok(_))) => {}
            other => panic!("no close frame: {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_shows_its_one_dashboard_read_only_and_live_until_revoked() {
    let app = support::spawn_app().await;
    app.add_user("ann", PASSWORD, "editor").await;
    let ann = app.cookie_client(&app.password_cookie("ann", PASSWORD).await);
    let id = create(&ann, &app, "Metals").await;
    let other = create(&ann, &app, "Other").await;
    let share = app.url(&format!("/api/dashboards/{id}/share"));

    let bad = json!({"vars": {"nope": 1}});
    assert_eq!(send(&ann, reqwest::Method::POST, share.clone(), bad).await.0, 400);
    let body = json!({"vars": {"sym": "XAGUSD"}, "label": "for the desk"});
    let (status, made) = send(&ann, reqwest::Method::POST, share.clone(), body).await;
    assert_eq!(status, 201, "{made}");
    let token = made["data"]["token"].as_str().unwrap().to_owned();
    let link_id = made["data"]["link"]["id"].as_str().unwrap().to_owned();
    assert_eq!(made["data"]["path"], format!("/s/{token}"));
    assert!(made["data"]["url"].as_str().unwrap().ends_with(&format!("/s/{token}")));
    assert_eq!(made["data"]["link"]["createdBy"]["username"], "ann");

    // The visitor: no cookie, no key.
    let visitor = reqwest::Client::new();
    let (status, opened) =
        send(&visitor, reqwest::Method::GET, app.url(&format!("/api/shared/{token}")), Value::Null)
            .await;
    assert_eq!(status, 200, "{opened}");
    assert_eq!(opened["data"]["dashboard"]["id"], id.as_str());
    assert_eq!(opened["data"]["dashboard"]["state"]["title"], "Metals");
    assert_eq!(
        (&opened["data"]["vars"]["sym"], &opened["data"]["allowVars"]),
        (&json!("XAGUSD"), &json!(false))
    );
    let page = visitor.get(app.url(&format!("/s/{token}"))).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.text().await.unwrap().contains("/assets/app.js"));
    // The token opens nothing else.
    for path in
        ["/api/dashboards", &format!("/api/dashboards/{id}"), "/api/chats", "/api/sdk/sources"]
    {
        let r = visitor.get(app.url(path)).bearer_auth(&token).send().await.unwrap();
        assert_eq!(r.status(), 401, "{path}");
    }
    let wrong = "A".repeat(43);
    let url = app.url(&format!("/api/shared/{wrong}"));
    assert_eq!(send(&visitor, reqwest::Method::GET, url, Value::Null).await.0, 404);

    // Live, in the link's values; the other dashboard is not there; the variables are fixed.
    let mut ws = link_ws(&app, &token).await.unwrap();
    ws_send(&mut ws, json!({"type": "subscribe", "dashboardId": other})).await;
    let err = ws_next(&mut ws).await;
    assert_eq!(err["type"], "error", "{err}");
    assert!(err["message"].as_str().unwrap().contains("not found"), "{err}");
    ws_send(&mut ws, json!({"type": "subscribe", "dashboardId": id})).await;
    let (data, seen) = ws_until(&mut ws, |m| {
        m["type"] == "panel.data" && m["data"][0]["sym"] == "XAGUSD"
            || m["type"] == "dashboard.snapshot" && m["panels"]["a"]["data"][0]["sym"] == "XAGUSD"
    })
    .await;
    assert!(seen.iter().chain([&data]).all(|m| m["type"] != "dashboards.changed"));
    ws_send(&mut ws, json!({"type": "set_vars", "dashboardId": id, "vars": {"sym": "XAUUSD"}}))
        .await;
    let (err, _) = ws_until(&mut ws, |m| m["type"] == "error").await;
    assert!(err["message"].as_str().unwrap().contains("fixed"), "{err}");
    let mut edited = state("Metals, renamed");
    edited["panels"][0]["title"] = json!("A2");
    let url = app.url(&format!("/api/dashboards/{id}"));
    let save = json!({"baseVersion": 1, "state": edited});
    assert_eq!(send(&ann, reqwest::Method::PUT, url, save).await.0, 200);
    let (patch, seen) = ws_until(&mut ws, |m| m["type"] == "dashboard.patch").await;
    assert_eq!(patch["version"], 2, "{patch}");
    assert!(seen.iter().all(|m| m["type"] != "dashboards.changed"), "{seen:?}");
    // A write made elsewhere is not announced to the visitor.
    let url = app.url(&format!("/api/dashboards/{other}"));
    let save = json!({"baseVersion": 1, "state": state("Other 2")});
    assert_eq!(send(&ann, reqwest::Method::PUT, url, save).await.0, 200);

    // Listed with its uses; revoked, it stops: the open view closes, the page says so.
    let (_, listed) = send(&ann, reqwest::Method::GET, share.clone(), Value::Null).await;
    let links = listed["data"].as_array().unwrap();
    assert_eq!(links.len(), 1, "{listed}");
    assert!(links[0]["uses"].as_u64().unwrap() >= 1 && links[0].get("token").is_none());
    assert!(!listed.to_string().contains(&token));
    let url = app.url(&format!("/api/dashboards/{id}/share/{link_id}"));
    assert_eq!(send(&ann, reqwest::Method::DELETE, url, Value::Null).await.0, 200);
    let (code, reason) = closed(&mut ws).await;
    assert_eq!(code, 1008);
    assert!(reason.contains("revoked"), "{reason}");
    let url = app.url(&format!("/api/shared/{token}"));
    assert_eq!(send(&visitor, reqwest::Method::GET, url, Value::Null).await.0, 404);
    assert_eq!(link_ws(&app, &token).await.err(), Some(404));

    let (_, trail) = app.get("/api/admin/audit").await;
    let kinds: Vec<&str> =
        trail["data"].as_array().unwrap().iter().filter_map(|e| e["kind"].as_str()).collect();
    for kind in ["share_created", "share_used", "share_revoked"] {
        assert!(kinds.contains(&kind), "{kind} in {kinds:?}");
    }
    assert!(!trail.to_string().contains(&token), "never the token in the trail");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_expires_goes_with_its_dashboard_and_is_made_only_by_who_may_change_it() {
    let app = support::spawn_app().await;
    app.add_user("ann", PASSWORD, "editor").await;
    let bob_id = app.add_user("bob", PASSWORD, "editor").await;
    let ann = app.cookie_client(&app.password_cookie("ann", PASSWORD).await);
    let bob = app.cookie_client(&app.password_cookie("bob", PASSWORD).await);
    let id = create(&ann, &app, "Metals").await;
    let share = app.url(&format!("/api/dashboards/{id}/share"));
    // Bob cannot see it, then may only look: neither makes nor lists links.
    assert_eq!(send(&bob, reqwest::Method::POST, share.clone(), json!({})).await.0, 404);
    let access = json!({"visibility": "private", "users": [{"userId": bob_id, "role": "view"}]});
    let url = app.url(&format!("/api/dashboards/{id}/access"));
    assert_eq!(send(&ann, reqwest::Method::PUT, url, access).await.0, 200);
    assert_eq!(send(&bob, reqwest::Method::POST, share.clone(), json!({})).await.0, 403);
    assert_eq!(send(&bob, reqwest::Method::GET, share.clone(), Value::Null).await.0, 403);
    assert_eq!(
        send(&ann, reqwest::Method::POST, share.clone(), json!({"expiresIn": 0})).await.0,
        400
    );

    // Expiry: one second, then 410 for the page and the socket; no longer listed.
    let body = json!({"expiresIn": 1, "allowVars": true});
    let (status, made) = send(&ann, reqwest::Method::POST, share.clone(), body).await;
    assert_eq!(status, 201, "{made}");
    let token = made["data"]["token"].as_str().unwrap().to_owned();
    let visitor = reqwest::Client::new();
    let url = app.url(&format!("/api/shared/{token}"));
    let (status, opened) = send(&visitor, reqwest::Method::GET, url.clone(), Value::Null).await;
    assert_eq!((status, &opened["data"]["allowVars"]), (200, &json!(true)));
    let mut ws = link_ws(&app, &token).await.unwrap();
    ws_send(&mut ws, json!({"type": "subscribe", "dashboardId": id})).await;
    ws_until(&mut ws, |m| m["type"] == "dashboard.snapshot").await;
    // Allowed here: the visitor's own values.
    ws_send(&mut ws, json!({"type": "set_vars", "dashboardId": id, "vars": {"sym": "XAGUSD"}}))
        .await;
    ws_until(&mut ws, |m| {
        m["type"] == "panel.data" && m["data"][0]["sym"] == "XAGUSD"
            || m["type"] == "dashboard.snapshot" && m["panels"]["a"]["data"][0]["sym"] == "XAGUSD"
    })
    .await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let (status, body) = send(&visitor, reqwest::Method::GET, url, Value::Null).await;
    assert_eq!(status, 410, "{body}");
    assert!(body["msg"].as_str().unwrap().contains("expired"));
    let (code, reason) = closed(&mut ws).await;
    assert_eq!((code, reason.contains("expired")), (1008, true), "{reason}");
    assert_eq!(link_ws(&app, &token).await.err(), Some(410));
    let (_, listed) = send(&ann, reqwest::Method::GET, share.clone(), Value::Null).await;
    assert_eq!(listed["data"], json!([]));

    // A purged dashboard takes its links with it; a deleted one's link says so.
    let (_, made) = send(&ann, reqwest::Method::POST, share.clone(), json!({})).await;
    let token = made["data"]["token"].as_str().unwrap().to_owned();
    let url = app.url(&format!("/api/shared/{token}"));
    let del = app.url(&format!("/api/dashboards/{id}"));
    assert_eq!(send(&ann, reqwest::Method::DELETE, del.clone(), Value::Null).await.0, 200);
    let (status, body) = send(&visitor, reqwest::Method::GET, url.clone(), Value::Null).await;
    assert_eq!(status, 404);
    assert!(body["msg"].as_str().unwrap().contains("deleted"), "{body}");
    let purge = format!("{del}?purge=true");
    assert_eq!(send(&ann, reqwest::Method::DELETE, purge, Value::Null).await.0, 200);
    let stored = app.app.links.list(&id);
    assert!(stored.is_empty(), "{stored:?}");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_links_visitors_hold_the_links_share_of_connections_and_no_more() {
    use boardsmith::server::connections::ServerLimits;
    let limits = ServerLimits { connections_per_credential: 3, ..ServerLimits::default() };
    let app = support::spawn_app_with_limits(
        std::sync::Arc::new(tempfile::tempdir().unwrap()),
        false,
        |_| {},
        limits,
    )
    .await;
    let id = create(&app.http, &app, "Metals").await;
    let share = app.url(&format!("/api/dashboards/{id}/share"));
    let mut tokens = Vec::new();
    for _ in 0..2 {
        let (status, made) = send(&app.http, reqwest::Method::POST, share.clone(), json!({})).await;
        assert_eq!(status, 201, "{made}");
        tokens.push(made["data"]["token"].as_str().unwrap().to_owned());
    }
    let mut open = Vec::new();
    for _ in 0..3 {
        open.push(link_ws(&app, &tokens[0]).await.expect("within the link's share"));
    }
    assert_eq!(link_ws(&app, &tokens[0]).await.err(), Some(429), "past the link's share");
    // Another link, the owner and a stranger's health check are served.
    let mut other = link_ws(&app, &tokens[1]).await.expect("another link");
    ws_send(&mut other, json!({"type": "subscribe", "dashboardId": id})).await;
    ws_until(&mut other, |m| m["type"] == "dashboard.snapshot").await;
    assert_eq!(app.get("/api/dashboards").await.0, 200);
    assert_eq!(reqwest::get(app.url("/healthz")).await.unwrap().status(), 200);
    // A visitor who leaves gives their place back.
    drop(open.pop());
    let mut back = None;
    for _ in 0..50 {
        if let Ok(ws) = link_ws(&app, &tokens[0]).await {
            back = Some(ws);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(back.is_some(), "the place came back");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_made_on_one_node_opens_on_another_and_a_revoke_there_closes_it_here() {
    use crate::support::pg::TestDb;
    use reqwest::Method;
    let db = TestDb::new().await;
    let token = "cluster-test-token-0123456789abcdef";
    let (_dirs, nodes) = crate::support::node::cluster(&db.url, 2, token, &[], |_| {}).await;
    let (a, b) = (&nodes[0], &nodes[1]);
    let (status, made) =
        a.send(Method::POST, "/api/dashboards", json!({"state": state("Metals")})).await;
    assert_eq!(status, 201, "{made}");
    let id = made["data"]["id"].as_str().unwrap().to_owned();
    let (status, link) =
        a.send(Method::POST, &format!("/api/dashboards/{id}/share"), json!({})).await;
    assert_eq!(status, 201, "{link}");
    let secret = link["data"]["token"].as_str().unwrap().to_owned();
    let link_id = link["data"]["link"]["id"].as_str().unwrap().to_owned();
    let visitor = reqwest::Client::new();
    let open_on_b = || visitor.get(b.url(&format!("/api/shared/{secret}"))).send();
    // B may learn of the link a moment later.
    let mut opened = false;
    for _ in 0..100 {
        if open_on_b().await.unwrap().status() == 200 {
            opened = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(opened, "the link never opened on B");
    let url = b.url(&format!("/api/shared/{secret}/ws")).replace("http://", "ws://");
    let (mut ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    ws_send(&mut ws, json!({"type": "subscribe", "dashboardId": id})).await;
    ws_until(&mut ws, |m| m["type"] == "dashboard.snapshot").await;
    let (status, _) =
        a.send(Method::DELETE, &format!("/api/dashboards/{id}/share/{link_id}"), Value::Null).await;
    assert_eq!(status, 200);
    let (code, reason) = closed(&mut ws).await;
    assert_eq!(code, 1008, "{reason}");
    assert_eq!(open_on_b().await.unwrap().status(), 404);
}
