#![allow(clippy::unwrap_used)]

use boa_engine::property::Attribute;
use boa_engine::{Context, JsValue, Source, js_string};
use proptest::prelude::*;
use serde_json::{Value, json};

use super::{FUNCTIONS, SPEC_JSON, install};

const REFERENCE_JS: &str = include_str!("../../../../sandbox/utils-reference.js");

/// JS helpers: seeded random walk with nulls, and a tolerant deep comparison.
const HELPERS_JS: &str = r#"
function rng(seed) { return () => { seed = (seed + 0x6D2B79F5) >>> 0; let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1); t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296; }; }
function walk(n, seed, nullRate) { const r = rng(seed); let x = 100; const out = [];
  for (let i = 0; i < n; i++) { x = Math.max(1, x + (r() - 0.5) * 4); out.push(r() < nullRate ? null : x); }
  return out; }
function candles(n, seed) { const r = rng(seed); let c = 100; const out = [];
  for (let i = 0; i < n; i++) { const o = c; c = Math.max(1, c + (r() - 0.5) * 4);
    const h = Math.max(o, c) + r() * 2, l = Math.min(o, c) - r() * 2;
    out.push(r() < 0.03 ? {time: i * 60, open: null, high: h, low: l, close: null, volume: r() * 100}
                        : {time: i * 60, open: o, high: h, low: l, close: c, volume: r() * 100}); }
  return out; }
function same(a, b, path, errs) {
  if (typeof a === 'number' && typeof b === 'number') {
    if (!(Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b)))) errs.push(path + ': ' + a + ' vs ' + b);
  } else if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) { errs.push(path + ': length ' + a.length + ' vs ' + b.length); return; }
    for (let i = 0; i < a.length && errs.length < 5; i++) same(a[i], b[i], path + '[' + i + ']', errs);
  } else if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a).sort().join(), kb = Object.keys(b).sort().join();
    if (ka !== kb) { errs.push(path + ': keys ' + ka + ' vs ' + kb); return; }
    for (const k of Object.keys(a)) same(a[k], b[k], path + '.' + k, errs);
  } else if (a !== b) errs.push(path + ': ' + JSON.stringify(a) + ' vs ' + JSON.stringify(b));
  return errs;
}
function check(name, args, refArgs) {
  const errs = same(utils[name](...args), ref[name](...(refArgs || args)), name, []);
  if (errs.length) throw new Error(name + '(' + args.slice(1).map(a => JSON.stringify(a)).join(', ') + '): ' + errs.join('; '));
}
"#;

fn context() -> Context {
    let mut ctx = Context::default();
    let utils = install(&mut ctx).unwrap();
    ctx.register_global_property(js_string!("utils"), utils, Attribute::READONLY).unwrap();
    ctx.eval(Source::from_bytes(REFERENCE_JS)).unwrap();
    ctx.eval(Source::from_bytes(HELPERS_JS)).unwrap();
    ctx
}

fn eval(ctx: &mut Context, src: &str) -> Result<Value, String> {
    match ctx.eval(Source::from_bytes(src)) {
        Ok(v) => Ok(v.to_json(ctx).map_err(|e| e.to_string())?.unwrap_or(Value::Null)),
        Err(e) => Err(e.to_string()),
    }
}

fn ok(ctx: &mut Context, src: &str) -> Value {
    eval(ctx, src).unwrap_or_else(|e| panic!("{src}: {e}"))
}

fn err(ctx: &mut Context, src: &str) -> String {
    match eval(ctx, src) {
        Ok(v) => panic!("{src}: expected an error, got {v}"),
        Err(e) => e,
    }
}

