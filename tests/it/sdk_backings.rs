//! Integration tests for the `http` and `file` backings: the real spec files
//! (`sdk-spec/{binance,coingecko,frankfurter,userdata}.json`) served by a loopback axum server
//! replaying the documented response shapes from `tests/fixtures/`.

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::time::Duration;

use boardsmith::outage::Cause;
use boardsmith::sdk::http::{self, HttpBacking};
use boardsmith::sdk::spec::parse_spec;
use boardsmith::sdk::{Backing, Registry, Sdk, SdkConfig, SdkError, SourceSpec};
use serde_json::{Value, json};

use crate::support::upstream::{Reply, Server};

// ---------------------------------------------------------------- helpers

fn fixture(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn ok(name: &str) -> Vec<Reply> {
    vec![Reply::Body(200, fixture(name))]
}

/// A real source as the registry holds it: its spec file, with what its providers' definition
/// files (`sdk-spec/providers/`) add (base-URL variable, key, headers).
fn load_spec(file: &str) -> SourceSpec {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("sdk-spec");
    let text = std::fs::read_to_string(dir.join(file)).unwrap();
    let name = parse_spec(file, &text).unwrap().name;
    let reg = Registry::load_dir(&dir, &|_| true).unwrap();
    reg.source(&name).unwrap().clone()
}

/// Applies `f` to every http backing of a spec.
fn each_http(spec: &mut SourceSpec, f: &dyn Fn(&mut HttpBacking)) {
    if let Backing::Http(h) = &mut spec.backing {
        f(h);
    }
    for m in &mut spec.methods {
        if let Some(Backing::Http(h)) = &mut m.backing {
            f(h);
        }
        for p in &mut m.providers {
            if let Backing::Http(h) = &mut p.backing {
                f(h);
            }
        }
    }
}

/// A real spec pointed at the loopback server, with fast retries.
fn spec_at(file: &str, origin: &str) -> SourceSpec {
    let mut s = load_spec(file);
    each_http(&mut s, &|h| {
        h.set_origin(origin);
        h.retry_base_ms = Some(5);
    });
    s
}

/// An SDK over `specs` whose outbound policy allows the loopback test server at `origin` (and
/// only its port): private addresses are refused by default.
fn sdk(specs: Vec<SourceSpec>, origin: &str) -> Sdk {
    let config = SdkConfig { outbound_allow: vec![origin.to_owned()], ..SdkConfig::default() };
    Sdk::with_registry(Registry::new(specs, &|_| true).unwrap(), config).unwrap()
}

/// A bare HTTP client allowing only the loopback test server at `origin`.
fn client_for(origin: &str) -> http::Client {
    http::Client::new(http::Outbound::new([origin.parse().unwrap()], false)).unwrap()
}

fn upstream_message(e: SdkError) -> String {
    match e {
        SdkError::Upstream { message, .. } => message,
        other => panic!("expected an upstream error, got {other:?}"),
    }
}

/// A provider's failure: the model's message and why the provider failed.
fn provider_failure(e: SdkError) -> (String, Cause) {
    match e {
        SdkError::Provider { message, outage, .. } => (message, outage.cause),
        other => panic!("expected a provider failure, got {other:?}"),
    }
}

fn http_backing(spec: &SourceSpec, method: &str) -> HttpBacking {
    match spec.methods.iter().find(|m| m.name == method).and_then(|m| m.backing.clone()) {
        Some(Backing::Http(h)) => h,
        other => panic!("{method}: not an http backing: {other:?}"),
    }
}

// ---------------------------------------------------------------- endpoint mappings

#[tokio::test]
async fn binance_klines_map_to_sorted_candles() {
    let srv = Server::start().await;
    srv.on("/api/v3/klines", ok("binance_klines.json"));
    let sdk = sdk(vec![spec_at("binance.json", &srv.origin)], &srv.origin);
    let out = sdk
        .call("binance", "klines", json!({"symbol": "btcusdt", "interval": "1d", "limit": 3}))
        .await
        .unwrap()
        .value
        .clone();
    assert_eq!(
        out,
        json!([
            {"time": 1717200000, "open": 67472.41, "high": 67860.0, "low": 67444.47,
             "close": 67706.94, "volume": 8164.00934},
            {"time": 1717286400, "open": 67706.94, "high": 68409.16, "low": 67266.06,
             "close": 67751.6, "volume": 11641.81863},
            {"time": 1717372800, "open": 67751.61, "high": 70288.0, "low": 67612.48,
             "close": 68804.78, "volume": 29005.56126}
        ])
    );
    let (query, _) = srv.last("/api/v3/klines");
    assert_eq!(query, "interval=1d&limit=3&symbol=BTCUSDT");
}

#[tokio::test]
async fn binance_ticker_maps_string_numbers() {
    let srv = Server::start().await;
    srv.on("/api/v3/ticker/24hr", ok("binance_ticker24hr.json"));
    let sdk = sdk(vec![spec_at("binance.json", &srv.origin)], &srv.origin);
    let out =
        sdk.call("binance", "ticker24h", json!({"symbol": "ETHusdt"})).await.unwrap().value.clone();
    assert_eq!(
        out,
        json!({
            "symbol": "BTCUSDT", "lastPrice": 67706.94, "priceChange": 234.53,
            "priceChangePercent": 0.348, "openPrice": 67472.41, "highPrice": 67860.0,
            "lowPrice": 67444.47, "volume": 8164.00934, "quoteVolume": 552312871.1,
            "openTime": 1717200000, "closeTime": 1717286399
        })
    );
    assert_eq!(srv.last("/api/v3/ticker/24hr").0, "symbol=ETHUSDT");
}

#[tokio::test]
async fn coingecko_price_maps_entries_to_rows() {
    let srv = Server::start().await;
    srv.on("/api/v3/simple/price", ok("coingecko_simple_price.json"));
    let sdk = sdk(vec![spec_at("coingecko.json", &srv.origin)], &srv.origin);
    let out = sdk
        .call("coingecko", "price", json!({"ids": "bitcoin,ethereum", "vsCurrency": "USD"}))
        .await
        .unwrap()
        .value
        .clone();
    assert_eq!(
        out,
        json!([
            {"id": "bitcoin", "price": 67706, "change24h": 0.3478,
             "marketCap": 1334251234567.89, "volume24h": 21512345678.9},
            {"id": "ethereum", "price": 3780.12, "change24h": -1.2051,
             "marketCap": 454123456789.1, "volume24h": 12312345678.2}
        ])
    );
    let (query, headers) = srv.last("/api/v3/simple/price");
    assert!(query.contains("ids=bitcoin%2Cethereum"), "{query}");
    assert!(query.contains("vs_currencies=usd"), "{query}");
    assert!(query.contains("include_24hr_change=true"), "{query}");
    // The key is optional: without COINGECKO_API_KEY no header is sent.
    assert!(headers.get("x-cg-demo-api-key").is_none());
}

#[tokio::test]
async fn coingecko_market_chart_maps_prices_sorted_deduped() {
    let srv = Server::start().await;
    srv.on("/api/v3/coins/bitcoin/market_chart", ok("coingecko_market_chart.json"));
    let sdk = sdk(vec![spec_at("coingecko.json", &srv.origin)], &srv.origin);
    let out = sdk
        .call("coingecko", "marketChart", json!({"id": "Bitcoin", "days": 3}))
        .await
        .unwrap()
        .value
        .clone();
    assert_eq!(
        out,
        json!([
            {"time": 1714608000, "price": 58254.01},
            {"time": 1714694400, "price": 59123.6},
            {"time": 1714780800, "price": 62901.5},
            {"time": 1714815012, "price": 63012.27}
        ])
    );
    assert_eq!(srv.last("/api/v3/coins/bitcoin/market_chart").0, "days=3&vs_currency=usd");
}

#[tokio::test]
async fn frankfurter_latest_maps_rates() {
    let srv = Server::start().await;
    srv.on("/v1/latest", ok("frankfurter_latest.json"));
    let sdk = sdk(vec![spec_at("frankfurter.json", &srv.origin)], &srv.origin);
    let out = sdk
        .call("frankfurter", "latest", json!({"symbols": "eur,jpy,gbp"}))
        .await
        .unwrap()
        .value
        .clone();
    assert_eq!(
        out,
        json!([
            {"currency": "EUR", "rate": 0.92157},
            {"currency": "JPY", "rate": 157.12},
            {"currency": "GBP", "rate": 0.78512}
        ])
    );
    assert_eq!(srv.last("/v1/latest").0, "from=USD&to=EUR%2CJPY%2CGBP");
    // Without symbols the `to` pair is omitted.
    sdk.call("frankfurter", "latest", json!({"base": "eur"})).await.unwrap();
    assert_eq!(srv.last("/v1/latest").0, "from=EUR");
}

#[tokio::test]
async fn frankfurter_timeseries_maps_dates_to_wide_rows() {
    let srv = Server::start().await;
    srv.on("/v1/2024-01-02..2024-01-05", ok("frankfurter_timeseries.json"));
    srv.on("/v1/2024-01-02..", ok("frankfurter_timeseries.json"));
    let sdk = sdk(vec![spec_at("frankfurter.json", &srv.origin)], &srv.origin);
    let params = json!({"start": "2024-01-02", "end": "2024-01-05", "symbols": "EUR,JPY"});
    let out = sdk.call("frankfurter", "timeseries", params).await.unwrap().value.clone();
    let expected = json!([
        {"time": 1704153600, "EUR": 0.9118, "JPY": 141.49},
        {"time": 1704240000, "EUR": 0.9155, "JPY": 142.66},
        {"time": 1704326400, "EUR": 0.9131, "JPY": 143.87},
        {"time": 1704412800, "EUR": 0.9147, "JPY": 144.53}
    ]);
    assert_eq!(out, expected);
    assert_eq!(srv.last("/v1/2024-01-02..2024-01-05").0, "from=USD&to=EUR%2CJPY");
    // Open-ended range: `end` omitted → `/{start}..`.
    let out = sdk
        .call("frankfurter", "timeseries", json!({"start": "2024-01-02"}))
        .await
        .unwrap()
        .value
        .clone();
    assert_eq!(out, expected);
    assert_eq!(srv.hits("/v1/2024-01-02.."), 1);
}

// ---------------------------------------------------------------- transport behaviour

#[tokio::test]
async fn server_errors_and_429_are_retried() {
    let srv = Server::start().await;
    srv.on(
        "/api/v3/klines",
        vec![
            Reply::Body(500, "{\"msg\":\"boom\"}".into()),
            Reply::Body(429, "{\"msg\":\"slow down\"}".into()),
            Reply::Body(200, fixture("binance_klines.json")),
        ],
    );
    let sdk = sdk(vec![spec_at("binance.json", &srv.origin)], &srv.origin);
    let out = sdk.call("binance", "klines", Value::Null).await.unwrap().value.clone();
    assert_eq!(out.as_array().unwrap().len(), 3);
    assert_eq!(srv.hits("/api/v3/klines"), 3);
}

#[tokio::test]
async fn retries_give_up_with_the_last_status() {
    let srv = Server::start().await;
    srv.on("/api/v3/klines", vec![Reply::Body(503, "unavailable".into())]);
    let sdk = sdk(vec![spec_at("binance.json", &srv.origin)], &srv.origin);
    let (msg, cause) =
        provider_failure(sdk.call("binance", "klines", Value::Null).await.unwrap_err());
    assert_eq!(cause, Cause::ServerError);
    assert!(msg.contains("HTTP 503"), "{msg}");
    assert!(msg.contains("gave up after 3 attempts"), "{msg}");
    assert_eq!(srv.hits("/api/v3/klines"), 3);
}

#[tokio::test]
async fn client_errors_are_not_retried_and_show_status_and_body() {
    let srv = Server::start().await;
    srv.on(
        "/api/v3/klines",
        vec![Reply::Body(400, "{\"code\":-1121,\"msg\":\"Invalid symbol.\"}".into())],
    );
    let sdk = sdk(vec![spec_at("binance.json", &srv.origin)], &srv.origin);
    let err = sdk.call("binance", "klines", json!({"symbol": "NOPE"})).await.unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("binance.klines: provider binance: HTTP 400 Bad Request from 127.0.0.1:"),
        "{text}"
    );
    assert!(text.contains("/api/v3/klines"), "{text}");
    assert!(text.contains("Invalid symbol."), "{text}");
    assert!(!text.contains("symbol=NOPE"), "query must not be echoed: {text}");
    assert_eq!(srv.hits("/api/v3/klines"), 1);
}

