//! The server side of the sandbox: a pool of warm worker processes.
//!
//! A job takes an idle worker (or spawns one), sends it the code, answers its `sdk` calls
//! through the [`SdkHost`] concurrently, and waits for `done`/`fail` until the deadline. A worker
//! that overruns is SIGKILLed; one that dies is classified from its exit signal and last stderr
//! lines (out of memory, native stack overflow). Either way it is replaced in the background and
//! no other execution is affected.

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::stream::FuturesUnordered;
use futures::{FutureExt, StreamExt};
use serde::Serialize;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::Semaphore;
use tokio_util::codec::{FramedRead, LinesCodec, LinesCodecError};

use super::protocol::{FromWorker, JobKind, ToWorker};
use super::{ErrorKind, ExecError, Limit, Limits, Outcome, SandboxConfig, SdkFailure, SdkHost};

/// How long past the deadline a worker may take to answer. The worker interrupts its own
/// code at the deadline (so the error names the line); a worker stuck in a native operation
/// (a catastrophic regex, a huge `fill`) or waiting on sdk calls is killed after this.
const KILL_GRACE: Duration = Duration::from_millis(250);

/// How long a new worker may take to report ready.
const SPAWN_TIMEOUT: Duration = Duration::from_secs(10);
/// Stderr lines kept per worker to explain a crash.
const STDERR_TAIL: usize = 16;

/// Pool counters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PoolStats {
    /// Configured number of warm workers.
    pub workers: usize,
    /// Executions finished (any outcome).
    pub executions: u64,
    /// Workers killed at their deadline.
    pub killed: u64,
    /// Workers that died on their own (OOM, stack overflow, other crash).
    pub crashed: u64,
    /// Workers started, including the initial ones.
    pub spawned: u64,
    /// Workers replaced after a job because their address space grew too large.
    pub retired: u64,
}

#[derive(Default)]
struct Counters {
    executions: AtomicU64,
    killed: AtomicU64,
    crashed: AtomicU64,
    spawned: AtomicU64,
    retired: AtomicU64,
}

struct Worker {
    child: Child,
    stdin: ChildStdin,
    lines: FramedRead<ChildStdout, LinesCodec>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    stderr_done: tokio::task::JoinHandle<()>,
}

pub(super) struct Pool {
    config: SandboxConfig,
    host: Arc<dyn SdkHost>,
    init: Arc<String>,
    /// Least recently used first: a worker that just answered is still preparing its next
    /// realm, so the next job goes to one that has had time to.
    idle: Mutex<VecDeque<Worker>>,
    permits: Semaphore,
    counters: Counters,
    closed: AtomicBool,
}

/// How a job ended, from the pool's point of view.
enum End {
    /// The worker answered; it can be reused unless it asked to retire.
    Answered(Result<Outcome, ExecError>, bool),
    /// The worker was killed or died; it must be replaced.
    Lost(ExecError),
}

impl Pool {
    #[base::boxed]
    pub async fn start(config: SandboxConfig, host: Arc<dyn SdkHost>) -> Result<Self, ExecError> {
        let spec = serde_json::value::to_raw_value(&host.spec())
            .map_err(|e| internal(format!("spec is not serializable: {e}")))?;
        let init = ToWorker::Init { catalog: host.catalog(), spec, limits: config.limits.clone() };
        let init = serde_json::to_string(&init).map_err(|e| internal(e.to_string()))?;
        let pool = Self {
            permits: Semaphore::new(config.workers.max(1)),
            config,
            host,
            init: Arc::new(init),
            idle: Mutex::new(VecDeque::new()),
            counters: Counters::default(),
            closed: AtomicBool::new(false),
        };
        let warm = futures::future::join_all((0..pool.config.workers).map(|_| pool.spawn())).await;
        for w in warm {
            pool.put_idle(w?);
        }
        Ok(pool)
    }

    pub fn limits(&self) -> &Limits {
        &self.config.limits
    }

    pub fn stats(&self) -> PoolStats {
        let c = &self.counters;
        PoolStats {
            workers: self.config.workers,
            executions: c.executions.load(Ordering::Relaxed),
            killed: c.killed.load(Ordering::Relaxed),
            crashed: c.crashed.load(Ordering::Relaxed),
            spawned: c.spawned.load(Ordering::Relaxed),
            retired: c.retired.load(Ordering::Relaxed),
        }
    }

    #[base::boxed]
    pub async fn shutdown(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.permits.close();
        let workers: VecDeque<Worker> = std::mem::take(&mut *self.lock_idle());
        for mut w in workers {
            let _ = w.child.start_kill();
            let _ = w.child.wait().await;
        }
    }

