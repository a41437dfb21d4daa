// The settings page against a real server, in headless Chromium: a provider added with its key
// (pointing at the scripted mock model on loopback) brings its models to the default-model
// picker and its key never reaches the page; the default model is set; an API key is made,
// shown once, works, and is revoked; usage after a /v1/chat/completions call is a painted
// chart and a table; server errors show next to the field they name; chat retention is set,
// kept, refused at 0 by the server next to its field, and cleared; narrow screens work.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startServer, apiOf, newPage, closeBrowser, screenshot, paintedCanvases } from './harness.mjs';

/** One turn that reports usage (the call the usage chart counts); anything else a plain answer. */
const script = {
  turns: [
    {
      match: { last_user_contains: 'count my tokens' },
      steps: [{ type: 'text', text: 'Counted.' }],
      usage: { input_tokens: 1200, output_tokens: 300 },
    },
    { steps: [{ type: 'text', text: 'The settings test script has no turn for this message.' }] },
  ],
};

let server;
let api;
/** The provider key typed into the page: it must never come back. */
const secret = `sk-lab-${randomBytes(12).toString('hex')}`;

before(async () => {
  server = await startServer({ script });
  api = apiOf(server.url);
});

after(async () => {
  await closeBrowser();
  await server?.close();
});

/**
 * Loads the app on the settings page and waits until every section has loaded. (From the app
 * itself, going to `/#settings` would only change the fragment: no reload.)
 */
async function openSettings(page) {
  await page.goto('about:blank');
  await page.goto(`${server.url}/#settings`);
  for (const s of ['providers', 'model', 'keys', 'usage']) {
    await page.waitForSelector(`.settings-${s}[data-loaded]`, { state: 'attached' });
  }
  await page.waitForFunction(() => ['ok', 'empty', 'error'].includes(document.querySelector('.settings-usage').dataset.state));
}

/** The page's errors but the `400 (Bad Request)` lines Chromium logs for the ones a test provokes. */
const unexpected = (errors) => errors.filter((e) => !/Failed to load resource: the server responded with a status of 400 /.test(e));