#[test]
fn matches_reference_on_random_walks() {
    let mut ctx = context();
    ok(
        &mut ctx,
        r#"
        for (const [n, seed, nullRate] of [[500, 1, 0.05], [300, 2, 0], [40, 3, 0.3], [5, 4, 0.2]]) {
          const xs = walk(n, seed, nullRate), ys = walk(n, seed + 100, nullRate);
          const rets = ref.returns(xs), rows = candles(n, seed);
          const cases = [
            ['sma', [xs, 5]], ['sma', [xs, 1]], ['sma', [xs, 50]], ['ema', [xs, 10]], ['ema', [xs, 1]],
            ['wma', [xs, 7]], ['rsi', [xs]], ['rsi', [xs, 3]], ['macd', [xs]], ['macd', [xs, 5, 13, 4]],
            ['bollinger', [xs]], ['bollinger', [xs, 10, 1.5]], ['stdev', [xs]], ['stdev', [xs, 10]],
            ['mean', [xs]], ['sum', [xs]], ['min', [xs]], ['max', [xs]], ['pctChange', [xs]],
            ['pctChange', [xs, 3]], ['returns', [xs]], ['returns', [xs, 'log']], ['cumulative', [rets]],
            ['cumulative', [rets, 'return']], ['drawdown', [xs]], ['maxDrawdown', [xs]],
            ['correlation', [xs, ys]], ['correlation', [xs, ys, 20]], ['zscore', [xs]], ['zscore', [xs, 15]],
            ['atr', [rows]], ['atr', [rows, 5]], ['vwap', [rows]],
          ];
          for (const [name, args] of cases) check(name, args);
          let vacuous = false;
          try { check('sma', [xs, 5], [xs, 6]); vacuous = true; } catch (e) {}
          if (vacuous && n > 6) throw new Error('check() accepted a wrong reference');
          // Rows plus a field name, and the default 'close' field.
          const closes = rows.map(r => r.close), vols = rows.map(r => r.volume);
          check('sma', [rows, 5, 'close'], [closes, 5]);
          check('sma', [rows, 5], [closes, 5]);
          check('ema', [rows, 'volume', 4], [vols, 4]);
          check('macd', [rows, 'close'], [closes]);
          check('rsi', [rows, 14, 'close'], [closes, 14]);
          check('returns', [rows, 'log', 'close'], [closes, 'log']);
          check('correlation', [rows, rows, 'volume'], [vols, vols]);
          const p = utils.pluck(rows, 'close');
          if (JSON.stringify(p) !== JSON.stringify(closes)) throw new Error('pluck');
        }
        true
        "#,
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn prop_sma_ema_rsi(
        xs in proptest::collection::vec(proptest::option::weighted(0.9, -1e4f64..1e4), 0..120),
        period in 1usize..30,
    ) {
        let mut ctx = context();
        let data: Vec<Value> = xs.iter().map(|x| x.map_or(Value::Null, |x| json!(x))).collect();
        let js = JsValue::from_json(&Value::Array(data), &mut ctx).unwrap();
        ctx.register_global_property(js_string!("xs"), js, Attribute::all()).unwrap();
        ctx.register_global_property(js_string!("p"), period as i32, Attribute::all()).unwrap();
        let r = eval(&mut ctx, "for (const f of ['sma', 'ema', 'rsi', 'wma', 'stdev', 'zscore']) check(f, [xs, p]); true");
        prop_assert!(r.is_ok(), "{:?}", r);
    }
}

#[test]
fn edge_cases() {
    let mut ctx = context();
    assert_eq!(ok(&mut ctx, "utils.sma([], 3)"), json!([]));
    assert_eq!(ok(&mut ctx, "utils.sma([1, 2], 3)"), json!([null, null]));
    assert_eq!(ok(&mut ctx, "utils.sma([1, 2, 3], 1)"), json!([1.0, 2.0, 3.0]));
    assert_eq!(ok(&mut ctx, "utils.sma([1, 2, 3, 4], 2)"), json!([null, 1.5, 2.5, 3.5]));
    assert_eq!(
        ok(&mut ctx, "utils.sma([1, null, 3, 4, 5], 2)"),
        json!([null, null, null, 3.5, 4.5])
    );
    assert_eq!(
        ok(&mut ctx, "utils.sma([1, undefined, NaN, Infinity, '5', 7], 1)"),
        json!([1.0, null, null, null, 5.0, 7.0])
    );
    assert_eq!(ok(&mut ctx, "utils.ema([], 3)"), json!([]));
    assert_eq!(ok(&mut ctx, "utils.rsi([1, 2], 14)"), json!([null, null]));
    assert_eq!(ok(&mut ctx, "utils.rsi([1, 2, 3], 2)"), json!([null, null, 100.0]));
    assert_eq!(ok(&mut ctx, "utils.rsi([1, 1, 1], 2)"), json!([null, null, 50.0]));
    assert_eq!(ok(&mut ctx, "utils.mean([])"), Value::Null);
    assert_eq!(ok(&mut ctx, "utils.sum([])"), json!(0.0));
    assert_eq!(ok(&mut ctx, "utils.stdev([1])"), Value::Null);
    assert_eq!(ok(&mut ctx, "utils.correlation([1, 2, 3], [2, 4, 6])"), json!(1.0));
    assert_eq!(ok(&mut ctx, "utils.drawdown([100, 120, 90, 130])"), json!([0.0, 0.0, -0.25, 0.0]));
    assert_eq!(ok(&mut ctx, "utils.maxDrawdown([100, 120, 90, 130])"), json!(-0.25));
    assert_eq!(
        ok(&mut ctx, "utils.cumulative([0.1, null, 0.1], 'return')").as_array().unwrap().len(),
        3
    );
    assert_eq!(
        ok(&mut ctx, "utils.pctChange([100, 110, 0, 5])"),
        json!([null, 0.10000000000000009, -1.0, null])
    );
    assert_eq!(ok(&mut ctx, "utils.vwap([])"), json!([]));
    assert_eq!(ok(&mut ctx, "utils.atr([], 3)"), json!([]));
    // Storage kinds: int, float, mixed, sparse, holes, getters, proxies, array-likes, typed arrays.
    ok(
        &mut ctx,
        r#"
        const eq = (a, b, what) => { if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(what + ': ' + JSON.stringify(a) + ' vs ' + JSON.stringify(b)); };
        const base = [1, 2, 3, 4, 5, 6];
        const expect = utils.sma(base, 2);
        eq(utils.sma([1.5, 2.5, 3.5].map(x => x - 0.5), 2), [null, 1.5, 2.5], 'floats');
        eq(utils.sma([1, 2, 3, 4, 5, 6.0, {close: 1}].slice(0, 6), 2), expect, 'mixed');
        const sparse = []; sparse[5] = 6; for (let i = 0; i < 5; i++) sparse[i] = i + 1;
        eq(utils.sma(sparse, 2), expect, 'sparse filled');
        const holes = [1, 2, , 4]; eq(utils.sma(holes, 1), [1, 2, null, 4], 'holes');
        const longer = [1, 2, 3]; longer.length = 5; eq(utils.sma(longer, 1), [1, 2, 3, null, null], 'length set');
        const getters = base.slice(); let calls = 0;
        Object.defineProperty(getters, 3, { get() { calls++; return 40; } });
        eq(utils.sma(getters, 1), [1, 2, 3, 40, 5, 6], 'getter'); if (calls !== 1) throw new Error('getter calls ' + calls);
        eq(utils.sma(new Proxy(base, {}), 2), expect, 'proxy');
        eq(utils.sma(Object.freeze(base.slice()), 2), expect, 'frozen');
        Object.freeze(utils); eq(utils.sma(base, 2), expect, 'frozen utils');
        eq(utils.sma(new Proxy(base, { get: (t, k) => k === 'length' ? 6 : (typeof k === 'string' && /^\d+$/.test(k) ? t[k] * 10 : t[k]) }), 1), base.map(x => x * 10), 'proxy trap');
        eq(utils.sma({ length: 3, 0: 1, 1: 2, 2: 3 }, 1), [1, 2, 3], 'array-like');
        eq(utils.sma(new Float64Array([1, 2, 3, 4, 5, 6]), 2), expect, 'typed array');
        const valueOf = [1, { valueOf() { return 7; } }, { x: '4' }, 3];
        eq(utils.sma(valueOf, 1, 'x'), [1, null, 4, 3], 'object with field missing');
        eq(utils.sma([1, new Number(7), 3, { x: 2 }], 1, 'x'), [1, null, 3, 2], 'number objects');
        const inherited = Object.create({ close: 9 }); eq(utils.sma([inherited], 1), [9], 'inherited field');
        const rowGetter = { get close() { return 11; } }; eq(utils.sma([rowGetter], 1), [11], 'row getter');
        true
    "#,
    );
}

#[test]
fn argument_errors() {
    let mut ctx = context();
    let e = err(&mut ctx, "utils.sma([1, 2, 3], -3)");
    assert!(
        e.contains("RangeError")
            && e.contains(
                "utils.sma(values, period, field?): period must be a positive integer, got -3"
            ),
        "{e}"
    );
    let e = err(&mut ctx, "utils.sma([1, 2, 3], 2.5)");
    assert!(e.contains("got 2.5"), "{e}");
    let e = err(&mut ctx, "utils.sma([1, 2, 3])");
    assert!(e.contains("TypeError") && e.contains("period is required"), "{e}");
    let e = err(&mut ctx, "utils.sma(5, 3)");
    assert!(e.contains("TypeError") && e.contains("values must be an array, got 5"), "{e}");
    let e = err(&mut ctx, "utils.sma('abc', 3)");
    assert!(e.contains("values must be an array"), "{e}");
    let e = err(&mut ctx, "utils.sma({a: 1}, 3)");
    assert!(e.contains("values must be an array, got an object"), "{e}");
    let e = err(&mut ctx, "utils.sma([{open: 1}], 3)");
    assert!(e.contains("no 'close' field"), "{e}");
    let e = err(&mut ctx, "utils.sma([{Close: 1, time: 2}], 3, 'close')");
    assert!(
        e.contains("no row in values has a field 'close'; the first row has fields: Close, time"),
        "{e}"
    );
    let e = err(&mut ctx, "utils.sma([1, 2, 3], '2')");
    assert!(e.contains("numeric arguments must be numbers, got string \"2\""), "{e}");
    let e = err(&mut ctx, "utils.atr([1, 2, 3])");
    assert!(e.contains("rows must be an array of objects with fields high, low, close"), "{e}");
    let e = err(&mut ctx, "utils.correlation([1, 2], [1, 2, 3])");
    assert!(e.contains("same length"), "{e}");
    let e = err(&mut ctx, "utils.returns([1, 2], 'logarithmic', 'x')");
    assert!(e.contains("unexpected extra string"), "{e}");
    let e = err(&mut ctx, "utils.resample([], '7x')");
    assert!(e.contains("timeframe must be"), "{e}");
    let e = err(&mut ctx, "utils.resample([{time: 1700000000000, close: 1}], '1h')");
    assert!(e.contains("milliseconds"), "{e}");
    let e = err(&mut ctx, "utils.toTime('next tuesday')");
    assert!(e.contains("RangeError") && e.contains("cannot parse date"), "{e}");
    let e = err(&mut ctx, "utils.formatNumber(1, {decimals: -1})");
    assert!(e.contains("decimals must be"), "{e}");
    let e = err(&mut ctx, "utils.pivot([], 'time')");
    assert!(e.contains("columns must be a string"), "{e}");
    let e = err(&mut ctx, "utils.groupBy([], 3)");
    assert!(e.contains("key must be"), "{e}");
}

#[test]
fn resample_group_pivot() {
    let mut ctx = context();
    let rows = r#"[
        {time: 1700000000, open: 1, high: 5, low: 0.5, close: 2, volume: 10},
        {time: 1700000060, open: 2, high: 6, low: 1.5, close: 3, volume: 5},
        {time: 1700003600, open: 3, high: 4, low: 2.5, close: 3.5, volume: 1},
        {time: 1700003660, open: 3.5, high: 9, low: 3, close: 8}
    ]"#;
    let out = ok(&mut ctx, &format!("utils.resample({rows}, '1h')"));
    assert_eq!(
        out,
        json!([
            {"time": 1699999200.0, "open": 1.0, "high": 6.0, "low": 0.5, "close": 3.0, "volume": 15.0},
            {"time": 1700002800.0, "open": 3.0, "high": 9.0, "low": 2.5, "close": 8.0, "volume": 1.0}
        ])
    );
    let out = ok(&mut ctx, &format!("utils.resample({rows}, '1D').map(r => r.time)"));
    assert_eq!(out[0].as_f64(), Some(1699920000.0));
    // 2023-11-14 is a Tuesday: weekly buckets start on Monday 2023-11-13.
    let out =
        ok(&mut ctx, &format!("utils.resample({rows}, '1W').map(r => utils.formatDate(r.time))"));
    assert_eq!(out, json!(["2023-11-13"]));
    let out =
        ok(&mut ctx, &format!("utils.resample({rows}, '1M').map(r => utils.formatDate(r.time))"));
    assert_eq!(out, json!(["2023-11-01"]));

    let trades = r#"[
        {sym: 'BTC', t: 2, px: 10, qty: 1}, {sym: 'ETH', t: 1, px: 5, qty: 2},
        {sym: 'BTC', t: 1, px: 9, qty: 3}, {sym: 'BTC', t: 2, px: 11, qty: 1}
    ]"#;
    let out = ok(
        &mut ctx,
        &format!("const g = utils.groupBy({trades}, 'sym'); [Object.keys(g), g.BTC.length]"),
    );
    assert_eq!(out, json!([["BTC", "ETH"], 3]));
    let out = ok(
        &mut ctx,
        &format!("Object.keys(utils.groupBy({trades}, r => r.t > 1 ? 'late' : 'early'))"),
    );
    assert_eq!(out, json!(["late", "early"]));
    let out = ok(&mut ctx, &format!("utils.groupBy({trades}, 'sym', {{qty: 'sum', px: 'last'}})"));
    assert_eq!(
        out,
        json!([
            {"sym": "BTC", "count": 3, "qty": 5.0, "px": 11},
            {"sym": "ETH", "count": 1, "qty": 2.0, "px": 5}
        ])
    );
    let out = ok(&mut ctx, &format!("utils.pivot({trades}, 't', 'sym', 'px')"));
    assert_eq!(out, json!([{"t": 1, "BTC": 9, "ETH": 5}, {"t": 2, "BTC": 11, "ETH": null}]));
    let out = ok(
        &mut ctx,
        &format!(
            "utils.pivot({trades}, {{index: 't', columns: 'sym', values: 'qty', agg: 'sum'}})"
        ),
    );
    assert_eq!(out, json!([{"t": 1, "BTC": 3.0, "ETH": 2.0}, {"t": 2, "BTC": 2.0, "ETH": null}]));
}

