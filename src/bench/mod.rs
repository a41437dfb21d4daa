//! `boardsmith bench`: speed targets, measured and printed as tables.
//!
//! `sandbox`: everything goes through the real pool (worker processes, pipes, the real SDK with
//! its cache), and beside it a Node `vm` reference and an in-process breakdown (realm creation,
//! runs without IPC, `utils.sma` without a worker). `dashboards`: live delivery, saves and idle sockets against a server child
//! process. `llm`: the provider layer against the mock upstream. [`gateway`] (its own module):
//! the agent gateway's `/api/query` stream and the OpenAI-compatible `/v1/chat/completions`
//! against the same mock. [`kb`]: knowledge-base ingestion, search latency and recall.
//! [`hardening`]: what one credential can make a server child hold (MCP sessions, trickled
//! bodies, a PDF bomb), RSS and `/healthz` throughout. [`alerts`]: the CPU of judging alert
//! rules, and a market move's time to the webhook.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use boa_engine::{Context, JsValue, js_string};
use futures::StreamExt;

use crate::cli;
use crate::sandbox::{Limits, PanelContext, Sandbox};
use crate::sdk::Sdk;

mod alerts;
mod cluster;
mod gateway;
mod hardening;
mod kb;
mod outage;
mod upstream;
pub use alerts::alerts;
pub use cluster::cluster;
pub use gateway::gateway;
pub use hardening::hardening;
pub use kb::kb;
pub use outage::outage;
pub use upstream::upstream;

/// The typical panel of the targets: two sdk calls in parallel, then an indicator.
pub const TYPICAL_PANEL: &str = "const [k, posts] = await Promise.all([
  sdk.market.getKline({ symbol: 'XAUUSD', timeframe: '1D', limit: 120 }),
  sdk.social.searchPosts({ query: 'gold', limit: 50 }),
]);
const ma = utils.sma(k.map(b => b.close), 20);
return { bars: k.map((b, i) => ({ ...b, ma20: ma[i] })), posts: posts.length };";

struct Row {
    name: &'static str,
    p50: Duration,
    p99: Duration,
    n: usize,
    target: &'static str,
}

fn percentiles(mut xs: Vec<Duration>) -> (Duration, Duration) {
    xs.sort();
    let at = |q: f64| xs[((xs.len() as f64 - 1.0) * q).round() as usize];
    (at(0.5), at(0.99))
}

fn fmt(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us < 1000.0 { format!("{us:.1} µs") } else { format!("{:.2} ms", us / 1000.0) }
}

async fn time_runs(sb: &Sandbox, code: &str, n: usize) -> anyhow::Result<Vec<Duration>> {
    let ctx = PanelContext::default();
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        sb.run_panel(code, &ctx).await.map_err(|e| anyhow::anyhow!("{e}"))?;
        out.push(t.elapsed());
    }
    Ok(out)
}

