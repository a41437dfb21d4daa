//! Price series: OHLCV klines (a deterministic path per symbol, so history never changes as the
//! clock moves and recent bars do not depend on `limit`), quotes and quote lists,
//! trades and order books, technical indicators, correlation and FX crosses.

use chrono::{DateTime, Utc};
use rand::Rng;
use serde_json::{Map, Value, json};

use super::GenContext;
use super::stable::{self, mix, unit_hash};
use super::util::*;

/// One OHLCV bar.
#[derive(Debug, Clone, Copy)]
pub struct Bar {
    /// Bar start, UTC seconds.
    pub time: i64,
    /// Open price.
    pub open: f64,
    /// High price.
    pub high: f64,
    /// Low price.
    pub low: f64,
    /// Close price.
    pub close: f64,
    /// Traded volume.
    pub volume: f64,
}

/// Generates `n` bars of size `step` ending with the bar that contains `now`.
///
/// Every price is a pure function of the symbol and the instant ([`price_at`]), so a past bar
/// never changes as the clock moves, and bars of different sizes agree where they meet (the
/// 1-hour close at 16:00 is the 1-day close of a day ending then). Only the forming bar, whose
/// close is the price now, moves.
pub fn bars(symbol: &str, step: i64, n: usize, now: DateTime<Utc>) -> (SymbolProfile, Vec<Bar>) {
    let prof = profile(symbol);
    let skip = prof.class != AssetClass::Crypto;
    let times = time_grid(now, step, n, skip);
    let now_s = now.timestamp();
    let seed = hash(&format!("path|{}", prof.symbol));
    let dec = price_decimals(prof.price);
    let sigma = prof.vol / periods_per_year(prof.class, step).sqrt();
    let vol_per_bar = prof.daily_volume * (step as f64 / DAY as f64).min(7.0);
    let out = times
        .iter()
        .map(|&time| {
            let end = (time + step).min(now_s);
            // Draws for this bar only: a function of (symbol, size, time).
            let draw = |k: u64| unit_hash(mix(seed ^ k, step as u64, time as u64));
            let close = price_at(&prof, seed, end);
            let start = price_at(&prof, seed, time);
            // Markets that close overnight gap at the open; crypto trades through.
            let gap = if skip { 0.15 * sigma * (2.0 * draw(1) - 1.0) } else { 0.0 };
            let open = round(start * gap.exp(), dec);
            let close = round(close, dec);
            let high =
                round(open.max(close) * (0.6 * sigma * draw(2)).exp(), dec).max(open.max(close));
            let low = round(open.min(close) * (-0.6 * sigma * draw(3)).exp(), dec)
                .min(open.min(close))
                .max(0.0);
            let move_ratio = ((close / open).ln().abs() / sigma.max(1e-9)).min(6.0);
            let vol = vol_per_bar * (0.7 * (draw(4) - 0.5)).exp() * (0.7 + 0.3 * move_ratio);
            let vd = if vol > 1000.0 { 0 } else { 3 };
            Bar { time, open, high, low, close, volume: round(vol.max(1e-3), vd).max(0.001) }
        })
        .collect();
    (prof, out)
}

/// Finest time scale of the demo price path (seconds); each octave doubles it.
const PATH_BASE_SECS: f64 = 60.0;
/// Octaves: from a minute to about a year (longer ones would wander too far from the typical price).
const PATH_OCTAVES: i32 = 20;
const YEAR_SECS: f64 = 365.25 * DAY as f64;

/// The demo price of `prof` at Unix second `t`: its typical price times `exp(x(t))`, where `x`
/// is a sum of value-noise octaves (one per time scale from a minute to years) whose amplitudes
/// grow with the square root of the scale, as a random walk's do, with slowly varying volatility.
/// Deterministic in `(symbol, t)` and bounded, so the level stays realistic.
pub fn price_at(prof: &SymbolProfile, seed: u64, t: i64) -> f64 {
    let t = t as f64;
    // Volatility regimes lasting days to weeks.
    let regime = (0.35 * noise(seed ^ 0x5eed, t / (9.0 * DAY as f64))).exp();
    let mut x = 0.0;
    for j in 0..PATH_OCTAVES {
        let scale = PATH_BASE_SECS * f64::from(1u32 << j);
        let amp = 0.45 * prof.vol * (scale / YEAR_SECS).sqrt();
        let amp = if scale < 3.0 * DAY as f64 { amp * regime } else { amp };
        x += amp * noise(seed.wrapping_add(j as u64), t / scale);
    }
    prof.price * x.exp()
}

/// Value noise: uniform values in `[-√3, √3]` (unit variance) at integer points of `u`,
/// smoothly interpolated between them.
fn noise(seed: u64, u: f64) -> f64 {
    let k = u.floor();
    let f = u - k;
    let at = |i: f64| (2.0 * unit_hash(mix(seed, i as i64 as u64, 0x9e37)) - 1.0) * 3f64.sqrt();
    let w = f * f * (3.0 - 2.0 * f);
    at(k) * (1.0 - w) + at(k + 1.0) * w
}

fn bar_json(b: &Bar) -> Value {
    obj([
        ("time", json!(b.time)),
        ("open", num(b.open)),
        ("high", num(b.high)),
        ("low", num(b.low)),
        ("close", num(b.close)),
        ("volume", num(b.volume)),
    ])
}

