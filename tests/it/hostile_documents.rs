//! The hostile-document corpus through the real server: PDFs that nest 1,000 and 100,000 deep,
//! flate and text bombs, 200 pages sharing one stream, xref garbage and a page tree that
//! contains itself, as uploads and from a `{url}`. Each one's outcome is asserted (a 4xx naming
//! the limit, or the document read), and after all of them the server (this very process:
//! the test app runs in it) still reads an honest PDF and answers `/healthz`. Before the
//! document worker, the first file aborted the whole process.

use std::sync::Arc;
use std::time::{Duration, Instant};

use boardsmith::knowledge::KnowledgeConfig;
use boardsmith::knowledge::hostile_pdf as pdf;
use serde_json::{Value, json};

use crate::knowledge::{make_kb, multipart, post_form};
use crate::support::{TestApp, spawn_app_with};

/// Tighter than the defaults so the bombs hit their limits quickly.
fn configure(c: &mut boardsmith::app::AppConfig, dir: &std::path::Path) {
    let mut k = KnowledgeConfig::new(dir);
    k.parser.limits.memory_bytes = 256 << 20;
    k.parser.limits.cpu_seconds = 5;
    k.parser.limits.wall_ms = 10_000;
    c.knowledge = Some(k);
}

async fn upload(app: &TestApp, kb: &str, name: &str, bytes: &[u8]) -> (u16, Value) {
    let form = multipart(&[("file", Some(name), bytes)]);
    let r = post_form(&app.http, app.url(&format!("/api/kb/{kb}/documents")), &form)
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.json().await.unwrap())
}

/// `(status, data.parserLimit)` of a refused document.
fn refusal(body: &Value) -> Option<&str> {
    body["data"]["parserLimit"].as_str()
}

#[tokio::test]
async fn hostile_pdfs_cost_their_own_request_and_never_the_server() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let path = dir.path().to_path_buf();
    let app = spawn_app_with(dir, false, |c| configure(c, &path)).await;
    let kb = make_kb(&app, "hostile").await;

    // `/healthz` is polled from another client the whole time: it never fails (the bound is
    // loose because the whole suite shares two cores with the children).
    let health = {
        let url = app.url("/healthz");
        tokio::spawn(async move {
            let client = reqwest::Client::new();
            let mut worst = Duration::ZERO;
            loop {
                let t = Instant::now();
                let r = client.get(&url).send().await.unwrap();
                assert_eq!(r.status(), 200);
                worst = worst.max(t.elapsed());
                if worst > Duration::from_secs(5) {
                    panic!("/healthz took {worst:?} while documents were parsed");
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
    };

    struct Case {
        name: &'static str,
        bytes: Vec<u8>,
        status: u16,
        limit: Option<&'static str>,
    }
    let cases = [
        Case {
            name: "array-1000",
            bytes: pdf::deep_array(1_000),
            status: 413,
            limit: Some("depth"),
        },
        Case {
            name: "dictionary-100000",
            bytes: pdf::deep_dictionary(100_000),
            status: 413,
            limit: Some("depth"),
        },
        Case {
            name: "flate-bomb",
            bytes: pdf::flate_bomb(768 << 20),
            status: 413,
            limit: Some("memory"),
        },
        Case {
            name: "text-bomb",
            bytes: pdf::text_bomb(60, 1_000),
            status: 413,
            limit: Some("text"),
        },
        Case { name: "xref-garbage", bytes: pdf::xref_garbage(64 << 10), status: 415, limit: None },
    ];
    for case in &cases {
        assert!(case.bytes.len() < 1 << 20, "{}: {} bytes", case.name, case.bytes.len());
        let t = Instant::now();
        let (status, body) = upload(&app, &kb, &format!("{}.pdf", case.name), &case.bytes).await;
        assert_eq!((status, refusal(&body)), (case.status, case.limit), "{}: {body}", case.name);
        assert!(!body["msg"].as_str().unwrap().is_empty());
        // Within the wall-clock limit and its reaping.
        assert!(t.elapsed() < Duration::from_secs(12), "{}: {:?}", case.name, t.elapsed());
    }

    // A page tree that contains itself: refused one way or another, never a hang or a crash.
    let (status, body) = upload(&app, &kb, "cycle.pdf", &pdf::cyclic_pages()).await;
    assert!(matches!(status, 413 | 415), "{status} {body}");
    // All the text on one page: the parser's content decoding outgrows its memory first.
    let (status, body) = upload(&app, &kb, "one-page.pdf", &pdf::text_bomb(1, 80_000)).await;
    assert_eq!(status, 413, "{body}");
    assert!(matches!(refusal(&body), Some("memory" | "text")), "{body}");

    // Honest nesting and page amplification are read: 200 pages sharing one stream are read
    // once, so the text is that stream's, not 200 copies of it.
    let (status, body) = upload(&app, &kb, "nested.pdf", &pdf::deep_array(40)).await;
    assert_eq!(status, 201, "{body}");
    let t = Instant::now();
    let (status, body) =
        upload(&app, &kb, "amplified.pdf", &pdf::shared_stream_pages(200, 2_000)).await;
    assert_eq!(status, 201, "{body}");
    let one_copy = body["data"]["chunks"].as_u64().unwrap();
    assert!((1..=40).contains(&one_copy), "{body}");
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());

    // The server is whole: an honest PDF is read and found.
    let (status, body) =
        upload(&app, &kb, "canary.pdf", &pdf::text("Copper smelters cut output")).await;
    assert_eq!(status, 201, "{body}");
    let (status, found) =
        app.post(&format!("/api/kb/{kb}/search"), json!({"query": "smelters", "k": 3})).await;
    assert_eq!(status, 200, "{found}");
    assert_eq!(found["data"]["results"][0]["title"], "canary");
    assert!(!health.is_finished(), "the /healthz poller stopped: {:?}", health.await);
    health.abort();
    app.stop().await;
}

#[tokio::test]
async fn a_hostile_pdf_by_url_is_refused_the_same_way() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let page = listener.local_addr().unwrap();
    let router = axum::Router::new().route(
        "/deep.pdf",
        axum::routing::get(|| async {
            ([("content-type", "application/pdf")], pdf::deep_array(1_000))
        }),
    );
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let path = dir.path().to_path_buf();
    let app = spawn_app_with(dir, false, |c| {
        configure(c, &path);
        c.sdk.outbound_allow.push(format!("127.0.0.1:{}", page.port()));
    })
    .await;
    let kb = make_kb(&app, "web").await;
    let (status, body) = app
        .post(&format!("/api/kb/{kb}/documents"), json!({"url": format!("http://{page}/deep.pdf")}))
        .await;
    assert_eq!((status, refusal(&body)), (413, Some("depth")), "{body}");
    assert!(body["msg"].as_str().unwrap().contains("deep"), "{body}");
    let (status, _) = app.get("/healthz").await;
    assert_eq!(status, 200);
    app.stop().await;
}
