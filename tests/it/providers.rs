//! Real providers behind the standard methods: the real `sdk-spec/` directory (methods and
//! `providers/*.json`), every provider's base URL pointed at a loopback server replaying the
//! recorded wire shapes in `tests/fixtures/providers/` (documented in its README). Each test
//! checks values worked out by hand from the fixture, who served the answer, and how failures
//! read: an HTTP error or an error body sent with 200 names the host it came from, a renamed
//! field names the field, and offline every method falls to demo.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use boardsmith::provenance::Provenance;
use boardsmith::sandbox::SdkAnswer;
use boardsmith::sdk::provider::def::base_url_var;
use boardsmith::sdk::{Registry, Sdk, SdkConfig};
use serde_json::{Value, json};

use crate::support::upstream::{Reply, Server};

/// Every real provider the standard methods use.
const LIVE: &[&str] = &[
    "alternative-me",
    "defillama",
    "binance-futures",
    "coingecko",
    "binance",
    "frankfurter",
    "us-treasury",
    "fred",
    "gdelt",
    "tiingo",
    "alphavantage",
    "sec",
    "ecb",
    "worldbank",
    "cftc",
];

/// (source, method) of every method given a live provider here.
const SERVED: &[(&str, &str)] = &[
    ("sentiment", "getCryptoFearGreed"),
    ("sentiment", "getFearGreedNow"),
    ("defi", "getTvlHistory"),
    ("defi", "getChainTvl"),
    ("defi", "listProtocols"),
    ("defi", "getYieldPools"),
    ("defi", "getStablecoins"),
    ("derivatives", "getFundingRates"),
    ("derivatives", "getOpenInterest"),
    ("derivatives", "getFundingSnapshot"),
    ("crypto", "listMarkets"),
    ("crypto", "getKline"),
    ("crypto", "getQuote"),
    ("orderbook", "getDepth"),
    ("orderbook", "getTrades"),
    ("market", "getQuote"),
    ("fx", "getHistory"),
    ("fx", "getRate"),
    ("rates", "getYieldHistory"),
    ("macro", "getUnemployment"),
    ("macro", "getGdp"),
    ("news", "searchNews"),
    ("equities", "getKline"),
    ("macro", "getCpi"),
    ("company", "getFilings"),
    ("fundamentals", "getIncomeStatement"),
    ("fundamentals", "getBalanceSheet"),
    ("fundamentals", "getCashFlow"),
    ("macro", "getIndicator"),
    ("rates", "getYieldCurve"),
    ("futures", "getCotReport"),
    ("rates", "getPolicyRateHistory"),
];

