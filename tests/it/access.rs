//! Who may talk to the server, from the outside: the token (Bearer, sign-in cookie, 401), the
//! Host allowlist (403 on REST, SSE and WebSocket), the Origin and Sec-Fetch-Site checks on
//! writes, JSON-only bodies (415), the token file, `--no-auth` off loopback, and a real
//! `boardsmith serve` whose logs never show the token except in its sign-in line.

use std::io::{BufRead as _, BufReader};
use std::os::unix::fs::PermissionsExt as _;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{LOCATION, SET_COOKIE};
use serde_json::{Value, json};

use crate::support::{self, TestApp, authed_client, spawn_app};

/// Every route a page could use to change something, with a JSON body that would work.
fn write_routes(id: &str) -> Vec<(&'static str, String, Value)> {
    vec![
        ("POST", "/api/dashboards".into(), json!({"template": "gold"})),
        (
            "PUT",
            format!("/api/dashboards/{id}"),
            json!({"baseVersion": 1, "state": {"title": "pwned", "layout": {"columns": 2}, "panels": []}}),
        ),
        ("POST", format!("/api/dashboards/{id}/revert"), json!({"version": 1})),
        ("POST", format!("/api/dashboards/{id}/refresh"), json!({})),
        ("POST", format!("/api/dashboards/{id}/restore"), json!({})),
        ("DELETE", format!("/api/dashboards/{id}"), json!({})),
        (
            "POST",
            "/api/tools/execute".into(),
            json!({"code": "return {title: 'pwned', layout: {columns: 2}, panels: []}"}),
        ),
        ("POST", "/api/tools/mutate".into(), json!({"dashboard_id": id, "code": "(s) => null"})),
        ("POST", "/api/panels/preview".into(), json!({"code": "return 1"})),
        ("POST", "/api/query".into(), json!({"message": "hi"})),
        ("POST", "/api/submit".into(), json!({"runId": "r", "toolId": "t", "payload": {}})),
    ]
}

async fn one_dashboard(app: &TestApp) -> String {
    let (s, b) = app.post("/api/dashboards", json!({"template": "gold"})).await;
    assert_eq!(s, 201, "{b}");
    b["data"]["id"].as_str().unwrap().to_owned()
}

/// The dashboards as the API lists them (ids, versions, titles, deleted flags).
async fn fingerprint(app: &TestApp) -> Value {
    let (s, b) = app.get("/api/dashboards?includeDeleted=true").await;
    assert_eq!(s, 200);
    let list: Vec<Value> = b["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| json!([d["id"], d["version"], d["title"], d["deleted"]]))
        .collect();
    Value::from(list)
}

/// A signed-in WebSocket handshake with one more header (`host`, `origin`) set to `value`.
async fn ws_with(
    app: &TestApp,
    header: &'static str,
    value: &str,
) -> Result<support::Ws, tokio_tungstenite::tungstenite::Error> {
    let mut req = app.ws_request();
    req.headers_mut().insert(header, value.parse().unwrap());
    tokio_tungstenite::connect_async(req).await.map(|(ws, _)| ws)
}

fn method(m: &str) -> reqwest::Method {
    m.parse().unwrap()
}

#[tokio::test]
async fn without_the_token_every_protected_route_is_401_and_the_shell_is_public() {
    let app = spawn_app().await;
    let id = one_dashboard(&app).await;
    let anon =
        reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let wrong = authed_client("not-the-token-0123456789");
    for client in [&anon, &wrong] {
        for path in ["/api/dashboards", "/api/chats", "/ws", "/v1/models", "/mcp", "/api/nope"] {
            let r = client.get(app.url(path)).send().await.unwrap();
            assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "{path}");
            assert_eq!(r.headers()["www-authenticate"], "Bearer");
            let body: Value = r.json().await.unwrap();
            assert_eq!(body["code"], 401, "{body}");
            assert!(body["msg"].as_str().unwrap().contains("Authorization: Bearer"), "{body}");
        }
        for (m, path, body) in write_routes(&id) {
            let r = client.request(method(m), app.url(&path)).json(&body).send().await.unwrap();
            assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "{m} {path}");
        }
    }
    // The token in the query string of an API route is not a credential.
    let r =
        anon.get(app.url(&format!("/api/dashboards?token={}", app.token()))).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    // A WebSocket handshake without the token is refused before the upgrade.
    let err = tokio_tungstenite::connect_async(format!("ws://{}/ws", app.addr)).await.unwrap_err();
    assert!(err.to_string().contains("401"), "{err}");

    for path in ["/", "/healthz", "/assets/app.js"] {
        assert_eq!(
            anon.get(app.url(path)).send().await.unwrap().status(),
            StatusCode::OK,
            "{path}"
        );
    }
    // Nothing changed.
    let (_, b) = app.get(&format!("/api/dashboards/{id}")).await;
    assert_eq!(
        (b["data"]["version"].as_u64(), b["data"]["deleted"].as_bool()),
        (Some(1), Some(false))
    );
    app.stop().await;
}

