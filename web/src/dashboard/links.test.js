// Unit tests of share links' pure parts (no DOM): node --test web/src/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DEFAULT_EXPIRY, EXPIRED, EXPIRY_CHOICES, REVOKED, day, goneSentence, linkBody, linkRow, madeBy, shareToken, sharedPath, varValues,
} from './links.js';

const now = Date.UTC(2026, 2, 10, 12, 0, 0);
const HOUR = 3_600_000;
const link = {
  id: 'sl_1', dashboardId: 'd_1', createdAt: now - 2 * 24 * HOUR, createdBy: { userId: 'u_ann', username: 'ann' },
  expiresAt: now + 5 * 24 * HOUR, vars: { symbol: 'XAU' }, allowVars: false, uses: 0, lastUsedAt: null,
};

test('the expiry choices are 1, 7 and 30 days and never, 7 days first chosen', () => {
  assert.deepEqual(EXPIRY_CHOICES.map((c) => c.label), ['1 day', '7 days', '30 days', 'Never']);
  assert.deepEqual(EXPIRY_CHOICES.map((c) => c.value), ['86400', '604800', '2592000', '']);
  assert.equal(DEFAULT_EXPIRY, '604800');
});

test('the POST body: seconds unless never, the variables shown, a label only when given', () => {
  assert.deepEqual(linkBody({ expiry: '86400', vars: { symbol: 'XAU', days: 30 }, allowVars: true, label: '  Board  ' }),
    { vars: { symbol: 'XAU', days: 30 }, allowVars: true, expiresIn: 86400, label: 'Board' });
  assert.deepEqual(linkBody({ expiry: '', vars: {}, allowVars: false, label: '   ' }), { vars: {}, allowVars: false });
  assert.deepEqual(linkBody(), { vars: {}, allowVars: false, expiresIn: 604800 });
  assert.deepEqual(linkBody({ expiry: 'soon', allowVars: 'yes' }), { vars: {}, allowVars: false }, 'nonsense: never, not allowed');
  const vars = { a: 1 };
  const body = linkBody({ vars });
  body.vars.a = 2;
  assert.equal(vars.a, 1, 'the view’s values are not touched');
});

test('the variables sent are those shown: set values, else the defaults', () => {
  const defs = [
    { name: 'symbol', type: 'select', default: 'XAU', options: ['XAU', 'XAG'] },
    { name: 'days', type: 'range', default: 30 },
    { name: 'note', type: 'text' },
  ];
  assert.deepEqual(varValues(defs, { symbol: 'XAG' }), { symbol: 'XAG', days: 30 });
  assert.deepEqual(varValues(defs, { note: '', gone: 1 }), { symbol: 'XAU', days: 30, note: '' });
  assert.deepEqual(varValues(undefined, { a: 1 }), {});
  assert.deepEqual(varValues(defs, null), { symbol: 'XAU', days: 30 });
});

test('who made a link', () => {
  assert.equal(madeBy({ userId: 'u_ann', username: 'ann' }), 'ann');
  assert.equal(madeBy({ userId: 'u_ann', username: 'ann', keyId: 'key_1' }), "ann's API key key_1");
  assert.equal(madeBy({ keyId: 'key_1' }), 'API key key_1');
  assert.equal(madeBy({ token: true }), 'the server token');
  assert.equal(madeBy(undefined), 'someone');
});

test('a row: label or the day it was made, who, when it expires, how much it was used', () => {
  assert.deepEqual(linkRow(link, now), {
    name: `Link made ${day(link.createdAt)}`, by: 'by ann', expires: 'Expires in 5d', uses: 'Not used yet', expired: false, vars: '',
  });
  const used = linkRow({ ...link, label: 'For the desk', uses: 3, lastUsedAt: now - 5 * 60_000, expiresAt: null, allowVars: true }, now);
  assert.equal(used.name, 'For the desk');
  assert.equal(used.by, `by ann on ${day(link.createdAt)}`);
  assert.equal(used.expires, 'Never expires');
  assert.equal(used.uses, 'Used 3 times, last 5m ago');
  assert.equal(used.vars, 'Visitors can change variables');
  assert.equal(linkRow({ ...link, uses: 1, lastUsedAt: null }, now).uses, 'Used once');
  const old = linkRow({ ...link, expiresAt: now - 1 }, now);
  assert.deepEqual([old.expires, old.expired], ['Expired', true]);
  assert.equal(linkRow({ ...link, expiresAt: now + 3 * HOUR }, now).expires, 'Expires in 3h');
  assert.equal(linkRow({}, now).name, 'Link', 'a row without dates still reads');
});

test('the share page’s path gives its token; other paths none', () => {
  assert.equal(shareToken('/s/AbC-_123'), 'AbC-_123');
  assert.equal(shareToken('/s/AbC-_123/'), 'AbC-_123');
  assert.equal(shareToken('/s/a%2Fb'), 'a/b');
  assert.equal(shareToken('/'), null);
  assert.equal(shareToken('/s/'), null);
  assert.equal(shareToken('/s/a/b'), null);
  assert.equal(shareToken('/settings/s/abc'), null);
  assert.equal(shareToken('/s/%E0%A4%A'), null, 'a broken escape is no token');
  assert.equal(sharedPath('a/b'), '/api/shared/a%2Fb');
});

test('a gone link says whether it expired or was revoked', () => {
  assert.equal(goneSentence({ status: 410 }), EXPIRED);
  assert.equal(goneSentence({ status: 404 }), REVOKED);
  assert.equal(goneSentence({ status: 404, reason: 'this link has expired' }), REVOKED, 'the status first');
  assert.equal(goneSentence({ status: 200, reason: 'This share link expired.' }), EXPIRED);
  assert.equal(goneSentence({ reason: 'This share link was revoked.' }), REVOKED);
  assert.equal(goneSentence({ status: 500 }), null);
  assert.equal(goneSentence(), null);
});
