//! Unit tests that need the table layout: corrupt values are errors, never panics.

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
    let a = store.create(Some("db_a"), state("A"), "create").await.unwrap();
    store.save(&a.id, 1, state("A2"), "mutate").await.unwrap();
    store.create(Some("db_b"), state("B"), "create").await.unwrap();
    store.put_session("s", serde_json::json!({"x": 1})).await.unwrap();
    store.shutdown().await;

    {
        let db = Database::create(dir.path().join(FILE_NAME)).unwrap();
        let txn = db.begin_write().unwrap();
        {
            let mut v = txn.open_table(VERSIONS).unwrap();
            // Valid header, broken JSON.
            let vh = VersionHeader { created_at: 1, panels: 1, title: "A", note: "x" };
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
        matches!(store.revert("db_a", 1).await, Err(StoreError::Damaged(_)))
            || store.revert("db_a", 1).await.is_ok()
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
    let (bad, good) = tokio::join!(
        store.save("db_b", 1, state("B2"), "m"),
        store.create(None, state("C"), "create")
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
    let a = store.create(Some("db_a"), state("A1"), "create").await.unwrap();
    // A second dashboard whose history must not be touched.
    store.create(Some("db_b"), state("B1"), "create").await.unwrap();
    for v in 1..6 {
        store.save(&a.id, v, state(&format!("A{}", v + 1)), "mutate").await.unwrap();
    }
    let kept: Vec<u64> = store.versions("db_a").await.unwrap().iter().map(|v| v.version).collect();
    assert_eq!(kept, [4, 5, 6]);
    assert_eq!(store.get("db_a").await.unwrap().state.title, "A6");
    assert_eq!(
        store.get_version("db_a", 3).await.unwrap_err(),
        StoreError::VersionNotFound { id: "db_a".into(), version: 3 }
    );
    assert!(matches!(store.revert("db_a", 1).await, Err(StoreError::VersionNotFound { .. })));
    store.revert("db_a", 4).await.unwrap();
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
    let err = store.create(Some("db_big"), big.clone(), "create").await.unwrap_err();
    assert_eq!(err, StoreError::TooLarge { bytes: big_len, limit });
    assert!(err.to_string().contains("BOARDSMITH_MAX_STATE_BYTES"), "{err}");
    assert!(matches!(store.get("db_big").await, Err(StoreError::NotFound(_))));
    let a = store.create(Some("db_a"), small, "create").await.unwrap();
    assert!(matches!(store.save(&a.id, 1, big, "mutate").await, Err(StoreError::TooLarge { .. })));
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
        match store.create(None, state("D"), "create").await {
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
        store.save(&made[0], 1, state("D2"), "m").await,
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
    store.create(None, state("D"), "create").await.unwrap();
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
    assert!(matches!(store.create(None, state("D"), "c").await, Err(StoreError::Full { .. })));
    store.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_byte_changed_on_disk_is_reported_even_when_the_json_stays_valid() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let mut s = state("A");
    s.layout.columns = 3;
    store.create(Some("db_a"), s, "create").await.unwrap();
    store.save("db_a", 1, state("A2"), "mutate").await.unwrap();
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
    assert!(matches!(store.revert("db_a", 1).await, Err(StoreError::Damaged(_))));
    // The undamaged head still reads.
    assert_eq!(store.get("db_a").await.unwrap().state.title, "A2");
    store.shutdown().await;
}
