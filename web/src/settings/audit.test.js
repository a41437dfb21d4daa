// Unit tests of the audit log's rows (no DOM): node --test web/src/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { auditRow, kindLabel, actorText } from './audit.js';
import { when } from './form.js';

const at = Date.parse('2026-11-27T14:05:00Z');

test('an entry becomes the table’s text', () => {
  assert.deepEqual(auditRow({
    id: 'a1', at, kind: 'user_created', actor: { userId: 'u1', username: 'ada' }, address: '127.0.0.1', target: 'bob', detail: 'role viewer',
  }), {
    id: 'a1', time: when(at), kind: 'user_created', label: 'User added', actor: 'ada', address: '127.0.0.1', target: 'bob', detail: 'role viewer', failed: false,
  });
});

test('missing parts show as a dash; a refused sign-in is marked failed', () => {
  const r = auditRow({ id: 7, at, kind: 'sign_in_failed', detail: { username: 'mallory' } });
  assert.equal(r.id, '7');
  assert.equal(r.label, 'Sign-in refused');
  assert.equal(r.actor, '—');
  assert.equal(r.address, '—');
  assert.equal(r.target, '—');
  assert.equal(r.detail, '{"username":"mallory"}');
  assert.equal(r.failed, true);
  assert.equal(auditRow({ kind: 'sign_in' }).time, '—');
  assert.equal(auditRow({ kind: 'user_changed', target: 'u_1' }, new Map([['u_1', 'ada']])).target, 'ada', 'a user id reads as the username');
  assert.equal(auditRow({ kind: 'user_deleted', target: 'u_2' }, new Map([['u_1', 'ada']])).target, 'u_2');
});

test('kinds the page does not know read as words', () => {
  assert.equal(kindLabel('sign_in'), 'Signed in');
  assert.equal(kindLabel('key_revoked'), 'Key revoked');
  assert.equal(kindLabel('role_granted'), 'Role granted');
  assert.equal(kindLabel(''), '?');
  assert.equal(kindLabel(undefined), '?');
});

test('who acted: the username, an API key, or the user id', () => {
  assert.equal(actorText({ userId: 'u1', username: 'ada' }), 'ada');
  assert.equal(actorText({ keyId: 'k9' }), 'key k9');
  assert.equal(actorText({ username: 'ada', keyId: 'k9' }), 'ada (key k9)');
  assert.equal(actorText({ userId: 'u1' }), 'u1');
  assert.equal(actorText({ token: true }), 'server token');
  assert.equal(actorText({}), '—');
  assert.equal(actorText(undefined), '—');
});
