//! A real SMTP server for the e-mail tests: `smtp_sink.py` (aiosmtpd, from PyPI) in the
//! Python that `BOARDSMITH_TEST_PYTHON` names (`scripts/test` makes it from
//! `tests/it/requirements.txt`).

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

/// What the sink asks of its clients.
#[derive(Debug, Clone, Copy)]
pub enum Mode {
    /// STARTTLS required, then AUTH as `alerts` / `s3cret`; its certificate names `localhost`.
    Starttls,
    /// No TLS, no AUTH.
    Plain,
}

/// A running sink; stopped when dropped.
pub struct SmtpSink {
    /// Its loopback port.
    pub port: u16,
    /// The CA that issued its certificate (STARTTLS mode).
    pub ca: PathBuf,
    received: Arc<Mutex<Vec<Value>>>,
    _child: tokio::process::Child,
    _dir: tempfile::TempDir,
}

impl SmtpSink {
    /// Starts one and waits until it listens.
    pub async fn start(mode: Mode) -> Self {
        let python = std::env::var("BOARDSMITH_TEST_PYTHON").unwrap_or_else(|_| {
            panic!(
                "BOARDSMITH_TEST_PYTHON is not set: run scripts/test, or point it at a Python \
                 with `pip install -r tests/it/requirements.txt` (aiosmtpd)"
            )
        });
        let dir = tempfile::tempdir().unwrap();
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/support/smtp_sink.py");
        let mode_arg = match mode {
            Mode::Starttls => "starttls",
            Mode::Plain => "plain",
        };
        let (child, first, mut lines) = super::spawn_until_line(
            tokio::process::Command::new(python)
                .arg(script)
                .arg(mode_arg)
                .arg(dir.path())
                .stdin(Stdio::piped()),
            "the SMTP sink (is aiosmtpd installed?)",
        )
        .await;
        let port = serde_json::from_str::<Value>(&first).unwrap()["port"].as_u64().unwrap();
        let received = Arc::new(Mutex::new(Vec::new()));
        let sink = received.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                sink.lock().unwrap().push(serde_json::from_str(&line).unwrap());
            }
        });
        Self {
            port: u16::try_from(port).unwrap(),
            ca: dir.path().join("ca.pem"),
            received,
            _child: child,
            _dir: dir,
        }
    }

    /// The messages received so far: `{from, to, data, tls, user}`.
    pub fn received(&self) -> Vec<Value> {
        self.received.lock().unwrap().clone()
    }

    /// The messages once there are `n` (10 s at most).
    pub async fn wait_for(&self, n: usize) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let got = self.received();
            if got.len() >= n {
                return got;
            }
            assert!(tokio::time::Instant::now() < deadline, "{} of {n} mails: {got:#?}", got.len());
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}
