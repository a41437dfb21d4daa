//! Untrusted documents are parsed in a child process, never in the server: this binary's
//! hidden `doc-worker` subcommand, one process per document, as model-written JavaScript runs in
//! sandbox workers.
//!
//! A PDF parser is a large body of code fed by whoever holds a `write` key (or controls a page
//! a `{url}` document names): a nesting that overflows its stack, a FlateDecode bomb or a page
//! tree that makes it loop must cost that one request, not the process every analyst uses. The
//! child:
//!
//! - runs with an empty environment in `/`, under an address-space cap (`RLIMIT_AS`) and a
//!   CPU-time cap (`RLIMIT_CPU`), and is killed at a wall-clock deadline;
//! - reads its whole input from stdin, then installs a seccomp filter that refuses every
//!   syscall opening a file, a socket or a program (no network, no data dir) before the parser
//!   sees a byte;
//! - refuses nesting deeper than a bound before parsing, skips pages whose content it has
//!   already read (one stream shared by 200 pages is read once), and stops extracting as soon
//!   as the text passes what the chunk limit could hold, instead of checking afterwards.
//!
//! Whatever happens in the child, the parent answers with a [`ParseError`] naming the limit
//! (a child that died of a stack overflow, out of memory, out of CPU time or at the deadline)
//! and the server notices nothing else. At most [`ParserLimits::concurrent`] children run at
//! once. Knows nothing of knowledge bases, chunks or HTTP.

use std::collections::HashSet;
use std::io::{BufRead, Read, Write};
use std::path::PathBuf;
use std::process::{ExitCode, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Semaphore;

use super::extract::Extracted;

/// The hidden subcommand that turns the binary into a document worker.
pub const SUBCOMMAND: &str = "doc-worker";

/// Stack of the parsing thread: the depth pre-scan keeps honest documents far from it; a
/// nesting hidden in a compressed object stream overflows it and is reported as depth.
const PARSE_STACK_BYTES: usize = 16 << 20;
/// Stderr kept from a child to explain its death.
const STDERR_TAIL_BYTES: u64 = 16 << 10;

/// What a document may cost its parser.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ParserLimits {
    /// Address space of the child (`RLIMIT_AS`), default 512 MiB.
    pub memory_bytes: u64,
    /// CPU time of the child (`RLIMIT_CPU`), default 10 s.
    pub cpu_seconds: u64,
    /// Wall-clock time before the child is killed, default 20 s.
    pub wall_ms: u64,
    /// Most pages, default 2,000.
    pub max_pages: usize,
    /// Deepest nesting of arrays and dictionaries, default 64.
    pub max_depth: usize,
    /// Children at once, default 2; a document waits up to `wall_ms` for a turn, then is
    /// refused as busy.
    pub concurrent: usize,
}

impl Default for ParserLimits {
    fn default() -> Self {
        Self {
            memory_bytes: 512 << 20,
            cpu_seconds: 10,
            wall_ms: 20_000,
            max_pages: 2_000,
            max_depth: 64,
            concurrent: 2,
        }
    }
}

/// The worker program and its limits.
#[derive(Debug, Clone)]
pub struct ParserConfig {
    /// The program (this binary) and the arguments that make it a document worker.
    pub program: PathBuf,
    /// Arguments, `[SUBCOMMAND]` by default.
    pub args: Vec<String>,
    /// Bounds.
    pub limits: ParserLimits,
}

impl ParserConfig {
    /// This binary as the worker (`current_exe`; tests name the real binary instead).
    pub fn new(program: PathBuf) -> Self {
        Self { program, args: vec![SUBCOMMAND.to_owned()], limits: ParserLimits::default() }
    }
}

impl Default for ParserConfig {
    fn default() -> Self {
        Self::new(std::env::current_exe().unwrap_or_else(|_| PathBuf::from("boardsmith")))
    }
}

/// Which bound a document ran into: a closed set, named in the error's data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ParseLimit {
    /// Arrays or dictionaries nested too deep.
    Depth,
    /// The parser needed more memory than its cap (a decompression bomb, say).
    Memory,
    /// More CPU time than its cap.
    CpuTime,
    /// Longer than the wall-clock deadline.
    WallTime,
    /// More pages than allowed.
    Pages,
    /// More text than the document's chunk limit can hold.
    Text,
    /// Every parser slot taken for the whole wait.
    Busy,
}

