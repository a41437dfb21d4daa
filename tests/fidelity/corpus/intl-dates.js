// Dates and Intl: explicit timestamps/ISO strings only, UTC accessors, Date.UTC, date
// arithmetic, parsing of common formats, invalid dates, toLocale* and Intl.NumberFormat /
// Intl.DateTimeFormat with en-US. The sandbox's local time zone is UTC (tests run with TZ=UTC).

// @case iso-roundtrip-and-utc-getters
const d = new Date('2024-03-15T13:45:30.250Z');
return { iso: d.toISOString(), t: d.getTime(), parts: [d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCDay(), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds()], json: JSON.stringify({ d }) };

// @case date-utc-and-overflow
return [Date.UTC(2024, 0, 1), Date.UTC(2024, 1, 30), Date.UTC(2023, 12, 1), Date.UTC(2024, 0, 0), Date.UTC(99, 0), Date.UTC(2024)].map((t) => new Date(t).toISOString());

// @case unix-seconds-bars-to-dates
const bars = [1704067200, 1704153600, 1704240000, 1704672000].map((time) => ({ time }));
return bars.map((b) => { const d = new Date(b.time * 1000); return `${d.toISOString().slice(0, 10)} dow=${d.getUTCDay()}`; });

// @case date-only-iso-is-utc-datetime-is-local
const a = new Date('2024-06-01');
const b = new Date('2024-06-01T00:00');
const c = new Date('2024-06-01T00:00:00+02:00');
return { a: a.toISOString(), b: b.toISOString(), c: c.toISOString(), offset: a.getTimezoneOffset() };

// @case parse-common-formats
const inputs = ['2024-01-05', '2024-01-05T10:00:00Z', '2024-01-05T10:00:00.123456Z', 'Jan 5, 2024', 'January 5, 2024 10:30:00', '5 Jan 2024', '2024/01/05', 'Fri, 05 Jan 2024 10:00:00 GMT', '2024-1-5', '20240105'];
return inputs.map((s) => { const t = Date.parse(s); return [s, Number.isNaN(t) ? 'NaN' : new Date(t).toISOString()]; });

// @case invalid-dates
const bad = new Date('not a date');
return { t: String(bad.getTime()), str: String(bad), json: JSON.stringify({ bad }), valid: !isNaN(bad), month13: String(Date.parse('2024-13-01')), utcY: String(bad.getUTCFullYear()) };

// @case toisostring-invalid-throws
return new Date('garbage').toISOString();

// @case date-arithmetic-days-and-months
const d = new Date(Date.UTC(2024, 0, 31));
const plusDays = new Date(d.getTime() + 30 * 864e5).toISOString().slice(0, 10);
const m = new Date(d); m.setUTCMonth(m.getUTCMonth() + 1);
const eom = new Date(Date.UTC(2024, 2, 0)).getUTCDate();
const diffDays = (Date.UTC(2024, 11, 25) - Date.UTC(2024, 0, 1)) / 864e5;
return { plusDays, monthAdd: m.toISOString().slice(0, 10), eomFeb2024: eom, diffDays };

// @case week-start-and-quarter
const d = new Date('2024-05-16T15:00:00Z');
const monday = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() - ((d.getUTCDay() + 6) % 7)));
const q = Math.floor(d.getUTCMonth() / 3) + 1;
const startOfYear = Date.UTC(d.getUTCFullYear(), 0, 1);
const dayOfYear = Math.floor((d - startOfYear) / 864e5) + 1;
return { monday: monday.toISOString().slice(0, 10), q: `Q${q} ${d.getUTCFullYear()}`, dayOfYear };

// @case setters-return-timestamp-and-mutate
const d = new Date(0);
const r1 = d.setUTCFullYear(2020, 1, 29);
const r2 = d.setUTCHours(25);
const r3 = d.setUTCDate(0);
return { r1, r2, r3, iso: d.toISOString(), nan: String(new Date(0).setUTCMonth(NaN)) };

// @case date-coercion-and-comparison
const a = new Date('2024-01-01T00:00:00Z'), b = new Date('2024-01-02T00:00:00Z');
return { diff: b - a, lt: a < b, eq: a == new Date(a), eqTime: a.getTime() === new Date(a).getTime(), plus: typeof (a + 1), num: +a, sorted: [b, a].sort((x, y) => x - y).map((d) => d.toISOString()) };

// @case to-string-forms-utc
const d = new Date(Date.UTC(2024, 6, 4, 9, 5, 3));
return { toString: d.toString(), toDateString: d.toDateString(), toUTCString: d.toUTCString(), toTimeString: d.toTimeString() };

// @case tolocaledatestring-en-us-utc
const d = new Date('2024-07-04T21:30:00Z');
return [
  d.toLocaleDateString('en-US', { timeZone: 'UTC' }),
  d.toLocaleDateString('en-US', { timeZone: 'UTC', year: 'numeric', month: 'short', day: 'numeric' }),
  d.toLocaleDateString('en-US', { timeZone: 'UTC', weekday: 'long', month: 'long', day: 'numeric' }),
  d.toLocaleDateString('en-US', { timeZone: 'UTC', month: '2-digit', day: '2-digit', year: '2-digit' }),
  d.toLocaleDateString('en-GB', { timeZone: 'UTC' }),
];