#[tokio::test]
async fn slow_upstream_times_out() {
    let srv = Server::start().await;
    srv.on(
        "/api/v3/klines",
        vec![Reply::Slow(Duration::from_secs(3), fixture("binance_klines.json"))],
    );
    let mut spec = spec_at("binance.json", &srv.origin);
    each_http(&mut spec, &|h| {
        h.timeout_ms = Some(200);
        h.retries = Some(1);
    });
    let sdk = sdk(vec![spec], &srv.origin);
    let started = std::time::Instant::now();
    let (msg, cause) =
        provider_failure(sdk.call("binance", "klines", Value::Null).await.unwrap_err());
    assert_eq!(cause, Cause::Timeout);
    assert!(msg.contains("timed out (timeout 0.2 s)"), "{msg}");
    assert!(msg.contains("/api/v3/klines"), "{msg}");
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(srv.hits("/api/v3/klines"), 2);
}

#[tokio::test]
async fn connection_refused_is_reported() {
    // A port bound but never listening: refused, and no other test can take it meanwhile.
    let held = tokio::net::TcpSocket::new_v4().unwrap();
    held.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let port = held.local_addr().unwrap().port();
    let origin = format!("http://127.0.0.1:{port}");
    let mut spec = spec_at("binance.json", &origin);
    each_http(&mut spec, &|h| h.retries = Some(1));
    let (msg, cause) = provider_failure(
        sdk(vec![spec], &origin).call("binance", "klines", Value::Null).await.unwrap_err(),
    );
    assert_eq!(cause, Cause::Unreachable);
    assert!(msg.contains(&format!("request to 127.0.0.1:{port}/api/v3/klines failed")), "{msg}");
    assert!(msg.contains("connection refused"), "{msg}");
    assert!(!msg.contains("attempts"), "a refused connection is not retried: {msg}");
}

