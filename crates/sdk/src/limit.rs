//! Being a good client of a provider: a token bucket that keeps calls within its documented
//! rate limit (and honours a `Retry-After` it sends), and a circuit breaker that stops calling a
//! provider that keeps failing, so a panel gets a clear error at once instead of waiting out
//! timeouts and retries against a host that is down.
//!
//! Both are plain state machines over a caller-given `Instant`, so they are tested without
//! sleeping; knows nothing of HTTP or specs.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A token bucket: `capacity` requests at once, refilled at `capacity / per`.
#[derive(Debug)]
pub struct Bucket {
    capacity: f64,
    per_sec: f64,
    state: Mutex<BucketState>,
}

#[derive(Debug)]
struct BucketState {
    /// May go negative: each reservation not yet covered is a caller waiting its turn.
    tokens: f64,
    at: Instant,
    /// No request before this instant (a `Retry-After` from the provider).
    hold_until: Option<Instant>,
}

impl Bucket {
    /// `requests` per `per`, bursts of up to `requests`.
    pub fn new(requests: u32, per: Duration, now: Instant) -> Self {
        let capacity = f64::from(requests.max(1));
        let per_sec = capacity / per.as_secs_f64().max(0.001);
        Self {
            capacity,
            per_sec,
            state: Mutex::new(BucketState { tokens: capacity, at: now, hold_until: None }),
        }
    }

    /// Reserves one request: how long to wait before sending it. When the wait would exceed
    /// `max_wait`, nothing is reserved and the wait is returned as the error.
    pub fn reserve(&self, now: Instant, max_wait: Duration) -> Result<Duration, Duration> {
        let mut s = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let elapsed = now.saturating_duration_since(s.at).as_secs_f64();
        s.tokens = (s.tokens + elapsed * self.per_sec).min(self.capacity);
        s.at = now;
        let held = s.hold_until.map_or(Duration::ZERO, |t| t.saturating_duration_since(now));
        let deficit = (1.0 - s.tokens).max(0.0);
        let wait = held.max(Duration::from_secs_f64(deficit / self.per_sec));
        if wait > max_wait {
            return Err(wait);
        }
        s.tokens -= 1.0;
        Ok(wait)
    }

    /// No request before `until` (the provider said `Retry-After`).
    pub fn hold(&self, until: Instant) {
        let mut s = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        s.hold_until = Some(s.hold_until.map_or(until, |t| t.max(until)));
    }
}

/// Consecutive provider-side failures (network, timeout, 429, 5xx) that open the breaker.
pub const BREAKER_THRESHOLD: u32 = 5;
/// How long an open breaker refuses calls before letting one probe through.
pub const BREAKER_COOLDOWN: Duration = Duration::from_secs(30);

/// A circuit breaker: closed (calls go through), open (calls fail at once) after
/// [`BREAKER_THRESHOLD`] failures in a row, half-open after the cooldown (one probe call; its
/// success closes the breaker, its failure opens it again).
#[derive(Debug)]
pub struct Breaker {
    threshold: u32,
    cooldown: Duration,
    state: Mutex<BreakerState>,
}

#[derive(Debug, Clone)]
enum BreakerState {
    Closed { failures: u32, last: Option<String> },
    Open { until: Instant, failures: u32, last: String },
    HalfOpen { last: String },
}

/// Why the breaker refused a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Open {
    /// Failures in a row that opened it.
    pub failures: u32,
    /// The last failure's message.
    pub last: String,
    /// When a call will be tried again.
    pub retry_in: Duration,
}

impl std::fmt::Display for Open {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "failed {} times in a row (last: {}); not calling it again for {} s",
            self.failures,
            self.last,
            self.retry_in.as_secs().max(1)
        )
    }
}

impl Default for Breaker {
    fn default() -> Self {
        Self::new(BREAKER_THRESHOLD, BREAKER_COOLDOWN)
    }
}

impl Breaker {
    /// A breaker opening after `threshold` failures in a row for `cooldown`.
    pub fn new(threshold: u32, cooldown: Duration) -> Self {
        Self {
            threshold: threshold.max(1),
            cooldown,
            state: Mutex::new(BreakerState::Closed { failures: 0, last: None }),
        }
    }

    /// Whether a call may go out now. After the cooldown exactly one caller gets through (the
    /// probe); the others are refused until it reports.
    pub fn admit(&self, now: Instant) -> Result<(), Open> {
        let mut s = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match s.clone() {
            BreakerState::Closed { .. } => Ok(()),
            BreakerState::Open { until, last, .. } if now >= until => {
                *s = BreakerState::HalfOpen { last };
                Ok(())
            }
            BreakerState::Open { until, failures, last } => {
                Err(Open { failures, last, retry_in: until - now })
            }
            BreakerState::HalfOpen { last } => {
                Err(Open { failures: self.threshold, last, retry_in: Duration::from_secs(1) })
            }
        }
    }

