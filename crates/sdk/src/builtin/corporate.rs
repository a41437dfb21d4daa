//! Company data: financial statements built from one consistent per-company model (assets =
//! liabilities + equity, margins applied to revenue, FCF = OCF + capex), key metrics, estimates,
//! analyst ratings, ownership, dividends, profiles and IPOs.

use chrono::DateTime;
use rand::Rng;
use serde_json::{Map, Value, json};

use super::GenContext;
use super::series::{STOCKS, bars, day_change};
use super::stable;
use super::util::*;

/// The stable economics of a company.
#[derive(Debug, Clone)]
pub struct Company {
    /// Ticker.
    pub symbol: String,
    /// Company name.
    pub name: String,
    /// GICS sector.
    pub sector: String,
    /// Latest price.
    pub price: f64,
    /// Shares outstanding.
    pub shares: f64,
    /// Trailing annual revenue, USD.
    pub revenue: f64,
    /// Gross margin (0..1).
    pub gross: f64,
    /// Operating margin (0..1).
    pub op: f64,
    /// Annual revenue growth.
    pub growth: f64,
    /// Dividend payout ratio.
    pub payout: f64,
}

/// Large caps that pay no dividend.
const NON_PAYERS: &[&str] = &["AMZN", "TSLA", "NFLX", "AMD", "BA"];

/// The demo close of `symbol` on the day of `t` (UTC seconds).
fn price_on(symbol: &str, t: i64, ctx: &GenContext) -> f64 {
    let at = DateTime::from_timestamp(t, 0).unwrap_or(ctx.now);
    bars(symbol, DAY, 1, at).1[0].close
}

/// The company model for a ticker (known large caps, or derived from the ticker's hash).
pub fn company(symbol: &str, ctx: &GenContext) -> Company {
    let sym = norm_symbol(symbol);
    let known = STOCKS.iter().find(|(s, ..)| *s == sym);
    let u = |k: &str| unit(&format!("{sym}|{k}"));
    let (name, sector, mcap_bn) = match known {
        Some((_, n, s, m)) => ((*n).to_owned(), (*s).to_owned(), *m),
        None => (
            format!("{} Holdings Inc.", sym),
            super::series::SECTORS[(u("sector") * 11.0) as usize % 11].0.to_owned(),
            2.0 * 500f64.powf(u("mcap")),
        ),
    };
    let (_, b) = bars(&sym, DAY, 1, ctx.now);
    let price = b[0].close;
    // Share count from a fixed day's price, so per-share history does not move with the price.
    let fixed = DateTime::from_timestamp(1_735_776_000, 0).unwrap_or_default();
    let (_, b2025) = bars(&sym, DAY, 1, fixed);
    let shares = mcap_bn * 1e9 / b2025[0].close;
    let (gross, op, ps) = match sector.as_str() {
        "Technology" => (0.55 + 0.2 * u("g"), 0.25 + 0.15 * u("o"), 8.0 + 10.0 * u("ps")),
        "Communication Services" => {
            (0.55 + 0.2 * u("g"), 0.22 + 0.15 * u("o"), 4.0 + 6.0 * u("ps"))
        }
        "Energy" => (0.3 + 0.1 * u("g"), 0.12 + 0.08 * u("o"), 1.0 + 1.0 * u("ps")),
        "Consumer Staples" => (0.3 + 0.2 * u("g"), 0.08 + 0.1 * u("o"), 1.0 + 3.0 * u("ps")),
        "Financials" => (0.6 + 0.2 * u("g"), 0.3 + 0.15 * u("o"), 3.0 + 8.0 * u("ps")),
        "Health Care" => (0.5 + 0.3 * u("g"), 0.1 + 0.2 * u("o"), 2.0 + 10.0 * u("ps")),
        _ => (0.3 + 0.25 * u("g"), 0.1 + 0.12 * u("o"), 1.5 + 4.0 * u("ps")),
    };
    Company {
        symbol: sym.clone(),
        name,
        sector,
        price,
        shares,
        revenue: mcap_bn * 1e9 / ps,
        gross,
        op: op.min(gross - 0.05),
        growth: -0.02 + 0.25 * u("growth"),
        payout: if NON_PAYERS.contains(&sym.as_str()) || (known.is_none() && u("div") < 0.3) {
            0.0
        } else {
            0.1 + 0.5 * u("payout")
        },
    }
}

/// One fiscal period of statements.
#[derive(Debug, Clone)]
struct Period {
    time: i64,
    label: String,
    revenue: f64,
    cogs: f64,
    opex: f64,
    interest: f64,
    tax: f64,
    net: f64,
    shares: f64,
    da: f64,
    /// Period index (months since 1970 over the period's length): seeds its draws.
    k: i64,
}

