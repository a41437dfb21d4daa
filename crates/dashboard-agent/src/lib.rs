//! The dashboard agent: its four tools — `search`, `execute`, `get_state`, `mutate` — with the
//! seed's exact input and output shapes, sessions (the active dashboard and the ones a chat
//! created), the adapters to the agent runtime with the Dashboard Context and fix-round
//! counting (`backend`), and result capping for models (`cap`). Writes go through `dashboards`.
//!
//! A tool call never fails because model-written code failed: such failures are part of the
//! output (`error`, `validation`) so the model can act on them. [`ToolError`] is for callers'
//! mistakes (malformed input, unknown ids) and infrastructure failures.
//! Knows nothing of HTTP; `server` maps [`ToolError`] to status codes.

pub mod backend;
pub mod cap;
pub mod refresh;
mod session;

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use base::principal::Via;
use base::principal::{Author, Principal};
use dashboard::summary::summary;
use dashboard::validate::parse_state;
use dashboard::{ChangeEntry, DashboardState, Issue};
use dashboards::drafts::{Draft, PanelTest, drafter};
use dashboards::sharing::{Denied, Need};
use dashboards::{Dashboards, Edit, Runs};
use live::PanelRun;
use sandbox::{ErrorKind, ExecError, Sandbox};
use store::{Store, StoreError};

pub use session::{DashboardRef, SessionState};

/// The four tools, a closed set: dispatch, argument fields and write accounting match on this,
/// never on strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DashboardTool {
    /// `search {code}`.
    Search,
    /// `execute {code, dashboard_id?}`.
    Execute,
    /// `get_state {dashboard_id?, detail_level?}`.
    GetState,
    /// `mutate {code, dashboard_id?}`.
    Mutate,
}

impl DashboardTool {
    /// All four, in the order they are registered.
    pub const ALL: [Self; 4] = [Self::Search, Self::Execute, Self::GetState, Self::Mutate];

    /// The name models and the REST API use.
    pub fn name(self) -> &'static str {
        match self {
            Self::Search => "search",
            Self::Execute => "execute",
            Self::GetState => "get_state",
            Self::Mutate => "mutate",
        }
    }

    /// The tool called `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Whether a call may write a dashboard (counts as a fix round, emits `dashboard.update`).
    pub fn writes(self) -> bool {
        matches!(self, Self::Execute | Self::Mutate)
    }

    /// The input fields it accepts.
    pub fn fields(self) -> &'static [&'static str] {
        match self {
            Self::Search => &["code"],
            Self::Execute | Self::Mutate => &["code", "dashboard_id"],
            Self::GetState => &["dashboard_id", "detail_level"],
        }
    }
}

/// Input of `search`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchInput {
    /// JS run over the frozen `spec`.
    pub code: String,
}

/// Output of `search`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SearchOutput {
    /// What the code returned (typically `DataSourceMatch[]`).
    pub results: Value,
    /// The code's error, with line and column.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Input of `execute`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecuteInput {
    /// Builder code returning a DashboardState.
    pub code: String,
    /// Replace this dashboard instead of creating a new one.
    #[serde(default)]
    pub dashboard_id: Option<String>,
}

/// Output of `execute`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ExecuteOutput {
    /// The created or replaced dashboard (empty when nothing was saved).
    pub dashboard_id: String,
    /// The saved state (null when nothing was saved).
    pub state: Value,
    /// Test-run results of every panel.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validation: Option<ValidationResult>,
    /// Why nothing was saved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Review mode: the state went into the analyst's draft, not the published dashboard.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub draft: bool,
    /// What was saved (not part of the output).
    #[serde(skip)]
    pub written: Option<Written>,
}

/// What an `execute` or `mutate` wrote, taken from the write itself (never read back, which
/// could see a later writer's version): the content of the `dashboard.update` event.
#[derive(Debug, Clone, PartialEq)]
pub struct Written {
    /// The dashboard.
    pub dashboard_id: String,
    /// The version saved (for a delete: the last version).
    pub version: u64,
    /// What changed from the version before (empty for a delete).
    pub changes: Vec<ChangeEntry>,
    /// The dashboard was deleted.
    pub deleted: bool,
}

