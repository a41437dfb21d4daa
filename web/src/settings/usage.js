// Usage: model calls per UTC day and model over a date range (default: the last 30 days) from
// `GET /api/usage?groupBy=day,model`, as an ECharts stacked bar chart of cost, tokens or
// requests, and a table of totals per model. Only what the server counted is shown: an empty
// range says so, and calls of models without prices are marked unpriced, never costed.
//
// Test hooks: `.settings-usage`, `form.usage-range` (`input[name=from|to]`, `select[name=metric]`),
// `.usage-chart` (its canvas; `data-metric`, `data-series`), `.usage-table` with
// `tr.usage-row[data-model]`, `.usage-empty`; the section's `data-state` (`loading`, `empty`, `ok`, `error`).
import * as echarts from 'echarts/core';
import { BarChart } from 'echarts/charts';
import { GridComponent, TooltipComponent, LegendComponent } from 'echarts/components';
import { CanvasRenderer } from 'echarts/renderers';
import { h } from '../dom.js';
import { themeColors } from '../theme.js';
import { formatNumber, formatAxis } from '../dashboard/format.js';
import { field, formError, clearErrors, showError } from './form.js';
import { METRICS, lastDays, pivot, totalsByModel, defaultMetric } from './report.js';

echarts.use([BarChart, GridComponent, TooltipComponent, LegendComponent, CanvasRenderer]);

const usd = (v) => (v === 0 ? '$0' : `$${formatNumber(v)}`);
const int = (v) => formatNumber(v);

