//! Backend tool executors: the [`BackendTool`] trait, the [`BackendTools`] registry with the
//! built-ins (`bash`, `city_datetime`, `mock_city_weather`, `agent_file_create`), argument
//! checking, and the [`FrontendSubmits`] hub that parks a frontend tool until the user answers.
//!
//! Owns what a tool *does*. Tool *definitions* (name, description, JSON-Schema parameters) are
//! loaded from `tools/*.backend` by the catalog; executors check the arguments they need
//! themselves, so a model's mistake comes back as a [`ToolError`] it can act on
//! (`"city" is required`). Parameter templates (`{{city_datetime.date+1d}}`) are resolved before
//! a call by the run loop ([`crate::template`]). Knows nothing of HTTP, SSE or the run
//! loop's modes.

pub mod agent_file;
pub mod bash;
pub mod city_datetime;
pub mod mcp;
pub mod mock_weather;
pub mod submit;

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use futures::future::BoxFuture;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::definition::AgentDefinition;
pub use agent_file::AgentFileCreate;
pub use bash::{BashConfig, BashOutput, BashTool};
pub use city_datetime::{CityDatetime, CityZone, lookup_city};
pub use mock_weather::MockCityWeather;
pub use submit::{FrontendSubmits, PendingSubmit, SubmitError};

/// Names of the built-in executors, as [`BackendTools::builtin`] registers them.
pub const BUILTIN_TOOLS: [&str; 4] =
    ["bash", "city_datetime", "mock_city_weather", "agent_file_create"];

/// A tool the server executes. Object safe, so executors live as `Arc<dyn BackendTool>`.
pub trait BackendTool: Send + Sync + 'static {
    /// The name the model calls it by (matches the `.backend` definition).
    fn name(&self) -> &str;
    /// Runs one call. `args` are the model's arguments after template resolution. A returned
    /// future that is dropped must stop the work (the registry drops it on cancellation).
    fn call(&self, args: Value, ctx: ToolContext) -> BoxFuture<'static, Result<Value, ToolError>>;

    /// [`BackendTool::call`] with the events the run streams right after this call's
    /// `tool.result` (e.g. `dashboard.update`, so a chat client can open what the call
    /// changed). They come from the call itself, so they describe what it did and not what
    /// another writer did since. Default: the result alone.
    fn call_with_events(
        &self,
        args: Value,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<ToolReply, ToolError>> {
        let fut = self.call(args, ctx);
        Box::pin(async move { fut.await.map(ToolReply::from) })
    }

    /// How a result of this tool from an earlier run is replayed to the model (`result` as
    /// stored); `None`: unchanged. Lets bulky results (a whole dashboard state) shrink to what
    /// later turns need.
    fn condense(&self, _result: &str) -> Option<String> {
        None
    }
}

/// A call's answer: the result the model reads and the events that follow it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolReply {
    /// The result (the `tool.result` payload and what the model reads).
    pub result: Value,
    /// Streamed right after the `tool.result`.
    pub events: Vec<super::events::EventBody>,
}

impl From<Value> for ToolReply {
    fn from(result: Value) -> Self {
        Self { result, events: Vec::new() }
    }
}

/// What an executor knows about the call besides its arguments.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The run making the call.
    pub run_id: String,
    /// The chat the run belongs to.
    pub chat_id: String,
    /// The tool call's id (`toolId` in events); empty when unknown.
    pub tool_id: String,
    /// Cancelled when the run is cancelled; executors stop and answer [`ToolError::Cancelled`].
    pub cancel: CancellationToken,
    /// The agent making the call, if any: what it may do (`bash` needs its `allowShell`,
    /// `agent_file_create` grants at most its tools). `None` (a call outside a run) is
    /// treated as an agent with no tools and no shell.
    pub agent: Option<Arc<AgentDefinition>>,
    /// Who the run acts for: tools that touch someone's data act with their rights. `None`:
    /// nobody in particular (a workflow, a call with the server token): the owner's.
    pub principal: Option<base::principal::Principal>,
}

impl ToolContext {
    /// A context with a fresh cancellation token and no tool id.
    pub fn new(run_id: impl Into<String>, chat_id: impl Into<String>) -> Self {
        Self {
            run_id: run_id.into(),
            chat_id: chat_id.into(),
            tool_id: String::new(),
            cancel: CancellationToken::new(),
            agent: None,
            principal: None,
        }
    }

