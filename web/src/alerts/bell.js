// The header's alert bell (issue 41): how many alert rules are firing on the dashboards this
// person may see (a badge), and on click a popover with the active alerts (firing and pending:
// name, dashboard, value, since when, severity, "no data") each opening its dashboard, and the
// latest 20 notifications (fired / resolved, what each channel did; one recorded but not sent is
// dimmed with why — "silenced", "flapping", "not sent: unchanged" — and reminders, flapping
// notices and settled states are tagged so). Each active alert has silencing.js's control:
// "Silenced until 14:05" (Unsilence), or Silence (1h / 4h / 24h) for editors and admins.
//
// Requests: `GET /api/alerts?status=firing` once the session is known, every 15 s (not while
// the page is hidden) and soon after 'dashboards:changed' (a patch or another client's save:
// rules may have changed); while the popover is open also `GET /api/alerts` (the active ones are
// picked here), `GET /api/notifications?limit=20` and `GET /api/silences` (its failure only
// hides the silence controls). Only for someone signed in; a 401, 403 or 404 (an older server)
// hides the bell quietly and stops asking (`api` should not bring up the sign-in screen: app.js
// passes api.js's publicApi). Silencing is a person's act: it goes through `act` (api.js's api:
// POST and DELETE /api/silences), and each silence made or ended is announced on the bus as
// 'silences:changed' {silence}; one announced by the panels' indicators joins the list here.
// `onOpen(dashboardId)` opens a dashboard the way the app does (app.js: 'dashboard:open', whose
// 'dashboard:opened' writes the hash; the settings page closes, the dashboard pane shows).
//
// Test hooks: .alerts-bell[data-count][data-state=loading|ready|hidden] (hidden: display none)
// > button.alerts-toggle[aria-expanded] (.alerts-badge while some fire); .alerts-pop (open) with
// .alerts-active > .alert-item[data-dashboard-id][data-rule-id][data-key][data-status][data-severity]
// (.alert-link, .alert-name, .alert-dash, .alert-value, .alert-since, .alert-nodata, and the
// .silence control: see silencing.js), .alerts-none, .alerts-notes > .notif-item[data-status]
// [data-reason][data-muted] (.notif-title, .notif-tag[data-kind=muted|reason][data-value],
// .notif-delivery[data-status]), .alerts-notes-none, .alerts-error.
import { html } from 'htm/preact';
import { render } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { absoluteTime, relativeTime } from '../time.js';
import {
  activeAlerts, badgeText, bellLabel, deliveryLines, firingCount, notificationTags, notificationTitle, notificationValue,
  severityLabel, statusLabel, valueText,
} from './rules.js';
import { maySilence, mergeSilence } from './silences.js';
import { SilenceControl } from './silencing.js';

const POLL_MS = 15_000;
const NOTIFICATIONS = 20;
const enc = encodeURIComponent;

/** The bell glyph (16×16, stroked like dom.js's icons). */
export const BELL_PATH = 'M4 11.5V7a4 4 0 0 1 8 0v4.5l1.5 1H2.5zM6.5 13.5a1.5 1.5 0 0 0 3 0';
export function BellIcon() {
  return html`<svg viewBox="0 0 16 16" width="14" height="14" aria-hidden="true" focusable="false"><path d=${BELL_PATH} fill="none" stroke="currentColor" stroke-width="1.4" stroke-linejoin="round" stroke-linecap="round" /></svg>`;
}

/** "5m ago" with the exact time as its tooltip. */
function When({ ms, cls }) {
  if (!(ms > 0)) return null;
  return html`<span class=${cls} title=${absoluteTime(ms)}>${relativeTime(ms)}</span>`;
}