/// `{symbol, timeframe, limit}` → OHLCV rows.
pub fn kline(
    params: &Map<String, Value>,
    ctx: &GenContext,
    default_symbol: &str,
) -> Result<Value, String> {
    let symbol = p_str(params, "symbol", default_symbol);
    let step = timeframe_secs(p_str(params, "timeframe", p_str(params, "interval", "1D")))?;
    let n = p_int(params, "limit", 120, 1, 5000) as usize;
    let (_, rows) = bars(symbol, step, n, ctx.now);
    Ok(Value::Array(rows.iter().map(bar_json).collect()))
}

/// A quote snapshot for a symbol, consistent with its daily klines.
pub fn quote_row(symbol: &str, now: DateTime<Utc>) -> Value {
    let (prof, b) = bars(symbol, DAY, 2, now);
    let (prev, last) = (b[0], b[1]);
    let dec = price_decimals(last.close);
    let spread = last.close * if prof.class == AssetClass::Fx { 0.00004 } else { 0.0002 };
    let change = last.close - prev.close;
    obj([
        ("symbol", json!(prof.symbol)),
        ("price", num(last.close)),
        ("change", numr(change, dec)),
        ("changePct", numr(change / prev.close * 100.0, 2)),
        ("open", num(last.open)),
        ("high", num(last.high)),
        ("low", num(last.low)),
        ("prevClose", num(prev.close)),
        ("volume", num(last.volume)),
        ("bid", numr(last.close - spread / 2.0, dec + 1)),
        ("ask", numr(last.close + spread / 2.0, dec + 1)),
        ("updatedAt", json!(now.timestamp())),
    ])
}

/// `{symbol}` → one quote.
pub fn quote(
    params: &Map<String, Value>,
    ctx: &GenContext,
    default_symbol: &str,
) -> Result<Value, String> {
    Ok(quote_row(p_str(params, "symbol", default_symbol), ctx.now))
}

/// `{symbols}` → quotes.
pub fn quotes(
    params: &Map<String, Value>,
    ctx: &GenContext,
    default: &[&str],
) -> Result<Value, String> {
    let syms = p_list(params, "symbols", default);
    if syms.len() > 50 {
        return Err(format!("at most 50 symbols per call, got {}", syms.len()));
    }
    Ok(Value::Array(syms.iter().map(|s| quote_row(s, ctx.now)).collect()))
}

/// Quotes for a fixed list of `(symbol, name)` pairs, each row with a `name`.
pub fn named_quotes(list: &[(&str, &str)], ctx: &GenContext) -> Value {
    Value::Array(
        list.iter()
            .map(|(s, name)| {
                let mut q = quote_row(s, ctx.now);
                if let Value::Object(m) = &mut q {
                    m.insert("name".into(), json!(name));
                }
                q
            })
            .collect(),
    )
}

/// World equity indices.
pub const INDICES: &[(&str, &str)] = &[
    ("SPX", "S&P 500"),
    ("NDX", "Nasdaq 100"),
    ("DJI", "Dow Jones Industrial Average"),
    ("RUT", "Russell 2000"),
    ("FTSE", "FTSE 100"),
    ("DAX", "DAX 40"),
    ("CAC", "CAC 40"),
    ("N225", "Nikkei 225"),
    ("HSI", "Hang Seng"),
    ("SSE", "Shanghai Composite"),
    ("CSI300", "CSI 300"),
];

/// Commodity futures and spot metals.
pub const COMMODITIES: &[(&str, &str)] = &[
    ("XAUUSD", "Gold spot"),
    ("XAGUSD", "Silver spot"),
    ("XPTUSD", "Platinum spot"),
    ("WTI", "WTI crude oil"),
    ("BRENT", "Brent crude oil"),
    ("NATGAS", "Henry Hub natural gas"),
    ("COPPER", "Copper"),
    ("WHEAT", "Wheat"),
    ("CORN", "Corn"),
    ("SOYBEAN", "Soybeans"),
    ("COFFEE", "Coffee"),
    ("SUGAR", "Sugar"),
];

/// Large crypto assets (USDT pairs) with circulating supply.
pub const CRYPTO: &[(&str, &str, f64)] = &[
    ("BTCUSDT", "Bitcoin", 19.8e6),
    ("ETHUSDT", "Ethereum", 120.4e6),
    ("BNBUSDT", "BNB", 144.0e6),
    ("SOLUSDT", "Solana", 480.0e6),
    ("XRPUSDT", "XRP", 57.0e9),
    ("DOGEUSDT", "Dogecoin", 147.0e9),
    ("ADAUSDT", "Cardano", 35.0e9),
    ("AVAXUSDT", "Avalanche", 410.0e6),
    ("LINKUSDT", "Chainlink", 630.0e6),
    ("DOTUSDT", "Polkadot", 1.5e9),
    ("TONUSDT", "Toncoin", 2.5e9),
    ("TRXUSDT", "TRON", 86.0e9),
];

