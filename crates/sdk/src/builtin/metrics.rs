//! Indicator time series: a table of `{time, value}` profiles (macro prints, on-chain counts,
//! sentiment indices, spreads, rates...) generated as mean-reverting processes whose value at
//! each period is a function of (series, period) alone ([`super::stable`]), plus multi-column
//! series (flows, liquidations, balance sheets, positioning).

use serde_json::{Map, Value, json};

use super::GenContext;
use super::stable;
use super::util::*;

/// 2025-01-01T00:00:00Z: where trending demo series reach their typical level.
const Y2025: i64 = 1_735_689_600;

/// Sampling frequency of a series.
#[derive(Debug, Clone, Copy)]
pub enum Freq {
    /// Fixed step in seconds; `true` skips weekends (market data).
    Secs(i64, bool),
    /// Calendar months per period (1 monthly, 3 quarterly, 12 annual).
    Months(u32),
}

/// How one `{time, value}` series behaves.
#[derive(Debug, Clone, Copy)]
pub struct Profile {
    /// Generator id.
    pub id: &'static str,
    /// Sampling frequency.
    pub freq: Freq,
    /// Long-run level.
    pub base: f64,
    /// Per-step noise (absolute units, or relative when `log`).
    pub vol: f64,
    /// Per-step pull toward `base` (0..1).
    pub revert: f64,
    /// Lower bound.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
    /// Decimals kept.
    pub dec: i32,
    /// Multiplicative (log-normal) walk instead of additive.
    pub log: bool,
    /// Param whose value shifts the level (e.g. `country`, `asset`, `chain`), and its default.
    pub key: Option<(&'static str, &'static str)>,
}

const D: Freq = Freq::Secs(DAY, false);
const DM: Freq = Freq::Secs(DAY, true);
const M: Freq = Freq::Months(1);

macro_rules! p {
    ($id:literal, $f:expr, $b:expr, $v:expr, $r:expr, $lo:expr, $hi:expr, $d:expr, $log:expr, $key:expr) => {
        Profile {
            id: $id,
            freq: $f,
            base: $b,
            vol: $v,
            revert: $r,
            lo: $lo,
            hi: $hi,
            dec: $d,
            log: $log,
            key: $key,
        }
    };
}

