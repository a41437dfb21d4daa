//! Where `boardsmith.toml` is: the file named by `BOARDSMITH_CONFIG`, else `./boardsmith.toml`
//! when it exists. Each section's owner (`llm`, `access`) parses its own part; this module only
//! finds the file.

use std::path::PathBuf;

/// The configuration file read when `BOARDSMITH_CONFIG` is not set (if it exists).
pub const DEFAULT_CONFIG_FILE: &str = "boardsmith.toml";

/// The configuration file to read, if any.
pub fn path() -> Option<PathBuf> {
    match std::env::var_os("BOARDSMITH_CONFIG").filter(|p| !p.is_empty()) {
        Some(p) => Some(PathBuf::from(p)),
        None => Some(PathBuf::from(DEFAULT_CONFIG_FILE)).filter(|p| p.is_file()),
    }
}
