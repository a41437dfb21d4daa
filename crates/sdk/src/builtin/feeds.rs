//! Feeds and calendars: news headlines and social posts built from templates that mention the
//! query, trending topics, economic/earnings calendars, exchange holidays and whale transfers.

use chrono::{DateTime, Datelike, NaiveDate, Weekday};
use rand::Rng;
use serde_json::{Map, Value, json};

use super::GenContext;
use super::series::{STOCKS, bars};
use super::util::*;

const POS: &[&str] = &[
    "{q} breaking out, volume confirms. Targets higher from here.",
    "Loading more {q} on this dip, fundamentals still strong.",
    "{q} just reclaimed the 50-day. Bulls in control 🚀",
    "Huge inflows into {q} today. Smart money is accumulating.",
    "Analysts turning bullish on {q} after the latest data.",
    "{q} holding support beautifully. Higher lows all week.",
    "看好{q}，突破在即",
];
const NEG: &[&str] = &[
    "{q} looks heavy, lower highs since Monday. Careful.",
    "Took profits on {q}, momentum fading into resistance.",
    "{q} breaking down below support. Stops getting hit.",
    "Not liking the {q} price action after that report.",
    "Shorting {q} here, risk/reward favours the downside.",
    "{q} funding too hot, expecting a flush.",
    "{q}风险加大，注意回调",
];
const NEU: &[&str] = &[
    "What's everyone's view on {q} into the Fed meeting?",
    "{q} range-bound for now. Waiting for a catalyst.",
    "Chart of {q} vs the dollar index over the last year, interesting divergence.",
    "Anyone tracking positioning data on {q}?",
    "{q} volatility at the lows of the year.",
];
const TAILS: &[&str] = &[
    "",
    "",
    " #{Q}",
    " 📈",
    " Thoughts?",
    " (not financial advice)",
    " Watching the close.",
    " ${Q}",
];
const AUTHORS: &[&str] = &[
    "macro_mike",
    "gold_bug_88",
    "quant_queen",
    "chartist_jay",
    "defi_degen",
    "value_vince",
    "fx_fiona",
    "oil_trader_ken",
    "crypto_kai",
    "bond_vigilante",
    "tape_reader",
    "alpha_anna",
    "李雪_投研",
    "ThetaGang",
    "risk_parity_rob",
];

fn fill(t: &str, q: &str) -> String {
    t.replace("{q}", q)
}

/// Social posts mentioning `query`, newest last. Sentiment in [-1, 1].
pub fn posts(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let q = p_str(params, "query", "gold").trim();
    let q = if q.is_empty() { "markets" } else { q };
    let n = p_int(params, "limit", 50, 1, 500) as usize;
    let seed = hash(&format!("posts|{}", q.to_lowercase()));
    let tag: String = q.chars().filter(|c| c.is_alphanumeric()).collect();
    let mut rows = Vec::with_capacity(n);
    for (t, mut rng) in events(seed, ctx.now.timestamp(), 300, 0.65, n) {
        // The crowd's mood for this query that day.
        let day_mood = 0.15 * super::stable::normal(seed, t.div_euclid(DAY), 0);
        let mood = (day_mood + 0.1 * (unit(q) - 0.5)).clamp(-0.6, 0.6);
        let s = (mood + 0.45 * gauss(&mut rng)).clamp(-1.0, 1.0);
        let tpl = if s > 0.2 {
            pick(&mut rng, POS)
        } else if s < -0.2 {
            pick(&mut rng, NEG)
        } else {
            pick(&mut rng, NEU)
        };
        let likes = (8.0 * (1.4 * gauss(&mut rng)).exp()).round();
        rows.push(obj([
            ("id", json!(format!("p{:x}", rng.random::<u64>() >> 16))),
            ("time", json!(t)),
            ("author", json!(pick(&mut rng, AUTHORS))),
            (
                "text",
                json!(format!("{}{}", fill(tpl, q), pick(&mut rng, TAILS).replace("{Q}", &tag))),
            ),
            ("likes", num(likes)),
            ("reposts", num((likes * 0.2 * rng.random::<f64>()).round())),
            ("sentiment", numr(s, 3)),
        ]));
    }
    rows.reverse();
    Value::Array(rows)
}