/// Every `{time, value}` series generator.
pub const PROFILES: &[Profile] = &[
    p!("macroCpi", M, 2.9, 0.18, 0.06, -3.0, 15.0, 1, false, Some(("country", "US"))),
    p!("macroCoreCpi", M, 3.2, 0.12, 0.05, -2.0, 12.0, 1, false, Some(("country", "US"))),
    p!("macroGdp", Freq::Months(3), 2.4, 0.9, 0.35, -9.0, 12.0, 1, false, Some(("country", "US"))),
    p!("macroUnemployment", M, 4.1, 0.1, 0.04, 1.5, 16.0, 1, false, Some(("country", "US"))),
    p!("macroPmi", M, 49.6, 1.1, 0.15, 35.0, 65.0, 1, false, Some(("country", "US"))),
    p!("macroRetailSales", M, 0.3, 0.6, 0.7, -6.0, 6.0, 1, false, Some(("country", "US"))),
    p!("macroPayrolls", M, 170.0, 70.0, 0.4, -400.0, 600.0, 0, false, None),
    p!("macroIndicator", M, 50.0, 1.5, 0.1, -1e9, 1e9, 2, false, Some(("indicator", "CPI"))),
    p!("moneySupply", M, 21.4, 0.006, 0.0, 1.0, 1e3, 2, true, Some(("country", "US"))),
    p!("fxReserves", M, 3250.0, 0.006, 0.0, 10.0, 1e5, 1, true, Some(("country", "CN"))),
    p!("activeAddresses", D, 820_000.0, 0.06, 0.12, 1e4, 1e8, 0, true, Some(("asset", "BTC"))),
    p!("txCount", D, 520_000.0, 0.07, 0.12, 1e4, 1e8, 0, true, Some(("asset", "BTC"))),
    p!("gasPrice", Freq::Secs(3600, false), 14.0, 0.18, 0.2, 0.5, 500.0, 2, true, None),
    p!("hashRate", D, 780.0, 0.03, 0.02, 50.0, 5000.0, 1, true, None),
    p!("mvrv", D, 2.1, 0.015, 0.01, 0.5, 5.0, 3, true, Some(("asset", "BTC"))),
    p!("stablecoinSupply", D, 205.0, 0.002, 0.0, 1.0, 1e4, 2, true, None),
    p!("tvlHistory", D, 118.0, 0.02, 0.01, 0.01, 1e4, 3, true, Some(("chain", "all"))),
    p!("dexVolume", D, 6.8, 0.25, 0.3, 0.05, 1e3, 3, true, Some(("chain", "all"))),
    p!("fearGreed", D, 55.0, 6.0, 0.08, 0.0, 100.0, 0, false, None),
    p!("cryptoFearGreed", D, 60.0, 7.0, 0.08, 0.0, 100.0, 0, false, None),
    p!("symbolSentiment", D, 0.08, 0.09, 0.2, -1.0, 1.0, 3, false, Some(("symbol", "AAPL"))),
    p!("newsSentimentTrend", D, 0.02, 0.08, 0.25, -1.0, 1.0, 3, false, Some(("query", "gold"))),
    p!("mentions", D, 9_000.0, 0.3, 0.25, 10.0, 1e7, 0, true, Some(("query", "bitcoin"))),
    p!("dominance", D, 57.5, 0.3, 0.02, 35.0, 75.0, 2, false, Some(("asset", "BTC"))),
    p!("totalMarketCap", D, 3.25e12, 0.028, 0.01, 1e11, 2e13, 0, true, None),
    p!("vixHistory", DM, 16.5, 1.1, 0.09, 9.0, 80.0, 2, false, None),
    p!("ivHistory", DM, 25.0, 0.9, 0.08, 5.0, 200.0, 2, false, Some(("symbol", "SPY"))),
    p!("putCallRatio", DM, 0.92, 0.08, 0.25, 0.3, 2.5, 3, false, Some(("symbol", "SPY"))),
    p!("yieldHistory", DM, 4.3, 0.045, 0.01, -1.0, 20.0, 3, false, Some(("tenor", "10Y"))),
    p!("curveSpread", DM, 0.25, 0.035, 0.01, -2.0, 3.5, 3, false, Some(("spread", "2s10s"))),
    p!("policyRateHistory", D, 3.0, 0.03, 0.004, 0.0, 10.0, 2, false, Some(("bank", "FED"))),
    p!("oasHistory", DM, 3.1, 0.05, 0.02, 0.3, 25.0, 3, false, Some(("rating", "HY"))),
    p!("defaultRate", M, 3.4, 0.15, 0.05, 0.2, 15.0, 2, false, Some(("segment", "HY"))),
    p!(
        "fundingRates",
        Freq::Secs(8 * 3600, false),
        0.01,
        0.005,
        0.3,
        -0.3,
        0.3,
        5,
        false,
        Some(("symbol", "BTCUSDT"))
    ),
    p!(
        "longShortRatio",
        Freq::Secs(3600, false),
        1.15,
        0.04,
        0.1,
        0.3,
        4.0,
        3,
        false,
        Some(("symbol", "BTCUSDT"))
    ),
    p!("basisHistory", DM, 8.0, 0.6, 0.08, -15.0, 40.0, 2, false, Some(("symbol", "BTC"))),
    p!("premiumDiscount", DM, 0.02, 0.06, 0.5, -3.0, 3.0, 3, false, Some(("symbol", "SPY"))),
    p!("newsVolume", D, 420.0, 0.25, 0.3, 1.0, 1e6, 0, true, Some(("query", "market"))),
];

