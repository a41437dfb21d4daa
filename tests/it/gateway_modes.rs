//! Golden event sequences of every mode over real HTTP: the built-in demo agents, run by the real
//! server against the scripted mock upstream, their SSE streams read by a real client and
//! compared with reviewed snapshots (`tests/it/snapshots/`). Run ids, chat ids and timestamps
//! are normalized; everything else (order, ids derived from the run, tool arguments streamed in
//! fragments, tool results of the real tools at a pinned clock) is compared exactly.

use std::sync::Arc;

use boardsmith::llm::mock::{MockLlm, Script, Step, Turn};
use serde_json::{Value, json};

use crate::support::{self, TestApp, sse_events};

fn once(steps: Vec<Step>) -> Turn {
    Turn { steps, times: Some(1), ..Turn::default() }
}

fn text(t: &str) -> Step {
    Step::Text { text: t.into(), chunk: Some(12) }
}

fn reasoning(t: &str) -> Step {
    Step::Reasoning { text: t.into(), chunk: Some(12), signature: None }
}

fn call(id: &str, name: &str, arguments: Value) -> Step {
    Step::ToolCall { id: Some(id.into()), name: name.into(), arguments, fragments: Some(2) }
}

/// Starts a server over `turns` (answered in order; a further call gets a visible marker).
async fn start(turns: Vec<Turn>) -> (MockLlm, TestApp) {
    let mut turns = turns;
    turns.push(Turn { steps: vec![text("UNEXPECTED EXTRA MODEL CALL")], ..Turn::default() });
    let mock = MockLlm::start(Script { turns }, 0).await.unwrap();
    let url = mock.url();
    let app = support::spawn_app_with(Arc::new(tempfile::tempdir().unwrap()), false, move |c| {
        c.llm = Some(support::llm_config(Some(&url)));
        c.agent_tools.clock = Arc::new(support::asof);
    })
    .await;
    (mock, app)
}

/// The stream as one line per event: `type {fields}` with seq and timestamp checked and
/// dropped, and the run and chat ids replaced by `RUN` and `CHAT`.
fn render(events: &[(String, String, Value)]) -> String {
    let run_id = events
        .iter()
        .find_map(|(_, t, d)| (t == "run.start").then(|| d["runId"].as_str().unwrap().to_owned()))
        .expect("run.start");
    let chat_id = events[0].2["chatId"].as_str().unwrap().to_owned();
    let mut out = String::new();
    let mut last_ts = 0;
    for (i, (id, ty, data)) in events.iter().enumerate() {
        assert_eq!(data["seq"], i as u64 + 1);
        assert_eq!(id, &format!("{run_id}:{}", i + 1));
        let ts = data["timestamp"].as_i64().unwrap();
        assert!(ts >= last_ts, "timestamps never go back");
        last_ts = ts;
        let mut fields = data.as_object().unwrap().clone();
        for k in ["seq", "type", "timestamp"] {
            fields.remove(k);
        }
        let line = serde_json::to_string(&fields).unwrap();
        let line = line.replace(&run_id, "RUN").replace(&chat_id, "CHAT");
        out.push_str(&format!("{ty} {line}\n"));
    }
    out
}

/// `POST /api/query` for `agent` with `message`; the stream's response (status checked).
async fn query(app: &TestApp, agent: &str, message: &str) -> reqwest::Response {
    let body = json!({"message": message, "agentKey": agent});
    let r = app.http.post(app.url("/api/query")).json(&body).send().await.unwrap();
    assert_eq!(r.status(), 200);
    r
}

async fn golden(agent: &str, message: &str, turns: Vec<Turn>) -> (String, MockLlm) {
    let (mock, app) = start(turns).await;
    let events = sse_events(query(&app, agent, message).await).await;
    app.stop().await;
    (render(&events), mock)
}

#[tokio::test]
async fn plain() {
    let (events, _) = golden(
        "demoModePlain",
        "Introduce carbon",
        vec![once(vec![text("Carbon is element six; it forms four bonds.")])],
    )
    .await;
    insta::assert_snapshot!(events);
}

#[tokio::test]
async fn thinking() {
    let (events, mock) = golden(
        "demoModeThinking",
        "Risks of moving a data centre?",
        vec![once(vec![
            reasoning("Power, network cut-over, rollback."),
            text("Main risks: power, cut-over, rollback."),
        ])],
    )
    .await;
    insta::assert_snapshot!(events);
    assert!(mock.requests()[0].body.get("tools").is_none(), "no tools offered in THINKING");
}

