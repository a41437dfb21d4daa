//! The source tree keeps its layering (rust-analyzer's tidy tests are the model): each module
//! imports only the modules below it, and only `dashboards` writes dashboards. A violation
//! names the file, the line and the rule, so the fix is where the message points.

use std::path::{Path, PathBuf};

/// Which `crate::` modules a module may use (besides itself). Lower layers first.
const LAYERS: &[(&str, &[&str])] = &[
    ("text", &[]),
    // Private files and directories under the data dir: a leaf every storing module uses.
    ("fs_private", &[]),
    ("config_file", &[]),
    ("provenance", &[]),
    // Metric names and recording helpers: a leaf like `tracing`.
    ("telemetry", &[]),
    ("dashboard", &["text"]),
    ("sandbox", &["provenance", "telemetry", "text"]),
    ("sdk", &["provenance", "sandbox", "telemetry", "text"]),
    // The provider layer knows nothing of agents, dashboards or HTTP.
    ("llm", &["config_file", "text"]),
    ("store", &["dashboard", "fs_private"]),
    ("live", &["dashboard", "provenance", "sandbox", "telemetry", "text"]),
    ("dashboards", &["dashboard", "live", "store"]),
    ("access", &["config_file", "fs_private"]),
    ("usage", &["llm", "store", "telemetry"]),
    // `sdk` for its token bucket (`sdk::limit::Bucket`).
    ("api_keys", &["access", "sdk", "store", "usage"]),
    // Uploaded images: a leaf store the gateway and the agent service (loading a query's
    // images) use.
    // `store` only for uploads on a shared store (id, name, type, bytes; it knows no images).
    ("uploads", &["fs_private", "store", "text"]),
    // `store` only for chat memory on a shared store (lines by chat id; it knows no agents).
    ("agent", &["llm", "text", "config_file", "fs_private", "uploads", "store"]),
    // Runs across nodes: the agent service's run logs and owner-side calls over the store.
    ("cluster", &["agent", "store"]),
    // Knowledge bases: embeddings through `llm`, URLs through `sdk`'s outbound policy, the
    // `knowledge_search` tool on the agent runtime.
    // `store` for the bases of several nodes (the index is then a cache of it).
    ("knowledge", &["agent", "config_file", "fs_private", "llm", "sdk", "store", "text"]),
    // Definitions made through /api/admin, layered over the files of `llm` and `agent`.
    ("admin", &["agent", "fs_private", "llm", "store"]),
    (
        "dashboard_agent",
        &["agent", "dashboard", "dashboards", "live", "provenance", "sandbox", "store", "text"],
    ),
    // The MCP server: the dashboard tools (and their argument checks), resources over
    // `dashboards` and `sdk`, a principal's scopes from `access`. Not the agent runtime.
    ("mcp", &["access", "dashboard_agent", "dashboards", "live", "sdk", "store"]),
    // Graph workflows: agent runs as tasks, code in the sandbox, runs in the store. Dashboards
    // only through backend tools.
    ("workflow", &["agent", "knowledge", "llm", "sandbox", "store", "text"]),
];

/// Writes to the store or the live layer's published state: only `dashboards` (and the owning
/// modules themselves) may call them.
const WRITES: &[&str] = &[
    "store.create(",
    "store.save(",
    "store.revert(",
    "store.delete(",
    "store.restore(",
    "store.duplicate(",
    "store.purge(",
    ".version_saved(",
    ".record_run(",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file belongs to: `src/live/viewer.rs` → `live`.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
    first.strip_suffix(".rs").unwrap_or(&first).to_owned()
}

/// The module names after each `crate::` on a line.
fn crate_paths(line: &str) -> Vec<&str> {
    line.match_indices("crate::")
        .filter(|(at, _)| !line[..*at].ends_with('$')) // `$crate::` in macros
        .map(|(at, m)| {
            let rest = &line[at + m.len()..];
            let end =
                rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
            &rest[..end]
        })
        .collect()
}

