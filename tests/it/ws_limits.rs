//! The WebSocket's bounds under floods, black-box over loopback: message rate, size,
//! subscriptions and connections per server; `refresh`/`set_vars` coalescing per panel; variable
//! values per viewer; and, against a server child process, its memory and `/healthz` while one
//! client floods.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;

use crate::support::{self, TestApp, Ws, ws_next, ws_send, ws_until};

/// A dashboard with a `sym` select variable and two panels that show the value they ran with.
fn vars_dashboard() -> Value {
    slow_vars_dashboard(0)
}

/// [`vars_dashboard`] whose panels first count to `work` (a few ms per 100,000).
fn slow_vars_dashboard(work: u32) -> Value {
    let code = |p: &str| {
        format!(
            "let x = 0; for (let i = 0; i < {work}; i++) {{ x += i; }}\n\
             return [{{ panel: '{p}', sym: vars.sym }}];"
        )
    };
    json!({
        "title": "Vars",
        "layout": {"columns": 2},
        "variables": [{
            "name": "sym", "label": "Symbol", "type": "select",
            "options": ["XAUUSD", "XAGUSD", "BTCUSD"], "default": "XAUUSD"
        }],
        "panels": [
            {"id": "a", "title": "A", "type": "table", "renderer": "custom", "code": code("a")},
            {"id": "b", "title": "B", "type": "table", "renderer": "custom", "code": code("b")}
        ]
    })
}

async fn create(app: &TestApp, state: Value) -> String {
    let (status, body) = app.post("/api/dashboards", json!({ "state": state })).await;
    assert_eq!(status, 201, "{body}");
    body["data"]["id"].as_str().unwrap().to_owned()
}

/// A server whose message rate limit is out of the way (to flood the coalescing itself).
async fn unlimited_rate_app() -> TestApp {
    support::spawn_app_with(Arc::new(tempfile::tempdir().unwrap()), false, |c| {
        c.live.viewers.messages_per_second = 1_000_000;
        c.live.viewers.message_burst = 1_000_000;
    })
    .await
}

async fn connect(app: &TestApp) -> Ws {
    app.ws().await
}

/// Polls `/healthz` every 20 ms until stopped; returns the slowest answer (a failure counts as
/// an hour).
struct Probe {
    stop: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<(Duration, usize)>,
}

impl Probe {
    fn start(url: String) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let task = tokio::spawn({
            let stop = stop.clone();
            async move {
                let http = reqwest::Client::new();
                let (mut worst, mut n) = (Duration::ZERO, 0);
                while !stop.load(Ordering::Relaxed) {
                    let t = Instant::now();
                    let ok = tokio::time::timeout(Duration::from_secs(5), http.get(&url).send())
                        .await
                        .is_ok_and(|r| r.is_ok_and(|r| r.status() == 200));
                    let took = if ok { t.elapsed() } else { Duration::from_secs(3600) };
                    worst = worst.max(took);
                    n += 1;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                (worst, n)
            }
        });
        Self { stop, task }
    }

    async fn finish(self) -> (Duration, usize) {
        self.stop.store(true, Ordering::Relaxed);
        self.task.await.unwrap()
    }
}

/// Reads a socket in the background: messages arrive on a channel, the task ends with the
/// close frame.
struct Reader {
    rx: tokio::sync::mpsc::UnboundedReceiver<Value>,
    task: tokio::task::JoinHandle<Option<CloseFrame>>,
}

impl Reader {
    fn new(mut stream: futures::stream::SplitStream<Ws>) -> Self {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let task = tokio::spawn(async move {
            while let Ok(Some(msg)) =
                tokio::time::timeout(Duration::from_secs(30), stream.next()).await
            {
                match msg {
                    Ok(Message::Text(t)) => {
                        let _ = tx.send(serde_json::from_str(&t).unwrap());
                    }
                    Ok(Message::Close(frame)) => return frame,
                    Ok(_) => {}
                    Err(_) => break,
                }
            }
            None
        });
        Self { rx, task }
    }

