//! `boardsmith bench gateway`: what the agent gateway's `POST /api/query` stream and the
//! OpenAI-compatible `POST /v1/chat/completions` add on top of their upstream, measured and
//! printed as a table.
//!
//! Three paths, one scripted [`MockLlm`] upstream on loopback inside this process, on a runtime
//! (threads) of its own like a remote upstream (see [`Upstream`]):
//! - gateway: this process → a `boardsmith serve` child (agent `bench`: PLAIN, provider `openai`
//!   pointed at the mock) → the mock, read as Event Model v2 frames (`content.delta`);
//! - v1: this process → the same child's `/v1/chat/completions` (model `openai/mock`) → the
//!   mock, read as OpenAI chunks;
//! - direct: this process → the mock's OpenAI endpoint, same script, read as its SSE chunks.
//!
//! Both are read by the same client (one reqwest client, HTTP/1.1 keep-alive, the same SSE
//! parser), so the client's own cost cancels out of the differences. Per-delta latency compares
//! the client's arrival time of delta `k` with the time the mock recorded sending the upstream
//! chunk of delta `k` (same process, same clock); each stream is matched to its upstream request
//! by a tag in the user message. "Added" is the difference of the two paths' percentiles.

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use eventsource_stream::Eventsource;
use futures::StreamExt;
use tokio::sync::Semaphore;
use tokio::sync::mpsc::UnboundedSender;

use super::{ServerChild, fmt, percentiles, rss_bytes, start_server_in, temp_dir, text_turn};
use crate::llm::mock::{Fault, MockLlm, Script, Step, Turn};

/// The agent the child server runs for every query.
const AGENT_KEY: &str = "bench";

/// Pacing of the concurrent phases: deltas per stream and the pause before each upstream chunk.
const PACED_DELTAS: usize = 64;
const PACE_MS: u64 = 20;
/// The largest gap between two deltas of a paced stream that still meets the target.
const MAX_GAP: Duration = Duration::from_millis(40);

/// Untimed requests per path before the timed ones (connection pools, lazy start-up).
const WARMUP: usize = 5;

/// Requests sent at once while opening many streams (the accept backlog is finite).
const OPENING: usize = 64;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Route {
    /// `POST /api/query` on the child server.
    Gateway,
    /// `POST /v1/chat/completions` on the child server.
    V1,
    /// `POST /v1/chat/completions` on the mock.
    Direct,
}

/// The client side: one HTTP client for both paths.
struct Target {
    http: reqwest::Client,
    query_url: String,
    v1_url: String,
    /// The child server's token (sent on the gateway and v1 paths).
    token: String,
    direct_url: String,
    next_tag: AtomicUsize,
}

/// What the client saw of one stream.
struct Trace {
    /// The tag in its user message (finds its upstream request in the mock's records).
    tag: usize,
    /// Just before the request was sent.
    t0: Instant,
    /// Arrival of each text delta.
    deltas: Vec<Instant>,
    /// Why it did not complete.
    error: Option<String>,
}

impl Trace {
    fn ttfd(&self) -> Option<Duration> {
        self.deltas.first().map(|d| d.duration_since(self.t0))
    }

    fn max_gap(&self) -> Duration {
        self.deltas.windows(2).map(|w| w[1].duration_since(w[0])).max().unwrap_or_default()
    }
}

impl Target {
    fn new(server: &ServerChild, mock: &MockLlm) -> anyhow::Result<Self> {
        let http = reqwest::Client::builder()
            .no_proxy()
            .http1_only()
            .tcp_nodelay(true)
            .pool_max_idle_per_host(usize::MAX)
            .build()?;
        Ok(Self {
            http,
            query_url: format!("http://{}/api/query", server.addr),
            v1_url: format!("http://{}/v1/chat/completions", server.addr),
            token: server.token.clone(),
            direct_url: format!("{}/v1/chat/completions", mock.url()),
            next_tag: AtomicUsize::new(0),
        })
    }

