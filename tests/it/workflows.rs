//! Graph workflows over real HTTP: a real server, the scripted mock model on loopback, real
//! SSE. Every node kind, the built-in workflows, validation errors naming node and field,
//! one node failing, cancellation, budgets, the human node answered through `/api/submit`,
//! parallel branches overlapping, and resume after a `kill -9` of a `boardsmith serve` child.

use std::sync::Arc;
use std::time::Duration;

use boardsmith::llm::Usage;
use boardsmith::llm::mock::{Match, MockLlm, Script, Step, Turn};
use futures::StreamExt;
use serde_json::{Value, json};

use crate::support::{self, TestApp, sse_answering, sse_events};

type Events = Vec<(String, String, Value)>;

async fn mock(turns: Vec<Turn>) -> MockLlm {
    MockLlm::start(Script { turns }, 0).await.unwrap()
}

/// A turn answering requests whose last user message contains `needle`.
fn answer(needle: &str, text: &str, delay_ms: u64) -> Turn {
    Turn {
        when: Match { last_user_contains: Some(needle.into()), ..Match::default() },
        steps: vec![Step::Text { text: text.into(), chunk: Some(4) }],
        delay_ms,
        ..Turn::default()
    }
}

async fn app_with(mock: Option<&MockLlm>, templates: bool) -> TestApp {
    let url = mock.map(MockLlm::url);
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let workflows = dir.path().join("workflows");
    support::spawn_app_with(dir, templates, move |c| {
        c.llm = Some(support::llm_config(url.as_deref()));
        c.workflows.dir = workflows;
    })
    .await
}

async fn create(app: &TestApp, def: Value) {
    let (status, body) = app.post("/api/workflows", def).await;
    assert_eq!(status, 201, "{body}");
}

