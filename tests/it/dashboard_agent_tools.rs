//! The dashboard agent's tools as agent backend tools: the four adapters through a
//! `BackendTools` registry over a real app (sandbox workers, store), the chat as the session,
//! the `dashboard.update` payloads, every worked example of `builtin/tools/dashboard.backend` run through
//! the real tools, and the `dashboard` agent end to end over `/api/query` with a scripted model.

use std::sync::Arc;

use boardsmith::agent::tools::{BackendTools, ToolContext, ToolError};
use boardsmith::dashboard_agent::backend::register_all;
use boardsmith::dashboard_agent::{DashboardTool, Tools};
use boardsmith::llm::mock::{MockLlm, Script, Step, Turn};
use serde_json::{Value, json};

use crate::support::{self, TestApp};

const GOLD: &str = r#"return {
  title: 'Gold',
  layout: { columns: 2 },
  panels: [{
    id: 'gold-kline', title: 'Gold daily', type: 'candlestick', renderer: 'lightweight-charts',
    code: "return await sdk.market.getKline({ symbol: 'XAUUSD', timeframe: '1D', limit: 120 });",
  }],
};"#;

const BTC: &str = r#"return {
  title: 'Bitcoin',
  layout: { columns: 1 },
  panels: [{
    id: 'btc-quote', title: 'BTC', type: 'metric_card', renderer: 'custom',
    code: "const q = await sdk.crypto.getQuote({ symbol: 'BTCUSDT' });\nreturn { label: q.symbol, value: q.price, change: q.changePct };",
  }],
};"#;

/// A scripted turn used once, reporting 1200 input and 80 output tokens.
fn once(steps: Vec<Step>) -> Turn {
    Turn {
        steps,
        times: Some(1),
        usage: Some(boardsmith::llm::Usage {
            input_tokens: 1200,
            output_tokens: 80,
            ..Default::default()
        }),
        ..Turn::default()
    }
}

struct Fixture {
    app: TestApp,
    registry: BackendTools,
}

impl Fixture {
    async fn new() -> Self {
        let app = support::spawn_app().await;
        let mut registry = BackendTools::new();
        register_all(&mut registry, &app.app.tools, 3);
        Self { app, registry }
    }

    fn tools(&self) -> &Arc<Tools> {
        &self.app.app.tools
    }

    async fn call(&self, chat: &str, tool: &str, args: Value) -> Result<Value, ToolError> {
        self.registry.call(tool, args, ToolContext::new("run-1", chat).with_tool_id("t1")).await
    }

    async fn ok(&self, chat: &str, tool: &str, args: Value) -> Value {
        self.call(chat, tool, args).await.unwrap_or_else(|e| panic!("{tool}: {e}"))
    }

    /// A call's result and the events that follow it, as JSON.
    async fn with_events(&self, chat: &str, tool: &str, args: Value) -> (Value, Vec<Value>) {
        let ctx = ToolContext::new("run-1", chat).with_tool_id("t1");
        let reply = self
            .registry
            .call_with_events(tool, args, ctx)
            .await
            .unwrap_or_else(|e| panic!("{tool}: {e}"));
        let events = reply.events.iter().map(|e| serde_json::to_value(e).unwrap()).collect();
        (reply.result, events)
    }

    /// The one `dashboard.update` after a call (`None`: no event at all).
    async fn update(&self, chat: &str, tool: &str, args: Value) -> (Value, Option<Value>) {
        let (out, mut events) = self.with_events(chat, tool, args).await;
        assert!(events.len() <= 1, "{events:#?}");
        (out, events.pop())
    }

    async fn active(&self, chat: &str) -> Option<String> {
        self.tools().session(Some(chat)).await.unwrap().active
    }
}

fn assert_all_ok(out: &Value) {
    assert!(out.get("error").is_none(), "{out:#}");
    assert_eq!(out["validation"]["allOk"], true, "{out:#}");
}

