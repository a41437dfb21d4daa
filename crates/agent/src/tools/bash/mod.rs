//! The `bash` tool: runs `/bin/bash -c <command>` confined in a bubblewrap sandbox (see
//! [`sandbox`]) whose only writable tree is the workspace, with a timeout that kills the whole
//! sandbox and a cap on captured output.
//!
//! Who may use it: only an agent whose file sets `"allowShell": true` (the catalog refuses to
//! load a file that lists `bash` without it); the sandbox gets the network only when the file
//! also sets `"shellNetwork": true`. A call outside an agent run is refused. If the sandbox
//! cannot be built on this host (bwrap missing, user namespaces disabled, a root server with
//! no pids cgroup), every call is refused with the reason; the shell never runs unconfined.
//! The host is probed once, at the first call, and the answer cached.
//!
//! The timeout (10 s; `timeoutMs` up to 60 s), cancellation and the end of the call SIGKILL
//! bwrap's process group; bwrap's `--die-with-parent` then takes the sandbox's pid 1, and with
//! it every process in the sandbox's pid namespace, `setsid` ones included.
//!
//! The workspace is never the server's working directory nor the configuration file's, nor
//! a tree around them (`./workspace` by default): where it would be, every call is refused
//! with the reason. The server's own files are masked in the sandbox whether or not they
//! exist ([`sandbox::Mask`]): the data dir, `boardsmith.toml` (or `BOARDSMITH_CONFIG`'s file)
//! and `.env` hidden, the catalog and workflow folders read-only.
//!
//! Knows nothing of the run loop: it gets a command, the calling agent and a cancellation
//! token.

mod sandbox;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde::Serialize;
use serde_json::Value;
use tokio::io::AsyncReadExt;
use tokio::process::{ChildStderr, ChildStdout};
use tokio::sync::OnceCell;
use tokio_util::sync::CancellationToken;

use super::{Args, BackendTool, ToolContext, ToolError};
pub use sandbox::ShellLimits;
pub use sandbox::Unavailable;
pub use sandbox::check_read_only;
use sandbox::{Mask, Mounts, Sandbox, Shape};

/// The tool's name in agent files and tool calls.
pub const NAME: &str = "bash";

/// How long the pipes may keep draining after the group was killed.
const KILL_GRACE: Duration = Duration::from_secs(2);

/// The workspace when `AGENT_BASH_WORKING_DIRECTORY` is not set: a folder of its own in the
/// server's working directory, never that directory itself (which holds `boardsmith.toml`,
/// `.env`, the catalog folders and usually the data dir).
pub const DEFAULT_WORKSPACE: &str = "workspace";

/// Files of the server's working directory that configure it, hidden from every command
/// (besides the file `BOARDSMITH_CONFIG` names).
const CONFIG_FILES: [&str; 2] = [base::config_file::DEFAULT_CONFIG_FILE, ".env"];

/// Confinement and limits of the `bash` tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BashConfig {
    /// The workspace: where commands run, their `HOME` and the one tree they may write
    /// (`AGENT_BASH_WORKING_DIRECTORY`; default [`DEFAULT_WORKSPACE`] in the process's cwd).
    /// Refused when it is, or contains, the server's working or configuration directory.
    pub working_dir: PathBuf,
    /// Further trees commands may read and write (`AGENT_BASH_ALLOWED_PATHS`, comma-separated);
    /// refused like the workspace.
    pub allowed_paths: Vec<PathBuf>,
    /// Directories seen empty wherever they lie in the sandbox's view, whether or not they
    /// exist: the server puts its data dir here. (`boardsmith.toml` and `.env` are always
    /// hidden.)
    pub hidden_paths: Vec<PathBuf>,
    /// Directories kept read-only where they lie inside the writable trees, whether or not
    /// they exist: the server puts the catalog's agents, tools and viewports directories and
    /// the workflows directory here (a shell that could write an agent or workflow file could
    /// grant itself more).
    pub read_only_paths: Vec<PathBuf>,
    /// The bubblewrap program (`AGENT_BASH_BWRAP`, default `bwrap` on the `PATH`).
    pub bwrap: PathBuf,
    /// Process, memory and file-size limits.
    pub limits: ShellLimits,
    /// Timeout when the call gives no `timeoutMs` (10 s).
    pub default_timeout: Duration,
    /// Upper bound for `timeoutMs` (60 s).
    pub max_timeout: Duration,
    /// Bytes of stdout+stderr kept (64 KiB); the rest is dropped with a note.
    pub output_cap: usize,
}

