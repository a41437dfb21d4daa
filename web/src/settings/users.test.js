// Unit tests of the passwords the users section generates (no DOM): node --test web/src/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generatePassword } from './users.js';

test('16 characters from an alphabet without look-alikes', () => {
  for (let i = 0; i < 50; i++) {
    const p = generatePassword();
    assert.equal(p.length, 16);
    assert.match(p, /^[a-km-zA-HJ-NP-Z2-9]+$/);
  }
  assert.equal(generatePassword(24).length, 24);
  assert.notEqual(generatePassword(), generatePassword());
});

test('bytes past the last whole alphabet are thrown away, not folded in (no bias)', () => {
  // 57 letters: 228 is the first byte that would favour the alphabet's start.
  let calls = 0;
  const fill = (a) => {
    calls += 1;
    a.fill(calls === 1 ? 250 : 0);
    if (calls === 1) a[0] = 57; // 'a' again after a full turn: allowed
    return a;
  };
  assert.equal(generatePassword(4, fill), 'aaaa');
  assert.equal(calls, 2, 'the first draw gave one usable byte');
});
