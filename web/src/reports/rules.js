// Pure rules of the Reports page: the form ↔ `POST/PUT /api/reports` bodies (what is checked
// here and what is left to the server, which says it in its words), the browser's time zone as
// the default, and runs, deliveries and sizes in words. No DOM; unit-tested in node.

/** Cron examples the form's hint gives. */
export const CRON_EXAMPLES = [
  ['0 7 * * 1-5', '07:00 on weekdays'],
  ['@daily', 'every midnight'],
  ['30 16 * * 5', 'Fridays at 16:30'],
];

/** The IANA time zone this browser is in (the form's default), else UTC. */
export function browserTimezone(intl = globalThis.Intl) {
  try {
    return intl?.DateTimeFormat?.().resolvedOptions?.().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

/** A new report's form: on `dashboardId` (the open dashboard, if any), in `timezone`. */
export function emptyForm({ dashboardId = '', timezone = 'UTC' } = {}) {
  return { dashboardId, name: '', cron: '', timezone, format: 'pdf', notify: [], paused: false };
}

/** The form of an existing report (`GET /api/reports`' entry). */
export function formOf(report) {
  return {
    dashboardId: report.dashboardId ?? '',
    name: report.name ?? '',
    cron: report.cron ?? '',
    timezone: report.timezone ?? 'UTC',
    format: report.format ?? 'pdf',
    notify: [...(report.notify ?? [])],
    paused: Boolean(report.paused),
  };
}

/**
 * The request body for the form's values, or `{error: {param, message}}` for what is checked
 * here: a dashboard picked and a schedule given. A blank name or time zone is left out (the
 * server names it after the dashboard, and reads the schedule in UTC); the rest, the cron
 * pattern's sense, the zone's name, the channels, is the server's to judge.
 */
export function reportBody(form) {
  if (!form.dashboardId) return { error: { param: 'dashboardId', message: 'Pick the dashboard to send.' } };
  const cron = form.cron.trim();
  if (!cron) {
    return { error: { param: 'cron', message: `Say when it runs: a cron pattern such as ${CRON_EXAMPLES[0][0]}, or ${CRON_EXAMPLES[1][0]}.` } };
  }
  const body = { dashboardId: form.dashboardId, cron, format: form.format || 'pdf', notify: [...form.notify], paused: Boolean(form.paused) };
  if (form.name.trim()) body.name = form.name.trim();
  if (form.timezone.trim()) body.timezone = form.timezone.trim();
  return { body };
}

/** Adds or removes channel `name` from a form's `notify`, keeping the channels' order. */
export function toggleChannel(notify, name, on, order = []) {
  const set = new Set(notify);
  if (on) set.add(name);
  else set.delete(name);
  const rank = (n) => {
    const i = order.indexOf(n);
    return i < 0 ? order.length : i;
  };
  return [...set].sort((a, b) => rank(a) - rank(b));
}

/** A file size in words: `812 B`, `48.1 kB`, `2.3 MB`. */
export function sizeText(bytes) {
  if (!Number.isFinite(bytes) || bytes < 0) return '';
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} kB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

/** A run's status in words. */
export function runStatusWords(status) {
  return { sent: 'Sent', partial: 'Partly sent', failed: 'Failed', running: 'Running' }[status] ?? String(status ?? '');
}

/** One delivery of a run in words: `desk: sent (HTTP 200)`, `mail: failed — no relay`. */
export function deliveryWords(d) {
  if (d.status === 'sent') return `${d.channel}: sent${d.httpStatus ? ` (HTTP ${d.httpStatus})` : ''}`;
  const detail = d.error || (d.httpStatus ? `HTTP ${d.httpStatus}` : 'not delivered');
  return `${d.channel}: ${d.status || 'failed'} — ${detail}`;
}

/** What "Run now" answered, in a line: `{status, text}` from the run. */
export function runResult(run) {
  const sent = (run?.deliveries ?? []).filter((d) => d.status === 'sent').map((d) => d.channel);
  const failed = (run?.deliveries ?? []).filter((d) => d.status !== 'sent');
  if (run?.status === 'sent') return { status: 'sent', text: `Sent to ${sent.join(', ') || 'every channel'}` };
  if (run?.status === 'partial') {
    return { status: 'partial', text: `Sent to ${sent.join(', ')}; not to ${failed.map((d) => `${d.channel} (${d.error || 'failed'})`).join(', ')}` };
  }
  return { status: 'failed', text: run?.error || failed.map((d) => `${d.channel}: ${d.error || 'failed'}`).join('; ') || 'Not delivered' };
}

/** Dashboard titles by id, from `GET /api/dashboards` (deleted ones left out). */
export function titlesById(dashboards) {
  return new Map((dashboards ?? []).filter((d) => !d.deleted).map((d) => [d.id, d.title]));
}
