//! `GET /api/usage?from=&to=&groupBy=`: model calls counted per day, API key, model and agent
//! (admin scope). Thin: parse the query, ask `app.usage`.

use std::sync::Arc;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::response::Response;
use chrono::{Days, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use serde_json::json;
use utoipa::{IntoParams, OpenApi, ToSchema};

use super::envelope::Envelope;
use super::routes::{Routes, get};
use super::{ApiError, ok};
use access::keys::Scope;
use access::usage::{GroupBy, ReportRow};
use app::App;

/// The operations of this module, for the OpenAPI document.
#[derive(OpenApi)]
#[openapi(paths(usage))]
pub(crate) struct Doc;

/// The longest range one report covers.
const MAX_DAYS: u64 = 366;

/// The routes of this module.
pub fn routes() -> Routes<Arc<App>> {
    Routes::new().route("/api/usage", get(Scope::Admin, usage))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
struct UsageQuery {
    /// First day, `YYYY-MM-DD` (UTC); default: 29 days before `to`.
    from: Option<NaiveDate>,
    /// Last day; default: today.
    to: Option<NaiveDate>,
    /// Comma-separated: `day`, `key`, `model`, `agent`; default: none (one row).
    group_by: Option<String>,
}

/// A usage report.
#[derive(Serialize, ToSchema)]
struct Report {
    /// First day (UTC).
    from: NaiveDate,
    /// Last day.
    to: NaiveDate,
    /// One row per group.
    rows: Vec<ReportRow>,
}

/// Model calls counted per day, API key, model and agent (what the providers reported).
#[utoipa::path(
    get,
    path = "/api/usage",
    tag = "keys",
    params(UsageQuery),
    responses((status = 200, description = "The report.", body = Envelope<Report>), (status = "default", response = crate::envelope::ErrorBody))
)]
async fn usage(
    State(app): State<Arc<App>>,
    q: Result<Query<UsageQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(q) = q.map_err(|e| ApiError::bad(format!("malformed query string: {e}")))?;
    let to = q.to.unwrap_or_else(|| Utc::now().date_naive());
    let from = q.from.unwrap_or_else(|| to.checked_sub_days(Days::new(29)).unwrap_or(to));
    if from > to {
        return Err(ApiError::bad("`from` is after `to`"));
    }
    if to.signed_duration_since(from).num_days() >= i64::try_from(MAX_DAYS).unwrap_or(i64::MAX) {
        return Err(ApiError::bad(format!("a report covers at most {MAX_DAYS} days")));
    }
    let mut group_by = Vec::new();
    for name in
        q.group_by.iter().flat_map(|g| g.split(',')).map(str::trim).filter(|g| !g.is_empty())
    {
        let g: GroupBy = serde_json::from_value(json!(name)).map_err(|_| {
            ApiError::bad(format!("`groupBy`: unknown `{name}`; expected day, key, model or agent"))
        })?;
        if !group_by.contains(&g) {
            group_by.push(g);
        }
    }
    let rows = app.usage.report(from, to, &group_by);
    Ok(ok(Report { from, to, rows }))
}
