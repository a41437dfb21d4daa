//! Categorical snapshots: stock/crypto screeners, sector performance and heatmaps, ETF
//! holdings and directories, DeFi protocol/pool/chain rankings.

use rand::Rng;
use serde_json::{Map, Value, json};

use super::GenContext;
use super::corporate::company;
use super::series::{CRYPTO, SECTORS, STOCKS, bars, day_change};
use super::util::*;

fn rsi14(symbol: &str, ctx: &GenContext) -> f64 {
    let (_, b) = bars(symbol, DAY, 60, ctx.now);
    let (mut g, mut l) = (0.0, 0.0);
    for w in b.windows(2) {
        let d = w[1].close - w[0].close;
        g = g * (13.0 / 14.0) + d.max(0.0) / 14.0;
        l = l * (13.0 / 14.0) + (-d).max(0.0) / 14.0;
    }
    if l == 0.0 { 100.0 } else { 100.0 - 100.0 / (1.0 + g / l) }
}

fn sort_rows(rows: &mut [Value], key: &str, desc: bool) {
    rows.sort_by(|a, b| {
        let (x, y) = (a[key].as_f64().unwrap_or(0.0), b[key].as_f64().unwrap_or(0.0));
        if desc { y.total_cmp(&x) } else { x.total_cmp(&y) }
    });
}

/// Stock screener over US large caps.
pub fn screen_stocks(params: &Map<String, Value>, ctx: &GenContext) -> Result<Value, String> {
    let sector = p_str(params, "sector", "all");
    let min_cap = p_f64(params, "minMarketCap", 0.0);
    let max_pe = p_f64(params, "maxPe", 1e9);
    let min_yield = p_f64(params, "minDividendYield", 0.0);
    let sort = p_str(params, "sortBy", "marketCap");
    let n = p_int(params, "limit", 20, 1, 100) as usize;
    if sector != "all" && !SECTORS.iter().any(|(s, _)| s.eq_ignore_ascii_case(sector)) {
        let names: Vec<&str> = SECTORS.iter().map(|s| s.0).collect();
        return Err(format!(
            "unknown sector `{sector}`; use \"all\" or one of: {}",
            names.join(", ")
        ));
    }
    let mut rows: Vec<Value> = STOCKS
        .iter()
        .filter(|(_, _, sec, _)| sector == "all" || sec.eq_ignore_ascii_case(sector))
        .filter_map(|(s, ..)| {
            let co = company(s, ctx);
            let mcap = co.price * co.shares;
            let net = co.revenue * (co.op - 0.01) * 0.82;
            let pe = co.price / (net / co.shares);
            let yld = net * co.payout / mcap * 100.0;
            if mcap < min_cap || pe > max_pe || yld < min_yield {
                return None;
            }
            let (_, chg, _) = day_change(s, ctx.now);
            Some(obj([
                ("symbol", json!(co.symbol)),
                ("name", json!(co.name)),
                ("sector", json!(co.sector)),
                ("price", num(co.price)),
                ("changePct", numr(chg, 2)),
                ("marketCap", numr(mcap, 0)),
                ("peRatio", numr(pe, 2)),
                ("dividendYieldPct", numr(yld, 2)),
                ("revenueGrowthPct", numr(co.growth * 100.0, 1)),
                ("rsi14", numr(rsi14(s, ctx), 1)),
            ]))
        })
        .collect();
    let key = match sort {
        "pe" | "peRatio" => "peRatio",
        "changePct" => "changePct",
        "dividendYield" | "dividendYieldPct" => "dividendYieldPct",
        "revenueGrowth" | "revenueGrowthPct" => "revenueGrowthPct",
        "rsi14" => "rsi14",
        _ => "marketCap",
    };
    sort_rows(&mut rows, key, key != "peRatio");
    rows.truncate(n);
    Ok(Value::Array(rows))
}

