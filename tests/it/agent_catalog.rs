//! The agent catalog on real temp directories: built-ins and files replacing them, bad files, tool name conflicts,
//! viewports, and hot reload through the file watcher and through polling.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use boardsmith::agent::catalog::{
    Catalog, CatalogConfig, CatalogSnapshot, Origin, Section, ToolKind, ViewType, ViewportKind,
    builtins,
};
use boardsmith::agent::definition::Mode;

const AGENTS: [&str; 14] = [
    "analystKb",
    "dashboard",
    "dashboardZh",
    "demoAction",
    "demoAgentCreator",
    "demoModePlain",
    "demoModePlainTooling",
    "demoModePlanExecute",
    "demoModeReact",
    "demoModeThinking",
    "demoModeThinkingTooling",
    "demoViewport",
    "macroWriter",
    "researchDesk",
];

/// Polling off unless a test turns it on, so each test proves one mechanism.
fn config(root: &Path) -> CatalogConfig {
    let mut c = CatalogConfig::in_dir(root);
    c.agents_refresh = Duration::ZERO;
    c.tools_refresh = Duration::ZERO;
    c.viewports_refresh = Duration::ZERO;
    c.watch = false;
    c
}

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Waits (at most 5 s) for a snapshot that satisfies `ok`.
async fn wait_for(
    catalog: &Catalog,
    ok: impl Fn(&CatalogSnapshot) -> bool,
) -> Arc<CatalogSnapshot> {
    let mut rx = catalog.subscribe();
    let started = Instant::now();
    tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            let snap = rx.borrow_and_update().clone();
            if ok(&snap) {
                return snap;
            }
            rx.changed().await.unwrap();
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no matching reload within {:?}", started.elapsed()))
}

/// A built-in file's text (to write an edited copy that replaces it).
fn builtin_text(section: Section, name: &str) -> String {
    builtins(section).get_file(name).unwrap().contents_utf8().unwrap().to_owned()
}

fn messages(snap: &CatalogSnapshot, section: Section, file: &str) -> Vec<String> {
    snap.problem(section, file).map(|p| p.messages.clone()).unwrap_or_default()
}

#[tokio::test]
async fn all_builtins_load_without_problems_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = Catalog::start(config(dir.path())).await.unwrap();
    let snap = catalog.snapshot();
    assert_eq!(snap.version(), 3, "one load per directory");

    let problems: Vec<_> = snap.problems().collect();
    assert!(problems.is_empty(), "{problems:#?}");
    let keys: Vec<&str> = snap.agents().map(|a| a.key.as_str()).collect();
    assert_eq!(keys, AGENTS);
    for agent in snap.agents() {
        let resolved = snap.agent_tools(agent);
        assert!(resolved.missing.is_empty(), "{}: {:?}", agent.key, resolved.missing);
        assert!(agent.provider_key.is_none() && agent.model.is_none(), "{}", agent.key);
    }
    let modes = |k: &str| snap.agent(k).unwrap().mode;
    assert_eq!(modes("demoModeThinkingTooling"), Mode::ThinkingTooling);
    assert_eq!(modes("demoViewport"), Mode::PlanExecute);
    assert_eq!(modes("demoAction"), Mode::PlainTooling);
    // A triple-quoted built-in prompt arrives as plain text.
    let react = snap.agent("demoModeReact").unwrap();
    assert_eq!(react.policy.max_tool_rounds, 6);

    let kind = |n: &str| snap.tool(n).unwrap_or_else(|| panic!("tool {n}")).kind;
    for n in ["bash", "city_datetime", "mock_city_weather", "agent_file_create"] {
        assert_eq!(kind(n), ToolKind::Backend, "{n}");
    }
    for n in ["switch_theme", "launch_fireworks", "show_modal"] {
        assert_eq!(kind(n), ToolKind::Action, "{n}");
    }
    assert_eq!(kind("confirm_dialog"), ToolKind::Frontend(ViewType::Html));
    for n in ["search", "execute", "get_state", "mutate", "knowledge_search"] {
        assert_eq!(kind(n), ToolKind::Backend, "{n}");
    }
    assert_eq!(snap.tools().count(), 13);
    let dashboard = snap.agent("dashboard").unwrap();
    assert_eq!(dashboard.mode, Mode::React);
    assert_eq!(dashboard.policy.max_tool_rounds, 16);
    assert_eq!(snap.agent("dashboardZh").unwrap().tools, dashboard.tools);
    let bash = snap.tool("bash").unwrap().definition();
    assert_eq!(bash.input_schema["required"][0], "command");
    let theme = snap.tool("switch_theme").unwrap();
    assert_eq!(
        theme.parameters["properties"]["theme"]["enum"],
        serde_json::json!(["light", "dark"])
    );

    let card = snap.viewport("show_weather_card").unwrap();
    assert_eq!(card.kind, ViewportKind::Html);
    assert!(card.payload["html"].as_str().unwrap().contains("<html"));
    let confirm = snap.tool("confirm_dialog").unwrap().viewport_key().unwrap();
    assert!(snap.viewport(confirm).is_some(), "the frontend tool has its view");

    // The built-ins are served from memory: the directories exist, empty.
    for section in Section::ALL {
        let listed: Vec<_> =
            std::fs::read_dir(dir.path().join(section.as_str())).unwrap().collect();
        assert!(listed.is_empty(), "{section:?}: {listed:?}");
    }
    assert_eq!(
        snap.tool("bash").unwrap().origin,
        Origin::Builtin { section: Section::Tools, name: "bash.backend" }
    );
    assert_eq!(
        snap.viewport("show_weather_card").unwrap().origin.to_string(),
        "built-in viewports/show_weather_card.html"
    );
}

