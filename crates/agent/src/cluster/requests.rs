//! Requests for a run's owner: a node that gets a frontend-tool submit or a steering message
//! for a run it does not have files a request addressed to the owner (`run_requests` plus a
//! notice), and waits up to [`ANSWER_WITHIN`] for the answer. The owner applies the request to
//! its run as if the client had asked it, and answers.
//!
//! Request kinds and bodies (JSON): `submit` `{toolId, payload}` → `{ok}` or
//! `{error: "unknown_run" | "unknown_tool", message}`; `queue` `{chatId, mode, message}` →
//! `{runId, seq}` or `{ok: false}`; `attach` `{}` → `{ok}`; `detach` `{attach: <request id>}`.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::{ALIVE, ANSWER_WITHIN, Cluster, lock};
use crate::events::Subscription;
use crate::service::Busy;
use crate::tools::SubmitError;
use store::RunStatus;

/// How often a requester looks for the answer besides waiting for its notice.
const POLL: Duration = Duration::from_millis(250);

impl Cluster {
    /// Files `kind` for `node` about `run_id` and waits for the answer; `None` if none came
    /// in time (the owner may have died) or the store failed.
    async fn ask(&self, node: &str, run_id: &str, kind: &str, body: &Value) -> Option<Value> {
        let id = match self.store.request(node, run_id, kind, &body.to_string()).await {
            Ok(id) => id,
            Err(e) => {
                tracing::warn!(run = run_id, kind, error = %e, "filing a run request failed");
                return None;
            }
        };
        let (tx, mut rx) = oneshot::channel();
        lock(&self.waiting).insert(id, tx);
        let deadline = tokio::time::Instant::now() + ANSWER_WITHIN;
        let answer = loop {
            // Looked up after registering: an answer that came before is not missed.
            if let Ok(Some(answer)) = self.store.answer_of(id).await {
                break serde_json::from_str(&answer).ok();
            }
            if tokio::time::Instant::now() >= deadline {
                tracing::warn!(run = run_id, kind, node, "the run's node did not answer in time");
                break None;
            }
            tokio::select! {
                _ = &mut rx => {}
                () = tokio::time::sleep(POLL) => {}
                () = tokio::time::sleep_until(deadline) => {}
            }
        };
        lock(&self.waiting).remove(&id);
        answer
    }

    /// [`crate::service::RemoteRuns::submit`].
    pub(super) async fn submit_remote(
        &self,
        run_id: String,
        tool_id: String,
        payload: Value,
    ) -> Option<Result<(), SubmitError>> {
        let row = self.run_row(&run_id).await.ok()??;
        let mine = self.store.node_id() == Some(row.node.as_str());
        if mine || row.status != RunStatus::Running || !row.owner_alive {
            return None;
        }
        let body = json!({ "toolId": tool_id, "payload": payload });
        let answer = self.ask(&row.node, &run_id, "submit", &body).await;
        Some(match answer.as_ref().and_then(|a| a.get("error")).and_then(Value::as_str) {
            None if answer.is_some() => Ok(()),
            Some("unknown_tool") => Err(SubmitError::UnknownTool { run_id, tool_id }),
            Some("busy") => Err(SubmitError::Busy(
                answer
                    .as_ref()
                    .and_then(|a| a["message"].as_str())
                    .unwrap_or("the run cannot take the answer now; try again")
                    .to_owned(),
            )),
            _ => Err(SubmitError::UnknownRun(run_id)),
        })
    }

    /// [`crate::service::RemoteRuns::queue`].
    pub(super) async fn queue_remote(
        &self,
        chat_id: String,
        mode: Busy,
        message: String,
    ) -> Option<(String, Subscription)> {
        let row = self.store.running_run_of_chat(&chat_id, ALIVE, None).await.ok()??;
        let body = json!({ "chatId": chat_id, "mode": mode.as_str(), "message": message });
        let answer = self.ask(&row.node, &row.run_id, "queue", &body).await?;
        let run_id = answer.get("runId")?.as_str()?.to_owned();
        let seq = answer.get("seq")?.as_u64()?;
        let events = self.follow_run(run_id.clone(), seq).await.ok()??;
        Some((run_id, events))
    }

    /// [`crate::service::RemoteRuns::chat_free`]: the runs of a chat are serialized on
    /// each node by its chat lock; across nodes, a run waits for the chat's earlier runs on
    /// live nodes to end (they append to chat memory before they end), so it replays them.
    /// Earlier by run id (time-ordered), so two nodes starting runs of one chat at once never
    /// wait for each other.
    pub(super) async fn wait_chat_free(&self, chat_id: String, run_id: String) {
        loop {
            match self.store.running_run_of_chat(&chat_id, ALIVE, Some(&run_id)).await {
                Ok(Some(_)) => {}
                Ok(None) => return,
                Err(e) => {
                    tracing::warn!(chat = %chat_id, error = %e, "checking the chat's runs on other nodes failed");
                    return;
                }
            }
            tokio::select! {
                () = self.shutdown.cancelled() => return,
                () = tokio::time::sleep(POLL) => {}
            }
        }
    }

    /// Applies a request another node filed for a run of this node, and answers it.
    pub(super) async fn serve(self: std::sync::Arc<Self>, id: i64) {
        let request = match self.store.request_for_me(id).await {
            Ok(Some(r)) => r,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(id, error = %e, "reading a run request failed");
                return;
            }
        };
        let Some(agents) = self.agents.upgrade() else { return };
        let (run_id, kind, body) = request;
        let body: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        let text = |key: &str| body.get(key).and_then(Value::as_str).unwrap_or_default();
        let answer = match kind.as_str() {
            "submit" => {
                let payload = body.get("payload").cloned().unwrap_or(Value::Null);
                match agents.submit_here(&run_id, text("toolId"), payload) {
                    Ok(()) => json!({ "ok": true }),
                    Err(e @ SubmitError::UnknownTool { .. }) => {
                        json!({ "error": "unknown_tool", "message": e.to_string() })
                    }
                    Err(SubmitError::Busy(message)) => {
                        json!({ "error": "busy", "message": message })
                    }
                    Err(e) => json!({ "error": "unknown_run", "message": e.to_string() }),
                }
            }
            "queue" => {
                let mode =
                    if text("mode") == Busy::Steer.as_str() { Busy::Steer } else { Busy::FollowUp };
                match agents.queue_here(text("chatId"), mode, text("message")) {
                    Some((run_id, seq)) => json!({ "runId": run_id, "seq": seq }),
                    None => json!({ "ok": false }),
                }
            }
            "attach" => match agents.hold(&run_id) {
                Some(hold) => {
                    lock(&self.holds).insert(id, (run_id, hold));
                    json!({ "ok": true })
                }
                None => json!({ "ok": false }),
            },
            "detach" => {
                let held = body
                    .get("attach")
                    .and_then(Value::as_i64)
                    .and_then(|a| lock(&self.holds).remove(&a));
                json!({ "ok": held.is_some() })
            }
            other => {
                json!({ "error": "unknown_request", "message": format!("unknown request `{other}`") })
            }
        };
        if let Err(e) = self.store.answer(id, &answer.to_string()).await {
            tracing::warn!(id, error = %e, "answering a run request failed");
        }
    }
}