/// Crypto screener.
pub fn screen_crypto(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let min_cap = p_f64(params, "minMarketCap", 0.0);
    let sort = p_str(params, "sortBy", "marketCap");
    let n = p_int(params, "limit", 20, 1, 100) as usize;
    let mut rows: Vec<Value> = CRYPTO
        .iter()
        .filter_map(|(s, name, supply)| {
            let (_, b) = bars(s, DAY, 31, ctx.now);
            let p = b[30].close;
            let mcap = p * supply;
            if mcap < min_cap {
                return None;
            }
            Some(obj([
                ("symbol", json!(s.trim_end_matches("USDT"))),
                ("name", json!(name)),
                ("price", num(p)),
                ("changePct24h", numr((p / b[29].close - 1.0) * 100.0, 2)),
                ("changePct7d", numr((p / b[23].close - 1.0) * 100.0, 2)),
                ("changePct30d", numr((p / b[0].close - 1.0) * 100.0, 2)),
                ("marketCap", numr(mcap, 0)),
                ("volume24h", numr(b[30].volume * p, 0)),
                ("rsi14", numr(rsi14(s, ctx), 1)),
            ]))
        })
        .collect();
    let key = match sort {
        "changePct24h" | "changePct7d" | "changePct30d" | "volume24h" | "rsi14" => sort,
        _ => "marketCap",
    };
    sort_rows(&mut rows, key, true);
    rows.truncate(n);
    Value::Array(rows)
}

/// Technical signals (RSI extremes, moving-average crosses) across large caps.
pub fn technical_signals(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let want = p_str(params, "signal", "all");
    let mut rows = Vec::new();
    for (s, name, ..) in STOCKS {
        let (_, b) = bars(s, DAY, 201, ctx.now);
        let closes: Vec<f64> = b.iter().map(|x| x.close).collect();
        let avg =
            |from: usize, to: usize| closes[from..to].iter().sum::<f64>() / (to - from) as f64;
        let (s50, s200) = (avg(151, 201), avg(1, 201));
        let (p50, p200) = (avg(150, 200), avg(0, 200));
        let rsi = rsi14(s, ctx);
        let price = closes[200];
        let signal = if p50 <= p200 && s50 > s200 {
            Some(("goldenCross", "50-day SMA crossed above the 200-day SMA"))
        } else if p50 >= p200 && s50 < s200 {
            Some(("deathCross", "50-day SMA crossed below the 200-day SMA"))
        } else if rsi >= 70.0 {
            Some(("overbought", "RSI(14) at or above 70"))
        } else if rsi <= 30.0 {
            Some(("oversold", "RSI(14) at or below 30"))
        } else if price > s50 && closes[199] <= avg(150, 200) {
            Some(("crossAbove50", "Price closed above its 50-day SMA"))
        } else if price < s50 && closes[199] >= avg(150, 200) {
            Some(("crossBelow50", "Price closed below its 50-day SMA"))
        } else {
            None
        };
        if let Some((sig, desc)) = signal
            && (want == "all" || want == sig)
        {
            rows.push(obj([
                ("symbol", json!(s)),
                ("name", json!(name)),
                ("signal", json!(sig)),
                ("description", json!(desc)),
                ("price", num(price)),
                ("rsi14", numr(rsi, 1)),
                ("sma50", numr(s50, 2)),
                ("sma200", numr(s200, 2)),
            ]));
        }
    }
    Value::Array(rows)
}

fn period_days(p: &str) -> usize {
    match p {
        "1D" => 1,
        "1W" => 5,
        "1M" => 21,
        "3M" => 63,
        "6M" => 126,
        "1Y" => 252,
        _ => 200,
    }
}

/// Sector ETF returns over a period.
pub fn sector_performance(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let period = p_str(params, "period", "1D");
    let d = period_days(period);
    let mut rows: Vec<Value> = SECTORS
        .iter()
        .map(|(name, etf)| {
            let (_, b) = bars(etf, DAY, 253, ctx.now);
            let last = b[252].close;
            let r = |k: usize| (last / b[252 - k].close - 1.0) * 100.0;
            obj([
                ("name", json!(name)),
                ("symbol", json!(etf)),
                ("value", numr(r(d), 2)),
                ("changePct1d", numr(r(1), 2)),
                ("changePct1w", numr(r(5), 2)),
                ("changePct1m", numr(r(21), 2)),
                ("changePct1y", numr(r(252), 2)),
            ])
        })
        .collect();
    sort_rows(&mut rows, "value", true);
    Value::Array(rows)
}

