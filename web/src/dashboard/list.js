// The sidebar: dashboards (most recently updated first), "New from template", duplicate,
// delete with Undo, and the open dashboard's version history with "restore this version".
//
// What a person may not do is not offered: a viewer (their role writes nothing) gets no New,
// Duplicate or Delete; a dashboard the view found they may only look at ('dashboard:access',
// see view.js) has no Delete and no version Restore. Other rows keep Delete until opened (the
// server refuses it with its own sentence, shown in the toast): `GET /api/dashboards` does not
// say who may change a row, and asking each row's access would be one request per row. For the
// same reason the rows carry no private/team icon; the view's Share button shows it.
//
// Import (issue 41), next to New for who may create dashboards: a file picker for an export
// document (Export JSON in the view), sent to `POST /api/dashboards/import`; the new dashboard
// opens, and a refusal (400: not an export document, an invalid state) shows the server's
// message in the toast (export.js).
//
// Reports (issue 41), beside Import for who may write (not viewers; hidden until the session
// says): opens the Reports page of scheduled reports ('reports:open' {dashboardId} on the bus,
// the open dashboard being a new report's default; reports/index.js).
//
// Each version can be opened read-only ("Open": 'version:open' on the bus) and two versions,
// ticked, compared ("Compare": 'version:compare'); history/versions.js shows them.
//
// Test hooks: .dashboard-item[data-dashboard-id] (.active when open), .dashboard-new,
// .dashboard-import (hidden for viewers) with its input.dashboard-import-file, .dashboard-reports
// (hidden for viewers and until the session is known),
// .dashboard-duplicate, .dashboard-delete, .dashboard-versions with .version-restore,
// .version-open and input.version-pick per version and .versions-compare; each version's
// .version-meta names its author (author.js).
import { h, icon } from '../dom.js';
import { timeAgo } from '../time.js';
import { readsOnly } from './access.js';
import { authorLine } from './author.js';
import { importFile } from './export.js';
import { toast } from '../toast.js';

const enc = encodeURIComponent;

