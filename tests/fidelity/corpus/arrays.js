// Arrays: bar transforms (returns, moving averages, drawdowns), ES2022+ methods (at, findLast,
// toSorted, toSpliced, with, ...), sort stability and comparators, holes, reduce edge cases,
// Array.from, length semantics, and the RangeError/TypeError mistakes.

// @case bars-returns-and-log-returns
const bars = [100, 102, 99, 105, 104].map((close, i) => ({ time: 1700000000 + i * 86400, close }));
const rets = bars.slice(1).map((b, i) => +(b.close / bars[i].close - 1).toFixed(6));
const logs = bars.slice(1).map((b, i) => Math.round(Math.log(b.close / bars[i].close) * 1e6) / 1e6);
return { rets, logs };

// @case simple-moving-average
const closes = [10, 11, 12, 13, 12, 11, 14, 15];
const sma = (xs, n) => xs.map((_, i) => (i + 1 < n ? null : xs.slice(i + 1 - n, i + 1).reduce((a, b) => a + b, 0) / n));
return { sma3: sma(closes, 3), sma5: sma(closes, 5) };

// @case exponential-moving-average
const closes = [22.27, 22.19, 22.08, 22.17, 22.18, 22.13, 22.23, 22.43, 22.24, 22.29];
const k = 2 / (5 + 1);
const ema = closes.reduce((acc, c, i) => { acc.push(i === 0 ? c : c * k + acc[i - 1] * (1 - k)); return acc; }, []);
return ema.map((v) => Number(v.toFixed(4)));

// @case max-drawdown
const equity = [100, 110, 105, 120, 90, 95, 130, 80, 85];
let peak = -Infinity, maxDD = 0, at = -1;
equity.forEach((v, i) => { peak = Math.max(peak, v); const dd = (peak - v) / peak; if (dd > maxDD) { maxDD = dd; at = i; } });
return { maxDD: +maxDD.toFixed(4), at, underwater: equity.map((v, i) => +((v / Math.max(...equity.slice(0, i + 1))) - 1).toFixed(3)) };

// @case ohlc-resample-weekly
const bars = Array.from({ length: 10 }, (_, i) => ({ day: i, open: 10 + i, high: 12 + i, low: 9 + i, close: 11 + i, volume: 100 * (i + 1) }));
const weeks = [];
for (let i = 0; i < bars.length; i += 5) {
  const w = bars.slice(i, i + 5);
  weeks.push({ open: w[0].open, high: Math.max(...w.map((b) => b.high)), low: Math.min(...w.map((b) => b.low)), close: w.at(-1).close, volume: w.reduce((s, b) => s + b.volume, 0) });
}
return weeks;

// @case at-negative-and-out-of-range
const a = [1, 2, 3];
return [a.at(0), a.at(-1), a.at(-3), a.at(5), a.at(-4), a.at(1.7), a.at('1'), a.at(NaN)].map(String);

// @case findlast-and-findlastindex
const bars = [{ t: 1, v: 5 }, { t: 2, v: 9 }, { t: 3, v: 4 }, { t: 4, v: 10 }];
return {
  last: bars.findLast((b) => b.v > 6), lastIdx: bars.findLastIndex((b) => b.v > 6),
  none: String(bars.findLast((b) => b.v > 99)), noneIdx: bars.findLastIndex((b) => b.v > 99),
};

// @case tosorted-toreversed-do-not-mutate
const a = [3, 1, 10, 2];
const s = a.toSorted();
const sn = a.toSorted((x, y) => x - y);
const r = a.toReversed();
return { a, s, sn, r };

// @case tospliced-and-with
const a = ['a', 'b', 'c', 'd'];
return { spliced: a.toSpliced(1, 2, 'X'), ins: a.toSpliced(-1, 0, 'Y'), w: a.with(-1, 'Z'), a };

// @case with-out-of-range-throws
return [1, 2, 3].with(3, 'x');

// @case tosorted-on-holes
const a = [3, , 1];
const s = a.toSorted();
return { s, len: s.length, has2: 2 in s };

// @case sort-default-is-lexicographic
return { nums: [10, 9, 1, 100, 25].sort(), mixed: [undefined, 'b', 3, null, 'a'].sort().map(String), neg: [-1, -10, 2].sort() };

// @case sort-numeric-comparator
const xs = [5, -3, 2.5, 1e3, -0.5, 0];
return { asc: [...xs].sort((a, b) => a - b), desc: [...xs].sort((a, b) => b - a) };

