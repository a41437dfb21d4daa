//! Shared helpers for generators: param access, seeding, time grids, feed events, rounding and
//! per-symbol price profiles.

use chrono::{DateTime, Datelike, Utc};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use serde_json::{Map, Value};

/// The random generator every builtin uses.
pub type Rng8 = ChaCha8Rng;

/// Seconds in one day.
pub const DAY: i64 = 86_400;

/// A string param, or `default` when absent.
pub fn p_str<'a>(params: &'a Map<String, Value>, key: &str, default: &'a str) -> &'a str {
    params.get(key).and_then(Value::as_str).unwrap_or(default)
}

/// An integer param clamped to `[lo, hi]`, or `default` when absent.
pub fn p_int(params: &Map<String, Value>, key: &str, default: i64, lo: i64, hi: i64) -> i64 {
    params.get(key).and_then(Value::as_f64).map_or(default, |f| f as i64).clamp(lo, hi)
}

/// A number param, or `default` when absent.
pub fn p_f64(params: &Map<String, Value>, key: &str, default: f64) -> f64 {
    params.get(key).and_then(Value::as_f64).unwrap_or(default)
}

/// A list of strings given either as an array or as one comma-separated string.
pub fn p_list(params: &Map<String, Value>, key: &str, default: &[&str]) -> Vec<String> {
    let out: Vec<String> = match params.get(key) {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|v| v.as_str().map(|s| s.trim().to_owned()))
            .filter(|s| !s.is_empty())
            .collect(),
        Some(Value::String(s)) => {
            s.split(',').map(|x| x.trim().to_owned()).filter(|x| !x.is_empty()).collect()
        }
        _ => Vec::new(),
    };
    if out.is_empty() { default.iter().map(|s| (*s).to_owned()).collect() } else { out }
}

/// Normalised symbol: upper case, without `/`, `-` and spaces (`btc/usdt` → `BTCUSDT`).
pub fn norm_symbol(s: &str) -> String {
    s.chars().filter(|c| !matches!(c, '/' | '-' | ' ' | '_')).collect::<String>().to_uppercase()
}

/// Stable 64-bit hash of a string.
pub fn hash(s: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(s.as_bytes())
}

/// A value in `[0, 1)` derived from a string: stable per name across days.
pub fn unit(s: &str) -> f64 {
    (hash(s) >> 11) as f64 / (1u64 << 53) as f64
}

/// The call's generator: seeded from the context seed (source, method, params, day).
pub fn rng_ctx(seed: u64) -> Rng8 {
    Rng8::seed_from_u64(seed)
}

/// A generator seeded from a key and the UTC day of `now`, independent of `limit`-like params so
/// that the most recent rows of a series are the same whatever the length asked for.
pub fn rng_anchor(key: &str, now: DateTime<Utc>) -> Rng8 {
    Rng8::seed_from_u64(hash(&format!("{key}|{}", now.date_naive())))
}

/// The events of a demo feed up to `now`, newest first, at most `n`: time is cut into slots of
/// `slot` seconds, each holding an event with probability `p` at a point within it, and each
/// event comes with a generator seeded by (feed, slot) for its attributes. So an event, once it
/// happened, is the same whenever it is asked for, and new ones appear as the clock moves.
pub fn events(seed: u64, now: i64, slot: i64, p: f64, n: usize) -> Vec<(i64, Rng8)> {
    let mut out = Vec::with_capacity(n);
    let mut k = now.div_euclid(slot);
    // Enough slots for `n` events many times over; a feed never scans without end.
    let last = k - (n as f64 / p.max(0.01) * 4.0) as i64 - 16;
    while out.len() < n && k > last {
        if super::stable::uniform(seed, k, 1) < p {
            let t = k * slot + (super::stable::uniform(seed, k, 2) * slot as f64) as i64;
            if t <= now {
                out.push((t, Rng8::seed_from_u64(super::stable::mix(seed, k as u64, 7))));
            }
        }
        k -= 1;
    }
    out
}

/// One standard normal draw.
pub fn gauss(rng: &mut Rng8) -> f64 {
    StandardNormal.sample(rng)
}

