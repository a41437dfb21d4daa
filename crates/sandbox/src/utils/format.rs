//! Number/date formatting and date parsing behind `utils.format*` and `utils.toTime`.

use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, TimeZone, Timelike, Utc};

/// Placeholder returned for missing values by every formatter.
pub const MISSING: &str = "—";

/// Inserts `,` thousands separators into the integer part of an unsigned decimal string.
fn group(digits: &str) -> String {
    let (int, frac) = digits.split_once('.').map_or((digits, None), |(a, b)| (a, Some(b)));
    let mut out = String::with_capacity(digits.len() + int.len() / 3);
    for (i, ch) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if let Some(f) = frac {
        out.push('.');
        out.push_str(f);
    }
    out
}

fn trim_zeros(s: String) -> String {
    if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s }
}

/// `{x:.decimals$}` with ties rounded away from zero (like JS `toFixed` on exact ties).
fn fixed(x: f64, decimals: usize) -> String {
    let scale = 10f64.powi(decimals as i32);
    let scaled = x * scale;
    if scaled.abs() < 1e15 && scaled.is_finite() {
        format!("{:.*}", decimals, scaled.round() / scale)
    } else {
        format!("{x:.decimals$}")
    }
}

/// Formats the absolute value of `x`: fixed `decimals` with separators, or compact
/// (K/M/B/T, trailing zeros trimmed). Returns the unsigned body; the caller adds the sign.
fn body(ax: f64, decimals: usize, compact: bool) -> String {
    if compact {
        const UNITS: [(f64, &str); 4] = [(1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")];
        for (i, (scale, unit)) in UNITS.iter().enumerate() {
            if ax >= *scale {
                let v = fixed(ax / scale, decimals);
                // 999.96K rounds to "1000.0": move to the next unit up.
                if v.parse::<f64>().unwrap_or(0.0) >= 1000.0 && i > 0 {
                    let (s2, u2) = UNITS[i - 1];
                    return format!("{}{}", trim_zeros(fixed(ax / s2, decimals)), u2);
                }
                return format!("{}{}", trim_zeros(v), unit);
            }
        }
        let v = trim_zeros(fixed(ax, decimals));
        if v == "1000" { "1K".to_string() } else { v }
    } else {
        group(&fixed(ax, decimals))
    }
}

fn sign(x: f64, body: &str, plus: bool) -> &'static str {
    let zero = body.chars().all(|c| !c.is_ascii_digit() || c == '0');
    if x < 0.0 && !zero {
        "-"
    } else if plus && x > 0.0 && !zero {
        "+"
    } else {
        ""
    }
}

/// `formatNumber`: `1,234.57`, or compact `1.2K`.
pub fn number(x: f64, decimals: usize, compact: bool, plus: bool) -> String {
    if !x.is_finite() {
        return MISSING.to_string();
    }
    let b = body(x.abs(), decimals, compact);
    format!("{}{}", sign(x, &b, plus), b)
}

/// `formatPercent`: `x` is a fraction, `0.0123` → `1.23%`.
pub fn percent(x: f64, decimals: usize, plus: bool) -> String {
    if !x.is_finite() {
        return MISSING.to_string();
    }
    format!("{}%", number(x * 100.0, decimals, false, plus))
}

/// Symbol placed before the amount and default decimals for a currency code.
pub fn currency_symbol(code: &str) -> (Option<&'static str>, usize) {
    match code {
        "USD" => (Some("$"), 2),
        "EUR" => (Some("€"), 2),
        "GBP" => (Some("£"), 2),
        "JPY" => (Some("¥"), 0),
        "CNY" => (Some("CN¥"), 2),
        "INR" => (Some("₹"), 2),
        "KRW" => (Some("₩"), 0),
        "BTC" => (Some("₿"), 8),
        _ => (None, 2),
    }
}

/// `formatCurrency`: `-$1,234.56`, `$1.2M`, or `1,234.56 CHF` for codes without a symbol.
pub fn currency(x: f64, code: &str, decimals: Option<usize>, compact: bool) -> String {
    if !x.is_finite() {
        return MISSING.to_string();
    }
    let (sym, default_dec) = currency_symbol(code);
    let b = body(x.abs(), decimals.unwrap_or(if compact { 1 } else { default_dec }), compact);
    let s = sign(x, &b, false);
    match sym {
        Some(sym) => format!("{s}{sym}{b}"),
        None => format!("{s}{b} {code}"),
    }
}

/// Seconds since the epoch from a JS number: values with magnitude ≥ 1e11 are milliseconds.
pub fn seconds_from_number(x: f64) -> f64 {
    if x.abs() >= 1e11 { (x / 1000.0).floor() } else { x.floor() }
}

const MONTHS: [&str; 12] =
    ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const WEEKDAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];