    /// Messages until one matches `pred` (that one last).
    async fn until(&mut self, pred: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut got = Vec::new();
        loop {
            let m = tokio::time::timeout(Duration::from_secs(60), self.rx.recv())
                .await
                .expect("a message within 60 s")
                .expect("the socket is open");
            let done = pred(&m);
            got.push(m);
            if done {
                return got;
            }
        }
    }

    /// Messages until none came for `quiet`.
    async fn drain(&mut self, quiet: Duration) -> Vec<Value> {
        let mut got = Vec::new();
        while let Ok(Some(m)) = tokio::time::timeout(quiet, self.rx.recv()).await {
            got.push(m);
        }
        got
    }

    /// Everything until the socket closed, and the close frame.
    async fn finish(mut self) -> (Vec<Value>, Option<CloseFrame>) {
        let frame = self.task.await.unwrap();
        let mut got = Vec::new();
        while let Ok(m) = self.rx.try_recv() {
            got.push(m);
        }
        (got, frame)
    }
}

/// A message the server answers with an `error` after handling everything sent before it.
fn marker() -> Message {
    Message::Text(json!({"type": "marker"}).to_string().into())
}

/// Samples the live layer's counters every millisecond until stopped; returns the most runs
/// seen queued and running.
struct Sampler {
    stop: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<(usize, usize)>,
}

impl Sampler {
    fn start(app: &TestApp) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let live = app.app.live.clone();
        let task = tokio::spawn({
            let stop = stop.clone();
            async move {
                let (mut queued, mut running) = (0, 0);
                while !stop.load(Ordering::Relaxed) {
                    let s = live.stats();
                    queued = queued.max(s.queued_runs);
                    running = running.max(s.viewer_runs);
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                (queued, running)
            }
        });
        Self { stop, task }
    }

    async fn finish(self) -> (usize, usize) {
        self.stop.store(true, Ordering::Relaxed);
        self.task.await.unwrap()
    }
}

