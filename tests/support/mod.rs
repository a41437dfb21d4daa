//! Shared helpers for the black-box tests: a real sandbox pool (worker processes of the built
//! binary) over the real SDK, plus a `test` source with controllable latency and failures.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use boardsmith::sandbox::{Limits, Sandbox, SandboxConfig, SdkHost};
use boardsmith::sdk::{Sdk, SdkConfig};
use futures::future::BoxFuture;
use serde_json::{Value, json};

/// The binary under test; its hidden `sandbox-worker` subcommand is the worker.
pub fn program() -> std::path::PathBuf {
    env!("CARGO_BIN_EXE_boardsmith").into()
}

/// A fixed "now" so builtin data is reproducible.
pub fn asof() -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339("2026-11-20T12:00:00Z")
        .unwrap()
        .with_timezone(&chrono::Utc)
}

/// The real SDK with embedded specs and a pinned clock.
pub fn sdk() -> Arc<Sdk> {
    Arc::new(Sdk::new(SdkConfig { asof: Some(asof()), ..SdkConfig::default() }).unwrap())
}

/// Host: the real SDK plus `sdk.test.sleep({ms})`, `sdk.test.echo(params)`,
/// `sdk.test.fail({message})`.
pub struct TestHost {
    pub sdk: Arc<Sdk>,
    pub test_calls: AtomicU32,
}

impl SdkHost for TestHost {
    fn catalog(&self) -> BTreeMap<String, Vec<String>> {
        let mut c = self.sdk.catalog();
        c.insert("test".into(), vec!["sleep".into(), "echo".into(), "fail".into()]);
        c
    }

    fn spec(&self) -> Value {
        SdkHost::spec(self.sdk.as_ref())
    }

    fn call(
        self: Arc<Self>,
        source: String,
        method: String,
        params: Value,
    ) -> BoxFuture<'static, Result<Value, String>> {
        if source != "test" {
            return self.sdk.clone().call(source, method, params);
        }
        self.test_calls.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            match method.as_str() {
                "sleep" => {
                    let ms = params["ms"].as_u64().unwrap_or(0);
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    Ok(json!({ "slept": ms }))
                }
                "echo" => Ok(params),
                _ => Err(params["message"].as_str().unwrap_or("test failure").to_owned()),
            }
        })
    }
}

/// A started pool and its host.
pub struct TestSandbox {
    pub sandbox: Sandbox,
    pub host: Arc<TestHost>,
}

impl std::ops::Deref for TestSandbox {
    type Target = Sandbox;
    fn deref(&self) -> &Sandbox {
        &self.sandbox
    }
}

/// Starts a pool with `workers` workers and the given limits.
pub async fn sandbox_with(workers: usize, limits: Limits) -> TestSandbox {
    let host = Arc::new(TestHost { sdk: sdk(), test_calls: AtomicU32::new(0) });
    let mut config = SandboxConfig::new(program());
    config.workers = workers;
    config.limits = limits;
    let sandbox = Sandbox::start(config, host.clone()).await.expect("sandbox starts");
    TestSandbox { sandbox, host }
}

/// Two workers, default limits.
pub async fn sandbox() -> TestSandbox {
    sandbox_with(2, Limits::default()).await
}
