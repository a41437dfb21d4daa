// Unit tests of which field a refusal names (no DOM): node --test web/src/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldOf, placeError } from './fields.js';

test('the field comes from data.param, its last segment', () => {
  assert.equal(fieldOf({ message: 'mail.host is the relay’s host name', data: { param: 'mail.host' } }), 'host');
  assert.equal(fieldOf({ message: 'x', data: { param: 'notify[2]' } }), 'notify');
});

test('else from the `field:` the message begins with', () => {
  assert.equal(fieldOf({ message: 'cron: `nope` is not a cron pattern' }), 'cron');
  assert.equal(fieldOf({ message: 'notify[0]: no channel named `x` (there are: a)' }), 'notify');
  assert.equal(fieldOf({ message: 'url: `10.0.0.1:80` is not an allowed outbound host' }), 'url');
  assert.equal(fieldOf({ message: 'timezone: `Mars/Base` is not an IANA time zone' }), 'timezone');
});

test('a sentence that names no field names none', () => {
  assert.equal(fieldOf({ message: 'a channel named `hook` exists already' }), null);
  assert.equal(fieldOf({ message: 'the mail relay smtp.example.com:587 cannot be reached: refused' }), null);
  assert.equal(fieldOf({ message: 'server unreachable: Failed to fetch' }), null);
  assert.equal(fieldOf(null), null);
});

test('an error lands by its field only when the form has that field', () => {
  assert.deepEqual(placeError({ message: 'cron: too often' }, ['cron', 'name']), { param: 'cron', message: 'cron: too often' });
  assert.deepEqual(placeError({ message: 'dashboardId: no dashboard' }, ['cron']), { param: null, message: 'dashboardId: no dashboard' });
  assert.deepEqual(placeError(new Error('boom'), ['cron']), { param: null, message: 'boom' });
});