#[test]
fn formatting_and_time() {
    let mut ctx = context();
    let cases = [
        ("utils.formatNumber(1234567.891)", "1,234,567.89"),
        ("utils.formatNumber(-1234.5, 0)", "-1,235"),
        ("utils.formatNumber(0.5, {decimals: 3})", "0.500"),
        ("utils.formatNumber(1234, {compact: true})", "1.2K"),
        ("utils.formatNumber(3400000, {compact: true})", "3.4M"),
        ("utils.formatNumber(5.6e9, {compact: true})", "5.6B"),
        ("utils.formatNumber(-2e12, {compact: true})", "-2T"),
        ("utils.formatNumber(999960, {compact: true})", "1M"),
        ("utils.formatNumber(12, {compact: true})", "12"),
        ("utils.formatNumber(-0.001, 2)", "0.00"),
        ("utils.formatNumber(5, {sign: true})", "+5.00"),
        ("utils.formatNumber(null)", "—"),
        ("utils.formatPercent(0.01234)", "1.23%"),
        ("utils.formatPercent(-0.5, 0)", "-50%"),
        ("utils.formatPercent(0.025, {decimals: 1, sign: true})", "+2.5%"),
        ("utils.formatCurrency(1234.5)", "$1,234.50"),
        ("utils.formatCurrency(-1234.5, 'USD')", "-$1,234.50"),
        ("utils.formatCurrency(1234.5, 'eur', 0)", "€1,235"),
        ("utils.formatCurrency(1500000, 'USD', {compact: true})", "$1.5M"),
        ("utils.formatCurrency(1234.5, 'CHF')", "1,234.50 CHF"),
        ("utils.formatCurrency(1234.5, 'JPY')", "¥1,235"),
        ("utils.formatDate(1700000000)", "2023-11-14"),
        ("utils.formatDate(1700000000, 'YYYY-MM-DD HH:mm')", "2023-11-14 22:13"),
        ("utils.formatDate(1700000000000, 'HH:mm:ss')", "22:13:20"),
        ("utils.formatDate(1700000000, 'ddd D MMM YY [at] H:mm')", "Tue 14 Nov 23 at 22:13"),
        ("utils.formatDate('2024-01-31', 'MM/DD/YYYY')", "01/31/2024"),
        ("utils.formatDate(undefined)", "—"),
    ];
    for (src, want) in cases {
        assert_eq!(ok(&mut ctx, src), json!(want), "{src}");
    }
    let times = [
        ("utils.toTime('2023-11-14')", json!(1699920000.0)),
        ("utils.toTime('2023-11-14T22:13:20Z')", json!(1700000000.0)),
        ("utils.toTime('2023-11-14T23:13:20+01:00')", json!(1700000000.0)),
        ("utils.toTime('2023-11-14 22:13:20')", json!(1700000000.0)),
        ("utils.toTime('2023-11-14 22:13')", json!(1699999980.0)),
        ("utils.toTime('2023-11-14T22:13:20.500')", json!(1700000000.0)),
        ("utils.toTime(1700000000123)", json!(1700000000.0)),
        ("utils.toTime(1700000000)", json!(1700000000.0)),
        ("utils.toTime(new Date(1700000000000))", json!(1700000000.0)),
        ("utils.toTime('1700000000000')", json!(1700000000.0)),
        ("utils.toTime(null)", Value::Null),
    ];
    for (src, want) in times {
        assert_eq!(ok(&mut ctx, src), want, "{src}");
    }
}

