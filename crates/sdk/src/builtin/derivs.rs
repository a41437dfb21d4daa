//! Derivatives and curves: option chains priced with Black-Scholes on a parametric smile
//! (surface, skew, term structure), futures curves, yield curves, policy rates, volatility
//! snapshots, CDS quotes and perpetual funding snapshots.

use rand::Rng;
use serde_json::{Map, Value, json};

use super::GenContext;
use super::series::{bars, named_quotes};
use super::util::*;

fn norm_cdf(x: f64) -> f64 {
    // Abramowitz-Stegun 7.1.26 via erf.
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs() / std::f64::consts::SQRT_2);
    let y = 1.0
        - (((((1.061_405_429 * t - 1.453_152_027) * t) + 1.421_413_741) * t - 0.284_496_736) * t
            + 0.254_829_592)
            * t
            * (-(x * x) / 2.0).exp();
    if x >= 0.0 { 0.5 * (1.0 + y) } else { 0.5 * (1.0 - y) }
}

fn norm_pdf(x: f64) -> f64 {
    (-(x * x) / 2.0).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// Black-Scholes price and greeks: (price, delta, gamma, theta per day, vega per vol point).
fn bs(call: bool, s: f64, k: f64, t: f64, r: f64, v: f64) -> (f64, f64, f64, f64, f64) {
    let t = t.max(1.0 / 365.0);
    let sq = v * t.sqrt();
    let d1 = ((s / k).ln() + (r + v * v / 2.0) * t) / sq;
    let d2 = d1 - sq;
    let disc = (-r * t).exp();
    let gamma = norm_pdf(d1) / (s * sq);
    let vega = s * norm_pdf(d1) * t.sqrt() / 100.0;
    if call {
        let price = s * norm_cdf(d1) - k * disc * norm_cdf(d2);
        let theta =
            (-s * norm_pdf(d1) * v / (2.0 * t.sqrt()) - r * k * disc * norm_cdf(d2)) / 365.0;
        (price, norm_cdf(d1), gamma, theta, vega)
    } else {
        let price = k * disc * norm_cdf(-d2) - s * norm_cdf(-d1);
        let theta =
            (-s * norm_pdf(d1) * v / (2.0 * t.sqrt()) + r * k * disc * norm_cdf(-d2)) / 365.0;
        (price, norm_cdf(d1) - 1.0, gamma, theta, vega)
    }
}

/// Smile parameters of a symbol: (atm vol, skew, curvature, term slope).
struct Smile {
    atm: f64,
    skew: f64,
    curv: f64,
    term: f64,
}

fn smile(symbol: &str, ctx: &GenContext) -> (f64, Smile) {
    let (prof, b) = bars(symbol, DAY, 1, ctx.now);
    let mut rng = rng_anchor(&format!("smile|{}", prof.symbol), ctx.now);
    let atm = prof.vol * (1.0 + 0.1 * gauss(&mut rng));
    let (skew, curv, term) = match prof.class {
        AssetClass::Equity | AssetClass::Index => (-0.35, 0.6, 0.08),
        AssetClass::Crypto => (0.05, 0.9, 0.05),
        AssetClass::Commodity => (0.08, 0.5, 0.04),
        AssetClass::Fx => (-0.05, 0.4, 0.03),
    };
    (b[0].close, Smile { atm, skew: skew * (1.0 + 0.2 * gauss(&mut rng)), curv, term })
}

impl Smile {
    fn iv(&self, spot: f64, strike: f64, t: f64) -> f64 {
        let t = t.max(1.0 / 365.0);
        let m = (strike / spot).ln() / t.sqrt().max(0.15);
        // Short-dated vol is lower in calm regimes (upward sloping term structure).
        let atm_t = self.atm * (1.0 + self.term * (t.sqrt() - 0.5));
        (atm_t * (1.0 + self.skew * m + self.curv * m * m)).clamp(0.03, 3.0)
    }
}

fn strike_step(spot: f64) -> f64 {
    let raw = spot * 0.01;
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(raw)
}

/// Option chain for one expiry: one row per contract (calls and puts).
pub fn chain(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let symbol = p_str(params, "symbol", "SPY");
    let days = p_int(params, "daysToExpiry", 30, 1, 1095);
    let n = p_int(params, "strikes", 15, 1, 101);
    let (spot, sm) = smile(symbol, ctx);
    let t = days as f64 / 365.0;
    let step = strike_step(spot);
    let atm = (spot / step).round() * step;
    let expiry = date_str(ctx.now.timestamp() + days * DAY);
    let mut rng = rng_ctx(ctx.seed);
    let mut rows = Vec::new();
    for i in 0..n {
        let k = atm + (i - n / 2) as f64 * step;
        if k <= 0.0 {
            continue;
        }
        for call in [true, false] {
            let iv = sm.iv(spot, k, t);
            let (price, delta, gamma, theta, vega) = bs(call, spot, k, t, 0.045, iv);
            let half = (price * 0.02).max(0.01);
            let moneyness = ((k / spot).ln()).abs();
            let oi = (20_000.0 * (-moneyness * 12.0).exp() * (0.5 * gauss(&mut rng)).exp()).round();
            let dec = if spot > 10.0 { 2 } else { 4 };
            rows.push(obj([
                ("expiry", json!(expiry)),
                ("strike", numr(k, dec)),
                ("type", json!(if call { "call" } else { "put" })),
                ("bid", numr((price - half).max(0.0), dec)),
                ("ask", numr(price + half, dec)),
                ("last", numr(price, dec)),
                ("volume", num((oi * 0.2 * rng.random::<f64>()).round())),
                ("openInterest", num(oi)),
                ("iv", numr(iv, 4)),
                ("delta", numr(delta, 4)),
                ("gamma", numr(gamma, 6)),
                ("theta", numr(theta, 4)),
                ("vega", numr(vega, 4)),
            ]));
        }
    }
    Value::Array(rows)
}

const TENORS_DAYS: &[i64] = &[7, 14, 30, 60, 90, 180, 270, 365];

/// Implied-volatility surface: `matrix[i][j]` = IV at `daysToExpiry[i]` and `moneyness[j]`.
pub fn surface(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let symbol = p_str(params, "symbol", "SPY");
    let (spot, sm) = smile(symbol, ctx);
    let mny: Vec<f64> = (0..9).map(|i| 0.8 + 0.05 * i as f64).collect();
    let matrix: Vec<Value> = TENORS_DAYS
        .iter()
        .map(|&d| {
            Value::Array(
                mny.iter().map(|m| numr(sm.iv(spot, spot * m, d as f64 / 365.0), 4)).collect(),
            )
        })
        .collect();
    obj([
        ("symbol", json!(norm_symbol(symbol))),
        ("spot", num(spot)),
        ("daysToExpiry", json!(TENORS_DAYS)),
        ("moneyness", json!(mny.iter().map(|m| round(*m, 2)).collect::<Vec<_>>())),
        ("matrix", Value::Array(matrix)),
    ])
}

/// Volatility smile for one expiry.
pub fn skew(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let symbol = p_str(params, "symbol", "SPY");
    let days = p_int(params, "daysToExpiry", 30, 1, 1095);
    let (spot, sm) = smile(symbol, ctx);
    let t = days as f64 / 365.0;
    Value::Array(
        (0..17)
            .map(|i| {
                let m = 0.8 + 0.025 * i as f64;
                let k = spot * m;
                let iv = sm.iv(spot, k, t);
                let (_, delta, ..) = bs(true, spot, k, t, 0.045, iv);
                obj([
                    ("moneyness", numr(m, 3)),
                    ("strike", numr(k, price_decimals(k))),
                    ("iv", numr(iv, 4)),
                    ("callDelta", numr(delta, 3)),
                ])
            })
            .collect(),
    )
}

/// At-the-money IV by expiry.
pub fn term_structure(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let symbol = p_str(params, "symbol", "SPY");
    let (spot, sm) = smile(symbol, ctx);
    Value::Array(
        TENORS_DAYS
            .iter()
            .map(|&d| {
                obj([
                    ("expiry", json!(date_str(ctx.now.timestamp() + d * DAY))),
                    ("daysToExpiry", json!(d)),
                    ("atmIv", numr(sm.iv(spot, spot, d as f64 / 365.0), 4)),
                ])
            })
            .collect(),
    )
}

/// Large or unusual option trades today (newest last).
pub fn unusual(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let n = p_int(params, "limit", 25, 1, 200) as usize;
    let universe =
        ["SPY", "QQQ", "AAPL", "NVDA", "TSLA", "AMZN", "META", "MSFT", "IWM", "AMD", "GLD", "TLT"];
    let mut rng = rng_ctx(ctx.seed);
    let mut t = ctx.now.timestamp();
    let mut rows = Vec::with_capacity(n);
    for _ in 0..n {
        let sym = *pick(&mut rng, &universe);
        let (spot, sm) = smile(sym, ctx);
        let call = rng.random::<f64>() < 0.55;
        let days = *pick(&mut rng, &[7i64, 14, 30, 45, 60, 90]);
        let step = strike_step(spot);
        let k = ((spot * (1.0 + 0.05 * gauss(&mut rng))) / step).round() * step;
        let iv = sm.iv(spot, k, days as f64 / 365.0);
        let (price, ..) = bs(call, spot, k, days as f64 / 365.0, 0.045, iv);
        let size = (500.0 * (1.0 * gauss(&mut rng)).exp()).round() + 100.0;
        let oi = (size * (0.2 + 2.0 * rng.random::<f64>())).round();
        let side = if rng.random::<bool>() { "ask" } else { "bid" };
        let bullish = call == (side == "ask");
        rows.push(obj([
            ("time", json!(t)),
            ("symbol", json!(sym)),
            ("type", json!(if call { "call" } else { "put" })),
            ("strike", numr(k, 2)),
            ("expiry", json!(date_str(ctx.now.timestamp() + days * DAY))),
            ("size", num(size)),
            ("openInterest", num(oi)),
            ("premium", numr(price * size * 100.0, 0)),
            ("side", json!(side)),
            ("sentiment", json!(if bullish { "bullish" } else { "bearish" })),
        ]));
        t -= rng.random_range(20..900);
    }
    rows.reverse();
    Value::Array(rows)
}

/// Futures term structure: one row per listed contract month.
pub fn futures_curve(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let sym = norm_symbol(p_str(params, "symbol", "WTI"));
    let n = p_int(params, "contracts", 12, 1, 36);
    let (carry, under) = match sym.as_str() {
        "WTI" | "CL" => (-0.06, "WTI"),
        "BRENT" => (-0.05, "BRENT"),
        "NATGAS" | "NG" => (0.18, "NATGAS"),
        "GOLD" | "GC" | "XAUUSD" => (0.045, "XAUUSD"),
        "SILVER" | "SI" | "XAGUSD" => (0.05, "XAGUSD"),
        "BTC" | "BTCUSDT" => (0.09, "BTCUSDT"),
        "ETH" | "ETHUSDT" => (0.1, "ETHUSDT"),
        "VIX" => (0.35, "VIX"),
        "ES" | "SPX" => (0.012, "SPX"),
        "COPPER" | "HG" => (0.02, "COPPER"),
        "CORN" => (0.06, "CORN"),
        "WHEAT" => (0.07, "WHEAT"),
        other => (0.03 * (unit(other) - 0.3), other),
    };
    let (prof, b) = bars(under, DAY, 1, ctx.now);
    let spot = b[0].close;
    let mut rng = rng_ctx(ctx.seed);
    let codes = ["F", "G", "H", "J", "K", "M", "N", "Q", "U", "V", "X", "Z"];
    let now = ctx.now.timestamp();
    let dec = price_decimals(spot);
    let month_start = period_grid(ctx.now, 1, 1)[0];
    let first_of_this_month = add_months(month_start, 1);
    let mut rows = Vec::with_capacity(n as usize);
    let mut k = 1;
    while rows.len() < n as usize {
        // Contract for delivery month `k` months ahead expires around the 19th of the prior month.
        let delivery = add_months(first_of_this_month, k);
        k += 1;
        let expiry = delivery - 12 * DAY;
        if expiry <= now {
            continue;
        }
        let days = (expiry - now + DAY - 1) / DAY;
        let t = days as f64 / 365.0;
        // VIX futures saturate: concave contango toward a long-run level.
        let price = if sym == "VIX" {
            spot + (19.5 - spot) * (1.0 - (-t * 3.0).exp())
        } else {
            spot * (carry * t + 0.0005 * gauss(&mut rng)).exp()
        };
        let date = date_str(delivery);
        let month: usize = date.get(5..7).and_then(|m| m.parse().ok()).unwrap_or(1);
        let code =
            format!("{}{}{}", prof.symbol, codes[(month + 11) % 12], date.get(3..4).unwrap_or("5"));
        let i = rows.len() as f64 + 1.0;
        let oi = (300_000.0 * (-i * 0.35).exp() * (0.2 * gauss(&mut rng)).exp()).round();
        rows.push(obj([
            ("contract", json!(code)),
            ("expiry", json!(date_str(expiry))),
            ("daysToExpiry", json!(days)),
            ("price", numr(price, dec)),
            ("basis", numr(price - spot, dec)),
            ("annualizedBasisPct", numr(((price / spot).ln() / t) * 100.0, 2)),
            ("openInterest", num(oi)),
            ("volume", numr(oi * 0.3 * rng.random::<f64>(), 0)),
        ]));
    }
    Value::Array(rows)
}

/// Listed futures contract specifications.
pub fn futures_contracts() -> Value {
    let rows: &[(&str, &str, &str, &str, &str, f64)] = &[
        ("CL", "WTI Crude Oil", "NYMEX", "1,000 barrels", "USD", 0.01),
        ("BZ", "Brent Crude Oil", "ICE", "1,000 barrels", "USD", 0.01),
        ("NG", "Henry Hub Natural Gas", "NYMEX", "10,000 MMBtu", "USD", 0.001),
        ("GC", "Gold", "COMEX", "100 troy ounces", "USD", 0.1),
        ("SI", "Silver", "COMEX", "5,000 troy ounces", "USD", 0.005),
        ("HG", "Copper", "COMEX", "25,000 pounds", "USD", 0.0005),
        ("ES", "E-mini S&P 500", "CME", "$50 x index", "USD", 0.25),
        ("NQ", "E-mini Nasdaq-100", "CME", "$20 x index", "USD", 0.25),
        ("ZN", "10-Year T-Note", "CBOT", "$100,000 face", "USD", 0.015625),
        ("ZC", "Corn", "CBOT", "5,000 bushels", "USD", 0.25),
        ("ZW", "Wheat", "CBOT", "5,000 bushels", "USD", 0.25),
        ("BTC", "Bitcoin", "CME", "5 bitcoin", "USD", 5.0),
        ("VX", "Cboe VIX", "CFE", "$1,000 x index", "USD", 0.05),
        ("SC", "INE Crude Oil (上海原油)", "INE", "1,000 barrels", "CNY", 0.1),
    ];
    Value::Array(
        rows.iter()
            .map(|(s, n, e, size, c, tick)| {
                obj([
                    ("symbol", json!(s)),
                    ("name", json!(n)),
                    ("exchange", json!(e)),
                    ("contractSize", json!(size)),
                    ("currency", json!(c)),
                    ("tickSize", num(*tick)),
                ])
            })
            .collect(),
    )
}

const CURVE: &[(&str, f64)] = &[
    ("1M", 1.0 / 12.0),
    ("3M", 0.25),
    ("6M", 0.5),
    ("1Y", 1.0),
    ("2Y", 2.0),
    ("3Y", 3.0),
    ("5Y", 5.0),
    ("7Y", 7.0),
    ("10Y", 10.0),
    ("20Y", 20.0),
    ("30Y", 30.0),
];

fn curve_params(country: &str) -> (f64, f64, f64) {
    // (short rate, long rate, hump)
    match country {
        "US" => (4.35, 4.55, -0.35),
        "DE" | "EU" | "EA" => (2.9, 2.5, -0.4),
        "JP" => (0.25, 2.2, 0.0),
        "UK" | "GB" => (4.7, 4.8, -0.4),
        "CN" => (1.4, 1.9, 0.0),
        other => (2.0 + 4.0 * unit(other), 3.0 + 3.0 * unit(&format!("{other}L")), -0.2),
    }
}

fn curve_yield(c: (f64, f64, f64), years: f64, shift: f64) -> f64 {
    let (s, l, h) = c;
    let w = 1.0 - (-years / 3.0).exp();
    s + (l - s) * w + h * (years / 2.0) * (-years / 2.0).exp() + shift
}

/// Government bond yield curve today with 1-day and 1-month changes (bp).
pub fn yield_curve(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let country = p_str(params, "country", "US").to_uppercase();
    let c = curve_params(&country);
    let mut rng = rng_anchor(&format!("curve|{country}"), ctx.now);
    let shift = 0.15 * gauss(&mut rng);
    let d1 = 0.05 * gauss(&mut rng);
    let d30 = 0.2 * gauss(&mut rng);
    Value::Array(
        CURVE
            .iter()
            .map(|(tenor, y)| {
                let now_y = curve_yield(c, *y, shift);
                let tilt = 1.0 + 0.2 * (y.ln() / 3.0);
                obj([
                    ("tenor", json!(tenor)),
                    ("years", numr(*y, 3)),
                    ("yield", numr(now_y, 3)),
                    ("change1dBps", numr(d1 * 100.0 * tilt, 1)),
                    ("change1mBps", numr(d30 * 100.0 * tilt, 1)),
                ])
            })
            .collect(),
    )
}

/// Policy rates of major central banks.
pub fn policy_rates(ctx: &GenContext) -> Value {
    let banks: &[(&str, &str, &str, f64, i64)] = &[
        ("Federal Reserve", "FED", "US", 4.375, -25),
        ("European Central Bank", "ECB", "EA", 3.0, -25),
        ("Bank of England", "BOE", "GB", 4.75, -25),
        ("Bank of Japan", "BOJ", "JP", 0.5, 25),
        ("People's Bank of China (1Y LPR)", "PBOC", "CN", 3.1, -25),
        ("Swiss National Bank", "SNB", "CH", 0.5, -50),
        ("Bank of Canada", "BOC", "CA", 3.25, -50),
        ("Reserve Bank of Australia", "RBA", "AU", 4.35, 25),
        ("Reserve Bank of India", "RBI", "IN", 6.5, -25),
        ("Central Bank of Brazil", "BCB", "BR", 12.25, 100),
    ];
    let mut rng = rng_anchor("policy", ctx.now);
    let now = ctx.now.timestamp();
    Value::Array(
        banks
            .iter()
            .map(|(name, code, country, rate, mv)| {
                let ago = rng.random_range(20..200) * DAY;
                obj([
                    ("name", json!(name)),
                    ("bank", json!(code)),
                    ("country", json!(country)),
                    ("rate", num(*rate)),
                    ("lastMoveBps", json!(mv)),
                    ("lastChangeDate", json!(date_str(now - ago))),
                    ("nextMeetingDate", json!(date_str(now + rng.random_range(5..50) * DAY))),
                ])
            })
            .collect(),
    )
}

/// Market-implied probabilities for upcoming policy meetings (FedWatch-style).
pub fn rate_probabilities(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let bank = p_str(params, "bank", "FED").to_uppercase();
    let start = match bank.as_str() {
        "ECB" => 3.0,
        "BOE" => 4.75,
        "BOJ" => 0.5,
        _ => 4.375,
    };
    let mut rng = rng_anchor(&format!("fedwatch|{bank}"), ctx.now);
    let now = ctx.now.timestamp();
    let mut implied = start;
    let first = rng.random_range(7..40);
    Value::Array(
        (0..8)
            .map(|i| {
                let cut = (0.15 + 0.15 * i as f64 + 0.1 * gauss(&mut rng)).clamp(0.02, 0.9);
                let hike = (0.04 * rng.random::<f64>()).min(1.0 - cut);
                implied += -0.25 * cut + 0.25 * hike;
                let hold = 1.0 - cut - hike;
                obj([
                    ("meetingDate", json!(date_str(now + (first + 45 * i) * DAY))),
                    ("cutProb", numr(cut, 3)),
                    ("holdProb", numr(hold, 3)),
                    ("hikeProb", numr(hike, 3)),
                    ("impliedRate", numr(implied, 3)),
                ])
            })
            .collect(),
    )
}

/// Volatility index snapshot (VIX family, MOVE, OVX, GVZ, BVIV).
pub fn vol_indices(ctx: &GenContext) -> Value {
    named_quotes(
        &[
            ("VIX", "Cboe S&P 500 Volatility Index"),
            ("VVIX", "Cboe VIX of VIX"),
            ("VXN", "Cboe Nasdaq-100 Volatility Index"),
            ("MOVE", "ICE BofA MOVE (Treasury volatility)"),
            ("OVX", "Cboe Crude Oil Volatility Index"),
            ("GVZ", "Cboe Gold Volatility Index"),
            ("EVZ", "Cboe EuroCurrency Volatility Index"),
            ("BVIV", "Bitcoin Implied Volatility Index"),
        ],
        ctx,
    )
}

/// VIX futures-style term structure (spot plus monthly tenors).
pub fn vix_term(ctx: &GenContext) -> Value {
    let (_, b) = bars("VIX", DAY, 1, ctx.now);
    let spot = b[0].close;
    Value::Array(
        [0i64, 30, 60, 90, 120, 150, 180, 210]
            .iter()
            .map(|&d| {
                let t = d as f64 / 365.0;
                let v = spot + (19.5 - spot) * (1.0 - (-t * 3.0).exp());
                obj([
                    (
                        "tenor",
                        json!(if d == 0 { "spot".to_owned() } else { format!("M{}", d / 30) }),
                    ),
                    ("daysToExpiry", json!(d)),
                    ("value", numr(v, 2)),
                ])
            })
            .collect(),
    )
}

/// FX implied volatility by tenor: ATM, 25-delta risk reversal and butterfly.
pub fn fx_vol(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let pair = norm_symbol(p_str(params, "pair", "EURUSD"));
    let prof = profile(&pair);
    let mut rng = rng_anchor(&format!("fxvol|{pair}"), ctx.now);
    let atm = prof.vol * 100.0 * (1.0 + 0.1 * gauss(&mut rng));
    let rr = if pair.starts_with("USDJPY") { 1.0 } else { -0.4 } * (1.0 + 0.3 * gauss(&mut rng));
    Value::Array(
        [("1W", 7), ("1M", 30), ("2M", 60), ("3M", 90), ("6M", 180), ("1Y", 365)]
            .iter()
            .map(|(tenor, d)| {
                let t = *d as f64 / 365.0;
                obj([
                    ("tenor", json!(tenor)),
                    ("daysToExpiry", json!(d)),
                    ("atmVol", numr(atm * (1.0 + 0.06 * t.sqrt()), 2)),
                    ("riskReversal25d", numr(rr * (0.6 + 0.4 * t.sqrt()), 2)),
                    ("butterfly25d", numr(0.2 + 0.15 * t.sqrt(), 2)),
                ])
            })
            .collect(),
    )
}

/// 5-year CDS spreads for sovereigns and large corporates.
pub fn cds(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let kind = p_str(params, "type", "all").to_lowercase();
    let names: &[(&str, &str, &str, f64)] = &[
        ("United States", "sovereign", "AA+", 42.0),
        ("Germany", "sovereign", "AAA", 12.0),
        ("United Kingdom", "sovereign", "AA", 22.0),
        ("Japan", "sovereign", "A+", 20.0),
        ("China", "sovereign", "A+", 65.0),
        ("Italy", "sovereign", "BBB", 80.0),
        ("Brazil", "sovereign", "BB", 190.0),
        ("Turkey", "sovereign", "B+", 270.0),
        ("Apple Inc.", "corporate", "AA+", 30.0),
        ("JPMorgan Chase", "corporate", "A-", 55.0),
        ("Ford Motor", "corporate", "BBB-", 190.0),
        ("Boeing Co.", "corporate", "BBB-", 140.0),
        ("Tesla Inc.", "corporate", "BBB", 110.0),
        ("Carnival Corp.", "corporate", "BB", 260.0),
    ];
    let mut rng = rng_anchor("cds", ctx.now);
    Value::Array(
        names
            .iter()
            .filter(|(_, t, ..)| kind == "all" || *t == kind)
            .map(|(n, t, r, s)| {
                let spread = s * (0.15 * gauss(&mut rng)).exp();
                obj([
                    ("name", json!(n)),
                    ("type", json!(t)),
                    ("rating", json!(r)),
                    ("tenor", json!("5Y")),
                    ("spreadBps", numr(spread, 1)),
                    ("change1dBps", numr(spread * 0.03 * gauss(&mut rng), 1)),
                ])
            })
            .collect(),
    )
}

/// Current perpetual funding rates across exchanges for one symbol.
pub fn funding_snapshot(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let sym = norm_symbol(p_str(params, "symbol", "BTCUSDT"));
    let (prof, b) = bars(&sym, DAY, 1, ctx.now);
    let mut rng = rng_ctx(ctx.seed);
    let base = 0.008 + 0.006 * gauss(&mut rng);
    Value::Array(
        ["Binance", "OKX", "Bybit", "Bitget", "Deribit", "Hyperliquid"]
            .iter()
            .map(|ex| {
                let f = base + 0.003 * gauss(&mut rng);
                obj([
                    ("exchange", json!(ex)),
                    ("symbol", json!(prof.symbol)),
                    ("fundingRatePct", numr(f, 4)),
                    ("annualizedPct", numr(f * 3.0 * 365.0, 2)),
                    ("markPrice", num(b[0].close)),
                    (
                        "openInterest",
                        numr(prof.daily_volume * b[0].close * (0.1 + 0.2 * rng.random::<f64>()), 0),
                    ),
                ])
            })
            .collect(),
    )
}
