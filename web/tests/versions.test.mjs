// Reading a dashboard's history in real Chromium: a version opened read-only shows that version's
// title and panels (drawn with data) while the live dashboard differs, who saved it and its note,
// and Restore; a viewer opening a version sees its data too (GET …/versions/{v}/data); two versions compared list the retitled and resized panel and show its code as a
// line diff (text, never HTML).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, apiOf, newPage, closeBrowser, screenshot } from './harness.mjs';

let server;
let api;
let id;

const v1Code = "return [{ time: 1717027200, value: 1 }, { time: 1717113600, value: 2 }];";
// The second version's code: one line changed, one added (with markup that must stay text).
const v2Code = "const label = '<b>bold</b>';\nreturn [{ time: 1717027200, value: 1 }, { time: 1717113600, value: 3 }];";

const state = (title, price, extra = {}) => ({
  title,
  layout: { columns: 2 },
  panels: [
    { id: 'price', type: 'line', renderer: 'lightweight-charts', ...price },
    { id: 'notes', title: 'Notes', type: 'table', renderer: 'custom', layout: { w: 1, h: 3 }, code: 'return [{ note: "steady" }];' },
  ],
  ...extra,
});

before(async () => {
  server = await startServer();
  api = apiOf(server.url);
  const created = await api.post('/api/dashboards', {
    state: state('Desk one', { title: 'Price', layout: { w: 1, h: 3 }, code: v1Code }),
  });
  id = created.id;
  await api.put(`/api/dashboards/${id}`, {
    baseVersion: created.version,
    state: state('Desk two', { title: 'Price (daily)', layout: { w: 2, h: 4 }, code: v2Code }),
  });
});

after(async () => {
  await closeBrowser();
  await server?.close();
});

/** Opens the dashboard and waits for its version history (two or more versions). */
async function openHistory(page) {
  await page.goto(`${server.url}/#d=${id}`);
  await page.waitForSelector(`.dashboard-view[data-dashboard-id="${id}"] .panel`);
  await page.waitForSelector('.dashboard-versions .version[data-version="2"]');
}