/// `formatDate`: UTC seconds with tokens YYYY YY MMM MM M DD D ddd HH H mm ss; other text is
/// copied; text inside `[...]` is copied literally.
pub fn date(secs: f64, fmt: &str) -> String {
    if !secs.is_finite() {
        return MISSING.to_string();
    }
    let Some(dt) = Utc.timestamp_opt(secs.floor() as i64, 0).single() else {
        return MISSING.to_string();
    };
    const TOKENS: [&str; 13] =
        ["YYYY", "YY", "MMM", "MM", "M", "DD", "D", "ddd", "HH", "H", "mm", "ss", "["];
    let mut out = String::new();
    let mut rest = fmt;
    'outer: while !rest.is_empty() {
        for t in TOKENS {
            if let Some(r) = rest.strip_prefix(t) {
                if t == "[" {
                    let (lit, after) = r.split_once(']').unwrap_or((r, ""));
                    out.push_str(lit);
                    rest = after;
                    continue 'outer;
                }
                out.push_str(&match t {
                    "YYYY" => format!("{:04}", dt.year()),
                    "YY" => format!("{:02}", dt.year().rem_euclid(100)),
                    "MMM" => MONTHS[dt.month0() as usize].to_string(),
                    "MM" => format!("{:02}", dt.month()),
                    "M" => dt.month().to_string(),
                    "DD" => format!("{:02}", dt.day()),
                    "D" => dt.day().to_string(),
                    "ddd" => WEEKDAYS[dt.weekday().num_days_from_monday() as usize].to_string(),
                    "HH" => format!("{:02}", dt.hour()),
                    "H" => dt.hour().to_string(),
                    "mm" => format!("{:02}", dt.minute()),
                    _ => format!("{:02}", dt.second()),
                });
                rest = r;
                continue 'outer;
            }
        }
        let mut chars = rest.chars();
        if let Some(c) = chars.next() {
            out.push(c);
        }
        rest = chars.as_str();
    }
    out
}

/// Parses a date string to UTC seconds: RFC 3339 / ISO 8601 with `Z` or an offset, or without
/// a zone (taken as UTC): `YYYY-MM-DD`, `YYYY-MM-DD HH:mm[:ss[.fff]]`, `YYYY-MM-DDTHH:mm...`,
/// `YYYY/MM/DD`, or a numeric string (seconds, or milliseconds if ≥ 1e11).
pub fn parse_date(s: &str) -> Option<f64> {
    let s = s.trim();
    if let Ok(x) = s.parse::<f64>() {
        return x.is_finite().then(|| seconds_from_number(x));
    }
    if let Ok(dt) = DateTime::parse_from_rfc3339(s) {
        return Some(dt.timestamp() as f64);
    }
    for f in [
        "%Y-%m-%d %H:%M:%S%.f%:z",
        "%Y-%m-%dT%H:%M%:z",
        "%Y-%m-%d %H:%M%:z",
        "%Y-%m-%dT%H:%M:%S%.f%z",
        "%Y-%m-%d %H:%M:%S%.f%z",
    ] {
        if let Ok(dt) = DateTime::parse_from_str(s, f) {
            return Some(dt.timestamp() as f64);
        }
    }
    let naive = s.strip_suffix('Z').unwrap_or(s);
    for f in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M",
        "%Y/%m/%d %H:%M:%S",
        "%Y/%m/%d %H:%M",
    ] {
        if let Ok(dt) = NaiveDateTime::parse_from_str(naive, f) {
            return Some(dt.and_utc().timestamp() as f64);
        }
    }
    for f in ["%Y-%m-%d", "%Y/%m/%d", "%Y%m%d"] {
        if let Ok(d) = NaiveDate::parse_from_str(naive, f) {
            return d.and_hms_opt(0, 0, 0).map(|dt| dt.and_utc().timestamp() as f64);
        }
    }
    None
}

/// A resample timeframe.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Timeframe {
    /// Fixed-length buckets of this many seconds, aligned to the epoch (weeks: to Monday).
    Seconds(i64, bool),
    /// Calendar months (n months per bucket, aligned to January).
    Months(i64),
}

/// Parses `"15m"`, `"1h"`, `"4h"`, `"1D"`, `"1W"`, `"1M"` (month), `"30s"`. Lowercase `m` is
/// minutes, uppercase `M` months; `d`/`w` may be either case; `min`, `mo` also accepted.
pub fn parse_timeframe(s: &str) -> Option<Timeframe> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: i64 = if num.is_empty() { 1 } else { num.parse().ok()? };
    if n <= 0 {
        return None;
    }
    let secs = match unit {
        "s" | "S" | "sec" => 1,
        "m" | "min" | "T" => 60,
        "h" | "H" => 3600,
        "d" | "D" => 86_400,
        "w" | "W" => return Some(Timeframe::Seconds(n * 7 * 86_400, true)),
        "M" | "mo" | "MO" => return Some(Timeframe::Months(n)),
        _ => return None,
    };
    Some(Timeframe::Seconds(n * secs, false))
}

/// Start (UTC seconds) of the bucket containing `t`.
pub fn bucket_start(t: i64, tf: Timeframe) -> i64 {
    match tf {
        Timeframe::Seconds(len, weekly) => {
            // 1970-01-05 (Monday) anchors weekly buckets.
            let anchor = if weekly { 4 * 86_400 } else { 0 };
            (t - anchor).div_euclid(len) * len + anchor
        }
        Timeframe::Months(n) => {
            let Some(dt) = Utc.timestamp_opt(t, 0).single() else { return t };
            let idx = (i64::from(dt.year()) * 12 + i64::from(dt.month0())).div_euclid(n) * n;
            let (y, m) = (idx.div_euclid(12), idx.rem_euclid(12));
            NaiveDate::from_ymd_opt(y as i32, m as u32 + 1, 1)
                .and_then(|d| d.and_hms_opt(0, 0, 0))
                .map_or(t, |d| d.and_utc().timestamp())
        }
    }
}
