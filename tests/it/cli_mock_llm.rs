//! `boardsmith mock-llm`: the binary serves a script on loopback, prints its URL on stdout,
//! streams the scripted answers in OpenAI shape over real HTTP, exits 0 on SIGTERM; a bad script
//! exits 2 naming the file and the JSON path.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::process::{Child, Command};

use crate::support;

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mock-llm").join(name)
}

/// Starts `boardsmith mock-llm` and returns it with the URL from its one stdout line.
async fn start(script: &Path) -> (Child, String) {
    let (child, line, _) = support::spawn_until_line(
        Command::new(support::program()).args([
            "mock-llm",
            "--script",
            script.to_str().unwrap(),
            "--port",
            "0",
        ]),
        "mock-llm",
    )
    .await;
    let url = line
        .strip_prefix("mock-llm listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_owned();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    (child, url)
}

/// SIGTERM, then the exit status must be success.
async fn stop(mut child: Child) {
    let pid = child.id().unwrap().to_string();
    let kill = std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(kill.success());
    let exit = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("still running 10 s after SIGTERM")
        .unwrap();
    assert!(exit.success(), "{exit:?}");
}

struct Answer {
    status: u16,
    content_type: String,
    retry_after: Option<String>,
    body: String,
}

/// One OpenAI-style streaming chat request.
async fn chat(url: &str, messages: Value) -> Answer {
    let resp = reqwest::Client::new()
        .post(format!("{url}/v1/chat/completions"))
        .json(&json!({
            "model": "mock-model",
            "stream": true,
            "stream_options": {"include_usage": true},
            "messages": messages,
        }))
        .send()
        .await
        .unwrap();
    let header = |name: &str| resp.headers().get(name).map(|v| v.to_str().unwrap().to_owned());
    let content_type = header("content-type").unwrap_or_default();
    let retry_after = header("retry-after");
    Answer {
        status: resp.status().as_u16(),
        content_type,
        retry_after,
        body: resp.text().await.unwrap(),
    }
}

/// The JSON chunks of an SSE body (`[DONE]` excluded).
fn chunks(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).unwrap())
        .collect()
}

/// The concatenation of one delta field (`content`, `reasoning_content`) over the chunks.
fn joined(body: &str, field: &str) -> String {
    chunks(body).iter().filter_map(|c| c["choices"][0]["delta"][field].as_str()).collect()
}

#[tokio::test]
async fn mock_llm_prints_its_url_streams_the_script_and_stops_on_sigterm() {
    let (child, url) = start(&script("hello.json")).await;
    let a = chat(&url, json!([{"role": "user", "content": "hi"}])).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.content_type, "text/event-stream");
    assert!(a.body.contains("Hello from the mock LLM. Ask me for a gold price dashboard."));
    assert!(a.body.trim_end().ends_with("data: [DONE]"), "{}", a.body);
    let all = chunks(&a.body);
    assert_eq!(all[0]["choices"][0]["delta"]["role"], "assistant");
    assert!(all.iter().any(|c| c["choices"][0]["finish_reason"] == "stop"));
    let usage = &all.last().unwrap()["usage"];
    assert_eq!(
        (usage["prompt_tokens"].as_u64(), usage["completion_tokens"].as_u64()),
        (Some(12), Some(14))
    );
    stop(child).await;
}

#[tokio::test]
async fn the_tool_call_script_calls_a_tool_then_answers_from_the_results() {
    let (child, url) = start(&script("tool-call.json")).await;
    let user = json!({"role": "user", "content": "Build me a gold dashboard"});
    let a = chat(&url, json!([user])).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(
        joined(&a.body, "reasoning_content"),
        "The user wants gold prices; first find the right data source."
    );
    let all = chunks(&a.body);
    let calls: Vec<&Value> =
        all.iter().filter_map(|c| c["choices"][0]["delta"]["tool_calls"].get(0)).collect();
    assert_eq!(calls[0]["id"], "call_search_1");
    assert_eq!(calls[0]["function"]["name"], "search");
    assert!(calls[1..].iter().all(|c| c.get("id").is_none()), "id only on the first fragment");
    let args: String = calls.iter().filter_map(|c| c["function"]["arguments"].as_str()).collect();
    let args: Value = serde_json::from_str(&args).unwrap();
    assert!(args["code"].as_str().unwrap().contains("commodities"), "{args}");
    assert!(all.iter().any(|c| c["choices"][0]["finish_reason"] == "tool_calls"));
    assert!(a.body.contains("[DONE]"));

    let history = json!([
        user,
        {"role": "assistant", "content": null, "tool_calls": [{
            "id": "call_search_1", "type": "function",
            "function": {"name": "search", "arguments": args.to_string()},
        }]},
        {"role": "tool", "tool_call_id": "call_search_1", "content": "[{\"name\": \"market\"}]"},
    ]);
    let b = chat(&url, history).await;
    assert_eq!(b.status, 200, "{}", b.body);
    assert_eq!(
        joined(&b.body, "content"),
        "The market source has daily gold (XAUUSD) klines; I will build the dashboard from it."
    );
    assert!(b.body.contains("\"finish_reason\":\"stop\"") && b.body.contains("[DONE]"));
    stop(child).await;
}