/// A call's JSON output and, for a write, what it wrote.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The output (what the model or the REST caller reads).
    pub output: Value,
    /// Set when an `execute` or `mutate` saved or deleted a dashboard.
    pub written: Option<Written>,
}

/// Input of `get_state`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GetStateInput {
    /// Defaults to the session's active dashboard.
    #[serde(default)]
    pub dashboard_id: Option<String>,
    /// `summary` (default) or `full`.
    #[serde(default)]
    pub detail_level: DetailLevel,
}

/// How much `get_state` returns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DetailLevel {
    /// Panel list, key config, code previews.
    #[default]
    Summary,
    /// Everything, including code.
    Full,
}

/// Output of `get_state`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct GetStateOutput {
    /// The dashboard.
    pub dashboard_id: String,
    /// Summary or full state.
    pub state: Value,
    /// Why there is no state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Review mode: this is the analyst's draft, not the published dashboard.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub draft: bool,
}

/// Input of `mutate`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MutateInput {
    /// `async (state) => newState`; returning `null` deletes the dashboard.
    pub code: String,
    /// Defaults to the session's active dashboard.
    #[serde(default)]
    pub dashboard_id: Option<String>,
}

/// Output of `mutate`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct MutateOutput {
    /// The dashboard.
    pub dashboard_id: String,
    /// What changed (empty when nothing did).
    pub changes: Vec<ChangeEntry>,
    /// Test-run results of added and modified panels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validation: Option<ValidationResult>,
    /// True when the code returned null and the dashboard was deleted.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub deleted: bool,
    /// Why nothing was saved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Review mode: the change went into the analyst's draft, not the published dashboard.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub draft: bool,
    /// What was saved or deleted (not part of the output).
    #[serde(skip)]
    pub written: Option<Written>,
}

/// Test-run results.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ValidationResult {
    /// One entry per panel run.
    pub panels: Vec<PanelValidation>,
    /// True when every panel succeeded.
    #[serde(rename = "allOk")]
    pub all_ok: bool,
    /// The alert rules on the panels that ran, judged on these runs' data (a dry run: no
    /// notification). Rules with code are judged on the first scheduled refresh.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub alerts: Vec<AlertDryRun>,
}

/// One alert rule judged on a test run.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct AlertDryRun {
    /// The rule.
    #[serde(rename = "ruleId")]
    pub rule_id: String,
    /// `firing` (its condition holds now), `ok`, `error` (it cannot be judged: fix the rule),
    /// or `later` (code rules, and panels whose run failed).
    pub status: String,
    /// The value judged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// What was seen, or why it cannot be judged.
    pub message: String,
}

/// One panel's test run.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PanelValidation {
    /// The panel.
    #[serde(rename = "panelId")]
    pub panel_id: String,
    /// `success` or `error`.
    pub status: String,
    /// Rows returned.
    #[serde(rename = "rowCount", skip_serializing_if = "Option::is_none")]
    pub row_count: Option<usize>,
    /// The error with its line and column in the panel's code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Run time, e.g. `"12.3ms"`.
    pub duration: String,
}

/// Callers' mistakes and infrastructure failures.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// No tool by that name.
    #[error("unknown tool `{0}`; tools are search, execute, get_state, mutate")]
    UnknownTool(String),
    /// The input does not match the tool's schema.
    #[error("invalid input for `{tool}`: {message}")]
    InvalidInput {
        /// The tool.
        tool: String,
        /// What is wrong.
        message: String,
    },
    /// Storage failure, missing dashboard or a conflict that retries did not resolve.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The caller may not see (answered as missing) or change this dashboard.
    #[error(transparent)]
    Denied(#[from] Denied),
}

/// The tools over the sandbox, store and live layer.
pub struct Tools {
    sandbox: Sandbox,
    dashboards: Arc<Dashboards>,
    sessions: session::Sessions,
    /// The store, for the alert channels' names.
    store: Arc<Store>,
    /// Which chats are in review mode (set once by the app, which makes chats after tools).
    chats: std::sync::OnceLock<Arc<agent::chats::Chats>>,
}

impl std::fmt::Debug for Tools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tools").finish_non_exhaustive()
    }
}