fn periods(co: &Company, params: &Map<String, Value>, ctx: &GenContext) -> Vec<Period> {
    let quarterly = p_str(params, "period", "annual") == "quarter";
    let n = p_int(params, "limit", if quarterly { 8 } else { 5 }, 1, 40) as usize;
    let months = if quarterly { 3 } else { 12 };
    let times = period_grid(ctx.now, months, n);
    // Every figure is a function of (company, period): a past quarter never changes. Revenue
    // grows at the company's rate through its typical level at the start of 2025.
    let seed = hash(&format!("fin|{}|{months}", co.symbol));
    let per = i64::from(months);
    let ks: Vec<i64> = times.iter().map(|&t| month_index(t) / per).collect();
    let k_ref = (2025 - 1970) * 12 / per;
    let scale = if quarterly { 0.25 } else { 1.0 };
    let g = if quarterly { (1.0 + co.growth).powf(0.25) } else { 1.0 + co.growth };
    let wiggle = stable::ar_path(seed, 0.8, &ks);
    times
        .iter()
        .zip(&ks)
        .zip(wiggle)
        .map(|((&t, &k), z)| {
            let draw = |j: i64| stable::normal_at(seed, k * 8 + j);
            let revenue = co.revenue * scale * g.powf((k - k_ref) as f64) * (0.03 * z).exp();
            let d = date_str(t);
            let year = d.get(0..4).unwrap_or("2024");
            let label = if quarterly {
                let m: u32 = d.get(5..7).and_then(|m| m.parse().ok()).unwrap_or(1);
                format!("{year}-Q{}", (m - 1) / 3 + 1)
            } else {
                format!("FY{year}")
            };
            let gross = (co.gross + 0.015 * draw(1)).clamp(0.05, 0.95);
            let op = (co.op + 0.015 * draw(2)).clamp(-0.2, gross - 0.02);
            let revenue = revenue.round();
            let cogs = (revenue * (1.0 - gross)).round();
            let opex = (revenue * (gross - op)).round();
            let interest = (revenue * 0.01).round();
            let pretax = revenue - cogs - opex - interest;
            let tax = (pretax.max(0.0) * 0.18).round();
            Period {
                time: t,
                label,
                revenue,
                cogs,
                opex,
                interest,
                tax,
                net: pretax - tax,
                shares: (co.shares * (1.0 + 0.005 * draw(3))).round(),
                da: (revenue * 0.04).round(),
                k,
            }
        })
        .collect()
}

/// Income statements, oldest first.
pub fn income(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let co = company(p_str(params, "symbol", "AAPL"), ctx);
    Value::Array(
        periods(&co, params, ctx)
            .iter()
            .map(|p| {
                let gp = p.revenue - p.cogs;
                let oi = gp - p.opex;
                obj([
                    ("time", json!(p.time)),
                    ("fiscalPeriod", json!(p.label)),
                    ("revenue", num(p.revenue)),
                    ("costOfRevenue", num(p.cogs)),
                    ("grossProfit", num(gp)),
                    ("operatingExpenses", num(p.opex)),
                    ("operatingIncome", num(oi)),
                    ("ebitda", num(oi + p.da)),
                    ("interestExpense", num(p.interest)),
                    ("pretaxIncome", num(oi - p.interest)),
                    ("incomeTax", num(p.tax)),
                    ("netIncome", num(p.net)),
                    ("eps", numr(p.net / p.shares, 2)),
                    ("dilutedShares", num(p.shares)),
                ])
            })
            .collect(),
    )
}

/// Balance sheets, oldest first (totalAssets = totalLiabilities + totalEquity exactly).
pub fn balance(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let co = company(p_str(params, "symbol", "AAPL"), ctx);
    let annualize = if p_str(params, "period", "annual") == "quarter" { 4.0 } else { 1.0 };
    let seed = hash(&format!("bs|{}", co.symbol));
    let lev = 0.4 + 0.4 * unit(&format!("{}|lev", co.symbol));
    Value::Array(
        periods(&co, params, ctx)
            .iter()
            .map(|p| {
                let rev = p.revenue * annualize;
                let draw = |j: i64| stable::normal_at(seed, p.k * 8 + j);
                let assets = (rev * (1.0 + 0.15 * draw(1).abs() + 0.6)).round();
                let cash = (assets * (0.08 + 0.04 * draw(2).abs())).round();
                let receivables = (rev * 0.12).round();
                let inventory = (rev * 0.05).round();
                let current = cash + receivables + inventory + (assets * 0.05).round();
                let liabilities = (assets * lev).round();
                let cur_liab = (liabilities * 0.4).round();
                let debt = (liabilities * 0.45).round();
                obj([
                    ("time", json!(p.time)),
                    ("fiscalPeriod", json!(p.label)),
                    ("totalAssets", num(assets)),
                    ("currentAssets", num(current)),
                    ("cashAndEquivalents", num(cash)),
                    ("receivables", num(receivables)),
                    ("inventory", num(inventory)),
                    ("nonCurrentAssets", num(assets - current)),
                    ("totalLiabilities", num(liabilities)),
                    ("currentLiabilities", num(cur_liab)),
                    ("longTermDebt", num(debt)),
                    ("totalEquity", num(assets - liabilities)),
                    ("sharesOutstanding", num(p.shares)),
                ])
            })
            .collect(),
    )
}

/// Cash-flow statements, oldest first (freeCashFlow = operatingCashFlow + capitalExpenditure).
pub fn cashflow(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let co = company(p_str(params, "symbol", "AAPL"), ctx);
    let seed = hash(&format!("cf|{}", co.symbol));
    Value::Array(
        periods(&co, params, ctx)
            .iter()
            .map(|p| {
                let ocf = (p.net + p.da + p.revenue * 0.02 * stable::normal_at(seed, p.k)).round();
                let capex = -(p.revenue * (0.03 + 0.03 * unit(&co.symbol))).round();
                let fcf = ocf + capex;
                let div = -(p.net.max(0.0) * co.payout).round();
                let buyback = -(fcf.max(0.0) * 0.4 * unit(&format!("{}|bb", co.symbol))).round();
                obj([
                    ("time", json!(p.time)),
                    ("fiscalPeriod", json!(p.label)),
                    ("netIncome", num(p.net)),
                    ("depreciation", num(p.da)),
                    ("operatingCashFlow", num(ocf)),
                    ("capitalExpenditure", num(capex)),
                    ("freeCashFlow", num(fcf)),
                    ("dividendsPaid", num(div)),
                    ("shareRepurchases", num(buyback)),
                ])
            })
            .collect(),
    )
}

