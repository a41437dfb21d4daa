// Numbers and Math: toFixed/toPrecision/toExponential rounding, number-to-string of big and
// small values, parsing, Math functions and their edge cases, -0/NaN, BigInt, float artefacts.

// @case tofixed-rounding-1005
return [(1.005).toFixed(2), (1.045).toFixed(2), (2.5).toFixed(0), (1.45).toFixed(1), (8.345).toFixed(2), (0.5).toFixed(0), (1.5).toFixed(0), (-1.5).toFixed(0), (10.235).toFixed(2)];

// @case tofixed-edge-cases
return [(0).toFixed(2), (-0).toFixed(2), (-0.0001).toFixed(2), (1e21).toFixed(2), (1e20).toFixed(2), (123.456).toFixed(), (0.1 + 0.2).toFixed(20), NaN.toFixed(2), (-Infinity).toFixed(1), (1.23e-10).toFixed(12)];

// @case tofixed-out-of-range-throws
return (1.5).toFixed(101);

// @case toprecision-cases
return [(123.456).toPrecision(4), (0.000123).toPrecision(2), (123456).toPrecision(2), (1.5).toPrecision(1), (2.5).toPrecision(1), (99.99).toPrecision(3), (1e21).toPrecision(3), (0).toPrecision(3), String((5).toPrecision())];

// @case toprecision-zero-throws
return (1).toPrecision(0);

// @case toexponential-cases
return [(123456).toExponential(2), (0.00015).toExponential(1), (1).toExponential(), (-1.5e-7).toExponential(3), (12345.6789).toExponential(), (0).toExponential(2), (1.45).toExponential(1)];

// @case small-number-to-string
return [0.000001234, 0.0000001234, 1e-7, 123e-20, 0.1 + 0.2, 1 / 3, 2 / 3, 5e-324, 0.000001, -1e-7].map(String);

// @case big-number-to-string
return [1e21, 1e20, 123456789012345678901, 2 ** 53, 2 ** 53 + 1, 2 ** 64, Number.MAX_SAFE_INTEGER, Number.MAX_VALUE, 1.7976931348623157e308 * 10, 100 * 1.1].map(String);

// @case tostring-radix
return [(255).toString(16), (255).toString(2), (-255).toString(36), (0.5).toString(2), (3.75).toString(16), (1e21).toString(36).length > 0, (0.1).toString(3).slice(0, 12)];

// @case tostring-bad-radix-throws
return (10).toString(1);

// @case parsefloat-edge-cases
return [Number.parseFloat('3.14abc'), parseFloat('  -0.5e2xyz'), parseFloat('.5'), parseFloat('-.5e-1'), parseFloat('1e'), parseFloat('Infinityx'), parseFloat('0x10'), parseFloat(''), parseFloat('1_000'), parseFloat('١٢')].map(String);

// @case parseint-radix
return [parseInt('08'), parseInt('0x1F'), parseInt('1F', 16), parseInt('101', 2), parseInt('z', 36), parseInt('12px'), parseInt('  -42.9'), parseInt('1e3'), parseInt(0.0000005), parseInt('9', 8), parseInt('10', 37), parseInt(null, 36), parseInt('123', 0)].map(String);

// @case number-constructor-parsing
return [Number(''), Number(' 12 '), Number('12px'), Number('0b101'), Number('0o17'), Number('0x1f'), Number(null), Number(undefined), Number([]), Number([5]), Number([1, 2]), Number(true), Number('1_000'), Number('-0x10'), Number('Infinity'), Number('1e1000')].map(String);

// @case math-round-negative-halves
return [Math.round(-0.5), Math.round(-1.5), Math.round(-2.5), Math.round(0.5), Math.round(1.5), Math.round(2.5), Math.round(-0.4), Math.round(0.49999999999999994)].map((x) => (Object.is(x, -0) ? '-0' : String(x)));

// @case math-max-min-empty-and-nan
return [Math.max(), Math.min(), Math.max(1, NaN), Math.max(1, '3'), Math.min(0, -0), Math.max(-0, 0), Math.max(...[1, 2, undefined]), Math.max(null, -1)].map((x) => (Object.is(x, -0) ? '-0' : String(x)));

// @case nan-and-negative-zero
const nz = -0;
return {
  isNaN: [isNaN('abc'), Number.isNaN('abc'), isNaN(undefined), Number.isNaN(NaN)], objIs: [Object.is(nz, 0), Object.is(0 * -1, -0)],
  str: [String(-0), `${-0}`, (-0).toString(), JSON.stringify(-0), (-0).toFixed(1)], invs: [1 / -0, 1 / 0].map(String), div: String(0 / 0),
};

// @case number-predicates
return [Number.isInteger(5.0), Number.isInteger('5'), Number.isSafeInteger(2 ** 53), Number.isSafeInteger(2 ** 53 - 1), Number.isFinite('5'), isFinite('5'), Number.isInteger(1e300), Number.isInteger(-0)];

