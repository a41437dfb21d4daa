// Differential test vectors for the sandbox's Intl (crates/sandbox/src/intl): random but reproducible
// Intl calls and what V8 makes of them (JSON text, or "!" and the error's name).
//
// usage:
//   TZ=UTC node sandbox/intl-vectors.js <number|date|misc|locale|all> [seed] > /tmp/vectors.json
//   INTL_VECTORS=/tmp/vectors.json cargo test --lib intl::tests::vectors -- --ignored --nocapture
// The Rust side prints each expression whose result differs, and counts the ones it refuses
// (RangeError "... not supported by Intl in this sandbox"): refusing is allowed, differing is not.
'use strict';
let seed = +(process.argv[3] || 12345);
const rnd = () => { seed |= 0; seed = (seed + 0x6d2b79f5) | 0; let t = Math.imul(seed ^ (seed >>> 15), 1 | seed); t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t; return ((t ^ (t >>> 14)) >>> 0) / 4294967296; };
const pick = (a) => a[Math.floor(rnd() * a.length)];
const maybe = (p) => rnd() < p;
const which = process.argv[2] || 'all';
const out = [];
function add(expr) {
  let r;
  try { r = JSON.stringify(eval(expr)); } catch (e) { r = '!' + e.name; }
  out.push([expr, r]);
}
const S = JSON.stringify;

if (which === 'all' || which === 'number') {
  const locales = ['en-US', 'en-US', 'en-US', undefined, 'en', 'en-GB', 'en-IN', 'en-CA', 'en-AU', 'de-DE', 'fr-FR', 'ja-JP', 'de', 'fr'];
  const values = [0, -0, 1, -1, 0.5, 1.005, 2.345, 1234.5, -1234.5678, 1234567.891, 0.000123456, 999.995, 999999, 1e21, 1.5e-7, NaN, Infinity, -Infinity, 12345678901234567890, 0.1 + 0.2, 99.999, 1e15, 1.234e16, -45600, 15300, 2.75e9, 1000, 999, 0.01, 100, 42, 7];
  const currencies = ['USD', 'EUR', 'GBP', 'JPY', 'CNY', 'CHF', 'CAD', 'AUD', 'INR', 'KRW', 'BHD', 'SEK', 'MXN', 'BRL', 'xyz'];
  for (let i = 0; i < 4000; i++) {
    const o = {};
    const style = pick(['decimal', 'decimal', 'percent', 'currency', 'currency', 'unit', undefined]);
    if (style) o.style = style;
    if (style === 'unit') {
      o.unit = pick(['percent', 'megabyte', 'kilobyte', 'gigabyte', 'byte', 'second', 'day', 'hour', 'kilometer-per-hour', 'mile-per-hour', 'celsius', 'liter', 'meter', 'kilogram', 'megabit-per-second', 'foot', 'month', 'millisecond']);
      if (maybe(0.7)) o.unitDisplay = pick(['long', 'short', 'narrow']);
    }
    if (style === 'currency') {
      o.currency = pick(currencies);
      if (maybe(0.4)) o.currencyDisplay = pick(['symbol', 'narrowSymbol', 'code', 'name']);
      if (maybe(0.2)) o.currencySign = pick(['standard', 'accounting']);
    }
    if (maybe(0.25)) o.notation = pick(['standard', 'compact', 'scientific', 'engineering']);
    if (o.notation === 'compact' && maybe(0.5)) o.compactDisplay = pick(['short', 'long']);
    if (maybe(0.3)) o.minimumFractionDigits = Math.floor(rnd() * 4);
    if (maybe(0.3)) o.maximumFractionDigits = Math.floor(rnd() * 5);
    if (maybe(0.15)) o.minimumSignificantDigits = 1 + Math.floor(rnd() * 4);
    if (maybe(0.15)) o.maximumSignificantDigits = 1 + Math.floor(rnd() * 5);
    if (maybe(0.1)) o.minimumIntegerDigits = 1 + Math.floor(rnd() * 4);
    if (maybe(0.15)) o.useGrouping = pick([true, false, 'min2', 'always', 'auto']);
    if (maybe(0.15)) o.signDisplay = pick(['auto', 'always', 'exceptZero', 'never', 'negative']);
    if (maybe(0.1)) o.roundingMode = pick(['ceil', 'floor', 'expand', 'trunc', 'halfCeil', 'halfFloor', 'halfExpand', 'halfTrunc', 'halfEven']);
    if (maybe(0.05)) o.roundingPriority = pick(['auto', 'morePrecision', 'lessPrecision']);
    if (maybe(0.05)) o.trailingZeroDisplay = pick(['auto', 'stripIfInteger']);
    const l = pick(locales);
    const v = pick(values);
    const f = `new Intl.NumberFormat(${S(l)}, ${S(o)})`;
    const vs = Object.is(v, -0) ? '-0' : String(v);
    const m = rnd();
    if (m < 0.6) add(`${f}.format(${vs})`);
    else if (m < 0.8) add(`${f}.formatToParts(${vs}).map(p => p.type + ':' + p.value).join('|')`);
    else if (m < 0.9) add(`JSON.stringify(${f}.resolvedOptions())`);
    else add(`(${vs}).toLocaleString(${S(l)}, ${S(o)})`);
  }
  for (const x of ['12345678901234567890n', '-5n', '0n']) for (const l of ['en-US', 'de-DE', 'en-IN']) add(`(${x}).toLocaleString(${S(l)})`);
  for (const s of ['"1234.5678"', '"1e3"', '" 12 "', '"abc"', '""', '"0x10"', '"-0"', '"1.23456789012345678901234567890"', '"Infinity"']) add(`new Intl.NumberFormat('en-US', {maximumFractionDigits: 20}).format(${s})`);
}

