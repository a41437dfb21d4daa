//! The agent run loop against the scripted mock upstream over loopback HTTP through the real
//! OpenAI-compatible provider: golden event sequences per mode, tool execution (parallel backend
//! calls in call order, actions, frontend submits and timeouts), budgets, cancellation and
//! steering; model resolution and switches, app-only messages, the application's hooks, blocks
//! closed on timeout, memory recording, action parameters and plan updates.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use boardsmith::agent::catalog::{Origin, ToolKind, ToolSpec, ViewType};
use boardsmith::agent::definition;
use boardsmith::agent::events::{Event, EventBody, RunLogs};
use boardsmith::agent::message::AgentMessage;
use boardsmith::agent::run::{
    MessageQueue, ModelResolver, ResolveError, ResolvedModel, RunDeps, RunEnd, RunHooks, RunInput,
    RunOutcome, TurnInfo, run,
};
use boardsmith::agent::tools::{
    BackendTool, BackendTools, FrontendSubmits, ToolContext, ToolError,
};
use boardsmith::llm::http::Transport;
use boardsmith::llm::mock::{MockLlm, Script, Step, Turn};
use boardsmith::llm::openai::OpenAiProvider;
use boardsmith::llm::{ContentBlock, Family, Message, Provider, ProviderKind, ProviderSettings};
use futures::future::BoxFuture;
use serde_json::{Map, Value, json};

// -- helpers ------------------------------------------------------------------------------

fn transport() -> Transport {
    crate::support::llm_transport(Duration::from_secs(2), Duration::from_secs(2), 0)
}

async fn mock(turns: Vec<Turn>) -> MockLlm {
    MockLlm::start(Script { turns }, 0).await.unwrap()
}

fn provider(mock: &MockLlm) -> Arc<dyn Provider> {
    keyed_provider(mock, "openai")
}

fn keyed_provider(mock: &MockLlm, key: &str) -> Arc<dyn Provider> {
    Arc::new(OpenAiProvider::new(ProviderSettings {
        key: key.into(),
        kind: ProviderKind::Openai,
        base_url: format!("{}/v1/", mock.url()),
        api_key: None,
        family: Family::Openai,
        transport: transport(),
    }))
}

/// A turn used once, in script order.
fn once(steps: Vec<Step>) -> Turn {
    Turn { steps, times: Some(1), ..Turn::default() }
}

fn text(t: &str, chunk: usize) -> Step {
    Step::Text { text: t.into(), chunk: Some(chunk) }
}

fn call(id: &str, name: &str, arguments: Value) -> Step {
    Step::ToolCall { id: Some(id.into()), name: name.into(), arguments, fragments: Some(2) }
}

fn spec(name: &str, kind: ToolKind) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: format!("the {name} tool"),
        parameters: json!({"type": "object", "properties": {}}),
        kind,
        prompt: None,
        extra: Map::new(),
        origin: Origin::File(PathBuf::new()),
    }
}

/// Echoes `v` after sleeping `ms`.
struct Echo;

impl BackendTool for Echo {
    fn name(&self) -> &str {
        "echo"
    }

    fn call(&self, args: Value, _: ToolContext) -> BoxFuture<'static, Result<Value, ToolError>> {
        Box::pin(async move {
            let ms = args["ms"].as_u64().unwrap_or(0);
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok(json!({"echo": args["v"].clone()}))
        })
    }
}

/// Pushes a steering message while it runs.
struct Steer(MessageQueue);

impl BackendTool for Steer {
    fn name(&self) -> &str {
        "steer"
    }

    fn call(&self, _: Value, _: ToolContext) -> BoxFuture<'static, Result<Value, ToolError>> {
        self.0.push("actually, use Paris");
        Box::pin(async { Ok(json!({"ok": true})) })
    }
}

struct Setup {
    agent: String,
    tools: Vec<ToolSpec>,
    deps: RunDeps,
}

fn setup(agent_json: Value, tools: Vec<ToolSpec>) -> Setup {
    let mut backend = BackendTools::new();
    backend.register(Arc::new(Echo));
    let deps = RunDeps::new(backend, FrontendSubmits::new(Duration::from_secs(5)));
    Setup { agent: agent_json.to_string(), tools, deps }
}

fn input(s: &Setup, mock: &MockLlm) -> RunInput {
    let agent = definition::parse("test", &s.agent).unwrap();
    RunInput {
        run_id: "r1".into(),
        chat_id: "c1".into(),
        agent: Arc::new(agent),
        tools: s.tools.clone(),
        history: vec![Message::user("earlier").into(), Message::user("more earlier").into()],
        user_message: "hello".into(),
        user_images: Vec::new(),
        provider: provider(mock),
        model: "gpt-test".into(),
        context_tokens: 100_000,
        reasoning: true,
        principal: None,
    }
}

/// Runs and returns the outcome and every event emitted.
async fn go(s: &Setup, mock: &MockLlm) -> (RunOutcome, Vec<Arc<Event>>) {
    go_with(s, input(s, mock)).await
}

/// [`go`] with a given input.
async fn go_with(s: &Setup, input: RunInput) -> (RunOutcome, Vec<Arc<Event>>) {
    let logs = RunLogs::default();
    let sink = logs.start("r1").unwrap();
    let mut sub = sink.subscribe(0).unwrap();
    let outcome = run(input, &s.deps, &sink).await;
    drop(sink);
    let mut events = Vec::new();
    while let Some(e) = sub.next().await.unwrap() {
        events.push(e);
    }
    (outcome, events)
}

/// Runs `s` recorded for chat memory (chat `c1`, run `r1`, message "hello"); the outcome and
/// the finished record.
async fn recorded(s: &Setup, m: &MockLlm) -> (RunOutcome, boardsmith::agent::memory::RunRecord) {
    use boardsmith::agent::events::Query;
    use boardsmith::agent::memory::{ChatMemory, MemoryConfig};
    use boardsmith::agent::run::run_recorded;
    let dir = tempfile::tempdir().unwrap();
    let memory = ChatMemory::new(MemoryConfig::new(dir.path()));
    let query = Query {
        request_id: "q1".into(),
        chat_id: "c1".into(),
        message: "hello".into(),
        ..Query::default()
    };
    let mut recorder = memory.recorder("r1", query, 1);
    let logs = RunLogs::default();
    let sink = logs.start("r1").unwrap();
    let out = run_recorded(input(s, m), &s.deps, &sink, &mut recorder).await;
    (out, recorder.finish())
}

