// Sharing a dashboard in real Chromium against a real server: ann (an editor) makes a dashboard
// and shares it with bob to view from the Share dialog; bob, in his own browser, finds it in his
// list (and not ann's other one), opens it "View only" with no delete and no version restore,
// and the dialog only reads for him; ann gives him edit; bob reloads and deletes it.
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

/** Chromium logs every refusal a test provokes (`403 (Forbidden)` …); anything else is a failure. */
const unexpected = (errors) => errors.filter((e) => !/Failed to load resource: the server responded with a status of (401|403|404) /.test(e));

/** Opens the app without a session and signs in through the form; waits for the account menu. */
async function signIn(page, username, password) {
  await page.goto(server.url);
  await page.waitForSelector('.signin[data-open]');
  await page.fill('.signin-username', username);
  await page.fill('.signin-password', password);
  await page.click('.signin-submit');
  await page.waitForSelector('.account-menu:not([hidden]) .account-name');
}

/** A request from the page (its cookie): `[status, envelope]`. */
const call = (page, method, path, body) => page.evaluate(async ([m, p, b]) => {
  const res = await fetch(p, { method: m, headers: b ? { 'content-type': 'application/json' } : {}, body: b ? JSON.stringify(b) : undefined });
  return [res.status, await res.json()];
}, [method, path, body]);

/** Opens the Share dialog of the open dashboard. */
async function openShare(page) {
  await page.click('.share-open');
  const dialog = page.locator('.share-dialog[data-open]');
  await dialog.waitFor();
  return dialog;
}

test('ann shares a dashboard with bob to view, then to edit', async () => {
  // The operator (the server token) makes the two people.
  await api.post('/api/admin/users', { username: 'ann', password: 'ann-likes-gold-1', role: 'editor' });
  const bobUser = await api.post('/api/admin/users', { username: 'bob', password: 'bob-likes-rates-1', role: 'editor' });

  // ann makes a dashboard from a template in the UI; it opens, and it is hers.
  const ann = await newPage({ signIn: false });
  await signIn(ann, 'ann', 'ann-likes-gold-1');
  await ann.click('.dashboard-new');
  await ann.click('.template-item[data-template="gold"]');
  await ann.waitForSelector('.dashboard-view[data-mode="live"][data-access="edit"]');
  const id = await ann.getAttribute('.dashboard-view', 'data-dashboard-id');
  assert.equal(await ann.locator('.dash-view-only').isHidden(), true);
  assert.equal(await ann.getAttribute('.share-open', 'data-visibility'), 'private');
  // A second version, so the history offers a restore.
  const record = await api.get(`/api/dashboards/${id}`);
  await api.put(`/api/dashboards/${id}`, { baseVersion: record.version, state: { ...record.state, title: 'Gold for bob' } });
  await ann.waitForSelector('.dashboard-view[data-version="2"]');
  await ann.waitForSelector('.dashboard-versions .version-restore');
  // And one she keeps to herself.
  const [created, secret] = await call(ann, 'POST', '/api/dashboards', { template: 'gold', title: 'Not for bob' });
  assert.equal(created, 201, JSON.stringify(secret));

  // Shared with bob to view, from the dialog.
  let dialog = await openShare(ann);
  assert.equal((await dialog.locator('.share-owner').textContent()).trim(), 'You own this dashboard.');
  assert.equal(await dialog.locator('.share-row').count(), 0);
  await dialog.locator(`.share-add option[value="${bobUser.id}"]`).waitFor({ state: 'attached' });
  const offered = await dialog.locator('.share-add option').evaluateAll((os) => os.map((o) => o.value).filter(Boolean));
  assert.deepEqual(offered, [bobUser.id], 'the owner herself is not offered');
  await dialog.locator('.share-add').selectOption(bobUser.id);
  const row = dialog.locator('.share-row[data-user="bob"]');
  await row.waitFor();
  assert.equal(await row.locator('.share-role').inputValue(), 'view');
  assert.equal(await dialog.locator('.share-add option[value]:not([value=""])').count(), 0, 'bob is listed: not offered again');
  await screenshot(ann, 'sharing-dialog');
  await dialog.locator('.share-save').click();
  await ann.waitForSelector('.share-dialog', { state: 'detached' });
  const shared = await api.get(`/api/dashboards/${id}/access`);
  assert.deepEqual([shared.visibility, shared.users], ['private', [{ userId: bobUser.id, role: 'view' }]]);

  // bob sees it, and not ann's other one (nor the templates made before accounts).
  const bob = await newPage({ signIn: false });
  await signIn(bob, 'bob', 'bob-likes-rates-1');
  await bob.waitForSelector(`.dashboard-item[data-dashboard-id="${id}"]`);
  assert.deepEqual(await bob.$$eval('.dashboard-item', (li) => li.map((x) => x.dataset.dashboardId)), [id]);
  assert.equal(await bob.locator(`.dashboard-item[data-dashboard-id="${secret.data.id}"]`).count(), 0);
  await bob.click(`.dashboard-item[data-dashboard-id="${id}"]`);
  await bob.waitForSelector(`.dashboard-view[data-dashboard-id="${id}"][data-mode="live"][data-access="view"]`);
  assert.equal(await bob.locator('.dash-view-only').isVisible(), true);
  assert.match(await bob.getAttribute('.dash-view-only', 'title'), /ask its owner, ann, for edit access/);
  await bob.waitForSelector('.dashboard-versions:not([hidden]) .version[data-version="1"]');
  assert.equal(await bob.locator(`.dashboard-item[data-dashboard-id="${id}"] .dashboard-delete`).count(), 0, 'no delete');
  assert.equal(await bob.locator('.version-restore').count(), 0, 'no version restore');
  assert.equal(await bob.locator(`.dashboard-item[data-dashboard-id="${id}"] .dashboard-duplicate`).count(), 1, 'a copy of his own is fine');
  await screenshot(bob, 'sharing-view-only');
  // The server agrees.
  const [status, refusal] = await call(bob, 'DELETE', `/api/dashboards/${id}`);
  assert.equal(status, 403);
  assert.match(refusal.msg, /shared with you to look at, not to change; ask its owner for edit access/);
  // The dialog only reads for him.
  dialog = await openShare(bob);
  assert.equal(await dialog.getAttribute('data-readonly'), 'true');
  assert.equal((await dialog.locator('.share-owner').textContent()).trim(), 'Owned by ann.');
  assert.equal(await dialog.locator('.share-save').count(), 0);
  assert.equal(await dialog.locator('.share-add').count(), 0);
  assert.equal(await dialog.locator('.share-visibility').isDisabled(), true);
  await dialog.locator('.share-row[data-user="bob"] .share-role').waitFor();
  assert.equal(await dialog.locator('.share-row[data-user="bob"] .share-role').isDisabled(), true);
  await dialog.locator('.share-close').click();
  await bob.waitForSelector('.share-dialog', { state: 'detached' });

  // ann gives him edit.
  dialog = await openShare(ann);
  await dialog.locator('.share-row[data-user="bob"] .share-role').selectOption('edit');
  await dialog.locator('.share-save').click();
  await ann.waitForSelector('.share-dialog', { state: 'detached' });
  assert.deepEqual((await api.get(`/api/dashboards/${id}/access`)).users, [{ userId: bobUser.id, role: 'edit' }]);

  // bob reloads: he may change it now, and deletes it.
  await bob.reload();
  await bob.waitForSelector(`.dashboard-view[data-dashboard-id="${id}"][data-access="edit"]`);
  assert.equal(await bob.locator('.dash-view-only').isHidden(), true);
  await bob.waitForSelector('.dashboard-versions .version-restore');
  bob.once('dialog', (d) => d.accept());
  await bob.locator(`.dashboard-item[data-dashboard-id="${id}"] .dashboard-delete`).click();
  await bob.waitForSelector('.dashboard-view[data-deleted="true"]');
  assert.equal((await api.get('/api/dashboards')).some((d) => d.id === id && !d.deleted), false, 'deleted');

  for (const page of [ann, bob]) {
    assert.deepEqual(unexpected(page.errors), []);
    await page.context().close();
  }
});

