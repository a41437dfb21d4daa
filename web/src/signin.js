// The sign-in screen, shown when the server answers 401 (no session cookie yet, or it was ended).
// Its form sends username and password as JSON to `POST /api/session` (fetch, never a form post):
// the server sets its HttpOnly session cookie and the app reloads. A refusal shows inline: the
// server's sentence for a wrong password (the same for an unknown user), and "Too many attempts;
// try again in N s" from a 429's Retry-After.
//
// Below it, a disclosure keeps the older way in: the server's token link. That form is a plain GET
// to `/?token=…`: the server checks the token, sets the session cookie and redirects back to `/`,
// so the token never stays in the URL and no script ever holds it.
//
// `.signin-sso` holds single sign-on (OpenID Connect): `GET /api/session/providers` lists the
// providers (`[{id, name, startUrl}]`) and each gets a "Sign in with <name>" link to its
// `startUrl` (`/api/session/oidc/{id}/start`), a whole-page navigation: the server redirects to
// the provider, which sends the browser back to the server's callback, which sets the session
// cookie and redirects to `/`. With no providers, or while the request fails, the slot stays
// hidden and empty and the password form is all there is.
//
// Test hooks: `.signin[data-open]` while shown; `.signin-username`, `.signin-password`,
// `.signin-submit`, `.signin-error` (role=alert, hidden until a refusal); `.signin-token` (the
// disclosure, its `summary`) with `input[name=token]` and its own submit button; `.signin-sso`
// with `.signin-sso-link[data-provider]`.
import { h } from './dom.js';

let shown = false;

/** Whether the sign-in screen is up: nobody is signed in on this page. */
export function signInShown() {
  return shown;
}

/** Shows the sign-in screen over the app (once; later 401s while it is up are ignored). */
export function showSignIn() {
  if (shown) return;
  shown = true;

  const username = h('input.signin-username', {
    name: 'username', autocomplete: 'username', autocapitalize: 'none', spellcheck: 'false', required: true,
  });
  const password = h('input.signin-password', { name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const submit = h('button.primary.signin-submit', { type: 'submit', text: 'Sign in' });
  const error = h('div.signin-error', { role: 'alert', hidden: true });
  const form = h('form.signin-card.signin-form', { method: 'post', action: '/api/session' },
    h('h2#signin-title', { text: 'Sign in to Boardsmith' }),
    h('label', null, 'Username', username),
    h('label', null, 'Password', password),
    error,
    submit);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    submit.disabled = true;
    error.hidden = true;
    const refusal = await signIn(username.value.trim(), password.value);
    if (!refusal) {
      location.reload();
      return;
    }
    error.textContent = refusal;
    error.hidden = false;
    submit.disabled = false;
    password.select();
  });

  const sso = h('div.signin-sso', { hidden: true });

  const token = h('details.signin-token', null,
    h('summary', { text: 'Sign in with the server’s token link' }),
    h('form', { method: 'get', action: '/' },
      h('p', null, 'Open the sign-in link the server printed when it started (',
        h('code', { text: 'boardsmith token' }), ' prints it again), or paste the token here.'),
      h('label', null, 'Token ', h('input', { name: 'token', autocomplete: 'off', spellcheck: 'false', required: true })),
      h('button', { type: 'submit', text: 'Sign in with the token' })));

  const box = h('div.signin', {
    dataset: { open: '' }, role: 'dialog', 'aria-modal': 'true', 'aria-labelledby': 'signin-title',
  }, h('div.signin-stack', null, form, sso, token));
  document.body.append(box);
  username.focus();
  showProviders(sso);
}

/** Posts the credentials; null when signed in, else the sentence to show. */
async function signIn(username, password) {
  let res;
  try {
    res = await fetch('/api/session', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username, password }),
    });
  } catch (e) {
    return signInMessage({ status: 0, msg: e.message });
  }
  let envelope = null;
  try {
    envelope = await res.json();
  } catch {
    /* not JSON: the status speaks */
  }
  if (res.ok && envelope?.code === 0) return null;
  return signInMessage({ status: res.status, msg: envelope?.msg, retryAfter: res.headers.get('retry-after') });
}

/** Fills `slot` with a link per single sign-on provider the server lists; hidden if none. */
async function showProviders(slot) {
  let buttons = [];
  try {
    const res = await fetch('/api/session/providers');
    if (!res.ok) return;
    buttons = providerButtons(await res.json());
  } catch {
    return;
  }
  if (!buttons.length) return;
  slot.replaceChildren(
    h('p.signin-or', { text: 'or' }),
    ...buttons.map((b) => h('a.button.signin-sso-link', { href: b.href, dataset: { provider: b.id }, text: b.text })));
  slot.hidden = false;
}

/**
 * The `[{id, name, startUrl}]` of a providers answer (the envelope's data, or a bare list); entries
 * without an id or a name are left out. A `startUrl` that is not a path on this server (absolute,
 * protocol-relative, not a string) is replaced by the route the server documents for the id.
 */
export function providerList(body) {
  const list = Array.isArray(body) ? body : body?.data;
  if (!Array.isArray(list)) return [];
  return list
    .filter((p) => p && typeof p.id === 'string' && p.id && typeof p.name === 'string' && p.name.trim())
    .map(({ id, name, startUrl }) => ({
      id,
      name: name.trim(),
      startUrl: localPath(startUrl) ?? `/api/session/oidc/${encodeURIComponent(id)}/start`,
    }));
}

/** The sign-in screen's single sign-on links for a providers answer: `[{id, text, href}]`. */
export function providerButtons(body) {
  return providerList(body).map((p) => ({ id: p.id, text: `Sign in with ${p.name}`, href: p.startUrl }));
}

/** `path` when it is a path on this origin (`/…`, not `//host…` nor `/\host…`), else null. */
function localPath(path) {
  if (typeof path !== 'string' || !/^\/(?![/\\])/.test(path) || /[\s\\]/.test(path)) return null;
  return path;
}

/**
 * Seconds to wait from a Retry-After value (delta-seconds, or an HTTP date), rounded up and at
 * least 1; null when there is none or it cannot be read.
 */
export function retryAfterSeconds(value, now = Date.now()) {
  if (value == null) return null;
  const text = String(value).trim();
  if (!text) return null;
  if (/^\d+$/.test(text)) return Math.max(1, Number(text));
  // An HTTP date names its day and month; anything else (`-5`, `1.5`) is not one.
  const at = /[A-Za-z]{3}/.test(text) ? Date.parse(text) : NaN;
  if (!Number.isFinite(at)) return null;
  return Math.max(1, Math.ceil((at - now) / 1000));
}

/** "Too many attempts; try again in N s" (or "… later" when the server gave no usable time). */
export function tooManyMessage(retryAfter, now = Date.now()) {
  const s = retryAfterSeconds(retryAfter, now);
  return s == null ? 'Too many attempts; try again later' : `Too many attempts; try again in ${s} s`;
}

/** The sentence a refused sign-in shows: `{status, msg, retryAfter}` of the answer (status 0: no answer). */
export function signInMessage({ status, msg, retryAfter }, now = Date.now()) {
  if (status === 429) return tooManyMessage(retryAfter, now);
  if (status === 0) return `The server did not answer${msg ? ` (${msg})` : ''}`;
  const text = typeof msg === 'string' && msg.trim() ? msg.trim() : null;
  if (status === 401) return sentence(text ?? 'wrong username or password');
  return sentence(text ?? `The server refused the sign-in (HTTP ${status})`);
}

/** The server's sentence with a capital first letter (it writes them to follow other words). */
function sentence(text) {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