impl BashConfig {
    /// Defaults for a working directory: only it is writable.
    pub fn new(working_dir: impl Into<PathBuf>) -> Self {
        Self {
            working_dir: working_dir.into(),
            allowed_paths: Vec::new(),
            hidden_paths: Vec::new(),
            read_only_paths: Vec::new(),
            bwrap: PathBuf::from("bwrap"),
            limits: ShellLimits::default(),
            default_timeout: Duration::from_secs(10),
            max_timeout: Duration::from_secs(60),
            output_cap: 64 * 1024,
        }
    }

    /// `AGENT_BASH_WORKING_DIRECTORY`, `AGENT_BASH_ALLOWED_PATHS`, `AGENT_BASH_BWRAP`,
    /// `AGENT_BASH_MAX_PROCESSES`, `AGENT_BASH_MEMORY_MB` and `AGENT_BASH_MAX_FILE_MB` over
    /// the defaults.
    pub fn from_env() -> Self {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let working_dir = var("AGENT_BASH_WORKING_DIRECTORY")
            .map_or_else(|| PathBuf::from(DEFAULT_WORKSPACE), PathBuf::from);
        let mut config = Self::new(working_dir);
        if let Some(paths) = var("AGENT_BASH_ALLOWED_PATHS") {
            config.allowed_paths = paths
                .split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(PathBuf::from)
                .collect();
        }
        if let Some(bwrap) = var("AGENT_BASH_BWRAP") {
            config.bwrap = PathBuf::from(bwrap);
        }
        let num = |k: &str| var(k).and_then(|v| v.trim().parse::<u64>().ok()).filter(|&n| n > 0);
        if let Some(n) = num("AGENT_BASH_MAX_PROCESSES") {
            config.limits.max_processes = u32::try_from(n).unwrap_or(u32::MAX);
        }
        if let Some(n) = num("AGENT_BASH_MEMORY_MB") {
            config.limits.memory_mb = n;
        }
        if let Some(n) = num("AGENT_BASH_MAX_FILE_MB") {
            config.limits.max_file_mb = n;
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
    /// Canonical further writable trees.
    allowed: Vec<PathBuf>,
    /// The server's files, canonical.
    masks: Vec<Mask>,
    /// Why this configuration may not run commands at all (a writable tree holds the server's
    /// configuration).
    conflict: Option<String>,
    /// The probe's answer, shared by clones.
    sandbox: Arc<OnceCell<Result<Sandbox, Unavailable>>>,
}

impl BashTool {
    /// An executor with this configuration; paths are canonicalized now (relative ones against
    /// the process's cwd). The sandbox is probed at the first call.
    pub fn new(config: BashConfig) -> Self {
        let canon = |p: &PathBuf| canonical(p);
        let working_dir = canon(&config.working_dir);
        let mut allowed: Vec<PathBuf> = Vec::new();
        for p in config.allowed_paths.iter().map(canon) {
            if p != working_dir && !allowed.contains(&p) {
                allowed.push(p);
            }
        }
        let server = ServerDirs::current();
        let mut masks: Vec<Mask> = Vec::new();
        let mut add = |path: PathBuf, shape: Shape, hide: bool| {
            if !masks.iter().any(|m| m.path == path && m.hide == hide) {
                masks.push(Mask { path, shape, hide });
            }
        };
        for p in &config.hidden_paths {
            add(canon(p), Shape::Dir, true);
        }
        for p in &config.read_only_paths {
            add(canon(p), Shape::Dir, false);
        }
        for f in &server.config_files {
            add(f.clone(), Shape::File, true);
        }
        let writable: Vec<&Path> = std::iter::once(working_dir.as_path())
            .chain(allowed.iter().map(PathBuf::as_path))
            .collect();
        let conflict = server.conflict(&writable, &masks);
        Self { config, working_dir, allowed, masks, conflict, sandbox: Arc::new(OnceCell::new()) }
    }

    /// The configuration it was built from.
    pub fn config(&self) -> &BashConfig {
        &self.config
    }

    /// The canonical writable trees (working directory first).
    pub fn allowed_paths(&self) -> Vec<PathBuf> {
        std::iter::once(self.working_dir.clone()).chain(self.allowed.iter().cloned()).collect()
    }

    /// Whether the sandbox works on this host: probed once, then cached. `Err` says why not.
    #[base::boxed]
    pub async fn probe(&self) -> Result<(), Unavailable> {
        self.sandbox().await.map(|_| ())
    }

    async fn sandbox(&self) -> Result<&Sandbox, Unavailable> {
        let probed = self
            .sandbox
            .get_or_init(|| async {
                let r = match &self.conflict {
                    Some(why) => Err(Unavailable(why.clone())),
                    None => Sandbox::probe(&self.config.bwrap, &self.config.limits).await,
                };
                match &r {
                    Ok(_) => tracing::info!("bash: the bubblewrap sandbox works on this host"),
                    Err(e) => tracing::warn!("bash: refused on this host: {e}"),
                }
                r
            })
            .await;
        probed.as_ref().map_err(Clone::clone)
    }

    /// Starts a long-running program (an MCP stdio server) in the same sandbox as commands:
    /// the workspace, the masked and read-only trees, no network unless `program.network`,
    /// the same rlimits (but CPU seconds: [`SERVER_CPU`], and its own address space), a
    /// cleared environment plus
    /// `program.env`. Its program file and `program.read_only` are bound read-only, so a
    /// program installed outside `/usr` can run. stdin, stdout and stderr are piped for the
    /// caller. Dropping the returned [`Confined`] kills it.
    #[base::boxed]
    pub async fn spawn_confined(&self, program: &ConfinedProgram<'_>) -> Result<Confined, String> {
        let sandbox =
            self.sandbox().await.map_err(|e| format!("the sandbox is unavailable: {e}"))?;
        std::fs::create_dir_all(&self.working_dir).map_err(|e| {
            format!("cannot create the workspace {}: {e}", self.working_dir.display())
        })?;
        let resolved = sandbox::find_program(Path::new(program.command))
            .ok_or_else(|| format!("`{}` is not found on the server's PATH", program.command))?;
        let resolved = std::fs::canonicalize(&resolved).unwrap_or(resolved);
        let mut extra: Vec<PathBuf> = Vec::new();
        for p in program.read_only {
            check_read_only(p)?;
            extra.push(canonical(p));
        }
        extra.push(resolved.clone());
        let writable = self.allowed_paths();
        for p in &extra {
            // Inside a hidden tree: masked anyway (masks come last), refused so the
            // definition's author knows. Around one that holds a writable tree: its mask would
            // hide the workspace too.
            let clash = self.masks.iter().filter(|m| m.hide).find(|m| {
                p.starts_with(&m.path)
                    || (m.path.starts_with(p) && writable.iter().any(|w| w.starts_with(&m.path)))
            });
            if let Some(m) = clash {
                return Err(format!(
                    "`{}` overlaps {}, which the sandbox never shows",
                    p.display(),
                    m.path.display()
                ));
            }
        }
        let mounts = Mounts {
            workspace: &self.working_dir,
            read_write: &self.allowed,
            masks: &self.masks,
            network: program.network,
            extra_read_only: &extra,
            env: program.env,
        };
        let line = std::iter::once(resolved.to_string_lossy().into_owned())
            .chain(program.args.iter().cloned())
            .map(|a| shell_quote(&a))
            .collect::<Vec<_>>()
            .join(" ");
        let limits = ShellLimits { memory_mb: program.memory_mb, ..self.config.limits };
        let mut prepared = sandbox
            .prepare(&mounts, &limits, SERVER_CPU, &format!("exec {line}"))
            .map_err(|e| format!("cannot prepare the sandbox: {e}"))?;
        prepared
            .command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child =
            prepared.command.spawn().map_err(|e| format!("cannot start the sandbox: {e}"))?;
        let group = child.id().and_then(|id| i32::try_from(id).ok()).map(GroupKill);
        let cgroup = prepared
            .started(&mut child, true)
            .await
            .map_err(|e| format!("cannot use the pids cgroup: {e}"))?;
        Ok(Confined { child, _group: group, _cgroup: cgroup })
    }

    /// Runs a command in the sandbox, with or without the network. Cancelling `cancel` kills
    /// the sandbox and answers [`ToolError::Cancelled`]; so does dropping the future.
    #[base::boxed]
    pub async fn run(
        &self,
        command: &str,
        network: bool,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<BashOutput, ToolError> {
        let sandbox = self.sandbox().await.map_err(|reason| ToolError::Refused {
            tool: NAME.into(),
            reason: format!("the shell is disabled on this server: {reason}"),
        })?;
        std::fs::create_dir_all(&self.working_dir).map_err(|e| {
            ToolError::failed(
                NAME,
                format!("cannot create the workspace {}: {e}", self.working_dir.display()),
            )
        })?;
        let mounts = Mounts {
            workspace: &self.working_dir,
            read_write: &self.allowed,
            masks: &self.masks,
            network,
            extra_read_only: &[],
            env: &[],
        };
        let mut prepared = sandbox
            .prepare(&mounts, &self.config.limits, timeout, command)
            .map_err(|e| ToolError::failed(NAME, format!("cannot prepare the sandbox: {e}")))?;
        prepared.command.stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
        let mut child = prepared
            .command
            .spawn()
            .map_err(|e| ToolError::failed(NAME, format!("cannot start the sandbox: {e}")))?;
        // Kills the group on every exit path; the sandbox's pid namespace dies with it.
        let group = child.id().and_then(|id| i32::try_from(id).ok()).map(GroupKill);
        let cgroup = prepared
            .started(&mut child, false)
            .await
            .map_err(|e| ToolError::failed(NAME, format!("cannot use the pids cgroup: {e}")))?;
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
        if let Some(group) = group {
            // bwrap is reaped (the group was killed first if it timed out): its pid, the group
            // id, may already belong to another process, so it must not be signalled again.
            group.disarm();
        }
        if let Some(cg) = cgroup {
            cg.remove().await;
        }
        let exit_code = status.and_then(|s| s.code().or_else(|| s.signal().map(|n| 128 + n)));
        Ok(captured.finish(exit_code, timed_out))
    }
}

/// `p` absolute with symbolic links resolved as far as it exists (a missing tail is appended
/// as written), so masks compare with the paths bwrap binds.
fn canonical(p: &Path) -> PathBuf {
    let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_owned());
    let mut tail = Vec::new();
    let mut at = abs.as_path();
    loop {
        if let Ok(real) = std::fs::canonicalize(at) {
            return tail.iter().rev().fold(real, |acc: PathBuf, part| acc.join(part));
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                tail.push(name.to_owned());
                at = parent;
            }
            _ => return abs,
        }
    }
}

/// Where the server reads its configuration: its working directory and the configuration
/// file's directory, and the files there.
#[derive(Debug)]
struct ServerDirs {
    /// Canonical directories no writable tree may be or contain.
    dirs: Vec<(PathBuf, &'static str)>,
    /// Canonical configuration files, hidden from every command.
    config_files: Vec<PathBuf>,
}

impl ServerDirs {
    /// This process's.
    fn current() -> Self {
        let mut dirs = Vec::new();
        let mut config_files = Vec::new();
        if let Ok(cwd) = std::env::current_dir() {
            let cwd = canonical(&cwd);
            config_files.extend(CONFIG_FILES.iter().map(|f| cwd.join(f)));
            dirs.push((cwd, "the server's working directory"));
        }
        if let Some(file) = base::config_file::path() {
            let file = canonical(&file);
            if let Some(dir) = file.parent() {
                dirs.push((dir.to_owned(), "the directory of the server's configuration file"));
            }
            config_files.push(file);
        }
        Self { dirs, config_files }
    }

