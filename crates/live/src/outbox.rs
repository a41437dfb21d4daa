//! A subscriber's bounded send queue. A newer result for a panel replaces the queued older one
//! (moved to the back, after any patch queued meanwhile), and so does the snapshot answering a
//! viewer's newer variable values; other events are never dropped; a subscriber whose queue
//! still overflows is closed with a reason.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use axum::extract::ws::Utf8Bytes;
use tokio::sync::Notify;

/// What a queued event may be superseded by.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Key {
    /// A panel result of `(dashboard, panel)`.
    Panel(Arc<str>, Arc<str>),
    /// The snapshot answering `set_vars` on a dashboard.
    Vars(Arc<str>),
}

/// One serialized event.
#[derive(Debug, Clone)]
pub struct OutboxItem {
    /// Set for events a newer one of the same key replaces.
    key: Option<Key>,
    /// The JSON text, as the WebSocket frame payload: reference-counted, so fanning one event
    /// out to a thousand connections copies no bytes.
    pub text: Utf8Bytes,
}

impl OutboxItem {
    /// A panel result: superseded by a newer one for the same panel.
    pub fn panel(dashboard: &str, panel: &str, text: Utf8Bytes) -> Self {
        Self { key: Some(Key::Panel(dashboard.into(), panel.into())), text }
    }

    /// A snapshot sent because a viewer set new values: superseded by the next such snapshot
    /// of the same dashboard (only the newest values matter).
    pub fn vars_snapshot(self, dashboard: &str) -> Self {
        Self { key: Some(Key::Vars(dashboard.into())), text: self.text }
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
    /// Deliver what is queued before the close frame.
    drain: bool,
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
            state: Mutex::new(State { items: VecDeque::new(), closed: None, drain: false }),
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
            st.drain = false;
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

    /// Closes the queue (the connection is going away): queued events are dropped; a reason
    /// already set is kept.
    pub fn close(&self, code: u16, reason: &str) {
        let mut st = self.lock();
        st.closed.get_or_insert(Closed { code, reason: reason.to_owned() });
        st.drain = false;
        drop(st);
        self.notify.notify_one();
    }

    /// Closes the queue after the events already queued (an `error` explaining the close goes
    /// out first); later pushes are ignored; a reason already set is kept.
    pub fn close_after_queued(&self, code: u16, reason: &str) {
        let mut st = self.lock();
        if st.closed.is_none() {
            st.closed = Some(Closed { code, reason: reason.to_owned() });
            st.drain = true;
        }
        drop(st);
        self.notify.notify_one();
    }

    /// Waits for events and takes all queued ones, or the reason the queue was closed.
    #[base::boxed]
    pub async fn next(&self) -> Result<Vec<OutboxItem>, Closed> {
        loop {
            {
                let mut st = self.lock();
                if !st.items.is_empty() && (st.closed.is_none() || st.drain) {
                    return Ok(st.items.drain(..).collect());
                }
                if let Some(reason) = &st.closed {
                    return Err(reason.clone());
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

    #[tokio::test]
    async fn a_newer_vars_snapshot_supersedes_the_queued_one_and_nothing_else() {
        let q = Outbox::new(10);
        q.push(OutboxItem::control("s1".into()).vars_snapshot("d"));
        q.push(OutboxItem::control("sub".into()));
        q.push(OutboxItem::control("e1".into()).vars_snapshot("e"));
        q.push(OutboxItem::control("s2".into()).vars_snapshot("d"));
        let got: Vec<String> = q.next().await.unwrap().iter().map(|s| s.text.to_string()).collect();
        assert_eq!(got, ["sub", "e1", "s2"]);
    }

    #[tokio::test]
    async fn closing_after_queued_delivers_them_first_and_takes_nothing_more() {
        let q = Outbox::new(10);
        q.push(OutboxItem::control("error".into()));
        q.close_after_queued(1008, "rate");
        q.push(OutboxItem::control("late".into()));
        let got: Vec<String> = q.next().await.unwrap().iter().map(|s| s.text.to_string()).collect();
        assert_eq!(got, ["error"]);
        assert_eq!(q.next().await.unwrap_err().code, 1008);
        // A plain close drops what is queued.
        let q = Outbox::new(10);
        q.push(OutboxItem::control("dropped".into()));
        q.close(1001, "bye");
        assert_eq!(q.next().await.unwrap_err().code, 1001);
    }
}