fn types(events: &[Arc<Event>]) -> Vec<&'static str> {
    events.iter().map(|e| e.type_name()).collect()
}

fn no_tools(body: &Value) -> bool {
    body.get("tools").is_none_or(|t| t.as_array().is_some_and(Vec::is_empty))
}

fn tool_results(events: &[Arc<Event>]) -> Vec<(String, Value)> {
    events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ToolResult { tool_id, result } => Some((tool_id.clone(), result.clone())),
            _ => None,
        })
        .collect()
}

// -- modes --------------------------------------------------------------------------------

#[tokio::test]
async fn plain_streams_one_event_per_delta() {
    let m = mock(vec![once(vec![text("Hello world", 5)])]).await;
    let s = setup(json!({"mode": "PLAIN", "plain": {"systemPrompt": "Be brief."}}), vec![]);
    let (out, events) = go(&s, &m).await;
    assert_eq!(
        types(&events),
        [
            "run.start",
            "content.start",
            "content.delta",
            "content.delta",
            "content.delta",
            "content.end",
            "run.complete"
        ]
    );
    let deltas: Vec<&str> = events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ContentDelta { content_id, delta } => {
                assert_eq!(content_id, "r1_content_1");
                Some(delta.as_str())
            }
            _ => None,
        })
        .collect();
    assert_eq!(deltas, ["Hello", " worl", "d"]);
    assert!(matches!(
        &events.last().unwrap().body,
        EventBody::RunComplete { finish_reason: Some(r), .. } if r == "stop"
    ));
    assert_eq!(out.end, RunEnd::Complete("stop".into()));
    assert_eq!(out.final_text(), "Hello world");
    assert_eq!(out.model_calls, 1);
    let reqs = m.requests();
    assert_eq!(reqs.len(), 1);
    let msgs = reqs[0].body["messages"].as_array().unwrap();
    assert_eq!(msgs[0]["role"], "system");
    assert_eq!(msgs.last().unwrap()["content"], "hello");
    assert!(no_tools(&reqs[0].body));
}

#[tokio::test]
async fn thinking_exposes_reasoning_and_asks_for_it() {
    let m = mock(vec![once(vec![
        Step::Reasoning { text: "let me think".into(), chunk: Some(6), signature: None },
        text("42", 10),
    ])])
    .await;
    let s = setup(
        json!({"mode": "THINKING", "thinking": {"systemPrompt": "s", "exposeReasoningToUser": true}}),
        vec![],
    );
    let (_, events) = go(&s, &m).await;
    assert_eq!(
        types(&events),
        [
            "run.start",
            "reasoning.start",
            "reasoning.delta",
            "reasoning.delta",
            "reasoning.end",
            "content.start",
            "content.delta",
            "content.end",
            "run.complete"
        ]
    );
    assert!(matches!(
        &events[1].body,
        EventBody::ReasoningStart { reasoning_id, .. } if reasoning_id == "r1_reasoning_1"
    ));
    assert!(m.requests()[0].body.get("reasoning_effort").is_some(), "{}", m.requests()[0].body);
}

