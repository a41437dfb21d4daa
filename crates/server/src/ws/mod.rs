//! The WebSocket endpoint `GET /ws`: client messages `subscribe`, `unsubscribe`, `refresh`,
//! `set_vars`; server messages are the `live` events, `error` for a bad client message, and
//! `dashboards.changed` to every connection when any dashboard is created, saved, deleted or
//! restored (by anyone: REST, an agent, an MCP client), so dashboard lists stay current, and
//! `alert.notification {notification}` when an alert rule of a dashboard the connection may
//! see fires or resolves (recorded on this node: the one judging that dashboard).
//!
//! Each connection is one `live` [`Viewer`] (its own variable values, capped subscriptions, its
//! requested runs queued and coalesced) and has one [`Outbox`] (bounded, coalescing) drained by
//! a writer task, so a slow client never delays the others; a client too far behind is closed
//! with the reason. Bounds enforced here: the number of connections (503 on upgrade), message
//! size (close 1009) and message rate (a token bucket per connection: excess messages are
//! dropped with an `error`, a client that keeps sending over the rate is closed with 1008).
//! Never spawns a task per client message.
//!
//! A share link's visitor (`GET /api/shared/{token}/ws`, see `server::share_links`) speaks the
//! same protocol through a narrower [`Door`]: only the link's dashboard, its variables fixed
//! unless the link allows changing them, no `dashboards.changed` or alerts, operators' details taken out
//! of every event ([`link`]), and closed with 1008 once the link is revoked or expires.

mod link;

use std::sync::Arc;
use std::time::Instant;

use axum::Extension;
use axum::extract::State;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::response::{IntoResponse, Response};
use futures::{SinkExt, StreamExt};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::shares::ConnectionTag;
use access::links::ShareLink;
use access::principal::Principal;
use app::App;
use live::{Outbox, OutboxItem, Viewer, ViewerLimits};

/// Undelivered events per connection before it is cut off.
pub const OUTBOX_CAPACITY: usize = 512;
/// Largest client message accepted.
pub const MAX_MESSAGE: usize = 64 * 1024;
/// How long a connection the server closed waits for the client's close frame before the TCP
/// connection is dropped (dropping at once, with client bytes unread, would reset the
/// connection and could destroy the close frame and its reason in flight).
const CLOSE_GRACE: std::time::Duration = std::time::Duration::from_secs(5);
/// Close code when the server shuts down.
const CLOSE_GOING_AWAY: u16 = 1001;
/// Close code for a client that keeps sending faster than its rate.
pub const CLOSE_POLICY: u16 = 1008;
/// Close code for a message over [`MAX_MESSAGE`].
pub const CLOSE_TOO_BIG: u16 = 1009;

/// Messages a client sends.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ClientMessage {
    /// Start receiving a dashboard's events; a snapshot comes first.
    #[serde(rename_all = "camelCase")]
    Subscribe {
        /// Dashboard id.
        dashboard_id: String,
    },
    /// Stop receiving a dashboard's events.
    #[serde(rename_all = "camelCase")]
    Unsubscribe {
        /// Dashboard id.
        dashboard_id: String,
    },
    /// Re-run one panel or all; results arrive as `panel.data`/`panel.error`.
    #[serde(rename_all = "camelCase")]
    Refresh {
        /// Dashboard id.
        dashboard_id: String,
        /// One panel, or all when absent.
        #[serde(default)]
        panel_id: Option<String>,
    },
    /// Set variable values; the dashboard's panels re-run.
    #[serde(rename_all = "camelCase")]
    SetVars {
        /// Dashboard id.
        dashboard_id: String,
        /// Values by variable name.
        vars: Map<String, Value>,
    },
}

/// Connected viewers (for the `/metrics` gauge).
pub fn viewers(app: &App) -> usize {
    app.live.stats().viewers
}