/// Trending tickers/topics on social media.
pub fn trending(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let n = p_int(params, "limit", 15, 1, 30) as usize;
    let topics = [
        "BTC",
        "NVDA",
        "gold",
        "TSLA",
        "Fed",
        "ETH",
        "SOL",
        "AAPL",
        "oil",
        "CPI",
        "yen",
        "PLTR",
        "tariffs",
        "DOGE",
        "AI",
        "rate cuts",
        "SMCI",
        "MSTR",
        "China stimulus",
        "silver",
    ];
    let mut rng = rng_ctx(ctx.seed);
    let mut rows: Vec<(f64, Value)> = topics
        .iter()
        .map(|t| {
            let m = (3000.0 * (1.0 * gauss(&mut rng)).exp()).round();
            (
                m,
                obj([
                    ("name", json!(t)),
                    ("mentions", num(m)),
                    ("changePct", numr(60.0 * gauss(&mut rng), 1)),
                    ("sentiment", numr((0.3 * gauss(&mut rng)).clamp(-1.0, 1.0), 3)),
                ]),
            )
        })
        .collect();
    rows.sort_by(|a, b| b.0.total_cmp(&a.0));
    Value::Array(rows.into_iter().take(n).map(|r| r.1).collect())
}

/// Most-followed accounts posting about a topic.
pub fn influencers(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let q = p_str(params, "query", "bitcoin");
    let n = p_int(params, "limit", 10, 1, AUTHORS.len() as i64) as usize;
    let mut rng = rng_anchor(&format!("infl|{q}"), ctx.now);
    let mut rows: Vec<(f64, Value)> = AUTHORS
        .iter()
        .map(|a| {
            let f = (20_000.0 * (1.3 * gauss(&mut rng)).exp()).round();
            (
                f,
                obj([
                    ("author", json!(a)),
                    ("followers", num(f)),
                    ("posts24h", json!(rng.random_range(1..40))),
                    ("avgSentiment", numr((0.35 * gauss(&mut rng)).clamp(-1.0, 1.0), 3)),
                    ("engagementRate", numr(0.01 + 0.05 * rng.random::<f64>(), 4)),
                ]),
            )
        })
        .collect();
    rows.sort_by(|a, b| b.0.total_cmp(&a.0));
    Value::Array(rows.into_iter().take(n).map(|r| r.1).collect())
}

/// Invented news is never attributed to a real publisher (an analyst would believe it).
const NEWS_SOURCES: &[&str] = &[
    "Demo Wire",
    "Demo Markets Desk",
    "Demo Macro Desk",
    "Demo Asia Desk (示例)",
    "Demo Crypto Desk",
];
const HEADLINES_POS: &[&str] = &[
    "{q} rallies as investors price in faster rate cuts",
    "{q} hits multi-week high on strong demand",
    "Analysts raise outlook for {q} after upbeat data",
    "{q} gains as inflows accelerate",
];
const HEADLINES_NEG: &[&str] = &[
    "{q} slides as dollar strengthens",
    "{q} under pressure after hawkish central-bank remarks",
    "Selling in {q} deepens on growth worries",
    "{q} drops as traders book profits",
];
const HEADLINES_NEU: &[&str] = &[
    "What to watch in {q} this week",
    "{q} steady ahead of key inflation report",
    "Explainer: the forces driving {q}",
    "{q} traders eye central-bank decision",
];

fn news_items(q: &str, symbols: Vec<String>, n: usize, ctx: &GenContext, key: &str) -> Value {
    let seed = hash(&format!("news|{key}"));
    let mut rows = Vec::with_capacity(n);
    for (t, mut rng) in events(seed, ctx.now.timestamp(), 3600, 0.95, n) {
        // The day's mood, then the story's own tilt.
        let mood = 0.2 * super::stable::normal(seed, t.div_euclid(DAY), 0);
        let s = (mood + 0.4 * gauss(&mut rng)).clamp(-1.0, 1.0);
        let tpl = if s > 0.2 {
            pick(&mut rng, HEADLINES_POS)
        } else if s < -0.2 {
            pick(&mut rng, HEADLINES_NEG)
        } else {
            pick(&mut rng, HEADLINES_NEU)
        };
        let title = fill(tpl, q);
        let src = pick(&mut rng, NEWS_SOURCES);
        let id = format!("n{:x}", rng.random::<u64>() >> 20);
        rows.push(obj([
            ("id", json!(id)),
            ("time", json!(t)),
            ("source", json!(src)),
            ("title", json!(title)),
            ("summary", json!(format!("{title}. Market participants weighed the latest moves in {q} against the macro backdrop and positioning data."))),
            // `.invalid` can never resolve: no invented story links to a real-looking page.
            ("url", json!(format!("https://demo.invalid/news/{id}"))),
            ("symbols", json!(symbols)),
            ("sentiment", numr(s, 3)),
        ]));
    }
    rows.reverse();
    Value::Array(rows)
}

