// ECharts v6 (tree-shaken) for bar, heatmap, pie, radar and scatter panels.
//
// Every option is rebuilt from (data, theme colours) and applied with `setOption(…,
// {replaceMerge: ['series']})`; series carry stable ids so ECharts animates updates in place.
import * as echarts from 'echarts/core';
import { BarChart, HeatmapChart, PieChart, RadarChart, ScatterChart } from 'echarts/charts';
import {
  GridComponent, TooltipComponent, LegendComponent, VisualMapComponent,
} from 'echarts/components';
import { CanvasRenderer } from 'echarts/renderers';
import { formatNumber, formatAxis, formatTimeLabel } from '../format.js';
import { withAlpha } from '../color.js';

echarts.use([
  BarChart, HeatmapChart, PieChart, RadarChart, ScatterChart,
  GridComponent, TooltipComponent, LegendComponent, VisualMapComponent, CanvasRenderer,
]);

const num = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const CATEGORY_KEYS = ['name', 'label', 'category', 'time'];

function base(c, font) {
  return {
    color: c.palette.length ? c.palette : undefined,
    backgroundColor: 'transparent',
    textStyle: { fontFamily: font, color: c.text },
    animationDurationUpdate: 300,
    tooltip: {
      backgroundColor: c.raised || c.bg,
      borderColor: c.border,
      textStyle: { color: c.text, fontSize: 12 },
      extraCssText: 'box-shadow: 0 4px 14px rgba(0,0,0,.12); border-radius: 6px;',
      confine: true,
      valueFormatter: (v) => (typeof v === 'number' ? formatNumber(v) : v),
    },
    legend: {
      show: false, type: 'scroll', top: 0, left: 0, icon: 'roundRect', itemWidth: 10, itemHeight: 10,
      textStyle: { color: c.muted, fontSize: 11 }, pageTextStyle: { color: c.muted },
      pageIconColor: c.muted, pageIconInactiveColor: c.border,
    },
  };
}

function axis(c, extra = {}) {
  return {
    axisLine: { lineStyle: { color: c.border } },
    axisTick: { show: false },
    axisLabel: { color: c.muted, fontSize: 11, hideOverlap: true },
    splitLine: { lineStyle: { color: c.grid } },
    nameTextStyle: { color: c.muted },
    ...extra,
  };
}

/** Bars; `config.stacked` stacks the series, `config.horizontal` lays the bars sideways. */
export function barOption(rows, c, _size, config = {}) {
  if (!Array.isArray(rows)) throw new Error('bar: expected an array of rows');
  rows = rows.filter((r) => r && typeof r === 'object');
  const catKey = CATEGORY_KEYS.find((k) => rows.some((r) => r[k] != null)) ?? 'name';
  const seen = new Set();
  for (const r of rows) for (const k of Object.keys(r)) if (k !== catKey && !CATEGORY_KEYS.includes(k)) seen.add(k);
  const fields = [...seen].filter((k) => rows.some((r) => num(r[k]) !== null));
  let step = Infinity;
  if (catKey === 'time') {
    for (let i = 1; i < rows.length; i++) step = Math.min(step, rows[i].time - rows[i - 1].time);
  }
  const cats = rows.map((r) => (catKey === 'time' ? formatTimeLabel(r.time, step) : String(r[catKey] ?? '')));
  const single = fields.length === 1;
  const signed = single && rows.some((r) => num(r[fields[0]]) < 0);
  const stacked = config.stacked === true && fields.length > 1;
  const horizontal = config.horizontal === true;
  // Rounded ends point away from the axis: up/down, or right/left when horizontal.
  const ends = (negative) => (horizontal ? (negative ? [3, 0, 0, 3] : [0, 3, 3, 0]) : (negative ? [0, 0, 3, 3] : [3, 3, 0, 0]));
  const categoryAxis = axis(c, { type: 'category', data: cats, splitLine: { show: false }, inverse: horizontal });
  const valueAxis = axis(c, { type: 'value', axisLine: { show: false }, axisLabel: { color: c.muted, fontSize: 11, formatter: formatAxis } });
  return {
    legend: { show: fields.length > 1, data: fields },
    tooltip: { trigger: 'axis', axisPointer: { type: 'shadow', shadowStyle: { color: withAlpha(c.muted, 0.08) } } },
    grid: { left: 8, right: 12, top: fields.length > 1 ? 30 : 12, bottom: 6, outerBoundsMode: 'same', outerBoundsContain: 'axisLabel' },
    xAxis: horizontal ? valueAxis : categoryAxis,
    yAxis: horizontal ? categoryAxis : valueAxis,
    series: fields.map((f) => ({
      id: `bar:${f}`,
      name: f,
      type: 'bar',
      barMaxWidth: 28,
      ...(stacked ? { stack: 'total' } : {}),
      // Stacked segments meet flat; only lone bars get rounded ends.
      itemStyle: { borderRadius: stacked ? 0 : ends(false) },
      data: rows.map((r) => {
        const v = num(r[f]);
        if (!signed || v === null) return v;
        return { value: v, itemStyle: { color: v < 0 ? c.down : c.up, borderRadius: ends(v < 0) } };
      }),
    })),
  };
}

