// Alerts and export in real Chromium (issue 41), against a server that judges alert rules every
// second (BOARDSMITH_ALERT_EVERY=1s): a dashboard whose metric card shows 5 has a rule "X above
// 3", so within seconds the header's bell counts 1 firing alert and the panel's bell is red,
// listing the rule's condition in words; the bell's popover lists it with its dashboard (a
// click opens that dashboard) and its notification. A viewer sees the same, with Export JSON and
// CSV but no Import. Export JSON downloads the export document (its state the dashboard's), and
// Import of that file makes a second, equal dashboard; a file that is not an export document is
// refused with the server's sentence. Download CSV of a table panel gives its rows; of a panel
// with no data, the server's 503 sentence in a toast.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startServer, apiOf, newPage, closeBrowser, screenshot } from './harness.mjs';

let server;
let api;
let id; // the dashboard with rules
let other; // one without

const state = {
  title: 'Alert desk',
  layout: { columns: 3 },
  panels: [
    { id: 'x', title: 'X', type: 'metric_card', renderer: 'custom', layout: { w: 1, h: 3 }, code: "return { value: 5, label: 'X' };" },
    {
      id: 'rows', title: 'Rows', type: 'table', renderer: 'custom', layout: { w: 1, h: 3 },
      code: "return [{ sym: 'BTC', px: 1.5 }, { sym: 'ETH, \"classic\"', px: 2 }];",
    },
    { id: 'broken', title: 'Broken', type: 'table', renderer: 'custom', layout: { w: 1, h: 3 }, code: "throw new Error('no feed today');" },
  ],
  alerts: [
    { id: 'x-high', name: 'X above 3', panelId: 'x', when: { op: '>', value: 3 } },
    { id: 'rows-low', name: 'Rows px below 1', panelId: 'rows', when: { op: '<', value: 1, field: 'px' }, severity: 'critical' },
  ],
};

before(async () => {
  server = await startServer({ env: { BOARDSMITH_ALERT_EVERY: '1s' } });
  api = apiOf(server.url);
  other = (await api.post('/api/dashboards', {
    state: { title: 'Quiet desk', layout: { columns: 1 }, panels: [{ id: 'q', title: 'Q', type: 'metric_card', renderer: 'custom', code: "return { value: 1, label: 'Q' };" }] },
  })).id;
  id = (await api.post('/api/dashboards', { state })).id;
});

after(async () => {
  await closeBrowser();
  await server?.close();
});

/** Chromium's log line for a refused request with one of `statuses` (a test's own refusals). */
const refusal = (statuses) => new RegExp(`Failed to load resource: the server responded with a status of (${statuses.join('|')}) `);

