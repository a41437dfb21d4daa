//! Files: reading a chat file tolerant of damaged lines, appending one line atomically, and the
//! fingerprint the index cache keys on.

use super::*;

/// A line that could not be read (skipped; the rest of the chat loads).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadWarning {
    /// 1-based line number.
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

pub(super) fn parse_lines(chat_id: &str, bytes: &[u8]) -> LoadedChat {
    let mut loaded = LoadedChat::default();
    let ends_clean = bytes.last().is_none_or(|b| *b == b'\n');
    let mut lines = bytes.split(|b| *b == b'\n').enumerate().peekable();
    while let Some((index, line)) = lines.next() {
        let is_last = lines.peek().is_none();
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<RunRecord>(line) {
            Ok(run) => loaded.runs.push(run),
            Err(e) => {
                let partial = is_last && !ends_clean;
                let reason = if partial {
                    format!("partial last line ({} bytes) ignored: {e}", line.len())
                } else {
                    format!("unreadable line ignored: {e}")
                };
                tracing::warn!(chat_id, line = index + 1, partial, "{reason}");
                loaded.warnings.push(LoadWarning { line: index + 1, partial, reason });
            }
        }
    }
    loaded
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
    let mut file = OpenOptions::new().read(true).append(true).create(true).open(path)?;
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
