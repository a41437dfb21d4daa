// Unit tests of the scopes each role may give a key (no DOM): node --test web/src/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { grantableScopes } from './keys.js';

test('a viewer grants read only; an editor read, write, agents and models; an admin every scope', () => {
  assert.deepEqual(grantableScopes('viewer'), ['read']);
  assert.deepEqual(grantableScopes('editor'), ['read', 'write', 'agents', 'models']);
  assert.deepEqual(grantableScopes('admin'), ['read', 'write', 'agents', 'models', 'metrics', 'admin']);
});

test('no role known: every scope is offered and the server decides', () => {
  assert.deepEqual(grantableScopes(undefined), grantableScopes('admin'));
});
