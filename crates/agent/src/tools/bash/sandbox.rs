//! The confinement of one `bash` command: a bubblewrap (`bwrap`) sandbox, probed once.
//!
//! Why bubblewrap rather than namespaces + Landlock + seccomp from this process: the crate
//! forbids `unsafe`, so it cannot `unshare`/`pivot_root`/`setrlimit` in a `pre_exec` hook, and
//! neither `landlock` nor `seccompiler` is vendored here; Landlock alone (no mount or pid
//! namespace) would still leave `/proc/<server pid>/environ` and the network to filter by hand.
//! bwrap is one small, audited, Debian-packaged setup program (Flatpak's) that builds exactly
//! the view we want from the kernel's user, mount, pid, net, ipc and uts namespaces, needs no
//! privilege when user namespaces are allowed, and is easy to probe: if it cannot run, `bash`
//! refuses instead of running unconfined.
//!
//! The view: `/usr` (and the `/bin`, `/lib*` symlinks into it) read-only; a short list of
//! harmless `/etc` files read-only plus a synthesized `/etc/passwd` and `/etc/group`; a fresh
//! `/proc` of the sandbox's own pid namespace, a minimal `/dev`, private `/tmp`; the workspace
//! (and `AGENT_BASH_ALLOWED_PATHS`) read-write; an MCP server's program and `readOnlyPaths`
//! read-only. Nothing else of the host exists in it: no home, no data dir, no token file. No
//! network unless the agent file sets `shellNetwork`.
//!
//! The server's own files ([`Mask`]: the data dir and config files hidden, the catalog and
//! workflow folders read-only) are masked *last*, wherever they lie in a bound tree, so no
//! later bind re-exposes them, and *whether or not they exist*: a missing one that the sandbox
//! could create is masked by an empty read-only file or directory. bwrap makes that mount
//! point on the host (an empty file or directory, created once and left there: an empty
//! folder or config file means the same to the server as none), and each directory between
//! the writable tree and the mask is bound onto itself, so the command cannot rename a parent
//! away and build an unmasked twin where the server will look. A parent that is a symbolic
//! link refuses the command. Host `/proc`, `/sys` and `/dev` are never bound
//! ([`check_read_only`]).
//! The environment is cleared to `PATH`, `HOME` (the workspace) and `LANG`. The process runs
//! as uid 1000 of its own user namespace with every capability dropped, in a new session,
//! and dies with the server (`--die-with-parent`); when the pid namespace's init dies the
//! kernel kills everything in it, `setsid` children included.
//!
//! Limits are rlimits set by a wrapper shell before the command (hard, so it cannot raise
//! them): CPU seconds, address space, file size and process count. The kernel ignores
//! `RLIMIT_NPROC` for root, so when the server runs as root each command also gets its own
//! pids cgroup (`pids.max`); a root server with no writable pids cgroup refuses to run the
//! shell (a fork bomb would otherwise exhaust the host's pids).
//!
//! Never decides whether an agent may use the shell: that is the tool's job.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// `/etc` entries the sandbox sees (if the host has them): the dynamic linker, time zone,
/// certificates, name-service switch, Debian's alternatives. No secrets.
const ETC: [&str; 17] = [
    "alternatives",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "timezone",
    "nsswitch.conf",
    "ssl",
    "ca-certificates",
    "ca-certificates.conf",
    "mime.types",
    "host.conf",
    "gai.conf",
    "protocols",
    "services",
    "hosts",
    "os-release",
];

/// The sandbox's own users: what `/etc/passwd` says inside.
const PASSWD: &str = "root:x:0:0:root:/nonexistent:/usr/sbin/nologin\n\
                      sandbox:x:1000:1000:Boardsmith sandbox:/nonexistent:/bin/bash\n\
                      nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
const GROUP: &str = "root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n";

