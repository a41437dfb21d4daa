//! Shared helpers for the black-box tests: a real sandbox pool (worker processes of the built
//! binary) over the real SDK, plus a `test` source with controllable latency and failures.
#![allow(dead_code)]

pub mod node;
/// One copy for the store's unit tests and these.
#[path = "../../crates/store/src/test_db.rs"]
pub mod pg;
pub mod smtp;
pub mod upstream;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use boardsmith::provenance::Provenance;
use boardsmith::sandbox::{Limits, Sandbox, SandboxConfig, SdkAnswer, SdkFailure, SdkHost};
use boardsmith::sdk::{Sdk, SdkConfig};
use boardsmith::server::connections::ServerLimits;
use futures::future::BoxFuture;
use serde_json::{Value, json};

/// The binary under test; its hidden `sandbox-worker` subcommand is the worker.
pub fn program() -> std::path::PathBuf {
    env!("CARGO_BIN_EXE_boardsmith").into()
}

/// The `.js` files of a directory of the repository, sorted by name.
pub fn js_files(dir: &str) -> Vec<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "js"))
        .collect();
    files.sort();
    files
}

/// A fixed "now" so builtin data is reproducible.
pub fn asof() -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339("2026-11-20T12:00:00Z")
        .unwrap()
        .with_timezone(&chrono::Utc)
}

/// The SDK tests use: embedded specs, a pinned clock, offline (tests never reach real hosts;
/// a test that wants a live provider builds its own SDK pointed at a loopback server).
pub fn sdk_config() -> SdkConfig {
    SdkConfig { asof: Some(asof()), offline: true, ..SdkConfig::default() }
}

/// The SDK of a server whose every provider is at the loopback `origin` (the only host
/// allowed out; unknown paths answer 404, so the start-up check never reaches a real host),
/// with nothing cached: every run reaches the provider.
pub fn sdk_at(origin: &str) -> SdkConfig {
    SdkConfig {
        asof: Some(asof()),
        outbound_allow: vec![origin.to_owned()],
        env: boardsmith::sdk::provider::base_url_vars(
            &boardsmith::sdk::Registry::embedded(&|_| true).unwrap(),
        )
        .into_iter()
        .map(|v| (v, origin.to_owned()))
        .collect(),
        cache_bytes: Some(0),
        ..SdkConfig::default()
    }
}

/// The real SDK with [`sdk_config`].
pub fn sdk() -> Arc<Sdk> {
    Arc::new(Sdk::new(sdk_config()).unwrap())
}

/// Host: the real SDK plus `sdk.test.sleep({ms})`, `sdk.test.echo(params)`,
/// `sdk.test.fail({message})`.
pub struct TestHost {
    pub sdk: Arc<Sdk>,
    pub test_calls: AtomicU32,
}

impl SdkHost for TestHost {
    fn catalog(&self) -> BTreeMap<String, Vec<String>> {
        let mut c = self.sdk.catalog();
        c.insert("test".into(), vec!["sleep".into(), "echo".into(), "fail".into()]);
        c
    }

    fn spec(&self) -> Value {
        SdkHost::spec(self.sdk.as_ref())
    }

    /// `sdk.test.sleep` plays a provider that does not answer.
    fn waited_on(&self, source: &str, method: &str) -> Option<boardsmith::outage::Outage> {
        if (source, method) != ("test", "sleep") {
            return self.sdk.waited_on(source, method);
        }
        let cause = boardsmith::outage::Cause::Timeout;
        Some(boardsmith::outage::Outage::new("test", "Test", cause, "sdk.test.sleep was asleep"))
    }

    fn call(
        self: Arc<Self>,
        source: String,
        method: String,
        params: Value,
    ) -> BoxFuture<'static, Result<Arc<SdkAnswer>, SdkFailure>> {
        if source != "test" {
            return self.sdk.clone().call(source, method, params);
        }
        self.test_calls.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            let value = match method.as_str() {
                "sleep" => {
                    let ms = params["ms"].as_u64().unwrap_or(0);
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    json!({ "slept": ms })
                }
                "echo" => params,
                _ => {
                    let message = params["message"].as_str().unwrap_or("test failure");
                    return Err(SdkFailure::call(message));
                }
            };
            let provenance = Provenance {
                provider: "test".into(),
                demo: false,
                as_of: None,
                fetched_at: 0,
                url: None,
            };
            Ok(Arc::new(SdkAnswer::new(value, provenance)))
        })
    }
}

