// Review mode in real Chromium: with "Review agent edits" on, the agent's edits (the scripted mock
// model's mutate) wait as a draft that the analyst whose chat made it sees — a banner, the review
// sheet with the changes, code, test results and the draft drawn — and a second viewer (the
// server token, another browser context) does not, until it is accepted: then it is a published
// version the second viewer's live view shows. A rejected draft leaves no trace in the published
// history; a draft of two panels is accepted and rejected one panel at a time. A chat's own
// review switch (under the composer) makes the agent's edits in that chat drafts, on a dashboard
// that is not in review mode itself.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, apiOf, newPage, closeBrowser, screenshot } from './harness.mjs';
import { script as shared } from './script.mjs';

/** Two panels in one edit: accepted and rejected one by one. */
const addPair = `async (state) => {
  state.panels.push(
    { id: 'desk-usd', title: 'Dollar index', type: 'metric_card', renderer: 'custom', layout: { w: 1, h: 2 }, code: "return [{ label: 'DXY', value: 104.2 }];" },
    { id: 'desk-rates', title: 'Real rates', type: 'metric_card', renderer: 'custom', layout: { w: 1, h: 2 }, code: "return [{ label: '10y real', value: 1.9 }];" },
  );
  return state;
}`;
// Before the shared turns: their last one answers any message.
const script = {
  turns: [
    {
      match: { last_user_contains: 'dollar and rates', has_tool_results: false },
      steps: [{ type: 'tool_call', name: 'mutate', arguments: { code: addPair }, fragments: 2 }],
    },
    { match: { last_user_contains: 'dollar and rates', has_tool_results: true }, steps: [{ type: 'text', text: 'Added both.', chunk: 6 }] },
    ...shared.turns,
  ],
};

let server;
let api;
let analyst; // ann's page
let dashboardId;

/** Chromium logs the refusals the test provokes: the app before signing in (401), a viewer asking for a draft it has not (404). */
const unexpected = (errors) => errors.filter((e) => !/Failed to load resource: the server responded with a status of (401|404) /.test(e));

before(async () => {
  server = await startServer({ script });
  api = apiOf(server.url);
  await api.post('/api/admin/users', { username: 'ann', password: 'review-every-draft-1', role: 'editor' });
});

after(async () => {
  await closeBrowser();
  await server?.close();
});

async function signIn(page, username, password) {
  await page.goto(server.url);
  await page.waitForSelector('.signin[data-open]');
  await page.fill('.signin-username', username);
  await page.fill('.signin-password', password);
  await page.click('.signin-submit');
  await page.waitForSelector('.account-menu:not([hidden]) .account-name');
}

/** Sends `message` from the chat pane and waits for the run to end. */
async function ask(page, message) {
  await page.waitForFunction(() => document.querySelector('select.chat-agent')?.value === 'dashboard');
  const runs = await page.locator('.chat-runs .chat-user').count();
  await page.fill('textarea.chat-input', message);
  await page.click('.chat-send');
  await page.waitForFunction((n) => document.querySelectorAll('.chat-runs .chat-user').length > n, runs);
  await page.waitForFunction(() => !document.querySelector('.chat-pane').classList.contains('streaming'), null, { timeout: 60_000 });
}

const panelIds = (page) => page.$$eval('.dashboard-view .dashboard-grid > .panel', (ps) => ps.map((p) => p.dataset.panelId));
const publishedPanels = async () => (await api.get(`/api/dashboards/${dashboardId}`)).state.panels.map((p) => p.id);

test('the analyst builds a dashboard and switches review mode on', async () => {
  analyst = await newPage({ signIn: false });
  await signIn(analyst, 'ann', 'review-every-draft-1');
  await ask(analyst, 'Build me a gold desk');
  await analyst.waitForSelector('.dashboard-view[data-version="1"] .panel[data-panel-id="desk-kline"]');
  dashboardId = await analyst.locator('.dashboard-view').getAttribute('data-dashboard-id');
  assert.match(dashboardId, /^db_/);

  const toggle = analyst.locator('.review-toggle');
  await toggle.waitFor();
  assert.equal(await toggle.getAttribute('aria-pressed'), 'false');
  assert.equal(await analyst.locator('.review-banner').count(), 0);
  await toggle.click();
  await analyst.waitForSelector('.review-toggle[aria-pressed="true"]');
  assert.deepEqual(await api.get(`/api/dashboards/${dashboardId}/review`), { enabled: true, hasDraft: false });
  assert.deepEqual(unexpected(analyst.errors), []);
});