function heatmapOption(data, c, size) {
  let xLabels;
  let yLabels;
  let values;
  if (data && Array.isArray(data.matrix)) {
    xLabels = (data.labels ?? data.matrix.map((_, i) => String(i))).map(String);
    yLabels = xLabels;
    values = [];
    data.matrix.forEach((row, y) => (row ?? []).forEach((v, x) => values.push([x, y, num(v) ?? '-'])));
  } else if (data && Array.isArray(data.values)) {
    xLabels = (data.xLabels ?? []).map(String);
    yLabels = (data.yLabels ?? []).map(String);
    values = data.values.map((t) => [t[0], t[1], num(t[2]) ?? '-']);
  } else {
    throw new Error('heatmap: expected {xLabels, yLabels, values} or {labels, matrix}');
  }
  const nums = values.map((v) => v[2]).filter((v) => typeof v === 'number');
  let min = nums.length ? Math.min(...nums) : 0;
  let max = nums.length ? Math.max(...nums) : 1;
  const diverging = min < 0 && max > 0;
  if (diverging) {
    const m = Math.max(-min, max);
    min = -m;
    max = m;
  }
  if (min === max) max = min + 1;
  const cellW = (size.width - 70) / Math.max(1, xLabels.length);
  const cellH = (size.height - 80) / Math.max(1, yLabels.length);
  const showLabels = values.length <= 144 && cellW >= 34 && cellH >= 16;
  return {
    tooltip: {
      trigger: 'item',
      formatter: (p) => `${escapeHtml(yLabels[p.value[1]] ?? '')} × ${escapeHtml(xLabels[p.value[0]] ?? '')}: <b>${
        typeof p.value[2] === 'number' ? formatNumber(p.value[2]) : '–'}</b>`,
    },
    grid: { left: 8, right: 8, top: 8, bottom: 34, outerBoundsMode: 'same', outerBoundsContain: 'axisLabel' },
    xAxis: axis(c, { type: 'category', data: xLabels, splitArea: { show: false }, splitLine: { show: false }, axisLabel: { color: c.muted, fontSize: 10, rotate: xLabels.length > 6 ? 35 : 0, hideOverlap: false } }),
    yAxis: axis(c, { type: 'category', data: yLabels, inverse: true, splitLine: { show: false }, axisLabel: { color: c.muted, fontSize: 10 } }),
    visualMap: {
      min, max, calculable: false, orient: 'horizontal', left: 'center', bottom: 0, itemHeight: 120, itemWidth: 10,
      textStyle: { color: c.muted, fontSize: 10 },
      formatter: (v) => formatNumber(+Number(v).toFixed(2)),
      inRange: { color: diverging ? [c.down, withAlpha(c.muted, 0.12), c.accent] : [withAlpha(c.accent, 0.08), c.accent] },
    },
    series: [{
      id: 'heatmap',
      type: 'heatmap',
      data: values,
      label: { show: showLabels, fontSize: 10, color: c.text, formatter: (p) => (typeof p.value[2] === 'number' ? (+p.value[2].toFixed(2)).toString() : '') },
      itemStyle: { borderColor: c.bg, borderWidth: 1, borderRadius: 2 },
      emphasis: { itemStyle: { borderColor: c.text, borderWidth: 1 } },
    }],
  };
}

