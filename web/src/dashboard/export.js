// Dashboards leaving the screen and coming back (issue 41):
// - Export JSON (the view's title row, for anyone who may see the dashboard): `GET
//   /api/dashboards/{id}/export`, the export document `{format: "boardsmith.dashboard",
//   formatVersion, exportedAt, source, state}`, saved as `<title>.boardsmith.json`;
// - Import (the list, for who may create dashboards): a chosen file's document sent as it is to
//   `POST /api/dashboards/import` (201: the new dashboard's record); the server judges it, and a
//   400's message is what the person reads;
// - Download CSV (each panel's header): `GET /api/dashboards/{id}/panels/{panelId}/csv`, saved
//   under the name the server gives (Content-Disposition); 503 while the panel has no data, its
//   envelope's `msg` saying why.
// The pure pieces (file names, which panels) are unit-tested in node; the rest needs a browser.

const enc = encodeURIComponent;

/**
 * Panel types whose data is rows or series, so a CSV of it makes sense: every type the app
 * draws (tables, series, candles, slices, cards, feeds). An unknown type gets no button.
 */
const DATA_TYPES = new Set(['candlestick', 'line', 'area', 'bar', 'heatmap', 'pie', 'radar', 'scatter', 'table', 'feed', 'metric_card']);

/** Whether a panel of `type` offers "Download CSV". */
export function csvOffered(type) {
  return DATA_TYPES.has(type);
}

/** The CSV route of a panel. */
export function csvPath(dashboardId, panelId) {
  return `/api/dashboards/${enc(dashboardId)}/panels/${enc(panelId)}/csv`;
}

/**
 * The export file's name: the dashboard's title made safe for any file system (no path
 * separators, reserved or control characters; at most 100 characters), then `.boardsmith.json`.
 */
export function exportFileName(title) {
  const safe = String(title ?? '')
    // eslint-disable-next-line no-control-regex
    .replace(/[\\/:*?"<>|\u0000-\u001f\u007f]+/g, '-')
    .replace(/\s+/g, ' ')
    .replace(/-{2,}/g, '-')
    .trim()
    .replace(/^[.\s-]+|[.\s-]+$/g, '')
    .slice(0, 100)
    .trim();
  return `${safe || 'dashboard'}.boardsmith.json`;
}

/** The file name a Content-Disposition header gives (`filename*=UTF-8''…` first), else `fallback`. */
export function fileNameFromDisposition(header, fallback) {
  if (typeof header === 'string') {
    const star = header.match(/filename\*\s*=\s*(?:UTF-8|utf-8)''([^;]+)/);
    if (star) {
      try {
        return decodeURIComponent(star[1].trim());
      } catch {
        /* not percent-encoded: the plain name below */
      }
    }
    const plain = header.match(/filename\s*=\s*"([^"]*)"/) ?? header.match(/filename\s*=\s*([^;]+)/);
    if (plain && plain[1].trim()) return plain[1].trim();
  }
  return fallback;
}

/** The document in an import file's text; not JSON is refused here with the file's name. */
export function readImport(text, name = 'the file') {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`${name} is not a JSON file: ${e.message}`);
  }
}

/** Saves `blob` as a download named `name`. */
export function saveFile(blob, name) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 30_000);
}

/** Downloads the dashboard's export document; resolves with `{doc, name}`. */
export async function exportDashboard(api, dashboardId) {
  const doc = await api.get(`/api/dashboards/${enc(dashboardId)}/export`);
  const name = exportFileName(doc?.state?.title);
  saveFile(new Blob([`${JSON.stringify(doc, null, 2)}\n`], { type: 'application/json' }), name);
  return { doc, name };
}

/** Imports a chosen file (a File): resolves with the new dashboard's record. */
export async function importFile(api, file) {
  const doc = readImport(await file.text(), `“${file.name}”`);
  return api.post('/api/dashboards/import', doc);
}

/**
 * Downloads a panel's data as CSV; resolves with the file's name. A refusal (503: no data yet,
 * 404, 403) rejects with the envelope's message and `status`.
 */
export async function downloadCsv(dashboardId, panelId) {
  let res;
  try {
    res = await fetch(csvPath(dashboardId, panelId));
  } catch (e) {
    throw Object.assign(new Error(`server unreachable: ${e.message}`), { status: 0 });
  }
  if (!res.ok) {
    let msg = '';
    try {
      msg = (await res.json())?.msg ?? '';
    } catch {
      /* not the envelope */
    }
    throw Object.assign(new Error(msg || `HTTP ${res.status}`), { status: res.status });
  }
  const name = fileNameFromDisposition(res.headers.get('content-disposition'), `${panelId}.csv`);
  saveFile(await res.blob(), name);
  return name;
}
