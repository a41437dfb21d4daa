//! Files: reading a chat file tolerant of damaged lines (and a shared store's rows, line by
//! line), appending one line atomically, the fingerprint the index cache keys on, and reading a
//! whole chat directory for `boardsmith migrate-store`.

use super::*;

/// A line that could not be read (skipped; the rest of the chat loads).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadWarning {
    /// 1-based line number (in a shared store, the row's place among the chat's rows).
    pub line: usize,
    /// The last line, without its newline: a write cut short by a crash.
    pub partial: bool,
    /// What was wrong.
    pub reason: String,
}

/// A chat as loaded: its readable runs, in order, and what was skipped.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LoadedChat {
    /// The runs.
    pub runs: Vec<RunRecord>,
    /// Skipped lines.
    pub warnings: Vec<LoadWarning>,
}

/// What the index cache keeps per chat file; valid while the file's length and mtime match.
#[derive(Debug, Clone)]
pub(super) struct CachedChat {
    pub(super) len: u64,
    pub(super) modified: Option<SystemTime>,
    pub(super) summary: Option<ChatSummary>,
    pub(super) last_system: Option<SystemSnapshot>,
}

/// One stored line as a run, or what was wrong with it (`number`: 1-based; `partial`: the
/// last line of a file that does not end in a newline).
pub(super) fn parse_line(
    chat_id: &str,
    number: usize,
    line: &[u8],
    partial: bool,
) -> Result<RunRecord, LoadWarning> {
    serde_json::from_slice::<RunRecord>(line).map_err(|e| {
        let reason = if partial {
            format!("partial last line ({} bytes) ignored: {e}", line.len())
        } else {
            format!("unreadable line ignored: {e}")
        };
        tracing::warn!(chat_id, line = number, partial, "{reason}");
        LoadWarning { line: number, partial, reason }
    })
}

/// Calls `keep` with each readable line of a chat file (without its line end) and its run;
/// returns what was skipped.
fn each_line(
    chat_id: &str,
    bytes: &[u8],
    mut keep: impl FnMut(&[u8], RunRecord),
) -> Vec<LoadWarning> {
    let mut warnings = Vec::new();
    let ends_clean = bytes.last().is_none_or(|b| *b == b'\n');
    let mut lines = bytes.split(|b| *b == b'\n').enumerate().peekable();
    while let Some((index, line)) = lines.next() {
        let is_last = lines.peek().is_none();
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match parse_line(chat_id, index + 1, line, is_last && !ends_clean) {
            Ok(run) => keep(line, run),
            Err(warning) => warnings.push(warning),
        }
    }
    warnings
}

pub(super) fn parse_lines(chat_id: &str, bytes: &[u8]) -> LoadedChat {
    let mut runs = Vec::new();
    let warnings = each_line(chat_id, bytes, |_, run| runs.push(run));
    LoadedChat { runs, warnings }
}

/// The ids of the chat files in `dir` (none if it does not exist); other files are ignored.
pub(super) fn chat_ids(dir: &Path) -> Result<Vec<String>, MemoryError> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err(dir)(e)),
    };
    let mut ids = Vec::new();
    for entry in entries {
        let name = entry.map_err(io_err(dir))?.file_name();
        if let Some(chat_id) = name.to_str().and_then(|n| n.strip_suffix(".json"))
            && validate_chat_id(chat_id).is_ok()
        {
            ids.push(chat_id.to_owned());
        }
    }
    Ok(ids)
}

/// A chat file's readable lines as written, for copying them elsewhere
/// (`boardsmith migrate-store`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChatFile {
    /// The chat.
    pub chat_id: String,
    /// Each readable line, trimmed, with its run's `updatedAt`, in order.
    pub lines: Vec<(i64, String)>,
    /// The lines skipped.
    pub warnings: Vec<LoadWarning>,
}

/// Every chat file in `dir` (a chat directory, see [`MemoryConfig::dir`]), by chat id.
pub fn read_chat_files(dir: &Path) -> Result<Vec<ChatFile>, MemoryError> {
    let mut ids = chat_ids(dir)?;
    ids.sort_unstable();
    let mut files = Vec::with_capacity(ids.len());
    for chat_id in ids {
        let path = dir.join(format!("{chat_id}.json"));
        let bytes = fs::read(&path).map_err(io_err(&path))?;
        let mut lines = Vec::new();
        let warnings = each_line(&chat_id, &bytes, |line, run| {
            // A line that parsed as JSON is UTF-8.
            lines.push((run.updated_at, String::from_utf8_lossy(line.trim_ascii()).into_owned()));
        });
        files.push(ChatFile { chat_id, lines, warnings });
    }
    Ok(files)
}

pub(super) fn read_chat(
    chat_id: &str,
    path: &Path,
) -> Result<(LoadedChat, CachedChat), MemoryError> {
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(MemoryError::NotFound(chat_id.to_owned()));
        }
        Err(e) => return Err(io_err(path)(e)),
    };
    let meta = file.metadata().map_err(io_err(path))?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.read_to_end(&mut bytes).map_err(io_err(path))?;
    let loaded = parse_lines(chat_id, &bytes);
    let cached = CachedChat {
        len: bytes.len() as u64,
        modified: meta.modified().ok(),
        summary: summary_of(chat_id, &loaded.runs),
        last_system: loaded.runs.iter().rev().find_map(|r| r.system.clone()),
    };
    Ok((loaded, cached))
}

/// Appends one line atomically; returns the file's new length and mtime.
pub(super) fn append_line(path: &Path, line: &[u8]) -> io::Result<(u64, Option<SystemTime>)> {
    let mut file = base::fs_private::options().read(true).append(true).create(true).open(path)?;
    let len = file.metadata()?.len();
    let mut buf = Vec::with_capacity(line.len() + 2);
    if len > 0 {
        // A crash may have left a partial last line: never glue this run onto it.
        file.seek(SeekFrom::End(-1))?;
        let mut last = [0u8; 1];
        file.read_exact(&mut last)?;
        if last[0] != b'\n' {
            buf.push(b'\n');
        }
    }
    buf.extend_from_slice(line);
    buf.push(b'\n');
    file.write_all(&buf)?;
    file.sync_data()?;
    if len == 0
        && let Some(dir) = path.parent()
    {
        // Make the new file's directory entry durable too.
        File::open(dir)?.sync_all()?;
    }
    let meta = file.metadata()?;
    Ok((meta.len(), meta.modified().ok()))
}
