// Sharing a dashboard in real Chromium against a real server: ann (an editor) makes a dashboard
// and shares it with bob to view from the Share dialog; bob, in his own browser, finds it in his
// list (and not ann's other one), opens it "View only" with no delete and no version restore,
// and the dialog only reads for him; ann gives him edit; bob reloads and deletes it.
//
// Share links: a visitor with no account (a fresh browser, no cookie) opens `/s/<token>` and
// sees the dashboard read-only and live, and nothing of the app (no sign-in, sidebar, chat or
// settings; the API refuses the context); a revoked link ends the open page (the socket closes
// with 1008), an expired one says so; the Share dialog makes a link, shows its URL once, lists
// it and revokes it.
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

// ---- share links ----------------------------------------------------------------------------

const CHIP = 'Shared view · read-only';
const EXPIRED = 'This link has expired.';
const REVOKED = 'This link was revoked or does not exist.';

/** A dashboard from the gold template, made by the operator (the server token). */
async function goldDashboard(title) {
  const created = await api.post('/api/dashboards', { template: 'gold', title });
  return created.id;
}

/** A fresh browser (no cookie) that records the paths it asks the server for, sockets too. */
async function visitor() {
  const page = await newPage({ signIn: false });
  page.paths = [];
  const record = (u) => page.paths.push(new URL(u).pathname);
  page.on('request', (r) => record(r.url()));
  page.on('websocket', (ws) => record(ws.url()));
  // How each socket closed (code, reason): `window.socketCloses`.
  await page.addInitScript(() => {
    const Native = window.WebSocket;
    window.socketCloses = [];
    window.WebSocket = class extends Native {
      constructor(...args) {
        super(...args);
        this.addEventListener('close', (e) => window.socketCloses.push([e.code, e.reason]));
      }
    };
  });
  return page;
}

/** The codes and reasons the page's sockets closed with. */
const socketCloses = (page) => page.evaluate(() => window.socketCloses);

/** Opens a share link's page and waits for the dashboard with its panels' data. */
async function openLink(page, token, id) {
  await page.goto(`${server.url}/s/${token}`);
  await page.waitForSelector(`.app-shared .dashboard-view[data-dashboard-id="${id}"][data-mode="live"]`);
  await page.waitForSelector('.app-shared .panel[data-status="ok"]');
}

/** The sentence a link's page ends with: `.shared-gone[data-reason]`. */
async function goneText(page, reason, timeout = 15_000) {
  const gone = page.locator(`.shared-gone[data-reason="${reason}"]`);
  await gone.waitFor({ timeout });
  return (await gone.locator('.shared-gone-text').textContent()).trim();
}

/** The app's parts a visitor never gets. */
async function appParts(page) {
  const parts = ['.app-sidebar', '.app-chat', '.app-settings', '.settings-toggle', '.account-menu', '.signin', '.share-open', '.dashboard-list'];
  const found = [];
  for (const sel of parts) if (await page.locator(sel).count()) found.push(sel);
  return found;
}

