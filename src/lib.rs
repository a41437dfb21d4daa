//! Boardsmith: an LLM agent that builds and edits live financial dashboards from chat.
//!
//! Layers (see ARCHITECTURE.md): [`sandbox`] runs model-written JavaScript in isolated worker
//! processes; [`sdk`] is the registry of data sources that panel code calls through the sandbox.

pub mod access;
pub mod admin;
pub mod agent;
pub mod api_keys;
pub mod app;
pub mod bench;
pub mod cli;
pub mod cluster;
pub mod config_file;
pub mod dashboard;
pub mod dashboard_agent;
pub mod dashboards;
pub mod eval;
pub mod fs_private;
pub mod knowledge;
pub mod live;
pub mod llm;
pub mod mcp;
pub mod provenance;
pub mod sandbox;
pub mod sdk;
pub mod server;
pub mod store;
pub mod telemetry;
pub mod text;
pub mod uploads;
pub mod usage;
pub mod workflow;
