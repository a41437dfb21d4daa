//! Notification channels: named places an alert's transitions are sent (`notify: ["desk"]` in
//! a rule). Owns their records (store kind `channel`), the webhook payloads (our JSON, or
//! Slack- and Discord-compatible presets), the HMAC-SHA256 signature, which mail relay is in
//! force (Settings' over `[smtp]` in `boardsmith.toml`), and delivery with retries; the
//! e-mails themselves are [`super::email`]'s. Webhooks go through the SDK's client, so the
//! outbound policy (allowed hosts, no private addresses unless configured) holds for them as
//! for data sources; the mail relay is the operator's and is not checked against it.

use std::sync::Arc;
use std::time::Duration;

use hmac::{KeyInit, Mac};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use base::mail::{MailRelay, MailSecurity};
use dashboard::alerts::{Severity, Transition};
use store::{Record, Store, StoreError};

use super::email::{self, MailError};
use super::{Notification, ReportFile};

/// Longest channel name.
pub const MAX_NAME_CHARS: usize = 64;
/// Most channels.
pub const MAX_CHANNELS: usize = 100;
/// Attempts per delivery, and the waits between them (doubling).
const ATTEMPTS: u32 = 4;
const FIRST_WAIT: Duration = Duration::from_secs(1);
/// How long one POST may take.
const POST_TIMEOUT: Duration = Duration::from_secs(10);
/// The signature header: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`.
pub const SIGNATURE_HEADER: &str = "X-Boardsmith-Signature";
/// The notification's id, the same on every retry (receivers drop repeats by it).
pub const DELIVERY_HEADER: &str = "X-Boardsmith-Delivery";
/// What is sent: `alert.firing`, `alert.resolved` or `report`.
pub const EVENT_HEADER: &str = "X-Boardsmith-Event";

/// What a webhook's body looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Preset {
    /// The notification's fields at the top level (see the `Notification` schema).
    #[default]
    Json,
    /// `{text}` for a Slack incoming webhook.
    Slack,
    /// `{content, embeds}` for a Discord webhook.
    Discord,
}

/// A channel as stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Channel {
    /// Its name, as rules' `notify` lists it.
    pub name: String,
    /// Where it sends.
    #[serde(flatten)]
    pub target: Target,
    /// When it was made (unix ms).
    pub created_at: i64,
}

/// Where a channel sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Target {
    /// An HTTP POST, signed.
    Webhook {
        /// Where to POST.
        url: String,
        /// The body's shape.
        #[serde(default)]
        preset: Preset,
        /// The HMAC key (made by the server, shown once when the channel is made).
        secret: String,
    },
    /// An e-mail through the configured relay.
    Email {
        /// The recipients (`ana@example.com`, `Ana <ana@example.com>`).
        to: Vec<String>,
    },
}

impl<'de> Deserialize<'de> for Channel {
    /// Channels stored before e-mail existed have no `type`: they are webhooks.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Raw {
            name: String,
            created_at: i64,
            #[serde(flatten)]
            rest: serde_json::Map<String, Value>,
        }
        let mut raw = Raw::deserialize(d)?;
        raw.rest.entry("type").or_insert_with(|| json!("webhook"));
        let target =
            Target::deserialize(Value::Object(raw.rest)).map_err(serde::de::Error::custom)?;
        Ok(Self { name: raw.name, target, created_at: raw.created_at })
    }
}

/// A channel as listed: no secret, and of a webhook's URL only its scheme and host (a
/// webhook URL is often a credential itself).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChannelView {
    /// Its name.
    pub name: String,
    /// `webhook` or `email`.
    #[serde(rename = "type")]
    pub kind: String,
    /// A webhook's body: `json`, `slack` or `discord`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<Preset>,
    /// `https://host` of a webhook's URL; an e-mail channel's recipients.
    pub target: String,
    /// When it was made (unix ms).
    pub created_at: i64,
}

impl Channel {
    /// Its listed form.
    pub fn view(&self) -> ChannelView {
        let (kind, preset, target) = match &self.target {
            Target::Webhook { url, preset, .. } => {
                ("webhook", Some(*preset), reqwest_free_origin(url))
            }
            Target::Email { to } => ("email", None, to.join(", ")),
        };
        ChannelView {
            name: self.name.clone(),
            kind: kind.into(),
            preset,
            target,
            created_at: self.created_at,
        }
    }

