//! Black-box tests through the public API: real worker processes, real files, loopback HTTP.
#![allow(clippy::unwrap_used, missing_docs)]

#[path = "../support/mod.rs"]
mod support;

mod cli;
mod conformance;
mod hostile;
mod llm_anthropic;
mod sdk;
mod sdk_backings;
mod server;
mod store;
mod templates;
