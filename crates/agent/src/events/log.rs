//! The per-run replay buffer: [`RunLogs`] by run id, each [`RunLog`] holding a run's events for
//! a bounded time after it ends and a bounded count, the sequencer that writes it
//! ([`EventSink`]) and the readers that follow it ([`Subscription`]: buffered events first, then
//! the live tail, with no gap and no duplicate).
//!
//! With several nodes, a [`RunMirror`] is told of every event in seq order (so the owner can
//! store them for other nodes), and a run owned elsewhere is read here through a [`Follower`]:
//! a log whose events arrive from outside with the seqs the owner gave them.
//!
//! Knows the event envelope only; nothing of what events mean.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use futures::Stream;
use tokio::sync::watch;

use super::{Event, EventBody, now_ms, parse_event_id};

/// Errors of the replay buffer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StreamError {
    /// No log for this run (never started, or expired after the retention time).
    #[error("run `{0}` is unknown or its events have expired")]
    UnknownRun(String),
    /// A log for this run already exists.
    #[error("run `{0}` already has an event stream")]
    DuplicateRun(String),
    /// The run is on another node and the shared store cannot be read right now.
    #[error("the run's events cannot be read from the shared store: {0}")]
    Unavailable(String),
    /// `Last-Event-ID` is not `<runId>:<seq>`.
    #[error("malformed event id `{0}` (expected <runId>:<seq>)")]
    BadEventId(String),
    /// The events after `after` are no longer all buffered (the run produced more than the
    /// count bound since then): the client must reload the chat instead.
    #[error("events after seq {after} of run `{run_id}` were evicted (oldest kept: {oldest})")]
    Evicted {
        /// The run.
        run_id: String,
        /// The last seq the client had.
        after: u64,
        /// The oldest seq still buffered.
        oldest: u64,
    },
}

/// Bounds of the replay buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunLogConfig {
    /// How long a finished run's events stay available (default 5 minutes).
    pub retention: Duration,
    /// Most events kept per run; older ones are dropped (default 20,000).
    pub max_events: usize,
}

impl Default for RunLogConfig {
    fn default() -> Self {
        Self { retention: Duration::from_secs(300), max_events: 20_000 }
    }
}

/// Told of every event of this node's runs, in seq order per run (called under the run's
/// lock, so it must only hand the event on).
pub trait RunMirror: Send + Sync + std::fmt::Debug {
    /// `event` was emitted on `run_id`.
    fn emitted(&self, run_id: &str, event: &Arc<Event>);
    /// `run_id`'s stream ended after `last_seq`.
    fn finished(&self, run_id: &str, last_seq: u64);
}

/// The event log of one run: the sequencer's state, the bounded buffer and the wake-up signal.
#[derive(Debug)]
pub struct RunLog {
    run_id: String,
    max_events: usize,
    mirror: Option<Arc<dyn RunMirror>>,
    state: Mutex<LogState>,
    /// Carries the last seq emitted; subscribers wait on it, then read from `state`.
    signal: watch::Sender<u64>,
}

#[derive(Debug, Default)]
struct LogState {
    events: VecDeque<Arc<Event>>,
    /// The seq the next event gets.
    next_seq: u64,
    /// Timestamps never go backwards within a run, even if the wall clock does.
    last_timestamp: i64,
    finished_at: Option<Instant>,
}

impl LogState {
    fn oldest_seq(&self) -> u64 {
        self.next_seq - self.events.len() as u64
    }
}

impl RunLog {
    fn new(run_id: &str, max_events: usize, mirror: Option<Arc<dyn RunMirror>>) -> Self {
        Self::starting_at(run_id, max_events, 1, mirror)
    }

    /// A log whose first event will have seq `next_seq` (a follower's starts after the
    /// client's `Last-Event-ID`).
    fn starting_at(
        run_id: &str,
        max_events: usize,
        next_seq: u64,
        mirror: Option<Arc<dyn RunMirror>>,
    ) -> Self {
        Self {
            run_id: run_id.to_owned(),
            max_events: max_events.max(1),
            mirror,
            state: Mutex::new(LogState { next_seq: next_seq.max(1), ..LogState::default() }),
            signal: watch::Sender::new(next_seq.saturating_sub(1)),
        }
    }

