// Alerts & reports in real Chromium (issue 41), against a server whose outbound policy lets it
// post to a loopback receiver this file starts (BOARDSMITH_OUTBOUND_ALLOW=127.0.0.1:<port>), and
// which renders with the Chromium on PATH. An admin makes a webhook channel in Settings → Alerts
// & reports, sees its secret once, and "Send test" says Delivered while the receiver gets a POST
// signed with that secret; an e-mail channel's test says why it cannot send (no relay), and it
// is removed; a URL the policy refuses is refused next to the URL. The mail relay is saved, its
// password never comes back (the field says "•••• stored" after a reload) and the other settings
// stay. On the Reports page (the sidebar's Reports button) a report of the open dashboard is
// made (a too-frequent schedule refused next to the cron), run now — the receiver gets a report
// whose contentBase64 is a PDF — its history listed, paused and deleted. The dashboard's Download
// PDF and PNG (a menu beside Export JSON) give those files. A server without Chromium disables the buttons with its reason.
// A viewer gets no Reports button.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { createHmac } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { startServer, apiOf, newPage, closeBrowser, screenshot } from './harness.mjs';

let server;
let api;
let receiver;
let hookUrl;
let id; // the dashboard reports are made of
/** Every request the receiver got: {method, path, headers, body}. */
const received = [];

const state = {
  title: 'Report desk',
  layout: { columns: 2 },
  panels: [
    { id: 'x', title: 'X value', type: 'metric_card', renderer: 'custom', layout: { w: 1, h: 3 }, code: "return { value: 5, label: 'X' };" },
    { id: 'rows', title: 'Rows', type: 'table', renderer: 'custom', layout: { w: 1, h: 3 }, code: "return [{ sym: 'BTC', px: 1.5 }];" },
  ],
};

before(async () => {
  receiver = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      received.push({ method: req.method, path: req.url, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    });
  });
  await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
  const port = receiver.address().port;
  hookUrl = `http://127.0.0.1:${port}/hook`;
  server = await startServer({ env: { BOARDSMITH_OUTBOUND_ALLOW: `127.0.0.1:${port}` } });
  api = apiOf(server.url);
  id = (await api.post('/api/dashboards', { state })).id;
});

after(async () => {
  await closeBrowser();
  await server?.close();
  receiver?.close();
});