#[tokio::test]
async fn execute_creates_a_dashboard_in_the_chats_session() {
    let f = Fixture::new().await;
    assert_eq!(f.registry.names(), {
        let mut n: Vec<&str> = DashboardTool::ALL.map(DashboardTool::name).to_vec();
        n.sort_unstable();
        n
    });
    let out = f.ok("chat-a", "execute", json!({"code": GOLD})).await;
    assert_all_ok(&out);
    let id = out["dashboard_id"].as_str().unwrap().to_owned();
    assert_eq!(out["validation"]["panels"][0]["panelId"], "gold-kline");
    assert_eq!(out["validation"]["panels"][0]["rowCount"], 120);
    assert_eq!(out["state"]["title"], "Gold");

    assert_eq!(f.active("chat-a").await.as_deref(), Some(id.as_str()));
    let session = f.tools().session(Some("chat-a")).await.unwrap();
    assert_eq!(session.dashboards.len(), 1);
    assert_eq!(session.dashboards[0].title, "Gold");
    assert_eq!(f.active("chat-b").await, None, "another chat has its own session");

    // Another chat acts on its own active dashboard, which it has not got yet.
    let none = f.ok("chat-b", "get_state", json!({})).await;
    assert!(none["error"].as_str().unwrap().contains("no active dashboard"), "{none}");
    // search works through the registry too.
    let found =
        f.ok("chat-a", "search", json!({"code": "return spec.find('gold kline', 3)"})).await;
    assert!(found["results"].as_array().is_some_and(|r| !r.is_empty()), "{found}");
    f.app.stop().await;
}

#[tokio::test]
async fn mutate_with_a_bug_reports_line_and_column_and_the_fix_is_ok() {
    let f = Fixture::new().await;
    f.ok("chat", "execute", json!({"code": GOLD})).await;

    // A runtime bug in the new panel's code: saved, reported with its line and column.
    let buggy = r#"async (state) => {
  state.panels.push({
    id: 'gold-news', title: 'News', type: 'feed', renderer: 'custom',
    code: "const news = await sdk.news.searchNews({ query: 'gold', limit: 5 });\nreturn news.map(n => ({ time: n.time, title: n.headline.trim() }));",
  });
  return state;
}"#;
    let out = f.ok("chat", "mutate", json!({"code": buggy})).await;
    assert!(out.get("error").is_none(), "{out:#}");
    assert_eq!(out["validation"]["allOk"], false, "{out:#}");
    let panel = &out["validation"]["panels"][0];
    assert_eq!(panel["panelId"], "gold-news");
    assert_eq!(panel["status"], "error");
    let error = panel["error"].as_str().unwrap();
    assert!(error.contains("(line 2, column"), "{error}");
    assert_eq!(out["changes"][0]["type"], "added_panel");

    // A syntax error is refused before saving, naming the panel's code and the position.
    let syntax = r#"async (state) => {
  state.panels.find(p => p.id === 'gold-news').code = "return [\n  {time: 1, title: 'x'";
  return state;
}"#;
    let out = f.ok("chat", "mutate", json!({"code": syntax})).await;
    let error = out["error"].as_str().unwrap();
    assert!(error.contains("panels[1].code") && error.contains("line"), "{error}");

    let fix = r#"async (state) => {
  const p = state.panels.find(p => p.id === 'gold-news');
  p.code = p.code.replace('n.headline.trim()', 'n.title');
  return state;
}"#;
    let out = f.ok("chat", "mutate", json!({"code": fix})).await;
    assert_all_ok(&out);
    assert_eq!(out["changes"][0]["type"], "modified_panel");
    assert_eq!(out["validation"]["panels"][0]["rowCount"], 5);
    f.app.stop().await;
}

