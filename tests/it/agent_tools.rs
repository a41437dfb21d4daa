//! The agent's backend tools through the public registry: agent files on disk (and what a
//! creator may grant), the frontend-submit hub across tasks, and chained parameter templates.
//! The `bash` sandbox has its own module, `bash_confinement`.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use boardsmith::agent::definition::{AgentDefinition, parse};
use boardsmith::agent::template::ToolResults;
use boardsmith::agent::tools::{
    BackendTools, FrontendSubmits, SubmitError, ToolContext, ToolError, ToolsConfig,
};
use serde_json::{Value, json};

/// An agent as the run loop would pass it: these tools, and the shell if it lists `bash`.
fn agent(tools: &[&str]) -> Arc<AgentDefinition> {
    let shell = tools.contains(&"bash");
    let text = json!({
        "mode": "REACT", "tools": tools, "allowShell": shell, "react": {"systemPrompt": "x"},
    });
    Arc::new(parse("caller", &text.to_string()).unwrap())
}

fn ctx() -> ToolContext {
    ToolContext::new("run-1", "chat-1").with_tool_id("tool-1").with_agent(agent(&[
        "bash",
        "city_datetime",
        "agent_file_create",
    ]))
}

fn tools_in(dir: &Path) -> BackendTools {
    let mut config = ToolsConfig::new(dir.join("work"), dir.join("agents"));
    std::fs::create_dir_all(&config.bash.working_dir).unwrap();
    let now = chrono::DateTime::parse_from_rfc3339("2026-02-13T06:00:00Z").unwrap().to_utc();
    config.clock = Arc::new(move || now);
    BackendTools::builtin(&config)
}

#[tokio::test]
async fn agent_file_create_writes_valid_json_atomically_and_rejects_bad_ids() {
    let dir = tempfile::tempdir().unwrap();
    let tools = tools_in(dir.path());
    let agents = dir.path().join("agents");
    let args = json!({
        "agentId": "fortune_teller",
        "description": "算命大师",
        "model": "qwen3-max",
        "mode": "REACT",
        "tools": ["bash", "city_datetime"],
        "react": {"systemPrompt": "你是算命大师\n请先问出生日期", "maxSteps": 6},
    });
    let out = tools.call("agent_file_create", args.clone(), ctx()).await.unwrap();
    assert_eq!(out["agentId"], "fortune_teller");
    assert_eq!(out["created"], true);
    let path = agents.join("fortune_teller.json");
    assert_eq!(out["path"], path.display().to_string());
    let text = std::fs::read_to_string(&path).unwrap();
    let written: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        written,
        json!({
            "description": "算命大师", "providerKey": "", "model": "qwen3-max", "mode": "REACT",
            "tools": ["bash", "city_datetime"],
            "react": {"systemPrompt": "你是算命大师\n请先问出生日期", "maxSteps": 6},
            "allowShell": true, "createdBy": "agent_file_create",
        })
    );
    assert!(text.contains("\"systemPrompt\": \"你是算命大师\\n请先问出生日期\""), "{text}");
    assert!(text.contains("\n  \"mode\": \"REACT\",\n"), "pretty: {text}");

    // Concurrent updates of the same file: every read sees a whole file, no temp files remain.
    let writers: Vec<_> = (0..8)
        .map(|i| {
            let tools = tools.clone();
            let mut args = args.clone();
            args["description"] = json!(format!("v{i} {}", "x".repeat(10_000)));
            tokio::spawn(async move { tools.call("agent_file_create", args, ctx()).await })
        })
        .collect();
    let reader = {
        let path = path.clone();
        tokio::task::spawn_blocking(move || {
            for _ in 0..200 {
                let text = std::fs::read_to_string(&path).unwrap();
                serde_json::from_str::<Value>(&text).expect("a whole file");
            }
        })
    };
    for w in writers {
        assert_eq!(w.await.unwrap().unwrap()["created"], false);
    }
    reader.await.unwrap();
    let names: Vec<String> = std::fs::read_dir(&agents)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["fortune_teller.json"]);

    for bad in ["../escape", "a b", "", &"x".repeat(65)] {
        let mut args = args.clone();
        args["agentId"] = json!(bad);
        let err = tools.call("agent_file_create", args, ctx()).await.unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, ToolError::InvalidArgs { .. }), "{bad}: {msg}");
        assert!(msg.contains("\"agentId\""), "{msg}");
    }
    assert_eq!(std::fs::read_dir(&agents).unwrap().count(), 1, "nothing else written");
    assert!(!dir.path().join("escape.json").exists());
}