#[tokio::test]
async fn the_faults_script_rate_limits_once_then_answers() {
    let (child, url) = start(&script("faults.json")).await;
    let messages = json!([{"role": "user", "content": "hi"}]);
    let first = chat(&url, messages.clone()).await;
    assert_eq!(first.status, 429);
    assert_eq!(first.retry_after.as_deref(), Some("1"));
    let error: Value = serde_json::from_str(&first.body).unwrap();
    assert_eq!(error["error"]["message"], "Rate limit reached, retry after 1s");
    let second = chat(&url, messages).await;
    assert_eq!(second.status, 200, "{}", second.body);
    assert_eq!(joined(&second.body, "content"), "Answered after one rate-limited attempt.");
    assert!(second.body.contains("[DONE]"));
    stop(child).await;
}

#[test]
fn a_bad_script_exits_2_naming_the_file_and_the_json_path() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad-script.json");
    std::fs::write(&bad, r#"{"turns": [{"steps": []}, {"delay_ms": "slow"}]}"#).unwrap();
    let missing = dir.path().join("missing.json");
    for (path, detail) in [(&bad, "turns[1].delay_ms"), (&missing, "missing.json")] {
        let out = std::process::Command::new(support::program())
            .args(["mock-llm", "--script", path.to_str().unwrap(), "--port", "0"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(out.stdout.is_empty(), "nothing listens, so no URL line");
        assert!(stderr.contains(path.to_str().unwrap()), "{stderr}");
        assert!(stderr.contains(detail), "{stderr}");
    }
}

#[test]
fn every_example_script_loads() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mock-llm");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let script = boardsmith::llm::mock::MockLlm::load(&path).unwrap();
        assert!(!script.turns.is_empty(), "{}", path.display());
        n += 1;
    }
    assert!(n >= 3);
}

/// `boardsmith llm` against the mock: one JSON event per line, the tool call assembled, exit 0
/// (with a `--tools` file); a provider without its key exits 2 naming the variable.
#[tokio::test]
async fn llm_cli_streams_events_as_json_lines() {
    let (mut mock, url) = start(&script("tool-call.json")).await;
    let tools = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        tools.path(),
        json!({"tools": [{"name": "search", "description": "find sources",
                          "parameters": {"type": "object", "properties": {"code": {"type": "string"}}}}]})
        .to_string(),
    )
    .unwrap();
    let out = Command::new(support::program())
        .args(["llm", "--provider", "openai", "--model", "gpt-4.1", "--tools"])
        .arg(tools.path())
        .arg("build me a gold dashboard")
        .env("OPENAI_API_KEY", "sk-test")
        .env("OPENAI_BASE_URL", format!("{url}/v1"))
        .env_remove("BOARDSMITH_MODEL")
        .env_remove("BOARDSMITH_CONFIG")
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let events: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let end = events.iter().find(|e| e["type"] == "tool_call_end").expect("a tool call");
    assert_eq!(end["name"], "search");
    assert!(end["input"]["code"].as_str().unwrap().contains("spec.sources"), "{end}");
    assert_eq!(events.last().unwrap(), &json!({"type": "done", "stop_reason": "tool_use"}));
    assert!(events.iter().filter(|e| e["type"] == "tool_call_delta").count() > 1);

    let missing = Command::new(support::program())
        .args(["llm", "--provider", "deepseek", "hi"])
        .env_remove("DEEPSEEK_API_KEY")
        .env_remove("BOARDSMITH_MODEL")
        .env_remove("BOARDSMITH_CONFIG")
        .output()
        .await
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("set DEEPSEEK_API_KEY"));
    mock.kill().await.unwrap();
}

