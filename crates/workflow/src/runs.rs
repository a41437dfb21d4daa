//! Persisted run state: one record per workflow run in the store's `workflow_runs` table,
//! written (and durably committed) when the run starts, after every finished node and when it
//! ends. A record holds the definition the run started with, so a resumed run continues the
//! same graph even if the stored workflow changed since; and the finished nodes with their
//! outputs (and a condition's branch), from which the engine recomputes everything else.
//!
//! Runs a dead process left `running` are marked `interrupted` at start; nothing re-runs them
//! until someone resumes them.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::def::WorkflowDef;
use agent::events::TokenUsage;
use store::{Store, StoreError};

/// Most run records kept; at start the oldest finished ones beyond it are deleted.
pub const RUNS_KEPT: usize = 500;

/// Where a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum RunStatus {
    /// In progress in this process.
    Running,
    /// Every reachable node finished.
    Completed,
    /// A node failed or a budget ran out.
    Failed,
    /// Cancelled through the API.
    Cancelled,
    /// The process running it stopped before it ended; resumable.
    Interrupted,
}

impl RunStatus {
    /// Whether `POST .../resume` may continue a run in this state.
    pub fn resumable(self) -> bool {
        matches!(self, Self::Failed | Self::Cancelled | Self::Interrupted)
    }
}

/// A node that finished, with what it produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FinishedNode {
    /// The node.
    pub node: String,
    /// Its output.
    #[schema(value_type = Object)]
    pub output: Value,
    /// A condition's value (which edges it took).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// When it finished (unix ms).
    pub finished_at: i64,
}

/// A run's stored state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRecord {
    /// The run.
    pub run_id: String,
    /// The workflow it runs.
    pub workflow_id: String,
    /// The definition as it was when the run started.
    pub definition: WorkflowDef,
    /// The input values, defaults applied.
    pub inputs: Map<String, Value>,
    /// The API key that started it (`None`: the owner): its model calls count against it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller: Option<String>,
    /// The person it is for (`None`: the server token, or a run from before accounts: the
    /// first admin's). Only they and admins read, resume and cancel it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Where it is.
    pub status: RunStatus,
    /// Finished nodes in the order they finished.
    pub finished: Vec<FinishedNode>,
    /// Node executions so far (across attempts).
    pub steps: u32,
    /// Model tokens so far.
    pub usage: TokenUsage,
    /// 1 for the first run, +1 per resume.
    pub attempts: u32,
    /// The event stream of the current attempt (`Last-Event-ID: <streamId>:<seq>`).
    pub stream_id: String,
    /// Why it failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Value>,
    /// Unix ms.
    pub started_at: i64,
    /// Unix ms of the last change.
    pub updated_at: i64,
}

/// A run as `GET /api/workflows/runs/{runId}` shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunView {
    /// The run.
    pub run_id: String,
    /// The workflow.
    pub workflow_id: String,
    /// Where it is.
    pub status: RunStatus,
    /// Finished nodes, in the order they finished, with their outputs.
    pub finished_nodes: Vec<FinishedNode>,
    /// The outputs of the finished nodes that have no outgoing edge (the run's results).
    #[schema(value_type = Object)]
    pub outputs: Map<String, Value>,
    /// The input values.
    #[schema(value_type = Object)]
    pub inputs: Map<String, Value>,
    /// Node executions so far.
    pub steps: u32,
    /// Model tokens so far.
    #[schema(value_type = Object)]
    pub usage: TokenUsage,
    /// Attempts (1 + resumes).
    pub attempts: u32,
    /// The current attempt's event stream id.
    pub stream_id: String,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub error: Option<Value>,
    /// Unix ms.
    pub started_at: i64,
    /// Unix ms.
    pub updated_at: i64,
}

impl RunRecord {
    /// The API view.
    pub fn view(&self) -> RunView {
        let sinks: Vec<&str> = self
            .definition
            .nodes
            .iter()
            .map(|n| n.id.as_str())
            .filter(|id| !self.definition.edges.iter().any(|e| e.from == *id))
            .collect();
        let outputs = self
            .finished
            .iter()
            .filter(|f| sinks.contains(&f.node.as_str()))
            .map(|f| (f.node.clone(), f.output.clone()))
            .collect();
        RunView {
            run_id: self.run_id.clone(),
            workflow_id: self.workflow_id.clone(),
            status: self.status,
            finished_nodes: self.finished.clone(),
            outputs,
            inputs: self.inputs.clone(),
            steps: self.steps,
            usage: self.usage,
            attempts: self.attempts,
            stream_id: self.stream_id.clone(),
            error: self.error.clone(),
            started_at: self.started_at,
            updated_at: self.updated_at,
        }
    }
}

/// The run records in the store.
#[derive(Debug, Clone)]
pub struct Runs {
    store: Arc<Store>,
}

impl Runs {
    /// Over `store`.
    pub fn new(store: Arc<Store>) -> Self {
        Self { store }
    }

    /// Commits `record` durably.
    #[base::boxed]
    pub async fn save(&self, record: &RunRecord) -> Result<(), StoreError> {
        let value = serde_json::to_value(record)
            .map_err(|e| StoreError::Storage(format!("encoding workflow run: {e}")))?;
        self.store.put_workflow_run(&record.run_id, value).await
    }

    /// The record of `run_id`.
    #[base::boxed]
    pub async fn get(&self, run_id: &str) -> Result<Option<RunRecord>, StoreError> {
        match self.store.workflow_run(run_id).await? {
            None => Ok(None),
            Some(v) => serde_json::from_value(v).map(Some).map_err(|e| {
                StoreError::Damaged(format!("workflow run `{run_id}`: unreadable record: {e}"))
            }),
        }
    }

    /// At start: marks runs left `running` as `interrupted` and deletes the oldest finished
    /// runs beyond [`RUNS_KEPT`]. Returns how many were interrupted.
    #[base::boxed]
    pub async fn recover(&self) -> Result<usize, StoreError> {
        let mut records: Vec<RunRecord> = self
            .store
            .workflow_runs()
            .await?
            .into_iter()
            .filter_map(|v| serde_json::from_value(v).ok())
            .collect();
        let mut interrupted = 0;
        for r in &mut records {
            if r.status == RunStatus::Running {
                r.status = RunStatus::Interrupted;
                r.updated_at = agent::events::now_ms();
                self.save(r).await?;
                interrupted += 1;
            }
        }
        if records.len() > RUNS_KEPT {
            records.sort_by_key(|r| r.started_at);
            let excess = records.len() - RUNS_KEPT;
            for r in records.iter().filter(|r| r.status != RunStatus::Interrupted).take(excess) {
                self.store.delete_workflow_run(&r.run_id).await?;
            }
        }
        Ok(interrupted)
    }
}