    fn state(&self) -> MutexGuard<'_, LogState> {
        // Nothing panics while holding the lock; survive poisoning anyway.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The run id.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// The seq of the last event emitted (0 before the first).
    pub fn last_seq(&self) -> u64 {
        self.state().next_seq - 1
    }

    /// True once the run's sink is finished or dropped.
    pub fn is_finished(&self) -> bool {
        self.state().finished_at.is_some()
    }

    /// The buffered events with seq > `after`, and then the live tail until the run finishes.
    pub fn subscribe(self: &Arc<Self>, after: u64) -> Result<Subscription, StreamError> {
        let state = self.state();
        // Replay must start inside the buffer; `after + 1 == oldest` is the first kept event.
        let oldest = state.oldest_seq();
        if after.saturating_add(1) < oldest {
            return Err(StreamError::Evicted { run_id: self.run_id.clone(), after, oldest });
        }
        let next = after.saturating_add(1);
        Ok(Subscription { log: Arc::clone(self), next, signal: self.signal.subscribe() })
    }

    fn push(&self, body: EventBody) -> Arc<Event> {
        let mut state = self.state();
        let timestamp = now_ms().max(state.last_timestamp);
        let event = Arc::new(Event { seq: state.next_seq, body, timestamp });
        self.append(&mut state, &event);
        if let Some(mirror) = &self.mirror {
            // Under the lock: the mirror sees a run's events in seq order.
            mirror.emitted(&self.run_id, &event);
        }
        event
    }

    /// Appends an event that already has its seq (the next one) and timestamp.
    fn append(&self, state: &mut LogState, event: &Arc<Event>) {
        state.next_seq = event.seq + 1;
        state.last_timestamp = state.last_timestamp.max(event.timestamp);
        state.events.push_back(Arc::clone(event));
        if state.events.len() > self.max_events {
            state.events.pop_front();
        }
        // Signalled under the state lock: a subscriber that found nothing new marked the
        // signal seen under the same lock, so it cannot miss this wake-up.
        self.signal.send_replace(event.seq);
    }

    fn finish(&self) {
        let mut state = self.state();
        if state.finished_at.is_none() {
            state.finished_at = Some(Instant::now());
            let last = state.next_seq - 1;
            self.signal.send_replace(last);
            if let Some(mirror) = &self.mirror {
                mirror.finished(&self.run_id, last);
            }
        }
    }

    fn expired(&self, now: Instant, retention: Duration) -> bool {
        self.state().finished_at.is_some_and(|at| now.duration_since(at) >= retention)
    }
}

/// A reader of one run's events: buffered ones first, then live ones as they are emitted.
#[derive(Debug)]
pub struct Subscription {
    log: Arc<RunLog>,
    next: u64,
    signal: watch::Receiver<u64>,
}

impl Subscription {
    /// The run id.
    pub fn run_id(&self) -> &str {
        &self.log.run_id
    }

    /// The seq of the next event this reader gets.
    pub fn next_seq(&self) -> u64 {
        self.next
    }

    /// The next event; `Ok(None)` once the run has finished and every event was read.
    /// [`StreamError::Evicted`] when this reader fell further behind than the buffer holds.
    #[base::boxed]
    pub async fn next(&mut self) -> Result<Option<Arc<Event>>, StreamError> {
        loop {
            {
                let state = self.log.state();
                let oldest = state.oldest_seq();
                if self.next < oldest {
                    return Err(StreamError::Evicted {
                        run_id: self.log.run_id.clone(),
                        after: self.next - 1,
                        oldest,
                    });
                }
                if self.next < state.next_seq {
                    let index = (self.next - oldest) as usize;
                    let event = Arc::clone(&state.events[index]);
                    self.next += 1;
                    return Ok(Some(event));
                }
                if state.finished_at.is_some() {
                    return Ok(None);
                }
                self.signal.borrow_and_update();
            }
            // The sender lives in the log we hold, so this only errs if it was dropped, which
            // cannot happen while we hold the log.
            if self.signal.changed().await.is_err() {
                return Ok(None);
            }
        }
    }