// @case tolocalestring-en-us-datetime
const d = new Date('2024-01-15T08:05:09Z');
return [
  d.toLocaleString('en-US', { timeZone: 'UTC' }),
  d.toLocaleTimeString('en-US', { timeZone: 'UTC' }),
  d.toLocaleTimeString('en-US', { timeZone: 'UTC', hour: '2-digit', minute: '2-digit', hour12: false }),
  d.toLocaleString('en-US', { timeZone: 'UTC', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit' }),
];

// @case datetimeformat-utc-timezone-conversion
const d = new Date('2024-03-10T12:00:00Z');
const fmt = (tz) => new Intl.DateTimeFormat('en-US', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(d);
return { utc: fmt('UTC'), ny: fmt('America/New_York'), tokyo: fmt('Asia/Tokyo'), kolkata: fmt('Asia/Kolkata') };

// @case datetimeformat-formattoparts
const parts = new Intl.DateTimeFormat('en-US', { timeZone: 'UTC', year: 'numeric', month: 'short', day: '2-digit', weekday: 'short' }).formatToParts(new Date(Date.UTC(2024, 10, 28)));
return parts.filter((p) => p.type !== 'literal').map((p) => `${p.type}=${p.value}`);

// @case datetimeformat-resolved-options
const o = new Intl.DateTimeFormat('en-US', { timeZone: 'UTC', dateStyle: 'medium' }).resolvedOptions();
return { locale: o.locale, timeZone: o.timeZone, calendar: o.calendar, numberingSystem: o.numberingSystem, dateStyle: o.dateStyle };

// @case datetimeformat-invalid-timezone-throws
return new Intl.DateTimeFormat('en-US', { timeZone: 'Mars/Olympus' }).format(new Date(0));

// @case numberformat-currency
const usd = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' });
const eur = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'EUR' });
const jpy = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'JPY' });
return [usd.format(1234567.891), usd.format(-42.5), usd.format(0.005), eur.format(99.999), jpy.format(1234.5), new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', currencySign: 'accounting' }).format(-5)];

// @case numberformat-percent-and-fraction-digits
const pct = new Intl.NumberFormat('en-US', { style: 'percent', minimumFractionDigits: 1, maximumFractionDigits: 2 });
const fixed2 = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
return [pct.format(0.12345), pct.format(-0.005), pct.format(1), fixed2.format(1.005), fixed2.format(2.345), fixed2.format(-0), new Intl.NumberFormat('en-US', { signDisplay: 'always', style: 'percent' }).format(0.031)];

// @case numberformat-compact
const c = new Intl.NumberFormat('en-US', { notation: 'compact' });
const cl = new Intl.NumberFormat('en-US', { notation: 'compact', compactDisplay: 'long', maximumFractionDigits: 1 });
return [999, 1000, 1234, 15300, 999999, 1.5e6, 2.75e9, 1e12, -45600].map((n) => [c.format(n), cl.format(n)]);

// @case numberformat-grouping-and-significant
return [
  new Intl.NumberFormat('en-US', { maximumSignificantDigits: 3 }).format(123456),
  new Intl.NumberFormat('en-US', { useGrouping: false }).format(1234567.5),
  new Intl.NumberFormat('en-US', { minimumIntegerDigits: 3 }).format(7),
  new Intl.NumberFormat('de-DE').format(1234567.891),
  new Intl.NumberFormat('en-IN').format(12345678),
  new Intl.NumberFormat('en-US', { notation: 'scientific' }).format(123456),
];

// @case numberformat-unknown-currency-code-throws
return new Intl.NumberFormat('en-US', { style: 'currency' }).format(1);

// @case panel-axis-labels-builder
const times = [0, 1, 2, 3].map((i) => Date.UTC(2024, 0, 29) + i * 86400000 * 7);
const fmtDay = new Intl.DateTimeFormat('en-US', { timeZone: 'UTC', month: 'short', day: 'numeric' });
const fmtUsd = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumFractionDigits: 0 });
return { x: times.map((t) => fmtDay.format(t)), y: [0, 25000, 50000, 1e6].map((v) => fmtUsd.format(v)) };

// @case pluralrules-and-relativetime
const pr = new Intl.PluralRules('en-US');
const ord = new Intl.PluralRules('en-US', { type: 'ordinal' });
const rtf = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });
return { pr: [0, 1, 2].map((n) => pr.select(n)), ord: [1, 2, 3, 4, 11, 22].map((n) => ord.select(n)), rtf: [rtf.format(-1, 'day'), rtf.format(2, 'week'), rtf.format(0, 'day')] };

// @case date-getters-local-equal-utc-in-utc-tz
const d = new Date('2024-11-03T07:30:00Z');
return { same: d.getHours() === d.getUTCHours() && d.getDate() === d.getUTCDate(), offset: d.getTimezoneOffset(), local: new Date(2024, 10, 3, 7, 30).toISOString() };

// @case parse-more-human-formats
const inputs = ['01/05/2024', '1/5/2024 14:30', 'Jan 5 2024', '2024-01-05 10:00:00', '2024-01-05 10:00', 'Fri Jan 05 2024 10:00:00 GMT+0100', '5 January 2024', 'Jan 2024', '2024-01-05T10:00:00+0100', '2024-01-05T10:00', 'Mar 1, 2024 9:15 AM', 'Mar 1, 2024 9:15 PM', '2024-01-05 10:00:00 UTC', '2024-01-05T10:00:00.1Z', 'Dec 31, 2023 12:00 AM', 'foo 5 2024', '13/45/2024'];
return inputs.map((s) => { const t = Date.parse(s); return [s, Number.isNaN(t) ? 'NaN' : new Date(t).toISOString()]; });
