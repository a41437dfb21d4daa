//! Knowledge bases through the real server: each document kind (text, Markdown, URL from a
//! loopback server, CSV and PDF uploads), a private URL refused, deletes, restart, search
//! order, 400s naming the field, multipart only where and how it is allowed, the agent tool
//! emitting `source.snapshot`, and retrieval quality on the labeled set in `tests/kb/`.

use std::sync::Arc;

use boardsmith::knowledge::eval::LabeledSet;
use boardsmith::knowledge::{Knowledge, KnowledgeConfig, SearchMode};
use serde_json::{Value, json};

use crate::support::{llm_config, spawn_app, spawn_app_in, spawn_app_with};

/// A `multipart/form-data` body by hand: `(content type, bytes)` for `(name, file name, bytes)`
/// parts (no file name: a plain field).
pub(crate) fn multipart(parts: &[(&str, Option<&str>, &[u8])]) -> (String, Vec<u8>) {
    let boundary = "kb-test-boundary-7f3a";
    let mut body = Vec::new();
    for (name, file, bytes) in parts {
        body.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
        match file {
            Some(f) => body.extend_from_slice(
                format!("Content-Disposition: form-data; name=\"{name}\"; filename=\"{f}\"\r\nContent-Type: application/octet-stream\r\n\r\n").as_bytes(),
            ),
            None => body.extend_from_slice(
                format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n").as_bytes(),
            ),
        }
        body.extend_from_slice(bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

pub(crate) fn post_form(
    client: &reqwest::Client,
    url: String,
    form: &(String, Vec<u8>),
) -> reqwest::RequestBuilder {
    client.post(url).header("content-type", form.0.clone()).body(form.1.clone())
}

pub(crate) async fn make_kb(app: &crate::support::TestApp, name: &str) -> String {
    let (status, body) = app.post("/api/kb", json!({"name": name, "description": "notes"})).await;
    assert_eq!(status, 201, "{body}");
    body["data"]["id"].as_str().unwrap().to_owned()
}

async fn search(app: &crate::support::TestApp, kb: &str, query: &str) -> Value {
    let (status, body) =
        app.post(&format!("/api/kb/{kb}/search"), json!({"query": query, "k": 5})).await;
    assert_eq!(status, 200, "{body}");
    body["data"].clone()
}

fn titles(answer: &Value) -> Vec<String> {
    answer["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["title"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn documents_of_every_kind_are_found_and_deleted_and_survive_a_restart() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let app = spawn_app_in(dir.clone(), false).await;
    let kb = make_kb(&app, "research").await;
    let docs = format!("/api/kb/{kb}/documents");

    let (s, text) = app
        .post(&docs, json!({"title": "Rates note", "text": "The central bank raised the policy rate by fifty basis points."}))
        .await;
    assert_eq!(s, 201, "{text}");
    assert_eq!(text["data"]["kind"], "text");
    let (s, md) = app
        .post(
            &docs,
            json!({"markdown": "# Copper\n\n## Supply\n\nSmelters cut **output** in Chile."}),
        )
        .await;
    assert_eq!(s, 201, "{md}");
    assert_eq!(md["data"]["title"], "Copper", "the first heading titles it");

    // CSV and PDF as multipart uploads.
    let csv =
        multipart(&[("file", Some("holdings.csv"), b"ticker,sector\nXOM,energy\nJPM,banks\n")]);
    let r = post_form(&app.http, app.url(&docs), &csv).send().await.unwrap();
    assert_eq!(r.status(), 201);
    let pdf = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/kb/outlook.pdf"))
        .unwrap();
    let form = multipart(&[("title", None, b"Muni outlook"), ("file", Some("outlook.pdf"), &pdf)]);
    let r = post_form(&app.http, app.url(&docs), &form).send().await.unwrap();
    let status = r.status().as_u16();
    let body: Value = r.json().await.unwrap();
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["data"]["kind"], "pdf");

    assert_eq!(titles(&search(&app, &kb, "policy rate basis points").await)[0], "Rates note");
    let copper = search(&app, &kb, "smelters output").await;
    assert_eq!(copper["mode"], "bm25");
    assert_eq!(copper["results"][0]["title"], "Copper");
    assert_eq!(titles(&search(&app, &kb, "JPM banks").await)[0], "holdings");
    assert_eq!(titles(&search(&app, &kb, "municipal duration").await)[0], "Muni outlook");

    // Delete removes the chunks from search.
    let id = text["data"]["id"].as_str().unwrap();
    let r = app.http.delete(app.url(&format!("{docs}/{id}"))).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(
        titles(&search(&app, &kb, "policy rate basis points").await)
            .iter()
            .all(|t| t != "Rates note")
    );
    let (_, list) = app.get(&docs).await;
    assert_eq!(list["data"].as_array().unwrap().len(), 3);

    // Restart on the same data dir: everything is still there.
    app.stop().await;
    let app = spawn_app_in(dir, false).await;
    let (_, bases) = app.get("/api/kb").await;
    assert_eq!(bases["data"][0]["documents"], 3, "{bases}");
    assert_eq!(titles(&search(&app, &kb, "smelters").await)[0], "Copper");
    let r = app.http.delete(app.url(&format!("/api/kb/{kb}"))).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let (s, _) = app.get(&docs).await;
    assert_eq!(s, 404);
    app.stop().await;
}

#[tokio::test]
async fn url_documents_go_through_the_outbound_policy() {
    // A loopback page, allowed by BOARDSMITH_OUTBOUND_ALLOW's equivalent in the config.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let page_addr = listener.local_addr().unwrap();
    let router = axum::Router::new().route(
        "/note.html",
        axum::routing::get(|| async {
            (
                [("content-type", "text/html")],
                "<html><head><title>Carry trade</title></head><body><h1>Yen</h1><p>Funding in yen is cheap.</p><script>x</script></body></html>",
            )
        }),
    );
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let app = spawn_app_with(dir, false, |c| {
        c.sdk.outbound_allow.push(format!("127.0.0.1:{}", page_addr.port()));
    })
    .await;
    let kb = make_kb(&app, "web").await;
    let docs = format!("/api/kb/{kb}/documents");
    let (s, body) = app.post(&docs, json!({"url": format!("http://{page_addr}/note.html")})).await;
    assert_eq!(s, 201, "{body}");
    assert_eq!(body["data"]["title"], "Carry trade");
    let found = search(&app, &kb, "funding yen").await;
    assert_eq!(found["results"][0]["url"], format!("http://{page_addr}/note.html"));
    assert!(!found["results"][0]["chunk"].as_str().unwrap().contains("<p>"), "HTML stripped");

    // A private address not on the list is refused, naming the setting.
    let (s, body) = app.post(&docs, json!({"url": "http://10.1.2.3/secret"})).await;
    assert_eq!(s, 403, "{body}");
    assert!(body["msg"].as_str().unwrap().contains("BOARDSMITH_OUTBOUND_ALLOW"), "{body}");
    let (s, body) = app.post(&docs, json!({"url": "file:///etc/passwd"})).await;
    assert_eq!((s, body["data"]["param"].as_str()), (400, Some("url")), "{body}");
    app.stop().await;
}

#[tokio::test]
async fn bad_input_is_a_400_naming_the_field_and_multipart_is_guarded() {
    let app = spawn_app().await;
    let (s, body) = app.post("/api/kb", json!({"name": ""})).await;
    assert_eq!((s, body["data"]["param"].as_str()), (400, Some("name")), "{body}");
    let kb = make_kb(&app, "x").await;
    let (s, _) = app.post("/api/kb", json!({"name": "x"})).await;
    assert_eq!(s, 409, "names are unique");
    let docs = format!("/api/kb/{kb}/documents");
    let (s, body) = app.post(&docs, json!({"text": "no title"})).await;
    assert_eq!((s, body["data"]["param"].as_str()), (400, Some("title")), "{body}");
    let (s, body) = app.post(&docs, json!({"title": "t"})).await;
    assert_eq!((s, body["data"]["param"].as_str()), (400, Some("text")), "{body}");
    let (s, body) = app.post(&format!("/api/kb/{kb}/search"), json!({"query": "a", "k": 0})).await;
    assert_eq!((s, body["data"]["param"].as_str()), (400, Some("k")), "{body}");
    let (s, body) = app.post(&format!("/api/kb/{kb}/search"), json!({"query": "  "})).await;
    assert_eq!((s, body["data"]["param"].as_str()), (400, Some("query")), "{body}");
    let (s, _) = app.post("/api/kb/kb_missing/search", json!({"query": "a"})).await;
    assert_eq!(s, 404);
    let form = multipart(&[("file", Some("a.exe"), b"hello")]);
    let r = post_form(&app.http, app.url(&docs), &form).send().await.unwrap();
    assert_eq!(r.status(), 415, "unsupported file type");

    // A foreign page's form post: refused by its Origin before any handler.
    let r = post_form(&app.http, app.url(&docs), &form)
        .header("origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    // The session cookie alone (no bearer, no Origin) does not carry a multipart body.
    let cookie = app.token_cookie().await;
    let r = post_form(&reqwest::Client::new(), app.url(&docs), &form)
        .header("cookie", cookie.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    // With our own Origin it is taken (and refused only for its file type).
    let r = post_form(&reqwest::Client::new(), app.url(&docs), &form)
        .header("cookie", cookie)
        .header("origin", format!("http://{}", app.addr))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 415);
    // Multipart anywhere else is still a 415.
    let r = post_form(&app.http, app.url("/api/kb"), &form).send().await.unwrap();
    assert_eq!(r.status(), 415);
    app.stop().await;
}

#[tokio::test]
async fn the_agent_tool_cites_its_sources_as_source_snapshots() {
    let mock = boardsmith::llm::mock::MockLlm::start(
        serde_json::from_value(json!({"turns": [
            {"match": {"has_tool_results": false}, "steps": [{"type": "tool_call", "name": "knowledge_search", "arguments": {"query": "cocoa harvest"}}]},
            {"steps": [{"type": "text", "text": "Cocoa rose on poor harvests."}]}
        ]}))
        .unwrap(),
        0,
    )
    .await
    .unwrap();
    let url = format!("http://{}", mock.addr);
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let app = spawn_app_with(dir, false, |c| c.llm = Some(llm_config(Some(&url)))).await;
    let kb = make_kb(&app, "commodities").await;
    let (s, _) = app
        .post(&format!("/api/kb/{kb}/documents"), json!({"title": "Cocoa", "text": "Cocoa futures doubled after poor harvests in Ghana."}))
        .await;
    assert_eq!(s, 201);
    let r = app
        .http
        .post(app.url("/api/query"))
        .json(&json!({"agentKey": "analystKb", "message": "Why did cocoa rise?"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let events = crate::support::sse_events(r).await;
    let kinds: Vec<&str> = events.iter().map(|(_, k, _)| k.as_str()).collect();
    let result = kinds.iter().position(|k| *k == "tool.result").expect("a tool result");
    assert_eq!(kinds[result + 1], "source.snapshot", "{kinds:?}");
    let snap = &events[result + 1].2;
    assert_eq!(snap["title"], "Cocoa");
    assert!(snap["sourceId"].as_str().unwrap().starts_with("doc_"), "{snap}");
    assert_eq!(kinds.iter().filter(|k| **k == "source.snapshot").count(), 1, "one per document");
    app.stop().await;
}

/// Recall@5 on the labeled set, BM25 alone and hybrid with the mock's embeddings.
#[tokio::test]
async fn recall_at_5_on_the_labeled_set() {
    let set = LabeledSet::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kb"))
        .unwrap();
    assert!(set.docs.len() >= 30 && set.queries.len() >= 20);
    let mock = boardsmith::llm::mock::MockLlm::start(Default::default(), 0).await.unwrap();
    let url = format!("http://{}", mock.addr);
    let sdk = Arc::new(boardsmith::sdk::Sdk::new(crate::support::sdk_config()).unwrap());
    let mut recalls = Vec::new();
    for embedding in [None, Some("mock/mock-embed".to_owned())] {
        let dir = tempfile::tempdir().unwrap();
        let mut config = KnowledgeConfig::new(dir.path());
        config.embedding_model = embedding;
        let models = Arc::new(boardsmith::llm::Models::new(llm_config(Some(&url))));
        let k = Knowledge::open(config, models, sdk.clone()).await.unwrap();
        let kb = k.create("labeled", "", None, Default::default()).await.unwrap().id;
        let slugs = set.ingest(&k, &kb).await.unwrap();
        let (recall, mode) = set.recall(&k, &kb, &slugs, 5).await.unwrap();
        recalls.push((mode, recall));
    }
    println!("recall@5: bm25 {:.3}, hybrid {:.3}", recalls[0].1, recalls[1].1);
    assert_eq!(recalls[0].0, SearchMode::Bm25);
    assert_eq!(recalls[1].0, SearchMode::Hybrid);
    assert!(recalls[0].1 >= 0.8, "BM25 recall@5 {}", recalls[0].1);
    assert!(recalls[1].1 >= 0.8, "hybrid recall@5 {}", recalls[1].1);
}