/// Upgrades to a WebSocket connection, or answers 503 when the server holds as many
/// connections as it accepts.
///
/// The live dashboards' protocol (subscribe, refresh, set_vars; snapshots, patches, panel
/// data) is described in the README's WebSocket section: OpenAPI has no words for it.
#[utoipa::path(
    get,
    path = "/ws",
    tag = "dashboards",
    responses(
        (status = 101, description = "Switching protocols: the WebSocket. Client messages \
            `{type: subscribe|unsubscribe|refresh|set_vars, dashboardId, ...}`; server events \
            `dashboard.snapshot`, `dashboard.patch`, `panel.data`, `panel.error`, \
            `dashboard.deleted`, `error`."),
        (status = "default", response = crate::envelope::ErrorBody),
    )
)]
#[base::boxed]
pub async fn upgrade(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    jar: Option<Extension<crate::guard::SessionCookie>>,
    tag: Option<Extension<ConnectionTag>>,
    ws: Result<WebSocketUpgrade, axum::extract::ws::rejection::WebSocketUpgradeRejection>,
) -> Response {
    // A browser's connection outlives no sign-out: its session is checked while open.
    let session = match (&who, jar) {
        (Principal::User(_), Some(Extension(jar))) => jar.sent,
        _ => None,
    };
    accept(app, ws, tag, Door::Credential { who, session })
}

/// Who is on the other end of a connection, and so what it may see.
pub(crate) enum Door {
    /// A credential's holder: a person (whose session is checked while the connection is
    /// open), an API key, the server token.
    Credential {
        /// Who.
        who: Principal,
        /// A person's session cookie.
        session: Option<String>,
    },
    /// A share link's visitor: its one dashboard, read-only.
    Link(ShareLink),
}

impl Door {
    /// How often the connection checks that its credential still stands (`None`: never).
    fn recheck(&self) -> Option<std::time::Duration> {
        match self {
            Self::Credential { session: Some(_), .. } => Some(SESSION_CHECK),
            Self::Credential { session: None, .. } => None,
            Self::Link(_) => Some(LINK_CHECK),
        }
    }
}

/// Upgrades to a WebSocket connection through `door`, or answers 503 when the server holds as
/// many connections as it accepts.
pub(crate) fn accept(
    app: Arc<App>,
    ws: Result<WebSocketUpgrade, axum::extract::ws::rejection::WebSocketUpgradeRejection>,
    tag: Option<Extension<ConnectionTag>>,
    door: Door,
) -> Response {
    // A plain GET (no upgrade headers) is refused in the envelope like every error, not with
    // axum's plain-text rejection.
    let ws = match ws {
        Ok(ws) => ws,
        Err(e) => {
            return crate::ApiError::bad(format!("a WebSocket upgrade is expected: {e}"))
                .into_response();
        }
    };
    let admission = match app.live.admit() {
        Ok(a) => a,
        Err(e) => return crate::ApiError::Unavailable(e.to_string()).into_response(),
    };
    // The socket stays its credential's connection while open, so one credential (a key, a
    // person, a share link) cannot hold everyone's; the server token is the operator's and is
    // not held to a share. Taken now: the HTTP task ends (and would give the connection back)
    // before the upgrade completes.
    let held = match (&door, tag) {
        (Door::Credential { who: Principal::Owner, .. }, _) | (_, None) => None,
        (_, Some(Extension(ConnectionTag(conn)))) => Some(conn.upgraded()),
    };
    // Small buffers: tungstenite's 128 KiB defaults would cost ~256 KiB per idle connection.
    // The frame limit too: a single frame is buffered whole before the message limit applies.
    ws.max_message_size(MAX_MESSAGE)
        .max_frame_size(MAX_MESSAGE)
        .read_buffer_size(4 * 1024)
        .write_buffer_size(0)
        .on_upgrade(move |socket| async move {
            serve(app, admission, socket, door).await;
            drop(held);
        })
}

/// The `dashboards.changed` message for a change (`None`: changes were missed, re-read all).
fn changed_item(change: Option<&dashboards::Change>) -> OutboxItem {
    let mut msg = json!({ "type": "dashboards.changed" });
    if let Some(c) = change {
        let (kind, version) = c.kind.wire();
        msg["dashboardId"] = json!(c.id);
        msg["change"] = json!(kind);
        if let Some(v) = version {
            msg["version"] = json!(v);
        }
    }
    OutboxItem::control(msg.to_string().into())
}

fn error_item(message: String) -> OutboxItem {
    OutboxItem::control(json!({ "type": "error", "message": message }).to_string().into())
}

