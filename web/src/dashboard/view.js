// The live dashboard view: title, version, variables bar, connection indicator and the panel
// grid, kept current over the WebSocket (see README "WebSocket").
//
// State handling: a snapshot sets the state copy; a patch is applied to a clone (fast-json-patch)
// when its baseVersion is ours, then the DOM is reconciled panel by panel (by id, comparing each
// panel's JSON): never a full re-render. panel.data/panel.error with seq ≤ the panel's last seq are
// stale and dropped.
//
// Data health: panels whose provider fails (kept data shown as stale, or no data at all) are
// summed up in a banner above the grid, grouped by provider ("2 panels show data from 10m ago —
// Binance cannot be reached"), dismissable for the session until another provider joins, gone
// once all are fine; and the header indicator says "Data delayed" instead of "Live" meanwhile.
//
// Access: on open the view asks `GET /api/dashboards/{id}/access` and, with the session's role,
// tells whether this person may change the dashboard (access.js): if not, a "View only" chip,
// no Restore once deleted, and 'dashboard:access' {dashboardId, canEdit, access} on the bus so
// the list hides its delete and version restore for it. "Share" opens share.js's dialog; its
// icon is a lock (private) or people (team).
//
// The dashboard's title and panel titles are announced as 'dashboard:panels' when they load or
// change (the chat names the panels a run left failing by them).
//
// A share link's page (shared.js) makes the same view with `readOnly` ({label, title, vars}: the
// chip's words and whether the visitor may change the variables) and `connection` (createLive's
// options for the link's WebSocket): no access, no Share, no REST look-ups, no provider health
// (all need an account); the chip says it is a shared, read-only view and the variables bar is
// disabled unless `vars`. `open(id, initial)` may start from the dashboard as REST gave it
// ({state, version, vars}) until the socket's snapshot comes.
//
// Direct editing (edit/index.js) is mounted here for people who may change the dashboard: the
// view tells it the dashboard opened, each new state and the access once known; a share link's
// page (readOnly) gets none.
//
// Alerts and export (issue 41), not on a share link's page: panels with alert rules show a bell
// in their header (alerts/indicator.js, states from GET /api/alerts?dashboardId=); "Export JSON"
// in the title row (anyone who may see the dashboard) downloads the export document, the "PDF /
// PNG" menu beside it the dashboard rendered by the server (download.js), and each panel's
// header has "Download CSV" (export.js; a refusal such as 503 "no data yet" is a toast).
//
// Test hooks: .dashboard-view[data-dashboard-id][data-version]; .dashboard-vars [name=<var>];
// .dashboard-view[data-access=edit|view] once the access is known, .dash-view-only (hidden when
// editable; `.dash-shared-chip` on a share link's page), .dashboard-vars[data-locked] when a link
// fixes the variables, .share-open[data-visibility] (hidden until the access is known; see share.js);
// .live-status[data-state=open|connecting|closed][data-health=ok|delayed] with .live-label
// (Live | Data delayed | Connecting… | Offline) and its title; .dash-export (Export JSON);
// .dash-render-toggle and its .dash-render[data-format=pdf|png] (see download.js);
// a.panel-csv[href] in each data panel's header (hidden otherwise); .dash-outage[data-count]
// (hidden when all is well) > .dash-outage-line[data-provider] and .dash-outage-dismiss;
// panels: see panel.js.
import { applyPatch } from 'fast-json-patch';
import { themeColors } from '../theme.js';
import { h, icon } from '../dom.js';
import { json } from './format.js';
import { createLive } from './live.js';
import { createPanel } from './panel.js';
import { bannerLines, liveIndicator } from './outage.js';
import { currentHealth, loadHealth, setFallback } from '../datahealth.js';
import { canEdit } from './access.js';
import { openShareDialog } from './share.js';
import { varValues } from './links.js';
import { createEditing } from './edit/index.js';
import { csvOffered, csvPath, downloadCsv, exportDashboard } from './export.js';
import { createRenderButtons } from './download.js';
import { createPanelAlerts } from '../alerts/indicator.js';
import { toast, toastError } from '../toast.js';