#[tokio::test]
async fn get_state_with_a_dashboard_id_makes_it_active() {
    let f = Fixture::new().await;
    let gold = f.ok("chat", "execute", json!({"code": GOLD})).await;
    let gold = gold["dashboard_id"].as_str().unwrap().to_owned();
    let btc = f.ok("chat", "execute", json!({"code": BTC})).await;
    let btc = btc["dashboard_id"].as_str().unwrap().to_owned();
    assert_eq!(f.active("chat").await.as_deref(), Some(btc.as_str()), "the newest is active");

    // "Back to the gold one".
    let out = f.ok("chat", "get_state", json!({"dashboard_id": gold})).await;
    assert_eq!(out["dashboard_id"], gold.as_str());
    assert_eq!(out["state"]["panels"][0]["id"], "gold-kline");
    assert!(out["state"]["panels"][0]["codePreview"].is_string(), "summary by default");
    assert_eq!(f.active("chat").await.as_deref(), Some(gold.as_str()));

    // Edits without an id now go to gold.
    let out = f
        .ok("chat", "mutate", json!({"code": "async (state) => ({ ...state, title: 'Gold 2' })"}))
        .await;
    assert_eq!(out["dashboard_id"], gold.as_str());
    let full = f.ok("chat", "get_state", json!({"detail_level": "full"})).await;
    assert_eq!(full["state"]["title"], "Gold 2");
    assert!(full["state"]["panels"][0]["code"].is_string(), "full has the code");
    let session = f.tools().session(Some("chat")).await.unwrap();
    let titles: Vec<&str> = session.dashboards.iter().map(|d| d.title.as_str()).collect();
    assert_eq!(titles, ["Gold 2", "Bitcoin"]);
    f.app.stop().await;
}

#[tokio::test]
async fn mutate_returning_null_deletes_and_the_session_forgets_it() {
    let f = Fixture::new().await;
    let gold = f.ok("chat", "execute", json!({"code": GOLD})).await;
    let gold = gold["dashboard_id"].as_str().unwrap().to_owned();
    let btc = f.ok("chat", "execute", json!({"code": BTC})).await;
    let btc = btc["dashboard_id"].as_str().unwrap().to_owned();

    let out = f.ok("chat", "mutate", json!({"code": "async (state) => null"})).await;
    assert_eq!(out["deleted"], true, "{out}");
    assert_eq!(out["dashboard_id"], btc.as_str());
    let session = f.tools().session(Some("chat")).await.unwrap();
    assert_eq!(session.active.as_deref(), Some(gold.as_str()), "the remaining one is active");
    assert!(session.dashboards.iter().all(|d| d.id != btc), "{session:?}");
    assert!(f.app.app.dashboards.get(&btc).await.unwrap().deleted);

    // Acting on the deleted one is a tool error naming the field.
    let err = f.call("chat", "get_state", json!({"dashboard_id": btc})).await.unwrap_err();
    assert!(matches!(err, ToolError::InvalidArgs { .. }), "{err:?}");
    assert!(err.to_string().contains("\"dashboard_id\"") && err.to_string().contains("deleted"));
    f.app.stop().await;
}

#[tokio::test]
async fn malformed_input_is_a_tool_error_naming_the_field() {
    let f = Fixture::new().await;
    let cases = [
        ("execute", json!({}), "\"code\" is required"),
        ("search", json!({"code": 42}), "\"code\" must be a string"),
        ("mutate", json!({"code": "  "}), "\"code\" must not be empty"),
        ("mutate", json!({"code": "x", "dashboardId": "db_1"}), "unknown field \"dashboardId\""),
        ("execute", json!({"code": "x", "dashboard_id": 7}), "\"dashboard_id\" must be a string"),
        ("get_state", json!({"detail_level": "everything"}), "\"detail_level\""),
        ("get_state", json!(["summary"]), "must be a JSON object"),
        ("get_state", json!({"dashboard_id": "db_nope"}), "\"dashboard_id\""),
        ("execute", json!({"code": GOLD, "dashboard_id": "db_nope"}), "not found"),
    ];
    for (tool, args, want) in cases {
        let err = f.call("chat", tool, args.clone()).await.unwrap_err();
        assert!(matches!(err, ToolError::InvalidArgs { .. }), "{tool} {args}: {err:?}");
        let msg = err.to_string();
        assert!(msg.contains(&format!("`{tool}`")) && msg.contains(want), "{tool} {args}: {msg}");
    }
    assert_eq!(f.active("chat").await, None, "nothing was created");
    f.app.stop().await;
}

