// One dashboard panel: header (title, refresh button), body (the chart), a source line under it
// (where the data came from and how old it is, a tap target with the details), and the states
// a panel can be in, with the test-hook attributes:
//   .panel[data-panel-id][data-type][data-status=loading|ok|stale|error][data-seq][data-mounts][data-updates]
//   [data-demo=true|false] (any of the data came from the demo generators: a DEMO DATA badge)
//   [data-failure=provider|code] while failed (data-status=error): a data provider could not serve
//     it (.panel-outage: a calm sentence, Details, maybe .outage-fallback) or its code failed
//     (.panel-error: kind, line, message, Details — for whoever edits the dashboard)
//   [data-stale=true][data-provider=<key>] while it shows kept data because its provider fails:
//     the body is dimmed and .panel-stale-chip says since when and how old the data is
// plus data-apply: how the last data went in ('update' = lightweight-charts series.update of the
// last bar, 'set' = setData/setOption, 'replace' = HTML body replaced).
// Inside: .panel-foot > .panel-source (a button: .demo-badge, .panel-provider, .panel-time) and
// .panel-stale-chip; .panel-info[data-kind=source|stale] is the box either opens (.panel-info-close).
// Operator text (the error message, hosts, settings) is only ever inside a closed
// `details.outage-details` / `details.error-details`, never in a tooltip.
//
// The chart instance lives as long as the panel's type/renderer/config stay the same; new data is
// applied to it in place (`data-updates`); a new instance counts in `data-mounts`.
import { h, icon, safeUrl } from '../dom.js';
import { relativeTime, absoluteTime, clockTime } from '../time.js';
import { providerName } from '../datahealth.js';
import { json } from './format.js';
import {
  isProviderError, outageOf, staleTimes, staleChipParts, staleChipTitle, noDataNote, fallbackLabel, operatorLines,
} from './outage.js';
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