#[test]
fn spec_matches_installed_functions() {
    let spec: Value = serde_json::from_str(SPEC_JSON).unwrap();
    let mut documented: Vec<&str> = spec
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            for k in ["name", "signature", "description", "returns", "example"] {
                assert!(e[k].as_str().is_some_and(|s| !s.is_empty()), "spec entry {e} lacks {k}");
            }
            assert!(e["signature"].as_str().unwrap().starts_with(e["name"].as_str().unwrap()));
            e["name"].as_str().unwrap()
        })
        .collect();
    let mut ctx = context();
    let installed = ok(&mut ctx, "Object.keys(utils)");
    let mut installed: Vec<&str> =
        installed.as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    let mut table: Vec<&str> = FUNCTIONS.iter().map(|f| f.0).collect();
    documented.sort_unstable();
    installed.sort_unstable();
    table.sort_unstable();
    assert_eq!(documented, installed);
    assert_eq!(table, installed);
    // Every example runs.
    for e in spec.as_array().unwrap() {
        let ex = e["example"].as_str().unwrap();
        let src = format!(
            "const rows0 = candles(60, 7).map((r, i) => ({{...r, time: 1700000000 + i * 3600}}));\n\
             {{ const candles = rows0; const closes = candles.map(r => r.close);\n{ex}\n}}"
        );
        let mut ctx = context();
        ok(&mut ctx, &src);
    }
}
