//! The `bash` tool: runs `/bin/bash -c <command>` in a working directory, after a path guard,
//! with a timeout that kills the whole process group and a cap on captured output.
//!
//! The guard is lexical, NOT a sandbox. Before running, the command is split into words (quotes
//! and escapes understood; operators and punctuation such as `=:,()` split further) and every
//! path in it is resolved — absolute paths, `~`, `..` segments and relative paths (so a symlink
//! in the tree that points out is caught) — following symlinks where they exist and lexically
//! where they do not. Each must lie inside an allowed path, and `cd` must stay in the tree;
//! otherwise the command is refused without running. What it cannot see: paths computed at run
//! time (`$VAR`, `$(...)`, `eval`, base64, a script that opens files) and programs that reach
//! paths on their own. Run the server as an unprivileged user (or in a container) if the model
//! must not read what that user can read.
//!
//! The command runs with `/bin/bash -c` in its own process group, stdin closed, and only
//! `PATH`, `HOME` and `LANG` in its environment. The timeout (10 s; `timeoutMs` up to 60 s),
//! cancellation and the end of the call all SIGKILL the whole group, so background jobs
//! (`cmd &`) do not outlive the call.
//!
//! Knows nothing of the run loop: it gets a command and a cancellation token.

use std::os::unix::process::ExitStatusExt;
use std::path::{Component, Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use futures::future::BoxFuture;
use serde::Serialize;
use serde_json::Value;
use tokio::io::AsyncReadExt;
use tokio::process::{ChildStderr, ChildStdout};
use tokio_util::sync::CancellationToken;

use super::{Args, BackendTool, ToolContext, ToolError};

const NAME: &str = "bash";

/// Device files that are harmless to name (`2>/dev/null` is everywhere).
const DEVICE_ALLOWLIST: [&str; 7] = [
    "/dev/null",
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
    "/dev/stdin",
    "/dev/stdout",
    "/dev/stderr",
];

/// Words after which the next word is a command (`if cd ..`).
const KEYWORDS: [&str; 13] = [
    "if", "then", "else", "elif", "do", "while", "until", "!", "{", "time", "exec", "command",
    "builtin",
];

/// How long the pipes may keep draining after the group was killed.
const KILL_GRACE: Duration = Duration::from_secs(2);

/// Confinement and limits of the `bash` tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BashConfig {
    /// Where commands run (`AGENT_BASH_WORKING_DIRECTORY`; default the process's cwd). Always
    /// an allowed path.
    pub working_dir: PathBuf,
    /// Further trees commands may touch (`AGENT_BASH_ALLOWED_PATHS`, comma-separated).
    pub allowed_paths: Vec<PathBuf>,
    /// Timeout when the call gives no `timeoutMs` (10 s).
    pub default_timeout: Duration,
    /// Upper bound for `timeoutMs` (60 s).
    pub max_timeout: Duration,
    /// Bytes of stdout+stderr kept (64 KiB); the rest is dropped with a note.
    pub output_cap: usize,
}

impl BashConfig {
    /// Defaults for a working directory: only it is allowed.
    pub fn new(working_dir: impl Into<PathBuf>) -> Self {
        Self {
            working_dir: working_dir.into(),
            allowed_paths: Vec::new(),
            default_timeout: Duration::from_secs(10),
            max_timeout: Duration::from_secs(60),
            output_cap: 64 * 1024,
        }
    }

    /// `AGENT_BASH_WORKING_DIRECTORY` and `AGENT_BASH_ALLOWED_PATHS` over the defaults.
    pub fn from_env() -> Self {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let working_dir = var("AGENT_BASH_WORKING_DIRECTORY")
            .map(PathBuf::from)
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("."));
        let mut config = Self::new(working_dir);
        if let Some(paths) = var("AGENT_BASH_ALLOWED_PATHS") {
            config.allowed_paths = paths
                .split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(PathBuf::from)
                .collect();
        }
        config
    }
}

