//! The sandbox: runs model-written JavaScript (search queries, dashboard builders, panel code)
//! in a pool of warm worker processes, each execution in a fresh, hardened Boa realm.
//!
//! Owns: the three entry points ([`Sandbox::run_search`], [`Sandbox::run_builder`],
//! [`Sandbox::run_panel`]), the limits, the structured [`ExecError`], the worker pool and the
//! worker side of the pipe protocol. Model code never runs in the server process: a worker that
//! overruns its deadline is SIGKILLed, one that aborts (OOM, stack overflow) is replaced, and the
//! caller gets an error naming the limit.
//!
//! Knows nothing of data sources beyond [`SdkHost`] (the server performs `sdk` calls; the
//! worker only proxies them), and nothing of dashboards or HTTP.

pub mod engine;
mod executor;
mod intl;
mod json_in;
mod json_out;
mod polyfills;
mod pool;
pub mod protocol;
pub mod utils;
pub mod worker;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use base::outage::Outage;
use base::provenance::Provenance;

pub use pool::PoolStats;
use protocol::JobKind;

/// The server-side end of `sdk.<source>.<method>(params)` calls made by sandboxed code.
pub trait SdkHost: Send + Sync + 'static {
    /// `{source: [method, ...]}`: the shape of the `sdk` object in panel code.
    fn catalog(&self) -> BTreeMap<String, Vec<String>>;
    /// The registry as `search` code sees it (`spec.sources`, `spec.utils`).
    fn spec(&self) -> Value;
    /// Performs one call. The failure's message is shown to the model verbatim. The answer is
    /// shared (a cached answer is not copied per call).
    fn call(
        self: Arc<Self>,
        source: String,
        method: String,
        params: Value,
    ) -> BoxFuture<'static, Result<Arc<SdkAnswer>, SdkFailure>>;
    /// The outage to report when code ran out of time waiting on a call of `source.method`
    /// (the provider that serves it did not answer); `None` when no provider is to blame.
    fn waited_on(&self, _source: &str, _method: &str) -> Option<Outage> {
        None
    }
}

/// A failed `sdk` call: the message the code's `SdkError` carries, and when the data provider
/// is to blame (not the call), the outage: an execution that ends on this error is then of
/// kind [`ErrorKind::Provider`] and carries it.
#[derive(Debug, Clone, PartialEq)]
pub struct SdkFailure {
    /// For the model: what failed and what to do.
    pub message: String,
    /// Set when the provider failed.
    pub outage: Option<Outage>,
}

impl SdkFailure {
    /// A failure of the call itself (no provider to blame).
    pub fn call(message: impl Into<String>) -> Self {
        Self { message: message.into(), outage: None }
    }
}

impl From<String> for SdkFailure {
    fn from(message: String) -> Self {
        Self::call(message)
    }
}

/// One answered `sdk` call: the value the code gets, and where it came from (collected per
/// execution into [`Outcome::provenance`]; the code never sees it).
#[derive(Debug, Clone)]
pub struct SdkAnswer {
    /// What the call returns to the code.
    pub value: Value,
    /// Its origin.
    pub provenance: Provenance,
    /// `value` as JSON text, made on first use: a cached answer goes to many runs.
    json: std::sync::OnceLock<Box<RawValue>>,
}

impl SdkAnswer {
    /// An answer of `value` from `provenance`.
    pub fn new(value: Value, provenance: Provenance) -> Self {
        Self { value, provenance, json: std::sync::OnceLock::new() }
    }

    /// `value` as JSON text, serialized once per answer.
    pub fn json(&self) -> &RawValue {
        self.json.get_or_init(|| {
            // A `Value` always serializes (its map keys are strings).
            serde_json::value::to_raw_value(&self.value)
                .unwrap_or_else(|_| RawValue::NULL.to_owned())
        })
    }
}

impl PartialEq for SdkAnswer {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value && self.provenance == other.provenance
    }
}

