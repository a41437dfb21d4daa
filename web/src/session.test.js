// Unit tests of reading `GET /api/session` (no DOM): node --test web/src/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isAdmin, isAuthOff, userLabel } from './session.js';

test('auth off is the owner by token; a signed-in admin is not', () => {
  const owner = { user: { id: 'owner', username: 'owner', role: 'admin' }, via: 'token' };
  assert.equal(isAuthOff(owner), true);
  assert.equal(isAdmin(owner), true);
  assert.equal(isAuthOff({ ...owner, via: 'session' }), false);
  assert.equal(isAuthOff({ ...owner, expiresAt: 1_900_000_000_000 }), false, 'a session can be ended');
  assert.equal(isAuthOff({ user: { id: 'u1', username: 'ada', role: 'admin' }, via: 'token' }), false);
  assert.equal(isAuthOff(null), false);
});

test('only the admin role is an admin', () => {
  assert.equal(isAdmin({ user: { role: 'editor' }, via: 'session' }), false);
  assert.equal(isAdmin({ user: { role: 'viewer' }, via: 'session' }), false);
  assert.equal(isAdmin(null), false);
});

test('a user is called by display name, else username', () => {
  assert.equal(userLabel({ username: 'ada', displayName: 'Ada Lovelace' }), 'Ada Lovelace');
  assert.equal(userLabel({ username: 'ada', displayName: '  ' }), 'ada');
  assert.equal(userLabel({ username: 'ada' }), 'ada');
  assert.equal(userLabel(undefined), '');
});
