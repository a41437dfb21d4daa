//! The leaves every layer stands on: text measures ([`text`]), private files under the data
//! dir ([`fs_private`]), where `boardsmith.toml` is ([`config_file`]), where a value came from
//! ([`provenance`]) and metric names ([`telemetry`]).
//!
//! Knows nothing of the layers above: each module takes and returns plain values.

pub mod config_file;
pub mod fs_private;
pub mod provenance;
pub mod telemetry;
pub mod text;
