//! The notice listener: one connection of its own doing `LISTEN boardsmith`, its
//! notifications parsed into [`Notice`]s (this node's own skipped: it published them itself),
//! reconnecting with backoff. PostgreSQL does not replay what a listener missed while it was
//! away, so every reconnect is followed by [`Notice::Resync`].

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use serde::Deserialize;
use tokio::sync::{broadcast, mpsc};
use tokio_postgres::AsyncMessage;
use tokio_postgres_rustls::MakeRustlsConnect;
use tokio_util::sync::CancellationToken;

use super::{CHANNEL, Notice};
use crate::{ChangeKind, Record};

/// A notice as sent (see `Postgres::notice` and `Postgres::record_notice`).
#[derive(Debug, Deserialize)]
struct Wire {
    node: String,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    version: Option<u64>,
    #[serde(default)]
    record: Option<String>,
    #[serde(default)]
    panel: Option<String>,
    #[serde(default)]
    run: Option<String>,
    #[serde(default)]
    seq: Option<u64>,
    #[serde(default)]
    to: Option<String>,
    #[serde(default)]
    request: Option<i64>,
    #[serde(default)]
    answer: Option<i64>,
    #[serde(default)]
    kb: bool,
}

/// The notice a payload carries, unless this node sent it (or it is not one of ours).
fn parse(payload: &str, node: &str) -> Option<Notice> {
    let w: Wire = serde_json::from_str(payload).ok()?;
    if w.node == node {
        return None;
    }
    if let Some(record) = w.record {
        let kind = Record::from_key(&record)?;
        return Some(match w.id {
            Some(id) => Notice::Written { kind, id },
            None => Notice::Record(kind),
        });
    }
    if let Some(run_id) = w.run {
        return Some(Notice::RunEvents { run_id, seq: w.seq? });
    }
    if let Some(id) = w.request {
        // Requests are addressed: only the run's owner acts on one.
        return (w.to.as_deref() == Some(node)).then_some(Notice::RunRequest(id));
    }
    if let Some(id) = w.answer {
        return Some(Notice::RunAnswer(id));
    }
    if w.kb {
        return Some(Notice::Knowledge);
    }
    if let Some(panel) = w.panel {
        return Some(Notice::PanelResult { id: w.id?, panel, data: None });
    }
    let kind = match (w.kind.as_deref()?, w.version) {
        ("created", Some(v)) => ChangeKind::Created(v),
        ("saved", Some(v)) => ChangeKind::Saved(v),
        ("deleted", _) => ChangeKind::Deleted,
        ("restored", _) => ChangeKind::Restored,
        _ => return None,
    };
    Some(Notice::Dashboard { id: w.id?, kind })
}

/// Listens until `stop` fires.
pub(super) async fn run(
    config: tokio_postgres::Config,
    tls: MakeRustlsConnect,
    node: Arc<str>,
    out: broadcast::Sender<Notice>,
    stop: CancellationToken,
) {
    let mut backoff = Duration::from_millis(100);
    let mut first = true;
    loop {
        let connected = tokio::select! {
            () = stop.cancelled() => return,
            c = config.connect(tls.clone()) => c,
        };
        let (client, mut connection) = match connected {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(error = %e, "the notice listener cannot connect; retrying");
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(backoff) => {}
                }
                backoff = (backoff * 2).min(Duration::from_secs(5));
                continue;
            }
        };
        // The connection must be polled for notifications to arrive; they come out here.
        let (tx, mut payloads) = mpsc::unbounded_channel::<String>();
        let driver = tokio::spawn(async move {
            let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
            while let Some(message) = messages.next().await {
                match message {
                    Ok(AsyncMessage::Notification(n)) => {
                        if tx.send(n.payload().to_owned()).is_err() {
                            return;
                        }
                    }
                    Ok(_) => {}
                    Err(e) => {
                        tracing::warn!(error = %e, "the notice listener's connection failed");
                        return;
                    }
                }
            }
        });
        if let Err(e) = client.batch_execute(&format!("LISTEN {CHANNEL}")).await {
            tracing::warn!(error = %e, "LISTEN failed; reconnecting");
            driver.abort();
            continue;
        }
        backoff = Duration::from_millis(100);
        if !first {
            tracing::info!("the notice listener is back: resynchronising");
            let _ = out.send(Notice::Resync);
        }
        first = false;
        loop {
            let payload = tokio::select! {
                () = stop.cancelled() => { driver.abort(); return; }
                p = payloads.recv() => p,
            };
            let Some(payload) = payload else { break };
            if let Some(notice) = parse(&payload, &node) {
                // No receivers is fine: nothing follows the store yet.
                let _ = out.send(notice);
            }
        }
        drop(client);
        tracing::warn!("the notice listener lost its connection; reconnecting");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_parse_and_our_own_are_skipped() {
        let saved = r#"{"node":"b","id":"db_1","kind":"saved","version":7}"#;
        assert_eq!(
            parse(saved, "a"),
            Some(Notice::Dashboard { id: "db_1".into(), kind: ChangeKind::Saved(7) })
        );
        assert_eq!(parse(saved, "b"), None);
        assert_eq!(
            parse(r#"{"node":"b","id":"db_1","kind":"deleted","version":null}"#, "a"),
            Some(Notice::Dashboard { id: "db_1".into(), kind: ChangeKind::Deleted })
        );
        assert_eq!(
            parse(r#"{"node":"b","record":"api_key"}"#, "a"),
            Some(Notice::Record(Record::ApiKey))
        );
        assert_eq!(
            parse(r#"{"node":"b","id":"db_1","panel":"p0"}"#, "a"),
            Some(Notice::PanelResult { id: "db_1".into(), panel: "p0".into(), data: None })
        );
        assert_eq!(
            parse(r#"{"node":"b","run":"r1","seq":9}"#, "a"),
            Some(Notice::RunEvents { run_id: "r1".into(), seq: 9 })
        );
        assert_eq!(parse(r#"{"node":"b","to":"a","request":4}"#, "a"), Some(Notice::RunRequest(4)));
        assert_eq!(parse(r#"{"node":"b","to":"c","request":4}"#, "a"), None);
        assert_eq!(parse(r#"{"node":"b","answer":4}"#, "a"), Some(Notice::RunAnswer(4)));
        assert_eq!(parse(r#"{"node":"b","kb":true}"#, "a"), Some(Notice::Knowledge));
        assert_eq!(
            parse(r#"{"node":"b","record":"notification","id":"d/r//1"}"#, "a"),
            Some(Notice::Written { kind: Record::Notification, id: "d/r//1".into() })
        );
        for junk in ["", "{}", r#"{"node":"b","kind":"saved"}"#, r#"{"node":"b","record":"x"}"#] {
            assert_eq!(parse(junk, "a"), None, "{junk}");
        }
    }
}