test('a share link shows the dashboard read-only and live to a visitor without an account; revoked, the page says so', async () => {
  const id = await goldDashboard('Gold for visitors');
  const made = await api.post(`/api/dashboards/${id}/share`, { vars: { symbol: 'XAGUSD', timeframe: '1D' } });
  assert.match(made.token, /^[A-Za-z0-9_-]{43}$/);
  assert.ok(made.url.endsWith(`/s/${made.token}`), made.url);
  assert.match(made.link.id, /^sl_/);
  assert.deepEqual([made.link.dashboardId, made.link.allowVars, made.link.expiresAt, made.link.uses], [id, false, null, 0]);
  assert.ok(!JSON.stringify(made.link).includes(made.token), 'the link record does not hold the token');
  assert.deepEqual((await api.get(`/api/dashboards/${id}/share`)).map((l) => l.id), [made.link.id]);

  const page = await visitor();
  await openLink(page, made.token, id);
  assert.equal((await page.locator('.dash-title').textContent()).trim(), 'Gold for visitors');
  assert.equal((await page.locator('.dash-shared-chip').textContent()).trim(), CHIP);
  assert.equal(await page.getAttribute('.dashboard-view', 'data-access'), 'view');
  assert.deepEqual(await appParts(page), [], 'no sign-in, sidebar, chat, settings or Share');
  // Every panel, with the link's variable values, fixed; demo data still says so.
  await page.waitForFunction(() => [...document.querySelectorAll('.panel')].every((p) => p.dataset.status === 'ok'), null, { timeout: 30_000 });
  assert.equal(await page.locator('.panel').count(), 7);
  assert.equal(await page.locator('.dashboard-vars[data-locked]').count(), 1);
  assert.equal(await page.locator('.dashboard-vars [name="symbol"]').inputValue(), 'XAGUSD');
  assert.equal(await page.locator('.dashboard-vars [name="symbol"]').isDisabled(), true);
  assert.equal(await page.locator('.dashboard-vars [name="timeframe"]').isDisabled(), true);
  assert.ok(await page.locator('.panel[data-demo="true"]').count() > 0, 'demo data is marked');
  assert.equal(await page.locator('.panel[data-demo="true"] .demo-badge').first().innerText(), 'DEMO DATA');
  await page.waitForSelector('.live-status[data-state="open"]');
  await screenshot(page, 'share-link-view');

  // Only the link: the rest of the API is closed to this browser.
  const [listStatus] = await call(page, 'GET', '/api/dashboards');
  assert.equal(listStatus, 401);
  const [oneStatus] = await call(page, 'GET', `/api/dashboards/${id}`);
  assert.equal(oneStatus, 401);
  assert.equal(await page.locator('.signin').count(), 0, 'a 401 brings up no sign-in screen here');
  assert.ok(!page.paths.includes('/api/session'), 'the page never asks who is signed in');
  assert.ok(!page.paths.includes('/ws'), 'nor opens the app’s socket');
  assert.ok(page.paths.includes(`/api/shared/${made.token}/ws`), 'it opens the link’s');

  // A save shows live.
  const record = await api.get(`/api/dashboards/${id}`);
  await api.put(`/api/dashboards/${id}`, { baseVersion: record.version, state: { ...record.state, title: 'Gold, live for visitors' } });
  await page.waitForSelector(`.dashboard-view[data-version="${record.version + 1}"]`);
  await page.waitForFunction(() => document.querySelector('.dash-title')?.textContent === 'Gold, live for visitors');
  assert.equal(await page.title(), 'Gold, live for visitors · Boardsmith');
  const uses = (await api.get(`/api/dashboards/${id}/share`))[0];
  assert.ok(uses.uses >= 1, `the visit is counted: ${JSON.stringify(uses)}`);
  assert.ok(Number.isFinite(uses.lastUsedAt), 'and when');

  // Revoked while open: the socket closes (1008) and the page says so, without a reload.
  await page.evaluate(() => { window.stillTheSamePage = true; });
  const sockets = page.paths.filter((p) => p.endsWith('/ws')).length;
  await api.del(`/api/dashboards/${id}/share/${made.link.id}`);
  assert.equal(await goneText(page, 'revoked'), REVOKED);
  assert.equal(await page.evaluate(() => window.stillTheSamePage), true, 'no reload');
  const closes = await socketCloses(page);
  assert.deepEqual(closes.map(([code]) => code), [1008], JSON.stringify(closes));
  await page.waitForTimeout(1500);
  assert.equal(page.paths.filter((p) => p.endsWith('/ws')).length, sockets, 'no new socket after the 1008');
  assert.equal(await page.locator('.panel').count(), 0, 'the dashboard is gone from the page');
  assert.deepEqual(await api.get(`/api/dashboards/${id}/share`), []);
  // Opened again, the same.
  await page.goto(`${server.url}/s/${made.token}`);
  assert.equal(await goneText(page, 'revoked'), REVOKED);
  // A token that never was.
  await page.goto(`${server.url}/s/${'x'.repeat(43)}`);
  assert.equal(await goneText(page, 'revoked'), REVOKED);
  await screenshot(page, 'share-link-revoked');
  assert.deepEqual(unexpected(page.errors), []);
  await page.context().close();
});

