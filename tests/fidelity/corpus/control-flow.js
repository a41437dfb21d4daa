// Control flow: labeled break/continue, switch fallthrough and strictness, try/finally
// completion overrides, comma and void operators, typeof of undeclared names, loops.

// @case labeled-break-nested-search
const grid = [[1, 2, 3], [4, 50, 6], [7, 8, 90]];
let found = null;
outer: for (let r = 0; r < grid.length; r++) {
  for (let c = 0; c < grid[r].length; c++) {
    if (grid[r][c] > 10) { found = [r, c]; break outer; }
  }
}
return found;

// @case labeled-continue-skip-row
const rows = [[1, -1, 2], [3, 4], [-5, 6]];
const sums = [];
rows: for (const row of rows) {
  let s = 0;
  for (const x of row) { if (x < 0) continue rows; s += x; }
  sums.push(s);
}
return sums;

// @case labeled-block-break
const log = [];
validate: {
  log.push('start');
  if (log.length) break validate;
  log.push('never');
}
log.push('after');
return log;

// @case switch-fallthrough-and-default-position
const classify = (x) => {
  const out = [];
  switch (x) {
    case 1: out.push('one');
    case 2: out.push('two'); break;
    default: out.push('default');
    case 3: out.push('three');
  }
  return out;
};
return [classify(1), classify(2), classify(3), classify(9)];

// @case switch-strict-equality
const kind = (v) => { switch (v) { case 1: return 'number 1'; case '1': return 'string 1'; case null: return 'null'; case undefined: return 'undef'; case NaN: return 'nan'; default: return 'other'; } };
return [kind(1), kind('1'), kind(null), kind(undefined), kind(NaN), kind(true)];

// @case switch-true-pattern-and-block-scope
const bucket = (chg) => {
  switch (true) {
    case chg > 0.05: { const label = 'surge'; return label; }
    case chg > 0: { const label = 'up'; return label; }
    case chg === 0: return 'flat';
    default: return 'down';
  }
};
return [0.1, 0.01, 0, -0.2].map(bucket);

// @case try-finally-return-override
const f = () => { try { return 'try'; } finally { return 'finally'; } };
const g = () => { try { throw new Error('x'); } catch (e) { return 'catch'; } finally { return 'finally-wins'; } };
const h = () => { try { throw new Error('lost'); } finally { return 'swallowed'; } };
return [f(), g(), h()];

// @case try-finally-side-effect-after-return-value
const log = [];
const f = () => { let x = 1; try { return x; } finally { x = 2; log.push('finally x=' + x); } };
return { r: f(), log };

// @case finally-break-in-loop-cancels-throw
const out = [];
for (let i = 0; i < 3; i++) {
  try { if (i === 1) throw new Error('boom'); out.push('ok' + i); } finally { if (i === 1) { out.push('finally-continue'); continue; } }
}
return out;

// @case finally-throw-replaces-error-throws
try { throw new TypeError('first'); } finally { throw new RangeError('second'); }

// @case comma-and-void-operators
let i = 0;
const a = (i++, i++, i);
const b = void 0;
const c = void 'anything';
const arr = [];
for (let x = 0, y = 10; x < y; x += 3, y -= 3) arr.push([x, y]);
return { a, b: String(b), c: String(c), arr };

// @case typeof-undeclared-and-tdz
const t1 = typeof totallyUndeclaredVariable;
const t2 = typeof undefined;
let err = null;
try { typeof laterLet; let laterLet = 1; } catch (e) { err = e.name; }
return { t1, t2, err, t3: typeof null, t4: typeof function () {}, t5: typeof class {}, t6: typeof Symbol(), t7: typeof 1n };

// @case undeclared-read-throws
return totallyUndeclaredVariable + 1;

// @case loops-do-while-for-in-order
const o = { b: 1, a: 2, 1: 'x' };
const forIn = [];
for (const k in o) forIn.push(k);
let n = 0;
do { n++; } while (n < 0);
const inherited = [];
for (const k in Object.create({ p: 1 }, { own: { value: 1, enumerable: true } })) inherited.push(k);
return { forIn, n, inherited, forInArray: (() => { const r = []; for (const i in ['x', 'y']) r.push(typeof i); return r; })() };

// @case short-circuit-and-conditional-chains
const log = [];
const t = (v) => (log.push(v), v);
const r1 = t(0) && t('never');
const r2 = t('') || t(null) || t('last');
const r3 = t(1) ? t('yes') : t('no');
return { r1, r2, r3, log };

// @case exception-in-loop-with-continue-accumulate
const inputs = ['1.5', 'abc', '{"x":2}', '[', '3'];
const ok = [], bad = [];
for (const s of inputs) {
  try { const v = JSON.parse(s); ok.push(v); } catch (e) { bad.push(`${s}:${e.name}`); continue; } finally { ok.length > 10 && ok.pop(); }
}
return { ok, bad };
