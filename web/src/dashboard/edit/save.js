// Saving an edited state (`PUT /api/dashboards/{id}` {baseVersion, state}) and what came of it,
// as one of four outcomes the editing screens act on (pure but for the injected `api`):
//   saved    {version, record}        the new version
//   conflict {actual, message}        409: baseVersion is no longer current (someone saved
//                                     meanwhile); the screen asks Reload or Overwrite
//   invalid  {issues, message}        400/422: the server's validator refused it, each issue
//                                     naming a path such as `panels[2].renderer`
//   error    {status, message}        anything else (offline, forbidden, too large)
// `overwrite` is the conflict's "Overwrite": the same state saved on the version now current.

export async function saveState(api, dashboardId, baseVersion, state) {
  try {
    const record = await api.put(`/api/dashboards/${encodeURIComponent(dashboardId)}`, { baseVersion, state });
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
export async function overwrite(api, dashboardId, state) {
  let current;
  try {
    current = await api.get(`/api/dashboards/${encodeURIComponent(dashboardId)}`);
  } catch (e) {
    return outcomeOf(e);
  }
  const out = await saveState(api, dashboardId, current.version, state);
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
