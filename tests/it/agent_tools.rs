//! The agent's backend tools through the public registry: real `bash` processes in temp
//! directories (path guard, timeout, output cap, cancellation), agent files on disk, the
//! frontend-submit hub across tasks, and chained parameter templates.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use boardsmith::agent::template::ToolResults;
use boardsmith::agent::tools::{
    BackendTools, BashConfig, FrontendSubmits, SubmitError, ToolContext, ToolError, ToolsConfig,
};
use serde_json::{Value, json};

fn ctx() -> ToolContext {
    ToolContext::new("run-1", "chat-1").with_tool_id("tool-1")
}

fn tools_in(dir: &Path) -> BackendTools {
    let mut config = ToolsConfig::new(dir.join("work"), dir.join("agents"));
    std::fs::create_dir_all(&config.bash.working_dir).unwrap();
    let now = chrono::DateTime::parse_from_rfc3339("2026-02-13T06:00:00Z").unwrap().to_utc();
    config.clock = Arc::new(move || now);
    BackendTools::builtin(&config)
}

async fn bash(tools: &BackendTools, args: Value) -> Result<Value, ToolError> {
    tools.call("bash", args, ctx()).await
}

#[tokio::test]
async fn bash_runs_in_the_working_dir_with_a_clean_environment() {
    let dir = tempfile::tempdir().unwrap();
    let tools = tools_in(dir.path());
    let work = dir.path().join("work").canonicalize().unwrap();
    let out = bash(&tools, json!({"command": "pwd; echo hi > f.txt; cat f.txt; echo err >&2"}))
        .await
        .unwrap();
    assert_eq!(out["exitCode"], 0, "{out}");
    assert_eq!(out["stdout"], format!("{}\nhi\n", work.display()));
    assert_eq!(out["stderr"], "err\n");
    assert_eq!(out["truncated"], false);
    assert_eq!(out["timedOut"], false);
    assert!(work.join("f.txt").exists());

    // Cargo gives the test process CARGO_* variables; the command sees none of them.
    let env = bash(&tools, json!({"command": "env"})).await.unwrap();
    let env = env["stdout"].as_str().unwrap();
    assert!(env.contains("PATH=") && !env.contains("CARGO"), "{env}");

    let out = bash(&tools, json!({"command": "exit 3"})).await.unwrap();
    assert_eq!(out["exitCode"], 3);
    let err = bash(&tools, json!({"cmd": "ls"})).await.unwrap_err();
    assert_eq!(err.to_string(), "invalid arguments for `bash`: \"command\" is required");
}

#[tokio::test]
async fn bash_refuses_paths_outside_the_allowed_ones_without_running() {
    let dir = tempfile::tempdir().unwrap();
    let tools = tools_in(dir.path());
    let work = dir.path().join("work");
    for (command, path) in [
        ("touch ran1 && cat /etc/passwd", "/etc/passwd"),
        ("touch ran2 && cat ../../x", "../../x"),
        ("touch ran3; cd .. && touch escaped", "cd .."),
        ("touch ran4; echo x > ~/boardsmith-escape", "~/boardsmith-escape"),
    ] {
        let err = bash(&tools, json!({"command": command})).await.unwrap_err();
        let ToolError::Refused { tool, reason } = &err else { panic!("{command}: {err:?}") };
        assert_eq!(tool, "bash");
        assert!(reason.contains(path), "{command}: {reason}");
        assert!(
            reason.contains("outside the allowed paths") || reason.contains("leaves the allowed"),
            "{reason}"
        );
        assert!(reason.contains(&work.canonicalize().unwrap().display().to_string()), "{reason}");
    }
    // Proof that nothing ran: none of the files the commands would have created exist.
    let left: Vec<_> = std::fs::read_dir(&work).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
    assert!(!dir.path().join("escaped").exists());
}

#[tokio::test]
async fn bash_allowed_paths_widen_the_tree() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::write(data.path().join("d.txt"), "data").unwrap();
    let mut config = ToolsConfig::new(dir.path(), dir.path());
    config.bash = BashConfig { allowed_paths: vec![data.path().to_owned()], ..config.bash };
    let tools = BackendTools::builtin(&config);
    let cmd = format!("cat {}/d.txt", data.path().display());
    let out = bash(&tools, json!({"command": cmd})).await.unwrap();
    assert_eq!(out["stdout"], "data");
}

#[tokio::test]
async fn bash_timeout_kills_the_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let tools = tools_in(dir.path());
    let started = Instant::now();
    let out = bash(
        &tools,
        json!({"command": "sleep 30 & echo $! > bg.pid; echo started; sleep 30", "timeoutMs": 300}),
    )
    .await
    .unwrap();
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
    assert_eq!(out["timedOut"], true, "{out}");
    assert_eq!(out["exitCode"], 137, "SIGKILL");
    assert_eq!(out["stdout"], "started\n", "output before the kill is kept");
    let pid = std::fs::read_to_string(dir.path().join("work/bg.pid")).unwrap();
    assert_gone(pid.trim()).await;
}

#[tokio::test]
async fn bash_output_is_capped_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let tools = tools_in(dir.path());
    let out =
        bash(&tools, json!({"command": "head -c 200000 /dev/zero | tr '\\0' a; echo done >&2"}))
            .await
            .unwrap();
    assert_eq!(out["exitCode"], 0, "the command still finishes");
    assert_eq!(out["truncated"], true);
    let stdout = out["stdout"].as_str().unwrap();
    assert!(stdout.starts_with(&"a".repeat(64 * 1024)), "{}", &stdout[..100]);
    assert!(stdout.contains("[output truncated: stdout+stderr are capped at 65536 bytes"));
    assert!(stdout.contains("134464 more bytes were dropped"), "{}", &stdout[65536..]);
    assert!(out["stderr"].as_str().unwrap().contains("more bytes were dropped"));
}

#[tokio::test]
async fn bash_cancellation_kills_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let tools = tools_in(dir.path());
    let ctx = ctx();
    let cancel = ctx.cancel.clone();
    let call = tools.call("bash", json!({"command": "echo $$ > sh.pid; sleep 30"}), ctx);
    let started = Instant::now();
    let task = tokio::spawn(call);
    let pid_file = dir.path().join("work/sh.pid");
    while !pid_file.exists() {
        assert!(started.elapsed() < Duration::from_secs(5));
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    cancel.cancel();
    assert_eq!(task.await.unwrap(), Err(ToolError::Cancelled));
    assert!(started.elapsed() < Duration::from_secs(5));
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    assert_gone(pid.trim()).await;
}

/// The process is gone (or a zombie about to be reaped) within a second.
async fn assert_gone(pid: &str) {
    let stat = format!("/proc/{pid}/stat");
    for _ in 0..100 {
        match std::fs::read_to_string(&stat) {
            Err(_) => return,
            Ok(s)
                if s.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')) =>
            {
                return;
            }
            Ok(_) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
    panic!("process {pid} still runs");
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
