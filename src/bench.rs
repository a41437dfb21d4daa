//! `boardsmith bench sandbox`: the sandbox's speed targets, measured and printed as a table.
//!
//! Everything goes through the real pool (worker processes, pipes, the real SDK with its
//! cache) except `utils.sma`, which is timed in-process to isolate the native kernel and its
//! array conversion.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use boa_engine::{Context, JsValue, js_string};
use futures::StreamExt;

use crate::cli;
use crate::sandbox::{Limits, PanelContext, Sandbox, SandboxConfig};
use crate::sdk::Sdk;

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

async fn start(sdk: &Arc<Sdk>, workers: usize, limits: Limits) -> anyhow::Result<Sandbox> {
    let mut config = SandboxConfig::new(std::env::current_exe()?);
    config.workers = workers;
    config.limits = limits;
    Sandbox::start(config, sdk.clone()).await.map_err(|e| anyhow::anyhow!("{e}"))
}

/// Runs the sandbox benchmark with `iterations` samples per latency row.
pub async fn sandbox(iterations: usize) -> anyhow::Result<ExitCode> {
    let sdk = cli::load_sdk()?;
    let n = iterations.max(10);
    let mut rows = Vec::new();

    // Warm pool, warm cache: the steady state of panel refreshes.
    let sb = start(&sdk, 2, Limits::default()).await?;
    time_runs(&sb, TYPICAL_PANEL, 50).await?;
    let (p50, p99) = percentiles(time_runs(&sb, TYPICAL_PANEL, n).await?);
    rows.push(Row {
        name: "typical panel, warm worker (pool)",
        p50,
        p99,
        n,
        target: "p50 ≤ 2 ms, p99 ≤ 5 ms",
    });
    let (p50, p99) = percentiles(time_runs(&sb, "return 1;", n).await?);
    rows.push(Row { name: "trivial panel `return 1` (pool overhead)", p50, p99, n, target: "" });

    // Cold: a new worker process for the run (spawn, init, realm, run).
    let cold_n = (n / 20).clamp(10, 100);
    let mut cold = Vec::with_capacity(cold_n);
    let mut spawn = Vec::with_capacity(cold_n);
    for _ in 0..cold_n {
        let t = Instant::now();
        let one = start(&sdk, 1, Limits::default()).await?;
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
    let killer = start(&sdk, 1, short).await?;
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

    let (p50, p99) = percentiles(sma_in_process(n)?);
    rows.push(Row { name: "utils.sma(10k points, 20) from JS", p50, p99, n, target: "≤ 0.1 ms" });

    // Throughput: the default pool, as many panels as it takes.
    let pool = start(&sdk, SandboxConfig::new(std::env::current_exe()?).workers, Limits::default())
        .await?;
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
    pool.shutdown().await;
    sb.shutdown().await;

    println!("{:<44} {:>10} {:>10} {:>6}  target", "sandbox", "p50", "p99", "n");
    for r in &rows {
        println!("{:<44} {:>10} {:>10} {:>6}  {}", r.name, fmt(r.p50), fmt(r.p99), r.n, r.target);
    }
    println!(
        "{:<44} {:>10.0} {:>10} {:>6}  ≥ 800 runs/s",
        format!("throughput, typical panel ({workers} workers)"),
        ok as f64 / secs,
        "runs/s",
        total
    );
    for (name, p50, p99) in engine_breakdown(n.min(500)).await? {
        println!("{name:<44} {:>10} {:>10} {:>6}", fmt(p50), fmt(p99), n.min(500));
    }
    println!("cores: {}", std::thread::available_parallelism().map_or(0, |n| n.get()));
    Ok(ExitCode::SUCCESS)
}

/// `utils.sma(xs, 20)` on a 10k-element JS array, called from JS, timed per call.
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
pub async fn engine_breakdown(n: usize) -> anyhow::Result<Vec<(String, Duration, Duration)>> {
    use crate::sandbox::SdkHost;
    use crate::sandbox::engine::{self, Link, WorkerEnv};
    use crate::sandbox::protocol::JobKind;
    use std::rc::Rc;

    let sdk = cli::load_sdk()?;
    let kline = Sdk::call(
        &sdk,
        "market",
        "getKline",
        serde_json::json!({"symbol": "XAUUSD", "timeframe": "1D", "limit": 120}),
    )
    .await?;
    let posts =
        Sdk::call(&sdk, "social", "searchPosts", serde_json::json!({"query": "gold", "limit": 50}))
            .await?;
    struct Local(serde_json::Value, serde_json::Value);
    impl Link for Local {
        fn call(
            &self,
            _: String,
            method: String,
            _: serde_json::Value,
        ) -> futures::channel::oneshot::Receiver<Result<serde_json::Value, String>> {
            let (tx, rx) = futures::channel::oneshot::channel();
            let _ = tx.send(Ok(if method == "getKline" { self.0.clone() } else { self.1.clone() }));
            rx
        }
        fn reset(&self) {}
    }
    let env = WorkerEnv {
        catalog: SdkHost::catalog(sdk.as_ref()),
        spec: serde_json::Value::Null,
        limits: Limits::default(),
        link: Rc::new(Local((*kline).clone(), (*posts).clone())),
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
