//! `boardsmith eval`: runs analyst requests (`tests/eval/*.json`) against a real model through
//! the in-process [`AgentService`](crate::agent::service::AgentService) of a fresh app (temp
//! data directory, built-in agents and tools, no templates), and prints per request: success,
//! panels ok/total, fix rounds, tokens, wall time.
//!
//! A case file is one chat: `{name, description?, agent?, requests: [{message, expect?}]}`;
//! its requests run in order in the same chat (edits, switching, deleting). `expect` holds
//! `minPanels`, `types` (panel types that must be present), `deleted` (the request deletes
//! the active dashboard) and `asks` (the agent should ask instead of building). A request
//! succeeds when its run completes, the expectations hold and every panel of the chat's active
//! dashboard passed its latest test run.
//!
//! Not run in CI (it needs a provider key); without one it fails before starting anything,
//! with the message of the LLM configuration (which variable to set), exit code 2.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use serde::Deserialize;
use serde_json::Value;

use crate::agent::service::QueryRequest;
use crate::app::{App, AppConfig};
use crate::llm::config::LlmConfig;

/// A chat of analyst requests.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EvalCase {
    /// Short name, shown in the report.
    pub name: String,
    /// What the case covers.
    #[serde(default)]
    pub description: String,
    /// The agent; absent: the one given on the command line.
    #[serde(default)]
    pub agent: Option<String>,
    /// The requests, in chat order.
    pub requests: Vec<EvalRequest>,
}

/// One analyst message and what should come of it.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EvalRequest {
    /// The user's message.
    pub message: String,
    /// Expectations.
    #[serde(default)]
    pub expect: Expect,
}

/// What a request should leave behind.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Expect {
    /// At least this many panels on the active dashboard.
    #[serde(default)]
    pub min_panels: Option<usize>,
    /// Panel types that must be present.
    #[serde(default)]
    pub types: Vec<String>,
    /// The request deletes the active dashboard.
    #[serde(default)]
    pub deleted: bool,
    /// The agent should ask a question and build nothing.
    #[serde(default)]
    pub asks: bool,
}

/// The measurements of one request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestReport {
    /// The run completed and the expectations held.
    pub success: bool,
    /// Panels of the active dashboard whose latest test run succeeded.
    pub panels_ok: usize,
    /// Panels of the active dashboard.
    pub panels_total: usize,
    /// execute/mutate calls after the first one that reported a failure.
    pub fix_rounds: usize,
    /// Tool calls made.
    pub tool_calls: usize,
    /// Prompt and generated tokens of all the run's model calls, as the provider reported
    /// them (read back from chat memory).
    pub tokens: (u64, u64),
    /// Wall time of the run.
    pub wall: Duration,
    /// Why it is not a success.
    pub note: String,
}

/// Command-line arguments of `boardsmith eval`.
#[derive(Debug, Clone)]
pub struct EvalArgs {
    /// Default agent of the cases (`dashboard`).
    pub agent: String,
    /// Provider key.
    pub provider: Option<String>,
    /// Model id.
    pub model: Option<String>,
    /// Directory of case files (`tests/eval`).
    pub cases: PathBuf,
    /// Only cases whose name contains this.
    pub only: Option<String>,
}

/// Reads every `*.json` case of `dir`, sorted by file name.
pub fn load_cases(dir: &Path) -> anyhow::Result<Vec<EvalCase>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| {
            let text =
                std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            let case: EvalCase =
                serde_json::from_str(&text).with_context(|| format!("parsing {}", p.display()))?;
            anyhow::ensure!(!case.requests.is_empty(), "{}: no requests", p.display());
            Ok(case)
        })
        .collect()
}