/// Why a document could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// A bound was reached; the message says which, in words an analyst can act on.
    #[error("{message}")]
    Limit {
        /// The bound.
        limit: ParseLimit,
        /// What happened.
        message: String,
    },
    /// Not a readable document of its format (corrupt, no text, encrypted...).
    #[error("{0}")]
    Unreadable(String),
    /// The worker could not be started or spoke nonsense: our fault, logged.
    #[error("document worker: {0}")]
    Internal(String),
}

impl ParseError {
    fn limit(limit: ParseLimit, message: impl Into<String>) -> Self {
        Self::Limit { limit, message: message.into() }
    }
}

/// The first line the parent sends; the document's bytes follow it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Job {
    /// Bytes of the document after this line.
    len: usize,
    /// Most bytes of text to extract.
    max_text_bytes: usize,
    limits: ParserLimits,
}

/// The child's one line of answer.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "camelCase")]
enum Reply {
    Ok { text: String },
    Limit { limit: ParseLimit, message: String },
    Unreadable { message: String },
}

/// Runs document workers under [`ParserLimits`].
#[derive(Debug, Clone)]
pub struct DocParser {
    config: Arc<ParserConfig>,
    slots: Arc<Semaphore>,
}

impl DocParser {
    /// A parser running `config.program`.
    pub fn new(config: ParserConfig) -> Self {
        let slots = Arc::new(Semaphore::new(config.limits.concurrent.max(1)));
        Self { config: Arc::new(config), slots }
    }

    /// The text of a PDF, at most `max_text_bytes` of it (past that: [`ParseLimit::Text`]).
    #[base::boxed]
    pub async fn pdf(&self, bytes: &[u8], max_text_bytes: usize) -> Result<Extracted, ParseError> {
        let limits = self.config.limits;
        let wall = Duration::from_millis(limits.wall_ms);
        let Ok(Ok(_slot)) = tokio::time::timeout(wall, self.slots.acquire()).await else {
            return Err(ParseError::limit(
                ParseLimit::Busy,
                "every document reader is busy; try again in a minute",
            ));
        };
        let job = Job { len: bytes.len(), max_text_bytes, limits };
        let mut child = tokio::process::Command::new(&self.config.program)
            .args(&self.config.args)
            // No server secrets, no data dir: an empty environment in `/`.
            .env_clear()
            // As for sandbox workers: mimalloc's default 1 GiB reservations would use up the
            // address-space cap at once.
            .env("MIMALLOC_ARENA_RESERVE", "16MiB")
            .current_dir("/")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| {
                ParseError::Internal(format!("cannot start {}: {e}", self.config.program.display()))
            })?;
        let (Some(mut stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(ParseError::Internal("missing pipes".into()));
        };
        let mut head = serde_json::to_vec(&job).map_err(|e| ParseError::Internal(e.to_string()))?;
        head.push(b'\n');
        // JSON may spell a character in up to 6 bytes (`\u0001`); more than that is nonsense.
        let max_reply = (max_text_bytes as u64).saturating_mul(6) + (64 << 10);
        let talk = async {
            // A child that dies early closes its stdin: the write fails and its exit says why.
            let feed = async {
                let _ = stdin.write_all(&head).await;
                let _ = stdin.write_all(bytes).await;
                drop(stdin);
            };
            let mut reply = Vec::new();
            let mut tail = Vec::new();
            let (mut stdout, mut stderr) = (stdout.take(max_reply), stderr.take(STDERR_TAIL_BYTES));
            let read = stdout.read_to_end(&mut reply);
            let read_err = stderr.read_to_end(&mut tail);
            let ((), read, _) = tokio::join!(feed, read, read_err);
            read.map_err(|e| ParseError::Internal(format!("reading the worker: {e}")))?;
            let status =
                child.wait().await.map_err(|e| ParseError::Internal(format!("waiting: {e}")))?;
            Ok::<_, ParseError>((status, reply, tail))
        };
        let (status, reply, tail) = match tokio::time::timeout(wall, talk).await {
            Ok(r) => r?,
            Err(_) => {
                let _ = child.kill().await;
                return Err(ParseError::limit(
                    ParseLimit::WallTime,
                    format!("reading the PDF took longer than {} s", wall.as_secs()),
                ));
            }
        };
        if status.success()
            && let Ok(reply) = serde_json::from_slice::<Reply>(&reply)
        {
            return match reply {
                Reply::Ok { text } => Ok(Extracted::plain(text)),
                Reply::Limit { limit, message } => Err(ParseError::limit(limit, message)),
                Reply::Unreadable { message } => Err(ParseError::Unreadable(message)),
            };
        }
        Err(classify_death(status, &String::from_utf8_lossy(&tail), &limits))
    }
}

