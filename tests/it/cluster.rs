//! Several nodes on one PostgreSQL database, each a real `boardsmith serve` process with a
//! data directory of its own, a fresh database per test: a save on one node reaches the
//! WebSocket subscribers of the others as a patch, in order; concurrent agent mutates spread
//! over the nodes all land; a node killed with SIGKILL during saves loses no acknowledged
//! version.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::support::node::Node;
use crate::support::pg::TestDb;
use crate::support::{Ws, ws_until};
use boardsmith::store::Author;

const TOKEN: &str = "cluster-test-token-0123456789abcdef";

/// `n` nodes on `db`, each over a directory of its own (kept alive with them).
async fn nodes(db: &TestDb, n: usize) -> (Vec<tempfile::TempDir>, Vec<Node>) {
    crate::support::node::cluster(&db.url, n, TOKEN, &[], |_| {}).await
}

fn state(title: &str) -> Value {
    json!({
        "title": title,
        "layout": {"columns": 12},
        "panels": [{
            "id": "p0", "title": "Value", "type": "metric_card", "renderer": "custom",
            "code": "return { value: 1 };"
        }]
    })
}

async fn create(node: &Node, title: &str) -> String {
    let (status, body) =
        node.send(Method::POST, "/api/dashboards", json!({"state": state(title)})).await;
    assert_eq!(status, 201, "{body}");
    body["data"]["id"].as_str().unwrap().to_owned()
}

async fn put(node: &Node, id: &str, base: u64, title: &str) -> (u16, Value) {
    let body = json!({"baseVersion": base, "state": state(title)});
    node.send(Method::PUT, &format!("/api/dashboards/{id}"), body).await
}

