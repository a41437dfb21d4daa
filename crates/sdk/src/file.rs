//! The `file` backing: CSV/JSON files from a data folder the user points at
//! (`BOARDSMITH_DATA_FILES`, [`super::SdkConfig::data_dir`]).
//!
//! - `mode: "list"` lists the readable files (`.csv`, `.tsv`, `.json`) with size and mtime.
//! - `mode: "read"` (default) reads the file named by the `path` template. CSV/TSV with a header
//!   row becomes an array of row objects: numeric cells are numbers, empty cells null, and a
//!   `time`/`date`/`timestamp`/`datetime` column holding ISO dates becomes UTC epoch seconds
//!   (numbers above 10^11 are taken as milliseconds); rows are sorted by that column. JSON is
//!   returned as is, or the sub-value at `select`.
//! - With `valueField` set, rows are projected onto `{time, value}` (a series).
//!
//! Paths are relative to the data folder: `..`, absolute paths and symlinks leading outside it
//! are rejected.

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::http::convert::{describe, parse_iso, parse_number, to_number};
use super::http::mapping;
use super::http::template;

/// Largest file read.
pub const MAX_FILE_BYTES: u64 = 32 * 1024 * 1024;
/// Most files reported by `list` and by "file not found" errors' full listing.
const MAX_LISTED: usize = 1000;
/// Directory depth walked by `list`.
const MAX_DEPTH: usize = 4;
/// Column names (case-insensitive) treated as the time axis.
const TIME_COLUMNS: [&str; 4] = ["time", "date", "timestamp", "datetime"];

/// Which file a method reads, and how.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FileBacking {
    /// `read` (default) or `list`.
    #[serde(default)]
    pub mode: FileMode,
    /// Path relative to the data folder, with `{param}` placeholders (`"{file}"`). Required for
    /// `read`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub path: String,
    /// Force a format; default from the extension (`.csv`, `.tsv`, `.json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<FileFormat>,
    /// JSON only: dot path of the sub-value to return (template; empty = whole file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub select: Option<String>,
    /// Series projection: the time column (template; empty = first of time/date/timestamp/
    /// datetime).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_field: Option<String>,
    /// Series projection: the value column (template). When set, rows become `{time, value}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_field: Option<String>,
}

/// What a file method does.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum FileMode {
    /// Read one file.
    #[default]
    Read,
    /// List the files in the data folder.
    List,
}

/// File formats.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum FileFormat {
    /// Comma-separated with a header row.
    Csv,
    /// Tab-separated with a header row.
    Tsv,
    /// Any JSON document.
    Json,
}

/// Reads and converts the file (on a blocking thread).
#[base::boxed]
pub async fn read(
    data_dir: Option<&Path>,
    backing: &FileBacking,
    params: &Map<String, Value>,
) -> Result<Value, String> {
    let Some(dir) = data_dir else {
        return Err("no data folder is configured: ask the user to set BOARDSMITH_DATA_FILES \
                    to a folder holding their CSV/JSON files and restart"
            .into());
    };
    let dir = dir.to_path_buf();
    let backing = backing.clone();
    let params = params.clone();
    tokio::task::spawn_blocking(move || read_blocking(&dir, &backing, &params))
        .await
        .map_err(|e| format!("file read task failed: {e}"))?
}

fn read_blocking(
    dir: &Path,
    backing: &FileBacking,
    params: &Map<String, Value>,
) -> Result<Value, String> {
    let root = std::fs::canonicalize(dir).map_err(|e| {
        format!("the data folder {} (BOARDSMITH_DATA_FILES) cannot be opened: {e}", dir.display())
    })?;
    if backing.mode == FileMode::List {
        let files = list_files(&root);
        return Ok(Value::Array(files.into_iter().map(|f| f.to_json()).collect()));
    }
    let rel = template::expand_plain(&backing.path, params);
    let path = resolve(&root, &rel)?;
    let meta = std::fs::metadata(&path).map_err(|e| format!("cannot read `{rel}`: {e}"))?;
    if !meta.is_file() {
        return Err(format!("`{rel}` is not a file{}", available(&root)));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!(
            "`{rel}` is {} MiB; files above {} MiB are not read",
            meta.len() >> 20,
            MAX_FILE_BYTES >> 20
        ));
    }
    let format = match backing.format.or_else(|| format_of(&path)) {
        Some(f) => f,
        None => {
            return Err(format!("`{rel}`: unknown file type; expected a .csv, .tsv or .json file"));
        }
    };
    let bytes = std::fs::read(&path).map_err(|e| format!("cannot read `{rel}`: {e}"))?;
    let mut value = match format {
        FileFormat::Csv => parse_csv(&bytes, b',').map_err(|e| format!("`{rel}`: {e}"))?,
        FileFormat::Tsv => parse_csv(&bytes, b'\t').map_err(|e| format!("`{rel}`: {e}"))?,
        FileFormat::Json => {
            let v: Value = serde_json::from_slice(&bytes)
                .map_err(|e| format!("`{rel}` is not valid JSON: {e}"))?;
            let sel = backing
                .select
                .as_deref()
                .map(|s| template::expand_plain(s, params))
                .unwrap_or_default();
            mapping::select(&v, &sel).map_err(|e| format!("`{rel}`: {e}"))?.clone()
        }
    };
    if let Some(vf) = &backing.value_field {
        let vf = template::expand_plain(vf, params);
        let tf = backing
            .time_field
            .as_deref()
            .map(|t| template::expand_plain(t, params))
            .unwrap_or_default();
        value = series(&value, &tf, &vf).map_err(|e| format!("`{rel}`: {e}"))?;
    }
    Ok(value)
}

