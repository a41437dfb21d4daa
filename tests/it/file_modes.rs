//! What the server keeps on disk is its own user's only: a real `boardsmith serve`, started
//! with the permissive umask 022 over a data dir an older version left 0755, stores rows, a
//! chat, an upload and a knowledge-base document; then no file under the data dir may be open
//! to group or others (0600) and no directory either (0700).

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use boardsmith::llm::mock::{MockLlm, Script, Step, Turn};
use reqwest::Method;
use serde_json::json;

use crate::support::node::{Node, mock_model};
use crate::support::sse_events;

const TOKEN: &str = "file-modes-test-token-0123456789abcdef";

/// A PNG signature and header start: all the sniffer reads.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x02";

/// Every file and directory under `dir`, with its permission bits.
fn walk(dir: &Path, out: &mut Vec<(PathBuf, u32, bool)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        out.push((path.clone(), meta.permissions().mode() & 0o777, meta.is_dir()));
        if meta.is_dir() {
            walk(&path, out);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_file_under_the_data_dir_is_0600_and_every_directory_0700() {
    let turn =
        Turn { steps: vec![Step::Text { text: "Noted.".into(), chunk: None }], ..Turn::default() };
    let mock = MockLlm::start(Script { turns: vec![turn] }, 0).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    mock_model(dir.path(), &mock.url(), "plain", false);
    std::fs::create_dir_all(dir.path().join("agents")).unwrap();
    let agent = json!({"providerKey": "mock", "model": "plain", "mode": "PLAIN",
        "plain": {"systemPrompt": "Answer briefly."}});
    std::fs::write(dir.path().join("agents/scribe.json"), agent.to_string()).unwrap();
    // What an older version left: an open data dir.
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();

    // The child inherits this process's umask: make it the usual permissive one, so the
    // server's own mask and modes are what is tested (another test's in-process server may
    // have set 077 here; that can only hide a failure, never make one).
    let before = rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o022));
    let node = Node::start(dir.path(), TOKEN, &[]).await;
    rustix::process::umask(before);
    let status = std::fs::read_to_string(format!("/proc/{}/status", node.pid())).unwrap();
    assert!(status.lines().any(|l| l == "Umask:\t0077"), "the server's umask:\n{status}");

    // Store rows: a key and a dashboard.
    let (s, body) =
        node.send(Method::POST, "/api/keys", json!({"name": "k", "scopes": ["read"]})).await;
    assert_eq!(s, 201, "{body}");
    let (s, body) = node.send(Method::POST, "/api/dashboards", json!({"template": "gold"})).await;
    assert_eq!(s, 201, "{body}");
    // A chat.
    let r = node
        .http
        .post(node.url("/api/query"))
        .json(&json!({"message": "remember this", "agentKey": "scribe"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let events = sse_events(r).await;
    assert!(events.iter().any(|(_, t, _)| t == "run.complete"), "{events:?}");
    // An upload.
    let r = node
        .http
        .post(node.url("/api/uploads?name=chart.png"))
        .header("content-type", "image/png")
        .body(PNG.to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    // A knowledge-base document.
    let (s, body) = node.send(Method::POST, "/api/kb", json!({"name": "notes"})).await;
    assert_eq!(s, 201, "{body}");
    let kb = body["data"]["id"].as_str().unwrap().to_owned();
    let (s, body) = node
        .send(
            Method::POST,
            &format!("/api/kb/{kb}/documents"),
            json!({"title": "Rates", "text": "The policy rate rose by fifty basis points."}),
        )
        .await;
    assert_eq!(s, 201, "{body}");

    let mut entries = vec![(data.clone(), 0, true)];
    entries[0].1 = std::fs::metadata(&data).unwrap().permissions().mode() & 0o777;
    walk(&data, &mut entries);
    let names: Vec<String> = entries
        .iter()
        .map(|(p, _, _)| p.strip_prefix(&data).unwrap().display().to_string())
        .collect();
    for expected in ["boardsmith.redb", "chats", "uploads", "kb"] {
        assert!(names.iter().any(|n| n.starts_with(expected)), "no {expected} in {names:?}");
    }
    assert!(
        names.iter().any(|n| n.starts_with("chats/") && n.len() > 6),
        "no chat file: {names:?}"
    );
    assert!(names.iter().any(|n| n.starts_with("kb/") && n.len() > 3), "no kb index: {names:?}");
    let open: Vec<String> = entries
        .iter()
        .filter(|(_, mode, is_dir)| mode & 0o077 != 0 || (*is_dir && *mode != 0o700))
        .map(|(p, mode, is_dir)| {
            format!("{} {:o}{}", p.display(), mode, if *is_dir { " (dir)" } else { "" })
        })
        .collect();
    assert!(open.is_empty(), "open to group or others:\n{}", open.join("\n"));
    drop(node);
}