/// Runs the sandbox benchmark with `iterations` samples per latency row.
#[base::boxed]
pub async fn sandbox(iterations: usize) -> anyhow::Result<ExitCode> {
    let sdk = cli::load_sdk()?;
    let n = iterations.max(10);
    let mut rows = Vec::new();

    // Warm pool, warm cache: the steady state of panel refreshes.
    let sb = cli::start_sandbox(sdk.clone(), Some(2), Limits::default()).await?;
    time_runs(&sb, TYPICAL_PANEL, 50).await?;
    let (p50, p99) = percentiles(time_runs(&sb, TYPICAL_PANEL, n).await?);
    rows.push(Row {
        name: "typical panel, warm worker (pool)",
        p50,
        p99,
        n,
        target: "p50 ≤ 1.5 ms, p99 ≤ 4 ms",
    });
    let pool_p50 = p50;
    let (p50, p99) = percentiles(time_runs(&sb, "return 1;", n).await?);
    rows.push(Row { name: "trivial panel `return 1` (pool overhead)", p50, p99, n, target: "" });

    // The reference: the same panel in Node's `vm`, end to end through a pipe, same machine.
    let (kline, posts) = recorded_answers(&sdk).await?;
    let node_p50 = match node_reference(TYPICAL_PANEL, &kline, &posts, n).await? {
        Some(times) => {
            let (p50, p99) = percentiles(times);
            rows.push(Row {
                name: "typical panel, Node vm reference (pipe)",
                p50,
                p99,
                n,
                target: "",
            });
            Some(p50)
        }
        None => None,
    };

    // Cold: a new worker process for the run (spawn, init, realm, run).
    let cold_n = (n / 20).clamp(10, 100);
    let mut cold = Vec::with_capacity(cold_n);
    let mut spawn = Vec::with_capacity(cold_n);
    for _ in 0..cold_n {
        let t = Instant::now();
        let one = cli::start_sandbox(sdk.clone(), Some(1), Limits::default()).await?;
        spawn.push(t.elapsed());
        one.run_panel(TYPICAL_PANEL, &PanelContext::default())
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        cold.push(t.elapsed());
        one.shutdown().await;
    }
    let (p50, p99) = percentiles(cold);
    rows.push(Row {
        name: "typical panel, cold worker (spawn + run)",
        p50,
        p99,
        n: cold_n,
        target: "",
    });
    let (p50, p99) = percentiles(spawn);
    rows.push(Row {
        name: "worker respawn (spawn to ready)",
        p50,
        p99,
        n: cold_n,
        target: "≤ 30 ms",
    });

    // A deadline kill, then the next result (includes the replacement's start).
    let short = Limits { panel_deadline: Duration::from_millis(50), ..Limits::default() };
    let killer = cli::start_sandbox(sdk.clone(), Some(1), short).await?;
    let mut after_kill = Vec::with_capacity(cold_n);
    for _ in 0..cold_n {
        let _ = killer.run_panel("for (;;) {}", &PanelContext::default()).await;
        let t = Instant::now();
        killer
            .run_panel("return 1;", &PanelContext::default())
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        after_kill.push(t.elapsed());
    }
    killer.shutdown().await;
    let (p50, p99) = percentiles(after_kill);
    rows.push(Row { name: "kill at deadline → next result", p50, p99, n: cold_n, target: "" });

    let sma = sma_in_worker(&sb, n).await?;
    let sma_n = sma.len();
    let (p50, p99) = percentiles(sma);
    rows.push(Row {
        name: "utils.sma(10k points, 20), in a worker",
        p50,
        p99,
        n: sma_n,
        target: "≤ 60 µs",
    });
    let (p50, p99) = percentiles(sma_in_process(n)?);
    rows.push(Row { name: "utils.sma(10k points, 20), in-process", p50, p99, n, target: "" });

    let tput = throughput(&sdk, n).await?;
    sb.shutdown().await;

    crate::outln!("{:<44} {:>10} {:>10} {:>6}  target", "sandbox", "p50", "p99", "n");
    for r in &rows {
        crate::outln!(
            "{:<44} {:>10} {:>10} {:>6}  {}",
            r.name,
            fmt(r.p50),
            fmt(r.p99),
            r.n,
            r.target
        );
    }
    match node_p50 {
        Some(node) => crate::outln!(
            "{:<44} {:>9.2}x {:>10} {:>6}  ≤ 2.5x",
            "typical panel, pool p50 / Node p50",
            pool_p50.as_secs_f64() / node.as_secs_f64(),
            "",
            ""
        ),
        None => crate::outln!("{:<44} {:>10}  (node not found)", "typical panel, pool / Node", "-"),
    }
    crate::outln!(
        "{:<44} {:>10.0} {:>10} {:>6}  ≥ 900 runs/s",
        format!("throughput, typical panel ({} workers)", tput.workers),
        tput.rate,
        "runs/s",
        tput.runs
    );
    crate::outln!(
        "{:<44} {:>10} {:>10} {:>6}",
        "  CPU per run (server + workers)",
        fmt(tput.cpu),
        "",
        tput.runs
    );
    for (name, p50, p99) in engine_breakdown(n.min(500)).await? {
        crate::outln!("{name:<44} {:>10} {:>10} {:>6}", fmt(p50), fmt(p99), n.min(500));
    }
    crate::outln!("cores: {}", std::thread::available_parallelism().map_or(0, |n| n.get()));
    Ok(ExitCode::SUCCESS)
}

/// CPU time of this process plus its reaped children (the pool's workers once shut down).
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name: state is field 3; utime, stime, cutime, cstime are 14-17.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let ticks: u64 =
        rest.split_whitespace().skip(11).take(4).filter_map(|f| f.parse::<u64>().ok()).sum();
    Duration::from_secs_f64(ticks as f64 / rustix::param::clock_ticks_per_second() as f64)
}

/// What the throughput row measured.
struct Throughput {
    workers: usize,
    /// Successful runs per second.
    rate: f64,
    runs: usize,
    /// CPU time (this process and its workers, all threads) per run: what bounds throughput
    /// on a loaded machine, and much less noisy than the rate.
    cpu: Duration,
}