/// Top crypto assets by market cap.
pub fn crypto_markets(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let n = p_int(params, "limit", 10, 1, CRYPTO.len() as i64) as usize;
    let mut rows: Vec<(f64, Value)> = CRYPTO
        .iter()
        .map(|(s, name, supply)| {
            let (_, b) = bars(s, DAY, 2, ctx.now);
            let p = b[1].close;
            let mcap = p * supply;
            let row = obj([
                ("rank", json!(0)),
                ("symbol", json!(s.trim_end_matches("USDT"))),
                ("name", json!(name)),
                ("price", num(p)),
                ("changePct24h", numr((p / b[0].close - 1.0) * 100.0, 2)),
                ("marketCap", numr(mcap, 0)),
                ("volume24h", numr(b[1].volume * p, 0)),
                ("circulatingSupply", numr(*supply, 0)),
            ]);
            (mcap, row)
        })
        .collect();
    rows.sort_by(|a, b| b.0.total_cmp(&a.0));
    Value::Array(
        rows.into_iter()
            .take(n)
            .enumerate()
            .map(|(i, (_, mut r))| {
                if let Value::Object(m) = &mut r {
                    m.insert("rank".into(), json!(i + 1));
                }
                r
            })
            .collect(),
    )
}

/// US large caps used by movers, screeners and heatmaps: (ticker, name, sector, market cap $bn).
pub const STOCKS: &[(&str, &str, &str, f64)] = &[
    ("AAPL", "Apple Inc.", "Technology", 3450.0),
    ("MSFT", "Microsoft Corp.", "Technology", 3120.0),
    ("NVDA", "NVIDIA Corp.", "Technology", 3300.0),
    ("AVGO", "Broadcom Inc.", "Technology", 1050.0),
    ("ORCL", "Oracle Corp.", "Technology", 480.0),
    ("AMD", "Advanced Micro Devices", "Technology", 200.0),
    ("GOOGL", "Alphabet Inc.", "Communication Services", 2300.0),
    ("META", "Meta Platforms", "Communication Services", 1520.0),
    ("NFLX", "Netflix Inc.", "Communication Services", 390.0),
    ("AMZN", "Amazon.com Inc.", "Consumer Discretionary", 2250.0),
    ("TSLA", "Tesla Inc.", "Consumer Discretionary", 1200.0),
    ("HD", "Home Depot", "Consumer Discretionary", 410.0),
    ("MCD", "McDonald's Corp.", "Consumer Discretionary", 210.0),
    ("JPM", "JPMorgan Chase", "Financials", 680.0),
    ("V", "Visa Inc.", "Financials", 610.0),
    ("BAC", "Bank of America", "Financials", 340.0),
    ("GS", "Goldman Sachs", "Financials", 185.0),
    ("LLY", "Eli Lilly", "Health Care", 720.0),
    ("UNH", "UnitedHealth Group", "Health Care", 480.0),
    ("JNJ", "Johnson & Johnson", "Health Care", 370.0),
    ("PFE", "Pfizer Inc.", "Health Care", 150.0),
    ("XOM", "Exxon Mobil", "Energy", 480.0),
    ("CVX", "Chevron Corp.", "Energy", 280.0),
    ("WMT", "Walmart Inc.", "Consumer Staples", 730.0),
    ("PG", "Procter & Gamble", "Consumer Staples", 390.0),
    ("KO", "Coca-Cola Co.", "Consumer Staples", 270.0),
    ("CAT", "Caterpillar Inc.", "Industrials", 180.0),
    ("GE", "GE Aerospace", "Industrials", 195.0),
    ("BA", "Boeing Co.", "Industrials", 115.0),
    ("LIN", "Linde plc", "Materials", 215.0),
    ("NEE", "NextEra Energy", "Utilities", 150.0),
    ("PLD", "Prologis", "Real Estate", 100.0),
];

/// The eleven GICS sectors with their SPDR ETF.
pub const SECTORS: &[(&str, &str)] = &[
    ("Technology", "XLK"),
    ("Communication Services", "XLC"),
    ("Consumer Discretionary", "XLY"),
    ("Financials", "XLF"),
    ("Health Care", "XLV"),
    ("Energy", "XLE"),
    ("Consumer Staples", "XLP"),
    ("Industrials", "XLI"),
    ("Materials", "XLB"),
    ("Utilities", "XLU"),
    ("Real Estate", "XLRE"),
];

/// Today's change in percent for a ticker (consistent with its quote).
pub fn day_change(symbol: &str, now: DateTime<Utc>) -> (f64, f64, f64) {
    let (_, b) = bars(symbol, DAY, 2, now);
    (b[1].close, (b[1].close / b[0].close - 1.0) * 100.0, b[1].volume)
}

/// Top gainers and losers (or most active) among US large caps.
pub fn movers(params: &Map<String, Value>, ctx: &GenContext, by_volume: bool) -> Value {
    let n = p_int(params, "limit", 10, 1, STOCKS.len() as i64) as usize;
    let direction = p_str(params, "direction", "gainers");
    let mut rows: Vec<(f64, Value)> = STOCKS
        .iter()
        .map(|(s, name, sector, _)| {
            let (price, chg, vol) = day_change(s, ctx.now);
            let key = if by_volume {
                vol * price
            } else if direction == "losers" {
                -chg
            } else {
                chg
            };
            let row = obj([
                ("symbol", json!(s)),
                ("name", json!(name)),
                ("sector", json!(sector)),
                ("price", num(price)),
                ("changePct", numr(chg, 2)),
                ("volume", num(vol)),
                ("dollarVolume", numr(vol * price, 0)),
            ]);
            (key, row)
        })
        .collect();
    rows.sort_by(|a, b| b.0.total_cmp(&a.0));
    Value::Array(rows.into_iter().take(n).map(|r| r.1).collect())
}

