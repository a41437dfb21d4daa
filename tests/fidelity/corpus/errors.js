// Errors: the classes thrown by common mistakes, message/name/toString, cause, instanceof,
// custom subclasses, rethrow and catch binding forms.

// @case call-undefined-method-throws
const sdk = { data: {} };
return sdk.data.fetch('AAPL');

// @case read-prop-of-undefined-throws
const bars = [];
return bars[0].close;

// @case assign-to-const-throws
const total = 1;
total += 1;
return total;

// @case new-non-constructor-throws
const make = () => ({});
return new make();

// @case stack-overflow-recursion-throws
const depth = (n) => depth(n + 1) + 1;
return depth(0);

// @case in-operator-on-primitive-throws
const s = 'abc';
return 'length' in s;

// @case instanceof-non-callable-throws
return [] instanceof {};

// @case symbol-to-number-throws
return Symbol('x') * 2;

// @case error-properties-and-tostring
const e = new TypeError('bad input');
const plain = new Error();
const named = new Error('m');
named.name = 'CustomName';
return {
  name: e.name, message: e.message, str: String(e), plainStr: String(plain), plainMsg: plain.message, namedStr: named.toString(),
  ownMessage: Object.hasOwn(e, 'message'), ownName: Object.hasOwn(e, 'name'), msgEnum: Object.keys(e),
  noNew: Error('x') instanceof Error, coerced: new Error(42).message, undefMsg: Object.hasOwn(new Error(undefined), 'message'),
};

// @case error-cause-option
const root = new Error('connection reset');
const e = new Error('failed to load AAPL', { cause: root });
const noCause = new Error('x', {});
const undefCause = new Error('x', { cause: undefined });
return { msg: e.message, cause: e.cause.message, same: e.cause === root, has: 'cause' in noCause, hasUndef: 'cause' in undefCause, ownCause: Object.hasOwn(e, 'cause'), keys: Object.keys(e) };

// @case error-hierarchy-instanceof
const errs = [new TypeError(), new RangeError(), new SyntaxError(), new ReferenceError(), new EvalError(), new URIError(), new AggregateError([])];
return errs.map((e) => [e.name, e instanceof Error, e instanceof TypeError, Object.getPrototypeOf(Object.getPrototypeOf(e)) === Error.prototype]);

// @case custom-error-subclass-with-name
class DataError extends Error {
  constructor(msg, { symbol, ...opts } = {}) { super(msg, opts); this.name = 'DataError'; this.symbol = symbol; }
}
class StaleDataError extends DataError { name = 'StaleDataError'; }
try { throw new StaleDataError('stale quote', { symbol: 'TSLA', cause: 'ttl' }); }
catch (e) {
  return { name: e.name, str: `${e}`, symbol: e.symbol, cause: e.cause, chain: [e instanceof StaleDataError, e instanceof DataError, e instanceof Error], json: JSON.stringify(e) };
}

// @case custom-error-thrown-uncaught-throws
class QuotaError extends Error { constructor() { super('quota exceeded'); this.name = 'QuotaError'; } }
throw new QuotaError();

// @case throw-non-error-values
const out = [];
for (const v of ['str', 42, null, undefined, { code: 1 }]) {
  try { throw v; } catch (e) { out.push(e === null ? 'null' : typeof e === 'object' ? JSON.stringify(e) : String(e)); }
}
return out;

// @case catch-without-binding-and-rethrow-wrapping
const load = () => { try { JSON.parse('{bad'); } catch { throw new Error('config unreadable', { cause: 'parse' }); } };
try { load(); } catch (e) { return { msg: e.message, cause: e.cause }; }