    /// One stream of `deltas` text deltas, read to its end. `gate` limits requests in flight
    /// until their headers arrive; `first` hears of the stream's first delta.
    async fn stream(
        &self,
        route: Route,
        deltas: usize,
        gate: Option<&Semaphore>,
        first: Option<&UnboundedSender<()>>,
    ) -> Trace {
        let tag = self.next_tag.fetch_add(1, Ordering::Relaxed);
        let mut trace =
            Trace { tag, t0: Instant::now(), deltas: Vec::with_capacity(deltas), error: None };
        if let Err(e) = self.read(route, deltas, gate, first, &mut trace).await {
            trace.error = Some(format!("{e:#}"));
        }
        trace
    }

    async fn read(
        &self,
        route: Route,
        deltas: usize,
        gate: Option<&Semaphore>,
        first: Option<&UnboundedSender<()>>,
        trace: &mut Trace,
    ) -> anyhow::Result<()> {
        let message = format!("benchmark query [q:{}]", trace.tag);
        let request = match route {
            Route::Gateway => self
                .http
                .post(&self.query_url)
                .bearer_auth(&self.token)
                .json(&serde_json::json!({"message": message, "agentKey": AGENT_KEY})),
            Route::V1 => {
                self.http.post(&self.v1_url).bearer_auth(&self.token).json(&serde_json::json!({
                    "model": "openai/mock",
                    "stream": true,
                    "messages": [{"role": "user", "content": message}],
                }))
            }
            Route::Direct => self.http.post(&self.direct_url).json(&serde_json::json!({
                "model": "mock",
                "stream": true,
                "messages": [{"role": "user", "content": message}],
            })),
        };
        let permit = match gate {
            Some(g) => Some(g.acquire().await?),
            None => None,
        };
        trace.t0 = Instant::now();
        let resp = request.send().await?;
        drop(permit);
        let status = resp.status();
        if !status.is_success() {
            anyhow::bail!("HTTP {status}: {}", resp.text().await.unwrap_or_default());
        }
        let mut events = resp.bytes_stream().eventsource();
        let mut index = 0;
        // Read to the end (not just to `run.complete`) so the connection goes back to the pool.
        while let Some(event) = events.next().await {
            let event = event?;
            let at = Instant::now();
            let is_delta = match route {
                Route::Gateway => match event.event.as_str() {
                    "content.delta" => true,
                    "run.error" | "run.cancel" => anyhow::bail!("{}: {}", event.event, event.data),
                    _ => false,
                },
                // Boardsmith's chunks: the role rides on the first text delta.
                Route::V1 => event.data.contains("\"content\":\""),
                // The mock's OpenAI rendering: a role chunk, then one chunk per text delta.
                Route::Direct => (1..=deltas).contains(&index),
            };
            index += 1;
            if is_delta {
                trace.deltas.push(at);
                if trace.deltas.len() == 1
                    && let Some(tx) = first
                {
                    let _ = tx.send(());
                }
            }
        }
        anyhow::ensure!(
            trace.deltas.len() == deltas,
            "{} deltas instead of {deltas}",
            trace.deltas.len()
        );
        Ok(())
    }

    /// `n` streams at once, each on its own task (so the client is not one task polling them).
    async fn concurrent(self: &Arc<Self>, route: Route, n: usize, deltas: usize) -> Vec<Trace> {
        let gate = Arc::new(Semaphore::new(OPENING));
        let tasks: Vec<_> = (0..n)
            .map(|_| {
                let (target, gate) = (self.clone(), gate.clone());
                tokio::spawn(async move { target.stream(route, deltas, Some(&gate), None).await })
            })
            .collect();
        let mut traces = Vec::with_capacity(n);
        for t in tasks {
            if let Ok(trace) = t.await {
                traces.push(trace);
            }
        }
        traces
    }
}

/// The tag of a request's user message (`[q:N]`), if any.
fn tag_of(body: &serde_json::Value) -> Option<usize> {
    let text = body.to_string();
    let start = text.rfind("[q:")? + 3;
    let end = start + text[start..].find(']')?;
    text[start..end].parse().ok()
}

