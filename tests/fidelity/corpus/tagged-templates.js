// Tagged templates: strings/raw arrays, substitutions, identity caching of the strings
// array per call site, invalid escapes in tagged templates, and tag-built formatting helpers.

// @case tag-receives-strings-and-values
const tag = (strings, ...values) => ({ strings: [...strings], raw: [...strings.raw], values, frozen: Object.isFrozen(strings), rawFrozen: Object.isFrozen(strings.raw), isArray: Array.isArray(strings) });
const sym = 'AAPL', px = 190.5;
return tag`Price of ${sym} is ${px}\n!`;

// @case strings-array-cached-per-site
const tag = (s) => s;
const f = () => tag`x${1}y`;
const a = f(), b = f();
const c = tag`x${1}y`;
return { sameSite: a === b, differentSite: a === c, sameContent: JSON.stringify(a) === JSON.stringify(c) };

// @case strings-array-cached-in-loop
const tag = (s) => s;
const seen = new Set();
for (let i = 0; i < 5; i++) seen.add(tag`row ${i}`);
return seen.size;

// @case raw-strings-and-escapes
const tag = (s) => ({ cooked: s[0], raw: s.raw[0], cookedLen: s[0].length, rawLen: s.raw[0].length });
return [tag`a\tb`, tag`\u0041\x42`, tag`line\
cont`, tag`\``];

// @case invalid-escape-cooked-undefined
const tag = (s) => ({ cooked: String(s[0]), raw: s.raw[0] });
return [tag`\unicode`, tag`\xZZ`, tag`C:\new\u`];

// @case currency-format-tag
const money = (strings, ...vals) => strings.reduce((acc, s, i) => acc + s + (i < vals.length ? (typeof vals[i] === 'number' ? '$' + vals[i].toFixed(2) : vals[i]) : ''), '');
const sym = 'MSFT', cost = 410.1, pnl = -12.345;
return money`Bought ${sym} at ${cost}, P&L ${pnl}`;

// @case html-escape-tag
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
const html = (strings, ...vals) => String.raw({ raw: strings }, ...vals.map(esc));
const title = '<b>P&L</b>', note = `it's "fine"`;
return html`<h1>${title}</h1><p title="${note}">x</p>`;

// @case tag-member-expression-this
const fmt = { prefix: '>>', tag(strings, ...v) { return this.prefix + strings.join(v.join('|')); } };
return [fmt.tag`a${1}b${2}c`, fmt['tag']`z`];

// @case tag-returning-function-chained
const t = (s1) => (s2) => s1[0] + '+' + s2[0];
return t`first``second`;

// @case tag-not-function-throws
const notTag = 'x';
return notTag`hello`;