test('the agent’s edit is a draft the analyst reviews and a second viewer does not see until accepted', async () => {
  const versionsBefore = await api.get(`/api/dashboards/${dashboardId}/versions`);
  await ask(analyst, 'Add gold news');
  const banner = analyst.locator('.review-banner');
  await banner.waitFor();
  assert.match(await banner.textContent(), /The agent has a draft: \d+ changes?/);
  // The chat says where the edit went.
  const note = analyst.locator('.chat-draft-note').last();
  await note.waitFor();
  assert.equal(await note.getAttribute('data-dashboard-id'), dashboardId);

  // Nothing published: the history, the stored state and the second viewer are as before.
  assert.deepEqual(await api.get(`/api/dashboards/${dashboardId}/versions`), versionsBefore);
  assert.deepEqual(await publishedPanels(), ['desk-kline']);
  const viewer = await newPage();
  await viewer.goto(`${server.url}/#d=${dashboardId}`);
  await viewer.waitForSelector(`.dashboard-view[data-dashboard-id="${dashboardId}"] .panel[data-panel-id="desk-kline"]`);
  assert.deepEqual(await panelIds(viewer), ['desk-kline']);
  await viewer.waitForSelector('.dashboard-view[data-access]');
  await viewer.waitForTimeout(500); // the banner would come after the access and review answers
  assert.equal(await viewer.locator('.review-banner').count(), 0, 'the viewer has no draft');

  // The analyst's review: the added panel, its test, the draft drawn with data.
  await analyst.click('.review-open');
  const sheet = analyst.locator('.history-sheet[data-kind="review"] .review-sheet');
  await sheet.waitFor();
  const added = sheet.locator('.changes .change[data-panel-id="desk-news"]');
  assert.equal(await added.getAttribute('data-kind'), 'added');
  await sheet.locator('.readonly-grid .panel[data-panel-id="desk-news"]').waitFor();
  assert.equal(await sheet.locator('.readonly-grid .panel[data-panel-id="desk-news"]').evaluate((p) => p.classList.contains('is-changed')), true);
  const testLine = added.locator('.draft-test');
  assert.equal(await testLine.getAttribute('data-ok'), 'true', await testLine.textContent());
  assert.match(await testLine.textContent(), /^Test passed · \d+ rows?$/);
  await screenshot(analyst, 'review-draft');

  await sheet.locator('.draft-accept-all').click();
  await analyst.waitForSelector('.history-sheet', { state: 'detached' });
  await analyst.waitForSelector('.review-banner', { state: 'detached' });
  const versionsAfter = await api.get(`/api/dashboards/${dashboardId}/versions`);
  assert.equal(versionsAfter.length, versionsBefore.length + 1, 'accepting published one version');
  assert.deepEqual(await publishedPanels(), ['desk-kline', 'desk-news']);
  // The second viewer's live view gets it.
  await viewer.waitForSelector('.dashboard-view .panel[data-panel-id="desk-news"]');
  assert.deepEqual(await panelIds(viewer), ['desk-kline', 'desk-news']);
  await analyst.waitForSelector('.dashboard-view .panel[data-panel-id="desk-news"]');
  assert.deepEqual(unexpected(viewer.errors), []);
  assert.deepEqual(unexpected(analyst.errors), []);
  await viewer.context().close();
});

test('a rejected draft leaves no trace in the published history', async () => {
  const versionsBefore = await api.get(`/api/dashboards/${dashboardId}/versions`);
  const stateBefore = (await api.get(`/api/dashboards/${dashboardId}`)).state;
  await ask(analyst, 'Add a gold quote');
  await analyst.waitForSelector('.review-banner');
  // This time from the chat: the tool result's Review.
  assert.equal(await analyst.locator('.chat-draft-review').count(), 2, 'one per drafted edit');
  await analyst.locator('.chat-draft-review').last().click();
  const sheet = analyst.locator('.history-sheet[data-kind="review"] .review-sheet');
  const quote = sheet.locator('.changes .change[data-panel-id="desk-quote"]');
  await quote.waitFor();
  // Its code throws: the draft's test says so.
  const testLine = quote.locator('.draft-test');
  assert.equal(await testLine.getAttribute('data-ok'), 'false');
  assert.match(await testLine.textContent(), /quote feed is down/);
  await sheet.locator('.draft-reject-all').click();
  await analyst.waitForSelector('.history-sheet', { state: 'detached' });
  await analyst.waitForSelector('.review-banner', { state: 'detached' });
  assert.deepEqual(await api.get(`/api/dashboards/${dashboardId}/versions`), versionsBefore);
  assert.deepEqual((await api.get(`/api/dashboards/${dashboardId}`)).state, stateBefore);
  assert.deepEqual(await panelIds(analyst), ['desk-kline', 'desk-news']);
  // No draft is left: a reload shows no banner.
  await analyst.reload();
  await analyst.waitForSelector('.review-toggle[aria-pressed="true"]');
  assert.equal(await analyst.locator('.review-banner').count(), 0);
  assert.deepEqual(unexpected(analyst.errors), []);
});