/// Resolves a relative path inside `root` (already canonical), rejecting escapes.
fn resolve(root: &Path, rel: &str) -> Result<PathBuf, String> {
    let rel_trim = rel.trim();
    if rel_trim.is_empty() {
        return Err(format!("no file name given{}", available(root)));
    }
    let p = Path::new(rel_trim);
    let escapes = rel_trim.contains('\0')
        || rel_trim.starts_with('\\')
        || p.components().any(|c| !matches!(c, Component::Normal(_) | Component::CurDir));
    if escapes {
        return Err(format!(
            "`{rel_trim}` is not allowed: give a path relative to the data folder, without `..` \
             or a leading `/`"
        ));
    }
    let joined = root.join(p);
    let canon = match std::fs::canonicalize(&joined) {
        Ok(c) => c,
        Err(_) if !joined.exists() => {
            return Err(format!(
                "file `{rel_trim}` not found in the data folder{}",
                available(root)
            ));
        }
        Err(e) => return Err(format!("cannot open `{rel_trim}`: {e}")),
    };
    if !canon.starts_with(root) {
        return Err(format!("`{rel_trim}` is not allowed: it links outside the data folder"));
    }
    Ok(canon)
}

fn format_of(path: &Path) -> Option<FileFormat> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "csv" => Some(FileFormat::Csv),
        "tsv" | "tab" => Some(FileFormat::Tsv),
        "json" => Some(FileFormat::Json),
        _ => None,
    }
}

/// "; available files: a.csv, b.json (+3 more)" or "; the data folder has no CSV/JSON files".
fn available(root: &Path) -> String {
    let files = list_files(root);
    if files.is_empty() {
        return "; the data folder has no .csv/.tsv/.json files".into();
    }
    let names: Vec<&str> = files.iter().take(10).map(|f| f.file.as_str()).collect();
    let more =
        if files.len() > 10 { format!(" (+{} more)", files.len() - 10) } else { String::new() };
    format!("; available files: {}{more}", names.join(", "))
}

struct Listed {
    file: String,
    format: FileFormat,
    bytes: u64,
    modified: Option<i64>,
}

impl Listed {
    fn to_json(&self) -> Value {
        let format = match self.format {
            FileFormat::Csv => "csv",
            FileFormat::Tsv => "tsv",
            FileFormat::Json => "json",
        };
        serde_json::json!({
            "file": self.file, "format": format, "bytes": self.bytes, "modified": self.modified,
        })
    }
}

/// Readable files under `root`, sorted by relative path (`/`-separated). Hidden entries and
/// symlinks resolving outside the folder are skipped.
fn list_files(root: &Path) -> Vec<Listed> {
    let mut out = Vec::new();
    let mut stack = vec![(root.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            if out.len() >= MAX_LISTED {
                break;
            }
            let name = entry.file_name();
            if name.to_string_lossy().starts_with('.') {
                continue;
            }
            let Ok(canon) = std::fs::canonicalize(entry.path()) else { continue };
            if !canon.starts_with(root) {
                continue;
            }
            let Ok(meta) = std::fs::metadata(&canon) else { continue };
            if meta.is_dir() {
                if depth + 1 < MAX_DEPTH {
                    stack.push((entry.path(), depth + 1));
                }
                continue;
            }
            let Some(format) = format_of(&canon) else { continue };
            let Ok(rel) = entry.path().strip_prefix(root).map(Path::to_path_buf) else { continue };
            let file = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            let modified = meta
                .modified()
                .ok()
                .and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| d.as_secs() as i64);
            out.push(Listed { file, format, bytes: meta.len(), modified });
        }
    }
    out.sort_by(|a, b| a.file.cmp(&b.file));
    out
}

