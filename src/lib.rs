//! Boardsmith: an LLM agent that builds and edits live financial dashboards from chat.
//!
//! This package is the `boardsmith` binary: the command line ([`cli`]), the benchmarks
//! ([`bench`]) and `boardsmith eval` ([`eval`]). Every layer below it is a crate of the
//! workspace (ARCHITECTURE.md, "The workspace"), re-exported here under the module names the
//! tests and tools use: [`sandbox`] runs model-written JavaScript in isolated worker processes,
//! [`sdk`] is the registry of data sources that panel code calls through the sandbox, [`app`]
//! starts them all and [`server`] serves them.

pub mod bench;
pub mod cli;
pub mod eval;

pub use access;
pub use access::api_keys;
pub use access::usage;
pub use admin;
pub use agent;
pub use agent::cluster;
pub use alerting;
pub use app;
pub use base::config_file;
pub use base::fs_private;
pub use base::outage;
pub use base::provenance;
pub use base::telemetry;
pub use base::text;
pub use dashboard;
pub use dashboard_agent;
pub use dashboards;
pub use knowledge;
pub use live;
pub use llm;
pub use mcp;
pub use render;
pub use reports;
pub use sandbox;
pub use sdk;
pub use server;
pub use store;
pub use uploads;
pub use workflow;