    /// Reports how an admitted call went: `Ok` closes, a provider-side failure counts.
    pub fn record(&self, now: Instant, outcome: Result<(), &str>) {
        let mut s = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let next = match (outcome, s.clone()) {
            (Ok(()), _) => BreakerState::Closed { failures: 0, last: None },
            (Err(m), BreakerState::HalfOpen { .. }) => BreakerState::Open {
                until: now + self.cooldown,
                failures: self.threshold,
                last: m.to_owned(),
            },
            (Err(m), BreakerState::Closed { failures, .. }) if failures + 1 >= self.threshold => {
                BreakerState::Open {
                    until: now + self.cooldown,
                    failures: failures + 1,
                    last: m.to_owned(),
                }
            }
            (Err(m), BreakerState::Closed { failures, .. }) => {
                BreakerState::Closed { failures: failures + 1, last: Some(m.to_owned()) }
            }
            // A call admitted before the breaker opened reports late: keep it open.
            (Err(_), open @ BreakerState::Open { .. }) => open,
        };
        *s = next;
    }

    /// Whether it refuses calls now (open; half-open lets its one probe through).
    pub fn is_open(&self) -> bool {
        matches!(
            *self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner),
            BreakerState::Open { .. }
        )
    }

    /// `closed`, `open` or `half-open`, and the last failure if any (for `sdk check`).
    pub fn state(&self) -> (&'static str, Option<String>) {
        let s = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match &*s {
            BreakerState::Closed { last, .. } => ("closed", last.clone()),
            BreakerState::Open { last, .. } => ("open", Some(last.clone())),
            BreakerState::HalfOpen { last } => ("half-open", Some(last.clone())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn a_bucket_allows_a_burst_then_paces_at_the_rate() {
        let t0 = Instant::now();
        let b = Bucket::new(2, Duration::from_secs(1), t0);
        assert_eq!(b.reserve(t0, Duration::ZERO), Ok(Duration::ZERO));
        assert_eq!(b.reserve(t0, Duration::ZERO), Ok(Duration::ZERO));
        // Empty: the third waits half a second (2 per second), the fourth a whole one.
        assert_eq!(b.reserve(t0, Duration::ZERO), Err(500 * MS));
        assert_eq!(b.reserve(t0, Duration::from_secs(5)), Ok(500 * MS));
        assert_eq!(b.reserve(t0, Duration::from_secs(5)), Ok(1000 * MS));
        // Refills with time, never above capacity.
        let later = t0 + Duration::from_secs(60);
        assert_eq!(b.reserve(later, Duration::ZERO), Ok(Duration::ZERO));
        assert_eq!(b.reserve(later, Duration::ZERO), Ok(Duration::ZERO));
        assert!(b.reserve(later, Duration::ZERO).is_err());
    }

    #[test]
    fn a_bucket_honours_a_hold() {
        let t0 = Instant::now();
        let b = Bucket::new(10, Duration::from_secs(1), t0);
        b.hold(t0 + Duration::from_secs(3));
        assert_eq!(b.reserve(t0, Duration::from_secs(1)), Err(Duration::from_secs(3)));
        assert_eq!(b.reserve(t0 + Duration::from_secs(3), Duration::ZERO), Ok(Duration::ZERO));
    }

    #[test]
    fn a_breaker_opens_after_failures_in_a_row_and_probes_after_the_cooldown() {
        let t0 = Instant::now();
        let b = Breaker::new(3, Duration::from_secs(30));
        b.record(t0, Err("HTTP 503"));
        b.record(t0, Err("HTTP 503"));
        b.record(t0, Ok(())); // a success resets the count
        b.record(t0, Err("HTTP 503"));
        b.record(t0, Err("HTTP 503"));
        assert!(b.admit(t0).is_ok());
        b.record(t0, Err("timed out"));
        let open = b.admit(t0 + Duration::from_secs(10)).unwrap_err();
        assert_eq!((open.failures, open.last.as_str()), (3, "timed out"));
        assert_eq!(open.retry_in, Duration::from_secs(20));
        assert!(open.to_string().contains("failed 3 times in a row (last: timed out)"));
        // After the cooldown one probe goes through and the rest wait for it.
        let t1 = t0 + Duration::from_secs(31);
        assert!(b.admit(t1).is_ok());
        assert!(b.admit(t1).is_err());
        b.record(t1, Err("HTTP 502"));
        assert!(b.admit(t1 + Duration::from_secs(1)).is_err());
        let t2 = t1 + Duration::from_secs(31);
        assert!(b.admit(t2).is_ok());
        b.record(t2, Ok(()));
        assert!(b.admit(t2).is_ok());
        assert_eq!(b.state().0, "closed");
    }
}