/// Level shifts for well-known keys; unknown keys get a stable hash-derived shift.
fn level(p: &Profile, key: &str) -> f64 {
    let k = key.to_uppercase();
    let table: &[(&str, f64)] = match p.id {
        "macroCpi" | "macroCoreCpi" => &[
            ("US", 1.0),
            ("CN", 0.1),
            ("EU", 0.8),
            ("EA", 0.8),
            ("JP", 0.9),
            ("UK", 1.1),
            ("GB", 1.1),
            ("DE", 0.8),
            ("IN", 1.8),
            ("BR", 1.6),
        ],
        "macroGdp" => &[
            ("US", 1.0),
            ("CN", 2.0),
            ("EU", 0.4),
            ("EA", 0.4),
            ("JP", 0.3),
            ("UK", 0.4),
            ("GB", 0.4),
            ("DE", 0.1),
            ("IN", 2.7),
        ],
        "macroUnemployment" => &[
            ("US", 1.0),
            ("CN", 1.25),
            ("EU", 1.55),
            ("EA", 1.55),
            ("JP", 0.62),
            ("UK", 1.05),
            ("GB", 1.05),
            ("DE", 0.83),
        ],
        "macroPmi" => {
            &[("US", 1.0), ("CN", 1.02), ("EU", 0.93), ("EA", 0.93), ("JP", 0.99), ("UK", 0.97)]
        }
        "moneySupply" => &[("US", 1.0), ("CN", 19.0), ("EU", 0.73), ("EA", 0.73), ("JP", 58.0)],
        "fxReserves" => {
            &[("CN", 1.0), ("JP", 0.38), ("CH", 0.27), ("IN", 0.2), ("RU", 0.19), ("SA", 0.14)]
        }
        "activeAddresses" | "txCount" | "mvrv" => {
            &[("BTC", 1.0), ("ETH", 0.6), ("SOL", 2.4), ("TRX", 2.1)]
        }
        "dominance" => &[("BTC", 1.0), ("ETH", 0.22), ("USDT", 0.07)],
        "tvlHistory" | "dexVolume" => &[
            ("ALL", 1.0),
            ("ETHEREUM", 0.55),
            ("SOLANA", 0.08),
            ("BSC", 0.05),
            ("TRON", 0.06),
            ("ARBITRUM", 0.025),
            ("BASE", 0.03),
        ],
        "yieldHistory" => &[
            ("1M", 1.05),
            ("3M", 1.03),
            ("6M", 1.0),
            ("1Y", 0.96),
            ("2Y", 0.97),
            ("5Y", 0.96),
            ("10Y", 1.0),
            ("30Y", 1.07),
        ],
        "oasHistory" => &[
            ("HY", 1.0),
            ("IG", 0.29),
            ("AAA", 0.16),
            ("AA", 0.2),
            ("A", 0.25),
            ("BBB", 0.36),
            ("BB", 0.64),
            ("B", 1.05),
            ("CCC", 2.7),
        ],
        "curveSpread" => &[("2S10S", 1.0), ("3M10Y", -0.3), ("5S30S", 1.6), ("2S5S", -0.2)],
        "policyRateHistory" => &[("FED", 1.45), ("ECB", 0.8)],
        "ivHistory" => return profile(key).vol * 100.0 * 1.05,
        "symbolSentiment" | "newsSentimentTrend" | "putCallRatio" | "fundingRates"
        | "longShortRatio" | "basisHistory" | "premiumDiscount" => {
            return p.base * (0.6 + 0.8 * unit(&k));
        }
        _ => &[],
    };
    let default = p.key.map_or("", |(_, d)| d).to_uppercase();
    match table.iter().find(|(n, _)| *n == k) {
        Some((_, f)) => p.base * f,
        None if k == default => p.base,
        None => p.base * (0.5 + unit(&k)),
    }
}

/// Generates the `{time, value}` series for profile `id`.
pub fn metric(
    id: &str,
    params: &Map<String, Value>,
    ctx: &GenContext,
) -> Option<Result<Value, String>> {
    let p = PROFILES.iter().find(|p| p.id == id)?;
    Some(metric_with(p, params, ctx))
}