/** Waits (up to 10 s) until `selector` holds a painted canvas; returns how many. */
async function painted(page, selector) {
  const until = Date.now() + 10_000;
  for (;;) {
    const n = await paintedCanvases(page, selector);
    if (n > 0 || Date.now() > until) return n;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Everything in the page a person or a script could read: text, markup, every field's value. */
async function pageHolds(page, needle) {
  return page.evaluate((n) => document.documentElement.outerHTML.includes(n)
    || document.body.innerText.includes(n)
    || [...document.querySelectorAll('input, textarea, select')].some((el) => el.value.includes(n)), needle);
}

test('a provider added with its key brings its models to the picker; the key never shows; the default model is set', async () => {
  const page = await newPage();
  await openSettings(page);
  // The mock's environment provider is listed as such, without a Remove button.
  const envRow = page.locator('.provider-row[data-provider-key="openai"]');
  assert.equal(await envRow.getAttribute('data-origin'), 'env');
  assert.equal(await envRow.locator('.origin-badge').first().innerText(), 'ENV');
  assert.equal(await envRow.locator('.provider-remove').count(), 0);
  assert.equal(await page.locator('select[name=defaultModel] option[value="lab/mock-model"]').count(), 0);

  // A bad base URL: the server's message, next to that field.
  const form = page.locator('form.provider-form');
  await form.locator('[name=kind]').selectOption('openai');
  await form.locator('[name=key]').fill('lab');
  await form.locator('[name=baseUrl]').fill('ftp://127.0.0.1/v1');
  await form.locator('[name=apiKey]').fill(secret);
  await form.locator('[name=defaultModel]').fill('mock-model');
  await form.locator('.provider-save').click();
  const urlError = form.locator('.settings-field[data-param="baseUrl"] .field-error');
  await urlError.waitFor();
  assert.match(await urlError.innerText(), /baseUrl.*http:\/\/ or https:\/\//);
  assert.equal(await page.locator('.provider-row[data-provider-key="lab"]').count(), 0);

  // Fixed: saved, listed as made here with the key's hint only.
  await form.locator('[name=baseUrl]').fill(`${server.mockUrl}/v1`);
  await form.locator('.provider-save').click();
  const row = page.locator('.provider-row[data-provider-key="lab"][data-origin="admin"]');
  await row.waitFor();
  assert.equal(await urlError.isVisible(), false, 'the error went with the fix');
  assert.match(await row.locator('.provider-keyinfo').innerText(), new RegExp(`…${secret.slice(-4)}`));
  assert.equal(await form.locator('[name=apiKey]').inputValue(), '', 'the key field is cleared once sent');

  // Its model is in the picker now (GET /v1/models), grouped under the provider.
  const option = page.locator('select[name=defaultModel] optgroup[label="lab"] option[value="lab/mock-model"]');
  await option.waitFor({ state: 'attached' });
  assert.equal(await pageHolds(page, secret), false, 'the provider key is nowhere in the page');
  const listed = await api.get('/api/admin/providers');
  assert.equal(JSON.stringify(listed).includes(secret), false);

  // Pick it as the default model.
  await page.locator('select[name=defaultModel]').selectOption('lab/mock-model');
  await page.locator('.default-model-save').click();
  await page.waitForFunction(() => document.querySelector('.default-model-effective').textContent.includes('lab/mock-model'));
  const settings = await api.get('/api/admin/settings');
  assert.equal(settings.settings.defaultModel, 'lab/mock-model');
  assert.equal(settings.effectiveDefaultModel, 'lab/mock-model');

  // The default model uses it, so it cannot be removed: the server says why, on its row.
  page.once('dialog', (d) => d.accept());
  await row.locator('.provider-remove').click();
  const rowError = row.locator('.row-error');
  await rowError.waitFor();
  assert.match(await rowError.innerText(), /defaultModel/);

  // After a reload: still there, still without the key.
  await openSettings(page);
  await page.locator('select[name=defaultModel] option[value="lab/mock-model"]').waitFor({ state: 'attached' });
  assert.equal(await page.locator('select[name=defaultModel]').inputValue(), 'lab/mock-model');
  assert.equal(await pageHolds(page, secret), false);
  assert.deepEqual(unexpected(page.errors), []);
  assert.equal(page.errors.length, 2, 'the 2 refusals this test provokes');
  await page.close();
});

test('an API key is made with its scopes, shown once with a copy button, works, and is revoked', async () => {
  const page = await newPage();
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
  await openSettings(page);
  const form = page.locator('form.key-form');

  // Errors from the server sit by the field they name: no scope, a blank name.
  await form.locator('input[name=name]').fill('ci-bot');
  for (const box of await form.locator('input[name=scopes]:checked').all()) await box.uncheck();
  await form.locator('.key-create').click();
  const scopeError = form.locator('.settings-field[data-param="scopes"] .field-error');
  await scopeError.waitFor();
  assert.match(await scopeError.innerText(), /`scopes` must name at least one/);
  await form.locator('input[name=scopes][value=models]').check();
  await form.locator('input[name=scopes][value=read]').check();
  await form.locator('input[name=name]').fill('   ');
  await form.locator('.key-create').click();
  const nameError = form.locator('.settings-field[data-param="name"] .field-error');
  await nameError.waitFor();
  assert.match(await nameError.innerText(), /`name` must be 1 to 100 characters/);
  assert.equal(await scopeError.isVisible(), false);

  await form.locator('input[name=name]').fill('ci-bot');
  await form.locator('.key-create').click();
  const shown = page.locator('.key-secret .key-secret-value');
  await shown.waitFor();
  const key = await shown.innerText();
  assert.match(key, /^bsk-[A-Za-z0-9_-]{43}$/);
  await page.locator('.key-copy').click();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), key);

  const [made] = (await api.get('/api/keys')).filter((k) => k.name === 'ci-bot');
  assert.deepEqual(made.scopes, ['read', 'models']);
  const row = page.locator(`.key-row[data-key-id="${made.id}"]`);
  await row.waitFor();
  assert.equal(await row.getAttribute('data-state'), 'active');
  assert.match(await row.locator('.key-prefix').innerText(), new RegExp(`^${made.prefix}`));
  assert.equal((await row.innerText()).includes(key), false, 'the list shows the prefix only');

  // The key works as a Bearer token for its scope.
  const models = await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(models.status, 200);
  await screenshot(page, 'settings-keys');

  // Shown once: after a reload the secret is gone.
  await openSettings(page);
  assert.equal(await page.locator('.key-secret').count(), 0);
  assert.equal(await pageHolds(page, key), false, 'the secret is not shown again');

  // Revoke, after a confirm; the list says revoked and the key stops working.
  let asked = '';
  page.once('dialog', (d) => { asked = d.message(); d.accept(); });
  await page.locator(`.key-row[data-key-id="${made.id}"] .key-revoke`).click();
  await page.waitForSelector(`.key-row[data-key-id="${made.id}"][data-state="revoked"]`);
  assert.match(asked, /Revoke the key “ci-bot”/);
  assert.match(await page.locator(`.key-row[data-key-id="${made.id}"] .key-state`).innerText(), /revoked/);
  assert.equal(await page.locator(`.key-row[data-key-id="${made.id}"] .key-revoke`).count(), 0);
  const refused = await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(refused.status, 401);
  assert.deepEqual(unexpected(page.errors), []);
  assert.equal(page.errors.length, 2, 'the 2 refusals this test provokes');
  await page.close();
});

test('usage: an empty range says so; after a model call the chart is painted and the table shows the model', async () => {
  const page = await newPage();
  await openSettings(page);
  const usage = page.locator('.settings-usage');
  assert.equal(await usage.getAttribute('data-state'), 'empty');
  assert.equal(await usage.locator('.usage-empty').innerText(), 'No model calls in this range');
  assert.equal(await usage.locator('.usage-table').count(), 0);
  const range = await usage.locator('form.usage-range').evaluate((f) => ({ from: f.from.value, to: f.to.value }));
  assert.equal((Date.parse(range.to) - Date.parse(range.from)) / 86400_000, 29, 'the last 30 days');

  // Prices for the mock model, then one call through the OpenAI-compatible API.
  await api.put('/api/admin/models', { provider: 'lab', id: 'mock-model', inputPrice: 2, outputPrice: 8 });
  const res = await fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'lab/mock-model', messages: [{ role: 'user', content: 'Please count my tokens' }] }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  assert.equal((await res.json()).choices[0].message.content, 'Counted.');

  await openSettings(page);
  await page.waitForSelector('.settings-usage[data-state="ok"]');
  const chart = page.locator('.usage-chart');
  assert.equal(await chart.getAttribute('data-metric'), 'cost', 'priced calls: cost first');
  assert.ok(await painted(page, '.usage-chart') > 0, 'the usage chart is painted');
  const model = page.locator('.usage-row[data-model="lab/mock-model"]');
  const cells = await model.locator('td').allInnerTexts();
  // 1,200 input tokens at $2 and 300 output at $8 per million: $0.0048.
  assert.deepEqual(cells, ['lab/mock-model', '1', '0', '1,200', '300', '0', '$0.0048']);

  // Tokens instead of cost: the same chart, redrawn.
  await usage.locator('select[name=metric]').selectOption('tokens');
  assert.equal(await chart.getAttribute('data-metric'), 'tokens');
  assert.ok(await painted(page, '.usage-chart') > 0);
  await usage.locator('select[name=metric]').selectOption('cost');

  // A range before any call: empty again, and no number appears.
  await usage.locator('form.usage-range').evaluate((f) => {
    f.from.value = '2020-01-01';
    f.to.value = '2020-01-31';
    f.to.dispatchEvent(new Event('change', { bubbles: true }));
  });
  await page.waitForSelector('.settings-usage[data-state="empty"]');
  assert.equal(await chart.isVisible(), false);
  // A backwards range: the server's message by the form.
  await usage.locator('input[name=from]').fill('2020-02-10');
  await page.waitForSelector('.settings-usage[data-state="error"]');
  assert.match(await usage.locator('.settings-field[data-param="from"] .field-error').innerText(), /`from` is after `to`/);

  await openSettings(page);
  await page.waitForSelector('.settings-usage[data-state="ok"]');
  assert.ok(await painted(page, '.usage-chart') > 0);
  await page.locator('.settings-usage').scrollIntoViewIfNeeded();
  await screenshot(page, 'settings');
  assert.deepEqual(unexpected(page.errors), []);
  assert.equal(page.errors.length, 1, 'the 1 refusals this test provokes');
  await page.close();
});

