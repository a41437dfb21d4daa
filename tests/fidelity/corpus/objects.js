// Objects: key ordering, entries/fromEntries, assign, freeze/seal in sloppy and strict code,
// defineProperty, hasOwn, prototypes, Object.groupBy and structuredClone (chromium).

// @case key-order-integer-like-first
const o = { b: 1, 10: 'ten', a: 2, 2: 'two', '-1': 'neg', '01': 'lead', 1.5: 'frac', [2 ** 32]: 'big' };
return Object.keys(o);

// @case key-order-after-delete-and-readd
const o = { x: 1, y: 2, z: 3 };
delete o.x;
o.x = 4;
o[0] = 'zero';
return { keys: Object.keys(o), json: JSON.stringify(o) };

// @case entries-fromentries-transform
const prices = { AAPL: 190.123, MSFT: 410.5, NVDA: 880.049 };
const rounded = Object.fromEntries(Object.entries(prices).map(([k, v]) => [k.toLowerCase(), Math.round(v * 100) / 100]));
const fromMap = Object.fromEntries(new Map([['a', 1], ['b', 2]]));
const filtered = Object.fromEntries(Object.entries(prices).filter(([, v]) => v > 200));
return { rounded, fromMap, filtered, values: Object.values(prices) };

// @case fromentries-duplicate-keys-last-wins
return Object.fromEntries([['a', 1], ['b', 2], ['a', 3], [1, 'x'], ['1', 'y']]);

// @case assign-semantics
const target = { a: 1, nested: { x: 1 } };
const r = Object.assign(target, { b: 2 }, null, undefined, 'hi', { nested: { y: 2 } });
return { same: r === target, target };

// @case assign-invokes-setters-and-getters
const log = [];
const target = { set v(x) { log.push('set ' + x); } };
const src = { get v() { log.push('get'); return 5; } };
Object.assign(target, src);
return { log, hasOwnDataV: Object.getOwnPropertyDescriptor(target, 'v').set !== undefined };

// @case freeze-sloppy-silently-ignores
const cfg = Object.freeze({ theme: 'dark', nested: { a: 1 } });
cfg.theme = 'light';
cfg.extra = 1;
delete cfg.theme;
cfg.nested.a = 2;
return { cfg, frozen: Object.isFrozen(cfg), nestedFrozen: Object.isFrozen(cfg.nested) };

// @case freeze-strict-write-throws
'use strict';
const cfg = Object.freeze({ theme: 'dark' });
cfg.theme = 'light';
return cfg;

// @case freeze-strict-add-throws
'use strict';
const cfg = Object.freeze({});
cfg.added = true;
return cfg;

// @case freeze-strict-delete-throws
'use strict';
const cfg = Object.seal({ a: 1 });
delete cfg.a;
return cfg;

// @case seal-and-preventextensions
const s = Object.seal({ a: 1 });
s.a = 2; s.b = 3; delete s.a;
const p = Object.preventExtensions({ x: 1 });
p.y = 2; delete p.x;
return { s, p, sealed: Object.isSealed(s), ext: Object.isExtensible(p), frozenEmpty: Object.isFrozen(Object.preventExtensions({})) };

// @case deep-freeze-helper
const deepFreeze = (o) => { Object.values(o).forEach((v) => typeof v === 'object' && v !== null && deepFreeze(v)); return Object.freeze(o); };
const s = deepFreeze({ a: { b: { c: [1, 2] } } });
let err = null;
try { (() => { 'use strict'; s.a.b.c.push(3); })(); } catch (e) { err = e.name; }
return { err, c: s.a.b.c };

// @case defineproperty-defaults-and-descriptor
const o = {};
Object.defineProperty(o, 'id', { value: 7 });
o.id = 8;
const d = Object.getOwnPropertyDescriptor(o, 'id');
return { id: o.id, d, keys: Object.keys(o), json: JSON.stringify(o), names: Object.getOwnPropertyNames(o) };

// @case defineproperty-redefine-nonconfigurable-throws
const o = {};
Object.defineProperty(o, 'k', { value: 1 });
Object.defineProperty(o, 'k', { value: 2 });
return o.k;

// @case defineproperties-accessor
const panel = {};
let w = 4;
Object.defineProperties(panel, {
  width: { get: () => w, set: (v) => { w = v; }, enumerable: true },
  area: { get() { return this.width * 2; } },
});
panel.width = 6;
return { w, area: panel.area, keys: Object.keys(panel), json: JSON.stringify(panel) };

// @case hasown-vs-in-vs-hasownproperty
const proto = { inherited: 1 };
const o = Object.create(proto);
o.own = undefined;
const bare = Object.create(null);
bare.k = 1;
return { ownHasOwn: Object.hasOwn(o, 'own'), inherited: Object.hasOwn(o, 'inherited'), inOp: 'inherited' in o, bare: Object.hasOwn(bare, 'k'), bareHasMethod: typeof bare.hasOwnProperty };