fn metric_with(
    p: &Profile,
    params: &Map<String, Value>,
    ctx: &GenContext,
) -> Result<Value, String> {
    let n = p_int(params, "limit", 120, 1, 5000) as usize;
    let key = p.key.map_or(String::new(), |(k, d)| p_str(params, k, d).to_owned());
    let times = match (p.freq, params.get("timeframe").and_then(Value::as_str)) {
        (Freq::Secs(_, skip), Some(tf)) => time_grid(ctx.now, timeframe_secs(tf)?, n, skip),
        (Freq::Secs(step, skip), None) => time_grid(ctx.now, step, n, skip),
        (Freq::Months(m), _) => period_grid(ctx.now, m, n),
    };
    // Each value is a function of (series, period index): a past period never changes.
    // `k_ref` is the index of the start of 2025.
    let by_step = |step: i64| -> (Vec<i64>, i64) {
        (times.iter().map(|&t| t.div_euclid(step)).collect(), Y2025.div_euclid(step))
    };
    let (ks, k_ref) = match (p.freq, params.get("timeframe").and_then(Value::as_str)) {
        (Freq::Months(m), _) => {
            let m = i64::from(m);
            (times.iter().map(|&t| month_index(t) / m).collect(), month_index(Y2025) / m)
        }
        (_, Some(tf)) => by_step(timeframe_secs(tf)?),
        (Freq::Secs(step, _), None) => by_step(step),
    };
    let vals = values_at(p, &key, &ks, k_ref);
    Ok(Value::Array(
        times
            .iter()
            .zip(vals)
            .map(|(&t, v)| obj([("time", json!(t)), ("value", numr(v, p.dec))]))
            .collect(),
    ))
}

/// The values of profile `p` (level key `key`) at period indices `ks` (ascending), `k_ref` being
/// the index of the start of 2025: each a function of (series, index) alone.
fn values_at(p: &Profile, key: &str, ks: &[i64], k_ref: i64) -> Vec<f64> {
    let seed = hash(&format!("metric|{}|{}", p.id, key.to_uppercase()));
    let mean = level(p, key);
    let (lo, hi) = if p.log { (p.lo, p.hi) } else { (p.lo.min(mean), p.hi.max(mean)) };
    // Series without reversion (supplies, hash rate) trend gently upward through `mean`, which
    // they reach at the start of 2025, with slow wiggles around the trend.
    let phi = if p.revert == 0.0 { 0.98 } else { 1.0 - p.revert };
    let trend = |k: i64| if p.revert == 0.0 { p.vol * 0.5 * (k - k_ref) as f64 } else { 0.0 };
    let noise = stable::ar_path(seed, phi, ks);
    ks.iter()
        .zip(&noise)
        .map(|(&k, &z)| {
            if p.log {
                (mean.ln() + trend(k) + p.vol * z).exp().clamp(lo, hi)
            } else {
                (mean + p.vol * z).clamp(lo, hi)
            }
        })
        .collect()
}

fn n_times(
    params: &Map<String, Value>,
    ctx: &GenContext,
    step: i64,
    skip: bool,
    default: i64,
) -> Vec<i64> {
    let n = p_int(params, "limit", default, 1, 5000) as usize;
    time_grid(ctx.now, step, n, skip)
}

/// ETF daily net flows with cumulative flow and AUM.
pub fn etf_flows(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let sym = norm_symbol(p_str(params, "symbol", "SPY"));
    let times = n_times(params, ctx, DAY, true, 60);
    let aum0 = match sym.as_str() {
        "SPY" => 610e9,
        "IBIT" => 55e9,
        "QQQ" => 320e9,
        "GLD" => 78e9,
        "TLT" => 58e9,
        _ => 2e9 * 100f64.powf(unit(&sym)),
    };
    // A day's flow is a function of (fund, day); the cumulative flow counts from the start of
    // 2025 and AUM drifts around the fund's size plus that flow, so no past day moves.
    let seed = hash(&format!("etfflow|{sym}"));
    let flow = |k: i64| aum0 * 0.002 * stable::normal(seed, k, 1) + aum0 * 0.0003;
    let skip = |k: i64| is_weekend(k * DAY);
    let k_ref = Y2025 / DAY;
    let ks: Vec<i64> = times.iter().map(|&t| t.div_euclid(DAY)).collect();
    let Some(&first) = ks.first() else { return Value::Array(Vec::new()) };
    // Flow summed from the start of 2025 up to (and including) the first row's day.
    let mut cum: f64 = if first >= k_ref {
        (k_ref + 1..=first).filter(|&k| !skip(k)).map(flow).sum()
    } else {
        -(first + 1..=k_ref).filter(|&k| !skip(k)).map(flow).sum::<f64>()
    };
    let wander = stable::ar_path(seed ^ 1, 0.98, &ks);
    let mut prev = first;
    let rows = ks
        .iter()
        .zip(&times)
        .zip(wander)
        .map(|((&k, &t), w)| {
            cum += (prev + 1..=k).filter(|&j| !skip(j)).map(flow).sum::<f64>();
            prev = k;
            let aum = (aum0 * (0.004 * w).exp() + cum).max(aum0 * 0.2);
            obj([
                ("time", json!(t)),
                ("netFlow", numr(flow(k), 0)),
                ("cumulativeFlow", numr(cum, 0)),
                ("aum", numr(aum, 0)),
            ])
        })
        .collect();
    Value::Array(rows)
}