/// Sets the limits (hard and soft) and runs the command; `$1` is the command.
const WRAPPER: &str = "ulimit -HS -u \"$LIMIT_PROCS\" -v \"$LIMIT_AS_KB\" -f \"$LIMIT_FSIZE_BLOCKS\" \
                       -t \"$LIMIT_CPU_SECS\" || exit 126; \
                       unset LIMIT_PROCS LIMIT_AS_KB LIMIT_FSIZE_BLOCKS LIMIT_CPU_SECS; \
                       exec /bin/bash -c \"$1\"";

/// The uid and gid inside the sandbox.
const SANDBOX_ID: &str = "1000";

/// How long the probe may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

static CGROUP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Resource limits of one command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShellLimits {
    /// Most processes (and threads) at once (`AGENT_BASH_MAX_PROCESSES`, default 64).
    pub max_processes: u32,
    /// Address space per process in MiB (`AGENT_BASH_MEMORY_MB`, default 1024).
    pub memory_mb: u64,
    /// Largest file a command may write, in MiB (`AGENT_BASH_MAX_FILE_MB`, default 64).
    pub max_file_mb: u64,
}

impl Default for ShellLimits {
    fn default() -> Self {
        Self { max_processes: 64, memory_mb: 1024, max_file_mb: 64 }
    }
}

/// What one command may see.
#[derive(Debug, Clone)]
pub(super) struct Mounts<'a> {
    /// The working directory (read-write, also `HOME`). Canonical.
    pub workspace: &'a Path,
    /// Further read-write trees. Canonical.
    pub read_write: &'a [PathBuf],
    /// The server's files, masked last wherever they lie in a bound tree. Canonical.
    pub masks: &'a [Mask],
    /// Share the host's network.
    pub network: bool,
    /// Host paths bound read-only wherever they are (an MCP server's program and
    /// installation); empty for shell commands.
    pub extra_read_only: &'a [PathBuf],
    /// Variables set besides `PATH`, `HOME` and `LANG` (which they may override); empty for
    /// shell commands.
    pub env: &'a [(String, String)],
}

/// A path of the server's that commands must not read ([`Mask::hide`]) or write, whether or
/// not it exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mask {
    /// Absolute and canonical (as far as it exists).
    pub path: PathBuf,
    /// What to put in its place when it does not exist.
    pub shape: Shape,
    /// Seen empty (else: seen read-only).
    pub hide: bool,
}

/// A missing [`Mask`]'s stand-in: an empty read-only file or directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A file (`boardsmith.toml`, `.env`).
    File,
    /// A directory (the data dir, the catalog folders).
    Dir,
}

/// Host trees the sandbox never binds: its own `/proc`, `/dev` and (absent) `/sys` stand in
/// for them, and the host's would show the server's environment (`/proc/<pid>/environ`) and
/// every file through `/proc/<pid>/root`.
const KERNEL_VIEWS: [&str; 3] = ["/proc", "/sys", "/dev"];

/// Whether `path` may be bound read-only into the sandbox (an MCP server's `readOnlyPaths`):
/// absolute, and neither inside nor around the host's `/proc`, `/sys` or `/dev` (so not `/`).
/// The error says why, for an API answer or the model.
pub fn check_read_only(path: &Path) -> Result<(), String> {
    if !path.is_absolute() {
        return Err(format!("`{}` must be an absolute path", path.display()));
    }
    let path = normalize(path);
    for view in KERNEL_VIEWS.iter().map(Path::new) {
        if path.starts_with(view) || view.starts_with(&path) {
            return Err(format!(
                "`{}` would show the host's {} (the server's processes and their environment); \
                 the sandbox has its own",
                path.display(),
                view.display()
            ));
        }
    }
    Ok(())
}