/// Per-execution limits. Every overrun ends the execution with an [`ExecError`] of kind
/// [`ErrorKind::Limit`] naming the [`Limit`].
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Limits {
    /// Wall-clock deadline for panel code.
    pub panel_deadline: Duration,
    /// Wall-clock deadline for builder (`execute`/`mutate`) and search code.
    pub builder_deadline: Duration,
    /// Address-space cap of a worker process (RLIMIT_AS), in bytes.
    pub memory_bytes: u64,
    /// Maximum source size in bytes.
    pub source_bytes: usize,
    /// Maximum bracket nesting depth of the source (deeper source would overflow the parser's
    /// native stack).
    pub nesting_depth: usize,
    /// Maximum `sdk` calls per execution.
    pub sdk_calls: u32,
    /// Maximum size of the JSON result in bytes.
    pub result_bytes: usize,
    /// Loop iterations per function invocation (Boa counts per call frame).
    pub loop_iterations: u64,
    /// Maximum JS call depth.
    pub recursion: usize,
    /// Captured console output per execution, in bytes; beyond it lines are dropped and counted.
    pub log_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            panel_deadline: Duration::from_secs(5),
            builder_deadline: Duration::from_secs(10),
            memory_bytes: 1 << 30,
            source_bytes: 64 * 1024,
            nesting_depth: 512,
            sdk_calls: 64,
            result_bytes: 4 << 20,
            loop_iterations: 10_000_000,
            recursion: 512,
            log_bytes: 16 * 1024,
        }
    }
}

impl Limits {
    /// The wall-clock deadline of a job of `kind`.
    pub fn deadline(&self, kind: JobKind) -> Duration {
        match kind {
            JobKind::Panel => self.panel_deadline,
            JobKind::Builder | JobKind::Search | JobKind::Check => self.builder_deadline,
        }
    }

    /// Defaults overridden by `BOARDSMITH_PANEL_TIMEOUT_MS`, `BOARDSMITH_BUILDER_TIMEOUT_MS`,
    /// `BOARDSMITH_SANDBOX_MEMORY_MB`, `BOARDSMITH_SDK_CALLS`.
    pub fn from_env() -> Self {
        let num = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u64>().ok());
        let mut l = Self::default();
        if let Some(ms) = num("BOARDSMITH_PANEL_TIMEOUT_MS") {
            l.panel_deadline = Duration::from_millis(ms);
        }
        if let Some(ms) = num("BOARDSMITH_BUILDER_TIMEOUT_MS") {
            l.builder_deadline = Duration::from_millis(ms);
        }
        if let Some(mb) = num("BOARDSMITH_SANDBOX_MEMORY_MB") {
            l.memory_bytes = mb << 20;
        }
        if let Some(n) = num("BOARDSMITH_SDK_CALLS") {
            l.sdk_calls = u32::try_from(n).unwrap_or(u32::MAX);
        }
        l
    }
}

/// How to run the pool.
#[derive(Debug, Clone)]
pub struct SandboxConfig {
    /// Number of warm workers (default: available cores, at least 2).
    pub workers: usize,
    /// Limits applied to every execution.
    pub limits: Limits,
    /// The worker program and its arguments; default: this binary's hidden `sandbox-worker`
    /// subcommand.
    pub program: PathBuf,
    /// Arguments that make `program` act as a worker.
    pub args: Vec<String>,
}

impl SandboxConfig {
    /// Defaults for a worker program: the current executable, unless overridden.
    pub fn new(program: PathBuf) -> Self {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        Self {
            workers: cores.max(2),
            limits: Limits::default(),
            program,
            args: vec![WORKER_SUBCOMMAND.to_owned()],
        }
    }
}

/// The hidden subcommand that turns the binary into a sandbox worker.
pub const WORKER_SUBCOMMAND: &str = "sandbox-worker";

