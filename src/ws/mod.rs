//! The WebSocket endpoint `GET /ws`: client messages `subscribe`, `unsubscribe`, `refresh`,
//! `set_vars`; server messages are the `live` events, plus `error` for a bad client message.
//!
//! Each connection has one [`Outbox`] (bounded, coalescing) drained by a writer task, so a slow
//! client never delays the others; a client too far behind is closed with the reason.

use std::collections::HashSet;
use std::sync::Arc;

use axum::extract::State;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::response::Response;
use futures::{SinkExt, StreamExt};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::app::App;
use crate::live::{Outbox, OutboxItem};

/// Undelivered events per connection before it is cut off.
pub const OUTBOX_CAPACITY: usize = 512;
/// Largest client message accepted.
const MAX_MESSAGE: usize = 64 * 1024;
/// How long a connection the server closed waits for the client's close frame before the TCP
/// connection is dropped (dropping at once, with client bytes unread, would reset the
/// connection and could destroy the close frame and its reason in flight).
const CLOSE_GRACE: std::time::Duration = std::time::Duration::from_secs(5);
/// Close code when the server shuts down.
const CLOSE_GOING_AWAY: u16 = 1001;

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

/// Upgrades to a WebSocket connection.
pub async fn upgrade(State(app): State<Arc<App>>, ws: WebSocketUpgrade) -> Response {
    // Small buffers: tungstenite's 128 KiB defaults would cost ~256 KiB per idle connection.
    ws.max_message_size(MAX_MESSAGE)
        .read_buffer_size(4 * 1024)
        .write_buffer_size(0)
        .on_upgrade(move |socket| serve(app, socket))
}

fn error_item(message: String) -> OutboxItem {
    OutboxItem::control(json!({ "type": "error", "message": message }).to_string().into())
}

async fn serve(app: Arc<App>, socket: WebSocket) {
    let (mut sink, mut stream) = socket.split();
    let outbox = Outbox::new(OUTBOX_CAPACITY);
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
                            if sink.send(Message::Text(item.text)).await.is_err() {
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
    let mut subscribed = HashSet::new();
    let shutdown = app.shutdown_token();
    let writer_ended = loop {
        let msg = tokio::select! {
            () = shutdown.cancelled() => break false,
            // The writer ends on its own only when the queue overflowed (it sent the close
            // frame) or the socket failed.
            _ = &mut writer => break true,
            msg = stream.next() => msg,
        };
        let text = match msg {
            Some(Ok(Message::Text(t))) => t,
            Some(Ok(Message::Close(_)) | Err(_)) | None => break false,
            Some(Ok(_)) => continue,
        };
        match serde_json::from_str::<ClientMessage>(&text) {
            Ok(m) => handle(&app, &outbox, &mut subscribed, m).await,
            Err(e) => outbox.push(error_item(format!(
                "bad message: {e}; expected {{\"type\": \"subscribe\"|\"unsubscribe\"|\"refresh\"|\"set_vars\", \"dashboardId\": ...}}"
            ))),
        }
    };
    app.live.disconnect(&outbox);
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

async fn handle(
    app: &Arc<App>,
    outbox: &Arc<Outbox>,
    subscribed: &mut HashSet<String>,
    msg: ClientMessage,
) {
    match msg {
        ClientMessage::Subscribe { dashboard_id } => match app.store.get(&dashboard_id).await {
            Ok(rec) if !rec.deleted => {
                app.live.subscribe(&dashboard_id, rec.version, Arc::new(rec.state), outbox.clone());
                subscribed.insert(dashboard_id);
            }
            Ok(_) => outbox.push(error_item(format!("dashboard `{dashboard_id}` is deleted"))),
            Err(e) => outbox.push(error_item(e.to_string())),
        },
        ClientMessage::Unsubscribe { dashboard_id } => {
            app.live.unsubscribe(&dashboard_id, outbox);
            subscribed.remove(&dashboard_id);
        }
        ClientMessage::Refresh { dashboard_id, panel_id } => {
            let (rec, state) = match app.current(&dashboard_id).await {
                Ok(found) => found,
                Err(e) => return outbox.push(error_item(e.to_string())),
            };
            let panels: Vec<_> = rec
                .state
                .panels
                .iter()
                .filter(|p| panel_id.as_ref().is_none_or(|id| &p.id == id))
                .cloned()
                .collect();
            if panels.is_empty() {
                return outbox
                    .push(error_item(format!("dashboard `{dashboard_id}` has no such panel")));
            }
            let live = app.live.clone();
            tokio::spawn(async move { live.refresh_panels(&dashboard_id, &state, &panels).await });
        }
        ClientMessage::SetVars { dashboard_id, vars } => {
            let state = match app.current(&dashboard_id).await {
                Ok((_, state)) => state,
                Err(e) => return outbox.push(error_item(e.to_string())),
            };
            let live = app.live.clone();
            tokio::spawn(async move { live.set_vars(&dashboard_id, state, vars).await });
        }
    }
}