    pub fn run<'a>(
        self: &'a Arc<Self>,
        kind: JobKind,
        code: &'a str,
        input: Option<Value>,
    ) -> base::BoxFuture<'a, Result<Outcome, ExecError>> {
        Box::pin(async move {
            let limits = &self.config.limits;
            precheck(code, limits)?;
            let started = Instant::now();
            let deadline_len = limits.deadline(kind);
            let _permit = self
                .permits
                .acquire()
                .await
                .map_err(|_| ExecError::new(ErrorKind::Runtime, "sandbox is shut down"))?;
            let mut worker = match self.take_idle() {
                Some(w) => w,
                None => self.spawn().await?,
            };
            let job =
                ToWorker::Job { kind, code: code.to_owned(), input: input.unwrap_or(Value::Null) };
            // The deadline bounds execution, not the wait for a free worker.
            let deadline = tokio::time::Instant::now() + deadline_len;
            let end = self.drive(&mut worker, &job, deadline, deadline_len).await;
            self.counters.executions.fetch_add(1, Ordering::Relaxed);
            match end {
                End::Answered(mut r, retire) => {
                    if retire {
                        self.counters.retired.fetch_add(1, Ordering::Relaxed);
                        kill(&mut worker).await;
                        self.replace_in_background();
                    } else {
                        self.put_idle(worker);
                    }
                    if let Ok(o) = &mut r {
                        o.duration = started.elapsed();
                    }
                    r
                }
                End::Lost(e) => {
                    self.replace_in_background();
                    Err(e)
                }
            }
        })
    }

    /// Sends the job and serves the worker until it answers, dies, or the deadline passes.
    async fn drive(
        &self,
        w: &mut Worker,
        job: &ToWorker,
        deadline: tokio::time::Instant,
        deadline_len: Duration,
    ) -> End {
        if let Err(e) = write_line(&mut w.stdin, job).await {
            return End::Lost(self.lost(w, format!("cannot send job: {e}")).await);
        }
        let limits = &self.config.limits;
        let mut calls = 0u32;
        let mut origins = Vec::new();
        let mut inflight = FuturesUnordered::new();
        // The calls not answered yet (to name the provider a deadline was spent waiting on),
        // and the provider failures answered (to tell an uncaught `SdkError` of one apart).
        let mut waiting: Vec<(u64, String, String)> = Vec::new();
        let mut outages: Vec<(String, base::outage::Outage)> = Vec::new();
        loop {
            tokio::select! {
                line = w.lines.next() => {
                    let line = match line {
                        Some(Ok(line)) => line,
                        Some(Err(LinesCodecError::MaxLineLengthExceeded)) => {
                            kill(w).await;
                            return End::Lost(ExecError::limit(
                                Limit::ResultSize,
                                format!("output too large (limit {} bytes)", limits.result_bytes),
                            ));
                        }
                        Some(Err(e)) => return End::Lost(self.lost(w, e.to_string()).await),
                        None => return End::Lost(self.lost(w, "worker exited".into()).await),
                    };
                    match serde_json::from_str::<FromWorker>(&line) {
                        Ok(FromWorker::Call { id, source, method, params }) => {
                            calls += 1;
                            let fut = if calls > limits.sdk_calls {
                                Box::pin(futures::future::ready(Err(SdkFailure::call("sdk call limit reached"))))
                            } else {
                                waiting.push((id, source.clone(), method.clone()));
                                self.host.clone().call(source, method, params)
                            };
                            inflight.push(async move { (id, fut.await) });
                        }
                        Ok(FromWorker::Done { value, logs, sdk_calls, retire }) => {
                            return End::Answered(match serde_json::from_str(value.get()) {
                                Ok(value) => Ok(Outcome { value, logs, sdk_calls, provenance: origins, duration: Duration::ZERO }),
                                Err(e) => Err(ExecError::new(ErrorKind::Result, format!("result is not JSON: {e}"))),
                            }, retire);
                        }
                        Ok(FromWorker::Fail { error, retire }) => {
                            let error = blame(error, &outages, &waiting, self.host.as_ref(), deadline_len);
                            return End::Answered(Err(error), retire);
                        }
                        Ok(FromWorker::Ready) | Err(_) => {
                            kill(w).await;
                            return End::Lost(internal(format!("protocol error from worker: {}", base::text::clip(&line, 200))));
                        }
                    }
                }
                Some(first) = inflight.next(), if !inflight.is_empty() => {
                    // Every reply ready now goes in one write (`Promise.all` of cached calls).
                    let mut ready = vec![first];
                    while let Some(Some(more)) = inflight.next().now_or_never() {
                        ready.push(more);
                    }
                    let mut bytes = Vec::new();
                    for (id, result) in ready {
                        waiting.retain(|(w, ..)| *w != id);
                        let reply = match result {
                            Ok(answer) => {
                                base::provenance::merge(&mut origins, answer.provenance.clone());
                                ToWorker::Reply { id, ok: Some(answer.json().to_owned()), err: None }
                            }
                            Err(SdkFailure { message, outage }) => {
                                if let Some(o) = outage {
                                    outages.push((message.clone(), o));
                                }
                                ToWorker::Reply { id, ok: None, err: Some(message) }
                            }
                        };
                        push_line(&mut bytes, &reply);
                    }
                    if let Err(e) = write_all(&mut w.stdin, &bytes).await {
                        return End::Lost(self.lost(w, format!("cannot send reply: {e}")).await);
                    }
                }
                () = tokio::time::sleep_until(deadline + KILL_GRACE) => {
                    kill(w).await;
                    self.counters.killed.fetch_add(1, Ordering::Relaxed);
                    if let Some(e) = waited_out(&waiting, self.host.as_ref(), deadline_len) {
                        return End::Lost(e);
                    }
                    let mut e = ExecError::limit(
                        Limit::Deadline,
                        format!(
                            "execution exceeded its {} ms deadline and was stopped{}",
                            deadline_len.as_millis(),
                            if inflight.is_empty() { "" } else { " (waiting on sdk calls)" }
                        ),
                    );
                    e.message.push_str("; look for endless loops, huge inputs or catastrophic regexes");
                    return End::Lost(e);
                }
            }
        }
    }

    /// The worker died on its own: reap it and explain why from its signal and stderr.
    async fn lost(&self, w: &mut Worker, context: String) -> ExecError {
        let status = match tokio::time::timeout(Duration::from_secs(2), w.child.wait()).await {
            Ok(Ok(s)) => Some(s),
            _ => {
                kill(w).await;
                None
            }
        };
        let _ = tokio::time::timeout(Duration::from_millis(500), &mut w.stderr_done).await;
        self.counters.crashed.fetch_add(1, Ordering::Relaxed);
        let tail: Vec<String> =
            w.stderr.lock().unwrap_or_else(|p| p.into_inner()).iter().cloned().collect();
        classify_death(status, &tail, &context, self.config.limits.memory_bytes)
    }

    async fn spawn(&self) -> Result<Worker, ExecError> {
        let spawn_err = |e: String| internal(format!("cannot start sandbox worker: {e}"));
        let mut child = Command::new(&self.config.program)
            .args(&self.config.args)
            // No server secrets (API keys) in the worker's environment.
            .env_clear()
            // mimalloc reserves address space 1 GiB at a time by default, which would use up
            // the worker's whole RLIMIT_AS; small steps keep the cap meaningful.
            .env("MIMALLOC_ARENA_RESERVE", "16MiB")
            // Memory freed by a collection is reused by the next jobs: returned to the OS
            // after mimalloc's default 10 ms, it came back as fresh zeroed pages (page clearing
            // was half of `utils.sma` over 10k points). Idle workers still give it back; the
            // address-space cap is unaffected (purging does not unmap).
            .env("MIMALLOC_PURGE_DELAY", "1000")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| spawn_err(format!("{}: {e}", self.config.program.display())))?;
        self.counters.spawned.fetch_add(1, Ordering::Relaxed);
        let (Some(mut stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(spawn_err("missing pipes".into()));
        };
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let stderr_done = tokio::spawn(collect_stderr(stderr, tail.clone()));
        let limits = &self.config.limits;
        let max_line = limits.result_bytes + 8 * limits.log_bytes + (1 << 20);
        let mut lines = FramedRead::new(stdout, LinesCodec::new_with_max_length(max_line));
        let init = async {
            stdin.write_all(self.init.as_bytes()).await?;
            stdin.write_all(b"\n").await?;
            stdin.flush().await?;
            match lines.next().await {
                Some(Ok(l)) if matches!(serde_json::from_str(&l), Ok(FromWorker::Ready)) => Ok(()),
                other => Err(std::io::Error::other(format!("no ready message: {other:?}"))),
            }
        };
        match tokio::time::timeout(SPAWN_TIMEOUT, init).await {
            Ok(Ok(())) => Ok(Worker { child, stdin, lines, stderr: tail, stderr_done }),
            Ok(Err(e)) => {
                let _ = tokio::time::timeout(Duration::from_millis(500), stderr_done).await;
                let why: Vec<String> =
                    tail.lock().unwrap_or_else(|p| p.into_inner()).iter().cloned().collect();
                Err(spawn_err(format!("{e}; stderr: {}", why.join(" | "))))
            }
            Err(_) => Err(spawn_err("timed out waiting for ready".into())),
        }
    }

    fn replace_in_background(self: &Arc<Self>) {
        let pool = self.clone();
        tokio::spawn(async move {
            if pool.closed.load(Ordering::SeqCst) {
                return;
            }
            match pool.spawn().await {
                Ok(w) => pool.put_idle(w),
                Err(e) => tracing::warn!(error = %e, "sandbox worker respawn failed"),
            }
        });
    }

    fn lock_idle(&self) -> std::sync::MutexGuard<'_, VecDeque<Worker>> {
        self.idle.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn take_idle(&self) -> Option<Worker> {
        self.lock_idle().pop_front()
    }

    fn put_idle(&self, w: Worker) {
        if self.closed.load(Ordering::SeqCst) {
            return; // dropped: kill_on_drop reaps it
        }
        let mut idle = self.lock_idle();
        if idle.len() < self.config.workers {
            idle.push_back(w);
        }
    }
}

