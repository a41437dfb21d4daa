//! The `bash` tool's sandbox with real processes: the escape corpus of issue 16 (computed
//! paths, symlinks, `/proc`, the server's environment, writes, network, the data dir and its
//! token, fork bombs, `setsid` children), the limits, and the refusals the model is told; and
//! issue 36's: the server's configuration out of reach (a real `boardsmith serve` whose model
//! tries to switch authentication off from the shell; masks over missing folders; the
//! workspace never the server's directory) and stdio MCP servers' `readOnlyPaths` losing to
//! the masks.
//!
//! "Contained" means: a file outside the workspace (a secret the test writes next to it, a
//! token in a data dir) is not readable or writable by any means, because it does not exist in
//! the sandbox's view; `/etc/passwd` is the sandbox's own three-line file; the test process's
//! environment appears nowhere in the sandbox's `/proc`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use boardsmith::agent::definition::{AgentDefinition, parse};
use boardsmith::agent::tools::bash::{ConfinedProgram, DEFAULT_WORKSPACE};
use boardsmith::agent::tools::{
    BackendTools, BashConfig, BashTool, ToolContext, ToolError, ToolsConfig,
};
use boardsmith::llm::mock::{MockLlm, Script};
use serde_json::{Value, json};

use crate::support::{self, node::Node};

/// An agent file's shell grant, as the run loop passes it in the context.
fn agent(allow: bool, network: bool) -> Arc<AgentDefinition> {
    let text = json!({
        "mode": "REACT", "tools": if allow { json!(["bash"]) } else { json!([]) },
        "allowShell": allow, "shellNetwork": network, "react": {"systemPrompt": "x"},
    });
    Arc::new(parse("shell", &text.to_string()).unwrap())
}

/// A temp dir holding the workspace `work/`, a secret next to it, a data dir inside the
/// workspace (masked) and an agents dir inside it (read-only).
struct Shell {
    dir: tempfile::TempDir,
    tools: BackendTools,
}

const SECRET: &str = "TOPSECRET-5f1c9e";

impl Shell {
    fn new() -> Self {
        Self::with(|_| {})
    }

    fn with(adjust: impl FnOnce(&mut BashConfig)) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir_all(work.join("data")).unwrap();
        std::fs::create_dir_all(work.join("agents")).unwrap();
        std::fs::write(work.join("data/token"), SECRET).unwrap();
        std::fs::write(work.join("agents/a.json"), "{}").unwrap();
        std::fs::write(dir.path().join("secret.txt"), SECRET).unwrap();
        std::fs::create_dir_all(dir.path().join("outside-data")).unwrap();
        std::fs::write(dir.path().join("outside-data/token"), SECRET).unwrap();
        let mut config = ToolsConfig::new(&work, dir.path().join("agents"));
        config.bash.hidden_paths = vec![work.join("data")];
        config.bash.read_only_paths = vec![work.join("agents")];
        adjust(&mut config.bash);
        Self { tools: BackendTools::builtin(&config), dir }
    }

    fn root(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    fn work(&self) -> PathBuf {
        self.root().join("work")
    }

    async fn call(
        &self,
        agent: Option<Arc<AgentDefinition>>,
        args: Value,
    ) -> Result<Value, ToolError> {
        let mut ctx = ToolContext::new("run-1", "chat-1").with_tool_id("tool-1");
        ctx.agent = agent;
        self.tools.call("bash", args, ctx).await
    }

    /// Runs as an agent with the shell and no network.
    async fn run(&self, command: &str) -> Value {
        self.call(Some(agent(true, false)), json!({"command": command})).await.unwrap()
    }
}

fn text(out: &Value) -> String {
    format!("{}{}", out["stdout"].as_str().unwrap(), out["stderr"].as_str().unwrap())
}