// @case sort-stability-by-sector
const rows = [
  { sym: 'XOM', sector: 'Energy' }, { sym: 'AAPL', sector: 'Tech' }, { sym: 'CVX', sector: 'Energy' },
  { sym: 'MSFT', sector: 'Tech' }, { sym: 'JPM', sector: 'Fin' }, { sym: 'NVDA', sector: 'Tech' }, { sym: 'BAC', sector: 'Fin' },
];
return rows.sort((a, b) => a.sector.localeCompare(b.sector)).map((r) => r.sym);

// @case sort-stability-large
const items = Array.from({ length: 200 }, (_, i) => ({ k: i % 3, i }));
items.sort((a, b) => a.k - b.k);
const stable = items.every((x, j) => j === 0 || items[j - 1].k < x.k || items[j - 1].i < x.i);
return { stable, first: items.slice(0, 3).map((x) => x.i), boundary: items.slice(66, 69).map((x) => x.i) };

// @case sort-multi-key-comparator
const pos = [{ s: 'B', pnl: 5 }, { s: 'A', pnl: 5 }, { s: 'C', pnl: -2 }, { s: 'D', pnl: 10 }, { s: 'a', pnl: 5 }];
pos.sort((x, y) => y.pnl - x.pnl || (x.s < y.s ? -1 : x.s > y.s ? 1 : 0));
return pos.map((p) => p.s);

// @case sort-undefined-and-holes-last
const a = [3, undefined, , 1, undefined, 2];
a.sort((x, y) => x - y);
return { json: a, len: a.length, has5: 5 in a, has4: 4 in a };

// @case sort-strings-with-localecompare
const names = ['banana', 'Apple', 'cherry', 'apple', 'Banana'];
return { lc: [...names].sort((a, b) => a.localeCompare(b)), def: [...names].sort(), ci: [...names].sort((a, b) => a.toLowerCase() < b.toLowerCase() ? -1 : a.toLowerCase() > b.toLowerCase() ? 1 : 0) };

// @case sort-comparator-returning-strings-and-bigint-sign
const a = [3, 1, 2, 5, 4];
const r = [...a].sort((x, y) => (x < y ? '-1' : x > y ? '1' : '0'));
const d = [{ v: 3n }, { v: 1n }, { v: 2n }].sort((x, y) => Number(x.v - y.v)).map((o) => String(o.v));
return { r, d };

// @case includes-vs-indexof-nan
const xs = [1, NaN, -0];
return { inc: xs.includes(NaN), idx: xs.indexOf(NaN), incZero: xs.includes(0), idxZero: xs.indexOf(0), lastIdx: xs.lastIndexOf(-0) };

// @case holes-behaviour-in-methods
const a = [1, , 3];
const visited = [];
a.forEach((x, i) => visited.push(i));
return {
  visited, mapped: a.map((x) => x * 2), mappedHas1: 1 in a.map((x) => x), filtered: a.filter(() => true),
  joined: a.join('-'), keys: [...a.keys()], objKeys: Object.keys(a), includesUndef: a.includes(undefined), indexOfUndef: a.indexOf(undefined),
};

// @case flat-and-flatmap
const nested = [1, [2, [3, [4, [5]]]], [], [[]]];
return {
  f1: nested.flat(), f2: nested.flat(2), fi: nested.flat(Infinity),
  fm: ['a b', 'c'].flatMap((s) => s.split(' ')), fmDeep: [1, 2].flatMap((x) => [[x]]), holes: [1, , [2, , 3]].flat(),
};

// @case copywithin-and-fill
const a = [1, 2, 3, 4, 5];
const b = new Array(4).fill(0);
return { cw: [...a].copyWithin(0, 3), cw2: [...a].copyWithin(-2, 0, 2), fill: [...a].fill(9, 1, -1), b, sharedFill: new Array(2).fill([]).map((x, i, arr) => x === arr[0]) };

// @case array-from-with-map-and-length
return {
  range: Array.from({ length: 5 }, (_, i) => i * i), str: Array.from('héllo'),
  set: Array.from(new Set([1, 1, 2])), mapEntries: Array.from(new Map([[1, 'a']]).entries()),
  arrayLike: Array.from({ length: 3, 0: 'x', 2: 'z' }).map(String), of: Array.of(7, 8), of1: Array.of(3).length, ctor1: new Array(3).length,
};

// @case reduce-empty-no-initial-throws
const returns = [];
return returns.reduce((a, b) => a + b);

// @case reduce-single-element-no-callback-call
let calls = 0;
const r = [42].reduce(() => { calls++; return 0; });
const r2 = [].reduce((a, b) => a + b, 'init');
const r3 = [1, 2, 3].reduceRight((acc, x) => acc + x, '');
return { r, calls, r2, r3 };

