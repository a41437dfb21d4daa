//! `boardsmith bench hardening`: what one credential can make a real `serve` child hold. Each
//! row reads the child's RSS before, at its peak and after, while another client asks
//! `/healthz` every 100 ms on a fresh connection (the table prints its slowest answer and its
//! failures):
//!
//! - **MCP initializes**: a `read` key's 20,000 `initialize` requests (sessions kept, as for a
//!   pre-2026 client), 32 at a time; beside it, the memory one live session costs, from a
//!   second child with the session caps lifted.
//! - **trickled bodies**: a `write` key's 5,000 connections each sending a POST body one byte
//!   every 5 s (fewer when the file-descriptor limit does not allow them; the table says so),
//!   held until the server has answered every one of them.
//! - **PDF bomb**: a 1 MiB PDF whose FlateDecode content stream inflates to 1 GiB of zeros
//!   (`knowledge::hostile_pdf::flate_bomb`), uploaded to a knowledge base as multipart; the
//!   document worker refuses it in its own process.
//!
//! A row passes when the growth (after − before) is at most 200 MB and `/healthz` never failed.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio_util::sync::CancellationToken;

use super::{ServerChild, rss_bytes, start_server_in, temp_dir};

/// Growth a row may show.
const GROWTH_LIMIT: u64 = 200 * 1000 * 1000;

/// The MCP protocol version that keeps sessions.
const MCP_VERSION: &str = "2025-06-18";

/// One row of the table.
struct Row {
    scenario: String,
    result: String,
    before: u64,
    peak: u64,
    after: u64,
    healthz: Watch,
}

impl Row {
    fn growth(&self) -> i64 {
        i64::try_from(self.after).unwrap_or(i64::MAX) - i64::try_from(self.before).unwrap_or(0)
    }

    fn passed(&self) -> bool {
        self.growth() <= i64::try_from(GROWTH_LIMIT).unwrap_or(i64::MAX)
            && self.healthz.failures == 0
            && self.healthz.probes > 0
    }
}

/// What the watcher saw: `/healthz` from another client, and the child's RSS.
#[derive(Debug, Default, Clone, Copy)]
struct Watch {
    probes: usize,
    failures: usize,
    slowest: Duration,
    peak_rss: u64,
}

/// Probes `/healthz` every 100 ms on a fresh connection (5 s timeout) and samples the child's
/// RSS every 50 ms, until `stop`.
fn watch(addr: String, pid: u32, stop: CancellationToken) -> tokio::task::JoinHandle<Watch> {
    tokio::spawn(async move {
        let mut seen = Watch { peak_rss: rss_bytes(pid), ..Watch::default() };
        let Ok(http) = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .timeout(Duration::from_secs(5))
            .build()
        else {
            return seen;
        };
        let url = format!("http://{addr}/healthz");
        let mut next_probe = Instant::now();
        while !stop.is_cancelled() {
            seen.peak_rss = seen.peak_rss.max(rss_bytes(pid));
            if Instant::now() >= next_probe {
                let t = Instant::now();
                let ok = http.get(&url).send().await.is_ok_and(|r| r.status().is_success());
                seen.probes += 1;
                seen.slowest = seen.slowest.max(t.elapsed());
                if !ok {
                    seen.failures += 1;
                }
                next_probe = Instant::now() + Duration::from_millis(100);
            }
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(50)) => {}
                () = stop.cancelled() => {}
            }
        }
        seen.peak_rss = seen.peak_rss.max(rss_bytes(pid));
        seen
    })
}

/// Runs `work` against `server` between two RSS readings (the second after `settle`), watched.
async fn measured<F, T>(server: &ServerChild, settle: Duration, work: F) -> (T, u64, u64, Watch)
where
    F: Future<Output = T>,
{
    let pid = server.child.id();
    let before = rss_bytes(pid);
    let stop = CancellationToken::new();
    let watcher = watch(server.addr.clone(), pid, stop.clone());
    let out = work.await;
    tokio::time::sleep(settle).await;
    let after = rss_bytes(pid);
    stop.cancel();
    let seen = watcher.await.unwrap_or_default();
    (out, before, after, seen)
}

/// A new API key of the child with `scopes`.
async fn new_key(server: &ServerChild, scopes: &[&str]) -> anyhow::Result<String> {
    let created: serde_json::Value = server
        .client()?
        .post(format!("http://{}/api/keys", server.addr))
        .json(&serde_json::json!({"name": "bench", "scopes": scopes}))
        .send()
        .await?
        .json()
        .await?;
    created["data"]["key"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| anyhow::anyhow!("making a key failed: {created}"))
}