/// Waits until no viewer run is queued or running.
async fn idle(app: &TestApp) {
    let t = Instant::now();
    loop {
        let s = app.app.live.stats();
        if s.queued_runs == 0 && s.viewer_runs == 0 {
            return;
        }
        assert!(t.elapsed() < Duration::from_secs(30), "still busy: {s:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn fifty_thousand_refreshes_from_one_client_coalesce_per_panel() {
    let app = unlimited_rate_app().await;
    let id = create(&app, slow_vars_dashboard(300_000)).await;
    let (ws, _) = app.subscribe(&id).await;
    let (mut tx, rx) = ws.split();
    let mut reader = Reader::new(rx);
    let probe = Probe::start(app.url("/healthz"));
    idle(&app).await;
    let before = app.app.live.stats();
    let sampler = Sampler::start(&app);
    let started = Instant::now();
    let refresh = json!({"type": "refresh", "dashboardId": id}).to_string();
    for i in 0..50_000u32 {
        tx.feed(Message::Text(refresh.clone().into())).await.unwrap();
        if i.is_multiple_of(250) {
            tx.flush().await.unwrap();
        }
    }
    tx.send(marker()).await.unwrap();
    let got = reader.until(|m| m["type"] == "error").await;
    let handled = started.elapsed();
    idle(&app).await;
    let (most_queued, most_running) = sampler.finish().await;
    let after = app.app.live.stats();
    let (worst, probes) = probe.finish().await;
    let executed = after.executed - before.executed;
    eprintln!(
        "50,000 refreshes handled in {handled:?}: {executed} runs, at most {most_queued} queued \
         and {most_running} running; /healthz worst {worst:?} over {probes} probes"
    );
    // Two panels: at most one queued and one running per panel, ever.
    assert!((1..=2).contains(&most_queued), "{most_queued} runs queued");
    assert!((1..=2).contains(&most_running), "{most_running} runs in flight");
    assert!(executed >= 2, "the refreshes ran");
    assert!(executed < 5_000, "{executed} runs for 50,000 refresh messages");
    assert!(worst < Duration::from_secs(1), "/healthz took {worst:?}");
    assert!(got.iter().any(|m| m["type"] == "panel.data"));
    assert_eq!(got.iter().filter(|m| m["type"] == "error").count(), 1, "only the marker's");
    app.stop().await;
}

#[tokio::test]
async fn twenty_thousand_set_vars_run_a_bounded_number_of_times_and_the_last_values_win() {
    let app = unlimited_rate_app().await;
    let id = create(&app, slow_vars_dashboard(300_000)).await;
    let (ws, _) = app.subscribe(&id).await;
    let (mut tx, rx) = ws.split();
    let mut reader = Reader::new(rx);
    idle(&app).await;
    let before = app.app.live.stats();
    let sampler = Sampler::start(&app);
    let started = Instant::now();
    let syms = ["XAGUSD", "BTCUSD", "XAUUSD"];
    for i in 0..20_000 {
        let msg = json!({"type": "set_vars", "dashboardId": id, "vars": {"sym": syms[i % 3]}});
        tx.feed(Message::Text(msg.to_string().into())).await.unwrap();
        if i.is_multiple_of(250) {
            tx.flush().await.unwrap();
        }
    }
    let last = json!({"type": "set_vars", "dashboardId": id, "vars": {"sym": "BTCUSD"}});
    tx.send(Message::Text(last.to_string().into())).await.unwrap();
    tx.send(marker()).await.unwrap();
    let mut got = reader.until(|m| m["type"] == "error").await;
    let handled = started.elapsed();
    idle(&app).await;
    let (most_queued, most_running) = sampler.finish().await;
    got.extend(reader.drain(Duration::from_millis(500)).await);
    let executed = app.app.live.stats().executed - before.executed;
    eprintln!(
        "20,001 set_vars handled in {handled:?}: {executed} runs, at most {most_queued} queued \
         and {most_running} running"
    );
    assert!((1..=2).contains(&most_queued), "{most_queued} runs queued");
    assert!((1..=2).contains(&most_running), "{most_running} runs in flight");
    assert!(executed < 4_000, "{executed} runs for 20,001 set_vars");
    // The last snapshot carries the last values and every panel's latest data matches them.
    let at = got.iter().rposition(|m| m["type"] == "dashboard.snapshot").unwrap();
    let snap = &got[at];
    assert_eq!(snap["vars"], json!({"sym": "BTCUSD"}));
    for panel in ["a", "b"] {
        let latest = got[at..]
            .iter()
            .rev()
            .find(|m| m["panelId"] == panel && m["type"] == "panel.data")
            .map_or_else(|| snap["panels"][panel]["data"].clone(), |m| m["data"].clone());
        assert_eq!(latest, json!([{"panel": panel, "sym": "BTCUSD"}]), "{panel}");
    }
    app.stop().await;
}

#[tokio::test]
async fn a_client_over_its_message_rate_is_told_then_closed_with_a_reason() {
    let app = support::spawn_app().await;
    let id = create(&app, vars_dashboard()).await;
    let (ws, _) = app.subscribe(&id).await;
    let (mut tx, rx) = ws.split();
    let reader = Reader::new(rx);
    idle(&app).await;
    let before = app.app.live.stats();
    let refresh = json!({"type": "refresh", "dashboardId": id}).to_string();
    let mut sent = 0;
    for _ in 0..50_000 {
        if tx.send(Message::Text(refresh.clone().into())).await.is_err()
            || reader.task.is_finished()
        {
            break;
        }
        sent += 1;
    }
    let (got, frame) = reader.finish().await;
    let frame = frame.expect("a close frame");
    assert_eq!(u16::from(frame.code), boardsmith::server::ws::CLOSE_POLICY);
    assert!(frame.reason.contains("rate limit exceeded"), "{}", frame.reason);
    let errors: Vec<&Value> = got.iter().filter(|m| m["type"] == "error").collect();
    assert_eq!(errors.len(), 1, "one error per run of dropped messages: {errors:?}");
    assert!(errors[0]["message"].as_str().unwrap().contains("rate limit"), "{}", errors[0]);
    idle(&app).await;
    let executed = app.app.live.stats().executed - before.executed;
    eprintln!("closed after {sent} messages sent; {executed} runs");
    assert!(executed <= 2 * 66, "{executed} runs");
    // The server is fine and takes new connections.
    let (_ws, snap) = app.subscribe(&id).await;
    assert_eq!(snap["dashboardId"], id.as_str());
    assert_eq!(app.app.live.stats().viewers, 1);
    app.stop().await;
}

#[tokio::test]
async fn variables_set_by_one_viewer_change_only_its_own_view() {
    let app = support::spawn_app().await;
    let id = create(&app, vars_dashboard()).await;
    let (mut alice, snap) = app.subscribe(&id).await;
    assert_eq!(snap["vars"], json!({}));
    // The first results (with the defaults) follow the snapshot; Bob's snapshot has them.
    let mut seen = std::collections::BTreeSet::new();
    while seen.len() < 2 {
        let (d, _) = ws_until(&mut alice, |m| m["type"] == "panel.data").await;
        seen.insert(d["panelId"].as_str().unwrap().to_owned());
    }
    let (mut bob, snap) = app.subscribe(&id).await;
    assert_eq!(snap["panels"]["a"]["data"], json!([{"panel": "a", "sym": "XAUUSD"}]), "{snap}");

    // Alice picks silver: her new view's snapshot, then her data.
    ws_send(&mut alice, json!({"type": "set_vars", "dashboardId": id, "vars": {"sym": "XAGUSD"}}))
        .await;
    let (snap, _) = ws_until(&mut alice, |m| m["type"] == "dashboard.snapshot").await;
    assert_eq!(snap["vars"], json!({"sym": "XAGUSD"}));
    let mut seen = std::collections::BTreeMap::new();
    while seen.len() < 2 {
        let (d, _) = ws_until(&mut alice, |m| m["type"] == "panel.data").await;
        // Her `seq` kept growing across the move.
        assert!(d["seq"].as_u64().unwrap() > 1, "{d}");
        seen.insert(d["panelId"].as_str().unwrap().to_owned(), d["data"].clone());
    }
    for panel in ["a", "b"] {
        assert_eq!(seen[panel], json!([{"panel": panel, "sym": "XAGUSD"}]));
    }
    // Bob's view did not change: nothing came, and a refresh gives him gold still.
    let quiet = tokio::time::timeout(Duration::from_millis(500), ws_next(&mut bob)).await;
    assert!(quiet.is_err(), "bob got {quiet:?}");
    ws_send(&mut bob, json!({"type": "refresh", "dashboardId": id, "panelId": "a"})).await;
    let (d, _) = ws_until(&mut bob, |m| m["type"] == "panel.data").await;
    assert_eq!(d["data"], json!([{"panel": "a", "sym": "XAUUSD"}]));
    // ... which Alice does not see.
    let quiet = tokio::time::timeout(Duration::from_millis(500), ws_next(&mut alice)).await;
    assert!(quiet.is_err(), "alice got {quiet:?}");
    // REST shows the defaults' view.
    let (_, data) = app.get(&format!("/api/dashboards/{id}/data")).await;
    assert_eq!(data["data"]["panels"]["a"]["data"], json!([{"panel": "a", "sym": "XAUUSD"}]));

    // A third viewer choosing silver shares Alice's results: no run needed.
    let runs = app.app.live.stats().executed;
    let (mut carol, _) = app.subscribe(&id).await;
    ws_send(&mut carol, json!({"type": "set_vars", "dashboardId": id, "vars": {"sym": "XAGUSD"}}))
        .await;
    let (snap, _) = ws_until(&mut carol, |m| m["type"] == "dashboard.snapshot").await;
    assert_eq!(snap["panels"]["a"]["data"], json!([{"panel": "a", "sym": "XAGUSD"}]), "{snap}");
    assert_eq!(snap["panels"]["b"]["data"], json!([{"panel": "b", "sym": "XAGUSD"}]), "{snap}");
    idle(&app).await;
    assert_eq!(app.app.live.stats().executed, runs);
    // Back to the default: Bob's view again, and Alice still sees silver on a refresh.
    ws_send(&mut carol, json!({"type": "set_vars", "dashboardId": id, "vars": {"sym": "XAUUSD"}}))
        .await;
    let (snap, _) = ws_until(&mut carol, |m| m["type"] == "dashboard.snapshot").await;
    assert_eq!(snap["vars"], json!({}));
    ws_send(&mut alice, json!({"type": "refresh", "dashboardId": id, "panelId": "b"})).await;
    let (d, _) = ws_until(&mut alice, |m| m["type"] == "panel.data").await;
    assert_eq!(d["data"], json!([{"panel": "b", "sym": "XAGUSD"}]));

    // A REST refresh re-runs every view, each with its own values.
    let (status, _) =
        app.post(&format!("/api/dashboards/{id}/refresh"), json!({"panelId": "a"})).await;
    assert_eq!(status, 200);
    let (d, _) = ws_until(&mut alice, |m| m["type"] == "panel.data").await;
    assert_eq!(d["data"], json!([{"panel": "a", "sym": "XAGUSD"}]));
    let (d, _) = ws_until(&mut bob, |m| m["type"] == "panel.data" && m["panelId"] == "a").await;
    assert_eq!(d["data"], json!([{"panel": "a", "sym": "XAUUSD"}]));

    // Values the dashboard does not allow, and requests without a subscription, are refused.
    ws_send(&mut alice, json!({"type": "set_vars", "dashboardId": id, "vars": {"sym": "EVIL"}}))
        .await;
    let (e, _) = ws_until(&mut alice, |m| m["type"] == "error").await;
    assert!(e["message"].as_str().unwrap().contains("not a valid value"), "{e}");
    let mut stranger = connect(&app).await;
    ws_send(
        &mut stranger,
        json!({"type": "set_vars", "dashboardId": id, "vars": {"sym": "BTCUSD"}}),
    )
    .await;
    let e = ws_next(&mut stranger).await;
    assert!(e["message"].as_str().unwrap().contains("not subscribed"), "{e}");
    ws_send(&mut stranger, json!({"type": "refresh", "dashboardId": id})).await;
    let e = ws_next(&mut stranger).await;
    assert!(e["message"].as_str().unwrap().contains("not subscribed"), "{e}");
    app.stop().await;
}

#[tokio::test]
async fn subscriptions_per_connection_and_connections_per_server_are_capped() {
    let app = support::spawn_app_with(Arc::new(tempfile::tempdir().unwrap()), false, |c| {
        c.live.viewers.max_subscriptions = 3;
        c.live.viewers.max_viewers = 3;
    })
    .await;
    let mut ids = Vec::new();
    for _ in 0..4 {
        ids.push(create(&app, vars_dashboard()).await);
    }
    let mut ws = connect(&app).await;
    for id in &ids[..3] {
        ws_send(&mut ws, json!({"type": "subscribe", "dashboardId": id})).await;
        ws_until(&mut ws, |m| m["type"] == "dashboard.snapshot" && m["dashboardId"] == *id).await;
    }
    ws_send(&mut ws, json!({"type": "subscribe", "dashboardId": ids[3]})).await;
    let (e, _) = ws_until(&mut ws, |m| m["type"] == "error").await;
    assert!(e["message"].as_str().unwrap().contains("too many subscriptions"), "{e}");
    assert_eq!(app.app.live.subscribers(&ids[3]), 0);
    // Subscribing again to one it has is fine; after an unsubscribe the fourth fits.
    ws_send(&mut ws, json!({"type": "subscribe", "dashboardId": ids[0]})).await;
    ws_until(&mut ws, |m| m["type"] == "dashboard.snapshot" && m["dashboardId"] == ids[0]).await;
    ws_send(&mut ws, json!({"type": "unsubscribe", "dashboardId": ids[1]})).await;
    ws_send(&mut ws, json!({"type": "subscribe", "dashboardId": ids[3]})).await;
    ws_until(&mut ws, |m| m["type"] == "dashboard.snapshot" && m["dashboardId"] == ids[3]).await;

    // Three connections are all the server takes; the fourth upgrade is 503 with a reason.
    let _second = connect(&app).await;
    let third = connect(&app).await;
    let err = tokio_tungstenite::connect_async(app.ws_request()).await.unwrap_err();
    let tokio_tungstenite::tungstenite::Error::Http(response) = err else {
        panic!("expected an HTTP refusal, got {err:?}")
    };
    assert_eq!(response.status(), 503);
    let body: Value = serde_json::from_slice(response.body().as_deref().unwrap()).unwrap();
    assert!(body["msg"].as_str().unwrap().contains("too many connections"), "{body}");
    assert_eq!(app.app.live.stats().viewers, 3);
    // A place frees when a connection ends.
    drop(third);
    let t = Instant::now();
    let fourth = loop {
        if let Ok((ws, _)) = tokio_tungstenite::connect_async(app.ws_request()).await {
            break ws;
        }
        assert!(t.elapsed() < Duration::from_secs(10), "no place freed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    drop(fourth);
    app.stop().await;
}

#[tokio::test]
async fn a_message_over_the_size_limit_closes_with_1009_and_a_reason() {
    let app = support::spawn_app().await;
    let mut ws = connect(&app).await;
    let big = format!(
        "{{\"type\":\"subscribe\",\"dashboardId\":\"{}\"}}",
        "x".repeat(boardsmith::server::ws::MAX_MESSAGE)
    );
    ws.send(Message::Text(big.into())).await.unwrap();
    let frame = loop {
        match tokio::time::timeout(Duration::from_secs(10), ws.next()).await.unwrap() {
            Some(Ok(Message::Close(frame))) => break frame.expect("a close frame with a reason"),
            Some(Ok(_)) => {}
            other => panic!("expected a close frame, got {other:?}"),
        }
    };
    assert_eq!(u16::from(frame.code), boardsmith::server::ws::CLOSE_TOO_BIG);
    assert!(frame.reason.contains("message too big"), "{}", frame.reason);
    app.stop().await;
}

/// `boardsmith serve` as a child process, killed on drop.
struct Child {
    child: std::process::Child,
    addr: String,
    token: String,
    _dir: tempfile::TempDir,
}

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Child {
    async fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let addr = format!("127.0.0.1:{port}");
        let token = boardsmith::access::ServerToken::generate().expose().to_owned();
        let child = std::process::Command::new(support::program())
            .arg("serve")
            .env_clear()
            .env("BOARDSMITH_OFFLINE", "1")
            .env("BOARDSMITH_ADDR", &addr)
            .env("BOARDSMITH_TOKEN", &token)
            .env("BOARDSMITH_DATA", dir.path())
            .env("AGENT_EXTERNAL_DIR", dir.path().join("agents"))
            .env("AGENT_TOOLS_EXTERNAL_DIR", dir.path().join("tools"))
            .env("AGENT_VIEWPORT_EXTERNAL_DIR", dir.path().join("viewports"))
            .env("BOARDSMITH_WORKERS", "2")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let server = Self { child, addr, token, _dir: dir };
        let http = reqwest::Client::new();
        for _ in 0..400 {
            if http.get(format!("http://{}/healthz", server.addr)).send().await.is_ok() {
                return server;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the server did not start");
    }

    /// A signed-in WebSocket handshake request.
    fn ws_request(&self) -> tokio_tungstenite::tungstenite::handshake::client::Request {
        use tokio_tungstenite::tungstenite::client::IntoClientRequest;
        let mut req = format!("ws://{}/ws", self.addr).into_client_request().unwrap();
        req.headers_mut()
            .insert("authorization", format!("Bearer {}", self.token).parse().unwrap());
        req
    }

    fn rss_mb(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let kb: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap();
        kb / 1024
    }
}

/// Sends `total` messages from `make` as fast as one client can, reconnecting (and
/// resubscribing) whenever the server closes the connection, as an attacker would; returns the
/// number of connections used and the highest RSS seen.
async fn flood(
    server: &Child,
    id: &str,
    total: usize,
    make: impl Fn(usize) -> Value,
) -> (usize, u64) {
    let sent = AtomicU64::new(0);
    let mut connections = 0;
    let mut peak = 0;
    while (sent.load(Ordering::Relaxed) as usize) < total {
        let (ws, _) = tokio_tungstenite::connect_async(server.ws_request()).await.unwrap();
        connections += 1;
        let (mut tx, rx) = ws.split();
        let reader = Reader::new(rx);
        let sub = json!({"type": "subscribe", "dashboardId": id}).to_string();
        tx.send(Message::Text(sub.into())).await.unwrap();
        loop {
            let i = sent.fetch_add(1, Ordering::Relaxed) as usize;
            if i >= total {
                break;
            }
            if tx.feed(Message::Text(make(i).to_string().into())).await.is_err() {
                break;
            }
            if i.is_multiple_of(64) {
                peak = peak.max(server.rss_mb());
                if tx.flush().await.is_err() || reader.task.is_finished() {
                    break;
                }
            }
        }
        let _ = tx.send(Message::Close(None)).await;
        let _ = reader.finish().await;
    }
    (connections, peak)
}

#[tokio::test]
async fn a_server_child_keeps_its_memory_and_health_through_floods() {
    let server = Child::start().await;
    let http = support::authed_client(&server.token);
    let list: Value = http
        .get(format!("http://{}/api/dashboards", server.addr))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let gold = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["title"].as_str().unwrap().starts_with("Gold"))
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // Warm: every panel has run once.
    let (status, _) = http
        .get(format!("http://{}/api/dashboards/{gold}/data", server.addr))
        .send()
        .await
        .map(|r| (r.status().as_u16(), ()))
        .unwrap();
    assert_eq!(status, 200);
    let before = server.rss_mb();
    let probe = Probe::start(format!("http://{}/healthz", server.addr));
    let refresh = json!({"type": "refresh", "dashboardId": gold});
    let (conns, peak_refresh) = flood(&server, &gold, 50_000, |_| refresh.clone()).await;
    let syms = ["XAGUSD", "XAUUSD"];
    let (conns_vars, peak_vars) = flood(
        &server,
        &gold,
        20_000,
        |i| json!({"type": "set_vars", "dashboardId": gold, "vars": {"symbol": syms[i % 2]}}),
    )
    .await;
    let (worst, probes) = probe.finish().await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = server.rss_mb();
    eprintln!(
        "server RSS: {before} MB before; peak {peak_refresh} MB during 50,000 refreshes \
         ({conns} connections), {peak_vars} MB during 20,000 set_vars ({conns_vars} \
         connections); {after} MB 2 s after; /healthz worst {worst:?} over {probes} probes"
    );
    assert!(peak_refresh.max(peak_vars) < before + 200, "peak {peak_refresh}/{peak_vars} MB");
    assert!(after < before + 100, "{after} MB held after, {before} MB before");
    assert!(worst < Duration::from_secs(1), "/healthz took {worst:?}");
}
