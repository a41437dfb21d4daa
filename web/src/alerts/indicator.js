// Each panel's alert indicator in the live dashboard view (issue 41): a panel with alert rules
// (the state's `alerts`, matched by `panelId`) shows a bell in its header, coloured by the worst
// state of its rules (firing > pending > ok; grey while not judged yet), whose tooltip lists
// each rule's name, condition in words and state, and whose click opens the same list as a box
// over the panel (with each rule's value, since when, the fan-out values firing, "no data").
// Each rule there has silencing.js's control: "Silenced until 14:05" (Unsilence), or Silence
// (1h / 4h / 24h) while it fires or is pending, for editors and admins (the session's role); a
// fan-out rule's control silences all its values, and each value firing or pending has its own.
//
// The states come from `GET /api/alerts?dashboardId=<id>` and the silences from `GET
// /api/silences` (this dashboard's kept; a failure only hides the silence controls): asked when
// the dashboard opens with rules and whenever its rules change, then every 15 s while the view is
// shown (not while the page is hidden or a sheet covers the view), and the silences again on the
// bus's 'silences:changed' {silence} (the bell made or ended one; the ones made or ended here are
// announced so). A dashboard without rules asks nothing; a 401, 403 or 404 stops asking (the
// rules still show, their states unknown).
//
// view.js makes one (`createPanelAlerts`) and calls `open(id)` when another dashboard opens and
// `update(state)` after each reconcile; the indicator mounts into the panels' headers from
// outside (a `.panel-alerts-host` after the title), so panel.js knows nothing of it.
//
// Test hooks: .panel-alerts[data-state=firing|pending|ok|unknown][data-rules] > button
// .panel-alerts-toggle[aria-expanded] (title and aria-label: the rules in lines); .panel-alerts-pop
// (open) > .panel-alert-rule[data-rule-id][data-status] with .rule-name, .rule-cond, .rule-state,
// .rule-value, .rule-since, .rule-nodata, the rule's .silence control (silencing.js) and, for a
// fan-out rule, .rule-key-silence[data-key] per active value with its own; .panel-alerts-close.
import { html } from 'htm/preact';
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { absoluteTime, relativeTime } from '../time.js';
import { BellIcon } from './bell.js';
import { panelRules, panelState, panelTooltip, severityLabel, statusLabel, valueText } from './rules.js';
import { maySilence, mergeSilence } from './silences.js';
import { SilenceControl } from './silencing.js';

const POLL_MS = 15_000;
const enc = encodeURIComponent;

function RuleRow({ r, dashboardId, silencing }) {
  const value = valueText(r.value);
  const active = r.status === 'firing' || r.status === 'pending';
  return html`<li class="panel-alert-rule" data-rule-id=${r.id} data-status=${r.status} data-severity=${r.severity}>
    <div class="rule-line">
      <span class="rule-name">${r.name}</span>
      <span class="rule-state" data-status=${r.status}>${statusLabel(r.status)}</span>
    </div>
    <div class="rule-detail">
      <span class="rule-cond">${r.words}${r.hold ? ` for ${r.hold}` : ''}</span>
      <span class="rule-sev" data-severity=${r.severity}>${severityLabel(r.severity)}</span>
      ${value ? html`<span class="rule-value">value ${value}</span>` : null}
      ${r.keys.length ? html`<span class="rule-keys">${r.keys.join(', ')}</span>` : null}
      ${r.since > 0 ? html`<span class="rule-since" title=${absoluteTime(r.since)}>since ${relativeTime(r.since)}</span>` : null}
      ${r.noData ? html`<span class="rule-nodata" title=${r.error ?? ''}>no data</span>` : null}
    </div>
    <${SilenceControl} target=${{ dashboardId, ruleId: r.id }} active=${active} label=${r.name} ...${silencing} />
    ${r.keys.map((k) => html`<div class="rule-key-silence" key=${k} data-key=${k}>
      <span class="rule-key">${k}</span>
      <${SilenceControl} target=${{ dashboardId, ruleId: r.id, key: k }} active=${true} label=${`${r.name} (${k})`} ...${silencing} />
    </div>`)}
  </li>`;
}

