// Spread in arrays, calls and object literals: copying/merging dashboard state,
// getters and key ordering, spreading strings/Sets/Maps/iterators, and spread errors.

// @case object-merge-later-wins
const defaults = { theme: 'light', refresh: 60, cols: 2 };
const user = { theme: 'dark', cols: undefined };
const merged = { ...defaults, ...user, version: 2 };
return { merged, keys: Object.keys(merged), colsIn: 'cols' in merged };

// @case shallow-copy-shares-nested
const state = { panels: [{ id: 1 }], meta: { v: 1 } };
const copy = { ...state, meta: { ...state.meta, v: 2 } };
copy.panels.push({ id: 2 });
return { orig: state, copy, samePanels: copy.panels === state.panels };

// @case nested-immutable-update
const state = { panels: { p1: { title: 'A', series: ['SPY'] }, p2: { title: 'B', series: [] } } };
const next = { ...state, panels: { ...state.panels, p1: { ...state.panels.p1, series: [...state.panels.p1.series, 'QQQ'] } } };
return { before: state.panels.p1.series, after: next.panels.p1.series, p2Same: next.panels.p2 === state.panels.p2 };

// @case spread-null-undefined-primitives-in-object
const o = { ...null, ...undefined, ...42, ...true, ...'hi', ...[7, 8] };
return o;

// @case spread-invokes-getters-once
let n = 0;
const src = { get counter() { n++; return n * 10; }, plain: 1 };
const c = { ...src };
const desc = Object.getOwnPropertyDescriptor(c, 'counter');
return { c, n, isData: 'value' in desc };

// @case spread-integer-keys-ordering
const a = { b: 1, 2: 'two', a: 2, 1: 'one' };
const c = { z: 0, ...a, 0: 'zero' };
return Object.keys(c);

// @case array-spread-string-and-set
const chars = [...'a😀b'];
const uniq = [...new Set([3, 1, 3, 2, 1])];
const entries = [...new Map([['k', 1]])];
return { chars, uniq, entries };

// @case array-spread-holes-become-undefined
const holey = [1, , 3];
const filled = [...holey];
return { has1: 1 in filled, len: filled.length, json: filled };

// @case call-spread-math-max
const closes = [101.2, 99.8, 105.5, 103.1];
return { max: Math.max(...closes), min: Math.min(...closes), withExtra: Math.max(0, ...[], 3) };

// @case spread-generator
function* range(a, b) { for (let i = a; i < b; i++) yield i; }
return { arr: [...range(0, 5)], sum: Math.max(...range(1, 4)), nested: [0, ...range(5, 7), 9] };

// @case spread-non-iterable-object-throws
const bars = { 0: 'a', length: 1 };
return [...bars];

// @case spread-undefined-in-array-throws
const series = undefined;
return [...series];

// @case spread-call-null-throws
function sum(...xs) { return xs.reduce((a, b) => a + b, 0); }
return sum(...null);

// @case spread-symbol-keys-copied
const s = Symbol('tag');
const o = { [s]: 'v', a: 1 };
const c = { ...o };
return { viaSym: c[s], syms: Object.getOwnPropertySymbols(c).map(String) };

// @case conditional-spread-pattern
const build = (opts) => ({
  type: 'line',
  ...(opts.log && { scale: 'log' }),
  ...(opts.legend ? { legend: { position: 'bottom' } } : {}),
  series: [...(opts.base ? ['base'] : []), ...opts.extra],
});
return [build({ log: true, legend: false, extra: [] }), build({ log: false, legend: true, base: 1, extra: ['x'] })];