/// A started pool and its host.
pub struct TestSandbox {
    pub sandbox: Sandbox,
    pub host: Arc<TestHost>,
}

impl std::ops::Deref for TestSandbox {
    type Target = Sandbox;
    fn deref(&self) -> &Sandbox {
        &self.sandbox
    }
}

/// Starts a pool with `workers` workers and the given limits.
pub async fn sandbox_with(workers: usize, limits: Limits) -> TestSandbox {
    let host = Arc::new(TestHost { sdk: sdk(), test_calls: AtomicU32::new(0) });
    let mut config = SandboxConfig::new(program());
    config.workers = workers;
    config.limits = limits;
    let sandbox = Sandbox::start(config, host.clone()).await.expect("sandbox starts");
    TestSandbox { sandbox, host }
}

/// Two workers, default limits.
pub async fn sandbox() -> TestSandbox {
    sandbox_with(2, Limits::default()).await
}

/// A running server on 127.0.0.1:0 with its own data directory.
pub struct TestApp {
    pub addr: std::net::SocketAddr,
    pub app: Arc<boardsmith::app::App>,
    pub http: reqwest::Client,
    pub dir: Arc<tempfile::TempDir>,
    /// What the HTTP edge was started with.
    pub server_config: boardsmith::server::ServerConfig,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    server: Option<tokio::task::JoinHandle<()>>,
}

/// Starts the real server (store in a temp dir, pinned clock, no templates unless asked).
pub async fn spawn_app() -> TestApp {
    spawn_app_in(Arc::new(tempfile::tempdir().unwrap()), false).await
}

/// Starts the server over an existing data directory (restart tests).
pub async fn spawn_app_in(dir: Arc<tempfile::TempDir>, load_templates: bool) -> TestApp {
    spawn_app_with(dir, load_templates, |_| {}).await
}

/// The lines a child prints after its first.
pub type ChildLines = tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>;

/// Starts `cmd` (stdout piped, stderr dropped, killed when dropped) and waits, 30 s at most,
/// for the first line it prints (what it says once it listens): the child, that line and the
/// lines after it. `what` names the program in the panic.
pub async fn spawn_until_line(
    cmd: &mut tokio::process::Command,
    what: &str,
) -> (tokio::process::Child, String, ChildLines) {
    use tokio::io::AsyncBufReadExt as _;
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("{what} does not start: {e}"));
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .unwrap_or_else(|_| panic!("{what} printed nothing within 30 s"))
        .unwrap()
        .unwrap_or_else(|| panic!("{what} exited before its first line"));
    (child, line, lines)
}

/// Starts the server with the test defaults, then `configure` applied to its config.
pub async fn spawn_app_with(
    dir: Arc<tempfile::TempDir>,
    load_templates: bool,
    configure: impl FnOnce(&mut boardsmith::app::AppConfig),
) -> TestApp {
    spawn_app_with_limits(dir, load_templates, configure, ServerLimits::from_env()).await
}

