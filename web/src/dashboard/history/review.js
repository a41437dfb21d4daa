// Review mode: the agent's edits to a dashboard wait as a draft for the analyst whose chat made
// them, and are published only when accepted. This module owns, on the open dashboard:
// - the "Review agent edits" toggle in the view's header (editors only; `GET/PUT
//   /api/dashboards/{id}/review`);
// - the banner "The agent has a draft: N changes — Review" when the caller has a draft
//   (`GET /api/dashboards/{id}/draft`, 404 = none; asked only while review mode is on), asked
//   again on opening the dashboard, on
//   'draft:changed' (the chat: a tool result that wrote a draft, a run that ended) and after
//   each accept or reject;
// - 'draft:review' {dashboardId} (the chat's Review on a tool result that made a draft) opens
//   that dashboard and its review sheet;
// - the review sheet (sheet.js): the changes, each changed panel's code diff and test result,
//   Accept / Reject per panel and Accept all / Reject all (`POST …/draft/accept|reject` with
//   `{panels?}`), and the draft drawn read-only with data (components.js PanelGrid).
// It mounts into the view's DOM from outside (view.js knows nothing of it): the toggle goes in
// `.dash-title-row` before the Share button, the banner after `.dash-header`.
//
// Test hooks: .review-toggle[aria-pressed] (absent unless the person may change the dashboard
// and the server has review mode); .review-banner[data-count] (absent without a draft) with
// .review-open; .history-sheet[data-kind=review] .review-sheet[data-base-version]
// [data-published-version] with .draft-accept-all, .draft-reject-all, .sheet-close,
// .changes > .change[data-panel-id] with .draft-test[data-ok] and .draft-accept-panel /
// .draft-reject-panel, .code-diff, .readonly-grid > .panel.
import { html } from 'htm/preact';
import { render } from 'preact';
import { useState } from 'preact/hooks';
import { ChangesList, CodeDiffs, PanelGrid, VersionMeta } from './components.js';
import { changeRows } from './diff.js';
import { changesLabel, draftCount, draftPanels, testResult } from './draft.js';

const enc = encodeURIComponent;

function ReviewSheet({ draft, onAccept, onReject, onClose, api }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const act = (fn, panels) => async () => {
    setBusy(true);
    setError('');
    try {
      await fn(panels);
    } catch (e) {
      setError(e.message);
    } finally {
      setBusy(false);
    }
  };
  const rows = changeRows(draft.changes, draft.base ?? null, draft.state);
  const tests = draft.tests ?? {};
  const extra = (row) => {
    if (!row.panelId) return null;
    const t = testResult(tests[row.panelId]);
    return html`<div class="draft-row-foot">
      ${t ? html`<span class="draft-test" data-ok=${String(t.ok)}>${t.text}</span>` : null}
      <span class="draft-row-actions">
        <button type="button" class="draft-accept-panel" disabled=${busy} title="Publish only this panel’s change" onClick=${act(onAccept, [row.panelId])}>Accept</button>
        <button type="button" class="draft-reject-panel" disabled=${busy} title="Drop this panel’s change from the draft" onClick=${act(onReject, [row.panelId])}>Reject</button>
      </span>
    </div>`;
  };
  const stale = Number.isFinite(draft.publishedVersion) && Number.isFinite(draft.baseVersion) && draft.publishedVersion !== draft.baseVersion;
  return html`<div class="review-sheet" data-base-version=${draft.baseVersion} data-published-version=${draft.publishedVersion}>
    <header class="sheet-head">
      <div class="sheet-head-main">
        <h2 class="review-sheet-title">The agent’s draft — ${changesLabel(draftCount(draft))}</h2>
        <${VersionMeta} info=${{ author: draft.author, createdAt: draft.updatedAt ?? draft.createdAt, note: `based on v${draft.baseVersion}` }} />
      </div>
      <div class="sheet-actions">
        <button type="button" class="primary draft-accept-all" disabled=${busy} onClick=${act(onAccept, null)}>Accept all</button>
        <button type="button" class="draft-reject-all" disabled=${busy} onClick=${act(onReject, null)}>Reject all</button>
        <button type="button" class="sheet-close" onClick=${onClose}>Close</button>
      </div>
    </header>
    ${stale ? html`<p class="review-stale" role="note">The published dashboard has changed since the agent started this draft (now v${draft.publishedVersion}); accepting puts the draft’s panels over it.</p>` : null}
    ${error ? html`<p class="sheet-error" role="alert">${error}</p>` : null}
    <div class="compare-body">
      <section class="compare-changes">
        <h3>Changes</h3>
        <${ChangesList} rows=${rows} extra=${extra} empty="The draft is the same as the published dashboard." />
      </section>
      <section class="compare-code">
        <h3>Code</h3>
        ${Object.keys(draft.code ?? {}).length ? html`<${CodeDiffs} code=${draft.code} state=${draft.state} />` : html`<p class="muted">No panel’s code changed.</p>`}
      </section>
    </div>
    <h3 class="review-preview-title">The dashboard with the draft: ${draft.state?.title ?? ''}</h3>
    <${PanelGrid} api=${api} state=${draft.state} highlight=${new Set(draftPanels(draft))} />
  </div>`;
}

function ReviewBar({ draft, onOpen }) {
  const n = draftCount(draft);
  if (!draft) return null;
  return html`<div class="review-banner dash-banner" data-count=${n} role="status">
    <span class="review-banner-text">The agent has a draft: ${changesLabel(n)}</span>
    <button type="button" class="primary review-open" onClick=${onOpen}>Review</button>
  </div>`;
}