function ActiveItem({ a, onGo, silencing }) {
  const value = valueText(a.value);
  const target = { dashboardId: a.dashboardId, ruleId: a.ruleId, key: a.key };
  return html`<li class="alert-item" data-dashboard-id=${a.dashboardId} data-rule-id=${a.ruleId} data-key=${a.key}
    data-status=${a.status} data-severity=${a.severity}>
    <a class="alert-link" href=${`#d=${enc(a.dashboardId)}`} onClick=${(e) => onGo(e, a.dashboardId)}
      title=${a.message || a.name}>
      <span class="alert-line">
        <span class="alert-sev" data-severity=${a.severity}>${severityLabel(a.severity)}</span>
        <span class="alert-name">${a.name}${a.key ? html` <span class="alert-key">· ${a.key}</span>` : null}</span>
        <span class="alert-state" data-status=${a.status}>${statusLabel(a.status)}</span>
      </span>
      <span class="alert-meta">
        <span class="alert-dash">${a.dashboardTitle || a.dashboardId}</span>
        ${value ? html`<span class="alert-value">${value}</span>` : null}
        <${When} ms=${a.since} cls="alert-since" />
        ${a.noData ? html`<span class="alert-nodata" title=${a.error ? `Its panel’s data cannot be had: ${a.error}` : 'Its panel’s data cannot be had: the state shown is the last one known'}>no data</span>` : null}
      </span>
    </a>
    <${SilenceControl} target=${target} active=${true} label=${a.key ? `${a.name} (${a.key})` : a.name} ...${silencing} />
  </li>`;
}

function NotificationItem({ n, onGo }) {
  const value = notificationValue(n);
  const where = [n.dashboardTitle || n.dashboardId, n.panelTitle].filter(Boolean).join(' · ');
  const tags = notificationTags(n);
  return html`<li class="notif-item" data-status=${n.status} data-severity=${n.severity} data-reason=${n.reason} data-muted=${n.muted}>
    <a class="notif-link" href=${`#d=${enc(n.dashboardId)}`} onClick=${(e) => onGo(e, n.dashboardId)}>
      <span class="notif-line">
        <span class="notif-title">${notificationTitle(n)}</span>
        ${tags.map((t) => html`<span class="notif-tag" data-kind=${t.kind} data-value=${t.value} title=${t.title}>${t.text}</span>`)}
        <${When} ms=${n.at} cls="notif-when" />
      </span>
      <span class="notif-meta">${where}${value ? ` · ${value}` : ''}</span>
      ${n.message ? html`<span class="notif-message">${n.message}</span>` : null}
      ${deliveryLines(n).map((d) => html`<span class="notif-delivery" data-status=${d.status}>${d.text}</span>`)}
    </a>
  </li>`;
}

function Popover({ pos, active, notes, error, silencing, onGo, onClose }) {
  const ref = useRef(null);
  useEffect(() => {
    ref.current?.focus();
  }, []);
  const onKey = (e) => {
    if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      onClose(true);
    }
  };
  return html`<div class="alerts-pop" role="dialog" aria-label="Alerts" tabindex="-1" ref=${ref} onKeyDown=${onKey}
    style=${{ top: `${pos.top}px`, right: `${pos.right}px` }}>
    <h2 class="alerts-pop-title">Active alerts</h2>
    ${active === null
      ? html`<p class="alerts-loading muted">Loading…</p>`
      : active.length
        ? html`<ul class="alerts-active">${active.map((a) => html`<${ActiveItem} key=${`${a.dashboardId}/${a.ruleId}/${a.key ?? ''}`} a=${a} onGo=${onGo} silencing=${silencing} />`)}</ul>`
        : html`<p class="alerts-none muted">No alert is firing or pending.</p>`}
    <h2 class="alerts-pop-title">Latest notifications</h2>
    ${notes === null
      ? html`<p class="alerts-loading muted">Loading…</p>`
      : notes.length
        ? html`<ul class="alerts-notes">${notes.map((n) => html`<${NotificationItem} key=${n.id} n=${n} onGo=${onGo} />`)}</ul>`
        : html`<p class="alerts-notes-none muted">No notifications yet.</p>`}
    ${error ? html`<p class="alerts-error" role="alert">${error}</p>` : null}
  </div>`;
}

function Bell({ state, count, open, pos, active, notes, error, silencing, onToggle, onGo, onClose }) {
  const label = bellLabel(count);
  return html`<div class="alerts-bell" data-state=${state} data-count=${count} data-firing=${count > 0 ? 'true' : 'false'}>
    <button type="button" class="alerts-toggle" aria-haspopup="dialog" aria-expanded=${String(open)}
      aria-label=${label} title=${label} onClick=${onToggle}>
      <${BellIcon} />
      ${count > 0 ? html`<span class="alerts-badge" aria-hidden="true">${badgeText(count)}</span>` : null}
    </button>
    ${open ? html`<${Popover} pos=${pos} active=${active} notes=${notes} error=${error} silencing=${silencing} onGo=${onGo} onClose=${onClose} />` : null}
  </div>`;
}

/** Mounts the bell into `el` (a header slot); `act` makes and ends silences (default `api`). */
export function createAlertBell(el, { api, act = api, bus, session, onOpen }) {
  let state = 'loading'; // loading | ready | hidden
  let firing = [];
  let open = false;
  let pos = { top: 0, right: 0 };
  let active = null;
  let notes = null;
  let error = '';
  let silences = null; // GET /api/silences while the popover is open; null: not known
  let canSilence = false; // the session's role may (editors, admins)
  let timer = null;
  let soon = null;
  let seq = 0;

  /** A silence made or ended here: into the list, and the panels' indicators hear of it. */
  function silenceChanged(s) {
    if (!s?.id) return;
    silences = mergeSilence(silences, s);
    paint();
    bus?.emit('silences:changed', { silence: s, from: 'bell' });
  }

  function paint() {
    const silencing = { silences, canSilence, api: act, onChanged: silenceChanged };
    render(html`<${Bell} state=${state} count=${firingCount(firing)} open=${open} pos=${pos} active=${active} notes=${notes}
      error=${error} silencing=${silencing} onToggle=${toggle} onGo=${go} onClose=${close} />`, el);
  }

  function hide() {
    state = 'hidden';
    open = false;
    clearInterval(timer);
    timer = null;
    paint();
  }

  /** A refusal that means "not for you" (or no such route): the bell goes away. */
  const refused = (e) => [401, 403, 404].includes(e?.status);

  async function poll() {
    if (state === 'hidden') return;
    const mine = ++seq;
    try {
      const rows = await api.get('/api/alerts?status=firing');
      if (mine !== seq || state === 'hidden') return;
      firing = Array.isArray(rows) ? rows : [];
      state = 'ready';
      paint();
    } catch (e) {
      if (refused(e)) hide();
      // Otherwise (unreachable, 5xx) the last count stays; the next poll tries again.
    }
    if (open) loadDetails();
  }

  async function loadDetails() {
    try {
      const [all, list, held] = await Promise.all([
        api.get('/api/alerts'),
        api.get(`/api/notifications?limit=${NOTIFICATIONS}`),
        // Without silences (an older server) the alerts still show, with no silence controls.
        api.get('/api/silences').catch(() => null),
      ]);
      if (!open) return;
      silences = Array.isArray(held) ? held : null;
      const rows = Array.isArray(all) ? all : [];
      active = activeAlerts(rows);
      // The full list is newer than the last count: the badge follows it.
      firing = rows.filter((a) => a.status === 'firing');
      notes = Array.isArray(list) ? list : [];
      error = '';
    } catch (e) {
      if (refused(e)) return hide();
      if (!open) return undefined;
      error = `Could not load alerts: ${e.message}`;
      active ??= [];
      notes ??= [];
    }
    paint();
    return undefined;
  }

  function toggle(e) {
    if (open) return close();
    // The header clips what overflows it: the popover is fixed, under the bell's right edge.
    const r = e.currentTarget.getBoundingClientRect();
    pos = { top: Math.round(r.bottom + 4), right: Math.max(4, Math.round(window.innerWidth - r.right)) };
    open = true;
    active = null;
    notes = null;
    silences = null;
    error = '';
    paint();
    loadDetails();
    return undefined;
  }

  function close(refocus = false) {
    if (!open) return;
    open = false;
    paint();
    if (refocus) el.querySelector('.alerts-toggle')?.focus();
  }

  function go(e, dashboardId) {
    // A plain click opens it here; a modified one (new tab) keeps the link's own behaviour.
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    close();
    onOpen?.(dashboardId);
  }

  document.addEventListener('click', (e) => {
    // The path as it was dispatched: a click that re-rendered its own button (Silence → the
    // durations) has a target no longer in the page, yet it was inside.
    if (open && !e.composedPath().includes(el)) close();
  });

  paint();
  Promise.resolve(session).then((s) => {
    // Nobody signed in: the sign-in screen is up and the page reloads after it.
    if (!s?.user) return hide();
    canSilence = maySilence(s);
    poll();
    timer = setInterval(() => { if (!document.hidden) poll(); }, POLL_MS);
    bus?.on('dashboards:changed', () => {
      // A burst of patches costs one request.
      clearTimeout(soon);
      soon = setTimeout(poll, 1000);
    });
    // A panel's indicator made or ended a silence: the list here follows.
    bus?.on('silences:changed', ({ silence, from } = {}) => {
      if (from === 'bell' || !silence?.id || silences === null) return;
      silences = mergeSilence(silences, silence);
      paint();
    });
    // The server pushed a notification over the dashboard's socket: at once.
    bus?.on('alerts:changed', () => {
      clearTimeout(soon);
      soon = setTimeout(poll, 50);
    });
    return undefined;
  });

  return { refresh: poll, count: () => firingCount(firing) };
}