fn fixture(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A recorded provider response (`tests/fixtures/providers/<name>`).
fn rec(name: &str) -> String {
    fixture(&format!("providers/{name}"))
}

fn ok(body: String) -> Vec<Reply> {
    vec![Reply::Body(200, body)]
}

/// The SDK over the real spec directory, every provider's `BOARDSMITH_<P>_BASE_URL` pointing at
/// `srv`, with `keys` as the only other variables (never the process environment).
fn sdk_for(srv: &Server, keys: &[(&str, &str)], offline: bool) -> Sdk {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("sdk-spec");
    let mut env: BTreeMap<String, String> =
        LIVE.iter().map(|p| (base_url_var(p), srv.origin.clone())).collect();
    env.extend(keys.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    let config = SdkConfig {
        use_env: false,
        outbound_allow: vec![srv.origin.clone()],
        env,
        offline,
        ..SdkConfig::default()
    };
    Sdk::with_registry(Registry::load_dir(&dir, &|_| true).unwrap(), config).unwrap()
}

/// Calls and checks that `provider` (not demo) served it.
async fn live(sdk: &Sdk, provider: &str, source: &str, method: &str, params: Value) -> Value {
    let a: Arc<SdkAnswer> =
        sdk.call(source, method, params).await.unwrap_or_else(|e| panic!("{source}.{method}: {e}"));
    let p: &Provenance = &a.provenance;
    assert_eq!((p.provider.as_str(), p.demo), (provider, false), "{source}.{method}");
    a.value.clone()
}

async fn fails(sdk: &Sdk, source: &str, method: &str, params: Value) -> String {
    match sdk.call(source, method, params).await {
        Ok(a) => panic!("{source}.{method}: expected an error, got {}", a.value),
        Err(e) => e.to_string(),
    }
}

fn assert_close(got: &Value, want: f64) {
    let g = got.as_f64().unwrap_or_else(|| panic!("not a number: {got}"));
    assert!((g - want).abs() <= 1e-9 * want.abs().max(1.0), "got {g}, want {want}");
}

/// The host:port the loopback server answers on, as errors name it.
fn host(srv: &Server) -> String {
    srv.origin.trim_start_matches("http://").to_owned()
}

/// `n` days before today (UTC) as `YYYY-MM-DD`, as the `days_ago` template filter gives it.
fn days_ago(n: i64) -> String {
    (chrono::Utc::now().date_naive() - chrono::Duration::days(n)).format("%Y-%m-%d").to_string()
}

// ---------------------------------------------------------------- alternative.me

#[tokio::test]
async fn fear_greed_comes_from_alternative_me_oldest_first() {
    let srv = Server::start().await;
    srv.on("/fng/", ok(rec("alternative_me/fng_limit5.json")));
    let sdk = sdk_for(&srv, &[], false);
    let out =
        live(&sdk, "alternative-me", "sentiment", "getCryptoFearGreed", json!({"limit": 3})).await;
    // The wire is newest first with string values; the answer is the last 3 days, ascending.
    assert_eq!(
        out,
        json!([
            {"time": 1717027200, "value": 75},
            {"time": 1717113600, "value": 72},
            {"time": 1717200000, "value": 73}
        ])
    );
    assert_eq!(srv.last("/fng/").0, "format=json&limit=3");

    srv.on("/fng/", vec![Reply::Body(503, "{\"message\":\"down\"}".into())]);
    let e = fails(&sdk_for(&srv, &[], false), "sentiment", "getCryptoFearGreed", json!({})).await;
    assert!(e.contains("HTTP 503") && e.contains(&format!("{}/fng/", host(&srv))), "{e}");

    let drift = rec("alternative_me/fng_limit5.json").replace("\"value\"", "\"score\"");
    srv.on("/fng/", ok(drift));
    let e = fails(&sdk_for(&srv, &[], false), "sentiment", "getCryptoFearGreed", json!({})).await;
    assert!(e.contains("expected field `value`"), "{e}");

    let error_body = json!({"name": "Fear and Greed Index", "data": [],
        "metadata": {"error": "Invalid limit"}});
    srv.on("/fng/", ok(error_body.to_string()));
    let e = fails(&sdk_for(&srv, &[], false), "sentiment", "getCryptoFearGreed", json!({})).await;
    assert!(
        e.contains(&format!("{}/fng/ answered with an error: Invalid limit", host(&srv))),
        "{e}"
    );
}

#[tokio::test]
async fn fear_greed_now_for_crypto_comes_from_alternative_me_and_stocks_stay_demo() {
    let srv = Server::start().await;
    srv.on("/fng/", ok(rec("alternative_me/fng_limit8.json")));
    let sdk = sdk_for(&srv, &[], false);
    let p = json!({"market": "crypto"});
    let now = live(&sdk, "alternative-me", "sentiment", "getFearGreedNow", p.clone()).await;
    // Newest first on the wire: today, yesterday, and 7 days before today.
    assert_eq!(
        now,
        json!({"time": 1717200000, "value": 73, "label": "Greed", "previousClose": 72,
               "weekAgo": 54, "components": null})
    );
    assert_eq!(srv.last("/fng/").0, "format=json&limit=8");
    let row = provider_row(&sdk, "sentiment", "getFearGreedNow", "alternative-me");
    assert_eq!(row["omits"], json!(["components"]));
    let stocks = sdk.call("sentiment", "getFearGreedNow", json!({})).await.unwrap();
    assert!(stocks.provenance.demo, "stocks (the default) are demo data");

    // A history shorter than a week has no week-ago reading.
    srv.on("/fng/", ok(rec("alternative_me/fng_limit5.json")));
    let short = live(
        &sdk_for(&srv, &[], false),
        "alternative-me",
        "sentiment",
        "getFearGreedNow",
        p.clone(),
    )
    .await;
    assert_eq!((&short["previousClose"], &short["weekAgo"]), (&json!(72), &Value::Null));

    srv.on("/fng/", vec![Reply::Body(502, "bad gateway".into())]);
    let e = fails(&sdk_for(&srv, &[], false), "sentiment", "getFearGreedNow", p.clone()).await;
    assert!(e.contains("HTTP 502") && e.contains(&format!("{}/fng/", host(&srv))), "{e}");
    let drift =
        rec("alternative_me/fng_limit8.json").replace("\"value_classification\"", "\"class\"");
    srv.on("/fng/", ok(drift));
    let e = fails(&sdk_for(&srv, &[], false), "sentiment", "getFearGreedNow", p).await;
    assert!(
        e.contains("missing `data.0.value_classification` (expected field `label` there)"),
        "{e}"
    );
}

// ---------------------------------------------------------------- DefiLlama

#[tokio::test]
async fn defillama_serves_tvl_chains_protocols_pools_and_stablecoins() {
    let srv = Server::start().await;
    srv.on(
        "/v2/historicalChainTvl/Ethereum",
        ok(rec("defillama/v2_historicalChainTvl_Ethereum.json")),
    );
    srv.on("/v2/chains", ok(rec("defillama/v2_chains.json")));
    srv.on("/protocols", ok(rec("defillama/protocols.json")));
    srv.on("/pools", ok(rec("defillama/yields_pools.json")));
    srv.on("/stablecoins", ok(rec("defillama/stablecoins_includePrices.json")));
    let sdk = sdk_for(&srv, &[], false);

    // TVL history: USD billions, the last `limit` days ascending.
    let p = json!({"chain": "Ethereum", "limit": 3});
    let tvl = live(&sdk, "defillama", "defi", "getTvlHistory", p).await;
    assert_eq!(
        tvl,
        json!([
            {"time": 1716940800, "value": 61.87602332},
            {"time": 1717027200, "value": 61.2043399},
            {"time": 1717113600, "value": 61.78321451}
        ])
    );
    // "all" (the default) is the chain-less endpoint: a second defillama entry, chosen by `when`
    // (also when forced).
    srv.on("/v2/historicalChainTvl", ok(rec("defillama/v2_historicalChainTvl_Ethereum.json")));
    let all = live(&sdk, "defillama", "defi", "getTvlHistory", json!({"limit": 1})).await;
    assert_eq!(all, json!([{"time": 1717113600, "value": 61.78321451}]));
    assert_eq!(srv.hits("/v2/historicalChainTvl"), 1);
    let forced = json!({"chain": "ALL", "limit": 1, "provider": "defillama"});
    assert_eq!(live(&sdk, "defillama", "defi", "getTvlHistory", forced).await, all);

    // Chains: sorted by TVL, share of the total derived, change1dPct not available (null).
    let chains = live(&sdk, "defillama", "defi", "getChainTvl", json!({})).await;
    let chains = chains.as_array().unwrap();
    assert_eq!(chains.len(), 5);
    assert_eq!(
        (&chains[0]["name"], &chains[0]["value"]),
        (&json!("Ethereum"), &json!(61783214512.21947))
    );
    assert_close(&chains[0]["sharePct"], 77.95423465);
    assert_eq!(chains[3]["name"], "BSC");
    assert_eq!(chains[4]["name"], "Zeta");
    assert!(chains.iter().all(|c| c["change1dPct"].is_null()));
    let sum: f64 = chains.iter().map(|c| c["sharePct"].as_f64().unwrap()).sum();
    assert!((sum - 100.0).abs() < 1e-6, "{sum}");

    // Protocols: by TVL, category filter (the standard "DEX" is DefiLlama's "Dexes").
    let all = live(&sdk, "defillama", "defi", "listProtocols", json!({})).await;
    assert_eq!(
        all[0],
        json!({"name": "Lido", "category": "Liquid Staking", "chain": "Multi-Chain",
               "tvl": 34051272618.4, "change1dPct": -1.1022, "change7dPct": 4.0815,
               "fees24h": null})
    );
    assert_eq!(all[1]["name"], "Aave V3");
    let lending =
        live(&sdk, "defillama", "defi", "listProtocols", json!({"category": "Lending"})).await;
    assert_eq!(lending.as_array().unwrap().len(), 1);
    assert_eq!(lending[0]["name"], "Aave V3");
    let dex = live(&sdk, "defillama", "defi", "listProtocols", json!({"category": "DEX"})).await;
    assert_eq!(dex, json!([]));
    let one = live(&sdk, "defillama", "defi", "listProtocols", json!({"limit": 1})).await;
    assert_eq!(one.as_array().unwrap().len(), 1);

    // Pools: by APY, asset and minimum-TVL filters.
    let pools = live(&sdk, "defillama", "defi", "getYieldPools", json!({})).await;
    let names: Vec<&str> =
        pools.as_array().unwrap().iter().map(|p| p["project"].as_str().unwrap()).collect();
    assert_eq!(names, ["uniswap-v3", "aave-v3", "lido"]);
    assert_eq!(
        pools[1],
        json!({"project": "aave-v3", "chain": "Ethereum", "symbol": "USDC", "apy": 8.2119,
               "apyBase": 8.2119, "apyReward": null, "tvl": 421007781, "stablecoin": true})
    );
    let usdc = live(&sdk, "defillama", "defi", "getYieldPools", json!({"asset": "usdc"})).await;
    assert_eq!(usdc.as_array().unwrap().len(), 2, "{usdc}");
    let big = live(&sdk, "defillama", "defi", "getYieldPools", json!({"minTvl": 1e8})).await;
    let names: Vec<&str> =
        big.as_array().unwrap().iter().map(|p| p["project"].as_str().unwrap()).collect();
    assert_eq!(names, ["aave-v3", "lido"]);

    // Stablecoins: USD-pegged ones (EURC has no USD circulation), 7-day change derived.
    let st = live(&sdk, "defillama", "defi", "getStablecoins", json!({})).await;
    let st = st.as_array().unwrap();
    assert_eq!(st.len(), 2);
    assert_eq!(
        (
            &st[0]["symbol"],
            &st[0]["name"],
            &st[0]["mechanism"],
            &st[0]["circulating"],
            &st[0]["price"]
        ),
        (
            &json!("USDT"),
            &json!("Tether"),
            &json!("fiat-backed"),
            &json!(111954320981.22),
            &json!(1.0004)
        )
    );
    assert_close(&st[0]["change7dPct"], 0.5062408354);
    assert_close(&st[1]["change7dPct"], 0.1878545187);
    assert!(st[0].get("prevWeek").is_none(), "helper fields are dropped");
    assert_eq!(srv.last("/stablecoins").0, "includePrices=true");
}

#[tokio::test]
async fn defillama_failures_name_the_host_or_the_field() {
    let srv = Server::start().await;
    srv.on("/v2/historicalChainTvl/Nochain", vec![Reply::Body(404, "Chain not found".into())]);
    let e = fails(&sdk_for(&srv, &[], false), "defi", "getTvlHistory", json!({"chain": "Nochain"}))
        .await;
    assert!(
        e.contains(&format!(
            "HTTP 404 Not Found from {}/v2/historicalChainTvl/Nochain",
            host(&srv)
        )),
        "{e}"
    );
    srv.on("/v2/chains", vec![Reply::Body(502, "bad gateway".into())]);
    let e = fails(&sdk_for(&srv, &[], false), "defi", "getChainTvl", json!({})).await;
    assert!(e.contains("HTTP 502") && e.contains(&host(&srv)), "{e}");
    srv.on("/pools", ok(rec("defillama/yields_pools.json").replace("\"tvlUsd\"", "\"tvl_usd\"")));
    let e = fails(&sdk_for(&srv, &[], false), "defi", "getYieldPools", json!({})).await;
    assert!(e.contains("expected field `tvl`") && e.contains("tvlUsd"), "{e}");
    let chains = rec("defillama/v2_chains.json").replace("\"tvl\"", "\"TVL\"");
    srv.on("/v2/chains", ok(chains));
    let e = fails(&sdk_for(&srv, &[], false), "defi", "getChainTvl", json!({})).await;
    assert!(e.contains("expected field `value`"), "{e}");
    assert!(!e.contains("NaN"));
}

// ---------------------------------------------------------------- Binance USD-M futures

#[tokio::test]
async fn binance_futures_serves_funding_open_interest_and_snapshot() {
    let srv = Server::start().await;
    srv.on("/fapi/v1/fundingRate", ok(rec("binance/fapi_fundingRate.json")));
    srv.on("/futures/data/openInterestHist", ok(rec("binance/futures_data_openInterestHist.json")));
    srv.on("/fapi/v1/premiumIndex", ok(rec("binance/fapi_premiumIndex_all.json")));
    let sdk = sdk_for(&srv, &[], false);

    // Funding: a fraction on the wire (0.0001), percent in the standard shape (0.01).
    let p = json!({"symbol": "btcusdt", "limit": 2});
    let f = live(&sdk, "binance-futures", "derivatives", "getFundingRates", p).await;
    assert_eq!(
        f,
        json!([{"time": 1717171200, "value": 0.01}, {"time": 1717200000, "value": 0.005873}])
    );
    assert_eq!(srv.last("/fapi/v1/fundingRate").0, "limit=2&symbol=BTCUSDT");
    // Binance pages at most 1000 rows: a larger `limit` asks for 1000.
    let p = json!({"symbol": "ETHUSDT", "limit": 3000});
    let all = live(&sdk, "binance-futures", "derivatives", "getFundingRates", p).await;
    assert_eq!(all.as_array().unwrap().len(), 4);
    assert_eq!(srv.last("/fapi/v1/fundingRate").0, "limit=1000&symbol=ETHUSDT");

    let p = json!({"symbol": "BTCUSDT", "timeframe": "1D", "limit": 3});
    let oi = live(&sdk, "binance-futures", "derivatives", "getOpenInterest", p).await;
    let oi = oi.as_array().unwrap();
    assert_eq!(oi.len(), 3);
    assert_eq!(oi[0]["time"], 1717203600);
    assert_eq!(
        (&oi[2]["openInterest"], &oi[2]["openInterestUnits"]),
        (&json!(5474757401.0253), &json!(80853.271))
    );
    assert_close(&oi[2]["price"], 67712.25621);
    assert_eq!(srv.last("/futures/data/openInterestHist").0, "limit=3&period=1d&symbol=BTCUSDT");

    let snap = live(
        &sdk,
        "binance-futures",
        "derivatives",
        "getFundingSnapshot",
        json!({"symbol": "ethusdt"}),
    )
    .await;
    assert_eq!(snap.as_array().unwrap().len(), 1, "{snap}");
    assert_eq!(
        (
            &snap[0]["exchange"],
            &snap[0]["symbol"],
            &snap[0]["fundingRatePct"],
            &snap[0]["markPrice"]
        ),
        (&json!("Binance"), &json!("ETHUSDT"), &json!(0.006421), &json!(3812.07))
    );
    assert_close(&snap[0]["annualizedPct"], 7.030995);
    assert!(snap[0]["openInterest"].is_null());

    // Gold is no perp: demo.
    let gold =
        sdk.call("derivatives", "getFundingRates", json!({"symbol": "XAUUSD"})).await.unwrap();
    assert!(gold.provenance.demo);
}

#[tokio::test]
async fn binance_futures_failures_name_the_host_or_the_field() {
    let srv = Server::start().await;
    srv.on(
        "/fapi/v1/fundingRate",
        vec![Reply::Body(451, rec("binance/error_451_restricted_location.json"))],
    );
    let e = fails(&sdk_for(&srv, &[], false), "derivatives", "getFundingRates", json!({})).await;
    assert!(
        e.contains(&format!(
            "HTTP 451 Unavailable For Legal Reasons from {}/fapi/v1/fundingRate",
            host(&srv)
        )) && e.contains("restricted location"),
        "{e}"
    );
    let drift = rec("binance/futures_data_openInterestHist.json")
        .replace("sumOpenInterestValue", "oiValue");
    srv.on("/futures/data/openInterestHist", ok(drift));
    let e = fails(&sdk_for(&srv, &[], false), "derivatives", "getOpenInterest", json!({})).await;
    assert!(e.contains("expected field `openInterest`"), "{e}");
}

// ---------------------------------------------------------------- CoinGecko

#[tokio::test]
async fn coingecko_lists_markets_and_reads_its_200_error_body() {
    let srv = Server::start().await;
    srv.on("/api/v3/coins/markets", ok(rec("coingecko/coins_markets_usd.json")));
    let sdk = sdk_for(&srv, &[], false);
    let m = live(&sdk, "coingecko", "crypto", "listMarkets", json!({"limit": 2})).await;
    assert_eq!(
        m,
        json!([
            {"rank": 1, "symbol": "BTC", "name": "Bitcoin", "price": 67706, "changePct24h": 0.34759,
             "marketCap": 1334212406912u64, "volume24h": 21416038166u64, "circulatingSupply": 19704190},
            {"rank": 2, "symbol": "ETH", "name": "Ethereum", "price": 3812.07, "changePct24h": 0.94294,
             "marketCap": 457804513276u64, "volume24h": 11982044471u64, "circulatingSupply": 120110430.12}
        ])
    );
    let (q, _) = srv.last("/api/v3/coins/markets");
    assert_eq!(q, "order=market_cap_desc&page=1&per_page=2&sparkline=false&vs_currency=usd");

    srv.on("/api/v3/coins/markets", ok(rec("coingecko/error_429_rate_limit.json")));
    let e = fails(&sdk_for(&srv, &[], false), "crypto", "listMarkets", json!({})).await;
    assert!(
        e.contains(&format!(
            "{}/api/v3/coins/markets answered with an error: You've exceeded the Rate Limit",
            host(&srv)
        )),
        "{e}"
    );
    let drift = rec("coingecko/coins_markets_usd.json").replace("\"current_price\"", "\"price\"");
    srv.on("/api/v3/coins/markets", ok(drift));
    let e = fails(&sdk_for(&srv, &[], false), "crypto", "listMarkets", json!({})).await;
    assert!(e.contains("expected field `price`") && e.contains("current_price"), "{e}");
}

// ---------------------------------------------------------------- Binance spot

#[tokio::test]
async fn binance_spot_serves_crypto_klines_and_quotes() {
    let srv = Server::start().await;
    srv.on("/api/v3/klines", ok(fixture("binance_klines.json")));
    let all: Value = serde_json::from_str(&rec("binance/api_v3_ticker_24hr_all.json")).unwrap();
    let btc = all.as_array().unwrap().iter().find(|t| t["symbol"] == "BTCUSDT").unwrap().clone();
    srv.on("/api/v3/ticker/24hr", ok(btc.to_string()));
    let sdk = sdk_for(&srv, &[], false);

    let k =
        live(&sdk, "binance", "crypto", "getKline", json!({"symbol": "btcusdt", "limit": 3})).await;
    assert_eq!(k.as_array().unwrap().len(), 3);
    assert_eq!(
        k[0],
        json!({"time": 1717200000, "open": 67472.41, "high": 67860.0, "low": 67444.47,
                            "close": 67706.94, "volume": 8164.00934})
    );
    assert_eq!(srv.last("/api/v3/klines").0, "interval=1d&limit=3&symbol=BTCUSDT");

    let q = live(&sdk, "binance", "crypto", "getQuote", json!({"symbol": "BTCUSDT"})).await;
    let num = |k: &str| btc[k].as_str().unwrap().parse::<f64>().unwrap();
    assert_eq!(q["symbol"], "BTCUSDT");
    assert_close(&q["price"], num("lastPrice"));
    assert_close(&q["change"], 234.53);
    assert_close(&q["changePct"], 0.348);
    assert_close(&q["prevClose"], num("prevClosePrice"));
    assert_close(&q["bid"], num("bidPrice"));
    assert_close(&q["ask"], num("askPrice"));
    assert_eq!(q["updatedAt"], btc["closeTime"].as_i64().unwrap() / 1000);
    // market.getQuote: the same ticker for crypto pairs, demo for the rest.
    let mq = live(&sdk, "binance", "market", "getQuote", json!({"symbol": "btcusdt"})).await;
    assert_eq!(mq, q);
    assert_eq!(srv.last("/api/v3/ticker/24hr").0, "symbol=BTCUSDT");
    let gold = sdk.call("market", "getQuote", json!({})).await.unwrap();
    assert!(gold.provenance.demo, "XAUUSD (the default) is demo data");

    srv.on(
        "/api/v3/ticker/24hr",
        vec![Reply::Body(451, rec("binance/error_451_restricted_location.json"))],
    );
    for source in ["crypto", "market"] {
        let p = json!({"symbol": "BTCUSDT"});
        let e = fails(&sdk_for(&srv, &[], false), source, "getQuote", p).await;
        assert!(
            e.contains(&format!(
                "HTTP 451 Unavailable For Legal Reasons from {}/api/v3/ticker/24hr",
                host(&srv)
            )),
            "{source}: {e}"
        );
    }
    srv.on("/api/v3/ticker/24hr", ok(btc.to_string().replace("\"bidPrice\"", "\"bid\"")));
    let e = fails(&sdk_for(&srv, &[], false), "crypto", "getQuote", json!({})).await;
    assert!(e.contains("expected field `bid`"), "{e}");
}

#[tokio::test]
async fn binance_spot_serves_the_order_book_with_cumulative_sizes() {
    let srv = Server::start().await;
    srv.on("/api/v3/depth", ok(rec("binance/api_v3_depth.json")));
    let sdk = sdk_for(&srv, &[], false);

    let p = json!({"symbol": "btcusdt", "levels": 3});
    let d = live(&sdk, "binance", "orderbook", "getDepth", p).await;
    // Best bid 67706.93, best ask 67706.94; totals are running sums of the sizes; Binance sends
    // no time with the book.
    assert_eq!(
        d,
        json!({
            "symbol": "BTCUSDT", "time": null, "mid": 67706.935, "spread": 0.01,
            "bids": [{"price": 67706.93, "size": 1.2345, "total": 1.2345},
                     {"price": 67706.92, "size": 0.0082, "total": 1.2427},
                     {"price": 67706.5, "size": 0.312, "total": 1.5547}],
            "asks": [{"price": 67706.94, "size": 2.3456, "total": 2.3456},
                     {"price": 67707.0, "size": 0.0015, "total": 2.3471},
                     {"price": 67707.31, "size": 0.1477, "total": 2.4948}]
        })
    );
    assert_eq!(srv.last("/api/v3/depth").0, "limit=3&symbol=BTCUSDT");
    assert_eq!(provider_row(&sdk, "orderbook", "getDepth", "binance")["omits"], json!(["time"]));
    let all = live(&sdk, "binance", "orderbook", "getDepth", json!({})).await;
    assert_eq!(all["asks"].as_array().unwrap().len(), 5, "the fixture's 5 levels of 20 asked");
    assert_close(&all["asks"][4]["total"], 4.0948);
    assert!(
        sdk.call("orderbook", "getDepth", json!({"symbol": "AAPL"})).await.unwrap().provenance.demo
    );

    srv.on(
        "/api/v3/depth",
        vec![Reply::Body(451, rec("binance/error_451_restricted_location.json"))],
    );
    let e = fails(&sdk_for(&srv, &[], false), "orderbook", "getDepth", json!({})).await;
    assert!(
        e.contains(&format!(
            "HTTP 451 Unavailable For Legal Reasons from {}/api/v3/depth",
            host(&srv)
        )),
        "{e}"
    );
    srv.on("/api/v3/depth", ok(rec("binance/api_v3_depth.json").replace("\"asks\"", "\"a\"")));
    let e = fails(&sdk_for(&srv, &[], false), "orderbook", "getDepth", json!({})).await;
    assert!(e.contains("missing `asks` (expected field `asks` there)"), "{e}");
}

#[tokio::test]
async fn binance_spot_serves_recent_trades_with_the_taker_side() {
    let srv = Server::start().await;
    srv.on("/api/v3/trades", ok(rec("binance/api_v3_trades.json")));
    let sdk = sdk_for(&srv, &[], false);

    let t = live(&sdk, "binance", "orderbook", "getTrades", json!({"symbol": "BTCUSDT"})).await;
    // Trades within one second are all kept, in id order; a buyer-maker trade was a taker sell.
    assert_eq!(
        t,
        json!([
            {"id": 3613456785u64, "time": 1717216199, "price": 67706.5, "size": 0.012, "side": "sell"},
            {"id": 3613456786u64, "time": 1717216199, "price": 67706.93, "size": 0.005, "side": "sell"},
            {"id": 3613456787u64, "time": 1717216200, "price": 67706.94, "size": 0.25, "side": "buy"},
            {"id": 3613456788u64, "time": 1717216200, "price": 67706.94, "size": 0.0015, "side": "buy"},
            {"id": 3613456789u64, "time": 1717216200, "price": 67706.94, "size": 0.0012, "side": "buy"}
        ])
    );
    assert_eq!(srv.last("/api/v3/trades").0, "limit=100&symbol=BTCUSDT");

    srv.on("/api/v3/trades", vec![Reply::Body(400, rec("binance/error_invalid_symbol.json"))]);
    let e = fails(&sdk_for(&srv, &[], false), "orderbook", "getTrades", json!({})).await;
    assert!(
        e.contains(&format!("HTTP 400 Bad Request from {}/api/v3/trades", host(&srv)))
            && e.contains("Invalid symbol."),
        "{e}"
    );
    let drift = rec("binance/api_v3_trades.json").replace("\"isBuyerMaker\"", "\"m\"");
    srv.on("/api/v3/trades", ok(drift));
    let e = fails(&sdk_for(&srv, &[], false), "orderbook", "getTrades", json!({})).await;
    assert!(e.contains("missing `0.isBuyerMaker` (expected field `side` there)"), "{e}");
}

// ---------------------------------------------------------------- Frankfurter

#[tokio::test]
async fn frankfurter_serves_ecb_pairs_history_and_rate() {
    let srv = Server::start().await;
    // limit 3 asks for 3 × 1.5 = 5 calendar days (weekends have no rates).
    let path = format!("/v1/{}..", days_ago(5));
    srv.on(&path, ok(fixture("frankfurter_timeseries.json")));
    srv.on("/v1/latest", ok(fixture("frankfurter_latest.json")));
    let sdk = sdk_for(&srv, &[], false);

    let p = json!({"symbol": "usdeur", "limit": 3});
    let h = live(&sdk, "frankfurter", "fx", "getHistory", p).await;
    assert_eq!(
        h,
        json!([
            {"time": 1704240000, "value": 0.9155},
            {"time": 1704326400, "value": 0.9131},
            {"time": 1704412800, "value": 0.9147}
        ])
    );
    assert_eq!(srv.last(&path).0, "from=USD&to=EUR");
    // CNH is no ECB reference currency, and intraday bars are not served: demo.
    for p in [json!({"symbol": "USDCNH"}), json!({"symbol": "USDEUR", "timeframe": "1h"})] {
        assert!(sdk.call("fx", "getHistory", p).await.unwrap().provenance.demo);
    }

    let r =
        live(&sdk, "frankfurter", "fx", "getRate", json!({"base": "usd", "quote": "eur"})).await;
    assert_eq!(
        r,
        json!({"base": "USD", "quote": "EUR", "rate": 0.92157, "inverse": null,
               "changePct": null, "time": 1717372800})
    );
    assert_eq!(srv.last("/v1/latest").0, "from=USD&to=EUR");

    srv.on("/v1/latest", vec![Reply::Body(500, "{}".into())]);
    let e =
        fails(&sdk_for(&srv, &[], false), "fx", "getRate", json!({"base": "USD", "quote": "EUR"}))
            .await;
    assert!(
        e.contains(&format!("HTTP 500 Internal Server Error from {}/v1/latest", host(&srv))),
        "{e}"
    );
    srv.on("/v1/latest", ok(fixture("frankfurter_latest.json").replace("\"EUR\"", "\"XEU\"")));
    let e =
        fails(&sdk_for(&srv, &[], false), "fx", "getRate", json!({"base": "USD", "quote": "EUR"}))
            .await;
    assert!(e.contains("missing `rates.EUR` (expected field `rate` there)"), "{e}");
}

// ---------------------------------------------------------------- US Treasury and FRED

/// The path of this year's par yield curve file.
fn treasury_path() -> String {
    format!(
        "/resource-center/data-chart-center/interest-rates/daily-treasury-rates.csv/{}/all",
        chrono::Utc::now().format("%Y")
    )
}

#[tokio::test]
async fn treasury_csv_serves_yield_history_without_a_fred_key() {
    let srv = Server::start().await;
    let path = treasury_path();
    srv.on(
        &path,
        vec![Reply::Text(200, rec("us_treasury/daily_treasury_par_yield_curve_2026.csv"))],
    );
    let sdk = sdk_for(&srv, &[], false);
    let y =
        live(&sdk, "us-treasury", "rates", "getYieldHistory", json!({"tenor": "10Y", "limit": 2}))
            .await;
    assert_eq!(
        y,
        json!([{"time": 1790812800, "value": 5.24}, {"time": 1790899200, "value": 5.28}])
    );
    let (q, _) = srv.last(&path);
    let year = chrono::Utc::now().format("%Y").to_string();
    assert_eq!(
        q,
        format!("type=daily_treasury_yield_curve&page&_format=csv&field_tdr_date_value={year}")
    );
    let m1 = live(&sdk, "us-treasury", "rates", "getYieldHistory", json!({"tenor": "1M"})).await;
    assert_eq!(m1.as_array().unwrap().len(), 3);
    assert_eq!(m1[0], json!({"time": 1790726400, "value": 4.02}));

    // FRED needs its key: listed as needs-key, skipped.
    let listed = sdk.public_json();
    let providers = method_providers(&listed, "rates", "getYieldHistory");
    assert_eq!(providers[0], json!({"name": "fred", "status": "needs-key"}));
    assert_eq!(providers[1], json!({"name": "us-treasury", "status": "live"}));

    srv.on(&path, vec![Reply::Text(503, "Service Unavailable".into())]);
    let e = fails(&sdk_for(&srv, &[], false), "rates", "getYieldHistory", json!({})).await;
    assert!(e.contains("HTTP 503") && e.contains(&format!("{}{path}", host(&srv))), "{e}");
    let drift =
        rec("us_treasury/daily_treasury_par_yield_curve_2026.csv").replacen("Date", "Day", 1);
    srv.on(&path, vec![Reply::Text(200, drift)]);
    let e = fails(&sdk_for(&srv, &[], false), "rates", "getYieldHistory", json!({})).await;
    assert!(e.contains("missing `0.Date` (expected field `time` there)"), "{e}");
}

#[tokio::test]
async fn treasury_csv_serves_the_latest_us_yield_curve_one_row_per_tenor() {
    let srv = Server::start().await;
    let path = treasury_path();
    let csv = rec("us_treasury/daily_treasury_par_yield_curve_2026.csv");
    srv.on(&path, vec![Reply::Text(200, csv.clone())]);
    let sdk = sdk_for(&srv, &[], false);
    let curve = live(&sdk, "us-treasury", "rates", "getYieldCurve", json!({})).await;
    let rows = curve.as_array().unwrap();
    // 10/02/2026, the newest line, by maturity; changes against 10/01/2026 in basis points;
    // three days of file are not a month back.
    let tenors: Vec<&str> = rows.iter().map(|r| r["tenor"].as_str().unwrap()).collect();
    assert_eq!(
        tenors,
        ["1M", "1.5M", "2M", "3M", "4M", "6M", "1Y", "2Y", "3Y", "5Y", "7Y", "10Y", "20Y", "30Y"]
    );
    let at = |i: usize| &rows[i];
    assert_close(&at(0)["years"], 1.0 / 12.0);
    assert_eq!((&at(0)["yield"], &at(0)["change1mBps"]), (&json!(4.04), &Value::Null));
    assert_close(&at(0)["change1dBps"], -2.0);
    assert_eq!((&at(1)["years"], &at(1)["yield"]), (&json!(0.125), &json!(4.09)));
    assert_close(&at(1)["change1dBps"], -1.0);
    assert_eq!((&at(11)["years"], &at(11)["yield"]), (&json!(10.0), &json!(5.28)));
    assert_close(&at(11)["change1dBps"], 4.0);
    assert_close(&at(13)["change1dBps"], 2.0);
    assert_eq!(
        at(13).as_object().unwrap().keys().collect::<Vec<_>>(),
        ["tenor", "years", "yield", "change1dBps", "change1mBps"]
    );
    let year = chrono::Utc::now().format("%Y").to_string();
    assert_eq!(
        srv.last(&path).0,
        format!("type=daily_treasury_yield_curve&page&_format=csv&field_tdr_date_value={year}")
    );
    assert!(
        sdk.call("rates", "getYieldCurve", json!({"country": "DE"})).await.unwrap().provenance.demo
    );

    // An empty cell the day before: no 1-day change; an empty cell today: no such tenor today.
    srv.on(
        &path,
        vec![Reply::Text(
            200,
            rec("us_treasury/daily_treasury_par_yield_curve_2025_empty_cell.csv"),
        )],
    );
    let curve =
        live(&sdk_for(&srv, &[], false), "us-treasury", "rates", "getYieldCurve", json!({})).await;
    assert_eq!(curve[1]["tenor"], "1.5M");
    assert_eq!((&curve[1]["yield"], &curve[1]["change1dBps"]), (&json!(4.41), &Value::Null));
    srv.on(&path, vec![Reply::Text(200, csv.replacen("4.04,4.09,", "4.04,,", 1))]);
    let curve =
        live(&sdk_for(&srv, &[], false), "us-treasury", "rates", "getYieldCurve", json!({})).await;
    assert_eq!(curve.as_array().unwrap().len(), 13);
    assert_eq!(curve[1]["tenor"], "2M");

    srv.on(&path, vec![Reply::Text(503, "Service Unavailable".into())]);
    let e = fails(&sdk_for(&srv, &[], false), "rates", "getYieldCurve", json!({})).await;
    assert!(e.contains("HTTP 503") && e.contains(&format!("{}{path}", host(&srv))), "{e}");
    srv.on(&path, vec![Reply::Text(200, csv.replacen("Date", "Day", 1))]);
    let e = fails(&sdk_for(&srv, &[], false), "rates", "getYieldCurve", json!({})).await;
    assert!(e.contains("missing `0.Date` (expected field `time` there)"), "{e}");
    srv.on(&path, vec![Reply::Text(200, csv.replacen("\"20 Yr\"", "\"20 Yr Bond\"", 1))]);
    let e = fails(&sdk_for(&srv, &[], false), "rates", "getYieldCurve", json!({})).await;
    assert!(e.contains("member `20 Yr Bond`: expected a maturity"), "{e}");
}

#[tokio::test]
async fn fiscal_data_serves_the_us_public_debt_daily() {
    let srv = Server::start().await;
    let path = "/services/api/fiscal_service/v2/accounting/od/debt_to_penny";
    srv.on(path, ok(rec("us_treasury/fiscaldata_debt_to_penny_fields.json")));
    let sdk = sdk_for(&srv, &[], false);
    let params = json!({"indicator": "US_PUBLIC_DEBT", "limit": 2});
    let debt = live(&sdk, "us-treasury", "macro", "getIndicator", params).await;
    // Newest first on the wire; USD trillions, oldest first here.
    assert_eq!(debt[0]["time"], 1778457600);
    assert_close(&debt[0]["value"], 38.94680056140914);
    assert_close(&debt[1]["value"], 38.96829505980535);
    assert_eq!(
        srv.last(path).0,
        "fields=record_date%2Ctot_pub_debt_out_amt&page%5Bsize%5D=2&sort=-record_date"
    );
    srv.on(path, vec![Reply::Body(400, rec("us_treasury/fiscaldata_error_400.json"))]);
    let e = fails(&sdk, "macro", "getIndicator", json!({"indicator": "US_PUBLIC_DEBT"})).await;
    assert!(e.contains("HTTP 400") && e.contains("Invalid Query Param"), "{e}");
}

#[tokio::test]
async fn fred_serves_yields_unemployment_and_gdp_with_its_key() {
    let srv = Server::start().await;
    let obs = "/fred/series/observations";
    srv.on(obs, ok(rec("fred/series_observations_DGS10.json")));
    let key = [("BOARDSMITH_FRED_API_KEY", "abcdef0123456789abcdef0123456789")];
    let sdk = sdk_for(&srv, &key, false);
    let y =
        live(&sdk, "fred", "rates", "getYieldHistory", json!({"tenor": "10Y", "limit": 3})).await;
    // "." (a holiday) is no value: that day is left out.
    assert_eq!(
        y,
        json!([
            {"time": 1716940800, "value": 4.62},
            {"time": 1717027200, "value": 4.55},
            {"time": 1717113600, "value": 4.51}
        ])
    );
    let (q, _) = srv.last(obs);
    assert_eq!(
        q,
        "file_type=json&limit=3&series_id=DGS10&sort_order=desc&api_key=abcdef0123456789abcdef0123456789"
    );
    live(&sdk, "fred", "macro", "getUnemployment", json!({})).await;
    assert!(srv.last(obs).0.contains("series_id=UNRATE"));
    live(&sdk, "fred", "macro", "getGdp", json!({"country": "us"})).await;
    assert!(srv.last(obs).0.contains("series_id=A191RL1Q225SBEA"));
    // FRED serves the US only here (other countries are the World Bank's).
    let e = fails(&sdk, "macro", "getGdp", json!({"country": "CN", "provider": "fred"})).await;
    assert!(e.contains("country=CN does not match"), "{e}");
    // CPI: the index from FRED, year-over-year and month-over-month computed from it; months
    // without a year of history before them are left out rather than invented.
    srv.on(obs, ok(rec("fred/series_observations_CPIAUCSL_desc.json")));
    let cpi = live(&sdk, "fred", "macro", "getCpi", json!({"limit": 5})).await;
    let rows = cpi.as_array().unwrap();
    assert_eq!(rows.len(), 2, "14 months give 2 with a YoY: {cpi}");
    assert_eq!(rows[1]["time"], 1738368000);
    assert_eq!(rows[1]["index"], 319.775);
    assert_close(&rows[1]["value"], (319.775 / 311.054 - 1.0) * 100.0);
    assert_close(&rows[1]["mom"], (319.775 / 319.086 - 1.0) * 100.0);
    assert!(srv.last(obs).0.contains("series_id=CPIAUCSL"));

    // Without the key: needs-key, and forcing it says which variable to set.
    let keyless = sdk_for(&srv, &[], false);
    let e = fails(&keyless, "macro", "getUnemployment", json!({"provider": "fred"})).await;
    assert!(e.contains("the environment variable BOARDSMITH_FRED_API_KEY is not set"), "{e}");
    assert!(keyless.call("macro", "getUnemployment", json!({})).await.unwrap().provenance.demo);

    srv.on(obs, vec![Reply::Body(400, rec("fred/error_400_api_key_not_set.json"))]);
    let e = fails(&sdk_for(&srv, &key, false), "macro", "getUnemployment", json!({})).await;
    assert!(
        e.contains(&format!("HTTP 400 Bad Request from {}{obs}", host(&srv)))
            && e.contains("Variable api_key is not set"),
        "{e}"
    );
    srv.on(obs, vec![Reply::Body(429, rec("fred/error_429_too_many_requests.json"))]);
    let e = fails(&sdk_for(&srv, &key, false), "macro", "getUnemployment", json!({})).await;
    assert!(e.contains("HTTP 429") && e.contains(&host(&srv)), "{e}");
    srv.on(obs, ok(rec("fred/series_observations_DGS10.json").replace("\"date\"", "\"day\"")));
    let e = fails(&sdk_for(&srv, &key, false), "macro", "getUnemployment", json!({})).await;
    assert!(e.contains("expected field `time`"), "{e}");
}

#[tokio::test]
async fn fred_core_cpi_payrolls_and_spreads_and_the_treasury_spread_without_a_key() {
    let srv = Server::start().await;
    let obs = "/fred/series/observations";
    srv.on(obs, ok(rec("fred/series_observations_CPIAUCSL_desc.json")));
    let key = [("BOARDSMITH_FRED_API_KEY", "abcdef0123456789abcdef0123456789")];
    let sdk = sdk_for(&srv, &key, false);
    // Core CPI: the same arithmetic on CPILFESL, YoY only.
    let core = live(&sdk, "fred", "macro", "getCoreCpi", json!({"limit": 1})).await;
    assert!(srv.last(obs).0.contains("series_id=CPILFESL"));
    assert_eq!(core[0].as_object().unwrap().keys().collect::<Vec<_>>(), ["time", "value"]);
    assert_close(&core[0]["value"], (319.775 / 311.054 - 1.0) * 100.0);
    // Payrolls: PAYEMS is a level; the standard value is the month's change.
    let pay = live(&sdk, "fred", "macro", "getNonfarmPayrolls", json!({"limit": 2})).await;
    assert!(srv.last(obs).0.contains("series_id=PAYEMS"));
    assert_close(&pay[1]["value"], 319.775 - 319.086);
    assert_close(&pay[0]["value"], 319.086 - 317.603);
    // Spreads FRED publishes come from FRED; the others from the Treasury's curve.
    srv.on(obs, ok(rec("fred/series_observations_DGS10.json")));
    let s = live(&sdk, "fred", "rates", "getSpreadHistory", json!({"spread": "3m10y", "limit": 1}))
        .await;
    assert!(srv.last(obs).0.contains("series_id=T10Y3M"), "{:?}", srv.last(obs));
    assert_eq!(s, json!([{"time": 1717113600, "value": 4.51}]));
    let path = treasury_path();
    srv.on(
        &path,
        vec![Reply::Text(200, rec("us_treasury/daily_treasury_par_yield_curve_2026.csv"))],
    );
    let t =
        live(&sdk, "us-treasury", "rates", "getSpreadHistory", json!({"spread": "5s30s"})).await;
    let t = t.as_array().unwrap();
    assert_eq!(t.len(), 3, "this year's three days in the file");
    assert_eq!(t[2]["time"], 1790899200);
    assert_close(&t[2]["value"], 5.63 - 5.06);
    let keyless = sdk_for(&srv, &[], false);
    let k = live(&keyless, "us-treasury", "rates", "getSpreadHistory", json!({"limit": 2})).await;
    assert_close(&k[1]["value"], 5.28 - 4.83);
    assert_close(&k[0]["value"], 5.24 - 4.78);
}

// ---------------------------------------------------------------- SEC EDGAR

#[tokio::test]
async fn sec_serves_filings_after_looking_up_the_cik_and_declares_a_contact() {
    let srv = Server::start().await;
    let (list, subs) = ("/files/company_tickers.json", "/submissions/CIK0000320193.json");
    srv.on(list, ok(rec("sec/company_tickers.json")));
    srv.on(subs, ok(rec("sec/submissions_CIK0000320193.json")));
    let contact = [("BOARDSMITH_SEC_CONTACT", "Jane Doe jane@example.com")];
    let sdk = sdk_for(&srv, &contact, false);
    let f = live(&sdk, "sec", "company", "getFilings", json!({"symbol": "aapl", "limit": 3})).await;
    // Oldest first, the last `limit`; links to the document on sec.gov.
    assert_eq!(
        f,
        json!([
            {"time": 1730392247, "form": "8-K", "title": "Apple Inc. — 8-K",
             "url": "https://www.sec.gov/Archives/edgar/data/320193/000032019324000120/aapl-20241031.htm"},
            {"time": 1730399531, "form": "4", "title": "Apple Inc. — FORM 4",
             "url": "https://www.sec.gov/Archives/edgar/data/320193/000114036124045310/xslF345X05/wk-form4_1730413925.xml"},
            {"time": 1730440896, "form": "10-K", "title": "Apple Inc. — 10-K",
             "url": "https://www.sec.gov/Archives/edgar/data/320193/000032019324000123/aapl-20240928.htm"}
        ])
    );
    // SEC asks every client to say who it is.
    let (_, headers) = srv.last(subs);
    assert_eq!(headers["user-agent"], "Boardsmith Jane Doe jane@example.com");
    // The ticker list is fetched once and kept.
    live(&sdk, "sec", "company", "getFilings", json!({"symbol": "AAPL", "limit": 2})).await;
    assert_eq!(srv.hits(list), 1);
    // An unknown ticker is an error naming it, not invented filings.
    let e =
        fails(&sdk, "company", "getFilings", json!({"symbol": "ZZZQ", "provider": "sec"})).await;
    assert!(e.contains("lists no entry with ticker = ZZZQ"), "{e}");
    // Without a contact, SEC is not called: demo serves, and forcing SEC says what to set.
    let anonymous = sdk_for(&srv, &[], false);
    assert!(anonymous.call("company", "getFilings", json!({})).await.unwrap().provenance.demo);
    let e = fails(&anonymous, "company", "getFilings", json!({"provider": "sec"})).await;
    assert!(e.contains("BOARDSMITH_SEC_CONTACT"), "{e}");
    // SEC's block page for undeclared tools is HTML with 403: a clear error.
    srv.on(
        subs,
        vec![Reply::Text(
            403,
            "<html><title>SEC.gov | Request Rate Threshold Exceeded</title></html>".into(),
        )],
    );
    let e = fails(&sdk_for(&srv, &contact, false), "company", "getFilings", json!({})).await;
    assert!(e.contains("HTTP 403") && e.contains("Request Rate Threshold Exceeded"), "{e}");
}

/// Epoch seconds of a UTC date.
fn day(d: &str) -> i64 {
    let d: chrono::NaiveDate = d.parse().unwrap();
    d.and_hms_opt(0, 0, 0).unwrap().and_utc().timestamp()
}

#[tokio::test]
async fn sec_company_facts_become_income_balance_and_cash_flow_statements() {
    let srv = Server::start().await;
    let facts = "/api/xbrl/companyfacts/CIK0000320193.json";
    srv.on("/files/company_tickers.json", ok(rec("sec/company_tickers.json")));
    srv.on(facts, ok(rec("sec/companyfacts_CIK0000320193.json")));
    let sdk = sdk_for(&srv, &[("BOARDSMITH_SEC_CONTACT", "Jane Doe jane@example.com")], false);
    let call = |method: &'static str, params: Value| {
        let sdk = &sdk;
        async move { live(sdk, "sec", "fundamentals", method, params).await }
    };
    let b = 1e6;
    // Annual: the fiscal years as filed, each line from the concept Apple reports it under.
    let inc = call("getIncomeStatement", json!({"symbol": "AAPL", "limit": 2})).await;
    let inc = inc.as_array().unwrap();
    assert_eq!(inc.len(), 2, "{inc:?}");
    let fy24 = &inc[1];
    assert_eq!(
        (fy24["fiscalPeriod"].as_str(), fy24["time"].as_i64()),
        (Some("FY2024"), Some(day("2023-09-30")))
    );
    assert_eq!(inc[0]["fiscalPeriod"], "FY2023");
    assert_close(&fy24["revenue"], 391_035.0 * b);
    assert_close(&fy24["costOfRevenue"], 210_352.0 * b);
    assert_close(&fy24["grossProfit"], 180_683.0 * b);
    assert_close(&fy24["operatingIncome"], 123_216.0 * b);
    assert_close(&fy24["ebitda"], (123_216.0 + 11_445.0) * b);
    assert_close(&fy24["netIncome"], 93_736.0 * b);
    assert_close(&fy24["eps"], 6.08);
    // Lines Apple does not report under the listed concepts are null, never invented.
    assert_eq!(fy24["interestExpense"], Value::Null);
    assert!(fy24.get("depreciation").is_none(), "helper field dropped: {fy24}");
    // Quarters: three from the 10-Qs, the fourth the year minus the first three.
    let q = call("getIncomeStatement", json!({"symbol": "AAPL", "period": "quarter", "limit": 4}))
        .await;
    let q = q.as_array().unwrap();
    let labels: Vec<&str> = q.iter().map(|r| r["fiscalPeriod"].as_str().unwrap()).collect();
    assert_eq!(labels, ["2024-Q1", "2024-Q2", "2024-Q3", "2024-Q4"]);
    assert_close(&q[3]["revenue"], (391_035.0 - 296_105.0) * b);
    assert_eq!(q[3]["time"].as_i64(), Some(day("2024-06-30")));
    assert_close(&q[3]["netIncome"], 14_736.0 * b);
    assert_eq!(q[3]["eps"], Value::Null, "per-share values are not subtracted");
    // Balance sheet: the identity holds on the filed numbers; time opens the period it closes.
    let bs = call("getBalanceSheet", json!({"symbol": "AAPL", "limit": 5})).await;
    let bs = bs.as_array().unwrap();
    assert_eq!(bs.len(), 3, "FY2022, FY2023 and FY2024 balance-sheet dates: {bs:?}");
    let last = &bs[2];
    assert_eq!(
        (last["fiscalPeriod"].as_str(), last["time"].as_i64()),
        (Some("FY2024"), Some(day("2023-09-30")))
    );
    let (assets, liab, eq) = (
        last["totalAssets"].as_f64().unwrap(),
        last["totalLiabilities"].as_f64().unwrap(),
        last["totalEquity"].as_f64().unwrap(),
    );
    assert_close(&json!(liab + eq), assets);
    assert_close(&last["nonCurrentAssets"], (364_980.0 - 152_987.0) * b);
    assert_close(&last["sharesOutstanding"], 15_116_786_000.0);
    // Cash flow: outflows negative; quarters from the year-to-date amounts 10-Qs state.
    let cf = call("getCashFlow", json!({"symbol": "AAPL", "limit": 1})).await;
    assert_close(&cf[0]["capitalExpenditure"], -9_447.0 * b);
    assert_close(&cf[0]["freeCashFlow"], (118_254.0 - 9_447.0) * b);
    assert_close(&cf[0]["shareRepurchases"], -94_949.0 * b);
    let cq = call("getCashFlow", json!({"symbol": "AAPL", "period": "quarter", "limit": 4})).await;
    let ocf: Vec<f64> = cq
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["operatingCashFlow"].as_f64().unwrap() / b)
        .collect();
    assert_eq!(ocf, [39_895.0, 22_690.0, 28_858.0, 26_811.0]);
    // The ticker list is fetched once; an unknown ticker is an error, not invented statements.
    assert_eq!(srv.hits("/files/company_tickers.json"), 1);
    let e = fails(
        &sdk,
        "fundamentals",
        "getIncomeStatement",
        json!({"symbol": "ZZZQ", "provider": "sec"}),
    )
    .await;
    assert!(e.contains("lists no entry with ticker = ZZZQ"), "{e}");
    // A body that is not a company-facts document reads as such.
    srv.on(facts, ok(json!({"cik": 320193}).to_string()));
    let e = fails(
        &sdk,
        "fundamentals",
        "getBalanceSheet",
        json!({"symbol": "AAPL", "period": "quarter"}),
    )
    .await;
    assert!(e.contains("company-facts") && e.contains(&host(&srv)), "{e}");
}

