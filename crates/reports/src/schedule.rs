//! When a report runs: a cron pattern (five fields, or six with seconds first; `@daily` and
//! the like) in an IANA time zone, read by croner. Owns parsing, the shortest-gap check and
//! which scheduled time is due; knows nothing of reports' records or of rendering.

use std::str::FromStr as _;
use std::time::Duration;

use chrono::{DateTime, TimeZone as _, Utc};
use chrono_tz::Tz;
use croner::Cron;

/// How far back a missed time is still run (a node that was down for a moment); older ones
/// are skipped, not sent late.
pub const CATCH_UP: Duration = Duration::from_secs(600);

/// A parsed schedule.
#[derive(Debug, Clone)]
pub struct Schedule {
    cron: Cron,
    tz: Tz,
}

impl Schedule {
    /// `pattern` in `timezone`, refused with a sentence naming the field when it does not
    /// parse or (unless `min_gap` is zero) when it never runs or two runs come closer than
    /// `min_gap`.
    pub fn parse(pattern: &str, timezone: &str, min_gap: Duration) -> Result<Self, String> {
        let cron = Cron::from_str(pattern.trim())
            .map_err(|e| format!("cron: `{pattern}` is not a cron pattern ({e})"))?;
        let tz: Tz = timezone.parse().map_err(|_| {
            format!("timezone: `{timezone}` is not an IANA time zone (such as Europe/London)")
        })?;
        let s = Self { cron, tz };
        // Stored reports were checked when written: the scheduler reads them with no gap.
        if min_gap.is_zero() {
            return Ok(s);
        }
        // The gaps of the next runs from a fixed start: enough to catch `* * * * * *` or a
        // minute-by-minute burst inside an hour.
        let start = Utc.timestamp_opt(1_767_225_600, 0).single().unwrap_or_else(Utc::now);
        let mut at = start.with_timezone(&tz);
        let mut prev: Option<DateTime<Tz>> = None;
        for _ in 0..64 {
            let Ok(next) = s.cron.find_next_occurrence(&at, false) else {
                return Err(format!("cron: `{pattern}` never runs"));
            };
            if let Some(p) = prev {
                let gap = (next - p).to_std().unwrap_or_default();
                if gap < min_gap {
                    return Err(format!(
                        "cron: `{pattern}` runs {} apart; reports run at most every {}",
                        humantime::format_duration(gap),
                        humantime::format_duration(min_gap)
                    ));
                }
            }
            prev = Some(next);
            at = next;
        }
        Ok(s)
    }

    /// The latest scheduled time in `(after, now]` within [`CATCH_UP`] of `now`, if any.
    pub fn due(&self, after: DateTime<Utc>, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let floor = now - chrono::Duration::from_std(CATCH_UP).unwrap_or_default();
        let mut at = after.max(floor).with_timezone(&self.tz);
        let mut due = None;
        while let Ok(next) = self.cron.find_next_occurrence(&at, false) {
            if next.with_timezone(&Utc) > now {
                break;
            }
            due = Some(next.with_timezone(&Utc));
            at = next;
        }
        due
    }

    /// The next scheduled time after `now`.
    pub fn next(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.cron
            .find_next_occurrence(&now.with_timezone(&self.tz), false)
            .ok()
            .map(|t| t.with_timezone(&Utc))
    }

    /// The pattern in words ("At 08:00 on Monday").
    pub fn describe(&self) -> String {
        self.cron.describe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn utc(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn bad_patterns_zones_and_bursts_are_named() {
        let e = Schedule::parse("61 * * * *", "UTC", Duration::ZERO).unwrap_err();
        assert!(e.starts_with("cron: `61 * * * *`"), "{e}");
        let e = Schedule::parse("0 8 * * *", "Mars/Olympus", Duration::ZERO).unwrap_err();
        assert!(e.starts_with("timezone: `Mars/Olympus`"), "{e}");
        let e = Schedule::parse("* * * * *", "UTC", Duration::from_secs(300)).unwrap_err();
        assert!(e.contains("1m apart") && e.contains("every 5m"), "{e}");
        assert!(Schedule::parse("*/5 * * * *", "UTC", Duration::from_secs(300)).is_ok());
        assert!(Schedule::parse("@daily", "Europe/London", Duration::from_secs(300)).is_ok());
    }

    #[test]
    fn the_due_time_is_the_latest_passed_one_in_the_zone() {
        // 08:00 in New York is 13:00 UTC in winter.
        let s = Schedule::parse("0 8 * * *", "America/New_York", Duration::ZERO).unwrap();
        let now = utc("2026-12-01T13:00:30Z");
        assert_eq!(s.due(utc("2026-12-01T12:00:00Z"), now), Some(utc("2026-12-01T13:00:00Z")));
        assert_eq!(s.due(utc("2026-12-01T13:00:00Z"), now), None, "already run");
        assert_eq!(
            s.due(utc("2026-11-30T00:00:00Z"), utc("2026-12-01T14:00:00Z")),
            None,
            "too late"
        );
        assert_eq!(s.next(now), Some(utc("2026-12-02T13:00:00Z")));
    }

    proptest! {
        /// Whatever the last run and the clock, a due time is after the last run, not after
        /// now, within the catch-up window, and a time the pattern names; and running it
        /// leaves nothing more due.
        #[test]
        fn due_times_are_scheduled_passed_and_fresh(
            minute in 0u32..60, every in 1u32..30, last in 0i64..86_400, ahead in 0i64..7_200,
        ) {
            let pattern = format!("{minute}-59/{every} * * * *");
            let s = Schedule::parse(&pattern, "UTC", Duration::ZERO).unwrap();
            let base = utc("2026-12-01T00:00:00Z");
            let after = base + chrono::Duration::seconds(last);
            let now = after + chrono::Duration::seconds(ahead);
            if let Some(d) = s.due(after, now) {
                prop_assert!(d > after && d <= now);
                prop_assert!(now - d <= chrono::Duration::from_std(CATCH_UP).unwrap());
                prop_assert!(s.cron.is_time_matching(&d).unwrap());
                prop_assert_eq!(s.due(d, now), None);
            }
        }
    }
}
