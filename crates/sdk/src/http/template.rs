//! `{param}` placeholders in URLs, query values, headers and mapping paths.
//!
//! `{name}` is replaced by the param's value: strings as is, whole numbers without a decimal
//! point, booleans as `true`/`false`, arrays joined with commas. Filters, applied left to right
//! (`{symbol|slice:3:6|upper}`), turn the value into what a provider expects:
//!
//! - `upper`, `lower`: change case.
//! - `slice:FROM:TO`: characters FROM (inclusive) to TO (exclusive), 0-based; TO may be left
//!   out (`slice:3:`). `EURUSD` with `slice:0:3` is `EUR`.
//! - `map:K=V,K=V`: replace a value equal to a key (case-insensitive) by its value; other values
//!   pass unchanged (`{timeframe|map:1D=1d,1W=1w}`).
//! - `unless:A,B`: a value equal to one of these (case-insensitive) counts as absent, so the
//!   query pair or `then` step naming it is skipped (`{category|unless:all}`).
//! - `mul:K`: a number times K (`{limit|mul:1.5}`), rounded up to a whole number.
//! - `cap:N`: a number, at most N (`{limit|cap:1000}` for a provider's page-size limit).
//! - `days_ago` / `days_ago:FORMAT`: the UTC date that many days before today, as `YYYY-MM-DD`
//!   or in the `chrono` FORMAT (`{limit|days_ago}` for a range start, `{limit|days_ago:%Y}`).
//! - `today:FORMAT`: today's UTC date in the `chrono` FORMAT, whatever the value (the param only
//!   has to be present): `{tenor|today:%Y}` is the current year.
//! - `pad:N`: zero-padded on the left to N characters (`{cik|pad:10}`: `320193` → `0000320193`).
//! - `strip:CHARS`: without these characters (`{accession|strip:-}`).
//!
//! An unknown filter leaves the value unchanged.

use serde_json::{Map, Value};

/// Formats one param value for a URL or header.
pub fn format_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
            _ => n.to_string(),
        },
        Value::Bool(b) => b.to_string(),
        Value::Null => String::new(),
        Value::Array(a) => a.iter().map(format_value).collect::<Vec<_>>().join(","),
        Value::Object(_) => v.to_string(),
    }
}

/// Expands placeholders; `encode` is applied to each substituted value. Returns `None` if a
/// referenced param is absent, or a filter (`unless`) makes it so (the caller decides: omit a
/// query pair, or use empty).
pub fn expand(
    template: &str,
    params: &Map<String, Value>,
    encode: &dyn Fn(&str) -> String,
) -> Option<String> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    let mut complete = true;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            rest = "";
            break;
        };
        let mut parts = after[..end].split('|');
        let name = parts.next().unwrap_or_default().trim();
        let value = params
            .get(name)
            .filter(|v| !v.is_null())
            .and_then(|v| parts.try_fold(format_value(v), |s, f| apply_filter(s, f.trim())));
        match value {
            Some(s) => out.push_str(&encode(&s)),
            None => complete = false,
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    complete.then_some(out)
}

