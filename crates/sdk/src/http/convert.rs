//! Value conversions of mapped fields: the `as` of a field (`number`, `ms_to_s`, `tenor`, ...),
//! the placeholders providers send for "no value", numeric and ISO date parsing, and the short
//! description of a value that error messages quote. A leaf of `http`: mapping, transform and
//! xbrl all convert with it.

use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Number, Value};

/// What providers send for "no value" in numeric and date fields.
pub(super) const PLACEHOLDERS: &[&str] = &["", ".", "null", "N/A", "n/a", "NaN", "-"];

/// Value conversions.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Conv {
    /// As is.
    #[default]
    Raw,
    /// A number, parsing numeric strings (`"123.4"` → 123.4).
    Number,
    /// A string (numbers and booleans are formatted).
    String,
    /// Epoch milliseconds (number or numeric string) → epoch seconds (integer).
    MsToS,
    /// ISO 8601 date or date-time string (UTC if no offset) → epoch seconds (integer).
    IsoToS,
    /// A date or date-time in the field's `format` (UTC) → epoch seconds.
    Date,
    /// A string, upper-cased.
    Upper,
    /// A string, lower-cased.
    Lower,
    /// A maturity label (`"1 Mo"`, `"1.5 Month"`, `"2 Yr"`) → the standard tenor (`"1M"`,
    /// `"1.5M"`, `"2Y"`; [`super::tenor`]).
    Tenor,
    /// A maturity label → the maturity in years (`"6 Mo"` → 0.5).
    Years,
}

impl Conv {
    /// The default of a field that says nothing (serde's `default`).
    pub(super) fn string() -> Self {
        Self::String
    }
}

/// Short description of a value for error messages.
pub fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) => {
            format!("string \"{}\"", base::text::clip(s, 40))
        }
        Value::Array(a) => format!("an array of {} items", a.len()),
        Value::Object(o) => {
            let keys: Vec<&str> = o.keys().take(6).map(String::as_str).collect();
            let more = if o.len() > 6 { ", …" } else { "" };
            format!("an object with keys [{}{more}]", keys.join(", "))
        }
    }
}

/// Applies one conversion.
pub fn convert(v: &Value, conv: Conv) -> Result<Value, String> {
    match conv {
        Conv::Raw => Ok(v.clone()),
        Conv::Number => to_number(v)
            .ok_or_else(|| format!("expected a number or numeric string, got {}", describe(v))),
        Conv::String => match v {
            Value::String(s) => Ok(Value::String(s.clone())),
            Value::Number(n) => Ok(Value::String(n.to_string())),
            Value::Bool(b) => Ok(Value::String(b.to_string())),
            other => Err(format!("expected a string, got {}", describe(other))),
        },
        Conv::MsToS => {
            let n = to_number(v).and_then(|n| n.as_f64()).ok_or_else(|| {
                format!("expected epoch milliseconds (number), got {}", describe(v))
            })?;
            Ok(Value::from((n / 1000.0).floor() as i64))
        }
        Conv::IsoToS => match v {
            Value::String(s) => parse_iso(s)
                .map(Value::from)
                .ok_or_else(|| format!("expected an ISO 8601 date, got {}", describe(v))),
            Value::Number(_) => Ok(v.clone()),
            other => Err(format!("expected an ISO 8601 date string, got {}", describe(other))),
        },
        Conv::Date => date(v, DEFAULT_DATE),
        Conv::Upper | Conv::Lower => match convert(v, Conv::String)? {
            Value::String(s) if conv == Conv::Upper => Ok(Value::String(s.to_uppercase())),
            Value::String(s) => Ok(Value::String(s.to_lowercase())),
            other => Ok(other),
        },
        Conv::Tenor | Conv::Years => {
            let t = v.as_str().and_then(super::tenor::Tenor::parse).ok_or_else(|| {
                format!("expected a maturity like `3 Mo` or `10 Yr`, got {}", describe(v))
            })?;
            Ok(match conv {
                Conv::Tenor => Value::String(t.label()),
                _ => super::expr::to_json(Some(t.years())),
            })
        }
    }
}

/// A JSON number, or a numeric string parsed (integers stay integers).
pub fn to_number(v: &Value) -> Option<Value> {
    match v {
        Value::Number(_) => Some(v.clone()),
        Value::String(s) => parse_number(s),
        _ => None,
    }
}