// @case epsilon-comparisons
const eq = (a, b) => Math.abs(a - b) < Number.EPSILON;
return { sum: 0.1 + 0.2, strict: 0.1 + 0.2 === 0.3, eps: eq(0.1 + 0.2, 0.3), epsilon: Number.EPSILON, minVal: Number.MIN_VALUE, maxSafe: Number.MAX_SAFE_INTEGER, mul: 0.1 * 3, pct: 1.1 * 100 };

// @case float-accumulation-in-portfolio
const weights = [0.1, 0.2, 0.3, 0.4];
const sum = weights.reduce((a, b) => a + b, 0);
const cents = [19.99, 5.01, 0.1].reduce((a, b) => a + b, 0);
return { sum, eqOne: sum === 1, cents, rounded: Math.round(cents * 100) / 100, fixed: cents.toFixed(2) };

// @case math-fround-hypot-trunc-sign
return [Math.fround(5.5), Math.fround(5.05), Math.fround(2 ** 128), Math.hypot(3, 4), Math.hypot(), Math.hypot(3, 4, '12'), Math.hypot(NaN, Infinity), Math.trunc(-4.7), Math.trunc('-0.2'), Math.sign(-3), Math.sign(-0), Math.sign('x')].map((x) => (Object.is(x, -0) ? '-0' : String(x)));

// @case math-clz32-cbrt-log
return [Math.clz32(1), Math.clz32(0), Math.clz32(-1), Math.clz32(0.5), Math.cbrt(27), Math.cbrt(-8), Math.log10(1000), Math.log2(8), Math.log1p(0), Math.expm1(0), Math.log(-1), Math.sqrt(-0)].map((x) => (Object.is(x, -0) ? '-0' : String(x)));

// @case math-pow-and-exponent-operator
return [2 ** 10, 2 ** -1, (-8) ** (1 / 3), Math.pow(NaN, 0), 1 ** Infinity, Math.pow(-2, 3), 0 ** 0, 2 ** 0.5, (-2) ** 2, 10 ** 21, 10 ** -7].map(String);

// @case math-floor-ceil-negative
return [Math.floor(-1.5), Math.ceil(-1.5), Math.ceil(-0.5), Math.floor(-0), Math.floor(1.9999999999999999), Math.ceil(1.0000000000000002), Math.abs(-0), Math.floor('3.7'), Math.floor(null)].map((x) => (Object.is(x, -0) ? '-0' : String(x)));

// @case bigint-basics
const a = 2n ** 64n, b = BigInt('9007199254740993'), c = BigInt(Number.MAX_SAFE_INTEGER) + 2n;
return { a: a.toString(), b: String(b), c: c.toString(), div: String(7n / 2n), neg: String(-7n / 2n), mod: String(-7n % 3n), typeof: typeof 1n, eq: [1n == 1, 1n === 1, 2n > 1, 0n ? 'truthy' : 'falsy'], hex: (255n).toString(16), asInt: String(BigInt.asIntN(8, 255n)) };

// @case bigint-mix-with-number-throws
const shares = 100n;
return shares * 1.5;

// @case bigint-from-fraction-throws
return String(BigInt(1.5));

// @case bigint-json-stringify-throws
return JSON.stringify({ v: 10n });

// @case number-tolocalestring-en-us
return [(1234567.891).toLocaleString('en-US'), (1234.5).toLocaleString('en-US', { minimumFractionDigits: 2 }), (0.256).toLocaleString('en-US', { style: 'percent' }), (-9876.5).toLocaleString('en-US', { maximumFractionDigits: 0 }), (1e21).toLocaleString('en-US'), NaN.toLocaleString('en-US')];

// @case bitwise-int32-wraparound
return [2 ** 31 | 0, 2 ** 32 + 5 | 0, -1 >>> 0, 1 << 31, 1 << 32, ~~-5.7, 5.9 | 0, 0xffffffff & 0xff, -8 >> 1, -8 >>> 28, (2 ** 53) | 0];

// @case increment-and-compound-on-strings
let s = '5';
s++;
let t = '5';
t += 1;
let u = '5';
u -= 1;
let v = null;
v++;
let w;
w++;
return [s, t, u, v, String(w), typeof s, typeof t];

// @case exponent-nan-and-infinity
const one = 1, none = undefined;
return [String(one ** NaN), String(one ** none), String((-1) ** Infinity), String(1.5 ** NaN), String(Math.pow(1, NaN)), String(one ** -Infinity)];

// @case negative-zero-from-integer-division
const n = -5, z = 0, show = (x) => (Object.is(x, -0) ? '-0' : String(x));
return [0 / -5, z / n, 0 / 5, -0 / 5, 0 / -1197979072, 1 / (z / n), 6 / -3, z * n, z % n].map(show);
