//! `boardsmith bench cluster`: several `boardsmith serve` nodes on one PostgreSQL database
//! (a fresh one per configuration, dropped afterwards), WebSocket subscribers spread over them,
//! agent mutates sent to each node in turn; mutate → patch delivery, all subscribers and those
//! on another node than the writer's; durable saves/s of each store; the embedded store's
//! single node in the same run for comparison.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::SinkExt as _;
use tokio_postgres::NoTls;
use tokio_tungstenite::tungstenite::Message;

use super::{ServerChild, fmt, percentiles, start_server_in, temp_dir};

/// A database made for one configuration and dropped with this value.
struct BenchDb {
    admin: String,
    name: String,
    url: String,
}

impl BenchDb {
    async fn new(admin: &str) -> anyhow::Result<Self> {
        let name = format!("bs_bench_{}", uuid::Uuid::now_v7().simple());
        let (client, conn) = tokio_postgres::connect(admin, NoTls).await?;
        tokio::spawn(conn);
        client.batch_execute(&format!("CREATE DATABASE {name}")).await?;
        let cut = admin.rfind('/').ok_or_else(|| anyhow::anyhow!("no database in {admin}"))?;
        Ok(Self { admin: admin.to_owned(), url: format!("{}/{name}", &admin[..cut]), name })
    }

    async fn drop_now(self) {
        if let Ok((client, conn)) = tokio_postgres::connect(&self.admin, NoTls).await {
            tokio::spawn(conn);
            let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
            if let Err(e) = client.batch_execute(&sql).await {
                eprintln!("could not drop {}: {e}", self.name);
            }
        }
    }
}

/// One configuration's figures.
struct Row {
    label: String,
    all: Vec<Duration>,
    cross: Vec<Duration>,
    saves_per_s: f64,
}

/// A small live dashboard: four cheap panels (the bench measures delivery, not panel code).
fn dashboard() -> serde_json::Value {
    let panels: Vec<serde_json::Value> = (0..4)
        .map(|i| {
            serde_json::json!({
                "id": format!("p{i}"), "title": format!("Value {i}"), "type": "metric_card",
                "renderer": "custom", "code": format!("return {{ value: {i} }};"),
            })
        })
        .collect();
    serde_json::json!({"title": "Cluster bench", "layout": {"columns": 4}, "panels": panels})
}

/// Starts `nodes` servers (on `database`, or each on its embedded store when `None`).
async fn start(
    nodes: usize,
    database: Option<&str>,
    websockets: &str,
) -> anyhow::Result<Vec<ServerChild>> {
    let mut out = Vec::new();
    for _ in 0..nodes {
        let mut env = vec![("BOARDSMITH_MAX_WEBSOCKETS", websockets), ("BOARDSMITH_WORKERS", "1")];
        if let Some(url) = database {
            env.push(("BOARDSMITH_DATABASE_URL", url));
        }
        out.push(start_server_in(temp_dir("cluster")?, &env).await?);
    }
    Ok(out)
}

