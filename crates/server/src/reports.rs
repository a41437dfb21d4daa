//! Dashboards as files and on a schedule: `GET /api/dashboards/{id}/render?format=png|pdf`
//! (rendered in headless Chromium; 503 without one), `GET /api/renderer` (whether it can),
//! and `/api/reports` (scheduled reports sent to alert channels, and their runs). Everyone
//! sees only the reports of dashboards they may see. `reports` owns the rules and the work.

use std::sync::Arc;

use axum::Extension;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, OpenApi, ToSchema};

use super::envelope::{Envelope, ErrorBody};
use super::routes::{Routes, get, post};
use super::{ApiError, ApiQuery, created, may, ok, parse_body};
use access::keys::Scope;
use access::principal::Principal;
use app::App;
use dashboards::sharing::Need;
use reports::{Format, ReportError, ReportInput, ReportRun, ReportView};

#[derive(OpenApi)]
#[openapi(paths(render, renderer, list, create, get_one, update, delete, run, runs))]
pub(crate) struct Doc;

/// The routes of this module.
pub fn routes() -> Routes<Arc<App>> {
    Routes::new()
        .route("/api/dashboards/{id}/render", get(Scope::Read, render))
        .route("/api/renderer", get(Scope::Read, renderer))
        .route("/api/reports", get(Scope::Read, list).post(Scope::Write, create))
        .route(
            "/api/reports/{id}",
            get(Scope::Read, get_one).put(Scope::Write, update).delete(Scope::Write, delete),
        )
        .route("/api/reports/{id}/run", post(Scope::Write, run))
        .route("/api/reports/{id}/runs", get(Scope::Read, runs))
}

impl From<ReportError> for ApiError {
    fn from(e: ReportError) -> Self {
        match e {
            ReportError::Invalid(m) => ApiError::bad(m),
            ReportError::NotFound(m) => ApiError::NotFound(m),
            ReportError::Unavailable(m) => ApiError::Unavailable(m),
            ReportError::Render(m) => {
                ApiError::BadGateway(format!("the dashboard could not be rendered: {m}"))
            }
            ReportError::Store(s) => s.into(),
        }
    }
}

/// What to render.
#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
struct RenderQuery {
    /// `pdf` (default) or `png`.
    #[serde(default)]
    #[param(value_type = Option<String>)]
    format: Option<Format>,
}

/// The dashboard as its default view shows it now, as a PDF (A4 landscape) or a full-page
/// PNG: a download named after its title. 503 when the server has no Chromium (the message
/// says how to get one) or renders stayed busy for a minute.
#[utoipa::path(
    get,
    path = "/api/dashboards/{id}/render",
    tag = "dashboards",
    params(("id" = String, Path, description = "The dashboard id (`db_…`)."), RenderQuery),
    responses(
        (status = 200, description = "The file.", content((Vec<u8> = "application/pdf"), (Vec<u8> = "image/png"))),
        (status = "default", response = ErrorBody)
    )
)]
async fn render(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    ApiQuery(q): ApiQuery<RenderQuery>,
) -> Result<Response, ApiError> {
    may(&app, &who, &id, Need::View)?;
    let snap = app.reports.snapshot(&id, q.format.unwrap_or(Format::Pdf)).await?;
    let mut response = (StatusCode::OK, snap.bytes).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(snap.format.content_type()));
    if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{}\"", snap.filename)) {
        headers.insert(header::CONTENT_DISPOSITION, v);
    }
    Ok(response)
}

/// Whether PNG and PDF can be made here.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct Renderer {
    /// They can.
    available: bool,
    /// Why not, and how to fix it.
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

/// Whether the server can render dashboards as PNG and PDF (it needs Chromium).
#[utoipa::path(
    get,
    path = "/api/renderer",
    tag = "dashboards",
    responses((status = 200, description = "The renderer's state.", body = Envelope<Renderer>), (status = "default", response = ErrorBody))
)]
async fn renderer(State(app): State<Arc<App>>) -> Response {
    let s = app.reports.renderer();
    ok(Renderer { available: s.available, reason: s.reason })
}

/// Report `id`, if `who` may see its dashboard (else a 404, as for the dashboard).
async fn visible(app: &App, who: &Principal, id: &str) -> Result<ReportView, ApiError> {
    let r = app.reports.get(id).await?;
    may(app, who, &r.report.dashboard_id, Need::View)
        .map_err(|_| ApiError::NotFound(format!("no report `{id}`")))?;
    Ok(r)
}

