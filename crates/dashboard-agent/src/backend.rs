//! The four dashboard tools as agent [`BackendTool`]s, and the `dashboard.update` payload.
//!
//! Each adapter checks the model's arguments (errors name the field), then calls
//! [`Tools::call_for_model`] with the chat as the session: a chat's dashboards and its active
//! one persist with the chat (and survive restarts, since sessions live in the store). The
//! result is exactly what the model sees — model-code failures (`error`, `validation`) are part
//! of it; only callers' mistakes (bad arguments, unknown or deleted `dashboard_id`) and
//! infrastructure failures are [`ToolError`]s.
//!
//! Definitions (descriptions, JSON-Schema parameters, worked examples) live in
//! `builtin/tools/dashboard.backend`; the agents are `builtin/agents/dashboard.json` and
//! `builtin/agents/dashboardZh.json`.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Map, Value, json};

use super::{Answer, DashboardTool, ToolError as DashboardToolError, Tools, Written};
use agent::definition::AgentDefinition;
use agent::events::EventBody;
use agent::run::ContextSource;
use agent::tools::{Args, BackendTool, BackendTools, ToolContext, ToolError, ToolReply};
use base::principal::{Author, Principal};
use base::provenance::any_demo;
use dashboard::summary::context_line;
use store::StoreError;

/// Checks the arguments of `tool` and returns the input [`Tools::call`] expects: only the
/// declared fields, `null` and blank `dashboard_id` dropped. Unknown fields are refused (a
/// misspelt `dashboardId` must not silently act on the active dashboard). The MCP server
/// checks its callers' arguments with this too.
pub fn input(tool: DashboardTool, args: &Value) -> Result<Value, ToolError> {
    let a = Args::new(tool.name(), args)?;
    let allowed = tool.fields();
    if let Some((k, _)) = a.fields().find(|(k, _)| !allowed.contains(&k.as_str())) {
        return Err(a.error(format!(
            "unknown field \"{k}\"; the fields are {}",
            allowed.iter().map(|f| format!("\"{f}\"")).collect::<Vec<_>>().join(", ")
        )));
    }
    let mut out = Map::new();
    if allowed.contains(&"code") {
        out.insert("code".into(), json!(a.req_str("code")?));
    }
    match a.get("dashboard_id") {
        None => {}
        Some(Value::String(s)) if s.trim().is_empty() => {}
        Some(Value::String(s)) => {
            out.insert("dashboard_id".into(), json!(s.trim()));
        }
        Some(v) => {
            return Err(a.error(format!(
                "\"dashboard_id\" must be a string, got {}",
                agent::tools::type_name(v)
            )));
        }
    }
    if allowed.contains(&"detail_level") {
        match a.get("detail_level") {
            None => {}
            Some(Value::String(s)) if matches!(s.as_str(), "summary" | "full") => {
                out.insert("detail_level".into(), json!(s));
            }
            Some(v) => {
                return Err(
                    a.error(format!("\"detail_level\" must be \"summary\" or \"full\", got {v}"))
                );
            }
        }
    }
    Ok(Value::Object(out))
}

/// A dashboard-tool failure as an agent tool error (callers' mistakes as `invalid`, with what
/// to do instead).
pub fn tool_error(tool: &str, e: DashboardToolError) -> ToolError {
    match e {
        DashboardToolError::InvalidInput { message, .. } => ToolError::invalid(tool, message),
        DashboardToolError::Store(e @ (StoreError::NotFound(_) | StoreError::Deleted(_))) => {
            ToolError::invalid(
                tool,
                format!(
                    "\"dashboard_id\": {e}; omit it for the active dashboard, or use an id this \
                     chat created"
                ),
            )
        }
        // The model can shrink its state (fetch data in panel code instead of embedding it).
        DashboardToolError::Store(e @ StoreError::TooLarge { .. }) => {
            ToolError::invalid(tool, e.to_string())
        }
        other => ToolError::failed(tool, other),
    }
}

/// Default cap on fix rounds per run (`DASHBOARD_MAX_FIX_ROUNDS`).
pub const DEFAULT_MAX_FIX_ROUNDS: u32 = 3;