/// Per-delta latency: the client's arrival of delta `k` minus the mock's send time of the
/// upstream chunk carrying it (chunk `k + 1`: the OpenAI rendering starts with a role chunk).
fn delta_latencies(mock: &MockLlm, traces: &[Trace]) -> Vec<Duration> {
    let mut request_of = HashMap::new();
    for (i, r) in mock.requests().iter().enumerate() {
        if let Some(tag) = tag_of(&r.body) {
            request_of.entry(tag).or_insert(i);
        }
    }
    let sent: HashMap<(usize, usize), Instant> =
        mock.sent().into_iter().map(|s| ((s.request, s.index), s.at)).collect();
    let mut out = Vec::new();
    for t in traces.iter().filter(|t| t.error.is_none()) {
        let Some(&request) = request_of.get(&t.tag) else { continue };
        for (k, arrived) in t.deltas.iter().enumerate() {
            if let Some(at) = sent.get(&(request, k + 1)) {
                out.push(arrived.saturating_duration_since(*at));
            }
        }
    }
    out
}

/// CPU time (user + system) a process has used so far, from `/proc/<pid>/stat` (clock ticks of
/// 1/100 s, the fixed `USER_HZ` of Linux's proc files); zero where that file does not exist.
pub(super) fn cpu_time(pid: u32) -> Duration {
    let ticks = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok().and_then(|s| {
        // Fields after the command name (which may contain spaces), from field 3 (`state`) on:
        // utime and stime are fields 14 and 15.
        let rest = &s[s.rfind(')')? + 1..];
        let mut fields = rest.split_whitespace().skip(11);
        let utime: u64 = fields.next()?.parse().ok()?;
        let stime: u64 = fields.next()?.parse().ok()?;
        Some(utime + stime)
    });
    Duration::from_millis(ticks.unwrap_or(0) * 10)
}

/// CPU time all processes have used so far (`/proc/stat`: everything but idle and iowait).
fn machine_busy() -> Duration {
    let ticks = std::fs::read_to_string("/proc/stat").ok().and_then(|s| {
        let line = s.lines().next()?.strip_prefix("cpu ")?.to_owned();
        let fields: Vec<u64> = line.split_whitespace().filter_map(|f| f.parse().ok()).collect();
        // user nice system idle iowait irq softirq steal (guest time is counted in user).
        Some(fields.iter().take(8).sum::<u64>() - fields.get(3)? - fields.get(4)?)
    });
    Duration::from_millis(ticks.unwrap_or(0) * 10)
}

/// CPU use over a phase: the server child, this process (client and mock), everything else on
/// the machine (a shared machine's other work skews the latencies).
struct Load {
    server: u32,
    at: Instant,
    server_cpu: Duration,
    bench_cpu: Duration,
    machine: Duration,
}

impl Load {
    fn start(server: u32) -> Self {
        Self {
            server,
            at: Instant::now(),
            server_cpu: cpu_time(server),
            bench_cpu: cpu_time(std::process::id()),
            machine: machine_busy(),
        }
    }

    /// What each used since [`Load::start`].
    fn end(&self) -> Used {
        let wall = self.at.elapsed().as_secs_f64();
        let server = cpu_time(self.server).saturating_sub(self.server_cpu);
        let bench = cpu_time(std::process::id()).saturating_sub(self.bench_cpu);
        let machine = machine_busy().saturating_sub(self.machine);
        let others = machine.saturating_sub(server + bench);
        let pct = |d: Duration| 100.0 * d.as_secs_f64() / wall;
        Used { server: pct(server), bench: pct(bench), others: pct(others), server_time: server }
    }
}

/// CPU use over a phase, in percent of one core.
struct Used {
    server: f64,
    bench: f64,
    others: f64,
    /// The server's CPU time.
    server_time: Duration,
}

/// Text deltas the client received.
fn delivered(traces: &[Trace]) -> usize {
    traces.iter().map(|t| t.deltas.len()).sum()
}

/// `a - b` in seconds, signed.
fn fmt_diff(a: Duration, b: Duration) -> String {
    let d = a.as_secs_f64() - b.as_secs_f64();
    let sign = if d < 0.0 { "-" } else { "+" };
    format!("{sign}{}", fmt(Duration::from_secs_f64(d.abs())))
}