#[tokio::test]
async fn malformed_bodies_name_what_was_expected_where() {
    let srv = Server::start().await;
    srv.on("/api/v3/klines", vec![Reply::Body(200, "{\"code\":0}".into())]);
    srv.on("/api/v3/ticker/24hr", vec![Reply::Body(200, "<html>maintenance</html>".into())]);
    srv.on(
        "/api/v3/coins/bitcoin/market_chart",
        vec![Reply::Body(
            200,
            "{\"prices\":[[1714608000000, 1.5],[1714694400000, \"n/a\"]]}".into(),
        )],
    );
    srv.on("/api/v3/simple/price", vec![Reply::Body(200, "{\"error\":\"x\"}".into())]);
    let binance = spec_at("binance.json", &srv.origin);
    let coingecko = spec_at("coingecko.json", &srv.origin);
    let sdk = sdk(vec![binance, coingecko], &srv.origin);

    let (msg, cause) =
        provider_failure(sdk.call("binance", "klines", Value::Null).await.unwrap_err());
    assert_eq!(cause, Cause::BadAnswer);
    assert!(
        msg.contains("expected an array at the top level, got an object with keys [code]"),
        "{msg}"
    );

    let (msg, _) =
        provider_failure(sdk.call("binance", "ticker24h", Value::Null).await.unwrap_err());
    assert!(msg.contains("is not valid JSON"), "{msg}");
    assert!(msg.contains("<html>maintenance</html>"), "{msg}");

    let (msg, _) =
        provider_failure(sdk.call("coingecko", "marketChart", Value::Null).await.unwrap_err());
    assert!(
        msg.contains("at `prices.1.1`: expected a number or numeric string, got string \"n/a\""),
        "{msg}"
    );

    let (msg, _) = provider_failure(sdk.call("coingecko", "price", Value::Null).await.unwrap_err());
    assert!(msg.contains("expected an object at `error`"), "{msg}");
}

