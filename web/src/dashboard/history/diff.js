// What changed between two dashboard states, in words for people, and the lines of a unified
// code diff: pure functions behind the compare view and the draft review (components.js draws
// them). Input is the server's: `changes` (dashboard::diff ChangeEntry: {type, panel_id?, detail})
// and `code` ({panelId: unified diff text}) of `GET /api/dashboards/{id}/diff` or of a draft.

/** Panel fields (a `modified_panel` entry's first detail line) → the tag people read. */
const FIELD_TAG = {
  title: 'retitled',
  layout: 'resized',
  code: 'code changed',
  type: 'reconfigured',
  renderer: 'reconfigured',
  config: 'reconfigured',
  indicators: 'reconfigured',
  dataSource: 'reconfigured',
  refresh: 'reconfigured',
};

const DASHBOARD_LABEL = {
  title_changed: 'Title changed',
  layout_changed: 'Grid changed',
  refresh_changed: 'Refresh changed',
  variables_changed: 'Variables changed',
  alerts_changed: 'Alert rules changed',
};

const panelOf = (state, id) => (state?.panels ?? []).find((p) => p?.id === id) ?? null;

/** The panels of both states whose place among the panels kept in both changed. */
export function movedPanels(oldState, newState) {
  const oldIds = (oldState?.panels ?? []).map((p) => p.id);
  const newIds = (newState?.panels ?? []).map((p) => p.id);
  const keptOld = oldIds.filter((id) => newIds.includes(id));
  const keptNew = newIds.filter((id) => oldIds.includes(id));
  if (keptOld.join('\n') === keptNew.join('\n')) return [];
  // The fewest panels that moved: those outside a longest common subsequence of the two orders.
  const n = keptOld.length;
  const lcs = Array.from({ length: n + 1 }, () => new Array(n + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = n - 1; j >= 0; j--) {
      lcs[i][j] = keptOld[i] === keptNew[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const stay = new Set();
  for (let i = 0, j = 0; i < n && j < n;) {
    if (keptOld[i] === keptNew[j]) { stay.add(keptOld[i]); i++; j++; } else if (lcs[i + 1][j] >= lcs[i][j + 1]) i++; else j++;
  }
  return keptNew.filter((id) => !stay.has(id));
}

/**
 * The change list as rows: one per panel (added, removed, or changed with tags such as
 * 'retitled', 'resized', 'moved', 'code changed', 'reconfigured') and one per dashboard-level
 * change. `oldState`/`newState` (optional) name panels by title and tell a resize's sizes and
 * which panels moved. Row: {key, kind: 'added'|'removed'|'changed'|'dashboard', panelId?, title,
 * tags: string[], detail}.
 */
export function changeRows(changes, oldState = null, newState = null) {
  const rows = [];
  const byPanel = new Map();
  const panelRow = (id, kind) => {
    let row = byPanel.get(id);
    if (!row) {
      const p = panelOf(newState, id) ?? panelOf(oldState, id);
      row = { key: `panel:${id}`, kind, panelId: id, title: p?.title ?? id, tags: [], detail: '' };
      byPanel.set(id, row);
      rows.push(row);
    }
    return row;
  };
  const addTag = (row, tag) => { if (!row.tags.includes(tag)) row.tags.push(tag); };
  for (const c0 of Array.isArray(changes) ? changes : []) {
    if (!c0 || typeof c0 !== 'object') continue;
    // The server's ChangeEntry names the panel `panel_id`; either spelling is read.
    const c = { ...c0, panelId: c0.panelId ?? c0.panel_id };
    const detail = typeof c.detail === 'string' ? c.detail : '';
    const first = detail.split('\n')[0];
    switch (c.type) {
      case 'added_panel':
      case 'removed_panel': {
        const row = panelRow(c.panelId, c.type === 'added_panel' ? 'added' : 'removed');
        row.kind = c.type === 'added_panel' ? 'added' : 'removed';
        addTag(row, row.kind);
        row.detail = first;
        break;
      }
      case 'modified_panel': {
        const row = panelRow(c.panelId, 'changed');
        const fields = first.split(',').map((f) => f.trim()).filter(Boolean);
        for (const f of fields) addTag(row, FIELD_TAG[f] ?? 'reconfigured');
        const parts = [];
        const o = panelOf(oldState, c.panelId);
        const n = panelOf(newState, c.panelId);
        if (fields.includes('title') && o && n) parts.push(`“${o.title}” → “${n.title}”`);
        if (fields.includes('layout') && o && n) parts.push(`size ${size(o)} → ${size(n)}`);
        if (fields.includes('type') && o && n) parts.push(`type ${o.type} → ${n.type}`);
        row.detail = parts.join(' · ') || fields.join(', ');
        break;
      }
      case 'reordered': {
        const moved = oldState && newState ? movedPanels(oldState, newState) : [];
        if (!moved.length) {
          rows.push({ key: 'dashboard:reordered', kind: 'dashboard', title: 'Panels reordered', tags: ['moved'], detail: first });
        }
        for (const id of moved) {
          const row = panelRow(id, 'changed');
          addTag(row, 'moved');
        }
        break;
      }
      default:
        rows.push({
          key: `dashboard:${c.type}`, kind: 'dashboard', title: DASHBOARD_LABEL[c.type] ?? String(c.type ?? 'Changed'),
          tags: [], detail: first,
        });
    }
  }
  return rows;
}

function size(p) {
  const l = p?.layout;
  return l ? `${l.w ?? '?'}×${l.h ?? '?'}` : 'default';
}

/**
 * A unified diff as lines to draw: {kind: 'file'|'hunk'|'add'|'del'|'ctx', text, oldNo?, newNo?}.
 * `text` is the line without its +/-/space marker; `---`/`+++` headers are 'file' lines.
 */
export function diffLines(unified) {
  const out = [];
  if (typeof unified !== 'string' || !unified) return out;
  let oldNo = 0;
  let newNo = 0;
  const lines = unified.split('\n');
  if (lines.at(-1) === '') lines.pop();
  for (const line of lines) {
    const hunk = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (hunk) {
      oldNo = Number(hunk[1]);
      newNo = Number(hunk[2]);
      out.push({ kind: 'hunk', text: line });
    } else if (line.startsWith('--- ') || line.startsWith('+++ ')) {
      out.push({ kind: 'file', text: line });
    } else if (line.startsWith('+')) {
      out.push({ kind: 'add', text: line.slice(1), newNo: newNo++ });
    } else if (line.startsWith('-')) {
      out.push({ kind: 'del', text: line.slice(1), oldNo: oldNo++ });
    } else if (line.startsWith('\\')) {
      out.push({ kind: 'hunk', text: line });
    } else {
      out.push({ kind: 'ctx', text: line.startsWith(' ') ? line.slice(1) : line, oldNo: oldNo++, newNo: newNo++ });
    }
  }
  return out;
}

/** Lines added and removed in a unified diff. */
export function diffStat(unified) {
  let add = 0;
  let del = 0;
  for (const l of diffLines(unified)) {
    if (l.kind === 'add') add++;
    else if (l.kind === 'del') del++;
  }
  return { add, del };
}
