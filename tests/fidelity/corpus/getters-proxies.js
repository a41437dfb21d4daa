// Object-literal getters/setters, Object.defineProperty accessors, Proxy traps and Reflect.

// @case literal-getter-setter
const panel = {
  _w: 4,
  get width() { return this._w; },
  set width(v) { this._w = Math.max(1, Math.min(12, v)); },
  get area() { return this._w * 3; },
};
panel.width = 20;
const a = panel.area;
panel.width = -5;
return { a, w: panel.width, json: JSON.stringify(panel), desc: typeof Object.getOwnPropertyDescriptor(panel, 'area').get };

// @case lazy-memo-getter
let computed = 0;
const stats = {
  data: [1, 2, 3, 4],
  get mean() {
    computed++;
    const v = this.data.reduce((a, b) => a + b) / this.data.length;
    Object.defineProperty(this, 'mean', { value: v, enumerable: true });
    return v;
  },
};
return { m1: stats.mean, m2: stats.mean, computed };

// @case proxy-get-default-values
const defaults = new Proxy({ a: 1 }, { get: (t, k) => (k in t ? t[k] : `missing:${String(k)}`) });
return { a: defaults.a, b: defaults.b, json: JSON.stringify(defaults), keys: Object.keys(defaults) };

// @case proxy-set-validation-and-log
const log = [];
const state = new Proxy({}, {
  set(t, k, v) { if (typeof v !== 'number') return false; log.push(`${k}=${v}`); t[k] = v; return true; },
});
state.x = 1;
state.y = 'bad';
return { log, state: { ...state } };

// @case proxy-set-false-throws-in-strict
'use strict';
const frozen = new Proxy({}, { set: () => false });
(function () { 'use strict'; frozen.x = 1; })();
return 'unreachable';

// @case proxy-has-deleteproperty-ownkeys
const hidden = new Set(['_secret']);
const target = { a: 1, _secret: 2, b: 3 };
const p = new Proxy(target, {
  has: (t, k) => !hidden.has(k) && k in t,
  ownKeys: (t) => Reflect.ownKeys(t).filter((k) => !hidden.has(k)),
  deleteProperty: (t, k) => (hidden.has(k) ? false : delete t[k]),
});
const del = Reflect.deleteProperty(p, '_secret');
return { keys: Object.keys(p), inSecret: '_secret' in p, del, entries: Object.entries(p) };

// @case proxy-apply-and-construct
const calls = [];
const fn = new Proxy(function (a, b) { return a + b; }, { apply(t, thisArg, args) { calls.push(args); return t(...args) * 10; } });
class Pt { constructor(x) { this.x = x; } }
const P2 = new Proxy(Pt, { construct(t, args) { return new t(args[0] * 2); } });
return { r: fn(1, 2), calls, x: new P2(5).x, typeofFn: typeof fn };

// @case reflect-api-basics
const o = { a: 1 };
Reflect.defineProperty(o, 'b', { value: 2, enumerable: false });
return {
  has: Reflect.has(o, 'b'), keys: Reflect.ownKeys(o), get: Reflect.get(o, 'b'),
  setRO: Reflect.set(o, 'b', 5), b: o.b, proto: Reflect.getPrototypeOf(o) === Object.prototype,
  apply: Reflect.apply(Math.max, null, [1, 5, 2]),
};

// @case proxy-invariant-violation-throws
const t = {};
Object.defineProperty(t, 'fixed', { value: 1, writable: false, configurable: false });
const p = new Proxy(t, { get: () => 2 });
return p.fixed;

// @case revocable-proxy-throws-after-revoke
const { proxy, revoke } = Proxy.revocable({ a: 1 }, {});
const before = proxy.a;
revoke();
return [before, proxy.a];
