// Strings: padding/formatting for tables, replaceAll, at, split with regex/limit, localeCompare,
// normalize, String.raw, code points and surrogate pairs, trimming, templates, case mapping,
// isWellFormed/toWellFormed, and string method mistakes.

// @case pad-table-columns
const rows = [['AAPL', 190.1, 1.25], ['NVDA', 880, -0.5], ['T', 17.04, 12]];
return rows.map(([s, px, chg]) => `${s.padEnd(6)}|${px.toFixed(2).padStart(9)}|${((chg > 0 ? '+' : '') + chg.toFixed(2) + '%').padStart(8, '.')}`);

// @case padstart-edge-cases
return ['5'.padStart(3, '0'), 'abc'.padStart(2), 'x'.padStart(6, 'ab'), 'x'.padStart(3, ''), '7'.padEnd(4, '-='), 'y'.padStart(-1, '0'), String(42).padStart(5.9, '*')];

// @case replaceall-and-replace
const tpl = 'Hello {name}, your {item} is {status}. {name}!';
return {
  all: tpl.replaceAll('{name}', 'Ann'), first: tpl.replace('{name}', 'Ann'),
  dollar: '1,234,567'.replaceAll(',', '$&$&'), fn: 'a-b-c'.replaceAll('-', (m, off) => `[${off}]`),
  empty: 'abc'.replaceAll('', '.'), special: 'price: 5'.replace('5', '$$5.00'),
};

// @case replaceall-nonglobal-regex-throws
return 'a.b.c'.replaceAll(/\./, '-');

// @case at-and-charat
const s = 'ticker';
return [s.at(-1), s.at(0), String(s.at(99)), s.charAt(99), s.charAt(-1), s[-1] === undefined, s.at(-6)];

// @case split-regex-limit-and-captures
return {
  ws: ' a  b\tc \n'.trim().split(/\s+/), lim: 'a,b,c,d'.split(',', 2), cap: '2024-01-05'.split(/(-)/),
  empty: ''.split(','), emptySep: 'abc'.split(''), noSep: 'abc'.split(), lim0: 'a,b'.split(',', 0), regexEmpty: 'abc'.split(/(?:)/),
  csv: 'AAPL,190.1,,1e3'.split(',').map((x) => (x === '' ? null : isNaN(x) ? x : Number(x))),
};

// @case split-emoji-by-empty-string
const s = 'a😀b';
return { split: s.split('').length, spread: [...s].length, length: s.length, codeUnits: s.split('').map((c) => c.charCodeAt(0).toString(16)) };

// @case localecompare-basics
return ['a'.localeCompare('b'), 'b'.localeCompare('a'), 'a'.localeCompare('a'), 'a'.localeCompare('B'), 'A'.localeCompare('a'), 'résumé'.localeCompare('resume'), '10'.localeCompare('9'), '10'.localeCompare('9', undefined, { numeric: true })].map(Math.sign);

// @case localecompare-sensitivity
const sens = (a, b, s) => Math.sign(a.localeCompare(b, 'en', { sensitivity: s }));
return { base: sens('a', 'Á', 'base'), accent: sens('a', 'á', 'accent'), caseS: sens('a', 'A', 'case'), variant: sens('a', 'A', 'variant') };

// @case normalize-forms
const composed = '\u00e9', decomposed = 'e\u0301';
return { eq: composed === decomposed, nfc: composed.normalize('NFC') === decomposed.normalize('NFC'), lens: [composed.length, decomposed.length, decomposed.normalize().length, composed.normalize('NFD').length], nfkc: '\ufb01'.normalize('NFKC'), nfkcLen: '①'.normalize('NFKC') };

// @case normalize-bad-form-throws
return 'x'.normalize('nfc');

// @case string-raw
const path = String.raw`C:\new\table\x`;
const sub = String.raw`a${1 + 1}\n${'b'}`;
const fromObj = String.raw({ raw: ['x', 'y', 'z'] }, 1, 2, 3);
return { path, len: path.length, sub, fromObj };

// @case codepointat-and-surrogates
const s = '€😀';
return {
  len: s.length, cp0: s.codePointAt(0).toString(16), cp1: s.codePointAt(1).toString(16), cp2: s.codePointAt(2).toString(16),
  cc1: s.charCodeAt(1).toString(16), fromCp: String.fromCodePoint(0x1f4c8, 0x20ac), fromCc: String.fromCharCode(0xd83d, 0xde00) === '😀',
};

// @case fromcodepoint-invalid-throws
return String.fromCodePoint(0x110000);

