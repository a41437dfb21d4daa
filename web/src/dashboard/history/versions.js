// Reading a dashboard's history (asked for by the list's version rows, list.js): "Open" shows one
// version read-only, drawn with data, with who made it and its note, Restore (when the person may
// change the dashboard) and Close; "Compare" shows two versions side by side: each one's title,
// author and note, the list of changes and each changed panel's code as a line diff
// (`GET /api/dashboards/{id}/diff?from=&to=`).
//
// Bus: 'version:open' {dashboardId, version, canRestore} and 'version:compare' {dashboardId, from,
// to, canRestore} open the sheet; opening another dashboard closes it.
//
// Test hooks: .history-sheet[data-kind=version] .version-sheet[data-version] with
// .version-sheet-title ("Version N — read-only"), .version-dash-title (that version's dashboard
// title), .version-meta-line, .version-sheet-restore, .version-sheet-compare, .sheet-close;
// .history-sheet[data-kind=compare] .compare-sheet[data-from][data-to][data-loaded] with
// select.compare-from / select.compare-to, .compare-side[data-side=from|to] (.compare-side-title,
// .version-meta-line), .changes (components.js) and .code-diff.
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { ChangesList, CodeDiffs, PanelGrid, VersionMeta } from './components.js';
import { changeRows } from './diff.js';

const enc = encodeURIComponent;
const panelsLabel = (n) => `${n} panel${n === 1 ? '' : 's'}`;

/** The dashboard's versions, newest first (null while loading). */
function useVersions(api, dashboardId) {
  const [rows, setRows] = useState(null);
  useEffect(() => {
    let alive = true;
    api.get(`/api/dashboards/${enc(dashboardId)}/versions`)
      .then((r) => alive && setRows([...r].sort((a, b) => b.version - a.version)))
      .catch(() => alive && setRows([]));
    return () => { alive = false; };
  }, [dashboardId]);
  return rows;
}

/** One version's record ({state, …}), or {error}. */
function useVersion(api, dashboardId, version) {
  const [rec, setRec] = useState(null);
  useEffect(() => {
    let alive = true;
    setRec(null);
    api.get(`/api/dashboards/${enc(dashboardId)}/versions/${version}`)
      .then((r) => alive && setRec(r))
      .catch((e) => alive && setRec({ error: e.message }));
    return () => { alive = false; };
  }, [dashboardId, version]);
  return rec;
}

function VersionSheet({ api, dashboardId, version, canRestore, onRestore, onCompare, onClose }) {
  const versions = useVersions(api, dashboardId);
  const rec = useVersion(api, dashboardId, version);
  const info = versions?.find((v) => v.version === version) ?? null;
  const latest = versions?.[0]?.version ?? null;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const restore = async () => {
    setBusy(true);
    setError('');
    try {
      await onRestore(version);
    } catch (e) {
      setError(`Restore failed: ${e.message}`);
      setBusy(false);
    }
  };
  return html`<div class="version-sheet" data-version=${version} data-loaded=${rec?.state ? 'true' : null}>
    <header class="sheet-head">
      <div class="sheet-head-main">
        <h2 class="version-sheet-title">Version ${version} — read-only</h2>
        <${VersionMeta} info=${info} />
      </div>
      <div class="sheet-actions">
        ${latest !== null && latest !== version
          ? html`<button type="button" class="version-sheet-compare" onClick=${() => onCompare(version, latest)}>Compare with current (v${latest})</button>`
          : null}
        ${canRestore && latest !== null && latest !== version
          ? html`<button type="button" class="primary version-sheet-restore" disabled=${busy} onClick=${restore}>Restore this version</button>`
          : null}
        ${latest === version ? html`<span class="version-current">current</span>` : null}
        <button type="button" class="sheet-close" onClick=${onClose}>Close</button>
      </div>
    </header>
    ${error ? html`<p class="sheet-error" role="alert">${error}</p>` : null}
    ${rec?.error ? html`<p class="sheet-error" role="alert">Could not load version ${version}: ${rec.error}</p>` : null}
    ${!rec ? html`<p class="muted">Loading version ${version}…</p>` : null}
    ${rec?.state ? html`<h3 class="version-dash-title">${rec.state.title}</h3>
      <${PanelGrid} api=${api} state=${rec.state} dashboardId=${dashboardId} version=${version} />` : null}
  </div>`;
}

function CompareSide({ side, version, info, rec }) {
  return html`<div class="compare-side" data-side=${side} data-version=${version}>
    <div class="compare-side-label">${side === 'from' ? 'Before' : 'After'} · v${version}</div>
    <div class="compare-side-title">${rec?.state?.title ?? '…'}</div>
    <${VersionMeta} info=${info} />
    ${rec?.state ? html`<div class="compare-side-panels muted">${panelsLabel(rec.state.panels?.length ?? 0)}</div>` : null}
  </div>`;
}

