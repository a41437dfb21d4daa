//! Reading a run another node owns: a follower log in this node's run logs, filled from
//! `run_events` whenever the owner announces more (and once a second regardless, which also
//! notices an owner that died), until the run has ended and every event is in, or until no
//! reader is left (the partial log is then forgotten).

use std::time::Duration;

use serde_json::json;
use tokio::sync::watch;

use super::{ALIVE, Cluster, lock};
use crate::events::{Event, Follower, StreamError, Subscription, event_id};
use store::RunStatus;

/// Events read per query.
const PAGE: usize = 500;
/// The longest a follower waits without news before it looks again.
const RECHECK: Duration = Duration::from_secs(1);
/// How long an ended run's last events may take to appear before the follower gives up.
const SETTLE: Duration = Duration::from_secs(10);

impl Cluster {
    pub(super) async fn follow_run(
        &self,
        run_id: String,
        after: u64,
    ) -> Result<Option<Subscription>, StreamError> {
        let unavailable = |e: store::StoreError| StreamError::Unavailable(e.to_string());
        let Some(row) = self.run_row(&run_id).await.map_err(unavailable)? else {
            return Ok(None);
        };
        let Some(agents) = self.agents.upgrade() else { return Ok(None) };
        if row.node == self.store.node_id().unwrap_or_default() {
            // Ours, and no longer in our logs: its events expired here.
            return Ok(None);
        }
        let logs = agents.logs();
        let follower = match logs.follow(&run_id, after) {
            Ok(f) => f,
            // Another reader here follows it already: read that log, unless this reader
            // needs events from before its start.
            Err(StreamError::DuplicateRun(_)) => match logs.resume(&event_id(&run_id, after)) {
                Err(StreamError::Evicted { .. }) => logs.follow_alone(&run_id, after),
                other => return other.map(Some),
            },
            Err(e) => return Err(e),
        };
        let events = follower.subscribe(after)?;
        let rx = lock(&self.followed)
            .entry(run_id.clone())
            .or_insert_with(|| watch::channel(0).0)
            .subscribe();
        // A client reading from here keeps the run from being cancelled for lack of readers.
        let attach = if row.status == RunStatus::Running && row.owner_alive {
            self.store
                .request(&row.node, &run_id, "attach", "{}")
                .await
                .ok()
                .map(|id| (row.node.clone(), id))
        } else {
            None
        };
        let Some(me) = self.me.upgrade() else { return Ok(None) };
        tokio::spawn(async move {
            let complete = me.fill(&follower, rx).await;
            {
                let mut followed = lock(&me.followed);
                if followed.get(follower.run_id()).is_some_and(|tx| tx.receiver_count() == 0) {
                    followed.remove(follower.run_id());
                }
            }
            if let Some((node, id)) = attach {
                let body = json!({ "attach": id }).to_string();
                if let Err(e) = me.store.request(&node, follower.run_id(), "detach", &body).await {
                    tracing::debug!(error = %e, "detaching from a remote run failed");
                }
            }
            if !complete && let Some(agents) = me.agents.upgrade() {
                agents.logs().forget(follower);
            }
        });
        Ok(Some(events))
    }

    /// Puts the run's stored events into `follower` until it is complete (true) or nobody
    /// reads it any more, the events cannot be read, or the node stops (false).
    async fn fill(&self, follower: &Follower, mut announced: watch::Receiver<u64>) -> bool {
        let run_id = follower.run_id().to_owned();
        let mut ended_since: Option<tokio::time::Instant> = None;
        // The last event put ends the run (`run.complete`, `run.error`, `run.cancel`).
        let mut closed = false;
        loop {
            let page = match self.store.run_events(&run_id, follower.last_seq(), PAGE).await {
                Ok(page) => page,
                Err(e) => {
                    tracing::warn!(run = %run_id, error = %e, "reading a run's events failed");
                    Vec::new()
                }
            };
            let full = page.len() == PAGE;
            for (seq, text) in page {
                let Ok(event) = serde_json::from_str::<Event>(&text) else {
                    tracing::warn!(run = %run_id, seq, "a stored run event does not parse");
                    return false;
                };
                closed = matches!(event.type_name(), "run.complete" | "run.error" | "run.cancel");
                if let Err(expected) = follower.put(event) {
                    tracing::warn!(run = %run_id, seq, expected, "a run's stored events have a gap");
                    return false;
                }
            }
            if full {
                continue;
            }
            match self.store.run(&run_id, ALIVE).await {
                Ok(None) => return false,
                Ok(Some(row)) if row.status != RunStatus::Running => {
                    if follower.last_seq() >= row.last_seq {
                        if row.status == RunStatus::Lost && !closed {
                            // The client saw events its dead node never stored, past the
                            // stored close: it still gets a clear end, numbered after them.
                            let end =
                                super::lost_event(&run_id, &row.node, follower.last_seq() + 1);
                            let _ = follower.put(end);
                        }
                        return true;
                    }
                    let since = *ended_since.get_or_insert_with(tokio::time::Instant::now);
                    if since.elapsed() > SETTLE {
                        tracing::warn!(run = %run_id, "a run ended without all its events stored");
                        return false;
                    }
                }
                // Its owner died: end it now rather than at the next beat.
                Ok(Some(row)) if !row.owner_alive => self.reap().await,
                Ok(Some(_)) | Err(_) => {}
            }
            if follower.readers() == 0 {
                return false;
            }
            tokio::select! {
                () = self.shutdown.cancelled() => return false,
                _ = announced.changed() => {}
                () = tokio::time::sleep(RECHECK) => {}
            }
        }
    }
}
