//! The facade of runs shared between nodes (see `postgres::runs`): on the embedded store every
//! run is this process's own, so registry reads find nothing and writes are refused.

use std::time::Duration;

use super::{Engine, Store, StoreError};

/// Where a run stands in the registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunStatus {
    /// Its owner is running it.
    Running,
    /// It ended on its owner.
    Ended,
    /// Its owner stopped beating while it ran; a `run.error` closes its events.
    Lost,
}

impl RunStatus {
    /// The column value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Ended => "ended",
            Self::Lost => "lost",
        }
    }

    pub(super) fn from_db(s: &str) -> Self {
        match s {
            "running" => Self::Running,
            "lost" => Self::Lost,
            _ => Self::Ended,
        }
    }
}

/// A run as the registry knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRow {
    /// The run.
    pub run_id: String,
    /// The node that runs it.
    pub node: String,
    /// Its chat (empty for a stream that has none).
    pub chat_id: String,
    /// Where it stands.
    pub status: RunStatus,
    /// The seq of its last event once it has ended (for a running run, the last written).
    pub last_seq: u64,
    /// Its owner beat recently.
    pub owner_alive: bool,
}

/// A run's state as its owner writes it with a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunState {
    /// The run.
    pub run_id: String,
    /// Its chat.
    pub chat_id: String,
    /// `Running` or `Ended`.
    pub status: RunStatus,
    /// The seq of the last event in this or an earlier batch.
    pub last_seq: u64,
}

/// What an owner writes at once: events (run, seq, JSON) and the states of the runs they
/// belong to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunBatch {
    /// The events, in seq order per run.
    pub events: Vec<(String, u64, String)>,
    /// One state per run touched.
    pub runs: Vec<RunState>,
}

fn not_shared() -> StoreError {
    StoreError::Storage("runs are shared between nodes only on a PostgreSQL store".into())
}

impl Store {
    /// Says this node is alive (nothing to do on the embedded store).
    #[base::boxed]
    pub async fn heartbeat(&self) -> Result<(), StoreError> {
        on_shared!(self, Ok(()), p => p.heartbeat().await)
    }

    /// Forgets this node at a clean stop, so its unfinished runs are lost at once.
    #[base::boxed]
    pub async fn leave(&self) -> Result<(), StoreError> {
        on_shared!(self, Ok(()), p => p.leave().await)
    }

    /// Writes a batch of this node's run events and run states, and tells followers.
    #[base::boxed]
    pub async fn write_runs(&self, batch: &RunBatch) -> Result<(), StoreError> {
        on_shared!(self, Err(not_shared()), p => p.write_runs(batch).await)
    }

    /// A run's registry row (`alive`: how recent its owner's heartbeat must be).
    #[base::boxed]
    pub async fn run(&self, run_id: &str, alive: Duration) -> Result<Option<RunRow>, StoreError> {
        on_shared!(self, Ok(None), p => p.run(run_id, alive).await)
    }

    /// The newest run in progress on `chat_id` owned by another live node (of those whose
    /// id sorts before `before`, when given: run ids are time-ordered).
    #[base::boxed]
    pub async fn running_run_of_chat(
        &self,
        chat_id: &str,
        alive: Duration,
        before: Option<&str>,
    ) -> Result<Option<RunRow>, StoreError> {
        on_shared!(self, Ok(None), p => p.running_run_of_chat(chat_id, alive, before).await)
    }

    /// Up to `limit` stored events (seq, JSON) of a run after `after`.
    #[base::boxed]
    pub async fn run_events(
        &self,
        run_id: &str,
        after: u64,
        limit: usize,
    ) -> Result<Vec<(u64, String)>, StoreError> {
        on_shared!(self, Ok(Vec::new()), p => p.run_events(run_id, after, limit).await)
    }

    /// Marks lost the running runs of nodes silent for longer than `alive`; each row's
    /// `last_seq` is the seq reserved for its closing event ([`Store::close_lost_run`]).
    #[base::boxed]
    pub async fn reap_runs(&self, alive: Duration) -> Result<Vec<RunRow>, StoreError> {
        on_shared!(self, Ok(Vec::new()), p => p.reap_runs(alive).await)
    }

    /// Appends the closing event of a reaped run.
    #[base::boxed]
    pub async fn close_lost_run(
        &self,
        run_id: &str,
        seq: u64,
        event: &str,
    ) -> Result<(), StoreError> {
        on_shared!(self, Err(not_shared()), p => p.close_lost_run(run_id, seq, event).await)
    }

    /// Drops runs ended before `retention` and events beyond `max_events` per run.
    #[base::boxed]
    pub async fn prune_runs(
        &self,
        retention: Duration,
        max_events: usize,
    ) -> Result<(), StoreError> {
        on_shared!(self, Ok(()), p => p.prune_runs(retention, max_events).await)
    }

    /// Files a request for the node that owns `run_id`; returns its id.
    #[base::boxed]
    pub async fn request(
        &self,
        node: &str,
        run_id: &str,
        kind: &str,
        body: &str,
    ) -> Result<i64, StoreError> {
        on_shared!(self, Err(not_shared()), p => p.request(node, run_id, kind, body).await)
    }

    /// A pending request addressed to this node: (run, kind, body).
    #[base::boxed]
    pub async fn request_for_me(
        &self,
        id: i64,
    ) -> Result<Option<(String, String, String)>, StoreError> {
        on_shared!(self, Ok(None), p => p.request_for_me(id).await)
    }

    /// Answers a request addressed to this node.
    #[base::boxed]
    pub async fn answer(&self, id: i64, answer: &str) -> Result<(), StoreError> {
        on_shared!(self, Err(not_shared()), p => p.answer(id, answer).await)
    }

    /// The answer to a request this node filed, once there is one.
    #[base::boxed]
    pub async fn answer_of(&self, id: i64) -> Result<Option<String>, StoreError> {
        on_shared!(self, Ok(None), p => p.answer_of(id).await)
    }
}