/// [`spawn_app_with`] whose HTTP edge has `limits` (and the embedded web app).
pub async fn spawn_app_with_limits(
    dir: Arc<tempfile::TempDir>,
    load_templates: bool,
    configure: impl FnOnce(&mut boardsmith::app::AppConfig),
    limits: ServerLimits,
) -> TestApp {
    let server_config = boardsmith::server::ServerConfig {
        web: boardsmith::server::web::WebFiles::Embedded,
        limits,
    };
    let mut config = boardsmith::app::AppConfig::from_env(program());
    config.data_dir = dir.path().to_path_buf();
    config.sdk = sdk_config();
    config.sandbox.workers = 2;
    config.sandbox.limits = Limits::default();
    config.live.tick = Duration::from_millis(100);
    config.load_templates = load_templates;
    config.catalog = boardsmith::agent::catalog::CatalogConfig {
        watch: false,
        ..boardsmith::agent::catalog::CatalogConfig::in_dir(dir.path())
    };
    config.memory = Some(boardsmith::agent::memory::MemoryConfig::new(dir.path()));
    // No model unless a test gives one (never the developer's API keys).
    config.llm = Some(llm_config(None));
    // No mail relay from the developer's boardsmith.toml either.
    config.alerting.read_file = false;
    config.agent_tools = boardsmith::agent::tools::ToolsConfig::new(
        dir.path().join("work"),
        dir.path().join("agents"),
    );
    // Auth on with a generated token in the temp dir (never the developer's settings).
    config.access = Some(boardsmith::access::AccessConfig::default());
    configure(&mut config);
    let app = boardsmith::app::App::start(config).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let token = app.shutdown_token();
    let server = tokio::spawn({
        let app = app.clone();
        let server_config = server_config.clone();
        async move {
            boardsmith::server::run(listener, app, server_config, async move {
                let _ = rx.await;
                token.cancel();
            })
            .await
            .unwrap();
        }
    });
    let http = match &app.token {
        Some(token) => authed_client(token.expose()),
        None => reqwest::Client::new(),
    };
    TestApp { addr, app, http, dir, server_config, stop: Some(tx), server: Some(server) }
}

/// The `name=value` of a response's `Set-Cookie`.
pub fn cookie_pair(r: &reqwest::Response) -> String {
    let set = r.headers()[reqwest::header::SET_COOKIE].to_str().unwrap();
    set.split(';').next().unwrap().to_owned()
}

/// A client that sends `Authorization: Bearer <token>` on every request.
pub fn authed_client(token: &str) -> reqwest::Client {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(
        reqwest::header::AUTHORIZATION,
        reqwest::header::HeaderValue::from_str(&format!("Bearer {token}")).unwrap(),
    );
    reqwest::Client::builder().default_headers(headers).build().unwrap()
}

