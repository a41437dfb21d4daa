// Managing chats in real Chromium: a chat renamed in place (the list and GET /api/chats agree, also
// after a reload), the list searched on the server (titles and messages), a chat deleted after a
// confirm (a dismissed confirm keeps it; the open chat gives way to a new one).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, apiOf, newPage, closeBrowser, screenshot } from './harness.mjs';

const reply = (query, text) => ({ match: { last_user_contains: query }, steps: [{ type: 'text', text, chunk: 8 }] });
const script = {
  turns: [
    reply('alpha topic', 'Alpha answer.'),
    reply('beta topic', 'Beta answer about copper.'),
    reply('gamma topic', 'Gamma answer.'),
  ],
};

let server;
let api;
const ids = {};

before(async () => {
  server = await startServer({ script });
  api = apiOf(server.url);
  // Three chats, made the way the app makes them (one query each).
  for (const [key, message] of [['alpha', 'Tell me about the alpha topic'], ['beta', 'And the beta topic, with silver please'], ['gamma', 'Now the gamma topic']]) {
    const run = await api.post('/api/query', { message, agentKey: 'dashboard', stream: false });
    assert.ok(run.chatId, JSON.stringify(run).slice(0, 300));
    ids[key] = run.chatId;
  }
});

after(async () => {
  await closeBrowser();
  await server?.close();
});

const row = (page, chatId) => page.locator(`.chat-list .chat-item[data-chat-id="${chatId}"]`);
const listed = async () => (await api.get('/api/chats')).map((c) => c.chatId);

async function openApp() {
  const page = await newPage();
  await page.goto(server.url);
  await row(page, ids.gamma).waitFor();
  return page;
}

test('a chat renamed in place keeps its new name in the list, the API and after a reload', async () => {
  const page = await openApp();
  await row(page, ids.alpha).locator('.chat-rename').click();
  const input = row(page, ids.alpha).locator('input.chat-rename-input');
  await input.waitFor();
  // An empty name is refused where it is typed.
  await input.fill('   ');
  await input.press('Enter');
  await row(page, ids.alpha).locator('.chat-rename-error').waitFor();
  await input.fill('Copper and alpha notes');
  await input.press('Enter');
  await page.waitForSelector(`.chat-item[data-chat-id="${ids.alpha}"] input.chat-rename-input`, { state: 'detached' });
  assert.equal(await row(page, ids.alpha).locator('.chat-item-name').textContent(), 'Copper and alpha notes');
  const rows = await api.get('/api/chats');
  assert.equal(rows.find((c) => c.chatId === ids.alpha).title, 'Copper and alpha notes');

  // Escape leaves the name as it was.
  await row(page, ids.gamma).locator('.chat-rename').click();
  await row(page, ids.gamma).locator('input.chat-rename-input').fill('Not this');
  await row(page, ids.gamma).locator('input.chat-rename-input').press('Escape');
  assert.notEqual(await row(page, ids.gamma).locator('.chat-item-name').textContent(), 'Not this');
  assert.notEqual((await api.get('/api/chats')).find((c) => c.chatId === ids.gamma).title, 'Not this');

  await page.reload();
  await row(page, ids.alpha).waitFor();
  assert.equal(await row(page, ids.alpha).locator('.chat-item-name').textContent(), 'Copper and alpha notes');
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('the search box filters the list on the server: by title and by message text', async () => {
  const page = await openApp();
  const shown = () => page.$$eval('.chat-list .chat-item', (lis) => lis.map((li) => li.dataset.chatId).sort());
  // "silver" is only in the beta chat's message.
  await page.fill('.chat-search', 'silver');
  await page.waitForSelector('.chat-list[data-query="silver"]');
  await page.waitForFunction(() => document.querySelectorAll('.chat-list .chat-item').length === 1);
  assert.deepEqual(await shown(), [ids.beta]);
  // "copper" is in the beta chat's answer and in the alpha chat's new title (the first test).
  await page.fill('.chat-search', 'copper');
  await page.waitForSelector('.chat-list[data-query="copper"]');
  assert.deepEqual(await shown(), [ids.alpha, ids.beta].sort());
  await page.fill('.chat-search', 'nothing like this');
  await page.waitForSelector('.chat-list[data-query="nothing like this"] .chat-list-empty');
  assert.equal(await page.locator('.chat-list .chat-item').count(), 0);
  await page.fill('.chat-search', '');
  await page.waitForSelector('.chat-list[data-query=""]');
  assert.deepEqual(await shown(), [ids.alpha, ids.beta, ids.gamma].sort());
  await screenshot(page, 'chats-search');
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('a chat deleted after a confirm leaves the list and the API; the open one gives way to a new chat', async () => {
  const page = await openApp();
  await row(page, ids.gamma).locator('.chat-item-open').click();
  await page.waitForFunction((id) => window.boardsmith.chat.currentChat() === id, ids.gamma);
  await page.waitForSelector('.chat-runs .chat-user');

  // Dismissed: nothing happens.
  page.once('dialog', (d) => d.dismiss());
  await row(page, ids.gamma).locator('.chat-delete').click();
  assert.equal(await row(page, ids.gamma).count(), 1);
  assert.ok((await listed()).includes(ids.gamma));

  page.once('dialog', (d) => d.accept());
  await row(page, ids.gamma).locator('.chat-delete').click();
  await row(page, ids.gamma).waitFor({ state: 'detached' });
  assert.ok(!(await listed()).includes(ids.gamma), 'gone from GET /api/chats');
  assert.equal(await page.evaluate(() => window.boardsmith.chat.currentChat()), null);
  assert.equal(await page.locator('.chat-title').textContent(), 'New chat');
  assert.equal(await page.locator('.chat-runs .chat-user').count(), 0, 'the transcript was cleared');
  // The others stay.
  assert.equal(await row(page, ids.alpha).count(), 1);
  assert.equal(await row(page, ids.beta).count(), 1);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});