/// `path` without `.` and `..` components, lexically (`/a/../proc` is `/proc`).
fn normalize(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// One mount of the masking plan, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
enum MaskOp {
    /// A directory bound onto itself: a mount point cannot be renamed or removed.
    Pin(PathBuf),
    /// An empty read-only directory over it.
    EmptyDir(PathBuf),
    /// `/dev/null` over it, read-only.
    Null(PathBuf),
    /// Itself, read-only.
    ReadOnly(PathBuf),
}

/// The mounts that apply `m.masks`, after the writable and read-only trees are bound. Creates
/// the missing parents of a missing mask that lies in a writable tree (see the module docs);
/// fails when such a parent is a symbolic link or not a directory.
fn mask_plan(m: &Mounts<'_>) -> io::Result<Vec<MaskOp>> {
    let writable: Vec<&Path> =
        std::iter::once(m.workspace).chain(m.read_write.iter().map(PathBuf::as_path)).collect();
    let extra: Vec<&Path> = m.extra_read_only.iter().map(PathBuf::as_path).collect();
    let writable_root = |p: &Path| writable.iter().copied().find(|w| p.starts_with(w));
    // Read-only masks first, hidden ones over them; parents before children.
    let mut order: Vec<&Mask> = m.masks.iter().collect();
    order.sort_by_key(|k| (k.hide, k.path.components().count()));
    let mut pins: Vec<MaskOp> = Vec::new();
    let mut ops: Vec<MaskOp> = Vec::new();
    let mut applied: Vec<&Mask> = Vec::new();
    for mask in order {
        let p = mask.path.as_path();
        let root = writable_root(p);
        let covered = if mask.hide {
            applied.iter().any(|a| a.hide && p.starts_with(&a.path))
        } else {
            // A hidden one around it covers it; read-only only matters where it is writable.
            m.masks.iter().any(|o| o.hide && p.starts_with(&o.path)) || root.is_none()
        };
        let in_view = root.is_some() || extra.iter().any(|r| p.starts_with(r));
        if covered || !in_view {
            continue;
        }
        let read_only_here = extra.iter().any(|r| p.starts_with(r))
            || applied.iter().any(|a| !a.hide && p.starts_with(&a.path));
        let op = match std::fs::metadata(p) {
            Ok(meta) if mask.hide && meta.is_dir() => MaskOp::EmptyDir(p.to_owned()),
            Ok(_) if mask.hide => MaskOp::Null(p.to_owned()),
            Ok(_) => MaskOp::ReadOnly(p.to_owned()),
            // Missing and not creatable inside: nothing to read, nothing to write.
            Err(_) if root.is_none() || read_only_here => continue,
            Err(_) => match mask.shape {
                Shape::Dir => MaskOp::EmptyDir(p.to_owned()),
                Shape::File => MaskOp::Null(p.to_owned()),
            },
        };
        if let Some(root) = root {
            for dir in real_parents(root, p)? {
                let pin = MaskOp::Pin(dir);
                if !pins.contains(&pin) {
                    pins.push(pin);
                }
            }
        }
        ops.push(op);
        applied.push(mask);
    }
    pins.extend(ops);
    Ok(pins)
}

/// The directories strictly between `root` and `path`, created when missing; an error if one
/// is a symbolic link or not a directory.
fn real_parents(root: &Path, path: &Path) -> io::Result<Vec<PathBuf>> {
    let Ok(rel) = path.strip_prefix(root) else { return Ok(Vec::new()) };
    let mut dirs = Vec::new();
    let mut at = root.to_owned();
    let mut parts: Vec<_> = rel.components().collect();
    parts.pop();
    for part in parts {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return Err(io::Error::other(format!(
                    "{} lies on the way to the masked {} and is not a plain directory (a \
                     symbolic link?); remove it",
                    at.display(),
                    path.display()
                )));
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => std::fs::create_dir(&at)?,
            Err(e) => return Err(e),
        }
        dirs.push(at.clone());
    }
    Ok(dirs)
}

/// A working bwrap, found by [`Sandbox::probe`].
#[derive(Debug)]
pub(super) struct Sandbox {
    bwrap: PathBuf,
    /// Holds the synthesized `passwd` and `group`.
    etc_dir: PathBuf,
    /// Set when the server runs as root: each command gets a pids cgroup under it.
    pids: Option<PathBuf>,
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.etc_dir);
    }
}

/// A prepared command: spawn it, then call [`Prepared::started`] with the child.
#[derive(Debug)]
pub(super) struct Prepared {
    pub command: tokio::process::Command,
    cgroup: Option<Cgroup>,
}