// ---------------------------------------------------------------- GDELT

#[tokio::test]
async fn gdelt_serves_real_headlines_oldest_first() {
    let srv = Server::start().await;
    let doc = "/api/v2/doc/doc";
    srv.on(doc, ok(rec("gdelt/doc_artlist.json")));
    let sdk = sdk_for(&srv, &[], false);
    let n =
        live(&sdk, "gdelt", "news", "searchNews", json!({"query": "fed rates", "limit": 2})).await;
    assert_eq!(
        n,
        json!([
            {"id": "https://m.example-zeitung.de/wirtschaft/ezb-zinsen", "time": 1717241400,
             "source": "example-zeitung.de", "title": "EZB signalisiert Zinssenkung im Juni",
             "summary": null, "url": "https://m.example-zeitung.de/wirtschaft/ezb-zinsen",
             "symbols": null, "sentiment": null},
            {"id": "https://www.example-news.com/markets/fed-holds-rates-steady", "time": 1717244100,
             "source": "example-news.com", "title": "Fed holds rates steady as inflation cools",
             "summary": null, "url": "https://www.example-news.com/markets/fed-holds-rates-steady",
             "symbols": null, "sentiment": null}
        ])
    );
    assert_eq!(
        srv.last(doc).0,
        "format=json&maxrecords=2&mode=artlist&query=fed+rates&sort=datedesc"
    );

    // Its rate-limit notice is plain text, not JSON.
    srv.on(doc, vec![Reply::Text(200, rec("gdelt/rate_limit_notice.txt"))]);
    let e = fails(&sdk_for(&srv, &[], false), "news", "searchNews", json!({})).await;
    assert!(
        e.contains(&format!("response from {}{doc} is not valid JSON", host(&srv)))
            && e.contains("Please limit requests to one every 5 seconds"),
        "{e}"
    );
    srv.on(doc, ok(rec("gdelt/doc_artlist.json").replace("\"seendate\"", "\"date\"")));
    let e = fails(&sdk_for(&srv, &[], false), "news", "searchNews", json!({})).await;
    assert!(e.contains("expected field `time`"), "{e}");
}

