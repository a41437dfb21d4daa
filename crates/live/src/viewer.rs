//! A viewer: one client connection to the live layer, with its own variable values per
//! dashboard, a capped number of subscriptions, and the panel runs it asked for.
//!
//! Runs a viewer asks for wait in its queue, one entry per (dashboard, panel): asking again for
//! a panel already queued joins that entry, so any number of `refresh`/`set_vars` requests costs
//! at most one run in flight plus one follow-up per panel. [`Viewer::runs`] drains the queue at
//! most [`ViewerLimits::max_runs_in_flight`] at a time, inside the connection's own task: no
//! task is spawned per request, and one client never holds more than that many of the
//! runner's slots, whatever it sends. Knows nothing of WebSocket framing.

use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use serde_json::{Map, Value};
use tokio::sync::{Notify, OwnedSemaphorePermit};

use super::{Live, Outbox};
use dashboard::DashboardState;

/// Most requests one viewer may have queued (subscriptions × panels stays far below).
pub(super) const MAX_QUEUED: usize = 4096;

/// What each viewer (connection) may hold and ask for.
#[derive(Debug, Clone)]
pub struct ViewerLimits {
    /// Connected viewers in total (`BOARDSMITH_MAX_WEBSOCKETS`); more are refused.
    pub max_viewers: usize,
    /// Dashboards one viewer may be subscribed to at once.
    pub max_subscriptions: usize,
    /// Panel runs one viewer's requests may have in flight at once.
    pub max_runs_in_flight: usize,
    /// Client messages per second a connection may send on average (`ws` enforces it).
    pub messages_per_second: u32,
    /// Client messages a connection may send in a burst.
    pub message_burst: u32,
}

impl Default for ViewerLimits {
    fn default() -> Self {
        Self {
            max_viewers: 1024,
            max_subscriptions: 64,
            max_runs_in_flight: 2,
            messages_per_second: 32,
            message_burst: 64,
        }
    }
}

/// Why a viewer's request was refused.
#[derive(Debug, thiserror::Error)]
pub enum ViewerError {
    /// `refresh`/`set_vars` for a dashboard the viewer is not subscribed to.
    #[error("not subscribed to dashboard `{0}`: subscribe first")]
    NotSubscribed(String),
    /// `refresh` of a panel the dashboard does not have.
    #[error("dashboard `{dashboard}` has no panel `{panel}`")]
    NoSuchPanel {
        /// Dashboard id.
        dashboard: String,
        /// The panel asked for.
        panel: String,
    },
    /// A variable value the dashboard does not allow.
    #[error("{0}")]
    Invalid(String),
    /// A bound was reached (connections, subscriptions, queued runs, value size).
    #[error("{0}")]
    Limit(String),
}

/// A place among the server's viewers, taken before a connection is accepted.
#[derive(Debug)]
pub struct Admission(#[allow(dead_code)] OwnedSemaphorePermit);

/// Queued and running viewer requests, across viewers.
#[derive(Debug, Default)]
pub(super) struct Counters {
    queued: AtomicUsize,
    running: AtomicUsize,
}

impl Counters {
    pub(super) fn queued(&self) -> usize {
        self.queued.load(Ordering::Relaxed)
    }

    pub(super) fn running(&self) -> usize {
        self.running.load(Ordering::Relaxed)
    }
}

/// One queued run: a panel of a dashboard, fresh (refresh) or a recent cached result will do.
#[derive(Debug)]
pub(super) struct Request {
    pub(super) dashboard: Arc<str>,
    pub(super) panel: Arc<str>,
    pub(super) fresh: bool,
}

/// The part of a viewer the live layer keeps in its subscriber lists.
pub(super) struct Subscriber {
    pub(super) outbox: Arc<Outbox>,
    queue: Mutex<VecDeque<Request>>,
    notify: Notify,
}

impl Subscriber {
    fn queue(&self) -> std::sync::MutexGuard<'_, VecDeque<Request>> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues a run, or joins the one queued for the same panel (a fresh request makes it
    /// fresh). False when the queue is full.
    pub(super) fn enqueue(
        &self,
        counters: &Counters,
        dashboard: &Arc<str>,
        panel: &str,
        fresh: bool,
    ) -> bool {
        let mut queue = self.queue();
        if let Some(r) = queue.iter_mut().find(|r| r.dashboard == *dashboard && &*r.panel == panel)
        {
            r.fresh |= fresh;
            return true;
        }
        if queue.len() >= MAX_QUEUED {
            return false;
        }
        queue.push_back(Request { dashboard: dashboard.clone(), panel: panel.into(), fresh });
        counters.queued.fetch_add(1, Ordering::Relaxed);
        drop(queue);
        self.notify.notify_one();
        true
    }

    /// Drops queued requests of one dashboard, or all.
    pub(super) fn forget(&self, counters: &Counters, dashboard: Option<&str>) {
        let mut queue = self.queue();
        let before = queue.len();
        queue.retain(|r| dashboard.is_some_and(|d| &*r.dashboard != d));
        counters.queued.fetch_sub(before - queue.len(), Ordering::Relaxed);
    }

    /// The oldest request whose panel has no run of this viewer in flight.
    fn pop(&self, counters: &Counters, running: &HashSet<(Arc<str>, Arc<str>)>) -> Option<Request> {
        let mut queue = self.queue();
        let pos = queue
            .iter()
            .position(|r| !running.contains(&(r.dashboard.clone(), r.panel.clone())))?;
        let request = queue.remove(pos)?;
        counters.queued.fetch_sub(1, Ordering::Relaxed);
        Some(request)
    }
}

/// A connected client, as the live layer sees it. Dropping it unsubscribes it everywhere and
/// frees its place.
pub struct Viewer {
    live: Arc<Live>,
    sub: Arc<Subscriber>,
    subscriptions: HashSet<String>,
    _admission: Admission,
}

impl std::fmt::Debug for Viewer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Viewer").field("subscriptions", &self.subscriptions).finish()
    }
}