#[tokio::test]
async fn a_file_replaces_the_builtin_of_its_name_and_adds_to_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "agents/demoModePlain.json",
        r#"{"mode": "PLAIN", "description": "my plain", "plain": {"systemPrompt": "hi"}}"#,
    );
    write(dir.path(), "agents/demoModeReact.json", "{ edited by hand");
    write(
        dir.path(),
        "agents/mine.json",
        r#"{"mode": "PLAIN", "description": "mine", "plain": {"systemPrompt": "hi"}}"#,
    );
    write(dir.path(), "viewports/mine.custom", r#"{"kind": "custom"}"#);
    let catalog = Catalog::start(config(dir.path())).await.unwrap();
    let snap = catalog.snapshot();
    assert_eq!(snap.agent("mine").unwrap().description, "mine");
    assert_eq!(snap.agent("demoModePlain").unwrap().description, "my plain");
    assert_eq!(snap.viewport("mine").unwrap().payload["kind"], "custom");
    // A broken replacement is reported, not silently swapped for the built-in.
    assert!(snap.agent("demoModeReact").is_none());
    let p = snap.problem(Section::Agents, "demoModeReact.json").unwrap();
    assert_eq!(p.origin, Origin::File(dir.path().join("agents/demoModeReact.json")));
    assert_eq!(snap.agents().count(), AGENTS.len());
    // Deleting the file brings the built-in back; the built-in was never written to disk.
    std::fs::remove_file(dir.path().join("agents/demoModeReact.json")).unwrap();
    let snap = catalog.reload_now().await;
    assert_eq!(snap.agent("demoModeReact").unwrap().mode, Mode::React);
    assert!(!dir.path().join("agents/demoModeReact.json").exists());

    // Without built-ins, the directories are used as they are.
    let bare = tempfile::tempdir().unwrap();
    let mut c = config(bare.path());
    c.builtins = false;
    let catalog = Catalog::start(c).await.unwrap();
    assert_eq!(catalog.snapshot().agents().count(), 0);
    assert!(bare.path().join("tools").is_dir());
}

