import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chatTitle, chatsPath, checkTitle, withRow, withoutChat, sortChats, debounce, MAX_TITLE_CHARS } from './chats.js';

test('the search path carries the trimmed text, encoded; no text lists all', () => {
  assert.equal(chatsPath(''), '/api/chats');
  assert.equal(chatsPath('   '), '/api/chats');
  assert.equal(chatsPath(undefined), '/api/chats');
  assert.equal(chatsPath(' gold & silver '), '/api/chats?q=gold%20%26%20silver');
});

test('a title is trimmed, 1 to 120 characters, with no control characters', () => {
  assert.deepEqual(checkTitle('  Gold desk  '), { title: 'Gold desk' });
  assert.match(checkTitle('   ').error, /needs a name/);
  assert.match(checkTitle('x'.repeat(MAX_TITLE_CHARS + 1)).error, /At most 120/);
  assert.deepEqual(checkTitle('金'.repeat(MAX_TITLE_CHARS)), { title: '金'.repeat(MAX_TITLE_CHARS) });
  assert.match(checkTitle('a\nb').error, /control/);
});

test('a rename replaces its row; a delete removes it; newest first', () => {
  const chats = [{ chatId: 'a', chatName: 'A', updatedAt: 1 }, { chatId: 'b', chatName: 'B', updatedAt: 2 }];
  assert.deepEqual(withRow(chats, { chatId: 'a', chatName: 'Renamed' }).map((c) => c.chatName), ['Renamed', 'B']);
  assert.equal(withRow(chats, null), chats);
  assert.deepEqual(withoutChat(chats, 'a').map((c) => c.chatId), ['b']);
  assert.deepEqual(sortChats(chats).map((c) => c.chatId), ['b', 'a']);
});

test('debounce: one call with the last arguments after the burst; flush and cancel', () => {
  let now = 0;
  const pending = new Map();
  let next = 1;
  const timers = {
    setTimeout: (f, ms) => { const id = next++; pending.set(id, { f, at: now + ms }); return id; },
    clearTimeout: (id) => pending.delete(id),
  };
  const advance = (ms) => {
    now += ms;
    for (const [id, t] of [...pending]) if (t.at <= now) { pending.delete(id); t.f(); }
  };
  const calls = [];
  const d = debounce((q) => calls.push(q), 250, timers);
  d('g'); advance(100); d('go'); advance(100); d('gold');
  advance(249);
  assert.deepEqual(calls, []);
  advance(1);
  assert.deepEqual(calls, ['gold']);
  d('x');
  d.flush();
  assert.deepEqual(calls, ['gold', 'x']);
  d('y');
  d.cancel();
  advance(1000);
  assert.deepEqual(calls, ['gold', 'x']);
});

test('a chat goes by its title, else its short name', () => {
  assert.equal(chatTitle({ chatName: 'Tell me ab', title: 'Tell me about gold' }), 'Tell me about gold');
  assert.equal(chatTitle({ chatName: 'Tell me ab' }), 'Tell me ab');
  assert.equal(chatTitle({ chatName: 'x', title: '  ' }), 'x');
  assert.equal(chatTitle(null), '');
});