    /// Whether several notifications of one judgement go as one message: people's channels
    /// (e-mail, Slack, Discord) yes; a JSON webhook gets each as its own event.
    pub fn groups(&self) -> bool {
        !matches!(self.target, Target::Webhook { preset: Preset::Json, .. })
    }

    /// A webhook's secret, shown once when it is made.
    pub fn secret(&self) -> Option<&str> {
        match &self.target {
            Target::Webhook { secret, .. } => Some(secret),
            Target::Email { .. } => None,
        }
    }
}

/// `scheme://host[:port]` of a URL, without parsing dependencies.
fn reqwest_free_origin(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return String::new() };
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    // Credentials in the authority are not shown.
    let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
    format!("{scheme}://{host}")
}

/// What a new channel is to be.
#[derive(Debug, Clone, PartialEq)]
pub enum NewTarget {
    /// A webhook to `url` with bodies shaped by `preset` (the server makes its secret).
    Webhook {
        /// Where to POST.
        url: String,
        /// The body's shape.
        preset: Preset,
    },
    /// E-mail to these recipients.
    Email {
        /// The recipients.
        to: Vec<String>,
    },
}

/// Why a channel cannot be made or used.
#[derive(Debug, thiserror::Error)]
pub enum ChannelError {
    /// A bad name, URL or preset; the message says which.
    #[error("{0}")]
    Invalid(String),
    /// A channel with that name exists.
    #[error("a channel named `{0}` exists already")]
    Exists(String),
    /// No channel with that name.
    #[error("no channel named `{0}`")]
    NotFound(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The signature header's value for `body` at `t` (unix seconds) with `secret`.
pub fn sign(secret: &str, t: i64, body: &[u8]) -> String {
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC takes a key of any length"));
    mac.update(t.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    let digest = mac.finalize().into_bytes();
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("t={t},v1={hex}")
}

/// The body a channel gets for `n`.
pub fn payload(preset: Preset, n: &Notification, base_url: &str) -> Value {
    let link = format!("{base_url}{}", n.link);
    let title = n.headline();
    let line = format!("{} · {} — {}", n.dashboard_title, n.panel_title, n.message);
    match preset {
        Preset::Json => {
            let mut v = serde_json::to_value(n).unwrap_or(Value::Null);
            v["link"] = json!(link);
            v
        }
        Preset::Slack => json!({"text": format!("*{title}*\n{line}\n<{link}|Open the dashboard>")}),
        Preset::Discord => {
            let color = match (n.status, n.severity) {
                (Transition::Resolved, _) => 0x2e_b8_6e,
                (_, Severity::Critical) => 0xd9_3f_3f,
                (_, Severity::Warning) => 0xe0_a1_2b,
                (_, Severity::Info) => 0x3b_82_f6,
            };
            json!({"content": title, "embeds": [{"title": n.rule_name, "description": line,
                                                  "url": link, "color": color}]})
        }
    }
}

/// The channels, kept in the store, and the mail relay e-mail goes through.
pub struct Channels {
    store: Arc<Store>,
    sdk: Arc<sdk::Sdk>,
    /// `[smtp]` of `boardsmith.toml`.
    file_relay: Option<MailRelay>,
    /// Settings' relay, over the file's.
    settings_relay: std::sync::RwLock<Option<MailRelay>>,
}

/// Where the relay in force comes from, as Settings shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum RelaySource {
    /// Set in Settings.
    Settings,
    /// `[smtp]` in `boardsmith.toml`.
    File,
}

/// The relay in force, without its password.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RelayStatus {
    /// Where it is set.
    pub source: RelaySource,
    /// `host:port`.
    pub server: String,
    /// `starttls`, `tls` or `none`.
    pub security: MailSecurity,
    /// The sender.
    pub from: String,
    /// Whether it signs in.
    pub signs_in: bool,
}

impl std::fmt::Debug for Channels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Channels").finish_non_exhaustive()
    }
}

/// What one delivery did, kept on the notification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    /// The channel.
    pub channel: String,
    /// `sent` or `failed`.
    pub status: String,
    /// Attempts made.
    pub attempts: u32,
    /// The HTTP status of the last attempt, if one was answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// When it finished (unix ms).
    pub at: i64,
}