test('chat retention: 30 days is saved and kept after a reload; 0 shows the server’s error by the field; empty keeps chats', async () => {
  const before = await api.get('/api/admin/settings');
  const page = await newPage();
  await openSettings(page);
  const section = page.locator('.settings-retention[data-loaded]');
  await section.waitFor();
  const input = section.locator('input[name=chatRetentionDays]');
  assert.equal(await section.locator('.settings-field[data-param=chatRetentionDays] .field-label').textContent(), 'Delete chats untouched for N days');

  await input.fill('30');
  await section.locator('.retention-save').click();
  await page.waitForFunction(() => /30 days are deleted/.test(document.querySelector('.retention-effect').textContent));
  let settings = await api.get('/api/admin/settings');
  assert.equal(settings.settings.chatRetentionDays, 30);
  assert.equal(settings.settings.defaultModel ?? null, before.settings.defaultModel ?? null, 'the default model is kept');

  await openSettings(page);
  await page.locator('.settings-retention[data-loaded]').waitFor();
  assert.equal(await page.locator('input[name=chatRetentionDays]').inputValue(), '30', 'still 30 after a reload');

  // 0: the server refuses it, naming the field; the message is shown next to it.
  await page.fill('input[name=chatRetentionDays]', '0');
  await page.click('.retention-save');
  const fieldError = page.locator('.settings-retention .settings-field[data-param=chatRetentionDays] .field-error');
  await fieldError.waitFor();
  assert.match(await fieldError.textContent(), /chatRetentionDays/);
  assert.equal(await page.getAttribute('input[name=chatRetentionDays]', 'aria-invalid'), 'true');
  assert.equal((await api.get('/api/admin/settings')).settings.chatRetentionDays, 30, 'nothing saved');

  // Empty: chats are kept for good (null).
  await page.fill('input[name=chatRetentionDays]', '');
  await page.click('.retention-save');
  await page.waitForFunction(() => /kept for good/.test(document.querySelector('.retention-effect').textContent));
  assert.equal(await fieldError.isVisible(), false, 'the error went with the fix');
  settings = await api.get('/api/admin/settings');
  assert.equal(settings.settings.chatRetentionDays ?? null, null);
  await screenshot(page, 'settings-retention');
  assert.deepEqual(unexpected(page.errors), []);
  assert.equal(page.errors.length, 1, 'the one refusal this test provokes');
  await page.close();
});

