// `Array.fromAsync(items, mapFn?, thisArg?)` (ES2024), which Boa 0.22 lacks: awaits each value
// of an async iterable, or of a sync iterable / array-like (awaiting each element), and of
// `mapFn`'s results, in order. Evaluated on the first call only (crates/sandbox/src/polyfills.rs).
(() => {
  'use strict';
  return async function fromAsync(items, mapFn = undefined, thisArg = undefined) {
    if (mapFn !== undefined && typeof mapFn !== 'function') {
      throw new TypeError(`${String(mapFn)} is not a function`);
    }
    if (items === null || items === undefined) {
      throw new TypeError(`${items} is not iterable`);
    }
    const out = [];
    const push = async (v) => {
      const x = await v;
      out.push(mapFn === undefined ? x : await mapFn.call(thisArg, x, out.length));
    };
    if (typeof items[Symbol.asyncIterator] === 'function') {
      for await (const v of items) {
        out.push(mapFn === undefined ? v : await mapFn.call(thisArg, v, out.length));
      }
    } else if (typeof items[Symbol.iterator] === 'function') {
      for (const v of items) await push(v);
    } else {
      const o = Object(items);
      const n = Math.min(Math.max(Math.trunc(Number(o.length)) || 0, 0), Number.MAX_SAFE_INTEGER);
      for (let i = 0; i < n; i++) await push(o[i]);
    }
    return out;
  };
})()
