//! Runs on other nodes, as the service sees them: [`RemoteRuns`] is what it asks when a run,
//! a chat's running run or a waiting frontend tool is not on this node (`agent::cluster`
//! answers through the shared store); the owner's side of those requests is here too
//! ([`AgentService::queue_here`], [`AgentService::hold`]).
//!
//! Knows nothing of how nodes talk: only what a request means for a run on this node.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;

use super::{AgentService, Busy, QueryError, Reader, Stream, lock};
use crate::events::{StreamError, Subscription, parse_event_id};
use crate::memory::{ChatLock, MemoryError};
use crate::tools::SubmitError;

/// Runs owned by other nodes.
pub trait RemoteRuns: Send + Sync + std::fmt::Debug {
    /// Follows `run_id` from another node after seq `after`: `Ok(None)` when no node has it.
    fn follow(
        &self,
        run_id: String,
        after: u64,
    ) -> BoxFuture<'_, Result<Option<Subscription>, StreamError>>;

    /// Hands `message` to the chat's run in progress on another node, if there is one that
    /// takes it: its id and a reader from the message on.
    fn queue(
        &self,
        chat_id: String,
        mode: Busy,
        message: String,
    ) -> BoxFuture<'_, Option<(String, Subscription)>>;

    /// Submits to a frontend tool waiting on another node: `None` when no node runs `run_id`.
    fn submit(
        &self,
        run_id: String,
        tool_id: String,
        payload: Value,
    ) -> BoxFuture<'_, Option<Result<(), SubmitError>>>;

    /// Resolves once no other node runs an earlier run of `chat_id` than `run_id` (runs of
    /// a chat are serialized across nodes, as a node's chat lock serializes them on it).
    fn chat_free(&self, chat_id: String, run_id: String) -> BoxFuture<'_, ()>;
}

/// Decides whether an answer may reach a waiter of `run_id` on this node: a workflow run
/// parked on a human node must first get its run slot back (`crate::workflow`).
pub trait SubmitGate: Send + Sync + std::fmt::Debug {
    /// `Ok(true)`: admitted, and something was taken that [`SubmitGate::undo`] gives back if the
    /// answer is not delivered; `Ok(false)`: admitted, nothing taken; `Err`: refused with this
    /// message (the waiter keeps waiting).
    fn admit(&self, run_id: &str) -> Result<bool, String>;

    /// The answer [`SubmitGate::admit`] took something for was not delivered.
    fn undo(&self, run_id: &str);
}

