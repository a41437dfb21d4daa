//! Black-box tests through the public API: real worker processes, real files, loopback HTTP.

#[path = "../support/mod.rs"]
mod support;

mod cli;
mod conformance;
mod hostile;
mod sdk;