/// Why a child died without a valid answer, from its exit and its last stderr.
fn classify_death(
    status: std::process::ExitStatus,
    stderr: &str,
    limits: &ParserLimits,
) -> ParseError {
    use std::os::unix::process::ExitStatusExt as _;
    const SIGXCPU: i32 = 24;
    const SIGKILL: i32 = 9;
    if stderr.contains("overflowed its stack") {
        return ParseError::limit(
            ParseLimit::Depth,
            "the PDF nests its objects too deeply to read (its parser ran out of stack)",
        );
    }
    if stderr.contains("memory allocation of") || stderr.contains("out of memory") {
        return ParseError::limit(
            ParseLimit::Memory,
            format!(
                "reading the PDF needs more than {} MiB of memory (a decompression bomb?)",
                limits.memory_bytes >> 20
            ),
        );
    }
    match status.signal() {
        Some(SIGXCPU) | Some(SIGKILL) => ParseError::limit(
            ParseLimit::CpuTime,
            format!("reading the PDF took more than {} s of CPU time", limits.cpu_seconds),
        ),
        _ => {
            tracing::warn!(?status, stderr = %stderr.trim(), "document worker died");
            ParseError::Unreadable("the PDF could not be parsed".into())
        }
    }
}

/// Entry point of the hidden subcommand: one job from stdin, one reply line on stdout.
pub fn main() -> ExitCode {
    let mut input = std::io::stdin().lock();
    let mut first = String::new();
    if input.read_line(&mut first).is_err() {
        return ExitCode::FAILURE;
    }
    let Ok(job) = serde_json::from_str::<Job>(&first) else {
        eprintln!("doc-worker: expected a job line");
        return ExitCode::FAILURE;
    };
    let limits = job.limits;
    let caps = [
        (rlimit::Resource::AS, limits.memory_bytes, limits.memory_bytes),
        (rlimit::Resource::CPU, limits.cpu_seconds, limits.cpu_seconds + 1),
    ];
    for (resource, soft, hard) in caps {
        if let Err(e) = rlimit::setrlimit(resource, soft, hard) {
            eprintln!("doc-worker: cannot set {resource:?}: {e}");
            return ExitCode::FAILURE;
        }
    }
    let mut bytes = Vec::new();
    if (&mut input).take(job.len as u64).read_to_end(&mut bytes).is_err() || bytes.len() != job.len
    {
        eprintln!("doc-worker: short input");
        return ExitCode::FAILURE;
    }
    drop(input);
    if let Err(e) = confine() {
        // Fail closed: an unconfined parser is not run.
        eprintln!("doc-worker: cannot confine the parser: {e}");
        return ExitCode::FAILURE;
    }
    let parse = std::thread::Builder::new()
        .name("parse".into())
        .stack_size(PARSE_STACK_BYTES)
        .spawn(move || pdf_text(&bytes, job.max_text_bytes, &limits));
    let reply = match parse.map(std::thread::JoinHandle::join) {
        Ok(Ok(reply)) => reply,
        // A panic in the parser (printed on stderr): this document is unreadable.
        Ok(Err(_)) => Reply::Unreadable { message: "the PDF could not be parsed".into() },
        Err(e) => {
            eprintln!("doc-worker: cannot start the parse thread: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut out = std::io::stdout().lock();
    let written = serde_json::to_writer(&mut out, &reply).map_err(std::io::Error::from);
    match written.and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}

/// No new files, sockets or programs from here on: a parser that is made to run code finds
/// no network and no data dir. Everything else (memory, threads, the pipes already open) is
/// allowed, so the filter does not depend on the allocator's or the runtime's habits.
fn confine() -> Result<(), String> {
    use seccompiler::{BpfProgram, SeccompAction, SeccompFilter, TargetArch};
    let mut denied = vec![
        libc::SYS_openat,
        libc::SYS_openat2,
        libc::SYS_open_by_handle_at,
        libc::SYS_name_to_handle_at,
        libc::SYS_socket,
        libc::SYS_socketpair,
        libc::SYS_connect,
        libc::SYS_bind,
        libc::SYS_listen,
        libc::SYS_accept4,
        libc::SYS_execve,
        libc::SYS_execveat,
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_mkdirat,
        libc::SYS_unlinkat,
        libc::SYS_renameat,
        libc::SYS_linkat,
        libc::SYS_symlinkat,
        libc::SYS_fchmodat,
        libc::SYS_truncate,
        libc::SYS_mount,
        libc::SYS_chdir,
    ];
    #[cfg(target_arch = "x86_64")]
    denied.extend([
        libc::SYS_open,
        libc::SYS_creat,
        libc::SYS_accept,
        libc::SYS_fork,
        libc::SYS_vfork,
        libc::SYS_mkdir,
        libc::SYS_unlink,
        libc::SYS_rename,
        libc::SYS_link,
        libc::SYS_symlink,
        libc::SYS_chmod,
    ]);
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| e.to_string())?;
    let rules = denied.into_iter().map(|n| (n, Vec::new())).collect();
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(|e| e.to_string())?;
    let program: BpfProgram =
        filter.try_into().map_err(|e: seccompiler::BackendError| e.to_string())?;
    seccompiler::apply_filter(&program).map_err(|e| e.to_string())
}

/// The pages' text in order, pages separated by a blank line.
fn pdf_text(bytes: &[u8], max_text_bytes: usize, limits: &ParserLimits) -> Reply {
    if let Some(depth) = nesting_depth_over(bytes, limits.max_depth) {
        return Reply::Limit {
            limit: ParseLimit::Depth,
            message: format!(
                "the PDF nests arrays or dictionaries {depth} deep; at most {} are read",
                limits.max_depth
            ),
        };
    }
    let doc = match lopdf::Document::load_mem(bytes) {
        Ok(doc) => doc,
        Err(e) => return Reply::Unreadable { message: format!("not a readable PDF: {e}") },
    };
    let pages = doc.get_pages();
    if pages.len() > limits.max_pages {
        return Reply::Limit {
            limit: ParseLimit::Pages,
            message: format!(
                "the PDF has {} pages; at most {} are read",
                pages.len(),
                limits.max_pages
            ),
        };
    }
    let mut text = String::new();
    let mut seen = HashSet::new();
    // What the content streams may inflate to, all pages together: lopdf inflates a stream
    // whole and, out of memory, silently keeps what it had, so a bomb is measured first.
    let mut inflate_budget = limits.memory_bytes / 4;
    for (number, id) in pages {
        let contents = doc.get_page_contents(id);
        // Pages drawn by the same content streams say the same thing: read it once.
        if !seen.insert(contents.clone()) {
            continue;
        }
        for content in contents {
            if let Ok(lopdf::Object::Stream(stream)) = doc.get_object(content) {
                let Some(left) = inflated_within(stream, inflate_budget) else {
                    return Reply::Limit {
                        limit: ParseLimit::Memory,
                        message: format!(
                            "the PDF's pages inflate to more than {} MiB (a decompression bomb?)",
                            (limits.memory_bytes / 4) >> 20
                        ),
                    };
                };
                inflate_budget = left;
            }
        }
        let t = match doc.extract_text(&[number]) {
            Ok(t) => t,
            Err(e) => return Reply::Unreadable { message: format!("page {number}: {e}") },
        };
        let t = t.trim();
        if t.is_empty() {
            continue;
        }
        if text.len() + t.len() > max_text_bytes {
            return Reply::Limit {
                limit: ParseLimit::Text,
                message: format!(
                    "the PDF holds more than {max_text_bytes} bytes of text, more than a \
                     document may have; split it"
                ),
            };
        }
        text.push_str(t);
        text.push_str("\n\n");
    }
    let text = text.trim_end().to_owned();
    if text.is_empty() {
        return Reply::Unreadable {
            message: "the PDF has no extractable text (a scan? OCR it first)".into(),
        };
    }
    Reply::Ok { text }
}

/// `budget` less what a FlateDecode `stream` inflates to, or `None` past `budget`; other
/// streams cost their stored length. Inflates into a sink: nothing is kept.
fn inflated_within(stream: &lopdf::Stream, budget: u64) -> Option<u64> {
    let flate =
        matches!(stream.filters().as_deref(), Ok([name]) if *name == b"FlateDecode".as_slice());
    let size = if flate {
        let decoder = flate2::read::ZlibDecoder::new(stream.content.as_slice());
        // A corrupt stream counts what inflated before the damage, as lopdf keeps it.
        std::io::copy(&mut decoder.take(budget + 1), &mut std::io::sink()).unwrap_or(0)
    } else {
        stream.content.len() as u64
    };
    budget.checked_sub(size)
}

/// The first nesting depth of arrays (`[`) and dictionaries (`<<`) past `max` in the file's
/// own syntax, skipping strings, comments and stream bodies (binary data); `None` if none.
/// Objects inside compressed object streams are not seen here: the parse thread's bounded
/// stack catches those.
pub fn nesting_depth_over(bytes: &[u8], max: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                while i < bytes.len() && !matches!(bytes[i], b'\r' | b'\n') {
                    i += 1;
                }
            }
            b'(' => {
                // A literal string: balanced parentheses, `\` escapes.
                let mut level = 0usize;
                while i < bytes.len() {
                    match bytes[i] {
                        b'\\' => i += 1,
                        b'(' => level += 1,
                        b')' => {
                            level -= 1;
                            if level == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
            }
            b'[' => {
                depth += 1;
                if depth > max {
                    return Some(depth);
                }
            }
            b'<' if bytes.get(i + 1) == Some(&b'<') => {
                depth += 1;
                i += 1;
                if depth > max {
                    return Some(depth);
                }
            }
            b'<' => {
                // A hex string.
                while i < bytes.len() && bytes[i] != b'>' {
                    i += 1;
                }
            }
            b']' => depth = depth.saturating_sub(1),
            b'>' if bytes.get(i + 1) == Some(&b'>') => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            b's' if bytes[i..].starts_with(b"stream")
                && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric())
                && bytes.get(i + 6).is_some_and(|c| matches!(c, b'\r' | b'\n')) =>
            {
                // A stream's body is data, not syntax: resume after `endstream`.
                let body = i + 6;
                match find(&bytes[body..], b"endstream") {
                    Some(end) => i = body + end + b"endstream".len() - 1,
                    None => return None,
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn nesting_counts_arrays_and_dictionaries_but_not_strings_or_streams() {
        assert_eq!(nesting_depth_over(b"<< /A [ [ 1 ] ] >>", 3), None);
        assert_eq!(nesting_depth_over(b"<< /A [ [ [ 1 ] ] ] >>", 3), Some(4));
        // Brackets inside strings, hex strings, comments and stream bodies do not count.
        let quiet = b"(([[[ \\) [[[) <5b5b5b> % [[[[[\n<< /Length 5 >>\nstream\n[[[[[\nendstream";
        assert_eq!(nesting_depth_over(quiet, 1), None);
        assert_eq!(nesting_depth_over(&[b'['; 10_000], 64), Some(65));
    }

    proptest::proptest! {
        #[test]
        fn nesting_scan_never_panics(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512), max in 0usize..8) {
            let _ = nesting_depth_over(&bytes, max);
        }
    }

    #[test]
    fn a_dead_child_is_named_by_its_limit() {
        use std::os::unix::process::ExitStatusExt as _;
        let limits = ParserLimits::default();
        let abort = std::process::ExitStatus::from_raw(6);
        let e = classify_death(abort, "thread 'parse' has overflowed its stack\n", &limits);
        assert!(matches!(e, ParseError::Limit { limit: ParseLimit::Depth, .. }), "{e:?}");
        let e = classify_death(abort, "memory allocation of 1073741824 bytes failed\n", &limits);
        assert!(matches!(e, ParseError::Limit { limit: ParseLimit::Memory, .. }), "{e:?}");
        let xcpu = std::process::ExitStatus::from_raw(24);
        assert!(matches!(
            classify_death(xcpu, "", &limits),
            ParseError::Limit { limit: ParseLimit::CpuTime, .. }
        ));
        assert!(matches!(classify_death(abort, "", &limits), ParseError::Unreadable(_)));
    }
}