#[tokio::test]
async fn a_bad_agent_file_is_skipped_with_its_reason_and_the_others_load() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "agents/broken.json",
        r#"{"mode": "REACT", "react": {"systemPrompt": "x", "maxSteps": 0}}"#,
    );
    write(
        dir.path(),
        "agents/noPlan.json",
        r#"{"mode": "THINKING_AND_CONTENT_WITH_DUAL_TOOL_CALLS"}"#,
    );
    write(dir.path(), "agents/syntax.json", "{\n  \"mode\": \"PLAIN\"\n  \"plain\": {}\n}");
    write(dir.path(), "agents/notes.txt", "not an agent");
    let catalog = Catalog::start(config(dir.path())).await.unwrap();
    let snap = catalog.snapshot();

    assert_eq!(snap.agents().count(), AGENTS.len());
    assert!(snap.agent("broken").is_none());
    let p = snap.problem(Section::Agents, "broken.json").unwrap();
    assert!(!p.loaded);
    assert_eq!(p.messages, ["react.maxSteps: must be 1..=50 (got 0)"]);
    assert_eq!(
        messages(&snap, Section::Agents, "noPlan.json"),
        [
            "planExecute.planSystemPrompt: required by mode PLAN_EXECUTE",
            "planExecute.executeSystemPrompt: required by mode PLAN_EXECUTE"
        ]
    );
    let syntax = messages(&snap, Section::Agents, "syntax.json");
    assert!(syntax[0].starts_with(".: expected `,` or `}` at line 3"), "{syntax:?}");
    assert_eq!(snap.problems().count(), 3, "notes.txt is not an agent file");

    // Fixed on disk, it loads and its problem is gone.
    write(
        dir.path(),
        "agents/broken.json",
        r#"{"mode": "REACT", "react": {"systemPrompt": "x", "maxSteps": 2}}"#,
    );
    let snap = catalog.reload_now().await;
    assert_eq!(snap.agent("broken").unwrap().policy.max_tool_rounds, 2);
    assert!(snap.problem(Section::Agents, "broken.json").is_none());
}

#[tokio::test]
async fn a_tool_name_conflict_skips_the_later_entry() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "tools/zz_more.backend",
        r#"{"tools": [
            {"name": "bash", "description": "an impostor"},
            {"name": "disk_report", "description": "df", "parameters": {"type": "object", "properties": {}}},
            {"name": "disk_report", "description": "twice in one file"},
            {"description": "no name"}
        ]}"#,
    );
    write(dir.path(), "tools/broken.action", r#"{"tools": {"name": "x"}}"#);
    write(
        dir.path(),
        "tools/form.qlc",
        r#"{"tools": [{"name": "pick_date", "description": "d"}]}"#,
    );
    let catalog = Catalog::start(config(dir.path())).await.unwrap();
    let snap = catalog.snapshot();

    let bash = snap.tool("bash").unwrap();
    assert!(bash.origin.is_builtin(), "the earlier file wins");
    assert_ne!(bash.description, "an impostor");
    assert_eq!(snap.tool("disk_report").unwrap().description, "df");
    assert_eq!(snap.tool("pick_date").unwrap().kind, ToolKind::Frontend(ViewType::Qlc));
    assert_eq!(snap.tool("pick_date").unwrap().kind.tool_type(), "qlc");

    let p = snap.problem(Section::Tools, "zz_more.backend").unwrap();
    assert!(p.loaded, "the file's other entries still load");
    assert_eq!(
        p.messages,
        [
            "tools[0]: name `bash` is already defined in bash.backend; skipped",
            "tools[2]: name `disk_report` is already defined in zz_more.backend; skipped",
            "tools[3].name: `` must be 1-64 characters of A-Z a-z 0-9 _ -; skipped",
        ]
    );
    let broken = snap.problem(Section::Tools, "broken.action").unwrap();
    assert!(!broken.loaded);
    assert!(
        broken.messages[0].starts_with("tools: invalid type: map, expected a sequence"),
        "{broken:?}"
    );
}

