//! Images in chat over real HTTP: `POST /api/uploads` and its limits, `GET /api/uploads/{id}`,
//! queries with images reaching the mock upstream in each dialect's form (and again from chat
//! memory, which keeps only references), `request.upload` on the stream and in the history,
//! refusals that name the field, and an OpenAI client's `image_url` parts on `/v1`. The
//! uploads' cases run on each backend: files in the data directory, and a PostgreSQL database
//! of their own (a shared store keeps uploads and chats in it).

use std::sync::Arc;

use base64::Engine as _;
use boardsmith::llm::mock::{Dialect, Match, MockLlm, Script, Step, Turn};
use serde_json::{Value, json};
use sha2::Digest as _;

use crate::gateway_query::streamed_text;
use crate::support::pg::TestDb;
use crate::support::{self, TestApp, sse_events};

/// A PNG signature and header start: all the sniffer reads.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01";

fn reply(text: &str, has_image: bool) -> Turn {
    Turn {
        when: Match { has_image: Some(has_image), ..Match::default() },
        steps: vec![Step::Text { text: text.into(), chunk: None }],
        ..Turn::default()
    }
}

/// Runs `test` with uploads in files, then in PostgreSQL (the database it is given).
async fn on_each_backend<F, Fut>(test: F)
where
    F: Fn(Option<TestDb>) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    eprintln!("backend: files");
    test(None).await;
    eprintln!("backend: postgres");
    test(Some(TestDb::new().await)).await;
}

async fn sql_client(db: &TestDb) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(conn);
    client
}

/// Three providers on one mock (OpenAI, Anthropic and Ollama wire), a vision and a text-only
/// model, an agent per model, and a small upload limit; the store in `db` when given.
async fn app_with(mock: &MockLlm, db: Option<&TestDb>) -> TestApp {
    let url = mock.url();
    // One provider block: short timeouts, no retries, no key.
    let provider = |key: &str, kind: &str, base: &str, default: &str, models: &str| {
        format!(
            "[providers.{key}]\nkind = \"{kind}\"\nbase_url = \"{base}\"\nrequires_key = false\n\
             default_model = \"{default}\"\n{models}\n\
             timeouts = {{ connect = 1, first_byte = 5, idle = 5 }}\nretry = {{ max_retries = 0 }}\n\n"
        )
    };
    let vision = |id: &str| format!("{{ id = \"{id}\", context_window = 32000, vision = true }}");
    let text = [
        provider(
            "oa",
            "openai",
            &format!("{url}/v1"),
            "seeing",
            &format!(
                "models = [{}, {{ id = \"blind\", context_window = 32000 }}]",
                vision("seeing")
            ),
        ),
        provider("an", "anthropic", &url, "claude-sonnet-4-5", ""),
        provider("ol", "ollama", &url, "llava", &format!("models = [{}]", vision("llava"))),
    ]
    .concat();
    let llm = boardsmith::llm::config::LlmConfig::parse(
        &text,
        std::path::Path::new("test.toml"),
        &|_| None,
    )
    .unwrap();
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let agents = dir.path().join("agents");
    std::fs::create_dir_all(&agents).unwrap();
    for (key, provider, model) in [
        ("seer", "oa", "seeing"),
        ("blindAgent", "oa", "blind"),
        ("seerAnthropic", "an", "claude-sonnet-4-5"),
        ("seerOllama", "ol", "llava"),
    ] {
        let agent = json!({"providerKey": provider, "model": model, "mode": "PLAIN",
            "plain": {"systemPrompt": "Describe what you see."}});
        std::fs::write(agents.join(format!("{key}.json")), agent.to_string()).unwrap();
    }
    let database_url = db.map(|db| db.url.clone());
    support::spawn_app_with(dir, false, move |c| {
        c.llm = Some(llm);
        c.uploads.max_bytes = 64;
        c.database_url = database_url;
    })
    .await
}

async fn upload(app: &TestApp, mime: &str, bytes: &[u8]) -> (u16, Value) {
    upload_named(app, mime, bytes, "chart.png").await
}

