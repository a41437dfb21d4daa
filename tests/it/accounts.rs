//! A team of analysts, from the outside: password sign-in and sign-out (here and everywhere),
//! the same answer for an unknown name and a wrong password, attempts limited, roles enforced
//! (a viewer reads and is refused every write path; an editor is refused administration), a
//! key never exceeds its person, a role change replaces the session id, disabling ends every
//! session, the audit trail records it all and never a secret, and the operator's
//! `boardsmith user` commands. Two nodes on PostgreSQL see a sign-out and a role change at once.

use std::time::Duration;

use reqwest::Method;
use reqwest::header::{RETRY_AFTER, SET_COOKIE};
use serde_json::{Value, json};

use crate::support::{self, TestApp, cookie_pair, spawn_app};

const PASSWORD: &str = "a long enough password";

async fn status_of(client: &reqwest::Client, method: Method, url: String, body: Value) -> u16 {
    let r = client.request(method.clone(), &url).json(&body).send().await.unwrap();
    let status = r.status().as_u16();
    if status >= 400 {
        eprintln!("{method} {url}: {status} {}", r.text().await.unwrap_or_default());
    }
    status
}

/// GET `url` as `client`: the envelope.
async fn json_of(client: &reqwest::Client, url: String) -> Value {
    client.get(url).send().await.unwrap().json().await.unwrap()
}