/// Recent trades (newest last), prices around the last close.
pub fn trades(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let symbol = p_str(params, "symbol", "BTCUSDT");
    let n = p_int(params, "limit", 100, 1, 1000) as usize;
    let (prof, b) = bars(symbol, DAY, 1, ctx.now);
    let mut rng = rng_anchor(&format!("trades|{}", prof.symbol), ctx.now);
    let dec = price_decimals(b[0].close);
    let tick_vol = prof.vol / (365.0f64 * 86_400.0).sqrt() * 3.0;
    let mut p = b[0].close;
    let mut t = ctx.now.timestamp();
    let mut rows = Vec::with_capacity(n);
    let mut id =
        hash(&prof.symbol) % 9_000_000_000 + 1_000_000_000 + ctx.now.timestamp() as u64 % 100_000;
    for _ in 0..n {
        let side = if rng.random::<bool>() { "buy" } else { "sell" };
        let size = (prof.daily_volume / 40_000.0) * (1.2 * gauss(&mut rng)).exp();
        rows.push(obj([
            ("id", json!(id)),
            ("time", json!(t)),
            ("price", numr(p, dec)),
            ("size", numr(size, if size > 100.0 { 0 } else { 4 })),
            ("side", json!(side)),
        ]));
        id -= 1;
        t -= rng.random_range(1..12);
        p *= (tick_vol * gauss(&mut rng)).exp();
    }
    rows.reverse();
    Value::Array(rows)
}

/// Order book snapshot: `levels` bids and asks with cumulative size.
pub fn depth(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let symbol = p_str(params, "symbol", "BTCUSDT");
    let levels = p_int(params, "levels", 20, 1, 500) as usize;
    let (prof, b) = bars(symbol, DAY, 1, ctx.now);
    let mut rng = rng_ctx(ctx.seed);
    let mid = b[0].close;
    let dec = price_decimals(mid) + 1;
    let tick = mid * if prof.class == AssetClass::Fx { 0.00001 } else { 0.0001 };
    let base = prof.daily_volume / 20_000.0;
    let side = |rng: &mut Rng8, sign: f64| -> Vec<Value> {
        let mut total = 0.0;
        (0..levels)
            .map(|i| {
                let price = mid + sign * tick * (0.5 + i as f64 * (1.0 + rng.random::<f64>()));
                let size = base * (1.0 + i as f64 * 0.15) * (0.8 * gauss(rng)).exp();
                total += size;
                obj([
                    ("price", numr(price, dec)),
                    ("size", numr(size, 4)),
                    ("total", numr(total, 4)),
                ])
            })
            .collect()
    };
    let bids = side(&mut rng, -1.0);
    let asks = side(&mut rng, 1.0);
    let best_bid = bids.first().and_then(|v| v["price"].as_f64()).unwrap_or(mid);
    let best_ask = asks.first().and_then(|v| v["price"].as_f64()).unwrap_or(mid);
    obj([
        ("symbol", json!(prof.symbol)),
        ("time", json!(ctx.now.timestamp())),
        ("mid", numr((best_bid + best_ask) / 2.0, dec)),
        ("spread", numr(best_ask - best_bid, dec)),
        ("bids", Value::Array(bids)),
        ("asks", Value::Array(asks)),
    ])
}

/// Bid-ask spread history.
pub fn spread_history(params: &Map<String, Value>, ctx: &GenContext) -> Result<Value, String> {
    let symbol = p_str(params, "symbol", "BTCUSDT");
    let step = timeframe_secs(p_str(params, "timeframe", "1h"))?;
    let n = p_int(params, "limit", 120, 1, 5000) as usize;
    let (prof, b) = bars(symbol, step, n, ctx.now);
    let base_bps = if prof.class == AssetClass::Fx { 0.4 } else { 1.5 };
    let ks: Vec<i64> = b.iter().map(|bar| bar.time.div_euclid(step)).collect();
    let seed = hash(&format!("spread|{}|{step}", prof.symbol));
    let (lo, hi) = (base_bps * 0.2, base_bps * 8.0);
    let bps = stable::reverting(seed, &ks, base_bps, base_bps * 0.15, 0.1, lo, hi);
    Ok(Value::Array(
        b.iter()
            .zip(bps)
            .map(|(bar, s)| {
                obj([
                    ("time", json!(bar.time)),
                    ("spreadBps", numr(s, 3)),
                    ("spread", numr(bar.close * s / 10_000.0, price_decimals(bar.close) + 2)),
                ])
            })
            .collect(),
    ))
}

/// Order-book imbalance history: resting bid vs ask size near the touch.
pub fn imbalance(params: &Map<String, Value>, ctx: &GenContext) -> Result<Value, String> {
    let symbol = norm_symbol(p_str(params, "symbol", "BTCUSDT"));
    let step = timeframe_secs(p_str(params, "timeframe", "1h"))?;
    let n = p_int(params, "limit", 120, 1, 5000) as usize;
    let prof = profile(&symbol);
    let times = time_grid(ctx.now, step, n, prof.class != AssetClass::Crypto);
    let seed = hash(&format!("imb|{symbol}|{step}"));
    let ks: Vec<i64> = times.iter().map(|&t| t.div_euclid(step)).collect();
    let imb = stable::reverting(seed, &ks, 0.0, 0.12, 0.25, -0.95, 0.95);
    let base = prof.daily_volume / 500.0;
    Ok(Value::Array(
        times
            .iter()
            .zip(ks.iter().zip(imb))
            .map(|(&t, (&k, x))| {
                let total = base * (0.3 * stable::normal(seed, k, 1)).exp();
                obj([
                    ("time", json!(t)),
                    ("bidSize", numr(total * (1.0 + x) / 2.0, 3)),
                    ("askSize", numr(total * (1.0 - x) / 2.0, 3)),
                    ("imbalance", numr(x, 4)),
                ])
            })
            .collect(),
    ))
}