#[tokio::test]
async fn auth_header_comes_from_the_environment_variable() {
    let srv = Server::start().await;
    srv.on("/api/v3/simple/price", ok("coingecko_simple_price.json"));
    let spec = spec_at("coingecko.json", &srv.origin);
    let backing = http_backing(&spec, "price");
    let env = |k: &str| (k == "COINGECKO_API_KEY").then(|| "CG-test-key".to_owned());
    let params = json!({"ids": "bitcoin", "vsCurrency": "usd"});
    http::fetch(&client_for(&srv.origin), &backing, params.as_object().unwrap(), &env, None)
        .await
        .unwrap();
    let (query, headers) = srv.last("/api/v3/simple/price");
    assert_eq!(headers.get("x-cg-demo-api-key").unwrap(), "CG-test-key");
    assert!(!query.contains("CG-test-key"));
}

#[tokio::test]
async fn required_auth_missing_names_the_variable() {
    let srv = Server::start().await;
    srv.on("/data", vec![Reply::Body(200, "[]".into())]);
    let spec: SourceSpec = serde_json::from_value(json!({
        "name": "keyed", "displayName": "Keyed", "description": "needs a key",
        "backing": {"kind": "http", "url": format!("{}/data", srv.origin),
                    "auth": {"env": "KEYED_API_KEY", "query": "apikey"}},
        "methods": [{"name": "get", "description": "d",
                     "returns": {"type": "array", "description": "d"}}]
    }))
    .unwrap();
    let sdk = sdk(vec![spec.clone()], &srv.origin);
    let (msg, cause) = provider_failure(sdk.call("keyed", "get", Value::Null).await.unwrap_err());
    assert_eq!(cause, Cause::NeedsKey);
    assert!(msg.contains("environment variable KEYED_API_KEY is not set"), "{msg}");
    assert_eq!(srv.hits("/data"), 0);

    // With the variable, the key goes into the query.
    let Backing::Http(h) = &spec.backing else { unreachable!() };
    let env = |k: &str| (k == "KEYED_API_KEY").then(|| "k1".to_owned());
    http::fetch(&client_for(&srv.origin), h, &serde_json::Map::new(), &env, None).await.unwrap();
    assert_eq!(srv.last("/data").0, "apikey=k1");
}