// ---------------------------------------------------------------- Tiingo and Alpha Vantage

#[tokio::test]
async fn tiingo_serves_daily_equity_bars_with_its_key() {
    let srv = Server::start().await;
    let path = "/tiingo/daily/aapl/prices";
    srv.on(path, ok(rec("tiingo/daily_AAPL_prices.json")));
    let key = [("BOARDSMITH_TIINGO_API_KEY", "tiingo-secret")];
    let sdk = sdk_for(&srv, &key, false);
    let k =
        live(&sdk, "tiingo", "equities", "getKline", json!({"symbol": "AAPL", "limit": 2})).await;
    assert_eq!(
        k,
        json!([
            {"time": 1704240000, "open": 184.22, "high": 185.88, "low": 183.43, "close": 184.25,
             "volume": 58414460},
            {"time": 1704326400, "open": 182.15, "high": 183.0872, "low": 180.88, "close": 181.91,
             "volume": 71983570}
        ])
    );
    let (q, headers) = srv.last(path);
    assert_eq!(q, format!("format=json&startDate={}", days_ago(3)));
    assert_eq!(headers["authorization"], "Token tiingo-secret");
    assert!(!q.contains("secret"));

    srv.on(path, vec![Reply::Body(429, rec("tiingo/error_429_hourly_allocation.json"))]);
    let e = fails(&sdk_for(&srv, &key, false), "equities", "getKline", json!({})).await;
    assert!(
        e.contains(&format!("HTTP 429 Too Many Requests from {}{path}", host(&srv)))
            && e.contains("hourly request allocation"),
        "{e}"
    );
    srv.on(path, vec![Reply::Body(404, rec("tiingo/error_404_ticker_not_found.json"))]);
    let e = fails(&sdk_for(&srv, &key, false), "equities", "getKline", json!({})).await;
    assert!(e.contains("HTTP 404") && e.contains("not found"), "{e}");
    srv.on(path, ok(rec("tiingo/daily_AAPL_prices.json").replace("\"close\"", "\"last\"")));
    let e = fails(&sdk_for(&srv, &key, false), "equities", "getKline", json!({})).await;
    assert!(e.contains("expected field `close`"), "{e}");
}

