// The Preact components the version history and the draft review share: who made a version and
// why (VersionMeta), the list of changes (ChangesList), a panel's code as a line diff (CodeDiff,
// text nodes only, never HTML), and a dashboard state drawn read-only with data (PanelGrid, drawn
// by panel.js's createPanel): a saved version's data comes from `GET /api/dashboards/{id}/
// versions/{v}/data` (read access: viewers see it too), a draft's (only editors have drafts)
// from running each panel's code through `POST /api/panels/preview`.
//
// Test hooks: .version-meta-line (.version-author, .version-note); .changes > .change[data-kind]
// [data-panel-id] with .change-title, .change-tag[data-tag] and .change-detail; .code-diff
// [data-panel-id] > .diff-line[data-kind=add|del|ctx|hunk|file]; .readonly-grid[data-state-key]
// > .panel (see panel.js), .readonly-grid-note.
import { html } from 'htm/preact';
import { useEffect, useRef } from 'preact/hooks';
import { authorLine } from '../author.js';
import { createPanel } from '../panel.js';
import { themeColors } from '../../theme.js';
import { absoluteTime, relativeTime } from '../../time.js';
import { diffLines, diffStat } from './diff.js';

/** Who saved a version, when and why: one line. `info` is a row of GET …/versions. */
export function VersionMeta({ info }) {
  if (!info) return null;
  const author = authorLine(info.author);
  return html`<div class="version-meta-line">
    ${author ? html`<span class="version-author">${author}</span>` : null}
    ${Number.isFinite(info.createdAt) ? html`<span class="version-when" title=${absoluteTime(info.createdAt)}>${relativeTime(info.createdAt)}</span>` : null}
    ${info.note ? html`<span class="version-note" title=${info.note}>${info.note}</span>` : null}
  </div>`;
}

/**
 * The changes as rows (diff.js changeRows). `extra(row)` adds per-row content (the review's test
 * result and Accept/Reject).
 */
export function ChangesList({ rows, extra = null, empty = 'No changes.' }) {
  if (!rows?.length) return html`<p class="changes-empty muted">${empty}</p>`;
  return html`<ul class="changes">
    ${rows.map((r) => html`<li key=${r.key} class="change" data-kind=${r.kind} data-panel-id=${r.panelId ?? null}>
      <div class="change-line">
        <span class="change-title">${r.title}</span>
        ${r.panelId && r.title !== r.panelId ? html`<code class="change-id">${r.panelId}</code>` : null}
        ${r.tags.map((t) => html`<span class="change-tag" data-tag=${t}>${t}</span>`)}
      </div>
      ${r.detail ? html`<div class="change-detail">${r.detail}</div>` : null}
      ${extra ? extra(r) : null}
    </li>`)}
  </ul>`;
}

/** One panel's code change as +/- coloured lines with old and new line numbers. */
export function CodeDiff({ panelId, title, text }) {
  const lines = diffLines(text);
  const { add, del } = diffStat(text);
  return html`<section class="code-diff" data-panel-id=${panelId}>
    <header class="code-diff-head">
      <span class="code-diff-title">${title ?? panelId}</span>
      <span class="code-diff-stat"><span class="diff-add-count">+${add}</span> <span class="diff-del-count">−${del}</span></span>
    </header>
    <pre class="code-diff-body">${lines.map((l, i) => html`<div key=${i} class="diff-line" data-kind=${l.kind}><span class="diff-no" aria-hidden="true">${l.oldNo ?? ''}</span><span class="diff-no" aria-hidden="true">${l.newNo ?? ''}</span><span class="diff-mark" aria-hidden="true">${l.kind === 'add' ? '+' : l.kind === 'del' ? '−' : ' '}</span><span class="diff-text">${l.text}</span></div>`)}</pre>
  </section>`;
}

/** Every panel's code diff of `code` ({panelId: text}), titled from `state`. */
export function CodeDiffs({ code, state }) {
  const entries = Object.entries(code ?? {}).filter(([, t]) => typeof t === 'string' && t);
  if (!entries.length) return null;
  const titleOf = (id) => (state?.panels ?? []).find((p) => p.id === id)?.title ?? id;
  return html`<div class="code-diffs">
    ${entries.map(([id, text]) => html`<${CodeDiff} key=${id} panelId=${id} title=${titleOf(id)} text=${text} />`)}
  </div>`;
}

// ---- read-only panels with data -------------------------------------------------------------

/** Previews run at once per page: one (the server runs few at once, BOARDSMITH_MAX_PREVIEWS, half its workers, and answers more with 429). */
const PREVIEWS_AT_ONCE = 1;
let running = 0;
const waiting = [];
async function previewSlot(fn) {
  if (running >= PREVIEWS_AT_ONCE) await new Promise((r) => waiting.push(r));
  running++;
  try {
    return await fn();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

/** Runs one panel's code; a busy server (429) is asked again a few times. */
async function preview(api, code, vars) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await previewSlot(() => api.post('/api/panels/preview', { code, vars }));
    } catch (e) {
      if (e.status !== 429 || attempt >= 4) throw e;
      await new Promise((r) => setTimeout(r, 400 * (attempt + 1)));
    }
  }
}

