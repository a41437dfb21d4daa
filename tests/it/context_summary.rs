//! Summarizing long chats over real HTTP: a scripted upstream with a small context window, a
//! chat whose history passes the threshold, one summary call, the next model call starting from
//! the summary instead of the old turns, and the summary kept in chat memory across a restart.

use std::sync::Arc;

use boardsmith::llm::mock::{Match, MockLlm, Recorded, Script, Step, Turn};
use serde_json::{Value, json};

use crate::support::{self, TestApp, sse_events};

const SUMMARY: &str = "SUMMARY-7Q: the user asked about alpha.";

/// One provider at the mock whose model has a 2,000-token window: with the default threshold
/// (0.5) a history past 1,000 tokens is summarized.
fn config(url: &str) -> boardsmith::llm::config::LlmConfig {
    let text = format!(
        r#"
[providers.mock]
kind = "openai"
base_url = "{url}/v1"
requires_key = false
default_model = "small"
models = [{{ id = "small", context_window = 2000 }}]
retry = {{ max_retries = 0 }}
"#
    );
    boardsmith::llm::config::LlmConfig::parse(&text, std::path::Path::new("t.toml"), &|_| None)
        .unwrap()
}

async fn app_in(dir: Arc<tempfile::TempDir>, mock: &MockLlm) -> TestApp {
    let url = mock.url();
    support::spawn_app_with(dir, false, move |c| c.llm = Some(config(&url))).await
}

fn when(needle: &str, text: String) -> Turn {
    Turn {
        when: Match { last_user_contains: Some(needle.into()), ..Match::default() },
        steps: vec![Step::Text { text, chunk: Some(400) }],
        ..Turn::default()
    }
}

async fn ask(app: &TestApp, chat: Option<&str>, message: &str) -> Vec<(String, String, Value)> {
    let mut body = json!({"message": message, "agentKey": "demoModePlain"});
    if let Some(c) = chat {
        body["chatId"] = json!(c);
    }
    let r = app.http.post(app.url("/api/query")).json(&body).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let events = sse_events(r).await;
    assert_eq!(events.last().unwrap().1, "run.complete", "{events:?}");
    events
}

fn is_summary_call(r: &Recorded) -> bool {
    r.body.to_string().contains("CONVERSATION TO SUMMARIZE")
}

#[tokio::test]
async fn a_long_chat_is_summarized_once_and_later_runs_start_from_the_summary() {
    // ~800 tokens per long answer: two of them pass the 1,000-token threshold.
    let long = |tag: &str| format!("{tag} {}", "word ".repeat(640));
    let mock = MockLlm::start(
        Script {
            turns: vec![
                when("CONVERSATION TO SUMMARIZE", SUMMARY.into()),
                when("alpha", long("ALPHA-ANSWER")),
                when("beta", long("BETA-ANSWER")),
                Turn {
                    steps: vec![Step::Text { text: "Short answer.".into(), chunk: None }],
                    ..Turn::default()
                },
            ],
        },
        0,
    )
    .await
    .unwrap();
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let app = app_in(dir.clone(), &mock).await;
    let first = ask(&app, None, "tell me about alpha").await;
    let chat = first[1].2["chatId"].as_str().unwrap().to_owned();
    let second = ask(&app, Some(&chat), "tell me about beta").await;
    assert!(second.iter().all(|(_, t, _)| t != "context.summarized"), "under the threshold");
    assert_eq!(mock.requests().iter().filter(|r| is_summary_call(r)).count(), 0);

    let third = ask(&app, Some(&chat), "and gamma?").await;
    let requests = mock.requests();
    let summaries: Vec<&Recorded> = requests.iter().filter(|r| is_summary_call(r)).collect();
    assert_eq!(summaries.len(), 1, "one summary call");
    let asked = summaries[0].body.to_string();
    assert!(
        asked.contains("ALPHA-ANSWER") && !asked.contains("BETA-ANSWER"),
        "the oldest run only"
    );
    // The event comes before the run starts and says what it replaced.
    let t: Vec<&str> = third.iter().map(|(_, t, _)| t.as_str()).collect();
    let at = t.iter().position(|t| *t == "context.summarized").expect("context.summarized");
    assert_eq!(t[at + 1], "run.start", "{t:?}");
    let e = &third[at].2;
    assert_eq!(
        (&e["summary"], &e["summarizedRuns"], &e["summarizedMessages"]),
        (&json!(SUMMARY), &json!(1), &json!(2))
    );
    assert_eq!(e["model"], "mock/small");
    assert_eq!(e["throughRunId"], first[2].2["runId"]);
    assert!(e["tokensBefore"].as_u64().unwrap() > 1000, "{e}");
    assert!(e["tokensAfter"].as_u64().unwrap() < e["tokensBefore"].as_u64().unwrap(), "{e}");
    // The answer's call starts from the summary and the recent run, not the old turns.
    let answer = requests.last().unwrap().body.to_string();
    assert!(answer.contains("SUMMARY-7Q") && answer.contains("BETA-ANSWER"), "{answer}");
    assert!(
        !answer.contains("ALPHA-ANSWER") && !answer.contains("tell me about alpha"),
        "{answer}"
    );
    // The history shows the summary where it was made.
    let (status, history) = app.get(&format!("/api/chat?chatId={chat}")).await;
    assert_eq!(status, 200);
    let events = history["data"]["events"].as_array().unwrap();
    let summarized: Vec<&Value> =
        events.iter().filter(|e| e["type"] == "context.summarized").collect();
    assert_eq!(summarized.len(), 1, "{history}");
    assert_eq!(summarized[0]["summary"], SUMMARY);
    app.stop().await;

    // After a restart the chat starts from the stored summary: no new summary call.
    let app = app_in(dir, &mock).await;
    let fourth = ask(&app, Some(&chat), "and delta?").await;
    assert!(fourth.iter().all(|(_, t, _)| t != "context.summarized"));
    let requests = mock.requests();
    assert_eq!(requests.iter().filter(|r| is_summary_call(r)).count(), 1, "not summarized again");
    let answer = requests.last().unwrap().body.to_string();
    assert!(answer.contains("SUMMARY-7Q") && answer.contains("BETA-ANSWER"), "{answer}");
    assert!(!answer.contains("ALPHA-ANSWER"), "{answer}");
    app.stop().await;
}