/// A WebSocket client.
pub type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// GET, returning (status, envelope).
    pub async fn get(&self, path: &str) -> (u16, Value) {
        let r = self.http.get(self.url(path)).send().await.unwrap();
        (r.status().as_u16(), r.json().await.unwrap())
    }

    /// POST a JSON body, returning (status, envelope).
    pub async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        let r = self.http.post(self.url(path)).json(&body).send().await.unwrap();
        (r.status().as_u16(), r.json().await.unwrap())
    }

    /// PUT a JSON body, returning (status, envelope).
    pub async fn put(&self, path: &str, body: Value) -> (u16, Value) {
        let r = self.http.put(self.url(path)).json(&body).send().await.unwrap();
        (r.status().as_u16(), r.json().await.unwrap())
    }

    /// Calls a tool; panics unless the envelope says ok. Returns `data`.
    /// Calls a dashboard tool over REST: its output. A refused change (the output has an
    /// `error`) must come as a 422 whose `msg` is that error, anything else as a 200.
    pub async fn tool(&self, name: &str, input: Value) -> Value {
        let (status, body) = self.post(&format!("/api/tools/{name}"), input).await;
        let refused = body["data"]["error"].is_string();
        assert_eq!(status, if refused { 422 } else { 200 }, "{body}");
        if refused {
            assert_eq!(body["msg"], body["data"]["error"], "{body}");
            assert_ne!(body["code"], 0, "{body}");
        }
        body["data"].clone()
    }

    /// The server token (tests run with auth on).
    pub fn token(&self) -> &str {
        self.app.token.as_ref().expect("auth is on in tests").expose()
    }

    /// Signs in through the server token's link (as the first admin): the session cookie as
    /// `name=value`, for a `Cookie` header.
    pub async fn token_cookie(&self) -> String {
        let plain =
            reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        let r = plain.get(self.url(&format!("/?token={}", self.token()))).send().await.unwrap();
        assert_eq!(r.status(), 303);
        cookie_pair(&r)
    }

    /// Signs `username` in with `password`: the session cookie as `name=value`.
    pub async fn password_cookie(&self, username: &str, password: &str) -> String {
        let r = reqwest::Client::new()
            .post(self.url("/api/session"))
            .json(&json!({"username": username, "password": password}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "signing {username} in");
        cookie_pair(&r)
    }

    /// The status of a password sign-in.
    pub async fn password_cookie_status(&self, username: &str, password: &str) -> u16 {
        reqwest::Client::new()
            .post(self.url("/api/session"))
            .json(&json!({"username": username, "password": password}))
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    }

    /// PATCH a JSON body with the server token, returning (status, envelope).
    pub async fn patch(&self, path: &str, body: Value) -> (u16, Value) {
        let r = self.http.patch(self.url(path)).json(&body).send().await.unwrap();
        (r.status().as_u16(), r.json().await.unwrap())
    }

    /// A client that sends this session cookie (and no bearer) on every request.
    pub fn cookie_client(&self, cookie: &str) -> reqwest::Client {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(reqwest::header::COOKIE, cookie.parse().unwrap());
        reqwest::Client::builder().default_headers(headers).build().unwrap()
    }

    /// Makes a user through the admin API with the server token: their id.
    pub async fn add_user(&self, username: &str, password: &str, role: &str) -> String {
        let (status, body) = self
            .post(
                "/api/admin/users",
                json!({"username": username, "password": password, "role": role}),
            )
            .await;
        assert_eq!(status, 201, "{body}");
        body["data"]["id"].as_str().unwrap().to_owned()
    }

    /// A signed-in WebSocket handshake request for `/ws`.
    pub fn ws_request(&self) -> tokio_tungstenite::tungstenite::handshake::client::Request {
        use tokio_tungstenite::tungstenite::client::IntoClientRequest;
        let mut req = format!("ws://{}/ws", self.addr).into_client_request().unwrap();
        if let Some(token) = &self.app.token {
            req.headers_mut()
                .insert("authorization", format!("Bearer {}", token.expose()).parse().unwrap());
        }
        req
    }

    /// Opens a signed-in WebSocket to `/ws`.
    pub async fn ws(&self) -> Ws {
        tokio_tungstenite::connect_async(self.ws_request()).await.unwrap().0
    }

    /// Opens a WebSocket and subscribes to a dashboard; returns the socket and the snapshot.
    pub async fn subscribe(&self, dashboard_id: &str) -> (Ws, Value) {
        let mut ws = self.ws().await;
        ws_send(&mut ws, json!({"type": "subscribe", "dashboardId": dashboard_id})).await;
        // Every connection hears `dashboards.changed` for any write, so writers racing the
        // subscription may get theirs in before the snapshot.
        let snap = loop {
            let msg = ws_next(&mut ws).await;
            if msg["type"] != "dashboards.changed" {
                break msg;
            }
        };
        assert_eq!(snap["type"], "dashboard.snapshot", "{snap}");
        (ws, snap)
    }

    /// Stops the server gracefully and the app (final commit).
    pub async fn stop(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(s) = self.server.take() {
            let _ = s.await;
        }
        self.app.stop().await;
    }
}

/// Sends a JSON message.
pub async fn ws_send(ws: &mut Ws, v: Value) {
    use futures::SinkExt;
    ws.send(tokio_tungstenite::tungstenite::Message::Text(v.to_string().into())).await.unwrap();
}

/// The next JSON message (fails after 10 s).
pub async fn ws_next(ws: &mut Ws) -> Value {
    use futures::StreamExt;
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(10), ws.next())
            .await
            .expect("a message within 10 s")
            .expect("socket open")
            .unwrap();
        if let tokio_tungstenite::tungstenite::Message::Text(t) = msg {
            return serde_json::from_str(&t).unwrap();
        }
    }
}

/// Reads messages until one matches `pred`, returning it and those skipped.
pub async fn ws_until(ws: &mut Ws, pred: impl Fn(&Value) -> bool) -> (Value, Vec<Value>) {
    let mut skipped = Vec::new();
    loop {
        let m = ws_next(ws).await;
        if pred(&m) {
            return (m, skipped);
        }
        skipped.push(m);
    }
}

