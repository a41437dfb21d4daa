//! Unit tests that need the table layout: corrupt values are errors, never panics.

use crate::test_db::TestDb;
use redb::{Database, ReadableDatabase, ReadableTable};

use super::keys::{self, VERSIONS, VersionHeader, encode_version, version_key};
use super::*;

fn state(title: &str) -> DashboardState {
    sample_state(title, 1, 500)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupt_values_are_damage_errors_naming_the_record() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let a = store.create(Some("db_a"), state("A"), "create", &Author::system()).await.unwrap();
    store.save(&a.id, 1, state("A2"), "mutate", &Author::system()).await.unwrap();
    store.create(Some("db_b"), state("B"), "create", &Author::system()).await.unwrap();
    store.put_session("s", serde_json::json!({"x": 1})).await.unwrap();
    store.shutdown().await;

    {
        let db = Database::create(dir.path().join(FILE_NAME)).unwrap();
        let txn = db.begin_write().unwrap();
        {
            let mut v = txn.open_table(VERSIONS).unwrap();
            // Valid header, broken JSON.
            let vh = VersionHeader { created_at: 1, panels: 1, title: "A", note: "x", author: "" };
            v.insert(
                version_key("db_a", 1).as_slice(),
                encode_version(&vh, b"{\"title\":").as_slice(),
            )
            .unwrap();
            // Truncated header.
            v.insert(version_key("db_a", 2).as_slice(), [1u8, 0, 0].as_slice()).unwrap();
            let mut h = txn.open_table(keys::DASHBOARDS).unwrap();
            h.insert("db_b", [7u8, 7].as_slice()).unwrap();
            let mut s = txn.open_table(keys::SESSIONS).unwrap();
            s.insert("s", b"not json".as_slice()).unwrap();
        }
        txn.commit().unwrap();
        let r = db.begin_read().unwrap();
        drop(r);
    }

    let store = Store::open(dir.path()).unwrap();
    let err = store.get_version("db_a", 1).await.unwrap_err();
    assert!(
        matches!(&err, StoreError::Damaged(m) if m.contains("db_a") && m.contains("version 1") && m.contains("corrupt state JSON")),
        "{err:?}"
    );
    let err = store.get("db_a").await.unwrap_err();
    assert!(
        matches!(&err, StoreError::Damaged(m) if m.contains("db_a") && m.contains("version 2")),
        "{err:?}"
    );
    assert!(matches!(store.versions("db_a").await, Err(StoreError::Damaged(_))));
    assert!(
        matches!(store.revert("db_a", 1, &Author::system()).await, Err(StoreError::Damaged(_)))
            || store.revert("db_a", 1, &Author::system()).await.is_ok()
    );
    let err = store.get("db_b").await.unwrap_err();
    assert!(
        matches!(&err, StoreError::Damaged(m) if m.contains("db_b") && m.contains("corrupt head")),
        "{err:?}"
    );
    assert!(
        matches!(store.get_session("s").await, Err(StoreError::Damaged(m)) if m.contains("session `s`"))
    );
    // An op hitting a corrupt record fails alone; the rest of its batch commits.
    let by = Author::system();
    let (bad, good) = tokio::join!(
        store.save("db_b", 1, state("B2"), "m", &by),
        store.create(None, state("C"), "create", &by)
    );
    assert!(matches!(bad, Err(StoreError::Damaged(m)) if m.contains("db_b")));
    let c = good.unwrap();
    assert_eq!(store.get(&c.id).await.unwrap().state, state("C"));
    assert_eq!(store.stats().failed_batches, 0);
    store.shutdown().await;
}

/// What the tables really hold: the bytes of every version and session value.
fn recount(dir: &std::path::Path) -> u64 {
    use redb::ReadableTable;
    let db = Database::create(dir.join(FILE_NAME)).unwrap();
    let txn = db.begin_read().unwrap();
    let versions = txn.open_table(VERSIONS).unwrap();
    let sessions = txn.open_table(keys::SESSIONS).unwrap();
    let v: u64 = versions.iter().unwrap().map(|i| i.unwrap().1.value().len() as u64).sum();
    let s: u64 = sessions.iter().unwrap().map(|i| i.unwrap().1.value().len() as u64).sum();
    v + s
}

