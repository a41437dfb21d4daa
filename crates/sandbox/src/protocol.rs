//! The pipe protocol between the pool (server) and a worker: one JSON object per line.
//!
//! Each line is an externally tagged enum (`{"job": {...}}`): serde cannot carry the raw JSON
//! result through an internally tagged one.
//!
//! ```text
//! server → worker   init (once), job, reply
//! worker → server   ready (once, after init), call, done | fail
//! ```
//! A worker runs one job at a time. While it runs, the worker may send `call`s; the server
//! answers each with a `reply` carrying the same id. Ids are unique per worker, so a reply that
//! arrives after its job ended is recognised and ignored.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use super::{ExecError, Limits, LogEntry};

/// Which entry point a job uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobKind {
    /// `spec` in scope.
    Search,
    /// `utils` in scope; optional input state (mutate).
    Builder,
    /// `sdk`, `utils`, `vars` in scope.
    Panel,
    /// Parse panel code without running it.
    Check,
}

/// Messages from the server to a worker.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToWorker {
    /// Sent once at start.
    Init {
        /// `{source: [method]}` for the `sdk` object.
        catalog: BTreeMap<String, Vec<String>>,
        /// The public registry, for `spec`.
        spec: Box<RawValue>,
        /// Limits the worker enforces itself.
        limits: Limits,
    },
    /// Run one execution.
    Job {
        /// Entry point.
        kind: JobKind,
        /// Model-written source.
        code: String,
        /// Builder: the state to mutate (or null); panel: `vars`.
        #[serde(default)]
        input: Value,
    },
    /// The answer to a `call`.
    Reply {
        /// The call's id.
        id: u64,
        /// The call's result (JSON text, turned into a JS value by the worker), or
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ok: Option<Box<RawValue>>,
        /// its error message.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        err: Option<String>,
    },
}

/// Messages from a worker to the server.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FromWorker {
    /// Init processed; ready for jobs.
    Ready,
    /// An `sdk` call made by the running job.
    Call {
        /// Unique per worker.
        id: u64,
        /// Source name.
        source: String,
        /// Method name.
        method: String,
        /// The params object as given.
        params: Value,
    },
    /// The job finished.
    Done {
        /// The `JSON.stringify` text of the result.
        value: Box<RawValue>,
        /// Captured console output.
        logs: Vec<LogEntry>,
        /// Number of sdk calls made.
        #[serde(rename = "sdkCalls")]
        sdk_calls: u32,
        /// The worker should not be reused (see [`FromWorker::Fail::retire`]).
        #[serde(default)]
        retire: bool,
    },
    /// The job failed.
    Fail {
        /// What happened.
        error: ExecError,
        /// The worker's address space grew past its reuse threshold (allocators keep freed
        /// address space reserved, and the memory cap counts it): replace it.
        #[serde(default)]
        retire: bool,
    },
}
