//! Dashboards leaving the screen: the JSON export document (`GET /api/dashboards/{id}/export`,
//! read back by `POST /api/dashboards/import`, round trip exact) and a panel's data as CSV.
//!
//! CSV cells that a spreadsheet would run as a formula (text starting with `=`, `+`, `-`, `@`,
//! a tab or a carriage return) are written with a leading `'`, as OWASP advises: panel data
//! comes from outside (news titles, posts) and must not become code on the analyst's machine.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::DashboardState;

/// The `format` of an export document.
pub const FORMAT: &str = "boardsmith.dashboard";
/// The version of the export document's shape.
pub const FORMAT_VERSION: u32 = 1;

/// A dashboard as exported: what it is, where it came from, and its whole state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Export {
    /// Always [`FORMAT`].
    pub format: String,
    /// Always [`FORMAT_VERSION`] (an import refuses a newer one).
    pub format_version: u32,
    /// When it was exported, unix ms.
    pub exported_at: i64,
    /// The dashboard it was exported from.
    pub source: Source,
    /// The state, as stored.
    pub state: DashboardState,
}

/// Where an export came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Source {
    /// The dashboard's id there.
    pub id: String,
    /// The version exported.
    pub version: u64,
}

/// Why an import document was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    /// Not an export document.
    #[error(
        "not a Boardsmith dashboard export: `format` is {0:?}, expected \"boardsmith.dashboard\""
    )]
    Format(String),
    /// Made by a newer Boardsmith.
    #[error("the export's formatVersion {0} is newer than this server reads ({FORMAT_VERSION})")]
    Newer(u32),
}

impl Export {
    /// The export of `state`, version `version` of dashboard `id`, at `now_ms`.
    pub fn new(id: &str, version: u64, state: DashboardState, now_ms: i64) -> Self {
        Self {
            format: FORMAT.to_owned(),
            format_version: FORMAT_VERSION,
            exported_at: now_ms,
            source: Source { id: id.to_owned(), version },
            state,
        }
    }

    /// Checks the document says what it is and that this server reads its version.
    pub fn check(&self) -> Result<(), ImportError> {
        if self.format != FORMAT {
            return Err(ImportError::Format(self.format.clone()));
        }
        if self.format_version > FORMAT_VERSION {
            return Err(ImportError::Newer(self.format_version));
        }
        Ok(())
    }
}

/// A panel's data as CSV: rows of objects get a header of every key (first seen first); rows
/// of arrays are written as they are; scalars are one `value` column; a lone object is one
/// row. Nested values are written as JSON. `None` when the data has no rows to write.
pub fn csv(data: &Value) -> Option<String> {
    let rows: Vec<&Value> = match data {
        Value::Array(items) => items.iter().collect(),
        Value::Object(_) => vec![data],
        Value::Null => return None,
        other => vec![other],
    };
    let mut out = String::new();
    if rows.iter().all(|r| r.is_object()) && !rows.is_empty() {
        let mut header: Vec<&str> = Vec::new();
        for row in &rows {
            for key in row.as_object().map(Map::keys).into_iter().flatten() {
                if !header.contains(&key.as_str()) {
                    header.push(key);
                }
            }
        }
        line(&mut out, header.iter().map(|h| (*h).to_owned()));
        for row in &rows {
            line(&mut out, header.iter().map(|h| cell(row.get(*h).unwrap_or(&Value::Null))));
        }
    } else if rows.iter().all(|r| r.is_array()) && !rows.is_empty() {
        for row in &rows {
            line(&mut out, row.as_array().into_iter().flatten().map(cell));
        }
    } else {
        line(&mut out, ["value".to_owned()].into_iter());
        for row in &rows {
            line(&mut out, std::iter::once(cell(row)));
        }
    }
    (!rows.is_empty()).then_some(out)
}