#[tokio::test]
async fn plain_tooling_one_round_then_answer_without_tools() {
    let m =
        mock(vec![once(vec![call("c1", "echo", json!({"v": 1}))]), once(vec![text("done", 10)])])
            .await;
    let s = setup(
        json!({"mode": "PLAIN_TOOLING", "tools": ["echo"], "plainTooling": {"systemPrompt": "s"}}),
        vec![spec("echo", ToolKind::Backend)],
    );
    let (out, events) = go(&s, &m).await;
    assert_eq!(
        types(&events),
        [
            "run.start",
            "tool.start",
            "tool.args",
            "tool.args",
            "tool.end",
            "tool.result",
            "content.start",
            "content.delta",
            "content.end",
            "run.complete"
        ]
    );
    match &events[1].body {
        EventBody::ToolStart { tool_id, tool_name, tool_type, .. } => {
            assert_eq!(tool_id, "c1");
            assert_eq!(tool_name.as_deref(), Some("echo"));
            assert_eq!(tool_type.as_deref(), Some("backend"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(tool_results(&events), [("c1".to_owned(), json!({"echo": 1}))]);
    let reqs = m.requests();
    assert_eq!(reqs.len(), 2);
    assert!(!no_tools(&reqs[0].body));
    assert!(no_tools(&reqs[1].body), "the answer call offers no tools");
    // assistant(tool call), tool result, assistant(answer)
    assert_eq!(out.messages.len(), 3);
    assert!(matches!(out.messages[1], AgentMessage::Llm(Message::Tool { .. })));
}

#[tokio::test]
async fn react_one_tool_per_step_and_step_limit() {
    let m = mock(vec![
        once(vec![call("a1", "echo", json!({"v": "a"})), call("a2", "echo", json!({"v": "b"}))]),
        once(vec![call("b1", "echo", json!({"v": "c"}))]),
        once(vec![text("final", 10)]),
    ])
    .await;
    let s = setup(
        json!({"mode": "REACT", "tools": ["echo"], "react": {"systemPrompt": "s", "maxSteps": 2}}),
        vec![spec("echo", ToolKind::Backend)],
    );
    let (out, events) = go(&s, &m).await;
    assert_eq!(out.end, RunEnd::Complete("stop".into()));
    let results = tool_results(&events);
    assert_eq!(results.len(), 3);
    assert_eq!(results[0], ("a1".to_owned(), json!({"echo": "a"})));
    assert_eq!(results[1].0, "a2");
    assert!(results[1].1["error"].as_str().unwrap().contains("only 1 tool call per step"));
    assert_eq!(results[2], ("b1".to_owned(), json!({"echo": "c"})));
    let reqs = m.requests();
    assert_eq!(reqs.len(), 3);
    assert!(!no_tools(&reqs[1].body));
    assert!(no_tools(&reqs[2].body), "after maxSteps rounds the model must answer");
    assert_eq!(out.final_text(), "final");
}

#[tokio::test]
async fn plan_execute_runs_parallel_calls_and_keeps_call_order() {
    let m = mock(vec![
        once(vec![text("1. look up\n2. answer", 100)]),
        once(vec![
            call("p1", "echo", json!({"v": "slow", "ms": 300})),
            call("p2", "echo", json!({"v": "fast", "ms": 10})),
            call("p3", "echo", json!({"v": "mid", "ms": 150})),
        ]),
        once(vec![text("step answer", 100)]),
        once(vec![text("summary", 100)]),
    ])
    .await;
    let s = setup(
        json!({"mode": "PLAN_EXECUTE", "tools": ["echo"], "planExecute": {
            "planSystemPrompt": "plan", "executeSystemPrompt": "exec", "summarySystemPrompt": "sum"}}),
        vec![spec("echo", ToolKind::Backend)],
    );
    let started = Instant::now();
    let (out, events) = go(&s, &m).await;
    assert!(started.elapsed() < Duration::from_millis(440), "calls ran concurrently");
    let t = types(&events);
    assert_eq!(
        &t[..5],
        ["run.start", "content.start", "content.delta", "content.end", "plan.create"]
    );
    match &events[4].body {
        EventBody::PlanCreate { plan, chat_id, .. } => {
            assert_eq!(chat_id, "c1");
            assert_eq!(plan["steps"].as_array().unwrap().len(), 2);
            assert_eq!(plan["steps"][0]["title"], "1. look up");
        }
        other => panic!("{other:?}"),
    }
    let ids: Vec<String> = tool_results(&events).into_iter().map(|(id, _)| id).collect();
    assert_eq!(ids, ["p1", "p2", "p3"]);
    let tool_msgs: Vec<String> = out
        .messages
        .iter()
        .filter_map(|m| match m.as_llm() {
            Some(Message::Tool { content }) => match &content[0] {
                ContentBlock::ToolResult { tool_use_id, .. } => Some(tool_use_id.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(tool_msgs, ["p1", "p2", "p3"]);
    assert_eq!(out.final_text(), "summary");
    let reqs = m.requests();
    assert_eq!(reqs.len(), 4);
    assert_eq!(reqs[0].body["messages"][0]["content"], "plan");
    assert_eq!(reqs[1].body["messages"][0]["content"], "exec");
    assert_eq!(reqs[3].body["messages"][0]["content"], "sum");
    assert_eq!(t.last(), Some(&"run.complete"));
}

// -- tools --------------------------------------------------------------------------------

#[tokio::test]
async fn action_is_answered_ok_without_waiting() {
    let m = mock(vec![
        once(vec![call("x1", "switch_theme", json!({"theme": "dark"}))]),
        once(vec![text("switched", 100)]),
    ])
    .await;
    let s = setup(
        json!({"mode": "PLAIN_TOOLING", "tools": ["switch_theme"], "plainTooling": {"systemPrompt": "s"}}),
        vec![spec("switch_theme", ToolKind::Action)],
    );
    let (out, events) = go(&s, &m).await;
    assert_eq!(
        &types(&events)[..7],
        [
            "run.start",
            "action.start",
            "action.args",
            "action.args",
            "action.end",
            "action.param",
            "action.result"
        ]
    );
    assert!(matches!(
        &events[6].body,
        EventBody::ActionResult { action_id, result } if action_id == "x1" && result == "OK"
    ));
    assert!(tool_results(&events).is_empty());
    assert!(matches!(
        &out.messages[1],
        AgentMessage::Llm(Message::Tool { content }) if matches!(&content[0], ContentBlock::ToolResult { content, is_error: false, .. } if content == "OK")
    ));
}

#[tokio::test]
async fn frontend_tool_waits_for_the_submit() {
    let m =
        mock(vec![once(vec![call("f1", "pick_date", json!({}))]), once(vec![text("got it", 100)])])
            .await;
    let s = setup(
        json!({"mode": "PLAIN_TOOLING", "tools": ["pick_date"], "plainTooling": {"systemPrompt": "s"}}),
        vec![spec("pick_date", ToolKind::Frontend(ViewType::Html))],
    );
    let logs = RunLogs::default();
    let sink = logs.start("r1").unwrap();
    let mut watch = sink.subscribe(0).unwrap();
    let submits = s.deps.submits.clone();
    let user = tokio::spawn(async move {
        while let Some(e) = watch.next().await.unwrap() {
            if e.type_name() == "tool.start" {
                // Registered before tool.start was emitted: accepted at once.
                tokio::time::sleep(Duration::from_millis(50)).await;
                submits.submit("r1", "f1", json!({"params": {"date": "2026-01-01"}})).unwrap();
                return true;
            }
        }
        false
    });
    let mut sub = sink.subscribe(0).unwrap();
    let out = run(input(&s, &m), &s.deps, &sink).await;
    drop(sink);
    assert!(user.await.unwrap());
    let mut events = Vec::new();
    while let Some(e) = sub.next().await.unwrap() {
        events.push(e);
    }
    assert_eq!(out.end, RunEnd::Complete("stop".into()));
    assert!(matches!(
        &events[1].body,
        EventBody::ToolStart { tool_type: Some(t), tool_api: Some(api), .. } if t == "html" && api == "pick_date"
    ));
    assert_eq!(tool_results(&events), [("f1".to_owned(), json!({"date": "2026-01-01"}))]);
}

#[tokio::test]
async fn frontend_timeout_is_a_tool_error_the_model_sees() {
    let m = mock(vec![
        once(vec![call("f1", "pick_date", json!({}))]),
        once(vec![text("no answer then", 100)]),
    ])
    .await;
    let mut s = setup(
        json!({"mode": "PLAIN_TOOLING", "tools": ["pick_date"], "plainTooling": {"systemPrompt": "s"}}),
        vec![spec("pick_date", ToolKind::Frontend(ViewType::Qlc))],
    );
    s.deps.frontend_timeout = Some(Duration::from_millis(100));
    let (out, events) = go(&s, &m).await;
    assert_eq!(out.end, RunEnd::Complete("stop".into()));
    let results = tool_results(&events);
    assert!(results[0].1["error"].as_str().unwrap().contains("did not answer"), "{results:?}");
    let second = &m.requests()[1].body;
    assert!(second.to_string().contains("did not answer"), "the model is told");
    assert!(!s.deps.submits.is_waiting("r1", "f1"));
}

#[tokio::test]
async fn input_errors_and_unknown_tools_are_answered_not_executed() {
    let bad = |id: &str, name: &str, arguments: Value| Step::ToolCall {
        id: Some(id.into()),
        name: name.into(),
        arguments,
        fragments: None,
    };
    let m = mock(vec![
        once(vec![text("plan", 100)]),
        once(vec![bad("u1", "nope", json!({})), bad("u2", "echo", json!("{not json"))]),
        once(vec![text("ok", 100)]),
    ])
    .await;
    let s = setup(
        json!({"mode": "PLAN_EXECUTE", "tools": ["echo"], "planExecute": {"planSystemPrompt": "p", "executeSystemPrompt": "e"}}),
        vec![spec("echo", ToolKind::Backend)],
    );
    let (out, events) = go(&s, &m).await;
    assert_eq!(out.end, RunEnd::Complete("stop".into()));
    let results = tool_results(&events);
    assert!(
        results[0].1["error"].as_str().unwrap().contains("unknown tool `nope`; available: echo")
    );
    assert!(results[1].1["error"].as_str().unwrap().contains("invalid arguments"), "{results:?}");
}

// -- budgets, cancellation, steering ------------------------------------------------------

#[tokio::test]
async fn tool_budget_exhaustion_is_a_run_error() {
    let m = mock(vec![
        once(vec![call("a1", "echo", json!({"v": 1}))]),
        once(vec![call("a2", "echo", json!({"v": 2}))]),
        once(vec![text("never", 100)]),
    ])
    .await;
    let s = setup(
        json!({"mode": "REACT", "tools": ["echo"], "budget": {"maxToolCalls": 1}, "react": {"systemPrompt": "s"}}),
        vec![spec("echo", ToolKind::Backend)],
    );
    let (out, events) = go(&s, &m).await;
    let RunEnd::Error(e) = &out.end else { panic!("{:?}", out.end) };
    assert!(e.contains("maxToolCalls"), "{e}");
    let last = events.last().unwrap();
    assert_eq!(last.type_name(), "run.error");
    assert_eq!(types(&events).iter().filter(|t| t.starts_with("run.")).count(), 2);
    assert!(
        matches!(&last.body, EventBody::RunError { error, .. } if error["message"].as_str().unwrap().contains("maxToolCalls"))
    );
}

#[tokio::test]
async fn model_call_budget_exhaustion_is_a_run_error() {
    let m =
        mock(vec![once(vec![call("a1", "echo", json!({"v": 1}))]), once(vec![text("never", 100)])])
            .await;
    let s = setup(
        json!({"mode": "REACT", "tools": ["echo"], "budget": {"maxModelCalls": 1}, "react": {"systemPrompt": "s"}}),
        vec![spec("echo", ToolKind::Backend)],
    );
    let (out, events) = go(&s, &m).await;
    assert!(matches!(&out.end, RunEnd::Error(e) if e.contains("maxModelCalls")));
    assert_eq!(events.last().unwrap().type_name(), "run.error");
    assert_eq!(m.requests().len(), 1);
}

#[tokio::test]
async fn cancellation_ends_with_run_cancel() {
    let m = mock(vec![Turn {
        steps: vec![text("a slow answer that takes a while", 2)],
        delay_ms: 50,
        ..Turn::default()
    }])
    .await;
    let s = setup(json!({"mode": "PLAIN", "plain": {"systemPrompt": "s"}}), vec![]);
    let cancel = s.deps.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        cancel.cancel();
    });
    let started = Instant::now();
    let (out, events) = go(&s, &m).await;
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(out.end, RunEnd::Cancelled);
    let t = types(&events);
    assert_eq!(t.last(), Some(&"run.cancel"));
    assert!(t.contains(&"content.delta"), "streamed before the cancel: {t:?}");
    assert_eq!(t.iter().filter(|t| t.starts_with("run.")).count(), 2);
}

#[tokio::test]
async fn steering_skips_the_rest_of_the_step_and_injects_the_message() {
    let m = mock(vec![
        once(vec![text("plan", 100)]),
        once(vec![call("s1", "steer", json!({})), call("s2", "pick_date", json!({}))]),
        once(vec![text("Paris it is", 100)]),
    ])
    .await;
    let mut s = setup(
        json!({"mode": "PLAN_EXECUTE", "tools": ["steer", "pick_date"], "planExecute": {"planSystemPrompt": "p", "executeSystemPrompt": "e"}}),
        vec![
            spec("steer", ToolKind::Backend),
            spec("pick_date", ToolKind::Frontend(ViewType::Html)),
        ],
    );
    let steering = s.deps.steering.clone();
    s.deps.backend.register(Arc::new(Steer(steering)));
    let (out, events) = go(&s, &m).await;
    assert_eq!(out.end, RunEnd::Complete("stop".into()));
    let results = tool_results(&events);
    assert_eq!(results[0], ("s1".to_owned(), json!({"ok": true})));
    assert_eq!(results[1].0, "s2");
    assert_eq!(results[1].1["error"], "skipped: user sent a new message");
    let last_req = &m.requests()[2].body;
    let msgs = last_req["messages"].as_array().unwrap();
    assert_eq!(msgs.last().unwrap()["content"], "actually, use Paris");
    assert!(out.messages.contains(&Message::user("actually, use Paris").into()));
    assert!(!s.deps.submits.is_waiting("r1", "s2"));
}

#[tokio::test]
async fn follow_up_runs_when_the_loop_would_end() {
    let m = mock(vec![once(vec![text("first", 100)]), once(vec![text("second", 100)])]).await;
    let s = setup(
        json!({"mode": "PLAIN", "plain": {"systemPrompt": "s"}, "budget": {"maxModelCalls": 2}}),
        vec![],
    );
    s.deps.follow_up.push("and another thing");
    let (out, events) = go(&s, &m).await;
    assert_eq!(out.end, RunEnd::Complete("stop".into()));
    assert_eq!(types(&events).iter().filter(|t| **t == "content.start").count(), 2);
    assert_eq!(out.final_text(), "second");
    assert_eq!(m.requests().len(), 2);
}

#[tokio::test]
async fn second_pass_fix_streams_only_the_fixed_answer() {
    let m = mock(vec![once(vec![text("draft 2+2=5", 100)]), once(vec![text("2+2=4", 100)])]).await;
    let s = setup(
        json!({"mode": "PLAIN", "verify": "SECOND_PASS_FIX", "plain": {"systemPrompt": "s"}}),
        vec![],
    );
    let (out, events) = go(&s, &m).await;
    assert_eq!(
        types(&events),
        ["run.start", "content.start", "content.delta", "content.end", "run.complete"]
    );
    assert!(matches!(&events[2].body, EventBody::ContentDelta { delta, .. } if delta == "2+2=4"));
    assert_eq!(out.final_text(), "2+2=4");
    assert_eq!(out.messages.len(), 1, "the draft stays internal");
    let second = m.requests()[1].body.to_string();
    assert!(second.contains("draft 2+2=5") && second.contains("Review your previous answer"));
}

#[tokio::test]
async fn thinking_tooling_golden_sequence_and_required_tool_choice() {
    let m = mock(vec![
        once(vec![
            Step::Reasoning { text: "need a tool".into(), chunk: None, signature: None },
            call("t1", "echo", json!({"v": 7})),
        ]),
        once(vec![text("seven", 100)]),
    ])
    .await;
    let s = setup(
        json!({"mode": "THINKING_TOOLING", "tools": ["echo"], "toolPolicy": "REQUIRE",
               "thinkingTooling": {"systemPrompt": "s", "exposeReasoningToUser": true}}),
        vec![spec("echo", ToolKind::Backend)],
    );
    let (out, events) = go(&s, &m).await;
    assert_eq!(
        types(&events),
        [
            "run.start",
            "reasoning.start",
            "reasoning.delta",
            "reasoning.end",
            "tool.start",
            "tool.args",
            "tool.args",
            "tool.end",
            "tool.result",
            "content.start",
            "content.delta",
            "content.end",
            "run.complete"
        ]
    );
    assert_eq!(out.final_text(), "seven");
    let reqs = m.requests();
    assert_eq!(reqs[0].body["tool_choice"], "required");
    assert!(no_tools(&reqs[1].body));
}

#[tokio::test]
async fn disallowed_tools_are_not_offered() {
    let m = mock(vec![once(vec![text("plain", 100)])]).await;
    let s = setup(
        json!({"mode": "PLAIN_TOOLING", "tools": ["echo"], "toolPolicy": "DISALLOW",
               "plainTooling": {"systemPrompt": "s"}}),
        vec![spec("echo", ToolKind::Backend)],
    );
    let (out, _) = go(&s, &m).await;
    assert_eq!(out.end, RunEnd::Complete("stop".into()));
    assert!(no_tools(&m.requests()[0].body));
}

#[tokio::test]
async fn later_steps_reference_earlier_results_with_templates() {
    let m = mock(vec![
        once(vec![text("plan", 100)]),
        once(vec![call("k1", "echo", json!({"v": "first"}))]),
        once(vec![call("k2", "echo", json!({"v": "{{echo.echo}}!"}))]),
        once(vec![text("done", 100)]),
    ])
    .await;
    let s = setup(
        json!({"mode": "PLAN_EXECUTE", "tools": ["echo"], "planExecute": {"planSystemPrompt": "p", "executeSystemPrompt": "e"}}),
        vec![spec("echo", ToolKind::Backend)],
    );
    let (_, events) = go(&s, &m).await;
    let results = tool_results(&events);
    assert_eq!(results[1], ("k2".to_owned(), json!({"echo": "first!"})));
}

#[tokio::test]
async fn wall_clock_budget_is_a_run_error_after_the_open_block_ends() {
    let m = mock(vec![Turn {
        steps: vec![text("slow slow slow slow slow", 1)],
        delay_ms: 100,
        ..Turn::default()
    }])
    .await;
    let s = setup(
        json!({"mode": "PLAIN", "budget": {"timeoutMs": 1000}, "plain": {"systemPrompt": "s"}}),
        vec![],
    );
    let started = Instant::now();
    let (out, events) = go(&s, &m).await;
    assert!(started.elapsed() < Duration::from_millis(1800));
    assert!(matches!(&out.end, RunEnd::Error(e) if e.contains("timeoutMs")), "{:?}", out.end);
    // The block open when time ran out is ended first, once.
    let t = types(&events);
    assert_eq!(&t[t.len() - 2..], ["content.end", "run.error"], "{t:?}");
    assert_eq!(t.iter().filter(|t| **t == "content.end").count(), 1);
    assert!(matches!(
        &events[events.len() - 2].body,
        EventBody::ContentEnd { content_id } if content_id == "r1_content_1"
    ));
}

#[tokio::test]
async fn recorded_run_keeps_stream_ids_for_history() {
    use boardsmith::agent::memory::{replay_messages, snapshot_events};

    let m =
        mock(vec![once(vec![call("c1", "echo", json!({"v": 1}))]), once(vec![text("done", 100)])])
            .await;
    let s = setup(
        json!({"mode": "PLAIN_TOOLING", "tools": ["echo"], "plainTooling": {"systemPrompt": "s"}}),
        vec![spec("echo", ToolKind::Backend)],
    );
    let (out, record) = recorded(&s, &m).await;
    assert_eq!(out.end, RunEnd::Complete("stop".into()));
    let snaps = snapshot_events(std::slice::from_ref(&record), &Default::default());
    let ids: Vec<String> = snaps
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ToolSnapshot { tool_id, .. } => Some(tool_id.clone()),
            EventBody::ContentSnapshot { content_id, text, .. } => {
                assert_eq!(text, "done");
                Some(content_id.clone())
            }
            _ => None,
        })
        .collect();
    assert_eq!(ids, ["c1", "r1_content_1"]);
    let replay = replay_messages(&[record], 10);
    assert_eq!(replay.len(), 4, "{replay:?}");
    assert!(matches!(replay[2], Message::Tool { .. }));
}

// -- resolver, app-only messages, hooks ---------------------------------------------------

/// Turn 1 on `first`, later turns on `later`; remembers the turns asked.
struct Switching {
    first: ResolvedModel,
    later: ResolvedModel,
    turns: Mutex<Vec<u32>>,
}

impl ModelResolver for Switching {
    fn resolve(&self, turn: u32) -> BoxFuture<'_, Result<ResolvedModel, ResolveError>> {
        self.turns.lock().unwrap().push(turn);
        let m = if turn == 1 { self.first.clone() } else { self.later.clone() };
        Box::pin(async move { Ok(m) })
    }
}

/// Always fails.
struct NoCredit;

impl ModelResolver for NoCredit {
    fn resolve(&self, _: u32) -> BoxFuture<'_, Result<ResolvedModel, ResolveError>> {
        Box::pin(async { Err(ResolveError { message: "no credit left".into(), retryable: true }) })
    }
}

/// Hooks that log every call and answer as configured.
#[derive(Default)]
struct Recording {
    /// `on_turn_end` answers `Ok(false)` at this turn.
    stop_at: Option<u32>,
    /// `on_turn_end` fails with this.
    turn_error: Option<String>,
    /// `on_message` fails.
    message_error: bool,
    log: Mutex<Vec<String>>,
}

impl RunHooks for Recording {
    fn on_turn_end<'a>(&'a self, turn: &'a TurnInfo) -> BoxFuture<'a, Result<bool, String>> {
        self.log
            .lock()
            .unwrap()
            .push(format!("turn {} {}/{}", turn.turn, turn.provider, turn.model));
        let r = match &self.turn_error {
            Some(e) => Err(e.clone()),
            None => Ok(self.stop_at != Some(turn.turn)),
        };
        Box::pin(async move { r })
    }

    fn on_message<'a>(&'a self, message: &'a AgentMessage) -> BoxFuture<'a, Result<(), String>> {
        let kind = match message {
            AgentMessage::Llm(Message::Assistant(_)) => "assistant",
            AgentMessage::Llm(Message::Tool { .. }) => "tool",
            _ => "other",
        };
        self.log.lock().unwrap().push(format!("message {kind}"));
        let fail = self.message_error;
        Box::pin(async move { if fail { Err("db down".into()) } else { Ok(()) } })
    }

    fn on_error<'a>(
        &'a self,
        error: &'a str,
        retryable: bool,
    ) -> BoxFuture<'a, Result<(), String>> {
        self.log.lock().unwrap().push(format!("error {retryable} {error}"));
        // Its failure must not hide the run's error.
        Box::pin(async { Err("notifier down".into()) })
    }
}