const ROW_HEIGHT = 80;
// The Share button's icon: a lock for private, two people for team.
const LOCK = 'M4.5 7.5h7v5.5h-7zM6 7.5V5.5a2 2 0 0 1 4 0v2';
const PEOPLE = 'M6 7a2 2 0 1 0 0-4 2 2 0 0 0 0 4zM2.5 13c0-2 1.5-3.5 3.5-3.5S9.5 11 9.5 13M10.5 7a1.8 1.8 0 1 0 0-3.6M11.5 9.6c1.2.4 2 1.7 2 3.4';
// Export JSON and Download CSV: an arrow into a tray.
const DOWNLOAD = 'M8 2.5v7.5M5 7l3 3 3-3M3 11.5v2h10v-2';

export function createDashboardView(el, { api, bus, session, connection = {}, readOnly = null }) {
  // ---- static skeleton -------------------------------------------------------------------
  const titleEl = h('h1.dash-title');
  const versionEl = h('span.dash-version');
  const statusDot = h('span.live-status', { dataset: { state: 'closed' }, role: 'status' },
    h('i.dot'), h('span.live-label', { text: 'Offline' }));
  statusDot.dataset.health = 'ok';
  const refreshAll = h('button.dash-refresh-all', {
    type: 'button', title: 'Re-run every panel', text: 'Refresh all',
    onclick: () => {
      if (!current || !live.send({ type: 'refresh', dashboardId: current })) return;
      for (const p of panels.values()) p.setLoading();
    },
  });
  const viewOnly = readOnly
    ? h('span.dash-view-only.dash-shared-chip', { text: readOnly.label, title: readOnly.title ?? '' })
    : h('span.dash-view-only', { hidden: true, text: 'View only' });
  // A share link's visitor has no access to look at, nor links to make: no Share button.
  const shareBtn = readOnly ? null : h('button.share-open', {
    type: 'button', hidden: true, title: 'Who can see and change this dashboard', onclick: () => openShare(),
  });
  // Export JSON: for anyone who may see the dashboard (an account's; a link's visitor has none).
  const exportBtn = readOnly ? null : h('button.dash-export', {
    type: 'button', title: 'Download this dashboard as a JSON file (Import in the dashboard list makes a copy from it)',
    'aria-label': 'Export JSON', onclick: () => exportJson(),
  }, icon(DOWNLOAD), h('span.label', { text: 'Export JSON' }));
  // Download PDF / PNG beside it, for the same people (download.js).
  const renderHost = readOnly ? null : h('span.dash-render-host');
  const varsBar = h('div.dashboard-vars');
  const banner = h('div.dash-banner', { hidden: true });
  // Provider trouble across the panels (see the header comment).
  const outageLines = h('div.dash-outage-lines');
  const outageBanner = h('div.dash-outage', { hidden: true, role: 'status' },
    h('span.dash-outage-icon', { 'aria-hidden': 'true' }),
    outageLines,
    h('button.dash-outage-dismiss', {
      type: 'button', text: 'Dismiss', title: 'Hide this notice for this session', onclick: () => dismissOutage(),
    }));
  const grid = h('div.dashboard-grid');
  const empty = h('div.dash-empty', null,
    h('div.dash-empty-title', { text: 'No dashboard open' }),
    h('div.muted', { text: 'Pick one from the list, create one from a template, or ask the agent in the chat.' }));
  const titleRow = h('div.dash-title-row', null, titleEl, versionEl, viewOnly, h('span.dash-spacer'), statusDot, shareBtn, exportBtn, renderHost, refreshAll);
  const header = h('header.dash-header', null, titleRow, varsBar);
  const footer = h('footer.dash-footer', null, 'Charts by ',
    h('a', { href: 'https://www.tradingview.com/', target: '_blank', rel: 'noopener noreferrer', text: 'TradingView Lightweight Charts™' }),
    ' and Apache ECharts');
  const root = h('div.dashboard-view', { dataset: { dashboardId: '', version: '' } }, header, banner, outageBanner, grid, empty, footer);
  el.replaceChildren(root);
  const editing = readOnly ? null : createEditing({
    root, titleRow, titleEl, grid, api, rowHeight: ROW_HEIGHT, vars: () => varValues(state?.variables, vars),
  });
  // Alert rules' bells in the panels' headers (not on a share link's page: the states need an
  // account).
  const renderButtons = readOnly ? null : createRenderButtons(renderHost, {
    api, dashboard: () => ({ id: current, title: state?.title }),
  });
  const alertMarks = readOnly ? null : createPanelAlerts({
    api, bus, session, panels: () => panels, shown: () => root.isConnected && root.getClientRects().length > 0,
  });

  // ---- model ------------------------------------------------------------------------------
  let current = null; // dashboard id
  let version = 0;
  let state = null;
  let vars = {};
  let varsJson = '';
  let namesJson = ''; // the title and panel titles last announced as 'dashboard:panels'
  let deleted = false;
  let pendingVars = null;
  let access = null; // GET /api/dashboards/{id}/access for `current`, once answered
  let editable = !readOnly; // what access.js's canEdit says (true until known: the server decides)
  /** @type {Map<string, ReturnType<typeof createPanel>>} */
  let panels = new Map();
  let colors = themeColors();

  const live = createLive({ onMessage, onStatus, ready: session, ...connection });

  let socket = 'closed';
  let retryAt = null;
  let troubles = [];
  let sawTrouble = false; // this dashboard had provider trouble since it was opened

  function onStatus(s, info) {
    socket = s;
    retryAt = info.retryAt ?? null;
    paintIndicator();
  }

  /** The header indicator: the connection and whether the panels' data is current. */
  function paintIndicator() {
    const { label, health, title } = liveIndicator(socket, troubles, retryAt);
    statusDot.dataset.state = socket;
    statusDot.dataset.health = health;
    statusDot.querySelector('.live-label').textContent = label;
    statusDot.title = title;
  }

  // ---- data health: the banner and the indicator follow the panels ------------------------
  let healthQueued = false;
  /** A panel's state changed: recount once, after the current batch of messages. */
  function panelChanged() {
    if (healthQueued) return;
    healthQueued = true;
    queueMicrotask(() => {
      healthQueued = false;
      updateHealth();
    });
  }

  function updateHealth() {
    troubles = [...panels.values()].map((p) => p.trouble).filter(Boolean);
    paintIndicator();
    paintOutage();
    // Whether to offer the fallback switch, and the providers' names: asked when it matters.
    // Not on a share link's page: the report is for people with an account.
    if (readOnly) return;
    if (troubles.length || [...panels.values()].some((p) => p.hasRealSource)) loadHealth();
  }

  const dismissKey = () => `boardsmith.outageDismissed.${current}`;
  function dismissedProviders() {
    try {
      return new Set(JSON.parse(sessionStorage.getItem(dismissKey()) ?? '[]'));
    } catch {
      return new Set();
    }
  }
  function dismissOutage() {
    try {
      sessionStorage.setItem(dismissKey(), JSON.stringify([...new Set(troubles.map((t) => t.provider))]));
    } catch {
      /* storage unavailable: hidden until the next change */
    }
    outageBanner.hidden = true;
    outageBanner.dataset.dismissed = 'true';
  }

  function paintOutage() {
    const lines = bannerLines(troubles);
    outageBanner.dataset.count = String(troubles.length);
    if (lines.length) sawTrouble = true;
    if (!lines.length) {
      // Recovered (seen here, not merely not known yet while panels load): a later outage is
      // news again.
      if (sawTrouble) {
        try { sessionStorage.removeItem(dismissKey()); } catch { /* storage unavailable */ }
      }
      delete outageBanner.dataset.dismissed;
      outageBanner.hidden = true;
      outageLines.replaceChildren();
      return;
    }
    outageLines.replaceChildren(...lines.map((l) => h('div.dash-outage-line', { dataset: { provider: l.provider }, text: l.text })));
    const dismissed = dismissedProviders();
    outageBanner.hidden = lines.every((l) => dismissed.has(l.provider));
    if (!outageBanner.hidden) delete outageBanner.dataset.dismissed;
  }

  /** The outage box's button: demo data for unreachable providers, then the failing panels again. */
  async function useFallback() {
    await setFallback(true);
    if (!current) return;
    for (const p of panels.values()) {
      if (p.trouble && live.send({ type: 'refresh', dashboardId: current, panelId: p.id })) p.setLoading();
    }
  }

  bus.on('data:health', (report) => {
    for (const p of panels.values()) p.setHealth(report);
  });

  function setMode(mode) {
    root.dataset.mode = mode; // empty | loading | live | deleted | missing
    empty.hidden = mode !== 'empty';
    header.hidden = mode === 'empty';
    footer.hidden = mode === 'empty';
  }
  setMode('empty');

  function showBanner(kind, text, action) {
    banner.hidden = false;
    banner.dataset.kind = kind;
    banner.replaceChildren(h('span', { text }), ...(action ? [action] : []));
  }
  function hideBanner() {
    banner.hidden = true;
    banner.replaceChildren();
  }

  // ---- opening ----------------------------------------------------------------------------
  function clearPanels() {
    for (const p of panels.values()) p.destroy();
    panels = new Map();
    grid.replaceChildren();
    // Another dashboard: its own troubles (and its own dismissal) come with its panels.
    troubles = [];
    sawTrouble = false;
    outageBanner.hidden = true;
    outageLines.replaceChildren();
    paintIndicator();
  }

  function open(dashboardId, initial = null) {
    if (!dashboardId) return;
    if (dashboardId === current && !deleted) {
      bus.emit('dashboard:opened', { dashboardId });
      return;
    }
    clearPanels();
    current = dashboardId;
    version = 0;
    state = null;
    vars = {};
    varsJson = '';
    namesJson = '';
    deleted = false;
    pendingVars = null;
    root.dataset.dashboardId = dashboardId;
    root.dataset.version = '';
    root.removeAttribute('data-deleted');
    titleEl.textContent = 'Loading…';
    versionEl.textContent = '';
    varsBar.replaceChildren();
    hideBanner();
    setMode('loading');
    access = null;
    editable = !readOnly;
    paintAccess();
    editing?.open(dashboardId);
    alertMarks?.open(dashboardId);
    renderButtons?.opened();
    bus.emit('dashboard:opened', { dashboardId });
    if (initial?.state) {
      vars = { ...(initial.vars ?? {}) };
      setMode('live');
      reconcile(initial.state, initial.version ?? 0);
    }
    live.subscribe(dashboardId);
    if (readOnly) return;
    loadAccess(dashboardId);
    // The WebSocket answers an unknown or deleted id with a bare `error`; ask REST to tell which.
    api.get(`/api/dashboards/${encodeURIComponent(dashboardId)}?detail=summary`).catch((e) => {
      if (current !== dashboardId) return;
      if (e.status === 410) markDeleted();
      else if (e.status === 404) {
        setMode('missing');
        titleEl.textContent = 'Dashboard not found';
        showBanner('error', `No dashboard with id ${dashboardId}.`);
      }
    });
  }

  // ---- access ------------------------------------------------------------------------------
  async function loadAccess(id) {
    let answer = null;
    try {
      answer = await api.get(`/api/dashboards/${encodeURIComponent(id)}/access`);
    } catch {
      // Not found (the REST summary above says so) or an older server: no Share, no chip.
    }
    const who = await session;
    if (current !== id) return;
    access = answer;
    editable = canEdit(access, who);
    paintAccess();
    editing?.setEditable(editable);
    bus.emit('dashboard:access', { dashboardId: id, canEdit: editable, access });
  }

  function paintAccess() {
    if (readOnly) {
      root.dataset.access = 'view';
      return;
    }
    if (access) root.dataset.access = editable ? 'edit' : 'view';
    else root.removeAttribute('data-access');
    viewOnly.hidden = !access || editable;
    viewOnly.title = access?.ownerName
      ? `Shared with you to look at, not to change; ask its owner, ${access.ownerName}, for edit access`
      : 'Shared with you to look at, not to change';
    shareBtn.hidden = !access;
    if (!access) return;
    shareBtn.dataset.visibility = access.visibility;
    shareBtn.replaceChildren(icon(access.visibility === 'team' ? PEOPLE : LOCK), h('span.label', { text: 'Share' }));
    shareBtn.setAttribute('aria-label', access.visibility === 'team' ? 'Share (everyone on the team can see it)' : 'Share (private)');
    banner.querySelector('.dash-restore')?.toggleAttribute('hidden', !editable);
  }

  async function openShare() {
    const id = current;
    if (!id || !access) return;
    openShareDialog({
      api, dashboardId: id, title: state?.title ?? '', access, session: await session,
      canLink: editable, vars: varValues(state?.variables, vars),
      onSaved: async (saved) => {
        if (current !== id) return;
        access = saved;
        editable = canEdit(access, await session);
        paintAccess();
        editing?.setEditable(editable);
        bus.emit('dashboard:access', { dashboardId: id, canEdit: editable, access });
      },
    });
  }

  // ---- export ------------------------------------------------------------------------------
  async function exportJson() {
    const id = current;
    if (!id || !exportBtn) return;
    exportBtn.disabled = true;
    try {
      const { name } = await exportDashboard(api, id);
      toast(`Exported “${name}”`);
    } catch (e) {
      toastError(`Export failed: ${e.message}`);
    } finally {
      exportBtn.disabled = false;
    }
  }

  /** Download CSV in a panel's header (a link to the route; a click fetches it to say why not). */
  function addCsv(p) {
    const link = h('a.panel-csv', {
      download: '', href: csvPath(current, p.id),
      title: 'Download this panel’s data as CSV',
      onclick: async (e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        const id = current;
        if (!id || link.dataset.busy) return;
        link.dataset.busy = 'true';
        try {
          await downloadCsv(id, p.id);
        } catch (err) {
          // The server's sentence (503: "panel “X” has no data to export: …").
          const msg = String(err.message || 'Download failed');
          toastError(msg.charAt(0).toUpperCase() + msg.slice(1));
        } finally {
          delete link.dataset.busy;
        }
      },
    }, icon(DOWNLOAD));
    p.el.querySelector(':scope > .panel-head')?.insertBefore(link, p.el.querySelector(':scope > .panel-head > .panel-refresh'));
    return link;
  }

  function paintCsv(p, def) {
    const link = p.el.querySelector(':scope > .panel-head > .panel-csv');
    if (!link) return;
    link.hidden = !csvOffered(def.type);
    link.href = csvPath(current, def.id);
    link.setAttribute('aria-label', `Download CSV of ${def.title ?? def.id}`);
  }

  function markDeleted() {
    deleted = true;
    root.dataset.deleted = 'true';
    setMode('deleted');
    const id = current;
    const restore = h('button.primary.dash-restore', {
      type: 'button', text: 'Restore', hidden: !editable,
      onclick: async () => {
        try {
          await api.post(`/api/dashboards/${encodeURIComponent(id)}/restore`);
          bus.emit('dashboards:changed', {});
          reopen(id);
        } catch (e) {
          showBanner('error', `Restore failed: ${e.message}`);
        }
      },
    });
    showBanner('deleted', 'This dashboard was deleted.', restore);
  }

  function reopen(id) {
    if (current !== id) return;
    deleted = false;
    root.removeAttribute('data-deleted');
    hideBanner();
    setMode('loading');
    live.subscribe(id);
  }

  bus.on('dashboard:open', ({ dashboardId }) => open(dashboardId));
  // Someone restored the dashboard we show as deleted (e.g. the list's Undo): resubscribe.
  bus.on('dashboards:changed', () => {
    if (!deleted || !current || readOnly) return;
    const id = current;
    api.get(`/api/dashboards/${encodeURIComponent(id)}?detail=summary`)
      .then(() => reopen(id))
      .catch(() => {});
  });

  // ---- messages ---------------------------------------------------------------------------
  function onMessage(msg) {
    // Any dashboard created, saved or deleted by anyone (an MCP client, another tab): the
    // lists reload. Our own dashboard's changes also arrive as patches below.
    if (msg.type === 'dashboards.changed') {
      bus.emit('dashboards:changed', {});
      return;
    }
    // An alert fired or resolved on a dashboard this person may see: the bell looks again.
    if (msg.type === 'alert.notification') {
      bus.emit('alerts:changed', { notification: msg.notification });
      return;
    }
    if (msg.type === 'error') {
      if (current && typeof msg.message === 'string' && msg.message.includes(current) && /deleted/.test(msg.message)) {
        markDeleted();
      }
      return;
    }
    if (!current || msg.dashboardId !== current) return;
    switch (msg.type) {
      case 'dashboard.snapshot': return onSnapshot(msg);
      case 'dashboard.patch': return onPatch(msg);
      case 'panel.data': return onPanelData(msg);
      case 'panel.error': return onPanelError(msg);
      case 'dashboard.deleted':
        markDeleted();
        bus.emit('dashboards:changed', {});
        return undefined;
      default: return undefined;
    }
  }

  function onSnapshot(msg) {
    if (deleted) {
      deleted = false;
      root.removeAttribute('data-deleted');
      hideBanner();
    }
    setMode('live');
    vars = { ...(msg.vars ?? {}) };
    reconcile(msg.state, msg.version);
    // The snapshot is authoritative for panel results (seqs may even restart with the server).
    for (const [id, p] of panels) {
      const slot = msg.panels?.[id];
      if (!slot) { p.setLoading(); continue; }
      if (slot.status === 'ok' || slot.status === 'stale') {
        // A stale slot keeps the last good data with the current failure (`error`, `stale`).
        if (slot.seq !== p.seq || !p.el.classList.contains('has-data') || p.el.dataset.status !== slot.status) {
          p.applyData(slot.data, slot.seq, slot.refreshedAt, slot);
        }
      } else if (slot.status === 'error') {
        if (slot.seq !== p.seq || p.el.dataset.status !== 'error') p.applyError(slot.error, slot.seq);
      } else {
        p.setSeq(slot.seq ?? 0);
        p.setLoading();
      }
    }
    if (pendingVars) {
      const v = pendingVars;
      pendingVars = null;
      sendVars(v);
    }
  }

  function onPatch(msg) {
    if (!state || msg.version <= version) return; // not newer: already have it
    if (msg.baseVersion !== version) {
      // We missed a version: a fresh snapshot brings us up to date.
      live.subscribe(current);
      return;
    }
    let next;
    try {
      next = applyPatch(structuredClone(state), msg.patch ?? [], false, true).newDocument;
    } catch {
      live.subscribe(current);
      return;
    }
    reconcile(next, msg.version);
    bus.emit('dashboards:changed', {});
  }

  function onPanelData(msg) {
    const p = panels.get(msg.panelId);
    if (!p || msg.seq <= p.seq) return;
    p.applyData(msg.data, msg.seq, msg.refreshedAt, msg);
  }

  function onPanelError(msg) {
    const p = panels.get(msg.panelId);
    if (!p || msg.seq <= p.seq) return;
    p.applyError(msg.error, msg.seq);
  }

  // ---- reconcile --------------------------------------------------------------------------
  function reconcile(next, nextVersion) {
    const prev = state;
    state = next;
    version = nextVersion;
    root.dataset.version = String(nextVersion);
    versionEl.textContent = `v${nextVersion}`;
    if (!prev || prev.title !== next.title) titleEl.textContent = next.title ?? '';
    announceNames(next);
    applyLayout(next.layout ?? {});
    const vj = json([next.variables ?? [], vars]);
    if (vj !== varsJson) {
      varsJson = vj;
      renderVars(next.variables ?? []);
    }

    const wanted = new Map((next.panels ?? []).map((p) => [p.id, p]));
    for (const [id, p] of panels) {
      if (!wanted.has(id)) {
        p.destroy();
        panels.delete(id);
        panelChanged();
      }
    }
    const cols = Math.max(1, next.layout?.columns ?? 1);
    let cursor = grid.firstElementChild;
    for (const def of next.panels ?? []) {
      let p = panels.get(def.id);
      if (!p) {
        p = createPanel(def, { onRefresh, onChange: panelChanged, onFallback: useFallback, colors });
        const report = currentHealth();
        if (report) p.setHealth(report);
        panels.set(def.id, p);
        if (!readOnly) addCsv(p);
      } else if (p.defJson !== json(def)) {
        p.setDef(def);
      }
      paintCsv(p, def);
      const w = Math.min(cols, Math.max(1, def.layout?.w ?? 1));
      const hgt = Math.max(1, def.layout?.h ?? 3);
      p.el.style.setProperty('--w', String(w));
      p.el.style.setProperty('--h', String(hgt));
      if (p.el !== cursor) grid.insertBefore(p.el, cursor);
      else cursor = cursor.nextElementSibling;
    }
    if (!panels.size) {
      grid.replaceChildren(h('div.dash-no-panels', { text: 'This dashboard has no panels yet.' }));
    } else {
      grid.querySelector(':scope > .dash-no-panels')?.remove();
    }
    editing?.update(next, nextVersion);
    alertMarks?.update(next);
  }

  /** Tells the other parts (the chat's failing-panel notes) the titles, when they changed. */
  function announceNames(next) {
    const names = (next.panels ?? []).map((p) => ({ id: p.id, title: p.title ?? '' }));
    const nj = json([next.title ?? '', names]);
    if (nj === namesJson) return;
    namesJson = nj;
    bus.emit('dashboard:panels', { dashboardId: current, title: next.title ?? '', panels: names });
  }

  function applyLayout(layout) {
    const cols = Math.max(1, Math.min(12, layout.columns ?? 1));
    grid.style.setProperty('--cols', String(cols));
    grid.style.setProperty('--gap', `${layout.gap ?? 12}px`);
    grid.style.setProperty('--row', `${ROW_HEIGHT}px`);
  }

  function onRefresh(panelId) {
    if (!current || !live.send({ type: 'refresh', dashboardId: current, panelId })) return;
    panels.get(panelId)?.setLoading();
  }

  // ---- variables --------------------------------------------------------------------------
  function valueOf(v) {
    return Object.hasOwn(vars, v.name) ? vars[v.name] : v.default;
  }

  function setVar(name, value) {
    vars = { ...vars, [name]: value };
    varsJson = json([state?.variables ?? [], vars]);
    for (const p of panels.values()) p.setLoading();
    sendVars({ [name]: value });
  }

  function sendVars(v) {
    if (!live.send({ type: 'set_vars', dashboardId: current, vars: v })) {
      pendingVars = { ...(pendingVars ?? {}), ...v };
    }
  }

  function renderVars(defs) {
    varsBar.hidden = defs.length === 0;
    // A share link's visitor changes them only when the link lets them.
    const locked = !!readOnly && !readOnly.vars;
    varsBar.toggleAttribute('data-locked', locked);
    varsBar.title = locked ? 'This link shows these values; they cannot be changed here.' : '';
    varsBar.replaceChildren(...defs.map((v) => {
      const id = `var-${v.name}`;
      const value = valueOf(v);
      let input;
      let extra = null;
      if (v.type === 'select') {
        const options = Array.isArray(v.options) ? v.options : [];
        input = h('select', { id, name: v.name }, options.map((o) => h('option', { value: String(o), text: String(o) })));
        input.value = String(value);
        input.addEventListener('change', () => {
          const o = options.find((x) => String(x) === input.value);
          setVar(v.name, o === undefined ? input.value : o);
        });
      } else if (v.type === 'range') {
        const [min = 0, max = 100, step = 1] = Array.isArray(v.options) ? v.options : [];
        input = h('input', { id, name: v.name, type: 'range', min: String(min), max: String(max), step: String(step) });
        input.value = String(value);
        extra = h('output.var-value', { for: id, text: String(value) });
        input.addEventListener('input', () => { extra.textContent = input.value; });
        input.addEventListener('change', () => setVar(v.name, Number(input.value)));
      } else {
        input = h('input', { id, name: v.name, type: 'text', spellcheck: 'false', autocomplete: 'off' });
        input.value = value == null ? '' : String(value);
        input.addEventListener('change', () => setVar(v.name, input.value));
        input.addEventListener('keydown', (e) => { if (e.key === 'Enter') input.blur(); });
      }
      input.disabled = locked;
      return h(`label.var.var-${v.type}`, { for: id }, h('span.var-label', { text: v.label ?? v.name }), input, extra);
    }));
  }

  // ---- theme and clock --------------------------------------------------------------------
  bus.on('theme:changed', () => {
    // The CSS variables switched with the attribute; getComputedStyle sees them already.
    colors = themeColors();
    for (const p of panels.values()) p.theme(colors);
  });
  const clock = setInterval(() => {
    for (const p of panels.values()) p.tick();
    if (troubles.length) paintOutage(); // "data from 10m ago" grows older
  }, 15_000);

  return {
    open,
    current: () => current,
    /** Stops showing the dashboard for good (a share link that ended): panels, socket and clock. */
    close() {
      live.unsubscribe();
      clearPanels();
      clearInterval(clock);
    },
  };
}