#[tokio::test]
async fn base_url_env_redirects_the_origin() {
    let srv = Server::start().await;
    srv.on("/api/v3/klines", ok("binance_klines.json"));
    // The unmodified spec URL (api.binance.com), redirected by BOARDSMITH_BINANCE_BASE_URL.
    let backing = http_backing(&load_spec("binance.json"), "klines");
    assert!(backing.url.starts_with("https://api.binance.com/"));
    let origin = srv.origin.clone();
    let env = move |k: &str| (k == "BOARDSMITH_BINANCE_BASE_URL").then(|| origin.clone());
    let params = json!({"symbol": "BTCUSDT", "interval": "1h", "limit": 2});
    let out =
        http::fetch(&client_for(&srv.origin), &backing, params.as_object().unwrap(), &env, None)
            .await
            .unwrap();
    assert_eq!(out.as_array().unwrap().len(), 3);
    assert_eq!(srv.hits("/api/v3/klines"), 1);
}

#[tokio::test]
async fn identical_calls_hit_upstream_once() {
    let srv = Server::start().await;
    srv.on("/v1/latest", ok("frankfurter_latest.json"));
    let sdk = sdk(vec![spec_at("frankfurter.json", &srv.origin)], &srv.origin);
    let before = chrono::Utc::now().timestamp_millis();
    let a = sdk.call("frankfurter", "latest", json!({"symbols": "EUR"})).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    // Same call after defaults are applied.
    let b =
        sdk.call("frankfurter", "latest", json!({"base": "USD", "symbols": "EUR"})).await.unwrap();
    assert_eq!(a.value, b.value);
    assert_eq!(srv.hits("/v1/latest"), 1);
    assert_eq!(sdk.upstream_calls(), 1);
    // The answer says where it came from: the provider, real data, the endpoint without its
    // query, and when it was fetched — a cached answer keeps its fetch time.
    let p = &a.provenance;
    assert_eq!((p.provider.as_str(), p.demo), ("frankfurter", false));
    assert_eq!(p.url.as_deref(), Some(format!("{}/v1/latest", srv.origin).as_str()));
    assert!(p.fetched_at >= before, "{p:?}");
    assert_eq!(b.provenance, a.provenance);
}

#[tokio::test]
async fn concurrent_identical_calls_are_coalesced() {
    let srv = Server::start().await;
    srv.on(
        "/api/v3/klines",
        vec![Reply::Slow(Duration::from_millis(150), fixture("binance_klines.json"))],
    );
    let sdk = sdk(vec![spec_at("binance.json", &srv.origin)], &srv.origin);
    let calls = (0..5).map(|_| sdk.call("binance", "klines", Value::Null));
    for r in futures::future::join_all(calls).await {
        assert_eq!(r.unwrap().value.as_array().unwrap().len(), 3);
    }
    assert_eq!(srv.hits("/api/v3/klines"), 1);
}

// ---------------------------------------------------------------- enabling

#[tokio::test]
async fn keyless_live_sources_are_on_and_an_enabled_by_switch_still_works() {
    let specs: Vec<SourceSpec> =
        ["binance.json", "coingecko.json", "frankfurter.json", "userdata.json"]
            .iter()
            .map(|f| load_spec(f))
            .collect();
    // The real keyless sources need no switch.
    let reg = Registry::new(specs.clone(), &|_| false).unwrap();
    let active: Vec<&str> = reg.sources().map(|s| s.name.as_str()).collect();
    assert_eq!(active, ["binance", "coingecko", "frankfurter", "userdata"]);

    // A spec can still make a source opt-in: off, with the variable named, until enabled.
    let mut opt_in = load_spec("binance.json");
    opt_in.enabled_by = Some("BOARDSMITH_LIVE_BINANCE".into());
    let reg = Registry::new(vec![opt_in.clone()], &|_| false).unwrap();
    assert_eq!(reg.disabled().get("binance").map(String::as_str), Some("BOARDSMITH_LIVE_BINANCE"));
    let sdk = Sdk::with_registry(reg, SdkConfig::default()).unwrap();
    let err = sdk.call("binance", "klines", Value::Null).await.unwrap_err();
    match &err {
        SdkError::UnknownSource { disabled_by, .. } => {
            assert_eq!(disabled_by.as_deref(), Some("BOARDSMITH_LIVE_BINANCE"));
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("set BOARDSMITH_LIVE_BINANCE=1"), "{err}");
    let config =
        SdkConfig { enabled: vec!["BOARDSMITH_LIVE_BINANCE".into()], ..Default::default() };
    let reg = Registry::new(vec![opt_in], &|v| config.enabled.iter().any(|e| e == v)).unwrap();
    assert!(reg.source("binance").is_some());
}

#[test]
fn spec_files_round_trip_and_reject_unknown_backing_fields() {
    for f in ["binance.json", "coingecko.json", "frankfurter.json", "userdata.json"] {
        let s = load_spec(f);
        let again: SourceSpec = serde_json::from_value(serde_json::to_value(&s).unwrap()).unwrap();
        assert_eq!(serde_json::to_value(&again).unwrap(), serde_json::to_value(&s).unwrap(), "{f}");
    }
    let bad = json!({
        "name": "x", "displayName": "X", "description": "d",
        "backing": {"kind": "http", "url": "https://x", "tiemout": 5},
        "methods": []
    });
    let e = parse_spec("x.json", &bad.to_string()).unwrap_err().to_string();
    assert!(e.contains("tiemout"), "{e}");
}

#[test]
fn one_provider_may_be_listed_twice_only_when_each_entry_says_which_params_it_serves() {
    let spec = |when_a: Value, when_b: Value| {
        let entry = |when: Value| json!({"provider": "p", "when": when, "backing": {"kind": "builtin", "generator": "x"}});
        json!({
            "name": "x", "displayName": "X", "description": "d",
            "backing": {"kind": "builtin"},
            "methods": [{
                "name": "m", "description": "d",
                "params": [{"name": "chain", "type": "string", "description": "c"}],
                "returns": {"type": "array", "description": "r"},
                "providers": [entry(when_a), entry(when_b)]
            }]
        })
        .to_string()
    };
    let registry = |text: String| Registry::new(vec![parse_spec("x.json", &text)?], &|_| false);
    assert!(registry(spec(json!({"chain": "^all$"}), json!({"chain": "^b"}))).is_ok());
    let e = registry(spec(json!({"chain": "^all$"}), json!({}))).unwrap_err();
    assert!(
        e.to_string()
            .contains("duplicate provider `p` (entries of one provider each need a `when`)"),
        "{e}"
    );
}

// ---------------------------------------------------------------- file backing

/// The `userdata` source over `dir`, offline: the user's files need no network and still serve.
fn userdata(dir: Option<&Path>) -> Sdk {
    let reg = Registry::new(vec![load_spec("userdata.json")], &|_| false).unwrap();
    let config =
        SdkConfig { data_dir: dir.map(Path::to_path_buf), offline: true, ..Default::default() };
    Sdk::with_registry(reg, config).unwrap()
}

fn data_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("prices.csv"), fixture("prices.csv")).unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(
        dir.path().join("sub/targets.json"),
        r#"{"data": {"items": [{"name": "a", "target": 1.5}]}}"#,
    )
    .unwrap();
    std::fs::write(dir.path().join("notes.txt"), "ignored").unwrap();
    dir
}