/// The validation loop's cap. A run's execute/mutate results that failed (an `error`, or a
/// panel that did not validate) since its last all-ok result are counted; the first failure is
/// the one to fix, each further one a fix round that did not work. Failing results say how
/// many rounds are left; when none are, the result says to stop and report, and further
/// execute/mutate calls of that run are refused with the same instruction.
#[derive(Debug)]
struct FixRounds {
    max: u32,
    /// Failures since the last success, by run; entries of runs idle for an hour are dropped.
    runs: std::sync::Mutex<std::collections::HashMap<String, (u32, std::time::Instant)>>,
}

impl FixRounds {
    fn failures(&self, run_id: &str) -> u32 {
        self.lock().get(run_id).map_or(0, |(n, _)| *n)
    }

    fn exhausted_message(&self) -> String {
        format!(
            "fix-round cap reached (at most {} per turn): do not call execute or mutate again in this \
             turn; answer the user now, saying which panels work and which still fail, with \
             their errors",
            self.max
        )
    }

    /// Counts a result; adds `fix_rounds_left` (and the stop instruction at 0) to a failing one.
    fn record(&self, run_id: &str, out: &mut Value) {
        let failed = out.get("error").is_some_and(|e| !e.is_null())
            || out.pointer("/validation/allOk") == Some(&Value::Bool(false));
        let n = {
            let mut runs = self.lock();
            let now = std::time::Instant::now();
            runs.retain(|_, (_, at)| now.duration_since(*at).as_secs() < 3600);
            let entry = runs.entry(run_id.to_owned()).or_insert((0, now));
            *entry = if failed { (entry.0 + 1, now) } else { (0, now) };
            entry.0
        };
        if let (true, Value::Object(o)) = (failed, out) {
            let left = (self.max + 1).saturating_sub(n);
            o.insert("fix_rounds_left".into(), json!(left));
            if left == 0 {
                o.insert("note".into(), json!(self.exhausted_message()));
            }
        }
    }

    fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, (u32, std::time::Instant)>>
    {
        self.runs.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// What the four adapters share.
#[derive(Debug)]
struct Shared {
    tools: Arc<Tools>,
    fixes: FixRounds,
}

/// Runs one dashboard tool for a chat: arguments checked, session = `ctx.chat_id`, result =
/// [`Tools::call_for_model`], execute/mutate results counted against the fix-round cap, and a
/// `dashboard.update` event for what a write saved.
fn run(
    shared: &Arc<Shared>,
    tool: DashboardTool,
    args: Value,
    ctx: &ToolContext,
) -> BoxFuture<'static, Result<ToolReply, ToolError>> {
    let shared = shared.clone();
    let session = ctx.chat_id.clone();
    let run_id = ctx.run_id.clone();
    // The run acts for its person; a run for no one (a workflow, the token) for the owner.
    let who = ctx.principal.clone().unwrap_or(Principal::Owner);
    let by = Author::agent(&who, &ctx.chat_id);
    Box::pin(async move {
        let input = input(tool, &args)?;
        let writes = tool.writes();
        if writes && shared.fixes.failures(&run_id) > shared.fixes.max {
            return Err(ToolError::invalid(tool.name(), shared.fixes.exhausted_message()));
        }
        let session = (!session.is_empty()).then_some(session);
        let Answer { mut output, written } = shared
            .tools
            .call_for_model(tool, input, session.as_deref(), &who, &by)
            .await
            .map_err(|e| tool_error(tool.name(), e))?;
        if writes {
            shared.fixes.record(&run_id, &mut output);
        }
        let events = written.map(|w| dashboard_update(&output, &w)).into_iter().collect();
        Ok(ToolReply { result: output, events })
    })
}

macro_rules! adapter {
    ($(#[$doc:meta])* $ty:ident, $tool:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        pub struct $ty {
            shared: Arc<Shared>,
        }

        impl BackendTool for $ty {
            fn name(&self) -> &str {
                $tool.name()
            }

            fn call(
                &self,
                args: Value,
                ctx: ToolContext,
            ) -> BoxFuture<'static, Result<Value, ToolError>> {
                let fut = run(&self.shared, $tool, args, &ctx);
                Box::pin(async move { fut.await.map(|r| r.result) })
            }

            fn call_with_events(
                &self,
                args: Value,
                ctx: ToolContext,
            ) -> BoxFuture<'static, Result<ToolReply, ToolError>> {
                run(&self.shared, $tool, args, &ctx)
            }

            fn condense(&self, result: &str) -> Option<String> {
                condense($tool, result)
            }
        }
    };
}

