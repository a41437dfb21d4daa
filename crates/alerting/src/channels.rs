//! Notification channels: named places an alert's transitions are sent (`notify: ["desk"]` in
//! a rule). Owns their records (store kind `channel`), the webhook payloads (our JSON, or
//! Slack- and Discord-compatible presets), the HMAC-SHA256 signature, and delivery with
//! retries. Requests go through the SDK's client, so the outbound policy (allowed hosts, no
//! private addresses unless configured) holds for webhooks as for data sources.

use std::sync::Arc;
use std::time::Duration;

use hmac::{KeyInit, Mac};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use dashboard::alerts::{Severity, Transition};
use store::{Record, Store, StoreError};

use super::Notification;

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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Channel {
    /// Its name, as rules' `notify` lists it.
    pub name: String,
    /// Where to POST.
    pub url: String,
    /// The body's shape.
    #[serde(default)]
    pub preset: Preset,
    /// The HMAC key (made by the server, shown once when the channel is made).
    pub secret: String,
    /// When it was made (unix ms).
    pub created_at: i64,
}

/// A channel as listed: no secret, and of the URL only its scheme and host (a webhook URL is
/// often a credential itself).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChannelView {
    /// Its name.
    pub name: String,
    /// Always `webhook` (email comes later).
    #[serde(rename = "type")]
    pub kind: String,
    /// `json`, `slack` or `discord`.
    pub preset: Preset,
    /// `https://host` of its URL.
    pub target: String,
    /// When it was made (unix ms).
    pub created_at: i64,
}

impl Channel {
    /// Its listed form.
    pub fn view(&self) -> ChannelView {
        let target = reqwest_free_origin(&self.url);
        ChannelView {
            name: self.name.clone(),
            kind: "webhook".into(),
            preset: self.preset,
            target,
            created_at: self.created_at,
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
    let head = match n.status {
        Transition::Firing => "Firing",
        Transition::Resolved => "Resolved",
    };
    let of = n.key.as_ref().map(|k| format!(" [{k}]")).unwrap_or_default();
    let title = format!("{head}: {}{of}", n.rule_name);
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

/// The channels, kept in the store.
pub struct Channels {
    store: Arc<Store>,
    sdk: Arc<sdk::Sdk>,
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
    /// Over the store, sending through `sdk`'s client.
    pub fn new(store: Arc<Store>, sdk: Arc<sdk::Sdk>) -> Self {
        Self { store, sdk }
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

    /// Makes a webhook channel; answers it with its new secret.
    #[base::boxed]
    pub async fn create(
        &self,
        name: &str,
        url: &str,
        preset: Preset,
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
        self.sdk.check_outbound(url).map_err(|e| ChannelError::Invalid(format!("url: {e}")))?;
        let all = self.list().await?;
        if all.iter().any(|c| c.name == name) {
            return Err(ChannelError::Exists(name.to_owned()));
        }
        if all.len() >= MAX_CHANNELS {
            return Err(ChannelError::Invalid(format!("at most {MAX_CHANNELS} channels")));
        }
        let secret: String = {
            use rand::Rng;
            let bytes: [u8; 24] = rand::rng().random();
            bytes.iter().map(|b| format!("{b:02x}")).collect()
        };
        let channel = Channel {
            name: name.to_owned(),
            url: url.to_owned(),
            preset,
            secret: format!("whsec_{secret}"),
            created_at: now,
        };
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

    /// Sends `n` to `channel`, retrying network failures, 429 and 5xx with a doubling wait.
    #[base::boxed]
    pub async fn deliver(&self, channel: &Channel, n: &Notification, base_url: &str) -> Delivery {
        let body = serde_json::to_vec(&payload(channel.preset, n, base_url)).unwrap_or_default();
        let mut wait = FIRST_WAIT;
        let mut last = (None, None);
        let mut attempts = 0;
        while attempts < ATTEMPTS {
            attempts += 1;
            let t = chrono::Utc::now().timestamp();
            let headers = vec![
                (SIGNATURE_HEADER.to_owned(), sign(&channel.secret, t, &body)),
                (DELIVERY_HEADER.to_owned(), n.id.clone()),
                ("X-Boardsmith-Event".to_owned(), format!("alert.{}", status_word(n.status))),
            ];
            match self.sdk.post_json(&channel.url, body.clone(), headers, POST_TIMEOUT).await {
                Ok(code) if (200..300).contains(&code) => {
                    return Delivery::ended(&channel.name, attempts, Some(code), None);
                }
                Ok(code) => {
                    last = (Some(code), Some(format!("the webhook answered HTTP {code}")));
                    if !(code == 429 || code >= 500) {
                        break;
                    }
                }
                Err(sdk::http::Error::Refused(r)) => {
                    last = (None, Some(r.to_string()));
                    break;
                }
                Err(e) => last = (None, Some(e.to_string())),
            }
            if attempts < ATTEMPTS {
                tokio::time::sleep(wait).await;
                wait *= 2;
            }
        }
        Delivery::ended(
            &channel.name,
            attempts,
            last.0,
            last.1.or_else(|| Some("not delivered".into())),
        )
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