/// Rounds to `d` decimals.
pub fn round(x: f64, d: i32) -> f64 {
    let m = 10f64.powi(d);
    (x * m).round() / m
}

/// Decimals that suit a price level (`1.0843` for FX, `2391.45` for gold).
pub fn price_decimals(p: f64) -> i32 {
    match p.abs() {
        x if x < 0.01 => 6,
        x if x < 10.0 => 4,
        x if x < 1000.0 => 2,
        _ => 2,
    }
}

/// Parses a bar size (`1m`, `5m`, `15m`, `30m`, `1h`, `4h`, `1D`, `1W`, `1M`) into seconds.
pub fn timeframe_secs(tf: &str) -> Result<i64, String> {
    Ok(match tf {
        "1m" => 60,
        "3m" => 180,
        "5m" => 300,
        "15m" => 900,
        "30m" => 1800,
        "1h" | "1H" => 3600,
        "2h" => 7200,
        "4h" | "4H" => 14_400,
        "12h" => 43_200,
        "1D" | "1d" | "D" => DAY,
        "1W" | "1w" | "W" => 7 * DAY,
        "1M" | "1mo" => 30 * DAY,
        other => {
            return Err(format!(
                "unsupported timeframe `{other}`; use one of 1m, 5m, 15m, 1h, 4h, 1D, 1W"
            ));
        }
    })
}

/// Start of the bar of size `step` containing `t` (weeks start Monday 00:00 UTC).
pub fn align(t: i64, step: i64) -> i64 {
    if step == 7 * DAY {
        let monday = 4 * DAY; // 1970-01-05 was a Monday
        (t - monday).div_euclid(step) * step + monday
    } else {
        t.div_euclid(step) * step
    }
}

/// True when `t` falls on a Saturday or Sunday (UTC).
pub fn is_weekend(t: i64) -> bool {
    // 1970-01-01 was a Thursday: day index 0 → Thu.
    matches!(t.div_euclid(DAY).rem_euclid(7), 2 | 3)
}

/// `n` bar start times of size `step`, ascending, the last one containing `now`. With
/// `skip_weekends`, bars on Saturday/Sunday are left out (not for weekly bars).
pub fn time_grid(now: DateTime<Utc>, step: i64, n: usize, skip_weekends: bool) -> Vec<i64> {
    let mut t = align(now.timestamp(), step);
    let skip = skip_weekends && step < 7 * DAY;
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        if !(skip && is_weekend(t)) {
            out.push(t);
        }
        t -= step;
    }
    out.reverse();
    out
}

/// The period indices (`t / step`) of `times`, preceded by the period before the first one, so
/// the first row also has a change.
pub fn indices_from_previous(times: &[i64], step: i64) -> Vec<i64> {
    let first = times.first().map(|&t| t.div_euclid(step) - 1);
    first.into_iter().chain(times.iter().map(|&t| t.div_euclid(step))).collect()
}

/// Months since January 1970 of the UTC instant `t` (the index of a monthly period).
pub fn month_index(t: i64) -> i64 {
    let d = DateTime::from_timestamp(t, 0).unwrap_or_default();
    i64::from(d.year()) * 12 + i64::from(d.month0()) - 1970 * 12
}

/// Calendar periods for low-frequency data (monthly/quarterly/annual), ascending, the last one the
/// latest *completed* period before `now` (a release lags its period). Times are period starts.
pub fn period_grid(now: DateTime<Utc>, months: u32, n: usize) -> Vec<i64> {
    let (mut y, mut m) = (now.year(), now.month0() as i32);
    // Step back to the start of the current period, then one more (the last completed one).
    m -= m % months as i32;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        m -= months as i32;
        while m < 0 {
            m += 12;
            y -= 1;
        }
        let t = chrono::NaiveDate::from_ymd_opt(y, m as u32 + 1, 1)
            .and_then(|d| d.and_hms_opt(0, 0, 0))
            .map_or(0, |d| d.and_utc().timestamp());
        out.push(t);
    }
    out.reverse();
    out
}