/// A token bucket over client messages, plus a count of messages dropped since the client was
/// last quiet long enough to fill the bucket again.
#[derive(Debug)]
struct RateLimit {
    rate: f64,
    burst: f64,
    tokens: f64,
    last: Instant,
    dropped: u32,
}

/// What to do with a client message.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    Accept,
    /// Over the rate: drop it (`first` of a run of drops: tell the client).
    Drop {
        first: bool,
    },
    /// Still sending over the rate after a burst's worth of drops: close the connection.
    Close,
}

impl RateLimit {
    fn new(limits: &ViewerLimits, now: Instant) -> Self {
        let burst = f64::from(limits.message_burst.max(1));
        Self {
            rate: f64::from(limits.messages_per_second.max(1)),
            burst,
            tokens: burst,
            last: now,
            dropped: 0,
        }
    }

    fn check(&mut self, now: Instant) -> Verdict {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.rate).min(self.burst);
        self.last = now;
        if self.tokens >= self.burst {
            self.dropped = 0;
        }
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            return Verdict::Accept;
        }
        self.dropped += 1;
        if f64::from(self.dropped) > self.burst {
            Verdict::Close
        } else {
            Verdict::Drop { first: self.dropped == 1 }
        }
    }
}

/// True when the read failed because a message or frame exceeded [`MAX_MESSAGE`].
fn too_big(e: &axum::Error) -> bool {
    use std::error::Error as _;
    matches!(
        e.source().and_then(|s| s.downcast_ref::<tokio_tungstenite::tungstenite::Error>()),
        Some(tokio_tungstenite::tungstenite::Error::Capacity(_))
    )
}

/// How often an open connection checks that its session still stands.
const SESSION_CHECK: std::time::Duration = std::time::Duration::from_secs(10);
/// How often a share link's connection checks the link (a memory read): a revoke is felt
/// within this.
const LINK_CHECK: std::time::Duration = std::time::Duration::from_secs(2);