/// News search by free text.
pub fn search_news(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let q = p_str(params, "query", "gold");
    let n = p_int(params, "limit", 20, 1, 200) as usize;
    news_items(q, Vec::new(), n, ctx, &q.to_lowercase())
}

/// News for one ticker.
pub fn symbol_news(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let sym = norm_symbol(p_str(params, "symbol", "AAPL"));
    let n = p_int(params, "limit", 20, 1, 200) as usize;
    let name = STOCKS.iter().find(|s| s.0 == sym).map_or(sym.clone(), |s| s.1.to_owned());
    news_items(&name, vec![sym.clone()], n, ctx, &format!("sym|{sym}"))
}

/// Top market stories across asset classes.
pub fn top_stories(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let n = p_int(params, "limit", 10, 1, 100) as usize;
    let category = p_str(params, "category", "markets");
    let topic = match category {
        "crypto" => "Bitcoin",
        "forex" => "the dollar",
        "commodities" => "oil",
        "economy" => "the US economy",
        _ => "Wall Street",
    };
    news_items(topic, Vec::new(), n, ctx, &format!("top|{category}"))
}

const EVENTS: &[(&str, &str, &str, &str, f64, f64)] = &[
    // (country, event, importance, unit, typical, noise)
    ("US", "CPI YoY", "high", "%", 2.9, 0.2),
    ("US", "Core CPI MoM", "high", "%", 0.3, 0.1),
    ("US", "Nonfarm Payrolls", "high", "K", 170.0, 60.0),
    ("US", "Unemployment Rate", "high", "%", 4.1, 0.1),
    ("US", "FOMC Rate Decision", "high", "%", 4.375, 0.0),
    ("US", "ISM Manufacturing PMI", "medium", "index", 49.5, 1.0),
    ("US", "Retail Sales MoM", "medium", "%", 0.3, 0.5),
    ("US", "Initial Jobless Claims", "medium", "K", 220.0, 12.0),
    ("US", "GDP QoQ Annualized", "high", "%", 2.4, 0.6),
    ("US", "Crude Oil Inventories", "medium", "M bbl", -1.0, 3.0),
    ("EA", "ECB Deposit Rate Decision", "high", "%", 3.0, 0.0),
    ("EA", "HICP YoY Flash", "high", "%", 2.3, 0.2),
    ("DE", "Ifo Business Climate", "medium", "index", 86.0, 1.0),
    ("GB", "CPI YoY", "high", "%", 2.6, 0.2),
    ("JP", "BoJ Policy Rate", "high", "%", 0.5, 0.0),
    ("CN", "Caixin Manufacturing PMI (财新制造业PMI)", "medium", "index", 50.5, 0.8),
    ("CN", "GDP YoY (国内生产总值)", "high", "%", 5.0, 0.3),
    ("CN", "Trade Balance", "medium", "USD bn", 95.0, 10.0),
    ("AU", "RBA Cash Rate", "high", "%", 4.35, 0.0),
    ("CA", "Employment Change", "medium", "K", 25.0, 20.0),
];

/// Economic calendar: past releases with actuals, upcoming ones with `actual: null`.
pub fn economic_calendar(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let back = p_int(params, "daysBack", 3, 0, 60);
    let ahead = p_int(params, "daysAhead", 7, 0, 60);
    let country = p_str(params, "country", "all").to_uppercase();
    let min_imp = p_str(params, "importance", "all");
    let now = ctx.now.timestamp();
    let today = align(now, DAY);
    let mut rows: Vec<(i64, Value)> = Vec::new();
    for day in -back..=ahead {
        let d = today + day * DAY;
        if is_weekend(d) {
            continue;
        }
        let mut rng = rng_anchor(
            &format!("econ|{d}"),
            chrono::DateTime::from_timestamp(d, 0).unwrap_or(ctx.now),
        );
        let k = rng.random_range(1..4);
        for _ in 0..k {
            let (c, ev, imp, unit_s, typical, noise) = *pick(&mut rng, EVENTS);
            if country != "ALL" && c != country {
                continue;
            }
            if min_imp == "high" && imp != "high" || min_imp == "medium" && imp == "low" {
                continue;
            }
            let hour = match c {
                "US" | "CA" => 13,
                "EA" | "DE" | "GB" => 9,
                "CN" | "AU" => 2,
                _ => 0,
            };
            let t = d + hour * 3600 + 30 * 60;
            let forecast = typical + noise * 0.5 * gauss(&mut rng);
            let previous = typical + noise * gauss(&mut rng);
            let actual =
                if t <= now { numr(forecast + noise * gauss(&mut rng), 2) } else { Value::Null };
            rows.push((
                t,
                obj([
                    ("time", json!(t)),
                    ("country", json!(c)),
                    ("event", json!(ev)),
                    ("importance", json!(imp)),
                    ("actual", actual),
                    ("forecast", numr(forecast, 2)),
                    ("previous", numr(previous, 2)),
                    ("unit", json!(unit_s)),
                ]),
            ));
        }
    }
    rows.sort_by_key(|r| r.0);
    rows.dedup_by(|a, b| a.1["time"] == b.1["time"] && a.1["event"] == b.1["event"]);
    ascending_events(rows)
}