/// Industry-level returns within sectors.
pub fn industry_performance(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let period = p_str(params, "period", "1D");
    let scale = (period_days(period) as f64).sqrt();
    let inds: &[(&str, &str)] = &[
        ("Semiconductors", "Technology"),
        ("Software", "Technology"),
        ("IT Services", "Technology"),
        ("Interactive Media", "Communication Services"),
        ("Entertainment", "Communication Services"),
        ("Internet Retail", "Consumer Discretionary"),
        ("Automobiles", "Consumer Discretionary"),
        ("Restaurants", "Consumer Discretionary"),
        ("Banks", "Financials"),
        ("Insurance", "Financials"),
        ("Capital Markets", "Financials"),
        ("Pharmaceuticals", "Health Care"),
        ("Biotechnology", "Health Care"),
        ("Oil & Gas E&P", "Energy"),
        ("Integrated Oil & Gas", "Energy"),
        ("Aerospace & Defense", "Industrials"),
        ("Machinery", "Industrials"),
        ("Chemicals", "Materials"),
        ("Metals & Mining", "Materials"),
        ("Electric Utilities", "Utilities"),
        ("REITs", "Real Estate"),
        ("Beverages", "Consumer Staples"),
    ];
    let mut rng = rng_ctx(ctx.seed);
    let mut rows: Vec<Value> = inds
        .iter()
        .map(|(n, s)| {
            obj([
                ("name", json!(n)),
                ("sector", json!(s)),
                ("value", numr(1.1 * scale * gauss(&mut rng) + 0.05 * scale * scale, 2)),
            ])
        })
        .collect();
    sort_rows(&mut rows, "value", true);
    Value::Array(rows)
}

/// Stocks sized by market cap and coloured by change, grouped by sector.
pub fn heatmap(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let sector = p_str(params, "sector", "all");
    Value::Array(
        STOCKS
            .iter()
            .filter(|(_, _, sec, _)| sector == "all" || sec.eq_ignore_ascii_case(sector))
            .map(|(s, name, sec, _)| {
                let co = company(s, ctx);
                let (_, chg, _) = day_change(s, ctx.now);
                obj([
                    ("name", json!(s)),
                    ("fullName", json!(name)),
                    ("sector", json!(sec)),
                    ("marketCap", numr(co.price * co.shares, 0)),
                    ("value", numr(chg, 2)),
                ])
            })
            .collect(),
    )
}

/// Relative-rotation snapshot: RS-ratio and RS-momentum of each sector vs the S&P 500.
pub fn rotation(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let bench = p_str(params, "benchmark", "SPX");
    let (_, bb) = bars(bench, 7 * DAY, 27, ctx.now);
    Value::Array(
        SECTORS
            .iter()
            .map(|(name, etf)| {
                let (_, b) = bars(etf, 7 * DAY, 27, ctx.now);
                let rs: Vec<f64> = b.iter().zip(&bb).map(|(x, y)| x.close / y.close).collect();
                let mean = rs.iter().sum::<f64>() / rs.len() as f64;
                let ratio = 100.0 * rs[26] / mean;
                let prev = 100.0 * rs[22] / mean;
                let momentum = 100.0 + (ratio - prev) * 2.0;
                let quadrant = match (ratio >= 100.0, momentum >= 100.0) {
                    (true, true) => "leading",
                    (true, false) => "weakening",
                    (false, false) => "lagging",
                    (false, true) => "improving",
                };
                obj([
                    ("name", json!(name)),
                    ("symbol", json!(etf)),
                    ("rsRatio", numr(ratio, 2)),
                    ("rsMomentum", numr(momentum, 2)),
                    ("quadrant", json!(quadrant)),
                ])
            })
            .collect(),
    )
}

/// The ETF tickers the demo knows.
pub fn etf_symbols() -> impl Iterator<Item = &'static str> {
    ETFS.iter().map(|e| e.0)
}

