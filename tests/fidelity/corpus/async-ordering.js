// Microtask ordering and async control flow: promise jobs vs await, async function return
// of promises, thenables, Promise combinators, rejections, for await and async generators.
// No timers exist in the sandbox; everything here settles through microtasks only.

// @case sync-before-microtasks
const log = [];
Promise.resolve().then(() => log.push('then1'));
log.push('sync');
await null;
log.push('after-await');
await Promise.resolve();
return log;

// @case then-chains-interleave
const log = [];
const a = Promise.resolve().then(() => log.push('a1')).then(() => log.push('a2')).then(() => log.push('a3'));
const b = Promise.resolve().then(() => log.push('b1')).then(() => log.push('b2')).then(() => log.push('b3'));
await Promise.all([a, b]);
return log;

// @case await-vs-then-ordering
const log = [];
async function f() { log.push('f start'); await undefined; log.push('f after await 1'); await undefined; log.push('f after await 2'); }
Promise.resolve().then(() => log.push('p1')).then(() => log.push('p2')).then(() => log.push('p3'));
const done = f();
log.push('sync end');
await done;
await Promise.resolve();
return log;

// @case async-return-promise-extra-ticks
const log = [];
async function retPromise() { return Promise.resolve('x'); }
async function retValue() { return 'y'; }
retPromise().then(() => log.push('retPromise'));
retValue().then(() => log.push('retValue'));
Promise.resolve().then(() => log.push('t1')).then(() => log.push('t2')).then(() => log.push('t3')).then(() => log.push('t4'));
await new Promise((r) => Promise.resolve().then().then().then().then().then().then(r));
return log;

// @case resolve-with-promise-extra-ticks
const log = [];
const inner = Promise.resolve('v');
new Promise((res) => res(inner)).then(() => log.push('outer'));
Promise.resolve().then(() => log.push('t1')).then(() => log.push('t2')).then(() => log.push('t3'));
await new Promise((r) => Promise.resolve().then().then().then().then().then(r));
return log;

// @case thenable-adoption
const log = [];
const thenable = { then(res, rej) { log.push('then called'); res(42); } };
const p = Promise.resolve(thenable);
log.push('sync');
const v = await p;
const w = await { then(r) { r('direct'); } };
return { log, v, w };

// @case promise-all-order-preserved
const delays = [3, 1, 2];
const tick = (n, v) => { let p = Promise.resolve(); for (let i = 0; i < n; i++) p = p.then(() => {}); return p.then(() => v); };
const log = [];
const res = await Promise.all(delays.map((d, i) => tick(d, 'r' + i).then((v) => { log.push(v); return v; })));
return { res, completion: log };

// @case promise-all-rejects-first
const tick = (n) => { let p = Promise.resolve(); for (let i = 0; i < n; i++) p = p.then(() => {}); return p; };
try {
  await Promise.all([tick(3).then(() => 'ok'), tick(2).then(() => { throw new TypeError('fetch failed'); }), tick(1).then(() => { throw new RangeError('first'); })]);
  return 'no';
} catch (e) { return { name: e.name, msg: e.message }; }

// @case promise-allsettled-shape
const r = await Promise.allSettled([Promise.resolve(1), Promise.reject(new Error('nope')), 3]);
return r.map((x) => (x.status === 'fulfilled' ? x : { status: x.status, reason: x.reason.message }));

// @case promise-any-first-fulfilled
const tick = (n, v, fail) => { let p = Promise.resolve(); for (let i = 0; i < n; i++) p = p.then(() => {}); return p.then(() => { if (fail) throw new Error(v); return v; }); };
const v = await Promise.any([tick(1, 'a', true), tick(3, 'b'), tick(2, 'c')]);
return v;

// @case promise-any-all-reject-aggregate
try {
  await Promise.any([Promise.reject(new Error('e1')), Promise.reject(new TypeError('e2'))]);
  return 'no';
} catch (e) {
  return { name: e.name, isAgg: e instanceof AggregateError, errors: e.errors.map((x) => x.name + ':' + x.message), hasMsg: typeof e.message };
}

// @case promise-any-empty-throws
await Promise.any([]);
return 'unreachable';

