//! The worker process (`boardsmith sandbox-worker`): caps its own address space, then runs jobs
//! from stdin one at a time on a large-stack JS thread, each in a fresh realm.
//!
//! The JS thread does all the pipe work itself: it reads a job, runs it, and while the job
//! waits on `sdk` replies it reads those from stdin too, so no hand-off between threads sits on
//! the latency path. Calls made in one go (`Promise.all`) are written in one go, when the job
//! starts waiting. After replying it collects the finished job's garbage and prepares the next
//! realm before reading again, so neither is on the latency path either.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Instant;

use futures::channel::oneshot;
use serde_json::Value;
use serde_json::value::RawValue;

use super::engine::{self, Link, Realm, WorkerEnv};
use super::protocol::{FromWorker, JobKind, ToWorker};
use super::{ErrorKind, ExecError};

/// Native stack of the JS thread: deep (but bounded) parser and `JSON.stringify` recursion
/// must not overflow it.
const JS_STACK_BYTES: usize = 256 << 20;

type Out = Arc<Mutex<std::io::Stdout>>;

/// Writes one protocol line; a broken pipe means the server is gone, so the worker exits.
fn send(out: &Out, msg: &FromWorker) {
    let Ok(mut line) = serde_json::to_vec(msg) else { return };
    line.push(b'\n');
    write_out(out, &line);
}

fn write_out(out: &Out, bytes: &[u8]) {
    let mut out = out.lock().unwrap_or_else(|p| p.into_inner());
    if out.write_all(bytes).and_then(|()| out.flush()).is_err() {
        std::process::exit(0);
    }
}

type Job = (JobKind, String, Value);

/// The JS thread's end of the pipe.
struct PipeLink {
    input: RefCell<std::io::BufReader<std::io::StdinLock<'static>>>,
    line: RefCell<String>,
    out: Out,
    /// `call` lines not written yet: sent together when the job waits, or before its answer.
    outbox: RefCell<Vec<u8>>,
    pending: RefCell<HashMap<u64, oneshot::Sender<engine::Reply>>>,
    next_id: Cell<u64>,
    /// A job that arrived while another was running (the server does not do that).
    queued: RefCell<VecDeque<Job>>,
}

impl PipeLink {
    /// Reads and handles one message; `None` at the end of input (the server is gone).
    fn read(&self) -> Option<Option<Job>> {
        let mut line = self.line.borrow_mut();
        line.clear();
        match self.input.borrow_mut().read_line(&mut line) {
            Ok(0) | Err(_) => return None,
            Ok(_) => {}
        }
        match serde_json::from_str::<ToWorker>(&line) {
            Ok(ToWorker::Job { kind, code, input }) => Some(Some((kind, code, input))),
            Ok(ToWorker::Reply { id, ok, err }) => {
                // Unknown ids are replies to calls of a job that has ended.
                if let Some(tx) = self.pending.borrow_mut().remove(&id) {
                    let _ = tx.send(match (ok, err) {
                        (_, Some(e)) => Err(e),
                        (Some(v), None) => Ok(v),
                        (None, None) => Ok(RawValue::NULL.to_owned()),
                    });
                }
                Some(None)
            }
            Ok(ToWorker::Init { .. }) | Err(_) => {
                eprintln!("sandbox-worker: unexpected message");
                std::process::exit(1);
            }
        }
    }

    /// The next job, once the previous one has been answered.
    fn next_job(&self) -> Option<Job> {
        if let Some(job) = self.queued.borrow_mut().pop_front() {
            return Some(job);
        }
        loop {
            if let Some(job) = self.read()? {
                return Some(job);
            }
        }
    }

    fn flush_calls(&self) {
        let calls = std::mem::take(&mut *self.outbox.borrow_mut());
        if !calls.is_empty() {
            write_out(&self.out, &calls);
        }
    }

