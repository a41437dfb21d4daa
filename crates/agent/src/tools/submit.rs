//! The frontend-submit hub: a frontend tool (`html`/`qlc`/`dqlc`) parks its run until the user
//! answers through `POST /api/submit` with the same `runId` + `toolId`, the timeout passes
//! (default 5 minutes, `AGENT_TOOLS_FRONTEND_SUBMIT_TIMEOUT_MS`) or the run is cancelled.
//!
//! The tool's result is `payload.params`, or `{}` when the payload has none (seed rule).
//! Register with [`FrontendSubmits::expect`] *before* emitting `tool.start`, so an answer that
//! arrives at once is not lost; [`FrontendSubmits::wait`] does both for callers that do not
//! care. Knows nothing of HTTP: [`SubmitError`] says "no such waiter" and the gateway answers
//! 404.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::ToolError;

/// Default wait for a user's answer.
pub const DEFAULT_SUBMIT_TIMEOUT: Duration = Duration::from_secs(300);

/// Why a submit (or a registration) was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubmitError {
    /// No tool of this run is waiting (finished, timed out, or never existed).
    #[error("run `{0}` is not waiting for a submit")]
    UnknownRun(String),
    /// The run waits, but not for this tool.
    #[error("run `{run_id}` is not waiting for tool `{tool_id}`")]
    UnknownTool {
        /// The run.
        run_id: String,
        /// The tool id given.
        tool_id: String,
    },
    /// [`FrontendSubmits::expect`] for a tool that is already waited for.
    #[error("run `{run_id}` already waits for tool `{tool_id}`")]
    AlreadyWaiting {
        /// The run.
        run_id: String,
        /// The tool id.
        tool_id: String,
    },
    /// The run cannot take the answer now (a workflow run parked on a human node has no run
    /// slot to go on with); it keeps waiting, so the same submit may be sent again.
    #[error("{0}")]
    Busy(String),
}

enum Release {
    Submitted(Value),
    Cancelled,
}

struct Slot {
    token: u64,
    tx: oneshot::Sender<Release>,
}

#[derive(Default)]
struct Inner {
    /// run id → tool id → waiter.
    waiters: Mutex<HashMap<String, HashMap<String, Slot>>>,
    next_token: AtomicU64,
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, HashMap<String, Slot>>> {
        // A panic while holding the lock cannot leave the map inconsistent (single inserts
        // and removes), so a poisoned lock is still usable.
        self.waiters.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn remove(&self, run_id: &str, tool_id: &str, token: u64) {
        let mut map = self.lock();
        if let Some(run) = map.get_mut(run_id) {
            if run.get(tool_id).is_some_and(|s| s.token == token) {
                run.remove(tool_id);
            }
            if run.is_empty() {
                map.remove(run_id);
            }
        }
    }
}

/// The hub. Clones share the waiters.
#[derive(Clone)]
pub struct FrontendSubmits {
    inner: Arc<Inner>,
    default_timeout: Duration,
}

impl std::fmt::Debug for FrontendSubmits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrontendSubmits")
            .field("waiting", &self.inner.lock().values().map(HashMap::len).sum::<usize>())
            .field("default_timeout", &self.default_timeout)
            .finish()
    }
}

impl Default for FrontendSubmits {
    fn default() -> Self {
        Self::new(DEFAULT_SUBMIT_TIMEOUT)
    }
}

impl FrontendSubmits {
    /// A hub whose waits default to `default_timeout`.
    pub fn new(default_timeout: Duration) -> Self {
        Self { inner: Arc::default(), default_timeout }
    }

