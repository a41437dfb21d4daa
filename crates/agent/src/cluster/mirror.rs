//! The owner's side of a shared run: every event of this node's runs goes, in seq order, to a
//! bounded queue, and one writer stores whatever has queued up in one statement (events, run
//! states, notices), so a busy node writes many events per round trip and an idle one writes
//! each at once.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::events::{Event, EventBody, RunMirror};
use store::{RunBatch, RunState, RunStatus, Store};

/// Events queued for the writer at most; beyond it the newest are dropped (counted and
/// logged) rather than letting a stalled database grow the node's memory. A follower of a run
/// that lost events ends where the gap begins.
const QUEUE: usize = 100_000;
/// Events written in one statement at most.
const BATCH: usize = 2_000;

enum Mirrored {
    Event(String, Arc<Event>),
    Finished(String, u64),
}

/// The [`RunMirror`] of a node on a shared store.
#[derive(Debug)]
struct Mirror {
    tx: mpsc::Sender<Mirrored>,
    dropped: AtomicU64,
}

impl Mirror {
    fn send(&self, m: Mirrored) {
        if self.tx.try_send(m).is_err() {
            let n = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
            if n.is_power_of_two() {
                tracing::warn!(dropped = n, "the run event queue is full: events were not shared");
            }
        }
    }
}

impl RunMirror for Mirror {
    fn emitted(&self, run_id: &str, event: &Arc<Event>) {
        self.send(Mirrored::Event(run_id.to_owned(), Arc::clone(event)));
    }

    fn finished(&self, run_id: &str, last_seq: u64) {
        self.send(Mirrored::Finished(run_id.to_owned(), last_seq));
    }
}

/// Starts the writer; returns the mirror to give the run logs.
pub(super) fn start(store: Arc<Store>, shutdown: CancellationToken) -> Arc<dyn RunMirror> {
    let (tx, rx) = mpsc::channel(QUEUE);
    tokio::spawn(write(store, rx, shutdown));
    Arc::new(Mirror { tx, dropped: AtomicU64::new(0) })
}

/// The chat a run's event names, if it does.
fn chat_of(body: &EventBody) -> Option<&str> {
    match body {
        EventBody::RequestQuery(q) => Some(&q.chat_id),
        EventBody::RunStart { chat_id, .. } => Some(chat_id),
        _ => None,
    }
}

async fn write(store: Arc<Store>, mut rx: mpsc::Receiver<Mirrored>, shutdown: CancellationToken) {
    // Per run still going: its chat and last seq queued.
    let mut runs: HashMap<String, (String, u64)> = HashMap::new();
    loop {
        let first = tokio::select! {
            m = rx.recv() => m,
            // Runs end on shutdown: what is queued by then is still written.
            () = shutdown.cancelled(), if rx.is_empty() => None,
        };
        let Some(first) = first else { return };
        let mut batch = RunBatch::default();
        let mut touched: HashMap<String, RunStatus> = HashMap::new();
        let mut next = Some(first);
        while let Some(m) = next.take() {
            match m {
                Mirrored::Event(run_id, event) => {
                    let entry = runs.entry(run_id.clone()).or_default();
                    if let Some(chat) = chat_of(&event.body) {
                        chat.clone_into(&mut entry.0);
                    }
                    entry.1 = event.seq;
                    // An event always serializes (string keys, no custom serializers).
                    let text = serde_json::to_string(&*event).unwrap_or_default();
                    batch.events.push((run_id.clone(), event.seq, text));
                    touched.entry(run_id).or_insert(RunStatus::Running);
                }
                Mirrored::Finished(run_id, last) => {
                    runs.entry(run_id.clone()).or_default().1 = last;
                    touched.insert(run_id, RunStatus::Ended);
                }
            }
            if batch.events.len() < BATCH {
                next = rx.try_recv().ok();
            }
        }
        for (run_id, status) in touched {
            let (chat_id, last_seq) = if status == RunStatus::Ended {
                runs.remove(&run_id).unwrap_or_default()
            } else {
                runs.get(&run_id).cloned().unwrap_or_default()
            };
            batch.runs.push(RunState { run_id, chat_id, status, last_seq });
        }
        // A failed write is retried a few times; then its events are lost to followers
        // (the run itself goes on, and its own node's readers see everything).
        for attempt in 1..=3 {
            match store.write_runs(&batch).await {
                Ok(()) => break,
                Err(e) => {
                    tracing::warn!(error = %e, attempt, "writing run events failed");
                    tokio::time::sleep(Duration::from_millis(200 * attempt)).await;
                }
            }
        }
    }
}