async fn serve(app: Arc<App>, admission: live::Admission, socket: WebSocket, mut door: Door) {
    let (mut sink, mut stream) = socket.split();
    let outbox = Outbox::new(OUTBOX_CAPACITY);
    let redacted = matches!(door, Door::Link(_));
    let mut writer = {
        let outbox = outbox.clone();
        tokio::spawn(async move {
            loop {
                match outbox.next().await {
                    Ok(batch) => {
                        let mut after_control = false;
                        for item in batch {
                            // Patches reach every subscriber before anyone's bulk panel data:
                            // let other connections send theirs before following with data.
                            if after_control && !item.is_control() {
                                tokio::task::yield_now().await;
                            }
                            after_control = item.is_control();
                            let text = if redacted {
                                link::redact(item.text.as_str()).into()
                            } else {
                                item.text
                            };
                            if sink.send(Message::Text(text)).await.is_err() {
                                return;
                            }
                        }
                    }
                    Err(closed) => {
                        // Control frames carry at most 123 bytes of reason.
                        let mut reason = closed.reason;
                        while reason.len() > 120 {
                            reason.pop();
                        }
                        let frame = CloseFrame { code: closed.code, reason: reason.into() };
                        let _ = sink.send(Message::Close(Some(frame))).await;
                        return;
                    }
                }
            }
        })
    };
    let mut viewer = app.live.viewer(admission, outbox.clone());
    let limits = app.live.limits().clone();
    let mut rate = RateLimit::new(&limits, Instant::now());
    let runs = viewer.runs();
    tokio::pin!(runs);
    // Set once the server decided to close: messages are then read and ignored until the
    // writer has sent the close frame.
    let mut closing = false;
    let shutdown = app.shutdown_token();
    let mut changes = app.dashboards.changes();
    let mut alerts = app.alerting.feed();
    let every = door.recheck();
    let mut recheck = tokio::time::interval(every.unwrap_or(SESSION_CHECK));
    recheck.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let writer_ended = loop {
        let msg = tokio::select! {
            () = shutdown.cancelled() => break false,
            _ = recheck.tick(), if every.is_some() && !closing => {
                if let Some(why) = still_open(&app, &mut door).await {
                    closing = true;
                    outbox.close(CLOSE_POLICY, &why);
                }
                continue;
            }
            change = changes.recv() => {
                match (change, &door) {
                    // A share link's visitor is told of no other dashboard.
                    (_, Door::Link(_)) => {}
                    // Only dashboards this caller may see: an id tells something.
                    (Ok(c), Door::Credential { who, .. })
                        if app.dashboards.sharing().sees(who, &c.id) =>
                    {
                        outbox.push(changed_item(Some(&c)));
                    }
                    (Ok(_), _) => {}
                    (Err(tokio::sync::broadcast::error::RecvError::Lagged(_)), _) => {
                        outbox.push(changed_item(None));
                    }
                    // The dashboards service is gone: the app is stopping.
                    (Err(tokio::sync::broadcast::error::RecvError::Closed), _) => break false,
                }
                continue;
            }
            notification = alerts.recv() => {
                match (notification, &door) {
                    (Ok(n), Door::Credential { who, .. })
                        if app.dashboards.sharing().sees(who, &n.dashboard_id) =>
                    {
                        let msg = json!({ "type": "alert.notification", "notification": *n });
                        outbox.push(OutboxItem::control(msg.to_string().into()));
                    }
                    // A missed notification is in GET /api/notifications.
                    (Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)), _) => {}
                    (Err(tokio::sync::broadcast::error::RecvError::Closed), _) => break false,
                }
                continue;
            }
            // The writer ends on its own only when the queue was closed (it sent the close
            // frame) or the socket failed.
            _ = &mut writer => break true,
            () = &mut runs => continue,
            msg = stream.next() => msg,
        };
        let text = match msg {
            Some(Ok(Message::Close(_))) | None => break false,
            Some(Err(e)) if too_big(&e) && !closing => {
                closing = true;
                outbox.close_after_queued(
                    CLOSE_TOO_BIG,
                    &format!("message too big: the limit is {MAX_MESSAGE} bytes"),
                );
                continue;
            }
            Some(Err(_)) => break false,
            _ if closing => continue,
            Some(Ok(m)) => match rate.check(Instant::now()) {
                Verdict::Accept => match m {
                    Message::Text(t) => t,
                    _ => continue,
                },
                Verdict::Drop { first } => {
                    if first {
                        outbox.push(error_item(format!(
                            "rate limit: more than {} messages/s (bursts of {}); messages are dropped until you slow down",
                            limits.messages_per_second, limits.message_burst
                        )));
                    }
                    continue;
                }
                Verdict::Close => {
                    closing = true;
                    outbox.close_after_queued(
                        CLOSE_POLICY,
                        &format!(
                            "rate limit exceeded: more than {} messages/s",
                            limits.messages_per_second
                        ),
                    );
                    continue;
                }
            },
        };
        match serde_json::from_str::<ClientMessage>(&text) {
            Ok(m) => handle(&app, &outbox, &mut viewer, m, &door).await,
            Err(e) => outbox.push(error_item(format!(
                "bad message: {e}; expected {{\"type\": \"subscribe\"|\"unsubscribe\"|\"refresh\"|\"set_vars\", \"dashboardId\": ...}}"
            ))),
        }
    };
    // Unsubscribed everywhere, its queued runs dropped, its place freed.
    drop(viewer);
    if writer_ended {
        // Wait for the client's answering close frame, ignoring anything else it sends.
        let _ = tokio::time::timeout(CLOSE_GRACE, async {
            while let Some(Ok(msg)) = stream.next().await {
                if matches!(msg, Message::Close(_)) {
                    break;
                }
            }
        })
        .await;
    } else {
        outbox.close(CLOSE_GOING_AWAY, "server closing the connection");
        let _ = writer.await;
    }
}

/// Why the connection must close now: its session ended or its link stopped working.
/// `None`: it goes on (a person's role may have changed: what they see follows it).
async fn still_open(app: &App, door: &mut Door) -> Option<String> {
    match door {
        Door::Credential { who, session: Some(cookie) } => match app.sessions.peek(cookie).await {
            Some(person) => {
                *who = Principal::User(person);
                None
            }
            None => Some("your session ended: sign in again".into()),
        },
        Door::Credential { session: None, .. } => None,
        Door::Link(link) => app.links.works(&link.id).err().map(|e| e.to_string()),
    }
}

