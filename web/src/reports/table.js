// The Reports page's table (Preact components page.js renders): one row per scheduled report —
// name, dashboard title, the schedule in words (the cron pattern as its tooltip), time zone,
// format, channels, the next run in local time, paused or active — with, for who may change it,
// Edit, "Run now" (`POST /api/reports/{id}/run`, seconds: what each channel did, or the 422's
// or 503's sentence), History (`GET /api/reports/{id}/runs`, in a row beneath: when, status,
// size, each delivery with its error) and Delete (`DELETE /api/reports/{id}` after a confirm).
//
// Test hooks: `.report-row[data-report-id][data-paused]` with `.report-name`, `.report-dash`,
// `.report-schedule`, `.report-zone`, `.report-format`, `.report-notify`, `.report-next`,
// `.report-edit`, `.report-run[data-busy]`, `.report-history-toggle[aria-expanded]`,
// `.report-delete`, `.report-result[data-status=sent|partial|failed]`; `.report-history` (its
// row) with `.report-history-run[data-status]` (`.run-when`, `.run-status`, `.run-size`,
// `.run-delivery[data-status]`), `.report-history-empty`, `.report-history-error`.
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { absoluteTime, relativeTime } from '../time.js';
import { deliveryWords, runResult, runStatusWords, sizeText } from './rules.js';

const enc = encodeURIComponent;
const COLUMNS = 9;

function History({ api, id, loadKey }) {
  const [runs, setRuns] = useState(null);
  const [error, setError] = useState('');
  useEffect(() => {
    let gone = false;
    api.get(`/api/reports/${enc(id)}/runs`).then(
      (r) => { if (!gone) { setRuns(r ?? []); setError(''); } },
      (e) => { if (!gone) setError(`Could not load the runs: ${e.message}`); },
    );
    return () => { gone = true; };
  }, [id, loadKey]);
  let body;
  if (error) body = html`<p class="report-history-error row-error" role="alert">${error}</p>`;
  else if (!runs) body = html`<p class="muted">Loading the runs…</p>`;
  else if (!runs.length) body = html`<p class="report-history-empty muted">Not run yet.</p>`;
  else {
    body = html`<ol class="report-runs">${runs.map((r) => {
      const at = r.finishedAt ?? r.scheduledFor;
      return html`<li class="report-history-run" data-status=${r.status} key=${r.id}>
        <span class="run-when" title=${absoluteTime(at)}>${absoluteTime(at)}</span>
        <span class=${`run-status status-${r.status}`}>${runStatusWords(r.status)}</span>
        ${r.bytes ? html`<span class="run-size">${sizeText(r.bytes)}</span>` : null}
        ${r.error ? html`<span class="run-error">${r.error}</span>` : null}
        <ul class="run-deliveries">
          ${(r.deliveries ?? []).map((d) => html`<li class="run-delivery" data-status=${d.status}>${deliveryWords(d)}</li>`)}
        </ul>
      </li>`;
    })}</ol>`;
  }
  return html`<tr class="report-history"><td colspan=${COLUMNS}><h3>Latest runs</h3>${body}</td></tr>`;
}

/**
 * Props: api, toast, r (a `GET /api/reports` entry), title (its dashboard's), canWrite,
 * onEdit(r), onChanged() (reload the list).
 */
export function ReportRow({ api, toast, r, title, canWrite, onEdit, onChanged }) {
  const [busy, setBusy] = useState('');
  const [result, setResult] = useState(null);
  const [history, setHistory] = useState(false);
  const [historyKey, setHistoryKey] = useState(0);

  const run = async () => {
    setBusy('run');
    setResult(null);
    try {
      setResult(runResult(await api.post(`/api/reports/${enc(r.id)}/run`)));
    } catch (e) {
      // 422: nothing was delivered (the run says why); 503: no Chromium; others: their sentence.
      setResult({ status: 'failed', text: e.message });
    } finally {
      setBusy('');
      setHistoryKey((k) => k + 1);
    }
  };

  const remove = async () => {
    // eslint-disable-next-line no-alert
    if (!window.confirm(`Delete the report “${r.name}”? Its schedule and its runs go; the dashboard stays.`)) return;
    setBusy('delete');
    try {
      await api.del(`/api/reports/${enc(r.id)}`);
      toast(`Deleted the report “${r.name}”`);
      onChanged();
    } catch (e) {
      setResult({ status: 'failed', text: e.message });
      setBusy('');
    }
  };

  const next = r.paused || !r.nextRunAt ? null : r.nextRunAt;
  return html`
    <tr class="report-row" data-report-id=${r.id} data-paused=${String(Boolean(r.paused))}>
      <td class="report-name"><strong>${r.name}</strong></td>
      <td class="report-dash">${title ?? html`<span class="muted" title=${r.dashboardId}>(not found)</span>`}</td>
      <td class="report-schedule" title=${r.cron}>${r.schedule || r.cron}</td>
      <td class="report-zone nowrap">${r.timezone}</td>
      <td class="report-format">${String(r.format).toUpperCase()}</td>
      <td class="report-notify">${(r.notify ?? []).join(', ')}</td>
      <td class="report-next nowrap" title=${next ? relativeTime(next) : ''}>${next ? absoluteTime(next) : '—'}</td>
      <td class="report-state">${r.paused ? html`<span class="state-paused">Paused</span>` : html`<span class="state-active">Active</span>`}</td>
      <td class="report-actions">
        ${canWrite ? html`<button type="button" class="report-edit" disabled=${Boolean(busy)} onClick=${() => onEdit(r)}>Edit</button>
          <button type="button" class="report-run" data-busy=${busy === 'run' ? 'true' : null} aria-busy=${busy === 'run' ? 'true' : null}
            disabled=${Boolean(busy)} title="Render and send it now, whatever its schedule" onClick=${run}>${busy === 'run' ? 'Running…' : 'Run now'}</button>` : null}
        <button type="button" class="report-history-toggle" aria-expanded=${String(history)} onClick=${() => setHistory((o) => !o)}>History</button>
        ${canWrite ? html`<button type="button" class="report-delete" disabled=${Boolean(busy)} onClick=${remove}>Delete</button>` : null}
        ${result ? html`<div class=${`report-result ${result.status === 'sent' ? 'ok' : 'row-error'}`} data-status=${result.status}
          role=${result.status === 'sent' ? 'status' : 'alert'}>${result.text}</div>` : null}
      </td>
    </tr>
    ${history ? html`<${History} api=${api} id=${r.id} loadKey=${historyKey} />` : null}`;
}