fn sma(xs: &[f64], i: usize, w: usize) -> f64 {
    let lo = (i + 1).saturating_sub(w);
    let s = &xs[lo..=i];
    s.iter().sum::<f64>() / s.len() as f64
}

fn ema_series(xs: &[f64], w: usize) -> Vec<f64> {
    let k = 2.0 / (w as f64 + 1.0);
    let mut out = Vec::with_capacity(xs.len());
    let mut e = xs.first().copied().unwrap_or(0.0);
    for &x in xs {
        e = x * k + e * (1.0 - k);
        out.push(e);
    }
    out
}

/// Technical indicators computed on klines: `rsi`, `macd`, `bollinger`, `ma`.
pub fn technical(
    kind: &str,
    params: &Map<String, Value>,
    ctx: &GenContext,
) -> Result<Value, String> {
    let symbol = p_str(params, "symbol", "XAUUSD");
    let step = timeframe_secs(p_str(params, "timeframe", "1D"))?;
    let n = p_int(params, "limit", 120, 1, 5000) as usize;
    let period = p_int(params, "period", if kind == "rsi" { 14 } else { 20 }, 2, 400) as usize;
    let warm = 200.max(period * 3);
    let (_, b) = bars(symbol, step, n + warm, ctx.now);
    let closes: Vec<f64> = b.iter().map(|x| x.close).collect();
    let dec = price_decimals(closes[closes.len() - 1]) + 1;
    let rows: Vec<Value> = match kind {
        "rsi" => {
            let (mut g, mut l) = (0.0, 0.0);
            let alpha = 1.0 / period as f64;
            let mut out = Vec::with_capacity(n);
            for i in 1..closes.len() {
                let d = closes[i] - closes[i - 1];
                g = g * (1.0 - alpha) + d.max(0.0) * alpha;
                l = l * (1.0 - alpha) + (-d).max(0.0) * alpha;
                if i >= warm {
                    let rsi = if l == 0.0 { 100.0 } else { 100.0 - 100.0 / (1.0 + g / l) };
                    out.push(obj([("time", json!(b[i].time)), ("value", numr(rsi, 2))]));
                }
            }
            out
        }
        "macd" => {
            let fast = ema_series(&closes, 12);
            let slow = ema_series(&closes, 26);
            let macd: Vec<f64> = fast.iter().zip(&slow).map(|(f, s)| f - s).collect();
            let signal = ema_series(&macd, 9);
            (warm..closes.len())
                .map(|i| {
                    obj([
                        ("time", json!(b[i].time)),
                        ("macd", numr(macd[i], dec)),
                        ("signal", numr(signal[i], dec)),
                        ("histogram", numr(macd[i] - signal[i], dec)),
                    ])
                })
                .collect()
        }
        "bollinger" => {
            let k = p_f64(params, "stdDev", 2.0);
            (warm..closes.len())
                .map(|i| {
                    let m = sma(&closes, i, period);
                    let lo = (i + 1).saturating_sub(period);
                    let var = closes[lo..=i].iter().map(|x| (x - m) * (x - m)).sum::<f64>()
                        / (i + 1 - lo) as f64;
                    let sd = var.sqrt();
                    obj([
                        ("time", json!(b[i].time)),
                        ("close", num(closes[i])),
                        ("middle", numr(m, dec)),
                        ("upper", numr(m + k * sd, dec)),
                        ("lower", numr(m - k * sd, dec)),
                    ])
                })
                .collect()
        }
        _ => {
            let e20 = ema_series(&closes, 20);
            (warm..closes.len())
                .map(|i| {
                    obj([
                        ("time", json!(b[i].time)),
                        ("close", num(closes[i])),
                        ("sma20", numr(sma(&closes, i, 20), dec)),
                        ("sma50", numr(sma(&closes, i, 50), dec)),
                        ("sma200", numr(sma(&closes, i, 200), dec)),
                        ("ema20", numr(e20[i], dec)),
                    ])
                })
                .collect()
        }
    };
    Ok(Value::Array(rows))
}

/// Classic floor-trader pivot points from the previous completed bar.
pub fn pivots(params: &Map<String, Value>, ctx: &GenContext) -> Result<Value, String> {
    let symbol = p_str(params, "symbol", "XAUUSD");
    let step = timeframe_secs(p_str(params, "timeframe", "1D"))?;
    let (prof, b) = bars(symbol, step, 2, ctx.now);
    let p = b[0];
    let dec = price_decimals(p.close);
    let pivot = (p.high + p.low + p.close) / 3.0;
    let r = |x: f64| numr(x, dec);
    Ok(obj([
        ("symbol", json!(prof.symbol)),
        ("time", json!(b[1].time)),
        ("pivot", r(pivot)),
        ("r1", r(2.0 * pivot - p.low)),
        ("r2", r(pivot + (p.high - p.low))),
        ("r3", r(p.high + 2.0 * (pivot - p.low))),
        ("s1", r(2.0 * pivot - p.high)),
        ("s2", r(pivot - (p.high - p.low))),
        ("s3", r(p.low - 2.0 * (p.high - pivot))),
    ]))
}

