//! Black-box tests through the public API: real worker processes, real files, loopback HTTP.
#![allow(clippy::unwrap_used, missing_docs)]

#[path = "../support/mod.rs"]
mod support;

mod access;
mod admin;
mod agent_catalog;
mod agent_memory;
mod agent_run;
mod agent_tools;
mod api_keys;
mod bash_confinement;
mod cli;
mod cli_mock_llm;
mod conformance;
mod connections;
mod context_summary;
mod dashboard_agent;
mod dashboard_agent_tools;
mod dashboard_race;
mod fidelity;
mod gateway_api;
mod gateway_modes;
mod gateway_query;
mod hostile;
mod llm_anthropic;
mod llm_ollama;
mod llm_openai;
mod mcp_client;
mod metrics;
mod model_fallback;
mod openai_api;
mod openapi;
mod provider_gates;
mod providers;
mod sdk;
mod sdk_backings;
mod server;
mod ssrf;
mod store;
mod store_quotas;
mod templates;
mod tidy;
mod usage;
mod web;
mod ws_limits;
