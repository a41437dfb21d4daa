//! `boardsmith bench upstream`: how many requests a live dashboard watched by many viewers
//! sends to its data provider. One fetch must serve every viewer: the target is at most one
//! upstream request per distinct panel call per refresh interval, whatever the viewer count.
//!
//! A loopback server in this process plays Binance's spot klines endpoint (the real wire
//! shape) and counts requests; a `boardsmith serve` child is pointed at it with
//! `BOARDSMITH_BINANCE_BASE_URL`; a dashboard of `panels` live panels (each a different pair,
//! so each is its own upstream call) refreshing every `refresh` seconds is watched by `viewers`
//! WebSockets for `intervals` refresh intervals. (A refresh shorter than the method's cache
//! lifetime, 30 s for `binance.klines`, is served from the cache: measure past it to see the refetches.)

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::Message;

use super::{start_server_in, temp_dir};

/// Pairs the panels ask for, one per panel.
const PAIRS: &[&str] = &[
    "BTCUSDT", "ETHUSDT", "SOLUSDT", "BNBUSDT", "XRPUSDT", "DOGEUSDT", "ADAUSDT", "AVAXUSDT",
    "LINKUSDT", "DOTUSDT", "LTCUSDT", "TRXUSDT", "ATOMUSDT", "NEARUSDT", "APTUSDT", "ARBUSDT",
];

/// A Binance klines body: `[[openTime, "open", "high", "low", "close", "volume", closeTime, ...]]`.
fn klines_body(limit: usize) -> String {
    let now = chrono::Utc::now().timestamp() / 3600 * 3600;
    let rows: Vec<serde_json::Value> = (0..limit as i64)
        .map(|i| {
            let t = (now - (limit as i64 - 1 - i) * 3600) * 1000;
            let p = 100.0 + i as f64;
            serde_json::json!([
                t,
                format!("{p:.2}"),
                format!("{:.2}", p + 1.0),
                format!("{:.2}", p - 1.0),
                format!("{:.2}", p + 0.5),
                "12.5",
                t + 3_599_999,
                "1250.0",
                42,
                "6.0",
                "600.0",
                "0"
            ])
        })
        .collect();
    serde_json::Value::Array(rows).to_string()
}

/// Runs the benchmark and prints its table.
#[base::boxed]
pub async fn upstream(
    viewers: usize,
    panels: usize,
    refresh: u64,
    intervals: u64,
) -> anyhow::Result<ExitCode> {
    let _ = rlimit::increase_nofile_limit(u64::MAX);
    let panels = panels.clamp(1, PAIRS.len());
    let refresh = refresh.max(5);
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&hits);
    let app = axum::Router::new().route(
        "/api/v3/klines",
        axum::routing::get(move || {
            let counter = Arc::clone(&counter);
            async move {
                counter.fetch_add(1, Ordering::Relaxed);
                ([("content-type", "application/json")], klines_body(120))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let upstream = listener.local_addr()?;
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let origin = format!("http://{upstream}");
    let websockets = (viewers + 16).to_string();
    let server = start_server_in(
        temp_dir("bench-upstream")?,
        &[
            ("BOARDSMITH_MAX_WEBSOCKETS", &websockets),
            ("BOARDSMITH_BINANCE_BASE_URL", &origin),
            ("BOARDSMITH_OUTBOUND_ALLOW", &upstream.to_string()),
        ],
    )
    .await?;
    let http = server.client()?;
    let panels_json: Vec<serde_json::Value> = PAIRS[..panels]
        .iter()
        .map(|pair| {
            serde_json::json!({
                "id": pair.to_lowercase(), "title": format!("{pair} hourly"), "type": "line",
                "renderer": "lightweight-charts", "layout": {"w": 1, "h": 2},
                "code": format!("const k = await sdk.binance.klines({{ symbol: '{pair}', interval: '1h', limit: 120 }});\n\
                                 return k.map((b) => ({{ time: b.time, value: b.close }}));"),
            })
        })
        .collect();
    let state = serde_json::json!({"title": "Live crypto", "layout": {"columns": 4}, "refresh": format!("{refresh}s"), "panels": panels_json});
    let (id, _) = server.create_dashboard(&http, state).await?;

    // Viewers: each counts the live panel results it receives.
    let received = Arc::new(AtomicUsize::new(0));
    let live = Arc::new(AtomicUsize::new(0));
    let mut readers = Vec::with_capacity(viewers);
    for _ in 0..viewers {
        let mut ws = server.connect().await?;
        let sub = serde_json::json!({"type": "subscribe", "dashboardId": id}).to_string();
        ws.send(Message::Text(sub.into())).await?;
        let (received, live) = (Arc::clone(&received), Arc::clone(&live));
        readers.push(tokio::spawn(async move {
            while let Some(Ok(msg)) = ws.next().await {
                if let Message::Text(t) = msg
                    && t.starts_with("{\"type\":\"panel.data\"")
                {
                    received.fetch_add(1, Ordering::Relaxed);
                    if t.contains("\"provider\":\"binance\"") {
                        live.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        }));
    }
    // Let the first round of panel runs (one per panel, shared by every viewer) settle.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (hits0, received0) = (hits.load(Ordering::Relaxed), received.load(Ordering::Relaxed));
    let live0 = live.load(Ordering::Relaxed);
    let started = Instant::now();
    let mut per_interval = Vec::new();
    let mut last = hits0;
    for _ in 0..intervals {
        tokio::time::sleep(Duration::from_secs(refresh)).await;
        let now = hits.load(Ordering::Relaxed);
        per_interval.push(now - last);
        last = now;
    }
    let elapsed = started.elapsed().as_secs_f64();
    for r in readers {
        r.abort();
    }
    let data = received.load(Ordering::Relaxed) - received0;
    let worst = per_interval.iter().copied().max().unwrap_or(0);
    crate::outln!("upstream requests of one live dashboard watched by many viewers");
    crate::outln!("{:<44} {:>12}", "metric", "value");
    let row = |k: &str, v: String| crate::outln!("{k:<44} {v:>12}");
    row("viewers (WebSockets)", viewers.to_string());
    row("live panels (distinct upstream calls)", panels.to_string());
    row("refresh interval", format!("{refresh} s"));
    row("intervals measured", format!("{intervals} ({elapsed:.0} s)"));
    row("upstream requests: initial load", hits0.to_string());
    row("upstream requests per interval (max)", worst.to_string());
    row("upstream requests per interval (each)", format!("{per_interval:?}"));
    row("panel results delivered to viewers", data.to_string());
    row("of which served by binance (live)", (live.load(Ordering::Relaxed) - live0).to_string());
    row("upstream requests while measured (total)", (last - hits0).to_string());
    let verdict = if worst <= panels { "ok" } else { "OVER" };
    row(&format!("target: <= {panels} per interval"), verdict.to_owned());
    Ok(if worst <= panels { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
