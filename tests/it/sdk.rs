//! The SDK through its public API and through panel code: registry size, validation errors a
//! model can act on, deterministic builtin data, cache and coalescing.

use boardsmith::sandbox::{ErrorKind, PanelContext};
use boardsmith::sdk::{Sdk, SdkConfig, SdkError};
use serde_json::{Value, json};

use crate::support;

#[test]
fn registry_covers_the_analyst_surface() {
    let sdk = support::sdk();
    let reg = sdk.registry();
    let sources = reg.sources().count() + reg.disabled().len();
    let methods = reg.method_count();
    assert!(sources >= 30, "{sources} sources");
    assert!(methods >= 120, "{methods} methods");
    // The keyless live sources are on by default; offline (as here) they say so.
    let public = sdk.public_json();
    for live in ["binance", "coingecko", "frankfurter"] {
        assert!(reg.source(live).is_some(), "{live} is on by default");
        let src = public["sources"].as_array().unwrap().iter().find(|s| s["name"] == live);
        let status = &src.unwrap()["methods"][0]["providers"][0]["status"];
        assert_eq!(status, "disabled", "{live} while offline");
    }
}

#[tokio::test]
async fn validation_errors_name_the_param_and_the_alternatives() {
    let sdk = support::sdk();
    let err = sdk.call("markt", "getKline", json!({})).await.unwrap_err();
    assert!(
        matches!(&err, SdkError::UnknownSource { suggestions, .. } if suggestions.contains(&"market".to_owned())),
        "{err}"
    );
    let err = sdk.call("market", "getKlines", json!({})).await.unwrap_err();
    assert_eq!(err.to_string(), "unknown method `market.getKlines`; did you mean `getKline`?");
    let err = sdk.call("market", "getKline", json!({"timeframe": "2D"})).await.unwrap_err();
    assert!(
        err.to_string().starts_with("market.getKline: param `timeframe` must be one of \"1m\""),
        "{err}"
    );
    let err = sdk.call("market", "getKline", json!({"limit": "120"})).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "market.getKline: param `limit` must be an integer, got string \"120\""
    );
    let err = sdk.call("binance", "getKlines", json!({})).await.unwrap_err();
    assert!(err.to_string().contains("did you mean `klines`"), "{err}");
    // Offline (as every test is), a live-only source says why it cannot answer.
    let err = sdk.call("binance", "klines", json!({})).await.unwrap_err();
    assert!(err.to_string().contains("offline (BOARDSMITH_OFFLINE=1)"), "{err}");
}

#[tokio::test]
async fn builtin_data_is_deterministic_per_day_and_well_formed() {
    let call = |asof: &str| {
        let asof = chrono::DateTime::parse_from_rfc3339(asof).unwrap().with_timezone(&chrono::Utc);
        async move {
            let sdk =
                Sdk::new(SdkConfig { asof: Some(asof), offline: true, ..SdkConfig::default() })
                    .unwrap();
            sdk.call("market", "getKline", json!({"symbol": "XAUUSD", "limit": 120}))
                .await
                .unwrap()
                .value
                .clone()
        }
    };
    let a = call("2026-11-20T09:00:00Z").await;
    let b = call("2026-11-20T17:00:00Z").await;
    let c = call("2026-11-23T09:00:00Z").await;
    let (ra, rb, rc) = (a.as_array().unwrap(), b.as_array().unwrap(), c.as_array().unwrap());
    // Closed bars never change as the clock moves; only the forming bar (the last) does.
    assert_eq!(ra[..119], rb[..119], "same day, same closed bars");
    assert_ne!(ra[119]["close"], rb[119]["close"], "the forming bar moves during the day");
    let past: Vec<&Value> = ra[..119].iter().filter(|r| rc.contains(r)).collect();
    assert!(past.len() >= 110, "a later day keeps the earlier days' bars: {} kept", past.len());
    assert_ne!(ra.last(), rc.last(), "a new day adds a bar");
    let rows = ra;
    assert_eq!(rows.len(), 120);
    let times: Vec<i64> = rows.iter().map(|r| r["time"].as_i64().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] < w[1]), "ascending, de-duplicated");
    for r in rows {
        let (o, h, l, c) = (
            r["open"].as_f64().unwrap(),
            r["high"].as_f64().unwrap(),
            r["low"].as_f64().unwrap(),
            r["close"].as_f64().unwrap(),
        );
        assert!(h >= o.max(c) && l <= o.min(c) && l > 0.0, "{r}");
    }
}

