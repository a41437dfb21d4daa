//! The worker process (`boardsmith sandbox-worker`): caps its own address space, then runs jobs
//! from stdin one at a time on a large-stack JS thread, each in a fresh realm.
//!
//! Threads: the main thread reads stdin (jobs go to the JS thread, replies complete pending
//! `sdk` calls); the JS thread runs a job, writes `done`/`fail`, then prepares the next realm
//! before waiting, so context creation is not on the latency path.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Instant;

use futures::channel::oneshot;
use serde_json::Value;

use super::engine::{self, Link, Realm, WorkerEnv};
use super::protocol::{FromWorker, JobKind, ToWorker};
use super::{ErrorKind, ExecError};

/// Native stack of the JS thread: deep (but bounded) parser and `JSON.stringify` recursion
/// must not overflow it.
const JS_STACK_BYTES: usize = 256 << 20;

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<Value, String>>>>>;
type Out = Arc<Mutex<std::io::Stdout>>;

/// Writes one protocol line; a broken pipe means the server is gone, so the worker exits.
fn send(out: &Out, msg: &FromWorker) {
    let Ok(mut line) = serde_json::to_vec(msg) else { return };
    line.push(b'\n');
    let mut out = out.lock().unwrap_or_else(|p| p.into_inner());
    if out.write_all(&line).and_then(|()| out.flush()).is_err() {
        std::process::exit(0);
    }
}

struct PipeLink {
    out: Out,
    pending: Pending,
    next_id: Arc<AtomicU64>,
}

impl Link for PipeLink {
    fn call(
        &self,
        source: String,
        method: String,
        params: Value,
    ) -> oneshot::Receiver<Result<Value, String>> {
        let (tx, rx) = oneshot::channel();
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.pending.lock().unwrap_or_else(|p| p.into_inner()).insert(id, tx);
        send(&self.out, &FromWorker::Call { id, source, method, params });
        rx
    }

    fn reset(&self) {
        self.pending.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}

/// Entry point of the hidden subcommand.
pub fn main() -> ExitCode {
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    let Some(Ok(first)) = lines.next() else { return ExitCode::FAILURE };
    let Ok(ToWorker::Init { catalog, spec, limits }) = serde_json::from_str(&first) else {
        eprintln!("sandbox-worker: expected an init message");
        return ExitCode::FAILURE;
    };
    // The memory cap is set by the worker on itself, before the JS thread reserves its stack.
    if let Err(e) =
        rlimit::setrlimit(rlimit::Resource::AS, limits.memory_bytes, limits.memory_bytes)
    {
        eprintln!("sandbox-worker: cannot set memory limit: {e}");
        return ExitCode::FAILURE;
    }
    let mut spec: Value = serde_json::from_str(spec.get()).unwrap_or(Value::Null);
    if let Value::Object(o) = &mut spec {
        o.insert(
            "utils".into(),
            serde_json::from_str(super::utils::SPEC_JSON).unwrap_or(Value::Null),
        );
    }

    let out: Out = Arc::new(Mutex::new(std::io::stdout()));
    let pending: Pending = Arc::default();
    let (jobs_tx, jobs_rx) = mpsc::channel::<(JobKind, String, Value)>();
    let js = {
        let (out, pending) = (out.clone(), pending.clone());
        std::thread::Builder::new().name("js".into()).stack_size(JS_STACK_BYTES).spawn(move || {
            let link = PipeLink { out: out.clone(), pending, next_id: Arc::new(AtomicU64::new(1)) };
            let env = WorkerEnv { catalog, spec, limits, link: Rc::new(link) };
            js_thread(&env, &out, &jobs_rx);
        })
    };
    if let Err(e) = js {
        eprintln!("sandbox-worker: cannot start JS thread: {e}");
        return ExitCode::FAILURE;
    }
    send(&out, &FromWorker::Ready);

    for line in lines {
        let Ok(line) = line else { break };
        match serde_json::from_str::<ToWorker>(&line) {
            Ok(ToWorker::Job { kind, code, input }) => {
                if jobs_tx.send((kind, code, input)).is_err() {
                    break;
                }
            }
            Ok(ToWorker::Reply { id, ok, err }) => {
                let tx = pending.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
                if let Some(tx) = tx {
                    let _ = tx.send(match (ok, err) {
                        (_, Some(e)) => Err(e),
                        (v, None) => Ok(v.unwrap_or(Value::Null)),
                    });
                }
            }
            Ok(ToWorker::Init { .. }) | Err(_) => {
                eprintln!("sandbox-worker: unexpected message");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}

/// This process's virtual memory size (what RLIMIT_AS counts), from `/proc/self/status`.
fn address_space() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmSize:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Arms (`Some`) or disarms (`None`) the watchdog for the running job.
type Alarm = Option<(Instant, Arc<AtomicBool>)>;

/// Sets the running job's interrupt flag when its deadline passes; Boa then stops the code at
/// the next loop back-edge or call with an error naming the line.
fn watchdog(alarms: &mpsc::Receiver<Alarm>) {
    let mut armed: Alarm = None;
    loop {
        let next = match &armed {
            Some((at, _)) => alarms.recv_timeout(at.saturating_duration_since(Instant::now())),
            None => alarms.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected),
        };
        match next {
            Ok(alarm) => armed = alarm,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Some((_, flag)) = armed.take() {
                    flag.store(true, Ordering::Relaxed);
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => return,
        }
    }
}

fn js_thread(env: &WorkerEnv, out: &Out, jobs: &mpsc::Receiver<(JobKind, String, Value)>) {
    let (alarm, alarms) = mpsc::channel::<Alarm>();
    if let Err(e) =
        std::thread::Builder::new().name("watchdog".into()).spawn(move || watchdog(&alarms))
    {
        // Without it the server still kills the worker at the deadline, without a line number.
        eprintln!("sandbox-worker: cannot start the watchdog: {e}");
    }
    let mut warm: Option<Realm> = engine::prepare(JobKind::Panel, env).ok();
    while let Ok((kind, code, input)) = jobs.recv() {
        let realm = match warm.take() {
            Some(r) if r.kind() == kind => Ok(r),
            _ => engine::prepare(kind, env),
        };
        let mut msg = match realm {
            Ok(mut realm) => {
                let flag = Arc::new(AtomicBool::new(false));
                realm.set_interrupt(flag.clone());
                let _ = alarm.send(Some((Instant::now() + env.limits.deadline(kind), flag)));
                let msg = engine::run(&mut realm, &code, input, &env.limits);
                let _ = alarm.send(None);
                msg
            }
            Err(e) => FromWorker::Fail {
                error: ExecError::new(ErrorKind::Runtime, format!("cannot create realm: {e}")),
                retire: true,
            },
        };
        let worn_out =
            address_space().is_some_and(|bytes| bytes > env.limits.memory_bytes / 10 * 6);
        if let FromWorker::Done { retire, .. } | FromWorker::Fail { retire, .. } = &mut msg {
            *retire |= worn_out;
        }
        send(out, &msg);
        env.link.reset();
        if worn_out {
            return;
        }
        // Most jobs repeat their predecessor's kind (panel refreshes): prepare that one.
        warm = engine::prepare(kind, env).ok();
    }
}