/// One CSV line (RFC 4180: fields with `,`, `"` or a line break quoted, `"` doubled; CRLF).
fn line(out: &mut String, fields: impl Iterator<Item = String>) {
    let fields: Vec<String> = fields
        .map(|f| {
            if f.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", f.replace('"', "\"\""))
            } else {
                f
            }
        })
        .collect();
    out.push_str(&fields.join(","));
    out.push_str("\r\n");
}

/// A value as a cell's text; text a spreadsheet would evaluate is defused with a leading `'`.
fn cell(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) if s.starts_with(['=', '+', '-', '@', '\t', '\r']) => format!("'{s}"),
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        nested => nested.to_string(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn rows_of_objects_get_every_key_as_a_header() {
        let data = json!([{"time": 1, "close": 2.5}, {"time": 2, "close": 3, "note": "a, \"b\""}]);
        assert_eq!(csv(&data).unwrap(), "time,close,note\r\n1,2.5,\r\n2,3,\"a, \"\"b\"\"\"\r\n");
    }

    #[test]
    fn other_shapes_and_formulas() {
        assert_eq!(csv(&json!([[1, 2], [3, null]])).unwrap(), "1,2\r\n3,\r\n");
        assert_eq!(csv(&json!([1, "x"])).unwrap(), "value\r\n1\r\nx\r\n");
        assert_eq!(csv(&json!({"value": 5, "label": "BTC"})).unwrap(), "value,label\r\n5,BTC\r\n");
        assert_eq!(csv(&json!([])), None);
        assert_eq!(csv(&Value::Null), None);
        let cells = csv(&json!([{"t": "=HYPERLINK(\"x\")", "n": -1, "s": "-1"}])).unwrap();
        assert_eq!(cells, "t,n,s\r\n\"'=HYPERLINK(\"\"x\"\")\",-1,'-1\r\n");
    }

    #[test]
    fn an_export_says_what_it_is() {
        let state: DashboardState = serde_json::from_value(
            json!({"title": "T", "layout": {"columns": 12}, "panels": [], "variables": []}),
        )
        .unwrap();
        let doc = Export::new("db_1", 3, state, 10);
        doc.check().unwrap();
        let back: Export = serde_json::from_str(&serde_json::to_string(&doc).unwrap()).unwrap();
        assert_eq!(back, doc);
        let wrong = Export { format: "other".into(), ..doc.clone() };
        assert!(matches!(wrong.check(), Err(ImportError::Format(_))));
        let newer = Export { format_version: FORMAT_VERSION + 1, ..doc };
        assert_eq!(newer.check(), Err(ImportError::Newer(FORMAT_VERSION + 1)));
    }

    /// Reads CSV the way RFC 4180 says (a small reader for the test only).
    fn read(text: &str) -> Vec<Vec<String>> {
        let mut rows = vec![vec![String::new()]];
        let mut quoted = false;
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            let field = rows.last_mut().unwrap().last_mut().unwrap();
            match (c, quoted) {
                ('"', true) if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                ('"', _) => quoted = !quoted,
                (',', false) => rows.last_mut().unwrap().push(String::new()),
                ('\r', false) => {
                    chars.next();
                    rows.push(vec![String::new()]);
                }
                (c, _) => field.push(c),
            }
        }
        rows.pop();
        rows
    }

    proptest! {
        #[test]
        fn every_cell_reads_back(cells in prop::collection::vec(prop::collection::vec("[a-z ,\"\n=+-]{0,8}", 2), 1..6)) {
            let data: Vec<Value> = cells.iter().map(|r| json!({"a": r[0], "b": r[1]})).collect();
            let text = csv(&Value::Array(data)).unwrap();
            let back = read(&text);
            prop_assert_eq!(back[0].clone(), vec!["a".to_owned(), "b".to_owned()]);
            for (row, want) in back[1..].iter().zip(&cells) {
                for (got, want) in row.iter().zip(want) {
                    let defused = want.starts_with(['=', '+', '-', '@']);
                    let expected = if defused { format!("'{want}") } else { want.clone() };
                    prop_assert_eq!(got, &expected);
                }
            }
        }
    }
}