#[tokio::test]
async fn a_foreign_host_is_403_on_rest_sse_websocket_and_the_shell() {
    let app = spawn_app().await;
    let before = fingerprint(&app).await;
    for host in
        ["evil.example", &format!("evil.example:{}", app.addr.port()), "localhost:1", "127.0.0.1"]
    {
        for (m, path) in
            [("GET", "/api/dashboards"), ("GET", "/"), ("GET", "/healthz"), ("POST", "/api/query")]
        {
            let r = app
                .http
                .request(method(m), app.url(path))
                .header("host", host)
                .json(&json!({"message": "hi"}))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), StatusCode::FORBIDDEN, "{m} {path} Host: {host}");
            let body: Value = r.json().await.unwrap();
            assert!(body["msg"].as_str().unwrap().contains("DNS rebinding"), "{body}");
        }
        let err = ws_with(&app, "host", host).await.unwrap_err();
        assert!(err.to_string().contains("403"), "{err}");
    }
    // The loopback names on our port are ours.
    for host in [format!("localhost:{}", app.addr.port()), format!("[::1]:{}", app.addr.port())] {
        let r =
            app.http.get(app.url("/api/dashboards")).header("host", &host).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::OK, "{host}");
    }
    assert_eq!(fingerprint(&app).await, before);
    app.stop().await;
}