async fn me(app: &TestApp, cookie: &str) -> (u16, Value) {
    let r = app.cookie_client(cookie).get(app.url("/api/session")).send().await.unwrap();
    (r.status().as_u16(), r.json().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn password_sign_in_out_and_everywhere() {
    let app = spawn_app().await;
    let ann = app.add_user("Ann", PASSWORD, "editor").await;
    let cookie = app.password_cookie("ann", PASSWORD).await;
    let (status, body) = me(&app, &cookie).await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["user"]["id"], ann.as_str());
    assert_eq!(body["data"]["user"]["role"], "editor");
    assert_eq!(body["data"]["via"], "session");
    assert_eq!(body["data"]["signedInWith"], "password");

    // An unknown name and a wrong password get the same answer.
    let wrong = |user: &str, pw: &str| {
        let body = json!({"username": user, "password": pw});
        let url = app.url("/api/session");
        async move { reqwest::Client::new().post(url).json(&body).send().await.unwrap() }
    };
    let a = wrong("ann", "not the password").await;
    let b = wrong("nobody", "not the password").await;
    assert_eq!((a.status().as_u16(), b.status().as_u16()), (401, 401));
    assert!(a.headers().get(SET_COOKIE).is_none());
    let (a, b): (Value, Value) = (a.json().await.unwrap(), b.json().await.unwrap());
    assert_eq!(a["msg"], b["msg"]);
    assert_eq!(a["msg"], "wrong username or password");

    // Sign out: the cookie is cleared and the old id is worthless.
    let second = app.password_cookie("ann", PASSWORD).await;
    let r = app.cookie_client(&cookie).delete(app.url("/api/session")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers()[SET_COOKIE].to_str().unwrap().contains("Max-Age=0"));
    let r = app.cookie_client(&cookie).get(app.url("/api/session")).send().await.unwrap();
    assert_eq!(r.status(), 401);
    let cleared = r.headers()[SET_COOKIE].to_str().unwrap();
    assert!(cleared.contains("Max-Age=0"), "a dead cookie is cleared: {cleared}");
    assert_eq!(me(&app, &second).await.0, 200, "the other browser stays signed in");
    // Everywhere: every session of this person ends.
    let third = app.password_cookie("ann", PASSWORD).await;
    let r = app
        .cookie_client(&third)
        .delete(app.url("/api/session?everywhere=true"))
        .send()
        .await
        .unwrap();
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["data"]["ended"], 2, "{body}");
    assert_eq!(me(&app, &second).await.0, 401);
    assert_eq!(me(&app, &third).await.0, 401);

    // Changing one's password needs the current one and signs the other browsers out.
    let one = app.password_cookie("ann", PASSWORD).await;
    let two = app.password_cookie("ann", PASSWORD).await;
    let change = |current: &str| json!({"current": current, "password": "an even longer password"});
    let url = app.url("/api/session/password");
    assert_eq!(
        status_of(&app.cookie_client(&one), Method::PUT, url.clone(), change("nope")).await,
        403
    );
    let r = app.cookie_client(&one).put(url).json(&change(PASSWORD)).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let renewed = cookie_pair(&r);
    assert_eq!(me(&app, &two).await.0, 401);
    assert_eq!(me(&app, &one).await.0, 401, "a new id for the browser that changed it");
    assert_eq!(me(&app, &renewed).await.0, 200);
    assert!(app.password_cookie_status("ann", "an even longer password").await == 200);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_sign_ins_are_limited_per_account() {
    let app = spawn_app().await;
    app.add_user("bob", PASSWORD, "viewer").await;
    for _ in 0..5 {
        assert_eq!(app.password_cookie_status("bob", "wrong password!").await, 401);
    }
    // Past the limit even the right password waits, and says how long.
    let r = reqwest::Client::new()
        .post(app.url("/api/session"))
        .json(&json!({"username": "bob", "password": PASSWORD}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 429);
    let wait: u64 = r.headers()[RETRY_AFTER].to_str().unwrap().parse().unwrap();
    assert!((1..=900).contains(&wait), "{wait}");
    // Another account is not held back by bob's.
    app.add_user("cid", PASSWORD, "viewer").await;
    assert_eq!(app.password_cookie_status("cid", PASSWORD).await, 200);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_viewer_reads_and_is_refused_every_write_and_an_editor_every_administration() {
    let app = spawn_app().await;
    let created = app
        .tool("execute", json!({"code": "return {title: 'Shared', layout: {columns: 12}, panels: [{id: 'p0', title: 'V', type: 'metric_card', renderer: 'custom', code: 'return {value: 1};'}]};"}))
        .await;
    let id = created["dashboard_id"].as_str().unwrap_or_else(|| panic!("{created}")).to_owned();
    assert!(!id.is_empty(), "{created}");
    // Made with the token: the first admin's, private; shared with the team to be seen.
    let (status, _) =
        app.put(&format!("/api/dashboards/{id}/access"), json!({"visibility": "team"})).await;
    assert_eq!(status, 200);
    app.add_user("vera", PASSWORD, "viewer").await;
    app.add_user("ed", PASSWORD, "editor").await;
    let viewer = app.cookie_client(&app.password_cookie("vera", PASSWORD).await);
    let editor = app.cookie_client(&app.password_cookie("ed", PASSWORD).await);
    // Same-origin, as the web app sends them.
    let url = |p: &str| app.url(p);
    assert_eq!(status_of(&viewer, Method::GET, url("/api/dashboards"), json!(null)).await, 200);
    assert_eq!(
        status_of(&viewer, Method::GET, url(&format!("/api/dashboards/{id}")), json!(null)).await,
        200
    );
    assert_eq!(
        status_of(&viewer, Method::POST, url(&format!("/api/dashboards/{id}/refresh")), json!({}))
            .await,
        200,
        "a viewer refreshes"
    );
    let writes = [
        (Method::POST, "/api/dashboards".to_owned(), json!({"template": "gold"})),
        (Method::PUT, format!("/api/dashboards/{id}"), json!({"baseVersion": 1, "state": {}})),
        (Method::DELETE, format!("/api/dashboards/{id}"), json!(null)),
        (Method::POST, format!("/api/dashboards/{id}/revert"), json!({"version": 1})),
        (
            Method::POST,
            "/api/tools/mutate".to_owned(),
            json!({"dashboard_id": id, "code": "s => s"}),
        ),
        (Method::POST, "/api/panels/preview".to_owned(), json!({})),
        (Method::POST, "/api/query".to_owned(), json!({"agent": "dashboard", "query": "hi"})),
        (Method::POST, "/v1/chat/completions".to_owned(), json!({"model": "x", "messages": []})),
        (Method::POST, "/api/workflows".to_owned(), json!({})),
        (Method::POST, "/api/workflows/any/run".to_owned(), json!({})),
        (
            Method::POST,
            "/v1/agents/dashboard/chat/completions".to_owned(),
            json!({"model": "x", "messages": [{"role": "user", "content": "hi"}]}),
        ),
        (Method::POST, "/api/kb".to_owned(), json!({"name": "mine"})),
        (Method::POST, "/api/admin/users".to_owned(), json!({"username": "z", "role": "admin"})),
        (Method::GET, "/api/admin/audit".to_owned(), json!(null)),
        (Method::PUT, "/api/sdk/fallback".to_owned(), json!({"enabled": true})),
        (Method::GET, "/metrics".to_owned(), json!(null)),
    ];
    for (method, path, body) in &writes {
        let status = status_of(&viewer, method.clone(), url(path), body.clone()).await;
        assert_eq!(status, 403, "a viewer's {method} {path}");
    }
    // An editor writes (what is shared with them to edit) but does not administer.
    let ed_id = app.app.users.by_name("ed").unwrap().id.to_string();
    let share = json!({"visibility": "team", "users": [{"userId": ed_id, "role": "edit"}]});
    assert_eq!(app.put(&format!("/api/dashboards/{id}/access"), share).await.0, 200);
    assert_eq!(
        status_of(
            &editor,
            Method::POST,
            url("/api/tools/mutate"),
            json!({"dashboard_id": id, "code": "s => ({...s, title: 'Edited'})"})
        )
        .await,
        200
    );
    for path in ["/api/admin/users", "/api/admin/audit", "/metrics"] {
        assert_eq!(status_of(&editor, Method::GET, url(path), json!(null)).await, 403, "{path}");
    }
    // Keys never exceed their person: a viewer cannot mint a write key, and its read key reads.
    let r = viewer
        .post(url("/api/keys"))
        .json(&json!({"name": "w", "scopes": ["write"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let r = viewer
        .post(url("/api/keys"))
        .json(&json!({"name": "r", "scopes": ["read"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let key: Value = r.json().await.unwrap();
    let with_key = support::authed_client(key["data"]["key"].as_str().unwrap());
    assert_eq!(status_of(&with_key, Method::GET, url("/api/dashboards"), json!(null)).await, 200);
    assert_eq!(
        status_of(&with_key, Method::POST, url("/api/dashboards"), json!({"template": "gold"}))
            .await,
        403
    );
    // An admin's key made with `write`, whose person becomes a viewer, stops writing.
    let r = editor
        .post(url("/api/keys"))
        .json(&json!({"name": "ed-w", "scopes": ["write", "read"]}))
        .send()
        .await
        .unwrap();
    let ed_key: Value = r.json().await.unwrap();
    let ed_key = support::authed_client(ed_key["data"]["key"].as_str().unwrap());
    let body = json!({"dashboard_id": id, "code": "s => s"});
    assert_eq!(status_of(&ed_key, Method::POST, url("/api/tools/mutate"), body.clone()).await, 200);
    let ed = app.app.users.by_name("ed").unwrap().id;
    let (status, _) = app.patch(&format!("/api/admin/users/{ed}"), json!({"role": "viewer"})).await;
    assert_eq!(status, 200);
    assert_eq!(status_of(&ed_key, Method::POST, url("/api/tools/mutate"), body).await, 403);
    // Each person sees their own keys; the admin sees all.
    let listed: Value = viewer.get(url("/api/keys")).send().await.unwrap().json().await.unwrap();
    assert_eq!(listed["data"].as_array().unwrap().len(), 1, "{listed}");
    let (_, all) = app.get("/api/keys").await;
    assert_eq!(all["data"].as_array().unwrap().len(), 2);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_role_change_replaces_the_session_id_and_disabling_ends_every_session() {
    let app = spawn_app().await;
    let id = app.add_user("dan", PASSWORD, "editor").await;
    let cookie = app.password_cookie("dan", PASSWORD).await;
    let (status, _) = app.patch(&format!("/api/admin/users/{id}"), json!({"role": "viewer"})).await;
    assert_eq!(status, 200);
    let r = app.cookie_client(&cookie).get(app.url("/api/session")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let renewed = cookie_pair(&r);
    assert_ne!(renewed, cookie, "a new id with the new role");
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["data"]["user"]["role"], "viewer");
    assert_eq!(me(&app, &cookie).await.0, 401, "the id from before the change is over");
    assert_eq!(me(&app, &renewed).await.0, 200);
    let (status, _) = app.patch(&format!("/api/admin/users/{id}"), json!({"disabled": true})).await;
    assert_eq!(status, 200);
    assert_eq!(me(&app, &renewed).await.0, 401);
    assert_eq!(app.password_cookie_status("dan", PASSWORD).await, 401);
    // The last admin cannot be demoted.
    let admin = app.app.users.ensure_first_admin().await.unwrap().0.id;
    let (status, body) =
        app.patch(&format!("/api/admin/users/{admin}"), json!({"role": "editor"})).await;
    assert_eq!(status, 409, "{body}");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_trail_records_people_and_never_a_secret() {
    let app = spawn_app().await;
    let _ = app.token_cookie().await;
    app.add_user("eve", PASSWORD, "editor").await;
    let cookie = app.password_cookie("eve", PASSWORD).await;
    // Someone types their password into the name field.
    assert_eq!(app.password_cookie_status("hunter2-typed-as-name", "x").await, 401);
    assert_eq!(app.password_cookie_status("eve", "wrong password here").await, 401);
    app.cookie_client(&cookie).delete(app.url("/api/session")).send().await.unwrap();
    let r = app
        .http
        .post(app.url("/api/keys"))
        .json(&json!({"name": "ci", "scopes": ["read"]}))
        .send()
        .await
        .unwrap();
    let key: Value = r.json().await.unwrap();
    let key_id = key["data"]["id"].as_str().unwrap().to_owned();
    app.http.delete(app.url(&format!("/api/keys/{key_id}"))).send().await.unwrap();
    // Administration is recorded in one place, and a refused change is not.
    assert_eq!(app.put("/api/sdk/fallback", json!({"fallback": true})).await.0, 200);
    assert_eq!(app.put("/api/admin/settings", json!({"defaultModel": "nowhere/x"})).await.0, 400);
    let (status, trail) = app.get("/api/admin/audit?limit=50").await;
    assert_eq!(status, 200);
    let entries = trail["data"].as_array().unwrap();
    let settings: Vec<&Value> =
        entries.iter().filter(|e| e["kind"] == "settings_changed").collect();
    assert_eq!(settings.len(), 1, "{settings:?}");
    assert_eq!(settings[0]["target"], "/api/sdk/fallback");
    assert_eq!(settings[0]["actor"]["token"], true);
    let kinds: Vec<&str> = entries.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    for kind in
        ["user_created", "sign_in", "sign_in_failed", "sign_out", "key_created", "key_revoked"]
    {
        assert!(kinds.contains(&kind), "{kind} in {kinds:?}");
    }
    let text = trail.to_string();
    for secret in [PASSWORD, "hunter2-typed-as-name", "wrong password here", app.token()] {
        assert!(!text.contains(secret), "the trail holds `{secret}`");
    }
    assert!(!text.contains(key["data"]["key"].as_str().unwrap()));
    // Newest first.
    let ats: Vec<i64> = entries.iter().map(|e| e["at"].as_i64().unwrap()).collect();
    assert!(ats.windows(2).all(|w| w[0] >= w[1]), "{ats:?}");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_made_before_accounts_keep_working_as_the_first_admins() {
    let dir = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let app = support::spawn_app_in(dir.clone(), false).await;
    // Made with the token before anyone signed in: no person yet.
    let (status, made) =
        app.post("/api/keys", json!({"name": "old", "scopes": ["write", "read"]})).await;
    assert_eq!(status, 201);
    assert!(made["data"].get("userId").is_none(), "{made}");
    let secret = made["data"]["key"].as_str().unwrap().to_owned();
    app.stop().await;
    let app = support::spawn_app_in(dir, false).await;
    let _ = app.token_cookie().await; // the first admin appears
    let with_key = support::authed_client(&secret);
    let r = with_key.get(app.url("/api/session")).send().await.unwrap();
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["data"]["via"], "key");
    assert_eq!(body["data"]["user"]["username"], "admin", "{body}");
    assert_eq!(
        status_of(&with_key, Method::POST, app.url("/api/dashboards"), json!({"template": "gold"}))
            .await,
        201
    );
    app.stop().await;
}

#[test]
fn the_user_command_adds_lists_disables_and_resets() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str], stdin: Option<&str>| {
        use std::io::Write as _;
        let mut child = std::process::Command::new(support::program())
            .args(args)
            .env("BOARDSMITH_DATA", dir.path())
            .env_remove("BOARDSMITH_DATABASE_URL")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        if let Some(text) = stdin {
            child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
        }
        drop(child.stdin.take());
        let out = child.wait_with_output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, out, err) = run(&["user", "add", "fay", "--role", "viewer"], None);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("added fay") && out.contains("as viewer"), "{out}");
    let generated = out.lines().find_map(|l| l.strip_prefix("password: ")).unwrap().to_owned();
    assert_eq!(generated.len(), 20);
    let (code, _, err) =
        run(&["user", "add", "gus", "--password-stdin"], Some("gus's own password\n"));
    assert_eq!(code, Some(0), "{err}");
    let (_, out, _) = run(&["user", "list"], None);
    assert!(out.contains("fay") && out.contains("gus") && out.contains("editor"), "{out}");
    let (code, out, err) = run(&["user", "disable", "fay"], None);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("fay disabled"));
    let (_, out, _) = run(&["user", "list", "--json"], None);
    let fay: Value = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|u| u["username"] == "fay")
        .unwrap();
    assert_eq!(fay["disabled"], true);
    assert!(fay.get("passwordHash").is_none(), "{fay}");
    let (code, out, _) = run(&["user", "reset-password", "gus"], None);
    assert_eq!(code, Some(0));
    assert!(out.contains("password: "), "{out}");
    let (code, _, err) = run(&["user", "disable", "nobody"], None);
    assert_eq!(code, Some(1));
    assert!(err.contains("no user `nobody`"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_out_and_a_role_change_on_one_node_take_effect_on_another() {
    use crate::support::pg::TestDb;
    let db = TestDb::new().await;
    let token = "cluster-test-token-0123456789abcdef";
    let (_dirs, nodes) = crate::support::node::cluster(&db.url, 2, token, &[], |_| {}).await;
    let (a, b) = (&nodes[0], &nodes[1]);
    let (status, made) = a
        .send(
            Method::POST,
            "/api/admin/users",
            json!({"username": "hal", "password": PASSWORD, "role": "editor"}),
        )
        .await;
    assert_eq!(status, 201, "{made}");
    let hal = made["data"]["id"].as_str().unwrap().to_owned();
    let sign_in = |url: String| async move {
        let r = reqwest::Client::new()
            .post(url)
            .json(&json!({"username": "hal", "password": PASSWORD}))
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), if r.status() == 200 { cookie_pair(&r) } else { String::new() })
    };
    // B may learn of the account a moment later.
    let mut cookie = String::new();
    for _ in 0..100 {
        let (status, c) = sign_in(b.url("/api/session")).await;
        if status == 200 {
            cookie = c;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!cookie.is_empty(), "hal never signed in on B");
    // Nodes behind one address share the cookie's name; here each node has its own port, and
    // so its own cookie name: the same session id is sent under the name of the node asked.
    let on = |url: String, cookie: String| async move {
        let port = url.split(':').nth(2).unwrap().split('/').next().unwrap().to_owned();
        let value = cookie.split_once('=').unwrap().1.to_owned();
        let mut h = reqwest::header::HeaderMap::new();
        let pair = format!("boardsmith_session_{port}={value}");
        h.insert(reqwest::header::COOKIE, pair.parse().unwrap());
        let c = reqwest::Client::builder().default_headers(h).build().unwrap();
        let r = c.get(url).send().await.unwrap();
        let status = r.status().as_u16();
        let body: Value = r.json().await.unwrap_or(Value::Null);
        (status, body)
    };
    // The same cookie works on A: the session is in the shared store.
    assert_eq!(on(a.url("/api/session"), cookie.clone()).await.0, 200);
    // A role change on A: B answers with the new role at once.
    let (status, _) =
        a.send(Method::PATCH, &format!("/api/admin/users/{hal}"), json!({"role": "viewer"})).await;
    assert_eq!(status, 200);
    let mut seen = false;
    for _ in 0..100 {
        let (status, me) = on(b.url("/api/session"), cookie.clone()).await;
        assert_eq!(status, 200, "{me}");
        if me["data"]["user"]["role"] == "viewer" {
            seen = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(seen, "B never saw the role change made on A");
    // B replaced the session: the old id is over on A as well.
    let mut status = 0;
    for _ in 0..100 {
        status = on(a.url("/api/session"), cookie.clone()).await.0;
        if status == 401 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(status, 401, "A still honours the id B replaced");
    // A sign-out on A ends the session on B.
    let (_, fresh) = sign_in(a.url("/api/session")).await;
    assert_eq!(on(b.url("/api/session"), fresh.clone()).await.0, 200);
    let mut h = reqwest::header::HeaderMap::new();
    h.insert(reqwest::header::COOKIE, fresh.parse().unwrap());
    let c = reqwest::Client::builder().default_headers(h).build().unwrap();
    assert_eq!(
        c.delete(a.url("/api/session")).send().await.unwrap().status(),
        200,
        "signed in on A"
    );
    let mut status = 0;
    for _ in 0..100 {
        status = on(b.url("/api/session"), fresh.clone()).await.0;
        if status == 401 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(status, 401, "B still honours a session ended on A");
    // A dashboard shared with the team on A is seen by hal on B.
    let (status, made) = a.send(Method::POST, "/api/dashboards", json!({"template": "gold"})).await;
    assert_eq!(status, 201, "{made}");
    let id = made["data"]["id"].as_str().unwrap().to_owned();
    let (_, on_b) = sign_in(b.url("/api/session")).await;
    let hal_sees = || async {
        let (_, list) = on(b.url("/api/dashboards"), on_b.clone()).await;
        list["data"].as_array().is_some_and(|l| l.iter().any(|d| d["id"] == id.as_str()))
    };
    assert!(!hal_sees().await, "private to the admins until shared");
    let share = json!({"visibility": "team"});
    let (status, _) = a.send(Method::PUT, &format!("/api/dashboards/{id}/access"), share).await;
    assert_eq!(status, 200);
    let mut seen = false;
    for _ in 0..100 {
        if hal_sees().await {
            seen = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(seen, "B never learnt of the share made on A");
}

async fn ws_subscribe_error(app: &TestApp, cookie: &str, id: &str) -> Option<String> {
    use futures::{SinkExt as _, StreamExt as _};
    use tokio_tungstenite::tungstenite::Message;
    use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
    let mut req = format!("ws://{}/ws", app.addr).into_client_request().unwrap();
    req.headers_mut().insert("cookie", cookie.parse().unwrap());
    let (mut ws, _) = tokio_tungstenite::connect_async(req).await.unwrap();
    let msg = json!({"type": "subscribe", "dashboardId": id}).to_string();
    ws.send(Message::Text(msg.into())).await.unwrap();
    loop {
        let next = tokio::time::timeout(Duration::from_secs(10), ws.next()).await.unwrap();
        let Some(Ok(Message::Text(t))) = next else { continue };
        let v: Value = serde_json::from_str(&t).unwrap();
        match v["type"].as_str() {
            Some("error") => return Some(v["message"].as_str().unwrap().to_owned()),
            Some("dashboard.snapshot") => return None,
            _ => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_dashboard_is_its_owners_until_shared_by_every_path() {
    let app = spawn_app().await;
    let ann_id = app.add_user("ann", PASSWORD, "editor").await;
    let bob_id = app.add_user("bob", PASSWORD, "editor").await;
    app.add_user("vic", PASSWORD, "viewer").await;
    let ann_cookie = app.password_cookie("ann", PASSWORD).await;
    let bob_cookie = app.password_cookie("bob", PASSWORD).await;
    let vic_cookie = app.password_cookie("vic", PASSWORD).await;
    let (ann, bob, vic) = (
        app.cookie_client(&ann_cookie),
        app.cookie_client(&bob_cookie),
        app.cookie_client(&vic_cookie),
    );
    let r = ann
        .post(app.url("/api/dashboards"))
        .json(&json!({"template": "gold"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let made: Value = r.json().await.unwrap();
    let id = made["data"]["id"].as_str().unwrap().to_owned();
    let access = json_of(&ann, app.url(&format!("/api/dashboards/{id}/access"))).await;
    assert_eq!(access["data"]["owner"], ann_id.as_str(), "{access}");
    assert_eq!(access["data"]["visibility"], "private");
    assert_eq!(access["data"]["canChange"], true);

    // Bob sees nothing of it, by any path: list, get, versions, data, tools, WebSocket.
    let listed = |c: reqwest::Client| {
        let url = app.url("/api/dashboards");
        async move {
            let v: Value = c.get(url).send().await.unwrap().json().await.unwrap();
            v["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d["id"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        }
    };
    assert!(listed(ann.clone()).await.contains(&id));
    assert!(!listed(bob.clone()).await.contains(&id));
    for path in [
        format!("/api/dashboards/{id}"),
        format!("/api/dashboards/{id}/versions"),
        format!("/api/dashboards/{id}/versions/1"),
        format!("/api/dashboards/{id}/data"),
        format!("/api/dashboards/{id}/access"),
    ] {
        assert_eq!(status_of(&bob, Method::GET, app.url(&path), json!(null)).await, 404, "{path}");
    }
    for (method, path, body) in [
        (
            Method::PUT,
            format!("/api/dashboards/{id}"),
            json!({"baseVersion": 1, "state": made["data"]["state"]}),
        ),
        (Method::DELETE, format!("/api/dashboards/{id}"), json!(null)),
        (Method::POST, format!("/api/dashboards/{id}/revert"), json!({"version": 1})),
        (Method::POST, format!("/api/dashboards/{id}/refresh"), json!({})),
        (Method::POST, "/api/tools/get_state".to_owned(), json!({"dashboard_id": id})),
        (
            Method::POST,
            "/api/tools/mutate".to_owned(),
            json!({"dashboard_id": id, "code": "s => s"}),
        ),
        (Method::POST, "/api/dashboards".to_owned(), json!({"duplicateOf": id})),
    ] {
        assert_eq!(
            status_of(&bob, method.clone(), app.url(&path), body).await,
            404,
            "{method} {path}"
        );
    }
    let err = ws_subscribe_error(&app, &bob_cookie, &id).await.expect("bob may not subscribe");
    assert!(err.contains("not found"), "{err}");
    assert!(ws_subscribe_error(&app, &ann_cookie, &id).await.is_none(), "ann subscribes");
    // The admin (the token) sees it.
    assert_eq!(app.get(&format!("/api/dashboards/{id}")).await.0, 200);

    // Shared with bob to view, and vic to edit: bob reads but does not write; vic, a viewer,
    // only reads whatever the grant says; neither may change who sees it.
    let body = json!({"visibility": "private", "users": [
        {"userId": bob_id, "role": "view"},
        {"userId": app.app.users.by_name("vic").unwrap().id.to_string(), "role": "edit"},
    ]});
    let r =
        ann.put(app.url(&format!("/api/dashboards/{id}/access"))).json(&body).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(listed(bob.clone()).await.contains(&id));
    assert_eq!(
        status_of(&bob, Method::GET, app.url(&format!("/api/dashboards/{id}")), json!(null)).await,
        200
    );
    assert!(ws_subscribe_error(&app, &bob_cookie, &id).await.is_none(), "bob subscribes now");
    let mutate = json!({"dashboard_id": id, "code": "s => s"});
    assert_eq!(
        status_of(&bob, Method::POST, app.url("/api/tools/mutate"), mutate.clone()).await,
        403
    );
    assert_eq!(
        status_of(&vic, Method::POST, app.url("/api/tools/mutate"), mutate.clone()).await,
        403
    );
    assert_eq!(
        status_of(&vic, Method::GET, app.url(&format!("/api/dashboards/{id}/data")), json!(null))
            .await,
        200
    );
    assert_eq!(
        status_of(
            &bob,
            Method::PUT,
            app.url(&format!("/api/dashboards/{id}/access")),
            json!({"visibility": "team"})
        )
        .await,
        403
    );
    let unknown = json!({"visibility": "team", "users": [{"userId": "u_nobody", "role": "view"}]});
    assert_eq!(
        status_of(&ann, Method::PUT, app.url(&format!("/api/dashboards/{id}/access")), unknown)
            .await,
        400
    );
    // Edit granted: bob writes.
    let body = json!({"visibility": "team", "users": [{"userId": bob_id, "role": "edit"}]});
    assert_eq!(
        status_of(&ann, Method::PUT, app.url(&format!("/api/dashboards/{id}/access")), body).await,
        200
    );
    assert_eq!(status_of(&bob, Method::POST, app.url("/api/tools/mutate"), mutate).await, 200);
    // Each version says who saved it: ann made it, bob's edit is bob's.
    let mut state = made["data"]["state"].clone();
    state["title"] = json!("Gold, by bob");
    let save = json!({"baseVersion": 1, "state": state});
    let url = app.url(&format!("/api/dashboards/{id}"));
    assert_eq!(status_of(&bob, Method::PUT, url, save).await, 200);
    let versions = json_of(&ann, app.url(&format!("/api/dashboards/{id}/versions"))).await;
    let authors: Vec<(Value, Value)> = versions["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["author"]["username"].clone(), v["author"]["via"].clone()))
        .collect();
    assert_eq!(
        authors,
        [(json!("ann"), json!("rest")), (json!("bob"), json!("rest"))],
        "{versions}"
    );
    assert_eq!(versions["data"][1]["author"]["userId"], bob_id.as_str());
    // A dashboard bob's execute makes is bob's.
    let code = "return {title: 'Bob', layout: {columns: 12}, panels: []};";
    let r =
        bob.post(app.url("/api/tools/execute")).json(&json!({"code": code})).send().await.unwrap();
    let out: Value = r.json().await.unwrap();
    let bobs = out["data"]["dashboard_id"].as_str().unwrap().to_owned();
    assert!(!listed(ann.clone()).await.contains(&bobs), "bob's own is private");
    let (_, trail) = app.get("/api/admin/audit").await;
    assert!(
        trail["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["kind"] == "access_changed" && e["target"] == id.as_str())
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dashboard_an_agent_builds_in_a_persons_chat_is_theirs() {
    use boardsmith::llm::mock::MockLlm;
    let mock = MockLlm::start(MockLlm::demo().unwrap(), 0).await.unwrap();
    let url = mock.url();
    let app = support::spawn_app_with(
        std::sync::Arc::new(tempfile::tempdir().unwrap()),
        false,
        move |c| {
            c.llm = Some(support::llm_config(Some(&url)));
        },
    )
    .await;
    app.add_user("ann", PASSWORD, "editor").await;
    app.add_user("bob", PASSWORD, "editor").await;
    let ann = app.cookie_client(&app.password_cookie("ann", PASSWORD).await);
    let bob = app.cookie_client(&app.password_cookie("bob", PASSWORD).await);
    let body =
        json!({"message": "Build me a gold dashboard", "agentKey": "dashboard", "stream": false});
    let r = ann.post(app.url("/api/query")).json(&body).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let ran: Value = r.json().await.unwrap();
    let run_id = ran["data"]["runId"].as_str().unwrap().to_owned();
    // Ann's run is hers to follow and answer: bob finds nothing by its id.
    let resume = |c: &reqwest::Client| {
        c.post(app.url("/api/query"))
            .header("last-event-id", format!("{run_id}:0"))
            .json(&json!({}))
            .send()
    };
    assert_eq!(resume(&bob).await.unwrap().status(), 404);
    assert_eq!(resume(&ann).await.unwrap().status(), 200);
    let answer = json!({"runId": run_id, "toolId": "t1", "payload": {}});
    assert_eq!(status_of(&bob, Method::POST, app.url("/api/submit"), answer).await, 404);
    let ids = |c: reqwest::Client| {
        let url = app.url("/api/dashboards");
        async move {
            let v: Value = c.get(url).send().await.unwrap().json().await.unwrap();
            v["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d["id"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        }
    };
    let anns = ids(ann.clone()).await;
    assert_eq!(anns.len(), 1, "the run built one dashboard, ann's: {anns:?}");
    assert!(ids(bob.clone()).await.is_empty(), "bob sees none of ann's");
    let access = json_of(&ann, app.url(&format!("/api/dashboards/{}/access", anns[0]))).await;
    assert_eq!(access["data"]["ownerName"], "ann", "{access}");
    let versions = json_of(&ann, app.url(&format!("/api/dashboards/{}/versions", anns[0]))).await;
    let first = &versions["data"][0]["author"];
    assert_eq!((&first["username"], &first["via"]), (&json!("ann"), &json!("agent")), "{versions}");
    // The chat is ann's too: listed for her (and the admin), hidden from bob by every path.
    let chats = |c: reqwest::Client| {
        let url = app.url("/api/chats");
        async move {
            let v: Value = c.get(url).send().await.unwrap().json().await.unwrap();
            v["data"].as_array().unwrap().clone()
        }
    };
    let hers = chats(ann.clone()).await;
    assert_eq!(hers.len(), 1, "{hers:?}");
    let chat = hers[0]["chatId"].as_str().unwrap().to_owned();
    assert_eq!(first["chat"], chat.as_str(), "the version names the chat the agent ran in");
    assert!(chats(bob.clone()).await.is_empty());
    assert_eq!(chats(app.http.clone()).await.len(), 1, "the admin sees every chat");
    let url = app.url(&format!("/api/chat?chatId={chat}"));
    assert_eq!(status_of(&ann, Method::GET, url.clone(), json!(null)).await, 200);
    assert_eq!(status_of(&bob, Method::GET, url, json!(null)).await, 404);
    let more = json!({"message": "Add a gold news feed", "chatId": chat, "agentKey": "dashboard", "stream": false});
    assert_eq!(status_of(&bob, Method::POST, app.url("/api/query"), more).await, 404);
    mock.stop();
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_websocket_closes_when_its_session_ends() {
    use futures::StreamExt as _;
    use tokio_tungstenite::tungstenite::Message;
    use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
    let app = spawn_app().await;
    app.add_user("ann", PASSWORD, "editor").await;
    let cookie = app.password_cookie("ann", PASSWORD).await;
    let mut req = format!("ws://{}/ws", app.addr).into_client_request().unwrap();
    req.headers_mut().insert("cookie", cookie.parse().unwrap());
    let (mut ws, _) = tokio_tungstenite::connect_async(req).await.unwrap();
    let other = app.password_cookie("ann", PASSWORD).await;
    let r = app
        .cookie_client(&other)
        .delete(app.url("/api/session?everywhere=true"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let closed = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            match ws.next().await {
                Some(Ok(Message::Close(frame))) => return frame,
                Some(Ok(_)) => {}
                _ => return None,
            }
        }
    })
    .await
    .expect("the connection outlived its session");
    let frame = closed.expect("a close frame");
    assert_eq!(u16::from(frame.code), 1008);
    assert!(frame.reason.contains("session ended"), "{}", frame.reason);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_persons_upload_is_theirs_to_delete() {
    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x07";
    let app = spawn_app().await;
    app.add_user("ann", PASSWORD, "editor").await;
    app.add_user("bob", PASSWORD, "editor").await;
    let ann = app.cookie_client(&app.password_cookie("ann", PASSWORD).await);
    let bob = app.cookie_client(&app.password_cookie("bob", PASSWORD).await);
    let r = ann
        .post(app.url("/api/uploads?name=a.png"))
        .header("content-type", "image/png")
        .header("origin", format!("http://{}", app.addr))
        .body(PNG)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let info: Value = r.json().await.unwrap();
    let id = info["data"]["id"].as_str().unwrap().to_owned();
    let url = app.url(&format!("/api/uploads/{id}"));
    assert_eq!(status_of(&bob, Method::DELETE, url.clone(), json!(null)).await, 403);
    assert_eq!(status_of(&ann, Method::DELETE, url, json!(null)).await, 200);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workflow_run_is_its_persons_and_acts_with_their_rights() {
    let app = spawn_app().await;
    app.add_user("ann", PASSWORD, "editor").await;
    app.add_user("bob", PASSWORD, "editor").await;
    let ann = app.cookie_client(&app.password_cookie("ann", PASSWORD).await);
    let bob = app.cookie_client(&app.password_cookie("bob", PASSWORD).await);
    // Ann's private dashboard, and a workflow (the admin's to define) that reads it.
    let r = ann.post(app.url("/api/dashboards")).json(&json!({"template": "gold"})).send().await;
    let made: Value = r.unwrap().json().await.unwrap();
    let id = made["data"]["id"].as_str().unwrap().to_owned();
    let def = json!({"id": "peek", "name": "peek", "nodes": [
        {"id": "read", "type": "tool", "tool": "get_state", "args": {"dashboard_id": id}}
    ]});
    let (status, body) = app.post("/api/workflows", def).await;
    assert_eq!(status, 201, "{body}");
    let run = |c: &reqwest::Client| {
        c.post(app.url("/api/workflows/peek/run")).json(&json!({"stream": false})).send()
    };
    let hers: Value = run(&ann).await.unwrap().json().await.unwrap();
    let run_id = hers["data"]["runId"].as_str().unwrap().to_owned();
    let url = app.url(&format!("/api/workflows/runs/{run_id}"));
    let state = json_of(&ann, url.clone()).await;
    assert_eq!(state["data"]["status"], "completed", "ann reads her own dashboard: {state}");
    // Bob's run of the same workflow acts as bob: ann's private dashboard is not there.
    let his: Value = run(&bob).await.unwrap().json().await.unwrap();
    let his_id = his["data"]["runId"].as_str().unwrap().to_owned();
    let his_url = app.url(&format!("/api/workflows/runs/{his_id}"));
    let state = json_of(&bob, his_url).await;
    assert_eq!(state["data"]["status"], "failed", "{state}");
    assert!(state.to_string().contains("not found"), "{state}");
    // Ann's run is hers: bob neither reads, follows, resumes nor cancels it; the admin reads it.
    assert_eq!(status_of(&bob, Method::GET, url.clone(), json!(null)).await, 404);
    for path in ["resume", "cancel"] {
        let u = app.url(&format!("/api/workflows/runs/{run_id}/{path}"));
        assert_eq!(status_of(&bob, Method::POST, u, json!({})).await, 404, "{path}");
    }
    let follow = bob
        .post(app.url("/api/workflows/peek/run"))
        .header("last-event-id", format!("{run_id}:0"))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(follow.status(), 404);
    assert_eq!(app.get(&format!("/api/workflows/runs/{run_id}")).await.0, 200);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_knowledge_base_is_its_makers_until_shared_with_the_team() {
    let app = spawn_app().await;
    app.add_user("ann", PASSWORD, "editor").await;
    app.add_user("bob", PASSWORD, "editor").await;
    let ann = app.cookie_client(&app.password_cookie("ann", PASSWORD).await);
    let bob = app.cookie_client(&app.password_cookie("bob", PASSWORD).await);
    let r = ann.post(app.url("/api/kb")).json(&json!({"name": "ann-notes"})).send().await;
    let made: Value = r.unwrap().json().await.unwrap();
    assert_eq!(made["data"]["visibility"], "private", "{made}");
    let kb = made["data"]["id"].as_str().unwrap().to_owned();
    let doc =
        json!({"title": "Gold note", "text": "Gold broke its sixty-day average on heavy volume."});
    let docs = app.url(&format!("/api/kb/{kb}/documents"));
    assert_eq!(status_of(&ann, Method::POST, docs.clone(), doc.clone()).await, 201);
    let names = |v: Value| -> Vec<String> {
        v["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(names(json_of(&ann, app.url("/api/kb")).await), ["ann-notes"]);
    assert!(names(json_of(&bob, app.url("/api/kb")).await).is_empty(), "bob sees none of ann's");
    let search = app.url(&format!("/api/kb/{kb}/search"));
    let query = json!({"query": "gold"});
    for (method, url, body) in [
        (Method::GET, app.url(&format!("/api/kb/{kb}")), json!(null)),
        (Method::GET, docs.clone(), json!(null)),
        (Method::POST, search.clone(), query.clone()),
        (Method::POST, docs.clone(), doc.clone()),
        (Method::DELETE, app.url(&format!("/api/kb/{kb}")), json!(null)),
    ] {
        assert_eq!(status_of(&bob, method.clone(), url.clone(), body).await, 404, "{method} {url}");
    }
    // A workflow bob runs searches with bob's rights: the base is not there for it.
    let def = json!({"id": "ask", "name": "ask", "nodes": [
        {"id": "find", "type": "knowledge", "kb": "ann-notes", "query": "gold"}
    ]});
    assert_eq!(app.post("/api/workflows", def).await.0, 201);
    let run = |c: &reqwest::Client| {
        c.post(app.url("/api/workflows/ask/run")).json(&json!({"stream": false})).send()
    };
    let his: Value = run(&bob).await.unwrap().json().await.unwrap();
    let his_id = his["data"]["runId"].as_str().unwrap().to_owned();
    let state = json_of(&bob, app.url(&format!("/api/workflows/runs/{his_id}"))).await;
    assert_eq!(state["data"]["status"], "failed", "{state}");

    // Shared with the team: bob reads and searches it (so do his runs), but does not change it.
    let change = app.url(&format!("/api/kb/{kb}"));
    let team = json!({"visibility": "team"});
    assert_eq!(status_of(&bob, Method::PATCH, change.clone(), team.clone()).await, 404);
    assert_eq!(status_of(&ann, Method::PATCH, change.clone(), team).await, 200);
    assert_eq!(names(json_of(&bob, app.url("/api/kb")).await), ["ann-notes"]);
    assert_eq!(status_of(&bob, Method::POST, search, query).await, 200);
    assert_eq!(status_of(&bob, Method::POST, docs, doc).await, 403);
    assert_eq!(status_of(&bob, Method::DELETE, change, json!(null)).await, 403);
    let his: Value = run(&bob).await.unwrap().json().await.unwrap();
    let his_id = his["data"]["runId"].as_str().unwrap().to_owned();
    let state = json_of(&bob, app.url(&format!("/api/workflows/runs/{his_id}"))).await;
    assert_eq!(state["data"]["status"], "completed", "{state}");
    app.stop().await;
}
