//! `boardsmith bench alerts`: what judging alert rules costs, and how soon a market move
//! reaches a webhook (issue 41).
//!
//! A loopback server in this process plays Binance's 24-hour ticker (the real wire shape; the
//! price per symbol is the bench's to set) and a webhook receiver; a `boardsmith serve` child
//! is pointed at it (`BOARDSMITH_<PROVIDER>_BASE_URL`, nothing cached) with
//! `BOARDSMITH_ALERT_EVERY` as the judging period. `dashboards` dashboards carry
//! `rules` rules each (threshold, crossing, percent move and code rules, none firing), on one
//! metric panel each, nobody watching; the server's CPU over a few periods gives the cost per
//! period and its share of one core. One more dashboard's rule watches a probe symbol whose
//! price the bench moves across the threshold, alternately up and down: the time from the move
//! to the webhook's POST of that transition is the latency. Target: p99 within the period plus
//! 2 s. The reference row is the same server idle (no rules) for as long. Flap detection is off
//! (`BOARDSMITH_ALERT_FLAP_LIMIT=0`): the probe crosses its threshold on purpose.

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Query, State};
use serde_json::{Value, json};

use super::gateway::cpu_time;
use super::{start_server_in, temp_dir};

/// CPU time of `pid` and its children (the server and its sandbox workers, where panel and
/// rule code runs).
fn tree_cpu(pid: u32) -> Duration {
    let children: Vec<u32> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/stat")).ok().is_some_and(|s| {
                // `pid (comm) state ppid ...`: comm may hold spaces.
                s.rfind(')').and_then(|i| s[i + 1..].split_whitespace().nth(1)?.parse().ok())
                    == Some(pid)
            })
        })
        .collect();
    children.into_iter().map(cpu_time).sum::<Duration>() + cpu_time(pid)
}

/// The symbol whose price the bench moves.
const PROBE: &str = "PROBEUSDT";
/// The probe rule's threshold; the probe moves between 900 and 1100.
const THRESHOLD: f64 = 1000.0;
/// Added latency allowed beyond the judging period.
const BEYOND_PERIOD: Duration = Duration::from_secs(2);

#[derive(Default)]
struct Upstream {
    probe: Mutex<f64>,
    /// Webhook POSTs: when, and the notification's status.
    posts: Mutex<Vec<(Instant, String)>>,
    tickers: std::sync::atomic::AtomicU64,
}

async fn ticker(
    State(up): State<Arc<Upstream>>,
    Query(q): Query<HashMap<String, String>>,
) -> axum::Json<Value> {
    up.tickers.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let symbol = q.get("symbol").cloned().unwrap_or_default();
    let price =
        if symbol == PROBE { *up.probe.lock().unwrap_or_else(|p| p.into_inner()) } else { 100.0 };
    axum::Json(json!({
        "symbol": symbol, "lastPrice": price.to_string(), "priceChange": "1.0",
        "priceChangePercent": "1.0", "weightedAvgPrice": "100", "prevClosePrice": "99",
        "openPrice": "99", "highPrice": "101", "lowPrice": "98", "volume": "10",
        "quoteVolume": "1000", "openTime": 1_717_200_000_000_i64, "closeTime": 1_717_286_399_999_i64,
    }))
}

async fn hook(State(up): State<Arc<Upstream>>, body: axum::body::Bytes) -> &'static str {
    let v: Value = serde_json::from_slice(&body).unwrap_or_default();
    let status = v["status"].as_str().unwrap_or_default().to_owned();
    up.posts.lock().unwrap_or_else(|p| p.into_inner()).push((Instant::now(), status));
    "ok"
}

fn panel(symbol: &str) -> Value {
    json!({"id": "px", "title": symbol, "type": "metric_card", "renderer": "custom",
           "code": format!("const t = await sdk.binance.ticker24h({{symbol: '{symbol}'}});\nreturn {{value: t.lastPrice, label: '{symbol}', change: t.priceChangePercent}};")})
}

/// `n` rules on panel `px`, of every kind, none firing at price 100.
fn rules(n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| {
            let when = match i % 5 {
                0 => json!({"op": ">", "value": 1000 + i}),
                1 => json!({"op": "<", "value": 1}),
                2 => json!({"op": "crosses_above", "value": 5000}),
                3 => json!({"op": "change_pct_over", "value": 50}),
                _ => json!("return {firing: data.value > 1e9, value: data.value};"),
            };
            json!({"id": format!("r{i}"), "name": format!("Rule {i}"), "panelId": "px", "when": when})
        })
        .collect()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Runs the benchmark and prints its table.