/// Earnings release dates: past (with actuals) and upcoming.
pub fn earnings_calendar(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let back = p_int(params, "daysBack", 7, 0, 90);
    let ahead = p_int(params, "daysAhead", 14, 0, 90);
    let now = ctx.now.timestamp();
    let today = align(now, DAY);
    let rows: Vec<(i64, Value)> = STOCKS
        .iter()
        .filter_map(|(s, name, ..)| {
            // Each company reports on a stable day within each quarter.
            let q_start = period_grid(ctx.now, 3, 1)[0] + 91 * DAY;
            let off = 20 + (unit(s) * 30.0) as i64;
            let mut d = q_start + off * DAY;
            if d > today + ahead * DAY {
                d -= 91 * DAY;
            }
            while is_weekend(d) {
                d += DAY;
            }
            if d < today - back * DAY || d > today + ahead * DAY {
                return None;
            }
            let bmo = unit(&format!("{s}|s")) < 0.4;
            let t = d + if bmo { 12 * 3600 } else { 20 * 3600 + 60 * (unit(s) * 50.0) as i64 };
            let co = super::corporate::company(s, ctx);
            let eps = co.revenue * (co.op - 0.01) * 0.82 / co.shares / 4.0;
            let rev = co.revenue / 4.0;
            let done = t <= now;
            let beat = 1.0 + 0.05 * (unit(&format!("{s}|{d}")) - 0.3);
            Some((
                t,
                obj([
                    ("time", json!(t)),
                    ("symbol", json!(s)),
                    ("name", json!(name)),
                    ("session", json!(if bmo { "bmo" } else { "amc" })),
                    ("epsEstimate", numr(eps, 2)),
                    ("epsActual", if done { numr(eps * beat, 2) } else { Value::Null }),
                    ("revenueEstimate", numr(rev, 0)),
                    (
                        "revenueActual",
                        if done { numr(rev * (1.0 + (beat - 1.0) / 3.0), 0) } else { Value::Null },
                    ),
                ]),
            ))
        })
        .collect();
    ascending_events(rows)
}

fn nth_weekday(y: i32, m: u32, wd: Weekday, n: u8) -> Option<NaiveDate> {
    NaiveDate::from_weekday_of_month_opt(y, m, wd, n)
}

fn last_monday(y: i32, m: u32) -> Option<NaiveDate> {
    (1..=5).rev().find_map(|n| NaiveDate::from_weekday_of_month_opt(y, m, Weekday::Mon, n))
}

fn observed(d: NaiveDate) -> NaiveDate {
    match d.weekday() {
        Weekday::Sat => d.pred_opt().unwrap_or(d),
        Weekday::Sun => d.succ_opt().unwrap_or(d),
        _ => d,
    }
}

fn easter(y: i32) -> Option<NaiveDate> {
    // Anonymous Gregorian algorithm.
    let a = y % 19;
    let b = y / 100;
    let c = y % 100;
    let d = b / 4;
    let e = b % 4;
    let f = (b + 8) / 25;
    let g = (b - f + 1) / 3;
    let h = (19 * a + b - d - g + 15) % 30;
    let i = c / 4;
    let k = c % 4;
    let l = (32 + 2 * e + 2 * i - h - k) % 7;
    let m = (a + 11 * h + 22 * l) / 451;
    let month = (h + l - 7 * m + 114) / 31;
    let day = (h + l - 7 * m + 114) % 31 + 1;
    NaiveDate::from_ymd_opt(y, month as u32, day as u32)
}

