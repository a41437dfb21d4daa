// User accounts in real Chromium against a real server: signing in with a username and password
// (a wrong one, or an unknown user, refused inline with the same sentence), the account menu,
// changing one's own password, signing out of this browser and everywhere, an admin adding a user
// in Settings → Users who then signs in as a viewer and is never shown (nor asks for) the users
// or the audit log, an editor's settings (API keys with the scopes an editor may grant, the data
// providers' health; no admin section requested, no request refused; with no model, told to ask
// an admin), and a server with auth off showing just "owner". The rate limit runs last:
// it may refuse every further sign-in from this address for a while.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, apiOf, newPage, closeBrowser, screenshot } from './harness.mjs';

let server;
let api;

before(async () => {
  server = await startServer();
  api = apiOf(server.url);
});

after(async () => {
  await closeBrowser();
  await server?.close();
});

/** Chromium logs every refusal a test provokes (`401 (Unauthorized)` …); anything else is a failure. */
const unexpected = (errors) => errors.filter((e) => !/Failed to load resource: the server responded with a status of (401|403|404|429) /.test(e));

/** A user made through the admin API (the harness's token is the operator's). */
async function addUser(username, password, role, extra = {}) {
  return api.post('/api/admin/users', { username, password, role, ...extra });
}

/** Opens the app without a session and signs in through the form; waits for the account menu. */
async function signIn(page, username, password) {
  await page.goto(server.url);
  await page.waitForSelector('.signin[data-open]');
  await page.fill('.signin-username', username);
  await page.fill('.signin-password', password);
  await page.click('.signin-submit');
  await page.waitForSelector('.account-menu:not([hidden]) .account-name');
  assert.equal(await page.locator('.signin').count(), 0);
}

/** Submits the form and returns the refusal it shows (the page stays on the sign-in screen). */
async function refusedSignIn(page, username, password) {
  const error = page.locator('.signin-error');
  await page.fill('.signin-username', username);
  await page.fill('.signin-password', password);
  await page.click('.signin-submit');
  await error.waitFor({ state: 'visible' });
  await page.waitForFunction(() => !document.querySelector('.signin-submit').disabled);
  assert.equal(await error.getAttribute('role'), 'alert');
  return (await error.textContent()).trim();
}

/** The page's session as the server sees it: the status of GET /api/session from the page. */
const sessionStatus = (page) => page.evaluate(() => fetch('/api/session').then((r) => r.status));

test('a user signs in with username and password; a wrong password or an unknown user reads the same', async () => {
  await addUser('ada', 'analytical-engine-1843', 'editor', { displayName: 'Ada Lovelace' });
  const page = await newPage({ signIn: false });
  await page.goto(server.url);
  await page.waitForSelector('.signin[data-open]');
  assert.equal(await page.locator('.app-sidebar .dashboard-item').count(), 0);
  // No single sign-on is set up: its slot stays hidden and empty.
  assert.equal(await page.locator('.signin-sso').isHidden(), true);
  assert.equal(await page.locator('.signin-sso-link').count(), 0);
  // The token form is there, folded away.
  assert.equal(await page.locator('.signin-token input[name=token]').isHidden(), true);
  await screenshot(page, 'accounts-signin');

  const wrong = await refusedSignIn(page, 'ada', 'not-the-password');
  assert.match(wrong, /^wrong username or password/i);
  assert.equal(await refusedSignIn(page, 'nobody-here', 'not-the-password'), wrong, 'an unknown user is not told apart');

  await page.fill('.signin-username', 'ada');
  await page.fill('.signin-password', 'analytical-engine-1843');
  await page.click('.signin-submit');
  await page.waitForSelector('.account-menu:not([hidden]) .account-name');
  // The list loads, empty: the example dashboards were made before accounts, and only admins see
  // a dashboard with no owner.
  await page.waitForSelector('.app-sidebar .dash-list-empty');
  assert.equal(await page.locator('.app-sidebar .dashboard-item').count(), 0);
  assert.equal(await page.locator('.signin').count(), 0);
  assert.equal(await page.locator('.account-name').textContent(), 'Ada Lovelace');
  assert.equal(await page.locator('.account-role').textContent(), 'editor');

  const cookies = await page.context().cookies(server.url);
  const session = cookies.find((c) => c.name.startsWith('boardsmith_session_'));
  assert.ok(session, JSON.stringify(cookies));
  assert.equal(session.httpOnly, true);
  assert.equal(await page.evaluate(() => document.cookie), '', 'scripts cannot read the session');
  assert.deepEqual(unexpected(page.errors), []);
  await page.context().close();
});

