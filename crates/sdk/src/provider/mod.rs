//! Providers behind a method: one standard output shape, served by whichever provider applies.
//!
//! A method lists its providers in order (`providers: [{provider, when?, enabledBy?, backing}]`;
//! a method without the list has one provider, its backing). Per call the first provider whose
//! `when` patterns match the params and whose [`Status`] is usable serves it; a `provider` param
//! forces one, and then a reason it cannot serve is an error, never a silent substitute. Demo
//! (the built-in generators) is only ever chosen by its place in the order, and its answers say
//! so ([`base::provenance`]).
//!
//! Owns the selection rule and the statuses; knows nothing of HTTP or caching.

pub mod def;

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::spec::{MethodSpec, Registry, SourceSpec};

pub use super::spec::{PROVIDER_PARAM, Pattern, ProviderSpec};

/// Whether a provider can serve calls here and now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// A real provider, ready.
    Live,
    /// The built-in generators: always available, invented numbers.
    Demo,
    /// A real provider whose key variable is not set.
    NeedsKey(String),
    /// Switched off: its `enabledBy` variable is unset, or it needs the network and the server
    /// is offline (`BOARDSMITH_OFFLINE=1`: demo data and the user's files only).
    Disabled(String),
}

impl Status {
    /// `live`, `demo`, `needs-key`, `disabled` (as `boardsmith sdk list --json` prints them).
    pub fn as_str(&self) -> &'static str {
        match self {
            Status::Live => "live",
            Status::Demo => "demo",
            Status::NeedsKey(_) => "needs-key",
            Status::Disabled(_) => "disabled",
        }
    }

    /// Whether calls may go to it.
    pub fn usable(&self) -> bool {
        matches!(self, Status::Live | Status::Demo)
    }

    /// Why it cannot serve, and what to do, for an error a model or user can act on.
    pub fn reason(&self) -> String {
        match self {
            Status::Live | Status::Demo => "available".to_owned(),
            Status::NeedsKey(var) => {
                format!("needs an API key: the environment variable {var} is not set")
            }
            Status::Disabled(var) if var == OFFLINE_VAR => {
                format!("the server is offline ({OFFLINE_VAR}=1): no network data")
            }
            Status::Disabled(var) => format!("disabled: set {var}=1 to enable it"),
        }
    }
}

/// The variable that leaves only demo providers.
pub const OFFLINE_VAR: &str = "BOARDSMITH_OFFLINE";

/// The variable that lets the next provider serve when the chosen one is unavailable.
pub const FALLBACK_VAR: &str = "BOARDSMITH_DATA_FALLBACK";

/// How the SDK judges a provider: its key, its switch, the offline flag.
pub trait Judge {
    /// The status of `p` of `source` here and now.
    fn status(&self, source: &SourceSpec, p: &ProviderSpec) -> Status;
}

/// A method's providers in order: its `providers`, or one made of its backing (named by
/// [`Backing::origin`], switched by the source's `enabledBy`).
pub fn providers_of(src: &SourceSpec, m: &MethodSpec) -> Vec<ProviderSpec> {
    if !m.providers.is_empty() {
        return m.providers.clone();
    }
    let backing = m.backing.clone().unwrap_or_else(|| src.backing.clone());
    let (name, _) = backing.origin(&src.name);
    vec![ProviderSpec {
        provider: name.to_owned(),
        when: BTreeMap::new(),
        enabled_by: src.enabled_by.clone(),
        omits: Vec::new(),
        backing,
    }]
}

/// Every HTTP provider entry of `registry`, method by method, with its source and method (a
/// provider serving several methods comes once for each).
pub fn every_http(
    registry: &Registry,
) -> impl Iterator<Item = (&SourceSpec, &MethodSpec, ProviderSpec)> {
    registry
        .sources()
        .flat_map(|s| {
            s.methods
                .iter()
                .flat_map(move |m| providers_of(s, m).into_iter().map(move |p| (s, m, p)))
        })
        .filter(|(_, _, p)| matches!(p.backing, super::Backing::Http(_)))
}