test('a version opens read-only with its own title and panels, its author and note, then closes', async () => {
  const versions = await api.get(`/api/dashboards/${id}/versions`);
  const v1 = versions.find((v) => v.version === 1);
  const page = await newPage();
  await openHistory(page);
  assert.equal(await page.locator('.dashboard-view .dash-title').textContent(), 'Desk two');

  await page.click('.dashboard-versions .version[data-version="1"] .version-open');
  const sheet = page.locator('.history-sheet[data-kind="version"] .version-sheet[data-version="1"]');
  await sheet.waitFor();
  assert.equal(await sheet.locator('.version-sheet-title').textContent(), 'Version 1 — read-only');
  await sheet.locator('.version-dash-title').waitFor();
  assert.equal(await sheet.locator('.version-dash-title').textContent(), 'Desk one');
  // The live view is hidden meanwhile, and still shows the current version.
  assert.equal(await page.locator('.dashboard-view').isHidden(), true);
  assert.equal(await page.locator('.dashboard-view .dash-title').textContent(), 'Desk two');

  // That version's panels, with its data (GET …/versions/1/data).
  const price = sheet.locator('.readonly-grid .panel[data-panel-id="price"]');
  assert.equal(await price.locator('.panel-title').textContent(), 'Price');
  await page.waitForFunction(() => [...document.querySelectorAll('.readonly-grid .panel')]
    .every((p) => p.dataset.status === 'ok'), null, { timeout: 30_000 });
  assert.equal(await sheet.locator('.readonly-grid .panel').count(), 2);
  assert.equal(await price.evaluate((p) => getComputedStyle(p).getPropertyValue('--w').trim()), '1', 'version 1 size');

  // Who saved it and why, as the API says.
  assert.ok(v1.note, 'the first version has a note');
  assert.equal(await sheet.locator('.version-meta-line .version-note').textContent(), v1.note);
  assert.equal(await sheet.locator('.version-meta-line .version-author').textContent(), 'server token');
  assert.equal(await sheet.locator('.version-sheet-restore').count(), 1, 'the owner may restore it');
  await screenshot(page, 'versions-open');

  await sheet.locator('.sheet-close').click();
  await page.waitForSelector('.history-sheet', { state: 'detached' });
  assert.equal(await page.locator('.dashboard-view').isVisible(), true);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

/** Opens the app without a session and signs in through the form; waits for the account menu. */
async function signIn(page, username, password) {
  await page.goto(server.url);
  await page.waitForSelector('.signin[data-open]');
  await page.fill('.signin-username', username);
  await page.fill('.signin-password', password);
  await page.click('.signin-submit');
  await page.waitForSelector('.account-menu:not([hidden]) .account-name');
}

test('a viewer opens a version and sees it with data: the version’s results from the server, no code run for them', async () => {
  const vera = await api.post('/api/admin/users', { username: 'vera', password: 'vera-reads-charts-1', role: 'viewer' });
  await api.put(`/api/dashboards/${id}/access`, { visibility: 'private', users: [{ userId: vera.id, role: 'view' }] });
  const page = await newPage({ signIn: false });
  const refused = [];
  page.on('response', (r) => { if (r.status() >= 400) refused.push(`${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}`); });
  await signIn(page, 'vera', 'vera-reads-charts-1');
  const asked = [];
  page.on('request', (r) => {
    const path = new URL(r.url()).pathname;
    if (path.startsWith('/api/panels/preview') || path.includes('/versions/')) asked.push(`${r.method()} ${path}`);
  });
  await openHistory(page);
  await page.waitForSelector(`.dashboard-view[data-access="view"]`);

  await page.click('.dashboard-versions .version[data-version="1"] .version-open');
  const sheet = page.locator('.history-sheet[data-kind="version"] .version-sheet[data-version="1"]');
  await sheet.locator('.version-dash-title').waitFor();
  assert.equal(await sheet.locator('.version-dash-title').textContent(), 'Desk one');
  await page.waitForFunction(() => {
    const panels = [...document.querySelectorAll('.readonly-grid .panel')];
    return panels.length === 2 && panels.every((p) => p.dataset.status === 'ok');
  }, null, { timeout: 30_000 });
  // Version 1's own data: the notes table's row, the price chart drawn.
  assert.match(await sheet.locator('.readonly-grid .panel[data-panel-id="notes"]').textContent(), /steady/);
  assert.equal(await sheet.locator('.readonly-grid .panel[data-panel-id="price"]').evaluate((p) => p.classList.contains('has-data')), true);
  assert.equal(await sheet.locator('.version-sheet-restore').count(), 0, 'a viewer may not restore');
  assert.deepEqual(asked.filter((a) => a.includes('preview')), [], 'no preview (it needs write access)');
  assert.ok(asked.includes(`GET /api/dashboards/${id}/versions/1/data`), asked.join(', '));
  await screenshot(page, 'versions-viewer');
  // Refused: only what the app asks before signing in (401) and the chat a viewer's role may
  // not use (403); nothing of the dashboard or its versions.
  assert.deepEqual(refused.filter((r) => !/^(401 GET \/api\/(session|dashboards|chats|agents)|403 GET \/api\/(chats|agents))$/.test(r)), []);
  assert.deepEqual(page.errors.filter((e) => !/Failed to load resource: the server responded with a status of (401|403) /.test(e)), []);
  await page.context().close();
});

test('two versions compared: the retitled, resized panel and its code as a line diff', async () => {
  const page = await newPage();
  await openHistory(page);
  const compare = page.locator('.versions-compare');
  assert.equal(await compare.isDisabled(), true, 'nothing picked yet');
  await page.check('.version[data-version="1"] .version-pick');
  assert.equal(await compare.isDisabled(), true, 'one version picked');
  await page.check('.version[data-version="2"] .version-pick');
  await compare.click();

  const sheet = page.locator('.history-sheet[data-kind="compare"] .compare-sheet[data-from="1"][data-to="2"][data-loaded="true"]');
  await sheet.waitFor();
  assert.equal(await sheet.locator('.compare-side[data-side="from"] .compare-side-title').textContent(), 'Desk one');
  assert.equal(await sheet.locator('.compare-side[data-side="to"] .compare-side-title').textContent(), 'Desk two');
  assert.equal(await sheet.locator('.compare-side[data-side="to"] .version-author').textContent(), 'server token');

  const row = sheet.locator('.changes .change[data-panel-id="price"]');
  assert.equal(await row.getAttribute('data-kind'), 'changed');
  const tags = await row.locator('.change-tag').allTextContents();
  for (const t of ['retitled', 'resized', 'code changed']) assert.ok(tags.includes(t), `${t} in ${tags}`);
  assert.match(await row.locator('.change-detail').textContent(), /“Price” → “Price \(daily\)”.*size 1×3 → 2×4/);
  assert.equal(await sheet.locator('.changes .change[data-panel-id="notes"]').count(), 0, 'the unchanged panel is not listed');
  assert.equal(await sheet.locator('.changes .change[data-kind="dashboard"] .change-title').textContent(), 'Title changed');

  const diff = sheet.locator('.code-diff[data-panel-id="price"]');
  const added = await diff.locator('.diff-line[data-kind="add"] .diff-text').allTextContents();
  const removed = await diff.locator('.diff-line[data-kind="del"] .diff-text').allTextContents();
  assert.deepEqual(removed, [v1Code]);
  assert.deepEqual(added, v2Code.split('\n'));
  // The markup in the code is text.
  assert.equal(await diff.locator('b').count(), 0);
  assert.equal(await sheet.locator('.code-diff[data-panel-id="notes"]').count(), 0);
  await screenshot(page, 'versions-compare');

  // Another pair from the pickers: the same version twice has no changes.
  await sheet.locator('select.compare-to').selectOption('1');
  await page.locator('.compare-sheet[data-from="1"][data-to="1"][data-loaded="true"] .changes-empty').waitFor();
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('Restore from an opened version makes it the newest version', async () => {
  const page = await newPage();
  await openHistory(page);
  const before = (await api.get(`/api/dashboards/${id}/versions`)).length;
  await page.click('.dashboard-versions .version[data-version="1"] .version-open');
  await page.click('.version-sheet[data-version="1"] .version-sheet-restore');
  await page.waitForSelector('.history-sheet', { state: 'detached' });
  await page.waitForFunction(() => document.querySelector('.dashboard-view .dash-title').textContent === 'Desk one');
  const after = await api.get(`/api/dashboards/${id}/versions`);
  assert.equal(after.length, before + 1);
  assert.equal(Math.max(...after.map((v) => v.version)), before + 1);
  assert.equal((await api.get(`/api/dashboards/${id}`)).state.title, 'Desk one');
  assert.deepEqual(page.errors, []);
  await page.context().close();
});