if (which === 'all' || which === 'date') {
  const locales = ['en-US', 'en-US', 'en-US', undefined, 'en', 'en-GB', 'en-IN', 'en-CA', 'en-AU', 'de-DE', 'fr-FR', 'ja-JP'];
  const zones = [undefined, 'UTC', 'America/New_York', 'Europe/London', 'Europe/Paris', 'Asia/Tokyo', 'Asia/Kolkata', 'America/Los_Angeles', 'Australia/Sydney', 'Etc/GMT+5', 'America/St_Johns', 'Asia/Kathmandu', 'America/Sao_Paulo'];
  const dates = [Date.UTC(2024, 0, 5, 13, 5, 9, 45), Date.UTC(2024, 6, 4, 0, 30, 0, 7), Date.UTC(2023, 11, 31, 23, 59, 59, 999), Date.UTC(2000, 1, 29, 12, 0, 0), Date.UTC(1969, 6, 20, 20, 17), Date.UTC(-50, 0, 1), Date.UTC(2024, 2, 10, 7, 0), 0, Date.UTC(2024, 10, 3, 5, 30)];
  const comps = {
    weekday: ['narrow', 'short', 'long'], era: ['narrow', 'short', 'long'], year: ['numeric', '2-digit'], month: ['numeric', '2-digit', 'narrow', 'short', 'long'], day: ['numeric', '2-digit'],
    hour: ['numeric', '2-digit'], minute: ['numeric', '2-digit'], second: ['numeric', '2-digit'], timeZoneName: ['short', 'long', 'shortOffset', 'longOffset'],
  };
  for (let i = 0; i < 5000; i++) {
    const o = {};
    const z = pick(zones);
    if (z) o.timeZone = z;
    if (maybe(0.2)) {
      if (maybe(0.7)) o.dateStyle = pick(['full', 'long', 'medium', 'short']);
      if (maybe(0.6)) o.timeStyle = pick(['full', 'long', 'medium', 'short']);
    } else {
      for (const [k, vals] of Object.entries(comps)) {
        const p = { weekday: 0.2, era: 0.05, year: 0.4, month: 0.5, day: 0.4, hour: 0.4, minute: 0.35, second: 0.2, timeZoneName: 0.1 }[k];
        if (maybe(p)) o[k] = pick(vals);
      }
      if (maybe(0.05)) o.fractionalSecondDigits = 1 + Math.floor(rnd() * 3);
      if (maybe(0.04)) o.dayPeriod = pick(['narrow', 'short', 'long']);
    }
    if (maybe(0.15)) o.hour12 = pick([true, false]);
    else if (maybe(0.1)) o.hourCycle = pick(['h11', 'h12', 'h23', 'h24']);
    const l = pick(locales);
    const d = pick(dates);
    const f = `new Intl.DateTimeFormat(${S(l)}, ${S(o)})`;
    const m = rnd();
    if (m < 0.55) add(`${f}.format(${d})`);
    else if (m < 0.7) add(`${f}.formatToParts(${d}).map(p => p.type + ':' + p.value).join('|')`);
    else if (m < 0.8) add(`JSON.stringify(${f}.resolvedOptions())`);
    else add(`new Date(${d}).${pick(['toLocaleString', 'toLocaleDateString', 'toLocaleTimeString'])}(${S(l)}, ${S(o)})`);
  }
}