#[tokio::test]
async fn runs_in_the_workspace_with_a_clean_environment() {
    let shell = Shell::new();
    let work = shell.work();
    let out = shell.run("pwd; echo hi > f.txt; cat f.txt; echo err >&2; echo $HOME").await;
    assert_eq!(out["exitCode"], 0, "{out}");
    assert_eq!(out["stdout"], format!("{0}\nhi\n{0}\n", work.display()));
    assert_eq!(out["stderr"], "err\n");
    assert_eq!(out["truncated"], false);
    assert_eq!(out["timedOut"], false);
    assert_eq!(std::fs::read_to_string(work.join("f.txt")).unwrap(), "hi\n");

    let env = shell.run("env | cut -d= -f1 | sort | tr '\\n' ' '").await;
    assert_eq!(env["stdout"], "HOME LANG PATH PWD SHLVL _ ");
    assert_eq!(shell.run("exit 3").await["exitCode"], 3);
    let err = shell.call(Some(agent(true, false)), json!({"cmd": "ls"})).await.unwrap_err();
    assert_eq!(err.to_string(), "invalid arguments for `bash`: \"command\" is required");
}

#[tokio::test]
async fn computed_paths_symlinks_and_proc_roots_do_not_reach_outside_files() {
    let shell = Shell::new();
    let root = shell.root();
    let secret = root.join("secret.txt");
    let b64 = |s: &str| {
        let out = std::process::Command::new("sh")
            .args(["-c", "printf %s \"$1\" | base64 -w0", "sh", s])
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };

    // Issue 16's command: the path is computed at run time. Inside, /etc/passwd is the
    // sandbox's own file, not the host's.
    let out = shell.run("head -c 40 $(echo L2V0Yy9wYXNzd2Q= | base64 -d)").await;
    assert_eq!(out["stdout"], "root:x:0:0:root:/nonexistent:/usr/sbin/n");
    let host = std::fs::read_to_string("/etc/passwd").unwrap();
    assert!(!host.starts_with("root:x:0:0:root:/nonexistent:"), "the host's differs: {host}");
    let out = shell.run("cut -d: -f1 /etc/passwd | tr '\\n' ' '; ls /etc/shadow").await;
    assert_eq!(out["stdout"], "root sandbox nobody ");
    assert!(out["stderr"].as_str().unwrap().contains("No such file or directory"), "{out}");

    let spelled = secret.display().to_string().replace('/', "\\x2f");
    for command in [
        format!("cat $(echo {} | base64 -d)", b64(&secret.display().to_string())),
        format!("cat $(printf '{spelled}')"),
        format!("ln -s {} out && cat out/secret.txt", root.display()),
        "ln -s .. up && cat up/secret.txt".to_owned(),
        format!("cat /proc/self/root{}", secret.display()),
        format!("cat /proc/1/root{}", secret.display()),
        format!("cat /proc/$PPID/root{}", secret.display()),
        "cd ..; cat secret.txt".to_owned(),
        format!("cat {}/outside-data/token", root.display()),
        "cat data/token".to_owned(),
        "cat ~/../secret.txt".to_owned(),
    ] {
        let out = shell.run(&command).await;
        let seen = text(&out);
        assert!(!seen.contains(SECRET), "{command} read the secret: {seen}");
        assert_ne!(out["exitCode"], 0, "{command}: {out}");
        assert!(seen.contains("No such file or directory"), "{command}: {seen}");
    }
    // The masked data dir is empty inside, the real one untouched.
    let out = shell.run("ls -A data | wc -l").await;
    assert_eq!(out["stdout"], "0\n");
    assert_eq!(std::fs::read_to_string(shell.work().join("data/token")).unwrap(), SECRET);
}