test('the gear opens settings from the app and Close goes back; on a narrow screen it fits', async () => {
  const page = await newPage({ width: 390, height: 844 });
  await page.goto(server.url);
  await page.waitForSelector('.app-sidebar .dashboard-item', { state: 'attached' });
  assert.equal(await page.locator('.settings-view').isVisible(), false);
  await page.click('.settings-toggle');
  await page.waitForSelector('.settings-usage[data-loaded]');
  assert.match(new URL(page.url()).hash, /(^#|&)settings(&|$)/);
  assert.ok(await page.locator('.settings-providers').isVisible());
  assert.equal(await page.locator('.app-main').isVisible(), false);
  await page.waitForSelector('.settings-usage[data-state="ok"]');
  // Nothing wider than the screen: the page does not scroll sideways.
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.equal(overflow, 0);
  assert.ok(await painted(page, '.usage-chart') > 0, 'the chart is painted at phone width');
  await screenshot(page, 'settings-narrow');

  // The header tabs leave settings for the pane they name; the gear comes back.
  await page.click('.tabs button[data-pane="chat"]');
  assert.ok(await page.locator('.chat-pane').isVisible());
  assert.equal(await page.locator('.settings-view').isVisible(), false);
  assert.doesNotMatch(new URL(page.url()).hash, /settings/);
  await page.click('.settings-toggle');
  await page.click('.settings-close');
  assert.equal(await page.locator('.settings-view').isVisible(), false);
  assert.doesNotMatch(new URL(page.url()).hash, /settings/);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the MCP section gives this server\'s endpoint and client configurations that work as written', async () => {
  const page = await newPage();
  await openSettings(page);
  const endpoint = `${server.url}/mcp`;
  assert.equal(await page.locator('.settings-mcp .mcp-url').textContent(), endpoint);
  const http = JSON.parse(await page.locator('.mcp-config[data-kind="http"] pre').textContent());
  assert.equal(http.mcpServers.boardsmith.url, endpoint);
  const stdio = JSON.parse(await page.locator('.mcp-config[data-kind="stdio"] pre').textContent());
  assert.deepEqual(stdio.mcpServers.boardsmith.args, ['mcp']);
  // The endpoint answers an MCP client's first request with the header the config shows.
  const auth = http.mcpServers.boardsmith.headers.Authorization.replace('bsk-…', server.token);
  const r = await fetch(endpoint, {
    method: 'POST',
    headers: { authorization: auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'settings-test', version: '1' } } }),
  });
  assert.equal(r.status, 200, await r.text());
  await page.locator('.settings-mcp').scrollIntoViewIfNeeded();
  await screenshot(page, 'settings-mcp');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the chat lists user-facing agents; “Show demo and test agents” brings the rest, in this browser', async () => {
  const page = await newPage();
  await page.goto(server.url);
  await page.waitForSelector('select.chat-agent option[value="dashboard"]', { state: 'attached' });
  const listed = () => page.$$eval('select.chat-agent option', (os) => os.map((o) => o.value));
  const before = await listed();
  assert.ok(before.includes('dashboard') && before.includes('researchDesk'), before.join(', '));
  assert.deepEqual(before.filter((k) => /^(demo|test)/i.test(k)), [], 'no demo or test agent by default');
  await openSettings(page);
  await page.waitForSelector('.settings-prefs[data-loaded]', { state: 'attached' });
  await page.check('.settings-prefs input[name="showDemoAgents"]');
  await page.click('.settings-close');
  const after = await listed();
  assert.ok(after.includes('demoModeReact') && after.includes('dashboard'), after.join(', '));
  // A preference of this browser: a reload keeps it.
  await page.reload();
  await page.waitForSelector('select.chat-agent option[value="demoModeReact"]', { state: 'attached' });
  assert.deepEqual(page.errors, []);
  await page.close();
});
