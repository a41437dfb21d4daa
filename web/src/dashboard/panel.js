// One dashboard panel: header (title, last refresh, refresh button), body (the chart), the
// loading and error states, and the test-hook attributes:
//   .panel[data-panel-id][data-type][data-status=loading|ok|error][data-seq][data-mounts][data-updates]
//   [data-demo=true|false] (any of the data came from the demo generators: a DEMO DATA badge)
// plus data-apply: how the last data went in ('update' = lightweight-charts series.update of the
// last bar, 'set' = setData/setOption, 'replace' = HTML body replaced).
//
// The chart instance lives as long as the panel's type/renderer/config stay the same; new data is
// applied to it in place (`data-updates`); a new instance counts in `data-mounts`.
import { h, icon } from '../dom.js';
import { relativeTime, absoluteTime } from '../time.js';
import { json } from './format.js';
import { createLightweightRenderer } from './renderers/lightweight.js';
import { createEchartsRenderer } from './renderers/echarts.js';
import { createCustomRenderer } from './renderers/custom.js';

const FACTORIES = {
  'lightweight-charts': createLightweightRenderer,
  echarts: createEchartsRenderer,
  custom: createCustomRenderer,
};
const RENDERER_OF = {
  candlestick: 'lightweight-charts', line: 'lightweight-charts', area: 'lightweight-charts',
  bar: 'echarts', heatmap: 'echarts', pie: 'echarts', radar: 'echarts', scatter: 'echarts',
  table: 'custom', feed: 'custom', metric_card: 'custom',
};

const TYPE_LABEL = {
  candlestick: 'Candles', line: 'Line', area: 'Area', bar: 'Bar', heatmap: 'Heatmap', pie: 'Pie',
  radar: 'Radar', scatter: 'Scatter', table: 'Table', feed: 'Feed', metric_card: 'Metrics',
};

/** What forces a new chart instance when it changes. */
const chartKey = (def) => json([def.type, def.renderer, def.config ?? null]);

