//! Sign-in attempts, counted so that guessing passwords is slow: failures per account and per
//! address in a fixed window; past either limit, sign-in is refused (before any password is
//! checked) until the window ends. A success clears the account's count.
//!
//! Kept in memory per node (a guesser spread over nodes gets each node's allowance), bounded:
//! at most [`TRACKED`] keys, the stale ones dropped first. Knows nothing of HTTP or accounts.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Keys tracked at most (accounts and addresses together).
const TRACKED: usize = 10_000;

/// The limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttemptLimits {
    /// Failures one account may take in a window.
    pub per_account: u32,
    /// Failures one address may cause in a window.
    pub per_address: u32,
    /// The window.
    pub window: Duration,
}

impl Default for AttemptLimits {
    fn default() -> Self {
        Self { per_account: 5, per_address: 20, window: Duration::from_secs(15 * 60) }
    }
}

#[derive(Debug, Clone, Copy)]
struct Window {
    started: Instant,
    failures: u32,
}

/// The counts.
#[derive(Debug)]
pub struct Attempts {
    limits: AttemptLimits,
    counts: Mutex<HashMap<String, Window>>,
}

fn account_key(account: &str) -> String {
    format!("u:{}", account.trim().to_lowercase())
}

fn address_key(address: IpAddr) -> String {
    format!("a:{address}")
}

impl Attempts {
    /// No failures yet.
    pub fn new(limits: AttemptLimits) -> Self {
        Self { limits, counts: Mutex::default() }
    }

    /// `Err(wait)`: this account or address has failed too often; try again after `wait`.
    pub fn check(&self, account: &str, address: Option<IpAddr>) -> Result<(), Duration> {
        let now = Instant::now();
        let counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        let over = |key: &str, limit: u32| {
            counts.get(key).and_then(|w| {
                let end = w.started + self.limits.window;
                (w.failures >= limit && end > now).then(|| end - now)
            })
        };
        let waits = [
            over(&account_key(account), self.limits.per_account),
            address.and_then(|a| over(&address_key(a), self.limits.per_address)),
        ];
        match waits.into_iter().flatten().max() {
            Some(wait) => Err(wait.max(Duration::from_secs(1))),
            None => Ok(()),
        }
    }

    /// A failed attempt.
    pub fn failed(&self, account: &str, address: Option<IpAddr>) {
        let now = Instant::now();
        let mut counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        if counts.len() >= TRACKED {
            let window = self.limits.window;
            counts.retain(|_, w| w.started + window > now);
            if counts.len() >= TRACKED {
                // Every key is live: forget the oldest half rather than grow.
                let mut starts: Vec<Instant> = counts.values().map(|w| w.started).collect();
                starts.sort();
                let cut = starts[starts.len() / 2];
                counts.retain(|_, w| w.started > cut);
            }
        }
        let keys = std::iter::once(account_key(account)).chain(address.map(address_key));
        for key in keys {
            let w = counts.entry(key).or_insert(Window { started: now, failures: 0 });
            if w.started + self.limits.window <= now {
                *w = Window { started: now, failures: 0 };
            }
            w.failures += 1;
        }
    }

    /// A successful sign-in: the account's failures are forgotten (the address's are not).
    pub fn succeeded(&self, account: &str) {
        self.counts.lock().unwrap_or_else(PoisonError::into_inner).remove(&account_key(account));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accounts_and_addresses_are_limited_separately() {
        let a = Attempts::new(AttemptLimits {
            per_account: 3,
            per_address: 5,
            window: Duration::from_secs(60),
        });
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        let other: IpAddr = "10.0.0.2".parse().unwrap();
        for _ in 0..3 {
            assert!(a.check("Ann", Some(ip)).is_ok());
            a.failed("ann", Some(ip));
        }
        let wait = a.check("ANN", Some(other)).unwrap_err();
        assert!(wait <= Duration::from_secs(60) && wait >= Duration::from_secs(1));
        assert!(a.check("bob", Some(ip)).is_ok(), "the address has 2 left");
        a.failed("bob", Some(ip));
        a.failed("carl", Some(ip));
        assert!(a.check("dora", Some(ip)).is_err(), "the address is spent");
        assert!(a.check("dora", Some(other)).is_ok());
        a.succeeded("ann");
        assert!(a.check("ann", Some(other)).is_ok(), "a success clears the account");
    }

    #[test]
    fn windows_end_and_the_table_stays_bounded() {
        let a = Attempts::new(AttemptLimits {
            per_account: 1,
            per_address: 100,
            window: Duration::from_millis(30),
        });
        a.failed("ann", None);
        assert!(a.check("ann", None).is_err());
        std::thread::sleep(Duration::from_millis(40));
        assert!(a.check("ann", None).is_ok());
        for i in 0..(TRACKED + 10) {
            a.failed(&format!("user{i}"), None);
        }
        assert!(a.counts.lock().unwrap().len() <= TRACKED);
    }
}
