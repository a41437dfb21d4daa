//! The durable store through its public API, on real files and a real PostgreSQL: round
//! trips, errors and optimistic concurrency on each engine; restart, group commit, drain on
//! shutdown and kill -9 durability of the embedded one.

use std::collections::{BTreeMap, BTreeSet};
use std::io::BufRead;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use boardsmith::dashboard::{DashboardState, Layout, Panel, PanelType, Renderer};
use boardsmith::store::{Author, Store, StoreError, StoreOptions, sample_state};
use serde_json::json;

fn panel(id: &str) -> Panel {
    Panel {
        id: id.to_owned(),
        title: format!("Panel {id}"),
        kind: PanelType::MetricCard,
        renderer: Renderer::Custom,
        code: format!("return {{ value: '{id}' }};"),
        indicators: None,
        config: None,
        data_source: None,
        layout: None,
        refresh: None,
    }
}

fn st(title: &str, panels: usize) -> DashboardState {
    DashboardState {
        title: title.to_owned(),
        layout: Layout { columns: 12, gap: Some(8) },
        panels: (0..panels).map(|i| panel(&format!("p{i}"))).collect(),
        variables: Vec::new(),
        refresh: None,
        alerts: Vec::new(),
    }
}

fn open(dir: &Path) -> Arc<Store> {
    Arc::new(Store::open(dir).unwrap())
}

