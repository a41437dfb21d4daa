// The dashboard's layout as a flow (pure): panels in array order, each spanning `layout.w`
// columns (1..=columns, 1 when unset) and `layout.h` rows (1..=12, 3 when unset) of a CSS grid
// that places them the way CSS grid's sparse auto-placement does. The Arrange mode shows the same
// flow on gridstack's grid (mode 'list' flows items the same way); what gridstack ends with maps
// back to the schema as the order of the cards sorted by (y, x) and their w/h. Also the keyboard
// steps: move a panel earlier/later, make it wider/narrower/taller/shorter.

export const MAX_ROWS = 12;
const DEFAULT_W = 1;
const DEFAULT_H = 3;

/** A panel's effective span on a grid of `columns` (what the view draws). */
export function spanOf(panel, columns) {
  const cols = Math.max(1, columns | 0);
  const w = Math.min(cols, Math.max(1, Math.round(panel.layout?.w ?? DEFAULT_W)));
  const h = Math.min(MAX_ROWS, Math.max(1, Math.round(panel.layout?.h ?? DEFAULT_H)));
  return { w, h };
}

/**
 * Where CSS grid puts `panels` (in order) on `columns` columns: [{id, x, y, w, h}]. Each item is
 * placed at the first free cell at or after the end of the previous one, row-major.
 */
export function place(panels, columns) {
  const cols = Math.max(1, columns | 0);
  const taken = new Set();
  const free = (x, y, w, h) => {
    for (let r = y; r < y + h; r++) for (let c = x; c < x + w; c++) if (taken.has(r * cols + c)) return false;
    return true;
  };
  let cursor = 0; // row-major cell index where the next search starts
  return panels.map((p) => {
    const { w, h } = spanOf(p, cols);
    let i = cursor;
    for (;; i++) {
      const x = i % cols;
      const y = Math.floor(i / cols);
      if (x + w <= cols && free(x, y, w, h)) break;
    }
    const x = i % cols;
    const y = Math.floor(i / cols);
    for (let r = y; r < y + h; r++) for (let c = x; c < x + w; c++) taken.add(r * cols + c);
    cursor = y * cols + x + w;
    return { id: p.id, x, y, w, h };
  });
}

/** The panel with span {w, h}, keeping the panel as it was when the span does not change. */
function withSpan(panel, { w, h }, columns) {
  const now = spanOf(panel, columns);
  if (now.w === w && now.h === h) return panel;
  return { ...panel, layout: { w, h } };
}

/**
 * The state after an arrangement on the grid: `nodes` [{id, x, y, w, h}] (gridstack's result)
 * give the panels' order, sorted by (y, x), and spans. Panels missing from `nodes` keep their
 * relative place at the end. Returns the same object when nothing changed.
 */
export function arrange(state, nodes) {
  const columns = state.layout?.columns ?? 1;
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const known = [...nodes].filter((n) => state.panels.some((p) => p.id === n.id))
    .sort((a, b) => a.y - b.y || a.x - b.x);
  const order = [
    ...known.map((n) => state.panels.find((p) => p.id === n.id)),
    ...state.panels.filter((p) => !byId.has(p.id)),
  ];
  const panels = order.map((p) => {
    const n = byId.get(p.id);
    if (!n) return p;
    const w = Math.min(Math.max(1, columns), Math.max(1, Math.round(n.w)));
    const h = Math.min(MAX_ROWS, Math.max(1, Math.round(n.h)));
    return withSpan(p, { w, h }, columns);
  });
  const same = panels.length === state.panels.length && panels.every((p, i) => p === state.panels[i]);
  return same ? state : { ...state, panels };
}

/** The state with panel `id` moved `delta` places (clamped); the same object if it cannot move. */
export function moveBy(state, id, delta) {
  const from = state.panels.findIndex((p) => p.id === id);
  if (from < 0) return state;
  const to = Math.min(state.panels.length - 1, Math.max(0, from + delta));
  if (to === from) return state;
  const panels = [...state.panels];
  const [p] = panels.splice(from, 1);
  panels.splice(to, 0, p);
  return { ...state, panels };
}

/** The state with panel `id`'s span grown by (dw, dh) within 1..columns and 1..12. */
export function resizeBy(state, id, dw, dh) {
  const columns = state.layout?.columns ?? 1;
  const i = state.panels.findIndex((p) => p.id === id);
  if (i < 0) return state;
  const now = spanOf(state.panels[i], columns);
  const w = Math.min(Math.max(1, columns), Math.max(1, now.w + dw));
  const h = Math.min(MAX_ROWS, Math.max(1, now.h + dh));
  const next = withSpan(state.panels[i], { w, h }, columns);
  if (next === state.panels[i]) return state;
  const panels = [...state.panels];
  panels[i] = next;
  return { ...state, panels };
}