/// A `YYYY-MM-DD` label for a UTC timestamp.
pub fn date_str(t: i64) -> String {
    DateTime::from_timestamp(t, 0).map(|d| d.format("%Y-%m-%d").to_string()).unwrap_or_default()
}

/// Asset class of a symbol, deciding trading calendar and typical volatility.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AssetClass {
    /// Trades 24/7.
    Crypto,
    /// Single stocks and ETFs.
    Equity,
    /// Equity indices.
    Index,
    /// Currency pairs.
    Fx,
    /// Metals, energy, agriculture.
    Commodity,
}

/// Price level, annualised volatility and class of a symbol.
#[derive(Debug, Clone)]
pub struct SymbolProfile {
    /// Normalised symbol.
    pub symbol: String,
    /// Typical price level.
    pub price: f64,
    /// Annualised volatility (0.2 = 20 %).
    pub vol: f64,
    /// Asset class.
    pub class: AssetClass,
    /// Typical daily volume in units of the asset.
    pub daily_volume: f64,
}

const KNOWN: &[(&str, f64, f64, AssetClass)] = &[
    ("XAUUSD", 2650.0, 0.15, AssetClass::Commodity),
    ("GOLD", 2650.0, 0.15, AssetClass::Commodity),
    ("XAGUSD", 31.0, 0.28, AssetClass::Commodity),
    ("SILVER", 31.0, 0.28, AssetClass::Commodity),
    ("XPTUSD", 960.0, 0.25, AssetClass::Commodity),
    ("WTI", 72.0, 0.35, AssetClass::Commodity),
    ("CL", 72.0, 0.35, AssetClass::Commodity),
    ("BRENT", 76.0, 0.32, AssetClass::Commodity),
    ("NATGAS", 3.1, 0.6, AssetClass::Commodity),
    ("NG", 3.1, 0.6, AssetClass::Commodity),
    ("COPPER", 4.3, 0.22, AssetClass::Commodity),
    ("HG", 4.3, 0.22, AssetClass::Commodity),
    ("WHEAT", 560.0, 0.3, AssetClass::Commodity),
    ("CORN", 430.0, 0.25, AssetClass::Commodity),
    ("SOYBEAN", 1010.0, 0.2, AssetClass::Commodity),
    ("COFFEE", 320.0, 0.38, AssetClass::Commodity),
    ("SUGAR", 19.5, 0.3, AssetClass::Commodity),
    ("BTCUSDT", 92000.0, 0.55, AssetClass::Crypto),
    ("BTCUSD", 92000.0, 0.55, AssetClass::Crypto),
    ("BTC", 92000.0, 0.55, AssetClass::Crypto),
    ("ETHUSDT", 3300.0, 0.7, AssetClass::Crypto),
    ("ETHUSD", 3300.0, 0.7, AssetClass::Crypto),
    ("ETH", 3300.0, 0.7, AssetClass::Crypto),
    ("SOLUSDT", 190.0, 0.9, AssetClass::Crypto),
    ("BNBUSDT", 650.0, 0.6, AssetClass::Crypto),
    ("XRPUSDT", 2.2, 0.9, AssetClass::Crypto),
    ("DOGEUSDT", 0.32, 1.1, AssetClass::Crypto),
    ("ADAUSDT", 0.9, 1.0, AssetClass::Crypto),
    ("EURUSD", 1.08, 0.07, AssetClass::Fx),
    ("GBPUSD", 1.27, 0.08, AssetClass::Fx),
    ("USDJPY", 152.0, 0.1, AssetClass::Fx),
    ("USDCNY", 7.24, 0.04, AssetClass::Fx),
    ("USDCNH", 7.26, 0.05, AssetClass::Fx),
    ("AUDUSD", 0.65, 0.1, AssetClass::Fx),
    ("USDCAD", 1.39, 0.06, AssetClass::Fx),
    ("USDCHF", 0.88, 0.07, AssetClass::Fx),
    ("NZDUSD", 0.59, 0.1, AssetClass::Fx),
    ("DXY", 106.0, 0.07, AssetClass::Index),
    ("SPX", 5900.0, 0.16, AssetClass::Index),
    ("SPY", 590.0, 0.16, AssetClass::Equity),
    ("NDX", 21000.0, 0.22, AssetClass::Index),
    ("QQQ", 510.0, 0.22, AssetClass::Equity),
    ("DJI", 43000.0, 0.14, AssetClass::Index),
    ("RUT", 2250.0, 0.22, AssetClass::Index),
    ("VIX", 16.0, 0.9, AssetClass::Index),
    ("VVIX", 95.0, 0.7, AssetClass::Index),
    ("VXN", 21.0, 0.85, AssetClass::Index),
    ("MOVE", 100.0, 0.5, AssetClass::Index),
    ("OVX", 35.0, 0.7, AssetClass::Index),
    ("GVZ", 17.0, 0.6, AssetClass::Index),
    ("BVIV", 55.0, 0.6, AssetClass::Index),
    ("EVZ", 8.0, 0.5, AssetClass::Index),
    ("FTSE", 8300.0, 0.13, AssetClass::Index),
    ("DAX", 20000.0, 0.16, AssetClass::Index),
    ("CAC", 7400.0, 0.16, AssetClass::Index),
    ("N225", 39000.0, 0.2, AssetClass::Index),
    ("HSI", 20000.0, 0.25, AssetClass::Index),
    ("SSE", 3300.0, 0.2, AssetClass::Index),
    ("CSI300", 3900.0, 0.2, AssetClass::Index),
    ("AAPL", 230.0, 0.25, AssetClass::Equity),
    ("MSFT", 420.0, 0.24, AssetClass::Equity),
    ("NVDA", 135.0, 0.5, AssetClass::Equity),
    ("AMZN", 210.0, 0.3, AssetClass::Equity),
    ("GOOGL", 185.0, 0.28, AssetClass::Equity),
    ("META", 600.0, 0.35, AssetClass::Equity),
    ("TSLA", 380.0, 0.6, AssetClass::Equity),
    ("JPM", 240.0, 0.22, AssetClass::Equity),
    ("XOM", 110.0, 0.24, AssetClass::Equity),
    ("BRK.B", 460.0, 0.16, AssetClass::Equity),
    ("GLD", 245.0, 0.15, AssetClass::Equity),
    ("TLT", 90.0, 0.16, AssetClass::Equity),
];

