//! Differences between two versions of a dashboard. (PLACEHOLDER)

use serde::{Deserialize, Serialize};

use super::DashboardState;

/// What changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// A panel was added.
    AddedPanel,
    /// A panel was removed.
    RemovedPanel,
    /// A panel's fields changed.
    ModifiedPanel,
    /// Grid settings changed.
    LayoutChanged,
    /// The title changed.
    TitleChanged,
    /// Variables changed.
    VariablesChanged,
    /// Panels were reordered.
    Reordered,
}

/// One change, keyed by panel id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeEntry {
    /// What changed.
    #[serde(rename = "type")]
    pub kind: ChangeKind,
    /// The panel, for panel changes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub panel_id: Option<String>,
    /// Human/model-readable detail.
    pub detail: String,
}

/// The change entries from `old` to `new`.
pub fn changes(_old: &DashboardState, _new: &DashboardState) -> Vec<ChangeEntry> {
    Vec::new()
}

/// RFC 6902 patch turning `old` into `new`.
pub fn patch(old: &DashboardState, new: &DashboardState) -> json_patch::Patch {
    let a = serde_json::to_value(old).unwrap_or_default();
    let b = serde_json::to_value(new).unwrap_or_default();
    json_patch::diff(&a, &b)
}

/// Ids of panels added or modified from `old` to `new` (the ones to test-run).
pub fn changed_panels(old: &DashboardState, new: &DashboardState) -> Vec<String> {
    new.panels
        .iter()
        .filter(|p| old.panels.iter().find(|o| o.id == p.id) != Some(p))
        .map(|p| p.id.clone())
        .collect()
}