/// The result of a command that ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BashOutput {
    /// The exit code; 128+N when killed by signal N (shell convention); null if unknown.
    pub exit_code: Option<i32>,
    /// Captured stdout (lossy UTF-8), with a note if truncated.
    pub stdout: String,
    /// Captured stderr (lossy UTF-8), with a note if truncated.
    pub stderr: String,
    /// Output beyond the cap was dropped.
    pub truncated: bool,
    /// The timeout killed the command.
    pub timed_out: bool,
}

/// The `bash` executor.
#[derive(Debug, Clone)]
pub struct BashTool {
    config: BashConfig,
    /// Canonical working directory.
    working_dir: PathBuf,
    /// Canonical allowed trees, the working directory first.
    allowed: Vec<PathBuf>,
    /// Canonical `$HOME`, for `~` and a bare `cd`.
    home: Option<PathBuf>,
    /// Directories of `$PATH`: an absolute command (`/usr/bin/python3`) in one of them runs.
    path_dirs: Vec<PathBuf>,
    /// The only variables the command sees.
    env: Vec<(String, String)>,
}

impl BashTool {
    /// An executor with this configuration; paths are canonicalized now (relative ones against
    /// the process's cwd).
    pub fn new(config: BashConfig) -> Self {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        let canon = |p: &Path| resolve(&cwd, p);
        let working_dir = canon(&config.working_dir);
        let mut allowed = vec![working_dir.clone()];
        for p in &config.allowed_paths {
            let p = canon(p);
            if !allowed.contains(&p) {
                allowed.push(p);
            }
        }
        let mut env = Vec::new();
        for key in ["PATH", "HOME", "LANG"] {
            if let Ok(v) = std::env::var(key) {
                env.push((key.to_owned(), v));
            }
        }
        if !env.iter().any(|(k, _)| k == "PATH") {
            env.push(("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into()));
        }
        let home = env.iter().find(|(k, _)| k == "HOME").map(|(_, v)| canon(Path::new(v)));
        let path_dirs = env
            .iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.split(':').filter(|d| d.starts_with('/')).map(PathBuf::from).collect())
            .unwrap_or_default();
        Self { config, working_dir, allowed, home, path_dirs, env }
    }

    /// The configuration it was built from.
    pub fn config(&self) -> &BashConfig {
        &self.config
    }

    /// The canonical allowed trees (working directory first).
    pub fn allowed_paths(&self) -> &[PathBuf] {
        &self.allowed
    }

    /// The path guard: `Err(reason)` if the command names a path outside the allowed trees or
    /// leaves the tree with `cd`. Nothing runs.
    pub fn check(&self, command: &str) -> Result<(), String> {
        let mut bases = vec![self.working_dir.clone()];
        let words = split_words(command);
        let mut i = 0;
        while i < words.len() {
            let w = &words[i];
            if w.command && w.unquoted && (w.text == "cd" || w.text == "pushd") {
                let mut j = i + 1;
                while words.get(j).is_some_and(|t| t.same_command_as(w) && is_cd_flag(&t.text)) {
                    j += 1;
                }
                let target = words.get(j).filter(|t| t.same_command_as(w));
                let dir = self.cd_target(target, &bases)?;
                bases.push(dir);
                if target.is_some() {
                    i = j;
                }
                i += 1;
                continue;
            }
            for (chunk, after_colon) in chunks(&w.text) {
                self.check_chunk(chunk, after_colon, w.command, &bases)?;
            }
            i += 1;
        }
        Ok(())
    }

    /// Where a `cd` goes, or why it may not.
    fn cd_target(&self, target: Option<&Word>, bases: &[PathBuf]) -> Result<PathBuf, String> {
        let Some(t) = target else {
            return match &self.home {
                Some(home) if self.is_allowed(home) => Ok(home.clone()),
                Some(home) => Err(format!(
                    "`cd` without a directory goes to HOME {}, which is outside the allowed paths {}",
                    home.display(),
                    self.allowed_list()
                )),
                None => Err("`cd` without a directory goes to HOME, which is not set".into()),
            };
        };
        if t.text == "-" {
            return Err("`cd -` cannot be checked; cd to an explicit directory".into());
        }
        if t.expansion {
            return Err(format!(
                "`cd {}` goes to a directory computed at run time, which cannot be checked; \
                 cd to a literal directory",
                t.text
            ));
        }
        let mut last = None;
        for base in bases {
            let dir = self.resolve_chunk(&t.text, base)?;
            if !self.is_allowed(&dir) {
                return Err(format!(
                    "`cd {}` leaves the allowed paths {} (it goes to {})",
                    t.text,
                    self.allowed_list(),
                    dir.display()
                ));
            }
            last = Some(dir);
        }
        last.ok_or_else(|| "no base directory".to_owned())
    }

    /// Checks one path-like chunk of a word against every directory the command may be in.
    fn check_chunk(
        &self,
        chunk: &str,
        after_colon: bool,
        command: bool,
        bases: &[PathBuf],
    ) -> Result<(), String> {
        // `https://host/x`: a URL, not a path.
        if after_colon && chunk.starts_with("//") {
            return Ok(());
        }
        if chunk.starts_with('/') {
            if DEVICE_ALLOWLIST.contains(&chunk) || chunk.starts_with("/dev/fd/") {
                return Ok(());
            }
            if command && self.is_path_program(chunk) {
                return Ok(());
            }
        }
        // `-I/etc`, `-f/etc/passwd`: a flag glued to an absolute path.
        if let Some(rest) = chunk.strip_prefix('-')
            && let Some(pos) = rest.find('/')
            && rest[..pos].chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        {
            self.check_chunk(&rest[pos..], false, false, bases)?;
        }
        for base in bases {
            let resolved = self.resolve_chunk(chunk, base)?;
            if !self.is_allowed(&resolved) {
                let via = if Path::new(chunk) == resolved {
                    String::new()
                } else if bases.len() > 1 {
                    // After a `cd` the command may be in any of these directories.
                    format!(" (from {} it resolves to {})", base.display(), resolved.display())
                } else {
                    format!(" (resolves to {})", resolved.display())
                };
                return Err(format!(
                    "path {chunk}{via} is outside the allowed paths {}; use paths inside them \
                     (commands run in {})",
                    self.allowed_list(),
                    self.working_dir.display()
                ));
            }
        }
        Ok(())
    }

    /// Resolves a chunk: `~` against HOME, relative against `base`, following symlinks.
    fn resolve_chunk(&self, chunk: &str, base: &Path) -> Result<PathBuf, String> {
        if let Some(rest) = chunk.strip_prefix('~') {
            if !(rest.is_empty() || rest.starts_with('/')) {
                return Err(format!("{chunk}: `~user` paths cannot be checked; use a full path"));
            }
            let home = self.home.as_ref().ok_or_else(|| format!("{chunk}: HOME is not set"))?;
            let rel = rest.trim_start_matches('/');
            return Ok(resolve(home, Path::new(if rel.is_empty() { "." } else { rel })));
        }
        Ok(resolve(base, Path::new(chunk)))
    }

    fn is_allowed(&self, p: &Path) -> bool {
        self.allowed.iter().any(|a| p.starts_with(a))
    }

    /// `/usr/bin/python3` in command position runs what `python3` would.
    fn is_path_program(&self, chunk: &str) -> bool {
        let p = Path::new(chunk);
        !chunk.contains("/../")
            && !chunk.contains("/./")
            && p.parent().is_some_and(|dir| self.path_dirs.iter().any(|d| d == dir))
            && p.is_file()
    }

    fn allowed_list(&self) -> String {
        let list: Vec<String> = self.allowed.iter().map(|p| p.display().to_string()).collect();
        format!("[{}]", list.join(", "))
    }

    /// Runs a command that passed [`BashTool::check`]. Cancelling `cancel` kills the process
    /// group and answers [`ToolError::Cancelled`]; so does dropping the future.
    pub async fn run(
        &self,
        command: &str,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<BashOutput, ToolError> {
        let mut cmd = tokio::process::Command::new("/bin/bash");
        cmd.arg("-c")
            .arg(command)
            .current_dir(&self.working_dir)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .process_group(0);
        let mut child = cmd.spawn().map_err(|e| {
            ToolError::failed(
                NAME,
                format!("cannot start /bin/bash in {}: {e}", self.working_dir.display()),
            )
        })?;
        // Kills the group on every exit path, so background jobs do not outlive the call.
        let group = child.id().and_then(|id| i32::try_from(id).ok()).map(GroupKill);
        let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
            return Err(ToolError::failed(NAME, "the child's pipes are missing"));
        };
        let mut captured = Captured::new(self.config.output_cap);
        let mut timed_out = false;
        let status = {
            let work = async {
                let ((), status) = tokio::join!(captured.read(stdout, stderr), child.wait());
                status.ok()
            };
            tokio::pin!(work);
            tokio::select! {
                status = &mut work => status,
                () = tokio::time::sleep(timeout) => {
                    timed_out = true;
                    kill_group(group.as_ref());
                    tokio::time::timeout(KILL_GRACE, &mut work).await.ok().flatten()
                }
                () = cancel.cancelled() => return Err(ToolError::Cancelled),
            }
        };
        let exit_code = status.and_then(|s| s.code().or_else(|| s.signal().map(|n| 128 + n)));
        Ok(captured.finish(exit_code, timed_out))
    }
}

impl BackendTool for BashTool {
    fn name(&self) -> &str {
        NAME
    }