#[tokio::test]
async fn csv_file_becomes_sorted_rows() {
    let dir = data_dir();
    let sdk = userdata(Some(dir.path()));
    let answer = sdk.call("userdata", "readTable", json!({"file": "prices.csv"})).await.unwrap();
    assert_eq!((answer.provenance.provider.as_str(), answer.provenance.demo), ("file", false));
    let out = answer.value.clone();
    assert_eq!(
        out,
        json!([
            {"date": 1704153600, "close": 101.2, "volume": 1200, "note": "first day"},
            {"date": 1704240000, "close": 102.7, "volume": 1500, "note": null},
            {"date": 1704326400, "close": null, "volume": 900, "note": "holiday?"}
        ])
    );
    let out = sdk
        .call("userdata", "readSeries", json!({"file": "prices.csv", "valueField": "close"}))
        .await
        .unwrap()
        .value
        .clone();
    assert_eq!(
        out,
        json!([
            {"time": 1704153600, "value": 101.2},
            {"time": 1704240000, "value": 102.7},
            {"time": 1704326400, "value": null}
        ])
    );
    let err = sdk
        .call("userdata", "readSeries", json!({"file": "prices.csv", "valueField": "Close"}))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("no column `Close` (columns: date, close, volume, note)"),
        "{err}"
    );
}

#[tokio::test]
async fn json_file_is_returned_as_is_or_by_path() {
    let dir = data_dir();
    let sdk = userdata(Some(dir.path()));
    let whole = sdk
        .call("userdata", "readTable", json!({"file": "sub/targets.json"}))
        .await
        .unwrap()
        .value
        .clone();
    assert_eq!(whole, json!({"data": {"items": [{"name": "a", "target": 1.5}]}}));
    let part = sdk
        .call("userdata", "readJson", json!({"file": "sub/targets.json", "path": "data.items"}))
        .await
        .unwrap()
        .value
        .clone();
    assert_eq!(part, json!([{"name": "a", "target": 1.5}]));
    let err = sdk
        .call("userdata", "readJson", json!({"file": "sub/targets.json", "path": "data.rows"}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("missing `data.rows`"), "{err}");
}

#[tokio::test]
async fn list_files_shows_readable_files() {
    let dir = data_dir();
    let out = userdata(Some(dir.path()))
        .call("userdata", "listFiles", Value::Null)
        .await
        .unwrap()
        .value
        .clone();
    let files: Vec<(&str, &str)> = out
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["file"].as_str().unwrap(), f["format"].as_str().unwrap()))
        .collect();
    assert_eq!(files, [("prices.csv", "csv"), ("sub/targets.json", "json")]);
    assert!(out[0]["bytes"].as_u64().unwrap() > 0);
}