/// Applies one filter (`slice:0:3`); `None` when it makes the value absent.
fn apply_filter(s: String, filter: &str) -> Option<String> {
    let (name, arg) = match filter.split_once(':') {
        Some((n, a)) => (n, Some(a)),
        None => (filter, None),
    };
    let arg = arg.unwrap_or_default();
    Some(match name {
        "upper" => s.to_uppercase(),
        "lower" => s.to_lowercase(),
        "slice" => {
            let (from, to) = arg.split_once(':').unwrap_or((arg, ""));
            let from: usize = from.trim().parse().unwrap_or(0);
            let chars: Vec<char> = s.chars().collect();
            let to: usize = to.trim().parse().unwrap_or(chars.len()).min(chars.len());
            chars.get(from.min(to)..to).map(|c| c.iter().collect()).unwrap_or_default()
        }
        "map" => arg
            .split(',')
            .filter_map(|pair| pair.split_once('='))
            .find(|(k, _)| k.trim().eq_ignore_ascii_case(s.trim()))
            .map_or(s, |(_, v)| v.trim().to_owned()),
        "unless" => {
            if arg.split(',').any(|a| a.trim().eq_ignore_ascii_case(s.trim())) {
                return None;
            }
            s
        }
        "mul" => match (s.trim().parse::<f64>(), arg.trim().parse::<f64>()) {
            (Ok(x), Ok(k)) if (x * k).is_finite() => format!("{}", (x * k).ceil() as i64),
            _ => s,
        },
        "cap" => match (s.trim().parse::<f64>(), arg.trim().parse::<f64>()) {
            (Ok(x), Ok(n)) if x > n => format_value(&Value::from(n)),
            _ => s,
        },
        "today" => return format_date(chrono::Utc::now().date_naive(), arg),
        "pad" => {
            let width: usize = arg.trim().parse().unwrap_or(0).min(64);
            format!("{s:0>width$}")
        }
        "strip" => s.chars().filter(|c| !arg.contains(*c)).collect(),
        "days_ago" => {
            let days: i64 = s.trim().parse::<f64>().ok()?.round() as i64;
            let date = chrono::Utc::now().date_naive() - chrono::Duration::days(days.max(0));
            return format_date(date, if arg.is_empty() { "%Y-%m-%d" } else { arg });
        }
        _ => s,
    })
}

/// `date` in a `chrono` format; `None` for an invalid format (instead of chrono's panic).
fn format_date(date: chrono::NaiveDate, format: &str) -> Option<String> {
    use std::fmt::Write;
    let mut out = String::new();
    write!(out, "{}", date.format(format)).ok()?;
    Some(out)
}

/// Expands without encoding; absent params become empty.
pub fn expand_plain(template: &str, params: &Map<String, Value>) -> String {
    expand_lenient(template, params, &|s| s.to_owned())
}

/// Expands; absent params (and values a filter makes absent) become empty.
pub fn expand_lenient(
    template: &str,
    params: &Map<String, Value>,
    encode: &dyn Fn(&str) -> String,
) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        let Some(end) = rest[start..].find('}').map(|e| start + e) else { break };
        out.push_str(&rest[..start]);
        out.push_str(&expand(&rest[start..=end], params, encode).unwrap_or_default());
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

/// The param names a template references.
pub fn names(template: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        let after = &rest[start + 1..];
        let Some(end) = after.find('}') else { break };
        let inner = &after[..end];
        let name = inner.split('|').next().unwrap_or_default().trim();
        out.push(name.to_owned());
        rest = &after[end + 1..];
    }
    out
}

