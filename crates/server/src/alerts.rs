//! `GET /api/alerts` (every alert rule's state, one per fan-out value), `GET
//! /api/notifications` (the history of transitions) and `/api/silences` (notifications held
//! back for a while), each limited to the dashboards the caller may see. `alerting` owns the
//! judging and the records.

use std::sync::Arc;

use axum::Extension;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use serde::Deserialize;
use utoipa::{IntoParams, OpenApi};

use super::envelope::{Envelope, ErrorBody};
use super::routes::{self, Routes, get};
use super::{ApiError, ApiQuery, created, may, ok, parse_body};
use access::keys::Scope;
use access::principal::Principal;
use alerting::silences::{NewSilence, Silence, SilenceError};
use alerting::{AlertView, Notification};
use app::App;
use dashboard::alerts::Status;
use dashboards::sharing::Need;

#[derive(OpenApi)]
#[openapi(paths(list, notifications, silences, silence, unsilence))]
pub(crate) struct Doc;

/// The routes of this module.
pub fn routes() -> Routes<Arc<App>> {
    Routes::new()
        .route("/api/alerts", get(Scope::Read, list))
        .route("/api/notifications", get(Scope::Read, notifications))
        .route("/api/silences", get(Scope::Read, silences).post(Scope::Write, silence))
        .route("/api/silences/{id}", routes::delete(Scope::Write, unsilence))
}

impl From<SilenceError> for ApiError {
    fn from(e: SilenceError) -> Self {
        match e {
            SilenceError::Invalid(m) => ApiError::bad(m),
            SilenceError::NotFound(_) => ApiError::NotFound(e.to_string()),
            SilenceError::Store(s) => s.into(),
        }
    }
}

/// The silences of the dashboards the caller may see, newest first (ended ones for a day).
#[utoipa::path(
    get,
    path = "/api/silences",
    tag = "alerts",
    responses((status = 200, description = "The silences.", body = Envelope<Vec<Silence>>), (status = "default", response = ErrorBody))
)]
async fn silences(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
) -> Result<Response, ApiError> {
    let sharing = app.dashboards.sharing();
    let all: Vec<Silence> = app
        .alerting
        .silences()
        .list()
        .await?
        .into_iter()
        .filter(|s| sharing.sees(&who, &s.dashboard_id))
        .collect();
    Ok(ok(all))
}

/// Holds back a dashboard's alert notifications (or one rule's, or one fan-out value's) for
/// `duration` from now: they are recorded (`muted: "silenced"`) but not sent, and channels
/// hear the state in force when the silence ends.
#[utoipa::path(
    post,
    path = "/api/silences",
    tag = "alerts",
    request_body = NewSilence,
    responses((status = 201, description = "The silence.", body = Envelope<Silence>), (status = "default", response = ErrorBody))
)]
async fn silence(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let new: NewSilence = parse_body(&body)?;
    may(&app, &who, &new.dashboard_id, Need::View)?;
    Ok(created(app.alerting.silence(new, &who).await?))
}

/// Ends a silence now (it stays listed for a day).
#[utoipa::path(
    delete,
    path = "/api/silences/{id}",
    tag = "alerts",
    params(("id" = String, Path, description = "The silence id (`si_…`).")),
    responses((status = 200, description = "The ended silence.", body = Envelope<Silence>), (status = "default", response = ErrorBody))
)]
async fn unsilence(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let s = app.alerting.silences().get(&id).await?;
    may(&app, &who, &s.dashboard_id, Need::View)
        .map_err(|_| ApiError::NotFound(format!("no silence `{id}`")))?;
    Ok(ok(app.alerting.silences().end(&id).await?))
}

/// Most notifications one request returns.
const MAX_LIMIT: usize = 500;

/// Which alerts.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
struct AlertsQuery {
    /// Only this dashboard's rules.
    #[serde(default, rename = "dashboardId")]
    dashboard_id: Option<String>,
    /// Only rules in this status: `ok`, `pending` or `firing`.
    #[serde(default)]
    #[param(value_type = Option<String>)]
    status: Option<Status>,
}

/// Every alert rule's state on the dashboards the caller may see (one entry per fan-out value),
/// dashboards in title order.
#[utoipa::path(
    get,
    path = "/api/alerts",
    tag = "alerts",
    params(AlertsQuery),
    responses((status = 200, description = "The rules' states.", body = Envelope<Vec<AlertView>>), (status = "default", response = ErrorBody))
)]
async fn list(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    ApiQuery(q): ApiQuery<AlertsQuery>,
) -> Result<Response, ApiError> {
    let views: Vec<AlertView> = app
        .alerting
        .list()
        .await?
        .into_iter()
        .filter(|a| q.dashboard_id.as_ref().is_none_or(|d| *d == a.dashboard_id))
        .filter(|a| q.status.is_none_or(|s| s == a.status))
        .filter(|a| app.dashboards.may(&who, &a.dashboard_id, Need::View).is_ok())
        .collect();
    Ok(ok(views))
}

/// How many notifications.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
struct NotificationsQuery {
    /// At most this many, newest first (1..=500, default 100).
    #[serde(default)]
    limit: Option<usize>,
}

/// Alert transitions (firing, resolved) on the dashboards the caller may see, newest first.
#[utoipa::path(
    get,
    path = "/api/notifications",
    tag = "alerts",
    params(NotificationsQuery),
    responses((status = 200, description = "The notifications.", body = Envelope<Vec<Notification>>), (status = "default", response = ErrorBody))
)]
async fn notifications(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    ApiQuery(q): ApiQuery<NotificationsQuery>,
) -> Result<Response, ApiError> {
    let limit = q.limit.unwrap_or(100);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(ApiError::bad(format!("limit must be 1..={MAX_LIMIT}, got {limit}")));
    }
    // Filtered before the limit, so hidden dashboards do not eat it.
    let all = app.alerting.notifications(usize::MAX).await?;
    let seen: Vec<Notification> = all
        .into_iter()
        .filter(|n| app.dashboards.may(&who, &n.dashboard_id, Need::View).is_ok())
        .take(limit)
        .collect();
    Ok(ok(seen))
}
