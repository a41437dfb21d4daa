//! Knowledge bases across nodes (real `boardsmith serve` processes on a fresh PostgreSQL
//! database): a base and its documents made on one node are listed and searched on another
//! at once, deletions follow, and a node started later builds its cache from the store.

use std::time::Duration;

use reqwest::Method;
use serde_json::json;

use crate::support::node::{Node, cluster};
use crate::support::pg::TestDb;

const TOKEN: &str = "cluster-kb-test-token-0123456789ab";

/// The titles `node` finds for `query` in base `kb` (none once the base is gone).
async fn found(node: &Node, kb: &str, query: &str) -> Vec<String> {
    let (status, body) = node
        .send(Method::POST, &format!("/api/kb/{kb}/search"), json!({"query": query, "k": 5}))
        .await;
    if status == 404 {
        return Vec::new();
    }
    assert_eq!(status, 200, "{body}");
    body["data"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["title"].as_str().unwrap().to_owned())
        .collect()
}

/// Polls until `check` holds (up to 5 s): another node applies a change on its notice.
async fn eventually<F, Fut>(what: &str, check: F)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..100 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what}: not within 5 s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_base_made_on_one_node_is_searched_on_another_and_deletions_follow() {
    let db = TestDb::new().await;
    let (_dirs, nodes) = cluster(&db.url, 2, TOKEN, &[], |_| {}).await;
    let (a, b) = (&nodes[0], &nodes[1]);
    let (status, body) =
        a.send(Method::POST, "/api/kb", json!({"name": "research", "description": "notes"})).await;
    assert_eq!(status, 201, "{body}");
    let kb = body["data"]["id"].as_str().unwrap().to_owned();
    let docs = format!("/api/kb/{kb}/documents");
    let (s, rates) = a
        .send(Method::POST, &docs, json!({"title": "Rates note", "text": "The central bank raised the policy rate by fifty basis points."}))
        .await;
    assert_eq!(s, 201, "{rates}");
    let (s, oil) = a
        .send(
            Method::POST,
            &docs,
            json!({"title": "Oil note", "text": "Crude inventories fell for a third week."}),
        )
        .await;
    assert_eq!(s, 201, "{oil}");

    // B lists the base with both documents and finds them.
    eventually("B has the base", || async {
        let (_, list) = b.get("/api/kb").await;
        list["data"]
            .as_array()
            .is_some_and(|l| l.iter().any(|k| k["id"] == kb && k["documents"] == 2))
    })
    .await;
    assert_eq!(found(b, &kb, "policy rate").await, ["Rates note"]);
    assert_eq!(found(b, &kb, "crude inventories").await, ["Oil note"]);

    // A document deleted on B is gone on A; a document added on B is found on A.
    let oil_id = oil["data"]["id"].as_str().unwrap();
    let r = b.http.delete(b.url(&format!("{docs}/{oil_id}"))).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let (s, body) = b
        .send(
            Method::POST,
            &docs,
            json!({"title": "Gold note", "text": "Gold reached a record high."}),
        )
        .await;
    assert_eq!(s, 201, "{body}");
    eventually("A follows B's changes", || async {
        found(a, &kb, "crude inventories").await.is_empty()
            && found(a, &kb, "gold record").await == ["Gold note"]
    })
    .await;

    // A node started later builds its cache from the store.
    let dir = tempfile::tempdir().unwrap();
    let c = Node::start(dir.path(), TOKEN, &[("BOARDSMITH_DATABASE_URL", db.url.clone())]).await;
    assert_eq!(found(&c, &kb, "policy rate").await, ["Rates note"]);
    assert!(found(&c, &kb, "crude inventories").await.is_empty());

    // The base deleted on A is gone everywhere.
    let r = a.http.delete(a.url(&format!("/api/kb/{kb}"))).send().await.unwrap();
    assert_eq!(r.status(), 200);
    for node in [b, &c] {
        eventually("the base is gone", || async {
            let (_, list) = node.get("/api/kb").await;
            list["data"].as_array().is_some_and(Vec::is_empty)
        })
        .await;
    }
}
