// Users (admins only; settings/index.js does not even load it for anyone else): the list
// (username, display name, role, state, last sign-in), adding a user (username, role, optional
// password: without one the server makes one, shown here once with a copy button), changing a
// role, disabling and enabling, resetting a password (typed by the admin, or generated here
// with crypto.getRandomValues and shown once) and deleting after a confirm. The signed-in admin's
// own row offers none of these but the password: the server keeps the last admin, this page
// keeps anyone from locking themselves out by a click. Each change emits
// `settings:users-changed` on the bus (the audit log reloads); each load `settings:users-loaded`
// `{users}` (the audit log names its targets).
//
// Test hooks: `.settings-users[data-loaded]`; `form.users-add` (`input[name=username]`,
// `select[name=role]`, `input[name=password|displayName|email]`, `.users-add-submit`);
// `.users-secret` with `.users-secret-value`, `.users-copy` and `.users-secret-done`;
// `.users-row[data-username][data-role][data-state]` (`active`, `disabled`) with
// `select.users-role`, `.users-disable` (Disable/Enable), `.users-reset`, `.users-delete` and its
// `.row-error`; the reset form `.users-reset-form` with `input[name=password]`, `.users-reset-set`,
// `.users-reset-generate`, `.users-reset-cancel`.
import { h } from '../dom.js';
import { field, formError, clearErrors, showError, busy, when, copyButton } from './form.js';
import { ROLES } from '../session.js';

const enc = encodeURIComponent;
const ROLE_HINTS = {
  admin: 'Everything: users, keys, settings',
  editor: 'Make and change dashboards, chat',
  viewer: 'Read dashboards',
};