    /// Answers the job: pending calls first, then the answer, in one write.
    fn answer(&self, msg: &FromWorker) {
        let mut bytes = std::mem::take(&mut *self.outbox.borrow_mut());
        if serde_json::to_writer(&mut bytes, msg).is_ok() {
            bytes.push(b'\n');
        }
        write_out(&self.out, &bytes);
    }
}

impl Link for PipeLink {
    fn call(
        &self,
        source: String,
        method: String,
        params: Value,
    ) -> oneshot::Receiver<engine::Reply> {
        let (tx, rx) = oneshot::channel();
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        self.pending.borrow_mut().insert(id, tx);
        let mut outbox = self.outbox.borrow_mut();
        if serde_json::to_writer(&mut *outbox, &FromWorker::Call { id, source, method, params })
            .is_ok()
        {
            outbox.push(b'\n');
        }
        rx
    }

    /// The job waits on replies: sends its calls, then reads until a message arrives.
    fn wait(&self) {
        self.flush_calls();
        match self.read() {
            None => std::process::exit(0),
            Some(Some(job)) => self.queued.borrow_mut().push_back(job),
            Some(None) => {}
        }
    }

    fn reset(&self) {
        self.pending.borrow_mut().clear();
        self.outbox.borrow_mut().clear();
    }
}

/// Entry point of the hidden subcommand.
pub fn main() -> ExitCode {
    let mut first = String::new();
    if std::io::stdin().lock().read_line(&mut first).is_err() {
        return ExitCode::FAILURE;
    }
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
    let js = {
        let out = out.clone();
        std::thread::Builder::new().name("js".into()).stack_size(JS_STACK_BYTES).spawn(move || {
            let link = Rc::new(PipeLink {
                // Anything buffered after the init line stays in stdin's shared buffer, which
                // this one reads through; 64 KiB takes a typical reply in one read.
                input: RefCell::new(std::io::BufReader::with_capacity(
                    64 << 10,
                    std::io::stdin().lock(),
                )),
                line: RefCell::default(),
                out: out.clone(),
                outbox: RefCell::default(),
                pending: RefCell::default(),
                next_id: Cell::new(1),
                queued: RefCell::default(),
            });
            let env = WorkerEnv { catalog: Rc::new(catalog), spec, limits, link: link.clone() };
            js_thread(&env, &link);
        })
    };
    let js = match js {
        Ok(js) => js,
        Err(e) => {
            eprintln!("sandbox-worker: cannot start JS thread: {e}");
            return ExitCode::FAILURE;
        }
    };
    send(&out, &FromWorker::Ready);
    match js.join() {
        Ok(()) => ExitCode::SUCCESS,
        // A panic on the JS thread (already printed to stderr): the pool reports a crash.
        Err(_) => ExitCode::FAILURE,
    }
}

/// This process's virtual memory size (what RLIMIT_AS counts): the first field of
/// `/proc/self/statm`, in pages (a third of the cost of `VmSize` in `/proc/self/status`, and
/// it is read after every job).
fn address_space() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().next()?.parse().ok()?;
    Some(pages * rustix::param::page_size() as u64)
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

fn js_thread(env: &WorkerEnv, link: &PipeLink) {
    let (alarm, alarms) = mpsc::channel::<Alarm>();
    if let Err(e) =
        std::thread::Builder::new().name("watchdog".into()).spawn(move || watchdog(&alarms))
    {
        // Without it the server still kills the worker at the deadline, without a line number.
        eprintln!("sandbox-worker: cannot start the watchdog: {e}");
    }
    let mut warm: Option<Realm> = engine::prepare(JobKind::Panel, env).ok();
    while let Some((kind, code, input)) = link.next_job() {
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
        link.answer(&msg);
        env.link.reset();
        if worn_out {
            return;
        }
        // The finished job's realm is unreachable now: collecting while idle is cheap (little
        // is alive) and keeps collections out of the next job's run.
        boa_engine::gc::force_collect();
        // Most jobs repeat their predecessor's kind (panel refreshes): prepare that one.
        warm = engine::prepare(kind, env).ok();
    }
}
