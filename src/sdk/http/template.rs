//! `{param}` placeholders in URLs, query values, headers and mapping paths.
//!
//! `{name}` is replaced by the param's value: strings as is, whole numbers without a decimal
//! point, booleans as `true`/`false`, arrays joined with commas. `{name|upper}` and
//! `{name|lower}` change case.

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
/// referenced param is absent (the caller decides: omit a query pair, or use empty).
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
        let inner = &after[..end];
        let (name, filter) = match inner.split_once('|') {
            Some((n, f)) => (n.trim(), Some(f.trim())),
            None => (inner.trim(), None),
        };
        match params.get(name).filter(|v| !v.is_null()) {
            Some(v) => {
                let mut s = format_value(v);
                match filter {
                    Some("upper") => s = s.to_uppercase(),
                    Some("lower") => s = s.to_lowercase(),
                    _ => {}
                }
                out.push_str(&encode(&s));
            }
            None => complete = false,
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    complete.then_some(out)
}

/// Expands without encoding; absent params become empty.
pub fn expand_plain(template: &str, params: &Map<String, Value>) -> String {
    expand_lenient(template, params, &|s| s.to_owned())
}

/// Expands; absent params become empty.
pub fn expand_lenient(
    template: &str,
    params: &Map<String, Value>,
    encode: &dyn Fn(&str) -> String,
) -> String {
    let mut filled = params.clone();
    for name in names(template) {
        filled.entry(name).or_insert(Value::String(String::new()));
    }
    expand(template, &filled, encode).unwrap_or_default()
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
