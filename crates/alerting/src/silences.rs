//! Silences: for a while, a dashboard's alert notifications (all of them, one rule's, or one
//! fan-out value's) are recorded but not sent. Owns their records (store kind `silence`) and
//! the match; the rule's state machine ([`dashboard::alerts::RuleState::tell`]) makes sure
//! channels hear the state in force once a silence ends. Knows nothing of channels.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use base::principal::{Actor, Principal};
use store::{Record, Store, StoreError};

/// Longest silence.
pub const MAX_SILENCE: Duration = Duration::from_secs(30 * 24 * 3600);
/// Most silences kept (ended ones are removed after a day).
pub const MAX_SILENCES: usize = 1000;
/// How long ended silences stay listed.
const KEEP_ENDED: i64 = 24 * 3600 * 1000;
/// How long this node trusts its copy of the silences (another node may have added one).
const FRESH: Duration = Duration::from_secs(5);

/// A silence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Silence {
    /// `si_` and a time-ordered UUID.
    pub id: String,
    /// The dashboard whose notifications it holds back.
    pub dashboard_id: String,
    /// Only this rule's; absent: every rule of the dashboard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_id: Option<String>,
    /// Only this fan-out value's (`BTCUSDT`); absent: every value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// When it started (unix ms).
    pub starts_at: i64,
    /// When it ends (unix ms).
    pub ends_at: i64,
    /// Why.
    #[serde(default)]
    pub comment: String,
    /// Who made it.
    pub created_by: Actor,
}

impl Silence {
    /// Whether it holds back rule `rule`'s notification for `key` on `dashboard` at `now`.
    pub fn covers(&self, dashboard: &str, rule: &str, key: Option<&str>, now: i64) -> bool {
        self.dashboard_id == dashboard
            && self.rule_id.as_deref().is_none_or(|r| r == rule)
            && self.key.as_deref().is_none_or(|k| Some(k) == key)
            && (self.starts_at..self.ends_at).contains(&now)
    }

    /// Whether it is in force at `now`.
    pub fn active(&self, now: i64) -> bool {
        (self.starts_at..self.ends_at).contains(&now)
    }
}

/// What a new silence is to be (`POST /api/silences`).
#[derive(Debug, Clone, PartialEq, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewSilence {
    /// The dashboard.
    pub dashboard_id: String,
    /// One rule only.
    #[serde(default)]
    pub rule_id: Option<String>,
    /// One fan-out value only.
    #[serde(default)]
    pub key: Option<String>,
    /// How long, from now (`"2h"`, at most 30 days).
    pub duration: String,
    /// Why (shown in the list).
    #[serde(default)]
    pub comment: Option<String>,
}