    /// The same context for a call made by `agent`.
    pub fn with_agent(mut self, agent: Arc<AgentDefinition>) -> Self {
        self.agent = Some(agent);
        self
    }

    /// The same context for one tool call.
    pub fn with_tool_id(mut self, tool_id: impl Into<String>) -> Self {
        self.tool_id = tool_id.into();
        self
    }
}

/// Why a tool call produced no result. The message is written for the model: it says what to
/// change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// No executor has that name.
    #[error("unknown tool `{name}`; available: {available}")]
    UnknownTool {
        /// The name called.
        name: String,
        /// Comma-separated names of the registered tools.
        available: String,
    },
    /// The arguments are malformed; the message names the field.
    #[error("invalid arguments for `{tool}`: {message}")]
    InvalidArgs {
        /// The tool called.
        tool: String,
        /// What is wrong (`"city" is required`).
        message: String,
    },
    /// The tool refused to act (for `bash`: the agent has no shell, or the host cannot build
    /// the sandbox). Nothing ran.
    #[error("`{tool}` refused: {reason}")]
    Refused {
        /// The tool called.
        tool: String,
        /// Why, and what is allowed.
        reason: String,
    },
    /// A frontend tool's user did not answer in time.
    #[error(
        "the user did not answer within {}; do not wait for this input: continue without it or ask again",
        humantime::format_duration(*waited)
    )]
    NoAnswer {
        /// How long the tool waited.
        waited: Duration,
    },
    /// The run was cancelled while the tool ran.
    #[error("the run was cancelled")]
    Cancelled,
    /// The tool ran and failed (I/O, spawn).
    #[error("`{tool}` failed: {message}")]
    Failed {
        /// The tool called.
        tool: String,
        /// What failed.
        message: String,
    },
}

impl ToolError {
    /// An [`ToolError::InvalidArgs`] for `tool`.
    pub fn invalid(tool: &str, message: impl Into<String>) -> Self {
        Self::InvalidArgs { tool: tool.to_owned(), message: message.into() }
    }

    /// A [`ToolError::Failed`] for `tool`.
    pub fn failed(tool: &str, message: impl fmt::Display) -> Self {
        Self::Failed { tool: tool.to_owned(), message: message.to_string() }
    }
}

/// Reads a call's arguments field by field with errors that name the field. `null` arguments
/// count as `{}` (models send them for tools without parameters); anything else must be an
/// object. Unknown fields are ignored: the definition's schema is the model's contract.
#[derive(Debug, Clone, Copy)]
pub struct Args<'a> {
    tool: &'a str,
    map: Option<&'a Map<String, Value>>,
}

impl<'a> Args<'a> {
    /// Checks that `args` is an object (or null).
    pub fn new(tool: &'a str, args: &'a Value) -> Result<Self, ToolError> {
        match args {
            Value::Object(map) => Ok(Self { tool, map: Some(map) }),
            Value::Null => Ok(Self { tool, map: None }),
            other => Err(ToolError::invalid(
                tool,
                format!("arguments must be a JSON object, got {}", type_name(other)),
            )),
        }
    }

