//! Runs across nodes (real `boardsmith serve` processes on a fresh PostgreSQL database): a
//! client reads a run owned by another node through `Last-Event-ID`, live, with the same
//! events as on the owner; a frontend-tool submit sent to a node that does not run the tool
//! reaches the owner; a run whose node is killed ends with `run.error` for a client that
//! resumes elsewhere.

use std::pin::Pin;
use std::time::Duration;

use eventsource_stream::Eventsource;
use futures::{Stream, StreamExt};
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::node::Node;
use crate::support::pg::TestDb;

const TOKEN: &str = "cluster-runs-test-token-0123456789";

/// One SSE frame: id, event type, data.
type Frame = (String, String, Value);

/// An SSE response read frame by frame.
struct Frames {
    stream: Pin<Box<dyn Stream<Item = Frame> + Send>>,
}

impl Frames {
    fn new(response: reqwest::Response) -> Self {
        assert_eq!(response.status(), 200);
        let stream = response.bytes_stream().eventsource().map(|frame| {
            let frame = frame.unwrap();
            (frame.id, frame.event, serde_json::from_str(&frame.data).unwrap())
        });
        Self { stream: Box::pin(stream) }
    }

    /// Frames up to and including the first `until` accepts (`None`: to the end).
    async fn read(&mut self, until: Option<&str>, within: Duration) -> Vec<Frame> {
        let mut out = Vec::new();
        loop {
            let next = tokio::time::timeout(within, self.stream.next())
                .await
                .unwrap_or_else(|_| panic!("no event within {within:?} after {out:?}"));
            let Some(frame) = next else { return out };
            let stop = until == Some(frame.1.as_str());
            out.push(frame);
            if stop {
                return out;
            }
        }
    }
}

async fn nodes(db: &TestDb, n: usize) -> (Vec<tempfile::TempDir>, Vec<Node>) {
    crate::support::node::cluster(&db.url, n, TOKEN, &[], |_| {}).await
}

/// Starts a run of a workflow that waits for the user's approval (a human node) on `node`,
/// and reads it until it waits: the frames so far.
async fn waiting_run(node: &Node) -> (Frames, Vec<Frame>) {
    let def = json!({"id": "approve", "name": "approve", "nodes": [
        {"id": "ok", "type": "human", "title": "Approve", "prompt": "Go ahead?"},
        {"id": "echo", "type": "code", "code": "return vars.answer.confirmed ? 'approved' : 'declined'",
         "inputs": {"answer": "{{nodes.ok.output}}"}}
    ], "edges": [{"from": "ok", "to": "echo"}]});
    let (status, body) = node.send(Method::POST, "/api/workflows", def).await;
    assert_eq!(status, 201, "{body}");
    let r = node
        .http
        .post(node.url("/api/workflows/approve/run"))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    let mut frames = Frames::new(r);
    let seen = frames.read(Some("tool.end"), Duration::from_secs(20)).await;
    (frames, seen)
}

/// Resumes a stream on `node` after the event `last_id`.
async fn resume(node: &Node, last_id: &str) -> reqwest::Response {
    node.http
        .post(node.url("/api/query"))
        .header("last-event-id", last_id)
        .json(&json!({}))
        .send()
        .await
        .unwrap()
}

fn field<'a>(frames: &'a [Frame], kind: &str, key: &str) -> &'a str {
    let frame = frames.iter().find(|f| f.1 == kind).unwrap_or_else(|| panic!("no {kind}"));
    frame.2[key].as_str().unwrap()
}

