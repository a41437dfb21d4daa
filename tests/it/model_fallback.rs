//! Model fallback over real HTTP: two scripted upstreams on loopback (`primary` and `backup`),
//! an agent file with `fallbackModels`, the SSE stream of `POST /api/query`, and the usage
//! ledger. A retryable failure before any output goes to the next model with `model.switch`; a
//! client error or a failure after output never does.

use std::sync::Arc;

use boardsmith::llm::Usage;
use boardsmith::llm::mock::{Fault, MockLlm, Script, Step, Turn};
use serde_json::{Value, json};

use crate::support::{self, TestApp, sse_events};

/// Two OpenAI-compatible providers, `primary` (model `p-model`) and `backup` (`b-model`), with
/// known prices, no transport retries and a short idle timeout; `extra` is appended.
fn two_providers(primary: &MockLlm, backup: &MockLlm, extra: &str) -> String {
    let provider = |key: &str, url: String, model: &str| {
        format!(
            r#"
[providers.{key}]
kind = "openai"
base_url = "{url}/v1"
requires_key = false
default_model = "{model}"
models = [{{ id = "{model}", context_window = 32000, input_price = 1.0, output_price = 2.0 }}]
timeouts = {{ connect = 1, first_byte = 5, idle = 0.5 }}
retry = {{ max_retries = 0 }}
"#
        )
    };
    format!(
        "{extra}\n{}{}",
        provider("primary", primary.url(), "p-model"),
        provider("backup", backup.url(), "b-model")
    )
}

/// A server over `config` with the agent `fb` (PLAIN on `primary/p-model`) whose file adds
/// `fields` (e.g. `"fallbackModels": [...]`).
async fn app_with(config: String, fields: &str) -> TestApp {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let agents = dir.path().join("agents");
    std::fs::create_dir_all(&agents).unwrap();
    let file = format!(
        r#"{{"mode": "PLAIN", "providerKey": "primary", "model": "p-model", {fields}
            "plain": {{"systemPrompt": "Answer briefly."}}}}"#
    );
    std::fs::write(agents.join("fb.json"), file).unwrap();
    support::spawn_app_with(dir, false, move |c| {
        c.llm = Some(
            boardsmith::llm::config::LlmConfig::parse(
                &config,
                std::path::Path::new("test.toml"),
                &|_| None,
            )
            .unwrap(),
        );
    })
    .await
}

async fn mock(turns: Vec<Turn>) -> MockLlm {
    MockLlm::start(Script { turns }, 0).await.unwrap()
}

fn failing(status: u16) -> Turn {
    Turn {
        fault: Some(Fault::Status {
            status,
            retry_after: None,
            message: Some(format!("scripted {status}")),
        }),
        ..Turn::default()
    }
}

fn answer(text: &str, input: u64, output: u64) -> Turn {
    Turn {
        steps: vec![Step::Text { text: text.into(), chunk: Some(5) }],
        usage: Some(Usage { input_tokens: input, output_tokens: output, ..Usage::default() }),
        ..Turn::default()
    }
}

