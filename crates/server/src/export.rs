//! Dashboards leaving the screen: `GET /api/dashboards/{id}/export` (the JSON export document,
//! `dashboard::export::Export`), `POST /api/dashboards/import` (that document made a new
//! dashboard; the round trip is exact), and `GET /api/dashboards/{id}/panels/{panelId}/csv` (a
//! panel's latest data as CSV, with where it came from in the headers).

use std::sync::Arc;

use axum::Extension;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use utoipa::OpenApi;

use super::envelope::{Envelope, ErrorBody};
use super::routes::{Routes, get, post};
use super::{ApiError, created, may, ok, parse_body, rest};
use access::keys::Scope;
use access::principal::Principal;
use app::App;
use dashboard::export::{Export, csv};
use dashboard::validate::parse_state;
use dashboards::sharing::Need;

#[derive(OpenApi)]
#[openapi(paths(export, import, panel_csv))]
pub(crate) struct Doc;

/// The routes of this module.
pub fn routes() -> Routes<Arc<App>> {
    Routes::new()
        .route("/api/dashboards/{id}/export", get(Scope::Read, export))
        .route("/api/dashboards/import", post(Scope::Write, import))
        .route("/api/dashboards/{id}/panels/{panel}/csv", get(Scope::Read, panel_csv))
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A dashboard's current version as an export document: `{format: "boardsmith.dashboard",
/// formatVersion, exportedAt, source: {id, version}, state}`.
#[utoipa::path(
    get,
    path = "/api/dashboards/{id}/export",
    tag = "dashboards",
    params(("id" = String, Path, description = "The dashboard id (`db_…`).")),
    responses((status = 200, description = "The export document.", body = Envelope<Object>), (status = "default", response = ErrorBody))
)]
async fn export(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    may(&app, &who, &id, Need::View)?;
    let rec = app.dashboards.get(&id).await?;
    if rec.deleted {
        return Err(ApiError::Gone(format!("dashboard `{id}` is deleted")));
    }
    Ok(ok(Export::new(&id, rec.version, rec.state, now_ms())))
}

/// Makes a new dashboard (the caller's) from an export document; its first version's note
/// says where it came from.
#[utoipa::path(
    post,
    path = "/api/dashboards/import",
    tag = "dashboards",
    request_body(content = Object, description = "An export document, as `GET /api/dashboards/{id}/export` gives it."),
    responses((status = 201, description = "The new dashboard.", body = Envelope<store::DashboardRecord>), (status = "default", response = ErrorBody))
)]
async fn import(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let mut doc: serde_json::Value = parse_body(&body)?;
    // The state is checked by the dashboard rules with paths (`state.panels[2].renderer`).
    let state_value = doc.get_mut("state").map(serde_json::Value::take).unwrap_or_default();
    let invalid = |e: dashboard::InvalidState| ApiError::BadRequest {
        msg: format!("`state` is not a valid dashboard: {e}"),
        data: serde_json::to_value(&e.0).unwrap_or_default(),
    };
    let state = parse_state(&state_value).map_err(invalid)?;
    let unknown = app.alerting.unknown_channels(&state).await?;
    if !unknown.is_empty() {
        return Err(invalid(dashboard::InvalidState(unknown)));
    }
    if let serde_json::Value::Object(m) = &mut doc {
        m.insert("state".into(), serde_json::to_value(&state).unwrap_or_default());
    }
    let doc: Export = serde_json::from_value(doc)
        .map_err(|e| ApiError::bad(format!("not an export document: {e}")))?;
    doc.check().map_err(|e| ApiError::bad(e.to_string()))?;
    let note = format!("imported from {} version {}", doc.source.id, doc.source.version);
    let rec = app.dashboards.create(None, doc.state, &note, &rest(&who), Vec::new()).await?;
    app.dashboards.claim(&who, &rec.id).await?;
    Ok(created(rec))
}

/// A panel's latest data as CSV (`text/csv`, a download named after the panel). The data's
/// providers are in `X-Boardsmith-Source`, and demo data says so in `X-Boardsmith-Demo` and in
/// the file name. 503 while the panel has no data (its error says why).
#[utoipa::path(
    get,
    path = "/api/dashboards/{id}/panels/{panel}/csv",
    tag = "dashboards",
    params(
        ("id" = String, Path, description = "The dashboard id (`db_…`)."),
        ("panel" = String, Path, description = "The panel id."),
    ),
    responses(
        (status = 200, description = "The data as CSV.", content_type = "text/csv", body = String),
        (status = "default", response = ErrorBody)
    )
)]
async fn panel_csv(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    Path((id, panel)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    may(&app, &who, &id, Need::View)?;
    let results = app.dashboards.data(&id).await?;
    let Some(def) = results.state.panels.iter().find(|p| p.id == panel) else {
        return Err(ApiError::NotFound(format!("dashboard `{id}` has no panel `{panel}`")));
    };
    let slot = results.panels.get(&panel);
    let Some(text) = slot.and_then(|s| s.data.as_ref()).and_then(csv) else {
        let why = slot
            .and_then(|s| s.error.as_ref())
            .map_or_else(|| "it has no rows yet".to_owned(), |e| e.message.clone());
        return Err(ApiError::Unavailable(format!(
            "panel “{}” has no data to export: {why}",
            def.title
        )));
    };
    let provenance = slot.map(|s| s.provenance.as_slice()).unwrap_or_default();
    let mut sources: Vec<&str> = provenance.iter().map(|p| p.provider.as_str()).collect();
    sources.dedup();
    let demo = provenance.iter().any(|p| p.demo);
    let slug = base::text::slug(&def.title);
    let name = format!(
        "{}{}.csv",
        if slug.is_empty() { panel.as_str() } else { &slug },
        if demo { "-demo-data" } else { "" }
    );
    let mut response = (StatusCode::OK, text).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/csv; charset=utf-8"));
    if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{name}\"")) {
        headers.insert(header::CONTENT_DISPOSITION, v);
    }
    if let Ok(v) = HeaderValue::from_str(&sources.join(", ")) {
        headers.insert("x-boardsmith-source", v);
    }
    if demo {
        headers.insert("x-boardsmith-demo", HeaderValue::from_static("true"));
    }
    Ok(response)
}