/// Profitability and valuation ratios by period, derived from the statements.
pub fn ratios(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let co = company(p_str(params, "symbol", "AAPL"), ctx);
    let annualize = if p_str(params, "period", "annual") == "quarter" { 4.0 } else { 1.0 };
    let lev = 0.4 + 0.4 * unit(&format!("{}|lev", co.symbol));
    Value::Array(
        periods(&co, params, ctx)
            .iter()
            .map(|p| {
                let gp = p.revenue - p.cogs;
                let oi = gp - p.opex;
                let assets = p.revenue * annualize * 1.7;
                let equity = assets * (1.0 - lev);
                let eps = p.net * annualize / p.shares;
                obj([
                    ("time", json!(p.time)),
                    ("fiscalPeriod", json!(p.label)),
                    ("grossMargin", numr(gp / p.revenue, 4)),
                    ("operatingMargin", numr(oi / p.revenue, 4)),
                    ("netMargin", numr(p.net / p.revenue, 4)),
                    ("roe", numr(p.net * annualize / equity, 4)),
                    ("roa", numr(p.net * annualize / assets, 4)),
                    ("debtToEquity", numr(lev * 0.45 / (1.0 - lev), 3)),
                    ("currentRatio", numr(1.0 + 0.8 * unit(&co.symbol), 2)),
                    ("peRatio", numr(if eps > 0.0 { co.price / eps } else { 0.0 }, 2)),
                ])
            })
            .collect(),
    )
}

/// Valuation snapshot.
pub fn key_metrics(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let co = company(p_str(params, "symbol", "AAPL"), ctx);
    let (_, b) = bars(&co.symbol, DAY, 252, ctx.now);
    let hi = b.iter().map(|x| x.high).fold(f64::MIN, f64::max);
    let lo = b.iter().map(|x| x.low).fold(f64::MAX, f64::min);
    let mcap = co.price * co.shares;
    let net = co.revenue * (co.op - 0.01) * 0.82;
    let eps = net / co.shares;
    obj([
        ("symbol", json!(co.symbol)),
        ("price", num(co.price)),
        ("marketCap", numr(mcap, 0)),
        ("peRatio", numr(if eps > 0.0 { co.price / eps } else { 0.0 }, 2)),
        ("forwardPe", numr(if eps > 0.0 { co.price / (eps * (1.0 + co.growth)) } else { 0.0 }, 2)),
        ("psRatio", numr(mcap / co.revenue, 2)),
        ("pbRatio", numr(mcap / (co.revenue * 1.7 * 0.4), 2)),
        ("evToEbitda", numr(mcap * 1.05 / (co.revenue * (co.op + 0.04)), 2)),
        ("dividendYieldPct", numr(net * co.payout / mcap * 100.0, 2)),
        ("eps", numr(eps, 2)),
        ("revenueTtm", numr(co.revenue, 0)),
        ("netIncomeTtm", numr(net, 0)),
        ("revenueGrowthPct", numr(co.growth * 100.0, 1)),
        ("sharesOutstanding", numr(co.shares, 0)),
        ("week52High", num(hi)),
        ("week52Low", num(lo)),
        ("beta", numr(profile(&co.symbol).vol / 0.16 * 0.8, 2)),
    ])
}

/// Revenue by business segment (latest fiscal year).
pub fn segments(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let co = company(p_str(params, "symbol", "AAPL"), ctx);
    let names: &[&str] = match co.symbol.as_str() {
        "AAPL" => &["iPhone", "Services", "Mac", "iPad", "Wearables, Home and Accessories"],
        "MSFT" => {
            &["Intelligent Cloud", "Productivity and Business Processes", "More Personal Computing"]
        }
        "NVDA" => &["Data Center", "Gaming", "Professional Visualization", "Automotive"],
        "AMZN" => {
            &["Online Stores", "AWS", "Third-Party Seller Services", "Advertising", "Subscriptions"]
        }
        "TSLA" => &["Automotive", "Energy Generation and Storage", "Services and Other"],
        _ => &["Products", "Services", "International", "Other"],
    };
    let w: Vec<f64> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (1.0 / (i as f64 + 1.0)) * (0.6 + unit(&format!("{}|{n}", co.symbol))))
        .collect();
    let total: f64 = w.iter().sum();
    Value::Array(
        names
            .iter()
            .zip(w)
            .map(|(n, x)| {
                obj([
                    ("name", json!(n)),
                    ("value", numr(co.revenue * x / total, 0)),
                    ("sharePct", numr(x / total * 100.0, 1)),
                ])
            })
            .collect(),
    )
}

/// Consensus EPS and revenue estimates for upcoming fiscal periods.
pub fn estimates(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let co = company(p_str(params, "symbol", "AAPL"), ctx);
    let quarterly = p_str(params, "period", "quarter") == "quarter";
    let mut rng = rng_anchor(&format!("est|{}", co.symbol), ctx.now);
    let last = period_grid(ctx.now, if quarterly { 3 } else { 12 }, 1)[0];
    let months = if quarterly { 3 } else { 12 };
    let scale = if quarterly { 0.25 } else { 1.0 };
    let eps0 = co.revenue * (co.op - 0.01) * 0.82 / co.shares * scale;
    Value::Array(
        (1..=4)
            .map(|i| {
                let g = (1.0 + co.growth).powf(i as f64 * scale);
                let eps = eps0 * g;
                let rev = co.revenue * scale * g;
                let disp = 0.04 + 0.03 * i as f64;
                let end = add_months(last, months * (i + 1)) - DAY;
                let d = date_str(end);
                obj([
                    (
                        "fiscalPeriod",
                        json!(if quarterly {
                            let m: u32 = d.get(5..7).and_then(|m| m.parse().ok()).unwrap_or(1);
                            format!("{}-Q{}", d.get(0..4).unwrap_or(""), (m - 1) / 3 + 1)
                        } else {
                            format!("FY{}", d.get(0..4).unwrap_or(""))
                        }),
                    ),
                    ("periodEnd", json!(d)),
                    ("epsAvg", numr(eps, 2)),
                    ("epsLow", numr(eps * (1.0 - disp), 2)),
                    ("epsHigh", numr(eps * (1.0 + disp), 2)),
                    ("revenueAvg", numr(rev, 0)),
                    ("revenueLow", numr(rev * (1.0 - disp / 2.0), 0)),
                    ("revenueHigh", numr(rev * (1.0 + disp / 2.0), 0)),
                    ("analysts", json!(rng.random_range(12..45))),
                ])
            })
            .collect(),
    )
}

