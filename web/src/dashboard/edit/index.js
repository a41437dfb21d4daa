// Direct editing of the open dashboard (issue 40), for people who may change it: the view
// (view.js) makes one with `createEditing` and tells it the dashboard shown (`open`), each new
// state (`update`) and whether this person may edit (`setEditable`); share-link pages make none.
// It owns:
// - renaming in place (title.js): a click on the dashboard's title, a double-click on a
//   panel's; Enter saves, Esc cancels;
// - the panel editor (editor.js) behind each panel's pencil button (.panel-edit);
// - Arrange mode (arrange.js) behind the toolbar's Arrange: the panels as cards on gridstack's
//   grid instead of the live grid, one saved version per gesture or key;
// - the variables form (variables.js);
// - Undo/Redo of this person's own edits here (history.js), buttons and Ctrl+Z /
//   Ctrl+Shift+Z (Ctrl+Y), each step a new version;
// - the toolbar and its status line (toolbar.js), and the 409 dialog (conflict.js).
//
// Saving: every edit is a whole new state PUT on the version it was based on (save.js). Quick
// edits (arranging, keys, undo/redo) are queued and computed from the newest state known when
// their turn comes, so a burst of keys makes one version each, in order. Dialog edits (panel
// editor, variables) and renames are based on the version shown when they began: if anyone
// saved since, the server answers 409 and the conflict dialog offers Reload (drop the edit) or
// Overwrite (save it on the current version). The newest state known is the view's, or our own
// last save's while the WebSocket has not brought it yet.
import { h, icon } from '../../dom.js';
import { html, render } from './ui.js';
import { createHistory } from './history.js';
import { saveState, overwrite, describe, noteOf, stepNote } from './save.js';
import { arrange as arrangeState, moveBy, resizeBy, spanOf } from './flow.js';
import { Toolbar } from './toolbar.js';
import { TitleInput } from './title.js';
import { PanelEditor } from './editor.js';
import { VariablesForm } from './variables.js';
import { ConflictDialog } from './conflict.js';
import { createArrange } from './arrange.js';
import utilsSpec from '../../../../sandbox/utils-spec.json';
import '../edit.css';

const PENCIL = 'M10.5 2.5l3 3-7.5 7.5H3v-3zM9 4l3 3';
const json = (v) => JSON.stringify(v);

let registry = null; // GET /api/sdk/sources, once per page
async function loadRegistry(api) {
  if (!registry) registry = api.get('/api/sdk/sources').catch(() => { registry = null; return { sources: [] }; });
  return registry;
}

/**
 * `root` the .dashboard-view, `titleRow` its .dash-title-row, `titleEl` the dashboard's h1,
 * `grid` the live .dashboard-grid, `vars()` the variable values in effect, `rowHeight` the
 * grid's row in px.
 */