fn is_time_column(name: &str) -> bool {
    TIME_COLUMNS.iter().any(|t| name.eq_ignore_ascii_case(t))
}

/// Converts a time cell: ISO string → epoch seconds, epoch ms → seconds, seconds as is.
fn time_value(v: &Value) -> Option<i64> {
    match v {
        Value::String(s) => parse_iso(s),
        Value::Number(n) => {
            let f = n.as_f64()?;
            Some(if f.abs() > 1e11 { (f / 1000.0).floor() as i64 } else { f.floor() as i64 })
        }
        _ => None,
    }
}

/// CSV/TSV with a header row → rows.
fn parse_csv(bytes: &[u8], delimiter: u8) -> Result<Value, String> {
    let (headers, records) = super::http::mapping::csv_table(bytes, delimiter)?;
    if headers.is_empty() {
        return Err("the file is empty (expected a header row)".into());
    }
    let time_col = headers.iter().position(|h| is_time_column(h));
    let mut rows = Vec::new();
    for rec in records {
        let mut row = Map::new();
        for (j, h) in headers.iter().enumerate() {
            let cell = rec.get(j).map_or("", String::as_str);
            let v = if cell.is_empty() {
                Value::Null
            } else {
                parse_number(cell).unwrap_or_else(|| Value::String(cell.to_owned()))
            };
            let v = if Some(j) == time_col { time_value(&v).map_or(v, Value::from) } else { v };
            row.insert(h.clone(), v);
        }
        rows.push(row);
    }
    if let Some(tc) = time_col {
        let key = &headers[tc];
        if rows.iter().all(|r| r.get(key).is_some_and(Value::is_i64)) {
            rows.sort_by_key(|r| r.get(key).and_then(Value::as_i64).unwrap_or(0));
        }
    }
    Ok(Value::Array(rows.into_iter().map(Value::Object).collect()))
}

/// Projects rows onto `{time, value}`, sorted ascending with duplicate times dropped.
fn series(rows: &Value, time_field: &str, value_field: &str) -> Result<Value, String> {
    let Value::Array(items) = rows else {
        return Err(format!("expected an array of rows, got {}", describe(rows)));
    };
    let first = items.iter().find_map(Value::as_object);
    let columns =
        || first.map(|o| o.keys().cloned().collect::<Vec<_>>().join(", ")).unwrap_or_default();
    let tf = if time_field.is_empty() {
        first.and_then(|o| o.keys().find(|k| is_time_column(k)).cloned()).ok_or_else(|| {
            format!("no time column found (columns: {}); pass timeField", columns())
        })?
    } else {
        time_field.to_owned()
    };
    if let Some(o) = first {
        for f in [&tf, &value_field.to_owned()] {
            if !o.contains_key(f.as_str()) {
                return Err(format!("no column `{f}` (columns: {})", columns()));
            }
        }
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let t = item.get(&tf).ok_or_else(|| format!("row {}: missing `{tf}`", i + 1))?;
        let Some(t) = time_value(t) else {
            return Err(format!(
                "row {}: `{tf}` should be an ISO date or epoch number, got {}",
                i + 1,
                describe(t)
            ));
        };
        let v = match item.get(value_field) {
            None | Some(Value::Null) => Value::Null,
            Some(v) => to_number(v).ok_or_else(|| {
                format!("row {}: `{value_field}` should be a number, got {}", i + 1, describe(v))
            })?,
        };
        let mut row = Map::new();
        row.insert("time".into(), Value::from(t));
        row.insert("value".into(), v);
        out.push(row);
    }
    Ok(mapping::finish_rows(out))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn csv_parses_numbers_and_dates() {
        let v = parse_csv(b"\xEF\xBB\xBFDate,Close,Note\n2024-01-03,2.5,b\n2024-01-02,1,\n", b',')
            .unwrap();
        assert_eq!(
            v,
            json!([
                {"Date": 1_704_153_600, "Close": 1, "Note": null},
                {"Date": 1_704_240_000, "Close": 2.5, "Note": "b"}
            ])
        );
        let s = series(&v, "", "Close").unwrap();
        assert_eq!(
            s,
            json!([{"time": 1_704_153_600, "value": 1}, {"time": 1_704_240_000, "value": 2.5}])
        );
        assert!(series(&v, "", "close").unwrap_err().contains("no column `close`"));
    }
}