/// `message (line L, column C)` for a model; a provider's failure says first that it is not
/// the code's.
pub fn describe(e: &ExecError) -> String {
    let mut s = match &e.outage {
        Some(o) => format!(
            "data provider failed, not the code ({}: {}); keep the panel, it fills in when the \
             provider answers: {}",
            o.provider, o.summary, e.message
        ),
        None => e.message.clone(),
    };
    if let Some(limit) = e.limit {
        s.push_str(&format!(" [limit: {}]", limit.as_str()));
    }
    if let (Some(l), Some(c)) = (e.line, e.column) {
        s.push_str(&format!(" (line {l}, column {c})"));
    }
    s
}

fn issues_text(issues: &[Issue]) -> String {
    let lines: Vec<String> = issues.iter().map(|i| format!("{}: {}", i.path, i.message)).collect();
    format!("invalid DashboardState:\n{}", lines.join("\n"))
}

/// A state whose panel code does not parse is rejected, naming `panels[i].code`. Every panel
/// whose code is new or changed is test-run, so the runs' syntax errors are the check.
fn syntax_issues(state: &DashboardState, runs: &[(String, PanelRun)]) -> Option<String> {
    let issues: Vec<Issue> = runs
        .iter()
        .filter_map(|(id, run)| {
            let e = run.result.as_ref().err().filter(|e| e.kind == ErrorKind::Syntax)?;
            let i = state.panels.iter().position(|p| &p.id == id)?;
            Some(Issue { path: format!("panels[{i}].code"), message: describe(e) })
        })
        .collect();
    (!issues.is_empty()).then(|| issues_text(&issues))
}

/// The panels a write test-runs: those added or changed, then those whose alert rules were
/// added or changed (so the dry run judges every new rule).
fn to_test(old: &DashboardState, new: &DashboardState, changed: &[String]) -> Vec<String> {
    let mut out = changed.to_vec();
    for r in &new.alerts {
        let same = old.alerts.iter().any(|o| o == r);
        if !same && !out.contains(&r.panel_id) && new.panels.iter().any(|p| p.id == r.panel_id) {
            out.push(r.panel_id.clone());
        }
    }
    out
}

/// Each alert rule on a panel that ran, judged on its data (declarative rules only; `for`
/// and fan-out are the scheduler's).
fn dry_run_alerts(state: &DashboardState, runs: &[(String, PanelRun)]) -> Vec<AlertDryRun> {
    use dashboard::alerts::{When, judge};
    state
        .alerts
        .iter()
        .filter_map(|rule| {
            let (_, run) = runs.iter().find(|(id, _)| *id == rule.panel_id)?;
            let panel = state.panels.iter().find(|p| p.id == rule.panel_id)?;
            let dry = |status: &str, value, message: String| AlertDryRun {
                rule_id: rule.id.clone(),
                status: status.to_owned(),
                value,
                message,
            };
            Some(match (&rule.when, &run.result) {
                (_, Err(_)) => {
                    dry("later", None, "the panel's run failed; judged once it runs".into())
                }
                (When::Code(_), Ok(_)) => {
                    dry("later", None, "rule code runs on the first scheduled refresh".into())
                }
                (When::Condition(c), Ok(ok)) => match judge(c, panel.kind, &ok.data, None) {
                    Ok(r) => dry(if r.firing { "firing" } else { "ok" }, r.value, r.message),
                    Err(e) => dry("error", None, e),
                },
            })
        })
        .collect()
}