adapter!(
    /// `search {code}`: runs the model's code over the data-source spec.
    SearchTool,
    DashboardTool::Search
);
adapter!(
    /// `execute {code, dashboard_id?}`: builds, validates, test-runs and saves a dashboard in the
    /// chat's session (it becomes the chat's active dashboard).
    ExecuteTool,
    DashboardTool::Execute
);
adapter!(
    /// `get_state {dashboard_id?, detail_level?}`: reads a dashboard and makes it the chat's
    /// active one.
    GetStateTool,
    DashboardTool::GetState
);
adapter!(
    /// `mutate {code, dashboard_id?}`: applies `async (state) => newState` (null deletes).
    MutateTool,
    DashboardTool::Mutate
);

/// An earlier run's execute/mutate result as the model sees it again: the outcome (id, error,
/// deleted), what changed (one line per change) and the validation, without the state and code
/// (the model's own code stays in the call's arguments). Search and get_state results are
/// replayed whole: they are short and the model may build on them.
fn condense(tool: DashboardTool, result: &str) -> Option<String> {
    if !tool.writes() {
        return None;
    }
    let Ok(Value::Object(mut out)) = serde_json::from_str::<Value>(result) else {
        return None;
    };
    if let Some(state) = out.remove("state").filter(|s| s.is_object()) {
        let panels: Vec<Value> = state["panels"]
            .as_array()
            .map(|ps| {
                ps.iter()
                    .map(|p| json!({"id": p["id"], "title": p["title"], "type": p["type"]}))
                    .collect()
            })
            .unwrap_or_default();
        out.insert("summary".into(), json!({"title": state["title"], "panels": panels}));
    }
    if let Some(Value::Array(changes)) = out.get_mut("changes") {
        for c in changes {
            if let Some(Value::String(d)) = c.get_mut("detail") {
                let first = d.split('\n').next().unwrap_or_default().to_owned();
                *d = first;
            }
        }
    }
    if let Some(Value::Array(panels)) = out.get_mut("validation").and_then(|v| v.get_mut("panels"))
    {
        for p in panels {
            if let Value::Object(p) = p {
                p.remove("duration");
            }
        }
    }
    Some(Value::Object(out).to_string())
}

/// The seed's "Dashboard Context" for agents with the dashboard tools: before every model call,
/// the chat's active dashboard (title, id, panel ids, titles and types, variables) and the
/// other dashboards the chat made, so the model rarely needs `get_state`.
#[derive(Debug, Clone)]
pub struct DashboardContext {
    tools: Arc<Tools>,
}

impl DashboardContext {
    /// The context over the app's tools.
    pub fn new(tools: Arc<Tools>) -> Self {
        Self { tools }
    }

    /// The context text of a chat (`None` when its session cannot be read).
    #[base::boxed]
    pub async fn text(&self, chat_id: &str) -> Option<String> {
        let session = self.tools.session(Some(chat_id)).await.ok()?;
        let mut text = String::from("Dashboard Context\n");
        let active = match &session.active {
            Some(id) => self.tools.dashboards.get(id).await.ok().filter(|r| !r.deleted),
            None => None,
        };
        match &active {
            Some(rec) => {
                text.push_str(&context_line(&rec.id, &rec.state));
                // The panels whose last data was invented, so the model never passes it off
                // as real (the web app badges them DEMO DATA).
                let slots = self.tools.dashboards.live().slots(&rec.id);
                let demo: Vec<&str> = rec
                    .state
                    .panels
                    .iter()
                    .filter(|p| slots.get(&p.id).is_some_and(|s| any_demo(&s.provenance)))
                    .map(|p| p.id.as_str())
                    .collect();
                if !demo.is_empty() {
                    text.push_str(&format!(
                        "\nDemo data (invented numbers, not market data; tell the user): {}",
                        demo.join(", ")
                    ));
                }
            }
            None => text.push_str(
                "No active dashboard in this chat yet: `execute` creates one (it becomes active).",
            ),
        }
        let others: Vec<String> = session
            .dashboards
            .iter()
            .filter(|d| Some(&d.id) != active.as_ref().map(|r| &r.id))
            .map(|d| format!("{:?} ({})", d.title, d.id))
            .collect();
        if !others.is_empty() {
            text.push_str("\nOther dashboards of this chat (pass `dashboard_id` to work on one): ");
            text.push_str(&others.join(", "));
        }
        Some(text)
    }
}