function pieOption(rows, c, size) {
  if (!Array.isArray(rows)) throw new Error('pie: expected an array of {name, value}');
  const data = rows.filter((r) => r && typeof r === 'object').map((r) => ({ name: String(r.name ?? ''), value: num(r.value) ?? 0 }));
  const wide = size.width >= 330 && size.width > size.height * 1.25;
  return {
    tooltip: { trigger: 'item', valueFormatter: undefined, formatter: (p) => `${escapeHtml(p.name)}: <b>${formatNumber(p.value)}</b> (${p.percent}%)` },
    legend: wide
      ? { show: true, orient: 'vertical', left: 0, top: 'middle', type: 'scroll', width: Math.round(size.width * 0.4) }
      : { show: true, orient: 'horizontal', left: 'center', top: 'auto', bottom: 0, type: data.length <= 8 ? 'plain' : 'scroll',
        textStyle: { color: c.muted, fontSize: 11, width: Math.max(60, Math.round(size.width / 3) - 30), overflow: 'truncate' } },
    series: [{
      id: 'pie',
      type: 'pie',
      radius: wide ? ['50%', '80%'] : ['42%', '68%'],
      center: wide ? ['68%', '50%'] : ['50%', data.length > 4 && data.length <= 8 ? '40%' : '44%'],
      avoidLabelOverlap: true,
      itemStyle: { borderColor: c.bg, borderWidth: 2, borderRadius: 4 },
      label: { show: false },
      emphasis: { label: { show: true, color: c.text, fontWeight: 600, formatter: '{d}%' } },
      data,
    }],
  };
}

function radarOption(d, c, size) {
  if (!d || !Array.isArray(d.indicators) || !Array.isArray(d.series)) {
    throw new Error('radar: expected {indicators: [{name, max}], series: [{name, values}]}');
  }
  return {
    legend: { show: d.series.length > 1, data: d.series.map((s) => String(s.name ?? '')) },
    tooltip: { trigger: 'item' },
    radar: {
      indicator: d.indicators.map((i) => ({ name: String(i.name ?? ''), max: num(i.max) ?? undefined })),
      radius: size.width < 300 ? '50%' : '60%',
      center: ['50%', d.series.length > 1 ? '57%' : '52%'],
      axisName: { color: c.muted, fontSize: size.width < 300 ? 10 : 11 },
      axisLine: { lineStyle: { color: c.border } },
      splitLine: { lineStyle: { color: c.border } },
      splitArea: { areaStyle: { color: [withAlpha(c.muted, 0.03), 'transparent'] } },
    },
    series: [{
      id: 'radar',
      type: 'radar',
      symbolSize: 4,
      areaStyle: { opacity: 0.18 },
      lineStyle: { width: 2 },
      data: d.series.map((s) => ({ name: String(s.name ?? ''), value: (s.values ?? []).map((v) => num(v) ?? 0) })),
    }],
  };
}

