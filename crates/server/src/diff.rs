//! `GET /api/dashboards/{id}/diff?from=&to=`: two versions of a dashboard compared — what
//! changed, panel by panel (`dashboard::diff::changes`: added, removed, moved, resized,
//! retitled, reconfigured), and each changed panel's whole code as a unified line diff.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Extension;
use axum::extract::{Path, State};
use axum::response::Response;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, OpenApi, ToSchema};

use super::envelope::{Envelope, ErrorBody};
use super::routes::{Routes, get};
use super::{ApiError, ApiQuery, may, ok};
use access::keys::Scope;
use access::principal::Principal;
use app::App;
use dashboard::diff::{ChangeEntry, changes, code_diffs};
use dashboards::sharing::Need;

#[derive(OpenApi)]
#[openapi(paths(diff))]
pub(crate) struct Doc;

/// The routes of this module.
pub fn routes() -> Routes<Arc<App>> {
    Routes::new().route("/api/dashboards/{id}/diff", get(Scope::Read, diff))
}

/// The two versions to compare.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
struct DiffQuery {
    /// The older version.
    from: u64,
    /// The newer version.
    to: u64,
}

/// Two versions compared.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct VersionDiff {
    /// The version compared from.
    from: u64,
    /// The version compared to.
    to: u64,
    /// What changed, keyed by panel (a modified panel's code diff in `detail` is cut at 40
    /// lines; `code` has it whole).
    #[schema(value_type = Vec<Object>)]
    changes: Vec<ChangeEntry>,
    /// Each panel whose code differs (it is in both versions): a unified line diff, three
    /// lines of context.
    code: BTreeMap<String, String>,
}

#[utoipa::path(
    get,
    path = "/api/dashboards/{id}/diff",
    tag = "dashboards",
    params(("id" = String, Path, description = "The dashboard id (`db_…`)."), DiffQuery),
    responses((status = 200, description = "The two versions compared.", body = Envelope<VersionDiff>), (status = "default", response = ErrorBody))
)]
async fn diff(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    ApiQuery(q): ApiQuery<DiffQuery>,
) -> Result<Response, ApiError> {
    may(&app, &who, &id, Need::View)?;
    let old = app.dashboards.get_version(&id, q.from).await?;
    let new = app.dashboards.get_version(&id, q.to).await?;
    let code = code_diffs(&old.state, &new.state);
    Ok(ok(VersionDiff { from: q.from, to: q.to, changes: changes(&old.state, &new.state), code }))
}
