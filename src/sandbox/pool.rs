//! Pool of warm worker processes. (stub)
use std::sync::Arc;
use serde_json::Value;
use super::{ExecError, Limits, Outcome, SandboxConfig, SdkHost, protocol::JobKind};

/// Counters.
#[derive(Debug, Clone, Default)]
pub struct PoolStats {}

pub(super) struct Pool { limits: Limits }

impl Pool {
    pub async fn start(config: SandboxConfig, _host: Arc<dyn SdkHost>) -> Result<Self, ExecError> {
        Ok(Self { limits: config.limits })
    }
    pub async fn run(&self, _k: JobKind, _c: &str, _i: Option<Value>) -> Result<Outcome, ExecError> {
        Err(ExecError::new(super::ErrorKind::Runtime, "stub"))
    }
    pub fn stats(&self) -> PoolStats { PoolStats {} }
    pub fn limits(&self) -> &Limits { &self.limits }
    pub async fn shutdown(&self) {}
}