    fn call(&self, args: Value, ctx: ToolContext) -> BoxFuture<'static, Result<Value, ToolError>> {
        let tool = self.clone();
        Box::pin(async move {
            let a = Args::new(NAME, &args)?;
            let command = a.req_str("command")?;
            let timeout = match a.opt_positive_u64("timeoutMs")? {
                Some(ms) => Duration::from_millis(ms).min(tool.config.max_timeout),
                None => tool.config.default_timeout,
            };
            tool.check(command)
                .map_err(|reason| ToolError::Refused { tool: NAME.into(), reason })?;
            let out = tool.run(command, timeout, &ctx.cancel).await?;
            serde_json::to_value(out).map_err(|e| ToolError::failed(NAME, e))
        })
    }
}

/// SIGKILLs a process group when dropped.
#[derive(Debug)]
struct GroupKill(i32);

impl Drop for GroupKill {
    fn drop(&mut self) {
        kill_group(Some(self));
    }
}

fn kill_group(group: Option<&GroupKill>) {
    if let Some(pid) = group.and_then(|g| rustix::process::Pid::from_raw(g.0)) {
        // ESRCH (already gone) is the normal case after a clean exit.
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// Output kept under a shared stdout+stderr cap.
#[derive(Debug)]
struct Captured {
    cap: usize,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    dropped_out: usize,
    dropped_err: usize,
}

impl Captured {
    fn new(cap: usize) -> Self {
        Self { cap, stdout: Vec::new(), stderr: Vec::new(), dropped_out: 0, dropped_err: 0 }
    }

    /// Reads both pipes to EOF, keeping up to the cap and draining (not blocking) the rest, so
    /// a chatty command still finishes and reports its exit code.
    async fn read(&mut self, mut out: ChildStdout, mut err: ChildStderr) {
        let (mut ob, mut eb) = (vec![0u8; 8192], vec![0u8; 8192]);
        let (mut out_open, mut err_open) = (true, true);
        while out_open || err_open {
            tokio::select! {
                r = out.read(&mut ob), if out_open => match r {
                    Ok(n) if n > 0 => self.keep(true, &ob[..n]),
                    _ => out_open = false,
                },
                r = err.read(&mut eb), if err_open => match r {
                    Ok(n) if n > 0 => self.keep(false, &eb[..n]),
                    _ => err_open = false,
                },
            }
        }
    }

    fn keep(&mut self, stdout: bool, bytes: &[u8]) {
        let room = self.cap.saturating_sub(self.stdout.len() + self.stderr.len());
        let n = room.min(bytes.len());
        let (buf, dropped) = if stdout {
            (&mut self.stdout, &mut self.dropped_out)
        } else {
            (&mut self.stderr, &mut self.dropped_err)
        };
        buf.extend_from_slice(&bytes[..n]);
        *dropped += bytes.len() - n;
    }

    fn finish(self, exit_code: Option<i32>, timed_out: bool) -> BashOutput {
        let note = |dropped: usize| {
            format!(
                "\n[output truncated: stdout+stderr are capped at {} bytes; {dropped} more bytes \
                 were dropped — narrow the command, e.g. with head, tail or grep]",
                self.cap
            )
        };
        let text = |buf: &[u8], dropped: usize| {
            let mut s = String::from_utf8_lossy(buf).into_owned();
            if dropped > 0 {
                s.push_str(&note(dropped));
            }
            s
        };
        BashOutput {
            exit_code,
            stdout: text(&self.stdout, self.dropped_out),
            stderr: text(&self.stderr, self.dropped_err),
            truncated: self.dropped_out + self.dropped_err > 0,
            timed_out,
        }
    }
}

/// Resolves `p` against `base` like the kernel would: `..` pops the physical directory and
/// symlinks that exist are followed (also dangling ones, whose target a write would create);
/// components that do not exist are taken lexically. `base` should be canonical.
fn resolve(base: &Path, p: &Path) -> PathBuf {
    let mut cur = if p.is_absolute() { PathBuf::from("/") } else { base.to_path_buf() };
    resolve_into(&mut cur, p, 0);
    cur
}

fn resolve_into(cur: &mut PathBuf, p: &Path, depth: u32) {
    for c in p.components() {
        match c {
            Component::RootDir => *cur = PathBuf::from("/"),
            Component::Prefix(_) | Component::CurDir => {}
            Component::ParentDir => {
                cur.pop();
            }
            Component::Normal(name) => {
                cur.push(name);
                // Bounded like the kernel's ELOOP, so a symlink loop cannot hang the guard.
                if depth < 40
                    && let Ok(target) = std::fs::read_link(&*cur)
                {
                    cur.pop();
                    resolve_into(cur, &target, depth + 1);
                }
            }
        }
    }
}

fn is_cd_flag(w: &str) -> bool {
    matches!(w, "-L" | "-P" | "-e" | "-@" | "-LP" | "-PL" | "--")
}

/// One shell word after quote removal.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Word {
    text: String,
    /// Contains `$` or a backtick outside single quotes: its value is computed at run time.
    expansion: bool,
    /// No quotes or escapes in it (so `cd` really is the builtin).
    unquoted: bool,
    /// In command position.
    command: bool,
    /// Index of the simple command it belongs to.
    command_index: usize,
}

impl Word {
    fn same_command_as(&self, other: &Word) -> bool {
        self.command_index == other.command_index
    }
}

/// Splits a command into words, approximately as bash does: quotes and backslashes are
/// removed, operators (`; & | ( ) < >` and newlines) end words and commands. Unbalanced
/// quotes extend to the end (bash would refuse to run it anyway).
fn split_words(src: &str) -> Vec<Word> {
    let mut words = Vec::new();
    let mut chars = src.chars().peekable();
    let mut command_index = 0;
    let mut command_pos = true;
    let mut after_redirect = false;
    let mut cur: Option<Word> = None;

    let end_word = |cur: &mut Option<Word>,
                    words: &mut Vec<Word>,
                    command_pos: &mut bool,
                    after_redirect: &mut bool| {
        if let Some(mut w) = cur.take() {
            if *after_redirect {
                w.command = false;
                *after_redirect = false;
            } else {
                w.command = *command_pos;
                let assignment = w.unquoted
                    && w.text.find('=').is_some_and(|i| {
                        i > 0 && w.text[..i].chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    });
                if *command_pos && !assignment && !KEYWORDS.contains(&w.text.as_str()) {
                    *command_pos = false;
                }
            }
            words.push(w);
        }
    };
    let new_word = |index: usize| Word {
        text: String::new(),
        expansion: false,
        unquoted: true,
        command: false,
        command_index: index,
    };

    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => end_word(&mut cur, &mut words, &mut command_pos, &mut after_redirect),
            '\n' | ';' | '&' | '|' | '(' | ')' => {
                end_word(&mut cur, &mut words, &mut command_pos, &mut after_redirect);
                // `&>` and `>&` are redirections, not separators.
                if c == '&' && chars.peek() == Some(&'>') {
                    chars.next();
                    after_redirect = true;
                    continue;
                }
                if matches!(chars.peek(), Some(&n) if n == c || (c == '|' && n == '&')) {
                    chars.next();
                }
                command_index += 1;
                command_pos = true;
                after_redirect = false;
            }
            '<' | '>' => {
                // `2>`: the digits were a word of their own; they are part of the redirection.
                if let Some(w) = &cur
                    && w.unquoted
                    && !w.text.is_empty()
                    && w.text.chars().all(|d| d.is_ascii_digit())
                {
                    cur = None;
                }
                end_word(&mut cur, &mut words, &mut command_pos, &mut after_redirect);
                while matches!(chars.peek(), Some('<' | '>' | '&')) {
                    chars.next();
                }
                after_redirect = true;
            }
            '\\' => {
                let w = cur.get_or_insert_with(|| new_word(command_index));
                match chars.next() {
                    Some('\n') | None => {}
                    Some(n) => {
                        w.unquoted = false;
                        w.text.push(n);
                    }
                }
            }
            '\'' => {
                let w = cur.get_or_insert_with(|| new_word(command_index));
                w.unquoted = false;
                for n in chars.by_ref() {
                    if n == '\'' {
                        break;
                    }
                    w.text.push(n);
                }
            }
            '"' => {
                let w = cur.get_or_insert_with(|| new_word(command_index));
                w.unquoted = false;
                while let Some(n) = chars.next() {
                    match n {
                        '"' => break,
                        '\\' => match chars.next() {
                            Some(e @ ('"' | '\\' | '$' | '`')) => w.text.push(e),
                            Some('\n') | None => {}
                            Some(e) => {
                                w.text.push('\\');
                                w.text.push(e);
                            }
                        },
                        '$' | '`' => {
                            w.expansion = true;
                            w.text.push(n);
                        }
                        _ => w.text.push(n),
                    }
                }
            }
            _ => {
                let w = cur.get_or_insert_with(|| new_word(command_index));
                if c == '$' || c == '`' {
                    w.expansion = true;
                }
                w.text.push(c);
            }
        }
    }
    end_word(&mut cur, &mut words, &mut command_pos, &mut after_redirect);
    words
}