test('the bell counts the firing rule; the panel’s bell is red and lists its rules; the popover opens the dashboard', async () => {
  const page = await newPage();
  const refused = [];
  page.on('response', (r) => { if (r.status() >= 400) refused.push(`${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}`); });
  await page.goto(`${server.url}/#d=${id}`);
  await page.waitForSelector(`.dashboard-view[data-dashboard-id="${id}"] .panel[data-panel-id="x"][data-status="ok"]`);

  // The server judges every second; the bell asks every 15 s.
  await page.waitForSelector('.alerts-bell[data-state="ready"][data-count="1"]', { timeout: 45_000 });
  const firing = await api.get('/api/alerts?status=firing');
  assert.deepEqual(firing.map((a) => [a.dashboardId, a.ruleId, a.value]), [[id, 'x-high', 5]]);
  assert.equal(await page.locator('.alerts-badge').textContent(), '1');
  assert.equal(await page.getAttribute('.alerts-toggle', 'aria-label'), 'Alerts: 1 firing');

  // Each panel with rules has a bell coloured by their worst state, its rules in the tooltip.
  const xBell = page.locator('.panel[data-panel-id="x"] .panel-alerts');
  const rowsBell = page.locator('.panel[data-panel-id="rows"] .panel-alerts');
  await page.waitForSelector('.panel[data-panel-id="x"] .panel-alerts[data-state="firing"]', { timeout: 45_000 });
  await page.waitForSelector('.panel[data-panel-id="rows"] .panel-alerts[data-state="ok"]', { timeout: 45_000 });
  assert.equal(await xBell.getAttribute('data-rules'), '1');
  assert.equal(await page.locator('.panel[data-panel-id="broken"] .panel-alerts').count(), 0, 'no rules, no bell');
  assert.equal(await page.locator('.panel[data-panel-id="q"] .panel-alerts').count(), 0);
  assert.equal(await xBell.locator('.panel-alerts-toggle').getAttribute('title'), '1 alert rule on this panel\nX above 3: > 3 — Firing (5)');
  assert.equal(await rowsBell.locator('.panel-alerts-toggle').getAttribute('title'), '1 alert rule on this panel\nRows px below 1: px < 1 — OK (2)');
  const colour = (loc) => loc.locator('.panel-alerts-toggle').evaluate((b) => getComputedStyle(b).color);
  const down = await page.evaluate(() => {
    const probe = document.createElement('span');
    probe.style.color = 'var(--down)';
    document.body.append(probe);
    const c = getComputedStyle(probe).color;
    probe.remove();
    return c;
  });
  assert.equal(await colour(xBell), down, 'a firing rule’s bell is the theme’s red');
  assert.notEqual(await colour(rowsBell), down);

  // Its box: each rule's name, condition in words, state and value.
  await xBell.locator('.panel-alerts-toggle').click();
  const rule = xBell.locator('.panel-alerts-pop .panel-alert-rule[data-rule-id="x-high"]');
  await rule.waitFor();
  assert.equal(await rule.getAttribute('data-status'), 'firing');
  assert.equal(await rule.locator('.rule-name').textContent(), 'X above 3');
  assert.equal(await rule.locator('.rule-cond').textContent(), '> 3');
  assert.equal(await rule.locator('.rule-state').textContent(), 'Firing');
  assert.equal(await rule.locator('.rule-value').textContent(), 'value 5');
  await screenshot(page, 'alerts-panel');
  await page.keyboard.press('Escape');
  await xBell.locator('.panel-alerts-pop').waitFor({ state: 'detached' });

  // The bell's popover, from another dashboard: the firing alert (not the one that is ok) and
  // its notification; a click opens its dashboard.
  await page.goto(`${server.url}/#d=${other}`);
  await page.waitForSelector(`.dashboard-view[data-dashboard-id="${other}"] .panel`);
  await page.waitForSelector('.alerts-bell[data-state="ready"][data-count="1"]');
  await page.click('.alerts-toggle');
  const item = page.locator('.alerts-pop .alerts-active .alert-item');
  await item.first().waitFor();
  assert.equal(await item.count(), 1, 'only active alerts are listed');
  assert.equal(await item.getAttribute('data-rule-id'), 'x-high');
  assert.equal(await item.getAttribute('data-status'), 'firing');
  assert.equal(await item.getAttribute('data-severity'), 'warning');
  assert.equal(await item.locator('.alert-name').textContent(), 'X above 3');
  assert.equal(await item.locator('.alert-dash').textContent(), 'Alert desk');
  assert.equal(await item.locator('.alert-value').textContent(), '5');
  assert.match(await item.locator('.alert-since').textContent(), /^(just now|\d+s ago|\d+m ago)$/);
  assert.equal(await item.locator('.alert-nodata').count(), 0);
  const note = page.locator('.alerts-notes .notif-item[data-status="firing"]').first();
  await note.waitFor();
  assert.equal(await note.locator('.notif-title').textContent(), 'Fired: X above 3');
  assert.match(await note.locator('.notif-meta').textContent(), /^Alert desk · X · 5 \(threshold 3\)$/);
  await screenshot(page, 'alerts-bell');
  await item.locator('.alert-link').click();
  await page.waitForSelector(`.dashboard-view[data-dashboard-id="${id}"]`);
  await page.waitForSelector('.alerts-pop', { state: 'detached' });
  assert.equal(new URLSearchParams(new URL(page.url()).hash.slice(1)).get('d'), id);

  assert.deepEqual(refused, []);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('a viewer sees the bell, the panels’ bells, Export JSON and CSV, but no Import', async () => {
  const vera = await api.post('/api/admin/users', { username: 'vera', password: 'vera-reads-charts-1', role: 'viewer' });
  await api.put(`/api/dashboards/${id}/access`, { visibility: 'private', users: [{ userId: vera.id, role: 'view' }] });
  const page = await newPage({ signIn: false });
  const refused = [];
  page.on('response', (r) => { if (r.status() >= 400) refused.push(`${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}`); });
  const res = await page.request.post(`${server.url}/api/session`, { data: { username: 'vera', password: 'vera-reads-charts-1' } });
  assert.equal(res.status(), 200);
  await page.goto(`${server.url}/#d=${id}`);
  await page.waitForSelector(`.dashboard-view[data-dashboard-id="${id}"][data-access="view"]`);
  await page.waitForSelector('.alerts-bell[data-state="ready"][data-count="1"]', { timeout: 45_000 });
  await page.waitForSelector('.panel[data-panel-id="x"] .panel-alerts[data-state="firing"]', { timeout: 45_000 });
  assert.equal(await page.locator('.dash-export').isVisible(), true);
  assert.equal(await page.locator('.panel[data-panel-id="rows"] .panel-csv').isVisible(), true);
  assert.equal(await page.locator('.dashboard-import').isVisible(), false);
  assert.equal(await page.locator('.dashboard-new').isVisible(), false);
  // Not on the other dashboard, which is not shared with her: one alert, not two.
  assert.deepEqual((await page.evaluate(() => fetch('/api/alerts').then((r) => r.json()))).data.map((a) => a.dashboardId).filter((d) => d !== id), []);
  // The chat a viewer's role may not use is refused (403), nothing of alerts or the dashboard.
  assert.deepEqual(refused.filter((r) => !/^403 GET \/api\/(chats|agents)$/.test(r)), []);
  assert.deepEqual(page.errors.filter((e) => !refusal([403]).test(e)), []);
  await page.context().close();
});

test('Export JSON downloads the dashboard’s export document; Import of it makes a second, equal dashboard', async () => {
  const page = await newPage();
  await page.goto(`${server.url}/#d=${id}`);
  await page.waitForSelector(`.dashboard-view[data-dashboard-id="${id}"] .panel[data-panel-id="x"]`);

  const [download] = await Promise.all([page.waitForEvent('download'), page.click('.dash-export')]);
  assert.equal(download.suggestedFilename(), 'Alert desk.boardsmith.json');
  const file = join(server.dir, 'exported.boardsmith.json');
  await download.saveAs(file);
  const doc = JSON.parse(await readFile(file, 'utf8'));
  const current = await api.get(`/api/dashboards/${id}`);
  assert.equal(doc.format, 'boardsmith.dashboard');
  assert.equal(doc.formatVersion, 1);
  assert.deepEqual(doc.state, current.state);
  assert.deepEqual(doc.state.alerts.map((a) => a.id), ['x-high', 'rows-low'], 'the rules travel with it');

  const before = (await api.get('/api/dashboards')).map((d) => d.id);
  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.click('.dashboard-import')]);
  await chooser.setFiles(file);
  await page.waitForFunction((known) => {
    const shown = document.querySelector('.dashboard-view')?.dataset.dashboardId;
    return shown && !known.includes(shown);
  }, before);
  const imported = await page.evaluate(() => document.querySelector('.dashboard-view').dataset.dashboardId);
  const after = await api.get('/api/dashboards');
  assert.equal(after.length, before.length + 1);
  assert.deepEqual((await api.get(`/api/dashboards/${imported}`)).state, current.state);
  await page.waitForSelector(`.dashboard-item[data-dashboard-id="${imported}"]`);
  await page.waitForSelector(`.dashboard-view[data-dashboard-id="${imported}"] .panel[data-panel-id="x"]`);
  assert.equal(await page.locator('.dash-title').textContent(), 'Alert desk');

  // A file that is not an export document: the server's sentence in the toast.
  const bad = join(server.dir, 'not-an-export.json');
  await writeFile(bad, JSON.stringify({ format: 'something.else', state: {} }));
  const expected = await page.evaluate(() => fetch('/api/dashboards/import', {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ format: 'something.else', state: {} }),
  }).then(async (r) => ({ status: r.status, msg: (await r.json()).msg })));
  assert.equal(expected.status, 400);
  const [chooser2] = await Promise.all([page.waitForEvent('filechooser'), page.click('.dashboard-import')]);
  await chooser2.setFiles(bad);
  const toast = page.locator('.dash-toast[data-kind="error"]');
  await toast.waitFor();
  assert.equal(await toast.textContent(), `Import failed: ${expected.msg}`);
  assert.equal((await api.get('/api/dashboards')).length, after.length, 'nothing was made');
  await screenshot(page, 'alerts-import-refused');
  assert.deepEqual(page.errors.filter((e) => !refusal([400]).test(e)), []);
  await page.context().close();
});

