// The Reports page's content (a Preact component index.js renders): the scheduled reports of the
// dashboards this person sees (`GET /api/reports`, their dashboards' titles from `GET
// /api/dashboards`), "New report" and a row's Edit opening the form (form.js) above the table
// (table.js), the channels to pick from (`GET /api/channels`). Everything is asked again each
// time the page opens (`loadKey`). Who reads only (a viewer) sees the list and the runs, nothing
// to change.
//
// Test hooks: `.reports-page[data-loaded][data-count]`, `.reports-new`, `.reports-empty`,
// `.reports-error`; the form's and the rows' own (form.js, table.js).
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { ReportForm } from './form.js';
import { ReportRow } from './table.js';
import { browserTimezone, emptyForm, formOf, titlesById } from './rules.js';

/**
 * Props: api, toast, loadKey, dashboardId (the open dashboard: a new report's default),
 * canWrite, isAdmin, onClose(), onSettings().
 */
export function ReportsPage({ api, toast, loadKey, dashboardId, canWrite, isAdmin, onClose, onSettings }) {
  const [reports, setReports] = useState(null);
  const [dashboards, setDashboards] = useState([]);
  const [channels, setChannels] = useState([]);
  const [error, setError] = useState('');
  // The form: null (closed), or {id: null|reportId, initial, key}.
  const [editing, setEditing] = useState(null);

  const load = async () => {
    try {
      const [list, dash, chans] = await Promise.all([
        api.get('/api/reports'),
        api.get('/api/dashboards'),
        api.get('/api/channels').catch(() => []),
      ]);
      setReports(list ?? []);
      setDashboards((dash ?? []).filter((d) => !d.deleted).map((d) => ({ id: d.id, title: d.title }))
        .sort((a, b) => a.title.localeCompare(b.title)));
      setChannels(chans ?? []);
      setError('');
    } catch (e) {
      setError(`Could not load the reports: ${e.message}`);
      setReports((r) => r ?? []);
    }
  };

  useEffect(() => {
    setEditing(null);
    setReports(null);
    load();
  }, [loadKey]);

  const startNew = () => setEditing({
    id: null, key: Date.now(), initial: emptyForm({ dashboardId: dashboardId ?? '', timezone: browserTimezone() }),
  });
  const startEdit = (r) => setEditing({ id: r.id, key: Date.now(), initial: formOf(r) });
  const saved = (r) => {
    toast(editing?.id ? `Saved “${r.name}”` : `Scheduled “${r.name}”: ${r.schedule}`);
    setEditing(null);
    load();
  };

  const titles = titlesById(dashboards);
  return html`<div class="reports-page" data-loaded=${reports ? '' : null} data-count=${reports ? reports.length : null}>
    <div class="reports-head settings-head">
      <h1>Scheduled reports</h1>
      <span class="spacer"></span>
      ${canWrite && !editing ? html`<button type="button" class="primary reports-new" onClick=${startNew}>+ New report</button>` : null}
      <button type="button" class="reports-close" title="Back to the dashboards (Esc)" onClick=${onClose}>✕ Close</button>
    </div>
    <p class="section-note">A report renders a dashboard as PDF or PNG on a schedule and sends it to alert channels:
      e-mail attaches the file, a webhook gets it or a link.</p>
    ${editing ? html`<section class="settings-section reports-form-box">
      <${ReportForm} key=${editing.key} api=${api} id=${editing.id} initial=${editing.initial} dashboards=${dashboards}
        channels=${channels} isAdmin=${isAdmin} onSaved=${saved} onCancel=${() => setEditing(null)} onSettings=${onSettings} />
    </section>` : null}
    ${error ? html`<div class="reports-error form-error" role="alert">${error}</div>` : null}
    <section class="settings-section reports-list">
      ${!reports ? html`<p class="muted">Loading…</p>` : null}
      ${reports && !reports.length ? html`<p class="reports-empty settings-empty">No scheduled reports yet.${canWrite ? ' “New report” makes one.' : ''}</p>` : null}
      ${reports?.length ? html`<div class="settings-table-wrap"><table class="settings-table reports-table">
        <thead><tr>
          <th>Name</th><th>Dashboard</th><th>Schedule</th><th>Time zone</th><th>Format</th><th>Channels</th><th>Next run</th><th>State</th><th></th>
        </tr></thead>
        <tbody>${reports.map((r) => html`<${ReportRow} key=${r.id} api=${api} toast=${toast} r=${r} title=${titles.get(r.dashboardId)}
          canWrite=${canWrite} onEdit=${startEdit} onChanged=${load} />`)}</tbody>
      </table></div>` : null}
    </section>
  </div>`;
}