// @case new-array-negative-length-throws
return new Array(-1);

// @case length-assignment-truncates
const a = [1, 2, 3, 4, 5];
a.length = 2;
const b = [1];
b.length = 3;
const c = [];
c[4] = 'x';
return { a, b, bHas1: 1 in b, cLen: c.length, c };

// @case invalid-length-assignment-throws
const a = [];
a.length = 2 ** 32;
return a;

// @case group-by-sector-with-reduce
const holdings = [
  { sym: 'AAPL', sector: 'Tech', mv: 1500 }, { sym: 'XOM', sector: 'Energy', mv: 700 },
  { sym: 'MSFT', sector: 'Tech', mv: 1200 }, { sym: 'JPM', sector: 'Fin', mv: 900 },
];
const bySector = holdings.reduce((acc, h) => { (acc[h.sector] ??= []).push(h.sym); return acc; }, {});
const totals = Object.entries(holdings.reduce((acc, h) => ({ ...acc, [h.sector]: (acc[h.sector] ?? 0) + h.mv }), {})).sort((a, b) => b[1] - a[1]);
return { bySector, totals };

// @case splice-return-and-mutation
const a = ['a', 'b', 'c', 'd', 'e'];
const removed = a.splice(1, 2, 'X', 'Y', 'Z');
const removed2 = a.splice(-2);
const removed3 = a.splice(1, 0);
return { a, removed, removed2, removed3 };

// @case slice-negative-and-concat-spreadable
const a = [1, 2, 3, 4];
const spreadable = { length: 2, 0: 'x', 1: 'y', [Symbol.isConcatSpreadable]: true };
return { s1: a.slice(-2), s2: a.slice(1, -1), s3: a.slice(3, 1), c: a.concat(5, [6, [7]], spreadable) };

// @case every-some-on-empty
return { every: [].every((x) => x > 0), some: [].some((x) => x > 0), find: String([].find(() => true)), findIndex: [].findIndex(() => true) };

// @case join-tostring-with-null-undefined
return { j: [1, null, undefined, 2, [3, [4]]].join(), ts: String([[1, 2], [3]]), empty: [].join(), nested: [null].toString(), obj: [{}].join() };

// @case array-isarray-and-typeof
return [Array.isArray([]), Array.isArray({ length: 0 }), Array.isArray(new Array(2)), typeof [], Object.prototype.toString.call([])];

// @case indexof-fromindex-and-lastindexof
const a = ['x', 'y', 'x', 'y', 'x'];
return [a.indexOf('x', 1), a.indexOf('x', -2), a.lastIndexOf('x', -2), a.lastIndexOf('y', 0), a.indexOf('z')];

// @case entries-keys-with-destructure-loop
const syms = ['SPY', 'QQQ', 'IWM'];
const out = [];
for (const [i, s] of syms.entries()) out.push(`${i + 1}. ${s}`);
return out;

// @case mutation-during-foreach-and-map
const a = [1, 2, 3];
const seen = [];
a.forEach((x, i) => { seen.push(x); if (i === 0) { a.push(99); a[2] = 30; } });
const b = [1, 2, 3, 4];
const m = b.map((x, i) => { if (i === 0) b.pop(); return x; });
return { seen, a, m, mLen: m.length, has3: 3 in m };

// @case percentile-and-median
const xs = [7, 1, 3, 9, 5, 2, 8];
const sorted = xs.toSorted((a, b) => a - b);
const q = (p) => { const pos = (sorted.length - 1) * p; const lo = Math.floor(pos), hi = Math.ceil(pos); return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo); };
return { median: q(0.5), p25: q(0.25), p90: +q(0.9).toFixed(3), xs };

// @case top-n-movers-table
const quotes = [
  { sym: 'AAPL', prev: 190, last: 193.8 }, { sym: 'TSLA', prev: 250, last: 237.5 }, { sym: 'NVDA', prev: 880, last: 912 },
  { sym: 'AMZN', prev: 178, last: 178 }, { sym: 'META', prev: 500, last: 485 },
];
const rows = quotes.map((q) => ({ sym: q.sym, chg: (q.last - q.prev) / q.prev })).toSorted((a, b) => Math.abs(b.chg) - Math.abs(a.chg));
return rows.slice(0, 3).map((r) => `${r.sym} ${(r.chg >= 0 ? '+' : '') + (r.chg * 100).toFixed(2)}%`);

// @case call-method-on-undefined-element-throws
const panels = [{ title: 'a' }];
return panels[1].title.toUpperCase();