/// Why the sandbox cannot run on this host, in words for the model, the user and the log
/// (what is missing and how to fix it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unavailable(pub String);

impl From<String> for Unavailable {
    fn from(reason: String) -> Self {
        Self(reason)
    }
}

impl Sandbox {
    /// Checks that bwrap builds the sandbox on this host by running `true` in it. The error
    /// says why not, for the model and the log.
    #[base::boxed]
    pub async fn probe(bwrap: &Path, limits: &ShellLimits) -> Result<Self, Unavailable> {
        let bwrap = &find_program(bwrap).ok_or_else(|| {
            format!(
                "bubblewrap ({}) is not installed; install it (Debian/Ubuntu: apt-get install \
                 bubblewrap) to enable the shell",
                bwrap.display()
            )
        })?;
        let n = CGROUP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let etc_dir =
            std::env::temp_dir().join(format!("boardsmith-bash-{}-{n}", std::process::id()));
        write_etc(&etc_dir).map_err(|e| {
            format!("cannot write the sandbox's /etc files in {}: {e}", etc_dir.display())
        })?;
        let pids = if rustix::process::geteuid().is_root() {
            Some(find_pids_cgroup().ok_or_else(|| {
                "the server runs as root, where the kernel does not enforce RLIMIT_NPROC, and \
                 no writable pids cgroup was found to cap the process count instead; run the \
                 server as an unprivileged user"
                    .to_owned()
            })?)
        } else {
            None
        };
        let sandbox = Self { bwrap: bwrap.to_owned(), etc_dir: etc_dir.clone(), pids };
        let mounts = Mounts {
            workspace: &etc_dir,
            read_write: &[],
            masks: &[],
            network: false,
            extra_read_only: &[],
            env: &[],
        };
        let mut prepared = sandbox
            .prepare(&mounts, limits, PROBE_TIMEOUT, "echo ok")
            .map_err(|e| format!("cannot prepare the probe: {e}"))?;
        prepared.command.stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
        let mut child = prepared
            .command
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", bwrap.display()))?;
        let cgroup = prepared
            .started(&mut child, false)
            .await
            .map_err(|e| format!("cannot use the pids cgroup: {e}"))?;
        let out = tokio::time::timeout(PROBE_TIMEOUT, child.wait_with_output())
            .await
            .map_err(|_| format!("{} did not finish within {PROBE_TIMEOUT:?}", bwrap.display()))?
            .map_err(|e| format!("waiting for {}: {e}", bwrap.display()))?;
        if let Some(cg) = cgroup {
            cg.remove().await;
        }
        if !out.status.success() || out.stdout != b"ok\n" {
            let stderr = String::from_utf8_lossy(&out.stderr);
            return Err(Unavailable(format!(
                "bubblewrap cannot build the sandbox on this host ({}): {}",
                out.status,
                stderr.trim()
            )));
        }
        Ok(sandbox)
    }

    /// The command that runs `command` confined. Its process group is the one to kill.
    pub fn prepare(
        &self,
        mounts: &Mounts<'_>,
        limits: &ShellLimits,
        timeout: Duration,
        command: &str,
    ) -> io::Result<Prepared> {
        let masks = mask_plan(mounts)?;
        let args = self.bwrap_args(mounts, &masks, limits, timeout, command);
        let cgroup = match &self.pids {
            Some(base) => Some(Cgroup::create(base, limits.max_processes)?),
            None => None,
        };
        let mut cmd = match cgroup {
            // A host shell waits on stdin until it is in the cgroup, then becomes bwrap, so
            // every process of the sandbox is born inside the cgroup.
            Some(_) => {
                let mut c = tokio::process::Command::new("/bin/sh");
                c.arg("-c")
                    .arg("read -r _ || exit 125; exec \"$@\"")
                    .arg("boardsmith-bash")
                    .arg(&self.bwrap)
                    .args(args)
                    .stdin(Stdio::piped());
                c
            }
            None => {
                let mut c = tokio::process::Command::new(&self.bwrap);
                c.args(args).stdin(Stdio::null());
                c
            }
        };
        cmd.env_clear().current_dir("/").process_group(0);
        Ok(Prepared { command: cmd, cgroup })
    }

