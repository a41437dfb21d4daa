// The account menu at the right of the header: who is signed in (display name, else username,
// and role) and what they can do about it. "Change password" opens a dialog that calls
// `PUT /api/session/password {current, password}`; "Sign out" ends this browser's session
// (`DELETE /api/session`) and "Sign out everywhere" every session of the user
// (`?everywhere=true`); both then reload the app, which meets its 401 and shows the sign-in
// screen (signin.js). With auth off (the server's `--no-auth`: the owner by token, no session)
// there is nothing to sign out of: the menu stays hidden and the header just says "owner".
// createAccountMenu(el, {api, session}) with `session` the promise of `GET /api/session`.
//
// Test hooks: `.account-menu` (hidden until the session is known, and with auth off) with
// `.account-toggle`, `.account-name`, `.account-role[data-role]` and, in its `.account-popup`,
// `.account-password`, `.account-signout`, `.account-signout-all` and `.account-error`;
// `.account-owner` with auth off. The dialog: `.password-dialog[open]` with `input[name=current]`,
// `input[name=password]`, `.password-save`, its `.form-error`, and `.password-done` once changed.
import { h } from './dom.js';
import { isAuthOff, userLabel } from './session.js';
import { field, formError, clearErrors, showError, busy } from './settings/form.js';

export function createAccountMenu(el, { api, session }) {
  const name = h('span.account-name');
  const role = h('span.account-role');
  const toggle = h('button.account-toggle', {
    type: 'button', 'aria-haspopup': 'menu', 'aria-expanded': 'false', title: 'Your account',
  }, name, role);
  const error = h('div.account-error', { role: 'alert', hidden: true });
  const item = (cls, text, onclick) => h(`button.${cls}`, { type: 'button', role: 'menuitem', text, onclick });
  const popup = h('div.account-popup', { role: 'menu', hidden: true },
    item('account-password', 'Change password…', () => { close(); changePassword(api); }),
    item('account-signout', 'Sign out', (e) => signOut(e.currentTarget, '/api/session')),
    item('account-signout-all', 'Sign out everywhere', (e) => signOut(e.currentTarget, '/api/session?everywhere=true')),
    error);
  const menu = h('div.account-menu', { hidden: true }, toggle, popup);
  el.replaceChildren(menu);

  function open() {
    // The header clips what overflows it: the popup is fixed, under the toggle's right edge.
    const r = toggle.getBoundingClientRect();
    popup.style.top = `${Math.round(r.bottom + 4)}px`;
    popup.style.right = `${Math.max(4, Math.round(window.innerWidth - r.right))}px`;
    popup.hidden = false;
    toggle.setAttribute('aria-expanded', 'true');
    popup.querySelector('button')?.focus();
  }
  function close() {
    popup.hidden = true;
    error.hidden = true;
    toggle.setAttribute('aria-expanded', 'false');
  }
  toggle.addEventListener('click', () => (popup.hidden ? open() : close()));
  document.addEventListener('click', (e) => {
    if (!popup.hidden && !menu.contains(e.target)) close();
  });
  menu.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && !popup.hidden) {
      e.preventDefault();
      close();
      toggle.focus();
    }
  });

  async function signOut(button, path) {
    await busy(button, async () => {
      error.hidden = true;
      await api.del(path);
      location.reload();
    }, (e) => {
      error.textContent = `Could not sign out: ${e.message}`;
      error.hidden = false;
    });
  }

  session.then((s) => {
    if (!s?.user) return; // not signed in (the sign-in screen is up) or no accounts on this server
    if (isAuthOff(s)) {
      el.replaceChildren(h('span.account-owner', { title: 'This server runs without sign-in', text: s.user.username || 'owner' }));
      return;
    }
    name.textContent = userLabel(s.user);
    role.textContent = s.user.role;
    role.dataset.role = s.user.role;
    toggle.title = s.user.email ? `${userLabel(s.user)} (${s.user.email})` : userLabel(s.user);
    menu.hidden = false;
  });
}

/** The change-password dialog: the current password and the new one, then done. */
function changePassword(api) {
  const current = h('input', { name: 'current', type: 'password', autocomplete: 'current-password' });
  const password = h('input', { name: 'password', type: 'password', autocomplete: 'new-password', required: true });
  const save = h('button.primary.password-save', { type: 'submit', text: 'Change password' });
  const cancel = h('button.password-cancel', { type: 'button', text: 'Cancel', onclick: () => dialog.close() });
  const form = h('form.settings-form.password-form', null,
    h('h2', { text: 'Change your password' }),
    field('Current password', 'current', current, 'Empty if you have none yet (signed in with the token link).'),
    field('New password', 'password', password, 'At least 10 characters.'),
    formError(),
    h('div.form-actions', null, save, cancel));
  const dialog = h('dialog.password-dialog', { 'aria-label': 'Change your password' }, form);
  dialog.addEventListener('close', () => dialog.remove());
  // Esc closes the dialog only, not the settings page behind it.
  dialog.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') e.stopPropagation();
  });
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    await busy(save, async () => {
      clearErrors(form);
      // The server ends every other session of this person and gives this browser a new one.
      const body = { password: password.value };
      if (current.value) body.current = current.value;
      await api.put('/api/session/password', body);
      form.replaceChildren(
        h('h2', { text: 'Password changed' }),
        h('p', { role: 'status', text: 'Use it the next time you sign in. Your other browsers and devices are signed out.' }),
        h('div.form-actions', null, h('button.primary.password-done', { type: 'button', text: 'Done', onclick: () => dialog.close() })));
      form.querySelector('.password-done').focus();
    }, (err) => {
      // 403: the current password is wrong; say so next to it.
      if (err.status === 403) err.data = { ...(err.data ?? {}), param: 'current' };
      showError(form, err);
    });
  });
  document.body.append(dialog);
  dialog.showModal();
  current.focus();
}