    /// Why `writable` may not be given to commands: one of them is or contains a directory
    /// the server reads its configuration from, or is one of its masked paths.
    fn conflict(&self, writable: &[&Path], masks: &[Mask]) -> Option<String> {
        for w in writable {
            if let Some((dir, what)) = self.dirs.iter().find(|(d, _)| d.starts_with(w)) {
                return Some(format!(
                    "the shell's writable tree {} is or contains {what} ({}), where \
                     boardsmith.toml, .env and the agent folders live; give the shell a \
                     directory of its own (AGENT_BASH_WORKING_DIRECTORY, default ./{DEFAULT_WORKSPACE}; \
                     AGENT_BASH_ALLOWED_PATHS)",
                    w.display(),
                    dir.display()
                ));
            }
            let server_own = |m: &&Mask| {
                if m.hide { m.path == *w } else { w.starts_with(&m.path) }
            };
            if let Some(m) = masks.iter().find(server_own) {
                return Some(format!(
                    "the shell's writable tree {} is the server's own {} ({}); give the shell a \
                     directory of its own (AGENT_BASH_WORKING_DIRECTORY, AGENT_BASH_ALLOWED_PATHS)",
                    w.display(),
                    if m.hide { "hidden directory" } else { "read-only directory" },
                    m.path.display()
                ));
            }
        }
        None
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
            let refused = |reason: String| ToolError::Refused { tool: NAME.into(), reason };
            let Some(agent) = &ctx.agent else {
                return Err(refused(
                    "the shell runs only for an agent whose file sets \"allowShell\": true".into(),
                ));
            };
            if !agent.shell.allow {
                return Err(refused(format!(
                    "agent `{}` may not use the shell: its file does not set \"allowShell\": true",
                    agent.key
                )));
            }
            let out = tool.run(command, agent.shell.network, timeout, &ctx.cancel).await?;
            serde_json::to_value(out).map_err(|e| ToolError::failed(NAME, e))
        })
    }
}