impl ContextSource for DashboardContext {
    fn applies(&self, agent: &AgentDefinition) -> bool {
        agent.tools.iter().any(|t| DashboardTool::from_name(t).is_some())
    }

    fn context<'a>(&'a self, chat_id: &'a str) -> BoxFuture<'a, Option<String>> {
        Box::pin(self.text(chat_id))
    }
}

/// Registers the four adapters ([`DashboardTool::ALL`]) over `tools`, sharing one fix-round
/// count with cap `max_fix_rounds` (see the validation loop in ARCHITECTURE.md).
pub fn register_all(registry: &mut BackendTools, tools: &Arc<Tools>, max_fix_rounds: u32) {
    let shared = Arc::new(Shared {
        tools: tools.clone(),
        fixes: FixRounds { max: max_fix_rounds, runs: std::sync::Mutex::default() },
    });
    registry.register(Arc::new(SearchTool { shared: shared.clone() }));
    registry.register(Arc::new(ExecuteTool { shared: shared.clone() }));
    registry.register(Arc::new(GetStateTool { shared: shared.clone() }));
    registry.register(Arc::new(MutateTool { shared }));
}

/// The `dashboard.update` event of a write: its version and changes (code diffs dropped: the
/// chat shows one line per change) and the validation from the tool's `output`.
pub fn dashboard_update(output: &Value, written: &Written) -> EventBody {
    let changes: Vec<_> = written.changes.iter().map(|c| c.without_code_diff()).collect();
    EventBody::DashboardUpdate {
        dashboard_id: written.dashboard_id.clone(),
        version: written.version,
        changes: json!(changes),
        validation: if written.deleted {
            Value::Null
        } else {
            output.get("validation").cloned().unwrap_or(Value::Null)
        },
        deleted: written.deleted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_checks_name_the_field() {
        let tool = |name: &str| DashboardTool::from_name(name).unwrap();
        let err = |name: &str, v: Value| input(tool(name), &v).unwrap_err().to_string();
        assert!(err("execute", json!({})).contains("\"code\" is required"));
        assert!(err("mutate", json!({"code": 3})).contains("\"code\" must be a string"));
        assert!(
            err("mutate", json!({"code": "x", "dashboardId": "db"}))
                .contains("unknown field \"dashboardId\"")
        );
        assert!(err("get_state", json!({"detail_level": "all"})).contains("\"detail_level\""));
        assert!(
            err("execute", json!({"code": "x", "dashboard_id": 1})).contains("\"dashboard_id\"")
        );
        assert!(err("search", json!("code")).contains("JSON object"));
        assert_eq!(
            input(tool("execute"), &json!({"code": "return 1", "dashboard_id": " "})).unwrap(),
            json!({"code": "return 1"})
        );
        assert_eq!(input(tool("get_state"), &Value::Null).unwrap(), json!({}));
        assert_eq!(
            input(tool("get_state"), &json!({"dashboard_id": "db_1", "detail_level": "full"}))
                .unwrap(),
            json!({"dashboard_id": "db_1", "detail_level": "full"})
        );
    }

    #[test]
    fn tool_names_round_trip_and_only_execute_and_mutate_write() {
        for t in DashboardTool::ALL {
            assert_eq!(DashboardTool::from_name(t.name()), Some(t));
        }
        assert_eq!(DashboardTool::from_name("Search"), None);
        let writers: Vec<_> = DashboardTool::ALL.into_iter().filter(|t| t.writes()).collect();
        assert_eq!(writers, [DashboardTool::Execute, DashboardTool::Mutate]);
    }
}