test('Download CSV of a table panel gives its rows; of a panel with no data, the server’s sentence', async () => {
  const page = await newPage();
  await page.goto(`${server.url}/#d=${id}`);
  await page.waitForSelector(`.dashboard-view[data-dashboard-id="${id}"] .panel[data-panel-id="rows"][data-status="ok"]`);
  await page.waitForSelector(`.panel[data-panel-id="broken"][data-status="error"]`);
  const link = page.locator('.panel[data-panel-id="rows"] .panel-csv');
  assert.equal(await link.getAttribute('href'), `/api/dashboards/${id}/panels/rows/csv`);
  assert.equal(await link.getAttribute('aria-label'), 'Download CSV of Rows');

  const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
  assert.match(download.suggestedFilename(), /^rows(-demo-data)?\.csv$/);
  const text = await readFile(await download.path(), 'utf8');
  assert.deepEqual(text.split(/\r?\n/).filter(Boolean), ['sym,px', 'BTC,1.5', '"ETH, ""classic""",2']);

  // No data: 503, whose message the toast shows.
  const expected = await page.evaluate((path) => fetch(path).then(async (r) => ({ status: r.status, msg: (await r.json()).msg })),
    `/api/dashboards/${id}/panels/broken/csv`);
  assert.equal(expected.status, 503);
  assert.match(expected.msg, /no feed today/);
  await page.click('.panel[data-panel-id="broken"] .panel-csv');
  const toast = page.locator('.dash-toast[data-kind="error"]');
  await toast.waitFor();
  assert.equal(await toast.textContent(), expected.msg.charAt(0).toUpperCase() + expected.msg.slice(1));
  await screenshot(page, 'alerts-csv-refused');
  assert.deepEqual(page.errors.filter((e) => !refusal([503]).test(e)), []);
  await page.context().close();
});