/// Looks up (or derives from the name's hash) the profile of a symbol.
pub fn profile(symbol: &str) -> SymbolProfile {
    let sym = norm_symbol(symbol);
    let (price, vol, class) = KNOWN
        .iter()
        .find(|(s, ..)| *s == sym)
        .map(|(_, p, v, c)| (*p, *v, *c))
        .unwrap_or_else(|| guess(&sym));
    let daily_volume = match class {
        AssetClass::Crypto => 2.5e9 / price,
        AssetClass::Equity => 4.0e9 / price.max(1.0),
        AssetClass::Index => 2.0e9 / price.max(1.0) * 10.0,
        AssetClass::Fx => 1.5e5,
        AssetClass::Commodity => 2.0e8 / price.max(0.1),
    };
    SymbolProfile { symbol: sym, price, vol, class, daily_volume }
}

const CCY: &[&str] = &[
    "USD", "EUR", "JPY", "GBP", "CNY", "CNH", "AUD", "CAD", "CHF", "NZD", "HKD", "SGD", "SEK",
    "NOK", "MXN", "INR", "KRW", "BRL", "ZAR", "TRY",
];

/// Symbols with a profile of their own (the demo's fixed universe, besides FX pairs).
pub fn known_symbols() -> impl Iterator<Item = &'static str> {
    KNOWN.iter().map(|(s, ..)| *s)
}

/// Whether `sym` (normalised) is a pair of two currencies the demo knows (`EURJPY`).
pub fn is_fx_pair(sym: &str) -> bool {
    sym.len() == 6 && sym.is_ascii() && CCY.contains(&&sym[..3]) && CCY.contains(&&sym[3..])
}

