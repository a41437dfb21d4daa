//! Deterministic synthetic data for `builtin` sources: the same source, method, params and day
//! always give the same data, so everything works offline and tests are reproducible.
//!
//! Generators are grouped by family: [`series`] (klines, quotes, books, technicals,
//! correlation, FX), [`metrics`] (`{time, value}` indicator profiles and multi-column series),
//! [`derivs`] (options, futures and yield curves, vol snapshots), [`corporate`] (statements,
//! estimates, ownership, dividends, IPOs), [`feeds`] (news, posts, calendars, whale transfers)
//! and [`lists`] (screeners, sectors, ETFs, DeFi rankings). A spec method names its generator
//! with `{"kind": "builtin", "generator": "..."}`; [`GENERATORS`] lists every id.
//!
//! Conventions: time-series rows carry `time` in UTC seconds, strictly ascending, aligned to the
//! bar size and never after `now` (calendars of upcoming events are the only rows dated in the
//! future); recent rows of a series do not depend on `limit`; fields are camelCase numbers.

pub mod corporate;
pub mod derivs;
pub mod feeds;
pub mod lists;
pub mod metrics;
pub mod series;
pub mod stable;
pub mod util;

#[cfg(test)]
mod tests;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};

/// What a generator may depend on besides its params.
#[derive(Debug, Clone)]
pub struct GenContext {
    /// Seed derived from (source, method, canonical params, UTC day).
    pub seed: u64,
    /// "Now": series end at or before this instant.
    pub now: DateTime<Utc>,
}

impl GenContext {
    /// Derives the seed from the call's identity and the UTC day of `now`.
    pub fn new(
        source: &str,
        method: &str,
        params: &Map<String, Value>,
        now: DateTime<Utc>,
    ) -> Self {
        let key =
            format!("{source}.{method}|{}|{}", now.date_naive(), Value::Object(params.clone()));
        Self { seed: xxhash_rust::xxh3::xxh3_64(key.as_bytes()), now }
    }
}

/// Every generator id `generate` accepts (besides the `{time, value}` ids in
/// [`metrics::PROFILES`]).
pub const GENERATORS: &[&str] = &[
    "kline",
    "quote",
    "quotes",
    "indexList",
    "commodityList",
    "cryptoMarkets",
    "movers",
    "mostActive",
    "trades",
    "depth",
    "spreadHistory",
    "bookImbalance",
    "rsi",
    "macd",
    "bollinger",
    "movingAverages",
    "pivots",
    "realizedVol",
    "correlationMatrix",
    "rollingCorrelation",
    "betas",
    "crossRates",
    "fxRate",
    "currencyStrength",
    "closeSeries",
    "goldSilverRatio",
    "breadth",
    "etfFlows",
    "exchangeFlows",
    "liquidations",
    "openInterest",
    "cbBalanceSheet",
    "inventories",
    "cot",
    "aaii",
    "ipoStats",
    "cpi",
    "optionChain",
    "ivSurface",
    "ivSkew",
    "ivTermStructure",
    "unusualOptions",
    "futuresCurve",
    "futuresContracts",
    "yieldCurve",
    "policyRates",
    "rateProbabilities",
    "volIndices",
    "vixTermStructure",
    "fxVol",
    "cdsQuotes",
    "fundingSnapshot",
    "incomeStatement",
    "balanceSheet",
    "cashFlow",
    "ratios",
    "keyMetrics",
    "segments",
    "estimates",
    "surprises",
    "revisions",
    "ratings",
    "consensus",
    "recommendationTrend",
    "priceTargets",
    "institutionalHolders",
    "fundHolders",
    "ownershipSummary",
    "insiderTrades",
    "shortInterest",
    "dividends",
    "splits",
    "upcomingDividends",
    "companyProfile",
    "peers",
    "executives",
    "filings",
    "ipoUpcoming",
    "ipoRecent",
    "posts",
    "trending",
    "influencers",
    "searchNews",
    "symbolNews",
    "topStories",
    "economicCalendar",
    "earningsCalendar",
    "holidays",
    "whaleTransfers",
    "screenStocks",
    "screenCrypto",
    "technicalSignals",
    "sectorPerformance",
    "industryPerformance",
    "heatmap",
    "sectorRotation",
    "listEtfs",
    "etfProfile",
    "etfHoldings",
    "protocols",
    "yieldPools",
    "chainTvl",
    "stablecoins",
    "fearGreedNow",
];