    fn bwrap_args(
        &self,
        m: &Mounts<'_>,
        masks: &[MaskOp],
        limits: &ShellLimits,
        timeout: Duration,
        command: &str,
    ) -> Vec<OsString> {
        let mut a = Args::default();
        // No cgroup namespace: the sandbox mounts no /sys, so there is nothing for it to hide.
        a.flags(&["--unshare-user", "--unshare-ipc", "--unshare-pid", "--unshare-uts"]);
        if !m.network {
            a.flags(&["--unshare-net"]);
        }
        a.flags(&["--uid", SANDBOX_ID, "--gid", SANDBOX_ID, "--hostname", "sandbox"]);
        a.flags(&["--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv"]);
        let lang = std::env::var("LANG").ok().filter(|l| is_plain_value(l));
        a.setenv("PATH", "/usr/local/bin:/usr/bin:/bin");
        a.setenv("HOME", m.workspace);
        a.setenv("LANG", lang.as_deref().unwrap_or("C.UTF-8"));
        for (key, value) in m.env {
            a.setenv(key, value);
        }
        // Read by the wrapper only.
        a.setenv("LIMIT_PROCS", limits.max_processes.to_string());
        a.setenv("LIMIT_AS_KB", (limits.memory_mb.saturating_mul(1024)).to_string());
        a.setenv("LIMIT_FSIZE_BLOCKS", (limits.max_file_mb.saturating_mul(1024)).to_string());
        a.setenv("LIMIT_CPU_SECS", (timeout.as_secs() + 1).to_string());

        a.bind("--ro-bind", "/usr", "/usr");
        for top in ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"] {
            match std::fs::symlink_metadata(top) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    if let Ok(target) = std::fs::read_link(top) {
                        a.bind("--symlink", target, top);
                    }
                }
                Ok(meta) if meta.is_dir() => a.bind("--ro-bind", top, top),
                _ => {}
            }
        }
        a.flags(&["--dir", "/etc"]);
        for name in ETC.iter().chain(m.network.then_some(&"resolv.conf")) {
            let p = Path::new("/etc").join(name);
            if p.exists() {
                a.bind("--ro-bind", &p, &p);
            }
        }
        a.bind("--ro-bind", self.etc_dir.join("passwd"), "/etc/passwd");
        a.bind("--ro-bind", self.etc_dir.join("group"), "/etc/group");
        a.flags(&["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]);
        a.flags(&["--dir", "/var", "--tmpfs", "/var/tmp"]);

        let mut writable = vec![m.workspace.to_owned()];
        writable.extend(m.read_write.iter().cloned());
        for p in &writable {
            a.bind("--bind", p, p);
        }
        let pin = |op: &&MaskOp| matches!(op, MaskOp::Pin(_));
        // Pins before the read-only trees, so one over a pinned parent keeps it read-only.
        for op in masks.iter().filter(pin) {
            a.mask(op);
        }
        for r in m.extra_read_only.iter().filter(|r| r.exists()) {
            a.bind("--ro-bind", r, r);
        }
        // Last: nothing bound after a mask can re-expose what it covers.
        for op in masks.iter().filter(|op| !pin(op)) {
            a.mask(op);
        }
        a.bind("--chdir", m.workspace, "");
        a.flags(&["--", "/bin/bash", "-c", WRAPPER, "bash"]);
        a.0.push(command.into());
        a.0
    }
}

impl Prepared {
    /// Call right after spawning: moves the child into its cgroup and lets it go on. Returns
    /// the cgroup, which the caller removes once the command is over. `keep_stdin`: the
    /// child's stdin stays open for the caller (an MCP server reads its requests there)
    /// instead of being closed after the go-ahead.
    #[base::boxed]
    pub async fn started(
        &mut self,
        child: &mut tokio::process::Child,
        keep_stdin: bool,
    ) -> io::Result<Option<Cgroup>> {
        let Some(cg) = self.cgroup.take() else { return Ok(None) };
        cg.admit(child, keep_stdin).await?;
        Ok(Some(cg))
    }
}