#[tokio::test]
async fn alphavantage_serves_daily_bars_and_its_200_errors_are_errors() {
    let srv = Server::start().await;
    let path = "/query";
    srv.on(path, ok(rec("alphavantage/time_series_daily_IBM_compact.json")));
    let key = [("BOARDSMITH_ALPHAVANTAGE_API_KEY", "av-secret")];
    let sdk = sdk_for(&srv, &key, false);
    // Without a Tiingo key, Alpha Vantage is the first that can serve.
    let k =
        live(&sdk, "alphavantage", "equities", "getKline", json!({"symbol": "ibm", "limit": 3}))
            .await;
    assert_eq!(k.as_array().unwrap().len(), 3);
    assert_eq!(
        k[2],
        json!({"time": 1717113600, "open": 166.44, "high": 168.76, "low": 163.9, "close": 166.85,
               "volume": 6950453})
    );
    assert_eq!(k[0]["time"], 1716940800);
    let (q, _) = srv.last(path);
    assert_eq!(q, "function=TIME_SERIES_DAILY&outputsize=compact&symbol=IBM&apikey=av-secret");

    for (file, says) in [
        (
            "alphavantage/rate_limit_information_200.json",
            "standard API rate limit is 25 requests per day",
        ),
        ("alphavantage/rate_limit_note_legacy_200.json", "Thank you for using Alpha Vantage"),
        ("alphavantage/error_invalid_api_call_200.json", "Invalid API call"),
        ("alphavantage/demo_key_information_200.json", "demo"),
    ] {
        srv.on(path, ok(rec(file)));
        let e = fails(&sdk_for(&srv, &key, false), "equities", "getKline", json!({})).await;
        assert!(
            e.contains(&format!("{}{path} answered with an error: ", host(&srv)))
                && e.contains(says),
            "{file}: {e}"
        );
    }
    srv.on(
        path,
        ok(rec("alphavantage/time_series_daily_IBM_compact.json").replace("4. close", "4. last")),
    );
    let e = fails(&sdk_for(&srv, &key, false), "equities", "getKline", json!({})).await;
    assert!(e.contains("expected field `close`"), "{e}");
}