/// A reader attached on behalf of another node's client (the run is not cancelled for lack
/// of readers while it is held); dropping it detaches.
#[derive(Debug)]
pub struct RunHold(#[allow(dead_code)] Reader);

impl AgentService {
    /// Asks `remote` about runs this node does not have (set once).
    pub fn set_remote(&self, remote: Arc<dyn RemoteRuns>) {
        let _ = self.remote.set(remote);
    }

    /// Asks `gate` before an answer reaches a waiter here (set once).
    pub fn set_submit_gate(&self, gate: Arc<dyn SubmitGate>) {
        let _ = self.submit_gate.set(gate);
    }

    /// Delivers an answer to a waiter on this node, once the gate admits it.
    fn deliver(&self, run_id: &str, tool_id: &str, payload: Value) -> Result<(), SubmitError> {
        let gate = self.submit_gate.get().filter(|_| self.submits.is_waiting(run_id, tool_id));
        let took = match gate {
            Some(gate) => gate.admit(run_id).map_err(SubmitError::Busy)?,
            None => false,
        };
        let delivered = self.submits.submit(run_id, tool_id, payload);
        if delivered.is_err()
            && took
            && let Some(gate) = gate
        {
            gate.undo(run_id);
        }
        delivered
    }

    /// Resumes a run's events after a `Last-Event-ID` (`<runId>:<seq>`), on this node or,
    /// through the shared store, from the node that runs it. The reader counts as attached
    /// while the run goes on.
    #[base::boxed]
    pub async fn resume(&self, last_event_id: &str) -> Result<Stream, QueryError> {
        let events = self.resume_events(last_event_id).await?;
        let run_id = events.run_id().to_owned();
        let reader = lock(&self.live)
            .get(&run_id)
            .map(|run| Reader::attach(Arc::clone(run), self.config.disconnect_grace));
        Ok(Stream { run_id, chat_id: String::new(), events, queued: None, _reader: reader })
    }

    /// The chat run `run_id` belongs to: the running run's here, else what its `run.start`
    /// event says (in the logs, here or from the node that has them). `None`: no such run
    /// kept anywhere.
    #[base::boxed]
    pub async fn chat_of_run(&self, run_id: &str) -> Option<String> {
        if let Some(run) = lock(&self.live).get(run_id) {
            return Some(run.chat_id.clone());
        }
        let mut events = self.resume_events(&format!("{run_id}:0")).await.ok()?;
        // `run.start` is among the first events (after the request's echo), already there: a
        // short wait only guards a stalled node.
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(2);
        for _ in 0..8 {
            let next = tokio::time::timeout_at(deadline, events.next()).await.ok()?.ok()??;
            if let crate::events::EventBody::RunStart { chat_id, .. } = &next.body {
                return Some(chat_id.clone());
            }
        }
        None
    }

    /// The events of any stream in the run logs (agent or workflow run) after a
    /// `Last-Event-ID`, here or from the node that has it.
    #[base::boxed]
    pub async fn resume_events(&self, last_event_id: &str) -> Result<Subscription, QueryError> {
        match self.logs.resume(last_event_id) {
            // Unknown here, or older than what this node keeps of it: the run's node may
            // have stored it.
            Err(e @ (StreamError::UnknownRun(_) | StreamError::Evicted { .. })) => {
                let Some(remote) = self.remote.get() else { return Err(e.into()) };
                let Some((run_id, after)) = parse_event_id(last_event_id) else {
                    return Err(e.into());
                };
                match remote.follow(run_id.to_owned(), after).await? {
                    Some(events) => Ok(events),
                    None => Err(e.into()),
                }
            }
            other => Ok(other?),
        }
    }

    /// Releases the frontend tool `tool_id` of `run_id` with `payload`, on this node or the
    /// one running it.
    #[base::boxed]
    pub async fn submit(
        &self,
        run_id: &str,
        tool_id: &str,
        payload: Value,
    ) -> Result<(), SubmitError> {
        // The payload is needed again only when the waiter is elsewhere; the check is cheap.
        if !self.submits.has_run(run_id)
            && let Some(remote) = self.remote.get()
            && let Some(done) =
                remote.submit(run_id.to_owned(), tool_id.to_owned(), payload.clone()).await
        {
            return done;
        }
        self.deliver(run_id, tool_id, payload)
    }

    /// The owner's side of a forwarded submit.
    pub fn submit_here(
        &self,
        run_id: &str,
        tool_id: &str,
        payload: Value,
    ) -> Result<(), SubmitError> {
        self.deliver(run_id, tool_id, payload)
    }

    /// The owner's side of a forwarded steering message: hands it to the chat's run here, if
    /// one takes it; its id and the seq of its last event before the message.
    pub fn queue_here(&self, chat_id: &str, mode: Busy, message: &str) -> Option<(String, u64)> {
        self.queue_into_running(chat_id, mode, message).map(|stream| {
            let seq = stream.events.next_seq().saturating_sub(1);
            (stream.run_id.clone(), seq)
        })
    }

    /// Attaches a reader to `run_id` for a client reading it from another node; `None` if it
    /// is not running here.
    pub fn hold(&self, run_id: &str) -> Option<RunHold> {
        lock(&self.live)
            .get(run_id)
            .map(|run| RunHold(Reader::attach(Arc::clone(run), self.config.disconnect_grace)))
    }

    /// The chat's lock here, once no other node runs an earlier run of it.
    pub(super) async fn lock_chat_everywhere(
        &self,
        chat_id: &str,
        run_id: &str,
    ) -> Result<ChatLock, MemoryError> {
        let chat = self.memory.lock_chat(chat_id).await?;
        if let Some(remote) = self.remote.get() {
            remote.chat_free(chat_id.to_owned(), run_id.to_owned()).await;
        }
        Ok(chat)
    }

    /// Asks other nodes for the chat's running run when none here takes the message.
    pub(super) async fn queue_elsewhere(
        &self,
        chat_id: &str,
        mode: Busy,
        message: &str,
    ) -> Option<Stream> {
        let remote = self.remote.get()?;
        let (run_id, events) = remote.queue(chat_id.to_owned(), mode, message.to_owned()).await?;
        Some(Stream {
            run_id,
            chat_id: chat_id.to_owned(),
            events,
            queued: Some(mode),
            _reader: None,
        })
    }
}