// @case promise-race-settles-first
const tick = (n, v) => { let p = Promise.resolve(); for (let i = 0; i < n; i++) p = p.then(() => {}); return p.then(() => v); };
const a = await Promise.race([tick(3, 'slow'), tick(1, 'fast'), tick(2, 'mid')]);
const b = await Promise.race([tick(2, 'x'), Promise.reject(new Error('r'))]).catch((e) => 'rejected:' + e.message);
return { a, b };

// @case rejection-caught-by-later-catch
const p = Promise.reject(new Error('late'));
await null;
const r = await p.catch((e) => 'handled:' + e.message);
return r;

// @case await-rejection-throws
async function load() { throw new SyntaxError('bad payload'); }
await load();
return 'unreachable';

// @case finally-passthrough
const log = [];
const a = await Promise.resolve(1).finally(() => { log.push('f1'); return 99; });
const b = await Promise.reject(new Error('x')).finally(() => log.push('f2')).catch((e) => e.message);
const c = await Promise.resolve(2).finally(() => { throw new Error('from finally'); }).catch((e) => e.message);
return { a, b, c, log };

// @case then-non-function-args-passthrough
const a = await Promise.resolve(5).then(null).then(undefined, 7).then((x) => x * 2);
const b = await Promise.reject(new Error('e')).then((x) => x).catch(null).then(null, (e) => 'c:' + e.message);
return { a, b };

// @case for-await-over-promises-and-values
const out = [];
for await (const x of [Promise.resolve('a'), 'b', Promise.resolve('c')]) out.push(x);
return out;

// @case async-generator-pipeline
async function* fetchPages(n) { for (let i = 1; i <= n; i++) { await null; yield { page: i, rows: [i * 10, i * 10 + 1] }; } }
const rows = [];
for await (const { page, rows: r } of fetchPages(3)) rows.push(...r.map((x) => `${page}:${x}`));
return rows;

// @case async-generator-return-and-finally
const log = [];
async function* g() { try { yield 1; yield 2; } finally { await null; log.push('cleanup'); } }
for await (const v of g()) { log.push('got ' + v); break; }
return log;

// @case async-iterator-protocol-manual
const it = (async function* () { yield 'x'; return 'done'; })();
const r1 = await it.next();
const r2 = await it.next();
const r3 = await it.next();
return [r1, r2, r3, Object.prototype.toString.call(it)];

// @case sequential-vs-parallel-order
const log = [];
const job = async (name, n) => { for (let i = 0; i < n; i++) await null; log.push(name); return name; };
for (const [n, k] of [['s1', 2], ['s2', 1]]) await job(n, k);
await Promise.all([job('p1', 3), job('p2', 1), job('p3', 2)]);
return log;

// @case async-arrow-in-map-returns-promises
const ids = [3, 1, 2];
const ps = ids.map(async (id) => ({ id, sq: id * id }));
const isPromises = ps.every((p) => p instanceof Promise);
const res = await Promise.all(ps);
return { isPromises, res };

// @case aggregate-error-constructor
const e = new AggregateError([new Error('a'), 'b'], 'many failed', { cause: 'root' });
return { name: e.name, msg: e.message, n: e.errors.length, cause: e.cause, str: String(e), isErr: e instanceof Error };

// @case promise-withresolvers
// @v8 chromium
const { promise, resolve, reject } = Promise.withResolvers();
const log = [];
promise.then((v) => log.push('v=' + v));
resolve('ready');
reject(new Error('ignored'));
await promise;
return { log, types: [typeof resolve, typeof reject] };

// @case array-fromasync
// @v8 chromium
async function* gen() { yield 1; yield 2; }
const a = await Array.fromAsync(gen(), (x) => x * 3);
const b = await Array.fromAsync([Promise.resolve('p'), 'q']);
return { a, b };

// @case unhandled-then-await-order-with-try
const log = [];
async function step(n) { log.push('start ' + n); try { await null; if (n === 2) throw new Error('step ' + n); log.push('ok ' + n); } catch (e) { log.push('caught ' + e.message); } finally { log.push('fin ' + n); } }
await Promise.all([step(1), step(2), step(3)]);
return log;

// @case withresolvers-request-queue
// @v8 chromium
const pending = new Map();
const request = (id) => { const { promise, resolve } = Promise.withResolvers(); pending.set(id, resolve); return promise; };
const a = request('q1'), b = request('q2');
pending.get('q2')('second');
pending.get('q1')('first');
const order = [];
a.then((v) => order.push(v));
b.then((v) => order.push(v));
await Promise.all([a, b]);
return order;