function ReviewToggle({ enabled, busy, error, onToggle }) {
  return html`${error ? html`<span class="review-toggle-error" role="alert">${error}</span>` : null}<button type="button" class="review-toggle" aria-pressed=${String(!!enabled)} disabled=${busy}
    title=${enabled ? 'The agent’s edits wait as a draft for you to accept. Click to let them publish at once.' : 'Have the agent’s edits wait as a draft for you to review before anyone else sees them'}
    aria-label="Review agent edits" onClick=${onToggle}><span class="review-toggle-box" aria-hidden="true"></span>Review<span class="review-toggle-more"> agent edits</span></button>`;
}

/** Mounts review mode on the dashboard view (`viewEl`, the `.dashboard-view`). */
export function createReview({ sheet, viewEl, api, bus }) {
  const toggleHost = document.createElement('span');
  toggleHost.className = 'review-toggle-host';
  const bannerHost = document.createElement('div');
  bannerHost.className = 'review-banner-host';
  const titleRow = viewEl.querySelector('.dash-title-row');
  titleRow?.insertBefore(toggleHost, titleRow.querySelector('.share-open') ?? null);
  viewEl.querySelector('.dash-header')?.after(bannerHost);

  let dashboardId = null;
  let canEdit = false;
  let enabled = null; // null: unknown or the server has no review mode
  let busy = false;
  let toggleError = '';
  let draft = null;
  let seq = 0;
  let reviewWanted = null; // a dashboard whose review sheet opens once its draft is loaded
  let chatReview = false; // some chat of this person is in review mode ('chats:review')

  function paint() {
    render(canEdit && enabled !== null && dashboardId
      ? html`<${ReviewToggle} enabled=${enabled} busy=${busy} error=${toggleError} onToggle=${toggle} />` : null, toggleHost);
    render(html`<${ReviewBar} draft=${draft} onOpen=${openSheet} />`, bannerHost);
    if (sheet.kind() === 'review') {
      if (draft) openSheet();
      else sheet.close();
    }
  }

  function openSheet() {
    if (!draft) return;
    sheet.open('review', html`<${ReviewSheet} api=${api} draft=${draft} onAccept=${accept} onReject=${reject} onClose=${() => sheet.close()} />`);
  }

  async function loadReview(id) {
    try {
      const r = await api.get(`/api/dashboards/${enc(id)}/review`);
      if (id === dashboardId) enabled = !!r?.enabled;
    } catch {
      if (id === dashboardId) enabled = null;
    }
    paint();
  }

  async function loadDraft(force = false) {
    const id = dashboardId;
    const mine = ++seq;
    if (!id) return;
    // Drafts are made in review mode only (the dashboard's, or a chat's: `chatReview`); not
    // asking otherwise spares a 404 (no draft) per open. A draft shown when review mode goes off
    // is asked about again: it may still be there. `force`: the chat says a draft was made.
    if (enabled !== true && !chatReview && !draft && !force && reviewWanted !== id) return;
    let d = null;
    try {
      d = await api.get(`/api/dashboards/${enc(id)}/draft`);
    } catch {
      d = null; // 404: no draft (or no review mode on this server)
    }
    if (mine !== seq || id !== dashboardId) return;
    draft = d && draftCount(d) > 0 ? d : null;
    paint();
    if (reviewWanted === id) {
      reviewWanted = null;
      openSheet();
    }
  }

  async function toggle() {
    const id = dashboardId;
    busy = true;
    toggleError = '';
    paint();
    try {
      const r = await api.put(`/api/dashboards/${enc(id)}/review`, { enabled: !enabled });
      if (id === dashboardId) enabled = !!r?.enabled;
      loadDraft();
    } catch (e) {
      toggleError = `Could not switch review mode: ${e.message}`;
    } finally {
      busy = false;
      paint();
    }
  }

  async function accept(panels) {
    const id = dashboardId;
    const r = await api.post(`/api/dashboards/${enc(id)}/draft/accept`, panels ? { panels } : {});
    if (id !== dashboardId) return;
    draft = r?.draft && draftCount(r.draft) > 0 ? r.draft : null;
    bus.emit('dashboards:changed', {});
    paint();
  }

  async function reject(panels) {
    const id = dashboardId;
    const r = await api.post(`/api/dashboards/${enc(id)}/draft/reject`, panels ? { panels } : {});
    if (id !== dashboardId) return;
    draft = r?.draft && draftCount(r.draft) > 0 ? r.draft : null;
    paint();
  }

  bus.on('dashboard:opened', ({ dashboardId: id }) => {
    if (id === dashboardId) {
      loadDraft();
      return;
    }
    if (sheet.kind() === 'review') sheet.close();
    dashboardId = id ?? null;
    toggleError = '';
    canEdit = false;
    enabled = null;
    draft = null;
    paint();
  });
  // Review mode is asked once the view knows the person may change the dashboard: only they
  // switch it, and only their chats' agent makes drafts.
  bus.on('dashboard:access', ({ dashboardId: id, canEdit: may }) => {
    if (id !== dashboardId) return;
    const was = canEdit;
    canEdit = !!may;
    paint();
    if (canEdit && !was) loadReview(id).then(loadDraft);
  });
  bus.on('draft:changed', ({ dashboardId: id = null, drafted = false } = {}) => loadDraft(drafted && (!id || id === dashboardId)));
  bus.on('chats:review', ({ any }) => {
    const was = chatReview;
    chatReview = !!any;
    if (chatReview && !was && canEdit) loadDraft();
  });
  // The chat's "Review" on a tool result that made a draft: that dashboard, its draft shown.
  bus.on('draft:review', ({ dashboardId: id }) => {
    const target = id || dashboardId;
    if (!target) return;
    reviewWanted = target;
    if (target !== dashboardId) bus.emit('dashboard:open', { dashboardId: target });
    else loadDraft(true);
  });

  return { reload: loadDraft, openSheet, current: () => draft };
}