const ETFS: &[(&str, &str, &str, &str, f64, f64)] = &[
    ("SPY", "SPDR S&P 500 ETF Trust", "State Street", "US Equity", 610e9, 0.0945),
    ("QQQ", "Invesco QQQ Trust", "Invesco", "US Equity", 320e9, 0.2),
    ("IWM", "iShares Russell 2000 ETF", "BlackRock", "US Equity", 70e9, 0.19),
    ("VTI", "Vanguard Total Stock Market ETF", "Vanguard", "US Equity", 450e9, 0.03),
    ("EFA", "iShares MSCI EAFE ETF", "BlackRock", "International Equity", 55e9, 0.33),
    ("EEM", "iShares MSCI Emerging Markets ETF", "BlackRock", "International Equity", 18e9, 0.7),
    ("FXI", "iShares China Large-Cap ETF", "BlackRock", "International Equity", 8e9, 0.74),
    ("TLT", "iShares 20+ Year Treasury Bond ETF", "BlackRock", "Fixed Income", 58e9, 0.15),
    ("HYG", "iShares iBoxx High Yield Corporate Bond ETF", "BlackRock", "Fixed Income", 16e9, 0.49),
    (
        "LQD",
        "iShares iBoxx Investment Grade Corporate Bond ETF",
        "BlackRock",
        "Fixed Income",
        31e9,
        0.14,
    ),
    ("GLD", "SPDR Gold Shares", "State Street", "Commodities", 78e9, 0.4),
    ("SLV", "iShares Silver Trust", "BlackRock", "Commodities", 14e9, 0.5),
    ("USO", "United States Oil Fund", "USCF", "Commodities", 1.2e9, 0.6),
    ("IBIT", "iShares Bitcoin Trust", "BlackRock", "Crypto", 55e9, 0.25),
    ("FBTC", "Fidelity Wise Origin Bitcoin Fund", "Fidelity", "Crypto", 20e9, 0.25),
    ("ETHA", "iShares Ethereum Trust", "BlackRock", "Crypto", 3.5e9, 0.25),
    ("XLK", "Technology Select Sector SPDR", "State Street", "Sector", 72e9, 0.09),
    ("XLE", "Energy Select Sector SPDR", "State Street", "Sector", 35e9, 0.09),
    ("XLF", "Financial Select Sector SPDR", "State Street", "Sector", 50e9, 0.09),
    ("ARKK", "ARK Innovation ETF", "ARK Invest", "Thematic", 6e9, 0.75),
];

/// ETF directory, optionally filtered by category.
pub fn list_etfs(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let cat = p_str(params, "category", "all");
    let mut rng = rng_ctx(ctx.seed);
    Value::Array(
        ETFS.iter()
            .filter(|e| cat == "all" || e.3.eq_ignore_ascii_case(cat))
            .map(|(s, n, issuer, c, aum, er)| {
                let (_, b) = bars(s, DAY, 253, ctx.now);
                obj([
                    ("symbol", json!(s)),
                    ("name", json!(n)),
                    ("issuer", json!(issuer)),
                    ("category", json!(c)),
                    ("aum", numr(*aum, 0)),
                    ("expenseRatioPct", num(*er)),
                    ("return1yPct", numr((b[252].close / b[0].close - 1.0) * 100.0, 2)),
                    ("flows1m", numr(aum * 0.01 * gauss(&mut rng), 0)),
                ])
            })
            .collect(),
    )
}

/// ETF profile.
pub fn etf_profile(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let sym = norm_symbol(p_str(params, "symbol", "SPY"));
    let (_, b) = bars(&sym, DAY, 1, ctx.now);
    let e = ETFS.iter().find(|e| e.0 == sym).copied().unwrap_or((
        "",
        "Synthetic Index ETF",
        "Example Funds",
        "US Equity",
        1e9 * (1.0 + 50.0 * unit(&sym)),
        0.35,
    ));
    let holdings = match e.3 {
        "Crypto" | "Commodities" => 1,
        "Sector" => 60,
        "Fixed Income" => 1200,
        _ => 500,
    };
    obj([
        ("symbol", json!(sym)),
        ("name", json!(e.1)),
        ("issuer", json!(e.2)),
        ("category", json!(e.3)),
        ("price", num(b[0].close)),
        ("aum", numr(e.4, 0)),
        ("expenseRatioPct", num(e.5)),
        ("holdingsCount", json!(holdings)),
        (
            "inceptionDate",
            json!(date_str(ctx.now.timestamp() - (300.0 + 8000.0 * unit(&sym)) as i64 * DAY)),
        ),
        (
            "dividendYieldPct",
            numr(if e.3 == "Crypto" { 0.0 } else { 0.5 + 3.0 * unit(&format!("{sym}y")) }, 2),
        ),
    ])
}

