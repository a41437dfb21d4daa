// lightweight-charts v5 for candlestick, line and area panels.
//
// Data (src/dashboard/data.rs): rows `{time, ...}` with `time` in UTC seconds, ascending.
// candlestick: open/high/low/close + optional volume (histogram on its own overlay scale at the
// bottom) + every other numeric field as an overlay line. line/area: one series per non-time
// field; null → whitespace point `{time}`.
//
// `set(rows)` applies data in place: when the new rows are the old ones plus at most one
// newer/same-time last row, only `series.update(last)` runs; otherwise `setData`.
import {
  createChart, CandlestickSeries, LineSeries, AreaSeries, HistogramSeries, ColorType, CrosshairMode,
  PriceScaleMode,
} from 'lightweight-charts';
import { h } from '../../dom.js';
import { withAlpha } from '../color.js';
import { formatAxis } from '../format.js';

const OHLC = new Set(['time', 'open', 'high', 'low', 'close', 'volume']);

function fieldsOf(rows, skip) {
  const seen = new Set();
  for (const r of rows) {
    if (!r || typeof r !== 'object') continue;
    for (const k of Object.keys(r)) if (!skip.has(k)) seen.add(k);
  }
  return [...seen];
}

const num = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const point = (time, v) => (num(v) === null ? { time } : { time, value: v });

function chartOptions(c, font) {
  return {
    layout: {
      background: { type: ColorType.Solid, color: c.bg || 'transparent' },
      textColor: c.muted,
      fontFamily: font,
      fontSize: 11,
      panes: { separatorColor: c.border },
      // Attribution is in the dashboard footer (see view.js) instead of a logo on every chart.
      attributionLogo: false,
    },
    grid: {
      vertLines: { color: c.grid },
      horzLines: { color: c.grid },
    },
    rightPriceScale: { borderColor: c.border },
    leftPriceScale: { borderColor: c.border },
    timeScale: { borderColor: c.border },
    crosshair: {
      mode: CrosshairMode.Normal,
      vertLine: { color: c.muted, labelBackgroundColor: c.muted },
      horzLine: { color: c.muted, labelBackgroundColor: c.muted },
    },
  };
}