test('an expired link says so, opened late or while open', async () => {
  const id = await goldDashboard('Gold for a second');
  const short = await api.post(`/api/dashboards/${id}/share`, { expiresIn: 1 });
  assert.ok(Number.isFinite(short.link.expiresAt));
  await new Promise((r) => setTimeout(r, 1500));
  const page = await visitor();
  await page.goto(`${server.url}/s/${short.token}`);
  assert.equal(await goneText(page, 'expired'), EXPIRED);
  assert.deepEqual(await appParts(page), []);
  await screenshot(page, 'share-link-expired');

  // Open when it expires: the server ends the socket (1008) and the page says which.
  const soon = await api.post(`/api/dashboards/${id}/share`, { expiresIn: 6 });
  await page.goto(`${server.url}/s/${soon.token}`);
  await page.waitForSelector(`.app-shared .dashboard-view[data-dashboard-id="${id}"][data-mode="live"]`);
  assert.equal(await goneText(page, 'expired', 30_000), EXPIRED);
  assert.deepEqual((await socketCloses(page)).map(([code]) => code), [1008]);
  assert.deepEqual(unexpected(page.errors).filter((e) => !/status of 410/.test(e)), []);
  await page.context().close();
});

test('a link may let visitors change the variables', async () => {
  const id = await goldDashboard('Gold to play with');
  const made = await api.post(`/api/dashboards/${id}/share`, { vars: { symbol: 'XAGUSD' }, allowVars: true, label: 'Playground' });
  assert.deepEqual([made.link.label, made.link.allowVars], ['Playground', true]);
  const page = await visitor();
  await openLink(page, made.token, id);
  assert.equal(await page.locator('.dashboard-vars[data-locked]').count(), 0);
  const symbol = page.locator('.dashboard-vars [name="symbol"]');
  assert.equal(await symbol.isDisabled(), false);
  assert.equal(await symbol.inputValue(), 'XAGUSD');
  await page.waitForFunction(() => [...document.querySelectorAll('.panel')].every((p) => p.dataset.status === 'ok'), null, { timeout: 30_000 });
  const quote = page.locator('.panel[data-panel-id="gold-quote"]');
  const seq = Number(await quote.getAttribute('data-seq'));
  await symbol.selectOption('XAUUSD');
  // The server re-runs the panels for the new value: newer data comes.
  await page.waitForFunction((s) => Number(document.querySelector('.panel[data-panel-id="gold-quote"]').dataset.seq) > s
    && document.querySelector('.panel[data-panel-id="gold-quote"]').dataset.status === 'ok', seq, { timeout: 30_000 });
  // The dashboard itself is not changed by a visitor's choice.
  assert.equal((await api.get(`/api/dashboards/${id}`)).version, 1);
  assert.deepEqual(unexpected(page.errors), []);
  await page.context().close();
});

