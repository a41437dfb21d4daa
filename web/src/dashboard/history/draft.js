// The agent's draft in review mode (`GET /api/dashboards/{id}/draft`), in words: how many changes,
// which panels it touches, and each panel's test result. Pure; review.js draws them.

/** The number of changes a draft holds (0 for none). */
export function draftCount(draft) {
  return Array.isArray(draft?.changes) ? draft.changes.length : 0;
}

/** "1 change", "3 changes". */
export function changesLabel(n) {
  return `${n} change${n === 1 ? '' : 's'}`;
}

/** The panels a draft adds, removes or changes, in the order of its changes. */
export function draftPanels(draft) {
  const ids = [];
  for (const c of Array.isArray(draft?.changes) ? draft.changes : []) {
    const id = c?.panelId ?? c?.panel_id; // the server's ChangeEntry says `panel_id`
    if (id && !ids.includes(id)) ids.push(id);
  }
  return ids;
}

/**
 * A panel's test run in the draft (`tests[panelId]`: {ok, error?: {kind, message, line?},
 * rowCount?}) as {ok, text}, or null when it was not tested.
 */
export function testResult(test) {
  if (!test || typeof test !== 'object') return null;
  if (test.ok) {
    const rows = Number.isFinite(test.rowCount) ? ` · ${test.rowCount} row${test.rowCount === 1 ? '' : 's'}` : '';
    return { ok: true, text: `Test passed${rows}` };
  }
  const e = test.error && typeof test.error === 'object' ? test.error : {};
  const kind = e.kind ? `${e.kind} error` : 'error';
  const where = e.line != null ? ` on line ${e.line}` : '';
  return { ok: false, text: `Test failed: ${kind}${where}: ${e.message ?? 'unknown error'}` };
}

/** The panels whose test failed, in the draft's order. */
export function failingTests(draft) {
  const tests = draft?.tests && typeof draft.tests === 'object' ? draft.tests : {};
  return Object.keys(tests).filter((id) => tests[id] && !tests[id].ok);
}

/**
 * The dashboard an agent tool result put into the analyst's draft (`draft: true` on an
 * execute/mutate result, an object or its JSON text), or null when the result published or
 * failed. → {dashboardId} (dashboardId may be null when the result does not name it).
 */
export function draftOfResult(result) {
  let r = result;
  if (typeof r === 'string') {
    if (!r.includes('"draft"')) return null;
    try {
      r = JSON.parse(r);
    } catch {
      return null;
    }
  }
  if (!r || typeof r !== 'object' || r.draft !== true) return null;
  const id = r.dashboard_id ?? r.dashboardId;
  return { dashboardId: typeof id === 'string' && id ? id : null };
}
