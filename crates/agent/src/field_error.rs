//! One problem in a file (an agent file, its `mcpServers` block, an admin definition), named by
//! its field path so the message points where to edit. A leaf: the validators of every file
//! kind report with it.

use std::fmt;

use serde::Serialize;

/// One problem in a file, named by its field path (`react.maxSteps`; `.` for the whole file).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldError {
    /// Field path, `a.b[2].c` style.
    pub path: String,
    /// What is wrong, written for the person editing the file.
    pub message: String,
}

impl FieldError {
    /// `message` about the field at `path`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self { path: path.into(), message: message.into() }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}