export function createUsage({ api, bus }) {
  const range = lastDays(30);
  const from = h('input', { name: 'from', type: 'date', value: range.from, required: true });
  const to = h('input', { name: 'to', type: 'date', value: range.to, required: true });
  const metric = h('select', { name: 'metric' }, Object.entries(METRICS).map(([v, m]) => h('option', { value: v, text: m.label })));
  const error = formError();
  const form = h('form.usage-range.settings-form', null,
    h('div.form-row', null,
      field('From', 'from', from),
      field('To', 'to', to),
      field('Show', 'metric', metric)),
    error);
  const chartEl = h('div.usage-chart', { role: 'img', 'aria-label': 'Usage per day by model' });
  const empty = h('p.usage-empty.settings-empty', { hidden: true, text: 'No model calls in this range' });
  const table = h('div.settings-table-wrap.usage-table-wrap');
  const note = h('p.section-note.usage-note', { text: 'UTC days. Tokens and cost as the providers reported them; cost from the models’ prices.' });
  const el = h('section.settings-section.settings-usage', { 'aria-labelledby': 'settings-usage-title' },
    h('h2#settings-usage-title', { text: 'Usage' }),
    form, note, empty, chartEl, table);

  let rows = [];
  let shown = { from: range.from, to: range.to };
  let metricChosen = false;
  let chart = null;
  let seq = 0;

  form.addEventListener('change', (e) => {
    if (e.target === metric) {
      metricChosen = true;
      draw();
    } else {
      load();
    }
  });
  form.addEventListener('submit', (e) => { e.preventDefault(); load(); });

  async function load() {
    const mine = ++seq;
    clearErrors(form);
    el.dataset.state = 'loading';
    const q = new URLSearchParams({ groupBy: 'day,model' });
    if (from.value) q.set('from', from.value);
    if (to.value) q.set('to', to.value);
    try {
      const report = await api.get(`/api/usage?${q}`);
      if (mine !== seq) return;
      rows = report.rows ?? [];
      shown = { from: report.from, to: report.to };
      if (!metricChosen) metric.value = defaultMetric(rows);
      draw();
    } catch (e) {
      if (mine !== seq) return;
      el.dataset.state = 'error';
      showError(form, e);
    }
    el.dataset.loaded = '';
  }

  function draw() {
    if (!rows.length) {
      el.dataset.state = 'empty';
      empty.hidden = false;
      chartEl.hidden = true;
      table.replaceChildren();
      chart?.dispose();
      chart = null;
      return;
    }
    empty.hidden = true;
    chartEl.hidden = false;
    drawChart();
    drawTable();
    el.dataset.state = 'ok';
  }

  function drawChart() {
    const m = metric.value;
    const p = pivot(rows, shown.from, shown.to, m);
    const c = themeColors();
    const fmt = m === 'cost' ? usd : int;
    chart ??= echarts.init(chartEl, null, { renderer: 'canvas' });
    chart.setOption({
      color: c.palette.length ? c.palette : undefined,
      backgroundColor: 'transparent',
      textStyle: { fontFamily: getComputedStyle(document.body).fontFamily, color: c.text },
      animation: false,
      legend: { type: 'scroll', top: 0, left: 0, icon: 'roundRect', itemWidth: 10, itemHeight: 10, textStyle: { color: c.muted, fontSize: 11 }, pageTextStyle: { color: c.muted } },
      tooltip: {
        trigger: 'axis', axisPointer: { type: 'shadow' }, confine: true,
        backgroundColor: c.bg, borderColor: c.border, textStyle: { color: c.text, fontSize: 12 },
        valueFormatter: (v) => fmt(v),
      },
      grid: { left: 8, right: 12, top: 30, bottom: 6, outerBoundsMode: 'same', outerBoundsContain: 'axisLabel' },
      xAxis: {
        type: 'category', data: p.days.map((d) => d.slice(5)),
        axisLine: { lineStyle: { color: c.border } }, axisTick: { show: false },
        axisLabel: { color: c.muted, fontSize: 11, hideOverlap: true },
      },
      yAxis: {
        type: 'value', minInterval: m === 'cost' ? 0 : 1,
        axisLabel: { color: c.muted, fontSize: 11, formatter: (v) => (m === 'cost' ? `$${formatAxis(v)}` : formatAxis(v)) },
        splitLine: { lineStyle: { color: c.grid } },
      },
      series: p.series.map((s) => ({
        id: `usage:${s.model}`, name: s.model, type: 'bar', stack: 'total', barMaxWidth: 28,
        data: s.values, emphasis: { focus: 'series' },
      })),
    }, { replaceMerge: ['series'] });
    chartEl.dataset.metric = m;
    chartEl.dataset.series = String(p.series.length);
    chart.resize();
  }

  function drawTable() {
    const { models, total } = totalsByModel(rows);
    const cost = (t) => (t.unpriced && !t.costUsd ? `unpriced (${int(t.unpriced)})` : `${usd(t.costUsd)}${t.unpriced ? ` + ${int(t.unpriced)} unpriced` : ''}`);
    const row = (t, cls) => h(`tr.${cls}`, { dataset: cls === 'usage-row' ? { model: t.model } : null },
      h('td.usage-model', { text: t.model }),
      h('td.num', { text: int(t.requests) }),
      h('td.num', { text: int(t.errors) }),
      h('td.num', { text: int(t.inputTokens) }),
      h('td.num', { text: int(t.outputTokens) }),
      h('td.num', { text: int(t.cachedTokens) }),
      h('td.num', { text: cost(t) }));
    table.replaceChildren(h('table.settings-table.usage-table', null,
      h('thead', null, h('tr', null, ['Model', 'Requests', 'Errors', 'Input tokens', 'Output tokens', 'Cached', 'Cost'].map((t, i) => h(i ? 'th.num' : 'th', { text: t })))),
      h('tbody', null, models.map((t) => row(t, 'usage-row'))),
      models.length > 1 ? h('tfoot', null, row(total, 'usage-total')) : null));
  }

  // The chart follows its box (window and pane sizes) and the theme.
  new ResizeObserver(() => chart?.resize()).observe(chartEl);
  bus.on('theme:changed', () => { if (chart) drawChart(); });

  return { el, load };
}