/// What went wrong, as a closed set a caller (or model) can act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ErrorKind {
    /// The code does not parse.
    Syntax,
    /// The code threw, or its promise never settled.
    Runtime,
    /// A limit was exceeded; [`ExecError::limit`] says which.
    Limit,
    /// An `sdk` call failed for a reason of the call (unknown method, bad params, a request
    /// the provider rejected) and the code did not handle it.
    Sdk,
    /// A data provider failed (unreachable, not answering, busy, down, key refused): not the
    /// code's fault; [`ExecError::outage`] says which provider and why.
    Provider,
    /// The result cannot be turned into JSON (cyclic, BigInt) or has the wrong shape.
    Result,
}

/// Which limit ended an execution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// Wall-clock deadline (the worker was killed).
    Deadline,
    /// Worker memory cap.
    Memory,
    /// Native stack (deeply nested data or code).
    Stack,
    /// Loop iterations per function invocation.
    LoopIterations,
    /// JS call depth.
    Recursion,
    /// Source size.
    SourceSize,
    /// Source bracket nesting depth.
    NestingDepth,
    /// Number of `sdk` calls.
    SdkCalls,
    /// Size of the JSON result.
    ResultSize,
}

impl Limit {
    /// Stable snake_case name, as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Deadline => "deadline",
            Self::Memory => "memory",
            Self::Stack => "stack",
            Self::LoopIterations => "loop_iterations",
            Self::Recursion => "recursion",
            Self::SourceSize => "source_size",
            Self::NestingDepth => "nesting_depth",
            Self::SdkCalls => "sdk_calls",
            Self::ResultSize => "result_size",
        }
    }
}

/// A failed execution, with positions relative to the submitted code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[serde(rename_all = "camelCase")]
#[error("{}", self.display())]
pub struct ExecError {
    /// What kind of failure.
    pub kind: ErrorKind,
    /// The message, e.g. `TypeError: cannot read property 'close' of undefined`.
    pub message: String,
    /// 1-based line in the submitted code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// 1-based column in the submitted code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    /// A short JS stack (innermost first), positions relative to the submitted code.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stack: Vec<String>,
    /// Set when `kind` is `limit`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<Limit>,
    /// Console output captured before the failure.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub logs: Vec<LogEntry>,
    /// Set when `kind` is `provider`: the provider, its failure, a sentence for the analyst.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outage: Option<Box<Outage>>,
}

impl ExecError {
    /// An error without position.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            line: None,
            column: None,
            stack: Vec::new(),
            limit: None,
            logs: Vec::new(),
            outage: None,
        }
    }

    /// A provider's failure: kind [`ErrorKind::Provider`] with the outage.
    pub fn provider(outage: Outage, message: impl Into<String>) -> Self {
        Self { outage: Some(Box::new(outage)), ..Self::new(ErrorKind::Provider, message) }
    }

    /// A limit error.
    pub fn limit(limit: Limit, message: impl Into<String>) -> Self {
        Self { limit: Some(limit), ..Self::new(ErrorKind::Limit, message) }
    }

    fn display(&self) -> String {
        let mut s = format!("{:?} error", self.kind).to_lowercase();
        if let Some(l) = self.limit {
            s.push_str(&format!(" ({})", l.as_str()));
        }
        if let (Some(l), Some(c)) = (self.line, self.column) {
            s.push_str(&format!(" at line {l}, column {c}"));
        }
        format!("{s}: {}", self.message)
    }
}

/// One captured `console` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogEntry {
    /// `log`, `warn` or `error`.
    pub level: String,
    /// The formatted arguments.
    pub message: String,
}

/// A successful execution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    /// The result with `JSON.stringify` semantics.
    pub value: Value,
    /// Captured console output.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub logs: Vec<LogEntry>,
    /// How many `sdk` calls the code made.
    pub sdk_calls: u32,
    /// Where the data of its `sdk` calls came from, one entry per provider
    /// ([`base::provenance::merge`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub provenance: Vec<Provenance>,
    /// Wall time from submission to result.
    #[serde(with = "duration_ms")]
    pub duration: Duration,
}