#[tokio::test]
async fn a_run_is_followed_live_from_another_node_and_its_submit_forwarded_to_the_owner() {
    let db = TestDb::new().await;
    let (_dirs, nodes) = nodes(&db, 2).await;
    let (a, b) = (&nodes[0], &nodes[1]);
    let (mut on_a, seen) = waiting_run(a).await;
    let run_id = field(&seen, "run.start", "runId").to_owned();
    let tool_id = field(&seen, "tool.end", "toolId").to_owned();

    // B has none of this run in memory: it replays the owner's stored events after seq 1,
    // exactly as A sent them, then follows the live run.
    let mut on_b = Frames::new(resume(b, &seen[0].0).await);
    let replayed = on_b.read(Some("tool.end"), Duration::from_secs(10)).await;
    assert_eq!(replayed, seen[1..], "B replays A's events after seq 1, ids and bodies");

    // The run waits on A; the submit goes to B, which forwards it to A.
    let body =
        json!({"runId": run_id, "toolId": tool_id, "payload": {"params": {"confirmed": true}}});
    let (status, answer) = b.send(Method::POST, "/api/submit", body.clone()).await;
    assert_eq!(status, 200, "{answer}");
    let rest_a = on_a.read(None, Duration::from_secs(10)).await;
    let rest_b = on_b.read(None, Duration::from_secs(10)).await;
    assert_eq!(rest_a.last().unwrap().1, "run.complete", "{rest_a:?}");
    assert_eq!(rest_b, rest_a, "B's live tail is A's, event for event");
    let (status, again) = b.send(Method::POST, "/api/submit", body).await;
    assert_eq!(status, 404, "nothing waits any more, on either node: {again}");

    // The finished run stays readable from the store on a node that never followed it.
    let dir = tempfile::tempdir().unwrap();
    let c = Node::start(dir.path(), TOKEN, &[("BOARDSMITH_DATABASE_URL", db.url.clone())]).await;
    let all = Frames::new(resume(&c, &format!("{run_id}:0")).await)
        .read(None, Duration::from_secs(10))
        .await;
    let whole: Vec<Frame> = seen.iter().chain(&rest_a).cloned().collect();
    assert_eq!(all, whole, "C reads the whole run from the store");
}

