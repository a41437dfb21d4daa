//! Uploads across nodes (real `boardsmith serve` processes on a fresh PostgreSQL database): an
//! image uploaded through one node is served by another with the same bytes, and a query on
//! that other node naming it sends the image to the model.

use base64::Engine as _;
use boardsmith::llm::mock::{Match, MockLlm, Script, Step, Turn};
use serde_json::json;

use crate::gateway_query::streamed_text;
use crate::support::node::Node;
use crate::support::pg::TestDb;
use crate::support::sse_events;

const TOKEN: &str = "cluster-uploads-test-token-0123456789";

/// A PNG signature and header start: all the sniffer reads.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x02";

/// `n` nodes on `db` whose vision model is the mock at `mock_url`, with an agent `seer` on it.
async fn vision_nodes(
    db: &TestDb,
    n: usize,
    mock_url: &str,
) -> (Vec<tempfile::TempDir>, Vec<Node>) {
    let prepare = |dir: &std::path::Path| {
        crate::support::node::mock_model(dir, mock_url, "seeing", true);
        std::fs::create_dir_all(dir.join("agents")).unwrap();
        let agent = json!({"providerKey": "mock", "model": "seeing", "mode": "PLAIN",
            "plain": {"systemPrompt": "Describe what you see."}});
        std::fs::write(dir.join("agents/seer.json"), agent.to_string()).unwrap();
    };
    crate::support::node::cluster(&db.url, n, TOKEN, &[], prepare).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_uploaded_through_one_node_is_served_and_seen_through_another() {
    let seen = Turn {
        when: Match { has_image: Some(true), ..Match::default() },
        steps: vec![Step::Text { text: "I see a chart.".into(), chunk: None }],
        ..Turn::default()
    };
    let mock = MockLlm::start(Script { turns: vec![seen] }, 0).await.unwrap();
    let db = TestDb::new().await;
    let (_dirs, nodes) = vision_nodes(&db, 2, &mock.url()).await;
    let (a, b) = (&nodes[0], &nodes[1]);

    let r = a
        .http
        .post(a.url("/api/uploads?name=chart.png"))
        .header("content-type", "image/png")
        .body(PNG.to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let up: serde_json::Value = r.json().await.unwrap();
    let id = up["data"]["id"].as_str().unwrap().to_owned();

    // B serves A's upload, byte for byte, with its type.
    let r = b.http.get(b.url(&format!("/api/uploads/{id}"))).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "image/png");
    assert_eq!(r.bytes().await.unwrap().as_ref(), PNG);
    let (status, _) = b.get(&format!("/api/uploads/{}", "0".repeat(64))).await;
    assert_eq!(status, 404);

    // A query on B naming it: the upload is known there and its bytes reach the model.
    let r = b
        .http
        .post(b.url("/api/query"))
        .json(&json!({"message": "what is this", "agentKey": "seer", "images": [{"uploadId": id}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let events = sse_events(r).await;
    let upload = events.iter().find(|(_, t, _)| t == "request.upload").map(|(_, _, d)| d);
    assert_eq!(upload.unwrap()["upload"]["name"], "chart.png", "{events:?}");
    assert_eq!(streamed_text(&events), "I see a chart.");
    let sent = mock.requests().last().unwrap().body.clone();
    let user = sent["messages"].as_array().unwrap().last().unwrap().clone();
    let data_url =
        format!("data:image/png;base64,{}", base64::engine::general_purpose::STANDARD.encode(PNG));
    assert_eq!(user["content"][0]["image_url"]["url"], data_url.as_str(), "{user}");
}