/// Parses a numeric string; `None` for anything else (including NaN/inf).
pub fn parse_number(s: &str) -> Option<Value> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    if let Ok(i) = s.parse::<i64>() {
        return Some(Value::from(i));
    }
    // Only plain decimal notation: Rust also accepts "inf", "NaN", "infinity".
    if !s.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E')) {
        return None;
    }
    s.parse::<f64>().ok().and_then(Number::from_f64).map(Value::Number)
}

/// Parses `2024-01-02`, `2024-01-02T10:00:00Z`, `2024-01-02T10:00:00+02:00`,
/// `2024-01-02 10:00:00`, `2024-01-02T10:00` (no offset → UTC) into epoch seconds.
pub fn parse_iso(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Ok(d) = DateTime::parse_from_rfc3339(s) {
        return Some(d.timestamp());
    }
    if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        return d.and_hms_opt(0, 0, 0).map(|t| t.and_utc().timestamp());
    }
    for fmt in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M"]
    {
        if let Ok(d) = NaiveDateTime::parse_from_str(s, fmt) {
            return Some(d.and_utc().timestamp());
        }
    }
    if let Ok(d) = DateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S%#z") {
        return Some(d.with_timezone(&Utc).timestamp());
    }
    None
}

/// The format of a `date` field that names none.
pub const DEFAULT_DATE: &str = "%Y-%m-%d";

/// A date string in `format` (UTC) as epoch seconds.
pub fn date(v: &Value, format: &str) -> Result<Value, String> {
    let s = match v {
        Value::String(s) => s.trim(),
        other => return Err(format!("expected a date like `{format}`, got {}", describe(other))),
    };
    parse_dated(s, format)
        .map(Value::from)
        .ok_or_else(|| format!("expected a date like `{format}`, got {}", describe(v)))
}

/// A date or date-time in `format` (UTC) as epoch seconds. Formats chrono cannot parse alone
/// are understood too: `%Y` (a year: its 1 January), `%YQ%q` (a quarter: its first day) and
/// a month without a day (`%Y-%m`, `%YM%m`: its first day), as statistics agencies date
/// annual, quarterly and monthly data (`"2023"`, `"2025Q4"`, `"2024-06"`).
pub fn parse_dated(s: &str, format: &str) -> Option<i64> {
    let day = |y: i32, m: u32| {
        NaiveDate::from_ymd_opt(y, m, 1)
            .and_then(|d| d.and_hms_opt(0, 0, 0))
            .map(|t| t.and_utc().timestamp())
    };
    match format {
        "%Y" => return s.parse().ok().and_then(|y| day(y, 1)),
        "%YQ%q" => {
            let (y, q) = s.split_once(['Q', 'q'])?;
            let q: u32 = q.parse().ok().filter(|q| (1..=4).contains(q))?;
            return day(y.parse().ok()?, 3 * q - 2);
        }
        _ => {}
    }
    if let Ok(d) = NaiveDateTime::parse_from_str(s, format) {
        return Some(d.and_utc().timestamp());
    }
    NaiveDate::parse_from_str(s, format)
        // No day in the format: the month's first day.
        .or_else(|e| {
            if format.contains("%d") {
                Err(e)
            } else {
                NaiveDate::parse_from_str(&format!("{s}|1"), &format!("{format}|%d"))
            }
        })
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc().timestamp())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn dates_in_a_format_including_years_and_quarters() {
        assert_eq!(parse_dated("11/25/2026", "%m/%d/%Y"), Some(1_795_564_800));
        assert_eq!(parse_dated("2023", "%Y"), Some(1_672_531_200));
        assert_eq!(parse_dated("2025Q4", "%YQ%q"), Some(1_759_276_800));
        assert_eq!(parse_dated("2025Q5", "%YQ%q"), None);
        assert_eq!(parse_dated("soon", "%Y"), None);
        assert_eq!(parse_dated("2024-06", "%Y-%m"), Some(1_717_200_000));
        assert_eq!(parse_dated("2026M02", "%YM%m"), Some(1_769_904_000));
        assert_eq!(parse_dated("2024-13", "%Y-%m"), None);
    }

    #[test]
    fn iso_and_numbers() {
        assert_eq!(parse_iso("2024-01-02"), Some(1_704_153_600));
        assert_eq!(parse_iso("2024-01-02T00:00:00Z"), Some(1_704_153_600));
        assert_eq!(parse_iso("2024-01-02T02:00:00+02:00"), Some(1_704_153_600));
        assert_eq!(parse_number("inf"), None);
        assert_eq!(parse_number("1.5"), Some(json!(1.5)));
    }
}
