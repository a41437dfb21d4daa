//! `/api/channels`: where alert notifications go. Anyone who reads may list the names (to
//! name them in a rule's `notify`); admins make, test and remove them, and see the mail relay
//! in force. A webhook's secret is answered once, when it is made. `alerting::channels` owns the rules and the sending.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use serde::{Deserialize, Serialize};
use utoipa::{OpenApi, ToSchema};

use super::envelope::{Envelope, ErrorBody};
use super::routes::{self, Routes, get, post};
use super::{ApiError, created, ok, parse_body};
use access::keys::Scope;
use alerting::Notification;
use alerting::channels::{ChannelError, ChannelView, Delivery, NewTarget, Preset, RelayStatus};
use app::App;
use dashboard::alerts::{Severity, Transition};

#[derive(OpenApi)]
#[openapi(paths(list, create, delete, test, relay))]
pub(crate) struct Doc;

/// The routes of this module.
pub fn routes() -> Routes<Arc<App>> {
    Routes::new()
        .route("/api/channels", get(Scope::Read, list).post(Scope::Admin, create))
        .route("/api/channels/{name}", routes::delete(Scope::Admin, delete))
        .route("/api/channels/{name}/test", post(Scope::Admin, test))
        .route("/api/admin/mail", get(Scope::Admin, relay))
}

impl From<ChannelError> for ApiError {
    fn from(e: ChannelError) -> Self {
        match e {
            ChannelError::Invalid(_) => ApiError::bad(e.to_string()),
            ChannelError::Exists(_) => {
                ApiError::Conflict { msg: e.to_string(), data: serde_json::Value::Null }
            }
            ChannelError::NotFound(_) => ApiError::NotFound(e.to_string()),
            ChannelError::Store(s) => s.into(),
        }
    }
}

/// A new channel.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
enum NewChannel {
    /// A signed HTTP POST.
    Webhook {
        /// Its name, as rules' `notify` will list it (1 to 64 characters, no `/`).
        name: String,
        /// Where to POST; its host must be allowed out (`BOARDSMITH_OUTBOUND_ALLOW`).
        url: String,
        /// `json` (default), `slack` or `discord`.
        #[serde(default)]
        preset: Preset,
    },
    /// An e-mail through the mail relay (Settings, or `[smtp]` in `boardsmith.toml`).
    Email {
        /// Its name, as rules' `notify` will list it (1 to 64 characters, no `/`).
        name: String,
        /// The recipients, 1 to 20 (`ana@example.com` or `Ana <ana@example.com>`).
        to: Vec<String>,
    },
}

/// A channel just made, with the secret its webhook's signatures use (shown only now).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct MadeChannel {
    #[serde(flatten)]
    channel: ChannelView,
    /// A webhook's HMAC-SHA256 key of `X-Boardsmith-Signature`.
    #[serde(skip_serializing_if = "Option::is_none")]
    secret: Option<String>,
}

/// Every channel (names, types and target hosts; no URLs or secrets).
#[utoipa::path(
    get,
    path = "/api/channels",
    tag = "alerts",
    responses((status = 200, description = "The channels.", body = Envelope<Vec<ChannelView>>), (status = "default", response = ErrorBody))
)]
async fn list(State(app): State<Arc<App>>) -> Result<Response, ApiError> {
    let all: Vec<ChannelView> =
        app.alerting.channels().list().await?.iter().map(|c| c.view()).collect();
    Ok(ok(all))
}

/// Makes a channel. A webhook's body is JSON (the notification's fields, or a Slack or
/// Discord message), signed in `X-Boardsmith-Signature: t=<unix seconds>,v1=<hex
/// HMAC-SHA256 of "<t>.<body>">`, with the notification's id in `X-Boardsmith-Delivery`. An
/// e-mail channel sends a plain-text and HTML message through the mail relay, threaded per
/// rule.
#[utoipa::path(
    post,
    path = "/api/channels",
    tag = "alerts",
    request_body = NewChannel,
    responses((status = 201, description = "The channel and its secret.", body = Envelope<MadeChannel>), (status = "default", response = ErrorBody))
)]
async fn create(State(app): State<Arc<App>>, body: Bytes) -> Result<Response, ApiError> {
    let (name, target) = match parse_body(&body)? {
        NewChannel::Webhook { name, url, preset } => (name, NewTarget::Webhook { url, preset }),
        NewChannel::Email { name, to } => (name, NewTarget::Email { to }),
    };
    let now = chrono::Utc::now().timestamp_millis();
    let c = app.alerting.channels().create(&name, target, now).await?;
    Ok(created(MadeChannel { channel: c.view(), secret: c.secret().map(str::to_owned) }))
}

/// Removes a channel (rules naming it then record a failed delivery).
#[utoipa::path(
    delete,
    path = "/api/channels/{name}",
    tag = "alerts",
    params(("name" = String, Path, description = "The channel.")),
    responses((status = 200, description = "The removed channel.", body = Envelope<ChannelView>), (status = "default", response = ErrorBody))
)]
async fn delete(
    State(app): State<Arc<App>>,
    Path(name): Path<String>,
) -> Result<Response, ApiError> {
    let c = app.alerting.channels().get(&name).await?;
    app.alerting.channels().delete(&name).await?;
    Ok(ok(c.view()))
}

/// Sends a test notification (status `firing`, rule `test`) to the channel and says what
/// happened.
#[utoipa::path(
    post,
    path = "/api/channels/{name}/test",
    tag = "alerts",
    params(("name" = String, Path, description = "The channel.")),
    responses((status = 200, description = "The delivery.", body = Envelope<Delivery>), (status = "default", response = ErrorBody))
)]
async fn test(State(app): State<Arc<App>>, Path(name): Path<String>) -> Result<Response, ApiError> {
    let c = app.alerting.channels().get(&name).await?;
    let now = chrono::Utc::now().timestamp_millis();
    let n = Notification {
        id: format!("test/{name}/{now}"),
        status: Transition::Firing,
        dashboard_id: String::new(),
        dashboard_title: "Boardsmith".into(),
        panel_id: String::new(),
        panel_title: "Channel test".into(),
        rule_id: "test".into(),
        rule_name: "Test notification".into(),
        severity: Severity::Info,
        key: None,
        value: None,
        threshold: None,
        message: format!("a test of channel `{name}`"),
        at: now,
        link: "/".into(),
        notify: vec![name.clone()],
        deliveries: Vec::new(),
        reason: Default::default(),
        muted: None,
        silence: None,
    };
    let d = app
        .alerting
        .channels()
        .deliver(&c, alerting::channels::Outgoing::Notification(&n), app.alerting.public_url())
        .await;
    if d.status == "sent" {
        Ok(ok(d))
    } else {
        Err(ApiError::Unprocessable {
            msg: d.error.clone().unwrap_or_else(|| "not delivered".into()),
            data: serde_json::to_value(&d).unwrap_or_default(),
        })
    }
}

/// The mail relay e-mail channels send through (Settings' over `[smtp]` in
/// `boardsmith.toml`), without its password; `null`: none, so e-mail cannot be sent.
#[utoipa::path(
    get,
    path = "/api/admin/mail",
    tag = "alerts",
    responses((status = 200, description = "The relay in force.", body = Envelope<Option<RelayStatus>>), (status = "default", response = ErrorBody))
)]
async fn relay(State(app): State<Arc<App>>) -> Response {
    ok(app.alerting.channels().relay_status())
}
