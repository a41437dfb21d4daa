// The title row's Download PDF and Download PNG (issue 41): one small menu button beside Export
// JSON ("PDF / PNG", its label hidden where the row is short of room, as Export's is), for
// anyone who may see the dashboard (not on a share link's page: the render needs an account).
// Its items render the open dashboard on the server (export.js: `GET .../render?format=`, a few
// seconds) and save the file under the server's name. One render at a time: while one runs the
// button says "Rendering…" and is disabled. A refusal (503 without Chromium, 502 when the render
// failed) shows the server's sentence in a toast. `GET /api/renderer`, asked when the first
// dashboard opens, says whether the server can render at all: if not, the button and its items
// are disabled with its reason as their tooltip (unknown, they stay enabled and a click tells).
//
// view.js mounts it (`createRenderButtons(el, {api, dashboard})`, `dashboard()` → {id, title}
// of the open dashboard) and calls `opened()` when a dashboard opens.
//
// Test hooks: .dash-render-group[data-renderer=unknown|available|unavailable] >
// button.dash-render-toggle[aria-expanded][data-busy=pdf|png] (title: what it does, or why it
// cannot) and, while open, .dash-render-menu > button.dash-render[data-format=pdf|png]
// ("Download PDF", "Download PNG").
import { html } from 'htm/preact';
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { RENDER_FORMATS, downloadRender } from './export.js';
import { toast, toastError } from '../toast.js';

/** A page with a folded corner (Export JSON beside it has the tray), and the menu's caret. */
const PAGE = 'M4 1.5h5.5L12 4v10.5H4zM9.5 1.5V4H12M6 8h4M6 10.5h4';
const CARET = 'M5 6.5l3 3 3-3';

/**
 * What the menu button shows: `renderer` is `GET /api/renderer`'s answer (null: not known),
 * `busy` the format being rendered (null: none).
 */
export function renderToggle({ renderer, busy }) {
  if (renderer && renderer.available === false) {
    return { disabled: true, text: 'PDF / PNG', title: renderer.reason || 'The server cannot make PDF or PNG files' };
  }
  const label = RENDER_FORMATS.find((f) => f.format === busy)?.label;
  if (label) return { disabled: true, text: 'Rendering…', title: `Rendering the dashboard as ${label}…` };
  return {
    disabled: false,
    text: 'PDF / PNG',
    title: 'Download this dashboard as PDF or PNG: the server draws it as it is now (takes a few seconds)',
  };
}

/** The renderer's state for the group's test hook. */
function rendererState(renderer) {
  if (!renderer) return 'unknown';
  return renderer.available ? 'available' : 'unavailable';
}

function Icon({ d }) {
  return html`<svg viewBox="0 0 16 16" width="14" height="14" aria-hidden="true"><path d=${d} fill="none" stroke="currentColor" stroke-width="1.4" stroke-linejoin="round" stroke-linecap="round" /></svg>`;
}

function RenderMenu({ renderer, busy, onDownload }) {
  const [open, setOpen] = useState(false);
  const ref = useRef(null);
  const b = renderToggle({ renderer, busy });
  useEffect(() => {
    if (!open) return undefined;
    ref.current?.querySelector('.dash-render')?.focus();
    const away = (e) => { if (!ref.current?.contains(e.target)) setOpen(false); };
    const esc = (e) => {
      if (e.key !== 'Escape') return;
      e.preventDefault();
      setOpen(false);
      ref.current?.querySelector('.dash-render-toggle')?.focus();
    };
    document.addEventListener('click', away, true);
    document.addEventListener('keydown', esc);
    return () => {
      document.removeEventListener('click', away, true);
      document.removeEventListener('keydown', esc);
    };
  }, [open]);
  const pick = (format, label) => {
    setOpen(false);
    onDownload(format, label);
  };
  return html`<span class="dash-render-group" data-renderer=${rendererState(renderer)} ref=${ref}>
    <button type="button" class="dash-render-toggle" aria-haspopup="menu" aria-expanded=${String(open && !b.disabled)}
      aria-label="Download PDF or PNG" aria-busy=${busy ? 'true' : null} data-busy=${busy || null} title=${b.title}
      disabled=${b.disabled} onClick=${() => setOpen((o) => !o)}>
      <${Icon} d=${PAGE} /><span class="label">${b.text}</span><${Icon} d=${CARET} />
    </button>
    ${open && !b.disabled ? html`<div class="dash-render-menu" role="menu">
      ${RENDER_FORMATS.map(({ format, label }) => html`<button type="button" role="menuitem" class="dash-render" data-format=${format}
        onClick=${() => pick(format, label)}>Download ${label}</button>`)}
    </div>` : null}
  </span>`;
}

export function createRenderButtons(el, { api, dashboard }) {
  let renderer = null;
  let asked = false;
  let busy = null;

  function paint() {
    render(html`<${RenderMenu} renderer=${renderer} busy=${busy} onDownload=${download} />`, el);
  }

  async function download(format, label) {
    const { id, title } = dashboard();
    if (!id || busy) return;
    busy = format;
    paint();
    try {
      const { name } = await downloadRender(id, format, title);
      toast(`Downloaded “${name}”`);
    } catch (e) {
      toastError(`${label} download failed: ${e.message || 'no answer'}`);
    } finally {
      busy = null;
      paint();
    }
  }

  /** A dashboard opened: the first time, ask whether the server can render. */
  async function opened() {
    if (asked) return;
    asked = true;
    try {
      renderer = await api.get('/api/renderer');
    } catch {
      // Unknown (an older server, or unreachable): the menu stays, and a click says why not.
      asked = false;
      return;
    }
    paint();
  }

  paint();
  return { opened };
}
