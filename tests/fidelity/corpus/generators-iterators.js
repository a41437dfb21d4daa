// Generators and the iteration protocol: yield/yield*, return/throw, lazy pipelines,
// custom iterables, iterator closing, and iterator helpers (chromium).

// @case basic-generator-next-values
function* g() { const x = yield 1; const y = yield x * 2; return x + y; }
const it = g();
return [it.next('ignored'), it.next(5), it.next(7), it.next()];

// @case yield-star-delegation-return-value
function* inner() { yield 'a'; yield 'b'; return 'inner-done'; }
function* outer() { const r = yield* inner(); yield r; yield* [1, 2]; yield* 'xy'; }
return [...outer()];

// @case generator-return-runs-finally
const log = [];
function* g() { try { yield 1; yield 2; } finally { log.push('cleanup'); } }
const it = g();
const a = it.next();
const b = it.return('early');
const c = it.next();
return { a, b, c, log };

// @case generator-throw-caught-inside
function* g() { while (true) { try { yield 'ok'; } catch (e) { yield 'caught:' + e; } } }
const it = g();
return [it.next().value, it.throw('boom').value, it.next().value, it.return(9)];

// @case generator-throw-uncaught-throws
function* g() { yield 1; }
const it = g();
it.next();
it.throw(new RangeError('bad bar'));
return 'unreachable';

// @case lazy-window-pipeline
function* windows(xs, n) { for (let i = 0; i + n <= xs.length; i++) yield xs.slice(i, i + n); }
function* map(it, f) { for (const x of it) yield f(x); }
function* take(it, n) { if (n <= 0) return; for (const x of it) { yield x; if (--n === 0) return; } }
const closes = [10, 11, 12, 13, 14, 15, 16];
const sma = map(windows(closes, 3), (w) => w.reduce((a, b) => a + b) / w.length);
return [...take(sma, 3)];

// @case infinite-generator-with-break-closes
const log = [];
function* naturals() { let n = 0; try { while (true) yield n++; } finally { log.push('closed at ' + n); } }
let sum = 0;
for (const n of naturals()) { if (n > 4) break; sum += n; }
return { sum, log };

// @case custom-iterable-class
class BarSeries {
  constructor(bars) { this.bars = bars; }
  [Symbol.iterator]() {
    let i = 0; const bars = this.bars;
    return { next: () => (i < bars.length ? { value: bars[i++].close, done: false } : { value: undefined, done: true }), [Symbol.iterator]() { return this; } };
  }
}
const s = new BarSeries([{ close: 1 }, { close: 2 }, { close: 3 }]);
return { spread: [...s], from: Array.from(s, (x) => x * 10), again: [...s].length };

// @case array-iterator-methods
const a = ['x', 'y', 'z'];
const it = a.entries();
const first = it.next();
return { first, rest: [...it], keys: [...a.keys()], values: [...a.values()], tag: Object.prototype.toString.call(a[Symbol.iterator]()) };

// @case iterator-sees-array-mutation
const a = [1, 2, 3];
const seen = [];
for (const x of a) { seen.push(x); if (x === 1) a.push(4); if (a.length > 5) break; }
return seen;

// @case generator-object-properties
function* g() {}
const it = g();
return {
  selfIter: it[Symbol.iterator]() === it,
  tag: Object.prototype.toString.call(it),
  isGenFn: Object.prototype.toString.call(g),
  hasNext: typeof it.next,
};

// @case generator-method-in-object-and-class
const obj = { *pairs(o) { for (const k of Object.keys(o)) yield [k, o[k]]; } };
class Tree { constructor(v, kids = []) { this.v = v; this.kids = kids; } *walk() { yield this.v; for (const k of this.kids) yield* k.walk(); } }
const t = new Tree(1, [new Tree(2, [new Tree(3)]), new Tree(4)]);
return { pairs: [...obj.pairs({ a: 1, b: 2 })], walk: [...t.walk()] };

// @case generator-new-throws
function* g() {}
return new g();

// @case generator-reentrant-next-throws
let it;
function* g() { it.next(); yield 1; }
it = g();
it.next();
return 'unreachable';

// @case chunked-generator
function* chunks(xs, size) { for (let i = 0; i < xs.length; i += size) yield xs.slice(i, i + size); }
return [...chunks(['AAPL', 'MSFT', 'NVDA', 'AMZN', 'META'], 2)];

// @case zip-generator
function* zip(...its) {
  const iters = its.map((i) => i[Symbol.iterator]());
  while (true) {
    const rs = iters.map((i) => i.next());
    if (rs.some((r) => r.done)) return;
    yield rs.map((r) => r.value);
  }
}
return [...zip([1, 2, 3], 'ab', new Set([true, false, null]))];

// @case iterator-helpers-map-filter-take
// @v8 chromium
function* naturals() { let n = 1; while (true) yield n++; }
const r = naturals().filter((n) => n % 2).map((n) => n * n).take(4).toArray();
return r;

// @case iterator-helpers-drop-reduce-some
// @v8 chromium
const it = [5, 1, 4, 2, 3].values();
const sum = it.drop(2).reduce((a, b) => a + b, 0);
return { sum, some: [1, 2, 3].values().some((x) => x > 2), every: [1, 2].values().every((x) => x > 1), find: [1, 2, 3].values().find((x) => x > 1) };

// @case iterator-from-and-flatmap
// @v8 chromium
const it = Iterator.from({ next() { return this.i < 3 ? { value: this.i++, done: false } : { done: true }; }, i: 0 });
return { flat: it.flatMap((x) => [x, x * 10]).toArray(), isIter: [].values() instanceof Iterator };

// @case spread-return-value-ignored
function* g() { yield 1; return 2; }
const arr = [...g()];
const [a, b] = g();
return { arr, a, b: String(b) };

// @case iterator-helpers-on-map-entries
// @v8 chromium
const px = new Map([['AAPL', 190], ['TSLA', 240], ['NVDA', 880], ['F', 12]]);
const big = px.entries().filter(([, v]) => v > 100).map(([k, v]) => `${k}@${v}`).toArray();
const firstTwo = px.keys().take(2).toArray();
return { big, firstTwo };
