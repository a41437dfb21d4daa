// Classes: public/private fields and methods, static members and blocks, accessors,
// inheritance and super, brand checks (#x in obj), toString/Symbol.toPrimitive, class errors.

// @case fields-and-constructor-order
const log = [];
class Panel {
  a = (log.push('field a'), 1);
  b = this.a + 1;
  constructor(title) { log.push('ctor'); this.title = title; }
}
const p = new Panel('P&L');
return { log, p: { ...p }, keys: Object.keys(p) };

// @case private-field-counter
class Counter {
  #n = 0;
  inc() { return ++this.#n; }
  get value() { return this.#n; }
}
const c = new Counter();
c.inc(); c.inc();
return { value: c.value, keys: Object.keys(c), json: JSON.stringify(c), hasN: 'n' in c };

// @case private-methods-and-accessors
class Series {
  #points = [];
  #sum() { return this.#points.reduce((a, b) => a + b, 0); }
  get #count() { return this.#points.length; }
  add(...xs) { this.#points.push(...xs); return this; }
  mean() { return this.#count ? this.#sum() / this.#count : null; }
}
return { mean: new Series().add(1, 2, 3, 4).mean(), empty: new Series().mean() };

// @case private-in-brand-check
class Money {
  #cents;
  constructor(c) { this.#cents = c; }
  static isMoney(x) { return #cents in x; }
  equals(o) { return Money.isMoney(o) && o.#cents === this.#cents; }
}
const m = new Money(100);
return { a: Money.isMoney(m), b: Money.isMoney({ cents: 100 }), c: m.equals(new Money(100)), d: m.equals({}) };

// @case private-access-on-wrong-object-throws
class Box { #v = 1; static read(o) { return o.#v; } }
return Box.read({ v: 1 });

// @case static-members-and-block
class Registry {
  static count = 0;
  static #items = new Map();
  static defaults;
  static {
    this.defaults = { kind: 'line' };
    Registry.#items.set('seed', 1);
    this.count = Registry.#items.size;
  }
  static register(k) { this.#items.set(k, ++this.count); return this.#items.get(k); }
}
return { a: Registry.register('x'), b: Registry.register('y'), count: Registry.count, defaults: Registry.defaults };

// @case static-inherited-via-this
class Base { static create() { return new this(); } static label = 'base'; who() { return 'base'; } }
class Derived extends Base { who() { return 'derived'; } }
return { who: Derived.create().who(), label: Derived.label, own: Object.hasOwn(Derived, 'label') };

// @case getters-setters-validation
class Range {
  #lo = 0; #hi = 1;
  get lo() { return this.#lo; }
  set lo(v) { if (v > this.#hi) throw new RangeError('lo > hi'); this.#lo = v; }
  get width() { return this.#hi - this.#lo; }
}
const r = new Range();
r.lo = 0.25;
let err = null;
try { r.lo = 5; } catch (e) { err = e.name + ':' + e.message; }
return { lo: r.lo, width: r.width, err, protoKeys: Object.getOwnPropertyNames(Range.prototype) };

// @case inheritance-super-calls
class Indicator {
  constructor(period) { this.period = period; }
  name() { return `IND(${this.period})`; }
  describe() { return `${this.name()} over ${this.period} bars`; }
}
class SMA extends Indicator {
  constructor(period, field = 'close') { super(period); this.field = field; }
  name() { return 'S' + super.name(); }
}
const s = new SMA(20);
return { d: s.describe(), field: s.field, inst: [s instanceof SMA, s instanceof Indicator], proto: Object.getPrototypeOf(SMA) === Indicator };

// @case this-before-super-throws
class A {}
class B extends A { constructor() { this.x = 1; super(); } }
new B();
return 'unreachable';

// @case derived-without-super-throws
class A {}
class B extends A { constructor() { } }
new B();
return 'unreachable';

// @case class-call-without-new-throws
class Panel {}
return Panel();

// @case field-initializer-sees-derived-after-super
const log = [];
class A { constructor() { log.push('A ctor, x=' + this.x); } }
class B extends A { x = 'bx'; constructor() { super(); log.push('B ctor, x=' + this.x); } }
new B();
return log;

// @case overridden-method-called-from-base-ctor
class A { constructor() { this.kind = this.getKind(); } getKind() { return 'A'; } }
class B extends A { tag = 'b'; getKind() { return 'B:' + this.tag; } }
return new B().kind;

// @case to-primitive-and-to-string
class Price {
  constructor(v, ccy) { this.v = v; this.ccy = ccy; }
  [Symbol.toPrimitive](hint) { return hint === 'number' ? this.v : hint === 'string' ? `${this.v.toFixed(2)} ${this.ccy}` : `default:${this.v}`; }
}
const p = new Price(12.5, 'USD');
return { num: +p, str: `${p}`, def: p + '', mul: p * 2, cmp: p > 10, strCall: String(p) };

// @case tostring-valueof-override
class Pct { constructor(x) { this.x = x; } toString() { return (this.x * 100).toFixed(1) + '%'; } valueOf() { return this.x; } }
const p = new Pct(0.1234);
return { tmpl: `${p}`, plus: p + 1, concat: '' + p, arr: [p, new Pct(0.5)].join(' / '), sum: p + new Pct(0.5) };

// @case class-name-and-typeof
class Chart {}
const Anon = class {};
const Named = class Inner { static who() { return Inner.name; } };
return { a: Chart.name, b: Anon.name, c: Named.name, d: Named.who(), t: typeof Chart, len: class { constructor(a, b) {} }.length };

// @case extends-builtin-array
class Bars extends Array {
  closes() { return this.map((b) => b.close); }
  last() { return this[this.length - 1]; }
}
const bars = Bars.from([{ close: 1 }, { close: 3 }, { close: 2 }]);
const up = bars.filter((b) => b.close > 1);
return { closes: bars.closes(), last: bars.last(), upIsBars: up instanceof Bars, len: up.length, isArray: Array.isArray(bars) };

// @case extends-error-with-name
class ValidationError extends Error {
  constructor(field, msg) { super(msg); this.name = 'ValidationError'; this.field = field; }
}
try { throw new ValidationError('qty', 'must be > 0'); }
catch (e) { return { name: e.name, msg: e.message, field: e.field, isErr: e instanceof Error, str: String(e), ctor: e.constructor.name }; }

// @case accessor-on-prototype-not-own
class P { get x() { return 1; } set x(v) {} m() {} static s() {} }
const p = new P();
return { own: Object.keys(p), protoNames: Object.getOwnPropertyNames(P.prototype), enumerable: Object.keys(P.prototype), staticNames: Object.getOwnPropertyNames(P).sort() };

// @case computed-method-names-and-symbol-iterator
const prefix = 'get';
class Table {
  rows = [[1, 'a'], [2, 'b']];
  [prefix + 'Rows']() { return this.rows.length; }
  *[Symbol.iterator]() { for (const r of this.rows) yield r[1]; }
}
const t = new Table();
return { n: t.getRows(), items: [...t] };

// @case private-static-method-and-this
class Fmt {
  static #pad(n) { return String(n).padStart(2, '0'); }
  static hhmm(mins) { return `${Fmt.#pad(Math.floor(mins / 60))}:${this.#pad(mins % 60)}`; }
}
return [Fmt.hhmm(5), Fmt.hhmm(615), Fmt.hhmm(1439)];

// @case mixin-pattern
const Serializable = (B) => class extends B { toJSON() { return { type: this.constructor.name, ...this }; } };
const Timestamped = (B) => class extends B { ts = 1700000000; };
class Base { id = 'x'; }
class Widget extends Serializable(Timestamped(Base)) { kind = 'w'; }
return JSON.parse(JSON.stringify(new Widget()));

// @case super-property-in-object-literal
const base = { greet() { return 'base'; } };
const child = { __proto__: base, greet() { return 'child>' + super.greet(); } };
return child.greet();

// @case getter-setter-inheritance-override
class A { get v() { return 'A'; } }
class B extends A { get v() { return 'B>' + super.v; } }
class C extends B { set v(x) {} }
return { b: new B().v, c: String(new C().v) };

// @case private-name-duplicate-instances-independent
class Acc { #bal = 0; dep(x) { this.#bal += x; return this; } get bal() { return this.#bal; } }
const a = new Acc().dep(10).dep(5), b = new Acc().dep(1);
return [a.bal, b.bal];