/// Throughput: the default pool (cores, at least 2), `max(2n, 500)` typical panels, two per
/// worker in flight.
async fn throughput(sdk: &std::sync::Arc<Sdk>, n: usize) -> anyhow::Result<Throughput> {
    let cpu = cpu_time();
    // Throughput: the default pool, as many panels as it takes.
    // The default pool size (cores, at least 2).
    let pool = cli::start_sandbox(sdk.clone(), None, Limits::default()).await?;
    let workers = pool.stats().workers;
    time_runs(&pool, TYPICAL_PANEL, 20).await?;
    let total = (n * 2).max(500);
    let t = Instant::now();
    let ctx = PanelContext::default();
    let ok = futures::stream::iter(0..total)
        .map(|_| pool.run_panel(TYPICAL_PANEL, &ctx))
        .buffer_unordered(workers * 2)
        .filter(|r| futures::future::ready(r.is_ok()))
        .count()
        .await;
    let secs = t.elapsed().as_secs_f64();
    // Shut down (workers killed and reaped) so their CPU time is counted.
    pool.shutdown().await;
    let cpu = (cpu_time().saturating_sub(cpu)) / u32::try_from(total).unwrap_or(u32::MAX);
    Ok(Throughput { workers, rate: ok as f64 / secs, runs: total, cpu })
}

/// The Node side of the reference row: one run per line, see `node_reference.js`.
const NODE_REFERENCE: &str = include_str!("node_reference.js");

/// What the typical panel's two `sdk` calls return (from the SDK's cache after the first).
async fn recorded_answers(
    sdk: &std::sync::Arc<Sdk>,
) -> anyhow::Result<(serde_json::Value, serde_json::Value)> {
    let kline = Sdk::call(
        sdk,
        "market",
        "getKline",
        serde_json::json!({"symbol": "XAUUSD", "timeframe": "1D", "limit": 120}),
    )
    .await?;
    let posts =
        Sdk::call(sdk, "social", "searchPosts", serde_json::json!({"query": "gold", "limit": 50}))
            .await?;
    Ok((kline.value.clone(), posts.value.clone()))
}

/// The typical panel in Node (`vm`, a fresh context per run) behind a pipe, timed from here
/// like the pool rows: message out, result line back and parsed. `None` without `node`.
async fn node_reference(
    code: &str,
    kline: &serde_json::Value,
    posts: &serde_json::Value,
    n: usize,
) -> anyhow::Result<Option<Vec<Duration>>> {
    use anyhow::Context as _;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    #[derive(serde::Serialize)]
    struct Run<'a> {
        code: &'a str,
        kline: &'a serde_json::Value,
        posts: &'a serde_json::Value,
    }
    let spawned = tokio::process::Command::new("node")
        .arg("-e")
        .arg(NODE_REFERENCE)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn();
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).context("starting node"),
    };
    let mut stdin = child.stdin.take().context("node stdin")?;
    let mut lines = BufReader::new(child.stdout.take().context("node stdout")?).lines();
    let warmup = 50;
    let mut out = Vec::with_capacity(n);
    for i in 0..warmup + n {
        let t = Instant::now();
        let mut line = serde_json::to_vec(&Run { code, kline, posts })?;
        line.push(b'\n');
        stdin.write_all(&line).await?;
        stdin.flush().await?;
        let reply = lines.next_line().await?.context("node exited")?;
        let value: serde_json::Value = serde_json::from_str(&reply)?;
        if let Some(e) = value.get("error") {
            anyhow::bail!("node reference failed: {e}");
        }
        if i >= warmup {
            out.push(t.elapsed());
        }
    }
    let _ = child.kill().await;
    Ok(Some(out))
}

/// `utils.sma(xs, 20)` over 10k points as panel code gets it, per call: a run making
/// `SMA_CALLS` calls minus the next run, the same but for the calls, so the worker's
/// allocator settings and garbage collector count as they do for panels. One pair per sample.
async fn sma_in_worker(sb: &Sandbox, n: usize) -> anyhow::Result<Vec<Duration>> {
    const SMA_CALLS: u32 = 50;
    let data =
        "const xs = Array.from({ length: 10000 }, (_, i) => 2000 + Math.sin(i * 0.37) * 25);";
    let with = format!(
        "{data} let n = 0; for (let i = 0; i < {SMA_CALLS}; i++) n += utils.sma(xs, 20).length; return n;"
    );
    let without = format!(
        "{data} let n = 0; for (let i = 0; i < {SMA_CALLS}; i++) n += xs.length; return n;"
    );
    time_runs(sb, &with, 5).await?;
    let pairs = (n / 10).clamp(20, 200);
    let mut out = Vec::with_capacity(pairs);
    for _ in 0..pairs {
        let calls = time_runs(sb, &with, 1).await?;
        let rest = time_runs(sb, &without, 1).await?;
        out.push(calls[0].saturating_sub(rest[0]) / SMA_CALLS);
    }
    Ok(out)
}

