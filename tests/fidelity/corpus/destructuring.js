// Destructuring: object/array patterns, defaults, nesting, rest after nested patterns,
// computed keys, parameters, for-of, swapping, and the errors of destructuring null/undefined.

// @case object-basic-rename-default
const panel = { id: 'p1', title: 'AAPL', height: 300 };
const { id, title: label, width = 640, height = 100 } = panel;
return { id, label, width, height };

// @case array-basic-skip-default
const bar = [1700000000, 10.5, 11.2, 10.1];
const [time, , high, low, close = 'none'] = bar;
return { time, high, low, close };

// @case rest-after-nested-array-pattern
const state = { a: 1, b: [2, 3, 4, 5], c: 6, d: { e: 7 } };
const { a, b: [c, ...d], ...rest } = state;
return { a, c, d, rest, restKeys: Object.keys(rest) };

// @case rest-after-nested-object-pattern
const cfg = { theme: { mode: 'dark', accent: '#f00' }, layout: 'grid', cols: 3, rows: 2 };
const { theme: { mode, ...themeRest }, layout, ...others } = cfg;
return { mode, themeRest, layout, others };

// @case rest-after-two-nested-patterns
const src = { x: { y: 1, z: 2 }, w: [3, 4], v: 5, u: 6 };
const { x: { y }, w: [first], ...tail } = src;
return { y, first, tail };

// @case nested-rest-array-in-array
const rows = [[1, 2, 3], [4, 5, 6], [7, 8, 9]];
const [[h, ...t], , [, ...lastTail]] = rows;
return { h, t, lastTail };

// @case computed-key-pattern
const field = 'close';
const bar = { open: 1, close: 2, volume: 300 };
const { [field]: value, ['vol' + 'ume']: vol, ...others } = bar;
return { value, vol, others };

// @case computed-key-rest-excludes-computed
const key = 'b';
const { [key]: picked, ...rest } = { a: 1, b: 2, c: 3 };
return { picked, rest };

// @case default-only-for-undefined-not-null
const { a = 'A', b = 'B', c = 'C', d = 'D' } = { a: undefined, b: null, c: 0, d: '' };
const [e = 1, f = 2] = [undefined, null];
return { a, b, c, d, e, f };

// @case default-evaluated-lazily-and-in-order
const log = [];
const mk = (name, v) => { log.push(name); return v; };
const { a = mk('a', 1), b = mk('b', 2), c = mk('c', a + 10) } = { b: 5 };
return { a, b, c, log };

// @case default-refers-to-earlier-binding
const [x = 1, y = x * 2, z = x + y] = [];
const { p = 3, q = p ** 2 } = {};
return { x, y, z, p, q };

// @case params-object-with-defaults
function makePanel({ title = 'Untitled', size: { w = 4, h = 3 } = {}, tags = [] } = {}) {
  return { title, w, h, tags };
}
return [makePanel(), makePanel({ title: 'P&L' }), makePanel({ size: { h: 8 }, tags: ['x'] })];

// @case params-array-destructure-arrow
const bars = [[1, 10, 12], [2, 11, 13], [3, 9, 15]];
const spreads = bars.map(([t, lo, hi]) => ({ t, spread: hi - lo }));
return spreads;

// @case params-rest-with-pattern
function f(first, ...[second, third = 'def']) { return { first, second, third }; }
return [f(1), f(1, 2), f(1, 2, 3, 4)];

// @case for-of-entries-destructure
const prices = { AAPL: 190.1, MSFT: 410.25, NVDA: 880 };
const out = [];
for (const [sym, px] of Object.entries(prices)) out.push(`${sym}=${px}`);
return out;

// @case for-of-object-pattern-with-defaults
const positions = [{ sym: 'A', qty: 10 }, { sym: 'B' }, { sym: 'C', qty: 0, px: 5 }];
const out = [];
for (const { sym, qty = 1, px = 100 } of positions) out.push([sym, qty * px]);
return out;

// @case for-of-map-destructure
const m = new Map([['tech', [1, 2]], ['energy', [3]]]);
const out = {};
for (const [sector, [firstId, ...more]] of m) out[sector] = { firstId, more: more.length };
return out;

// @case swap-variables
let a = 1, b = 2, c = 3;
[a, b] = [b, a];
[a, b, c] = [c, a, b];
return { a, b, c };

// @case swap-array-elements
const arr = ['x', 'y', 'z', 'w'];
[arr[0], arr[3]] = [arr[3], arr[0]];
return arr;

// @case assignment-pattern-to-object-props
const target = {};
const res = ({ a: target.alpha, b: target['beta'] = 'dflt' } = { a: 1 });
return { target, res };

// @case assignment-expression-value-is-rhs
let x, y;
const rhs = [1, 2, 3];
const v = [x, y] = rhs;
return { same: v === rhs, x, y };

// @case string-destructure-code-points
const [a, b, ...rest] = 'x😀yz';
const { length, 0: zero } = 'hello';
return { a, b, rest, length, zero };

// @case iterator-destructure-closes-early
const log = [];
const it = {
  [Symbol.iterator]() {
    let i = 0;
    return { next() { log.push('next' + i); return { value: i++, done: false }; }, return() { log.push('return'); return {}; } };
  },
};
const [p, q] = it;
return { p, q, log };

// @case destructure-null-throws
const config = null;
const { theme } = config;
return theme;

// @case destructure-undefined-nested-throws
const state = { user: {} };
const { user: { prefs: { color } } } = state;
return color;

// @case destructure-non-iterable-throws
const [a, b] = { 0: 1, 1: 2, length: 2 };
return [a, b];

// @case param-destructure-missing-arg-throws
function draw({ width, height }) { return width * height; }
return draw();

// @case object-pattern-on-primitives
const { length } = 'abc';
const { toFixed } = 5;
const { valueOf } = true;
return { length, hasToFixed: typeof toFixed, hasValueOf: typeof valueOf };

// @case rest-copies-own-enumerable-only
const proto = { inherited: 1 };
const o = Object.create(proto);
o.own = 2;
Object.defineProperty(o, 'hidden', { value: 3, enumerable: false });
o[Symbol.for('s')] = 4;
const { ...copy } = o;
return { keys: Object.keys(copy), symCount: Object.getOwnPropertySymbols(copy).length, inherited: copy.inherited };

// @case deep-dashboard-state-pick
const dash = {
  meta: { id: 'd1', owner: { name: 'ann', team: 'quant' } },
  panels: [{ id: 'p1', kind: 'line', series: [{ sym: 'SPY' }, { sym: 'QQQ' }] }, { id: 'p2', kind: 'table' }],
};
const { meta: { owner: { team } }, panels: [{ series: [, { sym: secondSym }] }, { kind: secondKind = 'none', series = [] }] } = dash;
return { team, secondSym, secondKind, series };

// @case array-rest-of-holes-and-extra
const [a, ...rest] = [1, , 3, undefined];
const [, , ...empty] = [1];
return { a, rest, restLen: rest.length, has1: 1 in rest, empty };
