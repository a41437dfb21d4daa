// The audit log (admins only; settings/index.js does not even load it for anyone else): the
// latest 100 entries of `GET /api/admin/audit`, newest first, as a table of time, event, who
// (user, API key or the server token), address and target (a user's id shows as their username
// once the users section has loaded them: setUsers), with a Refresh button. auditRow() turns an
// entry into the table's text and is pure.
//
// Test hooks: `.settings-audit[data-loaded]`, `.audit-refresh`, `.audit-row[data-kind]` (with
// `.failed` for refusals such as `sign_in_failed`).
import { h } from '../dom.js';
import { when } from './form.js';

/** How many entries the table shows. */
export const AUDIT_LIMIT = 100;

/** Words for the kinds the server writes; another kind shows as its own words. */
const KINDS = {
  sign_in: 'Signed in',
  sign_in_failed: 'Sign-in refused',
  sign_out: 'Signed out',
  user_created: 'User added',
  user_changed: 'User changed',
  user_deleted: 'User deleted',
  key_created: 'Key created',
  key_revoked: 'Key revoked',
  share_used: 'Share link opened',
};

/** The label of an entry's kind: `sign_in` → "Signed in", `role_granted` → "Role granted". */
export function kindLabel(kind) {
  if (typeof kind !== 'string' || !kind) return '?';
  if (KINDS[kind]) return KINDS[kind];
  const words = kind.replace(/[_.-]+/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** Who acted: the username, the API key (with its user when known), else the user id, else the server token; '—' if nobody. */
export function actorText(actor) {
  if (!actor) return '—';
  const user = actor.username || actor.userId || null;
  if (actor.keyId) return user ? `${user} (key ${actor.keyId})` : `key ${actor.keyId}`;
  if (user) return user;
  return actor.token ? 'server token' : '—';
}

/** Text of `detail`, which the server may send as a sentence or as an object. */
function detailText(detail) {
  if (detail == null || detail === '') return '';
  if (typeof detail === 'string') return detail;
  return JSON.stringify(detail);
}

/**
 * One entry as the table shows it: `{id, time, kind, label, actor, address, target, detail,
 * failed}` (all text; a missing value is '—', a missing detail ''). `names` maps user ids to
 * usernames: a target that is a known user's id shows as the username.
 */
export function auditRow(entry, names = new Map()) {
  const kind = String(entry?.kind ?? '');
  return {
    id: String(entry?.id ?? ''),
    time: when(entry?.at) || '—',
    kind,
    label: kindLabel(kind),
    actor: actorText(entry?.actor),
    address: entry?.address || '—',
    target: entry?.target == null || entry.target === '' ? '—' : names.get(String(entry.target)) ?? String(entry.target),
    detail: detailText(entry?.detail),
    failed: /(_failed|_refused|_denied)$/.test(kind),
  };
}

export function createAudit({ api }) {
  const refresh = h('button.audit-refresh.data-refresh', { type: 'button', text: 'Refresh', onclick: () => load() });
  const list = h('div.audit-list.settings-table-wrap');
  const el = h('section.settings-section.settings-audit', { 'aria-labelledby': 'settings-audit-title', hidden: true },
    h('div.section-title-row', null, h('h2#settings-audit-title', { text: 'Audit log' }), h('span.spacer'), refresh),
    h('p.section-note', { text: `Sign-ins, sign-outs and changes to users and keys: the latest ${AUDIT_LIMIT}, newest first.` }),
    list);

  let entries = null;
  let names = new Map();

  /** The users as the users section loaded them (`[{id, username}]`): targets read as names. */
  function setUsers(users) {
    names = new Map(users.map((u) => [u.id, u.username]));
    if (entries) render(entries);
  }

  async function load() {
    refresh.disabled = true;
    try {
      entries = await api.get(`/api/admin/audit?limit=${AUDIT_LIMIT}`);
      render(entries);
    } catch (e) {
      list.replaceChildren(h('div.form-error', { role: 'alert', text: `Could not load the audit log: ${e.message}` }));
    } finally {
      refresh.disabled = false;
    }
    el.dataset.loaded = '';
  }

  function render(entries) {
    if (!entries.length) {
      list.replaceChildren(h('p.settings-empty', { text: 'Nothing recorded yet.' }));
      return;
    }
    list.replaceChildren(h('table.settings-table.audit-table', null,
      h('thead', null, h('tr', null, ['Time', 'Event', 'Who', 'Address', 'Target'].map((t) => h('th', { text: t })))),
      h('tbody', null, entries.slice(0, AUDIT_LIMIT).map((entry) => {
        const r = auditRow(entry, names);
        return h('tr.audit-row', { class: r.failed ? 'failed' : null, dataset: { kind: r.kind, entryId: r.id } },
          h('td.nowrap', { text: r.time }),
          h('td', null, h('span.audit-kind', { text: r.label }), r.detail ? h('div.field-hint.audit-detail', { text: r.detail }) : null),
          h('td.audit-actor', { text: r.actor }),
          h('td.nowrap.audit-address', { text: r.address }),
          h('td.audit-target', { text: r.target }));
      }))));
  }

  return { el, load, setUsers };
}
