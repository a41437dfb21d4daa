// Small DOM and formatting helpers shared by the dashboard parts. Everything that shows
// model-written data goes through `h()` / textContent: no HTML strings with data.

/** Creates an element: h('div.card.big', {title: 'x', onclick: fn, dataset: {...}}, child, 'text'). */
export function h(tag, attrs, ...children) {
  const [name, ...classes] = tag.split('.');
  const el = document.createElement(name || 'div');
  if (classes.length) el.className = classes.join(' ');
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v == null || v === false) continue;
      if (k === 'dataset') Object.assign(el.dataset, v);
      else if (k === 'style' && typeof v === 'object') Object.assign(el.style, v);
      else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
      else if (k === 'text') el.textContent = String(v);
      else if (k in el && typeof v !== 'string') el[k] = v;
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  for (const c of children.flat()) {
    if (c == null || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

export { relativeTime, absoluteTime, timeAgo } from '../time.js';

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

/** Only http(s) links from data become anchors. */
export function safeUrl(u) {
  if (typeof u !== 'string') return null;
  try {
    const url = new URL(u, location.href);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

/** `#rrggbb` (or rgb()) with an alpha, for translucent chart fills. */
export function withAlpha(color, alpha) {
  const c = String(color || '').trim();
  let m = /^#([0-9a-f]{6})$/i.exec(c);
  if (m) {
    const n = parseInt(m[1], 16);
    return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${alpha})`;
  }
  m = /^#([0-9a-f]{3})$/i.exec(c);
  if (m) {
    const [r, g, b] = m[1].split('').map((x) => parseInt(x + x, 16));
    return `rgba(${r}, ${g}, ${b}, ${alpha})`;
  }
  m = /^rgba?\(([^)]+)\)$/i.exec(c);
  if (m) {
    const [r, g, b] = m[1].split(',').map((s) => s.trim());
    return `rgba(${r}, ${g}, ${b}, ${alpha})`;
  }
  return c;
}

/** Stable JSON for comparisons. */
export const json = (v) => JSON.stringify(v ?? null);

/** A 16×16 stroked SVG icon (drawn at 14 px) from one path. */
export function icon(d, strokeWidth = 1.4) {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  for (const [k, v] of [['viewBox', '0 0 16 16'], ['width', '14'], ['height', '14'], ['aria-hidden', 'true']]) {
    svg.setAttribute(k, v);
  }
  const path = document.createElementNS(ns, 'path');
  const attrs = [['d', d], ['fill', 'none'], ['stroke', 'currentColor'], ['stroke-width', String(strokeWidth)],
    ['stroke-linejoin', 'round'], ['stroke-linecap', 'round']];
  for (const [k, v] of attrs) path.setAttribute(k, v);
  svg.append(path);
  return svg;
}