export function createEditing({ root, titleRow, titleEl, grid, api, vars, rowHeight }) {
  const toolbarHost = h('div.dash-edit-toolbar', { hidden: true, role: 'toolbar', 'aria-label': 'Edit dashboard' });
  // A row of its own under the title row (which already holds the live status, Share, …).
  titleRow.after(toolbarHost);
  const layer = h('div.dash-edit-layer');
  root.append(layer);
  const arrangeHost = h('div.dash-arrange', { hidden: true });
  grid.after(arrangeHost);
  const titleHost = h('span.dash-title-edit');
  titleEl.after(titleHost);

  let id = null;
  let server = { state: null, version: 0 }; // what the view shows
  let local = { state: null, version: 0 }; // our last save
  let editable = false;
  let dialog = null; // {kind: 'editor', panelId, base} | {kind: 'vars', base}
  let conflict = null; // {what, actual, state, close}
  let renaming = null; // {target: 'dashboard'} | {target: 'panel', panelId, el}
  let arranging = false;
  let status = { text: '', kind: 'info' };
  let queue = Promise.resolve();
  const history = createHistory();
  const surface = createArrange(arrangeHost, {
    rowHeight,
    onArrange: (nodes) => quick((s) => arrangeState(s, nodes), 'layout change'),
    onKey,
    onLoadError: (e) => say(`Arrange could not load (${e.message}); reload the page to try again.`, 'error'),
  });

  /** The newest state known: the view's, or our own save's until the view has it. */
  const cur = () => (local.state && local.version > server.version ? local : server);

  function say(text, kind = 'info') {
    status = { text, kind };
    paint();
  }

  // ---- saving -----------------------------------------------------------------------------
  function accepted(out, before, next, what) {
    local = { state: next, version: out.version };
    history.record(before, next, out.version, what);
    say(`Saved ${what} as v${out.version}.`, 'ok');
    if (arranging) surface.show(next);
  }

  /** A quick edit: `edit(state)` on the newest state, when the queue gets to it. */
  function quick(edit, what) {
    const dashboardId = id;
    const task = queue.then(async () => {
      const base = cur();
      if (dashboardId !== id || !base.state) return { kind: 'error', message: 'No dashboard open.' };
      const next = edit(base.state);
      if (!next || next === base.state || json(next) === json(base.state)) return { kind: 'unchanged' };
      const out = await saveState(api, id, base.version, next, noteOf(what, base.state, next));
      if (dashboardId !== id) return out;
      if (out.kind === 'saved') accepted(out, base.state, next, what);
      else if (out.kind === 'conflict') {
        say(`Not saved: this dashboard changed meanwhile (now v${out.actual ?? '?'}); your ${what} was dropped.`, 'warn');
        if (arranging) surface.show(cur().state);
      } else {
        say(describe(out), 'error');
        if (arranging) surface.show(cur().state);
      }
      return out;
    });
    queue = task.catch(() => {});
    return task;
  }

  /**
   * An edit based on what was shown when it began (`base` {state, version}): `next` is saved on
   * that version; a 409 opens the conflict dialog and `after()` runs once it is settled
   * (saved, reloaded or dismissed).
   */
  function based(base, next, what, after = () => {}) {
    const dashboardId = id;
    const task = queue.then(async () => {
      if (dashboardId !== id) return { kind: 'error', message: 'Another dashboard is open.' };
      if (json(next) === json(base.state)) {
        after();
        return { kind: 'unchanged' };
      }
      const out = await saveState(api, id, base.version, next, noteOf(what, base.state, next));
      if (dashboardId !== id) return out;
      if (out.kind === 'saved') {
        accepted(out, base.state, next, what);
        after();
      } else if (out.kind === 'conflict') {
        say('This dashboard changed meanwhile — Reload or Overwrite?', 'warn');
        conflict = { what, actual: out.actual, state: next, note: noteOf(what, base.state, next), close: after };
        paint();
      } else {
        say(describe(out), 'error');
      }
      return out;
    });
    queue = task.catch(() => {});
    return task;
  }

  async function overwriteConflict() {
    const c = conflict;
    if (!c) return null;
    const out = await overwrite(api, id, c.state, c.note);
    if (out.kind === 'saved') {
      accepted(out, out.before, c.state, c.what);
      conflict = null;
      c.close();
      paint();
    }
    return out;
  }

  async function reloadConflict() {
    const c = conflict;
    conflict = null;
    c?.close();
    try {
      const rec = await api.get(`/api/dashboards/${encodeURIComponent(id)}`);
      if (rec.version > server.version) server = { state: rec.state, version: rec.version };
      say(`Reloaded: showing v${rec.version}; your ${c?.what ?? 'edit'} was not saved.`, 'info');
    } catch (e) {
      say(`Could not reload: ${e.message}`, 'error');
    }
    if (arranging) surface.show(cur().state);
    paint();
  }

  // ---- undo / redo --------------------------------------------------------------------------
  function step(dir) {
    const dashboardId = id;
    queue = queue.then(async () => {
      if (dashboardId !== id || !editable) return;
      const base = cur();
      const r = dir === 'undo' ? history.undo(base.version) : history.redo(base.version);
      const word = dir === 'undo' ? 'undone' : 'redone';
      if (!r.ok) {
        if (r.reason === 'changed') {
          say(`Not ${word}: this dashboard changed since your last edit here (now v${base.version}); nothing was overwritten.`, 'warn');
        }
        return;
      }
      const out = await saveState(api, id, r.baseVersion, r.state, stepNote(dir, r.label));
      if (dashboardId !== id) return;
      if (out.kind === 'saved') {
        local = { state: r.state, version: out.version };
        if (dir === 'undo') history.undone(out.version);
        else history.redone(out.version);
        say(`${dir === 'undo' ? 'Undid' : 'Redid'} ${r.label}: saved as v${out.version}.`, 'ok');
        if (arranging) surface.show(r.state);
      } else if (out.kind === 'conflict') {
        say(`Not ${word}: this dashboard changed meanwhile (now v${out.actual ?? '?'}); nothing was overwritten.`, 'warn');
      } else {
        say(describe(out), 'error');
      }
    }).catch(() => {});
  }

  function onKeyDown(e) {
    if (!editable || !id || dialog || conflict || renaming || root.dataset.deleted) return;
    if (!(e.ctrlKey || e.metaKey) || e.altKey || !root.isConnected || !root.getClientRects().length) return;
    const t = e.target;
    if (t instanceof Element && t !== document.body && !root.contains(t)) return;
    if (t instanceof Element && t.closest('input, textarea, select, [contenteditable], .cm-editor')) return;
    const k = e.key.toLowerCase();
    if (k === 'z' && !e.shiftKey) step('undo');
    else if ((k === 'z' && e.shiftKey) || k === 'y') step('redo');
    else return;
    e.preventDefault();
  }
  document.addEventListener('keydown', onKeyDown);

  // ---- arranging ------------------------------------------------------------------------------
  function setArranging(on) {
    arranging = on && editable;
    root.toggleAttribute('data-arranging', arranging);
    arrangeHost.hidden = !arranging;
    if (arranging && cur().state) surface.show(cur().state);
    else surface.destroy();
    if (on && arranging) say('Arrange: drag a panel to move it, drag its edge to resize; or focus one and use the arrow keys (Shift to resize).');
    paint();
  }

  async function onKey(panelId, action) {
    const moves = { earlier: [-1], later: [1] };
    const sizes = { narrower: [-1, 0], wider: [1, 0], shorter: [0, -1], taller: [0, 1] };
    const out = await quick((s) => (moves[action] ? moveBy(s, panelId, moves[action][0]) : resizeBy(s, panelId, ...sizes[action])), 'layout change');
    const s = cur().state;
    const i = s?.panels.findIndex((p) => p.id === panelId) ?? -1;
    if (i < 0) return;
    const p = s.panels[i];
    const { w, h: rows } = spanOf(p, s.layout?.columns ?? 1);
    const where = moves[action]
      ? `${p.title} is at place ${i + 1} of ${s.panels.length}`
      : `${p.title} is ${w} column${w === 1 ? '' : 's'} wide and ${rows} row${rows === 1 ? '' : 's'} tall`;
    if (out.kind === 'saved') say(`${where}; saved as v${out.version}.`, 'ok');
    else if (out.kind === 'unchanged') say(`${where}; it cannot go further.`, 'info');
    surface.focus(panelId);
  }

  // ---- renaming -----------------------------------------------------------------------------
  function startRename(target, panelId = null) {
    if (!editable || renaming || !cur().state || root.dataset.deleted) return;
    const base = cur();
    if (target === 'dashboard') {
      renaming = { target, base, el: titleEl, host: titleHost, value: base.state.title };
    } else {
      const panel = base.state.panels.find((p) => p.id === panelId);
      const el = grid.querySelector(`.panel[data-panel-id="${CSS.escape(panelId)}"] .panel-title`);
      if (!panel || !el) return;
      const host = h('span.panel-title-edit');
      el.after(host);
      renaming = { target, panelId, base, el, host, value: panel.title };
    }
    renaming.el.hidden = true;
    paint();
  }

  function endRename() {
    const r = renaming;
    if (!r) return;
    renaming = null;
    render(null, r.host);
    if (r.target === 'panel') r.host.remove();
    r.el.hidden = false;
    paint();
  }

  function commitRename(text) {
    const r = renaming;
    endRename();
    if (!r) return;
    const s = r.base.state;
    const next = r.target === 'dashboard'
      ? { ...s, title: text }
      : { ...s, panels: s.panels.map((p) => (p.id === r.panelId ? { ...p, title: text } : p)) };
    // Shown at once; the view's next state (or a failure) settles it.
    const old = r.el.textContent;
    r.el.textContent = text;
    based(r.base, next, 'rename').then((out) => {
      if (out.kind !== 'saved' && out.kind !== 'unchanged' && r.el.textContent === text) r.el.textContent = old;
    });
  }

  titleEl.addEventListener('click', () => startRename('dashboard'));
  titleEl.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' || e.key === 'F2') {
      e.preventDefault();
      startRename('dashboard');
    }
  });
  grid.addEventListener('dblclick', (e) => {
    const t = e.target instanceof Element ? e.target.closest('.panel-title') : null;
    const panelEl = t?.closest('.panel');
    if (panelEl) startRename('panel', panelEl.dataset.panelId);
  });
  grid.addEventListener('click', (e) => {
    const b = e.target instanceof Element ? e.target.closest('.panel-edit') : null;
    if (b) openEditor(b.closest('.panel')?.dataset.panelId);
  });

  // ---- dialogs -----------------------------------------------------------------------------
  function openEditor(panelId) {
    if (!editable || !panelId || !cur().state) return;
    const base = cur();
    if (!base.state.panels.some((p) => p.id === panelId)) return;
    loadRegistry(api).then((r) => { registryNow = r; });
    dialog = { kind: 'editor', panelId, base };
    paint();
  }
  let registryNow = null;

  function openVars() {
    if (!editable || !cur().state) return;
    dialog = { kind: 'vars', base: cur() };
    paint();
  }

  function closeDialog() {
    dialog = null;
    paint();
  }

  function savePanel(next) {
    const d = dialog;
    const s = d.base.state;
    if (!s.panels.some((p) => p.id === next.id)) return Promise.resolve({ kind: 'error', message: 'This panel is no longer on the dashboard.' });
    const state = { ...s, panels: s.panels.map((p) => (p.id === next.id ? next : p)) };
    return based(d.base, state, 'panel edit', () => { if (dialog === d) closeDialog(); });
  }

  function saveVars(variables) {
    const d = dialog;
    const state = { ...d.base.state, variables };
    if (!variables.length) delete state.variables;
    return based(d.base, state, 'variables edit', () => { if (dialog === d) closeDialog(); });
  }

  const completion = () => ({
    sources: registryNow?.sources ?? [],
    utils: utilsSpec,
    variables: cur().state?.variables ?? [],
  });

  // ---- painting ------------------------------------------------------------------------------
  function paint() {
    toolbarHost.hidden = !editable || !id;
    root.toggleAttribute('data-editable', editable && !!id);
    if (editable && id) {
      titleEl.tabIndex = 0;
      titleEl.title = 'Click to rename';
    } else {
      titleEl.removeAttribute('tabindex');
      titleEl.removeAttribute('title');
    }
    render(editable && id ? html`<${Toolbar}
      arranging=${arranging} canUndo=${history.canUndo} canRedo=${history.canRedo}
      undoLabel=${history.undoLabel} redoLabel=${history.redoLabel} status=${status}
      onArrange=${() => setArranging(!arranging)} onVars=${openVars}
      onUndo=${() => step('undo')} onRedo=${() => step('redo')} />` : null, toolbarHost);
    if (renaming) {
      render(html`<${TitleInput} key=${`${renaming.target}:${renaming.panelId ?? ''}`} value=${renaming.value} target=${renaming.target}
        label=${renaming.target === 'dashboard' ? 'Dashboard title' : 'Panel title'}
        onCommit=${commitRename} onCancel=${endRename} />`, renaming.host);
    }
    const d = dialog;
    const panel = d?.kind === 'editor' ? d.base.state.panels.find((p) => p.id === d.panelId) : null;
    render(html`
      ${panel ? html`<${PanelEditor} key=${`editor:${id}:${panel.id}`} panel=${panel} api=${api} vars=${vars()}
        completion=${completion} onSave=${savePanel} onClose=${closeDialog} />` : null}
      ${d?.kind === 'vars' ? html`<${VariablesForm} key=${`vars:${id}`} variables=${d.base.state.variables ?? []}
        onSave=${saveVars} onClose=${closeDialog} />` : null}
      ${conflict ? html`<${ConflictDialog} key="conflict" what=${conflict.what} actual=${conflict.actual}
        onReload=${reloadConflict} onOverwrite=${overwriteConflict} onClose=${() => { conflict = null; say('Not saved: your edit is still open.', 'warn'); }} />` : null}
    `, layer);
  }

  /** Puts the pencil button in panels' headers that have none yet. */
  function decoratePanels() {
    for (const head of grid.querySelectorAll('.panel > .panel-head')) {
      if (head.querySelector('.panel-edit')) continue;
      const b = h('button.panel-edit', { type: 'button', title: 'Edit this panel: title, type, code' });
      b.append(icon(PENCIL));
      head.insertBefore(b, head.querySelector('.panel-refresh'));
    }
    for (const b of grid.querySelectorAll('.panel-edit')) {
      const title = b.closest('.panel')?.querySelector('.panel-title')?.textContent ?? '';
      b.setAttribute('aria-label', `Edit panel ${title}`);
    }
  }

  function reset() {
    if (renaming) endRename();
    dialog = null;
    conflict = null;
    history.clear();
    local = { state: null, version: 0 };
    server = { state: null, version: 0 };
    status = { text: '', kind: 'info' };
    if (arranging) setArranging(false);
  }

  return {
    /** Another dashboard is shown: nothing of the last one's editing carries over. */
    open(dashboardId) {
      reset();
      id = dashboardId;
      editable = false;
      paint();
    },
    /** The view's new state. */
    update(state, version) {
      if (version >= server.version) server = { state, version };
      decoratePanels();
      if (arranging && !conflict) surface.show(cur().state);
      paint();
    },
    /** Whether this person may change the dashboard (once the access is known). */
    setEditable(on) {
      editable = !!on;
      if (!editable) {
        if (renaming) endRename();
        dialog = null;
        conflict = null;
        if (arranging) setArranging(false);
      }
      paint();
    },
    destroy() {
      document.removeEventListener('keydown', onKeyDown);
      surface.destroy();
      render(null, layer);
      render(null, toolbarHost);
    },
  };
}