    /// The subscription as a stream (ends after the last event or the first error).
    pub fn into_stream(self) -> impl Stream<Item = Result<Arc<Event>, StreamError>> + Send {
        futures::stream::unfold(Some(self), |sub| async move {
            let mut sub = sub?;
            match sub.next().await {
                Ok(Some(event)) => Some((Ok(event), Some(sub))),
                Ok(None) => None,
                Err(e) => Some((Err(e), None)),
            }
        })
    }
}

/// The producer side of one run's stream: assigns `seq` and `timestamp` and publishes at once.
/// Dropping it (or [`EventSink::finish`]) marks the run finished; its events then stay
/// available for the retention time.
#[derive(Debug)]
pub struct EventSink {
    log: Arc<RunLog>,
}

impl EventSink {
    /// The run id.
    pub fn run_id(&self) -> &str {
        &self.log.run_id
    }

    /// Stamps and publishes one event; returns it as published.
    pub fn emit(&self, body: EventBody) -> Arc<Event> {
        self.log.push(body)
    }

    /// The seq of the last event emitted (0 before the first).
    pub fn last_seq(&self) -> u64 {
        self.log.last_seq()
    }

    /// A reader from seq `after + 1` (0 = from the start).
    pub fn subscribe(&self, after: u64) -> Result<Subscription, StreamError> {
        self.log.subscribe(after)
    }

    /// The run's log.
    pub fn log(&self) -> &Arc<RunLog> {
        &self.log
    }

    /// Ends the stream: readers get the remaining events, then the end.
    pub fn finish(self) {
        // Drop does it.
    }
}

impl Drop for EventSink {
    fn drop(&mut self) {
        self.log.finish();
    }
}

/// The reading end of a run owned by another node: events are put in with the owner's seqs.
/// Dropping it ends the local stream (readers get what was put, then the end); a follower
/// that stopped before the run ended must be [`RunLogs::forget`]-ten instead, or later
/// readers here would take its partial log for the whole run.
#[derive(Debug)]
pub struct Follower {
    log: Arc<RunLog>,
}

impl Follower {
    /// The run id.
    pub fn run_id(&self) -> &str {
        &self.log.run_id
    }

    /// The seq of the last event put (the `Last-Event-ID` it started after, before any).
    pub fn last_seq(&self) -> u64 {
        self.log.last_seq()
    }

    /// A reader from seq `after + 1`.
    pub fn subscribe(&self, after: u64) -> Result<Subscription, StreamError> {
        self.log.subscribe(after)
    }

    /// Readers still attached (the follower may stop when none is left).
    pub fn readers(&self) -> usize {
        self.log.signal.receiver_count()
    }

    /// Puts the owner's next event. One already put is ignored (`Ok(false)`); one after a
    /// gap is refused with the seq expected, and nothing changes.
    pub fn put(&self, event: Event) -> Result<bool, u64> {
        let mut state = self.log.state();
        let expected = state.next_seq;
        if event.seq < expected {
            return Ok(false);
        }
        if event.seq > expected {
            return Err(expected);
        }
        self.log.append(&mut state, &Arc::new(event));
        Ok(true)
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        self.log.finish();
    }
}

/// The logs of live and recently finished runs, by run id. Expired logs are swept lazily on
/// [`RunLogs::start`] (at most once per second: a sweep visits every log, and a busy server
/// holds thousands) and refused by [`RunLogs::get`], so no background task is needed.
#[derive(Debug)]
pub struct RunLogs {
    config: RunLogConfig,
    runs: Mutex<Runs>,
    mirror: std::sync::OnceLock<Arc<dyn RunMirror>>,
}

#[derive(Debug)]
struct Runs {
    logs: HashMap<String, Arc<RunLog>>,
    last_sweep: Instant,
}

impl Default for RunLogs {
    fn default() -> Self {
        Self::new(RunLogConfig::default())
    }
}

impl RunLogs {
    /// An empty registry.
    pub fn new(config: RunLogConfig) -> Self {
        Self {
            config,
            runs: Mutex::new(Runs { logs: HashMap::new(), last_sweep: Instant::now() }),
            mirror: std::sync::OnceLock::new(),
        }
    }