    /// The raw value of a field; `null` counts as absent.
    pub fn get(&self, field: &str) -> Option<&'a Value> {
        self.map.and_then(|m| m.get(field)).filter(|v| !v.is_null())
    }

    /// The object itself (empty for null arguments).
    pub fn fields(&self) -> impl Iterator<Item = (&'a String, &'a Value)> {
        self.map.into_iter().flatten()
    }

    /// An error for `tool` with this message.
    pub fn error(&self, message: impl Into<String>) -> ToolError {
        ToolError::invalid(self.tool, message)
    }

    /// A required, non-blank string.
    pub fn req_str(&self, field: &str) -> Result<&'a str, ToolError> {
        self.opt_str(field)?.ok_or_else(|| self.error(format!("\"{field}\" is required")))
    }

    /// An optional string; present but blank is an error.
    pub fn opt_str(&self, field: &str) -> Result<Option<&'a str>, ToolError> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::String(s)) if s.trim().is_empty() => {
                Err(self.error(format!("\"{field}\" must not be empty")))
            }
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => {
                Err(self.error(format!("\"{field}\" must be a string, got {}", type_name(v))))
            }
        }
    }

    /// An optional positive integer (`"5000"` as a string is accepted: models quote numbers).
    pub fn opt_positive_u64(&self, field: &str) -> Result<Option<u64>, ToolError> {
        let bad = || self.error(format!("\"{field}\" must be a positive integer"));
        match self.get(field) {
            None => Ok(None),
            Some(Value::Number(n)) => n.as_u64().filter(|&n| n > 0).map(Some).ok_or_else(bad),
            Some(Value::String(s)) => {
                s.trim().parse::<u64>().ok().filter(|&n| n > 0).map(Some).ok_or_else(bad)
            }
            Some(_) => Err(bad()),
        }
    }

    /// An optional array of non-blank strings.
    pub fn opt_str_array(&self, field: &str) -> Result<Option<Vec<&'a str>>, ToolError> {
        let Some(v) = self.get(field) else { return Ok(None) };
        let bad = || self.error(format!("\"{field}\" must be an array of strings"));
        let items = v.as_array().ok_or_else(bad)?;
        items
            .iter()
            .map(|i| i.as_str().filter(|s| !s.trim().is_empty()).ok_or_else(bad))
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }
}

/// `"a string"`, `"a number"`, ... for error messages.
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The current time; injectable so date-dependent tools are testable.
pub type Clock = Arc<dyn Fn() -> DateTime<Utc> + Send + Sync>;

/// The system clock.
pub fn system_clock() -> Clock {
    Arc::new(Utc::now)
}

/// Settings of the built-in executors.
#[derive(Clone)]
pub struct ToolsConfig {
    /// `bash` confinement and limits.
    pub bash: BashConfig,
    /// Where `agent_file_create` writes `<agentId>.json` (the catalog's agents directory).
    pub agents_dir: PathBuf,
    /// "Now" for `city_datetime` and the default date of `mock_city_weather`.
    pub clock: Clock,
}

impl ToolsConfig {
    /// Defaults: `bash` confined to `working_dir`, agents in `agents_dir`, the system clock.
    pub fn new(working_dir: impl Into<PathBuf>, agents_dir: impl Into<PathBuf>) -> Self {
        Self {
            bash: BashConfig::new(working_dir),
            agents_dir: agents_dir.into(),
            clock: system_clock(),
        }
    }

    /// From the environment: [`BashConfig::from_env`] and `AGENT_EXTERNAL_DIR` (default
    /// `agents`, relative to the process's working directory).
    pub fn from_env() -> Self {
        let agents_dir = std::env::var("AGENT_EXTERNAL_DIR")
            .ok()
            .filter(|v| !v.trim().is_empty())
            .unwrap_or_else(|| "agents".to_owned());
        Self { bash: BashConfig::from_env(), agents_dir: agents_dir.into(), clock: system_clock() }
    }
}

impl fmt::Debug for ToolsConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolsConfig")
            .field("bash", &self.bash)
            .field("agents_dir", &self.agents_dir)
            .finish_non_exhaustive()
    }
}

/// The executors by name. Cheap to clone (the executors are shared).
#[derive(Clone, Default)]
pub struct BackendTools {
    tools: HashMap<String, Arc<dyn BackendTool>>,
}

impl BackendTools {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// A registry holding the built-ins ([`BUILTIN_TOOLS`]).
    pub fn builtin(config: &ToolsConfig) -> Self {
        let mut tools = Self::new();
        tools.register(Arc::new(BashTool::new(config.bash.clone())));
        tools.register(Arc::new(CityDatetime::new(config.clock.clone())));
        tools.register(Arc::new(MockCityWeather::new(config.clock.clone())));
        tools.register(Arc::new(AgentFileCreate::new(config.agents_dir.clone())));
        tools
    }

    /// Adds an executor under its [`BackendTool::name`]; returns the one it replaces.
    pub fn register(&mut self, tool: Arc<dyn BackendTool>) -> Option<Arc<dyn BackendTool>> {
        self.tools.insert(tool.name().to_owned(), tool)
    }

    /// The executor with this name.
    pub fn get(&self, name: &str) -> Option<Arc<dyn BackendTool>> {
        self.tools.get(name).cloned()
    }

    /// Whether an executor has this name.
    pub fn contains(&self, name: &str) -> bool {
        self.tools.contains_key(name)
    }

