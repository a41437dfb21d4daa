// Unit tests of a version's author line (no DOM): node --test web/src/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { authorLine } from './author.js';

test('a version names its person, their key, the agent or MCP client acting for them', () => {
  const ann = { userId: 'u_1', username: 'ann' };
  assert.equal(authorLine({ ...ann, via: 'rest' }), 'ann');
  assert.equal(authorLine({ ...ann, via: 'agent', chat: 'c1' }), 'agent for ann');
  assert.equal(authorLine({ ...ann, keyId: 'key_9', via: 'mcp', client: 'Claude Desktop' }), "Claude Desktop for ann's API key key_9");
  assert.equal(authorLine({ keyId: 'key_9', via: 'mcp' }), 'MCP client for API key key_9');
  assert.equal(authorLine({ token: true, via: 'rest' }), 'server token');
  assert.equal(authorLine({ via: 'system' }), 'Boardsmith');
});

test('a version from before authors has no line', () => {
  assert.equal(authorLine(undefined), '');
  assert.equal(authorLine(null), '');
});