#[tokio::test]
async fn a_run_whose_node_is_killed_ends_with_run_error_for_a_client_resuming_elsewhere() {
    let db = TestDb::new().await;
    let (_dirs, mut nodes) = nodes(&db, 2).await;
    let (_on_a, seen) = waiting_run(&nodes[0]).await;
    let run_id = field(&seen, "run.start", "runId").to_owned();
    let last = seen.last().unwrap().clone();
    // The run waits for the user, as a user takes a moment: its events, stored within
    // milliseconds, are all in the database when the node dies.
    tokio::time::sleep(Duration::from_millis(300)).await;
    nodes[0].kill();
    let started = std::time::Instant::now();
    let b = &nodes[1];
    let rest = Frames::new(resume(b, &last.0).await).read(None, Duration::from_secs(20)).await;
    assert_eq!(rest.len(), 1, "only the closing event follows: {rest:?}");
    let (id, kind, data) = &rest[0];
    assert_eq!(kind, "run.error");
    let last_seq: u64 = last.0.rsplit(':').next().unwrap().parse().unwrap();
    assert_eq!(id, &format!("{run_id}:{}", last_seq + 1), "the seqs go on without a gap");
    assert_eq!(data["error"]["code"], "node_lost", "{data}");
    assert!(data["error"]["message"].as_str().unwrap().contains("stopped"), "{data}");
    assert!(started.elapsed() < Duration::from_secs(15), "ended in {:?}", started.elapsed());

    // A later reader gets the same end; a submit to the dead run is refused.
    let again = Frames::new(resume(b, &format!("{run_id}:0")).await)
        .read(None, Duration::from_secs(10))
        .await;
    assert_eq!(again.last(), rest.last());
    assert_eq!(again.len() as u64, last_seq + 1);
    let tool_id = field(&seen, "tool.end", "toolId");
    let body = json!({"runId": run_id, "toolId": tool_id, "payload": {"params": {}}});
    let (status, answer) = b.send(Method::POST, "/api/submit", body).await;
    assert_eq!(status, 404, "{answer}");

    // The workflow run is interrupted, as after a restart of an embedded node: resumable.
    let mut view = Value::Null;
    for _ in 0..30 {
        view = b.get(&format!("/api/workflows/runs/{run_id}")).await.1;
        if view["data"]["status"] == "interrupted" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(view["data"]["status"], "interrupted", "{view}");
}

#[tokio::test]
async fn an_unknown_run_is_404_on_every_node_and_a_bad_event_id_400() {
    let db = TestDb::new().await;
    let (_dirs, nodes) = nodes(&db, 1).await;
    let r = resume(&nodes[0], "no-such-run:3").await;
    assert_eq!(r.status(), 404);
    let r = resume(&nodes[0], "garbage").await;
    assert_eq!(r.status(), 400);
}

/// `n` nodes on `db` whose model is the mock at `mock_url`.
async fn model_nodes(db: &TestDb, n: usize, mock_url: &str) -> (Vec<tempfile::TempDir>, Vec<Node>) {
    let mock = |dir: &std::path::Path| {
        crate::support::node::mock_model(dir, mock_url, "mock-model", false);
    };
    crate::support::node::cluster(&db.url, n, TOKEN, &[], mock).await
}

/// A mock model answering "first question" slowly (`delay_ms` per two characters) and
/// "second question" at once.
async fn two_questions(delay_ms: u64) -> boardsmith::llm::mock::MockLlm {
    use boardsmith::llm::mock::{Match, MockLlm, Script, Step, Turn};
    let turn = |text: &str, delay_ms| Turn {
        steps: vec![Step::Text { text: text.into(), chunk: Some(2) }],
        delay_ms,
        ..Turn::default()
    };
    let second = Turn {
        when: Match { last_user_contains: Some("second question".into()), ..Default::default() },
        ..turn("Second answer.", 0)
    };
    let script =
        Script { turns: vec![second, turn("The first answer, streamed slowly.", delay_ms)] };
    MockLlm::start(script, 0).await.unwrap()
}

#[tokio::test]
async fn a_follow_up_sent_to_another_node_joins_the_chats_running_run() {
    let mock = two_questions(100).await;
    let db = TestDb::new().await;
    let (_dirs, nodes) = model_nodes(&db, 2, &mock.url()).await;
    let (a, b) = (&nodes[0], &nodes[1]);
    let chat = "c-cross-node";
    let first = a
        .http
        .post(a.url("/api/query"))
        .json(&json!({"message": "first question", "agentKey": "demoModeReact", "chatId": chat}))
        .send()
        .await
        .unwrap();
    let mut on_a = Frames::new(first);
    let mut seen = on_a.read(Some("content.delta"), Duration::from_secs(20)).await;

    // The chat's run is on A; the follow-up goes to B, which hands it to A's run.
    let queued = b
        .http
        .post(b.url("/api/query"))
        .json(&json!({"message": "second question", "chatId": chat, "busy": "followUp"}))
        .send()
        .await
        .unwrap();
    assert_eq!(queued.headers()["x-boardsmith-queued"], "followUp");
    let on_b = Frames::new(queued).read(None, Duration::from_secs(20)).await;
    seen.extend(on_a.read(None, Duration::from_secs(20)).await);
    let run_id = field(&seen, "run.start", "runId");
    for events in [&seen, &on_b] {
        assert!(events.iter().all(|f| f.0.starts_with(run_id)), "one run: {events:?}");
        let steer = events.iter().find(|f| f.1 == "run.steer").expect("a run.steer");
        assert_eq!(steer.2["mode"], "followUp");
        assert_eq!(steer.2["messages"], json!(["second question"]));
        assert_eq!(events.last().unwrap().1, "run.complete");
    }
    let tail = &seen[seen.len() - on_b.len()..];
    assert_eq!(on_b, tail, "B reads A's run from the moment its message was queued");
    // One run answered both: the model saw the first exchange and the follow-up.
    assert_eq!(mock.requests().len(), 2);
    let last = mock.requests()[1].body["messages"].to_string();
    assert!(last.contains("first question") && last.contains("second question"), "{last}");
}

#[tokio::test]
async fn a_query_on_another_node_waits_for_the_chats_running_run_and_replays_it() {
    let mock = two_questions(60).await;
    let db = TestDb::new().await;
    let (_dirs, nodes) = model_nodes(&db, 2, &mock.url()).await;
    let (a, b) = (&nodes[0], &nodes[1]);
    let query = |node: &Node, message: &str| {
        node.http
            .post(node.url("/api/query"))
            .json(&json!({
                "message": message, "agentKey": "demoModeReact", "chatId": "c-serial"
            }))
            .send()
    };
    let mut on_a = Frames::new(query(a, "first question").await.unwrap());
    on_a.read(Some("content.delta"), Duration::from_secs(20)).await;
    // A's run is answering; B's run of the same chat waits for it (and for its record).
    let on_b = Frames::new(query(b, "second question").await.unwrap())
        .read(None, Duration::from_secs(20))
        .await;
    let rest_a = on_a.read(None, Duration::from_secs(20)).await;
    assert_eq!(rest_a.last().unwrap().1, "run.complete");
    assert_eq!(on_b.last().unwrap().1, "run.complete", "{on_b:?}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let replayed = requests[1].body["messages"].to_string();
    assert!(
        replayed.contains("first question")
            && replayed.contains("The first answer, streamed slowly."),
        "B's run replays A's whole run: {replayed}"
    );
}
