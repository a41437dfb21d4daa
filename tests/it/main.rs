//! Black-box tests through the public API: real worker processes, real files, loopback HTTP.
#![allow(clippy::unwrap_used, missing_docs)]

#[path = "../support/mod.rs"]
mod support;

mod agent_catalog;
mod cli;
mod conformance;
mod hostile;
mod sdk;
mod sdk_backings;
mod server;
mod store;
mod templates;