#[tokio::test]
async fn foreign_origins_and_cross_site_requests_change_nothing() {
    let app = spawn_app().await;
    let id = one_dashboard(&app).await;
    let before = fingerprint(&app).await;
    let port = app.addr.port();
    // Even with a valid credential (a signed-in browser sends its cookie), a foreign page is
    // refused: another port on localhost, a prefix trick, an opaque origin.
    let foreign = [
        "http://localhost:3000".to_owned(),
        format!("http://localhost:{port}.evil.example"),
        "null".to_owned(),
        format!("https://127.0.0.1:{port}"),
    ];
    for origin in &foreign {
        for (m, path, body) in write_routes(&id) {
            let r = app
                .http
                .request(method(m), app.url(&path))
                .header("origin", origin)
                .json(&body)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), StatusCode::FORBIDDEN, "{m} {path} Origin: {origin}");
        }
        let r =
            app.http.get(app.url("/api/dashboards")).header("origin", origin).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::FORBIDDEN, "read with Origin {origin}");
        let err = ws_with(&app, "origin", origin).await.unwrap_err();
        assert!(err.to_string().contains("403"), "WebSocket with Origin {origin}: {err}");
    }
    for (m, path, body) in write_routes(&id) {
        let r = app
            .http
            .request(method(m), app.url(&path))
            .header("sec-fetch-site", "cross-site")
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::FORBIDDEN, "{m} {path} cross-site");
    }
    assert_eq!(fingerprint(&app).await, before);

    // Our own origin, as the app sends it, works (REST and WebSocket).
    let own = format!("http://127.0.0.1:{port}");
    let r = app
        .http
        .post(app.url("/api/dashboards"))
        .header("origin", &own)
        .header("sec-fetch-site", "same-origin")
        .json(&json!({"template": "gold"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::CREATED);
    ws_with(&app, "origin", &format!("http://localhost:{port}")).await.unwrap();
    app.stop().await;
}

#[tokio::test]
async fn write_bodies_must_be_json() {
    let app = spawn_app().await;
    let id = one_dashboard(&app).await;
    let before = fingerprint(&app).await;
    for (m, path, body) in write_routes(&id) {
        if m == "DELETE" {
            continue;
        }
        // A no-cors `fetch` with a string body (text/plain), a form, and a Blob (no type).
        for ct in [
            Some("text/plain;charset=UTF-8"),
            Some("application/x-www-form-urlencoded"),
            Some("multipart/form-data; boundary=x"),
            None,
        ] {
            let mut req = app.http.request(method(m), app.url(&path)).body(body.to_string());
            if let Some(ct) = ct {
                req = req.header("content-type", ct);
            }
            let r = req.send().await.unwrap();
            assert_eq!(r.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE, "{m} {path} {ct:?}");
            let env: Value = r.json().await.unwrap();
            assert_eq!(env["code"], 415);
            assert!(env["msg"].as_str().unwrap().contains("application/json"), "{env}");
        }
    }
    assert_eq!(fingerprint(&app).await, before);
    // Bodyless writes are not refused for their (absent) type.
    let r = app.http.post(app.url(&format!("/api/dashboards/{id}/refresh"))).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let r = app
        .http
        .post(app.url(&format!("/api/dashboards/{id}/restore")))
        .header("content-type", "text/plain")
        .send()
        .await
        .unwrap();
    assert_ne!(r.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    app.stop().await;
}

#[tokio::test]
async fn signing_in_sets_a_strict_http_only_cookie_and_drops_the_token_from_the_url() {
    let app = spawn_app().await;
    let plain =
        reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let r = plain.get(app.url(&format!("/?token={}", app.token()))).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    assert_eq!(r.headers()[LOCATION], "/");
    assert_eq!(r.headers()["referrer-policy"], "no-referrer");
    let cookie = r.headers()[SET_COOKIE].to_str().unwrap().to_owned();
    let name = format!("boardsmith_session_{}", app.addr.port());
    assert!(cookie.starts_with(&format!("{name}=")), "{cookie}");
    for attr in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(cookie.contains(attr), "{attr} in {cookie}");
    }
    // Plain HTTP: no `Secure` (the browser would drop the cookie). Through a TLS proxy, as it
    // says in either header, the cookie is `Secure`.
    assert!(!cookie.contains("Secure"), "{cookie}");
    for (name, value) in [("x-forwarded-proto", "https"), ("forwarded", "for=1.2.3.4;proto=https")]
    {
        let r = plain
            .get(app.url(&format!("/?token={}", app.token())))
            .header(name, value)
            .send()
            .await
            .unwrap();
        let tls = r.headers()[SET_COOKIE].to_str().unwrap();
        assert!(tls.ends_with("; Secure"), "{name}: {tls}");
    }
    let pair = cookie.split(';').next().unwrap().to_owned();
    // The cookie is an opaque session id: never the token, and a new one at every sign-in.
    let value = pair.split_once('=').unwrap().1;
    assert_ne!(value, app.token());
    assert!(!cookie.contains(app.token()));
    let again = app.token_cookie().await;
    assert_ne!(again, pair, "a new session id at every sign-in");
    let r = plain.get(app.url("/api/dashboards")).header("cookie", &pair).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    // The token link signed in as the first admin, made on first use.
    let me: Value = plain
        .get(app.url("/api/session"))
        .header("cookie", &pair)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(me["data"]["user"]["username"], "admin", "{me}");
    assert_eq!(me["data"]["user"]["role"], "admin");
    assert_eq!(me["data"]["signedInWith"], "token");
    // Another port's cookie name, the token as a cookie, or a wrong value, is no credential.
    let other = format!("boardsmith_session_1={value}");
    let r = plain.get(app.url("/api/dashboards")).header("cookie", other).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    let token_as_cookie = format!("{name}={}", app.token());
    let r = plain
        .get(app.url("/api/dashboards"))
        .header("cookie", token_as_cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "the token is never a cookie");

    let r = plain.get(app.url("/?token=wrong-token-0123456789")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    assert!(r.headers().get(SET_COOKIE).is_none());
    assert!(r.text().await.unwrap().contains("Sign in to Boardsmith"));
    app.stop().await;
}

#[tokio::test]
async fn the_generated_token_is_private_and_survives_a_restart() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let app = support::spawn_app_in(dir.clone(), false).await;
    let first = app.token().to_owned();
    app.stop().await;
    let meta = std::fs::metadata(dir.path().join("token")).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    let app = support::spawn_app_in(dir.clone(), false).await;
    assert_eq!(app.token(), first);
    assert_eq!(app.get("/api/dashboards").await.0, 200);
    app.stop().await;
}

#[tokio::test]
async fn auth_off_is_refused_on_a_non_loopback_address_and_keeps_the_other_checks() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let app = support::spawn_app_with(dir, false, |c| {
        c.access = Some(boardsmith::access::AccessConfig { no_auth: true, ..Default::default() });
    })
    .await;
    assert!(app.app.token.is_none());
    let open = tokio::net::TcpListener::bind("0.0.0.0:0").await.unwrap();
    let err = boardsmith::server::run(open, app.app.clone(), app.server_config.clone(), async {})
        .await
        .unwrap_err();
    assert!(err.to_string().contains("without authentication"), "{err}");

    // On loopback it serves without a credential, but a foreign page is still refused.
    let anon = reqwest::Client::new();
    assert_eq!(anon.get(app.url("/api/dashboards")).send().await.unwrap().status(), StatusCode::OK);
    let r = anon
        .post(app.url("/api/dashboards"))
        .header("content-type", "text/plain")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let r = anon
        .post(app.url("/api/dashboards"))
        .header("origin", "http://localhost:3000")
        .json(&json!({"template": "gold"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let r =
        anon.get(app.url("/api/dashboards")).header("host", "evil.example").send().await.unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    app.stop().await;
}

/// A real `boardsmith serve` at debug log level: the token is printed once, in the sign-in
/// line, and nowhere else — not for a sign-in, not for a token in an API URL. `boardsmith
/// token` prints the same token from the data directory.
/// Kills the server a test started when an assertion fails before the test stops it itself
/// (only then: after an orderly stop the pid may belong to another process).
struct KillOnPanic(u32);

impl Drop for KillOnPanic {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let _ = Command::new("kill").arg("-KILL").arg(self.0.to_string()).status();
        }
    }
}

#[test]
fn the_token_appears_only_in_the_sign_in_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(support::program())
        .arg("serve")
        .env("BOARDSMITH_ADDR", "127.0.0.1:0")
        .env("BOARDSMITH_DATA", dir.path().join("data"))
        .env("AGENT_EXTERNAL_DIR", dir.path().join("agents"))
        .env("AGENT_TOOLS_EXTERNAL_DIR", dir.path().join("tools"))
        .env("AGENT_VIEWPORT_EXTERNAL_DIR", dir.path().join("viewports"))
        .env("BOARDSMITH_WORKERS", "1")
        .env("BOARDSMITH_OFFLINE", "1")
        .env("RUST_LOG", "debug")
        .env_remove("BOARDSMITH_TOKEN")
        .current_dir(dir.path())
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let _stop = KillOnPanic(child.id());
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut log = Vec::new();
    let url = loop {
        let line = lines.next().expect("the server prints its sign-in line").unwrap();
        log.push(line.clone());
        if let Some(rest) = line.trim().strip_prefix("sign in: ") {
            break rest.to_owned();
        }
    };
    let (base, token) = url.split_once("/?token=").unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let plain =
            reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        let r = plain.get(format!("{base}/?token={token}")).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::SEE_OTHER);
        let r = plain.get(format!("{base}/api/dashboards?token={token}")).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
        let r = authed_client(token).get(format!("{base}/api/dashboards")).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::OK);
    });
    let printed = Command::new(support::program())
        .arg("token")
        .env("BOARDSMITH_DATA", dir.path().join("data"))
        .env("BOARDSMITH_ADDR", base.trim_start_matches("http://"))
        .env_remove("BOARDSMITH_TOKEN")
        .current_dir(dir.path())
        .output()
        .unwrap();
    let printed = String::from_utf8(printed.stdout).unwrap();
    assert!(printed.contains(&format!("{base}/?token={token}")), "{printed}");

    let _ = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status();
    let reader = std::thread::spawn(move || lines.map_while(Result::ok).collect::<Vec<_>>());
    let _ = child.wait();
    let rest = reader.join().unwrap();
    std::thread::sleep(Duration::from_millis(10));
    log.extend(rest);
    let with_token: Vec<&String> = log.iter().filter(|l| l.contains(token)).collect();
    assert_eq!(with_token.len(), 1, "the token leaked into the log: {with_token:#?}");
    assert!(with_token[0].contains("sign in:"));
}