// @case lone-surrogate-handling
const lone = 'a\ud83d';
return { len: lone.length, json: JSON.stringify(lone), slice: JSON.stringify('😀'.slice(0, 1)), cpa: lone.codePointAt(1), enc: encodeURIComponent('é') };

// @case encodeuri-lone-surrogate-throws
return encodeURIComponent('\ud800');

// @case trim-variants
const s = '\u00a0\t  PnL \n\u2003';
return { t: s.trim(), ts: JSON.stringify(s.trimStart()), te: JSON.stringify(s.trimEnd()), bom: '\ufeffx'.trim(), nbspOnly: '\u00a0'.trim().length };

// @case template-literal-expressions
const bar = { sym: 'SPY', close: 501.2, chg: -0.0123 };
const n = null, u = undefined, arr = [1, [2, 3]], obj = { a: 1 };
return [
  `${bar.sym} closed at ${bar.close.toFixed(2)} (${bar.chg >= 0 ? '▲' : '▼'} ${Math.abs(bar.chg * 100).toFixed(2)}%)`,
  `${n}|${u}|${arr}|${obj}|${1 / 0}|${-0}|${[]}|${10n}`,
  `multi
line\ttab`,
];

// @case template-with-symbol-throws
const tag = Symbol('x');
return `${tag}`;

// @case case-mapping-special-chars
return {
  upper: ['straße', 'ﬁ', 'ǆ', 'ς', 'i̇'].map((s) => s.toUpperCase()),
  lower: ['İ', 'ΑΣ', 'ΑΣ Β', 'Σ'].map((s) => s.toLowerCase()),
  lens: ['ß'.toUpperCase().length, 'İ'.toLowerCase().length],
  turkish: 'i'.toLocaleUpperCase('tr-TR'), trLower: 'I'.toLocaleLowerCase('tr'),
};

// @case iswellformed-towellformed
const bad = 'ab\ud800c';
return { a: 'abc'.isWellFormed(), b: bad.isWellFormed(), fixed: bad.toWellFormed(), fixedCode: bad.toWellFormed().charCodeAt(2).toString(16) };

// @case includes-startswith-endswith
const s = 'Revenue Q1 2024';
return [s.includes('Q1'), s.includes('q1'), s.startsWith('Rev'), s.startsWith('Q1', 8), s.endsWith('2024'), s.endsWith('Q1', 10), s.includes('')];

// @case startswith-regex-throws
return 'abc'.startsWith(/a/);

// @case substring-slice-substr
const s = 'dashboard';
return [s.slice(-5), s.slice(2, -2), s.substring(5, 2), s.substring(-3), s.slice(5, 2), s.substr(-5, 3), s.substr(2)];

// @case repeat-and-repeat-errors
let err = null;
try { 'ab'.repeat(-1); } catch (e) { err = e.name; }
let err2 = null;
try { 'ab'.repeat(Infinity); } catch (e) { err2 = e.name; }
return { r: '-'.repeat(5), z: 'x'.repeat(0), frac: 'ab'.repeat(2.9), err, err2, emptyInf: ''.repeat(3) };

// @case string-comparison-operators
return ['a' < 'b', 'B' < 'a', '10' < '9', 10 < 9, '10' < 9, 'abc' < 'abd', 'Z' < 'a', '' < 'a', 'a' < 'aa'];

// @case number-string-coercion-in-concat
return ['3' + 4 + 5, 3 + 4 + '5', '10' - 2, '5' * '2', '1.5' / 0.5, +'  42  ', +'', +'1e3', +'0x1f', +'1,000', -'-5', [] + [], [] + {}, 1 + null, 'a' + undefined].map(String);

// @case indexof-search-lastindexof
const s = 'the quick brown fox jumps over the lazy dog';
return [s.indexOf('the'), s.indexOf('the', 1), s.lastIndexOf('the'), s.search(/[aeiou]{2}/), s.indexOf(''), s.lastIndexOf(''), s.indexOf('o', -5)];

// @case method-on-number-not-string-throws
const sym = 42;
return sym.toUpperCase();

// @case slugify-and-title-case
const titles = ['  Net P&L — YTD ', 'Top 10 Movers (US)', 'Crème brûlée index'];
const slug = (s) => s.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase().trim().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
const title = (s) => s.trim().toLowerCase().replace(/\b\w/g, (c) => c.toUpperCase());
return titles.map((t) => [slug(t), title(t)]);

// @case concat-and-string-constructor
return [String(null), String(undefined), String(Symbol('s')), String([1, [2]]), String({}), 'a'.concat(1, null, [2, 3]), String(-0), String(123456789012345680000), String(1e21), typeof new String('x'), new String('ab').length];
