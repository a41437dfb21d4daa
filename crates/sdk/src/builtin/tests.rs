//! Every builtin method through the real registry and `Sdk::call`: success, row invariants,
//! documented fields, determinism and limit-stable series.

use std::collections::BTreeSet;

use chrono::{DateTime, TimeZone, Utc};
use serde_json::{Map, Value, json};

use crate::{Backing, Registry, Sdk, SdkConfig};

/// Generators whose rows are upcoming events and may be dated after `now`.
const FUTURE_OK: &[&str] =
    &["economicCalendar", "earningsCalendar", "holidays", "upcomingDividends", "ipoUpcoming"];

fn asof() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 6, 11, 15, 30, 0).single().expect("valid date")
}

fn sdk_at(now: DateTime<Utc>) -> Sdk {
    let reg = Registry::embedded(&|_| false).expect("embedded specs parse");
    // Offline: these tests are about the generators (and never reach real hosts).
    Sdk::with_registry(reg, SdkConfig { asof: Some(now), offline: true, ..Default::default() })
        .expect("sdk builds")
}

/// (source, method, generator) of every builtin-backed method.
fn builtin_methods(reg: &Registry) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for s in reg.sources() {
        for m in &s.methods {
            for p in crate::provider::providers_of(s, m) {
                if let Backing::Builtin { generator } = p.backing {
                    let g = generator.unwrap_or_else(|| m.name.clone());
                    out.push((s.name.clone(), m.name.clone(), g));
                }
            }
        }
    }
    out
}

/// Params for methods with required params (none of ours need any today).
fn params_for(_source: &str, _method: &str) -> Value {
    json!({})
}

fn first_row(v: &Value) -> Option<&Map<String, Value>> {
    match v {
        Value::Array(rows) => rows.first().and_then(Value::as_object),
        Value::Object(o) => Some(o),
        _ => None,
    }
}

fn check_rows(name: &str, v: &Value, now: i64, future_ok: bool) -> Result<(), String> {
    macro_rules! ensure {
        ($c:expr, $($f:tt)*) => {
            let ok: bool = $c;
            if !ok {
                return Err(format!($($f)*));
            }
        };
    }
    let Value::Array(rows) = v else { return Ok(()) };
    let mut last: Option<i64> = None;
    for r in rows {
        if let Some(t) = r.get("time") {
            let Some(t) = t.as_i64() else {
                return Err(format!("{name}: time not an integer: {t}"));
            };
            if let Some(l) = last {
                ensure!(t > l, "{name}: times not strictly ascending ({l} then {t})");
            }
            ensure!(future_ok || t <= now, "{name}: time {t} after now {now}");
            last = Some(t);
        }
        if let (Some(o), Some(h), Some(l), Some(c)) = (
            r.get("open").and_then(Value::as_f64),
            r.get("high").and_then(Value::as_f64),
            r.get("low").and_then(Value::as_f64),
            r.get("close").and_then(Value::as_f64),
        ) {
            ensure!(h >= o.max(c), "{name}: high {h} < max(open {o}, close {c})");
            ensure!(l <= o.min(c), "{name}: low {l} > min(open {o}, close {c})");
            ensure!(l > 0.0, "{name}: non-positive low {l}");
            let vol = r.get("volume").and_then(Value::as_f64).unwrap_or(1.0);
            ensure!(vol > 0.0, "{name}: volume {vol}");
        }
        for key in ["sentiment", "imbalance", "correlation"] {
            if let Some(x) = r.get(key).and_then(Value::as_f64) {
                ensure!((-1.0..=1.0).contains(&x), "{name}: {key} {x} outside [-1, 1]");
            }
        }
    }
    Ok(())
}