fn open_with_quotas(dir: &std::path::Path, quotas: StoreQuotas) -> Store {
    Store::open_with(dir, StoreOptions { quotas, ..StoreOptions::default() }).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn versions_past_the_quota_are_dropped_oldest_first_and_their_bytes_freed() {
    let dir = tempfile::tempdir().unwrap();
    let quotas = StoreQuotas { versions_kept: 3, ..StoreQuotas::default() };
    let store = open_with_quotas(dir.path(), quotas);
    let a = store.create(Some("db_a"), state("A1"), "create", &Author::system()).await.unwrap();
    // A second dashboard whose history must not be touched.
    store.create(Some("db_b"), state("B1"), "create", &Author::system()).await.unwrap();
    for v in 1..6 {
        store
            .save(&a.id, v, state(&format!("A{}", v + 1)), "mutate", &Author::system())
            .await
            .unwrap();
    }
    let kept: Vec<u64> = store.versions("db_a").await.unwrap().iter().map(|v| v.version).collect();
    assert_eq!(kept, [4, 5, 6]);
    assert_eq!(store.get("db_a").await.unwrap().state.title, "A6");
    assert_eq!(
        store.get_version("db_a", 3).await.unwrap_err(),
        StoreError::VersionNotFound { id: "db_a".into(), version: 3 }
    );
    assert!(matches!(
        store.revert("db_a", 1, &Author::system()).await,
        Err(StoreError::VersionNotFound { .. })
    ));
    store.revert("db_a", 4, &Author::system()).await.unwrap();
    let kept: Vec<u64> = store.versions("db_a").await.unwrap().iter().map(|v| v.version).collect();
    assert_eq!(kept, [5, 6, 7]);
    assert_eq!(store.versions("db_b").await.unwrap().len(), 1);
    let counted = store.stats().stored_bytes;
    store.shutdown().await;
    assert_eq!(counted, recount(dir.path()), "the count follows drops exactly");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_state_over_the_size_quota_is_refused_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let small = state("small");
    let limit = serde_json::to_vec(&small).unwrap().len() as u64;
    let quotas = StoreQuotas { max_state_bytes: limit, ..StoreQuotas::default() };
    let store = open_with_quotas(dir.path(), quotas);
    let big = sample_state("big", 12, 2_000);
    let big_len = serde_json::to_vec(&big).unwrap().len() as u64;
    assert!(big_len > limit);
    let err =
        store.create(Some("db_big"), big.clone(), "create", &Author::system()).await.unwrap_err();
    assert_eq!(err, StoreError::TooLarge { bytes: big_len, limit });
    assert!(err.to_string().contains("BOARDSMITH_MAX_STATE_BYTES"), "{err}");
    assert!(matches!(store.get("db_big").await, Err(StoreError::NotFound(_))));
    let a = store.create(Some("db_a"), small, "create", &Author::system()).await.unwrap();
    assert!(matches!(
        store.save(&a.id, 1, big, "mutate", &Author::system()).await,
        Err(StoreError::TooLarge { .. })
    ));
    assert_eq!(store.get("db_a").await.unwrap().version, 1);
    store.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_store_refuses_growth_until_a_purge_frees_room_and_the_count_survives_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let one = serde_json::to_vec(&state("D")).unwrap().len() as u64;
    // Room for about five versions.
    let quotas = StoreQuotas { max_store_bytes: one * 5 + one / 2, ..StoreQuotas::default() };
    let store = open_with_quotas(dir.path(), quotas);
    let mut made = Vec::new();
    let full = loop {
        match store.create(None, state("D"), "create", &Author::system()).await {
            Ok(r) => made.push(r.id),
            Err(e) => break e,
        }
        assert!(made.len() < 10, "the quota never stopped growth");
    };
    let StoreError::Full { used, needed, limit } = full.clone() else { panic!("{full:?}") };
    assert_eq!(limit, quotas.max_store_bytes);
    assert!(used <= limit && used + needed > limit, "{full}");
    assert!(full.to_string().contains("purge=true"), "{full}");
    assert_eq!(store.stats().stored_bytes, used);
    // Saves that grow are refused too; sessions as well; nothing half-written.
    assert!(matches!(
        store.save(&made[0], 1, state("D2"), "m", &Author::system()).await,
        Err(StoreError::Full { .. })
    ));
    assert_eq!(store.get(&made[0]).await.unwrap().version, 1);
    // A soft delete frees nothing; a purge needs the delete first, then frees the room.
    assert_eq!(store.purge(&made[0]).await.unwrap_err(), StoreError::NotDeleted(made[0].clone()));
    store.delete(&made[0]).await.unwrap();
    store.purge(&made[0]).await.unwrap();
    assert!(matches!(store.get(&made[0]).await, Err(StoreError::NotFound(_))));
    assert!(store.versions(&made[0]).await.is_err());
    assert!(store.stats().stored_bytes < used);
    store.create(None, state("D"), "create", &Author::system()).await.unwrap();
    let counted = store.stats().stored_bytes;
    store.shutdown().await;
    assert_eq!(counted, recount(dir.path()));

    // Reopened: the count is read back; without it (a store from before the quotas) it is
    // counted from the tables.
    let store = open_with_quotas(dir.path(), quotas);
    assert_eq!(store.stats().stored_bytes, counted);
    store.shutdown().await;
    {
        let db = Database::create(dir.path().join(FILE_NAME)).unwrap();
        let txn = db.begin_write().unwrap();
        txn.open_table(keys::META).unwrap().remove(writer::STORED_BYTES_KEY).unwrap();
        txn.commit().unwrap();
    }
    let store = open_with_quotas(dir.path(), quotas);
    assert_eq!(store.stats().stored_bytes, counted);
    assert!(matches!(
        store.create(None, state("D"), "c", &Author::system()).await,
        Err(StoreError::Full { .. })
    ));
    store.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_byte_changed_on_disk_is_reported_even_when_the_json_stays_valid() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let mut s = state("A");
    s.layout.columns = 3;
    store.create(Some("db_a"), s, "create", &Author::system()).await.unwrap();
    store.save("db_a", 1, state("A2"), "mutate", &Author::system()).await.unwrap();
    store.shutdown().await;
    {
        // `"columns":3` becomes `"columns":4`: still a valid state.
        let db = Database::create(dir.path().join(FILE_NAME)).unwrap();
        let txn = db.begin_write().unwrap();
        {
            let mut v = txn.open_table(VERSIONS).unwrap();
            let key = version_key("db_a", 1);
            let mut bytes = v.get(key.as_slice()).unwrap().unwrap().value().to_vec();
            let at = bytes.windows(11).position(|w| w == b"\"columns\":3").unwrap() + 10;
            bytes[at] = b'4';
            v.insert(key.as_slice(), bytes.as_slice()).unwrap();
        }
        txn.commit().unwrap();
    }
    let store = Store::open(dir.path()).unwrap();
    let err = store.get_version("db_a", 1).await.unwrap_err();
    assert!(
        matches!(&err, StoreError::Damaged(m) if m.contains("db_a") && m.contains("version 1") && m.contains("checksum mismatch")),
        "{err:?}"
    );
    assert!(matches!(
        store.revert("db_a", 1, &Author::system()).await,
        Err(StoreError::Damaged(_))
    ));
    // The undamaged head still reads.
    assert_eq!(store.get("db_a").await.unwrap().state.title, "A2");
    store.shutdown().await;
}

/// Runs `test` on a fresh store of each engine opened with `options`: the embedded one in a
/// temporary directory, then PostgreSQL in a database of its own.
async fn on_each_engine<F, Fut>(options: StoreOptions, test: F)
where
    F: Fn(std::sync::Arc<Store>) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let dir = tempfile::tempdir().unwrap();
    eprintln!("engine: embedded");
    let store = std::sync::Arc::new(Store::open_with(dir.path(), options).unwrap());
    test(store.clone()).await;
    store.shutdown().await;
    let db = TestDb::new().await;
    eprintln!("engine: postgres");
    let store = std::sync::Arc::new(Store::connect(&db.url, options).await.unwrap());
    test(store.clone()).await;
    store.shutdown().await;
}