/// Params that name a market symbol; the demo answers only for symbols it knows.
const SYMBOL_PARAMS: &[&str] = &["symbol", "symbols", "symbolA", "symbolB", "benchmark", "pair"];

/// Every symbol the demo has data for (normalised), besides pairs of known currencies.
pub fn demo_symbols() -> &'static std::collections::BTreeSet<String> {
    static SET: std::sync::OnceLock<std::collections::BTreeSet<String>> =
        std::sync::OnceLock::new();
    SET.get_or_init(|| {
        let stocks = series::STOCKS.iter().map(|s| s.0);
        let indices = series::INDICES.iter().map(|s| s.0);
        let commodities = series::COMMODITIES.iter().map(|s| s.0);
        let crypto = series::CRYPTO.iter().map(|s| s.0);
        let sectors = series::SECTORS.iter().map(|s| s.1);
        util::known_symbols()
            .chain(stocks)
            .chain(indices)
            .chain(commodities)
            .chain(crypto)
            .chain(sectors)
            .chain(lists::etf_symbols())
            .map(util::norm_symbol)
            .collect()
    })
}

/// Refuses symbols the demo does not know: it would have to invent a company or a coin.
fn check_symbols(params: &Map<String, Value>) -> Result<(), String> {
    let known = demo_symbols();
    for key in SYMBOL_PARAMS {
        for given in util::p_list(params, key, &[]) {
            let sym = util::norm_symbol(&given);
            if known.contains(&sym) || util::is_fx_pair(&sym) {
                continue;
            }
            let names: Vec<&str> = known.iter().map(String::as_str).collect();
            let near = base::text::closest(&sym, &names);
            let hint = if near.is_empty() {
                String::new()
            } else {
                format!("; did you mean {}?", near.join(", "))
            };
            let sample: Vec<&str> =
                ["AAPL", "MSFT", "NVDA", "SPX", "BTCUSDT", "ETHUSDT", "EURUSD", "XAUUSD", "WTI"]
                    .into_iter()
                    .collect();
            return Err(format!(
                "the demo data has no symbol `{given}`{hint} (it covers a fixed set of {} symbols, \
                 such as {}, and currency pairs like EURJPY); real data for it needs a live provider",
                known.len(),
                sample.join(", ")
            ));
        }
    }
    Ok(())
}

