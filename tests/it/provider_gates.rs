//! Being a good client of a provider, counted at a loopback upstream: the circuit breaker stops
//! calling a provider that keeps failing, the rate limit from its definition file caps calls,
//! and the next provider serves only when fallback is allowed (and its answer says so).

#![allow(clippy::unwrap_used)]

use boardsmith::sdk::provider::def::ProviderDef;
use boardsmith::sdk::{Registry, Sdk, SdkConfig, SourceSpec};
use serde_json::{Value, json};

use crate::support::upstream::{Reply, Server};

/// A source whose one method is served by provider `flaky` at `origin` + `/data`, then demo.
fn source(origin: &str) -> SourceSpec {
    serde_json::from_value(json!({
        "name": "probe", "displayName": "Probe", "description": "d",
        "methods": [{
            "name": "get", "description": "d",
            "params": [{"name": "symbol", "type": "string", "default": "XAUUSD", "description": "s"},
                       {"name": "n", "type": "integer", "default": 0, "description": "n"}],
            "returns": {"type": "array", "description": "r"},
            "providers": [
                {"provider": "flaky", "backing": {"kind": "http", "url": format!("{origin}/data"),
                 "query": {"n": "{n}"}, "retries": 0}},
                {"provider": "demo", "backing": {"kind": "builtin", "generator": "kline"}}
            ]
        }]
    }))
    .unwrap()
}

fn sdk(srv: &Server, defs: Vec<ProviderDef>, fallback: bool) -> Sdk {
    let registry = Registry::build(vec![source(&srv.origin)], defs, &|_| true).unwrap();
    let config =
        SdkConfig { outbound_allow: vec![srv.origin.clone()], fallback, ..SdkConfig::default() };
    Sdk::with_registry(registry, config).unwrap()
}

#[tokio::test]
async fn a_failing_provider_is_cut_off_after_five_failures_in_a_row() {
    let srv = Server::start().await;
    srv.on("/data", vec![Reply::Body(503, r#"{"error":"down"}"#.into())]);
    let sdk = sdk(&srv, Vec::new(), false);
    for n in 0..5 {
        let e = sdk.call("probe", "get", json!({"n": n})).await.unwrap_err().to_string();
        assert!(e.contains("provider flaky is unavailable: HTTP 503"), "{e}");
        assert!(e.contains("BOARDSMITH_DATA_FALLBACK=1 would let the next provider serve"), "{e}");
    }
    assert_eq!(srv.hits("/data"), 5);
    // Open: the next calls fail at once, naming the failures, without reaching the provider.
    let started = std::time::Instant::now();
    let e = sdk.call("probe", "get", json!({"n": 99})).await.unwrap_err().to_string();
    assert!(e.contains("provider flaky failed 5 times in a row (last: HTTP 503"), "{e}");
    assert!(e.contains("not calling it again for"), "{e}");
    assert!(started.elapsed() < std::time::Duration::from_secs(1));
    assert_eq!(srv.hits("/data"), 5, "no request while the breaker is open");
}

#[tokio::test]
async fn the_next_provider_serves_only_when_fallback_is_allowed() {
    let srv = Server::start().await;
    srv.on("/data", vec![Reply::Body(502, "bad gateway".into())]);
    let strict = sdk(&srv, Vec::new(), false);
    let e = strict.call("probe", "get", Value::Null).await.unwrap_err().to_string();
    assert!(e.contains("HTTP 502"), "no silent switch to demo: {e}");

    let lenient = sdk(&srv, Vec::new(), true);
    let a = lenient.call("probe", "get", Value::Null).await.unwrap();
    assert_eq!((a.provenance.provider.as_str(), a.provenance.demo), ("demo", true));
    // A forced provider never falls back.
    let e = lenient.call("probe", "get", json!({"provider": "flaky"})).await.unwrap_err();
    assert!(e.to_string().contains("HTTP 502"), "{e}");
    // A request the provider rejects (4xx) is the caller's problem, not a reason to switch.
    srv.on("/data", vec![Reply::Body(400, r#"{"code":-1121,"msg":"Invalid symbol."}"#.into())]);
    let e = lenient.call("probe", "get", json!({"n": 7})).await.unwrap_err().to_string();
    assert!(e.contains("Invalid symbol"), "{e}");
}

#[tokio::test]
async fn the_rate_limit_of_the_definition_file_caps_calls() {
    let srv = Server::start().await;
    srv.on("/data", vec![Reply::Body(200, "[]".into())]);
    let def: ProviderDef = serde_json::from_value(json!({
        "name": "flaky", "displayName": "Flaky", "docs": "https://example.com/docs",
        "terms": "t", "rateLimit": {"requests": 2, "perSecs": 60}
    }))
    .unwrap();
    let sdk = sdk(&srv, vec![def], false);
    sdk.call("probe", "get", json!({"n": 1})).await.unwrap();
    sdk.call("probe", "get", json!({"n": 2})).await.unwrap();
    // The third would wait 30 s for its turn: it fails at once saying so.
    let e = sdk.call("probe", "get", json!({"n": 3})).await.unwrap_err().to_string();
    assert!(e.contains("too many requests to this provider right now"), "{e}");
    assert!(e.contains("try again in 30 s") || e.contains("try again in 29 s"), "{e}");
    assert_eq!(srv.hits("/data"), 2);
    // Cached answers cost nothing.
    sdk.call("probe", "get", json!({"n": 1})).await.unwrap();
    assert_eq!(srv.hits("/data"), 2);
}

#[tokio::test]
async fn a_stale_answer_is_served_at_once_while_one_request_renews_it() {
    use std::time::{Duration, Instant};
    let srv = Server::start().await;
    let slow = Reply::Slow(Duration::from_millis(600), "[2]".into());
    srv.on("/data", vec![Reply::Body(200, "[1]".into()), slow]);
    let mut spec = source(&srv.origin);
    spec.methods[0].ttl_secs = Some(1);
    let registry = Registry::build(vec![spec], Vec::new(), &|_| true).unwrap();
    let config = SdkConfig { outbound_allow: vec![srv.origin.clone()], ..SdkConfig::default() };
    let sdk = Sdk::with_registry(registry, config).unwrap().into_shared();
    let first = sdk.call("probe", "get", Value::Null).await.unwrap();
    assert_eq!(first.value, json!([1]));
    tokio::time::sleep(Duration::from_millis(1100)).await;
    // Expired: every caller gets the old answer at once (its fetch time says how old) while
    // one request renews it in the background.
    let started = Instant::now();
    let calls = (0..10).map(|_| sdk.call("probe", "get", Value::Null));
    for a in futures::future::join_all(calls).await {
        let a = a.unwrap();
        assert_eq!((&a.value, a.provenance.fetched_at), (&json!([1]), first.provenance.fetched_at));
    }
    assert!(started.elapsed() < Duration::from_millis(400), "nobody waited on the renewal");
    tokio::time::sleep(Duration::from_millis(900)).await;
    let renewed = sdk.call("probe", "get", Value::Null).await.unwrap();
    assert_eq!(renewed.value, json!([2]));
    assert!(renewed.provenance.fetched_at > first.provenance.fetched_at);
    assert_eq!(srv.hits("/data"), 2, "one request per expiry");
}