/// Every variable that points an `http` backing of `registry` elsewhere
/// (`BOARDSMITH_<PROVIDER>_BASE_URL` and the ones backings name themselves): what tests, benches
/// and air-gapped setups set to reach no real host.
pub fn base_url_vars(registry: &Registry) -> std::collections::BTreeSet<String> {
    every_http(registry)
        .filter_map(|(_, _, p)| match p.backing {
            super::Backing::Http(h) => h.base_url_env,
            _ => None,
        })
        .collect()
}

/// Takes the `provider` param out of a call's params (it is not the method's own).
pub fn take_forced(params: Value) -> Result<(Option<String>, Value), String> {
    let Value::Object(mut map) = params else { return Ok((None, params)) };
    match map.remove(PROVIDER_PARAM) {
        None | Some(Value::Null) => Ok((None, Value::Object(map))),
        Some(Value::String(s)) => Ok((Some(s), Value::Object(map))),
        Some(other) => Err(format!("`{PROVIDER_PARAM}` must be a provider name, got {other}")),
    }
}

/// Why no provider serves a call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unserved {
    /// The `provider` param names none of the method's providers.
    #[error("unknown provider `{given}`; this method's providers: {known}")]
    Unknown {
        /// The name given.
        given: String,
        /// The method's providers, comma-separated.
        known: String,
    },
    /// The forced provider cannot serve it.
    #[error("provider `{provider}` cannot serve this call: {reason}")]
    Forced {
        /// The provider.
        provider: String,
        /// Its status reason or the `when` pattern that failed.
        reason: String,
    },
    /// No provider applies and is usable.
    #[error("no provider can serve this call: {0}")]
    None(String),
}

/// Picks the provider for `params`: the forced one, or the first that applies and is usable.
pub fn choose(
    src: &SourceSpec,
    providers: Vec<ProviderSpec>,
    forced: Option<&str>,
    params: &Map<String, Value>,
    judge: &dyn Judge,
) -> Result<ProviderSpec, Unserved> {
    if let Some(name) = forced {
        let known = providers.iter().map(|p| p.provider.as_str()).collect::<Vec<_>>().join(", ");
        // Of several entries of the provider (split by `when`), the one for these params.
        let mut same: Vec<ProviderSpec> =
            providers.into_iter().filter(|p| p.provider == name).collect();
        let at = same.iter().position(|p| p.mismatch(params).is_none()).unwrap_or(0);
        if same.is_empty() {
            return Err(Unserved::Unknown { given: name.to_owned(), known });
        }
        let p = same.swap_remove(at);
        let status = judge.status(src, &p);
        if !status.usable() {
            return Err(Unserved::Forced { provider: p.provider, reason: status.reason() });
        }
        if let Some(reason) = p.mismatch(params) {
            return Err(Unserved::Forced { provider: p.provider, reason });
        }
        return Ok(p);
    }
    let mut skipped = Vec::new();
    for p in providers {
        let status = judge.status(src, &p);
        if !status.usable() {
            skipped.push(format!("{} {}", p.provider, status.reason()));
        } else if let Some(reason) = p.mismatch(params) {
            skipped.push(format!("{} does not apply ({reason})", p.provider));
        } else {
            return Ok(p);
        }
    }
    Err(Unserved::None(skipped.join("; ")))
}