#[tokio::test]
async fn dashboard_update_payloads() {
    let f = Fixture::new().await;
    let gold_two = r#"return {
  title: 'Gold',
  layout: { columns: 2 },
  panels: [
    { id: 'gold-kline', title: 'Gold daily', type: 'candlestick', renderer: 'lightweight-charts',
      code: "return await sdk.market.getKline({ symbol: 'XAUUSD', timeframe: '1D', limit: 60 });" },
    { id: 'gold-quote', title: 'Spot', type: 'metric_card', renderer: 'custom',
      code: "const q = await sdk.market.getQuote({ symbol: 'XAUUSD' });\nreturn { value: q.price, label: 'Gold' };" },
  ],
};"#;
    let (out, up) = f.update("chat", "execute", json!({"code": gold_two})).await;
    let id = out["dashboard_id"].as_str().unwrap().to_owned();
    let up = up.unwrap();
    assert_eq!(up["type"], "dashboard.update");
    assert_eq!(up["dashboardId"], id.as_str());
    assert_eq!(up["version"], 1);
    let kinds: Vec<(&str, &str)> = up["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["type"].as_str().unwrap(), c["panel_id"].as_str().unwrap()))
        .collect();
    assert_eq!(kinds, [("added_panel", "gold-kline"), ("added_panel", "gold-quote")]);
    assert_eq!(up["validation"]["allOk"], true);
    assert_eq!(up["validation"]["panels"].as_array().unwrap().len(), 2);
    assert!(up.get("deleted").is_none());

    // mutate: the next version with its diff (no code diff in the detail).
    let (_, up) = f
        .update(
            "chat",
            "mutate",
            json!({"code": "async (state) => { state.layout.columns = 3; state.panels[0].code = state.panels[0].code.replace('60', '90'); return state; }"}),
        )
        .await;
    let up = up.unwrap();
    assert_eq!(up["version"], 2);
    let changes = up["changes"].as_array().unwrap();
    assert!(changes.iter().any(|c| c["type"] == "layout_changed"), "{up:#}");
    let modified = changes.iter().find(|c| c["type"] == "modified_panel").unwrap();
    assert_eq!(modified["panel_id"], "gold-kline");
    assert!(!modified["detail"].as_str().unwrap().contains('\n'), "{modified}");
    assert_eq!(up["validation"]["panels"][0]["panelId"], "gold-kline");

    // execute over an existing id: the real diff from the replaced version.
    let (_, up) = f.update("chat", "execute", json!({"code": GOLD, "dashboard_id": id})).await;
    let up = up.unwrap();
    assert_eq!(up["version"], 3);
    let changes = up["changes"].as_array().unwrap();
    assert!(changes.iter().any(|c| c["type"] == "removed_panel" && c["panel_id"] == "gold-quote"));
    assert!(!changes.iter().any(|c| c["type"] == "added_panel"), "{up:#}");

    // Nothing persisted: no update.
    let (_, none) = f.update("chat", "mutate", json!({"code": "async (state) => state"})).await;
    assert!(none.is_none());
    let (bad, none) = f
        .update("chat", "mutate", json!({"code": "async (state) => ({ ...state, layout: 3 })"}))
        .await;
    assert!(bad["error"].is_string(), "{bad}");
    assert!(none.is_none());
    let (_, none) = f.update("chat", "execute", json!({"code": "return { title: '' }"})).await;
    assert!(none.is_none());
    assert!(f.update("chat", "get_state", json!({})).await.1.is_none());
    assert!(f.update("chat", "search", json!({"code": "return []"})).await.1.is_none());
    assert_eq!(f.app.app.dashboards.get(&id).await.unwrap().version, 3, "nothing saved since");

    // A delete is announced.
    let (_, up) = f.update("chat", "mutate", json!({"code": "async (state) => null"})).await;
    let up = up.unwrap();
    assert_eq!(up["deleted"], true);
    assert_eq!(up["dashboardId"], id.as_str());
    assert_eq!(up["changes"], json!([]));
    f.app.stop().await;
}

/// The fenced ```js blocks of a tool's description in `builtin/tools/dashboard.backend`.
fn examples(defs: &Value, tool: &str) -> Vec<String> {
    let def = defs["tools"].as_array().unwrap().iter().find(|t| t["name"] == tool).unwrap();
    let description = def["description"].as_str().unwrap();
    description
        .split("```js\n")
        .skip(1)
        .map(|block| block.split("\n```").next().unwrap().to_owned())
        .collect()
}