impl Live {
    /// Takes a place for a new viewer, or says the server is full.
    pub fn admit(&self) -> Result<Admission, ViewerError> {
        self.admissions.clone().try_acquire_owned().map(Admission).map_err(|_| {
            ViewerError::Limit(format!(
                "too many connections: the server accepts {} at once; try again later",
                self.limits.max_viewers
            ))
        })
    }

    /// A viewer whose events go to `outbox`.
    pub fn viewer(self: &Arc<Self>, admission: Admission, outbox: Arc<Outbox>) -> Viewer {
        Viewer {
            live: self.clone(),
            sub: Arc::new(Subscriber { outbox, queue: Mutex::default(), notify: Notify::new() }),
            subscriptions: HashSet::new(),
            _admission: admission,
        }
    }
}

impl Viewer {
    /// Subscribes to a dashboard (`version`/`state` as just read from the store); the snapshot
    /// of this viewer's view is queued first. Subscribing again resends the snapshot and keeps
    /// the values set.
    pub fn subscribe(
        &mut self,
        id: &str,
        version: u64,
        state: Arc<DashboardState>,
    ) -> Result<(), ViewerError> {
        if !self.subscriptions.contains(id) {
            // Dashboards deleted meanwhile no longer count.
            let (live, sub) = (&self.live, &self.sub);
            self.subscriptions.retain(|d| live.is_subscribed(sub, d));
            let max = self.live.limits.max_subscriptions;
            if self.subscriptions.len() >= max {
                return Err(ViewerError::Limit(format!(
                    "too many subscriptions: at most {max} dashboards per connection; unsubscribe first"
                )));
            }
        }
        self.live.subscribe(&self.sub, id, version, state);
        self.subscriptions.insert(id.to_owned());
        Ok(())
    }

    /// Stops receiving a dashboard's events; its queued runs are dropped.
    pub fn unsubscribe(&mut self, id: &str) {
        self.live.unsubscribe(&self.sub, id);
        self.subscriptions.remove(id);
    }

    /// Asks for fresh runs of one panel or all of a subscribed dashboard, with this viewer's
    /// values; the results go to every viewer of the same view.
    pub fn refresh(&self, id: &str, panel: Option<&str>) -> Result<(), ViewerError> {
        self.live.refresh(&self.sub, id, panel)
    }

    /// Sets this viewer's values on a subscribed dashboard: a snapshot of its new view follows,
    /// then results for panels that had none.
    pub fn set_vars(&self, id: &str, vars: Map<String, Value>) -> Result<(), ViewerError> {
        self.live.set_vars(&self.sub, id, vars)
    }

    /// Runs what this viewer asked for, at most `max_runs_in_flight` at a time; never returns.
    /// Poll it beside the connection's reader (it ends with the connection).
    pub fn runs(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let live = self.live.clone();
        let sub = self.sub.clone();
        async move {
            let limit = live.limits.max_runs_in_flight.max(1);
            let mut in_flight = HashSet::new();
            let mut running = FuturesUnordered::new();
            loop {
                while running.len() < limit {
                    let Some(request) = sub.pop(&live.counters, &in_flight) else { break };
                    in_flight.insert((request.dashboard.clone(), request.panel.clone()));
                    let counted = Running::new(live.clone());
                    let (live, sub) = (live.clone(), sub.clone());
                    running.push(async move {
                        let _counted = counted;
                        live.serve(&sub, &request).await;
                        (request.dashboard, request.panel)
                    });
                }
                if running.is_empty() {
                    sub.notify.notified().await;
                    continue;
                }
                tokio::select! {
                    Some(done) = running.next() => {
                        in_flight.remove(&done);
                    }
                    () = sub.notify.notified(), if running.len() < limit => {}
                }
            }
        }
    }
}

/// Counts a viewer's run as running until it ends or is dropped with its connection.
struct Running(Arc<Live>);

impl Running {
    fn new(live: Arc<Live>) -> Self {
        live.counters.running.fetch_add(1, Ordering::Relaxed);
        Self(live)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.0.counters.running.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Drop for Viewer {
    fn drop(&mut self) {
        self.live.disconnect(&self.sub);
    }
}