    /// The default timeout from `AGENT_TOOLS_FRONTEND_SUBMIT_TIMEOUT_MS` (5 minutes if unset).
    pub fn from_env() -> Self {
        let ms = std::env::var("AGENT_TOOLS_FRONTEND_SUBMIT_TIMEOUT_MS")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|&ms| ms > 0);
        Self::new(ms.map_or(DEFAULT_SUBMIT_TIMEOUT, Duration::from_millis))
    }

    /// How long a wait lasts when the caller gives no timeout.
    pub fn default_timeout(&self) -> Duration {
        self.default_timeout
    }

    /// Registers a waiter for `run_id` + `tool_id`; from now on a submit for it is accepted.
    /// Dropping the returned handle unregisters it.
    pub fn expect(&self, run_id: &str, tool_id: &str) -> Result<PendingSubmit, SubmitError> {
        let (tx, rx) = oneshot::channel();
        let token = self.inner.next_token.fetch_add(1, Ordering::Relaxed);
        let mut map = self.inner.lock();
        let run = map.entry(run_id.to_owned()).or_default();
        if run.contains_key(tool_id) {
            return Err(SubmitError::AlreadyWaiting {
                run_id: run_id.to_owned(),
                tool_id: tool_id.to_owned(),
            });
        }
        run.insert(tool_id.to_owned(), Slot { token, tx });
        drop(map);
        Ok(PendingSubmit {
            inner: self.inner.clone(),
            run_id: run_id.to_owned(),
            tool_id: tool_id.to_owned(),
            token,
            rx: Some(rx),
            default_timeout: self.default_timeout,
        })
    }

    /// Registers and waits: the user's `payload.params` (or `{}`), [`ToolError::NoAnswer`]
    /// after `timeout` (default: [`FrontendSubmits::default_timeout`]), or
    /// [`ToolError::Cancelled`] after [`FrontendSubmits::cancel_run`]. A second wait for the
    /// same tool while one is pending is an invalid-arguments error.
    #[base::boxed]
    pub async fn wait(
        &self,
        run_id: &str,
        tool_id: &str,
        timeout: Option<Duration>,
    ) -> Result<Value, ToolError> {
        let pending = self
            .expect(run_id, tool_id)
            .map_err(|e| ToolError::invalid("frontend tool", e.to_string()))?;
        pending.wait(timeout, &CancellationToken::new()).await
    }

    /// Releases the waiter of `run_id` + `tool_id` with `payload`.
    pub fn submit(&self, run_id: &str, tool_id: &str, payload: Value) -> Result<(), SubmitError> {
        let mut map = self.inner.lock();
        let run = map.get_mut(run_id).ok_or_else(|| SubmitError::UnknownRun(run_id.to_owned()))?;
        let slot = run.remove(tool_id).ok_or_else(|| SubmitError::UnknownTool {
            run_id: run_id.to_owned(),
            tool_id: tool_id.to_owned(),
        })?;
        if run.is_empty() {
            map.remove(run_id);
        }
        drop(map);
        // The waiter may have given up between our lookup and now; that is its timeout.
        let _ = slot.tx.send(Release::Submitted(payload));
        Ok(())
    }

    /// Releases every waiter of a run with [`ToolError::Cancelled`]; returns how many.
    pub fn cancel_run(&self, run_id: &str) -> usize {
        let run = self.inner.lock().remove(run_id).unwrap_or_default();
        let n = run.len();
        for slot in run.into_values() {
            let _ = slot.tx.send(Release::Cancelled);
        }
        n
    }

    /// Whether a tool of `run_id` is waiting here.
    pub fn has_run(&self, run_id: &str) -> bool {
        self.inner.lock().contains_key(run_id)
    }

    /// Whether `run_id` + `tool_id` is waiting.
    pub fn is_waiting(&self, run_id: &str, tool_id: &str) -> bool {
        self.inner.lock().get(run_id).is_some_and(|r| r.contains_key(tool_id))
    }
}

/// A registered waiter (see [`FrontendSubmits::expect`]).
pub struct PendingSubmit {
    inner: Arc<Inner>,
    run_id: String,
    tool_id: String,
    token: u64,
    rx: Option<oneshot::Receiver<Release>>,
    default_timeout: Duration,
}

impl std::fmt::Debug for PendingSubmit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingSubmit")
            .field("run_id", &self.run_id)
            .field("tool_id", &self.tool_id)
            .finish_non_exhaustive()
    }
}

impl PendingSubmit {
    /// Waits for the submit: `payload.params` (or `{}`); [`ToolError::NoAnswer`] after
    /// `timeout` (default: the hub's); [`ToolError::Cancelled`] when `cancel` fires or the run
    /// is cancelled on the hub.
    #[base::boxed]
    pub async fn wait(
        mut self,
        timeout: Option<Duration>,
        cancel: &CancellationToken,
    ) -> Result<Value, ToolError> {
        let timeout = timeout.unwrap_or(self.default_timeout);
        let Some(rx) = self.rx.take() else { return Err(ToolError::Cancelled) };
        let release = tokio::select! {
            r = rx => r,
            () = tokio::time::sleep(timeout) => return Err(ToolError::NoAnswer { waited: timeout }),
            () = cancel.cancelled() => return Err(ToolError::Cancelled),
        };
        match release {
            Ok(Release::Submitted(payload)) => Ok(params(payload)),
            Ok(Release::Cancelled) | Err(_) => Err(ToolError::Cancelled),
        }
    }
}