/// bwrap's argument list.
#[derive(Debug, Default)]
struct Args(Vec<OsString>);

impl Args {
    fn flags(&mut self, flags: &[&str]) {
        self.0.extend(flags.iter().map(OsString::from));
    }

    /// `flag a b`; an empty `b` is left out (`--tmpfs DIR`).
    fn bind(&mut self, flag: &str, a: impl AsRef<Path>, b: impl AsRef<Path>) {
        self.0.push(flag.into());
        self.0.push(a.as_ref().into());
        if !b.as_ref().as_os_str().is_empty() {
            self.0.push(b.as_ref().into());
        }
    }

    fn mask(&mut self, op: &MaskOp) {
        match op {
            MaskOp::Pin(p) => self.bind("--bind", p, p),
            MaskOp::EmptyDir(p) => {
                self.bind("--tmpfs", p, "");
                self.bind("--remount-ro", p, "");
            }
            MaskOp::Null(p) => self.bind("--ro-bind", "/dev/null", p),
            MaskOp::ReadOnly(p) => self.bind("--ro-bind", p, p),
        }
    }

    fn setenv(&mut self, key: &str, value: impl AsRef<std::ffi::OsStr>) {
        self.0.push("--setenv".into());
        self.0.push(key.into());
        self.0.push(value.as_ref().into());
    }
}

/// `program` if it names a file, else the first match on the server's `PATH`.
pub(super) fn find_program(program: &Path) -> Option<PathBuf> {
    let is_file = |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.is_file());
    if program.components().count() > 1 {
        return is_file(program).then(|| program.to_owned());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(program)).find(|p| is_file(p))
}

fn is_plain_value(v: &str) -> bool {
    !v.is_empty()
        && v.len() < 64
        && v.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-@".contains(&b))
}

fn write_etc(dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("passwd"), PASSWD)?;
    std::fs::write(dir.join("group"), GROUP)
}

/// A pids cgroup this process may create children in: v1's `pids` hierarchy or a v2
/// hierarchy with `pids` delegated, at this process's own place in it.
fn find_pids_cgroup() -> Option<PathBuf> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mut candidates = Vec::new();
    for line in own.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let rel = path.trim_start_matches('/');
        if controllers.split(',').any(|c| c == "pids") {
            candidates.push(Path::new("/sys/fs/cgroup/pids").join(rel));
        } else if controllers.is_empty() {
            candidates.push(Path::new("/sys/fs/cgroup").join(rel));
            candidates.push(Path::new("/sys/fs/cgroup/unified").join(rel));
        }
    }
    candidates.into_iter().find(|base| {
        let Ok(cg) = Cgroup::create(base, 1) else { return false };
        cg.dir.join("pids.max").exists()
    })
}

/// A per-command pids cgroup; removed by [`Cgroup::remove`] (or, best effort, on drop).
#[derive(Debug)]
pub(super) struct Cgroup {
    dir: PathBuf,
}

impl Cgroup {
    fn create(base: &Path, max: u32) -> io::Result<Self> {
        let n = CGROUP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = base.join(format!("boardsmith-bash-{}-{n}", std::process::id()));
        std::fs::create_dir(&dir)?;
        let cg = Self { dir };
        std::fs::write(cg.dir.join("pids.max"), max.to_string())?;
        Ok(cg)
    }

    /// Moves the waiting host shell into the cgroup, then releases it. The shell reads
    /// exactly the one line, so with `keep_stdin` the rest of the pipe is the program's.
    async fn admit(&self, child: &mut tokio::process::Child, keep_stdin: bool) -> io::Result<()> {
        use tokio::io::AsyncWriteExt;
        let pid = child.id().ok_or_else(|| io::Error::other("the child already exited"))?;
        std::fs::write(self.dir.join("cgroup.procs"), pid.to_string())?;
        let mut stdin = child.stdin.take().ok_or_else(|| io::Error::other("no stdin pipe"))?;
        stdin.write_all(b"go\n").await?;
        if keep_stdin {
            child.stdin = Some(stdin);
        }
        Ok(())
    }

