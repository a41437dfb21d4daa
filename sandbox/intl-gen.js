// Generates crates/sandbox/src/intl/data.rs (the locale data of the sandbox's Intl) from CLDR 48 JSON,
// the CLDR of the ICU (78) in Node 20, and from V8 itself: which locales ICU has, which regions
// format differently, canonical time-zone names, the collation weights. Run it with the Node
// whose V8 the sandbox is compared with (tests/it/fidelity.rs), then check the result with
// sandbox/intl-vectors.js.
//
// usage:
//   mkdir /tmp/cldr && (cd /tmp/cldr && npm install cldr-dates-full@48.2.0 cldr-numbers-full@48.2.0 \
//     cldr-core@48.2.0 cldr-misc-full@48.2.0 cldr-units-full@48.2.0)
//   grep -o '=> "[^"]*"' ~/.cargo/registry/src/*/chrono-tz-0.10.4/src/prebuilt/timezones.rs \
//     | sed 's/=> "//;s/"$//' | sort -u > /tmp/tznames.txt     # chrono_tz::TZ_VARIANTS names
//   node sandbox/intl-gen.js /tmp/cldr /tmp/tznames.txt > crates/sandbox/src/intl/data.rs
'use strict';
const fs = require('fs');
const path = require('path');
const root = path.join(process.argv[2], 'node_modules');
const tznames = fs.readFileSync(process.argv[3], 'utf8').trim().split('\n');
const req = (p) => JSON.parse(fs.readFileSync(path.join(root, p), 'utf8'));

const LOCALES = ['en', 'en-GB', 'en-IN', 'en-CA', 'en-AU', 'de', 'fr', 'ja'];
const ident = (l) => l.replace('-', '_').toUpperCase();

function lit(s) {
  if (s === undefined || s === null) throw new Error('undefined string');
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0);
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (c < 0x20 || (c >= 0x7f && c <= 0xa0) || c === 0x202f || c === 0x2009 || c === 0x200e || c === 0x200f || c === 0x2007 || c === 0xad || c === 0x2060 || c === 0x200b)
      out += `\\u{${c.toString(16)}}`;
    else out += ch;
  }
  return out + '"';
}
const arr = (xs) => '[' + xs.map(lit).join(', ') + ']';
// V8 shows dates with a plain space where CLDR 42+ has U+202F.
const dpat = (s) => s; // V8 keeps U+202F in formatToParts and makes it a space in format()

const out = [];
out.push('//! Locale data generated from CLDR 48 (the CLDR of the ICU in Node 20 / V8) and from V8 itself');
out.push('//! by `sandbox/intl-gen.js`; do not edit by hand.');
out.push('');
out.push('#![allow(clippy::unreadable_literal, clippy::type_complexity)]');
out.push('');
out.push('use super::shape::{DateData, NumberData};');
out.push('');

// ---- languages ICU has data for (V8 falls back to the default locale for the others) ----
{
  const A = 'abcdefghijklmnopqrstuvwxyz';
  const langs = [];
  for (const a of A) for (const b of A) { langs.push(a + b); for (const c of A) langs.push(a + b + c); }
  const sup = new Set();
  for (let i = 0; i < langs.length; i += 500) {
    for (const l of Intl.NumberFormat.supportedLocalesOf(langs.slice(i, i + 500))) sup.add(l.split('-')[0]);
    for (const l of Intl.DateTimeFormat.supportedLocalesOf(langs.slice(i, i + 500))) sup.add(l.split('-')[0]);
  }
  const list = [...sup].sort();
  out.push('/// Languages V8 (ICU) has formatting data for: a locale of any other language is skipped.');
  out.push(`pub(super) static ICU_LANGUAGES: &[&str] = &${arr(list)};`);
  out.push('');
}