/// The next message that brings the subscriber to `version` (a patch, or a snapshot when it
/// had to be resent whole).
async fn until_version(ws: &mut Ws, version: u64) -> Value {
    ws_until(ws, |m| {
        matches!(m["type"].as_str(), Some("dashboard.patch" | "dashboard.snapshot"))
            && m["version"] == version
    })
    .await
    .0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_save_on_one_node_reaches_subscribers_on_the_others_in_order() {
    let db = TestDb::new().await;
    let (_dirs, nodes) = nodes(&db, 3).await;
    let (a, b, c) = (&nodes[0], &nodes[1], &nodes[2]);

    // Three nodes found the database empty at once: each example dashboard exists once.
    let (_, list) = b.get("/api/dashboards").await;
    let titles: Vec<&str> =
        list["data"].as_array().unwrap().iter().map(|d| d["title"].as_str().unwrap()).collect();
    let mut unique = titles.clone();
    unique.sort_unstable();
    unique.dedup();
    assert!(!titles.is_empty());
    assert_eq!(titles.len(), unique.len(), "templates loaded more than once: {titles:?}");

    let id = create(a, "Made on A").await;
    let (mut on_a, _) = a.subscribe(&id).await;
    let (mut on_b, snap_b) = b.subscribe(&id).await;
    let (mut on_c, snap_c) = c.subscribe(&id).await;
    assert_eq!((snap_b["version"].as_u64(), snap_c["version"].as_u64()), (Some(1), Some(1)));

    // A save on A reaches B and C as a patch from the version they hold.
    let (status, body) = put(a, &id, 1, "Saved on A").await;
    assert_eq!(status, 200, "{body}");
    for ws in [&mut on_b, &mut on_c] {
        let v2 = until_version(ws, 2).await;
        assert_eq!(
            (v2["type"].as_str(), v2["baseVersion"].as_u64()),
            (Some("dashboard.patch"), Some(1))
        );
        assert!(v2["patch"].to_string().contains("Saved on A"), "{v2}");
    }
    // Saves on C then B, each right after the other: every subscriber moves forward only,
    // each patch from the version it holds (a version it never held comes whole).
    let (status, body) = put(c, &id, 2, "Saved on C").await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = put(b, &id, 3, "Saved on B").await;
    assert_eq!(status, 200, "{body}");
    for ws in [&mut on_a, &mut on_b, &mut on_c] {
        let mut held = None;
        loop {
            let m = crate::support::ws_next(ws).await;
            let Some(v) = m["version"].as_u64() else { continue };
            match m["type"].as_str() {
                Some("dashboard.patch") => {
                    if let Some(h) = held {
                        assert_eq!(
                            m["baseVersion"].as_u64(),
                            Some(h),
                            "a patch from a version not held: {m}"
                        );
                    }
                }
                Some("dashboard.snapshot") => {}
                _ => continue,
            }
            assert!(held.is_none_or(|h| v > h), "went back from {held:?} to {v}");
            held = Some(v);
            if v == 4 {
                assert!(m.to_string().contains("Saved on B"), "{m}");
                break;
            }
        }
    }

    // The database, not a node's memory, refuses a stale base.
    let (status, body) = put(c, &id, 3, "stale").await;
    assert_eq!(status, 409, "{body}");
    let (_, head) = a.get(&format!("/api/dashboards/{id}")).await;
    assert_eq!(
        (head["data"]["version"].as_u64(), head["data"]["state"]["title"].as_str()),
        (Some(4), Some("Saved on B"))
    );

    // A delete on B reaches A's subscribers.
    let (status, _) = b.send(Method::DELETE, &format!("/api/dashboards/{id}"), json!({})).await;
    assert_eq!(status, 200);
    ws_until(&mut on_a, |m| m["type"] == "dashboard.deleted").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_concurrent_mutates_spread_over_three_nodes_all_land() {
    let db = TestDb::new().await;
    let (_dirs, nodes) = nodes(&db, 3).await;
    let id = create(&nodes[0], "Mutated everywhere").await;
    let mut subscribers = Vec::new();
    for node in &nodes {
        subscribers.push(node.subscribe(&id).await.0);
    }
    let calls = (0..50).map(|i| {
        let node = &nodes[i % 3];
        let code = format!(
            "async (s) => {{ s.panels[0].config = {{ ...(s.panels[0].config || {{}}), k{i}: {i} }}; return s; }}"
        );
        let id = id.clone();
        async move {
            let (status, body) = node
                .send(Method::POST, "/api/tools/mutate", json!({"code": code, "dashboard_id": id}))
                .await;
            assert_eq!(status, 200, "{body}");
            assert!(body["data"]["error"].is_null(), "{body}");
        }
    });
    futures::future::join_all(calls).await;

    let (_, head) = nodes[1].get(&format!("/api/dashboards/{id}")).await;
    assert_eq!(head["data"]["version"], 51, "one version per mutate, none lost: {head}");
    let config = head["data"]["state"]["panels"][0]["config"].as_object().unwrap();
    for i in 0..50 {
        assert_eq!(config.get(&format!("k{i}")), Some(&json!(i)), "k{i} lost: {config:?}");
    }
    // Every node's subscriber reaches the last version.
    for ws in &mut subscribers {
        until_version(ws, 51).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_killed_during_saves_loses_no_acknowledged_version() {
    let db = TestDb::new().await;
    let (_dirs, mut nodes) = nodes(&db, 2).await;
    let ids = [create(&nodes[0], "k0").await, create(&nodes[0], "k1").await];
    let acked = Arc::new(std::sync::Mutex::new(Vec::<(String, u64, String)>::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = ids
        .iter()
        .map(|id| {
            let (http, url, id) = (
                nodes[0].http.clone(),
                nodes[0].url(&format!("/api/dashboards/{}", ids[0])),
                id.clone(),
            );
            let url = url.replace(&ids[0], &id);
            let (acked, stop) = (acked.clone(), stop.clone());
            tokio::spawn(async move {
                let mut base = 1;
                while !stop.load(Ordering::Relaxed) {
                    let title = format!("{id} after {base}");
                    let body = json!({"baseVersion": base, "state": state(&title)});
                    let Ok(r) = http.put(&url).json(&body).send().await else { return };
                    if r.status() != 200 {
                        return;
                    }
                    base += 1;
                    acked.lock().unwrap().push((id.clone(), base, title));
                }
            })
        })
        .collect();
    // Kill the node once some saves are acknowledged, with more in flight.
    for _ in 0..400 {
        if acked.lock().unwrap().len() >= 30 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    nodes[0].kill();
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.await.unwrap();
    }
    let acked = acked.lock().unwrap().clone();
    assert!(acked.len() >= 30, "only {} saves were acknowledged", acked.len());
    // The survivor reads every acknowledged version, with its content.
    let b = &nodes[1];
    for (id, version, title) in &acked {
        let (status, body) = b.get(&format!("/api/dashboards/{id}/versions/{version}")).await;
        assert_eq!(status, 200, "{id} v{version}: {body}");
        assert_eq!(body["data"]["state"]["title"], json!(title));
    }
    // And writes on: the dead node held no lock that outlives it.
    let (_, head) = b.get(&format!("/api/dashboards/{}", ids[0])).await;
    let v = head["data"]["version"].as_u64().unwrap();
    let (status, body) = put(b, &ids[0], v, "after the kill").await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_store_copies_every_version_record_chat_and_upload_and_proves_it() {
    use boardsmith::agent::events::Query;
    use boardsmith::agent::memory::{ChatMemory, MemoryConfig};
    use boardsmith::store::{Record, Store, StoreOptions, sample_state};
    let dir = tempfile::tempdir().unwrap();
    let embedded = Store::open(dir.path()).unwrap();
    let a = embedded
        .create(None, sample_state("A", 1, 400), "create", &Author::system())
        .await
        .unwrap();
    embedded.save(&a.id, 1, sample_state("A2", 2, 400), "mutate", &Author::system()).await.unwrap();
    embedded.revert(&a.id, 1, &Author::system()).await.unwrap();
    let b = embedded
        .create(None, sample_state("B", 1, 400), "create", &Author::system())
        .await
        .unwrap();
    embedded.delete(&b.id).await.unwrap();
    embedded.put_session("chat-1", json!({"active": a.id})).await.unwrap();
    embedded.put_api_key("key-1", json!({"name": "ci", "scopes": ["read"]})).await.unwrap();
    embedded.put_admin("agent:x", json!({"prompt": "hi"})).await.unwrap();
    embedded.shutdown().await;
    // Chat files in the data directory's `chats/`: two chats, three runs, one damaged line.
    let files = ChatMemory::new(MemoryConfig::new(dir.path()));
    for (chat, run, message, at) in [
        ("chat-1", "r1", "gold price", 10),
        ("chat-2", "r2", "silver", 20),
        ("chat-1", "r3", "more", 30),
    ] {
        let query = Query { chat_id: chat.into(), message: message.into(), ..Query::default() };
        files.append(files.recorder(run, query, at).finish()).await.unwrap();
        if run == "r1" {
            let path = dir.path().join("chats/chat-1.json");
            let mut damaged = std::fs::read_to_string(&path).unwrap();
            damaged.push_str("{\"chatId\": \"chat-1\", cut\n");
            std::fs::write(&path, damaged).unwrap();
        }
    }
    // Uploads in the data directory's `uploads/`: one image, and one whose content is not the
    // content its name says.
    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x03";
    let uploads_dir = dir.path().join("uploads");
    let uploads = boardsmith::uploads::Uploads::new(&uploads_dir, Default::default());
    let image = uploads.put("image/png", "chart.png", PNG.into()).await.unwrap();
    let forged = "f".repeat(64);
    std::fs::write(uploads_dir.join(&forged), PNG).unwrap();
    std::fs::copy(
        uploads_dir.join(format!("{}.json", image.id)),
        uploads_dir.join(format!("{forged}.json")),
    )
    .unwrap();

    // A knowledge base in the data directory's `kb/` index.
    let kb = {
        use boardsmith::knowledge::{Knowledge, KnowledgeConfig, NewDocument};
        let models = Arc::new(boardsmith::llm::Models::new(crate::support::llm_config(None)));
        let k = Knowledge::open(KnowledgeConfig::new(dir.path()), models, crate::support::sdk())
            .await
            .unwrap();
        let base = k.create("research", "notes", None, Default::default()).await.unwrap();
        let text = "The central bank raised the policy rate by fifty basis points.";
        let doc = NewDocument::Text { title: "Rates note".into(), text: text.into() };
        k.add(&base.id, doc).await.unwrap();
        base.id
    };

    let db = TestDb::new().await;
    let migrate = || {
        std::process::Command::new(crate::support::program())
            .args(["migrate-store", "--to", &db.url])
            .env("BOARDSMITH_DATA", dir.path())
            .output()
            .unwrap()
    };
    let out = migrate();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let line = |name: &str| {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(str::trim)
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!((line("dashboards"), line("versions")), ("2".into(), "4".into()), "{stdout}");
    assert_eq!(
        (line("session"), line("api_key"), line("admin")),
        ("1".into(), "1".into(), "1".into())
    );
    let (source, target) = (line("source sha256"), line("target sha256"));
    assert_eq!(source.len(), 64, "{stdout}");
    assert_eq!(source, target);
    assert_eq!(
        (line("chats"), line("chat_runs"), line("chat_damaged")),
        ("2".into(), "3".into(), "1".into()),
        "{stdout}"
    );
    let (source, target) = (line("chat source sha256"), line("chat target sha256"));
    assert_eq!(source.len(), 64, "{stdout}");
    assert_eq!(source, target);
    assert!(String::from_utf8_lossy(&out.stderr).contains("skipped chat-1.json line 2"));
    assert_eq!((line("uploads"), line("upload_damaged")), ("1".into(), "1".into()), "{stdout}");
    let (source, target) = (line("upload source sha256"), line("upload target sha256"));
    assert_eq!(source.len(), 64, "{stdout}");
    assert_eq!(source, target);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("skipped upload {forged}")) && stderr.contains("SHA-256"),
        "{stderr}"
    );
    assert_eq!((line("kb_bases"), line("kb_documents")), ("1".into(), "1".into()), "{stdout}");
    let (source, target) = (line("kb source sha256"), line("kb target sha256"));
    assert_eq!(source.len(), 64, "{stdout}");
    assert_eq!(source, target);

    // Read back independently: the same histories, flags and records.
    let embedded = Store::open(dir.path()).unwrap();
    let pg = Store::connect(&db.url, StoreOptions::default()).await.unwrap();
    for id in [&a.id, &b.id] {
        let versions = embedded.versions(id).await.unwrap();
        assert_eq!(pg.versions(id).await.unwrap(), versions);
        for v in &versions {
            assert_eq!(
                pg.get_version(id, v.version).await.unwrap(),
                embedded.get_version(id, v.version).await.unwrap()
            );
        }
    }
    assert!(pg.get(&b.id).await.unwrap().deleted);
    for kind in Record::ALL {
        assert_eq!(
            pg.records_with_ids(kind).await.unwrap(),
            embedded.records_with_ids(kind).await.unwrap()
        );
    }
    // The chats read back the same runs.
    let pg = Arc::new(pg);
    let shared = ChatMemory::shared(MemoryConfig::new(dir.path()), pg.clone());
    for chat in ["chat-1", "chat-2"] {
        assert_eq!(shared.runs(chat).await.unwrap(), files.runs(chat).await.unwrap());
    }
    assert_eq!(shared.list_chats().await.unwrap(), files.list_chats().await.unwrap());
    // The copy continues where the source stopped.
    assert_eq!(
        pg.save(&a.id, 3, sample_state("A4", 1, 400), "mutate", &Author::system())
            .await
            .unwrap()
            .version,
        4
    );
    embedded.shutdown().await;
    pg.shutdown().await;

    // A node on the target serves the migrated chats.
    let node_dir = tempfile::tempdir().unwrap();
    let node =
        Node::start(node_dir.path(), TOKEN, &[("BOARDSMITH_DATABASE_URL", db.url.clone())]).await;
    let (_, chats) = node.get("/api/chats").await;
    let ids: Vec<&str> =
        chats["data"].as_array().unwrap().iter().map(|c| c["chatId"].as_str().unwrap()).collect();
    assert_eq!(ids, ["chat-1", "chat-2"], "{chats}");
    let asked = chat_history(&node, "chat-1", "request.query", "message").await;
    assert_eq!(asked, ["gold price", "more"]);
    // And the migrated image, not the damaged one.
    let r = node.http.get(node.url(&format!("/api/uploads/{}", image.id))).send().await.unwrap();
    assert_eq!(
        (r.status().as_u16(), r.headers()["content-type"].to_str().unwrap()),
        (200, "image/png")
    );
    assert_eq!(r.bytes().await.unwrap().as_ref(), PNG);
    assert_eq!(node.get(&format!("/api/uploads/{forged}")).await.0, 404);
    // And the knowledge base, searchable.
    let (status, answer) = node
        .send(Method::POST, &format!("/api/kb/{kb}/search"), json!({"query": "policy rate"}))
        .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["data"]["results"][0]["title"], "Rates note", "{answer}");
    drop(node);

    // Never into a database that already holds dashboards.
    let again = migrate();
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("already holds dashboards"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_key_made_on_one_node_is_honoured_and_revoked_on_another() {
    let db = TestDb::new().await;
    let (_dirs, nodes) = nodes(&db, 2).await;
    let (a, b) = (&nodes[0], &nodes[1]);
    let (status, made) =
        a.send(Method::POST, "/api/keys", json!({"name": "reader", "scopes": ["read"]})).await;
    assert_eq!(status, 201, "{made}");
    let secret = made["data"]["key"].as_str().unwrap().to_owned();
    let key_id = made["data"]["id"].as_str().unwrap().to_owned();
    let with_key = crate::support::authed_client(&secret);
    // B learns of the key from A's notice, without a restart.
    let status_on_b =
        || async { with_key.get(b.url("/api/dashboards")).send().await.unwrap().status().as_u16() };
    let mut status = 0;
    for _ in 0..100 {
        status = status_on_b().await;
        if status == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(status, 200, "B never honoured the key made on A");
    let (revoked, _) = a.send(Method::DELETE, &format!("/api/keys/{key_id}"), json!({})).await;
    assert_eq!(revoked, 200);
    for _ in 0..100 {
        status = status_on_b().await;
        if status == 401 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(status, 401, "B still honours the key revoked on A");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_names_the_store_and_turns_503_while_a_node_drains() {
    let db = TestDb::new().await;
    let dir = tempfile::tempdir().unwrap();
    let env = [
        ("BOARDSMITH_DATABASE_URL", db.url.clone()),
        ("BOARDSMITH_DRAIN_DELAY_MS", "1500".to_owned()),
    ];
    let mut node = Node::start(dir.path(), TOKEN, &env).await;
    // Public, like /healthz: a load balancer sends no credential.
    let public = reqwest::Client::new();
    let ready = public.get(node.url("/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), 200);
    let body: Value = ready.json().await.unwrap();
    assert_eq!(
        (body["data"]["status"].as_str(), body["data"]["store"].as_str()),
        (Some("ready"), Some("postgres"))
    );

    let pid = rustix::process::Pid::from_raw(i32::try_from(node.pid()).unwrap()).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    // Unready at once, while requests are still served.
    let mut status = 0;
    for _ in 0..50 {
        status = public.get(node.url("/readyz")).send().await.unwrap().status().as_u16();
        if status == 503 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(status, 503, "readiness did not turn 503 on SIGTERM");
    let (alive, _) = node.get("/api/dashboards").await;
    assert_eq!(alive, 200, "requests are still served while draining");
    // Then it stops by itself, cleanly.
    let exit = node.wait_exit(Duration::from_secs(15)).expect("the node stops after draining");
    assert!(exit.success(), "{exit:?}");
}

/// `refreshedAt` of every `panel.data` of `panel` a subscriber receives within `window`.
async fn refreshes(ws: &mut Ws, panel: &str, window: Duration) -> Vec<i64> {
    let until = tokio::time::Instant::now() + window;
    let mut out = Vec::new();
    while let Ok(m) = tokio::time::timeout_at(until, crate::support::ws_next(ws)).await {
        if m["type"] == "panel.data" && m["panelId"] == panel {
            out.push(m["refreshedAt"].as_i64().unwrap());
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_node_refreshes_a_dashboard_for_all_and_a_killed_owner_is_replaced() {
    let db = TestDb::new().await;
    let (_dirs, mut nodes) = nodes(&db, 2).await;
    let mut live = state("Ticking");
    live["panels"][0]["refresh"] = json!("5s");
    live["panels"][0]["code"] = json!("return { value: Date.now() % 1000000 };");
    let (status, body) =
        nodes[0].send(Method::POST, "/api/dashboards", json!({"state": live})).await;
    assert_eq!(status, 201, "{body}");
    let id = body["data"]["id"].as_str().unwrap().to_owned();
    let (mut on_a, _) = nodes[0].subscribe(&id).await;
    let (mut on_b, _) = nodes[1].subscribe(&id).await;
    // Past the subscribe-time runs, each node's own: then only the owner's refreshes (every
    // 5 s, the shortest interval allowed), on both.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let (a, b) = tokio::join!(
        refreshes(&mut on_a, "p0", Duration::from_millis(11_000)),
        refreshes(&mut on_b, "p0", Duration::from_millis(11_000))
    );
    assert!(a.len() >= 2, "too few refreshes: {a:?}");
    // The same runs reached both nodes' subscribers (the last may still be on its way).
    let common = a.iter().filter(|t| b.contains(t)).count();
    assert!(common + 1 >= a.len().max(b.len()), "two refreshers? A {a:?} B {b:?}");

    // The lease names the owner; kill it, and the survivor's subscriber keeps getting refreshes.
    let owner_index = crate::support::node::lease_owner(&db.url, &id, &nodes).await;
    nodes[owner_index].kill();
    let killed_at = chrono::Utc::now().timestamp_millis();
    let survivor = if owner_index == 0 { &mut on_b } else { &mut on_a };
    let after = refreshes(survivor, "p0", Duration::from_secs(12)).await;
    let first = after.iter().copied().find(|t| *t > killed_at);
    let first = first.unwrap_or_else(|| panic!("no refresh after the owner died: {after:?}"));
    // The lease lapses (2 s), then the survivor's panel is due (≤ 5 s) at a tick (0.5 s);
    // room for a loaded machine.
    assert!(first - killed_at <= 10_000, "taken over after {} ms", first - killed_at);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_counted_on_two_nodes_adds_up_on_each() {
    use boardsmith::store::{Store, StoreOptions};
    use boardsmith::usage::{Call, GroupBy, UsageLedger};
    let db = TestDb::new().await;
    let call = |cost: f64| Call {
        key: Some("key_1".into()),
        model: "mock/m".into(),
        agent: None,
        usage: boardsmith::llm::Usage { input_tokens: 10, ..Default::default() },
        cost_usd: Some(cost),
        latency: Duration::from_millis(5),
        first_chunk: None,
        error: false,
    };
    let connect = || async {
        let store = Store::connect(&db.url, StoreOptions::default()).await.unwrap();
        UsageLedger::load(Arc::new(store)).await.unwrap()
    };
    let (a, b) = (connect().await, connect().await);
    a.record(&call(1.0));
    a.record(&call(1.0));
    b.record(&call(0.5));
    // Each writes its own rows, then reads the other's: nothing is overwritten.
    for _ in 0..2 {
        a.flush().await.unwrap();
        b.flush().await.unwrap();
    }
    let today = chrono::Utc::now().date_naive();
    for ledger in [&a, &b] {
        let rows = ledger.report(today, today, &[GroupBy::Key]);
        assert_eq!(rows.len(), 1, "{rows:?}");
        assert_eq!((rows[0].totals.requests, rows[0].totals.input_tokens), (3, 30));
        assert!((ledger.spent("key_1") - 2.5).abs() < 1e-9, "{}", ledger.spent("key_1"));
    }
    // A node that starts later counts everything before it.
    let c = connect().await;
    assert_eq!(c.report(today, today, &[]).first().map(|r| r.totals.requests), Some(3));
    assert!((c.spent("key_1") - 2.5).abs() < 1e-9);
}

/// `boardsmith serve` on `db` over a directory of its own, its model the mock at `mock_url`.
async fn node_with_model(db: &TestDb, mock_url: &str) -> (tempfile::TempDir, Node) {
    let mock = |dir: &std::path::Path| crate::support::node::mock_model(dir, mock_url, "m", false);
    let (mut dirs, mut nodes) = crate::support::node::cluster(&db.url, 1, TOKEN, &[], mock).await;
    (dirs.remove(0), nodes.remove(0))
}

/// `GET /api/chat` on `node`: `field` of each of the chat's history events of type `kind`.
async fn chat_history(node: &Node, chat: &str, kind: &str, field: &str) -> Vec<String> {
    let (status, detail) = node.get(&format!("/api/chat?chatId={chat}")).await;
    assert_eq!(status, 200, "{detail}");
    let events = detail["data"]["events"].as_array().cloned().unwrap_or_default();
    events
        .iter()
        .filter(|e| e["type"] == kind)
        .map(|e| e[field].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Polls `path` on `node` (up to 5 s) until `done` holds for its body's `data`.
async fn until_data(node: &Node, path: &str, done: impl Fn(&Value) -> bool) -> Value {
    let mut data = Value::Null;
    for _ in 0..100 {
        data = node.get(path).await.1["data"].clone();
        if done(&data) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    data
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_run_on_one_node_is_listed_read_and_continued_on_another() {
    use boardsmith::llm::mock::{Match, MockLlm, Script, Step, Turn};
    let answer = |asked: &str, text: &str| Turn {
        when: Match { last_user_contains: Some(asked.into()), ..Match::default() },
        steps: vec![Step::Text { text: text.into(), chunk: None }],
        ..Turn::default()
    };
    let script =
        Script { turns: vec![answer("gold", "GOLD-ANSWER-ON-A"), answer("silver", "On B.")] };
    let mock = MockLlm::start(script, 0).await.unwrap();
    let db = TestDb::new().await;
    let (_a_dir, a) = node_with_model(&db, &mock.url()).await;
    let (_b_dir, b) = node_with_model(&db, &mock.url()).await;
    let query = |node: &Node, body: Value| {
        let sent = node.http.post(node.url("/api/query")).json(&body).send();
        async move { crate::support::sse_events(sent.await.unwrap()).await }
    };
    let first =
        query(&a, json!({"message": "tell me about gold", "agentKey": "demoModePlain"})).await;
    assert_eq!(first.last().unwrap().1, "run.complete", "{first:?}");
    let chat = first
        .iter()
        .find_map(|(_, t, d)| (t == "chat.start").then(|| d["chatId"].as_str().unwrap()))
        .unwrap()
        .to_owned();

    // B lists the chat (A stores the run as its stream ends) and reads its history.
    let listed = until_data(&b, "/api/chats", |d| {
        d.as_array().is_some_and(|l| l.iter().any(|c| c["chatId"] == json!(chat)))
    })
    .await;
    let entry = listed.as_array().unwrap().iter().find(|c| c["chatId"] == json!(chat));
    assert_eq!(entry.map(|c| &c["chatName"]), Some(&json!("tell me ab")), "{listed}");
    let said = chat_history(&b, &chat, "content.snapshot", "text").await;
    assert_eq!(said, ["GOLD-ANSWER-ON-A"]);

    // The next question, on B, continues the chat: the model gets A's run before it.
    let body = json!({"message": "and silver?", "agentKey": "demoModePlain", "chatId": chat});
    let second = query(&b, body).await;
    assert_eq!(second.last().unwrap().1, "run.complete", "{second:?}");
    let sent = mock.requests().last().unwrap().body["messages"].to_string();
    let at = |s: &str| sent.find(s).unwrap_or_else(|| panic!("`{s}` not sent: {sent}"));
    assert!(at("tell me about gold") < at("GOLD-ANSWER-ON-A"));
    assert!(at("GOLD-ANSWER-ON-A") < at("and silver?"));
    // Both runs are the chat's, read on A.
    let path = format!("/api/chat?chatId={chat}");
    let both = |d: &Value| {
        d["events"]
            .as_array()
            .is_some_and(|e| e.iter().filter(|e| e["type"] == "run.complete").count() == 2)
    };
    let detail = until_data(&a, &path, both).await;
    assert!(both(&detail), "{detail}");
}