/// Exchange inflow/outflow of a coin (units of the coin).
pub fn exchange_flows(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let asset = p_str(params, "asset", "BTC").to_uppercase();
    let times = n_times(params, ctx, DAY, false, 90);
    let base = match asset.as_str() {
        "BTC" => 32_000.0,
        "ETH" => 420_000.0,
        _ => 1e6 * (0.1 + unit(&asset)),
    };
    let seed = hash(&format!("xflow|{asset}"));
    let ks: Vec<i64> = times.iter().map(|&t| t.div_euclid(DAY)).collect();
    let tilt = stable::reverting(seed, &ks, 0.0, 0.04, 0.15, -0.4, 0.4);
    Value::Array(
        times
            .iter()
            .zip(&ks)
            .zip(tilt)
            .map(|((&t, &k), tilt)| {
                let total = base * (0.3 * stable::normal(seed, k, 1)).exp();
                let inflow = total * (0.5 + tilt / 2.0);
                let outflow = total - inflow;
                obj([
                    ("time", json!(t)),
                    ("inflow", numr(inflow, 2)),
                    ("outflow", numr(outflow, 2)),
                    ("netflow", numr(inflow - outflow, 2)),
                ])
            })
            .collect(),
    )
}

/// Perpetual-futures liquidations in USD, split long/short.
pub fn liquidations(params: &Map<String, Value>, ctx: &GenContext) -> Result<Value, String> {
    let sym = norm_symbol(p_str(params, "symbol", "BTCUSDT"));
    let step = timeframe_secs(p_str(params, "timeframe", "1h"))?;
    let times = n_times(params, ctx, step, false, 120);
    let scale = 4e8 * profile(&sym).price.max(1.0).log10() / 5.0 * step as f64 / DAY as f64;
    let seed = hash(&format!("liq|{sym}|{step}"));
    Ok(Value::Array(
        times
            .iter()
            .map(|&t| {
                let k = t.div_euclid(step);
                let (n, u) = (|j| stable::normal(seed, k, j), |j| stable::uniform(seed, k, j));
                let spike = if u(1) < 0.05 { 6.0 } else { 1.0 };
                let l = scale * n(2).exp() * spike * u(3);
                let s = scale * n(4).exp() * u(5);
                obj([
                    ("time", json!(t)),
                    ("longLiquidations", numr(l, 0)),
                    ("shortLiquidations", numr(s, 0)),
                    ("total", numr(l + s, 0)),
                ])
            })
            .collect(),
    ))
}

/// Open interest history (USD and contracts/coins).
pub fn open_interest(params: &Map<String, Value>, ctx: &GenContext) -> Result<Value, String> {
    let sym = norm_symbol(p_str(params, "symbol", "BTCUSDT"));
    let step = timeframe_secs(p_str(params, "timeframe", "1D"))?;
    let times = n_times(params, ctx, step, false, 120);
    let prof = profile(&sym);
    let (_, b) = super::series::bars(&sym, step, times.len(), ctx.now);
    let units0 = prof.daily_volume * 0.8;
    let ks: Vec<i64> = b.iter().map(|bar| bar.time.div_euclid(step)).collect();
    let seed = hash(&format!("oi|{sym}|{step}"));
    let units =
        stable::reverting(seed, &ks, units0, units0 * 0.02, 0.03, units0 * 0.2, units0 * 5.0);
    Ok(Value::Array(
        b.iter()
            .zip(units)
            .map(|(bar, u)| {
                obj([
                    ("time", json!(bar.time)),
                    ("openInterest", numr(u * bar.close, 0)),
                    ("openInterestUnits", numr(u, 2)),
                    ("price", num(bar.close)),
                ])
            })
            .collect(),
    ))
}