/// Top holdings of an ETF.
pub fn etf_holdings(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let sym = norm_symbol(p_str(params, "symbol", "SPY"));
    let n = p_int(params, "limit", 10, 1, 30) as usize;
    let aum = ETFS.iter().find(|e| e.0 == sym).map_or(5e9, |e| e.4);
    let single: Option<(&str, &str)> = match sym.as_str() {
        "GLD" => Some(("XAU", "Gold bullion")),
        "SLV" => Some(("XAG", "Silver bullion")),
        "IBIT" | "FBTC" => Some(("BTC", "Bitcoin")),
        "ETHA" => Some(("ETH", "Ether")),
        _ => None,
    };
    if let Some((s, name)) = single {
        let px = match s {
            "XAU" => bars("XAUUSD", DAY, 1, ctx.now).1[0].close,
            "XAG" => bars("XAGUSD", DAY, 1, ctx.now).1[0].close,
            other => bars(&format!("{other}USDT"), DAY, 1, ctx.now).1[0].close,
        };
        return json!([obj([
            ("symbol", json!(s)),
            ("name", json!(name)),
            ("weightPct", num(100.0)),
            ("shares", numr(aum / px, 2)),
            ("marketValue", numr(aum, 0)),
        ])]);
    }
    let mut w: Vec<(&str, &str, f64)> = STOCKS
        .iter()
        .map(|(s, n, _, m)| (*s, *n, m * (0.9 + 0.2 * unit(&format!("{sym}|{s}")))))
        .collect();
    w.sort_by(|a, b| b.2.total_cmp(&a.2));
    let total: f64 = w.iter().map(|x| x.2).sum::<f64>() * 2.2;
    Value::Array(
        w.iter()
            .take(n)
            .map(|(s, name, m)| {
                let pct = m / total * 100.0;
                let px = bars(s, DAY, 1, ctx.now).1[0].close;
                obj([
                    ("symbol", json!(s)),
                    ("name", json!(name)),
                    ("weightPct", numr(pct, 2)),
                    ("shares", numr(aum * pct / 100.0 / px, 0)),
                    ("marketValue", numr(aum * pct / 100.0, 0)),
                ])
            })
            .collect(),
    )
}

const PROTOCOLS: &[(&str, &str, &str, f64)] = &[
    ("Lido", "Liquid Staking", "Ethereum", 32e9),
    ("Aave", "Lending", "Multi-chain", 24e9),
    ("EigenLayer", "Restaking", "Ethereum", 15e9),
    ("Ethena", "Basis Trading", "Ethereum", 6e9),
    ("Uniswap", "DEX", "Multi-chain", 6.5e9),
    ("Maker / Sky", "CDP", "Ethereum", 7e9),
    ("Jito", "Liquid Staking", "Solana", 3.2e9),
    ("Pendle", "Yield", "Multi-chain", 5e9),
    ("Compound", "Lending", "Multi-chain", 3e9),
    ("Curve", "DEX", "Multi-chain", 2.2e9),
    ("Raydium", "DEX", "Solana", 2.4e9),
    ("PancakeSwap", "DEX", "BSC", 2.0e9),
    ("Morpho", "Lending", "Ethereum", 3.6e9),
    ("JustLend", "Lending", "Tron", 5.5e9),
    ("GMX", "Derivatives", "Arbitrum", 0.6e9),
];

/// DeFi protocols ranked by TVL.
pub fn protocols(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let cat = p_str(params, "category", "all");
    let n = p_int(params, "limit", 15, 1, 50) as usize;
    let mut rng = rng_ctx(ctx.seed);
    let mut rows: Vec<Value> = PROTOCOLS
        .iter()
        .filter(|p| cat == "all" || p.1.eq_ignore_ascii_case(cat))
        .map(|(name, c, chain, tvl)| {
            let tvl = tvl * (0.05 * gauss(&mut rng)).exp();
            obj([
                ("name", json!(name)),
                ("category", json!(c)),
                ("chain", json!(chain)),
                ("tvl", numr(tvl, 0)),
                ("change1dPct", numr(2.0 * gauss(&mut rng), 2)),
                ("change7dPct", numr(6.0 * gauss(&mut rng), 2)),
                ("fees24h", numr(tvl * 0.0002 * (0.5 * gauss(&mut rng)).exp(), 0)),
            ])
        })
        .collect();
    sort_rows(&mut rows, "tvl", true);
    rows.truncate(n);
    Value::Array(rows)
}