    /// Removes the cgroup once its processes are gone (they die with the pid namespace);
    /// if they take longer than a second, [`Drop`] goes on trying.
    #[base::boxed]
    pub async fn remove(self) {
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Cgroup {
    /// When the command was cancelled its processes are still dying: retry off the runtime
    /// for a few seconds instead of leaving the cgroup behind.
    fn drop(&mut self) {
        if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
            return;
        }
        let dir = std::mem::take(&mut self.dir);
        std::thread::spawn(move || {
            for _ in 0..100 {
                std::thread::sleep(Duration::from_millis(50));
                if std::fs::remove_dir(&dir).is_ok() {
                    return;
                }
            }
            tracing::warn!(dir = %dir.display(), "a bash pids cgroup is still busy; left behind");
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_kernel_views_and_the_root_are_never_bound() {
        for bad in ["/", "/proc", "/proc/1/root", "/sys/kernel", "/dev", "/opt/../proc", "rel"] {
            assert!(check_read_only(Path::new(bad)).is_err(), "{bad}");
        }
        let why = check_read_only(Path::new("/proc/self")).unwrap_err();
        assert!(why.contains("the host's /proc"), "{why}");
        for good in ["/opt/node", "/usr/local/lib/node_modules", "/procfs-tools"] {
            assert_eq!(check_read_only(Path::new(good)), Ok(()), "{good}");
        }
    }

    fn mask(path: &Path, shape: Shape, hide: bool) -> Mask {
        Mask { path: path.to_owned(), shape, hide }
    }

    #[test]
    fn masks_cover_missing_paths_pin_their_parents_and_skip_what_is_out_of_view() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let work = root.join("work");
        let ro = root.join("ro");
        std::fs::create_dir_all(work.join("agents")).unwrap();
        std::fs::create_dir_all(work.join("data")).unwrap();
        std::fs::create_dir_all(&ro).unwrap();
        std::fs::write(ro.join(".env"), "K=v").unwrap();
        let masks = [
            mask(&work.join("agents"), Shape::Dir, false),
            mask(&work.join("workflows"), Shape::Dir, false),
            mask(&work.join("x/y/tools"), Shape::Dir, false),
            mask(&work.join("data"), Shape::Dir, true),
            mask(&work.join("data/agents"), Shape::Dir, false),
            mask(&work.join("boardsmith.toml"), Shape::File, true),
            mask(&ro.join(".env"), Shape::File, true),
            mask(&ro.join("boardsmith.toml"), Shape::File, true),
            mask(&root.join("elsewhere"), Shape::Dir, true),
        ];
        let extra = [ro.clone()];
        let m = Mounts {
            workspace: &work,
            read_write: &[],
            masks: &masks,
            network: false,
            extra_read_only: &extra,
            env: &[],
        };
        let plan = mask_plan(&m).unwrap();
        assert_eq!(
            plan,
            [
                MaskOp::Pin(work.join("x")),
                MaskOp::Pin(work.join("x/y")),
                MaskOp::ReadOnly(work.join("agents")),
                MaskOp::EmptyDir(work.join("workflows")),
                MaskOp::EmptyDir(work.join("x/y/tools")),
                MaskOp::EmptyDir(work.join("data")),
                MaskOp::Null(work.join("boardsmith.toml")),
                MaskOp::Null(ro.join(".env")),
            ]
        );
        // The pinned parents were made on the host; the masked paths themselves are bwrap's.
        assert!(work.join("x/y").is_dir() && !work.join("x/y/tools").exists());

        // A parent that is a symbolic link refuses the command.
        std::fs::remove_dir_all(work.join("x")).unwrap();
        std::os::unix::fs::symlink(&root, work.join("x")).unwrap();
        let err = mask_plan(&m).unwrap_err();
        assert!(err.to_string().contains("not a plain directory"), "{err}");
    }
}