/// Rolling realised volatility (annualised %, close-to-close) of a symbol.
pub fn realized_vol(params: &Map<String, Value>, ctx: &GenContext) -> Result<Value, String> {
    let symbol = p_str(params, "symbol", "SPX");
    let n = p_int(params, "limit", 120, 1, 5000) as usize;
    let w = p_int(params, "window", 20, 2, 250) as usize;
    let (prof, b) = bars(symbol, DAY, n + w + 1, ctx.now);
    let ppy = periods_per_year(prof.class, DAY);
    let rets: Vec<f64> = b.windows(2).map(|x| (x[1].close / x[0].close).ln()).collect();
    Ok(Value::Array(
        (w..rets.len())
            .map(|i| {
                let s = &rets[i + 1 - w..=i];
                let m = s.iter().sum::<f64>() / w as f64;
                let var = s.iter().map(|r| (r - m) * (r - m)).sum::<f64>() / (w as f64 - 1.0);
                obj([
                    ("time", json!(b[i + 1].time)),
                    ("value", numr((var * ppy).sqrt() * 100.0, 2)),
                ])
            })
            .collect(),
    ))
}

/// Loadings on (equity, crypto, dollar, gold) factors used to correlate symbols realistically.
fn loadings(sym: &str) -> [f64; 4] {
    let p = profile(sym);
    let u = unit(sym) * 0.2;
    match p.class {
        AssetClass::Crypto => [0.35, 0.85 - u, -0.1, 0.05],
        AssetClass::Equity | AssetClass::Index => {
            if matches!(p.symbol.as_str(), "GLD") {
                [0.1, 0.0, -0.3, 0.9]
            } else if matches!(p.symbol.as_str(), "TLT") {
                [-0.2, 0.0, -0.2, 0.2]
            } else if p.symbol == "VIX" {
                [-0.8, -0.2, 0.1, 0.05]
            } else if p.symbol == "DXY" {
                [-0.1, -0.1, 0.95, -0.3]
            } else {
                [0.8 - u, 0.15, -0.1, 0.0]
            }
        }
        AssetClass::Fx => {
            let usd_base = p.symbol.starts_with("USD");
            let d = if usd_base { 0.8 - u } else { -0.8 + u };
            [0.1, 0.0, d, if usd_base { -0.2 } else { 0.2 }]
        }
        AssetClass::Commodity => {
            if p.symbol.starts_with("XA") || p.symbol == "GOLD" || p.symbol == "SILVER" {
                [0.1, 0.1, -0.35, 0.85 - u]
            } else {
                [0.45, 0.05, -0.25, 0.1]
            }
        }
    }
}

fn corr_of(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        sab += (x - ma) * (y - mb);
        saa += (x - ma) * (x - ma);
        sbb += (y - mb) * (y - mb);
    }
    if saa == 0.0 || sbb == 0.0 { 0.0 } else { sab / (saa * sbb).sqrt() }
}

fn factor_returns(syms: &[String], window: usize, rng: &mut Rng8) -> Vec<Vec<f64>> {
    let f: Vec<[f64; 4]> =
        (0..window).map(|_| [gauss(rng), gauss(rng), gauss(rng), gauss(rng)]).collect();
    syms.iter()
        .map(|s| {
            let l = loadings(s);
            let sys: f64 = l.iter().map(|x| x * x).sum::<f64>().min(0.95);
            let idio = (1.0 - sys).max(0.05).sqrt();
            f.iter()
                .map(|fi| (0..4).map(|k| l[k] * fi[k]).sum::<f64>() + idio * gauss(rng))
                .collect()
        })
        .collect()
}

/// Correlation matrix of daily returns over `window` days.
pub fn corr_matrix(params: &Map<String, Value>, ctx: &GenContext) -> Result<Value, String> {
    let syms: Vec<String> =
        p_list(params, "symbols", &["SPX", "NDX", "XAUUSD", "BTCUSDT", "EURUSD", "WTI", "TLT"])
            .iter()
            .map(|s| norm_symbol(s))
            .collect();
    if syms.len() < 2 || syms.len() > 40 {
        return Err(format!("symbols must list 2 to 40 symbols, got {}", syms.len()));
    }
    let window = p_int(params, "window", 90, 10, 1000) as usize;
    let mut rng = rng_ctx(ctx.seed);
    let r = factor_returns(&syms, window, &mut rng);
    let matrix: Vec<Value> = (0..syms.len())
        .map(|i| {
            Value::Array(
                (0..syms.len())
                    .map(|j| if i == j { num(1.0) } else { numr(corr_of(&r[i], &r[j]), 3) })
                    .collect(),
            )
        })
        .collect();
    Ok(obj([("labels", json!(syms)), ("window", json!(window)), ("matrix", Value::Array(matrix))]))
}

