// Arrange mode's grid: the panels as cards on gridstack's grid (mode 'list', which flows items
// the way the view's CSS grid does: flow.js), to drag (move) and resize with the mouse or touch,
// or move and resize from the keyboard on a focused card: arrow keys move it one place earlier
// or later, Shift+arrows make it narrower/wider (←/→) or shorter/taller (↑/↓). A gesture's end
// reports all cards' {id, x, y, w, h} (`onArrange`), a key its action (`onKey`); the parent
// turns either into one saved version and calls `show` with the new state, which lays the
// cards out again as the dashboard will draw them.
//
// Cards stand in for the live panels while arranging (title, type, span): gridstack owns the
// positions of what it manages, and the charts keep their own grid untouched, so a drag never
// reflows a canvas. This module manages gridstack's DOM itself (not Preact): gridstack moves
// and measures its elements directly.
//
// gridstack's script is loaded when Arrange is first turned on (a dynamic import, a chunk of
// its own; its small stylesheet stays in app.css): until it is there `show` keeps the newest
// state and draws it once loaded, unless `destroy` came first.
//
// Test hooks: .dash-arrange.grid-stack[data-columns] > .grid-stack-item[gs-id] >
// .grid-stack-item-content.arrange-card[data-panel-id][data-w][data-h][data-index] (focusable),
// gridstack's .ui-resizable-se handles.
import 'gridstack/dist/gridstack.min.css';
import { h } from '../../dom.js';
import { place } from './flow.js';
import { PANEL_TYPES } from './types.js';

const KEYS = {
  ArrowLeft: ['earlier', 'narrower'],
  ArrowUp: ['earlier', 'shorter'],
  ArrowRight: ['later', 'wider'],
  ArrowDown: ['later', 'taller'],
};

let gridstack = null;
/** gridstack's module, fetched once. */
function loadGridStack() {
  if (!gridstack) gridstack = import('gridstack').catch((e) => { gridstack = null; throw e; });
  return gridstack;
}

export function createArrange(host, { rowHeight, onArrange, onKey, onLoadError }) {
  let GridStack = null; // the class, once loaded
  let waiting = null; // a state to show once it is
  let grid = null;
  let shownKey = '';
  let building = false;
  let dragging = false;
  let pending = null; // a state that came while dragging

  function layoutKey(state) {
    return JSON.stringify([state.layout?.columns, state.layout?.gap, state.panels.map((p) => [p.id, p.title, p.type, p.layout?.w, p.layout?.h])]);
  }

  function card(p, n, i, total) {
    const type = PANEL_TYPES.find((t) => t.type === p.type)?.label ?? p.type;
    const label = `${p.title}: place ${i + 1} of ${total}, ${n.w} column${n.w === 1 ? '' : 's'} wide, ${n.h} row${n.h === 1 ? '' : 's'} tall. Arrow keys move it, Shift and arrow keys resize it.`;
    const content = h('div.grid-stack-item-content.arrange-card', {
      tabindex: '0', role: 'group', 'aria-roledescription': 'movable panel', 'aria-label': label,
      dataset: { panelId: p.id, w: String(n.w), h: String(n.h), index: String(i) },
      onkeydown: (e) => {
        const k = KEYS[e.key];
        if (!k || e.altKey || e.ctrlKey || e.metaKey) return;
        e.preventDefault();
        onKey(p.id, k[e.shiftKey ? 1 : 0]);
      },
    },
    h('div.arrange-title', { text: p.title }),
    h('div.arrange-meta', null, h('span.panel-type', { text: type }), h('span.arrange-size', { text: `${n.w} × ${n.h}` })),
    h('div.arrange-hint', { text: 'Drag to move · drag an edge to resize' }));
    const item = h('div.grid-stack-item', { 'gs-id': p.id, 'gs-x': String(n.x), 'gs-y': String(n.y), 'gs-w': String(n.w), 'gs-h': String(n.h) }, content);
    return item;
  }

  function build(state) {
    const columns = Math.max(1, Math.min(12, state.layout?.columns ?? 1));
    const gap = state.layout?.gap ?? 12;
    const focused = host.contains(document.activeElement) ? document.activeElement.closest('.arrange-card')?.dataset.panelId : null;
    building = true;
    if (grid) {
      grid.destroy(false); // true would remove the host itself
      grid = null;
    }
    host.replaceChildren();
    host.dataset.columns = String(columns);
    host.style.setProperty('--gap', `${gap}px`);
    const nodes = place(state.panels, columns);
    state.panels.forEach((p, i) => host.append(card(p, nodes[i], i, nodes.length)));
    grid = GridStack.init({
      column: columns,
      cellHeight: rowHeight + gap,
      margin: gap / 2,
      mode: 'list',
      animate: true,
      minRow: 1,
      alwaysShowResizeHandle: true,
      resizable: { handles: 'e,se,s' },
    }, host);
    grid.on('dragstart resizestart', () => { dragging = true; });
    grid.on('dragstop resizestop', () => {
      dragging = false;
      // The engine has settled once the stop handlers ran: report the whole arrangement.
      setTimeout(report, 0);
    });
    building = false;
    shownKey = layoutKey(state);
    if (focused) host.querySelector(`.arrange-card[data-panel-id="${CSS.escape(focused)}"]`)?.focus();
  }

  function report() {
    if (!grid || building) return;
    const nodes = grid.engine.nodes.map((n) => ({ id: n.id ?? n.el?.getAttribute('gs-id'), x: n.x, y: n.y, w: n.w, h: n.h }));
    onArrange(nodes);
    if (pending) {
      const s = pending;
      pending = null;
      show(s);
    }
  }

  /** Shows `state`'s panels (again, if their layout changed). */
  function show(state) {
    if (dragging) {
      pending = state;
      return;
    }
    if (grid && layoutKey(state) === shownKey) return;
    if (!GridStack) {
      const first = !waiting;
      waiting = state;
      if (first) {
        loadGridStack().then((m) => {
          GridStack = m.GridStack;
          const s = waiting;
          waiting = null;
          if (s) build(s);
        }, (e) => {
          waiting = null;
          onLoadError?.(e);
        });
      }
      return;
    }
    build(state);
  }

  return {
    show,
    /** Moves focus to a panel's card. */
    focus(id) {
      host.querySelector(`.arrange-card[data-panel-id="${CSS.escape(id)}"]`)?.focus();
    },
    destroy() {
      waiting = null;
      grid?.destroy(false);
      grid = null;
      shownKey = '';
      host.replaceChildren();
    },
  };
}