/// Central-bank balance sheet (weekly, USD/EUR/JPY bn).
pub fn cb_balance_sheet(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let bank = p_str(params, "bank", "FED").to_uppercase();
    let times = n_times(params, ctx, 7 * DAY, false, 104);
    let total0 = match bank.as_str() {
        "ECB" => 6400.0,
        "BOJ" => 750_000.0,
        "BOE" => 780.0,
        "PBOC" => 44_000.0,
        _ => 6900.0,
    };
    // Quantitative tightening: shrinking ~0.3 %/week through `total0` at the start of 2025,
    // with wiggles; a function of (bank, week).
    let week = 7 * DAY;
    let ks: Vec<i64> = times.iter().map(|&t| t.div_euclid(week)).collect();
    let wiggle = stable::ar_path(hash(&format!("cbbs|{bank}")), 0.9, &ks);
    let totals: Vec<f64> = ks
        .iter()
        .zip(wiggle)
        .map(|(&k, w)| total0 * (-0.003 * (k - Y2025 / week) as f64 + 0.002 * w).exp())
        .collect();
    Value::Array(
        times
            .iter()
            .zip(totals)
            .map(|(&t, tot)| {
                let sec = tot * 0.88;
                let loans = tot * 0.02;
                obj([
                    ("time", json!(t)),
                    ("totalAssets", numr(tot, 1)),
                    ("securities", numr(sec, 1)),
                    ("loans", numr(loans, 1)),
                    ("other", numr(tot - sec - loans, 1)),
                ])
            })
            .collect(),
    )
}

/// Weekly commodity inventories (EIA-style crude, gasoline, natural gas storage).
pub fn inventories(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let product = p_str(params, "product", "crude").to_lowercase();
    let times = n_times(params, ctx, 7 * DAY, false, 52);
    let (base, unit_vol) = match product.as_str() {
        "gasoline" => (225.0, 2.2),
        "distillates" => (118.0, 1.8),
        "natgas" => (3400.0, 80.0),
        _ => (430.0, 3.5),
    };
    let seed = hash(&format!("inv|{product}"));
    let week = 7 * DAY;
    // One week before the first row too, for its change.
    let ks = indices_from_previous(&times, week);
    let vals = stable::reverting(seed, &ks, base, unit_vol, 0.05, base * 0.6, base * 1.4);
    Value::Array(
        times
            .iter()
            .enumerate()
            .map(|(i, &t)| {
                let v = vals[i + 1];
                let change = v - vals[i];
                obj([
                    ("time", json!(t)),
                    ("value", numr(v, 1)),
                    ("change", numr(change, 2)),
                    (
                        "expectedChange",
                        numr(change + unit_vol * 0.6 * stable::normal(seed, ks[i + 1], 1), 2),
                    ),
                ])
            })
            .collect(),
    )
}

/// CFTC Commitments of Traders positioning (weekly, contracts).
pub fn cot(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let market = norm_symbol(p_str(params, "market", "GOLD"));
    let times = n_times(params, ctx, 7 * DAY, false, 52);
    let oi0 = 250_000.0 + 400_000.0 * unit(&market);
    let seed = hash(&format!("cot|{market}"));
    let ks: Vec<i64> = times.iter().map(|&t| t.div_euclid(7 * DAY)).collect();
    let spec = stable::reverting(seed, &ks, 0.15, 0.03, 0.05, -0.6, 0.7);
    let oi = stable::reverting(seed ^ 1, &ks, oi0, oi0 * 0.02, 0.05, oi0 * 0.5, oi0 * 2.0);
    Value::Array(
        times
            .iter()
            .zip(ks.iter().zip(spec.iter().zip(oi)))
            .map(|(&t, (&k, (s, o)))| {
                let nc = (o * s).round();
                let small = (o * 0.04 * stable::normal(seed, k, 2)).round();
                obj([
                    ("time", json!(t)),
                    ("nonCommercialNet", num(nc)),
                    ("commercialNet", num(-nc - small)),
                    ("smallTradersNet", num(small)),
                    ("openInterest", numr(o, 0)),
                ])
            })
            .collect(),
    )
}