#[tokio::test]
async fn plain_tooling() {
    let (events, mock) = golden(
        "demoModePlainTooling",
        "What time is it in Shanghai?",
        vec![
            once(vec![
                text("Let me check."),
                call("call_1", "city_datetime", json!({"city": "Shanghai"})),
            ]),
            once(vec![text("It is 20:00 on Friday in Shanghai.")]),
        ],
    )
    .await;
    insta::assert_snapshot!(events);
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[1].body.get("tools").is_none(), "the answer call offers no tools");
}

#[tokio::test]
async fn thinking_tooling() {
    let (events, _) = golden(
        "demoModeThinkingTooling",
        "Is tomorrow good for a change window in Beijing?",
        vec![
            once(vec![
                reasoning("Need the weather first."),
                call(
                    "call_w",
                    "mock_city_weather",
                    json!({"city": "Beijing", "date": "2026-11-21"}),
                ),
            ]),
            once(vec![reasoning("Clear enough."), text("Yes, tomorrow works.")]),
        ],
    )
    .await;
    insta::assert_snapshot!(events);
}

#[tokio::test]
async fn react() {
    let (events, _) = golden(
        "demoModeReact",
        "Weather in Tokyo today?",
        vec![
            once(vec![call("call_1", "city_datetime", json!({"city": "Tokyo"}))]),
            // A chained reference to the first step's result.
            once(vec![call(
                "call_2",
                "mock_city_weather",
                json!({"city": "Tokyo", "date": "{{city_datetime.date}}"}),
            )]),
            once(vec![text("Tokyo today: see the forecast above.")]),
        ],
    )
    .await;
    insta::assert_snapshot!(events);
}

#[tokio::test]
async fn plan_execute() {
    let (events, _) = golden(
        "demoModePlanExecute",
        "Plan a visit: time and weather in Paris",
        vec![
            once(vec![text("1. Get the local time\n2. Get the weather")]),
            // Both steps' tools at once: parallel calls, results in call order.
            once(vec![
                call("call_t", "city_datetime", json!({"city": "Paris"})),
                call("call_w", "mock_city_weather", json!({"city": "Paris"})),
            ]),
            once(vec![text("Done with the steps.")]),
            once(vec![text("Summary: Paris, evening, mild.")]),
        ],
    )
    .await;
    insta::assert_snapshot!(events);
}

#[tokio::test]
async fn actions() {
    let (events, _) = golden(
        "demoAction",
        "Switch to dark mode",
        vec![
            once(vec![call("call_a", "switch_theme", json!({"theme": "dark"}))]),
            once(vec![text("Dark mode is on.")]),
        ],
    )
    .await;
    insta::assert_snapshot!(events);
}

/// Runs `agent` on `message` over HTTP, answering waiting tools as [`support::sse_answering`]
/// does. Returns every `(type, data)`.
async fn run_answering(
    app: &TestApp,
    agent: &str,
    message: &str,
    answer: impl FnMut(&str, &Value) -> Option<(String, Value)>,
) -> Vec<(String, Value)> {
    let events = support::sse_answering(app, query(app, agent, message).await, answer).await;
    events.into_iter().map(|(_, t, d)| (t, d)).collect()
}

/// The result of tool call `id` in `events`.
fn result_of<'a>(events: &'a [(String, Value)], id: &str) -> &'a Value {
    let result = events.iter().find(|(t, d)| t == "tool.result" && d["toolId"] == id);
    &result.unwrap_or_else(|| panic!("no tool.result for {id}: {events:?}")).1["result"]
}