function PanelAlerts({ rows, panelTitle, dashboardId, silencing }) {
  const [open, setOpen] = useState(false);
  const ref = useRef(null);
  const state = panelState(rows);
  const tip = panelTooltip(rows);
  useEffect(() => {
    if (!open) return undefined;
    // The path as dispatched: a click that re-rendered its own button was still inside.
    const away = (e) => { if (ref.current && !e.composedPath().includes(ref.current)) setOpen(false); };
    const esc = (e) => {
      if (e.key !== 'Escape' || e.defaultPrevented) return;
      setOpen(false);
      ref.current?.querySelector('.panel-alerts-toggle')?.focus();
    };
    document.addEventListener('click', away);
    document.addEventListener('keydown', esc);
    return () => {
      document.removeEventListener('click', away);
      document.removeEventListener('keydown', esc);
    };
  }, [open]);
  return html`<span class="panel-alerts" ref=${ref} data-state=${state} data-rules=${rows.length}>
    <button type="button" class="panel-alerts-toggle" aria-expanded=${String(open)} aria-label=${`Alerts on ${panelTitle}: ${statusLabel(state)}. ${tip}`}
      title=${tip} onClick=${() => setOpen(!open)}><${BellIcon} /></button>
    ${open ? html`<div class="panel-alerts-pop" role="dialog" aria-label=${`Alert rules on ${panelTitle}`}>
      <button type="button" class="panel-alerts-close panel-info-close" aria-label="Close" onClick=${() => setOpen(false)}>✕</button>
      <div class="info-title">Alert rules</div>
      <ul class="panel-alert-rules">${rows.map((r) => html`<${RuleRow} key=${r.id} r=${r} dashboardId=${dashboardId} silencing=${silencing} />`)}</ul>
    </div>` : null}
  </span>`;
}

/**
 * `panels()` is the view's panel map (id → panel.js panel), `shown()` whether the view is on
 * screen; `session` (a promise of GET /api/session) says whether this person may silence.
 */
export function createPanelAlerts({ api, bus, session, panels, shown = () => true }) {
  let dashboardId = null;
  let rules = [];
  let rulesJson = '[]';
  let views = null; // GET /api/alerts?dashboardId= rows, null until answered
  let silences = null; // this dashboard's GET /api/silences rows, null until answered
  let canSilence = false;
  let refused = false;
  let seq = 0;
  const hosts = new Map(); // panelId → {host, el}

  async function load() {
    const id = dashboardId;
    if (!id || !rules.length || refused) return;
    const mine = ++seq;
    try {
      const [rows, held] = await Promise.all([
        api.get(`/api/alerts?dashboardId=${enc(id)}`),
        api.get('/api/silences').catch(() => null),
      ]);
      if (mine !== seq || id !== dashboardId) return;
      views = Array.isArray(rows) ? rows : [];
      silences = Array.isArray(held) ? held.filter((s) => s.dashboardId === id) : null;
    } catch (e) {
      if (id !== dashboardId) return;
      if ([401, 403, 404].includes(e?.status)) refused = true;
      // Otherwise the last states stay until the next poll.
    }
    paint();
  }

  setInterval(() => {
    if (dashboardId && rules.length && !refused && !document.hidden && shown()) load();
  }, POLL_MS);

  /** A silence made or ended here: into the list, and the bell hears of it. */
  function silenceChanged(s) {
    if (!s?.id || s.dashboardId !== dashboardId) return;
    silences = mergeSilence(silences, s);
    paint();
    bus?.emit('silences:changed', { silence: s, from: 'indicator' });
  }

  bus?.on('silences:changed', ({ silence, from } = {}) => {
    if (from === 'indicator' || silence?.dashboardId !== dashboardId || silences === null) return;
    silences = mergeSilence(silences, silence);
    paint();
  });

  Promise.resolve(session).then((s) => {
    canSilence = maySilence(s);
    paint();
  });

  function unmount(panelId) {
    const slot = hosts.get(panelId);
    if (!slot) return;
    render(null, slot.host);
    slot.host.remove();
    hosts.delete(panelId);
  }

  function paint() {
    const map = panels();
    const silencing = { silences, canSilence, api, onChanged: silenceChanged };
    for (const id of [...hosts.keys()]) {
      if (!map.has(id) || hosts.get(id).el !== map.get(id).el) unmount(id);
    }
    for (const [id, p] of map) {
      const rows = panelRules(rules, views, id);
      if (!rows.length) {
        unmount(id);
        continue;
      }
      let slot = hosts.get(id);
      if (!slot || !slot.host.isConnected) {
        unmount(id);
        const host = document.createElement('span');
        host.className = 'panel-alerts-host';
        const title = p.el.querySelector(':scope > .panel-head > .panel-title');
        if (!title) continue;
        title.after(host);
        slot = { host, el: p.el };
        hosts.set(id, slot);
      }
      render(html`<${PanelAlerts} rows=${rows} panelTitle=${p.def?.title ?? id} dashboardId=${dashboardId} silencing=${silencing} />`, slot.host);
    }
  }

  return {
    /** Another dashboard is shown: forget the last one's rules and states. */
    open(id) {
      dashboardId = id;
      rules = [];
      rulesJson = '[]';
      views = null;
      silences = null;
      refused = false;
      seq += 1;
      for (const panelId of [...hosts.keys()]) unmount(panelId);
    },
    /** The view's state after a reconcile: indicators follow; changed rules are asked about. */
    update(state) {
      const next = Array.isArray(state?.alerts) ? state.alerts : [];
      const nj = JSON.stringify(next);
      const changed = nj !== rulesJson;
      rules = next;
      rulesJson = nj;
      paint();
      if (changed && rules.length) load();
    },
    refresh: load,
  };
}