    /// The bounds.
    pub fn config(&self) -> RunLogConfig {
        self.config
    }

    /// Tells `mirror` of every event of the runs started from now on (set once; a second
    /// mirror is ignored).
    pub fn set_mirror(&self, mirror: Arc<dyn RunMirror>) {
        let _ = self.mirror.set(mirror);
    }

    fn runs(&self) -> MutexGuard<'_, Runs> {
        self.runs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Opens the stream of a new run.
    pub fn start(&self, run_id: &str) -> Result<EventSink, StreamError> {
        let log =
            self.insert(run_id, |max| RunLog::new(run_id, max, self.mirror.get().cloned()))?;
        Ok(EventSink { log })
    }

    /// Opens the local stream of a run another node owns, for readers after seq `after`
    /// ([`StreamError::DuplicateRun`] if this node already has a log of it).
    pub fn follow(&self, run_id: &str, after: u64) -> Result<Follower, StreamError> {
        let next = after.saturating_add(1);
        let log = self.insert(run_id, |max| RunLog::starting_at(run_id, max, next, None))?;
        Ok(Follower { log })
    }

    /// A follower for one reader whose `after` is older than the shared follower's start:
    /// its log is its own, not registered here.
    pub fn follow_alone(&self, run_id: &str, after: u64) -> Follower {
        let next = after.saturating_add(1);
        Follower { log: Arc::new(RunLog::starting_at(run_id, self.config.max_events, next, None)) }
    }

    /// Drops a follower and its log, which ended before the run did.
    pub fn forget(&self, follower: Follower) {
        let mut runs = self.runs();
        if runs.logs.get(follower.run_id()).is_some_and(|l| Arc::ptr_eq(l, &follower.log)) {
            runs.logs.remove(follower.run_id());
        }
    }

    fn insert(
        &self,
        run_id: &str,
        make: impl FnOnce(usize) -> RunLog,
    ) -> Result<Arc<RunLog>, StreamError> {
        let mut runs = self.runs();
        let now = Instant::now();
        if now.duration_since(runs.last_sweep) >= self.config.retention.min(Duration::from_secs(1))
        {
            Self::sweep_locked(&mut runs, now, self.config.retention);
        }
        if runs.logs.contains_key(run_id) {
            return Err(StreamError::DuplicateRun(run_id.to_owned()));
        }
        let log = Arc::new(make(self.config.max_events));
        runs.logs.insert(run_id.to_owned(), Arc::clone(&log));
        Ok(log)
    }

    /// The log of a live or recently finished run.
    pub fn get(&self, run_id: &str) -> Option<Arc<RunLog>> {
        let mut runs = self.runs();
        let log = runs.logs.get(run_id)?;
        if log.expired(Instant::now(), self.config.retention) {
            runs.logs.remove(run_id);
            return None;
        }
        Some(Arc::clone(log))
    }

    /// Resumes from a `Last-Event-ID` header value (`<runId>:<seq>`): the events after that seq,
    /// then the live tail.
    pub fn resume(&self, last_event_id: &str) -> Result<Subscription, StreamError> {
        let (run_id, seq) = parse_event_id(last_event_id)
            .ok_or_else(|| StreamError::BadEventId(last_event_id.to_owned()))?;
        let log = self.get(run_id).ok_or_else(|| StreamError::UnknownRun(run_id.to_owned()))?;
        log.subscribe(seq)
    }

    /// Drops the logs of runs finished longer ago than the retention time; returns how many.
    pub fn sweep(&self) -> usize {
        Self::sweep_locked(&mut self.runs(), Instant::now(), self.config.retention)
    }

    /// Number of logs held (live and retained, including expired ones not yet swept).
    pub fn len(&self) -> usize {
        self.runs().logs.len()
    }

    /// True when no log is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn sweep_locked(runs: &mut Runs, now: Instant, retention: Duration) -> usize {
        let before = runs.logs.len();
        runs.logs.retain(|_, log| !log.expired(now, retention));
        runs.last_sweep = now;
        before - runs.logs.len()
    }
}