impl Delivery {
    /// A delivery to `channel` that ended now: `sent` when there is no error.
    pub fn ended(
        channel: &str,
        attempts: u32,
        http_status: Option<u16>,
        error: Option<String>,
    ) -> Self {
        Self {
            channel: channel.to_owned(),
            status: if error.is_none() { "sent" } else { "failed" }.into(),
            attempts,
            http_status,
            error,
            at: chrono::Utc::now().timestamp_millis(),
        }
    }
}

impl Channels {
    /// Over the store, sending webhooks through `sdk`'s client and e-mail through
    /// `file_relay` until Settings names another.
    pub fn new(store: Arc<Store>, sdk: Arc<sdk::Sdk>, file_relay: Option<MailRelay>) -> Self {
        Self { store, sdk, file_relay, settings_relay: std::sync::RwLock::default() }
    }

    /// Settings' relay (with its password opened), which wins over the file's; `None`: the
    /// file's.
    pub fn set_settings_relay(&self, relay: Option<MailRelay>) {
        *self.settings_relay.write().unwrap_or_else(std::sync::PoisonError::into_inner) = relay;
    }

    /// The relay in force and where it is set.
    fn relay(&self) -> Option<(MailRelay, RelaySource)> {
        let settings =
            self.settings_relay.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        settings
            .map(|r| (r, RelaySource::Settings))
            .or_else(|| self.file_relay.clone().map(|r| (r, RelaySource::File)))
    }

    /// The relay in force, for Settings; `None`: e-mail cannot be sent.
    pub fn relay_status(&self) -> Option<RelayStatus> {
        self.relay().map(|(r, source)| RelayStatus {
            source,
            server: format!("{}:{}", r.host, r.port()),
            security: r.security,
            from: r.from.clone(),
            signs_in: r.username.as_ref().is_some_and(|u| !u.is_empty()),
        })
    }

    /// Every channel, by name.
    #[base::boxed]
    pub async fn list(&self) -> Result<Vec<Channel>, StoreError> {
        Ok(self
            .store
            .records(Record::Channel)
            .await?
            .into_iter()
            .filter_map(|v| serde_json::from_value(v).ok())
            .collect())
    }

    /// One channel.
    #[base::boxed]
    pub async fn get(&self, name: &str) -> Result<Channel, ChannelError> {
        let v = self.store.record(Record::Channel, name).await?;
        v.and_then(|v| serde_json::from_value(v).ok())
            .ok_or_else(|| ChannelError::NotFound(name.to_owned()))
    }

    /// Makes a channel; a webhook's answer holds its new secret.
    #[base::boxed]
    pub async fn create(
        &self,
        name: &str,
        target: NewTarget,
        now: i64,
    ) -> Result<Channel, ChannelError> {
        let name = name.trim();
        if name.is_empty()
            || name.chars().count() > MAX_NAME_CHARS
            || name.chars().any(|c| c.is_control() || c == '/')
        {
            return Err(ChannelError::Invalid(format!(
                "a channel name is 1 to {MAX_NAME_CHARS} characters, without `/` or control characters"
            )));
        }
        let target = match target {
            NewTarget::Webhook { url, preset } => {
                self.sdk
                    .check_outbound(&url)
                    .map_err(|e| ChannelError::Invalid(format!("url: {e}")))?;
                let secret: String = {
                    use rand::Rng;
                    let bytes: [u8; 24] = rand::rng().random();
                    bytes.iter().map(|b| format!("{b:02x}")).collect()
                };
                Target::Webhook { url, preset, secret: format!("whsec_{secret}") }
            }
            NewTarget::Email { to } => {
                email::recipients(&to).map_err(|e| ChannelError::Invalid(e.to_string()))?;
                Target::Email { to: to.iter().map(|a| a.trim().to_owned()).collect() }
            }
        };
        let all = self.list().await?;
        if all.iter().any(|c| c.name == name) {
            return Err(ChannelError::Exists(name.to_owned()));
        }
        if all.len() >= MAX_CHANNELS {
            return Err(ChannelError::Invalid(format!("at most {MAX_CHANNELS} channels")));
        }
        let channel = Channel { name: name.to_owned(), target, created_at: now };
        let value = serde_json::to_value(&channel).unwrap_or(Value::Null);
        self.store.put_record(Record::Channel, name, &value).await?;
        Ok(channel)
    }