#[tokio::test]
async fn agent_file_create_grants_no_more_than_its_caller_has_and_keeps_off_builtins() {
    let dir = tempfile::tempdir().unwrap();
    let tools = tools_in(dir.path());
    let agents = dir.path().join("agents");
    let base = |id: &str, extra: Value| {
        let mut v = json!({"agentId": id, "description": "d", "mode": "REACT",
            "react": {"systemPrompt": "x"}});
        v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        v
    };
    let call_as = |caller: Option<Arc<AgentDefinition>>, args: Value| {
        let mut ctx = ToolContext::new("run-1", "chat-1").with_tool_id("tool-1");
        ctx.agent = caller;
        tools.call("agent_file_create", args, ctx)
    };
    let refused = |err: ToolError| match err {
        ToolError::Refused { tool, reason } if tool == "agent_file_create" => reason,
        other => panic!("expected a refusal, got {other:?}"),
    };

    // A caller without bash cannot hand bash (or anything else it lacks) to a new agent.
    let creator = agent(&["city_datetime", "agent_file_create"]);
    let err =
        call_as(Some(creator.clone()), base("sh", json!({"tools": ["bash", "city_datetime"]})))
            .await
            .unwrap_err();
    assert_eq!(
        refused(err),
        "an agent can only be given tools its creator has; not available to you: bash \
         (yours: city_datetime, agent_file_create)"
    );
    let err = call_as(None, base("sh", json!({"tools": ["city_datetime"]}))).await.unwrap_err();
    assert!(refused(err).contains("not available to you: city_datetime (yours: none)"));
    // Nor the shell flags by themselves, whatever the model passes.
    for flag in ["allowShell", "shellNetwork"] {
        let err =
            call_as(Some(creator.clone()), base("sh", json!({ flag: true }))).await.unwrap_err();
        assert_eq!(refused(err), format!("\"{flag}\" can only be set by an agent that has it"));
    }
    assert!(!agents.join("sh.json").exists(), "nothing written");

    // What it may grant, it writes, marked as created at run time (a model's own `createdBy`
    // is overwritten).
    let out = call_as(
        Some(creator.clone()),
        base("helper", json!({"tools": ["city_datetime"], "createdBy": "a person"})),
    )
    .await
    .unwrap();
    assert_eq!(out["created"], true);
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(agents.join("helper.json")).unwrap())
            .unwrap();
    assert_eq!(written["createdBy"], "agent_file_create");
    assert_eq!(written["tools"], json!(["city_datetime"]));
    assert!(written.get("allowShell").is_none());
    let loaded = parse("helper", &written.to_string()).unwrap();
    assert_eq!(loaded.created_by.as_deref(), Some("agent_file_create"));

    // Built-in agents and files a person wrote are never overwritten.
    for id in ["dashboard", "demoModeReact"] {
        let err = call_as(Some(creator.clone()), base(id, json!({}))).await.unwrap_err();
        assert_eq!(
            refused(err),
            format!("`{id}` is a built-in agent and cannot be overwritten; choose another agentId")
        );
        assert!(!agents.join(format!("{id}.json")).exists());
    }
    // Commands run unasked only if the creator's own do: a shell agent that confirms cannot
    // write one that does not; one that runs unasked can, and the flag is written.
    let confirming = ctx().agent;
    let unasked = Some(Arc::new(
        parse(
            "caller",
            &json!({"mode": "REACT", "tools": ["bash"], "allowShell": true, "confirmShell": false,
                "react": {"systemPrompt": "x"}})
            .to_string(),
        )
        .unwrap(),
    ));
    let shell = |confirm: bool| base("sh2", json!({"tools": ["bash"], "confirmShell": confirm}));
    let err = call_as(confirming.clone(), shell(false)).await.unwrap_err();
    assert_eq!(
        refused(err),
        "\"confirmShell\": false can only be set by an agent whose own commands run unasked"
    );
    assert!(!agents.join("sh2.json").exists());
    call_as(confirming, shell(true)).await.unwrap();
    let written = std::fs::read_to_string(agents.join("sh2.json")).unwrap();
    assert!(parse("sh2", &written).unwrap().shell.confirm, "{written}");
    call_as(unasked, shell(false)).await.unwrap();
    let written = std::fs::read_to_string(agents.join("sh2.json")).unwrap();
    assert!(!parse("sh2", &written).unwrap().shell.confirm, "{written}");

    std::fs::write(agents.join("mine.json"), r#"{"mode": "PLAIN"}"#).unwrap();
    let err = call_as(Some(creator), base("mine", json!({}))).await.unwrap_err();
    assert!(refused(err).contains("exists and was not written by agent_file_create"));
    assert_eq!(std::fs::read_to_string(agents.join("mine.json")).unwrap(), r#"{"mode": "PLAIN"}"#);
}

#[tokio::test]
async fn agent_file_create_passes_on_only_its_callers_own_mcp_servers() {
    let dir = tempfile::tempdir().unwrap();
    let tools = tools_in(dir.path());
    let fs = json!({"name": "fs", "command": "node", "args": ["/opt/fs.js", "/srv"]});
    let caller = Arc::new(
        parse(
            "caller",
            &json!({"mode": "REACT", "tools": ["agent_file_create"], "mcpServers": [fs],
                "react": {"systemPrompt": "x"}})
            .to_string(),
        )
        .unwrap(),
    );
    let call = |servers: Value| {
        let args = json!({"agentId": "child", "description": "d", "mode": "REACT",
            "react": {"systemPrompt": "x"}, "mcpServers": servers});
        tools.call("agent_file_create", args, ToolContext::new("r", "c").with_agent(caller.clone()))
    };
    // Another program, or the caller's server with other arguments: refused, nothing written.
    let other = json!({"name": "fs", "command": "bash", "args": ["-c", "id"]});
    let widened = json!({"name": "fs", "command": "node", "args": ["/opt/fs.js", "/"]});
    for bad in [json!([other]), json!([fs, widened]), json!("fs")] {
        let err = call(bad.clone()).await.unwrap_err();
        assert!(
            matches!(&err, ToolError::Refused { reason, .. } if reason.contains("MCP servers its creator has"))
                || err.to_string().contains("must be an array"),
            "{bad}: {err}"
        );
    }
    assert!(!dir.path().join("agents/child.json").exists());
    // Its own, unchanged: written, and the new agent loads with it.
    call(json!([fs])).await.unwrap();
    let text = std::fs::read_to_string(dir.path().join("agents/child.json")).unwrap();
    let child = parse("child", &text).unwrap();
    assert_eq!(child.mcp_servers, caller.mcp_servers);
}

#[tokio::test]
async fn frontend_submit_releases_waiters_and_reports_unknown_ids_and_timeouts() {
    let hub = FrontendSubmits::new(Duration::from_secs(300));
    let pending = hub.expect("run-1", "tool-1").unwrap();
    let waiter = tokio::spawn(async move {
        pending.wait(None, &tokio_util::sync::CancellationToken::new()).await
    });
    // The HTTP layer's side, from another task.
    let submitter = {
        let hub = hub.clone();
        tokio::spawn(async move {
            hub.submit("run-1", "tool-1", json!({"params": {"confirmed": true}, "viewId": "v1"}))
        })
    };
    submitter.await.unwrap().unwrap();
    let v = tokio::time::timeout(Duration::from_secs(2), waiter).await.unwrap().unwrap();
    assert_eq!(v.unwrap(), json!({"confirmed": true}));

    assert_eq!(
        hub.submit("run-1", "tool-1", json!({})),
        Err(SubmitError::UnknownRun("run-1".into())),
        "answered once"
    );
    let _p = hub.expect("run-2", "a").unwrap();
    assert_eq!(
        hub.submit("run-2", "b", json!({})),
        Err(SubmitError::UnknownTool { run_id: "run-2".into(), tool_id: "b".into() })
    );

    // No params → {}.
    let hub2 = hub.clone();
    let w = tokio::spawn(async move { hub2.wait("run-3", "t", None).await });
    while !hub.is_waiting("run-3", "t") {
        tokio::task::yield_now().await;
    }
    hub.submit("run-3", "t", json!({"other": 1})).unwrap();
    assert_eq!(w.await.unwrap().unwrap(), json!({}));

    let started = Instant::now();
    let err = hub.wait("run-4", "t", Some(Duration::from_millis(100))).await.unwrap_err();
    assert!(started.elapsed() >= Duration::from_millis(100));
    assert!(err.to_string().starts_with("the user did not answer within 100ms"), "{err}");
    assert!(!hub.is_waiting("run-4", "t"));

    let hub3 = hub.clone();
    let w = tokio::spawn(async move { hub3.wait("run-5", "t", None).await });
    while !hub.is_waiting("run-5", "t") {
        tokio::task::yield_now().await;
    }
    assert_eq!(hub.cancel_run("run-5"), 1);
    assert_eq!(w.await.unwrap(), Err(ToolError::Cancelled));
}

#[tokio::test]
async fn templates_chain_tool_results_with_date_arithmetic() {
    let dir = tempfile::tempdir().unwrap();
    let tools = tools_in(dir.path());
    let mut results = ToolResults::new().with_known_tools(tools.names());

    // Step 1: what day is it in Shanghai (06:00 UTC = 14:00 in Shanghai, Friday 2026-02-13).
    let now = tools.call("city_datetime", json!({"city": "上海"}), ctx()).await.unwrap();
    assert_eq!(now["date"], "2026-02-13");
    assert_eq!(now["weekday"], "Friday");
    results.record("city_datetime", now);

    // Step 2: tomorrow's weather there, by reference.
    let args = results
        .resolve_args(
            &json!({"city": "{{city_datetime.city}}", "date": "{{city_datetime.date+1d}}"}),
        )
        .unwrap();
    assert_eq!(args, json!({"city": "Shanghai", "date": "2026-02-14"}));
    let weather = tools.call("mock_city_weather", args.clone(), ctx()).await.unwrap();
    assert_eq!(weather["date"], "2026-02-14");
    assert_eq!(weather, tools.call("mock_city_weather", args, ctx()).await.unwrap(), "stable");
    results.record("mock_city_weather", weather.clone());

    // Step 3: a command built from both results.
    let cmd = results
        .resolve_str(
            "echo {{mock_city_weather.date}} {{mock_city_weather.temperatureC}}C, next week {{city_datetime.date+1w}}",
        )
        .unwrap();
    let out = tools.call("bash", json!({"command": cmd}), ctx()).await.unwrap();
    assert_eq!(
        out["stdout"],
        format!("2026-02-14 {}C, next week 2026-02-20\n", weather["temperatureC"])
    );

    let err = results.resolve_str("{{mock_city_weather.humidty}}").unwrap_err().to_string();
    assert!(err.contains("{{mock_city_weather.humidty}}") && err.contains("humidity"), "{err}");
    let err = results.resolve_str("{{bash.stdout}}").unwrap_err().to_string();
    assert!(err.contains("unknown reference {{bash.stdout}}"), "{err}");
}

#[tokio::test]
async fn agent_file_create_passes_on_at_most_its_callers_knowledge_bases_and_no_unchecked_team() {
    let dir = tempfile::tempdir().unwrap();
    let tools = tools_in(dir.path());
    let caller = Arc::new(
        parse(
            "caller",
            &json!({"mode": "REACT", "tools": ["knowledge_search", "agent_file_create"],
                "knowledgeBases": ["filings"], "react": {"systemPrompt": "x"}})
            .to_string(),
        )
        .unwrap(),
    );
    let call = |id: &str, extra: Value| {
        let mut args = json!({"agentId": id, "description": "d", "mode": "REACT",
            "react": {"systemPrompt": "x"}, "tools": ["knowledge_search"]});
        args.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        tools.call("agent_file_create", args, ToolContext::new("r", "c").with_agent(caller.clone()))
    };
    let refused = |err: ToolError| match err {
        ToolError::Refused { reason, .. } => reason,
        other => panic!("expected a refusal, got {other:?}"),
    };
    let err = call("wide", json!({"knowledgeBases": ["filings", "payroll"]})).await.unwrap_err();
    assert!(
        refused(err)
            .contains("knowledge bases its creator may search; not available to you: payroll")
    );
    // Unsaid, the new agent searches what its creator may, not every base.
    call("narrow", json!({})).await.unwrap();
    let text = std::fs::read_to_string(dir.path().join("agents/narrow.json")).unwrap();
    assert_eq!(parse("narrow", &text).unwrap().knowledge_bases, Some(vec!["filings".to_owned()]));
    // Without the catalog no member can be checked: no team is written.
    let err = call("crew", json!({"type": "sequential", "members": ["narrow"]})).await.unwrap_err();
    assert!(refused(err).contains("a team cannot be composed here"));
    assert!(!dir.path().join("agents/crew.json").exists());
}
