// `structuredClone` for sandboxed code (HTML's structured clone, as V8 does it): deep copies of
// plain data, arrays (holes and extra keys kept), Date, RegExp, Map, Set, primitive wrappers,
// errors, ArrayBuffer and typed arrays, with cycles and shared references preserved. Class
// instances become plain objects (own enumerable keys, getters read); functions, symbols,
// promises and weak collections throw a DataCloneError. Evaluated on the first call only
// (crates/sandbox/src/polyfills.rs), so realms that never clone pay nothing.
(() => {
  'use strict';
  const tagOf = (v) => Object.prototype.toString.call(v).slice(8, -1);
  const shown = (v) => {
    if (typeof v === 'function') return String(v);
    if (typeof v === 'symbol') return v.toString();
    return `#<${tagOf(v)}>`;
  };
  const cannot = (v) => {
    const e = new Error(`${shown(v)} could not be cloned.`);
    Object.defineProperty(e, 'name', { value: 'DataCloneError', configurable: true, writable: true });
    return e;
  };
  const errors = { Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError };
  const uncloneable = new Set([
    'Promise', 'WeakMap', 'WeakSet', 'WeakRef', 'Generator', 'AsyncGenerator', 'Module', 'Symbol',
  ]);

  return function structuredClone(value) {
    if (arguments.length === 0) {
      throw new TypeError("Failed to execute 'structuredClone': 1 argument required, but only 0 present.");
    }
    const seen = new Map();
    const copyKeys = (from, to) => {
      for (const k of Object.keys(from)) to[k] = clone(from[k]);
      return to;
    };
    const clone = (v) => {
      if (typeof v === 'symbol' || typeof v === 'function') throw cannot(v);
      if (v === null || typeof v !== 'object') return v;
      if (seen.has(v)) return seen.get(v);
      const tag = tagOf(v);
      let out;
      if (Array.isArray(v)) {
        out = new Array(v.length);
        seen.set(v, out);
        return copyKeys(v, out);
      }
      if (ArrayBuffer.isView(v)) {
        const C = Object.getPrototypeOf(v).constructor;
        const buffer = clone(v.buffer);
        out = tag === 'DataView'
          ? new DataView(buffer, v.byteOffset, v.byteLength)
          : new C(buffer, v.byteOffset, v.length);
        seen.set(v, out);
        return out;
      }
      switch (tag) {
        case 'Date':
          out = new Date(Date.prototype.getTime.call(v));
          break;
        case 'RegExp':
          out = new RegExp(v.source, v.flags);
          break;
        case 'Boolean': case 'Number': case 'String': case 'BigInt':
          out = Object(v.valueOf());
          break;
        case 'ArrayBuffer':
          out = ArrayBuffer.prototype.slice.call(v, 0);
          break;
        case 'Map':
          out = new Map();
          seen.set(v, out);
          for (const [k, x] of Map.prototype.entries.call(v)) out.set(clone(k), clone(x));
          return out;
        case 'Set':
          out = new Set();
          seen.set(v, out);
          for (const x of Set.prototype.values.call(v)) out.add(clone(x));
          return out;
        case 'Error': {
          const name = Object.hasOwn(errors, v.name) ? v.name : 'Error';
          out = new errors[name](v.message);
          seen.set(v, out);
          if ('cause' in v) out.cause = clone(v.cause);
          if (typeof v.stack === 'string') {
            Object.defineProperty(out, 'stack', { value: v.stack, configurable: true, writable: true });
          }
          return out;
        }
        default:
          if (uncloneable.has(tag)) throw cannot(v);
          out = {};
          seen.set(v, out);
          return copyKeys(v, out);
      }
      seen.set(v, out);
      return out;
    };
    return clone(value);
  };
})()
