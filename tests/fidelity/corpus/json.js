// JSON: stringify with replacers, indentation, toJSON, skipped values, NaN/Infinity/-0,
// parse with reviver, numeric edge cases, escapes, duplicate and __proto__ keys, deep nesting,
// and parse errors.

// @case stringify-replacer-function
const panel = { id: 'p1', secret: 'x', value: 1.23456, nested: { secret: 'y', ok: true }, list: [1, 'two'] };
const seen = [];
const out = JSON.stringify(panel, function (k, v) { seen.push(k); if (k === 'secret') return undefined; if (typeof v === 'number') return Math.round(v * 100) / 100; return v; });
return { out, seen };

// @case stringify-replacer-this-and-root
const calls = [];
JSON.stringify({ a: [10] }, function (k, v) { calls.push([k, Array.isArray(this) ? 'array' : typeof this, Object.keys(this)]); return v; });
return calls;

// @case stringify-replacer-array-allowlist
const o = { b: 1, a: { b: 2, c: 3 }, c: 4, 1: 'one' };
return [JSON.stringify(o, ['a', 'b']), JSON.stringify(o, ['c', 'a', 'c']), JSON.stringify(o, [1, 'b']), JSON.stringify([{ a: 1, z: 2 }], ['z'])];

// @case stringify-indent-variants
const o = { a: [1, { b: 2 }], e: [], f: {} };
return [JSON.stringify(o, null, 2), JSON.stringify(o, null, '--'), JSON.stringify(o, null, 20).split('\n')[1].length, JSON.stringify(o, null, 'abcdefghijklmnop').split('\n')[1], JSON.stringify([1], null, 0), JSON.stringify({ a: 1 }, null, '')];

// @case stringify-tojson-and-dates
const d = new Date(Date.UTC(2024, 1, 29, 12));
const money = { amount: 5, toJSON(key) { return `$${this.amount} (${key})`; } };
return JSON.stringify({ d, money, list: [money], nested: { toJSON() { return undefined; } } });

// @case stringify-skipped-values
const o = { u: undefined, f() {}, s: Symbol('x'), [Symbol('k')]: 1, n: null, arr: [undefined, () => 1, Symbol('y')] };
return { obj: JSON.stringify(o), top: [JSON.stringify(undefined), JSON.stringify(() => 1), JSON.stringify(Symbol())].map(String) };

// @case stringify-nan-infinity-negzero
return JSON.stringify({ nan: NaN, inf: Infinity, ninf: -Infinity, nz: -0, arr: [NaN, -0, 1e21, 1e-7, 0.1 + 0.2, 5e-324] });

// @case stringify-boxed-and-special-objects
return JSON.stringify({ n: new Number(3), s: new String('x'), b: new Boolean(false), re: /x/g, m: new Map([[1, 2]]), err: new Error('e'), args: (function () { return arguments; })(1, 2), ta: new Uint8Array([1, 2]) });

// @case stringify-circular-throws
const state = { panels: [] };
state.panels.push({ parent: state });
return JSON.stringify(state);

// @case stringify-string-escapes
return JSON.stringify(['"quoted"', 'back\\slash', 'nl\n tab\t cr\r', '\u0000\u001f\u007f', '\u2028\u2029', 'é😀', '\ud800', '</script>']);

// @case parse-reviver
const text = '{"t":"2024-01-05T00:00:00.000Z","px":"12.50","rows":[{"v":"1"},{"v":"x"}],"drop":1}';
const out = JSON.parse(text, (k, v) => {
  if (k === 'drop') return undefined;
  if (k === 't') return new Date(v).getUTCDay();
  if (typeof v === 'string' && v !== '' && !isNaN(v)) return Number(v);
  return v;
});
return out;

// @case parse-reviver-order-and-holder
const log = [];
JSON.parse('{"a":{"b":1,"c":[2,3]},"d":4}', function (k, v) { log.push(k === '' ? '<root>' : k); return v; });
return log;

// @case parse-numbers-edge
const r = JSON.parse('[1e400, -1e400, 1e-400, -0, 9007199254740993, 12345678901234567890, 0.1, 1E2, 1.5e+3, 123456789.123456789]');
return r.map((x) => (Object.is(x, -0) ? '-0' : String(x)));

// @case parse-big-ids-lose-precision
const rows = JSON.parse('[{"id":9007199254740993},{"id":"9007199254740993"},{"id":18014398509481985}]');
return rows.map((r) => [typeof r.id, String(r.id)]);

// @case parse-unicode-escapes
const r = JSON.parse('["\\u00e9","\\ud83d\\ude00","\\u2028","\\/","\\b\\f","\\ud800"]');
return { lens: r.map((s) => s.length), codes: r.map((s) => s.charCodeAt(0).toString(16)), emoji: r[1] === '😀' };

// @case parse-duplicate-and-proto-keys
const o = JSON.parse('{"a":1,"a":2,"__proto__":{"x":1},"b":3}');
return { a: o.a, keys: Object.keys(o), ownProto: Object.hasOwn(o, '__proto__'), x: String(o.x), protoIsObj: Object.getPrototypeOf(o) === Object.prototype };

// @case parse-whitespace-and-primitives
return [JSON.parse(' \t\n 42 \r\n'), JSON.parse('"s"'), JSON.parse('null'), JSON.parse('true'), JSON.parse('[]'), JSON.parse('{}')];

// @case parse-trailing-comma-throws
return JSON.parse('{"a":1,}');

// @case parse-single-quotes-throws
return JSON.parse("{'a':1}");

// @case parse-undefined-throws
return JSON.parse(undefined);

// @case parse-leading-zero-and-nan-throws
const bad = ['01', 'NaN', '+1', '.5', '1.', '0x10', '"\t"', '[1,]', ''];
const out = bad.map((t) => { try { JSON.parse(t); return 'ok'; } catch (e) { return e.name; } });
if (out.every((x) => x === 'SyntaxError')) JSON.parse(bad[0]);
return out;

// @case deep-structure-50-levels
let o = { leaf: true };
for (let i = 0; i < 50; i++) o = { level: 50 - i, child: o, arr: [i] };
const text = JSON.stringify(o);
const back = JSON.parse(text);
let depth = 0, cur = back;
while (cur.child) { cur = cur.child; depth++; }
return { len: text.length, depth, leaf: cur.leaf, prefix: text.slice(0, 40) };

// @case deep-arrays-nesting
const text = '['.repeat(60) + '"x"' + ']'.repeat(60);
const v = JSON.parse(text);
return { same: JSON.stringify(v) === text, flat: v.flat(Infinity) };

// @case stringify-key-order-and-integer-keys
return JSON.stringify({ z: 1, 10: 'a', 2: 'b', y: { b: 1, a: 2, 0: 3 } });

// @case roundtrip-dashboard-state
const state = {
  version: 3, title: 'Macro «Overview»', panels: [{ id: 'p1', kind: 'line', series: ['SPY', 'TLT'], range: { from: '2024-01-01', to: null } }],
  theme: { dark: true, accent: '#0af' }, updated: new Date(Date.UTC(2024, 5, 1)), fmt: (x) => x,
};
const s = JSON.stringify(state, null, 1);
return { lines: s.split('\n').length, back: JSON.parse(s), equal: JSON.stringify(JSON.parse(s)) === JSON.stringify(state) };