/// An LLM transport with short waits for loopback tests: connect 1 s, the given first-byte and
/// idle timeouts, `retries` retries starting 10 ms apart (at most 2 s).
pub fn llm_transport(
    first_byte: Duration,
    idle: Duration,
    retries: usize,
) -> boardsmith::llm::http::Transport {
    use boardsmith::llm::http::{InteractionLog, RetryPolicy, Timeouts, Transport};
    Transport::new(
        Timeouts { connect: Duration::from_secs(1), first_byte, idle },
        RetryPolicy {
            max_retries: retries,
            min_delay: Duration::from_millis(10),
            max_delay: Duration::from_secs(2),
        },
        InteractionLog::default(),
    )
}

/// An LLM configuration read from nothing but its arguments: with `mock_url`, one
/// OpenAI-compatible provider `mock` (model `mock-model`, 32k context, short timeouts, no
/// retries) pointing at it; without, no provider at all.
pub fn llm_config(mock_url: Option<&str>) -> boardsmith::llm::config::LlmConfig {
    let text = match mock_url {
        None => String::new(),
        Some(url) => format!(
            r#"
[providers.mock]
kind = "openai"
base_url = "{url}/v1"
requires_key = false
default_model = "mock-model"
models = [{{ id = "mock-model", context_window = 32000 }}]
timeouts = {{ connect = 1, first_byte = 5, idle = 5 }}
retry = {{ max_retries = 0 }}
"#
        ),
    };
    boardsmith::llm::config::LlmConfig::parse(&text, std::path::Path::new("test.toml"), &|_| None)
        .unwrap()
}

/// The events of an SSE response body: (`id`, `event`, parsed `data`) per frame, until the end.
pub async fn sse_events(response: reqwest::Response) -> Vec<(String, String, Value)> {
    read_sse(None, response, |_, _| None).await
}

/// [`sse_events`] of a run that waits for the user: when `answer` names a waiting tool for an
/// event (`(toolId, params)`), the stream must stay quiet for 300 ms (the run waits), then
/// `params` are submitted through `POST /api/submit`.
pub async fn sse_answering(
    app: &TestApp,
    response: reqwest::Response,
    answer: impl FnMut(&str, &Value) -> Option<(String, Value)>,
) -> Vec<(String, String, Value)> {
    read_sse(Some(app), response, answer).await
}

async fn read_sse(
    app: Option<&TestApp>,
    response: reqwest::Response,
    mut answer: impl FnMut(&str, &Value) -> Option<(String, Value)>,
) -> Vec<(String, String, Value)> {
    use eventsource_stream::Eventsource;
    use futures::StreamExt;
    let mut out: Vec<(String, String, Value)> = Vec::new();
    let mut stream = response.bytes_stream().eventsource();
    while let Some(frame) = tokio::time::timeout(Duration::from_secs(20), stream.next())
        .await
        .expect("an event within 20 s")
    {
        let frame = frame.unwrap();
        let data: Value = serde_json::from_str(&frame.data).unwrap();
        let reply = answer(&frame.event, &data);
        out.push((frame.id, frame.event, data));
        if let (Some(app), Some((tool_id, params))) = (app, reply) {
            let quiet = tokio::time::timeout(Duration::from_millis(300), stream.next()).await;
            assert!(quiet.is_err(), "the run waits for the user: {quiet:?}");
            let run_id = out.iter().find_map(|(_, t, d)| (t == "run.start").then(|| &d["runId"]));
            let body = json!({"runId": run_id, "toolId": tool_id, "payload": {"params": params}});
            let (status, body) = app.post("/api/submit", body).await;
            assert_eq!(status, 200, "{body}");
        }
    }
    out
}

/// A mock-model turn (used once) that calls tool `name` with `arguments`, the arguments
/// streamed in `fragments` pieces.
pub fn tool_call_turn(
    id: &str,
    name: &str,
    arguments: Value,
    fragments: usize,
) -> boardsmith::llm::mock::Turn {
    use boardsmith::llm::mock::{Step, Turn};
    Turn {
        steps: vec![Step::ToolCall {
            id: Some(id.into()),
            name: name.into(),
            arguments,
            fragments: Some(fragments),
        }],
        times: Some(1),
        ..Turn::default()
    }
}