/// The registry as sandboxed `search` code sees it: `{sources: [...]}` without backings, each
/// method with its providers and their status as `judge` sees them.
pub fn public_json(registry: &Registry, judge: &dyn Judge) -> Value {
    let sources: Vec<Value> = registry
        .sources()
        .map(|s| {
            let methods: Vec<Value> = s
                .methods
                .iter()
                .map(|m| {
                    // Who serves it here and now; `demo` when no live provider can.
                    let providers: Vec<Value> = providers_of(s, m)
                        .iter()
                        .map(|p| {
                            let mut row = serde_json::json!({
                                "name": p.provider,
                                "status": judge.status(s, p).as_str(),
                            });
                            if !p.when.is_empty() {
                                row["when"] = serde_json::json!(p.when);
                            }
                            if !p.omits.is_empty() {
                                row["omits"] = serde_json::json!(p.omits);
                            }
                            row
                        })
                        .collect();
                    let live = providers.iter().any(|p| p["status"] == "live");
                    let first = providers
                        .iter()
                        .find(|p| p["status"] == "live" || p["status"] == "demo")
                        .map(|p| p["name"].clone())
                        .unwrap_or(Value::Null);
                    serde_json::json!({
                        "name": m.name,
                        "description": m.description,
                        "params": m.params,
                        "returns": m.returns,
                        "provider": first,
                        "providers": providers,
                        "demo": !live,
                    })
                })
                .collect();
            serde_json::json!({
                "name": s.name,
                "displayName": s.display_name,
                "description": s.description,
                "tags": s.tags,
                "methods": methods,
            })
        })
        .collect();
    serde_json::json!({ "sources": sources })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    struct Fixed(Vec<(&'static str, Status)>);

    impl Judge for Fixed {
        fn status(&self, _: &SourceSpec, p: &ProviderSpec) -> Status {
            self.0.iter().find(|(n, _)| *n == p.provider).map_or(Status::Live, |(_, s)| s.clone())
        }
    }

    fn source() -> SourceSpec {
        serde_json::from_value(json!({
            "name": "market", "displayName": "M", "description": "d",
            "methods": [{
                "name": "getKline", "description": "d",
                "params": [{"name": "symbol", "type": "string", "description": "s"}],
                "returns": {"type": "array", "description": "r"},
                "providers": [
                    {"provider": "binance", "when": {"symbol": "(?i)^[A-Z0-9]+USDT$"},
                     "backing": {"kind": "http", "url": "https://api.binance.com/api/v3/klines",
                                 "response": {}}},
                    {"provider": "demo", "backing": {"kind": "builtin", "generator": "kline"}}
                ]
            }]
        }))
        .unwrap()
    }

    fn pick(judge: &Fixed, forced: Option<&str>, symbol: &str) -> Result<String, Unserved> {
        let src = source();
        let params = json!({"symbol": symbol});
        let ps = providers_of(&src, &src.methods[0]);
        choose(&src, ps, forced, params.as_object().unwrap(), judge).map(|p| p.provider)
    }

    #[test]
    fn the_first_provider_that_applies_and_is_usable_serves() {
        let all_live = Fixed(vec![("demo", Status::Demo)]);
        assert_eq!(pick(&all_live, None, "btcusdt").unwrap(), "binance");
        assert_eq!(pick(&all_live, None, "XAUUSD").unwrap(), "demo");
        let off =
            Fixed(vec![("binance", Status::Disabled(OFFLINE_VAR.into())), ("demo", Status::Demo)]);
        assert_eq!(pick(&off, None, "BTCUSDT").unwrap(), "demo");
    }

    #[test]
    fn a_forced_provider_serves_or_says_why_not() {
        let live = Fixed(vec![("demo", Status::Demo)]);
        assert_eq!(pick(&live, Some("demo"), "BTCUSDT").unwrap(), "demo");
        let e = pick(&live, Some("binance"), "XAUUSD").unwrap_err().to_string();
        assert!(e.contains("symbol=XAUUSD does not match"), "{e}");
        let e = pick(&live, Some("nope"), "BTCUSDT").unwrap_err().to_string();
        assert_eq!(e, "unknown provider `nope`; this method's providers: binance, demo");
        let keyless = Fixed(vec![("binance", Status::NeedsKey("BINANCE_KEY".into()))]);
        let e = pick(&keyless, Some("binance"), "BTCUSDT").unwrap_err().to_string();
        assert!(
            e.ends_with("needs an API key: the environment variable BINANCE_KEY is not set"),
            "{e}"
        );
    }

    #[test]
    fn nothing_usable_names_every_reason() {
        let none = Fixed(vec![
            ("binance", Status::Disabled("BOARDSMITH_LIVE_BINANCE".into())),
            ("demo", Status::Disabled(OFFLINE_VAR.into())),
        ]);
        let e = pick(&none, None, "BTCUSDT").unwrap_err().to_string();
        assert!(e.contains("binance disabled: set BOARDSMITH_LIVE_BINANCE=1"), "{e}");
    }

    #[test]
    fn patterns_are_checked_when_the_spec_is_read() {
        let bad = json!({"provider": "x", "when": {"symbol": "("}, "backing": {"kind": "builtin"}});
        let e = serde_json::from_value::<ProviderSpec>(bad).unwrap_err().to_string();
        assert!(e.contains("regex parse error"), "{e}");
    }
}