    /// Removes a channel.
    #[base::boxed]
    pub async fn delete(&self, name: &str) -> Result<(), ChannelError> {
        self.get(name).await?;
        self.store.delete_record(Record::Channel, name).await?;
        Ok(())
    }

    /// Sends `out` to `channel`, retrying what may pass later (a webhook's network failures,
    /// 429 and 5xx; a mail relay's 4xx replies and lost connections) with a doubling wait.
    #[base::boxed]
    pub async fn deliver<'a>(
        &'a self,
        channel: &'a Channel,
        out: Outgoing<'a>,
        base_url: &'a str,
    ) -> Delivery {
        match &channel.target {
            Target::Webhook { url, preset, secret } => {
                let body = match out {
                    Outgoing::Notification(n) => payload(*preset, n, base_url),
                    Outgoing::Group(all) => group_payload(*preset, all, base_url),
                    Outgoing::Report(r) => report_payload(*preset, r, base_url),
                };
                let body = serde_json::to_vec(&body).unwrap_or_default();
                self.post(&channel.name, url, secret, body, &out.id(), &out.event()).await
            }
            Target::Email { to } => self.mail(&channel.name, to, out, base_url).await,
        }
    }

    async fn post(
        &self,
        name: &str,
        url: &str,
        secret: &str,
        body: Vec<u8>,
        id: &str,
        event: &str,
    ) -> Delivery {
        retrying(name, || {
            let t = chrono::Utc::now().timestamp();
            let headers = vec![
                (SIGNATURE_HEADER.to_owned(), sign(secret, t, &body)),
                (DELIVERY_HEADER.to_owned(), id.to_owned()),
                (EVENT_HEADER.to_owned(), event.to_owned()),
            ];
            let body = body.clone();
            async move {
                match self.sdk.post_json(url, body, headers, POST_TIMEOUT).await {
                    Ok(code) if (200..300).contains(&code) => Attempt::Done(Some(code)),
                    Ok(code) => Attempt::Failed {
                        http_status: Some(code),
                        error: format!("the webhook answered HTTP {code}"),
                        again: code == 429 || code >= 500,
                    },
                    Err(sdk::http::Error::Refused(r)) => {
                        Attempt::Failed { http_status: None, error: r.to_string(), again: false }
                    }
                    Err(e) => {
                        Attempt::Failed { http_status: None, error: e.to_string(), again: true }
                    }
                }
            }
        })
        .await
    }

    async fn mail(&self, name: &str, to: &[String], out: Outgoing<'_>, base_url: &str) -> Delivery {
        let built = self.relay().ok_or(MailError::NoRelay).and_then(|(relay, _)| {
            let to = email::recipients(to)?;
            let message = match out {
                Outgoing::Notification(n) => email::message(&relay, &to, n, base_url)?,
                Outgoing::Group(all) => email::group_message(&relay, &to, all, base_url)?,
                Outgoing::Report(r) => email::report_message(&relay, &to, r, base_url)?,
            };
            Ok((message, relay))
        });
        let (message, relay) = match built {
            Ok(m) => m,
            Err(e) => return Delivery::ended(name, 0, None, Some(e.to_string())),
        };
        retrying(name, || {
            let (relay, message) = (&relay, message.clone());
            async move {
                match email::send(relay, message).await {
                    Ok(()) => Attempt::Done(None),
                    Err(MailError::Smtp { message, transient }) => {
                        Attempt::Failed { http_status: None, error: message, again: transient }
                    }
                    Err(e) => {
                        Attempt::Failed { http_status: None, error: e.to_string(), again: false }
                    }
                }
            }
        })
        .await
    }
}