export function createPanel(def, { onRefresh, onChange, onFallback, colors }) {
  const title = h('h3.panel-title');
  const refresh = h('button.panel-refresh', {
    type: 'button', title: 'Refresh this panel', 'aria-label': 'Refresh panel',
    onclick: () => onRefresh(panel.id),
  });
  refresh.append(icon('M13.5 8a5.5 5.5 0 1 1-1.6-3.9M13.5 2.5v3h-3', 1.6));
  const header = h('header.panel-head', null, title, refresh);
  const body = h('div.panel-body');
  // Under the body: where the data came from and how old it is (a tap target: phones have no
  // hover), and the stale chip in the corner while a provider fails.
  const time = h('span.panel-time');
  const source = h('button.panel-source', {
    type: 'button', 'aria-expanded': 'false', onclick: () => toggleInfo('source'),
  });
  const staleChip = h('button.panel-stale-chip', {
    type: 'button', hidden: true, 'aria-expanded': 'false', onclick: () => toggleInfo('stale'),
  });
  const foot = h('footer.panel-foot', null, source, staleChip);
  const info = h('div.panel-info', { hidden: true, role: 'dialog', 'aria-label': 'About this panel’s data' });
  const errorBox = h('div.panel-error', { hidden: true, role: 'alert' });
  const outageBox = h('div.panel-outage', { hidden: true, role: 'status' });
  const progress = h('div.panel-progress');
  const el = h('section.panel', null, progress, header, body, foot, info, errorBox, outageBox);

  let renderer = null;
  let rendererKey = '';
  let prevType = null;
  let hasData = false;
  let lastData;
  let refreshedAt = null;
  let runInfo = '';
  let provenance = [];
  let seq = 0;
  let mounts = 0;
  let updates = 0;
  let curColors = colors;
  /** While kept data is shown: {error, outage, times: {dataAt, failingSince}}. */
  let stale = null;
  /** While failed without data: 'provider' (with `failedWith`, the error) or 'code'. */
  let failure = null;
  let failedWith = null;
  let health = null;
  let infoKind = null;

  const panel = {
    el,
    id: def.id,
    def: null,
    defJson: '',
    get seq() { return seq; },
    /**
     * The panel's provider trouble for the banner and the header, or null:
     * {panelId, provider, name, summary, state: 'stale'|'nodata', dataAt?}.
     */
    get trouble() { return trouble(); },
    /** Whether any of its data came from a real (not demo) provider. */
    get hasRealSource() { return provenance.some((p) => p.demo !== true); },
    setDef,
    setLoading,
    applyData,
    applyError,
    setSeq(s) { seq = s; el.dataset.seq = String(s); },
    setHealth,
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
  /** The status once data is drawn. */
  const shown = () => (stale ? 'stale' : 'ok');

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
        setStale(null);
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
      setFailure(null);
      if (panel.def.renderer === 'custom') setStatus(shown());
      else {
        // Canvas charts paint on the next animation frames: say `ok` once the chart shows.
        const token = ++statusToken;
        afterPaint(() => {
          if (token === statusToken) setStatus(shown());
        });
      }
      return true;
    } catch (e) {
      setStale(null);
      showError({ kind: 'render', message: e?.message ?? String(e) });
      return false;
    }
  }

  /**
   * Data (`panel.data` or a snapshot slot): fresh, or with `meta.stale` the kept last good data
   * while `meta.error` (its provider's failure) goes on.
   */
  function applyData(data, newSeq, at, meta = {}) {
    seq = newSeq;
    el.dataset.seq = String(seq);
    setStale(meta.stale ? {
      error: meta.error ?? null,
      outage: outageOf(meta.error?.outage ? meta.error : { outage: { summary: meta.stale.reason } }),
      times: staleTimes(meta.stale, Date.now(), at),
    } : null);
    // The age shown is the data's: for kept data, when it was produced.
    const dataAt = stale?.times.dataAt ?? at;
    if (Number.isFinite(dataAt)) refreshedAt = dataAt;
    runInfo = [
      Number.isFinite(meta.rowCount) ? `${meta.rowCount} row${meta.rowCount === 1 ? '' : 's'}` : '',
      Number.isFinite(meta.durationMs) ? `${Math.round(meta.durationMs)} ms` : '',
    ].filter(Boolean).join(' · ');
    showSource(meta.provenance);
    tick();
    draw(data, true);
    onChange?.(panel);
  }

  /** The origins of the data (`provenance`: {provider, demo, asOf?, fetchedAt, url?}[]). */
  function showSource(list0) {
    provenance = Array.isArray(list0) ? list0.filter((p) => p && typeof p === 'object') : [];
    const demo = provenance.some((p) => p.demo === true);
    el.dataset.demo = String(demo);
    const real = [...new Set(provenance.filter((p) => p.demo !== true).map((p) => String(p.provider)))];
    source.replaceChildren(
      ...(demo ? [h('span.demo-badge', null, 'DEMO DATA')] : []),
      ...(real.length ? [h('span.panel-provider', null, real.map((k) => providerName(k) ?? k).join(' · '))] : []),
      time,
    );
    source.title = provenance.map((p) => [
      p.demo === true ? `${p.provider}: invented numbers from the built-in demo generators, not market data` : String(p.provider),
      p.asOf ? `as of ${p.asOf}` : '',
      Number.isFinite(p.fetchedAt) ? `fetched ${absoluteTime(p.fetchedAt)}` : '',
      p.url ? String(p.url) : '',
    ].filter(Boolean).join(' · ')).join('\n');
    source.setAttribute('aria-label', `Where this data came from: ${source.textContent || 'unknown'}`);
    if (infoKind === 'source') renderInfo();
  }

  function applyError(error, newSeq) {
    seq = newSeq;
    el.dataset.seq = String(seq);
    setStale(null);
    if (isProviderError(error)) showOutage(error);
    else showError(error ?? {});
    onChange?.(panel);
  }

  function setFailure(kind, error = null) {
    failure = kind;
    failedWith = error;
    if (kind) el.dataset.failure = kind;
    else delete el.dataset.failure;
    if (kind !== 'provider' && !stale) delete el.dataset.provider;
    if (kind !== 'code') {
      errorBox.hidden = true;
      errorBox.replaceChildren();
    }
    if (kind !== 'provider') {
      outageBox.hidden = true;
      outageBox.replaceChildren();
    }
  }

  /** The panel's code failed: kind, position, the message (clamped) and Details. */
  function showError(err) {
    setFailure('code');
    const kind = err.kind ? String(err.kind) : 'error';
    const where = err.line != null ? `line ${err.line}${err.column != null ? `, column ${err.column}` : ''}` : '';
    const message = String(err.message ?? 'Unknown error');
    const details = [message];
    if (Array.isArray(err.stack) && err.stack.length) details.push('', ...err.stack.map(String));
    if (Array.isArray(err.logs) && err.logs.length) {
      details.push('', ...err.logs.map((l) => `[${l.level ?? 'log'}] ${l.message ?? ''}`));
    }
    const label = `${kind} error${kind === 'limit' && err.limit ? ` · ${String(err.limit).replace(/_/g, ' ')}` : ''}`;
    errorBox.replaceChildren(
      h('div.panel-error-head', null,
        h('span.error-icon', { text: '!' }),
        h('span.error-kind', { text: label }),
        where ? h('span.error-where', { text: where }) : null),
      // Clamped to a few lines (narrow panels would wrap a long message into a tall column);
      // the whole of it is in Details.
      h('pre.panel-error-message', { text: message }),
      h('details.error-details', null, h('summary', { text: 'Details' }), h('pre', { text: details.join('\n') })),
    );
    errorBox.hidden = false;
    setStatus('error');
  }

  /** A data provider could not serve the panel and there is no kept data: say so calmly. */
  function showOutage(error) {
    setFailure('provider', error);
    const o = outageOf(error);
    el.dataset.provider = o.provider;
    outageBox.replaceChildren(...[
      h('div.outage-head', null,
        h('span.outage-icon', { 'aria-hidden': 'true' }),
        h('span.outage-summary', { text: o.summary })),
      h('p.outage-note', { text: noDataNote(o) }),
      fallbackButton(o),
      operatorDetails(error, o),
    ].filter(Boolean));
    outageBox.hidden = false;
    setStatus('error');
  }

  /** "Use demo data while unreachable", only for someone who may change it and when it is off. */
  function fallbackButton(o) {
    if (!health?.canChange || health.fallback || health.offline || !onFallback) return null;
    const button = h('button.outage-fallback', {
      type: 'button', text: fallbackLabel(o),
      title: 'Panels whose provider fails get demo data, marked DEMO DATA, until it is back. You can switch this off in Settings → Data providers.',
      onclick: async () => {
        button.disabled = true;
        try {
          await onFallback();
        } catch (e) {
          button.disabled = false;
          button.after(h('span.outage-fallback-error', { role: 'alert', text: `Could not switch: ${e.message}` }));
        }
      },
    });
    return button;
  }

  function operatorDetails(error, o) {
    const lines = operatorLines(error ?? {}, o);
    if (!lines.length) return null;
    return h('details.outage-details', null, h('summary', { text: 'Details' }), h('pre', { text: lines.join('\n') }));
  }

  function setStale(next) {
    stale = next;
    staleChip.hidden = !next;
    el.classList.toggle('is-stale', !!next);
    if (next) {
      el.dataset.stale = 'true';
      el.dataset.provider = next.outage.provider;
    } else {
      delete el.dataset.stale;
      if (failure !== 'provider') delete el.dataset.provider;
      if (infoKind === 'stale') closeInfo();
    }
    paintChip();
  }

  function paintChip() {
    if (!stale) return;
    const { state, age } = staleChipParts(stale.outage, stale.times);
    staleChip.replaceChildren(h('span.chip-state', { text: state }), h('span.chip-sep', { text: ' · ' }), h('span.chip-age', { text: age }));
    staleChip.title = staleChipTitle(stale.outage, stale.times);
    if (infoKind === 'stale') renderInfo();
  }

  function trouble() {
    if (stale) {
      const o = stale.outage;
      return { panelId: panel.id, provider: o.provider, name: o.name, summary: o.summary, state: 'stale', dataAt: stale.times.dataAt };
    }
    if (failure === 'provider') {
      const o = outageOf(failedWith);
      return { panelId: panel.id, provider: o.provider, name: o.name, summary: o.summary, state: 'nodata' };
    }
    return null;
  }

  /** The health report (datahealth.js): whether to offer the fallback switch, provider names. */
  function setHealth(next) {
    health = next;
    if (failure === 'provider') showOutage(failedWith);
    showSource(provenance);
    if (infoKind) renderInfo();
  }

  // ---- the info box the source line and the stale chip open ------------------------------
  function toggleInfo(kind) {
    if (infoKind === kind) closeInfo();
    else {
      infoKind = kind;
      renderInfo();
      info.hidden = false;
    }
    source.setAttribute('aria-expanded', String(infoKind === 'source'));
    staleChip.setAttribute('aria-expanded', String(infoKind === 'stale'));
  }

  function closeInfo() {
    infoKind = null;
    info.hidden = true;
    info.replaceChildren();
    source.setAttribute('aria-expanded', 'false');
    staleChip.setAttribute('aria-expanded', 'false');
  }

  function renderInfo() {
    info.dataset.kind = infoKind;
    const close = h('button.panel-info-close', { type: 'button', 'aria-label': 'Close', text: '✕', onclick: closeInfo });
    let content;
    if (infoKind === 'stale' && stale) {
      const { outage: o, times } = stale;
      content = [
        h('div.info-title', { text: o.summary }),
        times.dataAt != null
          ? h('p.info-line', {
            text: `Showing the last data received, from ${clockTime(times.dataAt)} (${relativeTime(times.dataAt)}). It updates by itself once ${o.name} answers again.`,
            title: absoluteTime(times.dataAt),
          })
          : null,
        times.failingSince != null
          ? h('p.info-line', { text: `Failing since ${clockTime(times.failingSince)}.`, title: absoluteTime(times.failingSince) })
          : null,
        fallbackButton(o),
        operatorDetails(stale.error, o),
      ];
    } else {
      const list = provenance.length ? provenance : [];
      content = [
        h('div.info-title', { text: 'Where this data came from' }),
        list.length
          ? h('ul.info-sources', null, list.map((p) => {
            const url = safeUrl(p.url);
            return h('li', null,
              h('span.info-provider', { text: providerName(p.provider) ?? String(p.provider) }),
              p.demo === true ? h('span.info-demo', { text: ' · demo data: invented numbers from the built-in generators, not market data' }) : null,
              p.asOf ? h('span', { text: ` · as of ${p.asOf}` }) : null,
              Number.isFinite(p.fetchedAt) ? h('span', { text: ` · fetched ${relativeTime(p.fetchedAt)}`, title: absoluteTime(p.fetchedAt) }) : null,
              url ? h('div', null, h('a.info-url', { href: url, target: '_blank', rel: 'noopener noreferrer', text: url })) : null);
          }))
          : h('p.info-line', { text: 'This panel’s code did not call any data source.' }),
        refreshedAt ? h('p.info-line', { text: `Produced ${absoluteTime(refreshedAt)}${runInfo ? ` · ${runInfo}` : ''}` }) : null,
      ];
    }
    info.replaceChildren(close, ...content.filter(Boolean));
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
    time.title = refreshedAt
      ? `${stale ? 'Data from' : 'Refreshed'} ${absoluteTime(refreshedAt)}${runInfo ? ` · ${runInfo}` : ''}`
      : '';
    foot.hidden = !refreshedAt && !provenance.length && !stale;
    paintChip();
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
  tick();
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
