// Plain-HTML panels: table, feed, metric_card. Built with textContent only (the data is
// model-written). `set(data)` replaces the body content.
import { h, safeUrl } from '../../dom.js';
import { timeAgo } from '../../time.js';
import { formatNumber, formatChange } from '../format.js';

const CHANGE_COL = /(^|_|\b)(chg|change|pct|return|ret|delta|diff)|%|Pct|Change|Chg|Return/;

function cell(v) {
  if (v === null || v === undefined) return { text: '–', cls: 'null' };
  if (typeof v === 'number') return { text: formatNumber(v), cls: 'num', num: v };
  if (typeof v === 'boolean') return { text: v ? 'yes' : 'no', cls: 'bool' };
  if (typeof v === 'object') return { text: JSON.stringify(v), cls: '' };
  return { text: String(v), cls: '' };
}

function table(data) {
  let columns;
  let rows;
  if (Array.isArray(data)) {
    const seen = new Set();
    for (const r of data) if (r && typeof r === 'object') for (const k of Object.keys(r)) seen.add(k);
    columns = [...seen];
    rows = data.map((r) => columns.map((k) => r?.[k]));
  } else if (data && Array.isArray(data.columns) && Array.isArray(data.rows)) {
    columns = data.columns.map(String);
    rows = data.rows.map((r) => (Array.isArray(r) ? r : columns.map((k) => r?.[k])));
  } else {
    throw new Error('table: expected [{col: cell}] or {columns, rows}');
  }
  const numeric = columns.map((_, i) => rows.some((r) => typeof r[i] === 'number')
    && rows.every((r) => r[i] == null || typeof r[i] === 'number'));
  const signed = columns.map((c, i) => numeric[i] && CHANGE_COL.test(c));
  if (!rows.length) return h('div.panel-empty', { text: 'No rows' });
  // Panel data may hold tens of thousands of rows (up to 4 MiB): draw the first MAX_ROWS.
  const shown = rows.length > MAX_ROWS ? rows.slice(0, MAX_ROWS) : rows;
  return h('div.table-wrap', null, h('table.data-table', null,
    h('thead', null, h('tr', null, columns.map((c, i) => h(`th${numeric[i] ? '.num' : ''}`, { text: c, scope: 'col' })))),
    h('tbody', null, shown.map((r) => h('tr', null, columns.map((_, i) => {
      const x = cell(r[i]);
      const cls = [x.cls, signed[i] && x.num > 0 ? 'up' : '', signed[i] && x.num < 0 ? 'down' : '']
        .filter(Boolean).join('.');
      const text = signed[i] && typeof x.num === 'number' && x.num > 0 ? `+${x.text}` : x.text;
      return h(`td${cls ? `.${cls}` : ''}`, { text });
    }))))),
  shown.length < rows.length ? h('div.more-rows', { text: `First ${formatNumber(MAX_ROWS)} of ${formatNumber(rows.length)} rows` }) : null);
}

/** Most table rows and feed items drawn (the rest are counted, not drawn). */
const MAX_ROWS = 1000;
const MAX_ITEMS = 200;

function sentimentOf(s) {
  if (typeof s === 'number') {
    return { cls: s > 0.05 ? 'up' : s < -0.05 ? 'down' : 'flat', text: s > 0.05 ? 'positive' : s < -0.05 ? 'negative' : 'neutral', title: String(s) };
  }
  if (typeof s === 'string' && s) {
    const t = s.toLowerCase();
    const cls = /pos|bull|up|good|buy/.test(t) ? 'up' : /neg|bear|down|bad|sell/.test(t) ? 'down' : 'flat';
    return { cls, text: s, title: s };
  }
  return null;
}

const FEED_SHOWN = new Set(['time', 'title', 'text', 'url', 'source', 'author', 'sentiment']);

function feed(data) {
  const items = Array.isArray(data) ? data : Array.isArray(data?.items) ? data.items : null;
  if (!items) throw new Error('feed: expected [{time, title|text}] or {items}');
  const sorted = items.filter((i) => i && typeof i === 'object')
    .slice().sort((a, b) => (b.time ?? 0) - (a.time ?? 0));
  if (!sorted.length) return h('div.panel-empty', { text: 'Nothing yet' });
  return h('ul.feed', null, sorted.slice(0, MAX_ITEMS).map((it) => {
    const title = it.title ?? it.text;
    const text = it.title != null && it.text != null ? it.text : null;
    const url = safeUrl(it.url);
    const ms = typeof it.time === 'number' ? it.time * 1000 : NaN;
    const s = sentimentOf(it.sentiment);
    const extra = Object.entries(it).filter(([k, v]) => !FEED_SHOWN.has(k) && v != null && typeof v !== 'object');
    return h('li.feed-item', null,
      h('div.feed-meta', null,
        timeAgo(h('time', { datetime: Number.isFinite(ms) ? new Date(ms).toISOString() : null }), ms),
        it.source != null ? h('span.feed-source', { text: String(it.source) }) : null,
        it.author != null ? h('span.feed-author', { text: String(it.author) }) : null,
        s ? h(`span.badge.${s.cls}`, { text: s.text, title: `sentiment: ${s.title}` }) : null,
        extra.slice(0, 3).map(([k, v]) => h('span.feed-extra', { text: `${k}: ${typeof v === 'number' ? formatNumber(v) : v}` }))),
      url
        ? h('a.feed-title', { href: url, target: '_blank', rel: 'noopener noreferrer', text: String(title ?? '') })
        : h('div.feed-title', { text: String(title ?? '') }),
      text != null ? h('p.feed-text', { text: String(text) }) : null);
  }));
}

function metricCards(data) {
  const cards = Array.isArray(data) ? data : [data];
  if (!cards.length || cards.some((c) => !c || typeof c !== 'object')) {
    throw new Error('metric_card: expected {value, label?, change?, unit?} or an array of them');
  }
  return h(`div.metrics${cards.length === 1 ? '.single' : ''}`, null, cards.map((c) => {
    const change = typeof c.change === 'number' && Number.isFinite(c.change) ? c.change : null;
    const dir = change === null ? '' : change > 0 ? 'up' : change < 0 ? 'down' : 'flat';
    return h('div.metric', null,
      c.label != null ? h('div.metric-label', { text: String(c.label), title: String(c.label) }) : null,
      h('div.metric-value', null,
        h(`span.metric-number${typeof c.value === 'number' ? '' : '.text'}`, { text: typeof c.value === 'number' ? formatNumber(c.value) : String(c.value ?? '–') }),
        c.unit != null ? h('span.metric-unit', { text: String(c.unit) }) : null),
      change !== null
        ? h(`div.metric-change.${dir}`, null, h('span.arrow', { text: change > 0 ? '▲' : change < 0 ? '▼' : '■' }), formatChange(change))
        : null);
  }));
}

const BUILDERS = { table, feed, metric_card: metricCards };

export function createCustomRenderer(body, panel) {
  const build = BUILDERS[panel.type];
  if (!build) throw new Error(`no HTML renderer for ${panel.type}`);
  const host = h(`div.custom-host.custom-${panel.type.replace('_', '-')}`);
  body.append(host);
  return {
    set(data) {
      const node = build(data);
      host.replaceChildren(node);
      return 'replace';
    },
    theme() {},
    destroy() {
      host.remove();
    },
  };
}