/// AAII-style weekly investor sentiment survey (percentages summing to 100).
pub fn aaii(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let times = n_times(params, ctx, 7 * DAY, false, 52);
    let seed = hash("aaii");
    let ks: Vec<i64> = times.iter().map(|&t| t.div_euclid(7 * DAY)).collect();
    let bull = stable::reverting(seed, &ks, 37.5, 4.0, 0.2, 15.0, 60.0);
    Value::Array(
        times
            .iter()
            .zip(ks.iter().zip(bull))
            .map(|(&t, (&k, b))| {
                let tilt = 0.45 + 0.1 * stable::normal(seed, k, 1);
                let bear = ((100.0 - b) * tilt).clamp(10.0, 100.0 - b - 5.0);
                let b = round(b, 1);
                let bear = round(bear, 1);
                obj([
                    ("time", json!(t)),
                    ("bullish", num(b)),
                    ("neutral", numr(100.0 - b - bear, 1)),
                    ("bearish", num(bear)),
                    ("bullBearSpread", numr(b - bear, 1)),
                ])
            })
            .collect(),
    )
}

/// Monthly IPO counts and proceeds.
pub fn ipo_stats(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let n = p_int(params, "limit", 24, 1, 240) as usize;
    let times = period_grid(ctx.now, 1, n);
    let seed = hash("ipostats");
    let ks: Vec<i64> = times.iter().map(|&t| month_index(t)).collect();
    let lvl = stable::reverting(seed, &ks, 14.0, 2.5, 0.2, 1.0, 60.0);
    Value::Array(
        times
            .iter()
            .zip(ks.iter().zip(lvl))
            .map(|(&t, (&k, c))| {
                let count = c.round().max(0.0);
                let proceeds = count * 0.35 * (0.5 * stable::normal(seed, k, 1)).exp();
                let ret = 15.0 + 20.0 * stable::normal(seed, k, 2);
                obj([
                    ("time", json!(t)),
                    ("count", num(count)),
                    ("proceedsBn", numr(proceeds, 2)),
                    ("avgFirstDayReturnPct", numr(ret, 1)),
                ])
            })
            .collect(),
    )
}

/// Headline CPI with month-over-month and index level (monthly).
pub fn cpi_detail(params: &Map<String, Value>, ctx: &GenContext) -> Result<Value, String> {
    let Some(Ok(Value::Array(yoy))) = metric("macroCpi", params, ctx) else {
        return Err("internal: CPI profile missing".into());
    };
    let Some(p) = PROFILES.iter().find(|p| p.id == "macroCpi") else {
        return Err("internal: CPI profile missing".into());
    };
    // The index is 315 at the start of 2025 and moves by each month's change, itself a
    // function of the month (a twelfth of that month's YoY plus noise): stable history.
    let country = p_str(params, "country", "US");
    let seed = hash(&format!("cpimom|{}", country.to_uppercase()));
    let ks: Vec<i64> = yoy.iter().filter_map(|r| r["time"].as_i64()).map(month_index).collect();
    let k_ref = (2025 - 1970) * 12;
    let (Some(&first), Some(&last)) = (ks.first(), ks.last()) else {
        return Ok(Value::Array(Vec::new()));
    };
    let span: Vec<i64> = (first.min(k_ref)..=last.max(k_ref)).collect();
    let yoy_span = values_at(p, country, &span, k_ref);
    let mom_at = |i: usize| yoy_span[i] / 12.0 + 0.12 * stable::normal_at(seed, span[i]);
    let at_ref = (k_ref - span[0]) as usize;
    let mut index = vec![315.0; span.len()];
    for i in at_ref + 1..span.len() {
        index[i] = index[i - 1] * (1.0 + mom_at(i) / 100.0);
    }
    for i in (0..at_ref).rev() {
        index[i] = index[i + 1] / (1.0 + mom_at(i + 1) / 100.0);
    }
    Ok(Value::Array(
        yoy.iter()
            .zip(&ks)
            .map(|(r, &k)| {
                let i = (k - span[0]) as usize;
                obj([
                    ("time", r["time"].clone()),
                    ("value", r["value"].clone()),
                    ("mom", numr(mom_at(i), 2)),
                    ("index", numr(index[i], 3)),
                ])
            })
            .collect(),
    ))
}