/// The LLM configuration with every model call routed to `provider/model` (as
/// `BOARDSMITH_MODEL` would), checked: an unusable provider is an error naming what to set.
pub fn llm_for(provider: Option<&str>, model: Option<&str>) -> anyhow::Result<LlmConfig> {
    let model_ref = match (provider, model) {
        (Some(p), Some(m)) => format!("{p}/{m}"),
        (Some(p), None) => p.to_owned(),
        (None, Some(m)) => m.to_owned(),
        (None, None) => anyhow::bail!("--provider (or --model) is required"),
    };
    let env = |k: &str| {
        if k == "BOARDSMITH_MODEL" { Some(model_ref.clone()) } else { std::env::var(k).ok() }
    };
    let config = LlmConfig::load(crate::config_file::path().as_deref(), &env)?;
    // Fails with the variable to set when the provider has no key.
    config.resolve(&model_ref)?;
    Ok(config)
}

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> anyhow::Result<Self> {
        let path = std::env::temp_dir().join(format!("boardsmith-eval-{}", uuid::Uuid::now_v7()));
        std::fs::create_dir_all(&path).with_context(|| format!("creating {}", path.display()))?;
        Ok(Self(path))
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What a finished run left in its events.
#[derive(Debug, Default)]
struct RunTrace {
    end: String,
    text: String,
    tool_calls: usize,
    tokens: (u64, u64),
    /// (tool name, result) of every tool call, in order.
    results: Vec<(String, Value)>,
}

async fn run_request(
    app: &App,
    agent: &str,
    chat_id: Option<String>,
    message: &str,
    deadline: Duration,
) -> anyhow::Result<(String, RunTrace)> {
    let request = QueryRequest {
        message: message.to_owned(),
        agent_key: Some(agent.to_owned()),
        chat_id,
        ..QueryRequest::default()
    };
    let mut stream = app.agents.start(request).await.map_err(|e| anyhow::anyhow!("{e}"))?;
    let chat_id = stream.chat_id.clone();
    let mut trace = RunTrace::default();
    let mut names: HashMap<String, String> = HashMap::new();
    let collect = async {
        while let Some(event) = stream.events.next().await.map_err(|e| anyhow::anyhow!("{e}"))? {
            let v = serde_json::to_value(&*event)?;
            let ty = v["type"].as_str().unwrap_or_default().to_owned();
            let id = v["toolId"].as_str().unwrap_or_default().to_owned();
            match ty.as_str() {
                "tool.start" | "tool.snapshot" => {
                    if let Some(name) = v["toolName"].as_str() {
                        names.insert(id, name.to_owned());
                    }
                }
                "content.delta" => {
                    let delta = v["delta"].as_str().unwrap_or_default();
                    trace.text.push_str(delta);
                }
                "tool.result" => {
                    trace.tool_calls += 1;
                    let name = names.get(&id).cloned().unwrap_or_default();
                    trace.results.push((name, v["result"].clone()));
                }
                "run.complete" | "run.error" | "run.cancel" => {
                    trace.end = ty;
                    if let Some(e) = v.get("error") {
                        trace.text.push_str(&format!(" [error: {e}]"));
                    }
                    // Read on to the stream's end: the run is stored in chat memory by then.
                }
                _ => {}
            }
        }
        anyhow::Ok(())
    };
    match tokio::time::timeout(deadline, collect).await {
        Ok(r) => r?,
        Err(_) => trace.end = "timeout".into(),
    }
    if let Ok(chat) = app.memory.load(&chat_id).await
        && let Some(run) = chat.runs.iter().find(|r| r.run_id == stream.run_id)
    {
        let u = run.usage();
        trace.tokens = (u.input_tokens, u.output_tokens);
    }
    Ok((chat_id, trace))
}

/// Fix rounds of one run: execute/mutate calls after the first one that failed.
fn fix_rounds(results: &[(String, Value)]) -> usize {
    let writes: Vec<&Value> =
        results.iter().filter(|(n, _)| n == "execute" || n == "mutate").map(|(_, v)| v).collect();
    let failed = |v: &Value| v.get("error").is_some() || v["validation"]["allOk"] == false;
    writes.iter().position(|v| failed(v)).map_or(0, |i| writes.len() - i - 1)
}

/// Scores one finished request against the chat's state.
async fn score(
    app: &App,
    chat_id: &str,
    expect: &Expect,
    trace: &RunTrace,
    status: &mut HashMap<(String, String), bool>,
) -> RequestReport {
    for (name, v) in &trace.results {
        if name != "execute" && name != "mutate" {
            continue;
        }
        let id = v["dashboard_id"].as_str().unwrap_or_default();
        for p in v["validation"]["panels"].as_array().into_iter().flatten() {
            let panel = p["panelId"].as_str().unwrap_or_default().to_owned();
            status.insert((id.to_owned(), panel), p["status"] == "success");
        }
    }
    let mut report = RequestReport {
        fix_rounds: fix_rounds(&trace.results),
        tool_calls: trace.tool_calls,
        tokens: trace.tokens,
        ..RequestReport::default()
    };
    let mut notes: Vec<String> = Vec::new();
    if trace.end != "run.complete" {
        notes.push(format!("{}{}", trace.end, trace.text.chars().take(120).collect::<String>()));
    }
    let session = app.tools.session(Some(chat_id)).await.unwrap_or_default();
    let wrote = trace.results.iter().any(|(n, _)| n == "execute" || n == "mutate");
    if expect.asks {
        if wrote {
            notes.push("built instead of asking".into());
        }
        if !trace.text.contains('?') && !trace.text.contains('？') {
            notes.push("no question in the answer".into());
        }
    }
    if expect.deleted {
        let deleted = trace.results.iter().any(|(n, v)| n == "mutate" && v["deleted"] == true);
        if !deleted {
            notes.push("nothing was deleted".into());
        }
    }
    if let Some(id) = session.active.as_deref().filter(|_| !expect.deleted && !expect.asks) {
        match app.dashboards.get(id).await {
            Ok(rec) => {
                report.panels_total = rec.state.panels.len();
                report.panels_ok = rec
                    .state
                    .panels
                    .iter()
                    .filter(|p| {
                        status.get(&(id.to_owned(), p.id.clone())).copied().unwrap_or(false)
                    })
                    .count();
                if report.panels_ok < report.panels_total {
                    notes.push("failing panels".into());
                }
                if let Some(min) = expect.min_panels.filter(|m| report.panels_total < *m) {
                    notes.push(format!("{} panels, expected at least {min}", report.panels_total));
                }
                let types: Vec<&str> = rec
                    .state
                    .panels
                    .iter()
                    .map(|p| crate::dashboard::validate::type_name(p.kind))
                    .collect();
                for t in &expect.types {
                    if !types.contains(&t.as_str()) {
                        notes.push(format!("no {t} panel"));
                    }
                }
            }
            Err(e) => notes.push(format!("active dashboard unreadable: {e}")),
        }
    } else if !expect.deleted && !expect.asks {
        notes.push("no active dashboard".into());
    }
    report.success = notes.is_empty();
    report.note = notes.join("; ");
    report
}

/// `boardsmith eval`: exit 0 when every request succeeded, 1 when some did not, 2 when nothing
/// could run (no usable provider, bad case files).
#[base::boxed]
pub async fn run(args: EvalArgs) -> anyhow::Result<ExitCode> {
    let llm = match llm_for(args.provider.as_deref(), args.model.as_deref()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e:#}");
            return Ok(ExitCode::from(2));
        }
    };
    let cases = match load_cases(&args.cases) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e:#}");
            return Ok(ExitCode::from(2));
        }
    };
    let cases: Vec<EvalCase> = cases
        .into_iter()
        .filter(|c| args.only.as_deref().is_none_or(|o| c.name.contains(o)))
        .collect();
    let dir = TempDir::new()?;
    let exe = std::env::current_exe().context("locating the boardsmith executable")?;
    let mut config = AppConfig::from_env(exe);
    config.data_dir = dir.path().join("data");
    config.load_templates = false;
    config.catalog = crate::agent::catalog::CatalogConfig {
        watch: false,
        ..crate::agent::catalog::CatalogConfig::in_dir(dir.path())
    };
    config.memory = Some(crate::agent::memory::MemoryConfig::new(dir.path()));
    config.llm = Some(llm);
    config.agent_tools =
        crate::agent::tools::ToolsConfig::new(dir.path().join("work"), dir.path().join("agents"));
    std::fs::create_dir_all(dir.path().join("work"))?;
    let app = App::start(config).await?;

    crate::outln!(
        "{:<14} {:>3}  {:<7} {:>9} {:>5} {:>5} {:>13} {:>8}  note",
        "case",
        "#",
        "result",
        "panels",
        "fixes",
        "tools",
        "tokens in/out",
        "wall"
    );
    let (mut ok, mut total) = (0usize, 0usize);
    let started = Instant::now();
    for case in &cases {
        let agent = case.agent.clone().unwrap_or_else(|| args.agent.clone());
        let mut chat_id: Option<String> = None;
        let mut status = HashMap::new();
        for (i, req) in case.requests.iter().enumerate() {
            let t0 = Instant::now();
            let report = match run_request(
                &app,
                &agent,
                chat_id.clone(),
                &req.message,
                Duration::from_secs(900),
            )
            .await
            {
                Ok((chat, trace)) => {
                    chat_id = Some(chat.clone());
                    let mut r = score(&app, &chat, &req.expect, &trace, &mut status).await;
                    r.wall = t0.elapsed();
                    r
                }
                Err(e) => {
                    RequestReport { wall: t0.elapsed(), note: e.to_string(), ..Default::default() }
                }
            };
            total += 1;
            ok += usize::from(report.success);
            crate::outln!(
                "{:<14} {:>3}  {:<7} {:>4}/{:<4} {:>5} {:>5} {:>13} {:>7.1}s  {}",
                case.name,
                i + 1,
                if report.success { "ok" } else { "FAIL" },
                report.panels_ok,
                report.panels_total,
                report.fix_rounds,
                report.tool_calls,
                format!("{}/{}", report.tokens.0, report.tokens.1),
                report.wall.as_secs_f64(),
                report.note
            );
        }
    }
    crate::outln!("{ok}/{total} requests succeeded in {:.1}s", started.elapsed().as_secs_f64());
    app.stop().await;
    drop(dir);
    Ok(if ok == total { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_case_files_parse_and_hold_enough_requests() {
        let cases = load_cases(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/eval")).unwrap();
        let requests: usize = cases.iter().map(|c| c.requests.len()).sum();
        assert!(requests >= 12, "{requests}");
        assert!(cases.iter().any(|c| c.agent.as_deref() == Some("dashboardZh")));
    }

    #[test]
    fn fix_rounds_count_writes_after_the_first_failure() {
        let w = |name: &str, v: Value| (name.to_owned(), v);
        let ok = json!({"validation": {"allOk": true}});
        let bad = json!({"validation": {"allOk": false}});
        assert_eq!(fix_rounds(&[w("search", json!({})), w("execute", ok.clone())]), 0);
        let r = [w("execute", bad), w("mutate", json!({"error": "x"})), w("mutate", ok)];
        assert_eq!(fix_rounds(&r), 2);
    }

    #[test]
    fn without_a_provider_eval_says_what_to_give() {
        let e = llm_for(None, None).unwrap_err().to_string();
        assert!(e.contains("--provider"), "{e}");
    }
}