// ---------------------------------------------------------------- ECB Data Portal

#[tokio::test]
async fn policy_rate_history_comes_from_the_ecb_and_fred() {
    let srv = Server::start().await;
    let dfr = "/service/data/FM/D.U2.EUR.4F.KR.DFR.LEV";
    srv.on(dfr, vec![Reply::Text(200, rec("ecb/FM_D.U2.EUR.4F.KR.DFR.LEV_csvdata_dataonly.csv"))]);
    let obs = "/fred/series/observations";
    srv.on(obs, ok(rec("fred/series_observations_DGS10.json")));
    let key = [("BOARDSMITH_FRED_API_KEY", "abcdef0123456789abcdef0123456789")];
    let sdk = sdk_for(&srv, &key, false);
    // The ECB's deposit facility rate, a row per calendar day: the cut of 23 October 2024.
    let ecb =
        live(&sdk, "ecb", "rates", "getPolicyRateHistory", json!({"bank": "ECB", "limit": 3}))
            .await;
    assert_eq!(
        ecb,
        json!([
            {"time": 1729641600, "value": 3.25},
            {"time": 1729728000, "value": 3.25},
            {"time": 1729814400, "value": 3.25}
        ])
    );
    assert_eq!(srv.last(dfr).0, "detail=dataonly&format=csvdata&lastNObservations=3");
    let fed = live(&sdk, "fred", "rates", "getPolicyRateHistory", json!({"limit": 1})).await;
    assert!(srv.last(obs).0.contains("series_id=DFEDTARU"));
    assert_eq!(fed, json!([{"time": 1717113600, "value": 4.51}]));
    // Without the FRED key the Fed's history is demo data, and says so.
    let keyless = sdk_for(&srv, &[], false);
    let demo = keyless.call("rates", "getPolicyRateHistory", json!({})).await.unwrap();
    assert!(demo.provenance.demo);
    srv.on(dfr, vec![Reply::Body(404, rec("ecb/error_404_no_series.json"))]);
    let e = fails(&sdk, "rates", "getPolicyRateHistory", json!({"bank": "ECB"})).await;
    assert!(e.contains("HTTP 404") && e.contains(&format!("{}{dfr}", host(&srv))), "{e}");
}

