//! Agents' MCP servers through the client (`agent::tools::mcp`): the mock MCP server over
//! streamable HTTP on loopback (in this process) and over stdio (`boardsmith mock-mcp`, run
//! in the shell's sandbox); an agent using them through a real server and the mock model;
//! namespacing, results, list-changed, timeouts, cancellation, servers down and restarted.
//! The outside peer (the reference filesystem server from npm) is in `tests/clients`.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use boardsmith::agent::definition::parse;
use boardsmith::agent::tools::mcp::mock::MockMcp;
use boardsmith::agent::tools::mcp::{McpConfig, McpHub, McpServer, RunMcpTools};
use boardsmith::agent::tools::{BackendTools, BashConfig, BashTool, ToolContext, ToolError};
use boardsmith::llm::mock::{Match, MockLlm, Script, Step, Turn};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::support::{self, sse_events};

/// The mock MCP server on `127.0.0.1:0/mcp`; cancelling the token ends its sessions and stops
/// it accepting connections.
struct HttpMock {
    mock: MockMcp,
    url: String,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl HttpMock {
    async fn start() -> Self {
        let mock = MockMcp::new();
        let stop = CancellationToken::new();
        let mut config = StreamableHttpServerConfig::default();
        config.cancellation_token = stop.child_token();
        let serving = mock.clone();
        let service = StreamableHttpService::new(
            move || Ok(serving.clone()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        let router = axum::Router::new().nest_service("/mcp", service);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Self { mock, url, stop, task }
    }

    fn down(&self) {
        self.stop.cancel();
        self.task.abort();
    }
}

/// The servers of an agent file with this `mcpServers`.
fn servers(list: Value) -> Vec<McpServer> {
    let text = json!({"mode": "REACT", "react": {"systemPrompt": "x"}, "mcpServers": list});
    parse("a", &text.to_string()).unwrap().mcp_servers
}

fn hub(dir: &std::path::Path) -> McpHub {
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    McpHub::new(
        BashTool::new(BashConfig::new(work)),
        McpConfig { connect_timeout: Duration::from_secs(10), output_cap: 1000 },
    )
}

fn registry(found: &RunMcpTools) -> BackendTools {
    let mut tools = BackendTools::new();
    for t in &found.executors {
        tools.register(t.clone());
    }
    tools
}

fn names(found: &RunMcpTools) -> Vec<&str> {
    found.specs.iter().map(|s| s.name.as_str()).collect()
}

fn ctx() -> ToolContext {
    ToolContext::new("run-1", "chat-1")
}

/// Polls `check` every 20 ms for up to 5 s.
async fn eventually(what: &str, mut check: impl AsyncFnMut() -> bool) {
    let start = Instant::now();
    while !check().await {
        assert!(start.elapsed() < Duration::from_secs(5), "{what} within 5 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn http_server_tools_are_namespaced_and_their_results_read_for_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let server = HttpMock::start().await;
    let hub = hub(dir.path());
    let defs = servers(json!([{"name": "demo", "url": server.url, "timeoutMs": 5000}]));
    let found = hub.tools_for(&defs).await;
    assert!(found.unavailable.is_empty(), "{:?}", found.unavailable);
    assert_eq!(
        names(&found),
        ["demo__echo", "demo__add", "demo__sleep", "demo__fail", "demo__image", "demo__grow"]
    );
    let echo = &found.specs[0];
    assert_eq!(echo.kind.tool_type(), "backend");
    assert_eq!(echo.description, "Says the text back.");
    assert_eq!(echo.parameters["required"], json!(["text"]));
    assert_eq!(echo.extra["mcpServer"], "demo");
    assert_eq!(echo.extra["mcpTool"], "echo");

    let tools = registry(&found);
    let call = |name: &str, args: Value| tools.call(name, args, ctx());
    assert_eq!(call("demo__echo", json!({"text": "hi"})).await, Ok(json!("echo: hi")));
    assert_eq!(call("demo__add", json!({"a": 1, "b": 2})).await, Ok(json!({"sum": 3.0})));
    assert_eq!(
        call("demo__image", Value::Null).await,
        Ok(json!("[image image/png, 12 bytes base64: not shown]"))
    );
    assert_eq!(
        call("demo__fail", json!({})).await,
        Err(ToolError::Failed {
            tool: "demo__fail".into(),
            message: "it failed on purpose".into()
        })
    );
    let bad = call("demo__echo", json!([1])).await.unwrap_err();
    assert!(bad.to_string().contains("arguments must be a JSON object"), "{bad}");

    // Two agents listing the same definition share one connection: one more tools/list, no
    // new session.
    let again = hub.tools_for(&defs).await;
    assert_eq!(names(&again).len(), 6);
    let status = hub.statuses();
    assert_eq!(status.len(), 1);
    assert_eq!(
        (status[0].name.as_str(), status[0].state, status[0].transport),
        ("demo", "up", "http")
    );
    server.down();
}

#[tokio::test]
async fn list_changed_refreshes_the_tools_later_runs_get() {
    let dir = tempfile::tempdir().unwrap();
    let server = HttpMock::start().await;
    let hub = hub(dir.path());
    let defs = servers(json!([{"name": "demo", "url": server.url}]));
    let found = hub.tools_for(&defs).await;
    assert!(!names(&found).contains(&"demo__fresh"));
    let out = registry(&found).call("demo__grow", json!({"name": "fresh"}), ctx()).await;
    assert_eq!(out, Ok(json!("added fresh")));
    eventually("the new tool listed", async || {
        names(&hub.tools_for(&defs).await).contains(&"demo__fresh")
    })
    .await;
    let found = hub.tools_for(&defs).await;
    let out = registry(&found).call("demo__fresh", json!({}), ctx()).await;
    assert_eq!(out, Ok(json!("called fresh")));
    server.down();
}

#[tokio::test]
async fn a_slow_call_times_out_and_a_cancelled_run_cancels_it_on_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let server = HttpMock::start().await;
    let hub = hub(dir.path());
    let defs = servers(json!([{"name": "demo", "url": server.url, "timeoutMs": 200}]));
    let tools = registry(&hub.tools_for(&defs).await);
    let started = Instant::now();
    let err = tools.call("demo__sleep", json!({"ms": 10_000}), ctx()).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    assert_eq!(
        err.to_string(),
        "`demo__sleep` failed: MCP server `demo` did not answer within 0.2 s; the call was cancelled"
    );
    let state = server.mock.state.clone();
    eventually("the server saw notifications/cancelled", async || {
        state.cancelled.load(Ordering::SeqCst) == 1
    })
    .await;

    // The run's cancel token: the registry drops the call in flight, which cancels it
    // upstream.
    let c = ctx();
    let cancel = c.cancel.clone();
    let call = tokio::spawn(tools.call("demo__sleep", json!({"ms": 5000}), c));
    eventually("the sleep call arrived", async || state.calls.load(Ordering::SeqCst) >= 2).await;
    cancel.cancel();
    assert_eq!(call.await.unwrap(), Err(ToolError::Cancelled));
    eventually("the second cancellation reached the server", async || {
        state.cancelled.load(Ordering::SeqCst) == 2
    })
    .await;
    server.down();
}

#[tokio::test]
async fn a_server_that_is_down_is_left_out_with_its_reason_and_retried_with_backoff() {
    let dir = tempfile::tempdir().unwrap();
    let hub = hub(dir.path());
    // A port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let defs = servers(json!([{"name": "gone", "url": format!("http://{closed}/mcp")}]));
    let found = hub.tools_for(&defs).await;
    assert!(found.specs.is_empty());
    assert_eq!(found.unavailable.len(), 1);
    let (name, why) = &found.unavailable[0];
    assert_eq!(name, "gone");
    assert!(why.contains(&format!("cannot connect to http://{closed}/mcp")), "{why}");
    // Within the backoff: no new attempt, the same reason and when the next one is.
    let again = hub.tools_for(&defs).await;
    assert!(again.unavailable[0].1.contains("next attempt in"), "{:?}", again.unavailable);
    assert_eq!(hub.statuses()[0].state, "down");

    // A server that goes away after the run got its tools: the call says so.
    let server = HttpMock::start().await;
    let defs = servers(json!([{"name": "demo", "url": server.url}]));
    let tools = registry(&hub.tools_for(&defs).await);
    server.down();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let err = tools.call("demo__echo", json!({"text": "x"}), ctx()).await.unwrap_err();
    assert!(err.to_string().contains("MCP server `demo` is unavailable"), "{err}");
}

#[tokio::test]
async fn a_stdio_server_runs_confined_and_is_restarted_after_it_dies() {
    let dir = tempfile::tempdir().unwrap();
    let hub = hub(dir.path());
    let defs = servers(json!([{
        "name": "local", "command": env!("CARGO_BIN_EXE_boardsmith"), "args": ["mock-mcp"],
        "env": {"RUST_LOG": "off"},
    }]));
    let found = hub.tools_for(&defs).await;
    assert!(found.unavailable.is_empty(), "{:?}", found.unavailable);
    assert!(names(&found).contains(&"local__crash"), "{:?}", names(&found));
    let tools = registry(&found);
    assert_eq!(tools.call("local__echo", json!({"text": "a"}), ctx()).await, Ok(json!("echo: a")));
    assert_eq!(hub.statuses()[0].transport, "stdio");

    let err = tools.call("local__crash", json!({}), ctx()).await.unwrap_err();
    assert!(err.to_string().contains("MCP server `local` is unavailable"), "{err}");
    // The next run starts it again.
    let found = hub.tools_for(&defs).await;
    assert!(found.unavailable.is_empty(), "{:?}", found.unavailable);
    let out = registry(&found).call("local__echo", json!({"text": "b"}), ctx()).await;
    assert_eq!(out, Ok(json!("echo: b")));

    // A program that is not there: a clear reason, no tools.
    let missing = servers(json!([{"name": "nope", "command": "no-such-mcp-server-here"}]));
    let found = hub.tools_for(&missing).await;
    assert_eq!(
        found.unavailable,
        [(
            "nope".to_owned(),
            "`no-such-mcp-server-here` is not found on the server's PATH".to_owned()
        )]
    );
}

#[tokio::test]
async fn an_agent_uses_mcp_tools_in_a_run_driven_by_the_mock_model() {
    let server = HttpMock::start().await;
    let turns = vec![
        Turn {
            when: Match { has_tool_results: Some(false), ..Match::default() },
            steps: vec![
                Step::ToolCall {
                    id: Some("c1".into()),
                    name: "demo__echo".into(),
                    arguments: json!({"text": "from the model"}),
                    fragments: None,
                },
                Step::ToolCall {
                    id: Some("c2".into()),
                    name: "demo__fail".into(),
                    arguments: json!({}),
                    fragments: None,
                },
            ],
            ..Turn::default()
        },
        Turn {
            steps: vec![Step::Text { text: "All done.".into(), chunk: None }],
            ..Turn::default()
        },
    ];
    let mock = MockLlm::start(Script { turns }, 0).await.unwrap();
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let agents = dir.path().join("agents");
    std::fs::create_dir_all(&agents).unwrap();
    // `demo` is defined through the admin API (with a secret header); `gone` inline.
    let agent = json!({
        "mode": "PLAIN_TOOLING",
        "plainTooling": {"systemPrompt": "Use the demo tools."},
        "mcpServers": [{"name": "demo"}, {"name": "gone", "url": "http://127.0.0.1:9/mcp"}],
    });
    std::fs::write(agents.join("mcpUser.json"), agent.to_string()).unwrap();
    let url = mock.url();
    let app = support::spawn_app_with(dir, false, move |c| {
        c.llm = Some(support::llm_config(Some(&url)));
    })
    .await;
    let put = |name: &str, body: Value| {
        app.http.put(app.url(&format!("/api/admin/mcp-servers/{name}"))).json(&body).send()
    };
    let r = put("demo", json!({"url": "ftp://x"})).await.unwrap();
    assert_eq!(r.status(), 400);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["data"]["param"], "url", "{body}");
    let r =
        put("demo", json!({"url": server.url, "headers": {"X-Secret": "s3cret"}})).await.unwrap();
    assert_eq!(r.status(), 200);
    let (status, listed) = app.get("/api/admin/mcp-servers").await;
    assert_eq!(status, 200);
    assert_eq!(
        listed["data"],
        json!([{"name": "demo", "transport": "http", "url": server.url, "headerKeys": ["X-Secret"]}])
    );
    assert!(!listed.to_string().contains("s3cret"));
    let (_, agent_detail) = app.get("/api/agent?agentKey=mcpUser").await;
    assert_eq!(agent_detail["data"]["mcpServers"], json!(["demo", "gone"]), "{agent_detail}");
    let r = app
        .http
        .post(app.url("/api/query"))
        .json(&json!({"message": "go", "agentKey": "mcpUser"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let events = sse_events(r).await;
    let of = |ty: &str| -> Vec<&Value> {
        events.iter().filter(|(_, t, _)| t == ty).map(|(_, _, d)| d).collect()
    };
    let starts = of("tool.start");
    assert_eq!(starts.len(), 2);
    assert_eq!(starts[0]["toolName"], "demo__echo");
    assert_eq!(starts[0]["toolType"], "backend");
    let results = of("tool.result");
    assert_eq!(results[0]["result"], "echo: from the model");
    assert_eq!(results[1]["result"], json!({"error": "`demo__fail` failed: it failed on purpose"}));
    assert_eq!(of("run.complete")[0]["finishReason"], "stop");

    // The model was offered the reachable server's tools (and the down one's were left out)
    // and read the results.
    let requests = mock.requests();
    let offered: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        offered,
        ["demo__echo", "demo__add", "demo__sleep", "demo__fail", "demo__image", "demo__grow"]
    );
    let second = requests[1].body["messages"].to_string();
    assert!(second.contains("echo: from the model"), "{second}");
    assert!(second.contains("it failed on purpose"), "{second}");

    // Deleted: gone from the list (runs from now on find it missing).
    let r = app.http.delete(app.url("/api/admin/mcp-servers/demo")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let (_, listed) = app.get("/api/admin/mcp-servers").await;
    assert_eq!(listed["data"], json!([]));
    let r = app.http.delete(app.url("/api/admin/mcp-servers/demo")).send().await.unwrap();
    assert_eq!(r.status(), 404);
    app.stop().await;
    server.down();
}