export function createLightweightRenderer(body, panel, colors) {
  const kind = panel.type;
  const host = h('div.lw-host');
  const legend = h('div.chart-legend');
  body.append(host, legend);
  const font = getComputedStyle(document.documentElement).getPropertyValue('--font').trim();
  let c = colors;
  const chart = createChart(host, {
    autoSize: true,
    ...chartOptions(c, font),
    // config.logScale: a logarithmic price axis (long histories of assets that grew a lot).
    rightPriceScale: {
      borderColor: c.border,
      mode: panel.config?.logScale === true ? PriceScaleMode.Logarithmic : PriceScaleMode.Normal,
    },
    timeScale: { borderColor: c.border, rightOffset: 2, fixLeftEdge: true, fixRightEdge: true },
    localization: { priceFormatter: formatAxis },
    handleScroll: { vertTouchDrag: false },
  });

  /** key → {series, role, index} */
  let series = new Map();
  let signature = '';
  let prevRows = [];
  let intraday = null;

  const colorAt = (i) => c.palette[i % Math.max(1, c.palette.length)] || c.accent;

  function styleFor(role, i) {
    if (role === 'candle') {
      return {
        upColor: c.up, downColor: c.down, wickUpColor: c.up, wickDownColor: c.down,
        borderVisible: false,
      };
    }
    if (role === 'volume') return { color: withAlpha(c.muted, 0.35) };
    const color = colorAt(i);
    if (role === 'area') {
      return {
        lineColor: color,
        topColor: withAlpha(color, series.size > 1 ? 0.16 : 0.28),
        bottomColor: withAlpha(color, 0.02),
      };
    }
    return { color };
  }

  function build(keys) {
    for (const { series: s } of series.values()) chart.removeSeries(s);
    series = new Map();
    const add = (key, def, role, index, extra = {}) => {
      const s = chart.addSeries(def, { ...extra, ...styleFor(role, index) });
      series.set(key, { series: s, role, index });
    };
    if (kind === 'candlestick') {
      add('candle', CandlestickSeries, 'candle', 0, { priceLineVisible: true });
      if (keys.volume) {
        add('volume', HistogramSeries, 'volume', 0, {
          priceScaleId: 'volume', priceFormat: { type: 'volume' }, lastValueVisible: false,
          priceLineVisible: false,
        });
        chart.priceScale('volume').applyOptions({ scaleMargins: { top: 0.82, bottom: 0 } });
        series.get('candle').series.priceScale().applyOptions({ scaleMargins: { top: 0.16, bottom: 0.22 } });
      }
      keys.overlays.forEach((k, i) => add(`o:${k}`, LineSeries, 'overlay', i + 1, {
        lineWidth: 1.5, priceLineVisible: false, lastValueVisible: false, crosshairMarkerVisible: false,
        title: '',
      }));
    } else {
      const def = kind === 'area' ? AreaSeries : LineSeries;
      keys.fields.forEach((k, i) => add(`f:${k}`, def, kind === 'area' ? 'area' : 'line', i, {
        lineWidth: 2, priceLineVisible: false, lastValueVisible: keys.fields.length <= 3,
      }));
    }
    renderLegend(keys);
  }

  /** Legend entries: [label, colour, value cell] per shown series; values follow the crosshair. */
  let legendCells = [];
  function renderLegend(keys) {
    legendCells = [];
    const items = [];
    if (kind === 'candlestick') {
      const ohlc = h('span.legend-item.legend-ohlc');
      legendCells.push({ key: 'candle', cell: ohlc });
      items.push(ohlc);
      keys.overlays.forEach((n, i) => {
        const v = h('b.legend-value');
        legendCells.push({ key: `o:${n}`, cell: v });
        items.push(h('span.legend-item', null, h('i.swatch', { style: { background: colorAt(i + 1) } }), n, v));
      });
    } else {
      keys.fields.forEach((n, i) => {
        const v = h('b.legend-value');
        legendCells.push({ key: `f:${n}`, cell: v });
        items.push(h('span.legend-item', null, h('i.swatch', { style: { background: colorAt(i) } }), n, v));
      });
    }
    legend.replaceChildren(...items);
    legend.hidden = items.length === 0;
    showValues(null);
  }

  const fmt = (v) => (typeof v === 'number' && Number.isFinite(v) ? formatAxis(v) : '–');
  /** Values at the crosshair (`seriesData` of a crosshair move), or the last row's. */
  function showValues(seriesData) {
    for (const { key, cell } of legendCells) {
      const s = series.get(key)?.series;
      if (!s) continue;
      let d = seriesData?.get(s);
      if (!seriesData) {
        const all = s.data();
        d = all.length ? all[all.length - 1] : undefined;
      }
      if (key === 'candle') {
        const up = d && d.close >= d.open;
        cell.replaceChildren(...['O', 'H', 'L', 'C'].flatMap((label, i) => [
          h('span.legend-k', { text: label }),
          h(`b.legend-value.${d ? (up ? 'up' : 'down') : 'flat'}`, { text: fmt(d?.[['open', 'high', 'low', 'close'][i]]) }),
        ]));
      } else {
        cell.textContent = fmt(d?.value);
      }
    }
  }
  chart.subscribeCrosshairMove((param) => {
    showValues(param.time !== undefined && param.seriesData?.size ? param.seriesData : null);
  });

  /** Per-series points for one row. */
  function pointsOf(r, keys) {
    const out = [];
    const t = r.time;
    if (kind === 'candlestick') {
      out.push(['candle', { time: t, open: r.open, high: r.high, low: r.low, close: r.close }]);
      if (keys.volume) {
        const v = num(r.volume);
        out.push(['volume', v === null ? { time: t } : {
          time: t, value: v, color: withAlpha(r.close >= r.open ? c.up : c.down, 0.35),
        }]);
      }
      for (const k of keys.overlays) out.push([`o:${k}`, point(t, r[k])]);
    } else {
      for (const k of keys.fields) out.push([`f:${k}`, point(t, r[k])]);
    }
    return out;
  }

  function keysOf(rows) {
    if (kind === 'candlestick') {
      const overlays = fieldsOf(rows, OHLC).filter((k) => rows.some((r) => num(r?.[k]) !== null));
      return { volume: rows.some((r) => num(r?.volume) !== null), overlays };
    }
    return { fields: fieldsOf(rows, new Set(['time'])) };
  }

  function setAll(rows, keys) {
    const per = new Map([...series.keys()].map((k) => [k, []]));
    for (const r of rows) for (const [k, p] of pointsOf(r, keys)) per.get(k)?.push(p);
    for (const [k, pts] of per) series.get(k).series.setData(pts);
    chart.timeScale().fitContent();
  }

  function set(rows) {
    if (!Array.isArray(rows)) throw new Error(`${kind}: expected an array of rows`);
    rows = rows.filter((r) => r && typeof r === 'object' && typeof r.time === 'number');
    const keys = keysOf(rows);
    const sig = JSON.stringify(keys);
    let step = Infinity;
    for (let i = 1; i < rows.length && i < 50; i++) step = Math.min(step, rows[i].time - rows[i - 1].time);
    const isIntraday = step < 86400;
    if (isIntraday !== intraday) {
      intraday = isIntraday;
      chart.applyOptions({ timeScale: { timeVisible: isIntraday, secondsVisible: false } });
    }
    const strs = rows.map((r) => JSON.stringify(r));
    let how = 'set';
    if (sig !== signature) {
      signature = sig;
      build(keys);
      setAll(rows, keys);
    } else if (appendsOnly(prevRows, strs, rows)) {
      for (const [k, p] of pointsOf(rows[rows.length - 1], keys)) series.get(k)?.series.update(p);
      how = 'update';
    } else {
      setAll(rows, keys);
    }
    prevRows = strs;
    prevRows.lastTime = rows.length ? rows[rows.length - 1].time : null;
    showValues(null);
    return how;
  }

  /** New rows = old rows with the last one replaced (same time) or one newer row appended. */
  function appendsOnly(prev, next, rows) {
    if (!prev.length || !next.length) return false;
    const n = next.length;
    const p = prev.length;
    if (n === p) {
      if (rows[n - 1].time !== prev.lastTime) return false;
      for (let i = 0; i < n - 1; i++) if (prev[i] !== next[i]) return false;
      return true;
    }
    if (n === p + 1) {
      if (!(rows[n - 1].time > prev.lastTime)) return false;
      for (let i = 0; i < p; i++) if (prev[i] !== next[i]) return false;
      return true;
    }
    return false;
  }

  function theme(colors2) {
    c = colors2;
    chart.applyOptions(chartOptions(c, font));
    for (const { series: s, role, index } of series.values()) s.applyOptions(styleFor(role, index));
    if (kind === 'candlestick' && series.has('volume') && prevRows.length) {
      // Volume bars carry per-bar colours: re-colour them.
      const rows = prevRows.map((s) => JSON.parse(s));
      series.get('volume').series.setData(rows.map((r) => (num(r.volume) === null ? { time: r.time } : {
        time: r.time, value: r.volume, color: withAlpha(r.close >= r.open ? c.up : c.down, 0.35),
      })));
    }
    renderLegend(JSON.parse(signature || '{"fields":[],"overlays":[]}'));
  }

  return {
    set,
    theme,
    destroy() {
      chart.remove();
      host.remove();
      legend.remove();
    },
    /** Exposed for debugging only. */
    get chart() { return chart; },
  };
}