/// Runs generator `name` with validated params (defaults applied). Errors are written for the
/// model that made the call.
pub fn generate(
    name: &str,
    params: &Map<String, Value>,
    ctx: &GenContext,
) -> Result<Value, String> {
    use corporate as co;
    use derivs as dv;
    use feeds as fd;
    use lists as ls;
    use metrics as mt;
    use series as sr;
    check_symbols(params)?;
    if let Some(r) = mt::metric(name, params, ctx) {
        return r;
    }
    Ok(match name {
        "kline" => return sr::kline(params, ctx, "XAUUSD"),
        "quote" => return sr::quote(params, ctx, "XAUUSD"),
        "quotes" => return sr::quotes(params, ctx, &["XAUUSD", "SPX", "BTCUSDT", "EURUSD", "WTI"]),
        "indexList" => sr::named_quotes(sr::INDICES, ctx),
        "commodityList" => sr::named_quotes(sr::COMMODITIES, ctx),
        "cryptoMarkets" => sr::crypto_markets(params, ctx),
        "movers" => sr::movers(params, ctx, false),
        "mostActive" => sr::movers(params, ctx, true),
        "trades" => sr::trades(params, ctx),
        "depth" => sr::depth(params, ctx),
        "spreadHistory" => return sr::spread_history(params, ctx),
        "bookImbalance" => return sr::imbalance(params, ctx),
        "rsi" | "macd" | "bollinger" => return sr::technical(name, params, ctx),
        "movingAverages" => return sr::technical("ma", params, ctx),
        "pivots" => return sr::pivots(params, ctx),
        "realizedVol" => return sr::realized_vol(params, ctx),
        "correlationMatrix" => return sr::corr_matrix(params, ctx),
        "rollingCorrelation" => return sr::rolling_corr(params, ctx),
        "betas" => return sr::betas(params, ctx),
        "crossRates" => return sr::cross_rates(params, ctx),
        "fxRate" => return sr::fx_rate(params, ctx),
        "currencyStrength" => sr::currency_strength(params, ctx),
        "closeSeries" => return sr::close_series(params, ctx, "EURUSD"),
        "goldSilverRatio" => sr::ratio_series(params, ctx, "XAUUSD", "XAGUSD"),
        "breadth" => sr::breadth(params, ctx),
        "etfFlows" => mt::etf_flows(params, ctx),
        "exchangeFlows" => mt::exchange_flows(params, ctx),
        "liquidations" => return mt::liquidations(params, ctx),
        "openInterest" => return mt::open_interest(params, ctx),
        "cbBalanceSheet" => mt::cb_balance_sheet(params, ctx),
        "inventories" => mt::inventories(params, ctx),
        "cot" => mt::cot(params, ctx),
        "aaii" => mt::aaii(params, ctx),
        "ipoStats" => mt::ipo_stats(params, ctx),
        "cpi" => return mt::cpi_detail(params, ctx),
        "optionChain" => dv::chain(params, ctx),
        "ivSurface" => dv::surface(params, ctx),
        "ivSkew" => dv::skew(params, ctx),
        "ivTermStructure" => dv::term_structure(params, ctx),
        "unusualOptions" => dv::unusual(params, ctx),
        "futuresCurve" => dv::futures_curve(params, ctx),
        "futuresContracts" => dv::futures_contracts(),
        "yieldCurve" => dv::yield_curve(params, ctx),
        "policyRates" => dv::policy_rates(ctx),
        "rateProbabilities" => dv::rate_probabilities(params, ctx),
        "volIndices" => dv::vol_indices(ctx),
        "vixTermStructure" => dv::vix_term(ctx),
        "fxVol" => dv::fx_vol(params, ctx),
        "cdsQuotes" => dv::cds(params, ctx),
        "fundingSnapshot" => dv::funding_snapshot(params, ctx),
        "incomeStatement" => co::income(params, ctx),
        "balanceSheet" => co::balance(params, ctx),
        "cashFlow" => co::cashflow(params, ctx),
        "ratios" => co::ratios(params, ctx),
        "keyMetrics" => co::key_metrics(params, ctx),
        "segments" => co::segments(params, ctx),
        "estimates" => co::estimates(params, ctx),
        "surprises" => co::surprises(params, ctx),
        "revisions" => co::revisions(params, ctx),
        "ratings" => co::ratings(params, ctx),
        "consensus" => co::consensus(params, ctx),
        "recommendationTrend" => co::rec_trend(params, ctx),
        "priceTargets" => co::price_targets(params, ctx),
        "institutionalHolders" => co::institutional(params, ctx),
        "fundHolders" => co::fund_holders(params, ctx),
        "ownershipSummary" => co::ownership_summary(params, ctx),
        "insiderTrades" => co::insider_trades(params, ctx),
        "shortInterest" => co::short_interest(params, ctx),
        "dividends" => co::dividends(params, ctx),
        "splits" => co::splits(params, ctx),
        "upcomingDividends" => co::upcoming_dividends(params, ctx),
        "companyProfile" => co::company_profile(params, ctx),
        "peers" => co::peers(params, ctx),
        "executives" => co::executives(params, ctx),
        "filings" => co::filings(params, ctx),
        "ipoUpcoming" => co::ipo_upcoming(params, ctx),
        "ipoRecent" => co::ipo_recent(params, ctx),
        "posts" => fd::posts(params, ctx),
        "trending" => fd::trending(params, ctx),
        "influencers" => fd::influencers(params, ctx),
        "searchNews" => fd::search_news(params, ctx),
        "symbolNews" => fd::symbol_news(params, ctx),
        "topStories" => fd::top_stories(params, ctx),
        "economicCalendar" => fd::economic_calendar(params, ctx),
        "earningsCalendar" => fd::earnings_calendar(params, ctx),
        "holidays" => fd::holidays(params, ctx),
        "whaleTransfers" => fd::whale_transfers(params, ctx),
        "screenStocks" => return ls::screen_stocks(params, ctx),
        "screenCrypto" => ls::screen_crypto(params, ctx),
        "technicalSignals" => ls::technical_signals(params, ctx),
        "sectorPerformance" => ls::sector_performance(params, ctx),
        "industryPerformance" => ls::industry_performance(params, ctx),
        "heatmap" => ls::heatmap(params, ctx),
        "sectorRotation" => ls::rotation(params, ctx),
        "listEtfs" => ls::list_etfs(params, ctx),
        "etfProfile" => ls::etf_profile(params, ctx),
        "etfHoldings" => ls::etf_holdings(params, ctx),
        "protocols" => ls::protocols(params, ctx),
        "yieldPools" => ls::yield_pools(params, ctx),
        "chainTvl" => ls::chain_tvl(ctx),
        "stablecoins" => ls::stablecoins(ctx),
        "fearGreedNow" => fear_greed_now(params, ctx)?,
        other => {
            let mut names: Vec<&str> = GENERATORS.to_vec();
            names.extend(mt::PROFILES.iter().map(|p| p.id));
            let near = base::text::closest(other, &names);
            return Err(format!(
                "no builtin generator `{other}` (spec error in the method's backing){}",
                if near.is_empty() {
                    String::new()
                } else {
                    format!("; closest: {}", near.join(", "))
                }
            ));
        }
    })
}

