// Values written as text: numbers, axis ticks, time labels and percent changes for display, and
// JSON keys for telling whether a definition changed. Pure: no DOM.

const nf = new Map();
function numberFormat(max, min = 0) {
  const key = `${min}:${max}`;
  if (!nf.has(key)) {
    nf.set(key, new Intl.NumberFormat(undefined, { minimumFractionDigits: min, maximumFractionDigits: max }));
  }
  return nf.get(key);
}

/** A readable number: grouping, precision by magnitude. */
export function formatNumber(v) {
  if (typeof v !== 'number' || !Number.isFinite(v)) return v == null ? '' : String(v);
  const a = Math.abs(v);
  if (a >= 1e12) return `${numberFormat(2).format(v / 1e12)}T`;
  if (a >= 1e9) return `${numberFormat(2).format(v / 1e9)}B`;
  if (a >= 1e7) return `${numberFormat(2).format(v / 1e6)}M`;
  if (a >= 1000) return numberFormat(2).format(v);
  if (a >= 1) return numberFormat(a >= 100 ? 2 : 4).format(v);
  if (a === 0) return '0';
  return numberFormat(6).format(v);
}

const compact = new Intl.NumberFormat(undefined, { notation: 'compact', maximumFractionDigits: 2 });

/** A short number for axes: 1.2M, 950K, 2,582.5, 0.0123. */
export function formatAxis(v) {
  if (typeof v !== 'number' || !Number.isFinite(v)) return String(v ?? '');
  const a = Math.abs(v);
  if (a >= 1e5) return compact.format(v);
  if (a >= 100) return numberFormat(2).format(v);
  if (a >= 1 || a === 0) return numberFormat(2).format(v);
  return numberFormat(Math.min(8, 2 + Math.ceil(-Math.log10(a)))).format(v);
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** A category label for a UTC-seconds time, by the spacing of the series (`step` seconds). */
export function formatTimeLabel(t, step) {
  if (typeof t !== 'number') return String(t ?? '');
  const d = new Date(t * 1000);
  const mon = MONTHS[d.getUTCMonth()];
  if (step >= 28 * 86400) return `${mon} ${d.getUTCFullYear()}`;
  if (step >= 86400) return `${mon} ${d.getUTCDate()}`;
  return `${mon} ${d.getUTCDate()} ${d.toISOString().slice(11, 16)}`;
}

/** A percent change with its sign: +1.25%. */
export function formatChange(v) {
  if (typeof v !== 'number' || !Number.isFinite(v)) return '';
  return `${v > 0 ? '+' : v < 0 ? '−' : ''}${numberFormat(2, 2).format(Math.abs(v))}%`;
}

/** Stable JSON of a value: panel definitions and variables are compared by it. */
export const json = (v) => JSON.stringify(v ?? null);