/// The README's offline demo, the script the binary embeds (`mock-llm --demo`), against the real
/// server: the first request searches, builds a dashboard whose K-line panel fails its test run,
/// fixes it from the error and answers; the second, in the same chat, adds a news panel.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_offline_demo_builds_fixes_and_edits_a_dashboard() {
    let script = boardsmith::llm::mock::MockLlm::demo().unwrap();
    let file = boardsmith::llm::mock::MockLlm::load(&self::script("demo.json")).unwrap();
    assert_eq!(serde_json::to_value(&script).unwrap(), serde_json::to_value(&file).unwrap());
    let mock = boardsmith::llm::mock::MockLlm::start(script, 0).await.unwrap();
    let url = mock.url();
    let app = support::spawn_app_with(std::sync::Arc::new(tempfile::tempdir().unwrap()), false, {
        move |c| c.llm = Some(support::llm_config(Some(&url)))
    })
    .await;
    let ask = |message: &str| {
        let body = json!({"message": message, "chatId": "demo", "stream": false});
        app.post("/api/query", body)
    };
    let updates = |body: &Value| -> Vec<Value> {
        let events = body["data"]["events"].as_array().unwrap();
        events.iter().filter(|e| e["type"] == "dashboard.update").cloned().collect()
    };

    let (status, body) = ask("Build me a gold dashboard").await;
    assert_eq!(status, 200, "{body}");
    let built = updates(&body);
    assert_eq!(built.len(), 2, "built, then fixed: {built:?}");
    assert_eq!(built[0]["validation"]["allOk"], false);
    assert!(built[0]["validation"].to_string().contains("did you mean `limit`"));
    assert_eq!(built[1]["version"], 2);
    assert_eq!(built[1]["validation"]["allOk"], true);
    let id = built[1]["dashboardId"].as_str().unwrap().to_owned();

    let (status, body) = ask("Add a gold news feed").await;
    assert_eq!(status, 200, "{body}");
    let edited = updates(&body);
    assert_eq!(edited.len(), 1);
    assert_eq!(
        (edited[0]["dashboardId"].as_str(), edited[0]["version"].as_u64()),
        (Some(&*id), Some(3))
    );

    // Every panel of the result runs.
    let (status, data) = app.get(&format!("/api/dashboards/{id}/data")).await;
    assert_eq!(status, 200, "{data}");
    let panels = data["data"]["panels"].as_object().unwrap();
    assert_eq!(panels.len(), 3);
    assert!(panels.values().all(|p| p["status"] == "ok"), "{panels:?}");
    app.stop().await;
}

/// The same demo with no network at all (every provider's base URL a closed loopback port):
/// the news panel's source cannot be reached, and the agent does not end as if all were well:
/// its answer says so, and the run's last event lists the failing panel.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_offline_demo_says_so_when_the_news_source_cannot_be_reached() {
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://127.0.0.1:{}", l.local_addr().unwrap().port())
    };
    let registry = boardsmith::sdk::Registry::embedded(&|_| true).unwrap();
    let env: std::collections::BTreeMap<String, String> =
        boardsmith::sdk::provider::base_url_vars(&registry)
            .into_iter()
            .map(|v| (v, closed.clone()))
            .collect();
    let mock =
        boardsmith::llm::mock::MockLlm::start(boardsmith::llm::mock::MockLlm::demo().unwrap(), 0)
            .await
            .unwrap();
    let url = mock.url();
    let app = support::spawn_app_with(std::sync::Arc::new(tempfile::tempdir().unwrap()), false, {
        move |c| {
            c.llm = Some(support::llm_config(Some(&url)));
            c.sdk = boardsmith::sdk::SdkConfig {
                asof: Some(support::asof()),
                outbound_allow: vec![closed.clone()],
                env,
                ..boardsmith::sdk::SdkConfig::default()
            };
        }
    })
    .await;
    let ask = |message: &str| {
        let body = json!({"message": message, "chatId": "demo", "stream": false});
        app.post("/api/query", body)
    };
    let (status, body) = ask("Build me a gold dashboard").await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = ask("Add a gold news feed").await;
    assert_eq!(status, 200, "{body}");
    let events = body["data"]["events"].as_array().unwrap();
    let update = events.iter().find(|e| e["type"] == "dashboard.update").unwrap();
    let news = update["validation"]["panels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["panelId"] == "gold-news")
        .cloned()
        .unwrap();
    assert_eq!(news["status"], "error", "{news}");
    assert!(
        news["error"].as_str().unwrap().starts_with("data provider failed, not the code (gdelt"),
        "{news}"
    );
    let answer = body["data"]["answer"].as_str().unwrap_or_default().to_owned()
        + &events
            .iter()
            .filter(|e| e["type"] == "content.delta")
            .filter_map(|e| e["delta"].as_str())
            .collect::<String>();
    assert!(answer.contains("cannot be reached"), "the answer says so: {body}");
    assert!(!answer.contains("Added a gold news table beside the chart."), "{answer}");
    let complete = events.iter().find(|e| e["type"] == "run.complete").unwrap();
    let failing = complete["failingPanels"].as_array().expect("failing panels listed");
    assert!(failing.iter().any(|p| p["panelId"] == "gold-news"), "{complete}");
    app.stop().await;
}