/// `utils.sma(xs, 20)` on a 10k-element JS array, called from JS in this process (the
/// kernel and its array conversion without a worker), timed per call.
fn sma_in_process(n: usize) -> anyhow::Result<Vec<Duration>> {
    let mut ctx = Context::default();
    let js = |e: boa_engine::JsError| anyhow::anyhow!("{e}");
    let utils = crate::sandbox::utils::install(&mut ctx).map_err(js)?;
    ctx.register_global_property(
        js_string!("utils"),
        utils,
        boa_engine::property::Attribute::all(),
    )
    .map_err(js)?;
    let xs: Vec<f64> = (0..10_000).map(|i| 2000.0 + (f64::from(i) * 0.37).sin() * 25.0).collect();
    let arr = JsValue::from_json(&serde_json::json!(xs), &mut ctx).map_err(js)?;
    ctx.register_global_property(js_string!("xs"), arr, boa_engine::property::Attribute::all())
        .map_err(js)?;
    let call = boa_engine::Script::parse(
        boa_engine::Source::from_bytes("utils.sma(xs, 20)"),
        None,
        &mut ctx,
    )
    .map_err(js)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        call.evaluate(&mut ctx).map_err(js)?;
        out.push(t.elapsed());
    }
    Ok(out)
}

/// In-process breakdown (no IPC): realm creation and the typical panel's run, with sdk replies
/// answered immediately from values fetched beforehand.
#[base::boxed]
pub async fn engine_breakdown(n: usize) -> anyhow::Result<Vec<(String, Duration, Duration)>> {
    use crate::sandbox::SdkHost;
    use crate::sandbox::engine::{self, Link, WorkerEnv};
    use crate::sandbox::protocol::JobKind;
    use std::rc::Rc;

    let sdk = cli::load_sdk()?;
    let (kline, posts) = recorded_answers(&sdk).await?;
    struct Local(serde_json::Value, serde_json::Value);
    impl Link for Local {
        fn call(
            &self,
            _: String,
            method: String,
            _: serde_json::Value,
        ) -> futures::channel::oneshot::Receiver<engine::Reply> {
            let (tx, rx) = futures::channel::oneshot::channel();
            let value = if method == "getKline" { &self.0 } else { &self.1 };
            let _ = tx.send(serde_json::value::to_raw_value(value).map_err(|e| e.to_string()));
            rx
        }
        fn reset(&self) {}
    }
    let env = WorkerEnv {
        catalog: Rc::new(SdkHost::catalog(sdk.as_ref())),
        spec: serde_json::Value::Null,
        limits: Limits::default(),
        link: Rc::new(Local(kline, posts)),
    };
    let mut out = Vec::new();
    for (name, kind) in
        [("realm creation: panel", JobKind::Panel), ("realm creation: builder", JobKind::Builder)]
    {
        let mut xs = Vec::with_capacity(n);
        for _ in 0..n {
            let t = Instant::now();
            let r = engine::prepare(kind, &env).map_err(|e| anyhow::anyhow!("{e}"))?;
            xs.push(t.elapsed());
            drop(r);
        }
        let (a, b) = percentiles(xs);
        out.push((name.to_owned(), a, b));
    }
    for (name, code) in [
        ("run: typical panel (in-process)", TYPICAL_PANEL),
        ("run: `return 1` (in-process)", "return 1;"),
    ] {
        let mut xs = Vec::with_capacity(n);
        let mut drops = Vec::with_capacity(n);
        for _ in 0..n {
            // As a worker does between jobs: the previous realm's garbage is collected first.
            boa_engine::gc::force_collect();
            let mut r =
                engine::prepare(JobKind::Panel, &env).map_err(|e| anyhow::anyhow!("{e}"))?;
            let t = Instant::now();
            let _ = engine::run(
                &mut r,
                code,
                serde_json::Value::Object(Default::default()),
                &env.limits,
            );
            xs.push(t.elapsed());
            let t = Instant::now();
            drop(r);
            drops.push(t.elapsed());
        }
        let (a, b) = percentiles(xs);
        out.push((name.to_owned(), a, b));
        let (a, b) = percentiles(drops);
        out.push(("  then drop realm".to_owned(), a, b));
    }
    Ok(out)
}

/// A server child process for the dashboard benchmark, killed on drop.
struct ServerChild {
    child: std::process::Child,
    addr: String,
    /// The child's `BOARDSMITH_TOKEN`: every API and WebSocket request sends it.
    token: String,
    _dir: TempDir,
}

impl ServerChild {
    /// Stops the child and keeps its data directory, to start another server on it.
    fn into_dir(mut self) -> TempDir {
        std::mem::replace(&mut self._dir, TempDir(std::path::PathBuf::new()))
    }

    /// An HTTP client that sends the child's token.
    fn client(&self) -> anyhow::Result<reqwest::Client> {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(reqwest::header::AUTHORIZATION, format!("Bearer {}", self.token).parse()?);
        Ok(reqwest::Client::builder().default_headers(headers).build()?)
    }