/// Today's Fear & Greed reading with its components (each 0-100).
fn fear_greed_now(params: &Map<String, Value>, ctx: &GenContext) -> Result<Value, String> {
    let id = if util::p_str(params, "market", "stocks") == "crypto" {
        "cryptoFearGreed"
    } else {
        "fearGreed"
    };
    let mut p = Map::new();
    p.insert("limit".into(), json!(8));
    let series = metrics::metric(id, &p, ctx).unwrap_or_else(|| Err("missing profile".into()))?;
    let v = |i: usize| series.get(i).and_then(|r| r["value"].as_f64()).unwrap_or(50.0);
    let now = v(7);
    let label = |x: f64| match x {
        x if x < 25.0 => "Extreme Fear",
        x if x < 45.0 => "Fear",
        x if x <= 55.0 => "Neutral",
        x if x <= 75.0 => "Greed",
        _ => "Extreme Greed",
    };
    let names = [
        "Market momentum",
        "Stock price strength",
        "Stock price breadth",
        "Put/call options",
        "Market volatility",
        "Safe haven demand",
        "Junk bond demand",
    ];
    let mut rng = util::rng_ctx(ctx.seed);
    let comps: Vec<Value> = names
        .iter()
        .map(|n| {
            let c = (now + 15.0 * util::gauss(&mut rng)).clamp(0.0, 100.0).round();
            util::obj([("name", json!(n)), ("value", json!(c)), ("label", json!(label(c)))])
        })
        .collect();
    Ok(util::obj([
        ("time", json!(ctx.now.timestamp())),
        ("value", json!(now)),
        ("label", json!(label(now))),
        ("previousClose", json!(v(6))),
        ("weekAgo", json!(v(0))),
        ("components", Value::Array(comps)),
    ]))
}
