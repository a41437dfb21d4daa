//! Review mode over HTTP: `GET`/`PUT /api/dashboards/{id}/review` turns a dashboard's review
//! mode on or off (its editors), and the caller's draft of a dashboard: `GET
//! /api/dashboards/{id}/draft` (with its changes and code diffs against the version it started
//! from, and each changed panel's test run), `POST …/draft/accept` and `POST …/draft/reject`,
//! whole or by panel. `dashboards::drafts` owns the rules.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Extension;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use serde::{Deserialize, Serialize};
use utoipa::{OpenApi, ToSchema};

use super::envelope::{Envelope, ErrorBody};
use super::routes::{Routes, get, post};
use super::{ApiError, may, ok, parse_body, rest};
use access::keys::Scope;
use access::principal::Principal;
use app::App;
use dashboard::diff::{ChangeEntry, changes, code_diffs};
use dashboards::drafts::{Draft, drafter};
use dashboards::sharing::Need;

#[derive(OpenApi)]
#[openapi(paths(review, set_review, draft, accept, reject))]
pub(crate) struct Doc;

/// The routes of this module.
pub fn routes() -> Routes<Arc<App>> {
    Routes::new()
        .route(
            "/api/dashboards/{id}/review",
            get(Scope::Read, review).put(Scope::Write, set_review),
        )
        .route("/api/dashboards/{id}/draft", get(Scope::Read, draft))
        .route("/api/dashboards/{id}/draft/accept", post(Scope::Write, accept))
        .route("/api/dashboards/{id}/draft/reject", post(Scope::Write, reject))
}

/// A dashboard's review mode.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct Review {
    /// The agent's changes to this dashboard are drafts for the analyst to accept.
    enabled: bool,
}

/// Whether a dashboard is in review mode, and whether the caller has a draft of it.
#[utoipa::path(
    get,
    path = "/api/dashboards/{id}/review",
    tag = "drafts",
    params(("id" = String, Path, description = "The dashboard id.")),
    responses((status = 200, description = "Its review mode.", body = Envelope<ReviewView>), (status = "default", response = ErrorBody))
)]
async fn review(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    may(&app, &who, &id, Need::View)?;
    app.dashboards.get(&id).await?;
    let drafts = app.dashboards.drafts();
    let enabled = drafts.reviewing(&id).await?;
    let has_draft = drafts.get(&id, &drafter(&who)).await?.is_some();
    Ok(ok(ReviewView { enabled, has_draft }))
}

/// A dashboard's review mode, and whether the caller has a draft of it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct ReviewView {
    /// The agent's changes to this dashboard are drafts for the analyst to accept.
    enabled: bool,
    /// The caller has a draft of it (made here, or in a chat in review mode).
    has_draft: bool,
}

/// Turns a dashboard's review mode on or off (whoever may change the dashboard). Drafts
/// already made stay until accepted or rejected.
#[utoipa::path(
    put,
    path = "/api/dashboards/{id}/review",
    tag = "drafts",
    params(("id" = String, Path, description = "The dashboard id.")),
    request_body = Review,
    responses((status = 200, description = "Its review mode now.", body = Envelope<Review>), (status = "default", response = ErrorBody))
)]
async fn set_review(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let body: Review = parse_body(&body)?;
    may(&app, &who, &id, Need::Edit)?;
    app.dashboards.get(&id).await?;
    app.dashboards.drafts().set_reviewing(&id, body.enabled).await?;
    Ok(ok(body))
}

/// A draft as shown: the draft, what it changes and the code diffs.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct DraftView {
    #[serde(flatten)]
    draft: Draft,
    /// The version published now (the draft's `baseVersion` when nobody changed it since).
    published_version: u64,
    /// What the draft changes from its base, panel by panel.
    #[schema(value_type = Vec<Object>)]
    changes: Vec<ChangeEntry>,
    /// Each panel whose code the draft changes: a unified line diff, three lines of context.
    code: BTreeMap<String, String>,
}

async fn view(app: &App, draft: Draft) -> Result<DraftView, ApiError> {
    let published_version = app.dashboards.get(&draft.dashboard_id).await?.version;
    let code = code_diffs(&draft.base, &draft.state);
    let changes = changes(&draft.base, &draft.state);
    Ok(DraftView { draft, published_version, changes, code })
}

/// What is left of a draft, as shown.
async fn rest_of(app: &App, left: Option<Draft>) -> Result<Option<DraftView>, ApiError> {
    match left {
        Some(d) => Ok(Some(view(app, d).await?)),
        None => Ok(None),
    }
}

/// The caller's draft of a dashboard (404 when they have none).
#[utoipa::path(
    get,
    path = "/api/dashboards/{id}/draft",
    tag = "drafts",
    params(("id" = String, Path, description = "The dashboard id.")),
    responses((status = 200, description = "The draft.", body = Envelope<DraftView>), (status = "default", response = ErrorBody))
)]
async fn draft(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    may(&app, &who, &id, Need::View)?;
    let draft = app
        .dashboards
        .drafts()
        .get(&id, &drafter(&who))
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("you have no draft of dashboard `{id}`")))?;
    Ok(ok(view(&app, draft).await?))
}

/// Which panels of a draft (absent: all of it).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct Pick {
    /// The panel ids to accept or reject; absent: the whole draft.
    #[serde(default)]
    panels: Option<Vec<String>>,
}

/// The panels chosen: no body, `null` and `{}` all mean the whole draft.
fn pick(body: &Bytes) -> Result<Pick, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Pick::default());
    }
    Ok(parse_body::<Option<Pick>>(body)?.unwrap_or_default())
}

/// What is left of a draft after an accept or reject.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct Outcome {
    /// The version published by an accept (absent: nothing new was published).
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<u64>,
    /// The rest of the draft; `null` when nothing is left.
    draft: Option<DraftView>,
}

/// Publishes the caller's draft, or only some of its panels, onto the current version (what
/// others changed meanwhile in other panels stays). The rest of the draft stays a draft.
#[utoipa::path(
    post,
    path = "/api/dashboards/{id}/draft/accept",
    tag = "drafts",
    params(("id" = String, Path, description = "The dashboard id.")),
    request_body = Pick,
    responses((status = 200, description = "The version published and what is left.", body = Envelope<Outcome>), (status = "default", response = ErrorBody))
)]
async fn accept(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let pick = pick(&body)?;
    may(&app, &who, &id, Need::Edit)?;
    let (saved, left) = app
        .dashboards
        .accept_draft(&id, &drafter(&who), pick.panels.as_deref(), &rest(&who))
        .await?;
    Ok(ok(Outcome { version: saved.map(|s| s.record.version), draft: rest_of(&app, left).await? }))
}

/// Drops the caller's draft, or takes some of its panels back to the published version's.
/// Nothing is published; the history stays as it was.
#[utoipa::path(
    post,
    path = "/api/dashboards/{id}/draft/reject",
    tag = "drafts",
    params(("id" = String, Path, description = "The dashboard id.")),
    request_body = Pick,
    responses((status = 200, description = "What is left of the draft.", body = Envelope<Outcome>), (status = "default", response = ErrorBody))
)]
async fn reject(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let pick = pick(&body)?;
    may(&app, &who, &id, Need::View)?;
    let left = app.dashboards.reject_draft(&id, &drafter(&who), pick.panels.as_deref()).await?;
    Ok(ok(Outcome { version: None, draft: rest_of(&app, left).await? }))
}
