// Dashboards leaving the screen and coming back (issue 41):
// - Export JSON (the view's title row, for anyone who may see the dashboard): `GET
//   /api/dashboards/{id}/export`, the export document `{format: "boardsmith.dashboard",
//   formatVersion, exportedAt, source, state}`, saved as `<title>.boardsmith.json`;
// - Download PDF / Download PNG (the title row too, download.js draws the buttons): `GET
//   /api/dashboards/{id}/render?format=pdf|png`, the dashboard rendered by the server's
//   headless Chromium (seconds), saved under the name the server gives (Content-Disposition);
//   a refusal (503: no Chromium, or another render running) rejects with the envelope's `msg`.
//   `GET /api/renderer` ({available, reason?}) says beforehand whether the server can;
// - Import (the list, for who may create dashboards): a chosen file's document sent as it is to
//   `POST /api/dashboards/import` (201: the new dashboard's record); the server judges it, and a
//   400's message is what the person reads;
// - Download CSV (each panel's header): `GET /api/dashboards/{id}/panels/{panelId}/csv`, saved
//   under the name the server gives (Content-Disposition); 503 while the panel has no data, its
//   envelope's `msg` saying why.
// The pure pieces (file names, paths, which panels) are unit-tested in node; the rest needs a
// browser.

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

/** The formats the server renders a dashboard in (`format` is also the file's extension). */
export const RENDER_FORMATS = [
  { format: 'pdf', label: 'PDF' },
  { format: 'png', label: 'PNG' },
];

/** The render route of a dashboard in `format` (`pdf` or `png`). */
export function renderPath(dashboardId, format) {
  return `/api/dashboards/${enc(dashboardId)}/render?format=${enc(format)}`;
}

/**
 * A dashboard's title made safe for any file system (no path separators, reserved or control
 * characters; at most 100 characters); '' when nothing is left.
 */
export function safeTitle(title) {
  return String(title ?? '')
    // eslint-disable-next-line no-control-regex
    .replace(/[\\/:*?"<>|\u0000-\u001f\u007f]+/g, '-')
    .replace(/\s+/g, ' ')
    .replace(/-{2,}/g, '-')
    .trim()
    .replace(/^[.\s-]+|[.\s-]+$/g, '')
    .slice(0, 100)
    .trim();
}

/** The export file's name: the safe title (else `dashboard`), then `.boardsmith.json`. */
export function exportFileName(title) {
  return `${safeTitle(title) || 'dashboard'}.boardsmith.json`;
}

/** A rendered file's name when the server gives none: the safe title and the format. */
export function renderFileName(title, format) {
  return `${safeTitle(title) || 'dashboard'}.${format}`;
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
 * GETs `path` and saves the answer as a download named as the server says (Content-Disposition,
 * else `fallback`); resolves with the file's name and size. A refusal rejects with the
 * envelope's message and `status` (0: the server could not be reached).
 */
async function downloadFile(path, fallback) {
  let res;
  try {
    res = await fetch(path);
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
  const name = fileNameFromDisposition(res.headers.get('content-disposition'), fallback);
  const blob = await res.blob();
  saveFile(blob, name);
  return { name, size: blob.size };
}

/**
 * Downloads a panel's data as CSV; resolves with the file's name. A refusal (503: no data yet,
 * 404, 403) rejects with the envelope's message and `status`.
 */
export async function downloadCsv(dashboardId, panelId) {
  return (await downloadFile(csvPath(dashboardId, panelId), `${panelId}.csv`)).name;
}

/**
 * Downloads the dashboard rendered as `format` (`pdf` or `png`); resolves with `{name, size}`.
 * A refusal (503: no Chromium, or busy; 502: the render failed) rejects with the server's
 * message and `status`.
 */
export async function downloadRender(dashboardId, format, title) {
  return downloadFile(renderPath(dashboardId, format), renderFileName(title, format));
}