async fn upload_named(app: &TestApp, mime: &str, bytes: &[u8], name: &str) -> (u16, Value) {
    let r = app
        .http
        .post(app.url(&format!("/api/uploads?name={name}")))
        .header("content-type", mime)
        .body(bytes.to_vec())
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.json().await.unwrap())
}

async fn query(app: &TestApp, body: Value) -> (u16, Vec<(String, String, Value)>, Value) {
    let r = app.http.post(app.url("/api/query")).json(&body).send().await.unwrap();
    let status = r.status().as_u16();
    if status == 200 {
        (status, sse_events(r).await, Value::Null)
    } else {
        (status, Vec::new(), r.json().await.unwrap())
    }
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[tokio::test]
async fn uploads_are_checked_stored_by_hash_and_served_back() {
    on_each_backend(uploads_are_checked_stored_by_hash_and_served_back_on).await;
}

async fn uploads_are_checked_stored_by_hash_and_served_back_on(db: Option<TestDb>) {
    let mock = MockLlm::start(Script::default(), 0).await.unwrap();
    let app = app_with(&mock, db.as_ref()).await;
    let sha: String = sha2::Sha256::digest(PNG).iter().map(|b| format!("{b:02x}")).collect();

    let (status, body) = upload(&app, "image/png", PNG).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["data"],
        json!({"id": sha, "mimeType": "image/png", "sizeBytes": PNG.len(), "sha256": sha,
               "name": "chart.png"})
    );
    let r = app.http.get(app.url(&format!("/api/uploads/{sha}"))).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "image/png");
    assert_eq!(r.headers()["x-content-type-options"], "nosniff");
    assert_eq!(r.bytes().await.unwrap().as_ref(), PNG);
    // A file in the data directory, or a row of the shared store and no file.
    let file = app.dir.path().join("uploads").join(&sha);
    match &db {
        None => assert!(file.is_file()),
        Some(db) => {
            let sql = "SELECT name, content FROM uploads WHERE id = $1";
            let row = sql_client(db).await.query_one(sql, &[&sha]).await.unwrap();
            assert_eq!(
                (row.get::<_, String>(0), row.get::<_, Vec<u8>>(1)),
                ("chart.png".into(), PNG.to_vec())
            );
            assert!(!file.exists());
        }
    }
    // The same image again is the same upload, under its latest name.
    let (status, body) = upload_named(&app, "image/png", PNG, "again.png").await;
    assert_eq!(
        (status, &body["data"]["id"], &body["data"]["name"]),
        (200, &json!(sha), &json!("again.png"))
    );

    // Over the limit (64 bytes here): 413 naming it.
    let big = [PNG, &[0u8; 64]].concat();
    let (status, body) = upload(&app, "image/png", &big).await;
    assert_eq!((status, &body["data"]["limit"]), (413, &json!(64)), "{body}");
    // A type that is not an image we take, content that is not the declared type, a
    // CORS-simple type (the guard): 415.
    for (mime, bytes) in [("image/svg+xml", PNG), ("image/jpeg", PNG), ("text/plain", PNG)] {
        let (status, body) = upload(&app, mime, bytes).await;
        assert_eq!(status, 415, "{mime}: {body}");
    }
    let (status, body) = upload(&app, "image/gif", PNG).await;
    assert_eq!(status, 415, "{body}");
    assert!(body["msg"].as_str().unwrap().contains("not image/gif"), "{body}");
    // Unknown and malformed ids.
    let (status, _) = app.get(&format!("/api/uploads/{}", "0".repeat(64))).await;
    assert_eq!(status, 404);
    let (status, _) = app.get("/api/uploads/..%2Ftoken").await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn an_uploaded_image_reaches_the_model_in_each_dialect_and_again_from_memory() {
    on_each_backend(an_uploaded_image_reaches_the_model_on).await;
}