test('the owner’s dialog shows the server’s refusal inline', async () => {
  await api.post('/api/admin/users', { username: 'cleo', password: 'cleo-likes-oil-1', role: 'editor' });
  const dan = await api.post('/api/admin/users', { username: 'dan', password: 'dan-likes-fx-11', role: 'editor' });
  const cleo = await newPage({ signIn: false });
  await signIn(cleo, 'cleo', 'cleo-likes-oil-1');
  const [, created] = await call(cleo, 'POST', '/api/dashboards', { template: 'gold' });
  await cleo.evaluate((id) => window.boardsmith.bus.emit('dashboard:open', { dashboardId: id }), created.data.id);
  await cleo.waitForSelector('.dashboard-view[data-access="edit"]');
  const dialog = await openShare(cleo);
  await dialog.locator(`.share-add option[value="${dan.id}"]`).waitFor({ state: 'attached' });
  await dialog.locator('.share-add').selectOption(dan.id);
  await dialog.locator('.share-visibility').selectOption('team');
  // dan leaves before she saves: the server refuses an unknown person.
  await api.del(`/api/admin/users/${dan.id}`);
  await dialog.locator('.share-save').click();
  const error = dialog.locator('.share-error');
  await error.waitFor({ state: 'visible' });
  assert.equal(await error.getAttribute('role'), 'alert');
  assert.match(await error.textContent(), /no user `u_\w+` to share with/);
  // Without him it saves, for the whole team.
  await dialog.locator('.share-row[data-user="dan"] .share-remove').click();
  await dialog.locator('.share-save').click();
  await cleo.waitForSelector('.share-dialog', { state: 'detached' });
  await cleo.waitForSelector('.share-open[data-visibility="team"]');
  assert.deepEqual(unexpected(cleo.errors).filter((e) => !/status of 400/.test(e)), []);
  await cleo.context().close();
});