fn verdict(ok: bool) -> &'static str {
    if ok { "ok" } else { "MISSED" }
}

/// Collects the errors of some traces: how many, and the first message.
#[derive(Default)]
struct Errors {
    count: usize,
    first: Option<String>,
}

impl Errors {
    fn add(&mut self, phase: &str, traces: &[Trace]) {
        for t in traces {
            if let Some(e) = &t.error {
                self.count += 1;
                self.first.get_or_insert_with(|| format!("{phase}: {e}"));
            }
        }
    }
}

/// The mock upstream on a runtime of its own (its own worker threads, one per core like any
/// server's), as a real upstream is on another machine. On the bench's runtime, the mock's
/// write of a direct delta and the client's read of it could run on one thread with no wake-up
/// at all, a hop no real client gets; the gateway path always pays one (its client is woken by
/// the server), so the difference would charge the gateway for a wake-up the direct path
/// skipped.
struct Upstream {
    mock: MockLlm,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Upstream {
    async fn start(script: Script) -> anyhow::Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .thread_name("mock-upstream")
            .enable_all()
            .build()?;
        let mock = runtime.spawn(MockLlm::start(script, 0)).await??;
        Ok(Self { mock, runtime: Some(runtime) })
    }
}

impl Drop for Upstream {
    fn drop(&mut self) {
        self.mock.stop();
        // Dropping a runtime blocks, which an async context may not do.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// Starts the child server with the `bench` agent (PLAIN, provider `openai` → the mock).
async fn start_gateway(mock: &MockLlm) -> anyhow::Result<ServerChild> {
    let dir = temp_dir("gateway")?;
    let agents = dir.0.join("agents");
    std::fs::create_dir_all(&agents)?;
    let agent = serde_json::json!({
        "description": "bench gateway: one plain answer streamed from the mock upstream",
        "providerKey": "openai",
        "model": "mock",
        "mode": "PLAIN",
        "plain": {"systemPrompt": "You are the benchmark agent."},
    });
    std::fs::write(agents.join(format!("{AGENT_KEY}.json")), serde_json::to_vec_pretty(&agent)?)?;
    let base_url = format!("{}/v1", mock.url());
    start_server_in(
        dir,
        &[
            ("OPENAI_API_KEY", "bench"),
            ("OPENAI_BASE_URL", &base_url),
            ("NO_PROXY", "127.0.0.1,localhost"),
            ("RUST_LOG", "warn"),
            // Thousands of concurrent runs on purpose: the server's run cap (64) would refuse them,
            // and so would the shares one credential may hold (64 requests in flight, a quarter
            // of the connections): every stream here is the owner's.
            ("AGENT_MAX_RUNS", "1000000"),
            ("BOARDSMITH_MAX_REQUESTS_PER_KEY", "1000000"),
            ("BOARDSMITH_MAX_CONNECTIONS_PER_KEY", "1000000"),
        ],
    )
    .await
}

/// A turn that sends its role chunk and first text delta at once, then nothing for ten
/// minutes: a stream held open by a slow upstream.
fn stalled_turn() -> Turn {
    Turn {
        steps: vec![Step::Text { text: "xxxx".into(), chunk: Some(1) }],
        fault: Some(Fault::Stall { after: 2, ms: 600_000 }),
        ..Default::default()
    }
}

/// Runs the gateway benchmark: `rounds` sequential streams per path for time to first delta
/// (and a quarter of that, paced, for per-delta latency), `concurrent` paced streams for
/// per-delta latency under load, `streams` (and 2× and 4× that) paced streams for the largest
/// gap between deltas, and `open` streams held open for memory.
#[base::boxed]
pub async fn gateway(
    rounds: usize,
    streams: usize,
    concurrent: usize,
    open: usize,
) -> anyhow::Result<ExitCode> {
    let _ = rlimit::increase_nofile_limit(u64::MAX);
    let rounds = rounds.max(10);
    let mut errors = Errors::default();
    let upstream = Upstream::start(Script { turns: vec![text_turn(16, 0)] }).await?;
    let mock = &upstream.mock;
    let server = start_gateway(mock).await?;
    let target = Arc::new(Target::new(&server, mock)?);

    let pid = server.child.id();
    let mut cpu = Vec::new();

    // Time to first delta, unpaced, the two paths interleaved.
    let load = Load::start(pid);
    let (mut first_g, mut first_v, mut first_d) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..WARMUP + rounds {
        let g = target.stream(Route::Gateway, 16, None, None).await;
        let v = target.stream(Route::V1, 16, None, None).await;
        let d = target.stream(Route::Direct, 16, None, None).await;
        if round == 0
            && let Some(e) = g.error.as_ref().or(v.error.as_ref())
        {
            anyhow::bail!("a path through the server does not work: {e}");
        }
        if round >= WARMUP {
            first_g.extend(g.ttfd());
            first_v.extend(v.ttfd());
            first_d.extend(d.ttfd());
            errors.add("first delta", &[g, v, d]);
        }
    }
    cpu.push(("first delta (all paths)".to_owned(), load.end(), None));

    // Per-delta latency, one stream at a time, 2 ms pacing.
    let seq = rounds.div_ceil(4).max(5);
    mock.set_script(Script { turns: vec![text_turn(32, 2)] });
    let (mut seq_g, mut seq_v, mut seq_d) = (Vec::new(), Vec::new(), Vec::new());
    let load = Load::start(pid);
    for _ in 0..seq {
        seq_g.push(target.stream(Route::Gateway, 32, None, None).await);
        seq_v.push(target.stream(Route::V1, 32, None, None).await);
        seq_d.push(target.stream(Route::Direct, 32, None, None).await);
    }
    cpu.push(("per delta, 1 stream (all paths)".to_owned(), load.end(), None));
    let lat_g = delta_latencies(mock, &seq_g);
    let lat_v = delta_latencies(mock, &seq_v);
    let lat_d = delta_latencies(mock, &seq_d);
    for traces in [&seq_g, &seq_v, &seq_d] {
        errors.add("per delta", traces);
    }

    // Per-delta latency under load: `concurrent` paced streams at once, each path on its own.
    // Untimed first, like the sequential phases: the same number of short streams per path
    // opens the connections this load needs (client → server → mock, client → mock), so the
    // timed streams measure streaming, not a burst of connection set-ups. (A gateway stream
    // ends once its run is stored, so no chat-file work spills into the timed phase.)
    mock.set_script(Script { turns: vec![text_turn(4, 0)] });
    for route in [Route::Gateway, Route::Direct] {
        errors.add("warm-up", &target.concurrent(route, concurrent, 4).await);
    }
    mock.set_script(Script { turns: vec![text_turn(PACED_DELTAS, PACE_MS)] });
    let load = Load::start(pid);
    let conc_g = target.concurrent(Route::Gateway, concurrent, PACED_DELTAS).await;
    cpu.push((
        format!("per delta, {concurrent} streams, gateway"),
        load.end(),
        Some(delivered(&conc_g)),
    ));
    let load = Load::start(pid);
    let conc_d = target.concurrent(Route::Direct, concurrent, PACED_DELTAS).await;
    cpu.push((format!("per delta, {concurrent} streams, direct"), load.end(), None));
    let (load_g, load_d) = (delta_latencies(mock, &conc_g), delta_latencies(mock, &conc_d));
    errors.add("per delta under load", &conc_g);
    errors.add("per delta under load", &conc_d);

    // Paced streams: the largest gap between consecutive deltas of each stream; the direct path
    // under the same load shows what the client and the mock alone manage.
    let mut paced = Vec::new();
    for n in [streams, streams * 2, streams * 4] {
        for (route, name) in [(Route::Gateway, "gateway"), (Route::Direct, "direct")] {
            let load = Load::start(pid);
            let traces = target.concurrent(route, n, PACED_DELTAS).await;
            let deltas = (route == Route::Gateway).then(|| delivered(&traces));
            cpu.push((format!("paced, {n} streams, {name}"), load.end(), deltas));
            errors.add(&format!("paced, {n} streams, {name}"), &traces);
            let gaps: Vec<Duration> =
                traces.iter().filter(|t| t.error.is_none()).map(Trace::max_gap).collect();
            paced.push((name, n, gaps));
        }
    }
    drop(target);
    drop(server);

    // Open streams on a fresh server (earlier phases would inflate its memory).
    mock.set_script(Script { turns: vec![stalled_turn()] });
    let server = start_gateway(mock).await?;
    let pid = server.child.id();
    let target = Arc::new(Target::new(&server, mock)?);
    let gate = Arc::new(Semaphore::new(OPENING));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let baseline = rss_bytes(pid);
    let mut held = 0;
    let mut holders = Vec::with_capacity(open);
    let mut rss_at = Vec::new();
    let checkpoint = open.min(1000);
    for batch in [checkpoint, open - checkpoint].into_iter().filter(|b| *b > 0) {
        for _ in 0..batch {
            let (target, gate, tx) = (target.clone(), gate.clone(), tx.clone());
            holders.push(tokio::spawn(async move {
                target.stream(Route::Gateway, 4, Some(&gate), Some(&tx)).await
            }));
        }
        let goal = held + batch;
        while held < goal {
            match tokio::time::timeout(Duration::from_secs(30), rx.recv()).await {
                Ok(Some(())) => held += 1,
                _ => break,
            }
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        rss_at.push((held, rss_bytes(pid)));
    }
    // A holder that finished early failed (or its stream ended); the rest are aborted, which
    // closes their streams.
    let mut open_errors = Vec::new();
    for h in holders {
        if h.is_finished() {
            open_errors.extend(h.await.ok());
        } else {
            h.abort();
        }
    }
    errors.add("open streams", &open_errors);
    drop(target);
    drop(server);
    drop(upstream);

    // The table.
    let row = |name: &str, a: String, b: String, target: &str| {
        crate::outln!("{name:<72} {a:>12} {b:>12}  {target}");
    };
    row(
        "gateway (POST /api/query), v1 (POST /v1/chat/completions) vs the mock directly",
        "p50".into(),
        "p99".into(),
        "target",
    );
    let (g50, g99) = percentiles(first_g.clone());
    let (d50, d99) = percentiles(first_d.clone());
    row(
        &format!("time to first delta: gateway ({} streams)", first_g.len()),
        fmt(g50),
        fmt(g99),
        "",
    );
    row(
        &format!("time to first delta: direct ({} streams)", first_d.len()),
        fmt(d50),
        fmt(d99),
        "",
    );
    let ok = g50.saturating_sub(d50) <= Duration::from_micros(350)
        && g99.saturating_sub(d99) <= Duration::from_millis(1);
    row(
        "  added time to first delta",
        fmt_diff(g50, d50),
        fmt_diff(g99, d99),
        &format!("p50 ≤ 0.35 ms, p99 ≤ 1 ms  {}", verdict(ok)),
    );
    let (v50, v99) = percentiles(first_v.clone());
    row(&format!("time to first delta: v1 ({} streams)", first_v.len()), fmt(v50), fmt(v99), "");
    row(
        "  added by POST /v1/chat/completions",
        fmt_diff(v50, d50),
        fmt_diff(v99, d99),
        &format!("p50 ≤ 1 ms  {}", verdict(v50.saturating_sub(d50) <= Duration::from_millis(1))),
    );
    let (g50, g99) = percentiles(lat_g.clone());
    let (d50, d99) = percentiles(lat_d.clone());
    row(
        &format!("per delta, 1 stream, 2 ms pacing: gateway ({} deltas)", lat_g.len()),
        fmt(g50),
        fmt(g99),
        "",
    );
    row(
        &format!("per delta, 1 stream, 2 ms pacing: direct ({} deltas)", lat_d.len()),
        fmt(d50),
        fmt(d99),
        "",
    );
    let ok = g50.saturating_sub(d50) <= Duration::from_micros(20)
        && g99.saturating_sub(d99) <= Duration::from_micros(200);
    row(
        "  added latency per delta",
        fmt_diff(g50, d50),
        fmt_diff(g99, d99),
        &format!("p50 ≤ 20 µs, p99 ≤ 0.2 ms  {}", verdict(ok)),
    );
    let (v50, v99) = percentiles(lat_v.clone());
    row(
        &format!("per delta, 1 stream, 2 ms pacing: v1 ({} deltas)", lat_v.len()),
        fmt(v50),
        fmt(v99),
        "",
    );
    row(
        "  added latency per delta by v1 (one chunk out per chunk in)",
        fmt_diff(v50, d50),
        fmt_diff(v99, d99),
        "",
    );
    let (g50, g99) = percentiles(load_g.clone());
    let (d50, d99) = percentiles(load_d.clone());
    row(
        &format!(
            "per delta, {concurrent} streams, {PACE_MS} ms pacing: gateway ({})",
            load_g.len()
        ),
        fmt(g50),
        fmt(g99),
        "",
    );
    row(
        &format!("per delta, {concurrent} streams, {PACE_MS} ms pacing: direct ({})", load_d.len()),
        fmt(d50),
        fmt(d99),
        "",
    );
    let ok = g99.saturating_sub(d99) <= Duration::from_millis(2);
    row(
        &format!("  added latency per delta, {concurrent} streams"),
        fmt_diff(g50, d50),
        fmt_diff(g99, d99),
        &format!("p99 ≤ 2 ms  {}", verdict(ok)),
    );
    row("paced streams (64 deltas × 20 ms): max gap per stream", "p50".into(), "max".into(), "");
    // The verdict is on `--streams` (the target's count); 2× and 4× show the headroom.
    let base = paced.iter().filter(|(name, ..)| *name == "gateway").map(|(_, n, _)| *n).min();
    for (name, n, gaps) in paced {
        let max = gaps.iter().max().copied().unwrap_or_default();
        let over = gaps.iter().filter(|g| **g > MAX_GAP).count();
        let failed = n - gaps.len();
        let (p50, _) = if gaps.is_empty() { Default::default() } else { percentiles(gaps) };
        let target = if name == "gateway" && Some(n) == base {
            format!("none > 40 ms at ≥ 500  {}", verdict(n >= 500 && failed == 0 && over == 0))
        } else if name == "gateway" {
            "(headroom, no target)".to_owned()
        } else {
            String::new()
        };
        let failed = if failed > 0 { format!(", {failed} failed") } else { String::new() };
        row(
            &format!("  {name}, {n} streams: {over} with a gap > 40 ms{failed}"),
            fmt(p50),
            fmt(max),
            &target,
        );
    }
    row("open streams held (slow upstream): server RSS", "held".into(), "RSS".into(), "");
    for (i, (n, rss)) in rss_at.iter().enumerate() {
        let target = if i == 0 && *n >= 1000 {
            format!("≤ 200 MB at 1,000  {}", verdict(*rss <= 200_000_000))
        } else if i == 1 {
            format!("≥ 2,000 held  {}", verdict(*n >= 2000))
        } else {
            String::new()
        };
        row(
            &format!(
                "  after opening {} (baseline {} MB)",
                if i == 0 { checkpoint } else { open },
                baseline / 1_000_000
            ),
            n.to_string(),
            format!("{} MB", rss / 1_000_000),
            &target,
        );
    }
    row("CPU per phase, % of one core", "server".into(), "bench".into(), "others");
    for (phase, used, deltas) in cpu {
        let per_delta = deltas
            .filter(|d| *d > 0)
            .map(|d| format!("  server {} per delta", fmt(used.server_time / d as u32)))
            .unwrap_or_default();
        row(
            &format!("  {phase}"),
            format!("{:.0}%", used.server),
            format!("{:.0}%", used.bench),
            &format!("{:>6.0}%{per_delta}", used.others),
        );
    }
    if let Some(first) = errors.first {
        crate::outln!("{} streams failed; the first: {first}", errors.count);
    }
    crate::outln!("cores: {}", std::thread::available_parallelism().map_or(0, |n| n.get()));
    Ok(ExitCode::SUCCESS)
}