export function createPanel(def, { onRefresh, colors }) {
  const title = h('h3.panel-title');
  const time = h('span.panel-time');
  const refresh = h('button.panel-refresh', {
    type: 'button', title: 'Refresh this panel', 'aria-label': 'Refresh panel',
    onclick: () => onRefresh(panel.id),
  });
  refresh.append(icon('M13.5 8a5.5 5.5 0 1 1-1.6-3.9M13.5 2.5v3h-3', 1.6));
  // Where the data came from: the providers, and DEMO DATA when any of it was invented.
  const source = h('span.panel-source');
  const header = h('header.panel-head', null, title, source, h('span.panel-meta', null, time), refresh);
  const body = h('div.panel-body');
  const errorBox = h('div.panel-error', { hidden: true, role: 'alert' });
  const progress = h('div.panel-progress');
  const el = h('section.panel', null, progress, header, body, errorBox);

  let renderer = null;
  let rendererKey = '';
  let prevType = null;
  let hasData = false;
  let lastData;
  let refreshedAt = null;
  let runInfo = '';
  let seq = 0;
  let mounts = 0;
  let updates = 0;
  let curColors = colors;

  const panel = {
    el,
    id: def.id,
    def: null,
    defJson: '',
    get seq() { return seq; },
    setDef,
    setLoading,
    applyData,
    applyError,
    setSeq(s) { seq = s; el.dataset.seq = String(s); },
    theme,
    tick,
    destroy,
  };

  let statusToken = 0;
  function setStatus(s) {
    statusToken += 1;
    el.dataset.status = s;
    el.classList.toggle('has-data', hasData);
  }

  function setDef(next) {
    panel.def = next;
    panel.defJson = json(next);
    el.dataset.panelId = next.id;
    el.dataset.type = next.type;
    title.textContent = next.title;
    title.title = `${next.title} (${TYPE_LABEL[next.type] ?? next.type})`;
    const key = chartKey(next);
    const typeChanged = prevType !== null && prevType !== next.type;
    prevType = next.type;
    if (renderer && key !== rendererKey) {
      // Another chart: a new instance. Same type (new config): redraw the last data now; a new
      // type waits for the re-run the server pushes after the patch (old data may not fit).
      renderer.destroy();
      renderer = null;
      if (hasData && !typeChanged) draw(lastData, false);
      else {
        hasData = false;
        lastData = undefined;
        setStatus('loading');
      }
    }
    rendererKey = key;
  }

  function setLoading() {
    setStatus('loading');
  }

  function draw(data, countUpdate) {
    try {
      if (!renderer) {
        const make = FACTORIES[panel.def.renderer] ?? FACTORIES[RENDERER_OF[panel.def.type]];
        if (!make) throw new Error(`unknown renderer "${panel.def.renderer}"`);
        renderer = make(body, panel.def, curColors);
        mounts += 1;
        el.dataset.mounts = String(mounts);
        el.dataset.apply = renderer.set(data) ?? 'set';
      } else {
        el.dataset.apply = renderer.set(data) ?? 'set';
        if (countUpdate) {
          updates += 1;
          el.dataset.updates = String(updates);
        }
      }
      hasData = true;
      lastData = data;
      errorBox.hidden = true;
      errorBox.replaceChildren();
      if (panel.def.renderer === 'custom') setStatus('ok');
      else {
        // Canvas charts paint on the next animation frames: say `ok` once the chart shows.
        const token = ++statusToken;
        afterPaint(() => {
          if (token === statusToken) setStatus('ok');
        });
      }
      return true;
    } catch (e) {
      showError({ kind: 'render', message: e?.message ?? String(e) });
      return false;
    }
  }

  /** Fresh data (`panel.data` or a snapshot slot). */
  function applyData(data, newSeq, at, meta = {}) {
    seq = newSeq;
    el.dataset.seq = String(seq);
    if (Number.isFinite(at)) refreshedAt = at;
    runInfo = [
      Number.isFinite(meta.rowCount) ? `${meta.rowCount} row${meta.rowCount === 1 ? '' : 's'}` : '',
      Number.isFinite(meta.durationMs) ? `${Math.round(meta.durationMs)} ms` : '',
    ].filter(Boolean).join(' · ');
    showSource(meta.provenance);
    tick();
    draw(data, true);
  }

  /** The origins of the data (`provenance`: {provider, demo, asOf?, fetchedAt, url?}[]). */
  function showSource(provenance) {
    const list = Array.isArray(provenance) ? provenance.filter((p) => p && typeof p === 'object') : [];
    const demo = list.some((p) => p.demo === true);
    el.dataset.demo = String(demo);
    const real = [...new Set(list.filter((p) => p.demo !== true).map((p) => String(p.provider)))];
    source.replaceChildren(
      ...(demo ? [h('span.demo-badge', null, 'DEMO DATA')] : []),
      ...(real.length ? [h('span.panel-provider', null, real.join(' · '))] : []),
    );
    source.title = list.map((p) => [
      p.demo === true ? `${p.provider}: invented numbers from the built-in demo generators, not market data` : String(p.provider),
      p.asOf ? `as of ${p.asOf}` : '',
      Number.isFinite(p.fetchedAt) ? `fetched ${absoluteTime(p.fetchedAt)}` : '',
      p.url ? String(p.url) : '',
    ].filter(Boolean).join(' · ')).join('\n');
  }

  function applyError(error, newSeq) {
    seq = newSeq;
    el.dataset.seq = String(seq);
    showError(error ?? {});
  }

  function showError(err) {
    const kind = err.kind ? String(err.kind) : 'error';
    const where = err.line != null ? `line ${err.line}${err.column != null ? `, column ${err.column}` : ''}` : '';
    const details = [];
    if (Array.isArray(err.stack) && err.stack.length) details.push(...err.stack.map(String));
    if (Array.isArray(err.logs) && err.logs.length) {
      details.push(...err.logs.map((l) => `[${l.level ?? 'log'}] ${l.message ?? ''}`));
    }
    const label = `${kind} error${kind === 'limit' && err.limit ? ` · ${String(err.limit).replace(/_/g, ' ')}` : ''}`;
    errorBox.replaceChildren(...[
      h('div.panel-error-head', null,
        h('span.error-icon', { text: '!' }),
        h('span.error-kind', { text: label }),
        where ? h('span.error-where', { text: where }) : null),
      h('pre.panel-error-message', { text: String(err.message ?? 'Unknown error') }),
      details.length ? h('details.error-details', null, h('summary', { text: 'Details' }), h('pre', { text: details.join('\n') })) : null,
    ].filter(Boolean));
    errorBox.hidden = false;
    setStatus('error');
  }

  function theme(colors2) {
    curColors = colors2;
    try {
      renderer?.theme(colors2);
    } catch (e) {
      // A theme change must never break the page; the next data redraws.
    }
  }

  function tick() {
    time.textContent = refreshedAt ? relativeTime(refreshedAt) : '';
    time.title = refreshedAt ? `Refreshed ${absoluteTime(refreshedAt)}${runInfo ? ` · ${runInfo}` : ''}` : '';
  }

  function destroy() {
    renderer?.destroy();
    renderer = null;
    el.remove();
  }

  el.dataset.seq = '0';
  el.dataset.mounts = '0';
  el.dataset.updates = '0';
  setDef(def);
  setStatus('loading');
  return panel;
}

/** Runs `fn` after the next two animation frames (or 250 ms, when frames are paused). */
function afterPaint(fn) {
  let done = false;
  const go = () => {
    if (done) return;
    done = true;
    fn();
  };
  requestAnimationFrame(() => requestAnimationFrame(go));
  setTimeout(go, 250);
}
