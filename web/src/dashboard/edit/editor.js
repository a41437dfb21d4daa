// The panel editor: a dialog to change one panel — title, type (its renderer follows, types.js),
// code in CodeMirror (code.js), and under "More" its config, indicators and data source as JSON.
// The code is test-run through `POST /api/panels/preview` with the dashboard's current variable
// values: on opening, after a pause in typing, and with Run (or Mod-Enter); the result is drawn
// by the panel's own renderer (panel.js) beside the code, and a failure is shown at its line.
// Nothing is saved until Save: Save test-runs code that has not been run yet and refuses code
// that does not parse; what the server refuses is listed by field. The parent (index.js) saves
// and closes the dialog once saved.
//
// CodeMirror (code.js) is loaded on first use (a dynamic import, a chunk of its own), so the
// page's first load does not carry it; until it is there the code pane says so
// (.editor-code-loading) and test runs use the panel's saved code.
//
// Test hooks: dialog.panel-editor[data-panel-id] with input[name=title], select[name=type],
// .editor-renderer, .editor-code .cm-editor, textarea[name=config|indicators|dataSource],
// .editor-run, .editor-save, .editor-cancel, .editor-message; .editor-preview[data-status=
// idle|running|ok|error] > .panel (panel.js) and .editor-preview-error[data-line][data-kind].
import { html, useState, useEffect, useRef, Dialog } from './ui.js';
import { PANEL_TYPES, RENDERER_LABEL, withType } from './types.js';
import { createPanel } from '../panel.js';
import { themeColors } from '../../theme.js';

const PREVIEW_PAUSE_MS = 700;

let codeModule = null;
/** code.js (CodeMirror), fetched once. */
function loadCodeEditor() {
  if (!codeModule) codeModule = import('./code.js').catch((e) => { codeModule = null; throw e; });
  return codeModule;
}

/** Pretty JSON for a textarea ('' for nothing). */
const jsonText = (v) => (v === undefined || v === null ? '' : JSON.stringify(v, null, 2));

/** Parses a textarea: {value} (undefined when empty) or {error}. */
function parseJson(text, want) {
  if (!text.trim()) return { value: undefined };
  try {
    const value = JSON.parse(text);
    if (want === 'object' && (typeof value !== 'object' || value === null || Array.isArray(value))) return { error: 'Expected a JSON object, e.g. {"logScale": true}.' };
    if (want === 'array' && !Array.isArray(value)) return { error: 'Expected a JSON array, e.g. ["MA(20)"].' };
    return { value };
  } catch (e) {
    return { error: `Not JSON: ${e.message}` };
  }
}

/** Runs panel code once; a busy server (429) is asked again shortly. */
async function runPreview(api, code, vars) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await api.post('/api/panels/preview', { code, vars });
    } catch (e) {
      if (e.status === 429 && attempt < 4) {
        await new Promise((r) => setTimeout(r, 400 * (attempt + 1)));
        continue;
      }
      return { status: 'error', error: { kind: 'preview', message: e.message } };
    }
  }
}