/// Past quarters: estimate vs actual EPS and revenue.
pub fn surprises(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let co = company(p_str(params, "symbol", "AAPL"), ctx);
    let mut q = Map::new();
    q.insert("symbol".into(), json!(co.symbol));
    q.insert("period".into(), json!("quarter"));
    q.insert("limit".into(), json!(p_int(params, "limit", 8, 1, 40)));
    let seed = hash(&format!("surp|{}", co.symbol));
    Value::Array(
        periods(&co, &q, ctx)
            .iter()
            .map(|p| {
                let eps = p.net / p.shares;
                let est = eps / (1.0 + 0.04 + 0.05 * stable::normal(seed, p.k, 1));
                let rev_est = p.revenue / (1.0 + 0.01 + 0.015 * stable::normal(seed, p.k, 2));
                // Reported about 4 weeks after the quarter ends.
                let report = (p.time + 120 * DAY).min(ctx.now.timestamp() - DAY);
                obj([
                    ("time", json!(report)),
                    ("fiscalPeriod", json!(p.label)),
                    ("epsEstimate", numr(est, 2)),
                    ("epsActual", numr(eps, 2)),
                    ("surprisePct", numr((eps / est - 1.0) * 100.0 * est.signum(), 2)),
                    ("revenueEstimate", numr(rev_est, 0)),
                    ("revenueActual", num(p.revenue)),
                ])
            })
            .collect(),
    )
}

/// Weekly consensus EPS revisions for the next fiscal year.
pub fn revisions(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let co = company(p_str(params, "symbol", "AAPL"), ctx);
    let n = p_int(params, "limit", 26, 1, 260) as usize;
    let times = time_grid(ctx.now, 7 * DAY, n, false);
    // Consensus grows with the company through its typical level at the start of 2025, with
    // slow wiggles: a function of (company, week), the week before the first row included.
    let seed = hash(&format!("rev|{}", co.symbol));
    let eps = co.revenue * (co.op - 0.01) * 0.82 / co.shares * (1.0 + co.growth);
    let week = 7 * DAY;
    let k_ref = 1_735_689_600 / week;
    let ks = indices_from_previous(&times, week);
    let wiggle = stable::ar_path(seed, 0.97, &ks);
    let path: Vec<f64> = ks
        .iter()
        .zip(wiggle)
        .map(|(&k, w)| eps * (co.growth / 52.0 * (k - k_ref) as f64 + 0.006 * w).exp())
        .collect();
    Value::Array(
        times
            .iter()
            .enumerate()
            .map(|(i, &t)| {
                let (k, d) = (ks[i + 1], path[i + 1] / path[i] - 1.0);
                let up = ((d * 1500.0).max(0.0) + 3.0 * stable::uniform(seed, k, 1)).round();
                let down = ((-d * 1500.0).max(0.0) + 3.0 * stable::uniform(seed, k, 2)).round();
                obj([
                    ("time", json!(t)),
                    ("consensusEps", numr(path[i + 1], 3)),
                    ("upRevisions", num(up)),
                    ("downRevisions", num(down)),
                ])
            })
            .collect(),
    )
}

const FIRMS: &[&str] = &[
    "Goldman Sachs",
    "Morgan Stanley",
    "JPMorgan",
    "Bank of America",
    "Citi",
    "UBS",
    "Barclays",
    "Deutsche Bank",
    "Wells Fargo",
    "Jefferies",
    "Bernstein",
    "Evercore ISI",
    "Piper Sandler",
    "Wedbush",
    "Mizuho",
    "CICC (中金)",
];
const GRADES: &[&str] =
    &["Sell", "Underweight", "Hold", "Neutral", "Overweight", "Buy", "Strong Buy"];

/// Analyst rating changes (newest last).
pub fn ratings(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let co = company(p_str(params, "symbol", "AAPL"), ctx);
    let n = p_int(params, "limit", 20, 1, 200) as usize;
    let seed = hash(&format!("ratings|{}", co.symbol));
    let mut rows = Vec::with_capacity(n);
    for (t, mut rng) in events(seed, ctx.now.timestamp(), DAY, 0.09, n) {
        let price = price_on(&co.symbol, t, ctx);
        let from = rng.random_range(2..6usize);
        let action =
            *pick(&mut rng, &["upgrade", "downgrade", "reiterate", "reiterate", "initiate"]);
        let to = match action {
            "upgrade" => (from + 1).min(6),
            "downgrade" => from - 1,
            _ => from,
        };
        let tgt = price * (0.85 + 0.1 * to as f64 + 0.05 * gauss(&mut rng));
        rows.push(obj([
            ("time", json!(align(t, DAY))),
            ("firm", json!(pick(&mut rng, FIRMS))),
            ("action", json!(action)),
            ("fromRating", json!(if action == "initiate" { "" } else { GRADES[from] })),
            ("toRating", json!(GRADES[to])),
            ("priceTarget", numr(tgt, 0)),
        ]));
    }
    rows.reverse();
    Value::Array(rows)
}