// ---- regions per supported language ----
{
  const A = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  const d = new Date(Date.UTC(2024, 0, 5, 13, 5, 9, 45));
  function probe(l) {
    const o = [];
    for (const opt of [{}, { style: 'percent' }, { style: 'currency', currency: 'USD' }, { style: 'currency', currency: 'EUR' }, { style: 'currency', currency: 'GBP' }, { style: 'currency', currency: 'CAD' }, { style: 'currency', currency: 'AUD' }, { style: 'currency', currency: 'INR' }, { style: 'currency', currency: 'JPY' }, { style: 'currency', currency: 'CNY' }, { style: 'currency', currency: 'CHF' }, { style: 'currency', currency: 'NZD' }, { style: 'currency', currency: 'HKD' }, { style: 'currency', currency: 'SGD' }, { style: 'currency', currency: 'KRW' }, { notation: 'compact' }, { notation: 'compact', compactDisplay: 'long' }, { style: 'currency', currency: 'USD', currencySign: 'accounting' }, { style: 'currency', currency: 'USD', currencyDisplay: 'name' }, { notation: 'scientific' }])
      for (const x of [-1234567.891, 0.5, 1e9]) o.push(new Intl.NumberFormat(l, opt).format(x));
    for (const opt of [{}, { dateStyle: 'full', timeStyle: 'full' }, { dateStyle: 'long', timeStyle: 'long' }, { dateStyle: 'medium', timeStyle: 'medium' }, { dateStyle: 'short', timeStyle: 'short' }, { month: 'short', day: 'numeric' }, { month: 'long', year: 'numeric' }, { weekday: 'short', hour: 'numeric', minute: '2-digit' }, { hour: 'numeric', minute: '2-digit', hour12: false }, { hour: 'numeric', minute: '2-digit', hour12: true }, { year: 'numeric', month: '2-digit', day: '2-digit' }, { month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit' }, { era: 'long', year: 'numeric', month: 'narrow' }, { hour: 'numeric', timeZoneName: 'short', timeZone: 'America/New_York' }, { hour: 'numeric', timeZoneName: 'long', timeZone: 'Europe/Paris' }, { hour: 'numeric', timeZoneName: 'short', timeZone: 'Europe/London' }, { hour: 'numeric', timeZoneName: 'short', timeZone: 'Asia/Kolkata' }, { hour: 'numeric', timeZoneName: 'short', timeZone: 'Australia/Sydney' }, { dayPeriod: 'long', hour: 'numeric' }, { year: 'numeric', month: 'short', day: 'numeric', weekday: 'short' }, { month: 'numeric', day: 'numeric' }, { year: 'numeric', month: 'numeric' }, { weekday: 'long', month: 'long', day: 'numeric' }, { month: 'long', day: 'numeric' }, { year: 'numeric', month: 'long', day: 'numeric' }])
      o.push(new Intl.DateTimeFormat(l, { timeZone: 'UTC', ...opt }).format(d));
    o.push(new Intl.RelativeTimeFormat(l, { numeric: 'auto' }).format(-1, 'day'), new Intl.ListFormat(l).format(['a', 'b', 'c']), new Intl.PluralRules(l, { type: 'ordinal' }).select(2));
    return JSON.stringify(o);
  }
  out.push('/// Per supported language: the regions whose V8 output is not the same as the base locale\'s');
  out.push('/// (`en` → en-US) and which ICU resolves to a locale of their own. A request for one of them');
  out.push('/// is refused unless it is one of the supported locales; any other region formats as the base.');
  out.push('pub(super) static DISTINCT_REGIONS: &[(&str, &[&str])] = &[');
  for (const lang of ['de', 'en', 'fr', 'ja']) {
    const ref = probe(lang);
    const diff = [];
    for (const a of A) for (const b of A) {
      const l = `${lang}-${a}${b}`;
      const resolved = new Intl.NumberFormat(l).resolvedOptions().locale;
      if (resolved === lang) continue;
      if (probe(l) !== ref) diff.push(a + b);
    }
    for (const r of ['001', '150', '419']) {
      const l = `${lang}-${r}`;
      if (new Intl.NumberFormat(l).resolvedOptions().locale !== lang && probe(l) !== ref) diff.push(r);
    }
    out.push(`    (${lit(lang)}, &${arr(diff.sort())}),`);
  }
  out.push('];');
  out.push('');
  // Regions that ICU resolves to a locale of their own (resolvedOptions().locale keeps them).
  out.push('/// Per supported language: the regions ICU has a locale for (kept in `resolvedOptions().locale`;');
  out.push('/// any other region resolves to the bare language).');
  out.push('pub(super) static ICU_REGIONS: &[(&str, &[&str])] = &[');
  for (const lang of ['de', 'en', 'fr', 'ja']) {
    const keep = [];
    for (const a of A) for (const b of A) {
      const l = `${lang}-${a}${b}`;
      if (new Intl.NumberFormat(l).resolvedOptions().locale === l) keep.push(a + b);
    }
    for (const r of ['001', '150', '419']) {
      const l = `${lang}-${r}`;
      if (new Intl.NumberFormat(l).resolvedOptions().locale === l) keep.push(r);
    }
    out.push(`    (${lit(lang)}, &${arr(keep.sort())}),`);
  }
  out.push('];');
  out.push('');
}

// ---- time zones ----
{
  const links = [];
  for (const n of tznames) {
    const c = new Intl.DateTimeFormat('en', { timeZone: n }).resolvedOptions().timeZone;
    if (c !== n) links.push([n, c]);
  }
  links.sort((a, b) => (a[0] < b[0] ? -1 : 1));
  out.push('/// IANA names V8 (ICU) reports under another name, e.g. `Asia/Kolkata` → `Asia/Calcutta`.');
  out.push('pub(super) static TZ_LINKS: &[(&str, &str)] = &[');
  for (const [a, b] of links) out.push(`    (${lit(a)}, ${lit(b)}),`);
  out.push('];');
  out.push('');
  const mz = req('cldr-core/supplemental/metaZones.json').supplemental.metaZones.metazoneInfo.timezone;
  const rows = [];
  const walk = (o, prefix) => {
    for (const [k, v] of Object.entries(o)) {
      const name = prefix ? `${prefix}/${k}` : k;
      if (Array.isArray(v)) {
        for (const e of v) {
          const u = e.usesMetazone;
          const ms = (s) => (s ? Date.parse(s.replace(' ', 'T') + 'Z') : null);
          // ICU's metazone mappings start in 1970 where CLDR gives no start.
          rows.push([name, u._mzone, u._from ? ms(u._from) : 0, ms(u._to)]);
        }
      } else walk(v, name);
    }
  };
  walk(mz, '');
  rows.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : (a[2] ?? -1e15) - (b[2] ?? -1e15)));
  out.push('/// Zone → metazone, with the UTC milliseconds the use starts and ends (CLDR metaZones).');
  out.push('pub(super) static ZONE_METAZONES: &[(&str, &str, i64, i64)] = &[');
  for (const [z, m, f, t] of rows) out.push(`    (${lit(z)}, ${lit(m)}, ${f ?? 'i64::MIN'}, ${t ?? 'i64::MAX'}),`);
  out.push('];');
  out.push('');
}

// ---- currencies ----
{
  const fr = req('cldr-core/supplemental/currencyData.json').supplemental.currencyData.fractions;
  const digits = Object.entries(fr).filter(([k, v]) => k !== 'DEFAULT' && v._digits !== '2').map(([k, v]) => [k, +v._digits]);
  out.push('/// Currencies whose default fraction digits are not 2.');
  out.push(`pub(super) static CURRENCY_DIGITS: &[(&str, u8)] = &[${digits.map(([k, v]) => `(${lit(k)}, ${v})`).join(', ')}];`);
  out.push('');
  const en = req('cldr-numbers-full/main/en/currencies.json').main.en.numbers.currencies;
  out.push('/// English currency names: (code, one, other).');
  out.push('pub(super) static EN_CURRENCY_NAMES: &[(&str, &str, &str)] = &[');
  for (const code of Object.keys(en).sort()) {
    const c = en[code];
    const one = c['displayName-count-one'] ?? c.displayName;
    const other = c['displayName-count-other'] ?? c.displayName;
    if (!one) continue;
    out.push(`    (${lit(code)}, ${lit(one)}, ${lit(other)}),`);
  }
  out.push('];');
  // Other languages: the common currencies only (names per plural category).
  const COMMON = 'USD EUR GBP JPY CNY CHF CAD AUD INR KRW HKD SGD SEK NOK DKK NZD MXN BRL ZAR RUB TRY PLN CZK HUF ILS AED SAR THB IDR MYR PHP TWD VND ARS CLP COP PEN EGP NGN KES PKR BDT UAH RON BGN ISK BTC'.split(' ');
  out.push('/// de, fr and ja names of common currencies: (locale, code, plural category, name).');
  out.push('pub(super) static CURRENCY_NAMES: &[(&str, &str, &str, &str)] = &[');
  for (const l of ['de', 'fr', 'ja']) {
    const cs = req(`cldr-numbers-full/main/${l}/currencies.json`).main[l].numbers.currencies;
    for (const code of COMMON) {
      const c = cs[code];
      if (!c) continue;
      for (const [k, v] of Object.entries(c)) {
        const m = k.match(/^displayName-count-(\w+)$/);
        if (m) out.push(`    (${lit(l)}, ${lit(code)}, ${lit(m[1])}, ${lit(v)}),`);
      }
    }
  }
  out.push('];');
  out.push('');
}

// ---- per-locale number data ----
function compact(table) {
  const rows = [];
  for (const [k, v] of Object.entries(table)) {
    const m = k.match(/^1(0*)-count-(\w+)$/);
    if (!m) continue;
    rows.push(`(${m[1].length}, ${lit(m[2])}, ${lit(v)})`);
  }
  return `&[${rows.join(', ')}]`;
}
for (const l of LOCALES) {
  const n = req(`cldr-numbers-full/main/${l}/numbers.json`).main[l].numbers;
  const sym = n['symbols-numberSystem-latn'];
  const dec = n['decimalFormats-numberSystem-latn'];
  const cur = n['currencyFormats-numberSystem-latn'];
  const pct = n['percentFormats-numberSystem-latn'];
  const curs = req(`cldr-numbers-full/main/${l}/currencies.json`).main[l].numbers.currencies;
  const symbols = [];
  for (const code of Object.keys(curs).sort()) {
    const c = curs[code];
    const s = c.symbol ?? code;
    const nw = c['symbol-alt-narrow'] ?? s;
    if (s !== code || nw !== code) symbols.push(`(${lit(code)}, ${lit(s)}, ${lit(nw)})`);
  }
  const unitPatterns = Object.entries(cur).filter(([k]) => k.startsWith('unitPattern-count-')).map(([k, v]) => `(${lit(k.slice(18))}, ${lit(v)})`);
  out.push(`pub(super) static NUM_${ident(l)}: NumberData = NumberData {`);
  out.push(`    decimal: ${lit(sym.decimal)},`);
  out.push(`    group: ${lit(sym.group)},`);
  out.push(`    percent: ${lit(sym.percentSign)},`);
  out.push(`    plus: ${lit(sym.plusSign)},`);
  out.push(`    minus: ${lit(sym.minusSign)},`);
  out.push(`    exponential: ${lit(sym.exponential)},`);
  out.push(`    infinity: ${lit(sym.infinity)},`);
  out.push(`    nan: ${lit(sym.nan)},`);
  out.push(`    approximately: ${lit(sym.approximatelySign)},`);
  out.push(`    range: ${lit(n['miscPatterns-numberSystem-latn'].range)},`);
  out.push(`    min_grouping: ${+n.minimumGroupingDigits},`);
  out.push(`    decimal_pattern: ${lit(dec.standard)},`);
  out.push(`    percent_pattern: ${lit(pct.standard)},`);
  out.push(`    currency_pattern: ${lit(cur.standard)},`);
  out.push(`    accounting_pattern: ${lit(cur.accounting)},`);
  out.push(`    currency_unit_patterns: &[${unitPatterns.join(', ')}],`);
  out.push(`    compact_short: ${compact(dec.short.decimalFormat)},`);
  out.push(`    compact_long: ${compact(dec.long.decimalFormat)},`);
  out.push(`    compact_currency: ${compact(cur.short.standard)},`);
  out.push(`    currency_symbols: &[${symbols.join(', ')}],`);
  out.push('};');
  out.push('');
}

// ---- per-locale date data ----
const timeData = req('cldr-core/supplemental/timeData.json').supplemental.timeData;
const dayPeriodRules = req('cldr-core/supplemental/dayPeriods.json').supplemental.dayPeriodRuleSet;
const enMetas = new Set(), enZones = new Set();
const REGION = { en: 'US', 'en-GB': 'GB', 'en-IN': 'IN', 'en-CA': 'CA', 'en-AU': 'AU', de: 'DE', fr: 'FR', ja: 'JP' };
for (const l of LOCALES) {
  const g = req(`cldr-dates-full/main/${l}/ca-gregorian.json`).main[l].dates.calendars.gregorian;
  const tz = req(`cldr-dates-full/main/${l}/timeZoneNames.json`).main[l].dates.timeZoneNames;
  const fields = req(`cldr-dates-full/main/${l}/dateFields.json`).main[l].dates.fields;
  const M = (ctx, w) => { const m = g.months[ctx][w]; return arr(Array.from({ length: 12 }, (_, i) => m[i + 1])); };
  const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
  const D = (ctx, w) => { const m = g.days[ctx][w]; return arr(DAYS.map((k) => m[k])); };
  const P = (w) => { const p = g.dayPeriods.format[w]; return arr([p.am, p.pm]); };
  const rules = dayPeriodRules[l.split('-')[0]];
  const flex = [];
  for (const [name, r] of Object.entries(rules)) {
    const hm = (s) => { const [h, m] = s.split(':').map(Number); return h * 60 + m; };
    const names = ['abbreviated', 'wide', 'narrow'].map((w) => g.dayPeriods.format[w][name]);
    if (names.some((x) => x === undefined)) continue;
    if (r._at) flex.push(`(${hm(r._at)}, ${hm(r._at)}, ${arr(names)})`);
    else flex.push(`(${hm(r._from)}, ${hm(r._before)}, ${arr(names)})`);
  }
  const E = (w) => arr([g.eras[w][0], g.eras[w][1]]);
  const styles = ['full', 'long', 'medium', 'short'];
  const availMap = Object.fromEntries(Object.entries(g.dateTimeFormats.availableFormats).filter(([k]) => !k.includes('-alt-') && !k.includes('-count-')));
  // ICU's data has root's Hv for en (checked against V8 by checkavail.js).
  if (l === 'en' || l.startsWith('en-')) availMap.Hv = "HH'h' v";
  // ICU reads each locale's own table in key order, then its parents' (en-AU → en-001 → en):
  // the order decides ties between equally good formats.
  const byKey = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
  const fmts = (loc) => Object.fromEntries(Object.entries(req(`cldr-dates-full/main/${loc}/ca-gregorian.json`).main[loc].dates.calendars.gregorian.dateTimeFormats.availableFormats).filter(([k]) => !k.includes('-alt-') && !k.includes('-count-')));
  let order = Object.keys(availMap).sort(byKey);
  if (l.startsWith('en-')) {
    const e001 = fmts('en-001'), en = fmts('en');
    const own = order.filter((k) => availMap[k] !== e001[k]);
    const mid = order.filter((k) => !own.includes(k) && e001[k] !== en[k]);
    const rest = order.filter((k) => !own.includes(k) && !mid.includes(k));
    order = [...own, ...mid, ...rest];
  }
  const avail = order.map((k) => `(${lit(k)}, ${lit(dpat(availMap[k]))})`);
  const ai = g.dateTimeFormats.appendItems;
  const region = REGION[l];
  const td = timeData[region] ?? timeData['001'];
  const zones = [];
  const walk = (o, prefix) => {
    for (const [k, v] of Object.entries(o)) {
      const name = prefix ? `${prefix}/${k}` : k;
      if (v && typeof v === 'object' && v._type === 'zone') {
        const names = [v.short?.standard, v.short?.daylight, v.long?.standard, v.long?.daylight];
        const row = `(${lit(name)}, [${names.map((x) => (x === undefined ? '""' : lit(x))).join(', ')}])`;
        if (l.startsWith('en-') && enZones.has(row)) continue;
        if (l === 'en') enZones.add(row);
        if (names.some((x) => x !== undefined)) zones.push(`(${lit(name)}, [${names.map((x) => (x === undefined ? '""' : lit(x))).join(', ')}])`);
      } else if (v && typeof v === 'object') walk(v, name);
    }
  };
  walk(tz.zone, '');
  if (l.startsWith('en-')) {
    for (const row of enZones) {
      const name = row.slice(2, row.indexOf('"', 2));
      const has = name.split('/').reduce((o, k) => (o ? o[k] : undefined), tz.zone);
      if (!has) zones.push(`(${lit(name)}, ["", "", "", ""])`);
    }
  }
  const metas = [];
  for (const [k, v] of Object.entries(tz.metazone).sort()) {
    const names = [v.short?.standard, v.short?.daylight, v.long?.standard, v.long?.daylight];
    const row = `(${lit(k)}, [${names.map((x) => (x === undefined ? '""' : lit(x))).join(', ')}])`;
    if (l.startsWith('en-') && enMetas.has(row)) continue;
    if (l === 'en') enMetas.add(row);
    metas.push(row);
  }
  if (l.startsWith('en-')) {
    for (const row of enMetas) {
      const name = row.slice(2, row.indexOf('"', 2));
      if (!tz.metazone[name]) metas.push(`(${lit(name)}, ["", "", "", ""])`);
    }
  }
  const fname = (k) => fields[k].displayName;
  out.push(`pub(super) static DATE_${ident(l)}: DateData = DateData {`);
  out.push(`    months: [${M('format', 'abbreviated')}, ${M('format', 'wide')}, ${M('format', 'narrow')}, ${M('stand-alone', 'abbreviated')}, ${M('stand-alone', 'wide')}, ${M('stand-alone', 'narrow')}],`);
  out.push(`    days: [${D('format', 'abbreviated')}, ${D('format', 'wide')}, ${D('format', 'narrow')}, ${D('format', 'short')}, ${D('stand-alone', 'abbreviated')}, ${D('stand-alone', 'wide')}, ${D('stand-alone', 'narrow')}, ${D('stand-alone', 'short')}],`);
  out.push(`    am_pm: [${P('abbreviated')}, ${P('wide')}, ${P('narrow')}],`);
  out.push(`    day_periods: &[${flex.join(', ')}],`);
  out.push(`    eras: [${E('eraAbbr')}, ${E('eraNames')}, ${E('eraNarrow')}],`);
  out.push(`    date_formats: ${arr(styles.map((s) => dpat(g.dateFormats[s])))},`);
  out.push(`    time_formats: ${arr(styles.map((s) => dpat(g.timeFormats[s])))},`);
  out.push(`    date_time_formats: ${arr(styles.map((s) => g.dateTimeFormats[s]))},`);
  out.push(`    date_time_at_formats: ${arr(styles.map((s) => g['dateTimeFormats-atTime'].standard[s]))},`);
  out.push(`    available: &[${avail.join(', ')}],`);
  out.push(`    append_items: ${arr(['Era', 'Year', 'Quarter', 'Month', 'Week', 'Day-Of-Week', 'Day', 'Hour', 'Minute', 'Second', 'Timezone'].map((k) => ai[k]))},`);
  out.push(`    field_names: ${arr(['era', 'year', 'quarter', 'month', 'week', 'weekday', 'day', 'hour', 'minute', 'second', 'zone', 'dayperiod'].map(fname))},`);
  out.push(`    gmt_format: ${lit(tz.gmtFormat)},`);
  out.push(`    hour_format: ${lit(tz.hourFormat)},`);
  out.push(`    zone_names: &[${zones.join(', ')}],`);
  out.push(`    metazone_names: &[${metas.join(', ')}],`);
  out.push(`    names_inherit_en: ${l.startsWith('en-')},`);
  out.push('};');
  out.push('');
}

// ---- units, relative time and lists, per locale (en-* carry only their differences) ----
{
  const SIMPLE = 'acre bit byte celsius centimeter day degree fahrenheit fluid-ounce foot gallon gigabit gigabyte gram hectare hour inch kilobit kilobyte kilogram kilometer liter megabit megabyte meter microsecond mile mile-scandinavian milliliter millimeter millisecond minute month nanosecond ounce percent petabyte pound second stone terabit terabyte week yard year'.split(' ');
  const unitRows = (l) => {
    const u = req(`cldr-units-full/main/${l}/units.json`).main[l].units;
    const rows = [];
    for (const [wi, width] of ['long', 'short', 'narrow'].entries()) {
      for (const [key, v] of Object.entries(u[width])) {
        const name = key.replace(/^[a-z0-9]+-/, '');
        const m = name.match(/^(.+)-per-(.+)$/);
        const ok = SIMPLE.includes(name) || (m && SIMPLE.includes(m[1]) && SIMPLE.includes(m[2]));
        if (!ok || typeof v !== 'object') continue;
        for (const [k, p] of Object.entries(v)) {
          const c = k.match(/^unitPattern-count-(\w+)$/);
          if (c) rows.push(`(${lit(name)}, ${wi}, ${lit(c[1])}, ${lit(p)})`);
          else if (k === 'perUnitPattern') rows.push(`(${lit(name)}, ${wi}, "per", ${lit(p)})`);
        }
      }
    }
    return rows;
  };
  const relRows = (l) => {
    const fields = req(`cldr-dates-full/main/${l}/dateFields.json`).main[l].dates.fields;
    const rows = [];
    for (const unit of ['year', 'quarter', 'month', 'week', 'day', 'hour', 'minute', 'second']) {
      for (const [wi, w] of ['', '-short', '-narrow'].entries()) {
        const f = fields[unit + w];
        for (const k of [-2, -1, 0, 1, 2]) {
          if (f[`relative-type-${k}`]) rows.push(`(${lit(unit)}, ${wi}, ${lit(String(k))}, ${lit(f[`relative-type-${k}`])})`);
        }
        for (const [dir, key] of [['future', 'relativeTime-type-future'], ['past', 'relativeTime-type-past']]) {
          for (const [k, p] of Object.entries(f[key] || {})) {
            const c = k.match(/^relativeTimePattern-count-(\w+)$/);
            if (c) rows.push(`(${lit(unit)}, ${wi}, ${lit(dir + '-' + c[1])}, ${lit(p)})`);
          }
        }
      }
    }
    return rows;
  };
  const listRows = (l) => {
    const lp = req(`cldr-misc-full/main/${l}/listPatterns.json`).main[l].listPatterns;
    return Object.entries(lp).map(([k, v]) => `(${lit(k.replace('listPattern-type-', ''))}, ${arr([v['2'], v.start, v.middle, v.end])})`);
  };
  const emit = (name, type, rowsOf) => {
    const en = new Set(rowsOf('en'));
    out.push(`pub(super) static ${name}: &[(&str, &[${type}])] = &[`);
    for (const l of LOCALES) {
      let rows = rowsOf(l);
      if (l.startsWith('en-')) {
        // Only the differences; a key of en the locale lacks cannot be expressed, so such
        // locales get their full table.
        const key = (r) => r.split(', ').slice(0, 3).join(', ');
        const mine = new Set(rows.map(key));
        const lacks = [...en].some((r) => !mine.has(key(r)));
        if (!lacks) rows = rows.filter((r) => !en.has(r));
        out.push(`    (${lit(l)}, &[${rows.join(', ')}]), // ${lacks ? 'full' : 'differences from en'}`);
        continue;
      }
      out.push(`    (${lit(l)}, &[${rows.join(', ')}]),`);
    }
    out.push('];');
    out.push('');
  };
  out.push('/// Unit patterns: (unit, width (long, short, narrow), plural category or "per", pattern).');
  emit('UNITS', '(&str, u8, &str, &str)', unitRows);
  out.push('/// Relative-time data: (unit, width, "-2".."2" or future-/past-<category>, text).');
  emit('RELATIVE', '(&str, u8, &str, &str)', relRows);
  out.push('/// List patterns: (type, [two, start, middle, end]).');
  emit('LISTS', '(&str, [&str; 4])', listRows);
}

// ---- collation (CLDR root as V8 applies it for en), for Latin text ----
{
  const col = (s) => new Intl.Collator('en', { sensitivity: s });
  const base = col('base'), accent = col('accent'), variant = col('variant');
  const ranges = [[0x0, 0x7f], [0xa0, 0x24f], [0x1e00, 0x1eff], [0x2010, 0x2027], [0x2030, 0x205e], [0x20a0, 0x20c0], [0x2070, 0x209f], [0xfb00, 0xfb06], [0xff01, 0xff5e]];
  const chars = [];
  for (const [a, b] of ranges) for (let i = a; i <= b; i++) chars.push(String.fromCodePoint(i));
  const marks = [];
  for (let i = 0x300; i <= 0x36f; i++) marks.push(String.fromCodePoint(i));
  const decomp = [];
  const baseChars = [];
  const compat = [];
  for (const c of chars) {
    const d = c.normalize('NFD');
    if (d !== c) { decomp.push([c, d]); continue; }
    if (variant.compare(c, '') === 0) continue; // ignorable: not listed
    const k = c.normalize('NFKD');
    if (k !== c && accent.compare(c, k) === 0) { compat.push([c, k]); continue; }
    baseChars.push(c);
  }
  // Combining marks: secondary weights by their order on 'a'.
  const markList = marks.filter((m) => base.compare('a' + m, 'a') === 0 && accent.compare('a' + m, 'a') !== 0);
  markList.sort((x, y) => accent.compare('a' + x, 'a' + y));
  const markWeight = new Map();
  let rank = 0;
  for (let i = 0; i < markList.length; i++) {
    if (i > 0 && accent.compare('a' + markList[i - 1], 'a' + markList[i]) !== 0) rank++;
    markWeight.set(markList[i], 2 * (rank + 1) + 2);
  }
  // Expansions (æ → ae).
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  const expansions = new Map();
  for (const c of baseChars) {
    if (c.charCodeAt(0) < 0x80 || !/\p{L}/u.test(c)) continue;
    outer: for (const x of letters) for (const y of letters) {
      if (base.compare(c, x + y) === 0) { expansions.set(c, x + y); break outer; }
    }
  }
  const singles = baseChars.filter((c) => !expansions.has(c));
  singles.sort((x, y) => variant.compare(x, y) || (x < y ? -1 : 1));
  // Primary classes.
  const primary = new Map();
  let p = 0;
  for (let i = 0; i < singles.length; i++) {
    if (i === 0 || base.compare(singles[i - 1], singles[i]) !== 0) p++;
    primary.set(singles[i], p);
  }
  // Secondary and tertiary within a class.
  const byClass = new Map();
  for (const c of singles) { const k = primary.get(c); if (!byClass.has(k)) byClass.set(k, []); byClass.get(k).push(c); }
  const sec = new Map(), ter = new Map();
  for (const members of byClass.values()) {
    const rep = members[0];
    for (const c of members) {
      if (accent.compare(c, rep) === 0) { sec.set(c, 0); continue; }
      // A variant letter (ø, ł): place its secondary among the marks' (odd slots).
      const below = markList.filter((m) => accent.compare(rep + m, c) < 0).length;
      let w = 2 * below + 3;
      sec.set(c, w);
    }
    // tertiary rank within the same secondary
    const groups = new Map();
    for (const c of members) { const k = sec.get(c); if (!groups.has(k)) groups.set(k, []); groups.get(k).push(c); }
    for (const g of groups.values()) {
      g.sort((x, y) => variant.compare(x, y));
      let t = 0;
      for (let i = 0; i < g.length; i++) { if (i > 0 && variant.compare(g[i - 1], g[i]) !== 0) t++; ter.set(g[i], t); }
    }
  }
  const rows = [];
  for (const c of baseChars) {
    const cp = c.codePointAt(0);
    const variable = /[\s\p{P}]/u.test(c) ? 1 : 0;
    if (expansions.has(c)) {
      const [x, y] = expansions.get(c);
      const s = accent.compare(c, x + y) === 0 ? 0 : 2 * markList.filter((m) => accent.compare(x + m + y, c) < 0).length + 3;
      const t = variant.compare(c.toLowerCase(), c) === 0 ? 0 : 1;
      rows.push([cp, primary.get(x), primary.get(y), s, t, variable]);
    } else {
      rows.push([cp, primary.get(c), 0, sec.get(c), ter.get(c), variable]);
    }
  }
  rows.sort((a, b) => a[0] - b[0]);
  out.push('');
  out.push('/// Root collation of Latin text: (code point, primary, second primary of an expansion,');
  out.push('/// secondary (0 common, odd: a variant letter such as ø), tertiary rank, variable (space or');
  out.push('/// punctuation)). Characters not listed here and without a decomposition are ignorable.');
  out.push('pub(super) static COLLATION: &[(u32, u16, u16, u8, u8, u8)] = &[');
  for (const r of rows) out.push(`    (0x${r[0].toString(16)}, ${r.slice(1).join(', ')}),`);
  out.push('];');
  out.push('');
  out.push('/// Secondary weights of combining marks (even).');
  out.push(`pub(super) static COLLATION_MARKS: &[(u32, u8)] = &[${[...markWeight].sort((a, b) => a[0].codePointAt(0) - b[0].codePointAt(0)).map(([m, w]) => `(0x${m.codePointAt(0).toString(16)}, ${w})`).join(', ')}];`);
  out.push('');
  out.push('/// Canonical decompositions (NFD) of the precomposed Latin letters.');
  out.push('pub(super) static COLLATION_DECOMPOSITIONS: &[(u32, &str)] = &[');
  for (const [c, d] of decomp) out.push(`    (0x${c.codePointAt(0).toString(16)}, ${lit(d)}),`);
  out.push('];');
  out.push('');
  out.push('/// Compatibility characters equal to their decomposition but at the tertiary level (ª, ², ĳ).');
  out.push('pub(super) static COLLATION_COMPAT: &[(u32, &str)] = &[');
  for (const [c, d] of compat) out.push(`    (0x${c.codePointAt(0).toString(16)}, ${lit(d)}),`);
  out.push('];');
}

{
  // Languages whose collation of Latin text is the root order (V8 sorts them as en).
  const probe = [];
  for (let i = 0x20; i < 0x7f; i++) probe.push(String.fromCharCode(i));
  for (let i = 0xc0; i < 0x250; i++) probe.push(String.fromCharCode(i));
  const extra = ['ch', 'cz', 'dz', 'dzs', 'gy', 'ly', 'ny', 'sz', 'ty', 'zs', 'll', 'rr', 'ng', 'aa', 'ae', 'oe', 'th', 'ij', 'ss', 'cs', 'lj', 'nj', 'dž', 'ca', 'cha', 'ci', 'da', 'ha', 'ia', 'ja', 'ya', 'za', 'Ch', 'CH', 'Aa', 'AA', 'ǆ', 'x', 'xa', 'w', 'wa', 'va', 'v'];
  for (const e of extra) probe.push(e, e + 'a', e + 'z');
  probe.push('α', 'Ω', 'а', 'ж', 'Я', 'ا', 'ب', 'א', 'ב', 'क', 'あ', 'ア', '中', '日', '가', 'ก', '€', '¥', '①', '½');
  const sorted = (l) => JSON.stringify([...probe].sort(new Intl.Collator(l).compare)) + JSON.stringify([...probe].sort(new Intl.Collator(l, { sensitivity: 'base' }).compare));
  const ref = sorted('en');
  const A = 'abcdefghijklmnopqrstuvwxyz';
  const langs = [];
  for (const a of A) for (const b of A) { langs.push(a + b); for (const c of A) langs.push(a + b + c); }
  const known = new Set();
  for (let i = 0; i < langs.length; i += 500) for (const l of Intl.DateTimeFormat.supportedLocalesOf(langs.slice(i, i + 500))) known.add(l.split('-')[0]);
  const root = [...known].filter((l) => sorted(l) === ref).sort();
  out.push('');
  out.push('/// Languages V8 sorts Latin text for exactly as it does for en (the root order).');
  out.push(`pub(super) static COLLATION_ROOT_LANGUAGES: &[&str] = &${arr(root)};`);
  // Regions with collation data of their own: (tag, whether it sorts as root).
  const R = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  const regional = [];
  for (const l of root) for (const a of R) for (const b of R) {
    const tag = `${l}-${a}${b}`;
    if (new Intl.Collator(tag).resolvedOptions().locale !== tag) continue;
    regional.push(`(${lit(tag)}, ${sorted(tag) === ref})`);
  }
  out.push('');
  out.push('/// Locales with collation data of their own (V8 keeps the region in `resolvedOptions`), and');
  out.push('/// whether they sort Latin text as the root order does.');
  out.push(`pub(super) static COLLATION_REGIONS: &[(&str, bool)] = &[${regional.join(', ')}];`);
}
process.stdout.write(out.join('\n') + '\n');
