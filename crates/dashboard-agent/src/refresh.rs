//! `refresh_dashboard {dashboard_id}`: a backend tool for workflows (no agent file offers it to
//! a model): re-runs every panel of a dashboard with its default variable values, publishes
//! the results to the dashboard's subscribers (`live`, through `dashboards`) and returns each
//! panel's status, error and data, each panel's data capped for a model to read.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Value, json};

use super::cap::cap;
use agent::tools::{Args, BackendTool, ToolContext, ToolError};
use dashboards::Dashboards;

/// The tool's name.
pub const NAME: &str = "refresh_dashboard";

/// Tokens of data kept per panel in the result.
const PANEL_TOKENS: usize = 600;

/// The executor.
#[derive(Debug, Clone)]
pub struct RefreshDashboardTool {
    dashboards: Arc<Dashboards>,
}

impl RefreshDashboardTool {
    /// Over the app's dashboards.
    pub fn new(dashboards: Arc<Dashboards>) -> Self {
        Self { dashboards }
    }
}

impl BackendTool for RefreshDashboardTool {
    fn name(&self) -> &str {
        NAME
    }

    fn call(&self, args: Value, _ctx: ToolContext) -> BoxFuture<'static, Result<Value, ToolError>> {
        let dashboards = self.dashboards.clone();
        Box::pin(async move {
            let args = Args::new(NAME, &args)?;
            if let Some((field, _)) = args.fields().find(|(k, _)| k.as_str() != "dashboard_id") {
                return Err(args.error(format!("unknown field `{field}` (fields: dashboard_id)")));
            }
            let id = args.req_str("dashboard_id")?.to_owned();
            let results = dashboards
                .refresh(&id, None)
                .await
                .map_err(|e| ToolError::failed(NAME, e))?
                .ok_or_else(|| {
                    ToolError::failed(NAME, format!("dashboard `{id}` has no panels"))
                })?;
            let panels: Vec<Value> = results
                .state
                .panels
                .iter()
                .map(|p| {
                    let slot = results.panels.get(&p.id);
                    let mut v = json!({
                        "id": p.id,
                        "title": p.title,
                        "status": slot.map(|s| json!(s.status)).unwrap_or(json!("pending")),
                    });
                    if let Some(s) = slot {
                        if let Some(e) = &s.error {
                            v["error"] = json!(e.to_string());
                        }
                        if let Some(d) = &s.data {
                            v["data"] = cap(d, PANEL_TOKENS);
                        }
                    }
                    v
                })
                .collect();
            Ok(json!({
                "dashboardId": id,
                "title": results.state.title,
                "version": results.version,
                "panels": panels,
            }))
        })
    }
}