/// A frontend tool over HTTP: the run waits at `tool.end` until `POST /api/submit`, and the
/// submitted params are the tool result the model sees.
#[tokio::test]
async fn frontend_tool_waits_for_submit() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    std::fs::create_dir_all(dir.path().join("agents")).unwrap();
    std::fs::write(
        dir.path().join("agents/confirmer.json"),
        r#"{"description": "asks first", "mode": "PLAIN_TOOLING", "tools": ["confirm_dialog"],
            "plainTooling": {"systemPrompt": "Ask before acting."}}"#,
    )
    .unwrap();
    let mock = MockLlm::start(
        Script {
            turns: vec![
                once(vec![call("call_c", "confirm_dialog", json!({"question": "Proceed?"}))]),
                once(vec![text("Confirmed, proceeding.")]),
            ],
        },
        0,
    )
    .await
    .unwrap();
    let url = mock.url();
    let app = support::spawn_app_with(dir, false, move |c| {
        c.llm = Some(support::llm_config(Some(&url)));
    })
    .await;
    let seen = run_answering(&app, "confirmer", "do it", |event, data| {
        if event == "tool.start" {
            assert_eq!(data["toolType"], "html");
            assert_eq!(data["toolName"], "confirm_dialog");
        }
        (event == "tool.end").then(|| ("call_c".to_owned(), json!({"confirmed": true})))
    })
    .await;
    assert_eq!(result_of(&seen, "call_c"), &json!({"confirmed": true}));
    assert_eq!(seen.last().unwrap().0, "run.complete");
    // The model got the submitted params as the tool's result.
    let second = &mock.requests()[1].body["messages"];
    let tool_msg = second.as_array().unwrap().iter().find(|m| m["role"] == "tool").unwrap();
    assert!(tool_msg["content"].to_string().contains("confirmed"), "{tool_msg}");
    app.stop().await;
}

/// A shell command of an agent that does not opt out of `confirmShell` waits for the user's
/// go-ahead (`tool.confirm`): approved, it runs; declined (or any other answer), it never runs
/// and the model reads why.
#[tokio::test]
async fn shell_commands_wait_for_the_users_go_ahead() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let work = dir.path().join("work");
    std::fs::create_dir_all(dir.path().join("agents")).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(
        dir.path().join("agents/sheller.json"),
        r#"{"mode": "REACT", "tools": ["bash"], "allowShell": true,
            "react": {"systemPrompt": "Use the shell."}}"#,
    )
    .unwrap();
    let commands = [
        ("call_ok", "echo approved-$((6*7)) > ok.txt; cat ok.txt", json!({"approved": true})),
        ("call_no", "echo oops > declined.txt", json!({"approved": false})),
        ("call_odd", "echo odd > odd.txt", json!({"approved": "yes"})),
    ];
    let mut turns: Vec<Turn> = commands
        .iter()
        .map(|(id, command, _)| once(vec![call(id, "bash", json!({"command": command}))]))
        .collect();
    turns.push(once(vec![text("Done.")]));
    let mock = MockLlm::start(Script { turns }, 0).await.unwrap();
    let url = mock.url();
    let app = support::spawn_app_with(dir.clone(), false, move |c| {
        c.llm = Some(support::llm_config(Some(&url)));
    })
    .await;
    let seen = run_answering(&app, "sheller", "work in the shell", |event, data| {
        if event != "tool.confirm" {
            return None;
        }
        let (id, command, answer) =
            commands.iter().find(|(id, ..)| data["toolId"] == *id).expect("a known call");
        assert_eq!(data["command"], *command);
        assert_eq!(data["toolName"], "bash");
        assert!(data["timeoutMs"].as_u64().unwrap() > 0, "{data}");
        // Asked, not yet run.
        assert_eq!(std::fs::read_dir(&work).unwrap().count(), usize::from(*id != "call_ok"));
        Some(((*id).to_owned(), answer.clone()))
    })
    .await;
    let confirms = seen.iter().filter(|(t, _)| t == "tool.confirm").count();
    assert_eq!(confirms, 3, "one question per command");
    assert!(result_of(&seen, "call_ok").to_string().contains("approved-42"), "{seen:?}");
    for id in ["call_no", "call_odd"] {
        let error = result_of(&seen, id)["error"].as_str().unwrap();
        assert!(error.starts_with("not run: the user declined this command"), "{error}");
    }
    assert_eq!(std::fs::read_to_string(work.join("ok.txt")).unwrap(), "approved-42\n");
    assert!(!work.join("declined.txt").exists() && !work.join("odd.txt").exists());
    assert_eq!(seen.last().unwrap().0, "run.complete");
    // The model read the refusal as the tool's (error) result.
    let third = mock.requests()[2].body["messages"].to_string();
    assert!(third.contains("the user declined this command"), "{third}");
    app.stop().await;
}
