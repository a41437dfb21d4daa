// Regular expressions: named groups, lookbehind, sticky and global lastIndex, unicode
// property escapes, matchAll, replace with functions and $<name>, dotAll, split, flags, errors.

// @case named-groups-parse-date
const m = '2024-03-15'.match(/(?<y>\d{4})-(?<m>\d{2})-(?<d>\d{2})/);
return { groups: { ...m.groups }, index: m.index, full: m[0], len: m.length, protoNull: Object.getPrototypeOf(m.groups) === null };

// @case named-group-replace-dollar-name
return ['2024-03-15', '1999-12-31'].map((s) => s.replace(/(?<y>\d{4})-(?<m>\d{2})-(?<d>\d{2})/, '$<d>/$<m>/$<y>'));

// @case replace-dollar-patterns
const s = 'AAPL:190';
return [s.replace(/(\w+):(\d+)/, '$2 ($1)'), s.replace(/\d+/, '[$&]'), s.replace(/:/, "$`|$'"), s.replace(/(\w+)/, '$$1'), s.replace(/(\w+)/, '$3'), s.replace(/(\w+)/, '$01'), s.replace(/x?/, '$<n>')];

// @case replace-with-function-args
const calls = [];
const out = 'a1b22c333'.replace(/(?<letter>[a-z])(\d+)/g, (...args) => {
  const groups = args.at(-1);
  calls.push({ match: args[0], p1: args[1], p2: args[2], offset: args[3], input: args[4].length, groups: { ...groups } });
  return args[2].length;
});
return { out, calls };

// @case lookbehind-currency-amounts
const text = 'Costs: $120, €45, $7.50 and 300 USD';
return { usd: text.match(/(?<=\$)\d+(\.\d+)?/g), notDollar: text.match(/(?<![$\d.])\b\d+\b/g), neg: 'x1 y2 x3'.match(/(?<!x)\d/g) };

// @case lookahead-thousands-separator
const fmt = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
return [fmt(1234567), fmt(999), fmt(1000), fmt(-9876543), fmt('1234567.891')];

// @case sticky-flag-tokenizer
const re = /\s*(\d+|[-+*/()])/y;
const src = '12 + 3*(4 - 1)';
const tokens = [];
let m;
while ((m = re.exec(src))) tokens.push(m[1]);
return { tokens, lastIndex: re.lastIndex, sticky: re.sticky, flags: re.flags };

// @case sticky-does-not-skip
const re = /foo/y;
re.lastIndex = 1;
const a = re.test('xfoo');
const b = re.test('xfoo');
const c = re.lastIndex;
return { a, b, c, search: 'xfoo'.search(/foo/y) };

// @case global-lastindex-gotcha
const re = /AAPL/g;
const rows = ['AAPL', 'AAPL', 'AAPL', 'AAPL'];
return { tests: rows.map((r) => re.test(r)), last: re.lastIndex };

// @case exec-loop-with-global
const re = /(\w+)=(\d+)/g;
const s = 'a=1, bb=22, ccc=333';
const out = [];
let m;
while ((m = re.exec(s)) !== null) out.push([m[1], +m[2], m.index, re.lastIndex]);
return out;

// @case matchall-iterator
const s = 'SPY 501.2 QQQ 430.55 IWM 199';
const out = [...s.matchAll(/(?<sym>[A-Z]{3})\s(?<px>[\d.]+)/g)].map((m) => [m.groups.sym, Number(m.groups.px), m.index]);
return out;

// @case matchall-nonglobal-throws
return [...'abc'.matchAll(/b/)];

// @case unicode-property-escapes
const s = 'Ärger ñ 東京 123 ٣ αβγ!';
return {
  letters: s.match(/\p{L}+/gu), upper: s.match(/\p{Lu}/gu), nums: s.match(/\p{Nd}+/gu), han: s.match(/\p{Script=Han}+/gu),
  greek: /\p{Script=Greek}/u.test(s), punct: s.match(/\p{P}/gu),
};

