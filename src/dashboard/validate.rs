//! Parsing untrusted JSON into a [`DashboardState`] with every problem named by its JSON path.
//! (PLACEHOLDER: rules being implemented.)

use serde::Serialize;
use serde_json::Value;

use super::DashboardState;

/// One problem: where and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Issue {
    /// JSON path such as `panels[2].renderer`.
    pub path: String,
    /// What is wrong and what was expected.
    pub message: String,
}

/// A state that failed validation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.iter().map(|i| format!("{}: {}", i.path, i.message)).collect::<Vec<_>>().join("; "))]
pub struct InvalidState(pub Vec<Issue>);

/// Parses and validates a state.
pub fn parse_state(v: &Value) -> Result<DashboardState, InvalidState> {
    serde_json::from_value(v.clone())
        .map_err(|e| InvalidState(vec![Issue { path: String::new(), message: e.to_string() }]))
}
