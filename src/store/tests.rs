//! Unit tests that need the table layout: corrupt values are errors, never panics.

use redb::{Database, ReadableDatabase};

use super::keys::{self, VERSIONS, VersionHeader, encode_version, version_key};
use super::*;

fn state(title: &str) -> DashboardState {
    sample_state(title, 1, 500)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupt_values_are_storage_errors_naming_the_record() {
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
        matches!(&err, StoreError::Storage(m) if m.contains("db_a") && m.contains("version 1") && m.contains("corrupt state JSON")),
        "{err:?}"
    );
    let err = store.get("db_a").await.unwrap_err();
    assert!(
        matches!(&err, StoreError::Storage(m) if m.contains("db_a") && m.contains("version 2")),
        "{err:?}"
    );
    assert!(matches!(store.versions("db_a").await, Err(StoreError::Storage(_))));
    assert!(
        matches!(store.revert("db_a", 1).await, Err(StoreError::Storage(_)))
            || store.revert("db_a", 1).await.is_ok()
    );
    let err = store.get("db_b").await.unwrap_err();
    assert!(
        matches!(&err, StoreError::Storage(m) if m.contains("db_b") && m.contains("corrupt head")),
        "{err:?}"
    );
    assert!(
        matches!(store.get_session("s").await, Err(StoreError::Storage(m)) if m.contains("session `s`"))
    );
    // An op hitting a corrupt record fails alone; the rest of its batch commits.
    let (bad, good) = tokio::join!(
        store.save("db_b", 1, state("B2"), "m"),
        store.create(None, state("C"), "create")
    );
    assert!(matches!(bad, Err(StoreError::Storage(m)) if m.contains("db_b")));
    let c = good.unwrap();
    assert_eq!(store.get(&c.id).await.unwrap().state, state("C"));
    assert_eq!(store.stats().failed_batches, 0);
    store.shutdown().await;
}