/// Mutate → patch on `subscribers` spread over `nodes`, `rounds` mutates sent to each node in
/// turn; then durable saves/s through the REST API, 16 writers spread over the nodes.
async fn measure(
    label: String,
    nodes: &[ServerChild],
    subscribers: usize,
    rounds: usize,
) -> anyhow::Result<Row> {
    let clients: Vec<reqwest::Client> =
        nodes.iter().map(ServerChild::client).collect::<anyhow::Result<_>>()?;
    let (id, _) = nodes[0].create_dashboard(&clients[0], dashboard()).await?;

    // (version, arrival, the subscriber's node)
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(u64, Instant, usize)>();
    let mut readers = Vec::new();
    for s in 0..subscribers {
        let node = s % nodes.len();
        let mut ws = nodes[node].connect().await?;
        let sub = serde_json::json!({"type": "subscribe", "dashboardId": id}).to_string();
        ws.send(Message::Text(sub.into())).await?;
        let tx = tx.clone();
        readers.push(tokio::spawn(async move {
            while let Some(Ok(msg)) = futures::StreamExt::next(&mut ws).await {
                if let Message::Text(t) = msg
                    && (t.starts_with("{\"type\":\"dashboard.patch\"")
                        || t.starts_with("{\"type\":\"dashboard.snapshot\""))
                {
                    let at = Instant::now();
                    let v: serde_json::Value = serde_json::from_str(&t).unwrap_or_default();
                    let _ = tx.send((v["version"].as_u64().unwrap_or(0), at, node));
                }
            }
        }));
    }
    // Every subscriber's snapshot (version 1) first.
    let mut ready = 0;
    while ready < subscribers {
        match tokio::time::timeout(Duration::from_secs(30), rx.recv()).await? {
            Some((1, _, _)) => ready += 1,
            Some(_) => {}
            None => anyhow::bail!("subscribers closed"),
        }
    }

    const WARMUP: usize = 3;
    let (mut all, mut cross) = (Vec::new(), Vec::new());
    for round in 0..rounds + WARMUP {
        let writer = round % nodes.len();
        let code = format!(
            "async (s) => {{ s.panels[{p}].code = 'return {{ value: {v} }};'; return s; }}",
            p = round % 4,
            // Never a panel's current code: an edit that changes nothing saves nothing.
            v = 100 + round
        );
        let t0 = Instant::now();
        let out: serde_json::Value = clients[writer]
            .post(format!("http://{}/api/tools/mutate", nodes[writer].addr))
            .json(&serde_json::json!({"code": code, "dashboard_id": id}))
            .send()
            .await?
            .json()
            .await?;
        anyhow::ensure!(out["data"]["error"].is_null(), "mutate failed: {out}");
        let version = round as u64 + 2;
        let mut seen = 0;
        while seen < subscribers {
            let Some((v, at, node)) =
                tokio::time::timeout(Duration::from_secs(10), rx.recv()).await?
            else {
                break;
            };
            if v != version {
                continue;
            }
            seen += 1;
            if round >= WARMUP {
                let took = at.duration_since(t0);
                all.push(took);
                if node != writer {
                    cross.push(took);
                }
            }
        }
    }
    for r in &readers {
        r.abort();
    }

    // Durable saves/s through the API: 16 writers, each on a dashboard of its own, spread
    // over the nodes, for 3 s.
    let mut ids = Vec::new();
    for w in 0..16 {
        let n = w % nodes.len();
        ids.push((n, nodes[n].create_dashboard(&clients[n], dashboard()).await?.0));
    }
    let until = Instant::now() + Duration::from_secs(3);
    let start = Instant::now();
    let done = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let writers: Vec<_> = ids
        .into_iter()
        .map(|(n, id)| {
            let (http, addr, done) = (clients[n].clone(), nodes[n].addr.clone(), done.clone());
            tokio::spawn(async move {
                let mut base = 1u64;
                while Instant::now() < until {
                    let mut state = dashboard();
                    state["title"] = serde_json::json!(format!("save {base}"));
                    let r = http
                        .put(format!("http://{addr}/api/dashboards/{id}"))
                        .json(&serde_json::json!({"baseVersion": base, "state": state}))
                        .send()
                        .await?;
                    anyhow::ensure!(r.status() == 200, "save failed: {}", r.status());
                    base += 1;
                    done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
                Ok(())
            })
        })
        .collect();
    for w in writers {
        w.await??;
    }
    let saves_per_s =
        done.load(std::sync::atomic::Ordering::Relaxed) as f64 / start.elapsed().as_secs_f64();
    Ok(Row { label, all, cross, saves_per_s })
}

/// Runs the cluster benchmark and prints its table.
#[base::boxed]
pub async fn cluster(
    subscribers: usize,
    rounds: usize,
    admin_url: &str,
) -> anyhow::Result<ExitCode> {
    let _ = rlimit::increase_nofile_limit(u64::MAX);
    let websockets = (subscribers + 64).to_string();
    let mut rows = Vec::new();
    {
        let nodes = start(1, None, &websockets).await?;
        rows.push(measure("embedded store, 1 node".into(), &nodes, subscribers, rounds).await?);
    }
    for n in 1..=3 {
        let db = BenchDb::new(admin_url).await?;
        let measured = async {
            let nodes = start(n, Some(&db.url), &websockets).await?;
            let label = format!("PostgreSQL, {n} node{}", if n == 1 { "" } else { "s" });
            measure(label, &nodes, subscribers, rounds).await
        }
        .await;
        db.drop_now().await;
        rows.push(measured?);
    }
    // The store alone, without HTTP: the durable saves the engine itself sustains.
    let dir = temp_dir("cluster-saves")?;
    let embedded_saves = crate::store::bench_saves(&dir.0, 16, 3.0).await?;
    let db = BenchDb::new(admin_url).await?;
    let pg_store =
        crate::store::Store::connect(&db.url, crate::store::StoreOptions::default()).await;
    let pg_saves = match pg_store {
        Ok(store) => crate::store::bench_saves_on(Arc::new(store), 16, 3.0).await,
        Err(e) => Err(e),
    };
    db.drop_now().await;
    let pg_saves = pg_saves?;

    crate::outln!(
        "{:<28} {:>10} {:>10} {:>12} {:>12} {:>10}",
        "cluster (mutate → patch)",
        "all p50",
        "all p99",
        "cross p50",
        "cross p99",
        "saves/s"
    );
    for r in &rows {
        let (a50, a99) = percentiles(r.all.clone());
        let (c50, c99) = if r.cross.is_empty() {
            ("-".to_owned(), "-".to_owned())
        } else {
            let (c50, c99) = percentiles(r.cross.clone());
            (fmt(c50), fmt(c99))
        };
        crate::outln!(
            "{:<28} {:>10} {:>10} {:>12} {:>12} {:>10.0}",
            r.label,
            fmt(a50),
            fmt(a99),
            c50,
            c99,
            r.saves_per_s
        );
    }
    crate::outln!(
        "{subscribers} subscribers spread over the nodes, {rounds} mutates sent to each node in \
         turn; saves/s: REST saves of ~1 KB states, 16 writers spread over the nodes"
    );
    crate::outln!(
        "store alone, 16 writers, ~20 KB states: embedded {embedded_saves:.0} saves/s, \
         PostgreSQL {pg_saves:.0} saves/s   targets: cross p99 ≤ 50 ms at 1,000 subscribers; \
         ≥ 1,000 durable saves/s with PostgreSQL"
    );
    Ok(ExitCode::SUCCESS)
}