test('the Share dialog makes a link, shows its URL once, lists it and revokes it', async () => {
  const id = await goldDashboard('Gold from the dialog');
  const page = await newPage();
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
  await page.goto(`${server.url}/#d=${id}`);
  await page.waitForSelector(`.dashboard-view[data-dashboard-id="${id}"][data-mode="live"][data-access="edit"]`);
  // The link shows the values the view shows now.
  await page.locator('.dashboard-vars [name="symbol"]').selectOption('XAGUSD');

  let dialog = await openShare(page);
  const links = dialog.locator('.share-links');
  await links.waitFor();
  await links.locator('.share-none', { hasText: 'No links yet.' }).waitFor();
  assert.deepEqual(await links.locator('.share-link-expiry option').evaluateAll((os) => os.map((o) => o.value)), ['86400', '604800', '2592000', '']);
  await links.locator('.share-link-label').fill('For the desk');
  await links.locator('.share-link-expiry').selectOption('86400');
  await links.locator('.share-link-vars').check();
  await links.locator('.share-link-create').click();
  const url = links.locator('.share-link-created:not([hidden]) .share-link-url');
  await url.waitFor();
  const shown = (await url.textContent()).trim();
  assert.match(shown, /\/s\/[A-Za-z0-9_-]{43}$/);
  assert.match(await links.locator('.share-link-once').textContent(), /will not be shown again/);
  await links.locator('.share-link-copy').click();
  await page.waitForFunction(() => document.querySelector('.share-link-copy')?.textContent === 'Copied');
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), shown);
  // Listed, as the server has it.
  const row = links.locator('.share-link');
  await row.waitFor();
  assert.equal(await row.count(), 1);
  assert.equal((await row.locator('.share-link-name').textContent()).trim(), 'For the desk');
  const meta = await row.locator('.share-link-meta').textContent();
  assert.match(meta, /Expires in (24h|1d)/);
  assert.match(meta, /Not used yet/);
  assert.match(meta, /Visitors can change variables/);
  const [saved] = await api.get(`/api/dashboards/${id}/share`);
  assert.equal(await row.getAttribute('data-link-id'), saved.id);
  assert.equal(saved.label, 'For the desk');
  assert.equal(saved.allowVars, true);
  assert.deepEqual(saved.vars, { symbol: 'XAGUSD', timeframe: '1D' });
  assert.ok(Math.abs(saved.expiresAt - (saved.createdAt + 86_400_000)) < 5_000, JSON.stringify(saved));
  await screenshot(page, 'share-links-dialog');

  // Closed and opened again: listed, the URL not shown any more.
  await dialog.locator('.share-close').click();
  await page.waitForSelector('.share-dialog', { state: 'detached' });
  dialog = await openShare(page);
  await dialog.locator(`.share-link[data-link-id="${saved.id}"]`).waitFor();
  assert.equal(await dialog.locator('.share-link-created:not([hidden])').count(), 0);
  assert.equal(await dialog.locator('.share-link-url').count(), 0);

  // The URL works for a visitor, with the values it was made with, until it is revoked here.
  const guest = await visitor();
  const token = shown.split('/s/')[1];
  await openLink(guest, token, id);
  assert.equal(await guest.locator('.dashboard-vars [name="symbol"]').inputValue(), 'XAGUSD');
  assert.equal(await guest.locator('.dashboard-vars [name="symbol"]').isDisabled(), false);
  await dialog.locator(`.share-link[data-link-id="${saved.id}"] .share-link-revoke`).click();
  await dialog.locator('.share-link').waitFor({ state: 'detached' });
  await dialog.locator('.share-none', { hasText: 'No links yet.' }).waitFor();
  assert.deepEqual(await api.get(`/api/dashboards/${id}/share`), []);
  assert.equal(await goneText(guest, 'revoked'), REVOKED);
  assert.deepEqual(unexpected(page.errors), []);
  assert.deepEqual(unexpected(guest.errors), []);
  await guest.context().close();
  await page.context().close();
});

test('someone who may only look gets no Links section, and the server refuses them a link', async () => {
  const eveUser = await api.post('/api/admin/users', { username: 'eve', password: 'eve-likes-tin-11', role: 'editor' });
  const id = await goldDashboard('Gold to look at');
  await api.put(`/api/dashboards/${id}/access`, { visibility: 'private', users: [{ userId: eveUser.id, role: 'view' }] });
  const eve = await newPage({ signIn: false });
  await signIn(eve, 'eve', 'eve-likes-tin-11');
  await eve.evaluate((d) => window.boardsmith.bus.emit('dashboard:open', { dashboardId: d }), id);
  await eve.waitForSelector(`.dashboard-view[data-dashboard-id="${id}"][data-access="view"]`);
  const dialog = await openShare(eve);
  await dialog.locator('.share-owner').waitFor();
  assert.equal(await dialog.locator('.share-links').count(), 0);
  const [status, refusal] = await call(eve, 'POST', `/api/dashboards/${id}/share`, {});
  assert.equal(status, 403);
  assert.ok(refusal.msg && refusal.msg.length > 10, refusal.msg);
  assert.deepEqual(unexpected(eve.errors), []);
  await eve.context().close();
});