async fn write_line(stdin: &mut ChildStdin, msg: &ToWorker) -> std::io::Result<()> {
    let mut line = Vec::new();
    push_line(&mut line, msg);
    write_all(stdin, &line).await
}

/// Appends `msg` as one protocol line.
fn push_line(bytes: &mut Vec<u8>, msg: &ToWorker) {
    // Serializing these types into memory cannot fail.
    let _ = serde_json::to_writer(&mut *bytes, msg);
    bytes.push(b'\n');
}

async fn write_all(stdin: &mut ChildStdin, bytes: &[u8]) -> std::io::Result<()> {
    stdin.write_all(bytes).await?;
    stdin.flush().await
}

async fn kill(w: &mut Worker) {
    let _ = w.child.start_kill();
    let _ = w.child.wait().await;
}

async fn collect_stderr(stderr: tokio::process::ChildStderr, tail: Arc<Mutex<VecDeque<String>>>) {
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
        if t.len() == STDERR_TAIL {
            t.pop_front();
        }
        t.push_back(base::text::clip(&line, 300));
    }
}

/// Maps a dead worker's exit to the limit it most likely hit.
fn classify_death(
    status: Option<std::process::ExitStatus>,
    stderr: &[String],
    context: &str,
    memory_bytes: u64,
) -> ExecError {
    use std::os::unix::process::ExitStatusExt;
    let text = stderr.join("\n");
    let signal = status.and_then(|s| s.signal());
    if text.contains("memory allocation of") || text.contains("out of memory") {
        return ExecError::limit(
            Limit::Memory,
            format!(
                "out of memory: the code tried to use more than the {} MiB memory limit ({})",
                memory_bytes >> 20,
                stderr.iter().find(|l| l.contains("memory allocation")).map_or("", String::as_str)
            ),
        );
    }
    if text.contains("overflowed its stack") || signal == Some(11) {
        return ExecError::limit(
            Limit::Stack,
            "native stack overflow: data or code nested too deeply (e.g. a very deep object \
             or array in the result)",
        );
    }
    let how = match (signal, status.and_then(|s| s.code())) {
        (Some(sig), _) => format!("killed by signal {sig}"),
        (None, Some(code)) => format!("exited with status {code}"),
        _ => "vanished".to_owned(),
    };
    let detail = stderr.last().map(|l| format!(": {l}")).unwrap_or_default();
    ExecError::new(ErrorKind::Runtime, format!("sandbox worker crashed ({how}, {context}){detail}"))
}