#[tokio::test]
async fn path_traversal_is_rejected() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.csv"), "a\n1\n").unwrap();
    let dir = data_dir();
    std::os::unix::fs::symlink(outside.path().join("secret.csv"), dir.path().join("link.csv"))
        .unwrap();
    let sdk = userdata(Some(dir.path()));
    let secret = outside.path().join("secret.csv").display().to_string();
    for file in ["../secret.csv", "sub/../../secret.csv", secret.as_str()] {
        let msg = upstream_message(
            sdk.call("userdata", "readTable", json!({"file": file})).await.unwrap_err(),
        );
        assert!(msg.contains("is not allowed"), "{file}: {msg}");
    }
    let msg = upstream_message(
        sdk.call("userdata", "readTable", json!({"file": "link.csv"})).await.unwrap_err(),
    );
    assert!(msg.contains("links outside the data folder"), "{msg}");
    // The escaping symlink is not listed either.
    let listed = sdk.call("userdata", "listFiles", Value::Null).await.unwrap().value.clone();
    assert!(!listed.to_string().contains("link.csv"), "{listed}");
}

#[tokio::test]
async fn file_paths_never_leave_the_data_folder() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.csv"), "a\n1\n").unwrap();
    std::fs::write(outside.path().join("secret.json"), "{\"k\": 1}").unwrap();
    let dir = data_dir();
    let root = dir.path();
    // A directory symlink out, a symlink to a symlink out, a symlink to `/`, and a symlink that
    // stays inside (allowed).
    std::os::unix::fs::symlink(outside.path(), root.join("out")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.csv"), root.join("hop1.csv")).unwrap();
    std::os::unix::fs::symlink(root.join("hop1.csv"), root.join("sub/hop2.csv")).unwrap();
    std::os::unix::fs::symlink("/", root.join("rootfs")).unwrap();
    std::os::unix::fs::symlink(root.join("prices.csv"), root.join("sub/inside.csv")).unwrap();
    let sdk = userdata(Some(root));
    let secret = outside.path().join("secret.csv").display().to_string();
    let cases: [(&str, &str, &str); 12] = [
        ("readTable", "../secret.csv", "is not allowed"),
        ("readTable", "./../secret.csv", "is not allowed"),
        ("readTable", "sub/./../../secret.csv", "is not allowed"),
        ("readTable", "sub/../../secret.csv", "is not allowed"),
        ("readTable", &secret, "is not allowed"),
        ("readTable", "/etc/passwd", "is not allowed"),
        ("readTable", "\\etc\\passwd", "is not allowed"),
        ("readTable", "prices.csv\u{0}", "is not allowed"),
        ("readTable", "out/secret.csv", "links outside the data folder"),
        ("readJson", "out/secret.json", "links outside the data folder"),
        ("readTable", "sub/hop2.csv", "links outside the data folder"),
        ("readTable", "rootfs/etc/passwd", "links outside the data folder"),
    ];
    for (method, file, expected) in cases {
        let msg = upstream_message(
            sdk.call("userdata", method, json!({"file": file})).await.unwrap_err(),
        );
        assert!(msg.contains(expected), "{file}: {msg}");
        assert!(!msg.contains("\"a\""), "{file}: leaked content: {msg}");
    }
    // Percent-encoding is not decoded: `%2e%2e` is a (missing) file name, not `..`.
    let msg = upstream_message(
        sdk.call("userdata", "readTable", json!({"file": "%2e%2e/secret.csv"})).await.unwrap_err(),
    );
    assert!(msg.starts_with("file `%2e%2e/secret.csv` not found"), "{msg}");
    // A symlink that stays inside is followed.
    let rows = sdk
        .call("userdata", "readTable", json!({"file": "sub/inside.csv"}))
        .await
        .unwrap()
        .value
        .clone();
    assert_eq!(rows.as_array().unwrap().len(), 3);
    // Listing walks neither the escaping directory links nor the escaping file links.
    let listed = sdk.call("userdata", "listFiles", Value::Null).await.unwrap().value.clone();
    let files: Vec<&str> =
        listed.as_array().unwrap().iter().map(|f| f["file"].as_str().unwrap()).collect();
    assert_eq!(files, ["prices.csv", "sub/inside.csv", "sub/targets.json"]);
}

#[tokio::test]
async fn missing_file_lists_available_files() {
    let dir = data_dir();
    let sdk = userdata(Some(dir.path()));
    let msg = upstream_message(
        sdk.call("userdata", "readTable", json!({"file": "price.csv"})).await.unwrap_err(),
    );
    assert_eq!(
        msg,
        "file `price.csv` not found in the data folder; available files: prices.csv, \
         sub/targets.json"
    );
}