function CompareSheet({ api, dashboardId, from: from0, to: to0, onOpen, onClose }) {
  const versions = useVersions(api, dashboardId);
  const [pair, setPair] = useState([Math.min(from0, to0), Math.max(from0, to0)]);
  const [from, to] = pair;
  const a = useVersion(api, dashboardId, from);
  const b = useVersion(api, dashboardId, to);
  const [diff, setDiff] = useState(null);
  useEffect(() => {
    let alive = true;
    setDiff(null);
    api.get(`/api/dashboards/${enc(dashboardId)}/diff?from=${from}&to=${to}`)
      .then((d) => alive && setDiff(d))
      .catch((e) => alive && setDiff({ error: e.message }));
    return () => { alive = false; };
  }, [dashboardId, from, to]);
  const info = (v) => versions?.find((x) => x.version === v) ?? null;
  const loaded = diff && !diff.error && a?.state && b?.state;
  const rows = loaded ? changeRows(diff.changes, a.state, b.state) : [];
  const pick = (which) => (e) => {
    const v = Number(e.currentTarget.value);
    setPair(which === 'from' ? [v, to] : [from, v]);
  };
  const options = (selected) => (versions ?? [{ version: selected }]).map((v) => html`<option value=${String(v.version)}>v${v.version}${v.note ? ` · ${v.note}` : ''}</option>`);
  return html`<div class="compare-sheet" data-from=${from} data-to=${to} data-loaded=${loaded ? 'true' : null}>
    <header class="sheet-head">
      <div class="sheet-head-main">
        <h2 class="compare-sheet-title">Compare versions</h2>
        <div class="compare-pick">
          <label>From <select class="compare-from" aria-label="Compare from version" value=${String(from)} onChange=${pick('from')}>${options(from)}</select></label>
          <label>to <select class="compare-to" aria-label="Compare to version" value=${String(to)} onChange=${pick('to')}>${options(to)}</select></label>
        </div>
      </div>
      <div class="sheet-actions">
        <button type="button" class="compare-open-from" onClick=${() => onOpen(from)}>Open v${from}</button>
        <button type="button" class="compare-open-to" onClick=${() => onOpen(to)}>Open v${to}</button>
        <button type="button" class="sheet-close" onClick=${onClose}>Close</button>
      </div>
    </header>
    <div class="compare-sides">
      <${CompareSide} side="from" version=${from} info=${info(from)} rec=${a} />
      <span class="compare-arrow" aria-hidden="true">→</span>
      <${CompareSide} side="to" version=${to} info=${info(to)} rec=${b} />
    </div>
    ${diff?.error ? html`<p class="sheet-error" role="alert">Could not compare: ${diff.error}</p>` : null}
    ${!loaded && !diff?.error ? html`<p class="muted">Comparing…</p>` : null}
    ${loaded ? html`<div class="compare-body">
      <section class="compare-changes">
        <h3>Changes</h3>
        <${ChangesList} rows=${rows} empty=${from === to ? 'The same version.' : 'These versions are the same.'} />
      </section>
      <section class="compare-code">
        <h3>Code</h3>
        ${Object.keys(diff.code ?? {}).length
          ? html`<${CodeDiffs} code=${diff.code} state=${b.state} />`
          : html`<p class="muted">No panel’s code changed.</p>`}
      </section>
    </div>` : null}
  </div>`;
}

/** Wires the version sheets to the bus. `sheet` is sheet.js's. */
export function createVersionSheets({ sheet, api, bus }) {
  let shown = null; // dashboardId of the sheet shown

  const restore = (dashboardId) => async (version) => {
    await api.post(`/api/dashboards/${enc(dashboardId)}/revert`, { version });
    bus.emit('dashboards:changed', {});
    sheet.close();
  };

  function openVersion({ dashboardId, version, canRestore = false }) {
    shown = dashboardId;
    sheet.open('version', html`<${VersionSheet} key=${`${dashboardId}:${version}`} api=${api} dashboardId=${dashboardId}
      version=${Number(version)} canRestore=${canRestore} onRestore=${restore(dashboardId)}
      onCompare=${(from, to) => openCompare({ dashboardId, from, to, canRestore })} onClose=${() => sheet.close()} />`,
    () => { shown = null; });
  }

  function openCompare({ dashboardId, from, to, canRestore = false }) {
    shown = dashboardId;
    sheet.open('compare', html`<${CompareSheet} key=${`${dashboardId}:${from}:${to}`} api=${api} dashboardId=${dashboardId}
      from=${Number(from)} to=${Number(to)} onOpen=${(version) => openVersion({ dashboardId, version, canRestore })}
      onClose=${() => sheet.close()} />`,
    () => { shown = null; });
  }

  bus.on('version:open', openVersion);
  bus.on('version:compare', openCompare);
  bus.on('dashboard:opened', ({ dashboardId }) => {
    if (shown && dashboardId !== shown && sheet.kind() !== 'review') sheet.close();
  });
  return { openVersion, openCompare };
}