/// An execution's error with the provider to blame when there is one: an uncaught `SdkError`
/// whose call failed for a provider's reason, or a deadline spent waiting on a provider.
fn blame(
    mut error: ExecError,
    outages: &[(String, base::outage::Outage)],
    waiting: &[(u64, String, String)],
    host: &dyn SdkHost,
    deadline: Duration,
) -> ExecError {
    match error.kind {
        ErrorKind::Sdk => {
            if let Some((_, outage)) = outages.iter().find(|(m, _)| error.message.contains(m)) {
                error.kind = ErrorKind::Provider;
                error.outage = Some(Box::new(outage.clone()));
            }
            error
        }
        ErrorKind::Limit if error.limit == Some(Limit::Deadline) => {
            waited_out(waiting, host, deadline).unwrap_or(error)
        }
        _ => error,
    }
}

/// Out of time while a provider had not answered: the provider's failure, naming it.
fn waited_out(
    waiting: &[(u64, String, String)],
    host: &dyn SdkHost,
    deadline: Duration,
) -> Option<ExecError> {
    let outage = waiting.iter().find_map(|(_, src, m)| host.waited_on(src, m))?;
    let message = format!(
        "{} did not answer within the panel's {} ms deadline ({}); the code is not at fault",
        outage.name,
        deadline.as_millis(),
        outage.details
    );
    Some(ExecError::provider(outage, message))
}