async fn handle(
    app: &Arc<App>,
    outbox: &Arc<Outbox>,
    viewer: &mut Viewer,
    msg: ClientMessage,
    door: &Door,
) {
    let result = match (msg, door) {
        (ClientMessage::Subscribe { dashboard_id }, _) => {
            subscribe(app, viewer, &dashboard_id, door).await
        }
        (ClientMessage::Unsubscribe { dashboard_id }, _) => {
            viewer.unsubscribe(&dashboard_id);
            Ok(())
        }
        (ClientMessage::Refresh { dashboard_id, panel_id }, _) => {
            viewer.refresh(&dashboard_id, panel_id.as_deref()).map_err(|e| e.to_string())
        }
        (ClientMessage::SetVars { .. }, Door::Link(link)) if !link.allow_vars => {
            Err("this shared view's variables are fixed by its link".into())
        }
        (ClientMessage::SetVars { dashboard_id, vars }, _) => {
            viewer.set_vars(&dashboard_id, vars).map_err(|e| e.to_string())
        }
    };
    if let Err(message) = result {
        outbox.push(error_item(message));
    }
}

/// Subscribes to a dashboard the door lets through: one the caller may see, or the link's own
/// (in the link's variable values). Another is answered as missing.
async fn subscribe(app: &App, viewer: &mut Viewer, id: &str, door: &Door) -> Result<(), String> {
    match door {
        Door::Credential { who, .. } => app
            .dashboards
            .may(who, id, dashboards::sharing::Need::View)
            .map_err(|denied| denied.to_string())?,
        Door::Link(link) if link.dashboard_id != id => {
            return Err(format!("dashboard `{id}` not found"));
        }
        Door::Link(_) => {}
    }
    let rec = app.dashboards.get(id).await.map_err(|e| e.to_string())?;
    if rec.deleted {
        return Err(format!("dashboard `{id}` is deleted"));
    }
    viewer.subscribe(id, rec.version, Arc::new(rec.state)).map_err(|e| e.to_string())?;
    match door {
        Door::Link(link) if !link.vars.is_empty() => {
            viewer.set_vars(id, link.vars.clone()).map_err(|e| e.to_string())
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn limits(rate: u32, burst: u32) -> ViewerLimits {
        ViewerLimits { messages_per_second: rate, message_burst: burst, ..ViewerLimits::default() }
    }

    #[test]
    fn a_burst_passes_then_excess_is_dropped_once_reported_and_a_flood_is_closed() {
        let t0 = Instant::now();
        let mut r = RateLimit::new(&limits(10, 4), t0);
        let got: Vec<Verdict> = (0..10).map(|_| r.check(t0)).collect();
        assert_eq!(
            got,
            [
                Verdict::Accept,
                Verdict::Accept,
                Verdict::Accept,
                Verdict::Accept,
                Verdict::Drop { first: true },
                Verdict::Drop { first: false },
                Verdict::Drop { first: false },
                Verdict::Drop { first: false },
                Verdict::Close,
                Verdict::Close,
            ]
        );
    }

    #[test]
    fn a_client_that_slows_down_recovers() {
        let t0 = Instant::now();
        let mut r = RateLimit::new(&limits(10, 4), t0);
        for _ in 0..4 {
            assert_eq!(r.check(t0), Verdict::Accept);
        }
        assert_eq!(r.check(t0), Verdict::Drop { first: true });
        // 100 ms later one token is back.
        assert_eq!(r.check(t0 + Duration::from_millis(100)), Verdict::Accept);
        // Quiet long enough to fill the bucket: the drops are forgiven.
        let t1 = t0 + Duration::from_secs(1);
        for _ in 0..4 {
            assert_eq!(r.check(t1), Verdict::Accept);
        }
        assert_eq!(r.check(t1), Verdict::Drop { first: true });
    }

    #[test]
    fn a_steady_client_over_the_rate_is_closed() {
        let t0 = Instant::now();
        let mut r = RateLimit::new(&limits(10, 4), t0);
        // 20 messages/s against 10/s: every other one is dropped and the bucket never fills.
        let verdicts: Vec<Verdict> =
            (0..40).map(|i| r.check(t0 + Duration::from_millis(50 * i))).collect();
        assert!(verdicts.contains(&Verdict::Close), "{verdicts:?}");
    }
}