#[base::boxed]
pub async fn alerts(
    dashboards: usize,
    rules_per: usize,
    every: u64,
    moves: usize,
) -> anyhow::Result<ExitCode> {
    let up = Arc::new(Upstream { probe: Mutex::new(900.0), ..Upstream::default() });
    let app = axum::Router::new()
        .route("/api/v3/ticker/24hr", axum::routing::get(ticker))
        .route("/hook", axum::routing::post(hook))
        .with_state(up.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let origin = format!("http://{addr}");
    let registry = crate::sdk::Registry::embedded(&|_| true)?;
    let vars = crate::sdk::provider::base_url_vars(&registry);
    let every_s = format!("{every}s");
    let mut env: Vec<(&str, &str)> = vars.iter().map(|v| (v.as_str(), origin.as_str())).collect();
    env.extend([
        ("BOARDSMITH_OUTBOUND_ALLOW", origin.as_str()),
        ("BOARDSMITH_SDK_CACHE_BYTES", "0"),
        ("BOARDSMITH_ALERT_EVERY", every_s.as_str()),
        // The probe crosses its threshold `moves` times in a few minutes: flapping, for the
        // server, which would then hold its notifications back.
        ("BOARDSMITH_ALERT_FLAP_LIMIT", "0"),
    ]);
    let server = start_server_in(temp_dir("bench-alerts")?, &env).await?;
    let http = server.client()?;
    let pid = server.child.id();
    let period = Duration::from_secs(every);
    let window = period * 3;

    // Reference: the server idle, nothing to judge.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (c0, t0) = (tree_cpu(pid), Instant::now());
    tokio::time::sleep(window).await;
    let idle = (tree_cpu(pid) - c0).as_secs_f64() / t0.elapsed().as_secs_f64();

    let made: Value = http
        .post(format!("http://{}/api/channels", server.addr))
        .json(&json!({"name": "bench", "type": "webhook", "url": format!("{origin}/hook")}))
        .send()
        .await?
        .json()
        .await?;
    anyhow::ensure!(made["code"] == 0, "channel: {made}");
    let started = Instant::now();
    for i in 0..dashboards {
        let state = json!({"title": format!("Watch {i}"), "layout": {"columns": 1},
                           "panels": [panel(&format!("S{i}USDT"))], "alerts": rules(rules_per)});
        server.create_dashboard(&http, state).await?;
    }
    let probe = json!({"title": "Probe", "layout": {"columns": 1}, "panels": [panel(PROBE)],
        "alerts": [{"id": "probe", "name": "Probe above 1000", "panelId": "px",
                    "when": {"op": ">", "value": THRESHOLD}, "notify": ["bench"]}]});
    server.create_dashboard(&http, probe).await?;
    let created = started.elapsed();

    // Steady state: every rule judged at least once, then the CPU over the window.
    let total = dashboards * rules_per + 1;
    let deadline = Instant::now() + period * 4 + Duration::from_secs(30);
    loop {
        let list: Value =
            http.get(format!("http://{}/api/alerts", server.addr)).send().await?.json().await?;
        let judged = list["data"]
            .as_array()
            .map_or(0, |a| a.iter().filter(|r| r["evaluatedAt"].as_i64() > Some(0)).count());
        if judged >= total {
            break;
        }
        anyhow::ensure!(Instant::now() < deadline, "only {judged} of {total} rules judged");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let tickers0 = up.tickers.load(std::sync::atomic::Ordering::Relaxed);
    let (c0, t0) = (tree_cpu(pid), Instant::now());
    tokio::time::sleep(window).await;
    let wall = t0.elapsed();
    let busy = (tree_cpu(pid) - c0).as_secs_f64() / wall.as_secs_f64();
    let runs = up.tickers.load(std::sync::atomic::Ordering::Relaxed) - tickers0;
    let periods = wall.as_secs_f64() / period.as_secs_f64();

    // Latency: move the probe across the threshold, time the webhook's POST of it.
    let mut latencies = Vec::with_capacity(moves);
    for k in 0..moves {
        let (price, status) = if k % 2 == 0 { (1100.0, "firing") } else { (900.0, "resolved") };
        let before = up.posts.lock().unwrap_or_else(|p| p.into_inner()).len();
        let moved = Instant::now();
        *up.probe.lock().unwrap_or_else(|p| p.into_inner()) = price;
        let limit = moved + period * 3 + Duration::from_secs(10);
        let arrived = loop {
            let hit = up.posts.lock().unwrap_or_else(|p| p.into_inner())[before..]
                .iter()
                .find(|(_, s)| s == status)
                .map(|(at, _)| *at);
            if let Some(at) = hit {
                break at;
            }
            anyhow::ensure!(Instant::now() < limit, "no {status} POST within {:?}", limit - moved);
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        latencies.push(arrived - moved);
        // The next move lands at a random point of the period.
        let nanos = u64::from(chrono::Utc::now().timestamp_subsec_nanos());
        let jitter = Duration::from_millis(nanos % (every * 1000).max(1));
        tokio::time::sleep(jitter).await;
    }
    latencies.sort();
    let (p50, p99) = (percentile(&latencies, 0.5), percentile(&latencies, 0.99));
    let target = period + BEYOND_PERIOD;
    let met = p99 <= target;

    crate::outln!(
        "alert rules: {dashboards} dashboards x {rules_per} rules (+1 probe), judged every {every} s, nobody watching"
    );
    crate::outln!("{:<44} {:>14}", "measure", "value");
    crate::outln!("{:<44} {:>14.1}", "dashboards created (s)", created.as_secs_f64());
    crate::outln!("{:<44} {:>14.1}", "idle server + workers, CPU % of a core (ref)", idle * 100.0);
    crate::outln!("{:<44} {:>14.1}", "judging: server + workers, CPU % of a core", busy * 100.0);
    crate::outln!(
        "{:<44} {:>14.0}",
        "CPU ms per period (all rules)",
        busy * period.as_secs_f64() * 1e3
    );
    crate::outln!(
        "{:<44} {:>14.1}",
        format!("panel runs per period (of {})", dashboards + 1),
        runs as f64 / periods
    );
    crate::outln!("{:<44} {:>14.0}", "move -> webhook POST p50 (ms)", p50.as_secs_f64() * 1e3);
    crate::outln!(
        "{:<44} {:>14.0}  target <= {} ms {}",
        "move -> webhook POST p99 (ms)",
        p99.as_secs_f64() * 1e3,
        target.as_millis(),
        if met { "ok" } else { "MISSED" }
    );
    crate::outln!("({} moves; the period bounds the wait for the next judgement)", latencies.len());
    Ok(if met { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