test('the account menu changes the password; a wrong current password is named', async () => {
  await addUser('babbage', 'difference-engine-1822', 'editor');
  const page = await newPage({ signIn: false });
  await signIn(page, 'babbage', 'difference-engine-1822');
  await page.click('.account-toggle');
  await page.click('.account-password');
  const dialog = page.locator('.password-dialog[open]');
  await dialog.waitFor();
  await dialog.locator('input[name=current]').fill('not-my-password');
  await dialog.locator('input[name=password]').fill('analytical-engine-1837');
  await dialog.locator('.password-save').click();
  await dialog.locator('.settings-field[data-param=current] .field-error:not([hidden])').waitFor();

  await dialog.locator('input[name=current]').fill('difference-engine-1822');
  await dialog.locator('.password-save').click();
  await dialog.locator('.password-done').click();
  await page.waitForSelector('.password-dialog', { state: 'detached' });

  // The new password signs in; the old one does not.
  const post = (password) => fetch(`${server.url}/api/session`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'babbage', password }),
  }).then((r) => r.status);
  assert.equal(await post('analytical-engine-1837'), 200);
  assert.equal(await post('difference-engine-1822'), 401);
  assert.deepEqual(unexpected(page.errors), []);
  await page.context().close();
});

test('sign out ends this browser’s session; sign out everywhere ends the others too', async () => {
  await addUser('lovelace', 'note-g-bernoulli-1843', 'viewer');
  const laptop = await newPage({ signIn: false });
  const phone = await newPage({ signIn: false });
  await signIn(laptop, 'lovelace', 'note-g-bernoulli-1843');
  await signIn(phone, 'lovelace', 'note-g-bernoulli-1843');

  await laptop.click('.account-toggle');
  await laptop.click('.account-signout');
  await laptop.waitForSelector('.signin[data-open]');
  assert.equal(await sessionStatus(laptop), 401);
  assert.equal(await sessionStatus(phone), 200, 'the other browser stays signed in');

  await signIn(laptop, 'lovelace', 'note-g-bernoulli-1843');
  await laptop.click('.account-toggle');
  await laptop.click('.account-signout-all');
  await laptop.waitForSelector('.signin[data-open]');
  assert.equal(await sessionStatus(laptop), 401);
  assert.equal(await sessionStatus(phone), 401, 'every session of the user ended');
  await phone.reload();
  await phone.waitForSelector('.signin[data-open]');
  for (const page of [laptop, phone]) {
    assert.deepEqual(unexpected(page.errors), []);
    await page.context().close();
  }
});