function scatterOption(rows, c) {
  if (!Array.isArray(rows)) throw new Error('scatter: expected an array of {x, y}');
  rows = rows.filter((r) => r && num(r.x) !== null && num(r.y) !== null);
  const sizes = rows.map((r) => num(r.size)).filter((v) => v !== null && v >= 0);
  const maxSize = sizes.length ? Math.max(...sizes) : 0;
  const sym = (r) => (maxSize > 0 && num(r.size) !== null ? 6 + 22 * Math.sqrt(Math.max(0, r.size) / maxSize) : 9);
  const labelled = rows.some((r) => r.name != null) && rows.length <= 40;
  return {
    tooltip: {
      trigger: 'item',
      formatter: (p) => `${p.data.name ? `${escapeHtml(p.data.name)}<br>` : ''}x: <b>${formatNumber(p.value[0])}</b>  y: <b>${formatNumber(p.value[1])}</b>`,
    },
    grid: { left: 8, right: labelled ? 34 : 16, top: 14, bottom: 6, outerBoundsMode: 'same', outerBoundsContain: 'axisLabel' },
    xAxis: axis(c, { type: 'value', scale: true, axisLabel: { color: c.muted, fontSize: 11, formatter: formatAxis, hideOverlap: true } }),
    yAxis: axis(c, { type: 'value', scale: true, axisLine: { show: false }, axisLabel: { color: c.muted, fontSize: 11, formatter: formatAxis } }),
    series: [{
      id: 'scatter',
      type: 'scatter',
      itemStyle: { color: withAlpha(c.accent, 0.75), borderColor: c.accent },
      label: { show: labelled, position: 'right', color: c.muted, fontSize: 10, formatter: (p) => p.data.name ?? '' },
      data: rows.map((r) => ({ name: r.name != null ? String(r.name) : undefined, value: [r.x, r.y], symbolSize: sym(r) })),
    }],
  };
}

function escapeHtml(s) {
  return String(s).replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]);
}

const BUILDERS = { bar: barOption, heatmap: heatmapOption, pie: pieOption, radar: radarOption, scatter: scatterOption };

export function createEchartsRenderer(body, panel, colors) {
  const kind = panel.type;
  const config = panel.config ?? {};
  const build = BUILDERS[kind];
  if (!build) throw new Error(`no ECharts renderer for ${kind}`);
  const host = document.createElement('div');
  host.className = 'ec-host';
  body.append(host);
  const font = getComputedStyle(document.documentElement).getPropertyValue('--font').trim();
  // The ECharts instance is created once the host has a size (a hidden pane has none, and
  // ECharts warns about that); until then the latest option waits.
  let chart = null;
  let c = colors;
  let last;
  let hasData = false;
  const size = () => ({ width: host.clientWidth, height: host.clientHeight });
  const visible = () => host.clientWidth > 0 && host.clientHeight > 0;
  const ro = new ResizeObserver(() => {
    if (!visible()) return;
    if (!chart) {
      if (hasData) apply(last);
      return;
    }
    chart.resize();
    // Heatmap cell labels, pie legend placement and radar size depend on the size.
    if (kind !== 'bar' && kind !== 'scatter' && hasData) apply(last);
  });
  ro.observe(host);

  function apply(data) {
    if (!chart) {
      if (!visible()) return;
      chart = echarts.init(host, null, { renderer: 'canvas' });
    }
    const option = { ...base(c, font), ...merge(build(data, c, size(), config), c, font) };
    chart.setOption(option, { replaceMerge: ['series'] });
  }
  function merge(o, cc, f) {
    // Per-type tooltip/legend settings merge over the themed defaults.
    const b = base(cc, f);
    return {
      ...o,
      tooltip: { ...b.tooltip, ...(o.tooltip ?? {}) },
      legend: { ...b.legend, ...(o.legend ?? {}) },
    };
  }
  return {
    set(data) {
      // Build first: a bad shape throws before touching the chart.
      build(data, c, size(), config);
      last = data;
      hasData = true;
      apply(data);
      return 'set';
    },
    theme(colors2) {
      c = colors2;
      if (hasData) apply(last);
    },
    destroy() {
      ro.disconnect();
      chart?.dispose();
      host.remove();
    },
  };
}
