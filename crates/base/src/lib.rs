//! The leaves every layer stands on: text measures ([`text`]), private files under the data
//! dir ([`fs_private`]), where `boardsmith.toml` is ([`config_file`]), where a value came from
//! ([`provenance`]), how a data provider failed ([`outage`]), who a request is ([`principal`]),
//! the SMTP relay e-mail goes through ([`mail`]) and metric names ([`telemetry`]),
//! and the [`boxed`] attribute every crate puts on its public `async fn`s.
//!
//! Knows nothing of the layers above: each module takes and returns plain values.

pub mod config_file;
pub mod fs_private;
pub mod mail;
pub mod outage;
pub mod principal;
pub mod provenance;
pub mod telemetry;
pub mod text;

/// Put on a public `async fn`: the function returns its future boxed (`Pin<Box<dyn Future +
/// Send>>`; `#[boxed(?Send)]` for one that is not `Send`), so its state machine is compiled
/// once, in the crate that defines it. An unboxed async fn's state machine is generic code to
/// rustc: a release build compiles it again in every crate that awaits it, and with it
/// everything it awaits, so the crates at the top recompiled the whole tree below them
/// (ARCHITECTURE.md, "Async at crate boundaries"). The macro is `async-recursion`'s, whose
/// boxing handles the lifetimes of references in the arguments.
pub use async_recursion::async_recursion as boxed;

/// What a [`boxed`] async fn returns; written out by hand where the macro cannot go (a method
/// whose receiver is `self: &Arc<Self>`).
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn Future<Output = T> + Send + 'a>>;