/// Runs `test` on a fresh store of each engine: the embedded one in a temporary directory,
/// then PostgreSQL in a database of its own.
async fn on_each_engine<F, Fut>(test: F)
where
    F: Fn(Arc<Store>) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let dir = tempfile::tempdir().unwrap();
    eprintln!("engine: embedded");
    test(open(dir.path())).await;
    let db = crate::support::pg::TestDb::new().await;
    eprintln!("engine: postgres");
    test(Arc::new(Store::connect(&db.url, StoreOptions::default()).await.unwrap())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn round_trips() {
    on_each_engine(round_trips_on).await;
}

async fn round_trips_on(store: Arc<Store>) {
    assert!(store.is_empty().await.unwrap());
    assert!(store.list(true).await.unwrap().is_empty());

    let a = store.create(None, st("Alpha", 1), "create", &Author::system()).await.unwrap();
    assert!(a.id.starts_with("db_") && a.id.len() >= 29, "{}", a.id);
    assert_eq!((a.version, a.deleted), (1, false));
    assert_eq!(a.created_at, a.updated_at);
    assert!(!store.is_empty().await.unwrap());
    assert_eq!(store.get(&a.id).await.unwrap(), a);

    let a2 = store.save(&a.id, 1, st("Alpha 2", 2), "mutate", &Author::system()).await.unwrap();
    assert_eq!(a2.version, 2);
    assert_eq!(a2.created_at, a.created_at);
    assert_eq!(a2.state, st("Alpha 2", 2));
    let a3 = store.save(&a.id, 2, st("Alpha 3", 3), "execute", &Author::system()).await.unwrap();
    assert_eq!(store.get(&a.id).await.unwrap(), a3);
    assert_eq!(store.get_version(&a.id, 1).await.unwrap().state, st("Alpha", 1));
    assert_eq!(store.get_version(&a.id, 2).await.unwrap(), a2);

    let vs = store.versions(&a.id).await.unwrap();
    let summary: Vec<_> =
        vs.iter().map(|v| (v.version, v.title.as_str(), v.panels, v.note.as_str())).collect();
    assert_eq!(
        summary,
        vec![(1, "Alpha", 1, "create"), (2, "Alpha 2", 2, "mutate"), (3, "Alpha 3", 3, "execute")]
    );

    // Revert appends a version with the old state; history is kept.
    // Each version keeps its author; a revert is its reverter's.
    let ann = boardsmith::access::principal::Person {
        id: "u_ann".into(),
        username: "ann".into(),
        role: boardsmith::access::principal::Role::Editor,
    };
    let by_ann = Author::agent(&boardsmith::access::principal::Principal::User(ann), "chat_1");
    let r = store.revert(&a.id, 1, &by_ann).await.unwrap();
    assert_eq!((r.version, &r.state), (4, &st("Alpha", 1)));
    let vs = store.versions(&a.id).await.unwrap();
    assert_eq!(vs.len(), 4);
    assert_eq!(vs[3].note, "revert to 1");
    assert_eq!(vs[3].author.as_ref(), Some(&by_ann));
    assert_eq!(vs[0].author, Some(Author::system()));
    assert_eq!((vs[3].title.as_str(), vs[3].panels), ("Alpha", 1));
    assert_eq!(store.get_version(&a.id, 3).await.unwrap().state, st("Alpha 3", 3));

    // A second dashboard, created with an explicit id; list is newest first.
    tokio::time::sleep(Duration::from_millis(5)).await;
    let b = store
        .create(Some("db_explicit"), st("Beta", 4), "template", &Author::system())
        .await
        .unwrap();
    assert_eq!(b.id, "db_explicit");
    let list = store.list(false).await.unwrap();
    let ids: Vec<_> = list.iter().map(|i| i.id.as_str()).collect();
    assert_eq!(ids, vec!["db_explicit", a.id.as_str()]);
    assert_eq!((list[1].title.as_str(), list[1].version, list[1].panels), ("Alpha", 4, 1));
    assert_eq!(list[0].updated_at, b.updated_at);

    // Delete is soft: hidden from the default list, readable, not writable; restore undoes it.
    store.delete(&a.id).await.unwrap();
    store.delete(&a.id).await.unwrap(); // idempotent
    assert_eq!(store.list(false).await.unwrap().len(), 1);
    let all = store.list(true).await.unwrap();
    assert_eq!(all.len(), 2);
    assert!(all.iter().any(|i| i.id == a.id && i.deleted));
    let got = store.get(&a.id).await.unwrap();
    assert!(got.deleted);
    assert_eq!(got.version, 4);
    assert_eq!(
        store.save(&a.id, 4, st("x", 1), "mutate", &Author::system()).await,
        Err(StoreError::Deleted(a.id.clone()))
    );
    assert_eq!(
        store.revert(&a.id, 2, &Author::system()).await,
        Err(StoreError::Deleted(a.id.clone()))
    );
    assert_eq!(
        store.duplicate(&a.id, None, &Author::system()).await,
        Err(StoreError::Deleted(a.id.clone()))
    );
    assert_eq!(store.versions(&a.id).await.unwrap().len(), 4);
    let restored = store.restore(&a.id).await.unwrap();
    assert_eq!((restored.version, restored.deleted), (4, false));
    assert_eq!(restored.state, st("Alpha", 1));
    assert_eq!(store.list(false).await.unwrap().len(), 2);
    assert_eq!(
        store.save(&a.id, 4, st("Alpha 5", 5), "mutate", &Author::system()).await.unwrap().version,
        5
    );

    // Duplicate copies the current state into a new dashboard, optionally retitled.
    let d = store.duplicate(&b.id, Some("Beta copy".into()), &Author::system()).await.unwrap();
    assert_ne!(d.id, b.id);
    assert_eq!(d.version, 1);
    assert_eq!(d.state, DashboardState { title: "Beta copy".into(), ..st("Beta", 4) });
    assert_eq!(store.get(&d.id).await.unwrap(), d);
    let dv = store.versions(&d.id).await.unwrap();
    assert_eq!(
        (dv[0].title.as_str(), dv[0].note.as_str()),
        ("Beta copy", "duplicate of db_explicit")
    );
    let d2 = store.duplicate(&b.id, None, &Author::system()).await.unwrap();
    assert_eq!(d2.state, st("Beta", 4));
    assert_eq!(store.get(&b.id).await.unwrap(), b, "the source is untouched");

    // Sessions.
    assert_eq!(store.get_session("s1").await.unwrap(), None);
    store.put_session("s1", json!({"active": a.id, "created": [b.id]})).await.unwrap();
    store.put_session("s2", json!({"active": null})).await.unwrap();
    assert_eq!(
        store.get_session("s1").await.unwrap(),
        Some(json!({"active": a.id, "created": ["db_explicit"]}))
    );
    store.put_session("s1", json!({"active": d.id})).await.unwrap();
    assert_eq!(store.get_session("s1").await.unwrap(), Some(json!({"active": d.id})));
    assert_eq!(store.get_session("s2").await.unwrap(), Some(json!({"active": null})));
    store.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_name_what_is_wrong() {
    on_each_engine(errors_name_what_is_wrong_on).await;
}

async fn errors_name_what_is_wrong_on(store: Arc<Store>) {
    let nf = || StoreError::NotFound("db_nope".into());
    assert_eq!(store.get("db_nope").await, Err(nf()));
    assert_eq!(store.get_version("db_nope", 1).await, Err(nf()));
    assert_eq!(store.versions("db_nope").await, Err(nf()));
    assert_eq!(store.save("db_nope", 1, st("x", 1), "n", &Author::system()).await, Err(nf()));
    assert_eq!(store.revert("db_nope", 1, &Author::system()).await, Err(nf()));
    assert_eq!(store.delete("db_nope").await, Err(nf()));
    assert_eq!(store.restore("db_nope").await, Err(nf()));
    assert_eq!(store.duplicate("db_nope", None, &Author::system()).await, Err(nf()));
    let long = "x".repeat(10_000);
    assert_eq!(store.get(&long).await, Err(StoreError::NotFound(long.clone())));
    assert!(matches!(
        store.create(Some(&long), st("x", 1), "n", &Author::system()).await,
        Err(StoreError::Storage(m)) if m.contains("invalid dashboard id")
    ));

    let a = store.create(None, st("A", 1), "create", &Author::system()).await.unwrap();
    store.save(&a.id, 1, st("A", 2), "mutate", &Author::system()).await.unwrap();
    // Stale and future base versions are conflicts, and change nothing.
    assert_eq!(
        store.save(&a.id, 1, st("stale", 1), "mutate", &Author::system()).await,
        Err(StoreError::Conflict { expected: 1, actual: 2 })
    );
    assert_eq!(
        store.save(&a.id, 7, st("future", 1), "mutate", &Author::system()).await,
        Err(StoreError::Conflict { expected: 7, actual: 2 })
    );
    assert_eq!(store.get(&a.id).await.unwrap().state, st("A", 2));
    assert_eq!(store.versions(&a.id).await.unwrap().len(), 2);
    // An explicit id in use.
    assert_eq!(
        store.create(Some(&a.id), st("again", 1), "create", &Author::system()).await,
        Err(StoreError::Conflict { expected: 0, actual: 2 })
    );
    assert_eq!(
        store.get_version(&a.id, 3).await,
        Err(StoreError::VersionNotFound { id: a.id.clone(), version: 3 })
    );
    assert_eq!(
        store.get_version(&a.id, 0).await,
        Err(StoreError::VersionNotFound { id: a.id.clone(), version: 0 })
    );
    assert_eq!(
        store.revert(&a.id, 9, &Author::system()).await,
        Err(StoreError::VersionNotFound { id: a.id.clone(), version: 9 })
    );
    assert_eq!(store.versions(&a.id).await.unwrap().len(), 2);

    store.shutdown().await;
    store.shutdown().await; // idempotent
    assert_eq!(store.get(&a.id).await, Err(StoreError::Closed));
    assert_eq!(
        store.save(&a.id, 2, st("x", 1), "n", &Author::system()).await,
        Err(StoreError::Closed)
    );
    assert_eq!(
        store.create(None, st("x", 1), "n", &Author::system()).await,
        Err(StoreError::Closed)
    );
    assert_eq!(store.put_session("s", json!(1)).await, Err(StoreError::Closed));
    assert_eq!(store.list(true).await, Err(StoreError::Closed));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_keeps_everything() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let mut ids = Vec::new();
    for i in 0..5 {
        let r = store
            .create(None, st(&format!("D{i}"), i + 1), "create", &Author::system())
            .await
            .unwrap();
        for v in 1..=i as u64 {
            store
                .save(&r.id, v, st(&format!("D{i} v{}", v + 1), i + 2), "mutate", &Author::system())
                .await
                .unwrap();
        }
        ids.push(r.id);
    }
    store.revert(&ids[4], 2, &Author::system()).await.unwrap();
    store.delete(&ids[1]).await.unwrap();
    store.put_session("sess", json!({"active": ids[0], "n": 3})).await.unwrap();

    let mut before = Vec::new();
    for id in &ids {
        before.push((store.get(id).await.unwrap(), store.versions(id).await.unwrap()));
    }
    let list_before = store.list(true).await.unwrap();
    store.shutdown().await;

    let store = open(dir.path());
    for (id, (rec, vs)) in ids.iter().zip(&before) {
        assert_eq!(&store.get(id).await.unwrap(), rec);
        assert_eq!(&store.versions(id).await.unwrap(), vs);
        for v in vs {
            assert_eq!(store.get_version(id, v.version).await.unwrap().version, v.version);
        }
    }
    assert_eq!(store.list(true).await.unwrap(), list_before);
    assert_eq!(store.list(false).await.unwrap().len(), 4);
    assert_eq!(store.get_session("sess").await.unwrap(), Some(json!({"active": ids[0], "n": 3})));
    // Still writable after the restart, with versions continuing.
    assert_eq!(
        store.save(&ids[0], 1, st("after", 1), "mutate", &Author::system()).await.unwrap().version,
        2
    );
    store.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_without_shutdown_keeps_acknowledged_writes() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let a = store.create(None, st("kept", 2), "create", &Author::system()).await.unwrap();
    store.save(&a.id, 1, st("kept 2", 3), "mutate", &Author::system()).await.unwrap();
    drop(store);
    // The writer thread exits on its own once the handle is gone; the file lock goes with it.
    let deadline = Instant::now() + Duration::from_secs(10);
    let store = loop {
        match Store::open(dir.path()) {
            Ok(s) => break s,
            Err(e) if Instant::now() < deadline => {
                let _ = e;
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Err(e) => panic!("reopen: {e}"),
        }
    };
    let got = store.get(&a.id).await.unwrap();
    assert_eq!((got.version, got.state), (2, st("kept 2", 3)));
    store.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_saves_on_the_same_base_one_wins() {
    on_each_engine(fifty_saves_on_the_same_base_one_wins_on).await;
}

async fn fifty_saves_on_the_same_base_one_wins_on(store: Arc<Store>) {
    let a = store.create(None, st("race", 1), "create", &Author::system()).await.unwrap();
    let tasks: Vec<_> = (0..50)
        .map(|i| {
            let store = Arc::clone(&store);
            let id = a.id.clone();
            tokio::spawn(async move {
                store.save(&id, 1, st(&format!("w{i}"), 2), "race", &Author::system()).await
            })
        })
        .collect();
    let mut wins = Vec::new();
    let mut conflicts = 0;
    for t in tasks {
        match t.await.unwrap() {
            Ok(r) => wins.push(r),
            Err(StoreError::Conflict { expected: 1, actual: 2 }) => conflicts += 1,
            Err(e) => panic!("unexpected {e:?}"),
        }
    }
    assert_eq!((wins.len(), conflicts), (1, 49));
    let head = store.get(&a.id).await.unwrap();
    assert_eq!(head.version, 2);
    assert_eq!(head.state, wins[0].state);
    assert_eq!(store.versions(&a.id).await.unwrap().len(), 2);
    store.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_read_modify_write_loops_lose_nothing() {
    on_each_engine(fifty_read_modify_write_loops_lose_nothing_on).await;
}

async fn fifty_read_modify_write_loops_lose_nothing_on(store: Arc<Store>) {
    let a = store.create(None, st("rmw", 1), "create", &Author::system()).await.unwrap();
    let tasks: Vec<_> = (0..50)
        .map(|i| {
            let store = Arc::clone(&store);
            let id = a.id.clone();
            tokio::spawn(async move {
                let mut tries = 0;
                loop {
                    tries += 1;
                    let cur = store.get(&id).await.unwrap();
                    let mut state = cur.state;
                    state.panels[0]
                        .config
                        .get_or_insert_with(Default::default)
                        .insert(format!("item-{i}"), json!(i));
                    match store.save(&id, cur.version, state, "add item", &Author::system()).await {
                        Ok(_) => return tries,
                        Err(StoreError::Conflict { .. }) => continue,
                        Err(e) => panic!("unexpected {e:?}"),
                    }
                }
            })
        })
        .collect();
    let mut total_tries = 0;
    for t in tasks {
        total_tries += t.await.unwrap();
    }
    let head = store.get(&a.id).await.unwrap();
    assert_eq!(head.version, 51);
    let items: BTreeSet<String> =
        head.state.panels[0].config.as_ref().unwrap().keys().cloned().collect();
    let want: BTreeSet<String> = (0..50).map(|i| format!("item-{i}")).collect();
    assert_eq!(items, want);
    assert!(total_tries >= 50);
    store.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_commit_batches_concurrent_writes() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let mut ids = Vec::new();
    for i in 0..200 {
        ids.push(
            store
                .create(None, st(&format!("g{i}"), 1), "create", &Author::system())
                .await
                .unwrap()
                .id,
        );
    }
    let before = store.stats();
    let tasks: Vec<_> = ids
        .iter()
        .map(|id| {
            let store = Arc::clone(&store);
            let id = id.clone();
            tokio::spawn(async move {
                store.save(&id, 1, st(&id, 2), "mutate", &Author::system()).await
            })
        })
        .collect();
    for t in tasks {
        assert_eq!(t.await.unwrap().unwrap().version, 2);
    }
    let after = store.stats();
    let commits = after.commits - before.commits;
    assert_eq!(after.ops - before.ops, 200);
    assert!((1..50).contains(&commits), "200 concurrent saves took {commits} commits");
    assert!(after.largest_batch > 1, "{after:?}");
    for id in &ids {
        assert_eq!(store.get(id).await.unwrap().state, st(id, 2));
    }
    store.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_drains_queued_writes() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let mut ids = Vec::new();
    for i in 0..100 {
        ids.push(
            store
                .create(None, st(&format!("s{i}"), 1), "create", &Author::system())
                .await
                .unwrap()
                .id,
        );
    }
    let tasks: Vec<_> = ids
        .iter()
        .map(|id| {
            let store = Arc::clone(&store);
            let id = id.clone();
            tokio::spawn(async move {
                (id.clone(), store.save(&id, 1, st("drained", 3), "m", &Author::system()).await)
            })
        })
        .collect();
    tokio::task::yield_now().await;
    store.shutdown().await;
    let mut acked = Vec::new();
    for t in tasks {
        match t.await.unwrap() {
            (id, Ok(r)) => acked.push((id, r.version)),
            (_, Err(StoreError::Closed)) => {}
            (_, Err(e)) => panic!("unexpected {e:?}"),
        }
    }
    let store = open(dir.path());
    for (id, v) in &acked {
        let got = store.get(id).await.unwrap();
        assert_eq!((got.version, &got.state), (*v, &st("drained", 3)));
    }
    store.shutdown().await;
}

const KILL9_DIR: &str = "BOARDSMITH_KILL9_DIR";
const KILL9_BYTES: usize = 6_000;

/// The writer half of `kill9_acked_writes_survive`: does nothing unless `BOARDSMITH_KILL9_DIR`
/// is set. Writes until killed, printing `acked <id> <version>` after each acknowledged write.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill9_child() {
    let Some(dir) = std::env::var_os(KILL9_DIR) else { return };
    let store = open(Path::new(&dir));
    let stop = Instant::now() + Duration::from_secs(60); // in case the parent is gone
    let tasks: Vec<_> = (0..6)
        .map(|task| {
            let store = Arc::clone(&store);
            tokio::spawn(async move {
                let mut n = 0;
                while Instant::now() < stop {
                    let id = format!("k9-{task}-{n}");
                    n += 1;
                    store
                        .create(
                            Some(&id),
                            sample_state(&id, 1, KILL9_BYTES),
                            "k9",
                            &Author::system(),
                        )
                        .await
                        .unwrap();
                    ack(&id, 1);
                    for v in 2..=4 {
                        let state = sample_state(&id, v, KILL9_BYTES);
                        store.save(&id, v - 1, state, "k9", &Author::system()).await.unwrap();
                        ack(&id, v);
                    }
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
}

fn ack(id: &str, version: u64) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    writeln!(out, "acked {id} {version}").unwrap();
    out.flush().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill9_acked_writes_survive() {
    let exe = std::env::current_exe().unwrap();
    let mut total_acked = 0;
    for trial in 0..12 {
        let dir = tempfile::tempdir().unwrap();
        let mut child = Command::new(&exe)
            .args(["--exact", "store::kill9_child", "--nocapture", "--test-threads=1"])
            .env(KILL9_DIR, dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel::<(String, u64)>();
        let reader = std::thread::spawn(move || {
            let mut r = std::io::BufReader::new(stdout);
            let mut line = String::new();
            loop {
                line.clear();
                match r.read_line(&mut line) {
                    Ok(0) | Err(_) => break,
                    // Only complete lines count: a torn last line was never fully acknowledged.
                    Ok(_) if line.ends_with('\n') => {
                        let mut parts = line.split_whitespace();
                        if parts.next() == Some("acked") {
                            let id = parts.next().unwrap().to_owned();
                            let v = parts.next().unwrap().parse().unwrap();
                            if tx.send((id, v)).is_err() {
                                break;
                            }
                        }
                    }
                    Ok(_) => break,
                }
            }
        });
        // Kill at a random moment after the child is writing.
        let first = rx.recv_timeout(Duration::from_secs(60)).expect("the child never acked");
        let delay = rand::random_range(20..=200);
        std::thread::sleep(Duration::from_millis(delay));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        reader.join().unwrap();
        let mut acked: BTreeMap<String, u64> = BTreeMap::new();
        for (id, v) in std::iter::once(first).chain(rx.try_iter()) {
            let e = acked.entry(id).or_default();
            *e = (*e).max(v);
        }
        let n: u64 = acked.values().sum();
        total_acked += n;

        let store = open(dir.path());
        for (id, &max) in &acked {
            let head = store.get(id).await.unwrap_or_else(|e| panic!("trial {trial}: {id}: {e}"));
            assert!(head.version >= max, "trial {trial}: {id} at {} < acked {max}", head.version);
            for v in 1..=max {
                let got = store
                    .get_version(id, v)
                    .await
                    .unwrap_or_else(|e| panic!("trial {trial}: {id} v{v}: {e}"));
                assert_eq!(got.state, sample_state(id, v, KILL9_BYTES), "trial {trial}: {id} v{v}");
            }
        }
        // Whatever else is there (written but not yet acked at the kill) is intact too.
        for item in store.list(true).await.unwrap() {
            let got = store.get(&item.id).await.unwrap();
            assert_eq!(got.state, sample_state(&item.id, got.version, KILL9_BYTES));
        }
        eprintln!("kill9 trial {trial}: killed after {delay} ms, {n} acked writes verified");
        store.shutdown().await;
    }
    assert!(total_acked > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refresh_lease_has_one_holder_until_it_lapses() {
    let db = crate::support::pg::TestDb::new().await;
    let a = Store::connect(&db.url, StoreOptions::default()).await.unwrap();
    let b = Store::connect(&db.url, StoreOptions::default()).await.unwrap();
    assert_ne!(a.node_id(), b.node_id());
    let ids = vec!["db_1".to_owned(), "db_2".to_owned()];
    let ttl = Duration::from_millis(400);
    assert_eq!(a.claim_refresh(&ids[..1], ttl).await.unwrap(), vec!["db_1"]);
    // B gets only the free one; A renews its own.
    assert_eq!(b.claim_refresh(&ids, ttl).await.unwrap(), vec!["db_2"]);
    assert_eq!(a.claim_refresh(&ids, ttl).await.unwrap(), vec!["db_1"]);
    // A stops renewing: once the lease lapses, B takes it.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut taken = b.claim_refresh(&ids, ttl).await.unwrap();
    taken.sort();
    assert_eq!(taken, ids);
    // Shared results: the latest per panel, with its version.
    assert_eq!(b.panel_result("db_1", "p0").await.unwrap(), None);
    a.put_panel_result("db_1", "p0", 3, "{\"x\":1}").await.unwrap();
    a.put_panel_result("db_1", "p0", 4, "{\"x\":2}").await.unwrap();
    assert_eq!(b.panel_result("db_1", "p0").await.unwrap(), Some((4, "{\"x\":2}".to_owned())));
    a.shutdown().await;
    b.shutdown().await;
}

#[tokio::test]
async fn tls_to_postgres_encrypts_and_a_given_ca_is_enforced_with_the_host_name() {
    use boardsmith::store::SharedOptions;
    let db = crate::support::pg::TestDb::new().await;
    let (admin, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(conn);
    let show = |what: &'static str| {
        let admin = &admin;
        async move { admin.query_one(what, &[]).await.unwrap().get::<_, String>(0) }
    };
    assert_eq!(show("SHOW ssl").await, "on", "the test server must offer TLS");
    // Debian's server certificate (snakeoil): self-signed, for the name `localhost`.
    let cert = std::path::PathBuf::from(show("SHOW ssl_cert_file").await);
    let name = db.url.rsplit('/').next().unwrap().to_owned();
    let url = |host: &str, app: &str| {
        format!("postgres://postgres@{host}:5432/{name}?sslmode=require&application_name={app}")
    };
    let encrypted = |app: &'static str| {
        let admin = &admin;
        async move {
            let sql = "SELECT bool_and(s.ssl) FROM pg_stat_ssl s JOIN pg_stat_activity a \
                       USING (pid) WHERE a.application_name = $1";
            admin.query_one(sql, &[&app]).await.unwrap().get::<_, Option<bool>>(0)
        }
    };
    let shared = |ca: Option<&std::path::Path>| SharedOptions {
        database_ca: ca.map(std::path::Path::to_path_buf),
        ..SharedOptions::default()
    };

    // `sslmode=require` without a CA: encrypted (libpq's meaning), not authenticated.
    let store =
        Store::connect_with(&url("127.0.0.1", "bs-tls-a"), StoreOptions::default(), &shared(None))
            .await
            .unwrap();
    store.ping().await.unwrap();
    assert_eq!(encrypted("bs-tls-a").await, Some(true));
    // With the CA that signed the server's certificate and its name: verified and encrypted.
    let verified = Store::connect_with(
        &url("localhost", "bs-tls-b"),
        StoreOptions::default(),
        &shared(Some(&cert)),
    )
    .await
    .unwrap();
    verified.ping().await.unwrap();
    assert_eq!(encrypted("bs-tls-b").await, Some(true));
    // A CA that did not sign it, or a host name the certificate does not name: refused.
    for (host, ca) in [
        ("localhost", std::path::Path::new("/etc/ssl/certs/ca-certificates.crt")),
        ("127.0.0.1", cert.as_path()),
    ] {
        let refused =
            Store::connect_with(&url(host, "bs-tls-c"), StoreOptions::default(), &shared(Some(ca)))
                .await
                .unwrap_err()
                .to_string();
        assert!(refused.contains("certificate"), "{host}: {refused}");
    }
    let missing = Store::connect_with(
        &url("localhost", "bs-tls-d"),
        StoreOptions::default(),
        &shared(Some(std::path::Path::new("/nonexistent/ca.pem"))),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(missing.contains("BOARDSMITH_DATABASE_CA"), "{missing}");
    store.shutdown().await;
    verified.shutdown().await;
}