fn internal(msg: String) -> ExecError {
    ExecError::new(ErrorKind::Runtime, msg)
}

/// Cheap checks before any process is involved: source size and bracket nesting depth (deeper
/// source would overflow the parser's native stack, which aborts the worker).
fn precheck(code: &str, limits: &Limits) -> Result<(), ExecError> {
    if code.len() > limits.source_bytes {
        return Err(ExecError::limit(
            Limit::SourceSize,
            format!(
                "code is {} bytes; the limit is {} bytes. Split the work or fetch less inline data",
                code.len(),
                limits.source_bytes
            ),
        ));
    }
    if let Some((line, column)) = too_deep(code, limits.nesting_depth) {
        let mut e = ExecError::limit(
            Limit::NestingDepth,
            format!("code nests brackets more than {} levels deep", limits.nesting_depth),
        );
        e.line = Some(line);
        e.column = Some(column);
        return Err(e);
    }
    Ok(())
}

/// Position (1-based line, column) where bracket depth first exceeds `max`, skipping strings,
/// template text and comments.
pub(super) fn too_deep(code: &str, max: usize) -> Option<(u32, u32)> {
    #[derive(PartialEq)]
    enum St {
        Code,
        Str(char),
        Line,
        Block,
    }
    let (mut st, mut depth, mut line, mut col) = (St::Code, 0usize, 1u32, 0u32);
    let mut chars = code.chars().peekable();
    while let Some(c) = chars.next() {
        col += 1;
        if c == '\n' {
            line += 1;
            col = 0;
        }
        match st {
            St::Code => match c {
                '(' | '[' | '{' => {
                    depth += 1;
                    if depth > max {
                        return Some((line, col));
                    }
                }
                ')' | ']' | '}' => depth = depth.saturating_sub(1),
                '"' | '\'' | '`' => st = St::Str(c),
                '/' if chars.peek() == Some(&'/') => st = St::Line,
                '/' if chars.peek() == Some(&'*') => st = St::Block,
                _ => {}
            },
            St::Str(q) => {
                if c == '\\' {
                    chars.next();
                    col += 1;
                } else if c == q || (c == '\n' && q != '`') {
                    st = St::Code;
                }
            }
            St::Line => {
                if c == '\n' {
                    st = St::Code;
                }
            }
            St::Block => {
                if c == '*' && chars.peek() == Some(&'/') {
                    chars.next();
                    st = St::Code;
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_scan_skips_strings_and_comments() {
        assert_eq!(too_deep("[[[]]]", 3), None);
        assert_eq!(too_deep("[[[[]]]]", 3), Some((1, 4)));
        assert_eq!(too_deep("'[[[[' // [[[[\n/* [[[[ */ `[[[[`", 3), None);
        assert_eq!(too_deep("x\n  ((((", 3), Some((2, 6)));
    }

    proptest::proptest! {
        #[test]
        fn nesting_scan_never_panics(code in "\\PC{0,200}", max in 0usize..8) {
            let _ = too_deep(&code, max);
        }

        #[test]
        fn nesting_scan_matches_the_true_depth(code in "[\\[\\](){}a\n]{0,64}", max in 0usize..6) {
            let mut depth = 0usize;
            let mut want = None;
            let (mut line, mut col) = (1u32, 0u32);
            for c in code.chars() {
                col += 1;
                if c == '\n' { line += 1; col = 0; }
                match c {
                    '(' | '[' | '{' => {
                        depth += 1;
                        if depth > max && want.is_none() { want = Some((line, col)); }
                    }
                    ')' | ']' | '}' => depth = depth.saturating_sub(1),
                    _ => {}
                }
            }
            proptest::prop_assert_eq!(too_deep(&code, max), want);
        }
    }
}