async fn run(app: &TestApp, id: &str, inputs: Value) -> Events {
    let r = app
        .http
        .post(app.url(&format!("/api/workflows/{id}/run")))
        .json(&json!({ "inputs": inputs }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers()["content-type"].to_str().unwrap().starts_with("text/event-stream"));
    sse_events(r).await
}

fn types(events: &Events) -> Vec<&str> {
    events.iter().map(|(_, t, _)| t.as_str()).collect()
}

/// `(type, taskId)` of the task events, in order.
fn tasks(events: &Events) -> Vec<(String, String)> {
    events
        .iter()
        .filter(|(_, t, _)| t.starts_with("task."))
        .map(|(_, t, d)| (t.clone(), d["taskId"].as_str().unwrap().to_owned()))
        .collect()
}

fn pos(events: &Events, kind: &str, task: &str) -> usize {
    events
        .iter()
        .position(|(_, t, d)| t == kind && d["taskId"] == task)
        .unwrap_or_else(|| panic!("no {kind} of {task} in {:?}", types(events)))
}

fn last(events: &Events) -> &Value {
    &events.last().unwrap().2
}

async fn state(app: &TestApp, run_id: &str) -> Value {
    let (status, body) = app.get(&format!("/api/workflows/runs/{run_id}")).await;
    assert_eq!(status, 200, "{body}");
    body["data"].clone()
}

fn run_id(events: &Events) -> String {
    events[0].2["runId"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn node_types_validation_and_crud_name_the_node_and_field() {
    let app = app_with(None, false).await;
    let (status, body) = app.get("/api/workflows/node-types").await;
    assert_eq!(status, 200);
    let kinds: Vec<&str> =
        body["data"].as_array().unwrap().iter().map(|k| k["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["llm", "agent", "tool", "code", "condition", "parallel", "join", "human", "knowledge"]
    );
    let llm = &body["data"][0]["fields"];
    assert_eq!(
        llm[0],
        json!({"name": "prompt", "type": "template", "required": true, "description": "the user message"})
    );

    let bad = json!({
        "id": "bad",
        "name": "bad",
        "nodes": [
            {"id": "a", "type": "llm", "prompt": "{{nodes.b.output}}"},
            {"id": "b", "type": "tool", "tool": "no_such_tool"},
            {"id": "c", "type": "sql"}
        ],
        "edges": [{"from": "a", "to": "b"}, {"from": "b", "to": "nowhere"}]
    });
    let (status, body) = app.post("/api/workflows/validate", bad.clone()).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["valid"], false);
    let errors: Vec<(Value, Value)> = body["data"]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["node"].clone(), e["field"].clone()))
        .collect();
    for expected in [
        (json!("a"), json!("prompt")),
        (json!("b"), json!("tool")),
        (json!("c"), json!("type")),
        (Value::Null, json!("edges[1].to")),
    ] {
        assert!(errors.contains(&expected), "{expected:?} not in {errors:?}");
    }
    let (status, body) = app.post("/api/workflows", bad).await;
    assert_eq!(status, 400);
    assert_eq!(body["data"]["param"], "nodes.b.tool", "the first problem: {body}");
    assert!(body["data"]["errors"].as_array().unwrap().len() >= 4);
    let (status, body) = app
        .post(
            "/api/workflows/validate",
            json!({"name": "x", "nodes": [], "budget": {"maxSteps": "many"}}),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["errors"][0]["field"], "budget.maxSteps", "{body}");

    // The built-ins validate; API definitions are created, replaced and deleted.
    let (_, list) = app.get("/api/workflows").await;
    for id in ["deep-research", "morning-briefing"] {
        let w = list["data"].as_array().unwrap().iter().find(|w| w["id"] == id).unwrap();
        assert_eq!(
            (w["origin"].as_str(), w["valid"].as_bool()),
            (Some("builtin"), Some(true)),
            "{w}"
        );
    }
    let good = json!({"id": "one", "name": "one", "nodes": [{"id": "a", "type": "code", "code": "return 1"}]});
    create(&app, good.clone()).await;
    let (status, _) = app.post("/api/workflows", good.clone()).await;
    assert_eq!(status, 409);
    let r = app
        .http
        .put(app.url("/api/workflows/one"))
        .json(
            &json!({"name": "renamed", "nodes": [{"id": "a", "type": "code", "code": "return 2"}]}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let (_, got) = app.get("/api/workflows/one").await;
    assert_eq!(
        (got["data"]["origin"].as_str(), got["data"]["definition"]["name"].as_str()),
        (Some("api"), Some("renamed"))
    );
    let deleted = app.http.delete(app.url("/api/workflows/one")).send().await.unwrap();
    assert_eq!(deleted.status(), 200);
    let (status, _) = app.get("/api/workflows/one").await;
    assert_eq!(status, 404);
    let builtin = app.http.delete(app.url("/api/workflows/deep-research")).send().await.unwrap();
    assert_eq!(builtin.status(), 409);
    // A run's inputs are checked before any event.
    let (status, body) =
        app.post("/api/workflows/deep-research/run", json!({"inputs": {"topci": "x"}})).await;
    assert_eq!(status, 400);
    assert_eq!(body["data"]["param"], "inputs.topci", "{body}");
    app.stop().await;
}

#[tokio::test]
async fn code_condition_tool_and_llm_nodes_run_as_tasks_with_their_events() {
    let mock = mock(vec![answer("Weather report", "Sunny and mild.", 0)]).await;
    let app = app_with(Some(&mock), false).await;
    create(
        &app,
        json!({
            "id": "route",
            "name": "route",
            "inputs": {"city": {"type": "string"}, "n": {"type": "integer", "default": 3}},
            "nodes": [
                {"id": "score", "type": "code", "code": "return {double: vars.n * 2, city: vars.city}", "inputs": {"n": "{{inputs.n}}", "city": "{{inputs.city}}"}},
                {"id": "check", "type": "condition", "value": "{{nodes.score.output.double}}"},
                {"id": "weather", "type": "tool", "tool": "mock_city_weather", "args": {"city": "{{nodes.score.output.city}}"}},
                {"id": "never", "type": "code", "code": "return 'wrong branch'"},
                {"id": "say", "type": "llm", "prompt": "Weather report for {{inputs.city}}: {{nodes.weather.output}}"}
            ],
            "edges": [
                {"from": "score", "to": "check"},
                {"from": "check", "to": "weather", "when": "6"},
                {"from": "check", "to": "never"},
                {"from": "weather", "to": "say"}
            ]
        }),
    )
    .await;
    let events = run(&app, "route", json!({"city": "Paris"})).await;
    assert_eq!(events[0].1, "run.start");
    assert_eq!(events.last().unwrap().1, "run.complete", "{:?}", types(&events));
    let seqs: Vec<u64> = events.iter().map(|(_, _, d)| d["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (1..=events.len() as u64).collect::<Vec<_>>(), "gapless seq");
    let id = run_id(&events);
    assert!(events.iter().all(|(sse_id, _, _)| sse_id.starts_with(&format!("{id}:"))));
    assert_eq!(
        tasks(&events),
        [
            ("task.start", "score"),
            ("task.complete", "score"),
            ("task.start", "check"),
            ("task.complete", "check"),
            ("task.start", "weather"),
            ("task.complete", "weather"),
            ("task.start", "say"),
            ("task.complete", "say"),
        ]
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
    );
    let start = &events[pos(&events, "task.start", "weather")].2;
    assert_eq!(start["description"], "tool");
    let tool = events.iter().find(|(_, t, _)| t == "tool.start").unwrap();
    assert_eq!(
        (tool.2["taskId"].as_str(), tool.2["toolName"].as_str()),
        (Some("weather"), Some("mock_city_weather"))
    );
    let content = events.iter().find(|(_, t, _)| t == "content.start").unwrap();
    assert_eq!(content.2["taskId"], "say");
    assert!(
        pos(&events, "task.start", "say")
            < events.iter().position(|(_, t, _)| t == "content.start").unwrap()
    );

    let s = state(&app, &id).await;
    assert_eq!(s["status"], "completed");
    assert_eq!(s["outputs"]["say"], "Sunny and mild.");
    let finished: Vec<&str> = s["finishedNodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["node"].as_str().unwrap())
        .collect();
    assert_eq!(finished, ["score", "check", "weather", "say"]);
    assert_eq!(s["finishedNodes"][0]["output"], json!({"double": 6, "city": "Paris"}));
    assert_eq!(s["finishedNodes"][1]["branch"], "6");
    let prompt = mock.requests()[0].body["messages"].to_string();
    assert!(
        prompt.contains("Weather report for Paris: {"),
        "the tool's JSON output went into the prompt: {prompt}"
    );

    // The stream resumes after an event it had sent, with the same ids.
    let r = app
        .http
        .post(app.url("/api/workflows/route/run"))
        .header("last-event-id", format!("{id}:3"))
        .send()
        .await
        .unwrap();
    let rest = sse_events(r).await;
    assert_eq!(rest[0].2["seq"], 4);
    assert_eq!(rest.len(), events.len() - 3);
    app.stop().await;
}

#[tokio::test]
async fn an_agent_node_runs_a_catalog_agent_as_its_task() {
    let mock = mock(vec![answer("Summarize", "Gold rose 2%.", 0)]).await;
    let app = app_with(Some(&mock), false).await;
    create(
        &app,
        json!({"id": "ask", "name": "ask", "nodes": [
            {"id": "analyst", "type": "agent", "agent": "demoModePlain", "message": "Summarize the gold market"}
        ]}),
    )
    .await;
    let events = run(&app, "ask", json!({})).await;
    assert_eq!(events.last().unwrap().1, "run.complete", "{:?}", types(&events));
    assert_eq!(
        types(&events).iter().filter(|t| **t == "run.start").count(),
        1,
        "the member has no run frame of its own"
    );
    assert_eq!(
        tasks(&events),
        [("task.start", "analyst"), ("task.complete", "analyst")]
            .map(|(a, b)| (a.to_owned(), b.to_owned())),
        "one task per node: the member's own frame is the node's"
    );
    let start = events.iter().find(|(_, t, _)| t == "content.start").unwrap();
    assert_eq!(start.2["taskId"], "analyst");
    let system = mock.requests()[0].body["messages"][0]["content"].to_string();
    assert!(
        system.contains("concise, knowledgeable assistant"),
        "the agent's own prompt: {system}"
    );
    assert_eq!(state(&app, &run_id(&events)).await["outputs"]["analyst"], "Gold rose 2%.");
    // Counted in the usage ledger like a query's call, under the agent.
    let (_, report) = app.get("/api/usage?groupBy=agent").await;
    let rows = report["data"]["rows"].as_array().unwrap();
    let row = rows.iter().find(|r| r["agent"] == "demoModePlain").expect("a row for the agent");
    assert_eq!(row["requests"], 1, "{report}");
    app.stop().await;
}

#[tokio::test]
async fn deep_research_fans_out_concurrently_and_joins_into_a_report() {
    let plan = r#"{"questions": ["Q-alpha?", "Q-beta?", "Q-gamma?"]}"#;
    let mock = mock(vec![
        answer("Which three questions", plan, 0),
        // The report's prompt holds the questions too: matched first, by the findings.
        answer("Alpha finding here.", "# Report\nAll three.", 0),
        answer("Q-alpha", "Alpha finding here.", 60),
        answer("Q-beta", "Beta finding here.", 60),
        answer("Q-gamma", "Gamma finding here.", 60),
    ])
    .await;
    let app = app_with(Some(&mock), false).await;
    let events = run(&app, "deep-research", json!({"topic": "gold"})).await;
    assert_eq!(events.last().unwrap().1, "run.complete", "{:?}", last(&events));
    // Concurrent, proven without timing: every branch started before any finished, and a
    // branch's text arrived while another branch's block was still open.
    let first_done = ["research1", "research2", "research3"]
        .map(|t| pos(&events, "task.complete", t))
        .into_iter()
        .min()
        .unwrap();
    for t in ["research1", "research2", "research3"] {
        assert!(pos(&events, "task.start", t) < first_done, "{t} started after a branch finished");
    }
    let block_of = |task: &str| {
        events.iter().find(|(_, t, d)| t == "content.start" && d["taskId"] == task).unwrap().2["contentId"].clone()
    };
    let (a, b) = (block_of("research1"), block_of("research2"));
    let a_end =
        events.iter().position(|(_, t, d)| t == "content.end" && d["contentId"] == a).unwrap();
    let b_first =
        events.iter().position(|(_, t, d)| t == "content.delta" && d["contentId"] == b).unwrap();
    let a_first =
        events.iter().position(|(_, t, d)| t == "content.delta" && d["contentId"] == a).unwrap();
    let b_end =
        events.iter().position(|(_, t, d)| t == "content.end" && d["contentId"] == b).unwrap();
    assert!(b_first < a_end && a_first < b_end, "the branches' streams overlap");
    let s = state(&app, &run_id(&events)).await;
    assert_eq!(s["outputs"]["report"], "# Report\nAll three.");
    let collect =
        s["finishedNodes"].as_array().unwrap().iter().find(|f| f["node"] == "collect").unwrap();
    assert_eq!(
        collect["output"],
        json!({"research1": "Alpha finding here.", "research2": "Beta finding here.", "research3": "Gamma finding here."})
    );
    let report_prompt = mock.requests().last().unwrap().body["messages"].to_string();
    assert!(
        report_prompt.contains("Q-beta?") && report_prompt.contains("Gamma finding here."),
        "{report_prompt}"
    );
    app.stop().await;
}

#[tokio::test]
async fn morning_briefing_refreshes_a_dashboard_and_summarises_its_panels() {
    let mock = mock(vec![answer("Panels:", "- Gold is up.", 0)]).await;
    let app = app_with(Some(&mock), true).await;
    let (_, list) = app.get("/api/dashboards").await;
    let dashboard = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["title"].as_str().unwrap().to_lowercase().contains("gold"))
        .unwrap()
        .clone();
    let id = dashboard["id"].as_str().unwrap();
    let events = run(&app, "morning-briefing", json!({"dashboardId": id})).await;
    assert_eq!(events.last().unwrap().1, "run.complete", "{:?}", last(&events));
    let s = state(&app, &run_id(&events)).await;
    let refresh = &s["finishedNodes"][0]["output"];
    assert_eq!(refresh["dashboardId"], id);
    let panels = refresh["panels"].as_array().unwrap();
    assert!(!panels.is_empty() && panels.iter().all(|p| p["status"] == "ok"), "{refresh}");
    let digest = s["finishedNodes"][1]["output"].as_str().unwrap();
    assert_eq!(digest.lines().count(), panels.len(), "{digest}");
    assert_eq!(s["outputs"]["summary"], "- Gold is up.");
    let prompt = mock.requests()[0].body["messages"].to_string();
    assert!(prompt.contains(dashboard["title"].as_str().unwrap()), "{prompt}");
    app.stop().await;
}

#[tokio::test]
async fn one_failing_node_stops_the_others_and_fails_the_run_naming_it() {
    let mock = mock(vec![answer("slow", &"x".repeat(40), 200)]).await;
    let app = app_with(Some(&mock), false).await;
    create(
        &app,
        json!({"id": "boom", "name": "boom", "nodes": [
            {"id": "p", "type": "parallel"},
            {"id": "bad", "type": "code", "code": "const x = 1;\nthrow new Error('boom');"},
            {"id": "slow", "type": "llm", "prompt": "slow answer please"},
            {"id": "j", "type": "join"},
            {"id": "after", "type": "code", "code": "return 1"}
        ], "edges": [
            {"from": "p", "to": "bad"}, {"from": "p", "to": "slow"},
            {"from": "bad", "to": "j"}, {"from": "slow", "to": "j"}, {"from": "j", "to": "after"}
        ]}),
    )
    .await;
    let events = run(&app, "boom", json!({})).await;
    let end = events.last().unwrap();
    assert_eq!(end.1, "run.error", "{:?}", types(&events));
    assert_eq!(end.2["error"]["node"], "bad");
    assert!(
        end.2["error"]["message"].as_str().unwrap().starts_with("node `bad` failed:"),
        "{}",
        end.2
    );
    let fail = &events[pos(&events, "task.fail", "bad")].2;
    assert!(fail["error"]["message"].as_str().unwrap().contains("boom"), "{fail}");
    assert_eq!(fail["error"]["detail"]["line"], 2, "the sandbox's position: {fail}");
    let stopped = &events[pos(&events, "task.fail", "slow")].2;
    assert_eq!(stopped["error"]["message"], "stopped: the run ended");
    assert!(!events.iter().any(|(_, t, d)| t == "task.start" && d["taskId"] == "after"));
    assert!(!types(&events).contains(&"run.complete"));
    let s = state(&app, &run_id(&events)).await;
    assert_eq!((s["status"].as_str(), s["error"]["node"].as_str()), (Some("failed"), Some("bad")));
    app.stop().await;
}

/// Reads a run's stream until `until` matches an event; returns the response's remaining
/// stream and the events so far.
async fn read_until(
    response: reqwest::Response,
    until: impl Fn(&str, &Value) -> bool,
) -> (impl futures::Stream<Item = Result<eventsource_stream::Event, impl std::fmt::Debug>>, Events)
{
    use eventsource_stream::Eventsource;
    let mut stream = response.bytes_stream().eventsource();
    let mut out = Vec::new();
    loop {
        let frame = tokio::time::timeout(Duration::from_secs(20), stream.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        let data: Value = serde_json::from_str(&frame.data).unwrap();
        let done = until(&frame.event, &data);
        out.push((frame.id, frame.event, data));
        if done {
            return (stream, out);
        }
    }
}

async fn rest(
    mut stream: impl futures::Stream<Item = Result<eventsource_stream::Event, impl std::fmt::Debug>>
    + Unpin,
    out: &mut Events,
) {
    while let Some(frame) =
        tokio::time::timeout(Duration::from_secs(20), stream.next()).await.unwrap()
    {
        let frame = frame.unwrap();
        out.push((frame.id, frame.event, serde_json::from_str(&frame.data).unwrap()));
    }
}

#[tokio::test]
async fn a_cancelled_run_ends_with_run_cancel_and_starts_nothing_more() {
    let app = app_with(None, false).await;
    create(
        &app,
        json!({"id": "wait", "name": "wait", "nodes": [
            {"id": "ask", "type": "human", "prompt": "Go on?"},
            {"id": "next", "type": "code", "code": "return 1"}
        ], "edges": [{"from": "ask", "to": "next"}]}),
    )
    .await;
    let r =
        app.http.post(app.url("/api/workflows/wait/run")).json(&json!({})).send().await.unwrap();
    let (stream, mut events) = read_until(r, |t, _| t == "tool.end").await;
    let id = run_id(&events);
    let (status, body) = app.post(&format!("/api/workflows/runs/{id}/cancel"), json!({})).await;
    assert_eq!(status, 200, "{body}");
    rest(Box::pin(stream), &mut events).await;
    assert_eq!(events.last().unwrap().1, "run.cancel", "{:?}", types(&events));
    assert_eq!(events[pos(&events, "task.fail", "ask")].2["error"]["message"], "cancelled");
    assert!(!events.iter().any(|(_, t, d)| t == "task.start" && d["taskId"] == "next"));
    assert_eq!(state(&app, &id).await["status"], "cancelled");
    let (status, _) = app.post(&format!("/api/workflows/runs/{id}/cancel"), json!({})).await;
    assert_eq!(status, 404, "not running any more");
    app.stop().await;
}

#[tokio::test]
async fn budgets_bound_steps_time_and_tokens() {
    let mock = mock(vec![Turn {
        steps: vec![Step::Text { text: "long answer".into(), chunk: None }],
        usage: Some(Usage { input_tokens: 900, output_tokens: 200, ..Usage::default() }),
        ..Turn::default()
    }])
    .await;
    let app = app_with(Some(&mock), false).await;
    let chain = |id: &str, budget: Value| {
        json!({"id": id, "name": id, "budget": budget, "nodes": [
            {"id": "a", "type": "code", "code": "return 1"},
            {"id": "b", "type": "code", "code": "return 2"},
            {"id": "c", "type": "code", "code": "return 3"}
        ], "edges": [{"from": "a", "to": "b"}, {"from": "b", "to": "c"}]})
    };
    create(&app, chain("steps", json!({"maxSteps": 2}))).await;
    let events = run(&app, "steps", json!({})).await;
    assert_eq!(last(&events)["type"], "run.error");
    assert_eq!(
        last(&events)["error"]["message"],
        "budget exhausted: maxSteps (2) reached before node `c`"
    );
    assert!(!events.iter().any(|(_, t, d)| t == "task.start" && d["taskId"] == "c"));

    create(
        &app,
        json!({"id": "slow", "name": "slow", "budget": {"timeoutMs": 300}, "nodes": [
            {"id": "ask", "type": "human", "prompt": "Anyone?"}
        ]}),
    )
    .await;
    let events = run(&app, "slow", json!({})).await;
    assert_eq!(last(&events)["error"]["message"], "budget exhausted: timeoutMs (300) passed");
    assert_eq!(
        events[pos(&events, "task.fail", "ask")].2["error"]["message"],
        "stopped: the run ended"
    );

    create(
        &app,
        json!({"id": "tokens", "name": "tokens", "budget": {"maxTokens": 1000}, "nodes": [
            {"id": "one", "type": "llm", "prompt": "hi"},
            {"id": "two", "type": "llm", "prompt": "again"}
        ], "edges": [{"from": "one", "to": "two"}]}),
    )
    .await;
    let events = run(&app, "tokens", json!({})).await;
    let error = last(&events)["error"]["message"].as_str().unwrap().to_owned();
    assert_eq!(error, "budget exhausted: maxTokens (1000) passed: 1100 tokens after node `one`");
    assert_eq!(mock.requests().len(), 1, "the second call never went out");
    app.stop().await;
}

#[tokio::test]
async fn a_human_node_waits_for_the_users_submit_and_outputs_it() {
    let app = app_with(None, false).await;
    create(
        &app,
        json!({"id": "approve", "name": "approve", "inputs": {"amount": {"type": "number"}}, "nodes": [
            {"id": "ok", "type": "human", "title": "Approve", "prompt": "Spend {{inputs.amount}} USD?", "params": {"confirmText": "Spend"}},
            {"id": "echo", "type": "code", "code": "return vars.answer.confirmed ? 'approved' : 'declined'", "inputs": {"answer": "{{nodes.ok.output}}"}}
        ], "edges": [{"from": "ok", "to": "echo"}]}),
    )
    .await;
    let r = app
        .http
        .post(app.url("/api/workflows/approve/run"))
        .json(&json!({"inputs": {"amount": 250}}))
        .send()
        .await
        .unwrap();
    let events = sse_answering(&app, r, |t, d| {
        (t == "tool.end").then(|| {
            (
                d["toolId"].as_str().unwrap().to_owned(),
                json!({"confirmed": true, "comment": "fine"}),
            )
        })
    })
    .await;
    assert_eq!(events.last().unwrap().1, "run.complete", "{:?}", types(&events));
    let start = events.iter().find(|(_, t, _)| t == "tool.start").unwrap();
    assert_eq!(
        (
            start.2["toolId"].as_str(),
            start.2["toolType"].as_str(),
            start.2["toolApi"].as_str(),
            start.2["taskId"].as_str()
        ),
        (Some("ok"), Some("html"), Some("confirm_dialog"), Some("ok"))
    );
    let args = events.iter().find(|(_, t, _)| t == "tool.args").unwrap();
    let form: Value = serde_json::from_str(args.2["delta"].as_str().unwrap()).unwrap();
    assert_eq!(
        form,
        json!({"title": "Approve", "message": "Spend 250 USD?", "confirmText": "Spend"})
    );
    let s = state(&app, &run_id(&events)).await;
    assert_eq!(s["finishedNodes"][0]["output"], json!({"confirmed": true, "comment": "fine"}));
    assert_eq!(s["outputs"]["echo"], "approved");
    app.stop().await;
}

/// `boardsmith serve` as a child over `dir`, its model the mock at `mock_url`.
async fn start_child(dir: &std::path::Path, mock_url: &str, token: &str) -> support::node::Node {
    support::node::mock_model(dir, mock_url, "mock-model", false);
    support::node::Node::start(dir, token, &[]).await
}

#[tokio::test]
async fn a_run_killed_mid_workflow_resumes_after_a_restart_without_rerunning_finished_nodes() {
    let mock = mock(vec![
        answer("first step", "First done.", 0),
        // 12 chunks of 4 characters, 300 ms apart: the kill lands while it streams.
        answer("second step", &"slow".repeat(12), 300),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("workflows")).unwrap();
    std::fs::write(
        dir.path().join("workflows/two-steps.json"),
        json!({"name": "two steps", "nodes": [
            {"id": "first", "type": "llm", "prompt": "first step"},
            {"id": "second", "type": "llm", "prompt": "second step after: {{nodes.first.output}}"}
        ], "edges": [{"from": "first", "to": "second"}]})
        .to_string(),
    )
    .unwrap();
    let token = boardsmith::access::ServerToken::generate().expose().to_owned();
    let server = start_child(dir.path(), &mock.url(), &token).await;
    let r = server
        .http
        .post(server.url("/api/workflows/two-steps/run"))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    // Watch the stream: node 1 committed (task.complete), node 2 streaming. Then kill -9.
    let second_started = std::cell::Cell::new(false);
    let (_stream, events) = read_until(r, |t, d| {
        if t == "task.start" && d["taskId"] == "second" {
            second_started.set(true);
        }
        second_started.get() && t == "content.delta"
    })
    .await;
    assert!(types(&events).contains(&"task.complete"));
    let id = run_id(&events);
    drop(server); // SIGKILL: no graceful anything.
    let first_calls = || {
        mock.requests()
            .iter()
            .filter(|r| r.body["messages"].to_string().contains("first step"))
            .count()
    };
    assert_eq!(first_calls(), 1);

    let server = start_child(dir.path(), &mock.url(), &token).await;
    let s: Value = server
        .http
        .get(server.url(&format!("/api/workflows/runs/{id}")))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(s["data"]["status"], "interrupted", "{s}");
    let finished: Vec<&str> = s["data"]["finishedNodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["node"].as_str().unwrap())
        .collect();
    assert_eq!(finished, ["first"]);
    let resumed: Value = server
        .http
        .post(server.url(&format!("/api/workflows/runs/{id}/resume")))
        .json(&json!({"stream": false}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let events = resumed["data"]["events"].as_array().unwrap();
    assert_eq!(resumed["data"]["streamId"], format!("{id}.2"));
    let kinds: Vec<(&str, Option<&str>)> = events
        .iter()
        .filter(|e| {
            e["type"].as_str().unwrap().starts_with("task.")
                || e["type"].as_str().unwrap().starts_with("run.")
        })
        .map(|e| (e["type"].as_str().unwrap(), e["taskId"].as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("run.start", None),
            ("task.start", Some("second")),
            ("task.complete", Some("second")),
            ("run.complete", None)
        ]
    );
    assert_eq!(first_calls(), 1, "node 1 was not run again");
    let s: Value = server
        .http
        .get(server.url(&format!("/api/workflows/runs/{id}")))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        (s["data"]["status"].as_str(), s["data"]["attempts"].as_u64()),
        (Some("completed"), Some(2))
    );
    assert_eq!(s["data"]["outputs"]["second"], "slow".repeat(12));
    let second_prompt = mock.requests().last().unwrap().body["messages"].to_string();
    assert!(
        second_prompt.contains("second step after: First done."),
        "node 1's stored output fed node 2: {second_prompt}"
    );
}

#[tokio::test]
async fn a_knowledge_node_retrieves_passages_cites_them_and_feeds_the_next_node() {
    let mock = mock(vec![answer("Duration risk", "Answer drawn from the desk note.", 0)]).await;
    let app = app_with(Some(&mock), false).await;
    let (status, kb) = app.post("/api/kb", json!({"name": "desk-notes"})).await;
    assert!((200..300).contains(&status), "{kb}");
    let kb_id = kb["data"]["id"].as_str().unwrap().to_owned();
    for (title, text) in [
        ("Rates note", "Duration risk rises when the curve steepens; we trim long bonds."),
        ("FX note", "The yen carry trade unwinds when volatility spikes."),
    ] {
        let (status, body) = app
            .post(&format!("/api/kb/{kb_id}/documents"), json!({"title": title, "text": text}))
            .await;
        assert!((200..300).contains(&status), "{body}");
    }
    // A base that does not exist is a validation error naming the node and field.
    let bad = json!({"id": "kb-bad", "name": "x", "nodes": [{"id": "find", "type": "knowledge", "query": "q", "kb": "nope"}]});
    let (_, body) = app.post("/api/workflows/validate", bad).await;
    assert_eq!(body["data"]["errors"][0]["node"], "find");
    assert_eq!(body["data"]["errors"][0]["field"], "kb");
    create(
        &app,
        json!({
            "id": "ask-notes",
            "name": "Ask the desk notes",
            "inputs": {"question": {"type": "string"}},
            "nodes": [
                {"id": "find", "type": "knowledge", "kb": "desk-notes", "query": "{{inputs.question}}", "k": 3},
                {"id": "write", "type": "llm", "prompt": "{{inputs.question}}\n\nNotes: {{nodes.find.output.results.0.chunk}}"}
            ],
            "edges": [{"from": "find", "to": "write"}]
        }),
    )
    .await;
    let events = run(&app, "ask-notes", json!({"question": "Duration risk and the curve"})).await;
    assert_eq!(last(&events)["type"], "run.complete", "{:?}", types(&events));
    // The cited document is a source of the knowledge node's task.
    let source = events.iter().find(|(_, t, _)| t == "source.snapshot").unwrap();
    assert_eq!(source.2["title"], "Rates note");
    assert_eq!(source.2["taskId"], "find");
    assert!(pos(&events, "task.start", "find") < pos(&events, "task.complete", "find"));
    // The best passage reached the next node's prompt.
    let prompt = mock.requests()[0].body["messages"].to_string();
    assert!(prompt.contains("we trim long bonds"), "{prompt}");
    let s = state(&app, &run_id(&events)).await;
    assert_eq!(s["outputs"]["write"], "Answer drawn from the desk note.", "{s}");
    app.stop().await;
}

/// A server with `configure` applied after the test defaults, its model the mock if given.
async fn app_configured(
    mock: Option<&MockLlm>,
    configure: impl FnOnce(&mut boardsmith::app::AppConfig),
) -> TestApp {
    let url = mock.map(MockLlm::url);
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let workflows = dir.path().join("workflows");
    support::spawn_app_with(dir, false, move |c| {
        c.llm = Some(support::llm_config(url.as_deref()));
        c.workflows.dir = workflows;
        configure(c);
    })
    .await
}

/// Starts a run of `id` with `client` and reads it until its human node shows its form;
/// the run id, or the refusal's status and body.
async fn start_parked(
    app: &TestApp,
    client: &reqwest::Client,
    id: &str,
) -> Result<String, (u16, Value)> {
    let r = client
        .post(app.url(&format!("/api/workflows/{id}/run")))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    if r.status() != 200 {
        return Err((r.status().as_u16(), r.json().await.unwrap()));
    }
    // The stream is dropped: an abandoned run, as a client that went away leaves it.
    let (_, events) = read_until(r, |t, _| t == "tool.end").await;
    Ok(run_id(&events))
}

async fn submit(app: &TestApp, run_id: &str) -> (u16, Value) {
    let body =
        json!({"runId": run_id, "toolId": "ask", "payload": {"params": {"confirmed": true}}});
    app.post("/api/submit", body).await
}

async fn until_status(app: &TestApp, run_id: &str, status: &str) {
    for _ in 0..100 {
        if state(app, run_id).await["status"] == status {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("run {run_id} never became {status}: {}", state(app, run_id).await);
}

#[tokio::test]
async fn runs_parked_on_a_human_node_hold_no_run_slot_and_an_answer_takes_one_back() {
    // ~2 s a run (the delay is per streamed chunk).
    let mock = mock(vec![answer("slow", "done", 400)]).await;
    let app = app_configured(Some(&mock), |c| {
        c.workflows.max_runs = 2;
        c.workflows.max_runs_per_key = 3;
    })
    .await;
    create(
        &app,
        json!({"id": "approve", "name": "approve", "nodes": [
            {"id": "ask", "type": "human", "prompt": "Approve?"},
            {"id": "after", "type": "code", "code": "return 'approved'"}
        ], "edges": [{"from": "ask", "to": "after"}]}),
    )
    .await;
    create(
        &app,
        json!({"id": "quick", "name": "quick", "nodes": [{"id": "one", "type": "code", "code": "return 1"}]}),
    )
    .await;
    create(
        &app,
        json!({"id": "slow", "name": "slow", "nodes": [{"id": "think", "type": "llm", "prompt": "slow please"}]}),
    )
    .await;

    // Sixteen abandoned approvals, eight times the run cap: none holds a slot.
    let mut parked = Vec::new();
    for i in 0..16 {
        let run = start_parked(&app, &app.http, "approve").await;
        parked.push(run.unwrap_or_else(|e| panic!("parked run {i} refused: {e:?}")));
    }
    assert_eq!(app.app.workflows.live_runs(), 16);
    let events = run(&app, "quick", json!({})).await;
    assert_eq!(events.last().unwrap().1, "run.complete", "a new run still starts");

    // Both slots busy with working runs: an answer cannot take one, the run stays parked and
    // its node keeps waiting; the same answer goes through once a slot is free.
    let workers: Vec<_> = (0..2)
        .map(|_| app.http.post(app.url("/api/workflows/slow/run")).json(&json!({})).send())
        .collect();
    let workers = futures::future::join_all(workers).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (status, body) = submit(&app, &parked[0]).await;
    assert_eq!(status, 429, "{body}");
    assert!(body["msg"].as_str().unwrap().contains("send the answer again"), "{body}");
    let (status, _) = app.post("/api/workflows/quick/run", json!({"stream": false})).await;
    assert_eq!(status, 429, "no slot for a new run either");
    assert_eq!(state(&app, &parked[0]).await["status"], "running", "nothing lost");
    for r in workers {
        let events = sse_events(r.unwrap()).await;
        assert_eq!(events.last().unwrap().1, "run.complete", "{:?}", types(&events));
    }
    let (status, body) = submit(&app, &parked[0]).await;
    assert_eq!(status, 200, "{body}");
    until_status(&app, &parked[0], "completed").await;
    assert_eq!(state(&app, &parked[0]).await["outputs"]["after"], "approved");

    // An API key has its share of runs, parked ones included; the owner is not held to it.
    let (status, key) = app.post("/api/keys", json!({"name": "bot", "scopes": ["agents"]})).await;
    assert_eq!(status, 201, "{key}");
    let bot = support::authed_client(key["data"]["key"].as_str().unwrap());
    for _ in 0..3 {
        start_parked(&app, &bot, "approve").await.unwrap();
    }
    let (status, body) = start_parked(&app, &bot, "approve").await.unwrap_err();
    assert_eq!(status, 429, "{body}");
    assert!(
        body["msg"].as_str().unwrap().contains("BOARDSMITH_WORKFLOW_MAX_RUNS_PER_KEY"),
        "{body}"
    );
    start_parked(&app, &app.http, "approve").await.unwrap();
    for run in &parked[1..] {
        let (status, _) = app.post(&format!("/api/workflows/runs/{run}/cancel"), json!({})).await;
        assert_eq!(status, 200);
    }
    app.stop().await;
}

#[tokio::test]
async fn workflow_agent_nodes_take_slots_of_the_agent_run_cap() {
    // Delays are per streamed chunk (an answer is a handful): "fast" ~0.1 s, "slow" ~3 s.
    let mock = mock(vec![answer("slow", "done", 600), answer("fast", "ok", 20)]).await;
    let app = app_configured(Some(&mock), |c| {
        c.service.max_runs = 1;
        c.workflows.agent_wait = Duration::from_millis(1_000);
    })
    .await;
    let pair = |id: &str, word: &str| {
        json!({"id": id, "name": id, "nodes": [
            {"id": "p", "type": "parallel"},
            {"id": "a", "type": "llm", "prompt": format!("{word} a")},
            {"id": "b", "type": "llm", "prompt": format!("{word} b")},
            {"id": "j", "type": "join"}
        ], "edges": [{"from": "p", "to": "a"}, {"from": "p", "to": "b"}, {"from": "a", "to": "j"}, {"from": "b", "to": "j"}]})
    };
    create(&app, pair("quick", "fast")).await;
    create(&app, pair("long", "slow")).await;
    // Held: with one slot the second node waits for the first to finish, then runs.
    let events = run(&app, "quick", json!({})).await;
    assert_eq!(events.last().unwrap().1, "run.complete", "{events:?}");
    assert_eq!(mock.requests().len(), 2);

    // Refused: a node that gets no slot within its wait fails naming the cap.
    let r =
        app.http.post(app.url("/api/workflows/long/run")).json(&json!({})).send().await.unwrap();
    let (stream, mut events) = read_until(r, |t, d| t == "task.start" && d["taskId"] == "b").await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    // While a node's model run holds the only slot, a query is refused as at the cap.
    let (status, body) = app.post("/api/query", json!({"message": "hello"})).await;
    assert_eq!(status, 429, "{body}");
    assert!(body["msg"].as_str().unwrap().contains("AGENT_MAX_RUNS"), "{body}");
    rest(Box::pin(stream), &mut events).await;
    let error = last(&events)["error"]["message"].as_str().unwrap().to_owned();
    assert!(
        error.contains("no agent run slot freed within 1000 ms")
            && error.contains("AGENT_MAX_RUNS"),
        "{error}"
    );
    assert_eq!(mock.requests().len(), 3, "the refused node made no model call");
    app.stop().await;
}