test('an admin adds a user in Settings → Users; that viewer signs in and never sees users or the audit log', async () => {
  const admin = await newPage(); // the token link: the first admin
  await admin.goto(`${server.url}/#settings`);
  await admin.waitForSelector('.settings-users[data-loaded]');
  await admin.waitForSelector('.settings-audit[data-loaded]');
  assert.equal(await admin.locator('.account-role').textContent(), 'admin');

  await admin.fill('.users-add input[name=username]', 'grace');
  await admin.selectOption('.users-add select[name=role]', 'viewer');
  await admin.click('.users-add-submit'); // no password: the server makes one, shown once
  const password = (await admin.locator('.users-secret-value').textContent()).trim();
  assert.ok(password.length >= 10, password);
  await admin.waitForSelector('.users-row[data-username="grace"][data-role="viewer"][data-state="active"]');
  await admin.waitForSelector('.audit-row[data-kind="user_created"]');
  await screenshot(admin, 'accounts-users');
  await admin.click('.users-secret-done');
  assert.equal(await admin.locator('.users-secret').count(), 0);

  const viewer = await newPage({ signIn: false });
  // Nor providers, the default model or usage: every admin route.
  const adminRequests = [];
  viewer.on('request', (r) => {
    if (/^\/(api\/admin\/|api\/usage\b|metrics\b)/.test(new URL(r.url()).pathname)) adminRequests.push(r.url());
  });
  await signIn(viewer, 'grace', password);
  assert.equal(await viewer.locator('.account-name').textContent(), 'grace');
  assert.equal(await viewer.locator('.account-role').textContent(), 'viewer');
  await viewer.click('.settings-toggle');
  await viewer.waitForSelector('.settings-view[data-open]');
  await viewer.waitForSelector('.settings-prefs[data-loaded]');
  // Give the session's answer time to arrive: the sections would be shown right after it.
  await viewer.evaluate(() => window.boardsmith.session);
  assert.equal(await viewer.locator('.settings-users').isHidden(), true);
  assert.equal(await viewer.locator('.settings-audit').isHidden(), true);
  assert.equal(await viewer.locator('.settings-users[data-loaded], .settings-audit[data-loaded]').count(), 0);
  for (const section of ['providers', 'model', 'usage']) {
    assert.equal(await viewer.locator(`.settings-${section}`).isHidden(), true, `${section} is hidden`);
  }
  // A viewer's key may only read.
  await viewer.waitForSelector('.settings-keys[data-loaded]');
  const scopes = await viewer.$$eval('.key-form input[name=scopes]', (boxes) => boxes.map((b) => [b.value, !b.disabled, b.checked]));
  assert.deepEqual(scopes.filter(([, enabled]) => enabled), [['read', true, true]]);
  assert.deepEqual(adminRequests, [], 'no admin route (users, audit log, providers, settings, usage) was requested');
  assert.equal(await viewer.evaluate(() => fetch('/api/admin/users').then((r) => r.status)), 403, 'and the server refuses them');

  // The admin makes grace an editor, then disables her: her sign-ins are refused.
  await admin.goto('about:blank');
  await admin.goto(`${server.url}/#settings`);
  const row = admin.locator('.users-row[data-username="grace"]');
  await row.waitFor();
  await row.locator('.users-role').selectOption('editor');
  await admin.waitForSelector('.users-row[data-username="grace"][data-role="editor"]');
  await admin.locator('.users-row[data-username="grace"] .users-disable').click();
  await admin.waitForSelector('.users-row[data-username="grace"][data-state="disabled"]');
  const users = await api.get('/api/admin/users');
  assert.deepEqual(users.filter((u) => u.username === 'grace').map((u) => [u.role, u.disabled]), [['editor', true]]);
  const refused = await newPage({ signIn: false });
  await refused.goto(server.url);
  await refused.waitForSelector('.signin[data-open]');
  await refusedSignIn(refused, 'grace', password);
  await refused.context().close();

  // Reset her password with a generated one, shown once, then delete her after the confirm.
  await admin.locator('.users-row[data-username="grace"] .users-reset').click();
  await admin.click('.users-reset-generate');
  const reset = (await admin.locator('.users-secret-value').textContent()).trim();
  assert.match(reset, /^[a-km-zA-HJ-NP-Z2-9]{16}$/);
  admin.once('dialog', (d) => d.accept());
  await admin.locator('.users-row[data-username="grace"] .users-delete').click();
  await admin.waitForSelector('.users-row[data-username="grace"]', { state: 'detached' });
  assert.equal((await api.get('/api/admin/users')).some((u) => u.username === 'grace'), false);
  await admin.waitForSelector('.audit-row[data-kind="user_deleted"]');

  for (const page of [admin, viewer]) {
    assert.deepEqual(unexpected(page.errors), []);
    await page.context().close();
  }
});