/// Rolling correlation between two symbols.
pub fn rolling_corr(params: &Map<String, Value>, ctx: &GenContext) -> Result<Value, String> {
    let a = norm_symbol(p_str(params, "symbolA", "BTCUSDT"));
    let b = norm_symbol(p_str(params, "symbolB", "NDX"));
    let n = p_int(params, "limit", 120, 1, 5000) as usize;
    let la = loadings(&a);
    let lb = loadings(&b);
    let target = if a == b {
        1.0
    } else {
        let dot: f64 = (0..4).map(|k| la[k] * lb[k]).sum();
        let na = la.iter().map(|x| x * x).sum::<f64>().clamp(0.05, 0.95);
        let nb = lb.iter().map(|x| x * x).sum::<f64>().clamp(0.05, 0.95);
        (dot / (na.sqrt() * nb.sqrt()) * (na * nb).sqrt().sqrt()).clamp(-0.95, 0.95)
    };
    let times = time_grid(ctx.now, DAY, n, true);
    let ks: Vec<i64> = times.iter().map(|&t| t.div_euclid(DAY)).collect();
    let vals =
        stable::reverting(hash(&format!("rcorr|{a}|{b}")), &ks, target, 0.03, 0.05, -0.99, 0.99);
    Ok(Value::Array(
        times
            .iter()
            .zip(vals)
            .map(|(&t, v)| obj([("time", json!(t)), ("value", numr(v, 3))]))
            .collect(),
    ))
}

/// Beta and correlation of symbols against a benchmark.
pub fn betas(params: &Map<String, Value>, ctx: &GenContext) -> Result<Value, String> {
    let bench = norm_symbol(p_str(params, "benchmark", "SPX"));
    let syms: Vec<String> = p_list(
        params,
        "symbols",
        &["AAPL", "MSFT", "NVDA", "TSLA", "JPM", "XOM", "GLD", "BTCUSDT"],
    )
    .iter()
    .map(|s| norm_symbol(s))
    .collect();
    let window = p_int(params, "window", 252, 20, 2000) as usize;
    let mut all = vec![bench.clone()];
    all.extend(syms.iter().cloned());
    let mut rng = rng_ctx(ctx.seed);
    let r = factor_returns(&all, window, &mut rng);
    Ok(Value::Array(
        syms.iter()
            .enumerate()
            .map(|(i, s)| {
                let c = corr_of(&r[0], &r[i + 1]);
                let beta = c * profile(s).vol / profile(&bench).vol.max(0.01);
                obj([
                    ("symbol", json!(s)),
                    ("benchmark", json!(bench)),
                    ("beta", numr(beta, 3)),
                    ("correlation", numr(c, 3)),
                    ("annualVolPct", numr(profile(s).vol * 100.0, 1)),
                ])
            })
            .collect(),
    ))
}

/// Currencies and their units per USD.
pub const FX_MAJORS: &[&str] = &["USD", "EUR", "JPY", "GBP", "CNY", "AUD", "CAD", "CHF"];

fn usd_per_unit(ccy: &str, now: DateTime<Utc>) -> f64 {
    if ccy == "USD" {
        return 1.0;
    }
    let pair = format!("{ccy}USD");
    let inv = format!("USD{ccy}");
    let known = |s: &str| s == "EURUSD" || s == "GBPUSD" || s == "AUDUSD" || s == "NZDUSD";
    if known(&pair) {
        bars(&pair, DAY, 1, now).1[0].close
    } else {
        1.0 / bars(&inv, DAY, 1, now).1[0].close
    }
}

/// Cross-rate matrix: `matrix[i][j]` = units of `labels[j]` per one `labels[i]`.
pub fn cross_rates(params: &Map<String, Value>, ctx: &GenContext) -> Result<Value, String> {
    let ccys: Vec<String> =
        p_list(params, "currencies", FX_MAJORS).iter().map(|c| c.to_uppercase()).collect();
    if let Some(bad) =
        ccys.iter().find(|c| c.len() != 3 || !c.chars().all(|x| x.is_ascii_alphabetic()))
    {
        return Err(format!("`{bad}` is not a 3-letter ISO currency code like EUR"));
    }
    let usd: Vec<f64> = ccys.iter().map(|c| usd_per_unit(c, ctx.now)).collect();
    let matrix: Vec<Value> = usd
        .iter()
        .map(|a| {
            Value::Array(
                usd.iter()
                    .map(|b| {
                        let x = a / b;
                        numr(x, price_decimals(x) + 1)
                    })
                    .collect(),
            )
        })
        .collect();
    Ok(obj([
        ("labels", json!(ccys)),
        ("matrix", Value::Array(matrix)),
        ("time", json!(ctx.now.timestamp())),
    ]))
}

/// Spot FX rate for a pair.
pub fn fx_rate(params: &Map<String, Value>, ctx: &GenContext) -> Result<Value, String> {
    let base = p_str(params, "base", "EUR").to_uppercase();
    let quote = p_str(params, "quote", "USD").to_uppercase();
    let rate = usd_per_unit(&base, ctx.now) / usd_per_unit(&quote, ctx.now);
    let (_, b) = bars(&format!("{base}{quote}"), DAY, 2, ctx.now);
    let chg = (b[1].close / b[0].close - 1.0) * 100.0;
    let d = price_decimals(rate) + 1;
    Ok(obj([
        ("base", json!(base)),
        ("quote", json!(quote)),
        ("rate", numr(rate, d)),
        ("inverse", numr(1.0 / rate, price_decimals(1.0 / rate) + 1)),
        ("changePct", numr(chg, 3)),
        ("time", json!(ctx.now.timestamp())),
    ]))
}