/// A run's JSON text of exactly `len` bytes, told apart by `tag`.
fn run_of(tag: &str, len: usize) -> String {
    let bare = format!("{{\"v\":\"{tag}\"}}");
    assert!(len >= bare.len(), "{len} bytes cannot hold {bare}");
    let text = format!("{{\"v\":\"{tag}{}\"}}", ".".repeat(len - bare.len()));
    assert_eq!(text.len(), len);
    text
}

/// Which of `fingerprints` of (dashboard, panel) have a kept result.
async fn kept(store: &Store, dashboard: &str, panel: &str, fingerprints: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for f in fingerprints {
        if store.last_good(dashboard, panel, f).await.unwrap().is_some() {
            out.push((*f).to_owned());
        }
    }
    out
}

/// On the embedded store, the count of last good bytes is `expected`; PostgreSQL keeps none.
fn assert_last_good_count(store: &Store, expected: u64) {
    if !store.is_shared() {
        assert_eq!(store.stats().last_good_bytes, expected);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn last_good_round_trips_by_dashboard_panel_and_fingerprint() {
    on_each_engine(StoreOptions::default(), |store| async move {
        store.create(Some("db_a"), state("A"), "create", &Author::system()).await.unwrap();
        store.create(Some("db_b"), state("B"), "create", &Author::system()).await.unwrap();
        assert_eq!(store.last_good("db_a", "p1", "ab12").await.unwrap(), None);
        let run = r#"{"value":42,"rows":[{"x":"☃"}]}"#;
        store.put_last_good("db_a", "p1", "ab12", run, 1_700_000_000_123).await.unwrap();
        assert_eq!(
            store.last_good("db_a", "p1", "ab12").await.unwrap(),
            Some((run.to_owned(), 1_700_000_000_123))
        );
        // Another fingerprint, panel or dashboard is another key.
        assert_eq!(store.last_good("db_a", "p1", "ab13").await.unwrap(), None);
        assert_eq!(store.last_good("db_a", "p2", "ab12").await.unwrap(), None);
        assert_eq!(store.last_good("db_b", "p1", "ab12").await.unwrap(), None);
        assert_last_good_count(&store, run.len() as u64);
        // Nothing is kept for a dashboard the store does not hold.
        store.put_last_good("db_none", "p1", "ab12", run, 5).await.unwrap();
        assert_eq!(store.last_good("db_none", "p1", "ab12").await.unwrap(), None);
        assert_last_good_count(&store, run.len() as u64);
        // Keys that cannot be stored: refused on put, absent on read.
        let long = "f".repeat(257);
        for (d, p, f) in [("db_a", "", "ab"), ("db_a", "p1", ""), ("db_a", "p1", long.as_str())] {
            let err = store.put_last_good(d, p, f, run, 1).await.unwrap_err();
            assert!(matches!(&err, StoreError::Storage(m) if m.contains("invalid")), "{err:?}");
            assert_eq!(store.last_good(d, p, f).await.unwrap(), None);
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newer_last_good_replaces_the_kept_one_and_an_older_one_is_ignored() {
    on_each_engine(StoreOptions::default(), |store| async move {
        store.create(Some("db_a"), state("A"), "create", &Author::system()).await.unwrap();
        store.put_last_good("db_a", "p", "f", r#"{"v":1}"#, 100).await.unwrap();
        store.put_last_good("db_a", "p", "f", r#"{"v":22}"#, 200).await.unwrap();
        let now = store.last_good("db_a", "p", "f").await.unwrap();
        assert_eq!(now, Some((r#"{"v":22}"#.to_owned(), 200)));
        // A node that finished earlier writes late: ignored.
        store.put_last_good("db_a", "p", "f", r#"{"v":3}"#, 150).await.unwrap();
        assert_eq!(store.last_good("db_a", "p", "f").await.unwrap(), now);
        assert_last_good_count(&store, 8);
        // The same time: the later put wins.
        store.put_last_good("db_a", "p", "f", r#"{"v":4444}"#, 200).await.unwrap();
        let now = store.last_good("db_a", "p", "f").await.unwrap();
        assert_eq!(now, Some((r#"{"v":4444}"#.to_owned(), 200)));
        assert_last_good_count(&store, 10);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_last_good_result_over_the_entry_bound_is_not_kept_and_the_older_one_stays() {
    let options = StoreOptions { last_good_entry_bytes: 20, ..StoreOptions::default() };
    on_each_engine(options, |store| async move {
        store.create(Some("db_a"), state("A"), "create", &Author::system()).await.unwrap();
        let fits = run_of("old", 20);
        store.put_last_good("db_a", "p", "f", &fits, 10).await.unwrap();
        assert_eq!(store.last_good("db_a", "p", "f").await.unwrap(), Some((fits.clone(), 10)));
        // One byte more, and newer: Ok, not kept, the older entry stays.
        store.put_last_good("db_a", "p", "f", &run_of("new", 21), 20).await.unwrap();
        assert_eq!(store.last_good("db_a", "p", "f").await.unwrap(), Some((fits, 10)));
        store.put_last_good("db_a", "p", "g", &run_of("new", 21), 20).await.unwrap();
        assert_eq!(store.last_good("db_a", "p", "g").await.unwrap(), None);
        assert_last_good_count(&store, 20);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifth_fingerprint_of_a_panel_drops_its_oldest() {
    on_each_engine(StoreOptions::default(), |store| async move {
        store.create(Some("db_a"), state("A"), "create", &Author::system()).await.unwrap();
        let all = ["f1", "f2", "f3", "f4", "f5", "f6"];
        // Put out of time order: the oldest by `at` goes, not the first put.
        for (f, at) in [("f2", 20), ("f1", 10), ("f4", 40), ("f3", 30)] {
            store.put_last_good("db_a", "p1", f, &run_of(f, 10), at).await.unwrap();
        }
        // Another panel's entry, older than all of them, is not this panel's to drop.
        store.put_last_good("db_a", "p2", "f0", &run_of("f0", 10), 1).await.unwrap();
        assert_eq!(kept(&store, "db_a", "p1", &all).await, ["f1", "f2", "f3", "f4"]);
        store.put_last_good("db_a", "p1", "f5", &run_of("f5", 10), 50).await.unwrap();
        assert_eq!(kept(&store, "db_a", "p1", &all).await, ["f2", "f3", "f4", "f5"]);
        assert_eq!(kept(&store, "db_a", "p2", &["f0"]).await, ["f0"]);
        // A fifth older than the other four is itself the oldest.
        store.put_last_good("db_a", "p1", "f6", &run_of("f6", 10), 5).await.unwrap();
        assert_eq!(kept(&store, "db_a", "p1", &all).await, ["f2", "f3", "f4", "f5"]);
        // Replacing one of the four drops nothing.
        store.put_last_good("db_a", "p1", "f2", &run_of("f2", 10), 60).await.unwrap();
        assert_eq!(kept(&store, "db_a", "p1", &all).await, ["f2", "f3", "f4", "f5"]);
        assert_last_good_count(&store, 50);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_last_good_budget_the_oldest_entries_go_first_until_the_rest_fit() {
    let options = StoreOptions { last_good_bytes: 100, ..StoreOptions::default() };
    on_each_engine(options, |store| async move {
        for id in ["db_a", "db_b", "db_c"] {
            store.create(Some(id), state(id), "create", &Author::system()).await.unwrap();
        }
        // (dashboard, panel, fingerprint) by letter.
        let key = |k: &str| match k {
            "A" => ("db_a", "p1", "a"),
            "B" => ("db_b", "p1", "b"),
            "C" => ("db_a", "p2", "c"),
            "D" => ("db_c", "p1", "d"),
            _ => ("db_b", "p9", "e"),
        };
        let present = |store: std::sync::Arc<Store>| async move {
            let mut out = String::new();
            for k in ["A", "B", "C", "D", "E"] {
                let (d, p, f) = key(k);
                if store.last_good(d, p, f).await.unwrap().is_some() {
                    out.push_str(k);
                }
            }
            out
        };
        let put = |store: std::sync::Arc<Store>, k: &'static str, len: usize, at: i64| async move {
            let (d, p, f) = key(k);
            store.put_last_good(d, p, f, &run_of(k, len), at).await.unwrap();
        };
        put(store.clone(), "A", 30, 300).await;
        put(store.clone(), "B", 30, 100).await;
        put(store.clone(), "C", 30, 200).await;
        assert_eq!(present(store.clone()).await, "ABC");
        assert_last_good_count(&store, 90);
        // 120 bytes: the oldest (B) goes.
        put(store.clone(), "D", 30, 400).await;
        assert_eq!(present(store.clone()).await, "ACD");
        assert_last_good_count(&store, 90);
        // 140: C (200) goes, still 110: A (300) goes; 80 fit, so D stays.
        put(store.clone(), "E", 50, 500).await;
        assert_eq!(present(store.clone()).await, "DE");
        assert_last_good_count(&store, 80);
        // A replacement counts its new size only: 50 + 60 = 110, so E (500) goes.
        put(store.clone(), "D", 60, 600).await;
        assert_eq!(present(store.clone()).await, "D");
        let (d, p, f) = key("D");
        assert_eq!(store.last_good(d, p, f).await.unwrap(), Some((run_of("D", 60), 600)));
        assert_last_good_count(&store, 60);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn purging_a_dashboard_removes_its_last_good_results() {
    on_each_engine(StoreOptions::default(), |store| async move {
        store.create(Some("db_a"), state("A"), "create", &Author::system()).await.unwrap();
        store.create(Some("db_b"), state("B"), "create", &Author::system()).await.unwrap();
        store.put_last_good("db_a", "p1", "f", r#"{"v":1}"#, 1).await.unwrap();
        store.put_last_good("db_a", "p2", "f", r#"{"v":2}"#, 2).await.unwrap();
        store.put_last_good("db_b", "p1", "f", r#"{"v":3}"#, 3).await.unwrap();
        // A soft delete keeps them (a restore brings the dashboard back as it was).
        store.delete("db_a").await.unwrap();
        assert!(store.last_good("db_a", "p1", "f").await.unwrap().is_some());
        store.purge("db_a").await.unwrap();
        assert_eq!(store.last_good("db_a", "p1", "f").await.unwrap(), None);
        assert_eq!(store.last_good("db_a", "p2", "f").await.unwrap(), None);
        assert_eq!(
            store.last_good("db_b", "p1", "f").await.unwrap(),
            Some((r#"{"v":3}"#.to_owned(), 3))
        );
        assert_last_good_count(&store, 7);
        // A refresh finishing after the purge keeps nothing, and a new dashboard with the same
        // id starts without the old results.
        store.put_last_good("db_a", "p1", "f", r#"{"v":4}"#, 4).await.unwrap();
        store.create(Some("db_a"), state("A"), "create", &Author::system()).await.unwrap();
        assert_eq!(store.last_good("db_a", "p1", "f").await.unwrap(), None);
        assert_eq!(store.last_good("db_a", "p2", "f").await.unwrap(), None);
        assert_last_good_count(&store, 7);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn last_good_results_survive_reopening_and_their_count_is_read_back() {
    let options = StoreOptions { last_good_bytes: 100, ..StoreOptions::default() };
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_with(dir.path(), options).unwrap();
    store.create(Some("db_a"), state("A"), "create", &Author::system()).await.unwrap();
    for (f, at) in [("f1", 10), ("f2", 20), ("f3", 30)] {
        store.put_last_good("db_a", "p", f, &run_of(f, 30), at).await.unwrap();
    }
    assert_eq!(store.stats().last_good_bytes, 90);
    store.shutdown().await;

    let store = Store::open_with(dir.path(), options).unwrap();
    assert_eq!(store.last_good("db_a", "p", "f2").await.unwrap(), Some((run_of("f2", 30), 20)));
    assert_eq!(store.stats().last_good_bytes, 90, "counted again on open");
    // The budget goes on from the count: 120 bytes, so the oldest goes.
    store.put_last_good("db_a", "q", "g", &run_of("g", 30), 40).await.unwrap();
    assert_eq!(kept(&store, "db_a", "p", &["f1", "f2", "f3"]).await, ["f2", "f3"]);
    assert_eq!(store.stats().last_good_bytes, 90);
    store.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_node_reads_the_last_good_result_a_node_kept() {
    let db = TestDb::new().await;
    let a = Store::connect(&db.url, StoreOptions::default()).await.unwrap();
    let b = Store::connect(&db.url, StoreOptions::default()).await.unwrap();
    a.create(Some("db_a"), state("A"), "create", &Author::system()).await.unwrap();
    a.put_last_good("db_a", "p", "f", r#"{"v":1}"#, 10).await.unwrap();
    assert_eq!(b.last_good("db_a", "p", "f").await.unwrap(), Some((r#"{"v":1}"#.to_owned(), 10)));
    // Two nodes racing: the later result wins whichever commits last.
    b.put_last_good("db_a", "p", "f", r#"{"v":3}"#, 30).await.unwrap();
    a.put_last_good("db_a", "p", "f", r#"{"v":2}"#, 20).await.unwrap();
    assert_eq!(a.last_good("db_a", "p", "f").await.unwrap(), Some((r#"{"v":3}"#.to_owned(), 30)));
    // Nodes putting at once keep the per-panel bound.
    let puts = (0..12).map(|i| {
        let node = if i % 2 == 0 { &a } else { &b };
        let f = format!("f{i:02}");
        async move { node.put_last_good("db_a", "q", &f, r#"{"v":0}"#, 100 + i).await }
    });
    for r in futures::future::join_all(puts).await {
        r.unwrap();
    }
    let fs: Vec<String> = (0..12).map(|i| format!("f{i:02}")).collect();
    let fs: Vec<&str> = fs.iter().map(String::as_str).collect();
    assert_eq!(kept(&a, "db_a", "q", &fs).await, ["f08", "f09", "f10", "f11"]);
    a.shutdown().await;
    b.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_last_good_result_is_reported_and_a_new_put_replaces_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    store.create(Some("db_a"), state("A"), "create", &Author::system()).await.unwrap();
    store.put_last_good("db_a", "p", "f", r#"{"v":123}"#, 10).await.unwrap();
    store.put_last_good("db_a", "p", "g", r#"{"v":4}"#, 11).await.unwrap();
    store.shutdown().await;
    {
        // The time bytes themselves change: the entry cannot even say where it is indexed.
        let db = Database::create(dir.path().join(FILE_NAME)).unwrap();
        let txn = db.begin_write().unwrap();
        {
            let mut t = txn.open_table(keys::LAST_GOOD).unwrap();
            let key = keys::last_good_key("db_a", "p", "f");
            let mut bytes = t.get(key.as_slice()).unwrap().unwrap().value().to_vec();
            bytes[12] ^= 0x40;
            t.insert(key.as_slice(), bytes.as_slice()).unwrap();
        }
        txn.commit().unwrap();
    }
    let store = Store::open(dir.path()).unwrap();
    let err = store.last_good("db_a", "p", "f").await.unwrap_err();
    assert!(
        matches!(&err, StoreError::Damaged(m) if m.contains("db_a") && m.contains("checksum mismatch")),
        "{err:?}"
    );
    assert_eq!(store.stats().last_good_bytes, 16);
    store.put_last_good("db_a", "p", "f", r#"{"v":5}"#, 12).await.unwrap();
    assert_eq!(
        store.last_good("db_a", "p", "f").await.unwrap(),
        Some((r#"{"v":5}"#.to_owned(), 12))
    );
    assert_eq!(store.stats().last_good_bytes, 14, "the damaged entry's bytes left the count");
    assert_eq!(store.stats().failed_batches, 0);
    store.shutdown().await;
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(store.stats().last_good_bytes, 14, "no index entry of the damaged value is left");
    store.shutdown().await;
}

#[test]
fn record_kinds_are_listed_in_declaration_order() {
    // The embedded writer finds a kind's table at `kind as usize` in `Record::ALL`'s order.
    for (i, kind) in Record::ALL.iter().enumerate() {
        assert_eq!(*kind as usize, i, "{kind:?}");
        assert_eq!(Record::from_key(kind.key()), Some(*kind));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn people_records_are_kept_on_both_engines() {
    on_each_engine(StoreOptions::default(), |store| async move {
        for kind in [Record::User, Record::SignIn, Record::Audit] {
            store.put_record(kind, "a", &serde_json::json!({"k": kind.key()})).await.unwrap();
            assert_eq!(store.record(kind, "a").await.unwrap().unwrap()["k"], kind.key());
        }
        store.delete_record(Record::SignIn, "a").await.unwrap();
        assert!(store.record(Record::SignIn, "a").await.unwrap().is_none());
        assert_eq!(store.records(Record::User).await.unwrap().len(), 1);
    })
    .await;
}