fn rec_counts(sym: &str, rng: &mut Rng8) -> [f64; 5] {
    let bull = 0.3 + 0.5 * unit(&format!("{sym}|bull"));
    let total = 20.0 + 30.0 * unit(&format!("{sym}|cov"));
    let w = [bull * 0.4, bull * 0.6, (1.0 - bull) * 0.7, (1.0 - bull) * 0.2, (1.0 - bull) * 0.1];
    w.map(|x| (total * x * (0.15 * gauss(rng)).exp()).round())
}

/// Current consensus: rating counts and price targets.
pub fn consensus(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let co = company(p_str(params, "symbol", "AAPL"), ctx);
    let mut rng = rng_anchor(&format!("cons|{}", co.symbol), ctx.now);
    let c = rec_counts(&co.symbol, &mut rng);
    let total: f64 = c.iter().sum::<f64>().max(1.0);
    let score = (c[0] * 5.0 + c[1] * 4.0 + c[2] * 3.0 + c[3] * 2.0 + c[4]) / total;
    let label = match score {
        s if s >= 4.3 => "Strong Buy",
        s if s >= 3.6 => "Buy",
        s if s >= 2.6 => "Hold",
        s if s >= 1.8 => "Sell",
        _ => "Strong Sell",
    };
    let mean = co.price * (1.0 + (score - 3.0) * 0.08 + 0.03 * gauss(&mut rng));
    obj([
        ("symbol", json!(co.symbol)),
        ("strongBuy", num(c[0])),
        ("buy", num(c[1])),
        ("hold", num(c[2])),
        ("sell", num(c[3])),
        ("strongSell", num(c[4])),
        ("consensus", json!(label)),
        ("score", numr(score, 2)),
        ("targetMean", numr(mean, 2)),
        ("targetHigh", numr(mean * 1.3, 2)),
        ("targetLow", numr(mean * 0.7, 2)),
        ("price", num(co.price)),
        ("upsidePct", numr((mean / co.price - 1.0) * 100.0, 1)),
    ])
}

/// Monthly recommendation counts.
pub fn rec_trend(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let co = company(p_str(params, "symbol", "AAPL"), ctx);
    let n = p_int(params, "limit", 12, 1, 60) as usize;
    let mut rng = rng_anchor(&format!("rect|{}", co.symbol), ctx.now);
    Value::Array(
        period_grid(ctx.now, 1, n)
            .iter()
            .map(|&t| {
                let c = rec_counts(&co.symbol, &mut rng);
                obj([
                    ("time", json!(t)),
                    ("strongBuy", num(c[0])),
                    ("buy", num(c[1])),
                    ("hold", num(c[2])),
                    ("sell", num(c[3])),
                    ("strongSell", num(c[4])),
                ])
            })
            .collect(),
    )
}

/// Daily consensus price-target history with the share price.
pub fn price_targets(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let co = company(p_str(params, "symbol", "AAPL"), ctx);
    let n = p_int(params, "limit", 120, 1, 2000) as usize;
    let (_, b) = bars(&co.symbol, DAY, n, ctx.now);
    let ks: Vec<i64> = b.iter().map(|bar| bar.time.div_euclid(DAY)).collect();
    let seed = hash(&format!("pt|{}", co.symbol));
    let prem = stable::reverting(seed, &ks, 0.12, 0.004, 0.02, -0.2, 0.5);
    Value::Array(
        b.iter()
            .zip(prem)
            .map(|(bar, p)| {
                // Targets follow a smoothed price.
                let mean = bar.close * (1.0 + p);
                obj([
                    ("time", json!(bar.time)),
                    ("price", num(bar.close)),
                    ("targetMean", numr(mean, 2)),
                    ("targetHigh", numr(mean * 1.28, 2)),
                    ("targetLow", numr(mean * 0.72, 2)),
                ])
            })
            .collect(),
    )
}

const INSTITUTIONS: &[&str] = &[
    "Vanguard Group",
    "BlackRock",
    "State Street",
    "Fidelity (FMR)",
    "Geode Capital",
    "Morgan Stanley",
    "JPMorgan Chase",
    "Northern Trust",
    "T. Rowe Price",
    "Norges Bank",
    "Capital Research",
    "Berkshire Hathaway",
    "Bank of America",
    "Invesco",
    "Goldman Sachs",
    "UBS Asset Management",
];
const FUNDS: &[&str] = &[
    "Vanguard Total Stock Market Index",
    "Vanguard 500 Index",
    "SPDR S&P 500 ETF",
    "iShares Core S&P 500",
    "Fidelity 500 Index",
    "Invesco QQQ Trust",
    "Vanguard Growth Index",
    "Select Sector SPDR",
    "American Funds Growth Fund",
    "Fidelity Contrafund",
    "iShares Russell 1000 Growth",
    "Vanguard Institutional Index",
];

fn holders(params: &Map<String, Value>, ctx: &GenContext, names: &[&str], top: f64) -> Value {
    let co = company(p_str(params, "symbol", "AAPL"), ctx);
    let n = p_int(params, "limit", 10, 1, names.len() as i64) as usize;
    let mut rng = rng_anchor(&format!("holders|{}|{top}", co.symbol), ctx.now);
    let filing = date_str(period_grid(ctx.now, 3, 1)[0] + 89 * DAY);
    Value::Array(
        names
            .iter()
            .take(n)
            .enumerate()
            .map(|(i, name)| {
                let pct = top / (1.0 + i as f64 * 0.45) * (0.1 * gauss(&mut rng)).exp();
                let shares = (co.shares * pct / 100.0).round();
                obj([
                    ("name", json!(name)),
                    ("shares", num(shares)),
                    ("value", numr(shares * co.price, 0)),
                    ("pctOutstanding", numr(pct, 3)),
                    ("changeShares", numr(shares * 0.03 * gauss(&mut rng), 0)),
                    ("filingDate", json!(filing)),
                ])
            })
            .collect(),
    )
}