export function createUsers({ api, bus, toast }) {
  const username = h('input', { name: 'username', required: true, maxlength: '64', autocomplete: 'off', autocapitalize: 'none', spellcheck: 'false' });
  const role = roleSelect('role', 'editor');
  const password = h('input', { name: 'password', type: 'password', autocomplete: 'new-password', placeholder: 'generated if empty' });
  const displayName = h('input', { name: 'displayName', maxlength: '100', autocomplete: 'off', placeholder: 'optional' });
  const email = h('input', { name: 'email', type: 'email', autocomplete: 'off', placeholder: 'optional' });
  const submit = h('button.primary.users-add-submit', { type: 'submit', text: 'Add user' });
  const form = h('form.users-add.settings-form', { autocomplete: 'off' },
    h('div.form-grid', null,
      field('Username', 'username', username),
      field('Role', 'role', role),
      field('Password', 'password', password, 'At least 10 characters; empty: the server makes one'),
      field('Display name', 'displayName', displayName),
      field('Email', 'email', email)),
    formError(),
    h('div.form-actions', null, submit));
  form.addEventListener('submit', (e) => { e.preventDefault(); add(); });

  const secret = h('div.users-secret-slot');
  const list = h('div.users-list.settings-table-wrap');
  const el = h('section.settings-section.settings-users', { 'aria-labelledby': 'settings-users-title', hidden: true },
    h('h2#settings-users-title', { text: 'Users' }),
    h('p.section-note', { text: 'Who can sign in to this server, and what they may do. Passwords are kept as digests; a new or reset one is shown once.' }),
    form, secret, list);

  /** The signed-in admin's id: their own row cannot be disabled, demoted or deleted here. */
  let me = null;

  async function load(session) {
    if (session) me = session.user?.id ?? null;
    try {
      const users = await api.get('/api/admin/users');
      render(users);
      bus.emit('settings:users-loaded', { users });
    } catch (e) {
      list.replaceChildren(h('div.form-error', { role: 'alert', text: `Could not load the users: ${e.message}` }));
    }
    el.dataset.loaded = '';
  }

  function render(users) {
    if (!users.length) {
      list.replaceChildren(h('p.settings-empty', { text: 'No users yet.' }));
      return;
    }
    list.replaceChildren(h('table.settings-table.users-table', null,
      h('thead', null, h('tr', null, ['Username', 'Display name', 'Role', 'State', 'Last sign-in', 'Created', ''].map((t) => h('th', { text: t })))),
      h('tbody', null, users.map(row))));
  }

  function row(u) {
    const self = u.id === me;
    const state = u.disabled ? 'disabled' : 'active';
    const rowError = h('div.row-error', { role: 'alert', hidden: true });
    const roleSel = roleSelect(null, u.role, `Role of ${u.username}`);
    roleSel.classList.add('users-role');
    roleSel.disabled = self;
    roleSel.addEventListener('change', () => change(u, { role: roleSel.value }, roleSel, rowError, `${u.username} is now ${roleSel.value}`)
      .then((ok) => { if (!ok) roleSel.value = u.role; }));
    const actions = h('td.users-actions', null,
      self ? null : h('button.users-disable', {
        type: 'button', text: u.disabled ? 'Enable' : 'Disable',
        title: u.disabled ? 'Let this user sign in again' : 'Refuse this user’s sign-ins and end their sessions',
        onclick: (e) => change(u, { disabled: !u.disabled }, e.currentTarget, rowError, `${u.username} ${u.disabled ? 'enabled' : 'disabled'}`),
      }),
      h('button.users-reset', { type: 'button', text: 'Reset password', onclick: () => resetForm(u, tr) }),
      self ? null : h('button.users-delete', { type: 'button', text: 'Delete', onclick: (e) => remove(u, e.currentTarget, rowError) }),
      rowError);
    const tr = h('tr.users-row', { dataset: { userId: u.id, username: u.username, role: u.role, state } },
      h('td.users-username', null, h('strong', { text: u.username }), self ? h('span.muted', { text: ' (you)' }) : null,
        u.hasPassword === false ? h('div.field-hint', { text: u.sso ? 'single sign-on' : 'no password' }) : null),
      h('td', { text: u.displayName || '—' }),
      h('td', null, roleSel),
      h('td', null, h(`span.users-state.state-${state}`, { text: state })),
      h('td.nowrap', { text: u.lastSignInAt ? when(u.lastSignInAt) : 'never' }),
      h('td.nowrap', { text: when(u.createdAt) || '—' }),
      actions);
    return tr;
  }

  /** PATCH /api/admin/users/{id}; true when it went through (the list is then reloaded). */
  async function change(u, body, control, rowError, done) {
    let ok = false;
    await busy(control, async () => {
      rowError.hidden = true;
      await api.patch(`/api/admin/users/${enc(u.id)}`, body);
      ok = true;
      toast(done);
      bus.emit('settings:users-changed');
      await load();
    }, (e) => {
      rowError.textContent = e.message;
      rowError.hidden = false;
    });
    return ok;
  }

  /** The reset form in a row of its own under the user's row (one at a time). */
  function resetForm(u, tr) {
    list.querySelector('.users-reset-row')?.remove();
    const input = h('input', { name: 'password', type: 'password', autocomplete: 'new-password', 'aria-label': `New password for ${u.username}` });
    const set = h('button.primary.users-reset-set', { type: 'submit', text: 'Set password' });
    const generate = h('button.users-reset-generate', { type: 'button', text: 'Generate one' });
    const cancel = h('button.users-reset-cancel', { type: 'button', text: 'Cancel', onclick: () => resetRow.remove() });
    const resetFormEl = h('form.users-reset-form.settings-form', { autocomplete: 'off' },
      h('div.form-row', null,
        field(`New password for ${u.username}`, 'password', input, 'At least 10 characters'),
        h('div.form-actions', null, set, generate, cancel)),
      formError());
    const resetRow = h('tr.users-reset-row', null, h('td', { colspan: '7' }, resetFormEl));
    const put = async (button, value, shown) => busy(button, async () => {
      clearErrors(resetFormEl);
      await api.patch(`/api/admin/users/${enc(u.id)}`, { password: value });
      resetRow.remove();
      bus.emit('settings:users-changed');
      if (shown) showSecret(`New password for “${u.username}”.`, value);
      else toast(`Password set for ${u.username}`);
    }, (e) => showError(resetFormEl, e));
    resetFormEl.addEventListener('submit', (e) => { e.preventDefault(); put(set, input.value, false); });
    generate.addEventListener('click', () => put(generate, generatePassword(), true));
    tr.after(resetRow);
    input.focus();
  }

  function showSecret(title, value) {
    const shown = h('code.users-secret-value.key-secret-value', { text: value });
    secret.replaceChildren(h('div.users-secret.key-secret', { role: 'status' },
      h('div', null, h('strong', { text: title }), ' Copy it now: it is not shown again.'),
      h('div.key-secret-line', null, shown, copyButton('users-copy', value, shown),
        h('button.users-secret-done', { type: 'button', text: 'Done', onclick: () => secret.replaceChildren() }))));
  }

  async function add() {
    const body = { username: username.value.trim(), role: role.value };
    if (password.value) body.password = password.value;
    if (displayName.value.trim()) body.displayName = displayName.value.trim();
    if (email.value.trim()) body.email = email.value.trim();
    await busy(submit, async () => {
      clearErrors(form);
      const created = await api.post('/api/admin/users', body);
      if (created?.password) showSecret(`User “${created.username}” added. Their password:`, created.password);
      else toast(`Added ${created?.username ?? body.username}`);
      for (const input of [username, password, displayName, email]) input.value = '';
      bus.emit('settings:users-changed');
      await load();
    }, (e) => showError(form, e));
  }

  async function remove(u, button, rowError) {
    // eslint-disable-next-line no-alert
    if (!window.confirm(`Delete the user “${u.username}”? They are signed out everywhere and cannot sign in again.`)) return;
    await busy(button, async () => {
      rowError.hidden = true;
      await api.del(`/api/admin/users/${enc(u.id)}`);
      toast(`Deleted ${u.username}`);
      bus.emit('settings:users-changed');
      await load();
    }, (e) => {
      rowError.textContent = e.message;
      rowError.hidden = false;
    });
  }

  /** Forgets a shown password and an open reset form (the page is being left). */
  function hideSecret() {
    secret.replaceChildren();
    list.querySelector('.users-reset-row')?.remove();
  }

  return { el, load, hideSecret };
}

/** A role picker (`name` for forms), each option with what the role may do. */
function roleSelect(name, value, label) {
  return h('select', { name, 'aria-label': label },
    ROLES.map((r) => h('option', { value: r, title: ROLE_HINTS[r], selected: r === value, text: r })));
}

/** Letters and digits that cannot be mistaken for one another (no 0/O, 1/l/I). */
const ALPHABET = 'abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/**
 * A random password of `length` characters from ALPHABET (16: about 93 bits), drawn without bias:
 * bytes from `fill` (crypto.getRandomValues) at or above the largest multiple of the alphabet's
 * size are thrown away.
 */
export function generatePassword(length = 16, fill = (a) => crypto.getRandomValues(a)) {
  const limit = 256 - (256 % ALPHABET.length);
  let out = '';
  while (out.length < length) {
    const bytes = fill(new Uint8Array(length * 2));
    for (const b of bytes) {
      if (b < limit && out.length < length) out += ALPHABET[b % ALPHABET.length];
    }
  }
  return out;
}
