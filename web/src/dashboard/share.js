// The share dialog of the dashboard view: who owns the dashboard, who else may see it (only the
// people listed, or everyone on the team) and the people it is shared with, each to view or to
// edit. "Add person" offers the directory (`GET /api/users`) but the owner and those listed;
// Save sends `PUT /api/dashboards/{id}/access` and the server's refusal is shown in the dialog.
// For someone who may not change it (`canChange` false) the same dialog only reads: no Save,
// and it says who to ask. The rules are access.js's; the server has the last word.
//
// openShareDialog({api, dashboardId, title, access, session, onSaved}) with `access` the answer
// of `GET /api/dashboards/{id}/access` and `session` that of `GET /api/session`; `onSaved(access)`
// gets the server's answer to the PUT.
//
// Test hooks: `.share-dialog[data-open]` (and `[data-readonly]` when it only reads) with
// `.share-owner`, `.share-visibility` (a select: private | team), `.share-row[data-user=<username>]`
// (`[data-user-id]`) with its `.share-role` (view | edit) and `.share-remove`, `.share-add` (a select
// whose values are user ids), `.share-save`, `.share-close` and `.share-error` (role=alert).
import { h } from '../dom.js';
import { userLabel } from '../session.js';
import { SHARE_ROLES, VISIBILITIES, accessBody, candidates, draftOf, ownerLine } from './access.js';

const enc = encodeURIComponent;

export function openShareDialog({ api, dashboardId, title, access, session, onSaved }) {
  const draft = draftOf(access);
  const readonly = !access?.canChange;
  /** @type {Map<string, {id: string, username: string, displayName?: string, role: string}>} */
  let people = new Map();
  let peopleError = '';

  const visibility = h('select.share-visibility', { name: 'visibility', disabled: readonly },
    VISIBILITIES.map((v) => h('option', { value: v.value, text: v.label })));
  visibility.value = draft.visibility;
  const visibilityHint = h('span.share-hint');
  visibility.addEventListener('change', () => {
    draft.visibility = visibility.value;
    paintHint();
  });

  const list = h('ul.share-people', { role: 'list' });
  const add = h('select.share-add', { name: 'add', 'aria-label': 'Add person' });
  add.addEventListener('change', () => {
    if (!add.value) return;
    draft.users.push({ userId: add.value, role: 'view' });
    render();
    list.querySelector(`.share-row[data-user-id="${CSS.escape(draft.users.at(-1).userId)}"] .share-role`)?.focus();
  });

  const error = h('div.share-error', { role: 'alert', hidden: true });
  const save = h('button.primary.share-save', { type: 'submit', text: 'Save' });
  const close = h('button.share-close', { type: 'button', text: readonly ? 'Close' : 'Cancel', onclick: () => dialog.close() });
  const owner = access?.ownerName ? `its owner, ${access.ownerName},` : 'its owner';
  const form = h('form.share-form', null,
    h('h2', { text: title ? `Share “${title}”` : 'Share' }),
    h('p.share-owner', { text: ownerLine(access, session) }),
    h('label.share-field', null, h('span.share-label', { text: 'Who can see it' }), visibility, visibilityHint),
    h('div.share-field', null, h('span.share-label', { text: 'People' }), list, readonly ? null : add),
    readonly
      ? h('p.share-readonly', { text: `Only ${owner} or an admin can change who may see it.` })
      : null,
    error,
    h('div.share-actions', null, readonly ? null : save, close));

  const dialog = h('dialog.share-dialog', {
    'aria-label': 'Share this dashboard', dataset: readonly ? { readonly: 'true' } : {},
  }, form);
  dialog.addEventListener('close', () => dialog.remove());
  // Esc closes the dialog only, not what is behind it.
  dialog.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') e.stopPropagation();
  });

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (readonly) return;
    save.disabled = true;
    error.hidden = true;
    try {
      const saved = await api.put(`/api/dashboards/${enc(dashboardId)}/access`, accessBody(draft));
      onSaved?.(saved);
      dialog.close();
    } catch (err) {
      error.textContent = err?.message || String(err);
      error.hidden = false;
    } finally {
      save.disabled = false;
    }
  });

  function paintHint() {
    visibilityHint.textContent = draft.visibility === 'team'
      ? 'Everyone signed in can look at it; only the people below with “Can edit” change it.'
      : 'Only the people below, and admins, can see it.';
  }

  function render() {
    list.replaceChildren(...draft.users.map((share) => row(share)));
    if (!draft.users.length) list.append(h('li.share-none', { text: 'Not shared with anyone yet.' }));
    if (readonly) return;
    const offer = candidates([...people.values()], access, draft);
    let note = 'Add person…';
    if (peopleError) note = `Could not load people: ${peopleError}`;
    else if (!people.size) note = 'Loading people…';
    else if (!offer.length) note = 'Everyone is listed';
    add.replaceChildren(h('option', { value: '', text: note }),
      ...offer.map((p) => h('option', { value: p.id, text: p.displayName ? `${userLabel(p)} (${p.username})` : p.username })));
    add.value = '';
    add.disabled = !offer.length;
  }

  function row(share) {
    const person = people.get(share.userId);
    const role = h('select.share-role', { name: 'role', disabled: readonly, 'aria-label': `What ${userLabel(person) || share.userId} may do` },
      SHARE_ROLES.map((r) => h('option', { value: r.value, text: r.label })));
    role.value = share.role;
    role.addEventListener('change', () => {
      share.role = role.value;
    });
    // A viewer's role caps any share: they look, whatever it says.
    const note = person?.role === 'viewer' ? h('span.share-note', { text: 'viewer: can only look' }) : null;
    return h('li.share-row', { dataset: { user: person?.username ?? share.userId, userId: share.userId } },
      h('span.share-name', { text: userLabel(person) || share.userId, title: person?.username ?? share.userId }),
      note,
      role,
      readonly ? null : h('button.share-remove', {
        type: 'button', text: 'Remove', 'aria-label': `Stop sharing with ${userLabel(person) || share.userId}`,
        onclick: () => {
          draft.users = draft.users.filter((s) => s !== share);
          render();
        },
      }));
  }

  paintHint();
  render();
  api.get('/api/users').then((rows) => {
    people = new Map((rows ?? []).map((p) => [p.id, p]));
  }, (err) => {
    peopleError = err?.message || String(err);
  }).then(() => {
    if (dialog.isConnected) render();
  });

  document.body.append(dialog);
  dialog.showModal();
  dialog.dataset.open = 'true';
  (readonly ? close : visibility).focus();
  return dialog;
}