/// Yield pools ranked by APY.
pub fn yield_pools(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let asset = p_str(params, "asset", "all").to_uppercase();
    let min_tvl = p_f64(params, "minTvl", 1e6);
    let n = p_int(params, "limit", 20, 1, 100) as usize;
    let pools: &[(&str, &str, &str, f64, f64)] = &[
        ("Aave", "Ethereum", "USDC", 4.8, 3e9),
        ("Aave", "Ethereum", "USDT", 5.2, 2e9),
        ("Aave", "Arbitrum", "WETH", 2.1, 4e8),
        ("Compound", "Ethereum", "USDC", 5.0, 1e9),
        ("Lido", "Ethereum", "STETH", 3.1, 3e10),
        ("Ethena", "Ethereum", "SUSDE", 11.0, 3e9),
        ("Pendle", "Ethereum", "PT-SUSDE", 14.0, 8e8),
        ("Curve", "Ethereum", "3POOL", 2.5, 2e8),
        ("Uniswap V3", "Ethereum", "USDC-WETH", 18.0, 2.5e8),
        ("Uniswap V3", "Base", "USDC-WETH", 24.0, 8e7),
        ("Raydium", "Solana", "SOL-USDC", 32.0, 5e7),
        ("Jito", "Solana", "JITOSOL", 7.6, 2.5e9),
        ("Morpho", "Ethereum", "USDC", 6.5, 6e8),
        ("Maker / Sky", "Ethereum", "SDAI", 6.0, 1.5e9),
        ("PancakeSwap", "BSC", "CAKE-BNB", 28.0, 4e7),
        ("GMX", "Arbitrum", "GLP", 16.0, 3e8),
    ];
    let mut rng = rng_ctx(ctx.seed);
    let mut rows: Vec<Value> = pools
        .iter()
        .filter(|p| asset == "ALL" || p.2.contains(&asset))
        .filter(|p| p.4 >= min_tvl)
        .map(|(proj, chain, sym, apy, tvl)| {
            let apy = apy * (0.12 * gauss(&mut rng)).exp();
            let reward = apy * 0.3 * rng.random::<f64>();
            obj([
                ("project", json!(proj)),
                ("chain", json!(chain)),
                ("symbol", json!(sym)),
                ("apy", numr(apy, 2)),
                ("apyBase", numr(apy - reward, 2)),
                ("apyReward", numr(reward, 2)),
                ("tvl", numr(tvl * (0.05 * gauss(&mut rng)).exp(), 0)),
                ("stablecoin", json!(sym.contains("USD") || *sym == "3POOL" || *sym == "SDAI")),
            ])
        })
        .collect();
    sort_rows(&mut rows, "apy", true);
    rows.truncate(n);
    Value::Array(rows)
}

/// TVL by blockchain.
pub fn chain_tvl(ctx: &GenContext) -> Value {
    let chains: &[(&str, f64)] = &[
        ("Ethereum", 66e9),
        ("Solana", 9.5e9),
        ("Tron", 7e9),
        ("BSC", 5.6e9),
        ("Bitcoin", 6e9),
        ("Base", 3.5e9),
        ("Arbitrum", 3e9),
        ("Sui", 1.7e9),
        ("Avalanche", 1.5e9),
        ("Polygon", 0.9e9),
    ];
    let mut rng = rng_ctx(ctx.seed);
    let vals: Vec<f64> = chains.iter().map(|c| c.1 * (0.05 * gauss(&mut rng)).exp()).collect();
    let total: f64 = vals.iter().sum();
    Value::Array(
        chains
            .iter()
            .zip(vals)
            .map(|((n, _), v)| {
                obj([
                    ("name", json!(n)),
                    ("value", numr(v, 0)),
                    ("sharePct", numr(v / total * 100.0, 2)),
                    ("change1dPct", numr(2.0 * gauss(&mut rng), 2)),
                ])
            })
            .collect(),
    )
}

/// Stablecoins by circulating supply.
pub fn stablecoins(ctx: &GenContext) -> Value {
    let coins: &[(&str, &str, &str, f64)] = &[
        ("USDT", "Tether", "fiat-backed", 140e9),
        ("USDC", "USD Coin", "fiat-backed", 44e9),
        ("USDS", "Sky Dollar", "crypto-backed", 7e9),
        ("USDe", "Ethena USDe", "synthetic", 6e9),
        ("DAI", "Dai", "crypto-backed", 4.5e9),
        ("FDUSD", "First Digital USD", "fiat-backed", 2e9),
        ("PYUSD", "PayPal USD", "fiat-backed", 0.5e9),
    ];
    let mut rng = rng_ctx(ctx.seed);
    Value::Array(
        coins
            .iter()
            .map(|(s, n, kind, sup)| {
                obj([
                    ("symbol", json!(s)),
                    ("name", json!(n)),
                    ("mechanism", json!(kind)),
                    ("circulating", numr(sup * (0.02 * gauss(&mut rng)).exp(), 0)),
                    ("price", numr(1.0 + 0.0005 * gauss(&mut rng), 4)),
                    ("change7dPct", numr(1.5 * gauss(&mut rng), 2)),
                ])
            })
            .collect(),
    )
}