#[tokio::test]
async fn ten_panels_reading_the_same_kline_cause_one_fetch() {
    let sb = support::sandbox_with(4, Default::default()).await;
    let code =
        "const k = await sdk.market.getKline({symbol: 'XAUUSD', timeframe: '1D', limit: 120});
                return k.length;";
    let ctx = PanelContext::default();
    let runs = futures::future::join_all((0..10).map(|_| sb.run_panel(code, &ctx))).await;
    for r in &runs {
        assert_eq!(r.as_ref().unwrap().value, json!(120));
    }
    assert_eq!(sb.host.sdk.upstream_calls(), 1);
    // A different param is a different call.
    let other = code.replace("limit: 120", "limit: 60");
    sb.run_panel(&other, &PanelContext::default()).await.unwrap();
    assert_eq!(sb.host.sdk.upstream_calls(), 2);
}

#[tokio::test]
async fn panel_code_gets_sdk_errors_it_can_act_on() {
    let sb = support::sandbox().await;
    let e = sb
        .run_panel("return await sdk.market.getKline({symbl: 'XAUUSD'});", &PanelContext::default())
        .await
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Sdk);
    assert!(e.message.contains("unknown param `symbl`; did you mean `symbol`?"), "{e}");
    // A misspelt source or method names the closest ones instead of a bare TypeError.
    let none = PanelContext::default();
    let run = |code: &'static str| sb.run_panel(code, &none);
    let e = run("return await sdk.markt.getKline();").await.unwrap_err();
    assert!(e.message.contains("unknown source `markt` in sdk; did you mean `market`?"), "{e}");
    assert_eq!(e.line, Some(1), "{e:?}");
    let e = run("return await sdk.market.getKlines();").await.unwrap_err();
    assert!(
        e.message.contains("unknown method `getKlines` in sdk.market; did you mean `getKline`?"),
        "{e}"
    );
    let e = run("return await sdk.zzzz.x();").await.unwrap_err();
    assert!(e.message.contains("unknown source `zzzz` in sdk; it has: "), "{e}");
    // Names code may probe stay usable: `in`, keys, thenable and JSON checks, Object methods.
    let out = run(
        "return ['nosuch' in sdk, Object.keys(sdk).includes('market'), sdk.then === undefined, \
         typeof sdk.market.getKline, String(sdk.market), sdk.hasOwnProperty('market')];",
    )
    .await
    .unwrap();
    assert_eq!(out.value, json!([false, true, true, "function", "[object sdk.market]", true]));
}

#[tokio::test]
async fn search_code_sees_the_frozen_spec_and_can_find_methods() {
    let sb = support::sandbox().await;
    let out = sb
        .run_search("const hits = spec.find('gold kline'); return { top: hits.slice(0, 3).map(h => h.source + '.' + h.method), \
                     first: hits[0], frozen: Object.isFrozen(spec.sources[0].methods[0]), \
                     utils: spec.utils.map(u => u.name).includes('sma'), n: spec.sources.length };")
        .await
        .unwrap();
    assert!(
        out.value["top"].as_array().unwrap().contains(&json!("market.getKline")),
        "{}",
        out.value["top"]
    );
    let first = &out.value["first"];
    for key in ["source", "method", "description", "params", "returns"] {
        assert!(first.get(key).is_some(), "DataSourceMatch lacks {key}: {first}");
    }
    assert_eq!(out.value["frozen"], true);
    assert_eq!(out.value["utils"], true);
    assert!(out.value["n"].as_u64().unwrap() >= 30);
}

/// A panel that spends its deadline waiting on a provider fails as that provider's timeout,
/// naming it, not as the code's endless loop; a loop that spends it is still the code's.
#[tokio::test]
async fn a_deadline_spent_waiting_on_a_provider_is_the_providers_timeout() {
    let limits = boardsmith::sandbox::Limits {
        panel_deadline: std::time::Duration::from_millis(300),
        ..boardsmith::sandbox::Limits::default()
    };
    let sb = support::sandbox_with(1, limits).await;
    let none = PanelContext::default();
    let e = sb.run_panel("await sdk.test.sleep({ms: 5000}); return [];", &none).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Provider, "{e:?}");
    let outage = e.outage.as_deref().unwrap();
    assert_eq!(
        (outage.provider.as_str(), outage.summary.as_str()),
        ("test", "Test is not answering")
    );
    assert!(e.message.contains("did not answer within the panel's 300 ms deadline"), "{e}");
    assert!(!e.message.contains("endless loops"), "{e}");

    let e = sb.run_panel("while (true) {}", &none).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Limit, "{e:?}");
    assert!(e.outage.is_none());
}
