//! The `file` backing: CSV/JSON files from a data folder the user points at.
//! (PLACEHOLDER: being implemented.)

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Which file a method reads.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct FileBacking {
    /// Path relative to the data folder, with `{param}` placeholders.
    pub path: String,
}

/// Reads and converts the file.
pub async fn read(
    _data_dir: Option<&Path>,
    _backing: &FileBacking,
    _params: &Map<String, Value>,
) -> Result<Value, String> {
    Err("file backing not implemented".into())
}