    /// Creates a dashboard from `state`: its id and the created document (`data`).
    async fn create_dashboard(
        &self,
        http: &reqwest::Client,
        state: serde_json::Value,
    ) -> anyhow::Result<(String, serde_json::Value)> {
        self.create(http, serde_json::json!({ "state": state })).await
    }

    /// `POST /api/dashboards` with `body` (`{state}` or `{template}`): the new dashboard's id
    /// and the created document (`data`).
    async fn create(
        &self,
        http: &reqwest::Client,
        body: serde_json::Value,
    ) -> anyhow::Result<(String, serde_json::Value)> {
        let created: serde_json::Value = http
            .post(format!("http://{}/api/dashboards", self.addr))
            .json(&body)
            .send()
            .await?
            .json()
            .await?;
        let id = created["data"]["id"]
            .as_str()
            .ok_or_else(|| anyhow::anyhow!("create failed: {created}"))?
            .to_owned();
        Ok((id, created))
    }

    /// A signed-in WebSocket to the child's `/ws`.
    async fn connect(&self) -> anyhow::Result<Client> {
        use tokio_tungstenite::tungstenite::client::IntoClientRequest;
        // tungstenite zero-fills its read buffer before every read: at the 128 KiB default, a
        // thousand bench clients spent more CPU on memset than the server spent on sending.
        let config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
            .read_buffer_size(16 * 1024);
        let mut req = format!("ws://{}/ws", self.addr).into_client_request()?;
        req.headers_mut().insert("authorization", format!("Bearer {}", self.token).parse()?);
        Ok(tokio_tungstenite::connect_async_with_config(req, Some(config), false).await?.0)
    }
}

impl Drop for ServerChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A scratch directory removed on drop (no dev-dependency in the binary).
struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        if !self.0.as_os_str().is_empty() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn temp_dir(tag: &str) -> anyhow::Result<TempDir> {
    let dir =
        std::env::temp_dir().join(format!("boardsmith-{tag}-{}", uuid::Uuid::now_v7().simple()));
    std::fs::create_dir_all(&dir)?;
    Ok(TempDir(dir))
}

async fn start_server() -> anyhow::Result<ServerChild> {
    start_server_in(temp_dir("bench")?, &[]).await
}

/// Starts `boardsmith serve` with its data and catalog directories in `dir` (which may hold
/// agent files already, under `agents/`) and the extra environment `env`; returns once
/// `/healthz` answers.
async fn start_server_in(dir: TempDir, env: &[(&str, &str)]) -> anyhow::Result<ServerChild> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let addr = format!("127.0.0.1:{port}");
    let token = crate::access::ServerToken::generate().expose().to_owned();
    let child = std::process::Command::new(std::env::current_exe()?)
        .arg("serve")
        .env("BOARDSMITH_ADDR", &addr)
        .env("BOARDSMITH_TOKEN", &token)
        .env("BOARDSMITH_DATA", &dir.0)
        .env("AGENT_EXTERNAL_DIR", dir.0.join("agents"))
        .env("AGENT_TOOLS_EXTERNAL_DIR", dir.0.join("tools"))
        .env("AGENT_VIEWPORT_EXTERNAL_DIR", dir.0.join("viewports"))
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    let server = ServerChild { child, addr, token, _dir: dir };
    let http = reqwest::Client::new();
    for _ in 0..200 {
        if http.get(format!("http://{}/healthz", server.addr)).send().await.is_ok() {
            return Ok(server);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    anyhow::bail!("the server did not start")
}

fn rss_bytes(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("VmRSS:"))?.to_owned();
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(0, |kib| kib * 1024)
}

/// A 24-panel dashboard of realistic panels (candles with indicators, lines, tables).
fn bench_dashboard(panels: usize) -> serde_json::Value {
    let panels: Vec<serde_json::Value> = (0..panels)
        .map(|i| {
            serde_json::json!({
                "id": format!("panel-{i}"),
                "title": format!("Gold daily {i}: candles with MA20/MA60"),
                "type": "candlestick",
                "renderer": "lightweight-charts",
                "indicators": ["MA(20)", "MA(60)"],
                "dataSource": {"source": "market", "method": "getKline", "params": {"symbol": "XAUUSD"}},
                "layout": {"w": 1, "h": 2},
                "code": format!("const bars = await sdk.market.getKline({{ symbol: 'XAUUSD', timeframe: '1D', limit: {n} }});\n\
                    const closes = bars.map((b) => b.close);\n\
                    const ma20 = utils.sma(closes, 20);\n\
                    const ma60 = utils.sma(closes, 60);\n\
                    return bars.map((b, i) => ({{ ...b, ma20: ma20[i], ma60: ma60[i] }}));", n = 100 + i),
            })
        })
        .collect();
    serde_json::json!({"title": "Benchmark", "layout": {"columns": 4}, "panels": panels})
}