/// Characters that end a path inside a word: `--file=/etc/x`, `a:/etc`, `open('/etc/x')`,
/// `${HOME}/..`, `{a,b}`.
fn is_delimiter(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '\'' | '"'
                | '='
                | ':'
                | '('
                | ')'
                | '<'
                | '>'
                | ';'
                | '|'
                | '&'
                | ','
                | '`'
                | '$'
                | '{'
                | '}'
                | '!'
        )
}

/// The non-empty path-like pieces of a word, each with whether a `:` preceded it.
fn chunks(word: &str) -> impl Iterator<Item = (&str, bool)> {
    let mut out = Vec::new();
    let mut start = None;
    let mut prev_colon = false;
    let mut colon_before_start = false;
    for (i, c) in word.char_indices() {
        if is_delimiter(c) {
            if let Some(s) = start.take() {
                out.push((&word[s..i], colon_before_start));
            }
            prev_colon = c == ':';
        } else if start.is_none() {
            start = Some(i);
            colon_before_start = prev_colon;
        }
    }
    if let Some(s) = start {
        out.push((&word[s..], colon_before_start));
    }
    out.into_iter()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(dir: &Path) -> BashTool {
        BashTool::new(BashConfig::new(dir))
    }

    fn texts(cmd: &str) -> Vec<String> {
        split_words(cmd).into_iter().map(|w| w.text).collect()
    }

    #[test]
    fn words_follow_quotes_escapes_and_operators() {
        assert_eq!(texts("cat 'a b' \"c\\\"d\" e\\ f"), ["cat", "a b", "c\"d", "e f"]);
        assert_eq!(
            texts("ls>out;echo 2>/dev/null|wc&&x"),
            ["ls", "out", "echo", "/dev/null", "wc", "x"]
        );
        let w = split_words("X=1 cd $HOME; if cd x; then echo cd; fi");
        let cmds: Vec<&str> = w.iter().filter(|w| w.command).map(|w| w.text.as_str()).collect();
        assert_eq!(cmds, ["X=1", "cd", "if", "cd", "then", "echo", "fi"]);
        assert!(w[2].expansion);
        assert!(!split_words("'$HOME'")[0].expansion);
    }

    #[test]
    fn chunks_split_flags_urls_and_code() {
        let c: Vec<_> = chunks("--file=/etc/x").collect();
        assert_eq!(c, [("--file", false), ("/etc/x", false)]);
        let c: Vec<_> = chunks("https://h/x").collect();
        assert_eq!(c, [("https", false), ("//h/x", true)]);
        let c: Vec<_> = chunks("open('/etc/p')").collect();
        assert_eq!(c, [("open", false), ("/etc/p", false)]);
    }

    #[test]
    fn guard_allows_the_tree_and_refuses_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let t = tool(dir.path());
        for ok in [
            "ls -la",
            "cat sub/../x.txt",
            "cd sub && cat x",
            "echo hi 2>/dev/null",
            "find . -name '*.rs' | head",
            "/bin/echo fine",
            "curl -s https://example.com/a/b",
            &format!("cat {}/sub/f", dir.path().display()),
        ] {
            assert_eq!(t.check(ok), Ok(()), "{ok}");
        }
        for (bad, why) in [
            ("cat /etc/passwd", "path /etc/passwd is outside the allowed paths"),
            ("cat ../../x", "is outside the allowed paths"),
            ("cat ~/.ssh/id_rsa", "is outside the allowed paths"),
            ("cd ..", "`cd ..` leaves the allowed paths"),
            ("cd /tmp/../etc", "leaves the allowed paths"),
            ("cd $HOME", "computed at run time"),
            ("cd -", "cannot be checked"),
            ("cd", "HOME"),
            ("echo x > /tmp/out", "/tmp/out"),
            ("python3 -c \"open('/etc/shadow')\"", "/etc/shadow"),
            ("gcc -I/usr/include x.c", "/usr/include"),
            ("ls --dir=/root", "/root"),
            ("cat ${HOME}/../x", "outside"),
            ("cat ~root/x", "`~user` paths cannot be checked"),
            ("cd sub; cd ../..", "leaves the allowed paths"),
            // Conservative: after a `cd` a relative path must hold from every directory the
            // command may be in (a `(cd sub)` subshell or a failed cd leaves it where it was).
            ("cd sub && cat ../x", "from "),
        ] {
            let err = t.check(bad).expect_err(bad);
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn guard_follows_symlinks_out_of_the_tree() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("new"), dir.path().join("dangling"))
            .unwrap();
        let t = tool(dir.path());
        let err = t.check("cat link/secret").unwrap_err();
        assert!(err.contains("resolves to"), "{err}");
        assert!(t.check("echo x > dangling").is_err());
        assert!(t.check("cd link").is_err());
    }

    #[test]
    fn extra_allowed_paths_widen_the_tree() {
        let dir = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let mut config = BashConfig::new(dir.path());
        config.allowed_paths = vec![data.path().to_owned()];
        let t = BashTool::new(config);
        assert_eq!(t.check(&format!("ls {}", data.path().display())), Ok(()));
        assert_eq!(t.allowed_paths().len(), 2);
    }

    #[test]
    fn resolve_is_physical() {
        let dir = tempfile::tempdir().unwrap();
        let base = resolve(Path::new("/"), dir.path());
        assert_eq!(resolve(&base, Path::new("a/../b")), base.join("b"));
        assert_eq!(resolve(&base, Path::new("/x/./y/..")), PathBuf::from("/x"));
        std::os::unix::fs::symlink("loop", base.join("loop")).unwrap();
        let _ = resolve(&base, Path::new("loop/x")); // terminates
    }

    #[test]
    fn capture_caps_and_notes() {
        let mut c = Captured::new(10);
        c.keep(true, b"0123456");
        c.keep(false, b"abcdef");
        let out = c.finish(Some(0), false);
        assert!(out.truncated);
        assert_eq!(out.stdout, "0123456");
        assert!(out.stderr.starts_with("abc\n[output truncated"), "{}", out.stderr);
        assert!(out.stderr.contains("3 more bytes"));
    }
}
