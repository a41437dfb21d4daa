// The Reports page's form (a Preact component page.js renders): a new report, or one being
// changed. Dashboard (a select of the dashboards this person sees), name (blank: "<title>
// report"), schedule (a cron pattern, with examples), time zone (default the browser's; the
// zones this browser knows offered as suggestions), PDF or PNG, the channels it goes to (ticked
// from `GET /api/channels`) and Paused. Saves with `POST /api/reports` or `PUT
// /api/reports/{id}`; a 400's sentence shows next to the field it names (`cron: …`,
// `timezone: …`, `notify[0]: …`), anything else under the form.
//
// Test hooks: `form.report-form[data-mode=new|edit]` with `select[name=dashboardId]`,
// `input[name=name|cron|timezone]`, `select[name=format]`, `input[name=notify][value=<channel>]`,
// `input[name=paused]`, `.report-save`, `.report-cancel`, `.report-no-channels`.
import { html } from 'htm/preact';
import { useMemo, useState } from 'preact/hooks';
import { Field, FormError, placeError } from '../fields.js';
import { CRON_EXAMPLES, reportBody, toggleChannel } from './rules.js';

const enc = encodeURIComponent;
const FIELDS = ['dashboardId', 'name', 'cron', 'timezone', 'format', 'notify', 'paused'];

/** The zones this browser knows (for suggestions only; the server decides). */
function knownZones() {
  try {
    return Intl.supportedValuesOf?.('timeZone') ?? [];
  } catch {
    return [];
  }
}

/**
 * Props: api, initial (the form's values), id (the report changed; null: a new one),
 * dashboards [{id, title}], channels (`GET /api/channels`), isAdmin (may make channels),
 * onSaved(report), onCancel(), onSettings() (opens Settings → Alerts & reports).
 */
export function ReportForm({ api, initial, id, dashboards, channels, isAdmin, onSaved, onCancel, onSettings }) {
  const [form, setForm] = useState(initial);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const zones = useMemo(knownZones, []);
  const order = channels.map((c) => c.name);

  const set = (key) => (e) => {
    const t = e.currentTarget;
    setForm((f) => ({ ...f, [key]: t.type === 'checkbox' ? t.checked : t.value }));
  };
  const tick = (name) => (e) => {
    const on = e.currentTarget.checked;
    setForm((f) => ({ ...f, notify: toggleChannel(f.notify, name, on, order) }));
  };

  const submit = async (e) => {
    e.preventDefault();
    const made = reportBody(form);
    if (made.error) {
      setError(made.error);
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const saved = id
        ? await api.put(`/api/reports/${enc(id)}`, made.body)
        : await api.post('/api/reports', made.body);
      onSaved(saved);
    } catch (err) {
      setError(placeError(err, FIELDS));
      setBusy(false);
    }
  };

  // A report of a dashboard no longer listed (deleted since) keeps its id as an option.
  const options = dashboards.some((d) => d.id === form.dashboardId) || !form.dashboardId
    ? dashboards
    : [...dashboards, { id: form.dashboardId, title: form.dashboardId }];
  // Channels named by the report that no longer exist stay visible, so they can be unticked.
  const names = [...order, ...form.notify.filter((n) => !order.includes(n))];
  const kind = (n) => channels.find((c) => c.name === n);
  return html`<form class="report-form settings-form" data-mode=${id ? 'edit' : 'new'} novalidate autocomplete="off" onSubmit=${submit}>
    <h2>${id ? 'Change the report' : 'New scheduled report'}</h2>
    <div class="form-grid">
      <${Field} label="Dashboard" param="dashboardId" error=${error}>
        <select name="dashboardId" value=${form.dashboardId} onChange=${set('dashboardId')}>
          <option value="" disabled selected=${!form.dashboardId}>Pick a dashboard</option>
          ${options.map((d) => html`<option value=${d.id} selected=${d.id === form.dashboardId}>${d.title}</option>`)}
        </select>
      <//>
      <${Field} label="Name" param="name" hint="The mail’s subject; blank: “<dashboard> report”" error=${error}>
        <input name="name" value=${form.name} onInput=${set('name')} maxlength="200" placeholder="Morning pack" />
      <//>
      <${Field} label="Schedule (cron)" param="cron" error=${error}
        hint=${`e.g. ${CRON_EXAMPLES.map(([c, words]) => `${c} (${words})`).join(', ')}`}>
        <input name="cron" value=${form.cron} onInput=${set('cron')} placeholder="0 7 * * 1-5" spellcheck="false" autocapitalize="none" />
      <//>
      <${Field} label="Time zone" param="timezone" hint="The schedule’s times are read in it" error=${error}>
        <input name="timezone" value=${form.timezone} onInput=${set('timezone')} list="report-zones" spellcheck="false" autocapitalize="none" />
      <//>
      <${Field} label="Format" param="format" error=${error}>
        <select name="format" value=${form.format} onChange=${set('format')}>
          <option value="pdf" selected=${form.format === 'pdf'}>PDF (A4 landscape)</option>
          <option value="png" selected=${form.format === 'png'}>PNG (the whole page)</option>
        </select>
      <//>
    </div>
    <datalist id="report-zones">${zones.map((z) => html`<option value=${z} />`)}</datalist>
    <${Field} label="Send to" param="notify" group=${true} error=${error}
      hint=${names.length ? 'E-mail attaches the file; a JSON webhook gets it in contentBase64' : null}>
      ${names.length
        ? html`<div class="report-channels scope-list" role="group" aria-label="Channels">
            ${names.map((n) => html`<label class="scope" title=${kind(n) ? `${kind(n).type}: ${kind(n).target}` : 'This channel no longer exists'}>
              <input type="checkbox" name="notify" value=${n} checked=${form.notify.includes(n)} onChange=${tick(n)} />
              <span>${n}</span>
            </label>`)}
          </div>`
        : html`<p class="report-no-channels muted">No channels yet.${isAdmin
          ? html` <button type="button" class="link-button" onClick=${onSettings}>Make one in Settings → Alerts & reports</button>`
          : ' An admin makes them in Settings → Alerts & reports.'}</p>`}
    <//>
    <label class="report-paused pref-row">
      <input type="checkbox" name="paused" checked=${form.paused} onChange=${set('paused')} />
      <span>Paused (kept, not sent)</span>
    </label>
    <${FormError} error=${error} />
    <div class="form-actions">
      <button type="submit" class="primary report-save" disabled=${busy}>${id ? 'Save changes' : 'Create report'}</button>
      <button type="button" class="report-cancel" disabled=${busy} onClick=${onCancel}>Cancel</button>
    </div>
  </form>`;
}