// @case null-proto-object-tostring-throws
const dict = Object.create(null);
dict.a = 1;
return `${dict}`;

// @case object-groupby-sector
// @v8 chromium
const holdings = [{ sym: 'AAPL', sector: 'Tech' }, { sym: 'XOM', sector: 'Energy' }, { sym: 'MSFT', sector: 'Tech' }];
const g = Object.groupBy(holdings, (h) => h.sector);
return { keys: Object.keys(g), tech: g.Tech.map((h) => h.sym), proto: Object.getPrototypeOf(g) === null };

// @case object-groupby-numeric-buckets
// @v8 chromium
const rets = [0.05, -0.02, 0.11, -0.07, 0.0, 0.03];
const g = Object.groupBy(rets, (r, i) => (r > 0 ? 'up' : r < 0 ? 'down' : 'flat'));
return { up: g.up, down: g.down, flat: g.flat, keys: Object.keys(g) };

// @case structuredclone-deep-copy
// @v8 chromium
const state = { panels: [{ id: 1, range: { from: new Date(Date.UTC(2024, 0, 1)) } }], tags: new Set(['a']), m: new Map([['k', [1]]]) };
const c = structuredClone(state);
c.panels[0].id = 2;
return { orig: state.panels[0].id, clone: c.panels[0].id, date: c.panels[0].range.from.toISOString(), isDate: c.panels[0].range.from instanceof Date, set: [...c.tags], m: [...c.m] };

// @case structuredclone-function-throws
// @v8 chromium
return structuredClone({ fmt: () => 1 });

// @case json-roundtrip-clone-loses-types
const state = { d: new Date(Date.UTC(2024, 4, 5)), u: undefined, n: NaN, s: new Set([1]), f() {} };
const c = JSON.parse(JSON.stringify(state));
return { c, keys: Object.keys(c) };

// @case object-is-and-equality
return [Object.is(NaN, NaN), Object.is(0, -0), NaN === NaN, 0 === -0, Object.is('a', 'a'), Object.is({}, {})];

// @case getprototypeof-and-instanceof
class A {}
const a = new A();
const o = Object.create(a);
return { chain: Object.getPrototypeOf(Object.getPrototypeOf(o)) === A.prototype, inst: o instanceof A, isProto: A.prototype.isPrototypeOf(o), arrProto: Object.getPrototypeOf([]) === Array.prototype };

// @case object-entries-on-array-and-string
return { arr: Object.entries(['a', 'b']), str: Object.entries('hi'), num: Object.entries(5), keysArr: Object.keys([9, , 8]) };

// @case object-keys-null-throws
const data = null;
return Object.keys(data);

// @case tostring-tags
return [{}, [], null, undefined, 1, 'x', true, () => 1, new Date(0), /x/, new Map(), new Set(), Promise.resolve(), Symbol('s'), 1n, new Error('e'), Math, JSON].map((v) => Object.prototype.toString.call(v));

// @case structuredclone-cycles-and-shared-refs
// @v8 chromium
const shared = { v: 1 };
const state = { a: shared, b: shared, list: [shared] };
state.self = state;
const c = structuredClone(state);
return { sharedKept: c.a === c.b && c.b === c.list[0], notOrig: c.a !== shared, cycle: c.self === c, v: c.list[0].v };

// @case structuredclone-class-instance-and-accessors
// @v8 chromium
class Pos { qty = 2; get notional() { return this.qty * 10; } }
const o = { p: new Pos(), get g() { return 'computed'; } };
Object.defineProperty(o, 'hidden', { value: 1, enumerable: false });
o[Symbol('s')] = 1;
const c = structuredClone(o);
return { proto: Object.getPrototypeOf(c.p) === Object.prototype, p: c.p, notional: String(c.p.notional), g: Object.getOwnPropertyDescriptor(c, 'g'), keys: Reflect.ownKeys(c).map(String) };

// @case structuredclone-special-values
// @v8 chromium
const src = { nz: -0, nan: NaN, inf: -Infinity, big: 12n, u: undefined, sparse: [1, , 3], re: /a+/gi, err: new RangeError('r'), boxed: new Number(3) };
const c = structuredClone(src);
return {
  nz: Object.is(c.nz, -0), nan: Number.isNaN(c.nan), inf: String(c.inf), big: typeof c.big, hasU: 'u' in c,
  sparseHas1: 1 in c.sparse, sparseLen: c.sparse.length, re: String(c.re), errName: c.err.name, errMsg: c.err.message,
  errInst: c.err instanceof RangeError, boxed: typeof c.boxed, boxedVal: c.boxed.valueOf(),
};

// @case structuredclone-no-argument-throws
// @v8 chromium
return structuredClone();
