import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRetention, retentionWords } from './retention.js';
import { updateSettings } from './admin-settings.js';

test('the retention field: empty keeps chats, a whole number is days, anything else is refused here', () => {
  assert.deepEqual(parseRetention(''), { value: null });
  assert.deepEqual(parseRetention('  30 '), { value: 30 });
  assert.deepEqual(parseRetention('0'), { value: 0 }, 'the server says why 0 is refused');
  assert.ok(parseRetention('2.5').error);
  assert.ok(parseRetention('abc').error);
  assert.match(retentionWords(30), /touched for 30 days are deleted/);
  assert.match(retentionWords(1), /for 1 day are/);
  assert.match(retentionWords(null), /kept for good/);
});

test('saving one setting sends the others as the server has them', async () => {
  const calls = [];
  const api = {
    get: async (p) => { calls.push(['GET', p]); return { settings: { defaultModel: 'lab/m', dataFallback: true } }; },
    put: async (p, b) => { calls.push(['PUT', p, b]); return { settings: b }; },
  };
  await updateSettings(api, { chatRetentionDays: 30 });
  assert.deepEqual(calls.at(-1), ['PUT', '/api/admin/settings', { defaultModel: 'lab/m', dataFallback: true, chatRetentionDays: 30 }]);
  await updateSettings(api, { chatRetentionDays: null });
  assert.equal(calls.at(-1)[2].chatRetentionDays, null);
});