/// Every worked example in the tool descriptions runs through the real tools and succeeds with
/// every panel ok, in the order a model would use them.
#[tokio::test]
async fn tool_description_examples_work() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/builtin/tools/dashboard.backend"
    ))
    .unwrap();
    let defs: Value = serde_json::from_str(&text).unwrap();
    let names: Vec<&str> =
        defs["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, DashboardTool::ALL.map(DashboardTool::name));

    let f = Fixture::new().await;
    let searches = examples(&defs, "search");
    assert_eq!(searches.len(), 3);
    for code in &searches {
        let out = f.ok("chat", "search", json!({"code": code})).await;
        assert!(out.get("error").is_none(), "{code}\n{out:#}");
        assert!(!out["results"].is_null() && out["results"] != json!([]), "{code}\n{out:#}");
    }

    let executes = examples(&defs, "execute");
    assert_eq!(executes.len(), 1);
    let out = f.ok("chat", "execute", json!({"code": executes[0]})).await;
    assert_all_ok(&out);
    assert_eq!(out["validation"]["panels"].as_array().unwrap().len(), 2, "{out:#}");
    for p in out["validation"]["panels"].as_array().unwrap() {
        assert!(p["rowCount"].as_u64().unwrap() > 0, "{p}");
    }

    let mutates = examples(&defs, "mutate");
    assert_eq!(mutates.len(), 4);
    let (delete, edits) = mutates.split_last().unwrap();
    for code in edits {
        let out = f.ok("chat", "mutate", json!({"code": code})).await;
        assert_all_ok(&out);
        assert!(!out["changes"].as_array().unwrap().is_empty(), "{code}\n{out:#}");
        // The alert example's rule is judged on a test run of its panel.
        if code.contains("alerts") {
            let dry = &out["validation"]["alerts"][0];
            assert!(dry["status"] == "firing" || dry["status"] == "ok", "{out:#}");
            assert!(dry["value"].as_f64().is_some(), "{out:#}");
        }
    }
    let state = f.ok("chat", "get_state", json!({"detail_level": "full"})).await;
    assert_eq!(state["state"]["layout"]["columns"], 3);
    assert_eq!(state["state"]["panels"].as_array().unwrap().len(), 3);
    assert_eq!(state["state"]["alerts"][0]["id"], "gold-above-2500");
    let out = f.ok("chat", "mutate", json!({"code": delete})).await;
    assert_eq!(out["deleted"], true, "{out}");
    f.app.stop().await;
}