/// Every broken rule under `src`, as `path:line: why`.
fn problems(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut problems = Vec::new();
    for file in &files {
        let module = module_of(src, file);
        let text = std::fs::read_to_string(file).unwrap();
        let shown = file.strip_prefix(src.parent().unwrap()).unwrap().display().to_string();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            if let Some((_, allowed)) = LAYERS.iter().find(|(m, _)| *m == module) {
                for used in crate_paths(code) {
                    // Macros exported at the crate root (`crate::outln!`) are not layers.
                    if used != module && !allowed.contains(&used) && !used.is_empty() {
                        let next = code[code.find(&format!("crate::{used}")).unwrap()..]
                            .chars()
                            .nth(7 + used.len());
                        if next != Some('!') {
                            problems.push(format!(
                                "{shown}:{}: `{module}` must not use `crate::{used}` (allowed: {allowed:?})",
                                n + 1
                            ));
                        }
                    }
                }
            }
            // The HTTP edge calls services; only the WebSocket uses live's subscription API.
            let edge = module == "server" && !shown.starts_with("src/server/ws/");
            if edge && (code.contains("app.live") || code.contains("app.store")) {
                problems.push(format!(
                    "{shown}:{}: a handler reaches past the services: call `app.dashboards`",
                    n + 1
                ));
            }
            let owner = matches!(module.as_str(), "dashboards" | "store" | "live");
            if !owner && let Some(w) = WRITES.iter().find(|w| code.contains(*w)) {
                problems.push(format!(
                    "{shown}:{}: `{w}` outside `dashboards`: dashboard writes go through `Dashboards`",
                    n + 1
                ));
            }
        }
    }
    problems
}

#[test]
fn modules_import_only_the_layers_below_them_and_only_dashboards_writes_dashboards() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(files.len() > 50, "read the tree: {}", files.len());
    let problems = problems(&src);
    assert!(problems.is_empty(), "layering broken:\n{}", problems.join("\n"));
}

#[test]
fn the_checker_sees_what_it_must_refuse() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("llm")).unwrap();
    std::fs::create_dir_all(src.join("server/ws")).unwrap();
    std::fs::write(
        src.join("llm/mod.rs"),
        "use crate::agent::Run;\n// crate::dashboard_agent in a comment\n",
    )
    .unwrap();
    std::fs::write(
        src.join("server/mod.rs"),
        "fn f() { crate::outln!(\"x\"); app.store.save(&id, 1, s, \"n\"); }\nlet s = app.live.slots(id);\n",
    )
    .unwrap();
    // The WebSocket may use live's subscription API; `dashboards` may write.
    std::fs::write(src.join("server/ws/mod.rs"), "let v = app.live.viewer(a, o);\n").unwrap();
    std::fs::write(src.join("dashboards.rs"), "fn g() { self.store.save(a); crate::live::x(); }\n")
        .unwrap();
    assert_eq!(
        problems(&src),
        [
            "src/llm/mod.rs:1: `llm` must not use `crate::agent` (allowed: [\"config_file\", \"text\"])",
            "src/server/mod.rs:1: a handler reaches past the services: call `app.dashboards`",
            "src/server/mod.rs:1: `store.save(` outside `dashboards`: dashboard writes go through `Dashboards`",
            "src/server/mod.rs:2: a handler reaches past the services: call `app.dashboards`",
        ]
    );
    assert_eq!(crate_paths("use crate::store::{Store, StoreError};"), ["store"]);
    assert_eq!(crate_paths("let x = crate::llm::a(crate::agent::b);"), ["llm", "agent"]);
    assert!(crate_paths("macro_rules! m { () => { $crate::cli::x() } }").is_empty());
    let src = Path::new("/r/src");
    assert_eq!(module_of(src, Path::new("/r/src/live/viewer.rs")), "live");
    assert_eq!(module_of(src, Path::new("/r/src/dashboards.rs")), "dashboards");
}