#[tokio::test]
async fn every_builtin_method_works_and_matches_its_spec() {
    let sdk = sdk_at(asof());
    let reg = sdk.registry().clone();
    let methods = builtin_methods(&reg);
    let now = asof().timestamp();
    let mut failures = Vec::new();
    for (source, method, generator) in &methods {
        let name = format!("{source}.{method}");
        let out = match sdk.call(source, method, params_for(source, method)).await {
            Ok(a) => a.value.clone(),
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        if let Err(e) = check_rows(&name, &out, now, FUTURE_OK.contains(&generator.as_str())) {
            failures.push(e);
        }
        let spec = reg
            .source(source)
            .and_then(|s| s.methods.iter().find(|m| &m.name == method))
            .expect("method exists");
        if spec.returns.fields.is_empty() {
            failures.push(format!("{name}: returns.fields is empty"));
            continue;
        }
        if let Some(row) = first_row(&out) {
            let got: BTreeSet<&str> = row.keys().map(String::as_str).collect();
            let doc: BTreeSet<&str> = spec.returns.fields.keys().map(String::as_str).collect();
            if got != doc {
                failures.push(format!(
                    "{name}: fields differ; produced but undocumented {:?}, documented but missing {:?}",
                    got.difference(&doc).collect::<Vec<_>>(),
                    doc.difference(&got).collect::<Vec<_>>()
                ));
            }
        }
        if spec.returns.example.is_null() {
            failures.push(format!("{name}: no returns.example"));
        }
    }
    assert!(failures.is_empty(), "{} problems:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn registry_is_large_enough() {
    let reg = Registry::embedded(&|_| false).expect("embedded specs parse");
    let ours = builtin_methods(&reg);
    let sources: BTreeSet<&str> = ours.iter().map(|m| m.0.as_str()).collect();
    assert!(sources.len() >= 28, "only {} builtin sources", sources.len());
    assert!(ours.len() >= 120, "only {} builtin methods", ours.len());
    assert!(reg.sources().count() >= 30);
}

#[test]
fn every_spec_generator_exists() {
    let reg = Registry::embedded(&|_| false).expect("embedded specs parse");
    let ctx = super::GenContext::new("t", "t", &Map::new(), asof());
    for (s, m, g) in builtin_methods(&reg) {
        if let Err(e) = super::generate(&g, &Map::new(), &ctx) {
            assert!(!e.contains("no builtin generator"), "{s}.{m}: {e}");
        }
    }
    let err = super::generate("klien", &Map::new(), &ctx).expect_err("unknown generator");
    assert!(err.contains("closest: kline"), "{err}");
}

#[tokio::test]
async fn data_is_deterministic_per_day_and_symbol() {
    let call = |now, params: Value| async move {
        let sdk = sdk_at(now);
        sdk.call("market", "getKline", params).await.expect("kline").value.clone()
    };
    let p = json!({"symbol": "XAUUSD", "limit": 50});
    let a = call(asof(), p.clone()).await;
    let b = call(asof(), p.clone()).await;
    assert_eq!(a, b);
    let next_day = asof() + chrono::Duration::days(1);
    assert_ne!(a, call(next_day, p).await);
    assert_ne!(a, call(asof(), json!({"symbol": "XAGUSD", "limit": 50})).await);
    for (src, m) in
        [("social", "searchPosts"), ("fundamentals", "getIncomeStatement"), ("macro", "getCpi")]
    {
        let x = sdk_at(asof()).call(src, m, json!({})).await.expect("call").value.clone();
        let y = sdk_at(asof()).call(src, m, json!({})).await.expect("call").value.clone();
        assert_eq!(x, y, "{src}.{m} not deterministic");
    }
}

#[tokio::test]
async fn latest_bars_do_not_depend_on_limit() {
    let sdk = sdk_at(asof());
    let short = sdk
        .call("market", "getKline", json!({"symbol": "BTCUSDT", "limit": 10}))
        .await
        .expect("kline")
        .value
        .clone();
    let long = sdk
        .call("market", "getKline", json!({"symbol": "BTCUSDT", "limit": 500}))
        .await
        .expect("kline")
        .value
        .clone();
    let (s, l) = (short.as_array().expect("rows"), long.as_array().expect("rows"));
    assert_eq!(s.len(), 10);
    assert_eq!(l.len(), 500);
    assert_eq!(s[9], l[499]);
    assert_eq!(s[..], l[490..]);
}

#[tokio::test]
async fn generated_answers_say_they_are_demo_data() {
    let sdk = sdk_at(asof());
    let a = sdk.call("market", "getKline", json!({})).await.expect("kline");
    let p = &a.provenance;
    assert_eq!((p.provider.as_str(), p.demo, p.url.as_deref()), ("demo", true, None));
    assert_eq!(p.as_of.as_deref(), Some(asof().date_naive().to_string().as_str()));
}

#[tokio::test]
async fn prices_are_realistic_and_aligned() {
    let sdk = sdk_at(asof());
    let level = |v: &Value| {
        v.as_array().and_then(|r| r.last()).and_then(|r| r["close"].as_f64()).expect("close")
    };
    let gold = sdk.call("market", "getKline", json!({})).await.expect("kline").value.clone();
    assert!((1800.0..4000.0).contains(&level(&gold)), "gold {}", level(&gold));
    let btc = sdk.call("crypto", "getKline", json!({})).await.expect("kline").value.clone();
    assert!((50_000.0..150_000.0).contains(&level(&btc)), "btc {}", level(&btc));
    let eur = sdk.call("fx", "getKline", json!({})).await.expect("kline").value.clone();
    assert!((0.9..1.3).contains(&level(&eur)), "eurusd {}", level(&eur));
    // Daily bars at 00:00 UTC, no weekend bars for FX; 1W bars start on Monday.
    for row in eur.as_array().expect("rows") {
        let t = row["time"].as_i64().expect("time");
        assert_eq!(t % 86_400, 0);
        assert!(!super::util::is_weekend(t));
    }
    let w = sdk
        .call("market", "getKline", json!({"timeframe": "1W", "limit": 3}))
        .await
        .expect("kline")
        .value
        .clone();
    for row in w.as_array().expect("rows") {
        let t = row["time"].as_i64().expect("time");
        assert_eq!(t.div_euclid(86_400).rem_euclid(7), 4, "week must start on Monday");
    }
    let m1 = sdk
        .call("market", "getKline", json!({"timeframe": "1m", "limit": 5}))
        .await
        .expect("kline")
        .value
        .clone();
    let last = m1.as_array().and_then(|r| r.last()).expect("row")["time"].as_i64().expect("time");
    assert_eq!(last, asof().timestamp() / 60 * 60);
}

#[tokio::test]
async fn fundamentals_are_consistent() {
    let sdk = sdk_at(asof());
    let bs = sdk
        .call("fundamentals", "getBalanceSheet", json!({"symbol": "MSFT"}))
        .await
        .expect("bs")
        .value
        .clone();
    for r in bs.as_array().expect("rows") {
        let f = |k: &str| r[k].as_f64().expect("number");
        assert_eq!(f("totalAssets"), f("totalLiabilities") + f("totalEquity"));
    }
    let is = sdk
        .call("fundamentals", "getIncomeStatement", json!({"period": "quarter"}))
        .await
        .expect("is")
        .value
        .clone();
    for r in is.as_array().expect("rows") {
        let f = |k: &str| r[k].as_f64().expect("number");
        assert_eq!(f("grossProfit"), f("revenue") - f("costOfRevenue"));
        assert_eq!(f("operatingIncome"), f("grossProfit") - f("operatingExpenses"));
    }
    let cf = sdk.call("fundamentals", "getCashFlow", json!({})).await.expect("cf").value.clone();
    for r in cf.as_array().expect("rows") {
        let f = |k: &str| r[k].as_f64().expect("number");
        assert_eq!(f("freeCashFlow"), f("operatingCashFlow") + f("capitalExpenditure"));
    }
}

#[tokio::test]
async fn posts_mention_the_query() {
    let sdk = sdk_at(asof());
    let posts = sdk
        .call("social", "searchPosts", json!({"query": "NVDA"}))
        .await
        .expect("posts")
        .value
        .clone();
    let rows = posts.as_array().expect("rows");
    assert_eq!(rows.len(), 50);
    assert!(rows.iter().all(|r| r["text"].as_str().is_some_and(|t| t.contains("NVDA"))));
}

#[tokio::test]
async fn generator_errors_are_actionable() {
    let sdk = sdk_at(asof());
    let err = sdk
        .call("correlation", "getMatrix", json!({"symbols": ["SPX"]}))
        .await
        .expect_err("one symbol");
    assert!(err.to_string().contains("2 to 40 symbols"), "{err}");
    let err =
        sdk.call("screener", "screenStocks", json!({"sector": "Tech"})).await.expect_err("sector");
    assert!(err.to_string().contains("Technology"), "{err}");
}

/// Writes `{source.method: trimmed first rows}` to the file named by `BOARDSMITH_DUMP_EXAMPLES`
/// (used to refresh `returns.example` in the spec files); a no-op otherwise.
#[tokio::test]
async fn dump_examples() {
    let Ok(path) = std::env::var("BOARDSMITH_DUMP_EXAMPLES") else { return };
    fn trim(v: &Value, depth: usize) -> Value {
        match v {
            Value::Array(a) => Value::Array(
                a.iter().take(if depth == 0 { 2 } else { 3 }).map(|x| trim(x, depth + 1)).collect(),
            ),
            Value::Object(o) => {
                Value::Object(o.iter().map(|(k, x)| (k.clone(), trim(x, depth + 1))).collect())
            }
            other => other.clone(),
        }
    }
    let sdk = sdk_at(asof());
    let mut out = Map::new();
    for (s, m, _) in builtin_methods(sdk.registry()) {
        if let Ok(a) = sdk.call(&s, &m, json!({})).await {
            out.insert(format!("{s}.{m}"), trim(&a.value, 0));
        }
    }
    std::fs::write(path, serde_json::to_string_pretty(&Value::Object(out)).expect("json"))
        .expect("write");
}

#[tokio::test]
async fn invented_news_and_filings_name_no_real_publisher_or_site() {
    let sdk = sdk_at(asof());
    let mut rows = Vec::new();
    for (s, m) in [("news", "searchNews"), ("news", "getTopStories"), ("company", "getFilings")] {
        let out = sdk.call(s, m, json!({})).await.expect("call");
        assert!(out.provenance.demo, "{s}.{m}");
        rows.extend(out.value.as_array().expect("rows").clone());
    }
    let profile = sdk.call("company", "getProfile", json!({})).await.expect("profile");
    rows.push(profile.value.clone());
    assert!(rows.len() > 10);
    for r in &rows {
        if let Some(source) = r["source"].as_str() {
            assert!(source.starts_with("Demo "), "a real-sounding publisher: {r}");
        }
        for key in ["url", "website"] {
            if let Some(url) = r[key].as_str() {
                assert!(url.starts_with("https://demo.invalid/"), "a real-looking link: {r}");
            }
        }
    }
}

/// The demo close of a past day is the same whenever it is asked (it used to drift as the clock
/// moved: 2025-01-09 read 266.97, then 252.48, then 247.85), and bar sizes agree where they meet.
#[tokio::test]
async fn past_prices_never_change_as_the_clock_moves() {
    let day = Utc.with_ymd_and_hms(2025, 1, 9, 0, 0, 0).single().expect("valid date").timestamp();
    let close_on = |rows: &Value| {
        rows.as_array()
            .and_then(|r| r.iter().find(|b| b["time"] == json!(day)))
            .map(|b| b["close"].clone())
            .expect("the day is in the series")
    };
    let mut seen = Vec::new();
    for (m, d) in [(1, 20), (3, 2), (6, 11)] {
        let now = Utc.with_ymd_and_hms(2025, m, d, 15, 30, 0).single().expect("valid date");
        let sdk = sdk_at(now);
        let rows = sdk
            .call("market", "getKline", json!({"symbol": "AAPL", "timeframe": "1D", "limit": 200}))
            .await
            .expect("kline");
        seen.push(close_on(&rows.value));
    }
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:?}");
    // Hourly bars: the close of the hour ending at midnight is the daily open's source price.
    let now = asof();
    let (_, daily) = super::series::bars("BTCUSDT", super::util::DAY, 30, now);
    let (_, hourly) = super::series::bars("BTCUSDT", 3600, 30 * 24, now);
    let d = &daily[10];
    let h = hourly.iter().find(|h| h.time + 3600 == d.time + super::util::DAY).expect("hour");
    assert_eq!(h.close, d.close, "the last hour of a day closes where the day does");
    // And the path still moves like the asset: realized volatility of daily closes near the
    // profile's (BTC 60%, AAPL 25% a year).
    for (sym, vol, days) in [("BTCUSDT", 0.6, 365.0), ("AAPL", 0.25, 252.0)] {
        let (_, b) = super::series::bars(sym, super::util::DAY, 500, now);
        let r: Vec<f64> = b.windows(2).map(|w| (w[1].close / w[0].close).ln()).collect();
        let mean = r.iter().sum::<f64>() / r.len() as f64;
        let var = r.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (r.len() - 1) as f64;
        let realized = (var * days).sqrt();
        assert!((0.4 * vol..2.0 * vol).contains(&realized), "{sym}: realized vol {realized}");
    }
}

/// Indicator series, flows, positioning and financial statements keep their past too: a month's CPI, a day's
/// on-chain count or a past quarter's revenue read the same a month or a season later.
#[tokio::test]
async fn past_indicator_values_and_statements_never_change_as_the_clock_moves() {
    let calls = vec![
        ("macro", "getCpi", json!({"country": "JP", "limit": 24, "provider": "demo"})),
        ("onchain", "getActiveAddresses", json!({"asset": "ETH", "limit": 120})),
        ("centralbank", "getMoneySupply", json!({"limit": 24})),
        (
            "fundamentals",
            "getIncomeStatement",
            json!({"period": "quarter", "limit": 8, "provider": "demo"}),
        ),
        (
            "fundamentals",
            "getBalanceSheet",
            json!({"period": "quarter", "limit": 8, "provider": "demo"}),
        ),
        (
            "fundamentals",
            "getCashFlow",
            json!({"period": "quarter", "limit": 4, "provider": "demo"}),
        ),
        ("etf", "getFlows", json!({"symbol": "GLD", "limit": 120})),
        ("onchain", "getExchangeFlows", json!({"limit": 120})),
        ("derivatives", "getLiquidations", json!({"timeframe": "4h", "limit": 500})),
        (
            "derivatives",
            "getOpenInterest",
            json!({"timeframe": "1D", "limit": 120, "provider": "demo"}),
        ),
        ("centralbank", "getBalanceSheet", json!({"limit": 30})),
        ("commodities", "getInventories", json!({"limit": 30})),
        ("futures", "getCotReport", json!({"limit": 30, "provider": "demo"})),
        ("sentiment", "getAaiiSurvey", json!({"limit": 30})),
        ("ipo", "getStats", json!({"limit": 12})),
        ("estimates", "getEarningsSurprises", json!({"limit": 8})),
        ("estimates", "getRevisions", json!({"limit": 40})),
        ("equities", "getBreadth", json!({"limit": 120})),
        ("correlation", "getRolling", json!({"limit": 120})),
        ("orderbook", "getSpreadHistory", json!({"timeframe": "1D", "limit": 120})),
        ("orderbook", "getImbalance", json!({"timeframe": "1D", "limit": 120})),
        ("ownership", "getShortInterest", json!({"limit": 12})),
    ];
    let at = |m, d, h| Utc.with_ymd_and_hms(2025, m, d, h, 0, 0).single().expect("date");
    assert_past_kept(calls, at(5, 20, 9), at(8, 2, 17)).await;
    // Feeds: an item, once published, reads the same the next day.
    let feeds = vec![
        ("news", "searchNews", json!({"query": "gold", "limit": 60, "provider": "demo"})),
        ("social", "searchPosts", json!({"query": "bitcoin", "limit": 400})),
        ("onchain", "getWhaleTransfers", json!({"limit": 200})),
        ("analyst", "getRatings", json!({"limit": 40})),
        ("ownership", "getInsiderTrades", json!({"limit": 40})),
        ("company", "getFilings", json!({"limit": 40, "provider": "demo"})),
    ];
    assert_past_kept(feeds, at(8, 1, 17), at(8, 2, 17)).await;
}

/// Asks each call at `early` and at `late`: every row the two answers share (by time, but for
/// the early answer's last, which may still be under way) is the same.
async fn assert_past_kept(
    calls: Vec<(&str, &str, Value)>,
    early: chrono::DateTime<Utc>,
    late: chrono::DateTime<Utc>,
) {
    let (early, late) = (sdk_at(early), sdk_at(late));
    for (source, method, params) in calls {
        let a = early.call(source, method, params.clone()).await.expect("early").value.clone();
        let b = late.call(source, method, params).await.expect("late").value.clone();
        let by_time = |rows: &Value| -> Vec<(i64, Value)> {
            rows.as_array()
                .expect("rows")
                .iter()
                .map(|r| (r["time"].as_i64().expect("time"), r.clone()))
                .collect()
        };
        let (a, b) = (by_time(&a), by_time(&b));
        // The early answer's last row may be a period still under way (today's bar).
        let done = &a[..a.len().saturating_sub(1)];
        let shared: Vec<_> = done.iter().filter(|(t, _)| b.iter().any(|(u, _)| u == t)).collect();
        assert!(!shared.is_empty(), "{source}.{method}: the two answers overlap");
        for (t, row) in shared {
            let later = &b.iter().find(|(u, _)| u == t).expect("shared").1;
            assert_eq!(row, later, "{source}.{method} at {t}");
        }
        assert!(b.last().map(|x| x.0) >= a.last().map(|x| x.0), "{source}.{method} went back");
    }
}

/// The demo never invents a company or a coin: an unknown symbol is an error that names
/// known ones, while known symbols and pairs of known currencies answer.
#[tokio::test]
async fn unknown_symbols_get_no_invented_data() {
    let sdk = sdk_at(asof());
    for (source, method, params) in [
        ("market", "getKline", json!({"symbol": "ZZZQ"})),
        ("fundamentals", "getIncomeStatement", json!({"symbol": "ZZZQ"})),
        ("market", "getQuotes", json!({"symbols": ["AAPL", "ZZZQ"]})),
    ] {
        let e = sdk.call(source, method, params).await.expect_err("unknown symbol").to_string();
        assert!(e.contains("the demo data has no symbol `ZZZQ`"), "{source}.{method}: {e}");
        assert!(e.contains("AAPL") && e.contains("live provider"), "{e}");
    }
    let e = sdk.call("market", "getKline", json!({"symbol": "AAPLL"})).await.expect_err("typo");
    assert!(e.to_string().contains("did you mean AAPL"), "{e}");
    for symbol in ["aapl", "BTC/USDT", "EURJPY", "XLK", "SPY"] {
        sdk.call("market", "getKline", json!({"symbol": symbol})).await.expect(symbol);
    }
}