export function PanelEditor({ panel, api, vars, completion, onSave, onClose }) {
  const [title, setTitle] = useState(panel.title ?? '');
  const [type, setType] = useState(panel.type);
  const [config, setConfig] = useState(jsonText(panel.config));
  const [indicators, setIndicators] = useState(jsonText(panel.indicators));
  const [dataSource, setDataSource] = useState(jsonText(panel.dataSource));
  const [codeTick, setCodeTick] = useState(0);
  const [preview, setPreview] = useState({ status: 'idle' });
  const [saving, setSaving] = useState(false);
  const [message, setMessage] = useState('');
  const [issues, setIssues] = useState([]);
  const [codeState, setCodeState] = useState('loading'); // loading | ready | failed

  const codeHost = useRef(null);
  const code = useRef(null); // createCodeEditor's handle
  const previewHost = useRef(null);
  const previewPanel = useRef(null);
  const token = useRef(0);
  const seq = useRef(0);
  const last = useRef({ status: 'idle' }); // the newest finished run: {status, code, data?, error?}

  const parsed = {
    config: parseJson(config, 'object'),
    indicators: parseJson(indicators, 'array'),
    dataSource: parseJson(dataSource, 'object'),
  };
  const previewDef = () => {
    const def = withType({ ...panel, title: title || panel.title }, type);
    if (!parsed.config.error) def.config = parsed.config.value;
    return def;
  };

  async function run() {
    const mine = ++token.current;
    const text = code.current?.value() ?? panel.code;
    setPreview({ status: 'running' });
    const out = await runPreview(api, text, vars);
    if (mine !== token.current) return last.current.code === text ? last.current : { status: 'stale' };
    const result = { status: out?.status === 'ok' ? 'ok' : 'error', code: text, data: out?.data, error: out?.error, rowCount: out?.rowCount, durationMs: out?.durationMs };
    last.current = result;
    setPreview(result);
    code.current?.setError(result.status === 'error' ? result.error ?? { message: 'failed' } : null);
    const p = previewPanel.current;
    if (p) {
      seq.current += 1;
      if (result.status === 'ok') p.applyData(out.data, seq.current, Date.now(), { rowCount: out.rowCount, durationMs: out.durationMs, provenance: out.provenance });
      else p.applyError(result.error ?? { kind: 'error', message: 'failed' }, seq.current);
    }
    return result;
  }

  // The code editor and the preview panel live as long as the dialog.
  useEffect(() => {
    let gone = false;
    loadCodeEditor().then(({ createCodeEditor }) => {
      if (gone) return;
      code.current = createCodeEditor(codeHost.current, {
        doc: panel.code ?? '',
        context: completion,
        onChange: () => setCodeTick((n) => n + 1),
        onRun: () => run(),
      });
      const r = last.current;
      if (r.status === 'error' && r.code === code.current.value()) code.current.setError(r.error ?? { message: 'failed' });
      setCodeState('ready');
    }, () => { if (!gone) setCodeState('failed'); });
    previewPanel.current = createPanel(previewDef(), { onRefresh: () => run(), onChange: () => {}, colors: themeColors() });
    previewHost.current.append(previewPanel.current.el);
    run();
    return () => {
      gone = true;
      token.current += 1;
      code.current?.destroy();
      previewPanel.current?.destroy();
    };
  }, []);

  // A pause in typing test-runs the code again.
  useEffect(() => {
    if (!codeTick) return undefined;
    const t = setTimeout(run, PREVIEW_PAUSE_MS);
    return () => clearTimeout(t);
  }, [codeTick]);

  // Another type or config: the preview panel redraws with it (its renderer may change).
  useEffect(() => {
    const p = previewPanel.current;
    if (!p) return;
    const def = previewDef();
    if (p.defJson !== JSON.stringify(def)) {
      p.setDef(def);
      if (last.current.status === 'ok') {
        seq.current += 1;
        p.applyData(last.current.data, seq.current, Date.now(), {});
      }
    }
  }, [type, config, title]);

  const jsonError = parsed.config.error || parsed.indicators.error || parsed.dataSource.error;

  async function save(e) {
    e?.preventDefault();
    if (saving) return;
    setIssues([]);
    setMessage('');
    if (!title.trim()) {
      setMessage('Give the panel a title.');
      return;
    }
    if (jsonError) {
      setMessage('Fix the JSON under More first.');
      return;
    }
    if (!code.current) {
      setMessage(codeState === 'failed' ? 'The code editor did not load; reload the page to edit.' : 'The code editor is still loading.');
      return;
    }
    const text = code.current.value();
    let result = last.current;
    for (let i = 0; i < 3 && (result.code !== text || result.status === 'stale'); i++) result = await run();
    if (result.status === 'error' && result.error?.kind === 'syntax') {
      const where = Number.isInteger(result.error.line) ? ` on line ${result.error.line}` : '';
      setMessage(`Not saved: the code does not parse${where}. Fix it, then save.`);
      return;
    }
    const next = withType({ ...panel, title: title.trim(), code: text }, type);
    for (const [key, p] of Object.entries(parsed)) {
      if (p.value === undefined) delete next[key];
      else next[key] = p.value;
    }
    setSaving(true);
    const out = await onSave(next);
    setSaving(false);
    if (!out || out.kind === 'saved') return;
    if (out.kind === 'invalid') setIssues(out.issues);
    else if (out.kind !== 'conflict') setMessage(out.message ?? 'Not saved.');
  }

  const renderer = withType(panel, type).renderer;
  const err = preview.status === 'error' ? preview.error ?? {} : null;
  return html`<${Dialog} class="panel-editor" label=${`Edit panel ${panel.title}`} data-panel-id=${panel.id} onClose=${onClose}>
    <form class="editor-form" onSubmit=${save}>
      <header class="editor-head">
        <h2 class="editor-heading">Edit panel</h2>
        <code class="editor-id" title="The panel’s id">${panel.id}</code>
        <span class="dash-spacer"></span>
        <button type="button" class="editor-cancel" onClick=${onClose}>Cancel</button>
        <button type="submit" class="primary editor-save" disabled=${saving}>${saving ? 'Saving…' : 'Save'}</button>
      </header>
      <div class="editor-fields">
        <label class="editor-field editor-title-field">
          <span>Title</span>
          <input name="title" value=${title} maxlength="200" autocomplete="off" onInput=${(e) => setTitle(e.currentTarget.value)} />
        </label>
        <label class="editor-field">
          <span>Type</span>
          <select name="type" value=${type} onChange=${(e) => setType(e.currentTarget.value)}>
            ${PANEL_TYPES.map((t) => html`<option value=${t.type} selected=${t.type === type}>${t.label}</option>`)}
          </select>
        </label>
        <span class="editor-renderer" data-renderer=${renderer} title="Each type has one renderer">drawn by ${RENDERER_LABEL[renderer] ?? renderer}</span>
      </div>
      <div class="editor-body">
        <section class="editor-code-pane">
          <div class="editor-pane-head">
            <span class="editor-pane-title">Code</span>
            <span class="muted editor-hint">${'sdk.<source>.<method>(params), utils.*, vars.* — Ctrl+Space completes, Ctrl+Enter runs'}</span>
            <span class="dash-spacer"></span>
            <button type="button" class="editor-run" onClick=${() => run()} disabled=${preview.status === 'running'}>Run</button>
          </div>
          ${codeState !== 'ready' ? html`<p class="muted editor-code-loading" role="status">${codeState === 'failed' ? 'The code editor did not load; reload the page to try again.' : 'Loading the code editor…'}</p>` : null}
          <div class="editor-code" ref=${codeHost}></div>
          <details class="editor-more">
            <summary>More: config, indicators, data source</summary>
            <label class="editor-field editor-json">
              <span>Config <small class="muted">(renderer options, e.g. {"logScale": true})</small></span>
              <textarea name="config" rows="3" spellcheck="false" value=${config} onInput=${(e) => setConfig(e.currentTarget.value)}></textarea>
              ${parsed.config.error ? html`<small class="editor-json-error" role="alert">${parsed.config.error}</small>` : null}
            </label>
            <label class="editor-field editor-json">
              <span>Indicators <small class="muted">(e.g. ["MA(20)"])</small></span>
              <textarea name="indicators" rows="2" spellcheck="false" value=${indicators} onInput=${(e) => setIndicators(e.currentTarget.value)}></textarea>
              ${parsed.indicators.error ? html`<small class="editor-json-error" role="alert">${parsed.indicators.error}</small>` : null}
            </label>
            <label class="editor-field editor-json">
              <span>Data source <small class="muted">({source, method, params}, informational)</small></span>
              <textarea name="dataSource" rows="3" spellcheck="false" value=${dataSource} onInput=${(e) => setDataSource(e.currentTarget.value)}></textarea>
              ${parsed.dataSource.error ? html`<small class="editor-json-error" role="alert">${parsed.dataSource.error}</small>` : null}
            </label>
          </details>
        </section>
        <section class="editor-preview" data-status=${preview.status} aria-label="Test run">
          <div class="editor-pane-head">
            <span class="editor-pane-title">Test run</span>
            <span class="muted editor-preview-state" role="status">${previewWords(preview)}</span>
          </div>
          ${err ? html`<div class="editor-preview-error" role="alert" data-line=${err.line ?? ''} data-kind=${err.kind ?? ''}>
            <strong>${err.kind ? `${err.kind} error` : 'Error'}${Number.isInteger(err.line) ? ` on line ${err.line}${Number.isInteger(err.column) ? `, column ${err.column}` : ''}` : ''}</strong>
            <pre>${err.message ?? ''}</pre>
          </div>` : null}
          <div class="editor-preview-panel" ref=${previewHost}></div>
        </section>
      </div>
      ${message || issues.length ? html`<div class="editor-message" role="alert">
        ${message}
        ${issues.length ? html`<ul class="editor-issues">${issues.map((i) => html`<li><code>${i.path}</code> ${i.message}</li>`)}</ul>` : null}
      </div>` : null}
    </form>
  <//>`;
}

function previewWords(p) {
  switch (p.status) {
    case 'running': return 'Running…';
    case 'ok': return `OK${Number.isFinite(p.rowCount) ? ` · ${p.rowCount} row${p.rowCount === 1 ? '' : 's'}` : ''}${Number.isFinite(p.durationMs) ? ` · ${Math.round(p.durationMs)} ms` : ''} · not saved`;
    case 'error': return 'Failed · not saved';
    default: return '';
  }
}