export function createDashboardList(el, { api, bus, session = Promise.resolve(null) }) {
  let openId = null;
  let viewer = false; // the signed-in person's role writes nothing
  /** Dashboards the view said this person may not change (by id → false). */
  const editable = new Map();
  const mayChange = (id) => !viewer && editable.get(id) !== false;
  let items = [];
  let loaded = false;
  let templates = null;
  let loadSeq = 0;
  let reloadTimer = null;

  const newBtn = h('button.dashboard-new', {
    type: 'button', title: 'New dashboard from a template', 'aria-haspopup': 'true', 'aria-expanded': 'false',
    onclick: (e) => { e.stopPropagation(); toggleMenu(); },
  }, h('span.plus', { text: '+' }), ' New');
  const importInput = h('input.dashboard-import-file', {
    type: 'file', accept: '.json,application/json', hidden: true, tabindex: '-1', 'aria-hidden': 'true',
    onchange: () => {
      const file = importInput.files?.[0];
      importInput.value = '';
      if (file) importDashboard(file);
    },
  });
  const importBtn = h('button.dashboard-import.icon', {
    type: 'button', title: 'Import a dashboard from a file made by Export JSON', 'aria-label': 'Import a dashboard from a file',
    onclick: () => importInput.click(),
  }, icon('M8 10.5V2.5M5 5.5l3-3 3 3M3 11.5v2h10v-2'));
  const reportsBtn = h('button.dashboard-reports.icon', {
    type: 'button', hidden: true, title: 'Scheduled reports: dashboards sent as PDF or PNG on a schedule', 'aria-label': 'Scheduled reports',
    onclick: () => bus.emit('reports:open', { dashboardId: openId }),
  }, icon('M8 3.5a5 5 0 1 0 0 10 5 5 0 0 0 0-10zM8 5.5V8.5l2 1.5'));
  const menu = h('div.template-menu', { hidden: true, role: 'menu' });
  const listEl = h('ul.dashboard-items', { role: 'list' });
  const versionsEl = h('section.dashboard-versions', { hidden: true });
  const root = h('div.dash-list', null,
    h('div.dash-list-head', null, h('span.dash-list-title', { text: 'Dashboards' }),
      h('span.dash-list-actions', null, reportsBtn, importBtn, importInput, newBtn)),
    menu, listEl, versionsEl);
  el.replaceChildren(root);

  document.addEventListener('click', (e) => {
    if (!menu.hidden && !menu.contains(e.target)) closeMenu();
  });
  document.addEventListener('keydown', (e) => { if (e.key === 'Escape') closeMenu(); });

  // ---- dashboards -------------------------------------------------------------------------
  async function load() {
    const mine = ++loadSeq;
    try {
      const rows = await api.get('/api/dashboards');
      if (mine !== loadSeq) return items;
      items = rows.filter((d) => !d.deleted).sort((a, b) => (b.updatedAt ?? 0) - (a.updatedAt ?? 0));
      loaded = true;
      renderItems();
    } catch (e) {
      if (mine === loadSeq) listEl.replaceChildren(h('li.dash-list-error', { text: `Could not load dashboards: ${e.message}` }));
    }
    return items;
  }

  function renderItems() {
    if (!loaded) return; // the first answer renders
    if (!items.length) {
      listEl.replaceChildren(h('li.dash-list-empty', { text: 'No dashboards yet. Create one from a template.' }));
      return;
    }
    listEl.replaceChildren(...items.map((d) => {
      const li = h('li.dashboard-item', {
        dataset: { dashboardId: d.id }, tabindex: '0', role: 'button', 'aria-current': d.id === openId ? 'true' : null,
        title: d.title,
        onclick: () => bus.emit('dashboard:open', { dashboardId: d.id }),
        onkeydown: (e) => {
          if ((e.key === 'Enter' || e.key === ' ') && e.target === li) {
            e.preventDefault();
            bus.emit('dashboard:open', { dashboardId: d.id });
          }
        },
      },
      h('div.item-main', null,
        h('div.item-title', { text: d.title }),
        h('div.item-meta', { text: `${d.panels} panel${d.panels === 1 ? '' : 's'} · v${d.version} · ` }, timeAgo(h('span'), d.updatedAt))),
      h('div.item-actions', null,
        viewer ? null : h('button.dashboard-duplicate.icon', {
          type: 'button', title: 'Duplicate', 'aria-label': `Duplicate ${d.title}`,
          onclick: (e) => { e.stopPropagation(); duplicate(d); },
        }, icon('M5.5 5.5h7v7h-7zM3.5 10.5v-7h7')),
        mayChange(d.id) ? h('button.dashboard-delete.icon', {
          type: 'button', title: 'Delete', 'aria-label': `Delete ${d.title}`,
          onclick: (e) => { e.stopPropagation(); remove(d); },
        }, icon('M3 4.5h10M6.5 4.5V3h3v1.5M4.5 4.5l.6 8.5h5.8l.6-8.5')) : null));
      li.classList.toggle('active', d.id === openId);
      return li;
    }));
  }

  function highlight() {
    for (const li of listEl.querySelectorAll('.dashboard-item')) {
      const on = li.dataset.dashboardId === openId;
      li.classList.toggle('active', on);
      if (on) li.setAttribute('aria-current', 'true');
      else li.removeAttribute('aria-current');
    }
  }

  async function duplicate(d) {
    try {
      const rec = await api.post('/api/dashboards', { duplicateOf: d.id, title: `${d.title} (copy)` });
      changed();
      if (rec?.id) bus.emit('dashboard:open', { dashboardId: rec.id });
      toast(`Duplicated “${d.title}”`);
    } catch (e) {
      toast(`Duplicate failed: ${e.message}`);
    }
  }

  async function remove(d) {
    // eslint-disable-next-line no-alert
    if (!window.confirm(`Delete “${d.title}”?`)) return;
    try {
      await api.del(`/api/dashboards/${enc(d.id)}`);
      changed();
      toast(`Deleted “${d.title}”`, 'Undo', async () => {
        try {
          await api.post(`/api/dashboards/${enc(d.id)}/restore`);
          changed();
        } catch (e) {
          toast(`Undo failed: ${e.message}`);
        }
      });
    } catch (e) {
      toast(`Delete failed: ${e.message}`);
    }
  }

  function changed() {
    bus.emit('dashboards:changed', {});
  }

  // ---- import -----------------------------------------------------------------------------
  async function importDashboard(file) {
    importBtn.disabled = true;
    try {
      const rec = await importFile(api, file);
      changed();
      if (rec?.id) bus.emit('dashboard:open', { dashboardId: rec.id });
      toast(`Imported “${rec?.state?.title ?? file.name}”`);
    } catch (e) {
      toast(`Import failed: ${e.message}`, null, null, 'error');
    } finally {
      importBtn.disabled = false;
    }
  }

  // ---- templates --------------------------------------------------------------------------
  async function toggleMenu() {
    if (!menu.hidden) return closeMenu();
    menu.hidden = false;
    newBtn.setAttribute('aria-expanded', 'true');
    if (!templates) {
      menu.replaceChildren(h('div.menu-note', { text: 'Loading templates…' }));
      try {
        templates = await api.get('/api/templates');
      } catch (e) {
        menu.replaceChildren(h('div.menu-note', { text: `Could not load templates: ${e.message}` }));
        return undefined;
      }
    }
    menu.replaceChildren(
      h('div.menu-note', { text: 'New from template' }),
      ...templates.map((t) => h('button.template-item', {
        type: 'button', role: 'menuitem', dataset: { template: t.name },
        onclick: () => create(t),
      }, h('span.template-title', { text: t.title ?? t.name }),
      h('span.template-meta', { text: `${t.panels} panels` }))));
    return undefined;
  }

  function closeMenu() {
    menu.hidden = true;
    newBtn.setAttribute('aria-expanded', 'false');
  }

  async function create(t) {
    closeMenu();
    try {
      const rec = await api.post('/api/dashboards', { template: t.name });
      changed();
      if (rec?.id) bus.emit('dashboard:open', { dashboardId: rec.id });
    } catch (e) {
      toast(`Could not create: ${e.message}`);
    }
  }

  // ---- versions ---------------------------------------------------------------------------
  let versionsSeq = 0;
  let versions = null; // {id, rows} shown
  // Versions ticked for "Compare" (at most two; a third unticks the oldest pick).
  let picks = [];
  async function loadVersions() {
    const id = openId;
    const mine = ++versionsSeq;
    if (!id) {
      versionsEl.hidden = true;
      versions = null;
      return;
    }
    let rows;
    try {
      rows = await api.get(`/api/dashboards/${enc(id)}/versions`);
    } catch {
      if (mine === versionsSeq) {
        versionsEl.hidden = true;
        versions = null;
      }
      return;
    }
    if (mine !== versionsSeq) return;
    if (versions?.id !== id) picks = [];
    versions = { id, rows: [...rows].sort((a, b) => b.version - a.version) };
    renderVersions();
  }

  function renderVersions() {
    if (!versions) return;
    const { id, rows } = versions;
    const latest = rows[0]?.version;
    picks = picks.filter((p) => rows.some((v) => v.version === p));
    versionsEl.hidden = false;
    const compare = h('button.versions-compare', {
      type: 'button', disabled: picks.length !== 2,
      title: picks.length === 2 ? `Compare v${Math.min(...picks)} with v${Math.max(...picks)}` : 'Tick two versions to compare them',
      text: picks.length === 2 ? `Compare v${Math.min(...picks)}↔v${Math.max(...picks)}` : 'Compare',
      onclick: () => {
        if (picks.length !== 2) return;
        bus.emit('version:compare', { dashboardId: id, from: Math.min(...picks), to: Math.max(...picks), canRestore: mayChange(id) });
      },
    });
    versionsEl.replaceChildren(
      h('h3.versions-title', null, 'Version history', h('span.versions-count', { text: String(rows.length) }), compare),
      h('ol.versions', null, rows.map((v) => h(`li.version${v.version === latest ? '.current' : ''}`, { dataset: { version: String(v.version) } },
        h('div.version-line', null,
          rows.length > 1 ? h('input.version-pick', {
            type: 'checkbox', checked: picks.includes(v.version), title: `Tick two versions to compare them`,
            'aria-label': `Pick version ${v.version} to compare`,
            onchange: (e) => {
              picks = e.target.checked ? [...picks.filter((p) => p !== v.version), v.version].slice(-2) : picks.filter((p) => p !== v.version);
              renderVersions();
            },
          }) : null,
          h('span.version-num', { text: `v${v.version}` }),
          timeAgo(h('span.version-time'), v.createdAt),
          h('button.version-open', {
            type: 'button', title: `Show version ${v.version} read-only`, text: 'Open',
            onclick: () => bus.emit('version:open', { dashboardId: id, version: v.version, canRestore: mayChange(id) }),
          }),
          v.version === latest
            ? h('span.version-current', { text: 'current' })
            : mayChange(id) && h('button.version-restore', {
              type: 'button', title: `Restore version ${v.version} as a new version`, text: 'Restore',
              onclick: () => revert(id, v.version),
            })),
        v.note ? h('div.version-note', { text: v.note, title: v.note }) : null,
        h('div.version-meta', null,
          authorLine(v.author) && h('span.version-author', { text: authorLine(v.author) }),
          h('span.version-panels', { text: `${v.panels} panel${v.panels === 1 ? '' : 's'}` }))))));
  }

  async function revert(id, v) {
    try {
      await api.post(`/api/dashboards/${enc(id)}/revert`, { version: v });
      changed();
      toast(`Restored version ${v}`);
    } catch (e) {
      toast(`Restore failed: ${e.message}`);
    }
  }

  // ---- wiring -----------------------------------------------------------------------------
  bus.on('dashboard:opened', ({ dashboardId }) => {
    openId = dashboardId ?? null;
    highlight();
    loadVersions();
    // Opened something the list does not show yet (e.g. the agent just created it): reload.
    if (openId && !items.some((d) => d.id === openId)) load().then(highlight);
  });
  bus.on('dashboard:access', ({ dashboardId, canEdit }) => {
    if (editable.get(dashboardId) === canEdit) return;
    editable.set(dashboardId, canEdit);
    renderItems();
    highlight();
    if (versions?.id === dashboardId) renderVersions();
  });
  session.then((s) => {
    viewer = readsOnly(s);
    newBtn.hidden = viewer;
    importBtn.hidden = viewer;
    reportsBtn.hidden = viewer || !s?.user;
    if (viewer) {
      renderItems();
      highlight();
      renderVersions();
    }
  });
  bus.on('dashboards:changed', () => {
    // Several writes in a row (or a patch storm) cost one reload.
    clearTimeout(reloadTimer);
    reloadTimer = setTimeout(() => {
      load().then(highlight);
      loadVersions();
    }, 150);
  });

  const ready = load();
  return { ready };
}