if (which === 'all' || which === 'misc') {
  const words = ['a', 'A', 'b', 'B', 'á', 'Á', 'à', 'ä', 'ae', 'æ', 'Æ', 'résumé', 'resume', 'Resume', 'résume', 'co-op', 'coop', 'co op', 'Co-op', '10', '9', '2', 'x10', 'x9', 'x010', 'ß', 'ss', 'SS', 'straße', 'strasse', 'ø', 'o', 'ö', 'œ', 'oe', 'Zebra', 'zebra', 'apple', 'Apple', 'APPLE', 'banana', 'Banana', '', ' ', '_a', '-a', '.a', '$', '€', 'ﬁ', 'fi', 'ª', 'ĳ', 'ij', 'naïve', 'naive', 'Ångström', 'angstrom', 'élan', 'Elan', 'e', 'E', 'é', 'É', 'ê', 'ë', 'ẽ', 'ñ', 'n', 'Ñ', 'çà', 'ca', 'α', 'β', 'а', 'б', '中', 'あ', 'ア', '1a', 'a1', 'a10', 'a2', 'AB', 'ab', 'Ab', 'aB', 'ł', 'l', 'đ', 'd', 'þ', 'th', 'ı', 'i', 'İ', 'I'];
  for (let i = 0; i < 3000; i++) {
    const a = pick(words), b = pick(words);
    const o = {};
    if (maybe(0.3)) o.sensitivity = pick(['base', 'accent', 'case', 'variant']);
    if (maybe(0.15)) o.numeric = pick([true, false]);
    if (maybe(0.15)) o.caseFirst = pick(['upper', 'lower', 'false']);
    if (maybe(0.1)) o.ignorePunctuation = pick([true, false]);
    const l = pick([undefined, 'en', 'en-US', 'de', 'fr', 'en-GB']);
    add(`${S(a)}.localeCompare(${S(b)}, ${S(l)}, ${S(o)})`);
  }
  add(`['Banana','apple','Apple','banana','cherry'].sort((a,b)=>a.localeCompare(b)).join()`);
  add(`[...'the quick Brown fox Jumps over the lazy DOG and élan Élan resume résumé'.split(' ')].sort(new Intl.Collator('en').compare).join()`);
  add(`[...'x10 x9 x1 x100 X2 x02 x-1'.split(' ')].sort(new Intl.Collator('en', {numeric: true}).compare).join()`);
  add(`[...'b a B A á Á c'.split(' ')].sort(new Intl.Collator('en', {caseFirst: 'upper'}).compare).join()`);
  for (const t of ['cardinal', 'ordinal']) for (const n of [0, 1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111, 1.5, -1, 1e6, NaN]) for (const l of ['en', 'en-US', 'de', 'fr', 'ja']) add(`new Intl.PluralRules(${S(l)}, {type: ${S(t)}}).select(${n})`);
  add(`JSON.stringify(new Intl.PluralRules('en-US').resolvedOptions())`);
  add(`JSON.stringify(new Intl.PluralRules('fr', {type: 'ordinal'}).resolvedOptions())`);
  for (const l of ['en', 'en-US', 'en-GB', 'en-IN', 'en-CA', 'en-AU', 'de', 'fr', 'ja']) {
  for (const numeric of ['always', 'auto']) for (const style of ['long', 'short', 'narrow']) for (const u of ['year', 'quarter', 'months', 'week', 'day', 'hours', 'minute', 'second']) for (const v of [-2, -1, -0, 0, 1, 2, 1.5, 1000])
    add(`new Intl.RelativeTimeFormat(${S(l)}, {numeric: ${S(numeric)}, style: ${S(style)}}).format(${Object.is(v, -0) ? '-0' : v}, ${S(u)})`);
  for (const type of ['conjunction', 'disjunction', 'unit']) for (const style of ['long', 'short', 'narrow']) for (const list of [[], ['a'], ['a', 'b'], ['a', 'b', 'c'], ['a', 'b', 'c', 'd']])
    add(`new Intl.ListFormat(${S(l)}, {type: ${S(type)}, style: ${S(style)}}).format(${S(list)})`);
  add(`JSON.stringify(new Intl.RelativeTimeFormat(${S(l)}).resolvedOptions())`);
  add(`JSON.stringify(new Intl.ListFormat(${S(l)}).resolvedOptions())`);
  add(`JSON.stringify(new Intl.PluralRules(${S(l)}).resolvedOptions())`);
  }
  for (const s of ['i', 'I', 'İ', 'ı', 'istanbul', 'ISTANBUL', 'Iİiı']) for (const l of ['tr', 'tr-TR', 'az', 'en', undefined]) { add(`${S(s)}.toLocaleUpperCase(${S(l)})`); add(`${S(s)}.toLocaleLowerCase(${S(l)})`); }
  for (const l of ['en-US', 'EN-us', 'en_US', 'de-de-u-co-phonebk', 'zh-hant-tw', 'en-u-kn-true', 'iw', 'en-UK', 'x-private', 'en-GB-oxendict']) add(`JSON.stringify(Intl.getCanonicalLocales(${S(l)}))`);
}