#[tokio::test]
async fn viewports_answer_html_as_an_object_and_json_files_verbatim() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "viewports/form.qlc", r#"{"fields": [{"name": "city"}]}"#);
    write(dir.path(), "viewports/pick.qlc", r#"{"fields": [{"name": "date"}]}"#);
    write(dir.path(), "viewports/form.dqlc", r#"{"fields": []}"#);
    write(dir.path(), "viewports/schema.json_schema", r#"{"type": "object"}"#);
    write(dir.path(), "viewports/list.custom", "[1, 2]");
    write(dir.path(), "viewports/raw.html", "<b>\"hi\"</b>");
    let catalog = Catalog::start(config(dir.path())).await.unwrap();
    let snap = catalog.snapshot();

    let form = snap.viewport("form").unwrap();
    // `form.dqlc` sorts before `form.qlc`, so it wins the key.
    assert_eq!(
        (form.kind, &form.payload),
        (ViewportKind::Dqlc, &serde_json::json!({"fields": []}))
    );
    assert_eq!(snap.viewport("raw").unwrap().payload, serde_json::json!({"html": "<b>\"hi\"</b>"}));
    assert_eq!(snap.viewport("schema").unwrap().kind, ViewportKind::JsonSchema);
    let pick = snap.viewport("pick").unwrap();
    assert_eq!(
        (pick.kind, &pick.payload["fields"][0]["name"]),
        (ViewportKind::Qlc, &"date".into())
    );
    assert!(snap.viewport("list").is_none());
    assert_eq!(messages(&snap, Section::Viewports, "list.custom"), ["must be a JSON object"]);
    assert_eq!(
        messages(&snap, Section::Viewports, "form.qlc"),
        ["viewport key `form` is already defined by form.dqlc; skipped"]
    );
}

#[tokio::test]
async fn the_watcher_picks_up_edits_new_and_removed_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path());
    c.watch = true;
    let catalog = Catalog::start(c).await.unwrap();
    assert!(catalog.is_watching());
    let before = catalog.snapshot().version();

    let path = "agents/demoModePlain.json";
    let text = builtin_text(Section::Agents, "demoModePlain.json");
    let edited = text.replace("PLAIN demo: one direct answer, no tools.", "Edited on disk.");
    assert_ne!(edited, text);
    write(dir.path(), path, &edited);
    let snap = wait_for(&catalog, |s| {
        s.agent("demoModePlain").is_some_and(|a| a.description == "Edited on disk.")
    })
    .await;
    assert!(snap.version() > before);

    write(
        dir.path(),
        "tools/extra.action",
        r#"{"tools": [{"name": "ring_bell", "description": "ding"}]}"#,
    );
    wait_for(&catalog, |s| s.tool("ring_bell").is_some()).await;

    // Removing the replacement brings the built-in back.
    std::fs::remove_file(dir.path().join(path)).unwrap();
    wait_for(&catalog, |s| {
        s.agent("demoModePlain").is_some_and(|a| a.description.starts_with("PLAIN demo"))
    })
    .await;
    std::fs::remove_file(dir.path().join("tools/extra.action")).unwrap();
    wait_for(&catalog, |s| s.tool("ring_bell").is_none()).await;

    // A file turned bad on disk drops out with its reason.
    write(dir.path(), path, "{\"mode\": \"PLAIN\"}");
    let snap = wait_for(&catalog, |s| s.agent("demoModePlain").is_none()).await;
    assert_eq!(
        messages(&snap, Section::Agents, "demoModePlain.json"),
        ["plain.systemPrompt: required by mode PLAIN"]
    );
}

#[tokio::test]
async fn polling_picks_up_an_edit_when_watching_is_disabled() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path());
    c.agents_refresh = Duration::from_millis(200);
    let catalog = Catalog::start(c).await.unwrap();
    assert!(!catalog.is_watching());

    // Unchanged files do not produce new snapshots.
    let version = catalog.snapshot().version();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(catalog.snapshot().version(), version);

    let path = "agents/demoModeReact.json";
    let text = builtin_text(Section::Agents, "demoModeReact.json");
    write(dir.path(), path, &text.replace("\"maxSteps\": 6", "\"maxSteps\": 3"));
    let snap = wait_for(&catalog, |s| {
        s.agent("demoModeReact").is_some_and(|a| a.policy.max_tool_rounds == 3)
    })
    .await;
    assert_eq!(snap.version(), version + 1);
}