/// `n` MCP `initialize` requests with `key`, 32 at a time; the count of each status.
async fn initializes(server: &ServerChild, key: &str, n: usize) -> BTreeMap<u16, usize> {
    let http = reqwest::Client::new();
    let url = format!("http://{}/mcp", server.addr);
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": MCP_VERSION, "capabilities": {},
        "clientInfo": {"name": "bench-hardening", "version": "1"}}});
    let statuses: Vec<u16> = futures::stream::iter(0..n)
        .map(|_| {
            let req = http
                .post(&url)
                .bearer_auth(key)
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", MCP_VERSION)
                .json(&init);
            async move {
                match req.send().await {
                    Ok(r) => {
                        let status = r.status().as_u16();
                        let _ = r.bytes().await;
                        status
                    }
                    Err(_) => 0,
                }
            }
        })
        .buffer_unordered(32)
        .collect()
        .await;
    let mut counts = BTreeMap::new();
    for s in statuses {
        *counts.entry(s).or_insert(0) += 1;
    }
    counts
}

/// `{200: 19000, 429: 1000}` as `200×19000 429×1000` (0: no answer).
fn statuses(counts: &BTreeMap<u16, usize>) -> String {
    counts
        .iter()
        .map(|(s, n)| if *s == 0 { format!("none×{n}") } else { format!("{s}×{n}") })
        .collect::<Vec<_>>()
        .join(" ")
}

/// One connection POSTing a body one byte every `every`, reading the answer as it comes;
/// returns the answer's status (0: closed without one).
async fn trickle(addr: String, key: String, every: Duration) -> u16 {
    let Ok(tcp) = tokio::net::TcpStream::connect(&addr).await else { return 0 };
    let (mut rd, mut wr) = tcp.into_split();
    let head = format!(
        "POST /api/dashboards HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {key}\r\n\
         Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{{"
    );
    let writer = async move {
        if wr.write_all(head.as_bytes()).await.is_ok() {
            loop {
                tokio::time::sleep(every).await;
                if wr.write_all(b" ").await.is_err() {
                    break;
                }
            }
        }
        std::future::pending::<()>().await;
    };
    let reader = async move {
        let mut out = Vec::new();
        let mut buf = [0u8; 1024];
        while let Ok(n @ 1..) = rd.read(&mut buf).await {
            out.extend_from_slice(&buf[..n]);
        }
        let text = String::from_utf8_lossy(&out);
        text.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0)
    };
    tokio::select! {
        status = reader => status,
        () = writer => 0,
        // Far past any deadline the server sets: a connection held this long is a failure.
        () = tokio::time::sleep(Duration::from_secs(300)) => 0,
    }
}

/// `n` trickling connections opened together; the count of each status.
async fn trickles(
    server: &ServerChild,
    key: &str,
    n: usize,
    every: Duration,
) -> BTreeMap<u16, usize> {
    let mut tasks = Vec::with_capacity(n);
    for _ in 0..n {
        tasks.push(tokio::spawn(trickle(server.addr.clone(), key.to_owned(), every)));
    }
    let mut counts = BTreeMap::new();
    for t in tasks {
        *counts.entry(t.await.unwrap_or(0)).or_insert(0) += 1;
    }
    counts
}

/// Uploads the bomb to a new knowledge base as multipart; a line saying what came back.
async fn upload_bomb(server: &ServerChild, pdf: Vec<u8>) -> anyhow::Result<String> {
    let http = server.client()?;
    let base: serde_json::Value = http
        .post(format!("http://{}/api/kb", server.addr))
        .json(&serde_json::json!({"name": "bench-bomb"}))
        .send()
        .await?
        .json()
        .await?;
    let id = base["data"]["id"]
        .as_str()
        .ok_or_else(|| anyhow::anyhow!("making a knowledge base failed: {base}"))?;
    let boundary = "bench-hardening-boundary";
    let mut body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"bomb.pdf\"\r\n\
         Content-Type: application/pdf\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(&pdf);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    let sent = http
        .post(format!("http://{}/api/kb/{id}/documents", server.addr))
        .header("content-type", format!("multipart/form-data; boundary={boundary}"))
        .timeout(Duration::from_secs(180))
        .body(body)
        .send()
        .await;
    Ok(match sent {
        Ok(r) => {
            let status = r.status().as_u16();
            let v: serde_json::Value = r.json().await.unwrap_or_default();
            let msg: String = v["msg"].as_str().unwrap_or("").chars().take(60).collect();
            format!("{status} {msg}")
        }
        Err(e) => format!("no answer: {e}"),
    })
}

fn mb(bytes: u64) -> String {
    format!("{:.0} MB", bytes as f64 / 1e6)
}