// @case unicode-flag-surrogates
const s = '😀x';
return { noU: s.match(/^.$/) === null, noU2: s.match(/^..x$/) !== null, u: /^.x$/u.test(s), len: s.match(/./gu).length, classU: /[😀]/u.test(s), escape: /\u{1F600}/u.test(s) };

// @case emoji-property
return { emoji: 'Up 📈 down 📉 ok'.match(/\p{Extended_Pictographic}/gu), count: [...'a📈b'.matchAll(/\p{Emoji_Presentation}/gu)].length };

// @case dotall-flag
const s = 'line1\nline2';
return { noS: /line1.line2/.test(s), s: /line1.line2/s.test(s), dotAll: /x/s.dotAll, crlf: /a.b/.test('a\rb'), ls: /a.b/.test('a\u2028b') };

// @case multiline-anchors
const csv = 'sym,px\nAAPL,1\nMSFT,2\n';
return { m: csv.match(/^[A-Z]+/gm), noM: csv.match(/^[A-Z]+/g), ends: csv.match(/\d$/gm) };

// @case split-with-regex-captures-and-limit
return ['a1b2c3'.split(/\d/), 'a1b2c3'.split(/(\d)/), 'a1b2c3'.split(/\d/, 2), 'one, two;three'.split(/[,;]\s*/), 'abc'.split(/(b)?/), 'Camel CaseString'.split(/(?=[A-Z])/)];

// @case regexp-constructor-and-escaping
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const sym = 'BRK.B';
const re = new RegExp(`^${escape(sym)}$`, 'i');
return { src: re.source, flags: re.flags, a: re.test('brk.b'), b: re.test('BRKXB'), str: String(new RegExp('/', 'g')), empty: String(new RegExp('')), copy: new RegExp(/ab/g, 'i').flags };

// @case invalid-regex-throws
return new RegExp('(unclosed');

// @case invalid-flags-throws
return new RegExp('a', 'gg');

// @case backreferences-and-named-backref
return { dup: 'hello bookkeeper'.match(/(\w)\1/g), named: /(?<q>['"]).*?\k<q>/.exec(`say "hi" and 'bye'`)[0], html: '<b>x</b><i>y</b>'.match(/<(\w+)>[^<]*<\/\1>/g) };

// @case greedy-lazy-and-quantifiers
const s = '<a><b></b></a>';
return { greedy: s.match(/<.+>/)[0], lazy: s.match(/<.+?>/g), braces: 'aaaa'.match(/a{2,3}/g), optional: 'color colour'.match(/colou?r/g), possessiveLike: 'aaa'.match(/a*?/)[0].length };

// @case regex-v-flag-set-operations
const re = /[\p{L}--[a-z]]/gv;
return { m: 'aBcÄd'.match(re), flags: re.flags, unicodeSets: re.unicodeSets, inter: 'abc123'.match(/[\w&&\d]/gv) };

// @case case-insensitive-unicode
return { i: /straße/i.test('STRASSE'), iu: /ſ/iu.test('s'), i2: /ſ/i.test('s'), k: /\u212a/iu.test('k'), greek: /σ/i.test('Σ') };

// @case parse-log-lines-to-panel-rows
const log = `2024-03-01 09:30:00 BUY AAPL 100 @ 180.25
2024-03-01 09:31:10 SELL MSFT 50 @ 410.00
garbage line
2024-03-01 10:02:45 BUY NVDA 10 @ 850.5`;
const re = /^(?<date>\S+) (?<time>\S+) (?<side>BUY|SELL) (?<sym>[A-Z]+) (?<qty>\d+) @ (?<px>[\d.]+)$/gm;
const rows = [...log.matchAll(re)].map(({ groups: g }) => ({ ts: `${g.date}T${g.time}Z`, side: g.side, sym: g.sym, notional: +g.qty * +g.px }));
return rows;