if (which === 'all' || which === 'locale') {
  const tags = ['en', 'EN-us', 'en-US', 'en-ZZ', 'en-001', 'en-150', 'en-Latn-US', 'en-u-nu-latn', 'en-US-u-hc-h23', 'en-u-hc-h11', 'en-u-ca-gregory', 'en-US-u-ca-iso8601', 'en-u-kn', 'en-u-kf-upper', 'en-GB-u-hc-h12', 'de-DE-u-co-phonebk', 'de-AT', 'de-ZZ', 'de-u-nu-latn', 'fr-CA', 'fr-BE', 'fr-ZZ', 'ja-JP-u-ca-japanese', 'ja-u-hc-h12', 'en-UK', 'en-NZ', 'es', 'zz', 'xx-YY', 'en-x-priv', 'und', 'tlh', 'en-GB-oxendict', 'EN_us', 'en-u-nu-arab', 'en-u-nu-xyz', 'de-CH'];
  for (const t of tags) {
    add(`JSON.stringify(Intl.getCanonicalLocales(${S(t)}))`);
    add(`new Intl.NumberFormat(${S(t)}).resolvedOptions().locale`);
    add(`new Intl.NumberFormat(${S(t)}).format(1234567.891)`);
    add(`new Intl.DateTimeFormat(${S(t)}, {timeZone: 'UTC'}).resolvedOptions().locale`);
    add(`new Intl.DateTimeFormat(${S(t)}, {timeZone: 'UTC', hour: 'numeric', minute: 'numeric'}).format(0)`);
    add(`JSON.stringify(new Intl.DateTimeFormat(${S(t)}, {timeZone: 'UTC', hour: 'numeric'}).resolvedOptions())`);
    add(`new Intl.Collator(${S(t)}).resolvedOptions().locale`);
    add(`JSON.stringify(new Intl.Collator(${S(t)}).resolvedOptions())`);
    add(`JSON.stringify(Intl.DateTimeFormat.supportedLocalesOf(${S(t)}))`);
    add(`new Date(0).toLocaleString(${S(t)}, {timeZone: 'UTC'})`);
    add(`(1234.5).toLocaleString(${S(t)}, {style: 'currency', currency: 'EUR'})`);
  }
  for (const tz of ['utc', 'Etc/UTC', 'GMT', 'Etc/GMT+5', 'etc/gmt-14', 'Asia/Calcutta', 'US/Eastern', 'EST', 'EST5EDT', 'Europe/Kyiv', 'Z', '+01:00', 'UTC+1', 'America/Argentina/Buenos_Aires', 'Antarctica/Troll', 'Asia/Ho_Chi_Minh'])
    add(`new Intl.DateTimeFormat('en', {timeZone: ${S(tz)}, timeZoneName: 'long', hour: 'numeric'}).format(Date.UTC(2024, 6, 1)) + ' ' + new Intl.DateTimeFormat('en', {timeZone: ${S(tz)}}).resolvedOptions().timeZone`);
}
process.stdout.write(JSON.stringify(out));