/// SIGKILLs a process group when dropped.
#[derive(Debug)]
struct GroupKill(i32);

/// CPU seconds a confined long-running program may use (its `RLIMIT_CPU`): a day.
pub const SERVER_CPU: Duration = Duration::from_secs(24 * 3600);

/// What [`BashTool::spawn_confined`] runs.
#[derive(Debug, Clone, Copy)]
pub struct ConfinedProgram<'a> {
    /// A path, or a name looked up on the server's `PATH`.
    pub command: &'a str,
    /// Its arguments.
    pub args: &'a [String],
    /// Variables set for it.
    pub env: &'a [(String, String)],
    /// Shares the host's network.
    pub network: bool,
    /// Host trees it may read besides the shell's view.
    pub read_only: &'a [PathBuf],
    /// Its address-space limit in MiB instead of the shell's.
    pub memory_mb: u64,
}

/// A running confined program. Dropping it kills its process group (and with it the
/// sandbox's pid namespace) and removes its pids cgroup.
#[derive(Debug)]
pub struct Confined {
    /// The process (stdin and stdout piped).
    pub child: tokio::process::Child,
    _group: Option<GroupKill>,
    _cgroup: Option<sandbox::Cgroup>,
}

/// `a` as one word for `/bin/bash -c`.
fn shell_quote(a: &str) -> String {
    format!("'{}'", a.replace('\'', "'\\''"))
}