#[tokio::test]
async fn missing_data_folder_config_says_what_to_set() {
    let msg = upstream_message(
        userdata(None).call("userdata", "listFiles", Value::Null).await.unwrap_err(),
    );
    assert!(msg.contains("set BOARDSMITH_DATA_FILES"), "{msg}");
}

/// `market.getKline` has two providers: Binance for crypto pairs, demo for the
/// rest. The call's provenance names who served it; `provider` forces one or says why it
/// cannot; offline leaves demo only.
#[tokio::test]
async fn a_method_is_served_by_the_first_provider_that_applies() {
    let srv = Server::start().await;
    srv.on("/api/v3/klines", ok("binance_klines.json"));
    // Binance behind a switch here, to show a provider-level `enabledBy` too.
    let market = || {
        let mut spec = spec_at("market.json", &srv.origin);
        let kline = spec.methods.iter_mut().find(|m| m.name == "getKline").unwrap();
        kline.providers[0].enabled_by = Some("BOARDSMITH_LIVE_BINANCE".into());
        spec
    };
    let config = |enabled: bool, offline: bool| SdkConfig {
        outbound_allow: vec![srv.origin.clone()],
        enabled: if enabled { vec!["BOARDSMITH_LIVE_BINANCE".into()] } else { Vec::new() },
        offline,
        ..SdkConfig::default()
    };
    let make = |enabled, offline| {
        Sdk::with_registry(
            Registry::new(vec![market()], &|_| true).unwrap(),
            config(enabled, offline),
        )
        .unwrap()
    };

    let sdk = make(true, false);
    let btc =
        sdk.call("market", "getKline", json!({"symbol": "btcusdt", "limit": 3})).await.unwrap();
    assert_eq!((btc.provenance.provider.as_str(), btc.provenance.demo), ("binance", false));
    assert_eq!(btc.value.as_array().unwrap().len(), 3);
    assert_eq!(btc.value[0]["close"], 67706.94);
    let (query, _) = srv.last("/api/v3/klines");
    assert_eq!(
        query, "interval=1d&limit=3&symbol=BTCUSDT",
        "the standard params in Binance's terms"
    );
    let gold = sdk.call("market", "getKline", json!({"symbol": "XAUUSD"})).await.unwrap();
    assert_eq!((gold.provenance.provider.as_str(), gold.provenance.demo), ("demo", true));
    assert_eq!(srv.hits("/api/v3/klines"), 1, "gold never reached Binance");

    // Forced: demo on request; Binance for gold is refused with the reason, not substituted.
    let forced = sdk
        .call("market", "getKline", json!({"symbol": "BTCUSDT", "provider": "demo"}))
        .await
        .unwrap();
    assert!(forced.provenance.demo);
    let e = sdk
        .call("market", "getKline", json!({"symbol": "XAUUSD", "provider": "binance"}))
        .await
        .unwrap_err();
    assert!(
        e.to_string().contains("provider `binance` cannot serve this call: symbol=XAUUSD"),
        "{e}"
    );
    let e = sdk.call("market", "getKline", json!({"provider": "yahoo"})).await.unwrap_err();
    assert!(
        e.to_string().ends_with("unknown provider `yahoo`; this method's providers: binance, demo"),
        "{e}"
    );

    // Binance switched off, or the server offline: demo serves, and says so.
    for (enabled, offline) in [(false, false), (true, true)] {
        let sdk = make(enabled, offline);
        let a = sdk.call("market", "getKline", json!({"symbol": "ETHUSDT"})).await.unwrap();
        assert!(a.provenance.demo, "enabled={enabled} offline={offline}");
        let e = sdk
            .call("market", "getKline", json!({"symbol": "ETHUSDT", "provider": "binance"}))
            .await
            .unwrap_err();
        let why = if offline {
            "offline (BOARDSMITH_OFFLINE=1)"
        } else {
            "set BOARDSMITH_LIVE_BINANCE=1"
        };
        assert!(e.to_string().contains(why), "{e}");
    }
    assert_eq!(srv.hits("/api/v3/klines"), 1);

    // What search code sees: each provider with its status and condition.
    let listed = sdk.public_json();
    let kline = listed["sources"][0]["methods"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "getKline")
        .unwrap()
        .clone();
    assert_eq!(kline["providers"][0]["name"], "binance");
    assert_eq!(kline["providers"][0]["status"], "live");
    assert!(kline["providers"][0]["when"]["symbol"].as_str().unwrap().contains("USDT"));
    assert_eq!((&kline["providers"][1]["status"], &kline["demo"]), (&json!("demo"), &json!(false)));
    // A method no live provider serves.
    let methods = listed["sources"][0]["methods"].as_array().unwrap();
    let quotes = methods.iter().find(|m| m["name"] == "getQuotes").unwrap();
    assert_eq!((&quotes["provider"], &quotes["demo"]), (&json!("demo"), &json!(true)), "{quotes}");
}
