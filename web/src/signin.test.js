// Unit tests of the sign-in screen's messages and the providers answer (no DOM): node --test web/src/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { retryAfterSeconds, tooManyMessage, signInMessage, providerList, providerButtons } from './signin.js';

const now = Date.parse('2026-11-27T12:00:00Z');

test('Retry-After in seconds or as an HTTP date; at least 1 s; unreadable is null', () => {
  assert.equal(retryAfterSeconds('30', now), 30);
  assert.equal(retryAfterSeconds(' 7 ', now), 7);
  assert.equal(retryAfterSeconds('0', now), 1);
  assert.equal(retryAfterSeconds('Fri, 27 Nov 2026 12:00:41 GMT', now), 41);
  assert.equal(retryAfterSeconds('Fri, 27 Nov 2026 12:00:00 GMT', now + 500), 1);
  assert.equal(retryAfterSeconds(null, now), null);
  assert.equal(retryAfterSeconds('', now), null);
  assert.equal(retryAfterSeconds('soon', now), null);
  assert.equal(retryAfterSeconds('-5', now), null);
});

test('the rate-limit sentence counts the seconds the server asked for', () => {
  assert.equal(tooManyMessage('12', now), 'Too many attempts; try again in 12 s');
  assert.equal(tooManyMessage(null, now), 'Too many attempts; try again later');
  assert.equal(signInMessage({ status: 429, msg: 'slow down', retryAfter: '60' }, now), 'Too many attempts; try again in 60 s');
});

test('a refusal shows the server’s sentence, capitalised; no answer says so', () => {
  assert.equal(signInMessage({ status: 401, msg: 'wrong username or password' }), 'Wrong username or password');
  assert.equal(signInMessage({ status: 401 }), 'Wrong username or password');
  assert.equal(signInMessage({ status: 403, msg: 'this account is disabled' }), 'This account is disabled');
  assert.equal(signInMessage({ status: 502 }), 'The server refused the sign-in (HTTP 502)');
  assert.equal(signInMessage({ status: 0, msg: 'Failed to fetch' }), 'The server did not answer (Failed to fetch)');
});

test('single sign-on providers: the envelope’s data or a bare list, bad entries left out', () => {
  const corp = { id: 'corp', name: 'Corp SSO', startUrl: '/api/session/oidc/corp/start', extra: 1 };
  const entries = [corp, { id: '', name: 'x' }, { name: 'no id' }, { id: 'blank', name: '  ' }, { id: 7, name: 'n' }, null];
  const want = [{ id: 'corp', name: 'Corp SSO', startUrl: '/api/session/oidc/corp/start' }];
  assert.deepEqual(providerList({ code: 0, msg: '', data: entries }), want);
  assert.deepEqual(providerList(entries), want);
  assert.deepEqual(providerList({ code: 0, data: [] }), []);
  assert.deepEqual(providerList({ code: 0, data: null }), []);
  assert.deepEqual(providerList({ code: 0, data: { id: 'corp', name: 'Corp' } }), []);
  assert.deepEqual(providerList(null), []);
  assert.deepEqual(providerList('<html>'), []);
});

test('each provider is a "Sign in with <name>" link to its startUrl', () => {
  const body = {
    code: 0,
    data: [
      { id: 'test', name: 'Test IdP', startUrl: '/api/session/oidc/test/start' },
      { id: 'corp', name: ' Corp SSO ', startUrl: '/api/session/oidc/corp/start?x=1' },
    ],
  };
  assert.deepEqual(providerButtons(body), [
    { id: 'test', text: 'Sign in with Test IdP', href: '/api/session/oidc/test/start' },
    { id: 'corp', text: 'Sign in with Corp SSO', href: '/api/session/oidc/corp/start?x=1' },
  ]);
  assert.deepEqual(providerButtons({ code: 0, data: [] }), []);
});

test('a startUrl that leaves this server, or none, is the documented start route of the id', () => {
  const href = (startUrl, id = 'a b') => providerButtons([{ id, name: 'X', startUrl }])[0].href;
  const route = '/api/session/oidc/a%20b/start';
  assert.equal(href(undefined), route);
  assert.equal(href(null), route);
  assert.equal(href(''), route);
  assert.equal(href(42), route);
  assert.equal(href('https://evil.example/start'), route);
  assert.equal(href('//evil.example/start'), route);
  assert.equal(href('/\\evil.example/start'), route);
  assert.equal(href('javascript:alert(1)'), route);
  assert.equal(href('api/session/oidc/x/start'), route);
  assert.equal(href('/api/session/oidc/x/start\n'), route);
  assert.equal(href('/api/session/oidc/x/start'), '/api/session/oidc/x/start');
});
