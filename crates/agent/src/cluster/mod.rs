//! Agent and workflow runs across nodes sharing one PostgreSQL store.
//!
//! A run lives on the node that started it (its owner). The owner's run logs mirror every
//! event into `run_events` ([`mirror`]), in batches, each with a notice. A client whose
//! `Last-Event-ID` reaches another node reads the run there through a follower log fed from
//! that table ([`follow`]). Every node beats once a second; a running run whose owner has been
//! silent for [`ALIVE`] is reaped by one node, which closes its events with a `run.error`, so
//! followers end cleanly. A frontend-tool submit or a steering message for a run on another
//! node is filed as a request for its owner, who applies it and answers ([`requests`]).
//!
//! Owns the node's heartbeat and the routing of notices about runs; knows the agent service
//! only through its run logs and the owner-side calls of
//! [`RemoteRuns`](crate::service::RemoteRuns). Not used on the embedded store.

mod follow;
mod mirror;
mod requests;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;
use tokio::sync::{broadcast, oneshot, watch};
use tokio_util::sync::CancellationToken;

use crate::events::{Event, EventBody, StreamError, Subscription, now_ms};
use crate::service::{AgentService, Busy, RemoteRuns, RunHold};
use crate::tools::SubmitError;
use store::{Notice, Store};

/// How recent a node's heartbeat must be for its runs to count as alive.
pub const ALIVE: Duration = Duration::from_secs(5);
/// How often a node beats and looks for runs of dead nodes.
const BEAT: Duration = Duration::from_secs(1);
/// How often ended runs past their retention are pruned.
const PRUNE_EVERY: Duration = Duration::from_secs(30);
/// How long a node waits for a run's owner to answer a request.
const ANSWER_WITHIN: Duration = Duration::from_secs(5);