async fn an_uploaded_image_reaches_the_model_on(db: Option<TestDb>) {
    let mock = MockLlm::start(
        Script { turns: vec![reply("I see a chart.", true), reply("No image here.", false)] },
        0,
    )
    .await
    .unwrap();
    let app = app_with(&mock, db.as_ref()).await;
    let (_, up) = upload(&app, "image/png", PNG).await;
    let id = up["data"]["id"].as_str().unwrap().to_owned();

    let (status, events, body) = query(
        &app,
        json!({"message": "build me this", "agentKey": "seer", "images": [{"uploadId": id}]}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let types: Vec<&str> = events.iter().map(|(_, t, _)| t.as_str()).collect();
    assert_eq!(&types[..3], ["request.query", "request.upload", "chat.start"], "{types:?}");
    let upload_event = &events[1].2;
    assert_eq!(
        upload_event["upload"],
        json!({"type": "image", "name": "chart.png", "sizeBytes": PNG.len(),
               "mimeType": "image/png", "sha256": id})
    );
    assert_eq!(upload_event["requestId"], events[0].2["requestId"]);
    assert_eq!(streamed_text(&events), "I see a chart.");
    let sent = mock.requests().last().unwrap().body.clone();
    let user = sent["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        user["content"],
        json!([
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{}", b64(PNG))}},
            {"type": "text", "text": "build me this"},
        ])
    );

    // The next query of the chat: the image comes back from the upload, not from the chat
    // file, which holds only the reference.
    let chat_id = events[2].2["chatId"].as_str().unwrap().to_owned();
    let (status, events, _) =
        query(&app, json!({"message": "thanks", "agentKey": "seer", "chatId": chat_id})).await;
    assert_eq!(status, 200);
    assert_eq!(streamed_text(&events), "No image here.");
    let sent = mock.requests().last().unwrap().body.clone();
    assert!(sent.to_string().contains(&b64(PNG)), "{sent}");
    // The chat as stored: its file, or its rows of the shared store.
    let chat_files: Vec<String> = match &db {
        None => walk(app.dir.path())
            .into_iter()
            .filter(|p| p.file_name().is_some_and(|n| n == format!("{chat_id}.json").as_str()))
            .map(|p| std::fs::read_to_string(p).unwrap())
            .collect(),
        Some(db) => {
            let sql =
                "SELECT string_agg(line, E'\\n' ORDER BY id) FROM chat_runs WHERE chat_id = $1";
            let row = sql_client(db).await.query_one(sql, &[&chat_id]).await.unwrap();
            vec![row.get(0)]
        }
    };
    assert_eq!(chat_files.len(), 1);
    assert!(chat_files.iter().any(|f| f.contains(&id)), "the reference is stored");
    assert!(!chat_files.iter().any(|f| f.contains(&b64(PNG))), "the bytes are not");
    // Continued by an agent whose model cannot see: the image becomes a note.
    let (status, _, body) =
        query(&app, json!({"message": "thanks", "agentKey": "blindAgent", "chatId": chat_id}))
            .await;
    assert_eq!(status, 200, "{body}");
    let sent = mock.requests().last().unwrap().body.to_string();
    assert!(
        sent.contains("[the user attached an image here]") && !sent.contains(&b64(PNG)),
        "{sent}"
    );
    // The history shows the image where the live stream had it.
    let (_, chat) = app.get(&format!("/api/chat?chatId={chat_id}")).await;
    let history: Vec<&str> = chat["data"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(&history[..2], ["request.query", "request.upload"], "{history:?}");

    // Anthropic: a base64 image block; Ollama: the message's `images`.
    for (agent, dialect) in [("seerAnthropic", Dialect::Anthropic), ("seerOllama", Dialect::Ollama)]
    {
        let (status, events, body) = query(
            &app,
            json!({"message": "and this", "agentKey": agent, "images": [{"uploadId": id}]}),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(streamed_text(&events), "I see a chart.", "{agent}");
        let sent = mock.requests().last().unwrap().clone();
        assert_eq!(sent.dialect, dialect);
        let user = sent.body["messages"].as_array().unwrap().last().unwrap().clone();
        match dialect {
            Dialect::Anthropic => assert_eq!(
                user["content"][0],
                json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(PNG)}})
            ),
            _ => assert_eq!(
                user,
                json!({"role": "user", "content": "and this", "images": [b64(PNG)]})
            ),
        }
    }
}

#[tokio::test]
async fn image_refusals_come_before_the_run_and_name_the_field() {
    on_each_backend(image_refusals_come_before_the_run_on).await;
}

async fn image_refusals_come_before_the_run_on(db: Option<TestDb>) {
    let mock = MockLlm::start(Script::default(), 0).await.unwrap();
    let app = app_with(&mock, db.as_ref()).await;
    let (_, up) = upload(&app, "image/png", PNG).await;
    let id = up["data"]["id"].as_str().unwrap().to_owned();
    let png = json!({"uploadId": id});
    let cases = [
        (json!({"agentKey": "blindAgent", "images": [png]}), "images", "no `vision`"),
        (
            json!({"agentKey": "seer", "images": [{"uploadId": "0".repeat(64)}]}),
            "images[0].uploadId",
            "no upload",
        ),
        (
            json!({"agentKey": "seer", "images": [png, {"url": "http://example.com/a.png"}]}),
            "images[1].url",
            "https",
        ),
        (
            json!({"agentKey": "seer", "images": [{"url": "https://a.example/x.png", "uploadId": id}]}),
            "images[0]",
            "exactly one",
        ),
        (
            json!({"agentKey": "seerOllama", "images": [{"url": "https://a.example/x.png"}]}),
            "images[0].url",
            "Ollama",
        ),
        (json!({"agentKey": "seer", "images": [png, png, png, png, png]}), "images", "at most 4"),
        (json!({"agentKey": "seer", "busy": "steer", "images": [png]}), "images", "steers"),
    ];
    for (extra, param, says) in cases {
        let mut body = json!({"message": "build me this"});
        body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        let (status, _, answer) = query(&app, body).await;
        assert_eq!(status, 400, "{extra}: {answer}");
        assert_eq!(answer["data"]["param"], param, "{answer}");
        assert!(answer["msg"].as_str().unwrap().contains(says), "{answer}");
    }
    assert!(mock.requests().is_empty(), "no refused query reached the model");
}

#[tokio::test]
async fn an_openai_client_sends_image_url_parts_to_a_vision_model_only() {
    let mock =
        MockLlm::start(Script { turns: vec![reply("A PNG.", true), reply("Nothing.", false)] }, 0)
            .await
            .unwrap();
    let app = app_with(&mock, None).await;
    let data_url = format!("data:image/png;base64,{}", b64(PNG));
    let body = |model: &str| {
        json!({"model": model, "messages": [{"role": "user", "content": [
            {"type": "text", "text": "What is this?"},
            {"type": "image_url", "image_url": {"url": data_url, "detail": "low"}},
        ]}]})
    };
    let (status, answer) = app.post("/v1/chat/completions", body("oa/seeing")).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["choices"][0]["message"]["content"], "A PNG.");
    let sent = mock.requests().last().unwrap().body.clone();
    assert_eq!(sent["messages"][0]["content"][0]["image_url"]["url"], data_url.as_str());

    let (status, answer) = app.post("/v1/chat/completions", body("oa/blind")).await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer["error"]["param"], "messages[0].content[1]", "{answer}");
    assert_eq!(mock.requests().len(), 1);
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// A PNG of `size` bytes, distinct per `seed` (the sniffer reads only the signature).
fn png_of(size: usize, seed: u8) -> Vec<u8> {
    let mut v = PNG.to_vec();
    v.resize(size, seed);
    v
}