/// Largest institutional (13F) holders.
pub fn institutional(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    holders(params, ctx, INSTITUTIONS, 8.5)
}

/// Largest mutual fund / ETF holders.
pub fn fund_holders(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    holders(params, ctx, FUNDS, 3.0)
}

/// Ownership breakdown.
pub fn ownership_summary(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let co = company(p_str(params, "symbol", "AAPL"), ctx);
    let u = unit(&format!("{}|own", co.symbol));
    let inst = 55.0 + 25.0 * u;
    let insider = 0.1 + 12.0 * unit(&format!("{}|ins", co.symbol)).powi(3);
    obj([
        ("symbol", json!(co.symbol)),
        ("institutionalPct", numr(inst, 2)),
        ("insiderPct", numr(insider, 2)),
        ("retailPct", numr(100.0 - inst - insider, 2)),
        ("institutionCount", json!((1500.0 + 4000.0 * u).round())),
        ("sharesOutstanding", numr(co.shares, 0)),
        ("floatShares", numr(co.shares * (1.0 - insider / 100.0), 0)),
    ])
}

/// Insider transactions (Form 4), newest last.
pub fn insider_trades(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let co = company(p_str(params, "symbol", "AAPL"), ctx);
    let n = p_int(params, "limit", 20, 1, 200) as usize;
    let people = [
        ("Chief Executive Officer", "J. Smith"),
        ("Chief Financial Officer", "A. Chen"),
        ("Director", "M. Johnson"),
        ("Chief Operating Officer", "R. Patel"),
        ("General Counsel", "K. Williams"),
        ("Director", "L. García"),
        ("EVP, Sales", "D. Kim"),
    ];
    let seed = hash(&format!("insider|{}", co.symbol));
    let mut rows = Vec::with_capacity(n);
    for (t, mut rng) in events(seed, ctx.now.timestamp(), DAY, 0.12, n) {
        let (title, who) = *pick(&mut rng, &people);
        let sell = rng.random::<f64>() < 0.8;
        let shares = (co.shares * 0.00002 * (1.0 * gauss(&mut rng)).exp()).round().max(100.0);
        let price = price_on(&co.symbol, t, ctx) * (1.0 + 0.01 * gauss(&mut rng));
        // What the insider holds afterwards: their own stake, drawn with the trade.
        let held = co.shares * 0.0005 * (0.5 * gauss(&mut rng)).exp();
        rows.push(obj([
            ("time", json!(align(t, DAY))),
            ("insider", json!(who)),
            ("title", json!(title)),
            ("type", json!(if sell { "sell" } else { "buy" })),
            ("shares", num(shares)),
            ("price", numr(price, 2)),
            ("value", numr(shares * price, 0)),
            ("sharesOwnedAfter", numr(held, 0)),
        ]));
    }
    rows.reverse();
    Value::Array(rows)
}

/// Short interest (twice a month).
pub fn short_interest(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let co = company(p_str(params, "symbol", "AAPL"), ctx);
    let n = p_int(params, "limit", 24, 1, 240) as usize;
    let times = time_grid(ctx.now, 15 * DAY, n, false);
    let base = 0.5 + 6.0 * unit(&format!("{}|si", co.symbol)).powi(2);
    let ks: Vec<i64> = times.iter().map(|&t| t.div_euclid(15 * DAY)).collect();
    let seed = hash(&format!("si|{}", co.symbol));
    let pct = stable::reverting(seed, &ks, base, base * 0.06, 0.1, 0.05, 60.0);
    let adv = profile(&co.symbol).daily_volume;
    Value::Array(
        times
            .iter()
            .zip(pct)
            .map(|(&t, p)| {
                let si = co.shares * p / 100.0;
                obj([
                    ("time", json!(t)),
                    ("shortInterest", numr(si, 0)),
                    ("shortPctFloat", numr(p, 2)),
                    ("daysToCover", numr(si / adv, 2)),
                ])
            })
            .collect(),
    )
}

/// Dividend history (ex-dates, quarterly), oldest first.
pub fn dividends(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let co = company(p_str(params, "symbol", "AAPL"), ctx);
    let n = p_int(params, "limit", 12, 1, 200) as usize;
    if co.payout == 0.0 {
        return Value::Array(Vec::new());
    }
    let eps = co.revenue * (co.op - 0.01) * 0.82 / co.shares;
    let q = eps * co.payout / 4.0;
    let mut amt = q;
    let grid = period_grid(ctx.now, 3, n);
    let mut amounts = Vec::with_capacity(n);
    for i in 0..n {
        amounts.push(amt);
        // Raise once a year.
        if i % 4 == 3 {
            amt /= 1.05;
        }
    }
    amounts.reverse();
    let off = (unit(&co.symbol) * 40.0) as i64 + 20;
    Value::Array(
        grid.iter()
            .zip(amounts)
            .map(|(&t, a)| {
                let ex = t + off * DAY;
                obj([
                    ("time", json!(ex)),
                    ("exDate", json!(date_str(ex))),
                    ("payDate", json!(date_str(ex + 14 * DAY))),
                    ("amount", numr(a, 4)),
                    ("yieldPct", numr(a * 4.0 / co.price * 100.0, 2)),
                ])
            })
            .collect(),
    )
}