/** The server's answer to a call, refusals included: {status, code, msg, data}. */
async function call(srv, method, path, body) {
  const res = await fetch(srv.url + path, {
    method,
    headers: { authorization: `Bearer ${srv.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, ...(await res.json()) };
}

/** Waits (up to `ms`) until the receiver has a request `pred` accepts; returns it. */
async function receivedWhere(pred, ms = 30_000) {
  const until = Date.now() + ms;
  for (;;) {
    const hit = received.find(pred);
    if (hit) return hit;
    if (Date.now() > until) throw new Error(`the receiver got nothing matching in ${ms} ms: ${received.map((r) => `${r.method} ${r.path} ${r.headers['x-boardsmith-event']}`).join('; ')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Chromium's log line for a refused request with one of `statuses` (a test's own refusals). */
const refusal = (statuses) => new RegExp(`Failed to load resource: the server responded with a status of (${statuses.join('|')}) `);

/** Loads the app on the settings page and waits for Alerts & reports. */
async function openAlerting(page) {
  await page.goto('about:blank');
  await page.goto(`${server.url}/#settings`);
  await page.waitForSelector('.settings-alerting[data-loaded]');
}

/** Everything in the page a person or a script could read: text, markup, every field's value. */
async function pageHolds(page, needle) {
  return page.evaluate((n) => document.documentElement.outerHTML.includes(n)
    || document.body.innerText.includes(n)
    || [...document.querySelectorAll('input, textarea, select')].some((el) => el.value.includes(n)), needle);
}

test('a webhook made in Settings shows its secret once; Send test says Delivered and the receiver gets a signed POST', async () => {
  const page = await newPage();
  page.on('dialog', (d) => d.accept());
  await openAlerting(page);
  const renderer = await api.get('/api/renderer');
  assert.equal(renderer.available, true, 'this test needs the Chromium on PATH');
  assert.equal(await page.locator('.renderer-status').textContent(), 'PDF and PNG: available');
  assert.equal(await page.locator('.renderer-status').getAttribute('data-available'), 'true');
  await page.waitForSelector('.channels-empty');

  // A host the outbound policy refuses: the server's sentence by the URL field.
  const form = page.locator('form.channel-form');
  await form.locator('input[name=name]').fill('elsewhere');
  await form.locator('input[name=url]').fill('http://10.0.0.1/x');
  await form.locator('.channel-create').click();
  const urlError = form.locator('.settings-field[data-param="url"] .field-error');
  await urlError.waitFor();
  assert.match(await urlError.textContent(), /^url: `10\.0\.0\.1:80` is not an allowed outbound host.*BOARDSMITH_OUTBOUND_ALLOW/);
  assert.deepEqual(await api.get('/api/channels'), [], 'nothing was made');

  await form.locator('input[name=name]').fill('desk');
  await form.locator('input[name=url]').fill(hookUrl);
  await form.locator('select[name=preset]').selectOption('json');
  await form.locator('.channel-create').click();
  const secretEl = page.locator('.channel-secret .channel-secret-value');
  await secretEl.waitFor();
  const secret = await secretEl.textContent();
  assert.match(secret, /^whsec_[0-9a-f]{16,}$/);
  assert.equal(await urlError.count(), 0, 'the error went with the success');
  const row = page.locator('.channel-row[data-name="desk"]');
  await row.waitFor();
  assert.equal(await row.getAttribute('data-type'), 'webhook');
  assert.equal(await row.locator('.channel-kind').textContent(), 'Webhook');
  assert.equal(await row.locator('.channel-target').textContent(), new URL(hookUrl).origin);
  assert.equal(JSON.stringify(await api.get('/api/channels')).includes(secret), false, 'the list never holds the secret');
  await screenshot(page, 'reports-settings-secret');

  await row.locator('.channel-test').click();
  const result = row.locator('.channel-result');
  await result.waitFor();
  assert.equal(await result.getAttribute('data-status'), 'sent');
  assert.equal(await result.textContent(), 'Delivered');
  const hit = await receivedWhere((r) => r.path === '/hook' && r.headers['x-boardsmith-event'] === 'alert.firing');
  assert.equal(hit.method, 'POST');
  const body = JSON.parse(hit.body);
  assert.equal(body.ruleId, 'test');
  assert.deepEqual(body.notify, ['desk']);
  // Signed with the secret shown once: t=<unix>,v1=HMAC-SHA256("<t>.<body>").
  const [, t, v1] = /^t=(\d+),v1=([0-9a-f]+)$/.exec(hit.headers['x-boardsmith-signature']);
  assert.equal(v1, createHmac('sha256', secret).update(`${t}.${hit.body}`).digest('hex'));

  // Dismissed, the secret is gone from the page.
  await page.click('.channel-secret-done');
  assert.equal(await pageHolds(page, secret), false);

  // An e-mail channel, recipients one per line: its test says why it cannot send.
  await form.locator('select[name=type]').selectOption('email');
  await form.locator('input[name=name]').fill('desk-mail');
  await form.locator('textarea[name=to]').fill('ana@example.com\nDesk <desk@example.com>');
  await form.locator('.channel-create').click();
  const mailRow = page.locator('.channel-row[data-name="desk-mail"]');
  await mailRow.waitFor();
  assert.equal(await page.locator('.channel-secret').count(), 0, 'e-mail has no secret');
  assert.equal(await mailRow.locator('.channel-target').textContent(), 'ana@example.com, Desk <desk@example.com>');
  const expected = await call(server, 'POST', '/api/channels/desk-mail/test');
  assert.equal(expected.status, 422);
  await mailRow.locator('.channel-test').click();
  const mailResult = mailRow.locator('.channel-result[data-status="failed"]');
  await mailResult.waitFor();
  assert.equal(await mailResult.textContent(), expected.msg);
  assert.match(expected.msg, /no mail relay/);

  // Removed after the confirm.
  await mailRow.locator('.channel-remove').click();
  await mailRow.waitFor({ state: 'detached' });
  assert.deepEqual((await api.get('/api/channels')).map((c) => c.name), ['desk']);
  assert.deepEqual(page.errors.filter((e) => !refusal([400, 422]).test(e)), []);
  await page.context().close();
});

test('the mail relay is saved without its password ever coming back; blank keeps it; the other settings stay', async () => {
  const password = 'relay-pw-7c1e9d';
  await api.put('/api/admin/settings', { ...(await api.get('/api/admin/settings')).settings, chatRetentionDays: 30 });
  const page = await newPage();
  await openAlerting(page);
  assert.equal(await page.locator('.mail-relay').getAttribute('data-source'), 'none');
  assert.equal(await page.locator('.mail-relay').textContent(), 'No mail relay: e-mail channels cannot send.');
  assert.equal(await page.locator('.mail-clear').count(), 0);

  const form = page.locator('form.mail-form');
  // A host the server refuses: its sentence by the host field.
  await form.locator('input[name=host]').fill('smtp example');
  await form.locator('input[name=from]').fill('alerts@example.com');
  await form.locator('.mail-save').click();
  const hostError = form.locator('.settings-field[data-param="host"] .field-error');
  await hostError.waitFor();
  const refused = await call(server, 'PUT', '/api/admin/settings', { mail: { host: 'smtp example', from: 'alerts@example.com' } });
  assert.equal(refused.status, 400);
  assert.equal(await hostError.textContent(), refused.msg);
  // Checked here: a port that is no port.
  await form.locator('input[name=host]').fill('smtp.example.com');
  await form.locator('input[name=port]').fill('70000');
  await form.locator('.mail-save').click();
  await form.locator('.settings-field[data-param="port"] .field-error').waitFor();

  await form.locator('input[name=port]').fill('');
  await form.locator('select[name=security]').selectOption('starttls');
  await form.locator('input[name=username]').fill('alerts');
  await form.locator('input[name=password]').fill(password);
  await form.locator('input[name=from]').fill('Boardsmith <alerts@example.com>');
  await form.locator('.mail-save').click();
  await page.waitForSelector('.mail-relay[data-source="settings"]');
  const relay = await api.get('/api/admin/mail');
  assert.deepEqual(relay, { source: 'settings', server: 'smtp.example.com:587', security: 'starttls', from: 'Boardsmith <alerts@example.com>', signsIn: true });
  assert.equal(await page.locator('.mail-relay').textContent(),
    'Mail goes through smtp.example.com:587 (STARTTLS, signed in) from Boardsmith <alerts@example.com>, as set in these settings.');
  let settings = await api.get('/api/admin/settings');
  assert.equal(settings.mailPasswordSet, true);
  assert.deepEqual(settings.settings.mail, { host: 'smtp.example.com', security: 'starttls', username: 'alerts', from: 'Boardsmith <alerts@example.com>' });
  assert.equal(settings.settings.chatRetentionDays, 30, 'saving the relay kept the other settings');
  assert.equal(JSON.stringify(settings).includes(password), false, 'GET /api/admin/settings never holds the password');
  assert.equal(await form.locator('input[name=password]').inputValue(), '', 'the field is cleared once saved');

  // After a reload: the field is empty and says a password is stored; the page never holds it.
  await openAlerting(page);
  const pw = page.locator('form.mail-form input[name=password]');
  assert.equal(await pw.inputValue(), '');
  assert.equal(await pw.getAttribute('placeholder'), '•••• stored');
  assert.equal(await page.locator('form.mail-form input[name=host]').inputValue(), 'smtp.example.com');
  assert.equal(await pageHolds(page, password), false);
  await page.locator('.settings-alerting').scrollIntoViewIfNeeded();
  await screenshot(page, 'reports-settings-relay');

  // Saved again with the password left blank: the stored one stays.
  await page.locator('form.mail-form input[name=from]').fill('desk@example.com');
  await page.locator('form.mail-form .mail-save').click();
  await page.waitForFunction(() => document.querySelector('.mail-relay')?.textContent.includes('from desk@example.com'));
  settings = await api.get('/api/admin/settings');
  assert.equal(settings.settings.mail.from, 'desk@example.com');
  assert.equal(settings.mailPasswordSet, true, 'a blank field keeps the stored password');

  // "Remove the stored password" sends "": none is stored.
  await page.check('form.mail-form input[name=removePassword]');
  assert.equal(await pw.isDisabled(), true);
  await page.locator('form.mail-form .mail-save').click();
  await page.waitForSelector('form.mail-form input[name=password][placeholder="none"]');
  assert.equal((await api.get('/api/admin/settings')).mailPasswordSet, false);
  assert.equal((await api.get('/api/admin/mail')).signsIn, true, 'the user name stays');

  // Remove relay: mail null, the rest kept.
  page.on('dialog', (d) => d.accept());
  await page.click('form.mail-form .mail-clear');
  await page.waitForSelector('.mail-relay[data-source="none"]');
  settings = await api.get('/api/admin/settings');
  assert.equal(settings.settings.mail, undefined);
  assert.equal(settings.settings.chatRetentionDays, 30);
  assert.equal(await api.get('/api/admin/mail'), null);
  assert.deepEqual(page.errors.filter((e) => !refusal([400]).test(e)), []);
  await page.context().close();
});

test('a report made on the Reports page runs now: the receiver gets a PDF; its history, pause and delete', async () => {
  received.length = 0;
  const page = await newPage();
  page.on('dialog', (d) => d.accept());
  await page.goto(`${server.url}/#d=${id}`);
  await page.waitForSelector(`.dashboard-view[data-dashboard-id="${id}"] .panel[data-panel-id="x"]`);
  await page.click('.dashboard-reports');
  await page.waitForSelector('.reports-view[data-open] .reports-page[data-loaded]');
  assert.equal(new URLSearchParams(new URL(page.url()).hash.slice(1)).has('reports'), true);
  await page.waitForSelector('.reports-empty');
  await page.click('.reports-new');
  const form = page.locator('form.report-form[data-mode="new"]');
  await form.waitFor();
  // The open dashboard, and the browser's zone, by default.
  assert.equal(await form.locator('select[name=dashboardId]').inputValue(), id);
  const zone = await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone);
  assert.equal(await form.locator('input[name=timezone]').inputValue(), zone);
  assert.equal(await form.locator('select[name=format]').inputValue(), 'pdf');

  await screenshot(page, 'reports-form');
  // Too often: the server's sentence by the schedule.
  await form.locator('input[name=name]').fill('Morning pack');
  await form.locator('input[name=cron]').fill('* * * * *');
  await form.locator('input[name=notify][value="desk"]').check();
  await form.locator('.report-save').click();
  const cronError = form.locator('.settings-field[data-param="cron"] .field-error');
  await cronError.waitFor();
  assert.match(await cronError.textContent(), /^cron: `\* \* \* \* \*` runs 1m apart; reports run at most every \d+m$/);
  assert.deepEqual(await api.get('/api/reports'), []);

  await form.locator('input[name=cron]').fill('0 7 * * 1-5');
  await form.locator('input[name=timezone]').fill('Europe/London');
  await form.locator('.report-save').click();
  await form.waitFor({ state: 'detached' });
  const [report] = await api.get('/api/reports');
  assert.deepEqual(
    { dashboardId: report.dashboardId, name: report.name, cron: report.cron, timezone: report.timezone, format: report.format, notify: report.notify, paused: report.paused },
    { dashboardId: id, name: 'Morning pack', cron: '0 7 * * 1-5', timezone: 'Europe/London', format: 'pdf', notify: ['desk'], paused: false },
  );
  const row = page.locator(`.report-row[data-report-id="${report.id}"]`);
  await row.waitFor();
  assert.equal(await row.locator('.report-name').textContent(), 'Morning pack');
  assert.equal(await row.locator('.report-dash').textContent(), 'Report desk');
  assert.equal(await row.locator('.report-schedule').textContent(), report.schedule);
  assert.equal(await row.locator('.report-schedule').getAttribute('title'), '0 7 * * 1-5');
  assert.equal(await row.locator('.report-zone').textContent(), 'Europe/London');
  assert.equal(await row.locator('.report-format').textContent(), 'PDF');
  assert.equal(await row.locator('.report-notify').textContent(), 'desk');
  assert.ok(report.nextRunAt > Date.now());
  assert.equal(await row.locator('.report-next').textContent(), await page.evaluate((ms) => new Date(ms).toLocaleString(), report.nextRunAt));

  // Run now: the receiver gets the report with the PDF in contentBase64.
  await row.locator('.report-run').click();
  await row.locator('.report-run[data-busy]').waitFor();
  const result = row.locator('.report-result');
  await result.waitFor({ timeout: 90_000 });
  assert.equal(await result.getAttribute('data-status'), 'sent');
  assert.equal(await result.textContent(), 'Sent to desk');
  const hit = await receivedWhere((r) => r.headers['x-boardsmith-event'] === 'report');
  const sent = JSON.parse(hit.body);
  assert.equal(sent.type, 'report');
  assert.equal(sent.reportId, report.id);
  assert.equal(sent.dashboardId, id);
  assert.equal(sent.contentType, 'application/pdf');
  const pdf = Buffer.from(sent.contentBase64, 'base64');
  assert.equal(pdf.subarray(0, 4).toString('latin1'), '%PDF');
  assert.equal(pdf.length, sent.size);

  // History: the run, its size and what the channel did.
  await row.locator('.report-history-toggle').click();
  const run = page.locator('.report-history .report-history-run').first();
  await run.waitFor();
  const [stored] = await api.get(`/api/reports/${report.id}/runs`);
  assert.equal(stored.status, 'sent');
  assert.equal(stored.bytes, pdf.length);
  assert.equal(await run.getAttribute('data-status'), 'sent');
  assert.equal(await run.locator('.run-status').textContent(), 'Sent');
  assert.equal(await run.locator('.run-size').textContent(), `${(pdf.length / 1000).toFixed(1)} kB`);
  assert.equal(await run.locator('.run-delivery').textContent(), 'desk: sent (HTTP 200)');
  assert.equal(await run.locator('.run-when').textContent(), await page.evaluate((ms) => new Date(ms).toLocaleString(), stored.finishedAt));
  await screenshot(page, 'reports-page');

  // Edit: paused, no next run.
  await row.locator('.report-edit').click();
  const edit = page.locator('form.report-form[data-mode="edit"]');
  await edit.waitFor();
  assert.equal(await edit.locator('input[name=cron]').inputValue(), '0 7 * * 1-5');
  assert.equal(await edit.locator('input[name=notify][value="desk"]').isChecked(), true);
  await edit.locator('input[name=paused]').check();
  await edit.locator('.report-save').click();
  await page.waitForSelector(`.report-row[data-report-id="${report.id}"][data-paused="true"]`);
  assert.equal(await row.locator('.report-next').textContent(), '—');
  assert.equal((await api.get(`/api/reports/${report.id}`)).paused, true);

  // Delete after the confirm.
  await row.locator('.report-delete').click();
  await row.waitFor({ state: 'detached' });
  await page.waitForSelector('.reports-empty');
  assert.deepEqual(await api.get('/api/reports'), []);

  // Close goes back to the dashboard.
  await page.click('.reports-close');
  await page.waitForSelector(`.dashboard-view[data-dashboard-id="${id}"]`, { state: 'visible' });
  assert.equal(new URLSearchParams(new URL(page.url()).hash.slice(1)).has('reports'), false);
  assert.deepEqual(page.errors.filter((e) => !refusal([400]).test(e)), []);
  await page.context().close();
});

test('Download PDF and PNG in the dashboard’s title row give the rendered files under the server’s names', async () => {
  const page = await newPage();
  await page.goto(`${server.url}/#d=${id}`);
  await page.waitForSelector(`.dashboard-view[data-dashboard-id="${id}"] .panel[data-panel-id="x"]`);
  await page.waitForSelector('.dash-render-group[data-renderer="available"]');
  const toggle = page.locator('.dash-render-toggle');
  assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
  await toggle.click();
  assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
  const items = page.locator('.dash-render-menu .dash-render');
  assert.deepEqual(await items.allTextContents(), ['Download PDF', 'Download PNG']);
  // Escape closes the menu (once it is listening: its first item has the focus).
  await page.waitForFunction(() => document.activeElement?.classList.contains('dash-render'));
  await page.keyboard.press('Escape');
  await page.locator('.dash-render-menu').waitFor({ state: 'detached' });

  await toggle.click();
  const pdfDownload = page.waitForEvent('download', { timeout: 90_000 });
  await page.click('.dash-render[data-format="pdf"]');
  // One at a time: busy and disabled until the file comes.
  await page.waitForSelector('.dash-render-toggle[data-busy="pdf"]');
  assert.equal(await toggle.isDisabled(), true);
  assert.equal(await toggle.locator('.label').textContent(), 'Rendering…');
  assert.equal(await page.locator('.dash-render-menu').count(), 0);
  await screenshot(page, 'reports-download-busy');
  const pdf = await pdfDownload;
  assert.match(pdf.suggestedFilename(), /^report-desk-\d{4}-\d{2}-\d{2}\.pdf$/);
  assert.equal((await readFile(await pdf.path())).subarray(0, 4).toString('latin1'), '%PDF');
  await page.waitForSelector('.dash-render-toggle:not([data-busy]):not([disabled])');
  assert.equal(await toggle.locator('.label').textContent(), 'PDF / PNG');

  await toggle.click();
  const pngDownload = page.waitForEvent('download', { timeout: 90_000 });
  await page.click('.dash-render[data-format="png"]');
  const png = await pngDownload;
  assert.match(png.suggestedFilename(), /^report-desk-\d{4}-\d{2}-\d{2}\.png$/);
  assert.deepEqual([...(await readFile(await png.path())).subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('a viewer gets no Reports button; an editor does', async () => {
  const vera = await api.post('/api/admin/users', { username: 'vera', password: 'vera-reads-charts-1', role: 'viewer' });
  await api.post('/api/admin/users', { username: 'eddie', password: 'eddie-edits-charts-1', role: 'editor' });
  await api.put(`/api/dashboards/${id}/access`, { visibility: 'team', users: [{ userId: vera.id, role: 'view' }] });
  for (const [username, password, shown] of [['vera', 'vera-reads-charts-1', false], ['eddie', 'eddie-edits-charts-1', true]]) {
    const page = await newPage({ signIn: false });
    const res = await page.request.post(`${server.url}/api/session`, { data: { username, password } });
    assert.equal(res.status(), 200);
    await page.goto(`${server.url}/#d=${id}`);
    await page.waitForSelector(`.dashboard-view[data-dashboard-id="${id}"][data-access]`);
    await page.evaluate(() => window.boardsmith.session);
    assert.equal(await page.locator('.dashboard-reports').isVisible(), shown, username);
    // Everyone who sees the dashboard may download it.
    await page.waitForSelector('.dash-render-group[data-renderer="available"]');
    assert.equal(await page.locator('.dash-render-toggle').isEnabled(), true, username);
    await page.context().close();
  }
});

test('without Chromium the download buttons and Run now say why; Settings says so too', async () => {
  const bare = await startServer({ env: { BOARDSMITH_CHROMIUM: '/nonexistent/chromium' } });
  try {
    const bareApi = apiOf(bare.url);
    const reason = (await bareApi.get('/api/renderer')).reason;
    assert.match(reason, /BOARDSMITH_CHROMIUM/);
    const dash = (await bareApi.post('/api/dashboards', { state })).id;
    const page = await newPage();
    await page.goto(`${bare.url}/#d=${dash}`);
    await page.waitForSelector('.dash-render-group[data-renderer="unavailable"]');
    const toggle = page.locator('.dash-render-toggle');
    assert.equal(await toggle.isDisabled(), true);
    assert.equal(await toggle.getAttribute('title'), reason);

    // Run now: the 503's sentence.
    await bareApi.post('/api/channels', { name: 'desk', type: 'email', to: ['a@example.com'] });
    const r = await bareApi.post('/api/reports', { dashboardId: dash, cron: '@daily', notify: ['desk'] });
    const expected = await call(bare, 'POST', `/api/reports/${r.id}/run`);
    assert.equal(expected.status, 503);
    await page.click('.dashboard-reports');
    const row = page.locator(`.report-row[data-report-id="${r.id}"]`);
    await row.waitFor();
    await row.locator('.report-run').click();
    const result = row.locator('.report-result[data-status="failed"]');
    await result.waitFor();
    assert.equal(await result.textContent(), expected.msg);

    await page.goto(`${bare.url}/#settings`);
    await page.waitForSelector('.settings-alerting[data-loaded]');
    assert.equal(await page.locator('.renderer-status').getAttribute('data-available'), 'false');
    assert.equal(await page.locator('.renderer-status').textContent(), `PDF and PNG: not available. ${reason}`);
    assert.deepEqual(page.errors.filter((e) => !refusal([503]).test(e)), []);
    await page.context().close();
  } finally {
    await bare.close();
  }
});
