//! One owner for dashboard writes, from the outside: REST saves, reverts and agent `mutate`s
//! on one dashboard from many tasks at once, with WebSocket subscribers (three from the start,
//! three joining mid-way) applying every patch.
//! No acknowledged version is lost, versions only go up by one, every patch arrives on the
//! version its subscriber holds (no resync), and every subscriber ends on the store's state.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{self, TestApp, Ws, ws_next};

const ROUNDS: u64 = 30;
const SUBSCRIBERS: usize = 3;

fn panel(id: &str, code: &str) -> Value {
    json!({"id": id, "title": id, "type": "table", "renderer": "custom", "code": code})
}

/// What a subscriber saw by the time it held `target`.
struct Seen {
    state: Value,
    version: u64,
    patches: u64,
    /// The version of its snapshot.
    first: u64,
    /// Patches whose base was not the version held (each would force a resync).
    misses: Vec<String>,
}

/// Applies every patch to the snapshot until the held version is `target`'s value.
async fn follow(mut ws: Ws, snap: Value, mut target: tokio::sync::watch::Receiver<u64>) -> Seen {
    let mut seen = Seen {
        version: snap["version"].as_u64().unwrap(),
        first: snap["version"].as_u64().unwrap(),
        state: snap["state"].clone(),
        patches: 0,
        misses: Vec::new(),
    };
    loop {
        let goal = *target.borrow_and_update();
        if goal != 0 && seen.version == goal {
            return seen;
        }
        let m = tokio::select! {
            m = ws_next(&mut ws) => m,
            _ = target.changed() => continue,
        };
        match m["type"].as_str() {
            Some("dashboard.patch") => {
                let (base, version) = (m["baseVersion"].as_u64(), m["version"].as_u64());
                if base != Some(seen.version) || version != base.map(|b| b + 1) {
                    seen.misses.push(format!("held {}, got {base:?} → {version:?}", seen.version));
                }
                let ops: json_patch::Patch = serde_json::from_value(m["patch"].clone()).unwrap();
                json_patch::patch(&mut seen.state, &ops).unwrap();
                seen.version = version.unwrap();
                seen.patches += 1;
            }
            Some("dashboard.snapshot") => {
                seen.misses.push(format!("an unexpected snapshot at {}", seen.version));
                seen.state = m["state"].clone();
                seen.version = m["version"].as_u64().unwrap();
            }
            _ => {}
        }
    }
}

/// A person's edit: read the current version, change the title, save on it; on a 409 (someone
/// saved first) read again and retry. Returns the acknowledged version.
async fn rest_edit(app: &TestApp, id: &str, title: String) -> u64 {
    for _ in 0..200 {
        let (_, cur) = app.get(&format!("/api/dashboards/{id}")).await;
        let mut state = cur["data"]["state"].clone();
        state["title"] = json!(title);
        let base = cur["data"]["version"].as_u64().unwrap();
        let r = app
            .http
            .put(app.url(&format!("/api/dashboards/{id}")))
            .json(&json!({"baseVersion": base, "state": state}))
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        let body: Value = r.json().await.unwrap();
        match status {
            200 => return body["data"]["version"].as_u64().unwrap(),
            409 => assert_eq!(body["data"]["expected"], base, "{body}"),
            _ => panic!("edit: {status} {body}"),
        }
    }
    panic!("an edit lost 200 races in a row")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_never_lose_a_version_and_subscribers_never_resync() {
    let app =
        support::spawn_app_with(std::sync::Arc::new(tempfile::tempdir().unwrap()), false, |_| {})
            .await;
    let state = json!({"title": "race", "layout": {"columns": 2},
        "panels": [panel("a", "return [{v: 0}];"), panel("b", "return [{v: 1}];")]});
    let (status, body) = app.post("/api/dashboards", json!({"state": state})).await;
    assert_eq!(status, 201, "{body}");
    let id = body["data"]["id"].as_str().unwrap().to_owned();

    let (target_tx, target_rx) = tokio::sync::watch::channel(0u64);
    let mut followers = Vec::new();
    for _ in 0..SUBSCRIBERS {
        let (ws, snap) = app.subscribe(&id).await;
        followers.push(tokio::spawn(follow(ws, snap, target_rx.clone())));
    }

    let mut acked = Vec::new();
    let mut mutated = 0;
    for round in 0..ROUNDS {
        let edits = (0..3).map(|k| rest_edit(&app, &id, format!("rest {round}.{k}")));
        let revert = async {
            let (status, body) =
                app.post(&format!("/api/dashboards/{id}/revert"), json!({"version": 1})).await;
            assert_eq!(status, 200, "{body}");
            body["data"]["version"].as_u64()
        };
        let mutates = (0..3).map(|k| {
            let code = if k == 0 {
                format!(
                    "async (s) => {{ s.panels[0].code = 'return [{{v: {round}}}];'; return s; }}"
                )
            } else {
                format!("async (s) => {{ s.title = 'agent {round}.{k}'; return s; }}")
            };
            let app = &app;
            let id = &id;
            async move {
                let out = app.tool("mutate", json!({"code": code, "dashboard_id": id})).await;
                assert!(out["error"].is_null(), "{out}");
                !out["changes"].as_array().unwrap().is_empty()
            }
        });
        // Subscribers that join while writes are in flight: a snapshot read from the store
        // must never get ahead of the patches the others are waiting for.
        let joiner = async { if round % 10 == 5 { Some(app.subscribe(&id).await) } else { None } };
        let (edits, revert, mutates, joined) = tokio::join!(
            futures::future::join_all(edits),
            revert,
            futures::future::join_all(mutates),
            joiner
        );
        if let Some((ws, snap)) = joined {
            followers.push(tokio::spawn(follow(ws, snap, target_rx.clone())));
        }
        acked.extend(edits);
        acked.extend(revert);
        mutated += mutates.into_iter().filter(|changed| *changed).count();
    }

    // Every acknowledged version is in the history with its note, and every mutate that
    // changed something made exactly one version.
    let (_, latest) = app.get(&format!("/api/dashboards/{id}")).await;
    let last = latest["data"]["version"].as_u64().unwrap();
    let (_, versions) = app.get(&format!("/api/dashboards/{id}/versions")).await;
    let history = versions["data"].as_array().unwrap();
    let numbers: Vec<u64> = history.iter().map(|v| v["version"].as_u64().unwrap()).collect();
    assert_eq!(numbers, (1..=last).collect::<Vec<_>>(), "no gaps");
    let mut sorted = acked.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), acked.len(), "each acknowledged version is its own");
    for v in &acked {
        let note = history[*v as usize - 1]["note"].as_str().unwrap();
        assert!(note == "edited" || note == "revert to 1", "version {v}: {note}");
    }
    let notes = |n: &str| history.iter().filter(|v| v["note"] == n).count();
    assert_eq!(notes("mutate"), mutated);
    assert_eq!(notes("edited") + notes("revert to 1"), acked.len());
    assert_eq!(last as usize, 1 + acked.len() + mutated);

    // Every subscriber applied every patch on the version it held and ends on the store's.
    target_tx.send(last).unwrap();
    for f in followers {
        let seen = tokio::time::timeout(Duration::from_secs(30), f).await.unwrap().unwrap();
        assert_eq!(seen.misses, Vec::<String>::new());
        assert_eq!(seen.patches, last - seen.first);
        assert_eq!(seen.version, last);
        assert_eq!(seen.state, latest["data"]["state"]);
    }
    app.stop().await;
}