/// Upcoming NYSE/Nasdaq holidays (future `time`).
pub fn holidays(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let n = p_int(params, "limit", 10, 1, 30) as usize;
    let today = ctx.now.date_naive();
    let mut rows: Vec<(NaiveDate, &str, &str)> = Vec::new();
    for y in [today.year(), today.year() + 1] {
        let ymd = |m, d| NaiveDate::from_ymd_opt(y, m, d);
        let list: Vec<(Option<NaiveDate>, &str, &str)> = vec![
            (ymd(1, 1).map(observed), "New Year's Day", "closed"),
            (nth_weekday(y, 1, Weekday::Mon, 3), "Martin Luther King Jr. Day", "closed"),
            (nth_weekday(y, 2, Weekday::Mon, 3), "Washington's Birthday", "closed"),
            (
                easter(y).and_then(|e| e.checked_sub_days(chrono::Days::new(2))),
                "Good Friday",
                "closed",
            ),
            (last_monday(y, 5), "Memorial Day", "closed"),
            (ymd(6, 19).map(observed), "Juneteenth", "closed"),
            (ymd(7, 4).map(observed), "Independence Day", "closed"),
            (nth_weekday(y, 9, Weekday::Mon, 1), "Labor Day", "closed"),
            (nth_weekday(y, 11, Weekday::Thu, 4), "Thanksgiving Day", "closed"),
            (
                nth_weekday(y, 11, Weekday::Thu, 4).and_then(|d| d.succ_opt()),
                "Day after Thanksgiving",
                "early close (13:00 ET)",
            ),
            (ymd(12, 24), "Christmas Eve", "early close (13:00 ET)"),
            (ymd(12, 25).map(observed), "Christmas Day", "closed"),
        ];
        rows.extend(list.into_iter().filter_map(|(d, name, st)| d.map(|d| (d, name, st))));
    }
    rows.retain(|(d, ..)| *d >= today && !matches!(d.weekday(), Weekday::Sat | Weekday::Sun));
    rows.sort_by_key(|r| r.0);
    rows.dedup_by_key(|r| r.0);
    Value::Array(
        rows.into_iter()
            .take(n)
            .map(|(d, name, status)| {
                let t = d.and_hms_opt(0, 0, 0).map_or(0, |x| x.and_utc().timestamp());
                obj([
                    ("time", json!(t)),
                    ("date", json!(d.to_string())),
                    ("exchange", json!("NYSE, Nasdaq")),
                    ("name", json!(name)),
                    ("status", json!(status)),
                ])
            })
            .collect(),
    )
}

/// Large on-chain transfers, newest last.
pub fn whale_transfers(params: &Map<String, Value>, ctx: &GenContext) -> Value {
    let asset = p_str(params, "asset", "BTC").to_uppercase();
    let min_usd = p_f64(params, "minValueUsd", 1e6);
    let n = p_int(params, "limit", 30, 1, 500) as usize;
    let seed = hash(&format!("whale|{asset}|{min_usd}"));
    // The coin's demo price at the transfer's hour.
    let price_at = |t: i64| {
        let at = DateTime::from_timestamp(t, 0).unwrap_or(ctx.now);
        bars(&format!("{asset}USDT"), 3600, 1, at).1[0].close
    };
    let places = [
        "Binance",
        "Coinbase",
        "OKX",
        "Kraken",
        "Bybit",
        "unknown wallet",
        "unknown wallet",
        "unknown wallet",
    ];
    let mut rows = Vec::with_capacity(n);
    for (t, mut rng) in events(seed, ctx.now.timestamp(), 900, 0.95, n) {
        let price = price_at(t);
        let usd = min_usd * (1.0 + (1.2 * gauss(&mut rng)).exp());
        let from = *pick(&mut rng, &places);
        let to = *pick(&mut rng, &places);
        let kind = match (from == "unknown wallet", to == "unknown wallet") {
            (true, false) => "exchange_inflow",
            (false, true) => "exchange_outflow",
            (false, false) => "exchange_to_exchange",
            (true, true) => "wallet_to_wallet",
        };
        rows.push(obj([
            ("time", json!(t)),
            ("asset", json!(asset)),
            ("amount", numr(usd / price, 4)),
            ("valueUsd", numr(usd, 0)),
            ("from", json!(from)),
            ("to", json!(to)),
            ("type", json!(kind)),
            (
                "txHash",
                json!(format!("0x{:016x}{:016x}", rng.random::<u64>(), rng.random::<u64>())),
            ),
        ]));
    }
    rows.reverse();
    Value::Array(rows)
}