#[tokio::test]
async fn the_servers_environment_and_processes_are_out_of_sight() {
    let shell = Shell::new();
    // Cargo gives the test process CARGO_* variables (and more): none may appear inside.
    let ours: Vec<String> = std::env::vars()
        .filter(|(k, v)| !["PATH", "HOME", "LANG"].contains(&k.as_str()) && v.len() >= 6)
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    assert!(ours.iter().any(|kv| kv.starts_with("CARGO")), "{ours:?}");
    let out = shell
        .run(
            "for f in /proc/[0-9]*/environ /proc/$PPID/environ /proc/1/environ; do \
             tr '\\0' '\\n' < $f; done; echo; ls /proc | grep -c '^[0-9]'",
        )
        .await;
    let seen = text(&out);
    for kv in &ours {
        assert!(!seen.contains(kv.as_str()), "{kv} visible inside: {seen}");
    }
    // A pid namespace of its own: pid 1 (bwrap), the shell, its children; the host has more.
    let count: usize = out["stdout"].as_str().unwrap().lines().last().unwrap().parse().unwrap();
    assert!(count <= 6, "{seen}");
    let host = std::fs::read_dir("/proc")
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().parse::<u32>().is_ok())
        .count();
    assert!(host > count, "host {host} vs sandbox {count}");
}

#[tokio::test]
async fn writes_outside_the_workspace_fail_and_tmp_is_private() {
    let shell = Shell::new();
    let root = shell.root();
    let mark = format!("boardsmith-bash-test-{}", std::process::id());
    let out = shell
        .run(&format!(
            "echo x > {0}/outside.txt; echo x > ../outside2.txt; echo x > /usr/evil; \
             echo x > agents/evil.json; echo x >> agents/a.json; echo x > data/planted; \
             echo tmp > /tmp/{mark} && cat /tmp/{mark}",
            root.display()
        ))
        .await;
    let seen = text(&out);
    assert!(!root.join("outside.txt").exists() && !root.join("outside2.txt").exists(), "{seen}");
    assert!(!Path::new("/usr/evil").exists());
    assert!(!shell.work().join("agents/evil.json").exists(), "{seen}");
    assert_eq!(std::fs::read_to_string(shell.work().join("agents/a.json")).unwrap(), "{}");
    assert!(!shell.work().join("data/planted").exists(), "{seen}");
    assert!(seen.contains("Read-only file system"), "{seen}");
    // /tmp works inside but is the sandbox's own.
    assert!(out["stdout"].as_str().unwrap().ends_with("tmp\n"), "{seen}");
    assert!(!Path::new("/tmp").join(&mark).exists());
}

#[tokio::test]
async fn no_network_unless_the_agent_file_allows_it() {
    let shell = Shell::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let command = format!("echo hi > /dev/tcp/127.0.0.1/{port} && echo connected");

    let out = shell.run(&command).await;
    assert_eq!(out["stdout"], "", "{out}");
    assert!(text(&out).contains("/dev/tcp/127.0.0.1"), "{out}");
    assert!(listener.accept().is_err(), "nothing reached the listener");
    let out = shell.run("getent hosts example.com || echo no-dns; ls /etc/resolv.conf").await;
    assert!(out["stdout"].as_str().unwrap().contains("no-dns"), "{out}");

    // The positive control: with "shellNetwork": true the same command connects.
    let out = shell.call(Some(agent(true, true)), json!({"command": command})).await.unwrap();
    assert_eq!(out["stdout"], "connected\n", "{out}");
    assert!(listener.accept().is_ok());
}