/// Stock split history.
pub fn splits(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let sym = norm_symbol(p_str(params, "symbol", "AAPL"));
    type Splits = &'static [(&'static str, u32, u32)];
    let known: &[(&str, Splits)] = &[
        (
            "AAPL",
            &[
                ("1987-06-16", 2, 1),
                ("2000-06-21", 2, 1),
                ("2005-02-28", 2, 1),
                ("2014-06-09", 7, 1),
                ("2020-08-31", 4, 1),
            ],
        ),
        ("NVDA", &[("2007-09-11", 3, 2), ("2021-07-20", 4, 1), ("2024-06-10", 10, 1)]),
        ("TSLA", &[("2020-08-31", 5, 1), ("2022-08-25", 3, 1)]),
        ("AMZN", &[("1999-09-02", 2, 1), ("2022-06-06", 20, 1)]),
        ("GOOGL", &[("2014-04-03", 2, 1), ("2022-07-18", 20, 1)]),
    ];
    let list: Vec<(String, u32, u32)> = match known.iter().find(|(s, _)| *s == sym) {
        Some((_, l)) => l.iter().map(|(d, a, b)| ((*d).to_owned(), *a, *b)).collect(),
        None if unit(&format!("{sym}|split")) < 0.5 => Vec::new(),
        None => {
            vec![(date_str(ctx.now.timestamp() - (400.0 + 3000.0 * unit(&sym)) as i64 * DAY), 2, 1)]
        }
    };
    Value::Array(
        list.iter()
            .map(|(d, a, b)| {
                let t = chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d")
                    .ok()
                    .and_then(|x| x.and_hms_opt(0, 0, 0))
                    .map_or(0, |x| x.and_utc().timestamp());
                obj([
                    ("time", json!(t)),
                    ("date", json!(d)),
                    ("ratio", json!(format!("{a}:{b}"))),
                    ("numerator", json!(a)),
                    ("denominator", json!(b)),
                ])
            })
            .collect(),
    )
}

/// Upcoming ex-dividend dates (future `time`).
pub fn upcoming_dividends(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let days = p_int(params, "days", 30, 1, 120);
    let rows: Vec<(i64, Value)> = STOCKS
        .iter()
        .filter_map(|(s, name, ..)| {
            let co = company(s, ctx);
            if co.payout == 0.0 {
                return None;
            }
            let off = (unit(&format!("{s}|exd|{}", ctx.now.date_naive())) * days as f64) as i64 + 1;
            let ex = align(ctx.now.timestamp(), DAY) + off * DAY;
            let amt = co.revenue * (co.op - 0.01) * 0.82 / co.shares * co.payout / 4.0;
            Some((
                ex,
                obj([
                    ("time", json!(ex)),
                    ("symbol", json!(s)),
                    ("name", json!(name)),
                    ("exDate", json!(date_str(ex))),
                    ("payDate", json!(date_str(ex + 14 * DAY))),
                    ("amount", numr(amt, 4)),
                    ("yieldPct", numr(amt * 4.0 / co.price * 100.0, 2)),
                ]),
            ))
        })
        .collect();
    ascending_events(rows)
}

/// Company profile.
pub fn company_profile(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let co = company(p_str(params, "symbol", "AAPL"), ctx);
    let u = |k: &str| unit(&format!("{}|{k}", co.symbol));
    let industry = match co.sector.as_str() {
        "Technology" => "Semiconductors & Software",
        "Financials" => "Diversified Banks",
        "Energy" => "Integrated Oil & Gas",
        "Health Care" => "Pharmaceuticals",
        "Consumer Discretionary" => "Internet & Direct Marketing Retail",
        "Communication Services" => "Interactive Media & Services",
        _ => "Diversified",
    };
    obj([
        ("symbol", json!(co.symbol)),
        ("name", json!(co.name)),
        ("exchange", json!(if u("ex") < 0.6 { "NASDAQ" } else { "NYSE" })),
        ("sector", json!(co.sector)),
        ("industry", json!(industry)),
        ("country", json!("US")),
        ("currency", json!("USD")),
        ("employees", json!((2000.0 + 200_000.0 * u("emp").powi(2)).round())),
        ("founded", json!(1900 + (u("f") * 110.0) as i64)),
        (
            "ceo",
            json!(
                ["Jane Doe", "John Lee", "Maria Rossi", "David Park"]
                    [(u("ceo") * 4.0) as usize % 4]
            ),
        ),
        ("website", json!(format!("https://demo.invalid/company/{}", co.symbol.to_lowercase()))),
        ("marketCap", numr(co.price * co.shares, 0)),
        (
            "description",
            json!(format!(
                "{} operates in the {} sector ({}). Synthetic profile for offline use.",
                co.name, co.sector, industry
            )),
        ),
    ])
}

/// Peer companies in the same sector with valuation.
pub fn peers(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let co = company(p_str(params, "symbol", "AAPL"), ctx);
    Value::Array(
        STOCKS
            .iter()
            .filter(|(s, _, sec, _)| *sec == co.sector && *s != co.symbol)
            .map(|(s, ..)| {
                let p = company(s, ctx);
                let eps = p.revenue * (p.op - 0.01) * 0.82 / p.shares;
                let (_, chg, _) = day_change(s, ctx.now);
                obj([
                    ("symbol", json!(p.symbol)),
                    ("name", json!(p.name)),
                    ("marketCap", numr(p.price * p.shares, 0)),
                    ("peRatio", numr(p.price / eps, 2)),
                    ("changePct", numr(chg, 2)),
                ])
            })
            .collect(),
    )
}