fn validation(state: &DashboardState, runs: &[(String, PanelRun)]) -> ValidationResult {
    let panels: Vec<PanelValidation> = runs
        .iter()
        .map(|(id, run)| PanelValidation {
            panel_id: id.clone(),
            status: if run.result.is_ok() { "success" } else { "error" }.to_owned(),
            row_count: run.result.as_ref().ok().map(|o| o.row_count),
            error: run.result.as_ref().err().map(describe),
            duration: format!("{:.1}ms", run.duration.as_secs_f64() * 1e3),
        })
        .collect();
    let all_ok = panels.iter().all(|p| p.status == "success");
    ValidationResult { panels, all_ok, alerts: dry_run_alerts(state, runs) }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

impl Tools {
    /// Builds the tools.
    pub fn new(sandbox: Sandbox, store: Arc<Store>, dashboards: Arc<Dashboards>) -> Self {
        let chats = std::sync::OnceLock::new();
        Self { sessions: session::Sessions::new(store.clone()), store, sandbox, dashboards, chats }
    }

    /// Lets chats in review mode make drafts (without: only dashboards in review mode do).
    pub fn set_chats(&self, chats: Arc<agent::chats::Chats>) {
        let _ = self.chats.set(chats);
    }

    /// Whether a write `by` of dashboard `id` goes into a draft: an agent's or an MCP
    /// client's write, while the dashboard or the agent's chat is in review mode.
    async fn drafting(&self, id: &str, by: &Author) -> Result<bool, ToolError> {
        if !matches!(by.via, Via::Agent | Via::Mcp) {
            return Ok(false);
        }
        if self.dashboards.drafts().reviewing(id).await? {
            return Ok(true);
        }
        match (&by.chat, self.chats.get()) {
            (Some(chat), Some(chats)) => Ok(chats.in_review(chat).await.unwrap_or_else(|e| {
                tracing::warn!(%chat, error = %e, "reading a chat's review mode failed");
                false
            })),
            _ => Ok(false),
        }
    }

    /// Puts `state` (tested by `runs`) into `who`'s draft of the dashboard `head` is the
    /// published version of, starting the draft from `head` when there is none.
    async fn put_draft(
        &self,
        head: &store::DashboardRecord,
        existing: Option<Draft>,
        state: DashboardState,
        runs: &[(String, PanelRun)],
        who: &Principal,
        by: &Author,
    ) -> Result<(), ToolError> {
        let now = now_ms();
        let mut draft = existing.unwrap_or_else(|| Draft {
            dashboard_id: head.id.clone(),
            drafter: drafter(who),
            base_version: head.version,
            base: head.state.clone(),
            state: head.state.clone(),
            author: by.clone(),
            created_at: now,
            updated_at: now,
            tests: Default::default(),
        });
        draft.state = state;
        draft.author = by.clone();
        draft.updated_at = now;
        for (panel, run) in runs {
            draft.tests.insert(panel.clone(), PanelTest::of(run));
        }
        let changed = dashboard::merge::changed_panels(&draft.base, &draft.state);
        draft.tests.retain(|p, _| changed.contains(p));
        self.dashboards.drafts().put(&draft).await?;
        Ok(())
    }

    /// Dispatches a call by tool name with JSON input; the output as JSON.
    #[base::boxed]
    pub async fn call(
        &self,
        tool: &str,
        input: Value,
        session: Option<&str>,
        who: &Principal,
        by: &Author,
    ) -> Result<Value, ToolError> {
        let tool = DashboardTool::from_name(tool)
            .ok_or_else(|| ToolError::UnknownTool(tool.to_owned()))?;
        Ok(self.call_tool(tool, input, session, who, by).await?.output)
    }

    /// [`Tools::call`] for a known tool, with what it wrote. `who` acts: it sees and changes
    /// only the dashboards `dashboards::sharing` lets it, and a dashboard `execute` makes is
    /// its person's; the versions it saves say `by` made them.
    #[base::boxed]
    pub async fn call_tool(
        &self,
        tool: DashboardTool,
        input: Value,
        session: Option<&str>,
        who: &Principal,
        by: &Author,
    ) -> Result<Answer, ToolError> {
        fn parse<T: serde::de::DeserializeOwned>(
            tool: DashboardTool,
            input: Value,
        ) -> Result<T, ToolError> {
            serde_json::from_value(input).map_err(|e| ToolError::InvalidInput {
                tool: tool.name().to_owned(),
                message: e.to_string(),
            })
        }
        let (out, written) = match tool {
            DashboardTool::Search => {
                (serde_json::to_value(self.search(parse(tool, input)?).await), None)
            }
            DashboardTool::Execute => {
                let mut out = self.execute(parse(tool, input)?, session, who, by).await?;
                let written = out.written.take();
                (serde_json::to_value(out), written)
            }
            DashboardTool::GetState => {
                let out = self.get_state(parse(tool, input)?, session, who, by).await?;
                (serde_json::to_value(out), None)
            }
            DashboardTool::Mutate => {
                let mut out = self.mutate(parse(tool, input)?, session, who, by).await?;
                let written = out.written.take();
                (serde_json::to_value(out), written)
            }
        };
        Ok(Answer { output: out.unwrap_or(Value::Null), written })
    }

    /// [`Tools::call`] with the output capped for a model's context ([`cap::cap`], default
    /// [`cap::DEFAULT_MAX_TOKENS`]): what the agent sends back to the model.
    #[base::boxed]
    pub async fn call_for_model(
        &self,
        tool: DashboardTool,
        input: Value,
        session: Option<&str>,
        who: &Principal,
        by: &Author,
    ) -> Result<Answer, ToolError> {
        let answer = self.call_tool(tool, input, session, who, by).await?;
        Ok(Answer { output: cap::cap(&answer.output, cap::DEFAULT_MAX_TOKENS), ..answer })
    }

    /// The session's state.
    #[base::boxed]
    pub async fn session(&self, session: Option<&str>) -> Result<SessionState, ToolError> {
        Ok(self.sessions.get(session).await?)
    }

    /// `search`: runs the code over the spec.
    #[base::boxed]
    pub async fn search(&self, input: SearchInput) -> SearchOutput {
        match self.sandbox.run_search(&input.code).await {
            Ok(out) => SearchOutput { results: out.value, error: None },
            Err(e) => SearchOutput { results: Value::Array(Vec::new()), error: Some(describe(&e)) },
        }
    }

    /// Runs builder code (on a copy of `head` for mutate) and validates the result as a
    /// DashboardState. `Ok(None)`: a mutate returned null. `Err` is the model-facing message.
    /// Panel code syntax is checked by the test runs that follow (see [`syntax_issues`]).
    async fn build(
        &self,
        code: &str,
        head: Option<&DashboardState>,
    ) -> Result<Option<DashboardState>, String> {
        let input = head.map(|h| serde_json::to_value(h).unwrap_or(Value::Null));
        let out = self.sandbox.run_builder(code, input.as_ref()).await.map_err(|e| describe(&e))?;
        if head.is_some() && out.value.is_null() {
            return Ok(None);
        }
        let state = parse_state(&out.value).map_err(|e| issues_text(&e.0))?;
        if state.alerts.iter().any(|r| !r.notify.is_empty()) {
            // Channels are admins' configuration, read from the store (their ids are names).
            let names: Vec<String> = match self.store.records_with_ids(store::Record::Channel).await
            {
                Ok(rows) => rows.into_iter().map(|(id, _)| id).collect(),
                Err(e) => return Err(format!("cannot read the alert channels: {e}")),
            };
            let unknown = dashboard::validate::unknown_channels(&state, &names);
            if !unknown.is_empty() {
                return Err(issues_text(&unknown));
            }
        }
        Ok(Some(state))
    }

    /// Test-runs the given panels concurrently.
    async fn test_run(
        &self,
        id: &str,
        state: &DashboardState,
        ids: &[String],
    ) -> Vec<(String, PanelRun)> {
        self.dashboards.live().run_panels(id, state, ids).await
    }

    /// `execute`: builds a state, validates it, test-runs every panel, saves (new dashboard, or
    /// a new version of `dashboard_id`), pushes to subscribers and makes it the active one.
    #[base::boxed]
    pub async fn execute(
        &self,
        input: ExecuteInput,
        session: Option<&str>,
        who: &Principal,
        by: &Author,
    ) -> Result<ExecuteOutput, ToolError> {
        let fail = |id: &str, error: String| ExecuteOutput {
            dashboard_id: id.to_owned(),
            state: Value::Null,
            validation: None,
            error: Some(error),
            draft: false,
            written: None,
        };
        let existing = match &input.dashboard_id {
            Some(id) => {
                self.dashboards.may(who, id, Need::Edit)?;
                Some(self.dashboards.get(id).await?)
            }
            None => None,
        };
        let target = input.dashboard_id.clone().unwrap_or_default();
        let state = match self.build(&input.code, None).await {
            Ok(Some(s)) => s,
            Ok(None) => return Ok(fail(&target, "the code returned nothing".into())),
            Err(e) => return Ok(fail(&target, e)),
        };
        let id = input.dashboard_id.clone().unwrap_or_else(store::new_dashboard_id);
        let all: Vec<String> = state.panels.iter().map(|p| p.id.clone()).collect();
        let runs = self.test_run(&id, &state, &all).await;
        if let Some(e) = syntax_issues(&state, &runs) {
            return Ok(fail(&target, e));
        }
        let mut output = ExecuteOutput {
            dashboard_id: id.clone(),
            state: serde_json::to_value(&state).unwrap_or(Value::Null),
            validation: Some(validation(&state, &runs)),
            error: None,
            draft: false,
            written: None,
        };
        let title = state.title.clone();
        if let Some(head) = &existing
            && self.drafting(&id, by).await?
        {
            if head.deleted {
                return Err(StoreError::Deleted(id).into());
            }
            let mine = self.dashboards.drafts().get(&id, &drafter(who)).await?;
            self.put_draft(head, mine, state, &runs, who, by).await?;
            self.sessions.touch(session, &id, &title).await?;
            output.draft = true;
            return Ok(output);
        }
        let (version, changes) = match existing {
            None => {
                let empty =
                    DashboardState { panels: Vec::new(), alerts: Vec::new(), ..state.clone() };
                let changes = dashboard::diff::changes(&empty, &state);
                let version =
                    self.dashboards.create(Some(&id), state, "execute", by, runs).await?.version;
                self.dashboards.claim(who, &id).await?;
                (version, changes)
            }
            Some(_) => {
                let lock = self.dashboards.lock(&id).await?;
                let head = self.dashboards.get(&id).await?;
                if head.deleted {
                    return Err(StoreError::Deleted(id).into());
                }
                let edit = Edit::new(head, state);
                let saved =
                    self.dashboards.save(&lock, edit, "execute", by, Runs::Given(runs)).await?;
                (saved.record.version, saved.diff.changes)
            }
        };
        output.written =
            Some(Written { dashboard_id: id.clone(), version, changes, deleted: false });
        self.sessions.touch(session, &id, &title).await?;
        Ok(output)
    }

    async fn resolve(
        &self,
        given: Option<&str>,
        session: Option<&str>,
    ) -> Result<Result<String, String>, ToolError> {
        if let Some(id) = given {
            return Ok(Ok(id.to_owned()));
        }
        let s = self.sessions.get(session).await?;
        Ok(s.active.ok_or_else(|| {
            "no active dashboard in this session: create one with `execute`, or pass `dashboard_id`".to_owned()
        }))
    }

    /// `get_state`: the summary (default) or the full state; makes the dashboard active.
    #[base::boxed]
    pub async fn get_state(
        &self,
        input: GetStateInput,
        session: Option<&str>,
        who: &Principal,
        by: &Author,
    ) -> Result<GetStateOutput, ToolError> {
        let id = match self.resolve(input.dashboard_id.as_deref(), session).await? {
            Ok(id) => id,
            Err(e) => {
                return Ok(GetStateOutput {
                    dashboard_id: String::new(),
                    state: Value::Null,
                    error: Some(e),
                    draft: false,
                });
            }
        };
        self.dashboards.may(who, &id, Need::View)?;
        let rec = self.dashboards.get(&id).await?;
        if rec.deleted {
            return Err(StoreError::Deleted(id).into());
        }
        // In review mode the agent goes on from its draft, not from the published version.
        let draft = match self.drafting(&id, by).await? {
            true => self.dashboards.drafts().get(&id, &drafter(who)).await?,
            false => None,
        };
        let current = draft.as_ref().map_or(&rec.state, |d| &d.state);
        self.sessions.touch(session, &id, &current.title).await?;
        let state = match input.detail_level {
            DetailLevel::Summary => summary(current),
            DetailLevel::Full => serde_json::to_value(current).unwrap_or(Value::Null),
        };
        Ok(GetStateOutput { dashboard_id: id, state, error: None, draft: draft.is_some() })
    }

    /// `mutate`: applies `async (state) => newState` to a copy of the current state, diffs,
    /// validates, test-runs changed panels, saves, pushes — all under the dashboard's writer
    /// lock, so no other write (REST, revert, another agent) lands in between.
    #[base::boxed]
    pub async fn mutate(
        &self,
        input: MutateInput,
        session: Option<&str>,
        who: &Principal,
        by: &Author,
    ) -> Result<MutateOutput, ToolError> {
        let out = |id: &str| MutateOutput {
            dashboard_id: id.to_owned(),
            changes: Vec::new(),
            validation: None,
            deleted: false,
            error: None,
            draft: false,
            written: None,
        };
        let id = match self.resolve(input.dashboard_id.as_deref(), session).await? {
            Ok(id) => id,
            Err(e) => return Ok(MutateOutput { error: Some(e), ..out("") }),
        };
        self.dashboards.may(who, &id, Need::Edit)?;
        if self.drafting(&id, by).await? {
            return self.mutate_draft(&id, &input.code, session, who, by).await;
        }
        // Under the writer lock nobody else saves this dashboard: the head read here stays
        // the base of the save.
        let lock = self.dashboards.lock(&id).await?;
        let head = self.dashboards.get(&id).await?;
        if head.deleted {
            return Err(StoreError::Deleted(id).into());
        }
        let new = match self.build(&input.code, Some(&head.state)).await {
            Ok(Some(s)) => s,
            Ok(None) => {
                let version = head.version;
                drop(lock);
                self.dashboards.delete(&id, false).await?;
                self.sessions.forget(session, &id).await?;
                let written = Written {
                    dashboard_id: id.clone(),
                    version,
                    changes: Vec::new(),
                    deleted: true,
                };
                return Ok(MutateOutput { deleted: true, written: Some(written), ..out(&id) });
            }
            Err(e) => return Ok(MutateOutput { error: Some(e), ..out(&id) }),
        };
        let edit = Edit::new(head, new);
        if edit.diff.is_empty() {
            self.sessions.touch(session, &id, &edit.after.title).await?;
            return Ok(out(&id));
        }
        let panels = to_test(&edit.before.state, &edit.after, &edit.diff.changed);
        let runs = self.test_run(&id, &edit.after, &panels).await;
        if let Some(e) = syntax_issues(&edit.after, &runs) {
            return Ok(MutateOutput { error: Some(e), ..out(&id) });
        }
        let title = edit.after.title.clone();
        let saved = self.dashboards.save(&lock, edit, "mutate", by, Runs::Given(runs)).await?;
        drop(lock);
        self.sessions.touch(session, &id, &title).await?;
        let written = Written {
            dashboard_id: id.clone(),
            version: saved.record.version,
            changes: saved.diff.changes.clone(),
            deleted: false,
        };
        Ok(MutateOutput {
            changes: saved.diff.changes,
            validation: Some(validation(&saved.record.state, &saved.runs)),
            written: Some(written),
            ..out(&id)
        })
    }

    /// `mutate` in review mode: applies the code to the caller's draft (or, with none, to the
    /// published state), test-runs the changed panels and keeps the result as the draft.
    /// Returning null (deleting) is refused: a draft cannot delete a dashboard.
    async fn mutate_draft(
        &self,
        id: &str,
        code: &str,
        session: Option<&str>,
        who: &Principal,
        by: &Author,
    ) -> Result<MutateOutput, ToolError> {
        let out = MutateOutput {
            dashboard_id: id.to_owned(),
            changes: Vec::new(),
            validation: None,
            deleted: false,
            error: None,
            draft: true,
            written: None,
        };
        let head = self.dashboards.get(id).await?;
        if head.deleted {
            return Err(StoreError::Deleted(id.to_owned()).into());
        }
        let mine = self.dashboards.drafts().get(id, &drafter(who)).await?;
        let current = mine.as_ref().map_or(&head.state, |d| &d.state).clone();
        let new = match self.build(code, Some(&current)).await {
            Ok(Some(s)) => s,
            Ok(None) => {
                let e = "this dashboard is in review mode: the agent's changes are a draft, and a draft cannot delete the dashboard; ask the analyst to delete it";
                return Ok(MutateOutput { error: Some(e.into()), ..out });
            }
            Err(e) => return Ok(MutateOutput { error: Some(e), ..out }),
        };
        let diff = dashboard::diff::Diff::between(&current, &new);
        if diff.is_empty() {
            self.sessions.touch(session, id, &new.title).await?;
            return Ok(out);
        }
        let runs = self.test_run(id, &new, &to_test(&current, &new, &diff.changed)).await;
        if let Some(e) = syntax_issues(&new, &runs) {
            return Ok(MutateOutput { error: Some(e), ..out });
        }
        let title = new.title.clone();
        let checked = validation(&new, &runs);
        self.put_draft(&head, mine, new, &runs, who, by).await?;
        self.sessions.touch(session, id, &title).await?;
        Ok(MutateOutput { changes: diff.changes, validation: Some(checked), ..out })
    }
}
