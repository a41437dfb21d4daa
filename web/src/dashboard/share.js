// The share dialog of the dashboard view: who owns the dashboard, who else may see it (only the
// people listed, or everyone on the team) and the people it is shared with, each to view or to
// edit. "Add person" offers the directory (`GET /api/users`) but the owner and those listed;
// Save sends `PUT /api/dashboards/{id}/access` and the server's refusal is shown in the dialog.
// For someone who may not change it (`canChange` false) the same dialog only reads: no Save,
// and it says who to ask. The rules are access.js's; the server has the last word.
//
// Below, for whoever may edit the dashboard (`canLink`), its share links (links.js): read-only
// links for people without an account. "Create link" sends `POST /api/dashboards/{id}/share`
// with the expiry chosen, whether visitors may change the variables, and the values the view
// shows now (`vars`); the answer's URL is shown once, with Copy (the server keeps only a digest
// of its token). The list (`GET …/share`) names each link, who made it, when it expires and how
// much it was used, with Revoke (`DELETE …/share/{linkId}`).
//
// openShareDialog({api, dashboardId, title, access, session, onSaved, canLink, vars}) with
// `access` the answer of `GET /api/dashboards/{id}/access` and `session` that of
// `GET /api/session`; `onSaved(access)` gets the server's answer to the PUT.
//
// Test hooks: `.share-dialog[data-open]` (and `[data-readonly]` when it only reads) with
// `.share-owner`, `.share-visibility` (a select: private | team), `.share-row[data-user=<username>]`
// (`[data-user-id]`) with its `.share-role` (view | edit) and `.share-remove`, `.share-add` (a select
// whose values are user ids), `.share-save`, `.share-close` and `.share-error` (role=alert).
// Links: `.share-links` with `.share-link-label`, `.share-link-expiry` (a select of seconds, ''
// never), `.share-link-vars` (a checkbox), `.share-link-create`; once made, `.share-link-created`
// with `.share-link-url` (the URL's text), `.share-link-copy` and `.share-link-once`; the list
// `.share-link-list` of `.share-link[data-link-id]` (`[data-expired]`) with `.share-link-name`,
// `.share-link-meta` and `.share-link-revoke`; `.share-links-error` (role=alert).
import './links.css';
import { h } from '../dom.js';
import { userLabel } from '../session.js';
import { copyButton } from '../settings/form.js';
import { SHARE_ROLES, VISIBILITIES, accessBody, candidates, draftOf, ownerLine } from './access.js';
import { DEFAULT_EXPIRY, EXPIRY_CHOICES, linkBody, linkRow } from './links.js';

const enc = encodeURIComponent;

export function openShareDialog({ api, dashboardId, title, access, session, onSaved, canLink = false, vars = {} }) {
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
    canLink ? linksSection({ api, dashboardId, vars }) : null,
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

/** The dialog's "Links" section: make a link (its URL shown once), list and revoke them. */
function linksSection({ api, dashboardId, vars }) {
  const base = `/api/dashboards/${enc(dashboardId)}/share`;
  const label = h('input.share-link-label', {
    name: 'link-label', type: 'text', autocomplete: 'off', placeholder: 'Label (optional)', 'aria-label': 'Label of the new link',
  });
  const expiry = h('select.share-link-expiry', { name: 'link-expiry', 'aria-label': 'The link works for' },
    EXPIRY_CHOICES.map((c) => h('option', { value: c.value, text: c.value ? `Expires after ${c.label}` : 'Never expires' })));
  expiry.value = DEFAULT_EXPIRY;
  const allowVars = h('input.share-link-vars', { type: 'checkbox', name: 'link-vars' });
  const create = h('button.share-link-create', { type: 'button', text: 'Create link', onclick: () => make() });
  // Enter in the label makes the link; it must not submit the people form around it.
  label.addEventListener('keydown', (e) => {
    if (e.key !== 'Enter') return;
    e.preventDefault();
    make();
  });
  const created = h('div.share-link-created', { hidden: true });
  const list = h('ul.share-link-list', { role: 'list' });
  const error = h('div.share-links-error', { role: 'alert', hidden: true });
  let links = null; // the server's list, once answered

  function fail(err) {
    error.textContent = err?.message || String(err);
    error.hidden = false;
  }

  async function make() {
    if (create.disabled) return;
    create.disabled = true;
    error.hidden = true;
    try {
      const body = linkBody({ expiry: expiry.value, vars, allowVars: allowVars.checked, label: label.value });
      const answer = await api.post(base, body);
      showCreated(answer.url);
      label.value = '';
      if (answer.link) {
        links = [answer.link, ...(links ?? []).filter((l) => l.id !== answer.link.id)];
        render();
      }
    } catch (err) {
      fail(err);
    } finally {
      create.disabled = false;
    }
  }

  /** The new link's URL, this once: the server cannot show it again. */
  function showCreated(url) {
    const shown = h('code.share-link-url', { text: url });
    created.replaceChildren(
      h('div.share-link-url-row', null, shown, copyButton('primary.share-link-copy', url, shown)),
      h('p.share-link-once', { text: 'Copy it now: this link will not be shown again. Anyone who has it can look at this dashboard.' }));
    created.hidden = false;
  }

  function render() {
    if (!links) return;
    const now = Date.now();
    list.replaceChildren(...links.map((link) => {
      const row = linkRow(link, now);
      const revoke = h('button.share-link-revoke', {
        type: 'button', text: 'Revoke', 'aria-label': `Revoke ${row.name}`,
        onclick: async () => {
          revoke.disabled = true;
          error.hidden = true;
          try {
            await api.del(`${base}/${enc(link.id)}`);
            links = links.filter((l) => l.id !== link.id);
            render();
          } catch (err) {
            revoke.disabled = false;
            fail(err);
          }
        },
      });
      return h('li.share-link', { dataset: row.expired ? { linkId: link.id, expired: 'true' } : { linkId: link.id } },
        h('div.share-link-text', null,
          h('span.share-link-name', { text: row.name, title: row.name }),
          h('span.share-link-meta', { text: [row.by, row.expires, row.uses, row.vars].filter(Boolean).join(' · ') })),
        revoke);
    }));
    if (!links.length) list.append(h('li.share-none', { text: 'No links yet.' }));
  }

  list.append(h('li.share-none', { text: 'Loading links…' }));
  api.get(base).then((rows) => {
    links = Array.isArray(rows) ? rows : [];
    render();
  }, (err) => {
    list.replaceChildren();
    fail(`Could not load the links: ${err?.message || err}`);
  });

  return h('section.share-links.share-field', { 'aria-label': 'Links' },
    h('span.share-label', { text: 'Links' }),
    h('p.share-hint', { text: 'Anyone with a link can look at this dashboard, read-only, without an account.' }),
    h('div.share-link-new', null,
      label,
      expiry,
      h('label.share-link-vars-label', null, allowVars, 'Let visitors change variables'),
      create),
    created,
    list,
    error);
}