#[tokio::test]
async fn a_fork_bomb_is_contained_and_the_host_stays_fine() {
    let shell = Shell::with(|c| c.limits.max_processes = 32);
    // A bounded burst first: forks beyond the cap fail with EAGAIN (Python does not retry).
    let script = "import os, time\nn = 0\ntry:\n    while n < 100:\n        if os.fork() == 0:\n            time.sleep(3)\n            os._exit(0)\n        n += 1\nexcept OSError as e:\n    print(n, e.errno)";
    let out = shell.run(&format!("python3 -c '{script}'")).await;
    let (forked, errno) =
        out["stdout"].as_str().unwrap().trim().split_once(' ').expect("a failed fork");
    let forked: usize = forked.parse().unwrap();
    assert!((20..32).contains(&forked), "{out}");
    assert_eq!(errno, "11", "EAGAIN");

    // The classic bomb, kept alive (without the `sleep` the sandbox ends with its shell)
    // until the timeout kills the whole namespace.
    let started = Instant::now();
    let out = shell
        .call(
            Some(agent(true, false)),
            json!({"command": ":(){ :|:& };:; sleep 30", "timeoutMs": 2000}),
        )
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
    assert_eq!(out["timedOut"], true, "{out}");
    assert!(text(&out).contains("Resource temporarily unavailable"), "{out}");
    // The host and the tool work right after.
    assert!(std::process::Command::new("true").status().unwrap().success());
    assert_eq!(shell.run("echo alive").await["stdout"], "alive\n");
}

#[tokio::test]
async fn the_whole_tree_dies_at_the_timeout_setsid_children_included() {
    let shell = Shell::new();
    let started = Instant::now();
    let out = shell
        .call(
            Some(agent(true, false)),
            json!({"command": "setsid sh -c 'sleep 2; echo escaped > late.txt' & \
                   setsid sleep 1234.5 & (sleep 1 && echo bg > bg.txt) & disown; \
                   echo started; sleep 30",
                   "timeoutMs": 500}),
        )
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
    assert_eq!(out["timedOut"], true, "{out}");
    assert_eq!(out["exitCode"], 137, "SIGKILL");
    assert_eq!(out["stdout"], "started\n", "output before the kill is kept");
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert!(!shell.work().join("late.txt").exists(), "a setsid child outlived the timeout");
    assert!(!shell.work().join("bg.txt").exists(), "a background job outlived the timeout");
    assert!(!host_runs("1234.5"), "the setsid sleep still runs");
}

/// Whether a host process has this argument.
fn host_runs(arg: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        std::fs::read(e.path().join("cmdline"))
            .is_ok_and(|c| c.split(|b| *b == 0).any(|a| a == arg.as_bytes()))
    })
}

