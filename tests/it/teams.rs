//! Teams over real HTTP against the scripted mock model: each team type, one member failing,
//! cancellation, the team budget (model calls, tokens, time) and the shipped research desk, which
//! builds a real dashboard through its analyst member. Every stream is checked for the team
//! contract: one `run.start`, one terminal event, each member's events between its `task.start`
//! and its `task.complete` | `task.fail`, carrying its `taskId`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use boardsmith::llm::mock::{Fault, Match, MockLlm, Script, Step, Turn};
use serde_json::{Value, json};

use crate::support::{self, TestApp, sse_events};

fn say(text: &str) -> Turn {
    Turn { steps: vec![Step::Text { text: text.into(), chunk: Some(7) }], ..Turn::default() }
}

fn once(turn: Turn) -> Turn {
    Turn { times: Some(1), ..turn }
}

fn when(needle: &str, turn: Turn) -> Turn {
    Turn { when: Match { last_user_contains: Some(needle.into()), ..Match::default() }, ..turn }
}

fn call(id: &str, name: &str, arguments: Value) -> Turn {
    crate::support::tool_call_turn(id, name, arguments, 2)
}

/// A PLAIN member agent file.
fn member(description: &str) -> Value {
    json!({"description": description, "mode": "PLAIN", "plain": {"systemPrompt": format!("You are {description}.")}})
}

/// A server over `turns` with agent files `agents` (key → file) in its agents directory.
async fn start(turns: Vec<Turn>, agents: &[(&str, Value)]) -> (MockLlm, TestApp) {
    let mut turns = turns;
    turns.push(say("UNEXPECTED EXTRA MODEL CALL"));
    let mock = MockLlm::start(Script { turns }, 0).await.unwrap();
    let dir = Arc::new(tempfile::tempdir().unwrap());
    std::fs::create_dir_all(dir.path().join("agents")).unwrap();
    for (key, file) in agents {
        let path = dir.path().join("agents").join(format!("{key}.json"));
        std::fs::write(path, serde_json::to_string_pretty(file).unwrap()).unwrap();
    }
    let url = mock.url();
    let app = support::spawn_app_with(dir, false, move |c| {
        c.llm = Some(support::llm_config(Some(&url)));
    })
    .await;
    (mock, app)
}

async fn query(app: &TestApp, agent: &str, message: &str) -> Vec<(String, String, Value)> {
    let body = json!({"message": message, "agentKey": agent});
    let r = app.http.post(app.url("/api/query")).json(&body).send().await.unwrap();
    assert_eq!(r.status(), 200);
    sse_events(r).await
}

/// The stream's members as `(taskName, taskId)` in start order, after checking the team
/// contract (see the module doc); the terminal event's type.
fn check(events: &[(String, String, Value)]) -> (Vec<(String, String)>, String) {
    let types: Vec<&str> = events.iter().map(|(_, t, _)| t.as_str()).collect();
    assert_eq!(types.iter().filter(|t| **t == "run.start").count(), 1, "{types:?}");
    let terminal = ["run.complete", "run.error", "run.cancel"];
    assert_eq!(types.iter().filter(|t| terminal.contains(t)).count(), 1, "{types:?}");
    assert!(terminal.contains(types.last().unwrap()), "the terminal event is last: {types:?}");
    let mut open: Option<String> = None;
    let mut tasks = Vec::new();
    // Blocks opened inside a task must carry its id; their deltas and ends follow them.
    let mut block_task: HashMap<String, Option<String>> = HashMap::new();
    for (_, ty, data) in events {
        match ty.as_str() {
            "task.start" => {
                let id = data["taskId"].as_str().unwrap().to_owned();
                assert!(open.is_none() || data["taskName"].as_str().is_some(), "{data}");
                tasks.push((data["taskName"].as_str().unwrap().to_owned(), id.clone()));
                // A supervisor's member runs inside the supervisor's tool call; teams whose
                // members run side by side interleave, so only the id is tracked.
                open = Some(id);
            }
            "task.complete" | "task.fail" => {
                let id = data["taskId"].as_str().unwrap();
                assert!(tasks.iter().any(|(_, t)| t == id), "ends a task that started: {data}");
            }
            "content.start" | "reasoning.start" | "tool.start" => {
                let id = data
                    .get("contentId")
                    .or_else(|| data.get("reasoningId"))
                    .or_else(|| data.get("toolId"))
                    .and_then(Value::as_str)
                    .unwrap()
                    .to_owned();
                let task = data.get("taskId").and_then(Value::as_str).map(str::to_owned);
                if let Some(t) = &task {
                    assert!(
                        id.starts_with(t) || id.starts_with('a'),
                        "ids derive from the task: {id} in {t}"
                    );
                }
                assert!(block_task.insert(id, task).is_none(), "block ids are unique");
            }
            _ => {}
        }
    }
    (tasks, types.last().unwrap().to_string())
}