impl GroupKill {
    fn disarm(self) {
        std::mem::forget(self);
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_writable_tree_is_never_the_servers_working_or_config_directory() {
        let server = ServerDirs {
            dirs: vec![
                (PathBuf::from("/srv/bs"), "the server's working directory"),
                (PathBuf::from("/etc/bs"), "the directory of the server's configuration file"),
            ],
            config_files: Vec::new(),
        };
        let masks = [
            Mask { path: "/srv/bs/data".into(), shape: Shape::Dir, hide: true },
            Mask { path: "/srv/bs/agents".into(), shape: Shape::Dir, hide: false },
        ];
        let conflict =
            |w: &str| server.conflict(&[Path::new("/srv/bs/workspace"), Path::new(w)], &masks);
        for w in ["/srv/bs", "/srv", "/", "/etc/bs", "/srv/bs/data", "/srv/bs/agents/sub"] {
            assert!(conflict(w).is_some(), "{w}");
        }
        let why = conflict("/srv").unwrap();
        assert!(why.starts_with("the shell's writable tree /srv is or contains the server's working directory (/srv/bs)"), "{why}");
        for w in ["/srv/bs/workspace/more", "/srv/bs/data/work", "/tmp/x", "/etc/bsx"] {
            assert_eq!(conflict(w), None, "{w}");
        }
    }

    #[test]
    fn canonical_resolves_the_existing_part_and_keeps_the_missing_tail() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().canonicalize().unwrap();
        std::os::unix::fs::symlink(&real, real.join("link")).unwrap();
        assert_eq!(canonical(&real.join("link/a/b")), real.join("a/b"));
        assert_eq!(canonical(&real.join("link")), real);
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