#[tokio::test]
async fn cancellation_kills_the_command() {
    let shell = Shell::new();
    let mut ctx = ToolContext::new("run-1", "chat-1").with_agent(agent(true, false));
    let cancel = ctx.cancel.clone();
    ctx.tool_id = "t".into();
    let call = shell.tools.call(
        "bash",
        json!({"command": "touch started; sleep 2; touch late; sleep 765.25"}),
        ctx,
    );
    let started = Instant::now();
    let task = tokio::spawn(call);
    while !shell.work().join("started").exists() {
        assert!(started.elapsed() < Duration::from_secs(5));
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    cancel.cancel();
    assert_eq!(task.await.unwrap(), Err(ToolError::Cancelled));
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert!(!shell.work().join("late").exists());
    assert!(!host_runs("765.25"));
}

#[tokio::test]
async fn output_is_capped_and_limits_hold() {
    let shell = Shell::with(|c| {
        c.limits.max_file_mb = 1;
        c.limits.memory_mb = 256;
    });
    let out = shell.run("head -c 200000 /dev/zero | tr '\\0' a; echo done >&2").await;
    assert_eq!(out["exitCode"], 0, "the command still finishes");
    assert_eq!(out["truncated"], true);
    let stdout = out["stdout"].as_str().unwrap();
    assert!(stdout.starts_with(&"a".repeat(64 * 1024)), "{}", &stdout[..100]);
    assert!(stdout.contains("[output truncated: stdout+stderr are capped at 65536 bytes"));
    assert!(stdout.contains("134464 more bytes were dropped"), "{}", &stdout[65536..]);

    let out = shell.run("head -c 3M /dev/zero > big; stat -c %s big").await;
    assert_eq!(out["stdout"], "1048576\n", "{out}");
    assert!(text(&out).contains("File size limit exceeded"), "{out}");
    let out = shell.run("python3 -c 'x = bytearray(512 * 1024 * 1024)' 2>&1 | tail -1").await;
    assert_eq!(out["stdout"], "MemoryError\n", "{out}");
    // The limits are hard: the command cannot raise them.
    let out = shell.run("ulimit -v unlimited").await;
    assert_ne!(out["exitCode"], 0, "{out}");
}

#[tokio::test]
async fn refusals_name_the_reason() {
    let shell = Shell::new();
    let refused = |r: Result<Value, ToolError>| match r {
        Err(ToolError::Refused { tool, reason }) if tool == "bash" => reason,
        other => panic!("expected a refusal, got {other:?}"),
    };
    let ls = || json!({"command": "touch ran"});
    assert_eq!(
        refused(shell.call(None, ls()).await),
        "the shell runs only for an agent whose file sets \"allowShell\": true"
    );
    assert_eq!(
        refused(shell.call(Some(agent(false, false)), ls()).await),
        "agent `shell` may not use the shell: its file does not set \"allowShell\": true"
    );
    assert!(!shell.work().join("ran").exists());

    // No bubblewrap: refused (every time, from the cached probe), never run unconfined.
    let missing = Shell::with(|c| c.bwrap = PathBuf::from("/nonexistent/bwrap"));
    for _ in 0..2 {
        let reason = refused(missing.call(Some(agent(true, false)), ls()).await);
        assert_eq!(
            reason,
            "the shell is disabled on this server: bubblewrap (/nonexistent/bwrap) is not \
             installed; install it (Debian/Ubuntu: apt-get install bubblewrap) to enable the shell"
        );
    }
    // A bwrap that cannot build the sandbox (here: one that always fails) is refused too.
    let broken = Shell::with(|c| c.bwrap = PathBuf::from("/bin/false"));
    let reason = refused(broken.call(Some(agent(true, false)), ls()).await);
    assert!(
        reason.starts_with("the shell is disabled on this server: bubblewrap cannot build"),
        "{reason}"
    );
    assert!(!missing.work().join("ran").exists() && !broken.work().join("ran").exists());
}

/// The refusal's reason, or a panic.
fn refusal(r: Result<Value, ToolError>) -> String {
    match r {
        Err(ToolError::Refused { tool, reason }) if tool == "bash" => reason,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// Issue 36: `printf '[server]\nauth = false\n' > boardsmith.toml`, approved, switched
/// authentication off after a restart. Here a real `boardsmith serve` (its configuration, agents
/// and workflows folders and data dir in its working directory, no workspace configured) runs
/// a model-written command that tries every way to the server's files.
#[tokio::test]
async fn a_served_shell_cannot_touch_the_servers_configuration_folders_or_data() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let command = format!(
        "printf '[server]\\nauth = false\\n' > boardsmith.toml; printf 'K=v\\n' > .env; \
         for d in . .. {root}; do \
           printf '[server]\\nauth = false\\n' > $d/boardsmith.toml; printf 'K=v\\n' > $d/.env; \
           for f in agents tools viewports workflows; do echo '{{}}' > $d/$f/planted.json; done; \
         done; cat {root}/data/token ../data/token; pwd",
        root = root.display()
    );
    let mock = MockLlm::start(
        Script {
            turns: vec![
                support::tool_call_turn("call_1", "bash", json!({"command": command}), 1),
                crate::openai_api::text_turn("done", 100),
            ],
        },
        0,
    )
    .await
    .unwrap();
    support::node::mock_model(&root, &mock.url(), "mock-model", false);
    let config = std::fs::read_to_string(root.join("boardsmith.toml")).unwrap();
    for sub in ["agents", "tools", "viewports", "workflows"] {
        std::fs::create_dir_all(root.join(sub)).unwrap();
    }
    let shell = json!({"mode": "REACT", "tools": ["bash"], "allowShell": true,
                       "confirmShell": false, "react": {"systemPrompt": "You run commands."}});
    std::fs::write(root.join("agents/shell.json"), shell.to_string()).unwrap();
    let token = "bs-test-token-36a9c1e2";
    // The node's environment is cleared: bwrap is found on this PATH.
    let node = Node::start(&root, token, &[("PATH", std::env::var("PATH").unwrap())]).await;
    let r = node
        .http
        .post(node.url("/api/query"))
        .json(&json!({"message": "switch auth off", "agentKey": "shell"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let events = support::sse_events(r).await;
    let result = events.iter().find(|(_, t, _)| t == "tool.result").expect("the command ran");
    let out = &result.2["result"];
    assert!(out["stdout"].is_string(), "the command ran: {events:?}");
    let seen = text(out);

    // The command ran in a folder of its own: what it wrote there is its own business.
    let workspace = root.join("workspace");
    assert!(
        out["stdout"].as_str().unwrap().ends_with(&format!("{}\n", workspace.display())),
        "{out}"
    );
    assert!(workspace.join("boardsmith.toml").is_file());
    // Nothing of the server's changed, and its token was not read.
    assert_eq!(std::fs::read_to_string(root.join("boardsmith.toml")).unwrap(), config);
    assert!(!root.join(".env").exists(), "{seen}");
    for sub in ["agents", "tools", "viewports", "workflows"] {
        assert!(!root.join(sub).join("planted.json").exists(), "{sub}: {seen}");
    }
    assert!(!seen.contains(token), "{seen}");
    let on_disk = std::fs::read_to_string(root.join("data/token")).unwrap_or_default();
    assert!(on_disk.is_empty() || !seen.contains(on_disk.trim()), "{seen}");
    assert!(seen.contains("No such file or directory"), "{seen}");
    // Authentication is still on.
    let anonymous = reqwest::get(node.url("/api/keys")).await.unwrap();
    assert_eq!(anonymous.status(), 401);
}

/// The server's folders and files are masked even when they do not exist yet, and a command
/// can neither write them, nor rename a parent away to build an unmasked twin.
#[tokio::test]
async fn missing_server_folders_inside_the_workspace_are_masked_and_cannot_be_moved_aside() {
    let shell = Shell::with(|c| {
        let work = c.working_dir.clone();
        c.read_only_paths
            .extend(["tools", "viewports", "workflows", "deep/er/agents"].map(|p| work.join(p)));
        c.hidden_paths.push(work.join("data2"));
    });
    let work = shell.work();
    for p in ["tools", "viewports", "workflows", "deep/er/agents", "data2"] {
        assert!(!work.join(p).exists(), "{p} is missing before the first command");
    }
    let out = shell
        .run(
            "for f in tools viewports workflows deep/er/agents data2; do \
               echo '{}' > $f/planted.json; mkdir $f/sub; done; \
             mv workflows wf2; rm -rf tools; mv deep moved; mv deep/er deep/er2; \
             mkdir -p x/agents && echo '{}' > x/agents/ok.json; \
             ls -A tools viewports workflows deep/er/agents data2 | grep -c json",
        )
        .await;
    let seen = text(&out);
    assert!(out["stdout"].as_str().unwrap().starts_with('0'), "{seen}");
    assert!(seen.contains("Read-only file system"), "{seen}");
    assert!(seen.contains("Device or resource busy"), "{seen}");
    for p in ["tools", "viewports", "workflows", "deep/er/agents", "data2"] {
        // The mount point bwrap made is left on the host, empty: the same as none.
        let entries = std::fs::read_dir(work.join(p)).unwrap().count();
        assert_eq!(entries, 0, "{p}: {seen}");
    }
    assert!(!work.join("wf2").exists() && !work.join("moved").exists(), "{seen}");
    assert!(!work.join("deep/er2").exists(), "{seen}");
    // Elsewhere the workspace stays writable.
    assert!(work.join("x/agents/ok.json").is_file(), "{seen}");
}

#[tokio::test]
async fn the_workspace_is_never_the_servers_directory() {
    let cwd = std::env::current_dir().unwrap().canonicalize().unwrap();
    let parent = cwd.parent().unwrap().to_owned();
    let dot = PathBuf::from(".");
    // (what, workspace, allowed path)
    let cases = [
        ("workspace", Some(dot.clone()), None),
        ("around it", Some(parent), None),
        ("allowed path", None, Some(dot)),
    ];
    for (what, work, allowed) in cases {
        let shell = Shell::with(|c| {
            if let Some(w) = work {
                c.working_dir = w;
            }
            c.allowed_paths.extend(allowed);
        });
        let reason =
            refusal(shell.call(Some(agent(true, false)), json!({"command": "true"})).await);
        assert!(
            reason.starts_with("the shell is disabled on this server: the shell's writable tree")
                && reason.contains(&format!("the server's working directory ({})", cwd.display()))
                && reason.contains("AGENT_BASH_WORKING_DIRECTORY"),
            "{what}: {reason}"
        );
    }
    // Without a setting the workspace is a folder of its own in the working directory.
    if std::env::var_os("AGENT_BASH_WORKING_DIRECTORY").is_none() {
        assert_eq!(BashConfig::from_env().working_dir, PathBuf::from(DEFAULT_WORKSPACE));
    }
}

/// Runs `cat path` as a stdio MCP server would be run, with `read_only` bound; its output, or
/// the refusal.
async fn confined_cat(shell: &Shell, path: &Path, read_only: &[PathBuf]) -> Result<String, String> {
    let mut config = BashConfig::new(shell.work());
    config.hidden_paths = vec![shell.work().join("data"), shell.root().join("outside-data")];
    let tool = BashTool::new(config);
    let args = [path.display().to_string()];
    let program = ConfinedProgram {
        command: "cat",
        args: &args,
        env: &[],
        network: false,
        read_only,
        memory_mb: 256,
    };
    let mut confined = tool.spawn_confined(&program).await?;
    drop(confined.child.stdin.take());
    let mut child = confined.child;
    let out = tokio::time::timeout(Duration::from_secs(10), async {
        use tokio::io::AsyncReadExt;
        let (mut o, mut e) = (String::new(), String::new());
        child.stdout.take().unwrap().read_to_string(&mut o).await.unwrap();
        child.stderr.take().unwrap().read_to_string(&mut e).await.unwrap();
        o + &e
    })
    .await
    .unwrap();
    Ok(out)
}

/// Issue 36: an MCP server definition whose `readOnlyPaths` covered the data dir and `/proc`
/// read `data/token` and `secret.key`, as those binds came after the masks.
#[tokio::test]
async fn an_mcp_servers_read_only_paths_lose_to_the_masks() {
    let shell = Shell::new();
    let root = shell.root();
    // Around the data dirs: bound, but the masks come last.
    let token = root.join("outside-data/token");
    let out = confined_cat(&shell, &token, std::slice::from_ref(&root)).await.unwrap();
    assert!(!out.contains(SECRET) && out.contains("No such file or directory"), "{out}");
    let out =
        confined_cat(&shell, &root.join("secret.txt"), std::slice::from_ref(&root)).await.unwrap();
    assert_eq!(out, SECRET, "the positive control: the rest of the tree is readable");
    let inside = shell.work().join("data/token");
    let out = confined_cat(&shell, &inside, &[shell.work()]).await.unwrap();
    assert!(!out.contains(SECRET), "{out}");
    // The data dir itself, the host's /proc (whose /proc/<pid>/root is every file) and `/`:
    // refused, naming the path.
    let err = confined_cat(&shell, &token, &[root.join("outside-data")]).await.unwrap_err();
    assert!(err.contains("which the sandbox never shows"), "{err}");
    for p in ["/proc", "/", "/proc/1/root/tmp"] {
        let err = confined_cat(&shell, &token, &[PathBuf::from(p)]).await.unwrap_err();
        assert!(err.contains("would show the host's"), "{p}: {err}");
    }
}