#[tokio::test]
async fn ecb_serves_euro_area_hicp_inflation_yoy_only() {
    let srv = Server::start().await;
    let path = "/service/data/ICP/M.U2.N.000000.4.ANR";
    let csv = rec("ecb/ICP_M.U2.N.000000.4.ANR_csvdata_first11cols.csv");
    srv.on(path, vec![Reply::Text(200, csv.clone())]);
    let sdk = sdk_for(&srv, &[], false);
    let cpi = live(&sdk, "ecb", "macro", "getCpi", json!({"country": "ea", "limit": 3})).await;
    // Months "2024-04".."2024-06" at their first day; the ECB publishes the annual rate only.
    assert_eq!(
        cpi,
        json!([
            {"time": 1711929600, "value": 2.4, "mom": null, "index": null},
            {"time": 1714521600, "value": 2.6, "mom": null, "index": null},
            {"time": 1717200000, "value": 2.5, "mom": null, "index": null}
        ])
    );
    assert_eq!(srv.last(path).0, "detail=dataonly&format=csvdata&lastNObservations=3");
    // U2 (the ECB's code for the euro area) is the same series; other countries are not ECB's.
    live(&sdk, "ecb", "macro", "getCpi", json!({"country": "U2"})).await;
    assert!(sdk.call("macro", "getCpi", json!({"country": "DE"})).await.unwrap().provenance.demo);
    let e = fails(&sdk, "macro", "getCpi", json!({"country": "DE", "provider": "ecb"})).await;
    assert!(e.contains("country=DE does not match"), "{e}");
    assert_eq!(provider_row(&sdk, "macro", "getCpi", "ecb")["omits"], json!(["mom", "index"]));

    // CRLF line ends (as the live service sends) and an empty provisional value.
    let crlf = csv.replace(",2.5,A,F", ",,A,F").replace('\n', "\r\n");
    srv.on(path, vec![Reply::Text(200, crlf)]);
    let cpi =
        live(&sdk_for(&srv, &[], false), "ecb", "macro", "getCpi", json!({"country": "EA"})).await;
    let rows = cpi.as_array().unwrap();
    assert_eq!(rows.len(), 5, "the empty June value is left out: {cpi}");
    assert_eq!(rows[4], json!({"time": 1714521600, "value": 2.6, "mom": null, "index": null}));

    srv.on(path, vec![Reply::Body(404, rec("ecb/error_404_no_series.json"))]);
    let e = fails(&sdk_for(&srv, &[], false), "macro", "getCpi", json!({"country": "EA"})).await;
    assert!(
        e.contains(&format!("HTTP 404 Not Found from {}{path}", host(&srv)))
            && e.contains("No Series was returned"),
        "{e}"
    );
    srv.on(path, vec![Reply::Text(200, csv.replace("OBS_VALUE", "OBS_VAL"))]);
    let e = fails(&sdk_for(&srv, &[], false), "macro", "getCpi", json!({"country": "EA"})).await;
    assert!(e.contains("no element has `OBS_VALUE` (expected field `value` there"), "{e}");
}

// ---------------------------------------------------------------- World Bank

