//! The compact view of a dashboard for models (`get_state` summary). (PLACEHOLDER)

use serde_json::{Value, json};

use super::DashboardState;

/// Panel list and key config with a code preview.
pub fn summary(state: &DashboardState) -> Value {
    json!({ "title": state.title, "layout": state.layout, "panels": state.panels.iter().map(|p| json!({"id": p.id})).collect::<Vec<_>>() })
}