impl Drop for PendingSubmit {
    fn drop(&mut self) {
        self.inner.remove(&self.run_id, &self.tool_id, self.token);
    }
}

/// `payload.params` if present and not null, else `{}`.
fn params(payload: Value) -> Value {
    match payload {
        Value::Object(mut m) => match m.remove("params") {
            Some(Value::Null) | None => json!({}),
            Some(p) => p,
        },
        _ => json!({}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn submit_releases_the_waiter_with_params() {
        let hub = FrontendSubmits::default();
        let pending = hub.expect("r1", "t1").unwrap();
        // Answered before anyone awaits: not lost.
        hub.submit("r1", "t1", json!({"params": {"ok": true}, "viewId": "v"})).unwrap();
        assert!(!hub.is_waiting("r1", "t1"));
        let v = pending.wait(None, &CancellationToken::new()).await.unwrap();
        assert_eq!(v, json!({"ok": true}));
        assert_eq!(params(json!({"other": 1})), json!({}));
        assert_eq!(params(json!({"params": null})), json!({}));
        assert_eq!(params(json!("x")), json!({}));
        assert_eq!(params(json!({"params": [1]})), json!([1]));
    }

    #[tokio::test]
    async fn unknown_ids_and_duplicates_are_errors() {
        let hub = FrontendSubmits::default();
        assert_eq!(hub.submit("r", "t", json!({})), Err(SubmitError::UnknownRun("r".into())));
        let _p = hub.expect("r", "t").unwrap();
        assert!(matches!(hub.submit("r", "x", json!({})), Err(SubmitError::UnknownTool { .. })));
        assert!(matches!(hub.expect("r", "t"), Err(SubmitError::AlreadyWaiting { .. })));
        hub.submit("r", "t", json!({})).unwrap();
        assert!(matches!(hub.submit("r", "t", json!({})), Err(SubmitError::UnknownRun(_))));
    }

    #[tokio::test]
    async fn timeout_tells_the_model_the_user_did_not_answer() {
        let hub = FrontendSubmits::new(Duration::from_millis(50));
        let err = hub.wait("r", "t", None).await.unwrap_err();
        assert_eq!(err, ToolError::NoAnswer { waited: Duration::from_millis(50) });
        assert!(!hub.is_waiting("r", "t"), "a timed-out waiter is gone");
        assert!(matches!(hub.submit("r", "t", json!({})), Err(SubmitError::UnknownRun(_))));
        let msg = ToolError::NoAnswer { waited: DEFAULT_SUBMIT_TIMEOUT }.to_string();
        assert!(msg.starts_with("the user did not answer within 5m;"), "{msg}");
    }

    #[tokio::test]
    async fn cancellation_releases_waiters() {
        let hub = FrontendSubmits::default();
        let a = hub.expect("r", "a").unwrap();
        let b = hub.expect("r", "b").unwrap();
        let token = CancellationToken::new();
        let wa = tokio::spawn(async move { a.wait(None, &CancellationToken::new()).await });
        let t2 = token.clone();
        let wb = tokio::spawn(async move { b.wait(None, &t2).await });
        tokio::task::yield_now().await;
        token.cancel();
        assert_eq!(wb.await.unwrap(), Err(ToolError::Cancelled));
        assert!(!hub.is_waiting("r", "b"));
        assert_eq!(hub.cancel_run("r"), 1);
        assert_eq!(wa.await.unwrap(), Err(ToolError::Cancelled));
        assert_eq!(hub.cancel_run("r"), 0);
    }

    #[tokio::test]
    async fn dropping_a_pending_unregisters_only_itself() {
        let hub = FrontendSubmits::default();
        let p = hub.expect("r", "t").unwrap();
        drop(p);
        assert!(!hub.is_waiting("r", "t"));
        let _again = hub.expect("r", "t").unwrap();
        assert!(hub.is_waiting("r", "t"));
    }
}