#[tokio::test]
async fn worldbank_serves_annual_gdp_growth_and_indicators_by_id() {
    let srv = Server::start().await;
    let growth = "/v2/country/DE/indicator/NY.GDP.MKTP.KD.ZG";
    srv.on(growth, ok(rec("worldbank/country_DE_indicator_NY.GDP.MKTP.KD.ZG.json")));
    let sdk = sdk_for(&srv, &[], false);
    // Newest first on the wire, 2025 not out yet (null): the last 3 published years, ascending.
    let gdp =
        live(&sdk, "worldbank", "macro", "getGdp", json!({"country": "de", "limit": 3})).await;
    assert_eq!(
        gdp,
        json!([
            {"time": 1640995200, "value": 1.809934582},
            {"time": 1672531200, "value": -0.266430014},
            {"time": 1704067200, "value": -0.241896317}
        ])
    );
    assert_eq!(srv.last(growth).0, "format=json&per_page=1000");
    // The euro area is the World Bank's EMU; the US stays FRED's (demo without its key).
    let emu = "/v2/country/EMU/indicator/NY.GDP.MKTP.KD.ZG";
    srv.on(emu, ok(rec("worldbank/country_DE_indicator_NY.GDP.MKTP.KD.ZG.json")));
    live(&sdk, "worldbank", "macro", "getGdp", json!({"country": "EA"})).await;
    assert_eq!(srv.hits(emu), 1);
    for us in ["US", "usa"] {
        let a = sdk.call("macro", "getGdp", json!({"country": us})).await.unwrap();
        assert!(a.provenance.demo, "{us}");
    }

    // Any World Bank indicator id, ISO2 or ISO3 country.
    let mx = "/v2/country/MX/indicator/NY.GDP.MKTP.CD";
    srv.on(mx, ok(rec("worldbank/country_MX_indicator_NY.GDP.MKTP.CD_recorded.json")));
    let p = json!({"indicator": "ny.gdp.mktp.cd", "country": "MX"});
    let ind = live(&sdk, "worldbank", "macro", "getIndicator", p).await;
    assert_eq!(
        ind,
        json!([
            {"time": 1704067200, "value": 1830489311088.89},
            {"time": 1735689600, "value": 1832641364775.52}
        ])
    );
    let usa = "/v2/country/USA/indicator/NY.GDP.MKTP.CD";
    srv.on(usa, ok(rec("worldbank/country_USA_indicator_NY.GDP.MKTP.CD.json")));
    let p = json!({"indicator": "NY.GDP.MKTP.CD", "country": "USA", "limit": 2});
    let ind = live(&sdk, "worldbank", "macro", "getIndicator", p).await;
    assert_eq!(
        ind,
        json!([{"time": 1640995200, "value": 25744108000000u64},
               {"time": 1672531200, "value": 27360935000000u64}])
    );
    // Codes that are no World Bank id are demo's; "all" countries is no single series.
    let a = sdk.call("macro", "getIndicator", json!({})).await.unwrap();
    assert!(a.provenance.demo);
    let p = json!({"indicator": "NY.GDP.MKTP.CD", "country": "all", "provider": "worldbank"});
    let e = fails(&sdk, "macro", "getIndicator", p).await;
    assert!(e.contains("country=all does not match"), "{e}");

    // No data for the range: `[meta, null]`, an empty answer rather than an error.
    srv.on(mx, ok(rec("worldbank/no_data.json")));
    let p = json!({"indicator": "NY.GDP.MKTP.CD", "country": "MX"});
    let none = live(&sdk_for(&srv, &[], false), "worldbank", "macro", "getIndicator", p).await;
    assert_eq!(none, json!([]));
}

#[tokio::test]
async fn worldbank_errors_sent_with_200_or_http_name_the_host() {
    let srv = Server::start().await;
    let path = "/v2/country/ZZ/indicator/NY.GDP.MKTP.KD.ZG";
    srv.on(path, ok(rec("worldbank/error_invalid_value.json")));
    let p = json!({"country": "ZZ"});
    let e = fails(&sdk_for(&srv, &[], false), "macro", "getGdp", p.clone()).await;
    assert!(
        e.contains(&format!(
            "{}{path} answered with an error: The provided parameter value is not valid",
            host(&srv)
        )),
        "{e}"
    );
    srv.on(path, vec![Reply::Body(502, "<html>Bad Gateway</html>".into())]);
    let e = fails(&sdk_for(&srv, &[], false), "macro", "getGdp", p.clone()).await;
    assert!(e.contains(&format!("HTTP 502 Bad Gateway from {}{path}", host(&srv))), "{e}");
    let drift = rec("worldbank/country_DE_indicator_NY.GDP.MKTP.KD.ZG.json")
        .replace("\"date\"", "\"year\"");
    srv.on(path, ok(drift));
    let e = fails(&sdk_for(&srv, &[], false), "macro", "getGdp", p).await;
    assert!(e.contains("missing `1.0.date` (expected field `time` there)"), "{e}");
}

// ---------------------------------------------------------------- CFTC

#[tokio::test]
async fn cftc_serves_commitments_of_traders_nets_for_listed_markets() {
    let srv = Server::start().await;
    let path = "/resource/6dca-aqww.json";
    srv.on(path, ok(rec("cftc/legacy_futures_only_6dca-aqww_gold.json")));
    let sdk = sdk_for(&srv, &[], false);
    // Strings on the wire, newest first; nets are long minus short per group, ascending.
    let cot = live(&sdk, "cftc", "futures", "getCotReport", json!({"limit": 2})).await;
    assert_eq!(
        cot,
        json!([
            {"time": 1788825600, "nonCommercialNet": 221132.0, "commercialNet": -235509.0,
             "smallTradersNet": 14377.0, "openInterest": 402311.0},
            {"time": 1789430400, "nonCommercialNet": 230338.0, "commercialNet": -245338.0,
             "smallTradersNet": 15000.0, "openInterest": 409899.0}
        ])
    );
    let (q, _) = srv.last(path);
    assert!(
        q.starts_with("%24limit=2&%24order=report_date_as_yyyy_mm_dd+DESC&%24select=")
            && q.ends_with("&cftc_contract_market_code=088691"),
        "{q}"
    );
    live(&sdk, "cftc", "futures", "getCotReport", json!({"market": "SPX"})).await;
    assert!(srv.last(path).0.ends_with("&cftc_contract_market_code=13874A"));
    // A market without a CFTC code is refused, naming the supported ones, never invented.
    let e = fails(&sdk, "futures", "getCotReport", json!({"market": "LUMBER"})).await;
    assert!(e.contains("must be one of \"GOLD\", \"SILVER\"") && e.contains("\"VIX\""), "{e}");

    // Socrata's JSON error (its shape UNCONFIRMED, see the fixtures README).
    let soql = json!({"code": "query.soql.no-such-column", "error": true,
        "message": "No such column: noncomm_positions_long_al", "data": {}});
    srv.on(path, vec![Reply::Body(400, soql.to_string())]);
    let e = fails(&sdk_for(&srv, &[], false), "futures", "getCotReport", json!({})).await;
    assert!(
        e.contains(&format!("HTTP 400 Bad Request from {}{path}", host(&srv)))
            && e.contains("No such column"),
        "{e}"
    );
    srv.on(path, ok(soql.to_string()));
    let e = fails(&sdk_for(&srv, &[], false), "futures", "getCotReport", json!({})).await;
    assert!(e.contains("answered with an error: No such column"), "{e}");
    let drift = rec("cftc/legacy_futures_only_6dca-aqww_gold.json")
        .replace("comm_positions_short_all", "comm_positions_short");
    srv.on(path, ok(drift));
    let e = fails(&sdk_for(&srv, &[], false), "futures", "getCotReport", json!({})).await;
    assert!(e.contains("missing `0.noncomm_positions_short_all`"), "{e}");
}

// ---------------------------------------------------------------- offline, keys, listing

fn method_providers(listed: &Value, source: &str, method: &str) -> Vec<Value> {
    let src = listed["sources"].as_array().unwrap().iter().find(|s| s["name"] == source).unwrap();
    let m = src["methods"].as_array().unwrap().iter().find(|m| m["name"] == method).unwrap();
    m["providers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| json!({"name": p["name"], "status": p["status"]}))
        .collect()
}

/// The registry's row for one provider of a method (`status`, `when`, `omits`).
fn provider_row(sdk: &Sdk, source: &str, method: &str, provider: &str) -> Value {
    let listed = sdk.public_json();
    let src = listed["sources"].as_array().unwrap().iter().find(|s| s["name"] == source).unwrap();
    let m = src["methods"].as_array().unwrap().iter().find(|m| m["name"] == method).unwrap();
    m["providers"].as_array().unwrap().iter().find(|p| p["name"] == provider).unwrap().clone()
}

#[tokio::test]
async fn offline_every_method_falls_to_demo_and_keyed_providers_need_their_keys() {
    let srv = Server::start().await;
    let offline = sdk_for(&srv, &[], true);
    for (source, method) in SERVED {
        let a = offline.call(source, method, json!({})).await.unwrap();
        assert!(a.provenance.demo, "{source}.{method} offline");
        let listed = offline.public_json();
        let providers = method_providers(&listed, source, method);
        assert_eq!(providers.last().unwrap(), &json!({"name": "demo", "status": "demo"}));
        for p in &providers[..providers.len() - 1] {
            assert_eq!(p["status"], "disabled", "{source}.{method}: {p}");
        }
    }
    assert_eq!(srv.hits("/fng/"), 0);

    let online = sdk_for(&srv, &[], false);
    let listed = online.public_json();
    for (source, method) in SERVED {
        let providers = method_providers(&listed, source, method);
        assert_eq!(providers.last().unwrap()["name"], "demo", "{source}.{method}: demo is last");
        for p in &providers[..providers.len() - 1] {
            let keyed =
                matches!(p["name"].as_str(), Some("fred" | "tiingo" | "alphavantage" | "sec"));
            let want = if keyed { "needs-key" } else { "live" };
            assert_eq!(p["status"], want, "{source}.{method}: {p}");
        }
    }
    let e = fails(&online, "equities", "getKline", json!({"provider": "alphavantage"})).await;
    assert!(e.contains("BOARDSMITH_ALPHAVANTAGE_API_KEY is not set"), "{e}");
    let e = fails(&online, "equities", "getKline", json!({"provider": "tiingo"})).await;
    assert!(e.contains("BOARDSMITH_TIINGO_API_KEY is not set"), "{e}");
    let keyed = sdk_for(&srv, &[("BOARDSMITH_TIINGO_API_KEY", "t")], false);
    let providers = method_providers(&keyed.public_json(), "equities", "getKline");
    assert_eq!(providers[0], json!({"name": "tiingo", "status": "live"}));
}
