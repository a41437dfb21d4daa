// Map and Set: insertion order, SameValueZero keys, object keys, iteration while mutating,
// conversions, WeakMap basics, Map.groupBy and the ES2025 Set methods (chromium).

// @case map-insertion-order-and-update
const m = new Map();
m.set('b', 1).set('a', 2).set(1, 'num').set('1', 'str');
m.set('b', 10);
m.delete('a');
m.set('a', 3);
return { entries: [...m], size: m.size, keys: [...m.keys()].map((k) => typeof k + ':' + k) };

// @case map-samevaluezero-keys
const m = new Map([[NaN, 'nan'], [0, 'zero']]);
return { nan: m.get(NaN), negZero: m.get(-0), hasNegZero: m.has(-0), keyIsPosZero: Object.is([...m.keys()][1], 0), size: m.size };

// @case map-object-keys-by-identity
const a = { id: 1 }, b = { id: 1 };
const m = new Map([[a, 'A']]);
return { a: m.get(a), b: String(m.get(b)), sizeAfter: m.set(b, 'B').size };

// @case set-dedupe-and-order
const syms = ['SPY', 'QQQ', 'SPY', 'IWM', 'QQQ', 'DIA'];
const s = new Set(syms);
s.delete('SPY');
s.add('SPY');
return { values: [...s], size: s.size, has: s.has('IWM'), fromStr: [...new Set('mississippi')].join('') };

// @case set-nan-and-zero
const s = new Set([NaN, NaN, 0, -0, '0']);
return { size: s.size, vals: [...s].map(String) };

// @case map-iteration-sees-additions
const m = new Map([['a', 1]]);
const seen = [];
for (const [k, v] of m) { seen.push(k); if (k === 'a') { m.set('b', 2); m.delete('a'); m.set('a', 3); } if (seen.length > 5) break; }
return seen;

// @case map-foreach-args-and-this
const m = new Map([['x', 1]]);
const out = [];
m.forEach(function (v, k, map) { out.push([v, k, map === m, this.tag]); }, { tag: 'T' });
const s = new Set(['y']);
s.forEach((v, k) => out.push([v, k]));
return out;

// @case map-to-object-and-json
const m = new Map([['AAPL', { px: 190 }], ['MSFT', { px: 410 }]]);
return { json: JSON.stringify(m), obj: Object.fromEntries(m), arrJson: JSON.stringify([...m]), setJson: JSON.stringify(new Set([1])) };

// @case counting-with-map
const trades = ['AAPL', 'TSLA', 'AAPL', 'NVDA', 'TSLA', 'AAPL'];
const counts = trades.reduce((m, s) => m.set(s, (m.get(s) ?? 0) + 1), new Map());
const top = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
return top;

// @case set-operations-manual
const a = new Set([1, 2, 3, 4]), b = new Set([3, 4, 5]);
return { union: [...new Set([...a, ...b])], inter: [...a].filter((x) => b.has(x)), diff: [...a].filter((x) => !b.has(x)) };

// @case map-constructor-bad-entries-throws
return new Map([1, 2]);

// @case weakmap-primitive-key-throws
const wm = new WeakMap();
wm.set('key', 1);
return wm.get('key');

// @case weakmap-basics
const wm = new WeakMap(), ws = new WeakSet();
const k = {};
wm.set(k, 'meta');
ws.add(k);
return { get: wm.get(k), has: wm.has({}), wsHas: ws.has(k), del: wm.delete(k), after: wm.has(k) };

// @case map-groupby-sector
// @v8 chromium
const holdings = [{ sym: 'AAPL', sector: 'Tech', mv: 3 }, { sym: 'XOM', sector: 'Energy', mv: 1 }, { sym: 'MSFT', sector: 'Tech', mv: 2 }];
const g = Map.groupBy(holdings, (h) => h.sector);
return [...g].map(([k, v]) => [k, v.reduce((s, h) => s + h.mv, 0), v.map((h) => h.sym)]);

// @case set-methods-union-intersection
// @v8 chromium
const a = new Set([1, 2, 3, 4]), b = new Set([3, 4, 5]);
return {
  union: [...a.union(b)], inter: [...a.intersection(b)], diff: [...a.difference(b)], sym: [...a.symmetricDifference(b)],
  sub: new Set([3]).isSubsetOf(a), sup: a.isSupersetOf(new Set([1, 2])), disj: a.isDisjointFrom(new Set([9])),
};

// @case set-methods-with-map-arg
// @v8 chromium
const s = new Set(['a', 'b']);
const m = new Map([['b', 1], ['c', 2]]);
return { inter: [...s.intersection(m)], union: [...s.union(m)] };

// @case watchlist-diff-with-set-methods
// @v8 chromium
const before = new Set(['AAPL', 'MSFT', 'TSLA']);
const after = new Set(['MSFT', 'NVDA', 'AAPL', 'AMZN']);
return { added: [...after.difference(before)], removed: [...before.difference(after)], kept: [...before.intersection(after)].sort(), changed: !before.isSubsetOf(after) };

// @case map-groupby-object-keys
// @v8 chromium
const desks = { equity: { name: 'EQ' }, rates: { name: 'RT' } };
const trades = [{ id: 1, desk: desks.equity }, { id: 2, desk: desks.rates }, { id: 3, desk: desks.equity }];
const g = Map.groupBy(trades, (t) => t.desk);
return { size: g.size, equity: g.get(desks.equity).map((t) => t.id), byCopy: String(g.get({ name: 'EQ' })) };