/// What a channel sends.
#[derive(Debug, Clone, Copy)]
pub enum Outgoing<'a> {
    /// An alert's transition.
    Notification(&'a Notification),
    /// Several notifications of one judgement, as one message (never empty).
    Group(&'a [Notification]),
    /// A scheduled report's file.
    Report(&'a ReportFile),
}

impl Outgoing<'_> {
    /// Its delivery id, the same on every retry.
    fn id(&self) -> String {
        match self {
            Self::Notification(n) => n.id.clone(),
            Self::Group(all) => {
                let first = all.first().map_or("", |n| n.id.as_str());
                format!("{first}+{}", all.len().saturating_sub(1))
            }
            Self::Report(r) => r.id.clone(),
        }
    }

    /// The `X-Boardsmith-Event` of a webhook.
    fn event(&self) -> String {
        match self {
            Self::Notification(n) => format!("alert.{}", status_word(n.status)),
            Self::Group(_) => "alert.group".into(),
            Self::Report(_) => "report".into(),
        }
    }
}

/// A webhook's body for a group (people's presets; a JSON webhook is sent each notification
/// alone, and gets `{type: "alerts", notifications}` only if handed a group).
pub fn group_payload(preset: Preset, all: &[Notification], base_url: &str) -> Value {
    let link = all.first().map(|n| format!("{base_url}{}", n.link)).unwrap_or_default();
    let (title, lines) = super::group_lines(all);
    match preset {
        Preset::Json => json!({"type": "alerts", "title": title, "link": link,
                               "notifications": all}),
        Preset::Slack => json!({"text": format!("*{title}*\n• {}\n<{link}|Open the dashboard>",
                                                lines.join("\n• "))}),
        Preset::Discord => json!({"content": title,
                                  "embeds": [{"title": title, "url": link,
                                              "description": lines.join("\n")}]}),
    }
}

/// A webhook's body for report `r`: with the JSON preset the file itself, base64, beside what
/// it shows; chat presets get a line and the link (they take no files).
pub fn report_payload(preset: Preset, r: &ReportFile, base_url: &str) -> Value {
    use base64::Engine as _;
    let link = format!("{base_url}{}", r.link);
    let line = format!("{}: {} ({})", r.report_name, r.dashboard_title, r.filename);
    match preset {
        Preset::Json => {
            let mut v = serde_json::to_value(r).unwrap_or(Value::Null);
            v["type"] = json!("report");
            v["link"] = json!(link);
            v["size"] = json!(r.bytes.len());
            v["contentBase64"] = json!(base64::engine::general_purpose::STANDARD.encode(&r.bytes));
            v
        }
        Preset::Slack => json!({"text": format!("*Report* {line}\n<{link}|Open the dashboard>")}),
        Preset::Discord => json!({"content": format!("Report {line}"),
                                  "embeds": [{"title": r.report_name, "url": link,
                                              "description": r.dashboard_title}]}),
    }
}

/// How one attempt of a delivery went.
enum Attempt {
    /// Delivered (with the HTTP status of a webhook).
    Done(Option<u16>),
    /// Not delivered; `again`: a later attempt may succeed.
    Failed { http_status: Option<u16>, error: String, again: bool },
}

/// Up to [`ATTEMPTS`] of `attempt`, waiting [`FIRST_WAIT`], then twice as long, between them.
async fn retrying<F: Future<Output = Attempt>>(
    channel: &str,
    mut attempt: impl FnMut() -> F,
) -> Delivery {
    let mut wait = FIRST_WAIT;
    let mut attempts = 0;
    loop {
        attempts += 1;
        match attempt().await {
            Attempt::Done(code) => return Delivery::ended(channel, attempts, code, None),
            Attempt::Failed { http_status, error, again } => {
                if !again || attempts >= ATTEMPTS {
                    return Delivery::ended(channel, attempts, http_status, Some(error));
                }
            }
        }
        tokio::time::sleep(wait).await;
        wait *= 2;
    }
}

fn status_word(t: Transition) -> &'static str {
    match t {
        Transition::Firing => "firing",
        Transition::Resolved => "resolved",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_are_hmac_sha256_of_time_dot_body() {
        // RFC 4231 case 2's key with our message "<t>.<body>"; the digest is Python's
        // `hmac.new(b"Jefe", b"1.what do ya want for nothing?", hashlib.sha256).hexdigest()`.
        let s = sign("Jefe", 1, b"what do ya want for nothing?");
        assert_eq!(s, "t=1,v1=a9049465ce89cfb8e9aac62333abda66f80e3403f51f57f6bae3c3a4485eca38");
        assert_ne!(s, sign("Jefe", 2, b"what do ya want for nothing?"), "the time is signed");
        assert_ne!(s, sign("Jeff", 1, b"what do ya want for nothing?"), "the key matters");
    }

    #[test]
    fn listed_targets_hide_path_and_credentials() {
        assert_eq!(
            reqwest_free_origin("https://hooks.slack.com/services/T0/B0/xyz"),
            "https://hooks.slack.com"
        );
        assert_eq!(reqwest_free_origin("http://user:pw@127.0.0.1:9/x?y"), "http://127.0.0.1:9");
    }
}