/// Runs the benchmark (see the module doc).
#[base::boxed]
pub async fn hardening(
    initializes_n: usize,
    trickled: usize,
    every: Duration,
    bomb: bool,
) -> anyhow::Result<ExitCode> {
    let _ = rlimit::increase_nofile_limit(u64::MAX);
    let fds = rlimit::getrlimit(rlimit::Resource::NOFILE).map_or(1024, |(soft, _)| soft);
    let mut rows = Vec::new();
    let mut notes = Vec::new();

    // The cost of one live session: a child with the caps lifted.
    let calibrate = initializes_n.min(5000);
    let lifted = start_server_in(
        temp_dir("hardening-lifted")?,
        &[
            ("BOARDSMITH_MCP_SESSIONS_PER_KEY", "1000000"),
            ("BOARDSMITH_MCP_MAX_SESSIONS", "1000000"),
        ],
    )
    .await?;
    let key = new_key(&lifted, &["read"]).await?;
    let pid = lifted.child.id();
    initializes(&lifted, &key, 50).await;
    let before = rss_bytes(pid);
    let counts = initializes(&lifted, &key, calibrate).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let per_session = rss_bytes(pid).saturating_sub(before) / calibrate.max(1) as u64;
    notes.push(format!(
        "one live MCP session costs {:.1} KB of server RSS ({calibrate} sessions held with the \
         caps lifted: {})",
        per_session as f64 / 1e3,
        statuses(&counts)
    ));
    drop(lifted);

    let server = start_server_in(temp_dir("hardening")?, &[]).await?;
    let reader = new_key(&server, &["read"]).await?;
    let writer = new_key(&server, &["read", "write"]).await?;

    let (counts, before, after, seen) =
        measured(&server, Duration::from_secs(1), initializes(&server, &reader, initializes_n))
            .await;
    rows.push(Row {
        scenario: format!("{initializes_n} MCP initializes, one read key"),
        result: statuses(&counts),
        before,
        peak: seen.peak_rss,
        after,
        healthz: seen,
    });

    // Each trickle holds a descriptor here and one in the server (which has the same limit and
    // takes a quarter of it as its connection cap); leave room for everything else.
    let room = usize::try_from(fds.saturating_sub(512)).unwrap_or(usize::MAX);
    let n = trickled.min(room);
    if n < trickled {
        notes.push(format!(
            "trickled bodies: {n} instead of {trickled}, as the file-descriptor limit is {fds}"
        ));
    }
    let owner_probe = {
        let http = server.client()?;
        let url = format!("http://{}/api/dashboards", server.addr);
        async move {
            tokio::time::sleep(Duration::from_secs(3)).await;
            let t = Instant::now();
            let ok = http.get(&url).send().await.is_ok_and(|r| r.status().is_success());
            (ok, t.elapsed())
        }
    };
    let ((counts, (owner_ok, owner_took)), before, after, seen) =
        measured(&server, Duration::from_secs(1), async {
            tokio::join!(trickles(&server, &writer, n, every), owner_probe)
        })
        .await;
    notes.push(format!(
        "during the trickle, the owner's GET /api/dashboards: {} in {:.1} ms",
        if owner_ok { "200" } else { "FAILED" },
        owner_took.as_secs_f64() * 1e3
    ));
    rows.push(Row {
        scenario: format!("{n} trickled bodies (1 B / {} s), one write key", every.as_secs()),
        result: statuses(&counts),
        before,
        peak: seen.peak_rss,
        after,
        healthz: seen,
    });

    if bomb {
        let pdf = crate::knowledge::hostile_pdf::flate_bomb(1 << 30);
        let size = pdf.len();
        let (answer, before, after, seen) =
            measured(&server, Duration::from_secs(2), upload_bomb(&server, pdf)).await;
        let mut server = server;
        let alive = server.child.try_wait().map(|s| s.is_none()).unwrap_or(false);
        rows.push(Row {
            scenario: format!("PDF bomb upload ({:.1} MB → 1 GiB)", size as f64 / 1e6),
            result: format!("{}{}", answer?, if alive { "" } else { "; SERVER DIED" }),
            before,
            peak: seen.peak_rss,
            after: if alive { after } else { u64::MAX / 2 },
            healthz: seen,
        });
    }

    println!("\n## Hardening (server RSS; growth limit {})\n", mb(GROWTH_LIMIT));
    println!(
        "| scenario | answers | RSS before | peak | after | growth | /healthz probes, failed, slowest | verdict |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let mut all = true;
    for r in &rows {
        let verdict = if r.passed() { "ok" } else { "FAIL" };
        all &= r.passed();
        println!(
            "| {} | {} | {} | {} | {} | {:+.0} MB | {}, {}, {:.1} ms | {verdict} |",
            r.scenario,
            r.result,
            mb(r.before),
            mb(r.peak),
            mb(r.after),
            r.growth() as f64 / 1e6,
            r.healthz.probes,
            r.healthz.failures,
            r.healthz.slowest.as_secs_f64() * 1e3,
        );
    }
    println!();
    for n in notes {
        println!("- {n}");
    }
    Ok(if all { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