/// The `dashboard` agent over `/api/query` with a scripted model: the registered `execute`
/// adapter builds a dashboard in the run's chat session.
#[tokio::test]
async fn dashboard_agent_builds_in_the_chat_session() {
    let call = |id: &str, name: &str, arguments: Value| Step::ToolCall {
        id: Some(id.into()),
        name: name.into(),
        arguments,
        fragments: Some(3),
    };
    let turns = vec![
        once(vec![call("c1", "search", json!({"code": "return spec.find('btc quote', 3)"}))]),
        once(vec![call("c2", "execute", json!({"code": BTC}))]),
        once(vec![Step::Text { text: "Built: btc-quote works.".into(), chunk: Some(8) }]),
        Turn {
            steps: vec![Step::Text { text: "UNEXPECTED EXTRA MODEL CALL".into(), chunk: None }],
            ..Turn::default()
        },
    ];
    let mock = MockLlm::start(Script { turns }, 0).await.unwrap();
    let url = mock.url();
    let app = support::spawn_app_with(Arc::new(tempfile::tempdir().unwrap()), false, move |c| {
        c.llm = Some(support::llm_config(Some(&url)));
    })
    .await;
    let r = app
        .http
        .post(app.url("/api/query"))
        .json(&json!({"message": "A bitcoin dashboard", "agentKey": "dashboard"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let events = support::sse_events(r).await;
    let last = &events.last().unwrap().1;
    assert_eq!(last, "run.complete", "{events:#?}");
    let chat_id = events[0].2["chatId"].as_str().unwrap().to_owned();
    let results: Vec<&Value> =
        events.iter().filter(|(_, t, _)| t == "tool.result").map(|(_, _, d)| d).collect();
    assert_eq!(results.len(), 2, "{events:#?}");
    let executed = &results[1]["result"];
    assert_eq!(executed["validation"]["allOk"], true, "{executed:#}");
    let id = executed["dashboard_id"].as_str().unwrap();
    let session = app.app.tools.session(Some(&chat_id)).await.unwrap();
    assert_eq!(session.active.as_deref(), Some(id));
    // The save is announced right after its result, live and in the chat's history alike.
    let after_result = |types: &[String]| {
        let last = types.iter().rposition(|t| t == "tool.result").unwrap();
        types[last + 1].clone()
    };
    let live: Vec<String> = events.iter().map(|(_, t, _)| t.clone()).collect();
    assert_eq!(after_result(&live), "dashboard.update", "{live:?}");
    let (_, chat) = app.get(&format!("/api/chat?chatId={chat_id}")).await;
    let history: Vec<String> = chat["data"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(after_result(&history), "dashboard.update", "{history:?}");
    let update = chat["data"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["type"] == "dashboard.update")
        .unwrap();
    assert_eq!((update["dashboardId"].as_str(), &update["version"]), (Some(id), &json!(1)));

    // The model was offered exactly the four tools.
    let requests = mock.requests();
    let mut offered: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    offered.sort_unstable();
    assert_eq!(offered, ["execute", "get_state", "mutate", "search"]);
    app.stop().await;
}

/// `boardsmith eval` end to end against the scripted model (as an OpenAI-compatible upstream):
/// one case, one request, scored from the real tools; and without a key it exits 2 naming the
/// variable to set.
#[tokio::test]
async fn eval_runs_a_case_and_fails_cleanly_without_a_key() {
    let turns = vec![
        once(vec![Step::ToolCall {
            id: Some("c1".into()),
            name: "execute".into(),
            arguments: json!({"code": BTC}),
            fragments: Some(2),
        }]),
        once(vec![Step::Text { text: "Built: btc-quote works.".into(), chunk: None }]),
    ];
    let mock = MockLlm::start(Script { turns }, 0).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("cases");
    std::fs::create_dir_all(&cases).unwrap();
    std::fs::write(
        cases.join("btc.json"),
        json!({"name": "btc", "requests": [
            {"message": "A bitcoin dashboard", "expect": {"minPanels": 1, "types": ["metric_card"]}}
        ]})
        .to_string(),
    )
    .unwrap();
    let out = tokio::process::Command::new(support::program())
        .args(["eval", "--provider", "openai", "--model", "gpt-4.1", "--cases"])
        .arg(&cases)
        .current_dir(dir.path())
        .env("OPENAI_API_KEY", "sk-test")
        .env("OPENAI_BASE_URL", format!("{}/v1", mock.url()))
        .env("BOARDSMITH_WORKERS", "2")
        .env("BOARDSMITH_OFFLINE", "1")
        .env_remove("BOARDSMITH_MODEL")
        .env_remove("BOARDSMITH_CONFIG")
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let row = stdout.lines().find(|l| l.starts_with("btc ")).expect("a row for the request");
    assert!(row.contains(" ok ") && row.contains("1/1"), "{stdout}");
    assert!(stdout.contains("1/1 requests succeeded"), "{stdout}");
    // Tokens as the (mock) provider reported them, read back from chat memory.
    assert!(row.contains(" 2400/160 "), "two model calls of 1200 in, 80 out: {row}");

    let missing = tokio::process::Command::new(support::program())
        .args(["eval", "--provider", "deepseek", "--cases"])
        .arg(&cases)
        .current_dir(dir.path())
        .env_remove("DEEPSEEK_API_KEY")
        .env_remove("BOARDSMITH_MODEL")
        .env_remove("BOARDSMITH_CONFIG")
        .output()
        .await
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("DEEPSEEK_API_KEY"));
}