/// Why a silence cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum SilenceError {
    /// A bad field; the message names it.
    #[error("{0}")]
    Invalid(String),
    /// No such silence.
    #[error("no silence `{0}`")]
    NotFound(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The silences, kept in the store, with a short-lived copy for the judging.
pub struct Silences {
    store: Arc<Store>,
    copy: Mutex<Option<(Instant, Arc<Vec<Silence>>)>>,
}

impl std::fmt::Debug for Silences {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Silences").finish_non_exhaustive()
    }
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

impl Silences {
    /// Over the store.
    pub fn new(store: Arc<Store>) -> Self {
        Self { store, copy: Mutex::new(None) }
    }

    /// Every silence, newest first (ended ones for a day).
    #[base::boxed]
    pub async fn list(&self) -> Result<Vec<Silence>, StoreError> {
        let mut all: Vec<Silence> = self
            .store
            .records(Record::Silence)
            .await?
            .into_iter()
            .filter_map(|v| serde_json::from_value(v).ok())
            .collect();
        all.sort_by_key(|s| std::cmp::Reverse(s.starts_at));
        Ok(all)
    }

    /// The silence holding back this notification now, if any (a store failure silences
    /// nothing: a notification too many beats one lost).
    pub(crate) async fn covering(
        &self,
        dashboard: &str,
        rule: &str,
        key: Option<&str>,
    ) -> Option<String> {
        let fresh = self
            .copy
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
            .filter(|(at, _)| at.elapsed() < FRESH)
            .map(|(_, all)| all.clone());
        let all = match fresh {
            Some(all) => all,
            None => match self.list().await {
                Ok(all) => {
                    let all = Arc::new(all);
                    *self.copy.lock().unwrap_or_else(std::sync::PoisonError::into_inner) =
                        Some((Instant::now(), all.clone()));
                    all
                }
                Err(e) => {
                    tracing::warn!(error = %e, "cannot read the silences");
                    return None;
                }
            },
        };
        let now = now_ms();
        all.iter().find(|s| s.covers(dashboard, rule, key, now)).map(|s| s.id.clone())
    }

    fn forget_copy(&self) {
        *self.copy.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
    }

    /// Makes a silence from now for `by`; ended ones older than a day are removed.
    #[base::boxed]
    pub async fn create(&self, new: NewSilence, by: &Principal) -> Result<Silence, SilenceError> {
        let span = humantime::parse_duration(new.duration.trim()).map_err(|e| {
            SilenceError::Invalid(format!(
                "duration: `{}` is not a span such as \"2h\" ({e})",
                new.duration
            ))
        })?;
        if span.is_zero() || span > MAX_SILENCE {
            return Err(SilenceError::Invalid("duration: from 1 second to 30 days".into()));
        }
        let now = now_ms();
        let all = self.list().await?;
        for old in all.iter().filter(|s| s.ends_at < now - KEEP_ENDED) {
            self.store.delete_record(Record::Silence, &old.id).await?;
        }
        if all.iter().filter(|s| s.ends_at >= now - KEEP_ENDED).count() >= MAX_SILENCES {
            return Err(SilenceError::Invalid(format!("at most {MAX_SILENCES} silences")));
        }
        let clean = |v: Option<String>| v.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
        let silence = Silence {
            id: format!("si_{}", uuid::Uuid::now_v7().simple()),
            dashboard_id: new.dashboard_id,
            rule_id: clean(new.rule_id),
            key: clean(new.key),
            starts_at: now,
            ends_at: now + i64::try_from(span.as_millis()).unwrap_or(i64::MAX / 2),
            comment: clean(new.comment).map(|c| c.chars().take(500).collect()).unwrap_or_default(),
            created_by: Actor::of(by),
        };
        let value = serde_json::to_value(&silence).unwrap_or(Value::Null);
        self.store.put_record(Record::Silence, &silence.id, &value).await?;
        self.forget_copy();
        Ok(silence)
    }

    /// One silence.
    #[base::boxed]
    pub async fn get(&self, id: &str) -> Result<Silence, SilenceError> {
        self.store
            .record(Record::Silence, id)
            .await?
            .and_then(|v| serde_json::from_value(v).ok())
            .ok_or_else(|| SilenceError::NotFound(id.to_owned()))
    }

    /// Ends a silence now (it stays listed for a day).
    #[base::boxed]
    pub async fn end(&self, id: &str) -> Result<Silence, SilenceError> {
        let mut s = self.get(id).await?;
        s.ends_at = s.ends_at.min(now_ms());
        let value = serde_json::to_value(&s).unwrap_or(Value::Null);
        self.store.put_record(Record::Silence, id, &value).await?;
        self.forget_copy();
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_silence_covers_its_dashboard_rule_and_value_while_it_lasts() {
        let s = Silence {
            id: "si_1".into(),
            dashboard_id: "d".into(),
            rule_id: Some("r".into()),
            key: None,
            starts_at: 100,
            ends_at: 200,
            comment: String::new(),
            created_by: Actor::default(),
        };
        assert!(s.covers("d", "r", Some("BTC"), 150));
        assert!(s.covers("d", "r", None, 100));
        assert!(!s.covers("d", "r", None, 200), "ends at ends_at");
        assert!(!s.covers("d", "other", None, 150));
        assert!(!s.covers("e", "r", None, 150));
        let one = Silence { key: Some("BTC".into()), ..s };
        assert!(one.covers("d", "r", Some("BTC"), 150) && !one.covers("d", "r", Some("ETH"), 150));
    }
}
