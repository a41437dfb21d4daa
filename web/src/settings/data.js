// Data providers: how each market-data provider is doing as the panels' calls find it (`GET
// /api/sdk/health`, through datahealth.js): live, degraded, down, needs a key, off; its last
// success, its last failure (the analyst's sentence, the operator's details on expand) and its
// latency. For someone who may change it (`canChange`), the switch "demo data for unreachable
// providers" (`PUT /api/sdk/fallback`); a note when offline mode makes every panel demo data.
// Not the LLM providers: those are providers.js.
//
// Test hooks: `.settings-data[data-loaded]`, `.data-offline-note`, `.data-fallback` (only when
// the user may change it) with `input[name=fallback]`, `.data-refresh`,
// `.data-provider-row[data-provider][data-status=live|degraded|down|unknown|needs_key|off]` with
// `.data-status-badge`, `.data-last-success`, `.data-latency`, `.data-last-error` and its
// `details.data-error-details`.
import { h } from '../dom.js';
import { relativeTime, absoluteTime } from '../time.js';
import { fetchHealth, setFallback } from '../datahealth.js';
import { operatorLines } from '../dashboard/outage.js';
import { formError, clearErrors, showError, busy } from './form.js';

const STATUS = {
  live: ['Live', 'Its last call succeeded'],
  degraded: ['Degraded', 'Its last call failed; it is still being called'],
  down: ['Down', 'It failed several times in a row: calls wait before trying it again'],
  unknown: ['Not used yet', 'No panel has called it since the server started'],
  needs_key: ['Needs a key', 'It needs an access key that is not set up'],
  off: ['Off', 'Switched off on this server'],
};

export function createDataProviders({ bus, toast }) {
  const list = h('div.data-provider-list');
  const offlineNote = h('p.data-offline-note', { hidden: true });
  const fallbackInput = h('input', { type: 'checkbox', name: 'fallback' });
  const fallback = h('label.data-fallback', { hidden: true },
    fallbackInput,
    h('span', null,
      h('span.data-fallback-label', { text: 'Use demo data while a provider cannot be reached' }),
      h('span.field-hint', { text: 'Panels whose provider fails show generated demo data, marked DEMO DATA, instead of “no data”, until the provider is back.' })));
  const error = formError();
  const refresh = h('button.data-refresh', { type: 'button', text: 'Refresh', onclick: () => load() });
  fallbackInput.addEventListener('change', async () => {
    const on = fallbackInput.checked;
    await busy(fallbackInput, async () => {
      clearErrors(el);
      await setFallback(on);
      toast(on ? 'Demo data now stands in for unreachable providers' : 'Unreachable providers now show as unavailable');
    }, (e) => {
      fallbackInput.checked = !on;
      showError(el, e);
    });
  });

  const el = h('section.settings-section.settings-data', { 'aria-labelledby': 'settings-data-title' },
    h('div.section-title-row', null,
      h('h2#settings-data-title', { text: 'Data providers' }),
      h('span.spacer'),
      refresh),
    h('p.section-note', { text: 'Where the panels’ market data comes from, and how each source is doing as the panels call it.' }),
    offlineNote,
    fallback,
    error,
    list);

  function render(report) {
    offlineNote.hidden = !report.offline;
    offlineNote.textContent = report.offline
      ? 'Offline mode is on: no provider is called and every panel shows demo data.'
      : '';
    fallback.hidden = !report.canChange || report.offline;
    fallbackInput.checked = !!report.fallback;
    const providers = report.providers ?? [];
    if (!providers.length) {
      list.replaceChildren(h('p.settings-empty', { text: 'No data provider is configured.' }));
      return;
    }
    list.replaceChildren(...providers.map(row));
  }

  function row(p) {
    const status = String(p.status ?? p.state ?? 'unknown').replace(/-/g, '_');
    const [label, about] = STATUS[status] ?? [status, ''];
    const when = (ms) => h('span', { text: relativeTime(ms), title: absoluteTime(ms) });
    const err = p.lastError && typeof p.lastError === 'object' ? p.lastError : null;
    const lines = err ? operatorLines({}, err) : [];
    return h('div.data-provider-row', { dataset: { provider: p.provider, status } },
      h('div.provider-main', null,
        h('div.provider-title', null,
          h('span.provider-key', { text: p.name || p.provider }),
          h(`span.data-status-badge.status-${status}`, { text: label, title: about }),
          Number.isFinite(p.since) && status !== 'unknown'
            ? h('span.data-since', null, 'since ', when(p.since))
            : null),
        h('div.provider-meta', null,
          h('span.data-last-success', null, Number.isFinite(p.lastSuccessAt) ? ['Last success ', when(p.lastSuccessAt)] : 'No success yet'),
          Number.isFinite(p.latencyMs) ? h('span.data-latency', { text: `${Math.round(p.latencyMs)} ms` , title: 'Typical answer time' }) : null),
        err
          ? h('div.data-last-error', null,
            h('span.data-error-summary', { text: err.summary || 'Failed' }),
            Number.isFinite(p.lastErrorAt) ? [' · ', when(p.lastErrorAt)] : null,
            lines.length
              ? h('details.data-error-details', null, h('summary', { text: 'Details' }), h('pre', { text: lines.join('\n') }))
              : null)
          : null));
  }

  async function load() {
    try {
      clearErrors(el);
      render(await fetchHealth());
    } catch (e) {
      list.replaceChildren(h('div.form-error', { role: 'alert', text: `Could not load the data providers: ${e.message}` }));
    }
    el.dataset.loaded = '';
  }

  // The dashboard may switch the fallback or bring a newer report: follow it while shown.
  bus.on('data:health', (report) => {
    if (el.isConnected && el.dataset.loaded !== undefined) render(report);
  });

  return { el, load };
}
