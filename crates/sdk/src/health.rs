//! How each HTTP provider is doing, as calls find it: live, degraded (its last call failed),
//! down (its circuit breaker is open), with the last success, the last failure and the latency.
//! Settings → Data providers and `GET /api/sdk/health` show it; the log gets one line per
//! change of state (down, back), never one per call.
//!
//! A state machine over caller-given times, so it is tested without sleeping; knows nothing of
//! HTTP or specs.

use std::collections::BTreeMap;
use std::sync::Mutex;

use base::outage::Outage;
use serde::Serialize;

/// A provider's state as the calls made to it find it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Not called yet.
    Unknown,
    /// Its last call succeeded.
    Live,
    /// Its last call failed; its breaker is still closed.
    Degraded,
    /// Its breaker is open: calls fail at once until the next probe.
    Down,
}

/// One provider's health.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    /// The state.
    pub state: State,
    /// Since when it is in this state (unix ms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<i64>,
    /// Its last successful call (unix ms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_success_at: Option<i64>,
    /// Its last failure, when it failed since its last success.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<Outage>,
    /// When that failure happened (unix ms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error_at: Option<i64>,
    /// Latency of successful calls, smoothed (ms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<f64>,
}

impl Default for Record {
    fn default() -> Self {
        Self {
            state: State::Unknown,
            since: None,
            last_success_at: None,
            last_error: None,
            last_error_at: None,
            latency_ms: None,
        }
    }
}

/// Every provider's health.
#[derive(Debug, Default)]
pub struct Health {
    records: Mutex<BTreeMap<String, Record>>,
}

/// Weight of a new latency in the smoothed one.
const LATENCY_WEIGHT: f64 = 0.3;

impl Health {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Record>> {
        self.records.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A call to `provider` answered after `latency_ms`, at `now` (unix ms).
    pub fn success(&self, provider: &str, latency_ms: f64, now: i64) {
        let mut map = self.lock();
        let r = map.entry(provider.to_owned()).or_default();
        if matches!(r.state, State::Down | State::Degraded) {
            let down_for = r.since.map_or(0, |s| (now - s).max(0)) / 1000;
            tracing::info!(target: "sdk::health", provider, "data provider {provider} answers again (it failed for {down_for} s)");
        }
        if r.state != State::Live {
            r.since = Some(now);
        }
        r.state = State::Live;
        r.last_success_at = Some(now);
        r.last_error = None;
        r.last_error_at = None;
        r.latency_ms = Some(match r.latency_ms {
            Some(l) => l + LATENCY_WEIGHT * (latency_ms - l),
            None => latency_ms,
        });
    }

    /// A call to `provider` failed with `outage` at `now`; `down` when its breaker is open
    /// after it. Logs a warning when the state changes.
    pub fn failure(&self, provider: &str, outage: &Outage, down: bool, now: i64) {
        let mut map = self.lock();
        let r = map.entry(provider.to_owned()).or_default();
        let state = if down { State::Down } else { State::Degraded };
        // Open stays open until a success: a late report from before the breaker opened does
        // not make it look better.
        let state = if r.state == State::Down { State::Down } else { state };
        if state != r.state {
            r.since = Some(now);
            match state {
                State::Down => tracing::warn!(
                    target: "sdk::health",
                    provider,
                    cause = outage.cause.as_str(),
                    "data provider {provider} is down: {}; calls to it fail at once until one \
                     succeeds again",
                    outage.details
                ),
                _ => tracing::warn!(
                    target: "sdk::health",
                    provider,
                    cause = outage.cause.as_str(),
                    "data provider {provider} failed: {}",
                    outage.details
                ),
            }
        }
        r.state = state;
        r.last_error = Some(outage.clone());
        r.last_error_at = Some(now);
    }

    /// The health of `provider`.
    pub fn get(&self, provider: &str) -> Record {
        self.lock().get(provider).cloned().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base::outage::Cause;

    #[test]
    fn health_follows_calls_and_changes_state_once_per_transition() {
        let h = Health::default();
        assert_eq!(h.get("x").state, State::Unknown);
        h.success("x", 100.0, 1_000);
        h.success("x", 200.0, 2_000);
        let r = h.get("x");
        assert_eq!((r.state, r.since, r.last_success_at), (State::Live, Some(1_000), Some(2_000)));
        assert!((r.latency_ms.unwrap() - 130.0).abs() < 1e-9, "smoothed: {r:?}");
        let o = Outage::new("x", "X", Cause::Unreachable, "x.com: refused");
        h.failure("x", &o, false, 3_000);
        h.failure("x", &o, false, 4_000);
        let r = h.get("x");
        assert_eq!(
            (r.state, r.since, r.last_error_at),
            (State::Degraded, Some(3_000), Some(4_000))
        );
        h.failure("x", &o, true, 5_000);
        // A late report of a call admitted before the breaker opened keeps it down.
        h.failure("x", &o, false, 6_000);
        let r = h.get("x");
        assert_eq!((r.state, r.since), (State::Down, Some(5_000)));
        h.success("x", 50.0, 7_000);
        let r = h.get("x");
        assert_eq!((r.state, r.since, r.last_error), (State::Live, Some(7_000), None));
    }
}