/// Relative currency strength over a lookback (z-scored % change vs the basket).
pub fn currency_strength(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let days = p_int(params, "days", 5, 1, 250) as usize;
    let ccys = ["USD", "EUR", "JPY", "GBP", "CHF", "AUD", "CAD", "NZD", "CNY"];
    let changes: Vec<f64> = ccys
        .iter()
        .map(|c| {
            if *c == "USD" {
                return 0.0;
            }
            let pair = format!("{c}USD");
            let inv = format!("USD{c}");
            let direct = matches!(pair.as_str(), "EURUSD" | "GBPUSD" | "AUDUSD" | "NZDUSD");
            let sym = if direct { pair } else { inv };
            let (_, b) = bars(&sym, DAY, days + 1, ctx.now);
            let r = (b[days].close / b[0].close).ln() * 100.0;
            if direct { r } else { -r }
        })
        .collect();
    let mean = changes.iter().sum::<f64>() / changes.len() as f64;
    Value::Array(
        ccys.iter()
            .zip(&changes)
            .map(|(c, x)| {
                obj([
                    ("name", json!(c)),
                    ("value", numr(x - mean, 3)),
                    ("changeVsUsdPct", numr(*x, 3)),
                ])
            })
            .collect(),
    )
}

/// `{time, value}` closes of a symbol.
pub fn close_series(
    params: &Map<String, Value>,
    ctx: &GenContext,
    default: &str,
) -> Result<Value, String> {
    let symbol = p_str(params, "symbol", default);
    let step = timeframe_secs(p_str(params, "timeframe", "1D"))?;
    let n = p_int(params, "limit", 120, 1, 5000) as usize;
    let (_, b) = bars(symbol, step, n, ctx.now);
    Ok(Value::Array(
        b.iter().map(|x| obj([("time", json!(x.time)), ("value", num(x.close))])).collect(),
    ))
}

/// Ratio of two symbols' closes (e.g. gold/silver).
pub fn ratio_series(params: &Map<String, Value>, ctx: &GenContext, a: &str, b: &str) -> Value {
    let n = p_int(params, "limit", 120, 1, 5000) as usize;
    let (_, xa) = bars(a, DAY, n, ctx.now);
    let (_, xb) = bars(b, DAY, n, ctx.now);
    Value::Array(
        xa.iter()
            .zip(&xb)
            .map(|(p, q)| obj([("time", json!(p.time)), ("value", numr(p.close / q.close, 3))]))
            .collect(),
    )
}

/// Market breadth: advancers, decliners, new highs/lows and the cumulative A/D line.
pub fn breadth(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let n = p_int(params, "limit", 120, 1, 5000) as usize;
    let index = norm_symbol(p_str(params, "index", "SPX"));
    let members = match index.as_str() {
        "NDX" => 100.0,
        "DJI" => 30.0,
        "RUT" => 2000.0,
        _ => 500.0,
    };
    // A day's counts are a function of (index, day); the A/D line sums them from the start of
    // 2025, so no past day moves.
    let seed = hash(&format!("breadth|{index}"));
    let day = |bar: &Bar| {
        let k = bar.time.div_euclid(DAY);
        let r = (bar.close / bar.open).ln() / 0.01;
        let up_share =
            (0.5 + 0.35 * r.tanh() + 0.05 * stable::normal(seed, k, 1)).clamp(0.03, 0.97);
        let unch = (members * 0.01 * stable::uniform(seed, k, 2)).round();
        let adv = ((members - unch) * up_share).round();
        (k, up_share, unch, adv, members - unch - adv)
    };
    // The A/D line counts from the start of 2025: cumulate over every trading day from then (or
    // from the first row, if earlier) and subtract the sum up to 2025. The rows are the last `n`.
    let k_ref = 1_735_689_600 / DAY;
    let since_ref = (ctx.now.timestamp().div_euclid(DAY) - k_ref + 1).max(1) as usize;
    let (_, all) = bars(&index, DAY, since_ref.max(n), ctx.now);
    let b = &all[all.len().saturating_sub(n)..];
    let mut cum = 0.0;
    let mut at_ref = 0.0;
    let mut line = std::collections::HashMap::with_capacity(all.len());
    for bar in &all {
        let (k, _, _, adv, dec) = day(bar);
        cum += adv - dec;
        if k <= k_ref {
            at_ref = cum;
        }
        line.insert(k, cum);
    }
    Value::Array(
        b.iter()
            .map(|bar| {
                let (k, up_share, unch, adv, dec) = day(bar);
                let ad = line.get(&k).map_or(0.0, |c| c - at_ref);
                let nh = (members * 0.03 * (up_share * 2.0).powi(2) * stable::uniform(seed, k, 3))
                    .round();
                let nl = (members
                    * 0.03
                    * ((1.0 - up_share) * 2.0).powi(2)
                    * stable::uniform(seed, k, 4))
                .round();
                obj([
                    ("time", json!(bar.time)),
                    ("advancers", num(adv)),
                    ("decliners", num(dec)),
                    ("unchanged", num(unch)),
                    ("newHighs", num(nh)),
                    ("newLows", num(nl)),
                    ("adLine", num(ad)),
                ])
            })
            .collect(),
    )
}
