//! Who a real provider is: one file per provider in `sdk-spec/providers/` giving its
//! documentation and terms, its credential, the headers it asks for, its documented rate limit,
//! timeouts and a lookup its calls need first. When the registry is built every `http` backing of the provider inherits these,
//! so a method's declaration says only what is particular to its endpoint.
//!
//! Every `http` backing also gets the base-URL variable `BOARDSMITH_<PROVIDER>_BASE_URL` (unless
//! it names its own), so tests and air-gapped users can point any provider at a recorded
//! server. Knows nothing of selection or calls.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::http::{Auth, HttpBacking, Lookup};

/// A provider definition file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProviderDef {
    /// The name methods' `providers` entries use (`binance`, `sec`).
    pub name: String,
    /// Human-readable name.
    pub display_name: String,
    /// The name an analyst reads in one sentence ("Binance cannot be reached"), when the
    /// display name is longer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub short_name: Option<String>,
    /// Its API documentation.
    pub docs: String,
    /// Its terms of use in one line, with where to read them.
    pub terms: String,
    /// The credential its calls carry (a backing may name its own instead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<Auth>,
    /// Headers every call sends (e.g. SEC asks for a User-Agent with a contact).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Its documented rate limit; calls beyond it wait their turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limit: Option<RateLimit>,
    /// Per-attempt timeout in milliseconds for its calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// A lookup its calls make first (SEC's endpoints all want the CIK of a ticker).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lookup: Option<Box<Lookup>>,
}

/// `requests` per `perSecs` seconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RateLimit {
    /// Requests allowed in each window (also the largest burst).
    pub requests: u32,
    /// The window in seconds.
    pub per_secs: f64,
}

impl ProviderDef {
    /// The name for one sentence: the short name, else the display name.
    pub fn short(&self) -> &str {
        self.short_name.as_deref().unwrap_or(&self.display_name)
    }
}

impl RateLimit {
    /// The window as a duration.
    pub fn per(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.per_secs.max(0.001))
    }
}

impl std::fmt::Display for RateLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} requests per {} s", self.requests, self.per_secs)
    }
}

/// `BOARDSMITH_<PROVIDER>_BASE_URL`: the provider's name upper-cased, other characters as `_`.
pub fn base_url_var(provider: &str) -> String {
    let name: String = provider
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' })
        .collect();
    format!("BOARDSMITH_{name}_BASE_URL")
}

/// Fills what `backing` (served by `provider`) leaves unsaid from the provider's definition:
/// base-URL variable, credential, headers (the backing's own win), timeout, lookup.
pub fn inherit(backing: &mut HttpBacking, provider: &str, def: Option<&ProviderDef>) {
    if backing.base_url_env.is_none() {
        backing.base_url_env = Some(base_url_var(provider));
    }
    let Some(def) = def else { return };
    if backing.auth.is_none() {
        backing.auth = def.key.clone().map(Box::new);
    }
    for (name, value) in &def.headers {
        if !backing.headers.keys().any(|k| k.eq_ignore_ascii_case(name)) {
            backing.headers.insert(name.clone(), value.clone());
        }
    }
    if backing.timeout_ms.is_none() {
        backing.timeout_ms = def.timeout_ms;
    }
    if backing.lookup.is_none() {
        backing.lookup = def.lookup.clone();
    }
}

/// Parses one provider file, naming the file in errors and checking its name.
pub fn parse(file: &str, text: &str) -> Result<ProviderDef, String> {
    let def: ProviderDef = serde_json::from_str(text).map_err(|e| format!("{file}: {e}"))?;
    let ok = !def.name.is_empty()
        && def.name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !ok {
        return Err(format!(
            "{file}: provider name `{}` must be lower-case letters, digits and -",
            def.name
        ));
    }
    if let Some(limit) = def.rate_limit
        && (limit.requests == 0 || limit.per_secs.is_nan() || limit.per_secs <= 0.0)
    {
        return Err(format!(
            "{file}: rateLimit must allow at least one request per positive window"
        ));
    }
    Ok(def)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn base_url_variables_follow_the_provider_name() {
        assert_eq!(base_url_var("binance"), "BOARDSMITH_BINANCE_BASE_URL");
        assert_eq!(base_url_var("binance-futures"), "BOARDSMITH_BINANCE_FUTURES_BASE_URL");
        assert_eq!(base_url_var("us-treasury"), "BOARDSMITH_US_TREASURY_BASE_URL");
    }

    #[test]
    fn backings_inherit_what_they_leave_unsaid() {
        let def = parse(
            "sec.json",
            &json!({
                "name": "sec", "displayName": "SEC EDGAR", "docs": "https://www.sec.gov/os/accessing-edgar-data",
                "terms": "fair access", "headers": {"User-Agent": "Boardsmith admin@example.com"},
                "key": {"env": "SEC_KEY", "header": "X-Key", "optional": true},
                "rateLimit": {"requests": 10, "perSecs": 1}, "timeoutMs": 4000
            })
            .to_string(),
        )
        .unwrap();
        let mut own: HttpBacking = serde_json::from_value(json!({
            "url": "https://data.sec.gov/x", "headers": {"user-agent": "mine"}, "timeoutMs": 100
        }))
        .unwrap();
        inherit(&mut own, "sec", Some(&def));
        assert_eq!(own.base_url_env.as_deref(), Some("BOARDSMITH_SEC_BASE_URL"));
        assert_eq!(own.headers.len(), 1, "the backing's own header wins: {:?}", own.headers);
        assert_eq!(own.timeout_ms, Some(100));
        assert_eq!(own.auth.as_ref().map(|a| a.env.as_str()), Some("SEC_KEY"));
        let mut bare: HttpBacking =
            serde_json::from_value(json!({"url": "https://data.sec.gov/x"})).unwrap();
        inherit(&mut bare, "sec", Some(&def));
        assert_eq!(bare.headers["User-Agent"], "Boardsmith admin@example.com");
        assert_eq!(bare.timeout_ms, Some(4000));
    }

    #[test]
    fn bad_definitions_name_the_file() {
        let e = parse(
            "x.json",
            r#"{"name": "Bad Name", "displayName": "x", "docs": "d", "terms": "t"}"#,
        )
        .unwrap_err();
        assert!(e.starts_with("x.json: provider name `Bad Name`"), "{e}");
        let e = parse(
            "y.json",
            r#"{"name": "y", "displayName": "y", "docs": "d", "terms": "t", "rateLimit": {"requests": 0, "perSecs": 1}}"#,
        )
        .unwrap_err();
        assert!(e.contains("rateLimit"), "{e}");
        let e = parse(
            "z.json",
            r#"{"name": "z", "displayName": "z", "docs": "d", "terms": "t", "limit": 1}"#,
        )
        .unwrap_err();
        assert!(e.contains("unknown field `limit`"), "{e}");
    }
}