test('an editor’s settings show API keys and data providers, never the admin’s sections, and nothing is refused', async () => {
  await addUser('hopper', 'compiler-a0-1952-cobol', 'editor');
  const page = await newPage({ signIn: false });
  // Every request the page makes from its first load on, with the status it got.
  const failed = [];
  const adminRequests = [];
  page.on('response', (r) => {
    if (r.status() >= 400) failed.push(`${r.request().method()} ${r.url()} → ${r.status()}`);
  });
  page.on('request', (r) => {
    const path = new URL(r.url()).pathname;
    if (/^\/(api\/admin\/|api\/usage\b|metrics\b|v1\/models\b)/.test(path)) adminRequests.push(r.url());
  });
  // Signed in before the app first loads (the browser context's cookie jar): the sign-in screen's
  // own 401s are other tests' business.
  const res = await page.request.post(`${server.url}/api/session`, { data: { username: 'hopper', password: 'compiler-a0-1952-cobol' } });
  assert.equal(res.status(), 200);
  await page.goto(`${server.url}/#settings`);
  await page.waitForSelector('.settings-view[data-open]');
  await page.waitForSelector('.settings-keys[data-loaded]');
  await page.waitForSelector('.settings-data[data-loaded]');
  await page.evaluate(() => window.boardsmith.session);
  assert.equal(await page.locator('.account-role').textContent(), 'editor');

  assert.equal(await page.locator('.settings-keys').isVisible(), true);
  assert.equal(await page.locator('.settings-data').isVisible(), true);
  assert.ok(await page.locator('.data-provider-row').count() > 0, 'the health list is for everyone');
  assert.equal(await page.locator('.data-fallback').isVisible(), false, 'the fallback switch is the admin’s');
  for (const section of ['providers', 'model', 'usage', 'users', 'audit']) {
    assert.equal(await page.locator(`.settings-${section}`).isHidden(), true, `${section} is hidden`);
    assert.equal(await page.locator(`.settings-${section}[data-loaded]`).count(), 0, `${section} never loaded`);
  }

  // The scopes an editor may give a key are offered; metrics and admin are not.
  const enabled = await page.$$eval('.key-form input[name=scopes]', (boxes) => boxes.filter((b) => !b.disabled).map((b) => b.value));
  assert.deepEqual(enabled, ['read', 'write', 'agents', 'models']);
  assert.deepEqual(await page.$$eval('.key-form input[name=scopes]:checked', (boxes) => boxes.map((b) => b.value)), ['models']);
  await page.fill('.key-form input[name=name]', 'hopper’s notebook');
  await page.check('.key-form input[name=scopes][value=read]');
  await page.click('.key-create');
  await page.waitForSelector('.key-secret-value');
  await page.waitForSelector('.key-row[data-state="active"]');
  assert.equal(await page.locator('.key-row .key-scopes').textContent(), 'read, models');
  await screenshot(page, 'accounts-editor-settings');

  assert.deepEqual(adminRequests, [], 'no admin route was requested');
  assert.deepEqual(failed, [], 'no request was refused');
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('with no model set up, an editor is told to ask an admin, not sent to a section it cannot see', async () => {
  await addUser('lamarr', 'frequency-hopping-1942', 'editor');
  const page = await newPage({ signIn: false });
  const res = await page.request.post(`${server.url}/api/session`, { data: { username: 'lamarr', password: 'frequency-hopping-1942' } });
  assert.equal(res.status(), 200);
  await page.goto(server.url);
  await page.waitForSelector('.account-menu:not([hidden]) .account-name');
  await page.waitForSelector('select.chat-agent option[value="dashboard"]', { state: 'attached' });
  await page.fill('textarea.chat-input', 'Build me a gold dashboard');
  await page.click('.chat-send');
  const note = page.locator('.chat-error[data-reason="no-model"]');
  await note.waitFor();
  assert.match(await note.locator('.chat-error-text').innerText(), /^No model is set up yet\. Ask an admin /);
  assert.equal(await note.locator('.chat-open-settings').count(), 0);
  // The refusal is Chromium's logged 503.
  assert.deepEqual(page.errors.filter((e) => !/status of 503/.test(e)), []);
  await page.context().close();
});

test('with auth off the header says "owner" and offers no sign-out', async () => {
  const open = await startServer({ env: { BOARDSMITH_AUTH: '0' } });
  try {
    const page = await newPage({ signIn: false });
    await page.goto(open.url);
    await page.waitForSelector('.account-owner');
    assert.equal(await page.locator('.account-owner').textContent(), 'owner');
    assert.equal(await page.locator('.account-menu').isHidden(), true);
    assert.equal(await page.locator('.account-signout').isVisible(), false);
    assert.equal(await page.locator('.signin').count(), 0);
    assert.deepEqual(unexpected(page.errors), []);
    await page.context().close();
  } finally {
    await open.close();
  }
});

test('too many wrong passwords: the form says how long to wait', async () => {
  await addUser('mallory', 'not-going-to-guess-it', 'viewer');
  let status = 0;
  for (let i = 0; i < 100 && status !== 429; i++) {
    const res = await fetch(`${server.url}/api/session`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'mallory', password: `guess-${i}` }),
    });
    status = res.status;
    if (status === 429) assert.match(res.headers.get('retry-after') ?? '', /^\d+$/);
  }
  assert.equal(status, 429, 'the server rate-limits sign-in attempts');
  const page = await newPage({ signIn: false });
  await page.goto(server.url);
  await page.waitForSelector('.signin[data-open]');
  assert.match(await refusedSignIn(page, 'mallory', 'one-more-guess'), /^Too many attempts; try again in \d+ s$/);
  await page.context().close();
});