async fn ask(app: &TestApp, message: &str) -> Vec<(String, String, Value)> {
    let r = app
        .http
        .post(app.url("/api/query"))
        .json(&json!({"message": message, "agentKey": "fb"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    sse_events(r).await
}

fn types(events: &[(String, String, Value)]) -> Vec<&str> {
    events.iter().map(|(_, t, _)| t.as_str()).collect()
}

fn of_type<'a>(events: &'a [(String, String, Value)], ty: &str) -> Vec<&'a Value> {
    events.iter().filter(|(_, t, _)| t == ty).map(|(_, _, d)| d).collect()
}

fn streamed_text(events: &[(String, String, Value)]) -> String {
    of_type(events, "content.delta").iter().map(|d| d["delta"].as_str().unwrap()).collect()
}

/// The `/api/usage` row of `model` (grouped by model).
async fn usage_row(app: &TestApp, model: &str) -> Value {
    let (status, report) = app.get("/api/usage?groupBy=model").await;
    assert_eq!(status, 200, "{report}");
    report["data"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["model"] == model)
        .cloned()
        .unwrap_or_else(|| panic!("no usage row for {model}: {report}"))
}

#[tokio::test]
async fn a_503_before_any_output_is_answered_by_the_fallback_with_model_switch() {
    let primary = mock(vec![failing(503)]).await;
    let backup = mock(vec![answer("From the backup.", 12, 4)]).await;
    let app =
        app_with(two_providers(&primary, &backup, ""), r#""fallbackModels": ["backup/b-model"],"#)
            .await;
    let events = ask(&app, "carbon?").await;
    let t = types(&events);
    assert_eq!(t.last(), Some(&"run.complete"), "{t:?}");
    assert_eq!(streamed_text(&events), "From the backup.");
    let switches = of_type(&events, "model.switch");
    assert_eq!(switches.len(), 1, "{t:?}");
    let s = switches[0];
    assert_eq!(
        (&s["fromProvider"], &s["fromModel"], &s["toProvider"], &s["toModel"], &s["reason"]),
        (
            &json!("primary"),
            &json!("p-model"),
            &json!("backup"),
            &json!("b-model"),
            &json!("fallback")
        )
    );
    let error = s["error"].as_str().unwrap();
    assert!(error.contains("503") && error.contains("scripted 503"), "{error}");
    // The switch is announced before the fallback's output.
    let at = t.iter().position(|x| *x == "model.switch").unwrap();
    assert_eq!(t[at + 1], "content.start", "{t:?}");
    // The same call went to both, each once.
    let (p, b) = (primary.requests(), backup.requests());
    assert_eq!((p.len(), b.len()), (1, 1));
    assert_eq!(p[0].body["model"], "p-model");
    assert_eq!(b[0].body["model"], "b-model");
    assert_eq!(p[0].body["messages"], b[0].body["messages"]);

    // Usage: the answer's tokens and cost under the model that gave them, the failure under
    // the model that failed.
    let answered = usage_row(&app, "backup/b-model").await;
    assert_eq!(
        (
            &answered["requests"],
            &answered["errors"],
            &answered["inputTokens"],
            &answered["outputTokens"]
        ),
        (&json!(1), &json!(0), &json!(12), &json!(4))
    );
    assert!(answered["costUsd"].as_f64().unwrap() > 0.0, "{answered}");
    let failed = usage_row(&app, "primary/p-model").await;
    assert_eq!(
        (&failed["requests"], &failed["errors"], &failed["inputTokens"], &failed["outputTokens"]),
        (&json!(1), &json!(1), &json!(0), &json!(0))
    );
    app.stop().await;
}

#[tokio::test]
async fn a_400_is_final_no_fallback_and_a_clear_run_error() {
    let primary = mock(vec![failing(400)]).await;
    let backup = mock(vec![answer("never", 1, 1)]).await;
    let app =
        app_with(two_providers(&primary, &backup, ""), r#""fallbackModels": ["backup/b-model"],"#)
            .await;
    let events = ask(&app, "carbon?").await;
    let t = types(&events);
    assert!(!t.contains(&"model.switch"), "{t:?}");
    let errors = of_type(&events, "run.error");
    assert_eq!(errors.len(), 1, "{t:?}");
    let message = errors[0]["error"]["message"].as_str().unwrap();
    assert!(message.contains("primary") && message.contains("400"), "{message}");
    assert!(backup.requests().is_empty(), "a client error is not sent to another model");
    app.stop().await;
}

#[tokio::test]
async fn a_failure_after_output_never_switches() {
    // Two chunks of text, then silence past the idle timeout (retryable, but output was seen).
    let primary = mock(vec![Turn {
        fault: Some(Fault::Stall { after: 2, ms: 3000 }),
        ..answer("Partial answer that stalls.", 1, 1)
    }])
    .await;
    let backup = mock(vec![answer("never", 1, 1)]).await;
    let app =
        app_with(two_providers(&primary, &backup, ""), r#""fallbackModels": ["backup/b-model"],"#)
            .await;
    let events = ask(&app, "carbon?").await;
    let t = types(&events);
    assert!(!streamed_text(&events).is_empty(), "the user saw output: {t:?}");
    assert!(!t.contains(&"model.switch"), "{t:?}");
    let errors = of_type(&events, "run.error");
    assert_eq!(errors.len(), 1, "{t:?}");
    let message = errors[0]["error"]["message"].as_str().unwrap();
    assert!(message.contains("timed out"), "{message}");
    assert!(backup.requests().is_empty());
    app.stop().await;
}

#[tokio::test]
async fn the_server_default_list_applies_unless_the_file_says_otherwise() {
    let primary = mock(vec![failing(429)]).await;
    let backup = mock(vec![answer("Default fallback.", 3, 2)]).await;
    let config = two_providers(&primary, &backup, "[llm]\nfallback = [\"backup/b-model\"]");
    // No `fallbackModels`: `[llm] fallback`.
    let app = app_with(config.clone(), "").await;
    let events = ask(&app, "carbon?").await;
    assert_eq!(streamed_text(&events), "Default fallback.");
    assert_eq!(of_type(&events, "model.switch").len(), 1);
    app.stop().await;
    // `"fallbackModels": []`: none, whatever the server says.
    let app = app_with(config, r#""fallbackModels": [],"#).await;
    let events = ask(&app, "carbon?").await;
    assert_eq!(of_type(&events, "run.error").len(), 1, "{:?}", types(&events));
    assert_eq!(backup.requests().len(), 1, "only the first server's run reached the backup");
    app.stop().await;
}

#[tokio::test]
async fn an_unknown_fallback_provider_is_refused_naming_the_configured_ones() {
    let primary = mock(vec![answer("never", 1, 1)]).await;
    let backup = mock(vec![answer("never", 1, 1)]).await;
    let app =
        app_with(two_providers(&primary, &backup, ""), r#""fallbackModels": ["bakup/b-model"],"#)
            .await;
    let r = app
        .http
        .post(app.url("/api/query"))
        .json(&json!({"message": "hi", "agentKey": "fb"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 503);
    let env: Value = r.json().await.unwrap();
    let msg = env["msg"].as_str().unwrap();
    for needle in ["fallbackModels[0]", "bakup", "primary", "backup"] {
        assert!(msg.contains(needle), "{msg} should name {needle}");
    }
    assert!(primary.requests().is_empty() && backup.requests().is_empty());
    app.stop().await;
}