fn guess(sym: &str) -> (f64, f64, AssetClass) {
    let u = unit(sym);
    let crypto_quote =
        ["USDT", "USDC", "BUSD"].iter().any(|q| sym.ends_with(q) && sym.len() > q.len());
    if crypto_quote {
        // Small caps: $0.05 .. $50, very volatile.
        return (0.05 * 1000f64.powf(u), 0.8 + 0.6 * u, AssetClass::Crypto);
    }
    if sym.len() == 6 && CCY.contains(&&sym[..3]) && CCY.contains(&&sym[3..]) {
        let rate = |c: &str| -> f64 {
            // Units of currency per USD.
            match c {
                "USD" => 1.0,
                "EUR" => 0.925,
                "JPY" => 152.0,
                "GBP" => 0.787,
                "CNY" => 7.24,
                "CNH" => 7.26,
                "AUD" => 1.54,
                "CAD" => 1.39,
                "CHF" => 0.88,
                "NZD" => 1.69,
                "HKD" => 7.78,
                "SGD" => 1.35,
                "SEK" => 10.9,
                "NOK" => 11.1,
                "MXN" => 20.3,
                "INR" => 84.5,
                "KRW" => 1400.0,
                "BRL" => 5.9,
                "ZAR" => 18.2,
                _ => 34.0,
            }
        };
        return (rate(&sym[3..]) / rate(&sym[..3]), 0.08 + 0.06 * u, AssetClass::Fx);
    }
    // Unknown tickers: equities between $8 and $600.
    (8.0 * 75f64.powf(u), 0.2 + 0.4 * unit(&format!("{sym}/vol")), AssetClass::Equity)
}

/// Trading periods per year for a class (used to scale annual volatility).
pub fn periods_per_year(class: AssetClass, step: i64) -> f64 {
    let days = if class == AssetClass::Crypto { 365.0 } else { 252.0 };
    let per_day = (DAY as f64 / step as f64).max(1.0 / 7.0);
    if step >= 7 * DAY { 52.0 } else { days * per_day }
}

/// Picks one element of a non-empty slice.
pub fn pick<'a, T>(rng: &mut Rng8, items: &'a [T]) -> &'a T {
    &items[rng.random_range(0..items.len())]
}

/// Builds a JSON object from `(key, value)` pairs, keeping their order.
pub fn obj<const N: usize>(pairs: [(&str, Value); N]) -> Value {
    let mut m = Map::with_capacity(N);
    for (k, v) in pairs {
        m.insert(k.to_owned(), v);
    }
    Value::Object(m)
}

/// `f64` to JSON (non-finite numbers become 0 so output is always valid JSON).
pub fn num(x: f64) -> Value {
    serde_json::Number::from_f64(if x.is_finite() { x } else { 0.0 })
        .map_or(Value::from(0), Value::Number)
}

/// Rounded `f64` to JSON.
pub fn numr(x: f64, d: i32) -> Value {
    num(round(x, d))
}

/// Rows sorted by `time` with same-instant events spaced one second apart, so event lists keep
/// the strictly-ascending `time` convention that chart libraries require.
pub fn ascending_events(mut rows: Vec<(i64, Value)>) -> Value {
    rows.sort_by_key(|r| r.0);
    let mut last = i64::MIN;
    Value::Array(
        rows.into_iter()
            .map(|(t, mut v)| {
                let t = if t <= last { last + 1 } else { t };
                last = t;
                if let Value::Object(m) = &mut v {
                    m.insert("time".into(), Value::from(t));
                }
                v
            })
            .collect(),
    )
}

/// Adds calendar months to a UTC timestamp's date (day of month clamped), at 00:00 UTC.
pub fn add_months(t: i64, months: i32) -> i64 {
    let Some(d) = DateTime::from_timestamp(t, 0) else { return t };
    let total = d.year() * 12 + d.month0() as i32 + months;
    let (y, m) = (total.div_euclid(12), total.rem_euclid(12) as u32 + 1);
    let day = d.day().min(28);
    chrono::NaiveDate::from_ymd_opt(y, m, day)
        .and_then(|x| x.and_hms_opt(0, 0, 0))
        .map_or(t, |x| x.and_utc().timestamp())
}