test('a draft accepted and rejected panel by panel: one published, the other dropped', async () => {
  const versionsBefore = await api.get(`/api/dashboards/${dashboardId}/versions`);
  await ask(analyst, 'Add the dollar and rates cards');
  await analyst.waitForSelector('.review-banner[data-count="2"]');
  await analyst.click('.review-open');
  const sheet = analyst.locator('.history-sheet[data-kind="review"] .review-sheet');
  await sheet.locator('.change[data-panel-id="desk-rates"]').waitFor();
  await sheet.locator('.change[data-panel-id="desk-usd"] .draft-accept-panel').click();
  // What is left: the other panel only, still a draft.
  await sheet.locator('.change[data-panel-id="desk-usd"]').waitFor({ state: 'detached' });
  await analyst.waitForSelector('.review-banner[data-count="1"]', { state: 'attached' }); // under the sheet
  assert.equal(await sheet.locator('.change[data-panel-id="desk-rates"]').count(), 1);
  assert.deepEqual(await publishedPanels(), ['desk-kline', 'desk-news', 'desk-usd']);
  assert.equal((await api.get(`/api/dashboards/${dashboardId}/versions`)).length, versionsBefore.length + 1);

  await sheet.locator('.change[data-panel-id="desk-rates"] .draft-reject-panel').click();
  await analyst.waitForSelector('.history-sheet', { state: 'detached' });
  await analyst.waitForSelector('.review-banner', { state: 'detached' });
  assert.deepEqual(await publishedPanels(), ['desk-kline', 'desk-news', 'desk-usd']);
  assert.equal((await api.get(`/api/dashboards/${dashboardId}/versions`)).length, versionsBefore.length + 1, 'the reject published nothing');
  await analyst.waitForSelector('.dashboard-view .panel[data-panel-id="desk-usd"]');
  assert.deepEqual(await panelIds(analyst), ['desk-kline', 'desk-news', 'desk-usd']);
  assert.deepEqual(unexpected(analyst.errors), []);
  await analyst.context().close();
});

test('a chat in review mode: the Review edits switch under the composer sets it, and the agent’s next edit in that chat is a draft', async () => {
  const page = await newPage({ signIn: false });
  await signIn(page, 'ann', 'review-every-draft-1');
  await page.click('.chat-new');
  assert.equal(await page.locator('.chat-review-toggle').isHidden(), true, 'a new chat has no switch until it is stored');
  await ask(page, 'Build me a gold desk');
  await page.waitForSelector('.dashboard-view[data-version="1"] .panel[data-panel-id="desk-kline"]');
  const dash = await page.locator('.dashboard-view').getAttribute('data-dashboard-id');
  assert.notEqual(dash, dashboardId, 'a dashboard of its own');
  assert.deepEqual(await api.get(`/api/dashboards/${dash}/review`), { enabled: false, hasDraft: false }, 'the dashboard is not in review mode, and no draft yet');

  const toggle = page.locator('.chat-review-toggle');
  await toggle.waitFor();
  assert.equal(await toggle.getAttribute('aria-pressed'), 'false');
  const chatId = await toggle.getAttribute('data-chat-id');
  assert.ok(chatId);
  const reviewOf = async () => (await api.get('/api/chats')).find((c) => c.chatId === chatId)?.review === true;
  assert.equal(await reviewOf(), false);
  await toggle.click();
  await page.waitForSelector('.chat-review-toggle[aria-pressed="true"]:not([disabled])');
  assert.equal(await reviewOf(), true, 'GET /api/chats says review: true');

  // The agent's next edit in this chat waits as a draft.
  const versionsBefore = await api.get(`/api/dashboards/${dash}/versions`);
  await ask(page, 'Add gold news');
  await page.waitForSelector(`.dashboard-view[data-dashboard-id="${dash}"] .review-banner`);
  const note = page.locator('.chat-draft-note').last();
  await note.waitFor();
  assert.equal(await note.getAttribute('data-dashboard-id'), dash);
  assert.deepEqual(await api.get(`/api/dashboards/${dash}/versions`), versionsBefore, 'nothing published');
  assert.deepEqual((await api.get(`/api/dashboards/${dash}`)).state.panels.map((p) => p.id), ['desk-kline']);
  await screenshot(page, 'review-chat-toggle');

  // Off again: the switch and the server agree.
  await toggle.click();
  await page.waitForSelector('.chat-review-toggle[aria-pressed="false"]:not([disabled])');
  assert.equal(await reviewOf(), false);
  assert.deepEqual(unexpected(page.errors), []);
  await page.context().close();
});