    /// Registered names, sorted.
    pub fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.tools.keys().map(String::as_str).collect();
        names.sort_unstable();
        names
    }

    /// Calls the named executor: its result alone (see [`BackendTools::call_with_events`]).
    pub fn call(
        &self,
        name: &str,
        args: Value,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<Value, ToolError>> {
        let fut = self.call_with_events(name, args, ctx);
        Box::pin(async move { fut.await.map(|r| r.result) })
    }

    /// Calls the named executor. Cancelling `ctx.cancel` drops the executor's future (which
    /// stops its work) and answers [`ToolError::Cancelled`].
    pub fn call_with_events(
        &self,
        name: &str,
        args: Value,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<ToolReply, ToolError>> {
        let Some(tool) = self.get(name) else {
            let err = ToolError::UnknownTool {
                name: name.to_owned(),
                available: self.names().join(", "),
            };
            return Box::pin(std::future::ready(Err(err)));
        };
        let cancel = ctx.cancel.clone();
        let fut = tool.call_with_events(args, ctx);
        Box::pin(async move {
            if cancel.is_cancelled() {
                return Err(ToolError::Cancelled);
            }
            tokio::select! {
                biased;
                () = cancel.cancelled() => Err(ToolError::Cancelled),
                r = fut => r,
            }
        })
    }
}

impl fmt::Debug for BackendTools {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BackendTools").field("tools", &self.names()).finish()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    struct Echo;

    impl BackendTool for Echo {
        fn name(&self) -> &str {
            "echo"
        }

        fn call(
            &self,
            args: Value,
            _: ToolContext,
        ) -> BoxFuture<'static, Result<Value, ToolError>> {
            Box::pin(async move {
                if args["sleep"].as_bool() == Some(true) {
                    tokio::time::sleep(Duration::from_secs(30)).await;
                }
                Ok(args)
            })
        }
    }

    #[test]
    fn args_errors_name_the_field() {
        let v = json!({"city": 3, "blank": " ", "n": 0, "list": ["a", 1]});
        let a = Args::new("t", &v).unwrap();
        let msg = |e: ToolError| e.to_string();
        assert_eq!(
            msg(a.req_str("x").unwrap_err()),
            "invalid arguments for `t`: \"x\" is required"
        );
        assert!(
            msg(a.req_str("city").unwrap_err()).contains("\"city\" must be a string, got a number")
        );
        assert!(msg(a.req_str("blank").unwrap_err()).contains("\"blank\" must not be empty"));
        assert!(msg(a.opt_positive_u64("n").unwrap_err()).contains("positive integer"));
        assert!(msg(a.opt_str_array("list").unwrap_err()).contains("array of strings"));
        assert!(Args::new("t", &json!([1])).unwrap_err().to_string().contains("JSON object"));
        let null = Value::Null;
        assert_eq!(Args::new("t", &null).unwrap().opt_str("x").unwrap(), None);
        let quoted = json!({"n": "250"});
        assert_eq!(Args::new("t", &quoted).unwrap().opt_positive_u64("n").unwrap(), Some(250));
    }

    #[tokio::test]
    async fn registry_calls_reports_unknown_and_cancels() {
        let dir = std::env::temp_dir();
        let mut tools = BackendTools::builtin(&ToolsConfig::new(&dir, &dir));
        assert_eq!(
            tools.names(),
            ["agent_file_create", "bash", "city_datetime", "mock_city_weather"]
        );
        assert!(tools.register(Arc::new(Echo)).is_none());
        let out = tools.call("echo", json!({"a": 1}), ToolContext::new("r", "c")).await;
        assert_eq!(out.unwrap(), json!({"a": 1}));

        let err = tools.call("nope", json!({}), ToolContext::new("r", "c")).await.unwrap_err();
        assert!(
            err.to_string().contains("unknown tool `nope`; available: agent_file_create, bash")
        );

        let ctx = ToolContext::new("r", "c").with_tool_id("t1");
        let cancel = ctx.cancel.clone();
        let call = tokio::spawn(tools.call("echo", json!({"sleep": true}), ctx));
        tokio::time::sleep(Duration::from_millis(20)).await;
        cancel.cancel();
        let res = tokio::time::timeout(Duration::from_secs(2), call).await.unwrap().unwrap();
        assert_eq!(res, Err(ToolError::Cancelled));
    }
}