mod duration_ms {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64() * 1e3)
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_secs_f64(f64::deserialize(d)?.max(0.0) / 1e3))
    }
}

/// What panel code sees besides `sdk` and `utils`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PanelContext {
    /// Dashboard variables, frozen as `vars` (e.g. `{symbol: "XAUUSD", range: "6M"}`).
    pub vars: serde_json::Map<String, Value>,
}

/// A pool of sandbox workers plus the host that serves their `sdk` calls.
#[derive(Clone)]
pub struct Sandbox {
    pool: Arc<pool::Pool>,
}

impl std::fmt::Debug for Sandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sandbox").field("stats", &self.pool.stats()).finish()
    }
}

impl Sandbox {
    /// Starts the pool; returns once every worker is warm.
    #[base::boxed]
    pub async fn start(config: SandboxConfig, host: Arc<dyn SdkHost>) -> Result<Self, ExecError> {
        Ok(Self { pool: Arc::new(pool::Pool::start(config, host).await?) })
    }

    /// Runs `search` code: the body of an async function with a frozen `spec` in scope.
    #[base::boxed]
    pub async fn run_search(&self, code: &str) -> Result<Outcome, ExecError> {
        self.run(JobKind::Search, code, None).await
    }

    /// One execution, counted in the metrics.
    async fn run(
        &self,
        kind: JobKind,
        code: &str,
        input: Option<Value>,
    ) -> Result<Outcome, ExecError> {
        let started = std::time::Instant::now();
        let result = self.pool.run(kind, code, input).await;
        let name = match kind {
            JobKind::Search => "search",
            JobKind::Builder => "builder",
            JobKind::Panel => "panel",
            JobKind::Check => "check",
        };
        let counted = match &result {
            Ok(_) => Ok(()),
            Err(e) => Err(e.limit.map(Limit::as_str)),
        };
        base::telemetry::sandbox_run(name, counted, started.elapsed());
        result
    }

    /// Runs builder code. Without `state` (execute) the code is the body of an async function
    /// returning a DashboardState; with `state` (mutate) it is `async (state) => newState`,
    /// applied to a copy. `utils` is in scope, `sdk` is not.
    #[base::boxed]
    pub async fn run_builder(
        &self,
        code: &str,
        state: Option<&Value>,
    ) -> Result<Outcome, ExecError> {
        self.run(JobKind::Builder, code, state.cloned()).await
    }

    /// Runs panel code: the body of an async function with `sdk`, `utils` and frozen `vars`.
    #[base::boxed]
    pub async fn run_panel(&self, code: &str, ctx: &PanelContext) -> Result<Outcome, ExecError> {
        self.run(JobKind::Panel, code, Some(Value::Object(ctx.vars.clone()))).await
    }

    /// Checks that panel code parses, without running it (parsing untrusted code is also kept
    /// out of the server: deep nesting would overflow the parser's native stack). Returns the
    /// syntax error with its line and column.
    #[base::boxed]
    pub async fn check_syntax(&self, code: &str) -> Result<(), ExecError> {
        self.run(JobKind::Check, code, None).await.map(|_| ())
    }

    /// Pool counters (executions, kills, respawns).
    pub fn stats(&self) -> PoolStats {
        self.pool.stats()
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        self.pool.limits()
    }

    /// Kills every worker; pending executions fail.
    #[base::boxed]
    pub async fn shutdown(&self) {
        self.pool.shutdown().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answers_json_text_is_its_value_serialized_once() {
        let value = serde_json::json!({"b": [1, 2.5, null], "a": "é\"", "c": {"d": true}});
        let answer = SdkAnswer::new(value.clone(), Provenance::demo(None, 0));
        let text = answer.json();
        assert_eq!(text.get(), serde_json::to_string(&value).expect("serializes"));
        assert!(std::ptr::eq(text, answer.json()), "the text is made once, then reused");
        let back: Value = serde_json::from_str(text.get()).expect("parses");
        assert_eq!(back, value);
    }
}
