//! A subscriber's bounded send queue. A newer result for a panel replaces the queued older one
//! (moved to the back, after any patch queued meanwhile); other events are never dropped; a
//! subscriber whose queue still overflows is closed with a reason.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use axum::extract::ws::Utf8Bytes;
use tokio::sync::Notify;

/// One serialized event.
#[derive(Debug, Clone)]
pub struct OutboxItem {
    /// `(dashboard, panel)` for panel results, which may be superseded.
    key: Option<(Arc<str>, Arc<str>)>,
    /// The JSON text, as the WebSocket frame payload: reference-counted, so fanning one event
    /// out to a thousand connections copies no bytes.
    pub text: Utf8Bytes,
}

impl OutboxItem {
    /// A panel result: superseded by a newer one for the same panel.
    pub fn panel(dashboard: &str, panel: &str, text: Utf8Bytes) -> Self {
        Self { key: Some((dashboard.into(), panel.into())), text }
    }

    /// An event that is never dropped (snapshot, patch, deleted).
    pub fn control(text: Utf8Bytes) -> Self {
        Self { key: None, text }
    }

    /// True for events that are never superseded (snapshots, patches, errors).
    pub fn is_control(&self) -> bool {
        self.key.is_none()
    }
}

/// Why a queue was closed, as the WebSocket close frame that says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Closed {
    /// Close code: 1008 (policy) for a subscriber too far behind, 1001 when the server goes
    /// away.
    pub code: u16,
    /// Human-readable reason.
    pub reason: String,
}

/// Close code for a subscriber that fell too far behind.
pub const CLOSE_TOO_FAR_BEHIND: u16 = 1008;

struct State {
    items: VecDeque<OutboxItem>,
    closed: Option<Closed>,
}

/// The queue.
pub struct Outbox {
    state: Mutex<State>,
    notify: Notify,
    capacity: usize,
}

impl std::fmt::Debug for Outbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outbox").field("capacity", &self.capacity).finish_non_exhaustive()
    }
}

impl Outbox {
    /// A queue holding at most `capacity` events.
    pub fn new(capacity: usize) -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(State { items: VecDeque::new(), closed: None }),
            notify: Notify::new(),
            capacity: capacity.max(1),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues an event (never blocks).
    pub fn push(&self, item: OutboxItem) {
        let mut st = self.lock();
        if st.closed.is_some() {
            return;
        }
        if let Some(key) = &item.key
            && let Some(pos) = st.items.iter().position(|i| i.key.as_ref() == Some(key))
        {
            st.items.remove(pos);
        }
        st.items.push_back(item);
        if st.items.len() > self.capacity {
            st.items.clear();
            st.closed = Some(Closed {
                code: CLOSE_TOO_FAR_BEHIND,
                reason: format!(
                    "too far behind: more than {} undelivered events; resubscribe",
                    self.capacity
                ),
            });
        }
        drop(st);
        self.notify.notify_one();
    }

    /// Closes the queue (the connection is going away); a reason already set is kept.
    pub fn close(&self, code: u16, reason: &str) {
        self.lock().closed.get_or_insert(Closed { code, reason: reason.to_owned() });
        self.notify.notify_one();
    }

    /// Waits for events and takes all queued ones, or the reason the queue was closed.
    pub async fn next(&self) -> Result<Vec<OutboxItem>, Closed> {
        loop {
            {
                let mut st = self.lock();
                if let Some(reason) = &st.closed {
                    return Err(reason.clone());
                }
                if !st.items.is_empty() {
                    return Ok(st.items.drain(..).collect());
                }
            }
            // notify_one stores a permit when nobody waits, so a push between the check and
            // here is not lost.
            self.notify.notified().await;
        }
    }

    /// Events waiting.
    pub fn len(&self) -> usize {
        self.lock().items.len()
    }

    /// True when nothing waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn newer_panel_data_supersedes_queued_and_patches_stay() {
        let q = Outbox::new(10);
        q.push(OutboxItem::panel("d", "a", "a1".into()));
        q.push(OutboxItem::control("patch".into()));
        q.push(OutboxItem::panel("d", "b", "b1".into()));
        q.push(OutboxItem::panel("d", "a", "a2".into()));
        let got: Vec<String> = q.next().await.unwrap().iter().map(|s| s.text.to_string()).collect();
        assert_eq!(got, ["patch", "b1", "a2"]);
    }

    #[tokio::test]
    async fn overflow_closes_with_a_reason() {
        let q = Outbox::new(3);
        for i in 0..4 {
            q.push(OutboxItem::control(format!("p{i}").into()));
        }
        let err = q.next().await.unwrap_err();
        assert!(err.reason.contains("too far behind"), "{err:?}");
        assert_eq!(err.code, CLOSE_TOO_FAR_BEHIND);
    }
}