/// The scheduled reports of the dashboards the caller may see, newest first.
#[utoipa::path(
    get,
    path = "/api/reports",
    tag = "reports",
    responses((status = 200, description = "The reports.", body = Envelope<Vec<ReportView>>), (status = "default", response = ErrorBody))
)]
async fn list(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
) -> Result<Response, ApiError> {
    let sharing = app.dashboards.sharing();
    let all: Vec<ReportView> = app
        .reports
        .list()
        .await?
        .into_iter()
        .filter(|r| sharing.sees(&who, &r.report.dashboard_id))
        .collect();
    Ok(ok(all))
}

/// Schedules a report: the dashboard rendered (`pdf` or `png`) at the times `cron` names in
/// `timezone`, sent to each channel of `notify` (e-mail attaches the file; a JSON webhook
/// gets it in `contentBase64`). Runs are at least `BOARDSMITH_REPORT_MIN_INTERVAL` apart.
#[utoipa::path(
    post,
    path = "/api/reports",
    tag = "reports",
    request_body = ReportInput,
    responses((status = 201, description = "The report.", body = Envelope<ReportView>), (status = "default", response = ErrorBody))
)]
async fn create(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let input: ReportInput = parse_body(&body)?;
    may(&app, &who, &input.dashboard_id, Need::View)?;
    Ok(created(app.reports.create(input, &who).await?))
}

/// One report, with its schedule in words and its next run.
#[utoipa::path(
    get,
    path = "/api/reports/{id}",
    tag = "reports",
    params(("id" = String, Path, description = "The report id (`rp_…`).")),
    responses((status = 200, description = "The report.", body = Envelope<ReportView>), (status = "default", response = ErrorBody))
)]
async fn get_one(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    Ok(ok(visible(&app, &who, &id).await?))
}

/// Replaces a report's settings.
#[utoipa::path(
    put,
    path = "/api/reports/{id}",
    tag = "reports",
    params(("id" = String, Path, description = "The report id (`rp_…`).")),
    request_body = ReportInput,
    responses((status = 200, description = "The report.", body = Envelope<ReportView>), (status = "default", response = ErrorBody))
)]
async fn update(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    visible(&app, &who, &id).await?;
    let input: ReportInput = parse_body(&body)?;
    may(&app, &who, &input.dashboard_id, Need::View)?;
    Ok(ok(app.reports.update(&id, input).await?))
}

/// Removes a report and its runs.
#[utoipa::path(
    delete,
    path = "/api/reports/{id}",
    tag = "reports",
    params(("id" = String, Path, description = "The report id (`rp_…`).")),
    responses((status = 200, description = "The removed report.", body = Envelope<ReportView>), (status = "default", response = ErrorBody))
)]
async fn delete(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    visible(&app, &who, &id).await?;
    Ok(ok(app.reports.delete(&id).await?))
}

/// Runs a report now, whatever its schedule, and answers the run; 422 when nothing was
/// delivered (the run says why), 503 without Chromium.
#[utoipa::path(
    post,
    path = "/api/reports/{id}/run",
    tag = "reports",
    params(("id" = String, Path, description = "The report id (`rp_…`).")),
    responses((status = 200, description = "The run.", body = Envelope<ReportRun>), (status = "default", response = ErrorBody))
)]
async fn run(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    visible(&app, &who, &id).await?;
    let status = app.reports.renderer();
    if !status.available {
        return Err(ApiError::Unavailable(status.reason.unwrap_or_default()));
    }
    let run = app.reports.run_now(&id).await?;
    if run.status == "failed" {
        return Err(ApiError::Unprocessable {
            msg: run.error.clone().unwrap_or_else(|| "the report was not delivered".into()),
            data: serde_json::to_value(&run).unwrap_or_default(),
        });
    }
    Ok(ok(run))
}

/// A report's latest runs (up to 20), newest first.
#[utoipa::path(
    get,
    path = "/api/reports/{id}/runs",
    tag = "reports",
    params(("id" = String, Path, description = "The report id (`rp_…`).")),
    responses((status = 200, description = "The runs.", body = Envelope<Vec<ReportRun>>), (status = "default", response = ErrorBody))
)]
async fn runs(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    visible(&app, &who, &id).await?;
    Ok(ok(app.reports.runs(&id).await?))
}
