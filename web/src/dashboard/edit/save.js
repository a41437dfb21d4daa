// Saving an edited state (`PUT /api/dashboards/{id}` {baseVersion, state, note}) and what came of it,
// as one of four outcomes the editing screens act on (pure but for the injected `api`):
//   saved    {version, record}        the new version
//   conflict {actual, message}        409: baseVersion is no longer current (someone saved
//                                     meanwhile); the screen asks Reload or Overwrite
//   invalid  {issues, message}        400/422: the server's validator refused it, each issue
//                                     naming a path such as `panels[2].renderer`
//   error    {status, message}        anything else (offline, forbidden, too large)
// `overwrite` is the conflict's "Overwrite": the same state saved on the version now current.
// `noteOf` words an edit for the version history ("Renamed panel “A” to “B”", "Layout
// changed", …): one line of at most NOTE_MAX characters, as the server takes it.

export async function saveState(api, dashboardId, baseVersion, state, note = null) {
  const body = { baseVersion, state };
  const n = oneLine(note ?? '', NOTE_MAX);
  if (n) body.note = n;
  try {
    const record = await api.put(`/api/dashboards/${encodeURIComponent(dashboardId)}`, body);
    return { kind: 'saved', version: record.version, record };
  } catch (e) {
    return outcomeOf(e);
  }
}

/** The outcome a failed save's ApiError stands for. */
export function outcomeOf(e) {
  const message = e?.message ?? String(e);
  if (e?.status === 409) {
    const actual = Number.isFinite(e.data?.actual) ? e.data.actual : null;
    return { kind: 'conflict', actual, message };
  }
  if (e?.status === 400 || e?.status === 422) {
    return { kind: 'invalid', issues: issuesOf(e.data, message), message };
  }
  return { kind: 'error', status: e?.status ?? 0, message };
}

/** [{path, message}] from an invalid save's data (or the message alone). */
export function issuesOf(data, message = '') {
  const list = Array.isArray(data?.issues) ? data.issues : [];
  const issues = list.map((i) => (Array.isArray(i)
    ? { path: String(i[0] ?? '$'), message: String(i[1] ?? '') }
    : { path: String(i?.path ?? '$'), message: String(i?.message ?? '') }));
  return issues.length ? issues : [{ path: '$', message }];
}

/**
 * Overwrite after a conflict: `state` saved on the version now current, which is read first
 * (`GET /api/dashboards/{id}`) so the outcome also says what was overwritten (`before`, for
 * Undo). A further conflict (yet another save in between) comes back as such.
 */
export async function overwrite(api, dashboardId, state, note = null) {
  let current;
  try {
    current = await api.get(`/api/dashboards/${encodeURIComponent(dashboardId)}`);
  } catch (e) {
    return outcomeOf(e);
  }
  const out = await saveState(api, dashboardId, current.version, state, note);
  return { ...out, before: current.state };
}

/** One line for an outcome that is not `saved`, for a status line or an alert. */
export function describe(outcome) {
  switch (outcome.kind) {
    case 'conflict':
      return 'This dashboard changed meanwhile.';
    case 'invalid':
      return `Not saved: ${outcome.issues.map((i) => (i.path && i.path !== '$' ? `${i.path}: ${i.message}` : i.message)).join('; ')}`;
    case 'error':
      return outcome.status === 403
        ? 'Not saved: you may not change this dashboard.'
        : `Not saved: ${outcome.message}`;
    default:
      return '';
  }
}

/** The most characters a version's note may have (the server refuses more). */
export const NOTE_MAX = 200;

/** `text` on one line (control characters become spaces), at most `max` characters (…). */
function oneLine(text, max) {
  const chars = [...String(text).replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').replace(/\s+/g, ' ').trim()];
  return chars.length <= max ? chars.join('') : `${chars.slice(0, max - 1).join('').trimEnd()}…`;
}

const quoted = (title) => `“${oneLine(title ?? '', 60)}”`;

/** The first panel (by id) whose definition differs between two states: {before, after}. */
function changedPanel(before, after) {
  const old = new Map((before?.panels ?? []).map((p) => [p.id, p]));
  for (const p of after?.panels ?? []) {
    const q = old.get(p.id);
    if (q && JSON.stringify(q) !== JSON.stringify(p)) return { before: q, after: p };
  }
  return null;
}

/**
 * The version note for an edit of kind `what` (the editing layer's labels: 'rename', 'layout
 * change', 'panel edit', 'variables edit') from state `before` to `after`; null for a label it
 * does not know (the server then says "edited").
 */
export function noteOf(what, before, after) {
  let note = null;
  switch (what) {
    case 'rename': {
      if (before?.title !== after?.title) {
        note = `Renamed the dashboard to ${quoted(after?.title)}`;
        break;
      }
      const p = changedPanel(before, after);
      note = p ? `Renamed panel ${quoted(p.before.title)} to ${quoted(p.after.title)}` : 'Renamed';
      break;
    }
    case 'layout change':
      note = 'Layout changed';
      break;
    case 'panel edit': {
      const p = changedPanel(before, after);
      note = p ? `Edited panel ${quoted(p.after.title)}` : 'Edited a panel';
      break;
    }
    case 'variables edit':
      note = 'Variables edited';
      break;
    default:
      return null;
  }
  return oneLine(note, NOTE_MAX);
}

/** The note of an Undo or Redo (`dir`) of a step labelled `label`: "Undo (layout change)". */
export function stepNote(dir, label) {
  return oneLine(`${dir === 'undo' ? 'Undo' : 'Redo'}${label ? ` (${label})` : ''}`, NOTE_MAX);
}
