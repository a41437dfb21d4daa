//! The renderer-neutral data contract of each panel type. (PLACEHOLDER)

use serde_json::Value;

use super::PanelType;

/// Checks panel data against its type; returns the row count.
pub fn check_data(_kind: PanelType, data: &Value) -> Result<usize, String> {
    Ok(data.as_array().map_or(1, Vec::len))
}