/// The text each task's content blocks streamed, by taskId (`""` for the run's own).
fn texts(events: &[(String, String, Value)]) -> HashMap<String, String> {
    let mut owner: HashMap<String, String> = HashMap::new();
    let mut out: HashMap<String, String> = HashMap::new();
    for (_, ty, d) in events {
        match ty.as_str() {
            "content.start" => {
                let task = d["taskId"].as_str().unwrap_or("").to_owned();
                owner.insert(d["contentId"].as_str().unwrap().to_owned(), task);
            }
            "content.delta" => {
                let task = &owner[d["contentId"].as_str().unwrap()];
                out.entry(task.clone()).or_default().push_str(d["delta"].as_str().unwrap());
            }
            _ => {}
        }
    }
    out
}

fn last_user(mock: &MockLlm, n: usize) -> String {
    let messages = mock.requests()[n].body["messages"].as_array().unwrap().clone();
    let user = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
    match &user["content"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn error_of(events: &[(String, String, Value)]) -> String {
    events.last().unwrap().2["error"]["message"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn a_sequential_team_passes_each_answer_on_and_remembers_them() {
    let (mock, app) = start(
        vec![
            when("answered:", once(say("Beta: rates matter more than growth here."))),
            once(say("Alpha: growth is slowing.")),
        ],
        &[
            ("alpha", member("the growth economist")),
            ("beta", member("the rates strategist")),
            ("pipe", json!({"type": "sequential", "description": "two views", "members": ["alpha", "beta"]})),
        ],
    )
    .await;
    let events = query(&app, "pipe", "Where is the economy going?").await;
    let (tasks, end) = check(&events);
    assert_eq!(end, "run.complete", "{events:?}");
    let names: Vec<&str> = tasks.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["alpha", "beta"]);
    let start = events.iter().find(|(_, t, _)| t == "task.start").unwrap();
    assert_eq!(start.2["description"], "the growth economist");
    let by_task = texts(&events);
    assert_eq!(by_task[&tasks[0].1], "Alpha: growth is slowing.");
    assert_eq!(by_task[&tasks[1].1], "Beta: rates matter more than growth here.");
    assert!(!by_task.contains_key(""), "the team says nothing of its own");
    // The second member got the question and the first one's answer.
    assert_eq!(mock.requests().len(), 2);
    let second = last_user(&mock, 1);
    assert!(
        second.contains("Where is the economy going?")
            && second.contains("Alpha: growth is slowing."),
        "{second}"
    );
    assert!(second.contains("`alpha`"), "names who answered: {second}");
    // Chat memory keeps both answers, in order, for the history and the next run.
    let chat_id = events[0].2["chatId"].as_str().unwrap();
    let (_, chat) = app.get(&format!("/api/chat?chatId={chat_id}")).await;
    let said: Vec<String> = chat["data"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "content.snapshot")
        .map(|e| e["text"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(said, ["Alpha: growth is slowing.", "Beta: rates matter more than growth here."]);
    app.stop().await;
}

#[tokio::test]
async fn a_parallel_team_runs_members_at_once_and_its_merger_gets_every_answer() {
    let (mock, app) = start(
        vec![
            when("Merge these", once(say("Merged: both agree."))),
            // Both members get the question; whichever asks first gets the first view. Slow
            // enough that both are asking before either is done.
            once(Turn { delay_ms: 40, ..say("View one: buy duration.") }),
            once(Turn { delay_ms: 40, ..say("View two: sell the dollar.") }),
        ],
        &[
            ("alpha", member("the rates desk")),
            ("beta", member("the FX desk")),
            ("gamma", member("the editor")),
            ("fan", json!({"type": "parallel", "members": ["alpha", "beta"], "merger": "gamma"})),
        ],
    )
    .await;
    let events = query(&app, "fan", "Best trade for 2027?").await;
    let (tasks, end) = check(&events);
    assert_eq!(end, "run.complete", "{events:?}");
    let names: Vec<&str> = tasks.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["alpha", "beta", "gamma"]);
    // Both members started before either finished: they ran at once.
    let pos = |ty: &str, id: &str| {
        events.iter().position(|(_, t, d)| t == ty && d["taskId"] == id).unwrap()
    };
    let (a, b) = (&tasks[0].1, &tasks[1].1);
    assert!(pos("task.start", b) < pos("task.complete", a), "beta started while alpha ran");
    assert!(pos("task.start", a) < pos("task.complete", b));
    // The merger came last and read both answers.
    assert!(pos("task.start", &tasks[2].1) > pos("task.complete", a).max(pos("task.complete", b)));
    let merge = last_user(&mock, 2);
    assert!(
        merge.contains("View one: buy duration.") && merge.contains("View two: sell the dollar."),
        "{merge}"
    );
    assert!(merge.contains("## alpha") && merge.contains("## beta"), "{merge}");
    assert_eq!(texts(&events)[&tasks[2].1], "Merged: both agree.");
    app.stop().await;
}

#[tokio::test]
async fn a_parallel_team_goes_on_without_a_failed_member_but_not_without_all() {
    let fault = || {
        once(Turn {
            fault: Some(Fault::Status {
                status: 400,
                retry_after: None,
                message: Some("bad request".into()),
            }),
            ..Turn::default()
        })
    };
    let (mock, app) = start(
        vec![
            when("Merge these", once(say("Only one view came in."))),
            fault(),
            once(say("View two.")),
        ],
        &[
            ("alpha", member("the rates desk")),
            ("beta", member("the FX desk")),
            ("gamma", member("the editor")),
            ("fan", json!({"type": "parallel", "members": ["alpha", "beta"], "merger": "gamma"})),
            ("fanNoMerger", json!({"type": "parallel", "members": ["alpha", "beta"]})),
        ],
    )
    .await;
    let events = query(&app, "fan", "Best trade?").await;
    let (tasks, end) = check(&events);
    assert_eq!(end, "run.complete", "{events:?}");
    let fails: Vec<&Value> =
        events.iter().filter(|(_, t, _)| t == "task.fail").map(|(_, _, d)| d).collect();
    assert_eq!(fails.len(), 1, "one member failed: {events:?}");
    assert!(tasks.iter().any(|(n, id)| n == "gamma" && !id.is_empty()));
    let merge = last_user(&mock, 2);
    assert!(
        merge.contains("(failed:") && merge.contains("View two."),
        "the merger is told: {merge}"
    );
    drop(mock);
    // Every member failing fails the run.
    let (_mock, app2) = start(
        vec![fault(), fault()],
        &[
            ("alpha", member("a")),
            ("beta", member("b")),
            ("fanNoMerger", json!({"type": "parallel", "members": ["alpha", "beta"]})),
        ],
    )
    .await;
    let events = query(&app2, "fanNoMerger", "Best trade?").await;
    let (_, end) = check(&events);
    assert_eq!(end, "run.error");
    assert!(error_of(&events).starts_with("every member failed"), "{events:?}");
    app.stop().await;
    app2.stop().await;
}

#[tokio::test]
async fn a_routing_team_sends_the_question_to_the_member_its_classifier_names() {
    let (mock, app) = start(
        vec![
            once(say("beta")),
            once(say("The dollar looks heavy.")),
            once(say("I cannot decide")),
        ],
        &[
            ("alpha", member("the equity analyst")),
            ("beta", member("the FX analyst")),
            ("desk", json!({"type": "routing", "members": ["alpha", "beta"], "plain": {"systemPrompt": "Currencies go to beta."}})),
        ],
    )
    .await;
    let events = query(&app, "desk", "Is EURUSD going up?").await;
    let (tasks, end) = check(&events);
    assert_eq!(end, "run.complete", "{events:?}");
    let names: Vec<&str> = tasks.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["desk", "beta"], "the router's task, then the member it named");
    let router = mock.requests()[0].body["messages"][0]["content"].to_string();
    assert!(
        router.contains("- alpha: the equity analyst") && router.contains("Currencies go to beta."),
        "{router}"
    );
    assert_eq!(texts(&events)[&tasks[1].1], "The dollar looks heavy.");
    assert_eq!(last_user(&mock, 1), "Is EURUSD going up?");
    // A classifier that names nobody ends the run, saying so.
    let events = query(&app, "desk", "Something else").await;
    let (_, end) = check(&events);
    assert_eq!(end, "run.error");
    assert!(error_of(&events).contains("names no member (alpha, beta)"), "{events:?}");
    app.stop().await;
}

#[tokio::test]
async fn a_supervisor_calls_members_as_tools_until_it_answers() {
    let (mock, app) = start(
        vec![
            call("s1", "ask_alpha", json!({"task": "Summarize growth"})),
            once(say("Growth: 1.8% and slowing.")),
            once(say("Growth is slowing (1.8%), says alpha.")),
        ],
        &[
            ("alpha", member("the growth economist")),
            ("beta", member("the rates strategist")),
            (
                "boss",
                json!({
                    "type": "supervisor", "members": ["alpha", "beta"], "mode": "REACT",
                    "react": {"systemPrompt": "You lead the desk."}
                }),
            ),
        ],
    )
    .await;
    let events = query(&app, "boss", "How is growth?").await;
    let (tasks, end) = check(&events);
    assert_eq!(end, "run.complete", "{events:?}");
    assert_eq!(tasks.len(), 1);
    assert_eq!(tasks[0].0, "alpha");
    // The supervisor was offered one tool per member.
    let offered: Vec<String> = mock.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(offered, ["ask_alpha", "ask_beta"]);
    // The member ran inside the supervisor's tool call and got the task, not the chat.
    let order: Vec<&str> = events
        .iter()
        .map(|(_, t, _)| t.as_str())
        .filter(|t| ["tool.end", "task.start", "task.complete", "tool.result"].contains(t))
        .collect();
    assert_eq!(order, ["tool.end", "task.start", "task.complete", "tool.result"]);
    assert_eq!(last_user(&mock, 1), "Summarize growth");
    let result = events.iter().find(|(_, t, _)| t == "tool.result").unwrap();
    assert!(result.2["result"].to_string().contains("Growth: 1.8% and slowing."), "{result:?}");
    // The supervisor's answer is the run's own, not a task's.
    assert_eq!(texts(&events)[""], "Growth is slowing (1.8%), says alpha.");
    app.stop().await;
}

#[tokio::test]
async fn a_failing_member_ends_a_sequential_team_naming_it() {
    let (_mock, app) = start(
        vec![once(Turn {
            fault: Some(Fault::Status {
                status: 400,
                retry_after: None,
                message: Some("nope".into()),
            }),
            ..Turn::default()
        })],
        &[
            ("alpha", member("a")),
            ("beta", member("b")),
            ("missing", json!({"type": "sequential", "members": ["ghost", "alpha"]})),
            ("pipe", json!({"type": "sequential", "members": ["alpha", "beta"]})),
        ],
    )
    .await;
    let events = query(&app, "pipe", "go").await;
    let (tasks, end) = check(&events);
    assert_eq!((tasks.len(), end.as_str()), (1, "run.error"), "beta never started: {events:?}");
    assert!(error_of(&events).starts_with("member `alpha` failed:"), "{events:?}");
    // A member that does not exist fails as a task, with its name.
    let events = query(&app, "missing", "go").await;
    let (_, end) = check(&events);
    assert_eq!(end, "run.error");
    let fail = events.iter().find(|(_, t, _)| t == "task.fail").unwrap();
    assert_eq!(fail.2["error"]["message"], "agent `ghost` not found");
    app.stop().await;
}

#[tokio::test]
async fn the_team_budget_counts_every_member() {
    let usage = || {
        Some(boardsmith::llm::Usage { input_tokens: 600, output_tokens: 100, ..Default::default() })
    };
    let (mock, app) = start(
        vec![Turn { usage: usage(), ..say("An answer.") }],
        &[
            ("alpha", member("a")),
            ("beta", member("b")),
            ("calls", json!({"type": "sequential", "members": ["alpha", "beta"], "budget": {"maxModelCalls": 1}})),
            ("tokens", json!({"type": "sequential", "members": ["alpha", "beta"], "budget": {"maxTokens": 500}})),
            ("steps", json!({"type": "sequential", "members": ["alpha", "beta"], "budget": {"maxSteps": 1}})),
        ],
    )
    .await;
    for (team, expected, calls) in [
        ("calls", "team budget exhausted: maxModelCalls (1)", 1),
        ("tokens", "team budget exhausted: maxTokens (500)", 1),
        ("steps", "team budget exhausted: maxSteps (1 member runs)", 1),
    ] {
        let before = mock.requests().len();
        let events = query(&app, team, "go").await;
        let (_, end) = check(&events);
        assert_eq!(end, "run.error", "{team}: {events:?}");
        assert!(error_of(&events).contains(expected), "{team}: {}", error_of(&events));
        assert_eq!(mock.requests().len() - before, calls, "{team}: the second member made no call");
    }
    app.stop().await;
}

#[tokio::test]
async fn a_team_past_its_time_and_a_cancelled_team_end_their_members_first() {
    // 30 chunks 100 ms apart: 3 s unless stopped.
    let slow = Turn {
        steps: vec![Step::Text { text: "x".repeat(30), chunk: Some(1) }],
        delay_ms: 100,
        ..Turn::default()
    };
    let (_mock, app) = start(
        vec![slow],
        &[
            ("alpha", member("a")),
            ("beta", member("b")),
            ("quick", json!({"type": "parallel", "members": ["alpha", "beta"], "budget": {"timeoutMs": 1000}})),
        ],
    )
    .await;
    let started = std::time::Instant::now();
    let events = query(&app, "quick", "go").await;
    assert!(started.elapsed() < Duration::from_millis(2500), "stopped at the deadline");
    let (tasks, end) = check(&events);
    assert_eq!(end, "run.error");
    assert!(error_of(&events).contains("timeoutMs (1000 ms)"), "{}", error_of(&events));
    let fails = events.iter().filter(|(_, t, _)| t == "task.fail").count();
    assert_eq!(fails, tasks.len(), "every running member ended before the run");
    // Cancelled from outside: members end with task.fail, the run with run.cancel.
    let body = json!({"message": "go", "agentKey": "quick"});
    let r = app.http.post(app.url("/api/query")).json(&body).send().await.unwrap();
    let agents = Arc::clone(&app.app.agents);
    let run = tokio::spawn(sse_events(r));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let run_id = loop {
        // The only run in progress.
        if let Some(id) = app.app.agents.live_run_ids().into_iter().next() {
            break id;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(agents.cancel(&run_id));
    let events = run.await.unwrap();
    let (tasks, end) = check(&events);
    assert_eq!(end, "run.cancel", "{events:?}");
    let fails = events.iter().filter(|(_, t, _)| t == "task.fail").count();
    assert_eq!(fails, tasks.len());
    app.stop().await;
}

#[tokio::test]
async fn bad_team_files_are_refused_with_the_field_named() {
    let (_mock, app) = start(
        vec![],
        &[
            ("alpha", member("a")),
            ("bad", json!({"type": "parallel", "members": ["alpha", "alpha"], "merger": "bad"})),
            ("odd", json!({"type": "crowd", "members": ["alpha"]})),
        ],
    )
    .await;
    let snap = app.app.catalog.snapshot();
    let problem = |file: &str| {
        let p = snap.problem(boardsmith::agent::catalog::Section::Agents, file).unwrap();
        format!("{:?}", p.messages)
    };
    let bad = problem("bad.json");
    for needle in ["members[1]", "`alpha` listed twice", "merger", "not another agent's key"] {
        assert!(bad.contains(needle), "{needle} in {bad}");
    }
    let odd = problem("odd.json");
    assert!(odd.contains("type") && odd.contains("unknown variant `crowd`"), "{odd}");
    assert!(snap.agent("alpha").is_some() && snap.agent("bad").is_none());
    app.stop().await;
}

#[tokio::test]
async fn the_research_desk_answers_with_a_dashboard_and_a_note() {
    const BUILD: &str = r#"return {
  title: 'Gold watch',
  layout: { columns: 1, gap: 12 },
  panels: [
    { id: 'gold', title: 'Gold daily', type: 'line', renderer: 'lightweight-charts',
      code: "const bars = await sdk.market.getKline({ symbol: 'XAUUSD', timeframe: '1D', limit: 30 });\nreturn bars.map((b) => ({ time: b.time, value: b.close }));" },
  ],
};"#;
    let (mock, app) = start(
        vec![
            call("s1", "ask_dashboard", json!({"task": "Build a gold dashboard"})),
            call("d1", "execute", json!({"code": BUILD})),
            once(say("Built 'Gold watch': one line panel, working (demo data).")),
            call(
                "s2",
                "ask_macroWriter",
                json!({"task": "Note on gold; analyst built 'Gold watch' (demo data)"}),
            ),
            once(say("**Gold holds up.** Demo data only.")),
            once(say("**Gold holds up.** Demo data only.\n\nDashboard: Gold watch.")),
        ],
        &[],
    )
    .await;
    let events = query(&app, "researchDesk", "What is gold doing?").await;
    let (tasks, end) = check(&events);
    assert_eq!(end, "run.complete", "{events:?}");
    let names: Vec<&str> = tasks.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["dashboard", "macroWriter"]);
    // The analyst's write happened inside its task, and the dashboard is stored.
    let update = events.iter().find(|(_, t, _)| t == "dashboard.update").unwrap_or_else(|| {
        let results: Vec<&Value> =
            events.iter().filter(|(_, t, _)| t == "tool.result").map(|(_, _, d)| d).collect();
        panic!("no dashboard.update; tool results: {results:#?}")
    });
    let id = update.2["dashboardId"].as_str().unwrap();
    let at = |i: usize| {
        events
            .iter()
            .position(|(_, t, d)| t == "task.complete" && d["taskId"] == tasks[i].1.as_str())
            .unwrap()
    };
    let update_at = events.iter().position(|(_, t, _)| t == "dashboard.update").unwrap();
    assert!(update_at < at(0), "the update streamed during the analyst's task");
    let (status, dash) = app.get(&format!("/api/dashboards/{id}")).await;
    assert_eq!(status, 200, "{dash}");
    assert_eq!(dash["data"]["state"]["title"], "Gold watch");
    assert_eq!(mock.requests().len(), 6, "no extra model call");
    assert!(texts(&events)[""].contains("Dashboard: Gold watch."));
    app.stop().await;
}

#[tokio::test]
async fn a_members_sources_belong_to_its_task() {
    let (_mock, app) = start(
        vec![
            call("k1", "knowledge_search", json!({"query": "cocoa harvest"})),
            once(say("Cocoa rose on poor harvests.")),
        ],
        &[
            ("reader", json!({"description": "reads the notes", "mode": "PLAIN_TOOLING", "tools": ["knowledge_search"], "plainTooling": {"systemPrompt": "Search, then answer."}})),
            ("solo", json!({"type": "sequential", "members": ["reader"]})),
        ],
    )
    .await;
    let (_, kb) = app.post("/api/kb", json!({"name": "notes"})).await;
    let kb = kb["data"]["id"].as_str().unwrap().to_owned();
    let body =
        json!({"title": "Cocoa", "text": "Cocoa futures doubled after poor harvests in Ghana."});
    let (status, doc) = app.post(&format!("/api/kb/{kb}/documents"), body).await;
    assert!((200..300).contains(&status), "{doc}");
    let events = query(&app, "solo", "Why did cocoa rise?").await;
    let (tasks, end) = check(&events);
    assert_eq!(end, "run.complete", "{events:?}");
    let source = events.iter().find(|(_, t, _)| t == "source.snapshot").unwrap();
    assert_eq!(source.2["title"], "Cocoa");
    assert_eq!(source.2["taskId"], tasks[0].1.as_str(), "{source:?}");
    app.stop().await;
}

#[tokio::test]
async fn agent_file_create_composes_no_team_whose_members_hold_what_its_creator_lacks() {
    let args = |id: &str, members: Value| {
        json!({"agentId": id, "description": "a crew", "mode": "PLAIN", "systemPrompt": "x",
            "type": "sequential", "members": members})
    };
    let turns = vec![
        when(
            "compose bad",
            once(call("c1", "agent_file_create", args("crew", json!(["helper", "runner"])))),
        ),
        when(
            "compose unknown",
            once(call("c2", "agent_file_create", args("crew", json!(["nobody"])))),
        ),
        when(
            "compose good",
            once(call("c3", "agent_file_create", args("crew", json!(["helper"])))),
        ),
        say("done"),
    ];
    let fs = json!({"name": "fs", "command": "node", "args": ["/opt/fs.js", "/srv"]});
    let (_mock, app) = start(
        turns,
        &[
            (
                "maker",
                json!({"mode": "REACT", "tools": ["agent_file_create"], "react": {"systemPrompt": "Make agents."}}),
            ),
            ("helper", member("a helper")),
            (
                "runner",
                json!({"mode": "PLAIN", "plain": {"systemPrompt": "x"}, "mcpServers": [fs]}),
            ),
        ],
    )
    .await;
    let result = |events: &[(String, String, Value)]| {
        events.iter().find(|(_, t, _)| t == "tool.result").map(|(_, _, d)| d["result"].clone())
    };
    let crew = app.dir.path().join("agents").join("crew.json");

    // A member with an MCP server its creator lacks: refused, the reason names it.
    let events = query(&app, "maker", "compose bad").await;
    let refused = result(&events).unwrap();
    let error = refused["error"].as_str().unwrap_or_default();
    assert!(error.contains("member `runner`") && error.contains("MCP servers"), "{refused}");
    assert!(!crew.exists(), "nothing written");
    // A member that does not exist cannot be checked: refused too.
    let events = query(&app, "maker", "compose unknown").await;
    let error = result(&events).unwrap()["error"].as_str().unwrap_or_default().to_owned();
    assert!(error.contains("team member `nobody` does not exist"), "{error}");
    assert!(!crew.exists());
    // Members holding nothing the creator lacks: written.
    let events = query(&app, "maker", "compose good").await;
    assert_eq!(result(&events).unwrap()["created"], true, "{events:?}");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&crew).unwrap()).unwrap();
    assert_eq!((&written["type"], &written["members"]), (&json!("sequential"), &json!(["helper"])));
    app.stop().await;
}
