//! NATS as the carrier of panel results (`BOARDSMITH_NATS_URL`): a refreshing node publishes
//! each result whole on one subject instead of writing it to `panel_results` and notifying,
//! so refresh data never touches the database; the other nodes take the result from the
//! message itself. Results are superseded by the next refresh, so core NATS (at most once)
//! is enough: a result missed during a reconnect costs one refresh interval, nothing more.
//! Every other notice stays on PostgreSQL, where it is sent with the write it announces.
//!
//! Knows nothing of what a result holds: a version and opaque JSON text.

use std::borrow::Cow;
use std::sync::Arc;

use futures::StreamExt as _;
use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::Notice;
use crate::StoreError;

/// The subject every node publishes results on and listens to.
const SUBJECT: &str = "boardsmith.panel-results";

/// A result on the wire.
#[derive(Debug, Serialize, Deserialize)]
struct Wire<'a> {
    #[serde(borrow)]
    node: Cow<'a, str>,
    #[serde(borrow)]
    id: Cow<'a, str>,
    #[serde(borrow)]
    panel: Cow<'a, str>,
    version: u64,
    // Owned: the run's JSON always has escapes.
    run: String,
}

/// A connection to NATS.
#[derive(Debug)]
pub(super) struct Bus {
    client: async_nats::Client,
    node: Arc<str>,
}

impl Bus {
    /// Connects and starts turning other nodes' results into [`Notice::PanelResult`]s with
    /// their data, until `stop`.
    pub(super) async fn connect(
        url: &str,
        node: Arc<str>,
        out: broadcast::Sender<Notice>,
        stop: CancellationToken,
    ) -> Result<Self, StoreError> {
        let client = async_nats::ConnectOptions::new()
            .name(format!("boardsmith node {node}"))
            .retry_on_initial_connect()
            .connect(url)
            .await
            .map_err(|e| StoreError::Storage(format!("connect to NATS at {url}: {e}")))?;
        let mut results = client
            .subscribe(SUBJECT)
            .await
            .map_err(|e| StoreError::Storage(format!("subscribe to {SUBJECT}: {e}")))?;
        let me = node.clone();
        tokio::spawn(async move {
            loop {
                let message = tokio::select! {
                    () = stop.cancelled() => return,
                    m = results.next() => m,
                };
                let Some(message) = message else { return };
                if let Some(notice) = parse(&message.payload, &me) {
                    let _ = out.send(notice);
                }
            }
        });
        Ok(Self { client, node })
    }

    /// Publishes a panel's new result to the other nodes.
    pub(super) async fn publish(
        &self,
        id: &str,
        panel: &str,
        version: u64,
        run: &str,
    ) -> Result<(), StoreError> {
        let wire = Wire {
            node: Cow::Borrowed(&self.node),
            id: Cow::Borrowed(id),
            panel: Cow::Borrowed(panel),
            version,
            run: run.to_owned(),
        };
        let payload = serde_json::to_vec(&wire).map_err(|e| StoreError::Storage(e.to_string()))?;
        self.client
            .publish(SUBJECT, payload.into())
            .await
            .map_err(|e| StoreError::Storage(format!("publish a result on NATS: {e}")))
    }

    /// Whether the connection is up (for readiness).
    pub(super) fn connected(&self) -> bool {
        self.client.connection_state() == async_nats::connection::State::Connected
    }
}

/// The notice a message carries, unless this node sent it.
fn parse(payload: &[u8], node: &str) -> Option<Notice> {
    let w: Wire<'_> = serde_json::from_slice(payload).ok()?;
    (w.node != node).then(|| Notice::PanelResult {
        id: w.id.into_owned(),
        panel: w.panel.into_owned(),
        data: Some((w.version, w.run)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_parse_and_our_own_are_skipped() {
        let payload = br#"{"node":"b","id":"db_1","panel":"p0","version":3,"run":"{\"x\":1}"}"#;
        assert_eq!(
            parse(payload, "a"),
            Some(Notice::PanelResult {
                id: "db_1".into(),
                panel: "p0".into(),
                data: Some((3, r#"{"x":1}"#.into()))
            })
        );
        assert_eq!(parse(payload, "b"), None);
        assert_eq!(parse(b"{}", "a"), None);
        assert_eq!(parse(b"junk", "a"), None);
    }
}