/** The variables' default values of a state. */
export function defaultVars(state) {
  const vars = {};
  for (const v of state?.variables ?? []) if (v?.name) vars[v.name] = v.default ?? null;
  return vars;
}

/**
 * A result slot of `GET …/data` or `…/versions/{v}/data` (`{status, data?, error?, provenance?,
 * refreshedAt?, stale?}`) drawn on panel `p` as `seq`.
 */
export function applySlot(p, slot, seq) {
  if (slot?.status === 'ok' || slot?.status === 'stale') p.applyData(slot.data, seq, slot.refreshedAt, slot);
  else if (slot?.status === 'error') p.applyError(slot.error ?? { kind: 'error', message: 'The run failed' }, seq);
  else if (slot) p.setLoading();
  else p.applyError({ kind: 'error', message: 'The server sent no result for this panel.' }, seq);
}

/**
 * A dashboard state's panels, read-only, each with data (the variables at their defaults): with
 * `dashboardId` and `version`, that saved version's results from the server (one request for all
 * panels); else each panel's code run through the preview (a draft). `highlight` (a Set of
 * panel ids) marks changed panels.
 */
export function PanelGrid({ api, state, highlight = null, dashboardId = null, version = null }) {
  const gridRef = useRef(null);
  const key = JSON.stringify(state ?? null);
  useEffect(() => {
    const grid = gridRef.current;
    if (!grid || !state) return undefined;
    let alive = true;
    const colors = themeColors();
    const vars = defaultVars(state);
    const cols = Math.max(1, Math.min(12, state.layout?.columns ?? 1));
    grid.style.setProperty('--cols', String(cols));
    grid.style.setProperty('--gap', `${state.layout?.gap ?? 12}px`);
    grid.style.setProperty('--row', '80px');
    const panels = [];
    let seq = 0;
    const saved = dashboardId && Number.isInteger(version);
    let fetching = null; // the version's results, one request for every panel waiting on it
    const versionData = () => {
      if (!fetching) {
        fetching = api.get(`/api/dashboards/${encodeURIComponent(dashboardId)}/versions/${version}/data`);
        fetching.finally(() => { fetching = null; }).catch(() => {});
      }
      return fetching;
    };
    const load = async (p, def) => {
      p.setLoading();
      const mine = ++seq;
      try {
        const out = await versionData();
        if (!alive) return;
        applySlot(p, out?.panels?.[def.id], mine);
      } catch (e) {
        if (!alive) return;
        p.applyError({ kind: 'error', message: `Could not load this version's data: ${e.message}` }, mine);
      }
    };
    const run = async (p, def) => {
      p.setLoading();
      const mine = ++seq;
      try {
        const out = await preview(api, def.code ?? '', vars);
        if (!alive) return;
        if (out?.status === 'ok') p.applyData(out.data, mine, Date.now(), { rowCount: out.rowCount, durationMs: out.durationMs, provenance: out.provenance });
        else p.applyError(out?.error ?? { kind: 'error', message: 'The preview failed' }, mine);
      } catch (e) {
        if (!alive) return;
        const message = e.status === 403
          ? 'Your role may not run panel code, so this version is shown without data.'
          : `Could not run this panel: ${e.message}`;
        p.applyError({ kind: 'preview', message }, mine);
      }
    };
    for (const def of state.panels ?? []) {
      let p;
      try {
        p = createPanel(def, { onRefresh: () => (saved ? load : run)(p, def), onChange: () => {}, colors });
      } catch {
        continue;
      }
      const w = Math.min(cols, Math.max(1, def.layout?.w ?? 1));
      p.el.style.setProperty('--w', String(w));
      p.el.style.setProperty('--h', String(Math.max(1, def.layout?.h ?? 3)));
      p.el.classList.add('readonly-panel');
      p.el.classList.toggle('is-changed', !!highlight?.has(def.id));
      grid.append(p.el);
      panels.push(p);
      (saved ? load : run)(p, def);
    }
    // The theme switched (theme.js sets <html data-theme>): the charts take its colours.
    const themed = new MutationObserver(() => {
      const next = themeColors();
      for (const p of panels) p.theme(next);
    });
    themed.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
    return () => {
      alive = false;
      themed.disconnect();
      for (const p of panels) p.destroy();
      grid.replaceChildren();
    };
    // The state's JSON is the key: a new state draws anew.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key, highlight ? [...highlight].join(',') : '', dashboardId, version]);
  if (!state) return null;
  return html`<div class="readonly-dashboard">
    ${state.panels?.length ? null : html`<p class="readonly-grid-note muted">No panels in this version.</p>`}
    ${state.variables?.length ? html`<p class="readonly-grid-note muted">Shown with the variables at their default values: ${state.variables.map((v) => `${v.label ?? v.name} = ${String(v.default ?? '')}`).join(', ')}.</p>` : null}
    <div class="dashboard-grid readonly-grid" ref=${gridRef}></div>
  </div>`;
}