/// The fixed part of a URL template: the text before its first placeholder must hold the whole
/// `scheme://host[:port]/`, so that a param, percent-encoded by [`encode_path`], can only land
/// in the path and never change the scheme, host or port. Returns that origin as a URL.
pub fn literal_origin(template: &str) -> Result<reqwest::Url, String> {
    let literal = &template[..template.find('{').unwrap_or(template.len())];
    let bad = |why: &str| format!("url `{template}`: {why}");
    // The authority must be written out and closed by `/`: the URL parser skips extra
    // slashes (`https:///.{a}` has host `.` until `{a}` = `@` makes it userinfo) and reads
    // `\` as `/`, so "contains a `/`" is not enough.
    let authority_closed = literal.find("://").is_some_and(|i| {
        let rest = &literal[i + 3..];
        rest.find(['/', '\\', '?', '#']).is_some_and(|j| j > 0 && rest[j..].starts_with('/'))
    });
    if literal.len() < template.len() && !authority_closed {
        return Err(bad("placeholders may only follow the `/` that starts the path"));
    }
    let url = reqwest::Url::parse(literal).map_err(|e| bad(&e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(bad("expected an absolute http:// or https:// URL"));
    }
    Ok(url)
}

/// Percent-encodes everything but RFC 3986 unreserved characters (for path segments).
pub fn encode_path(s: &str) -> String {
    // `.` and `..` alone would be resolved as relative segments by the URL parser.
    if s == "." || s == ".." {
        return s.replace('.', "%2E");
    }
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn expands() {
        let p = json!({"s": "btc usdt", "n": 120.0, "ids": ["a", "b"]});
        let p = p.as_object().unwrap();
        assert_eq!(expand("/x/{s|upper}/{n}", p, &encode_path).unwrap(), "/x/BTC%20USDT/120");
        assert_eq!(expand("{ids}", p, &|s| s.to_owned()).unwrap(), "a,b");
        assert_eq!(expand("{missing}", p, &|s| s.to_owned()), None);
        assert_eq!(expand_plain("{missing}_x", p), "_x");
        assert_eq!(expand_plain("../{s}", p), "../btc usdt");
    }

    #[test]
    fn filters_chain_left_to_right() {
        let p = json!({"pair": "eurusd", "tf": "1D", "cat": "all", "dex": "DEX", "n": 10});
        let p = p.as_object().unwrap();
        let plain = |t: &str| expand(t, p, &|s| s.to_owned());
        assert_eq!(plain("{pair|slice:0:3|upper}/{pair|slice:3:|upper}").unwrap(), "EUR/USD");
        assert_eq!(plain("{pair|slice:4:99}{pair|slice:9:12}").unwrap(), "sd");
        assert_eq!(plain("{tf|map:1D=1d,1W=1w}").unwrap(), "1d");
        assert_eq!(plain("{dex|unless:all|map:dex=Dexes}").unwrap(), "Dexes");
        assert_eq!(plain("{cat|unless:all}"), None, "`unless` makes the value absent");
        assert_eq!(expand_plain("x{cat|unless:all}y{n}", p), "xy10");
        assert_eq!(plain("{n|mul:1.45}").unwrap(), "15");
        assert_eq!(plain("{n|cap:5}/{n|cap:50}/{tf|cap:5}").unwrap(), "5/10/1D");
        assert_eq!(plain("{tf|bogus}").unwrap(), "1D", "unknown filters change nothing");
    }

    #[test]
    fn pad_and_strip() {
        let p = json!({"cik": 320193, "acc": "0000320193-24-000123"}).as_object().unwrap().clone();
        assert_eq!(expand_plain("CIK{cik|pad:10}", &p), "CIK0000320193");
        assert_eq!(expand_plain("{acc|strip:-}", &p), "000032019324000123");
        assert_eq!(expand_plain("{cik|pad:3}", &p), "320193", "never truncates");
    }

    #[test]
    fn days_ago_counts_back_from_today_utc() {
        let p = json!({"n": 30, "zero": 0, "bad": "x"});
        let p = p.as_object().unwrap();
        let today = chrono::Utc::now().date_naive();
        let want = (today - chrono::Duration::days(30)).format("%Y-%m-%d").to_string();
        assert_eq!(expand("{n|days_ago}", p, &|s| s.to_owned()).unwrap(), want);
        let year = today.format("%Y").to_string();
        assert_eq!(expand("{zero|days_ago:%Y}", p, &|s| s.to_owned()).unwrap(), year);
        assert_eq!(expand("{bad|today:%Y}", p, &|s| s.to_owned()).unwrap(), year);
        assert_eq!(expand("{missing|today:%Y}", p, &|s| s.to_owned()), None);
        assert_eq!(expand("{n|today:%Q}", p, &|s| s.to_owned()), None, "bad format: absent");
        assert_eq!(expand("{bad|days_ago}", p, &|s| s.to_owned()), None);
    }

    #[test]
    fn literal_origin_requires_a_fixed_authority() {
        let origin = |t: &str| literal_origin(t).map(|u| u.origin().ascii_serialization());
        assert_eq!(origin("https://api.x.com/a/{b}").unwrap(), "https://api.x.com");
        assert_eq!(origin("http://127.0.0.1:9/{b}").unwrap(), "http://127.0.0.1:9");
        assert_eq!(origin("https://api.x.com").unwrap(), "https://api.x.com");
        for bad in [
            "https://api.x.com{path}",
            "https://{sub}.x.com/",
            "https://api.x.com:{port}/",
            "{base}/x",
            "ftp://x.com/{a}",
            "/relative/{a}",
            "https:///.{a}",
            "https:///x.com/{a}",
            "https://x.com\\{a}",
            "https://x.com?/{a}",
        ] {
            assert!(literal_origin(bad).is_err(), "{bad}");
        }
    }
}