/// This node's part in the cluster's runs.
#[derive(Debug)]
pub struct Cluster {
    /// Itself, for the tasks it spawns.
    me: Weak<Self>,
    store: Arc<Store>,
    agents: Weak<AgentService>,
    /// Runs followed here: the last seq their owner announced.
    followed: Mutex<HashMap<String, watch::Sender<u64>>>,
    /// Requests this node filed and waits on.
    waiting: Mutex<HashMap<i64, oneshot::Sender<()>>>,
    /// Readers held for clients reading runs of this node from others, by request id.
    holds: Mutex<HashMap<i64, (String, RunHold)>>,
    /// The runs this node reaped (their owner died), for whoever keeps records of them.
    lost: broadcast::Sender<String>,
    shutdown: CancellationToken,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Cluster {
    /// Joins the cluster: mirrors `agents`' runs into the store, answers for runs elsewhere,
    /// beats, and reaps the runs of dead nodes until `shutdown` (then leaves). `None` on the
    /// embedded store.
    pub fn start(
        store: &Arc<Store>,
        agents: &Arc<AgentService>,
        shutdown: &CancellationToken,
    ) -> Option<Arc<Self>> {
        let notices = store.notices()?;
        let cluster = Arc::new_cyclic(|me| Self {
            me: me.clone(),
            store: Arc::clone(store),
            agents: Arc::downgrade(agents),
            followed: Mutex::new(HashMap::new()),
            waiting: Mutex::new(HashMap::new()),
            holds: Mutex::new(HashMap::new()),
            lost: broadcast::channel(64).0,
            shutdown: shutdown.clone(),
        });
        agents.logs().set_mirror(mirror::start(Arc::clone(store), shutdown.clone()));
        agents.set_remote(Arc::clone(&cluster) as Arc<dyn RemoteRuns>);
        tokio::spawn(Arc::clone(&cluster).route(notices));
        tokio::spawn(Arc::clone(&cluster).beat());
        Some(cluster)
    }

    /// Hands run notices to the followers and requesters waiting for them.
    async fn route(self: Arc<Self>, mut notices: broadcast::Receiver<Notice>) {
        use broadcast::error::RecvError;
        loop {
            let notice = tokio::select! {
                () = self.shutdown.cancelled() => return,
                n = notices.recv() => n,
            };
            match notice {
                Ok(Notice::RunEvents { run_id, seq }) => {
                    if let Some(tx) = lock(&self.followed).get(&run_id) {
                        tx.send_replace(seq);
                    }
                }
                Ok(Notice::RunRequest(id)) => {
                    tokio::spawn(Arc::clone(&self).serve(id));
                }
                Ok(Notice::RunAnswer(id)) => {
                    if let Some(tx) = lock(&self.waiting).remove(&id) {
                        let _ = tx.send(());
                    }
                }
                Ok(Notice::Resync) | Err(RecvError::Lagged(_)) => {
                    // Followers and requesters re-read on their own timers too; wake them now.
                    for tx in lock(&self.followed).values() {
                        tx.send_modify(|_| {});
                    }
                }
                Ok(_) => {}
                Err(RecvError::Closed) => return,
            }
        }
    }

    /// Beats, reaps the runs of dead nodes and prunes old runs until shutdown; then leaves.
    async fn beat(self: Arc<Self>) {
        let mut tick = tokio::time::interval(BEAT);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut last_prune = tokio::time::Instant::now();
        loop {
            tokio::select! {
                () = self.shutdown.cancelled() => break,
                _ = tick.tick() => {}
            }
            if let Err(e) = self.store.heartbeat().await {
                tracing::warn!(error = %e, "the node heartbeat failed");
                continue;
            }
            self.reap().await;
            self.release_ended_holds();
            if last_prune.elapsed() >= PRUNE_EVERY {
                last_prune = tokio::time::Instant::now();
                let retention = self.agents.upgrade().map(|a| a.logs().config());
                if let Some(c) = retention
                    && let Err(e) = self.store.prune_runs(c.retention, c.max_events).await
                {
                    tracing::warn!(error = %e, "pruning old runs failed");
                }
            }
        }
        if let Err(e) = self.store.leave().await {
            tracing::warn!(error = %e, "leaving the cluster failed");
        }
    }

    /// Closes the running runs of nodes silent for [`ALIVE`] with a `run.error` after their
    /// last stored event (one node reaps each run).
    async fn reap(&self) {
        let lost = match self.store.reap_runs(ALIVE).await {
            Ok(lost) => lost,
            Err(e) => {
                tracing::warn!(error = %e, "looking for runs of dead nodes failed");
                return;
            }
        };
        for run in lost {
            tracing::warn!(run = %run.run_id, node = %run.node, "the run's node died: ending it");
            let event = lost_event(&run.run_id, &run.node, run.last_seq);
            let text = serde_json::to_string(&event).unwrap_or_default();
            if let Err(e) = self.store.close_lost_run(&run.run_id, run.last_seq, &text).await {
                tracing::warn!(run = %run.run_id, error = %e, "closing a lost run failed");
            }
            let _ = self.lost.send(run.run_id);
        }
    }

    /// The ids of the runs (event streams) this node declares lost from now on.
    pub fn lost_runs(&self) -> broadcast::Receiver<String> {
        self.lost.subscribe()
    }

    /// Drops the readers held for other nodes' clients of runs that have ended here.
    fn release_ended_holds(&self) {
        let Some(agents) = self.agents.upgrade() else { return };
        let live: std::collections::HashSet<String> = agents.live_run_ids().into_iter().collect();
        lock(&self.holds).retain(|_, (run_id, _)| live.contains(run_id));
    }
}

/// How long after its start a run may still be missing from the registry: its owner writes it
/// with its first batch of events, milliseconds after the client first hears of it.
const REGISTERING: Duration = Duration::from_secs(2);

impl Cluster {
    /// A run's registry row. A run started moments ago (its id is a UUIDv7, which carries its
    /// start time) may not be written yet: it is looked for again for up to a second.
    async fn run_row(&self, run_id: &str) -> Result<Option<store::RunRow>, store::StoreError> {
        let mut tries = 0;
        loop {
            let row = self.store.run(run_id, ALIVE).await?;
            if row.is_some() || tries == 10 || !started_within(run_id, REGISTERING) {
                return Ok(row);
            }
            tries += 1;
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// True when `run_id` (a stream id: a UUIDv7, perhaps with `.<attempt>`) was made within
/// `window`.
fn started_within(run_id: &str, window: Duration) -> bool {
    let uuid = run_id.split_once('.').map_or(run_id, |(id, _)| id);
    let Some((secs, nanos)) =
        uuid::Uuid::parse_str(uuid).ok().and_then(|u| u.get_timestamp()).map(|t| t.to_unix())
    else {
        return false;
    };
    let made = std::time::UNIX_EPOCH + Duration::new(secs, nanos);
    std::time::SystemTime::now().duration_since(made).is_ok_and(|age| age < window)
}

/// The `run.error` that closes a run whose node died.
fn lost_event(run_id: &str, node: &str, seq: u64) -> Event {
    Event {
        seq,
        body: EventBody::RunError {
            run_id: run_id.to_owned(),
            error: serde_json::json!({
                "message": format!(
                    "the server running this run (node {node}) stopped; its answer is lost: \
                     send the message again"
                ),
                "code": "node_lost",
            }),
        },
        timestamp: now_ms(),
    }
}

impl RemoteRuns for Cluster {
    fn follow(
        &self,
        run_id: String,
        after: u64,
    ) -> BoxFuture<'_, Result<Option<Subscription>, StreamError>> {
        Box::pin(self.follow_run(run_id, after))
    }

    fn queue(
        &self,
        chat_id: String,
        mode: Busy,
        message: String,
    ) -> BoxFuture<'_, Option<(String, Subscription)>> {
        Box::pin(self.queue_remote(chat_id, mode, message))
    }

    fn submit(
        &self,
        run_id: String,
        tool_id: String,
        payload: Value,
    ) -> BoxFuture<'_, Option<Result<(), SubmitError>>> {
        Box::pin(self.submit_remote(run_id, tool_id, payload))
    }

    fn chat_free(&self, chat_id: String, run_id: String) -> BoxFuture<'_, ()> {
        Box::pin(self.wait_chat_free(chat_id, run_id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_id_tells_how_recently_it_was_made() {
        let id = uuid::Uuid::now_v7().to_string();
        assert!(started_within(&id, Duration::from_secs(2)));
        assert!(started_within(&format!("{id}.2"), Duration::from_secs(2)));
        let old = uuid::Uuid::new_v7(uuid::Timestamp::from_unix(uuid::NoContext, 1_600_000_000, 0));
        assert!(!started_within(&old.to_string(), Duration::from_secs(2)));
        for junk in ["", "run-1", "not-a-uuid.3", &uuid::Uuid::new_v4().to_string()] {
            assert!(!started_within(junk, Duration::from_secs(2)), "{junk}");
        }
    }
}