/// Key executives.
pub fn executives(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let co = company(p_str(params, "symbol", "AAPL"), ctx);
    let roles = [
        "Chief Executive Officer",
        "Chief Financial Officer",
        "Chief Operating Officer",
        "Chief Technology Officer",
        "General Counsel",
        "Chief Marketing Officer",
    ];
    let names = [
        "Jane Doe",
        "A. Chen",
        "R. Patel",
        "S. Müller",
        "K. Williams",
        "L. García",
        "Wang Wei",
        "T. Okafor",
    ];
    let mut rng = rng_anchor(&format!("exec|{}", co.symbol), ctx.now);
    Value::Array(
        roles
            .iter()
            .enumerate()
            .map(|(i, r)| {
                obj([
                    ("name", json!(names[(i + (unit(&co.symbol) * 8.0) as usize) % names.len()])),
                    ("title", json!(r)),
                    ("since", json!(rng.random_range(2008..2024))),
                    ("age", json!(rng.random_range(44..68))),
                    ("totalCompensation", numr(co.revenue.sqrt() * 80.0 / (i as f64 + 1.0), -3)),
                ])
            })
            .collect(),
    )
}

/// Regulatory filings (10-K, 10-Q, 8-K, 4, ...), newest last.
pub fn filings(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let co = company(p_str(params, "symbol", "AAPL"), ctx);
    let n = p_int(params, "limit", 20, 1, 200) as usize;
    let seed = hash(&format!("filings|{}", co.symbol));
    let forms = [
        ("8-K", "Current report: results of operations and financial condition"),
        ("4", "Statement of changes in beneficial ownership"),
        ("10-Q", "Quarterly report"),
        ("4", "Statement of changes in beneficial ownership"),
        ("8-K", "Current report: departure/appointment of officers"),
        ("SC 13G/A", "Amended beneficial ownership report"),
        ("10-K", "Annual report"),
        ("DEF 14A", "Definitive proxy statement"),
    ];
    let mut rows = Vec::with_capacity(n);
    for (t, mut rng) in events(seed, ctx.now.timestamp(), DAY, 0.16, n) {
        let (form, title) = *pick(&mut rng, &forms);
        rows.push(obj([
            ("time", json!(t)),
            ("form", json!(form)),
            ("title", json!(format!("{} — {title}", co.name))),
            (
                "url",
                json!(format!("https://demo.invalid/filings/{}/{t}", hash(&co.symbol) % 1_000_000)),
            ),
        ]));
    }
    rows.reverse();
    Value::Array(rows)
}

const IPO_NAMES: &[(&str, &str, &str)] = &[
    ("NOVA", "Novatek Robotics", "Technology"),
    ("CLDX", "Cloudex Systems", "Technology"),
    ("GRNP", "GreenPath Energy", "Utilities"),
    ("BIOQ", "BioQuanta Therapeutics", "Health Care"),
    ("FINX", "Finexa Payments", "Financials"),
    ("HALO", "Halo Consumer Brands", "Consumer Staples"),
    ("ORBT", "Orbital Logistics", "Industrials"),
    ("LUMN2", "Lumina AI", "Technology"),
    ("MEDV", "Medivance Health", "Health Care"),
    ("SOLR", "Solaris Power", "Utilities"),
    ("QBIT", "Qubit Dynamics", "Technology"),
    ("SHNX", "Shenxin Tech (深信科技)", "Technology"),
];

/// Upcoming IPOs (future `time`).
pub fn ipo_upcoming(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let n = p_int(params, "limit", 10, 1, IPO_NAMES.len() as i64) as usize;
    let mut rng = rng_anchor("ipo-up", ctx.now);
    let mut t = align(ctx.now.timestamp(), DAY);
    Value::Array(
        IPO_NAMES
            .iter()
            .take(n)
            .map(|(s, name, sector)| {
                t += rng.random_range(1..5) * DAY;
                let lo = (10.0 + 25.0 * rng.random::<f64>()).round();
                let shares = (5e6 + 4e7 * rng.random::<f64>()).round();
                obj([
                    ("time", json!(t)),
                    ("symbol", json!(s)),
                    ("name", json!(name)),
                    ("sector", json!(sector)),
                    ("exchange", json!(if rng.random::<bool>() { "NASDAQ" } else { "NYSE" })),
                    ("priceLow", num(lo)),
                    ("priceHigh", num(lo + 2.0)),
                    ("shares", num(shares)),
                    ("dealSize", numr(shares * (lo + 1.0), 0)),
                ])
            })
            .collect(),
    )
}

/// Recent IPOs with performance since listing (newest last).
pub fn ipo_recent(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let n = p_int(params, "limit", 10, 1, IPO_NAMES.len() as i64) as usize;
    let mut rng = rng_anchor("ipo-recent", ctx.now);
    let mut t = align(ctx.now.timestamp(), DAY);
    let mut rows: Vec<Value> = IPO_NAMES
        .iter()
        .rev()
        .take(n)
        .map(|(s, name, sector)| {
            t -= rng.random_range(2..12) * DAY;
            let ipo = (12.0 + 25.0 * rng.random::<f64>()).round();
            let first = 0.15 + 0.3 * gauss(&mut rng);
            let now_ret = first + 0.35 * gauss(&mut rng);
            let shares = (5e6 + 4e7 * rng.random::<f64>()).round();
            obj([
                ("time", json!(t)),
                ("symbol", json!(format!("{s}R"))),
                ("name", json!(name)),
                ("sector", json!(sector)),
                ("ipoPrice", num(ipo)),
                ("firstDayClose", numr(ipo * (1.0 + first), 2)),
                ("currentPrice", numr((ipo * (1.0 + now_ret)).max(0.5), 2)),
                ("firstDayReturnPct", numr(first * 100.0, 1)),
                (
                    "returnSinceIpoPct",
                    numr((((1.0 + now_ret) * ipo).max(0.5) / ipo - 1.0) * 100.0, 1),
                ),
                ("dealSize", numr(shares * ipo, 0)),
            ])
        })
        .collect();
    rows.reverse();
    Value::Array(rows)
}
