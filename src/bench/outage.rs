//! `boardsmith bench outage`: how fast the example dashboards settle when their data providers
//! cannot be reached. Every provider's `BOARDSMITH_<PROVIDER>_BASE_URL` points at one loopback
//! upstream that either accepts and never answers (`hang`) or is a closed port (`refuse`); the
//! reference is the same dashboard offline (`BOARDSMITH_OFFLINE=1`: demo data only), measured
//! in the same run.
//!
//! For each example and mode a `boardsmith serve` child creates the dashboard from its
//! template; a second child on the same data (nothing cached, breakers closed) runs its
//! start-up check of the providers, as before an analyst signs in; then one WebSocket
//! subscribes and times each panel's first result (`panel.data` or `panel.error`). A panel is
//! *settled* at its first result; *demo* panels are those whose data came from the demo
//! generators only. Targets (issue 38): every example settles within 1.5 s, and demo panels
//! beside failing ones within 0.3 s.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::Message;

use super::{start_server_in, temp_dir};

/// Every example dashboard settles within this.
const SETTLE_TARGET: Duration = Duration::from_millis(1500);
/// Demo panels beside failing ones draw within this.
const DEMO_TARGET: Duration = Duration::from_millis(300);
/// Longest the bench waits for a dashboard to settle.
const GIVE_UP: Duration = Duration::from_secs(30);

/// How the providers fail.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Offline,
    Hang,
    Refuse,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Self::Offline => "offline (ref)",
            Self::Hang => "hang",
            Self::Refuse => "refuse",
        }
    }
}

/// One dashboard's timings.
struct Settled {
    panels: usize,
    failing: usize,
    settle: Duration,
    /// The slowest demo panel, if any.
    demo: Option<Duration>,
}

/// Runs the benchmark and prints its table.
#[base::boxed]
pub async fn outage() -> anyhow::Result<ExitCode> {
    // The hanging upstream: accepts every request and never answers.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let hanging = listener.local_addr()?;
    let app = axum::Router::new().fallback(std::future::pending::<()>);
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let refusing = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?;
    let registry = crate::sdk::Registry::embedded(&|_| true)?;
    let vars = crate::sdk::provider::base_url_vars(&registry);

    crate::outln!("example dashboards with every data provider unreachable (issue 38 targets)");
    crate::outln!(
        "{:<16} {:<14} {:>7} {:>8} {:>11} {:>11} {:>7}",
        "dashboard",
        "providers",
        "panels",
        "failing",
        "settled ms",
        "demo ms",
        "target"
    );
    let mut all_met = true;
    for (template, _) in crate::app::templates() {
        for mode in [Mode::Offline, Mode::Hang, Mode::Refuse] {
            let origin = match mode {
                Mode::Offline => String::new(),
                Mode::Hang => format!("http://{hanging}"),
                Mode::Refuse => format!("http://{refusing}"),
            };
            let mut env: Vec<(&str, &str)> = Vec::new();
            let allow = origin.trim_start_matches("http://").to_owned();
            if mode == Mode::Offline {
                env.push(("BOARDSMITH_OFFLINE", "1"));
            } else {
                env.extend(vars.iter().map(|v| (v.as_str(), origin.as_str())));
                env.push(("BOARDSMITH_OUTBOUND_ALLOW", &allow));
            }
            let s = settle(&template, &env).await?;
            let met = mode == Mode::Offline
                || (s.settle <= SETTLE_TARGET
                    && (s.failing == 0 || s.demo.is_none_or(|d| d <= DEMO_TARGET)));
            all_met &= met;
            crate::outln!(
                "{:<16} {:<14} {:>7} {:>8} {:>11.0} {:>11} {:>7}",
                template,
                mode.name(),
                s.panels,
                s.failing,
                s.settle.as_secs_f64() * 1e3,
                s.demo.map_or("-".to_owned(), |d| format!("{:.0}", d.as_secs_f64() * 1e3)),
                if mode == Mode::Offline {
                    "ref"
                } else if met {
                    "ok"
                } else {
                    "MISSED"
                }
            );
        }
    }
    crate::outln!(
        "targets: settled <= {} ms; demo panels beside failing ones <= {} ms",
        SETTLE_TARGET.as_millis(),
        DEMO_TARGET.as_millis()
    );
    Ok(if all_met { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// Starts a server with `env`, creates `template`, subscribes and times each panel's first
/// result.
async fn settle(template: &str, env: &[(&str, &str)]) -> anyhow::Result<Settled> {
    let server = start_server_in(temp_dir("bench-outage")?, env).await?;
    let http = server.client()?;
    let (id, created) = server.create(&http, serde_json::json!({ "template": template })).await?;
    let panels = created["data"]["state"]["panels"].as_array().map_or(0, Vec::len);
    // Creating ran every panel once (and opened breakers): the timing is of a fresh server on
    // the same data, as after a restart, with nothing cached and no breaker open.
    let server = start_server_in(server.into_dir(), env).await?;
    let http = server.client()?;
    // An analyst signs in after the start-up check of the providers has run.
    let checked = Instant::now();
    while checked.elapsed() < Duration::from_secs(5) {
        let health: serde_json::Value =
            http.get(format!("http://{}/api/sdk/health", server.addr)).send().await?.json().await?;
        let providers = health["data"]["providers"].as_array().cloned().unwrap_or_default();
        if providers.iter().all(|p| p["status"] != "unknown") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut ws = server.connect().await?;
    let sub = serde_json::json!({"type": "subscribe", "dashboardId": id}).to_string();
    let started = Instant::now();
    ws.send(Message::Text(sub.into())).await?;
    let mut seen = std::collections::HashSet::new();
    let (mut failing, mut settle, mut demo) = (0, Duration::ZERO, None::<Duration>);
    while seen.len() < panels && started.elapsed() < GIVE_UP {
        let Ok(Some(Ok(Message::Text(text)))) = tokio::time::timeout(GIVE_UP, ws.next()).await
        else {
            continue;
        };
        let m: serde_json::Value = serde_json::from_str(&text)?;
        let kind = m["type"].as_str().unwrap_or_default();
        if !matches!(kind, "panel.data" | "panel.error") {
            continue;
        }
        let Some(panel) = m["panelId"].as_str() else { continue };
        if !seen.insert(panel.to_owned()) {
            continue;
        }
        let at = started.elapsed();
        settle = settle.max(at);
        if kind == "panel.error" || m.get("stale").is_some() {
            failing += 1;
        }
        let origins = m["provenance"].as_array();
        if kind == "panel.data"
            && origins.is_some_and(|o| !o.is_empty() && o.iter().all(|p| p["demo"] == true))
        {
            demo = Some(demo.map_or(at, |d| d.max(at)));
        }
    }
    if seen.len() < panels {
        settle = GIVE_UP;
    }
    Ok(Settled { panels, failing, settle, demo })
}