fn tooling() -> Value {
    json!({"mode": "PLAIN_TOOLING", "tools": ["echo"], "plainTooling": {"systemPrompt": "s"}})
}

fn assistants(out: &RunOutcome) -> Vec<(String, String)> {
    out.messages
        .iter()
        .filter_map(|m| match m.as_llm() {
            Some(Message::Assistant(a)) => Some((a.provider.clone(), a.model.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn resolver_switches_the_model_mid_run() {
    let m =
        mock(vec![once(vec![call("c1", "echo", json!({"v": 1}))]), once(vec![text("done", 100)])])
            .await;
    let mut s = setup(tooling(), vec![spec("echo", ToolKind::Backend)]);
    let resolver = Arc::new(Switching {
        first: ResolvedModel {
            provider: provider(&m),
            model: "gpt-a".into(),
            context_tokens: 100_000,
            reasoning: true,
        },
        later: ResolvedModel {
            provider: keyed_provider(&m, "backup"),
            model: "gpt-b".into(),
            context_tokens: 100_000,
            reasoning: true,
        },
        turns: Mutex::default(),
    });
    s.deps.resolver = Some(resolver.clone());
    let (out, events) = go(&s, &m).await;
    assert_eq!(out.end, RunEnd::Complete("stop".into()));
    assert_eq!(*resolver.turns.lock().unwrap(), [1, 2]);
    let t = types(&events);
    let switches: Vec<&EventBody> =
        events.iter().map(|e| &e.body).filter(|b| b.type_name() == "model.switch").collect();
    assert_eq!(
        switches,
        [&EventBody::ModelSwitch {
            run_id: "r1".into(),
            from_provider: "openai".into(),
            from_model: "gpt-a".into(),
            to_provider: "backup".into(),
            to_model: "gpt-b".into(),
            reason: None,
            error: None,
        }]
    );
    let at = t.iter().position(|t| *t == "model.switch").unwrap();
    assert_eq!(t[at - 1], "tool.result", "{t:?}");
    assert_eq!(t[at + 1], "content.start", "{t:?}");
    assert_eq!(
        assistants(&out),
        [("openai".to_owned(), "gpt-a".to_owned()), ("backup".to_owned(), "gpt-b".to_owned())]
    );
    let reqs = m.requests();
    assert_eq!(reqs[0].body["model"], "gpt-a");
    assert_eq!(reqs[1].body["model"], "gpt-b");
    // The switch is noted for the app, not told to the model.
    assert!(out.messages.iter().any(
        |m| matches!(m, AgentMessage::ContextNote(n) if n.contains("openai/gpt-a") && n.contains("backup/gpt-b"))
    ));
    assert!(!reqs[1].body.to_string().contains("switched"), "{}", reqs[1].body);
}

#[tokio::test]
async fn resolver_failure_reaches_on_error_then_run_error() {
    let m = mock(vec![once(vec![text("never", 100)])]).await;
    let mut s = setup(json!({"mode": "PLAIN", "plain": {"systemPrompt": "s"}}), vec![]);
    let hooks = Arc::new(Recording::default());
    s.deps.resolver = Some(Arc::new(NoCredit));
    s.deps.hooks = hooks.clone();
    let (out, events) = go(&s, &m).await;
    assert!(matches!(&out.end, RunEnd::Error(e) if e.contains("no credit left")), "{:?}", out.end);
    assert_eq!(types(&events), ["run.start", "run.error"]);
    assert_eq!(*hooks.log.lock().unwrap(), ["error true model resolution failed: no credit left"]);
    assert!(m.requests().is_empty());
}

#[tokio::test]
async fn app_only_history_never_reaches_the_model() {
    let m = mock(vec![once(vec![text("ok", 100)])]).await;
    let s = setup(json!({"mode": "PLAIN", "plain": {"systemPrompt": "s"}}), vec![]);
    let mut inp = input(&s, &m);
    inp.history = vec![
        Message::user("earlier").into(),
        AgentMessage::ContextNote("NOTE-SECRET".into()),
        AgentMessage::SystemEvent("EVENT-SECRET".into()),
        AgentMessage::ToolLog { tool_id: "t0".into(), text: "LOG-SECRET".into() },
        AgentMessage::Summary("SUMMARY-TEXT".into()),
    ];
    let (out, _) = go_with(&s, inp).await;
    assert_eq!(out.end, RunEnd::Complete("stop".into()));
    let body = m.requests()[0].body.clone();
    let text = body.to_string();
    for secret in ["NOTE-SECRET", "EVENT-SECRET", "LOG-SECRET"] {
        assert!(!text.contains(secret), "{secret} leaked: {text}");
    }
    let msgs = body["messages"].as_array().unwrap();
    let roles: Vec<(&str, &str)> = msgs
        .iter()
        .map(|m| (m["role"].as_str().unwrap(), m["content"].as_str().unwrap_or_default()))
        .collect();
    assert_eq!(
        roles,
        [("system", "s"), ("user", "earlier"), ("user", "SUMMARY-TEXT"), ("user", "hello")]
    );
}

#[tokio::test]
async fn turn_end_hook_false_stops_the_run() {
    let m =
        mock(vec![once(vec![call("c1", "echo", json!({"v": 1}))]), once(vec![text("never", 100)])])
            .await;
    let mut s = setup(tooling(), vec![spec("echo", ToolKind::Backend)]);
    let hooks = Arc::new(Recording { stop_at: Some(1), ..Recording::default() });
    s.deps.hooks = hooks.clone();
    let (out, events) = go(&s, &m).await;
    assert_eq!(out.end, RunEnd::Complete("stopped".into()));
    assert!(matches!(
        &events.last().unwrap().body,
        EventBody::RunComplete { finish_reason: Some(r), .. } if r == "stopped"
    ));
    assert!(tool_results(&events).is_empty(), "tools of a stopped turn never run");
    assert_eq!(m.requests().len(), 1);
    assert_eq!(*hooks.log.lock().unwrap(), ["turn 1 openai/gpt-test", "message assistant"]);
}

#[tokio::test]
async fn turn_end_hook_error_is_a_run_error() {
    let m = mock(vec![once(vec![text("answer", 100)])]).await;
    let mut s = setup(json!({"mode": "PLAIN", "plain": {"systemPrompt": "s"}}), vec![]);
    s.deps.hooks = Arc::new(Recording {
        turn_error: Some("credit check failed".into()),
        ..Recording::default()
    });
    let (out, events) = go(&s, &m).await;
    assert_eq!(out.end, RunEnd::Error("credit check failed".into()));
    assert!(matches!(
        &events.last().unwrap().body,
        EventBody::RunError { error, .. } if error["message"] == "credit check failed"
    ));
}

#[tokio::test]
async fn message_hook_error_does_not_stop_the_run() {
    let m =
        mock(vec![once(vec![call("c1", "echo", json!({"v": 1}))]), once(vec![text("done", 100)])])
            .await;
    let mut s = setup(tooling(), vec![spec("echo", ToolKind::Backend)]);
    let hooks = Arc::new(Recording { message_error: true, ..Recording::default() });
    s.deps.hooks = hooks.clone();
    let (out, _) = go(&s, &m).await;
    assert_eq!(out.end, RunEnd::Complete("stop".into()));
    assert_eq!(out.final_text(), "done");
    assert_eq!(
        *hooks.log.lock().unwrap(),
        [
            "turn 1 openai/gpt-test",
            "message assistant",
            "message tool",
            "turn 2 openai/gpt-test",
            "message assistant"
        ]
    );
}

#[tokio::test]
async fn model_error_reaches_on_error_with_its_retry_decision() {
    let m = mock(vec![Turn {
        fault: Some(boardsmith::llm::mock::Fault::Status {
            status: 400,
            retry_after: None,
            message: Some("bad request".into()),
        }),
        ..Turn::default()
    }])
    .await;
    let mut s = setup(json!({"mode": "PLAIN", "plain": {"systemPrompt": "s"}}), vec![]);
    let hooks = Arc::new(Recording::default());
    s.deps.hooks = hooks.clone();
    let (out, _) = go(&s, &m).await;
    assert!(matches!(&out.end, RunEnd::Error(e) if e.starts_with("model call failed")));
    let log = hooks.log.lock().unwrap();
    assert_eq!(log.len(), 1, "{log:?}");
    assert!(log[0].starts_with("error false model call failed"), "{log:?}");
}

// -- open blocks, memory, actions, plans --------------------------------------------------

#[tokio::test]
async fn recorded_run_keeps_the_system_snapshot_and_steering() {
    use boardsmith::agent::memory::{StoredMessage, replay_messages};

    let m = mock(vec![
        once(vec![text("plan", 100)]),
        once(vec![call("s1", "steer", json!({}))]),
        once(vec![text("Paris it is", 100)]),
    ])
    .await;
    let mut steer = spec("steer", ToolKind::Backend);
    steer.prompt = Some("Steer with care.".into());
    let mut s = setup(
        json!({"mode": "PLAN_EXECUTE", "tools": ["steer"], "planExecute": {"planSystemPrompt": "p", "executeSystemPrompt": "e"}}),
        vec![steer],
    );
    let steering = s.deps.steering.clone();
    s.deps.backend.register(Arc::new(Steer(steering)));
    // The plan call runs on another model than the main prompt's calls.
    let on = |model: &str| ResolvedModel {
        provider: provider(&m),
        model: model.into(),
        context_tokens: 100_000,
        reasoning: true,
    };
    s.deps.resolver = Some(Arc::new(Switching {
        first: on("gpt-plan"),
        later: on("gpt-main"),
        turns: Mutex::default(),
    }));
    let (out, record) = recorded(&s, &m).await;
    assert_eq!(out.end, RunEnd::Complete("stop".into()));
    let system = record.system.clone().expect("system snapshot recorded");
    assert_eq!(system.model.as_deref(), Some("gpt-main"), "the main prompt's model");
    assert_eq!(system.messages.len(), 1);
    assert_eq!(system.messages[0].content, "e\n\nSteer with care.");
    assert_eq!(system.tools.len(), 1);
    assert_eq!(system.tools[0]["function"]["name"], "steer");
    assert_eq!(system.stream, Some(true));
    let users: Vec<String> = record
        .messages
        .iter()
        .filter_map(|m| match m {
            StoredMessage::User(u) => Some(u.content[0].text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(users, ["hello", "actually, use Paris"]);
    // Stored after the tool result it interrupted, so replay puts it there too.
    assert!(matches!(record.messages.last(), Some(StoredMessage::Assistant(_))));
    let replay = replay_messages(&[record], 10);
    let steer_at = replay.iter().position(|m| *m == Message::user("actually, use Paris")).unwrap();
    assert!(matches!(replay[steer_at - 1], Message::Tool { .. }), "{replay:?}");
}

#[tokio::test]
async fn action_param_carries_the_parsed_arguments() {
    let m = mock(vec![
        once(vec![call("x1", "switch_theme", json!({"theme": "dark", "animate": true}))]),
        once(vec![text("switched", 100)]),
    ])
    .await;
    let s = setup(
        json!({"mode": "PLAIN_TOOLING", "tools": ["switch_theme"], "plainTooling": {"systemPrompt": "s"}}),
        vec![spec("switch_theme", ToolKind::Action)],
    );
    let (_, events) = go(&s, &m).await;
    let t = types(&events);
    let at = t.iter().position(|t| *t == "action.param").expect("action.param sent");
    assert_eq!(t[at - 1], "action.end");
    assert_eq!(t[at + 1], "action.result");
    assert_eq!(
        events[at].body,
        EventBody::ActionParam {
            action_id: "x1".into(),
            param: json!({"theme": "dark", "animate": true})
        }
    );
}

fn plan_statuses(events: &[Arc<Event>]) -> Vec<Vec<String>> {
    events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::PlanUpdate { plan, chat_id, plan_id } => {
                assert_eq!(chat_id, "c1");
                assert_eq!(plan_id, "r1_plan");
                Some(
                    plan["steps"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|s| s["status"].as_str().unwrap().to_owned())
                        .collect(),
                )
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn plan_updates_after_each_round_and_at_the_end() {
    let m = mock(vec![
        once(vec![text("look up\ncompute\nanswer", 100)]),
        once(vec![call("k1", "echo", json!({"v": 1}))]),
        once(vec![text("done", 100)]),
    ])
    .await;
    let s = setup(
        json!({"mode": "PLAN_EXECUTE", "tools": ["echo"], "planExecute": {"planSystemPrompt": "p", "executeSystemPrompt": "e"}}),
        vec![spec("echo", ToolKind::Backend)],
    );
    let (out, events) = go(&s, &m).await;
    assert_eq!(out.end, RunEnd::Complete("stop".into()));
    assert_eq!(
        plan_statuses(&events),
        [vec!["completed", "pending", "pending"], vec!["completed", "completed", "completed"]]
    );
    let t = types(&events);
    let first = t.iter().position(|t| *t == "plan.update").unwrap();
    assert_eq!(t[first - 1], "tool.result", "{t:?}");
    assert_eq!(&t[t.len() - 2..], ["plan.update", "run.complete"]);
    // Same shape as plan.create.
    let EventBody::PlanUpdate { plan, .. } = &events[first].body else { unreachable!() };
    assert_eq!(plan["text"], "look up\ncompute\nanswer");
    assert_eq!(plan["steps"][1]["title"], "compute");
    assert_eq!(plan["steps"][1]["id"], "r1_task_2");
    assert!(!t.iter().any(|t| t.starts_with("task.")), "no task events without task input");
}

#[tokio::test]
async fn plan_step_fails_with_the_run() {
    let m = mock(vec![
        once(vec![text("look up\nanswer", 100)]),
        once(vec![call("k1", "echo", json!({"v": 1}))]),
        once(vec![text("never", 100)]),
    ])
    .await;
    let s = setup(
        json!({"mode": "PLAN_EXECUTE", "tools": ["echo"], "budget": {"maxModelCalls": 2},
               "planExecute": {"planSystemPrompt": "p", "executeSystemPrompt": "e"}}),
        vec![spec("echo", ToolKind::Backend)],
    );
    let (out, events) = go(&s, &m).await;
    assert!(matches!(&out.end, RunEnd::Error(e) if e.contains("maxModelCalls")));
    assert_eq!(plan_statuses(&events), [vec!["completed", "pending"], vec!["completed", "failed"]]);
    let t = types(&events);
    assert_eq!(&t[t.len() - 2..], ["plan.update", "run.error"]);
}

#[tokio::test]
async fn cancel_mid_tool_call_ends_the_call_first() {
    let m = mock(vec![Turn {
        steps: vec![Step::ToolCall {
            id: Some("c1".into()),
            name: "echo".into(),
            arguments: json!({"v": "a long argument value, streamed in many small fragments"}),
            fragments: Some(20),
        }],
        delay_ms: 50,
        ..Turn::default()
    }])
    .await;
    let s = setup(tooling(), vec![spec("echo", ToolKind::Backend)]);
    let cancel = s.deps.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
    });
    let (out, events) = go(&s, &m).await;
    assert_eq!(out.end, RunEnd::Cancelled);
    let t = types(&events);
    assert!(t.contains(&"tool.args"), "cancelled mid-arguments: {t:?}");
    assert_eq!(&t[t.len() - 2..], ["tool.end", "run.cancel"], "{t:?}");
    assert!(matches!(
        &events[events.len() - 2].body,
        EventBody::ToolEnd { tool_id } if tool_id == "c1"
    ));
    assert!(tool_results(&events).is_empty());
}