async fn upload_with(client: &reqwest::Client, app: &TestApp, bytes: &[u8]) -> (u16, Value) {
    let r = client
        .post(app.url("/api/uploads?name=x.png"))
        .header("content-type", "image/png")
        .body(bytes.to_vec())
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.json().await.unwrap())
}

/// Whether `GET /api/uploads/{id}` serves it.
async fn served(app: &TestApp, bytes: &[u8]) -> bool {
    let r = app.http.get(app.url(&format!("/api/uploads/{}", sha(bytes)))).send().await.unwrap();
    r.status() == 200
}

async fn delete_with(client: &reqwest::Client, app: &TestApp, id: &str) -> (u16, Value) {
    let r = client.delete(app.url(&format!("/api/uploads/{id}"))).send().await.unwrap();
    (r.status().as_u16(), r.json().await.unwrap())
}

fn sha(bytes: &[u8]) -> String {
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

#[tokio::test]
async fn uploads_are_held_to_a_quota_and_a_keys_share_and_deleted_by_their_uploader() {
    on_each_backend(uploads_quota_share_and_delete_on).await;
}

async fn uploads_quota_share_and_delete_on(db: Option<TestDb>) {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let database_url = db.as_ref().map(|db| db.url.clone());
    // 2,000 bytes in all, a key at most half of it.
    let app = support::spawn_app_with(dir, false, move |c| {
        c.uploads.max_bytes = 4_096;
        c.uploads.quota_bytes = 2_000;
        c.uploads.key_share_percent = 50;
        c.database_url = database_url;
    })
    .await;
    let mut keys = Vec::new();
    for name in ["a", "b"] {
        let (status, key) =
            app.post("/api/keys", json!({"name": name, "scopes": ["agents"]})).await;
        assert_eq!(status, 201, "{key}");
        keys.push(support::authed_client(key["data"]["key"].as_str().unwrap()));
    }
    let (owner, a, b) = (&app.http, &keys[0], &keys[1]);
    let stored = || async {
        let mut sizes = Vec::new();
        for bytes in [png_of(800, 1), png_of(600, 2), png_of(500, 3), png_of(700, 4)] {
            if served(&app, &bytes).await {
                sizes.push(bytes.len());
            }
        }
        sizes
    };

    assert_eq!(upload_with(owner, &app, &png_of(800, 1)).await.0, 200);
    assert_eq!(upload_with(a, &app, &png_of(600, 2)).await.0, 200);
    // Past the key's share (600 + 500 > 1,000): 507, nothing stored.
    let (status, body) = upload_with(a, &app, &png_of(500, 3)).await;
    assert_eq!(status, 507, "{body}");
    assert_eq!(body["data"], json!({"used": 600, "needed": 500, "limit": 1000}), "{body}");
    assert!(body["msg"].as_str().unwrap().contains("BOARDSMITH_UPLOAD_KEY_SHARE_PERCENT"));
    // Past the total (1,400 + 700 > 2,000), even for the owner: 507, nothing stored.
    let (status, body) = upload_with(owner, &app, &png_of(700, 4)).await;
    assert_eq!(status, 507, "{body}");
    assert_eq!(body["data"], json!({"used": 1400, "needed": 700, "limit": 2000}), "{body}");
    assert!(body["msg"].as_str().unwrap().contains("BOARDSMITH_UPLOAD_QUOTA_BYTES"));
    assert_eq!(stored().await, [800, 600]);
    if db.is_none() {
        let files = std::fs::read_dir(app.dir.path().join("uploads")).unwrap().count();
        assert_eq!(files, 4, "two uploads, each a file and its metadata");
    }

    // Another key cannot delete a's upload; unknown ids are 404; a deletes its own.
    let mine = sha(&png_of(600, 2));
    let (status, body) = delete_with(b, &app, &mine).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(stored().await, [800, 600], "still there");
    assert_eq!(delete_with(a, &app, &"0".repeat(64)).await.0, 404);
    let (status, body) = delete_with(a, &app, &mine).await;
    assert_eq!((status, &body["data"]["deleted"]), (200, &json!(mine)), "{body}");
    assert_eq!(stored().await, [800]);
    // Its share is free again.
    assert_eq!(upload_with(a, &app, &png_of(500, 3)).await.0, 200);

    // The same image held by two: one key's delete leaves it to the other; the owner (or an
    // admin key) deletes it outright.
    let shared = png_of(300, 5);
    assert_eq!(upload_with(a, &app, &shared).await.0, 200);
    assert_eq!(upload_with(b, &app, &shared).await.0, 200);
    assert_eq!(delete_with(a, &app, &sha(&shared)).await.0, 200);
    assert!(served(&app, &shared).await, "b's still");
    assert_eq!(delete_with(a, &app, &sha(&shared)).await.0, 403, "no longer a's");
    assert_eq!(delete_with(owner, &app, &sha(&shared)).await.0, 200);
    assert!(!served(&app, &shared).await);
    assert_eq!(delete_with(owner, &app, &sha(&png_of(800, 1))).await.0, 200);
    assert_eq!(delete_with(owner, &app, &sha(&png_of(800, 1))).await.0, 404);
    app.stop().await;
}

#[tokio::test]
async fn a_deleted_chat_takes_its_memory_and_the_images_only_it_used() {
    on_each_backend(a_deleted_chat_takes_its_memory_and_images_on).await;
}

async fn a_deleted_chat_takes_its_memory_and_images_on(db: Option<TestDb>) {
    let mock = MockLlm::start(
        Script { turns: vec![reply("I see a chart.", true), reply("No image here.", false)] },
        0,
    )
    .await
    .unwrap();
    let app = app_with(&mock, db.as_ref()).await;
    let (_, up) = upload(&app, "image/png", PNG).await;
    let shared = up["data"]["id"].as_str().unwrap().to_owned();
    let only: Vec<u8> = [PNG, b"x"].concat();
    let (_, up) = upload(&app, "image/png", &only).await;
    let mine = up["data"]["id"].as_str().unwrap().to_owned();
    // Chat A uses both images; chat B the first one too.
    let ask = |chat: &str, images: Vec<&str>| {
        let images: Vec<Value> = images.iter().map(|id| json!({"uploadId": id})).collect();
        json!({"message": "what is this", "agentKey": "seer", "chatId": chat, "images": images})
    };
    let (status, _, body) = query(&app, ask("chat-a", vec![&shared, &mine])).await;
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = query(&app, ask("chat-b", vec![&shared])).await;
    assert_eq!(status, 200, "{body}");

    let r = app.http.delete(app.url("/api/chats/chat-a")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let deleted: Value = r.json().await.unwrap();
    assert_eq!(deleted["data"], json!({"chatId": "chat-a", "uploads": [mine]}), "{deleted}");
    // Gone from the list, the history and the store; the image chat B uses stays.
    let (_, chats) = app.get("/api/chats").await;
    let ids: Vec<&str> =
        chats["data"].as_array().unwrap().iter().map(|c| c["chatId"].as_str().unwrap()).collect();
    assert_eq!(ids, ["chat-b"]);
    assert_eq!(app.get("/api/chat?chatId=chat-a").await.0, 404);
    let status = |id: String| {
        let url = app.url(&format!("/api/uploads/{id}"));
        let http = app.http.clone();
        async move { http.get(url).send().await.unwrap().status().as_u16() }
    };
    assert_eq!(status(mine.clone()).await, 404);
    assert_eq!(status(shared.clone()).await, 200);
    match &db {
        Some(db) => {
            let sql = sql_client(db).await;
            let rows = sql
                .query_one("SELECT count(*) FROM chat_runs WHERE chat_id = 'chat-a'", &[])
                .await
                .unwrap();
            assert_eq!(rows.get::<_, i64>(0), 0, "no row of the chat is left");
        }
        None => {
            let files = walk(app.dir.path());
            assert!(!files.iter().any(|f| f.ends_with("chat-a.json")), "{files:?}");
            assert!(files.iter().any(|f| f.ends_with("chat-b.json")), "{files:?}");
        }
    }
    // A second delete finds nothing.
    let r = app.http.delete(app.url("/api/chats/chat-a")).send().await.unwrap();
    assert_eq!(r.status(), 404);
    mock.stop();
    app.stop().await;
}