type Client =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Runs the dashboard benchmark: delivery latency to many subscribers, patch size, durable
/// saves/s, refresh time and idle-connection memory.
#[base::boxed]
pub async fn dashboards(
    subscribers: usize,
    rounds: usize,
    idle: usize,
) -> anyhow::Result<ExitCode> {
    use futures::SinkExt;
    use tokio_tungstenite::tungstenite::Message;
    let _ = rlimit::increase_nofile_limit(u64::MAX);
    // The server caps WebSockets; this benchmark holds more than the default on purpose.
    let websockets = (subscribers + idle + 16).to_string();
    let server =
        start_server_in(temp_dir("bench")?, &[("BOARDSMITH_MAX_WEBSOCKETS", &websockets)]).await?;
    let http = server.client()?;
    let base = format!("http://{}", server.addr);
    let (id, created) = server.create_dashboard(&http, bench_dashboard(24)).await?;
    let full_state_bytes = serde_json::to_string(&created["data"]["state"])?.len();

    // Subscribers, each recording when it sees each patch.
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(u64, Instant, usize)>();
    let mut readers = Vec::new();
    for _ in 0..subscribers {
        let mut ws = server.connect().await?;
        let sub = serde_json::json!({"type": "subscribe", "dashboardId": id}).to_string();
        ws.send(Message::Text(sub.into())).await?;
        let tx = tx.clone();
        readers.push(tokio::spawn(async move {
            while let Some(Ok(msg)) = futures::StreamExt::next(&mut ws).await {
                // Events start with their type: an O(1) filter keeps the client's cost low.
                if let Message::Text(t) = msg
                    && t.starts_with("{\"type\":\"dashboard.patch\"")
                {
                    let at = Instant::now();
                    let v: serde_json::Value = serde_json::from_str(&t).unwrap_or_default();
                    let _ = tx.send((v["version"].as_u64().unwrap_or(0), at, t.len()));
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;

    let mut latencies = Vec::with_capacity(rounds * subscribers);
    let mut patch_bytes = 0;
    // A few untimed rounds first warm the workers' caches and the connections.
    const WARMUP: usize = 3;
    for round in 0..rounds + WARMUP {
        // A one-panel change: its code.
        let code = format!(
            "async (s) => {{ s.panels[{}].code = s.panels[{}].code.replace(/limit: \\d+/, 'limit: {}'); return s; }}",
            round % 24,
            round % 24,
            150 + round
        );
        let t0 = Instant::now();
        let out: serde_json::Value = http
            .post(format!("{base}/api/tools/mutate"))
            .json(&serde_json::json!({"code": code, "dashboard_id": id}))
            .send()
            .await?
            .json()
            .await?;
        let version = round as u64 + 2;
        anyhow::ensure!(out["data"]["error"].is_null(), "mutate failed: {out}");
        let mut seen = 0;
        while seen < subscribers {
            let Some((v, at, len)) =
                tokio::time::timeout(Duration::from_secs(10), rx.recv()).await?
            else {
                break;
            };
            if v == version {
                if round >= WARMUP {
                    latencies.push(at.duration_since(t0));
                }
                patch_bytes = len;
                seen += 1;
            }
        }
    }
    for r in &readers {
        r.abort();
    }

    // Refresh of a 12-panel dashboard.
    let (twelve_id, _) = server.create_dashboard(&http, bench_dashboard(12)).await?;
    let mut refresh = Vec::new();
    for _ in 0..30 {
        let t = Instant::now();
        http.post(format!("{base}/api/dashboards/{twelve_id}/refresh"))
            .json(&serde_json::json!({}))
            .send()
            .await?;
        refresh.push(t.elapsed());
    }

    drop(server);
    // Idle connections, on a fresh server so earlier phases do not inflate its memory.
    let server = start_server().await?;
    let pid = server.child.id();
    let before = rss_bytes(pid);
    let mut idle_clients = Vec::with_capacity(idle);
    for _ in 0..idle {
        match server.connect().await {
            Ok(ws) => idle_clients.push(ws),
            Err(e) => {
                eprintln!("stopped opening connections at {}: {e}", idle_clients.len());
                break;
            }
        }
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = rss_bytes(pid);
    let held = idle_clients.len();
    drop(idle_clients);
    drop(server);

    let dir = temp_dir("saves")?;
    let saves_8 = crate::store::bench_saves(&dir.0, 8, 2.0).await?;
    let saves_64 = crate::store::bench_saves(&dir.0, 64, 2.0).await?;

    let (l50, l99) = percentiles(latencies.clone());
    let (r50, r99) = percentiles(refresh);
    crate::outln!("{:<52} {:>12} {:>12}  target", "dashboards", "p50", "p99");
    crate::outln!(
        "{:<52} {:>12} {:>12}  p99 ≤ 25 ms",
        format!(
            "mutate → patch delivered ({subscribers} subscribers, {} samples)",
            latencies.len()
        ),
        fmt(l50),
        fmt(l99)
    );
    crate::outln!(
        "{:<52} {:>12} {:>12}  ≤ 20 ms",
        "refresh of a 12-panel dashboard (REST, wall)",
        fmt(r50),
        fmt(r99)
    );
    crate::outln!(
        "{:<52} {:>12} {:>12}  ≤ 5%",
        "one-panel change: patch bytes vs full state",
        format!("{patch_bytes} B"),
        format!(
            "{:.1}% of {full_state_bytes} B",
            patch_bytes as f64 * 100.0 / full_state_bytes as f64
        )
    );
    crate::outln!(
        "{:<52} {:>12.0} {:>12.0}  ≥ 1,000/s",
        "durable saves/s (8 / 64 concurrent writers)",
        saves_8,
        saves_64
    );
    crate::outln!(
        "{:<52} {:>12} {:>12}  10,000 ≤ 300 MB",
        format!("idle WebSockets held: {held}"),
        format!("{} MB", after / 1_000_000),
        format!("+{} MB", after.saturating_sub(before) / 1_000_000)
    );
    Ok(ExitCode::SUCCESS)
}
/// One provider kind's figures.
struct LlmFigures {
    kind: &'static str,
    direct: Vec<Duration>,
    through: Vec<Duration>,
    ttfb_direct: Vec<Duration>,
    ttfe_through: Vec<Duration>,
    chunks_per_s: f64,
}

/// Chunks before the first text delta in each dialect's rendering of a text-only turn.
fn text_offset(kind: crate::llm::ProviderKind) -> usize {
    use crate::llm::ProviderKind;
    match kind {
        ProviderKind::Openai => 1,    // role chunk
        ProviderKind::Anthropic => 3, // message_start, ping, content_block_start
        ProviderKind::Ollama => 0,
    }
}

fn text_turn(chunks: usize, delay_ms: u64) -> crate::llm::mock::Turn {
    crate::llm::mock::Turn {
        delay_ms,
        steps: vec![crate::llm::mock::Step::Text { text: "x".repeat(chunks), chunk: Some(1) }],
        ..Default::default()
    }
}

fn endpoint(kind: crate::llm::ProviderKind, base: &str) -> (String, String) {
    use crate::llm::ProviderKind;
    match kind {
        ProviderKind::Openai => (format!("{base}/v1"), format!("{base}/v1/chat/completions")),
        ProviderKind::Anthropic => (base.to_owned(), format!("{base}/v1/messages")),
        ProviderKind::Ollama => (base.to_owned(), format!("{base}/api/chat")),
    }
}

async fn bench_llm_kind(
    kind: crate::llm::ProviderKind,
    label: &'static str,
    rounds: usize,
) -> anyhow::Result<LlmFigures> {
    use crate::llm::mock::{MockLlm, Script};
    use crate::llm::{ChatRequest, Message, ProviderSettings, StreamEvent};
    let paced = 64;
    let mock = MockLlm::start(Script { turns: vec![text_turn(paced, 2)] }, 0).await?;
    let (base_url, raw_url) = endpoint(kind, &mock.url());
    let provider = crate::llm::connect(ProviderSettings {
        key: label.to_owned(),
        kind,
        base_url,
        api_key: Some(crate::llm::ApiKey::new("bench")),
        family: crate::llm::Family::Generic,
        transport: crate::llm::http::Transport::default(),
    });
    let request = ChatRequest {
        model: "mock".into(),
        messages: vec![Message::user("go")],
        ..ChatRequest::default()
    };
    let body = raw_body(kind);
    let http = reqwest::Client::new();
    let offset = text_offset(kind);
    let mut figures = LlmFigures {
        kind: label,
        direct: vec![],
        through: vec![],
        ttfb_direct: vec![],
        ttfe_through: vec![],
        chunks_per_s: 0.0,
    };
    for _ in 0..rounds {
        // Direct: the raw body, chunk by chunk.
        let before = mock.sent().len();
        let resp = http.post(&raw_url).json(&body).send().await?;
        let mut bytes = resp.bytes_stream();
        let mut arrivals = Vec::new();
        while let Some(chunk) = futures::StreamExt::next(&mut bytes).await {
            chunk?;
            arrivals.push(Instant::now());
        }
        let sent = mock.sent()[before..].to_vec();
        for (s, a) in sent.iter().zip(&arrivals).skip(offset).take(paced) {
            figures.direct.push(a.saturating_duration_since(s.at));
        }
        // Through the provider: text deltas.
        let before = mock.sent().len();
        let mut events = provider.stream(request.clone());
        let mut deltas = Vec::new();
        while let Some(e) = futures::StreamExt::next(&mut events).await {
            match e {
                StreamEvent::TextDelta { .. } => deltas.push(Instant::now()),
                StreamEvent::Error(e) => anyhow::bail!("{label}: {e}"),
                _ => {}
            }
        }
        let sent = mock.sent()[before..].to_vec();
        for (s, a) in sent.iter().skip(offset).zip(&deltas) {
            figures.through.push(a.saturating_duration_since(s.at));
        }
    }
    // Time to first byte (direct) vs first event (provider), on an unpaced stream.
    mock.set_script(Script { turns: vec![text_turn(paced, 0)] });
    // Round 0 warms both clients' connection pools and is not recorded.
    for round in 0..=rounds {
        let t0 = Instant::now();
        let resp = http.post(&raw_url).json(&body).send().await?;
        let mut bytes = resp.bytes_stream();
        if let Some(chunk) = futures::StreamExt::next(&mut bytes).await {
            chunk?;
        }
        let ttfb = t0.elapsed();
        while futures::StreamExt::next(&mut bytes).await.is_some() {}
        let t0 = Instant::now();
        let mut events = provider.stream(request.clone());
        if let Some(StreamEvent::Error(e)) = futures::StreamExt::next(&mut events).await {
            anyhow::bail!("{label}: {e}");
        }
        if round > 0 {
            figures.ttfb_direct.push(ttfb);
            figures.ttfe_through.push(t0.elapsed());
        }
        while futures::StreamExt::next(&mut events).await.is_some() {}
    }
    // Throughput: an unpaced stream of many one-character deltas.
    let n = 50_000;
    mock.set_script(Script { turns: vec![text_turn(n, 0)] });
    let t0 = Instant::now();
    let mut events = provider.stream(request.clone());
    let mut count = 0usize;
    while let Some(e) = futures::StreamExt::next(&mut events).await {
        if matches!(e, StreamEvent::TextDelta { .. }) {
            count += 1;
        }
    }
    figures.chunks_per_s = count as f64 / t0.elapsed().as_secs_f64();
    mock.stop();
    Ok(figures)
}

fn raw_body(kind: crate::llm::ProviderKind) -> serde_json::Value {
    use crate::llm::ProviderKind;
    let messages = serde_json::json!([{"role": "user", "content": "go"}]);
    match kind {
        ProviderKind::Openai => {
            serde_json::json!({"model": "mock", "stream": true, "messages": messages})
        }
        ProviderKind::Anthropic => {
            serde_json::json!({"model": "mock", "stream": true, "max_tokens": 100, "messages": messages})
        }
        ProviderKind::Ollama => {
            serde_json::json!({"model": "mock", "stream": true, "messages": messages})
        }
    }
}

/// Runs the provider-layer benchmark against the mock upstream on loopback: added latency per
/// delta and time-to-first-event versus reading the mock directly, and parse throughput.
#[base::boxed]
pub async fn llm(rounds: usize) -> anyhow::Result<ExitCode> {
    use crate::llm::ProviderKind;
    let mut all = Vec::new();
    for (kind, label) in [
        (ProviderKind::Openai, "openai"),
        (ProviderKind::Anthropic, "anthropic"),
        (ProviderKind::Ollama, "ollama"),
    ] {
        all.push(bench_llm_kind(kind, label, rounds).await?);
    }
    crate::outln!(
        "{:<52} {:>12} {:>12}  target",
        "llm provider layer (vs reading the mock directly)",
        "p50",
        "p99"
    );
    for f in all {
        let (d50, d99) = percentiles(f.direct.clone());
        let (t50, t99) = percentiles(f.through.clone());
        let added = |a: Duration, b: Duration| {
            format!("{:.1} µs", (a.as_secs_f64() - b.as_secs_f64()) * 1e6)
        };
        crate::outln!(
            "{:<52} {:>12} {:>12}  p50 ≤ 20 µs, p99 ≤ 200 µs",
            format!("{}: added latency per delta ({} deltas)", f.kind, f.through.len()),
            added(t50, d50),
            added(t99, d99)
        );
        let (f50, f99) = percentiles(f.ttfb_direct.clone());
        let (e50, e99) = percentiles(f.ttfe_through.clone());
        crate::outln!(
            "{:<52} {:>12} {:>12}",
            format!("{}: added time to first event", f.kind),
            added(e50, f50),
            added(e99, f99)
        );
        crate::outln!(
            "{:<52} {:>12.0} {:>12}",
            format!("{}: parse throughput (deltas/s)", f.kind),
            f.chunks_per_s,
            ""
        );
    }
    Ok(ExitCode::SUCCESS)
}
