// Unit tests of the mail relay form and the channel form's rules (no DOM): node --test web/src/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  channelBody, channelKind, parseRecipients, passwordPlaceholder, relayBody, relayForm, relayWords, rendererWords,
} from './notify.js';

const stored = {
  settings: { defaultModel: null, mail: { host: 'smtp.example.com', port: 2525, security: 'tls', username: 'u', from: 'a@example.com' } },
  mailPasswordSet: true,
};

test('the relay form is read from the settings, never with a password', () => {
  assert.deepEqual(relayForm(stored), {
    host: 'smtp.example.com', port: '2525', security: 'tls', username: 'u', password: '', removePassword: false, from: 'a@example.com', caFile: '',
  });
  assert.deepEqual(relayForm({ settings: {}, mailPasswordSet: false }), {
    host: '', port: '', security: 'starttls', username: '', password: '', removePassword: false, from: '', caFile: '',
  });
  assert.equal(passwordPlaceholder(true), '•••• stored');
  assert.equal(passwordPlaceholder(false), 'none');
});

test('a blank password is left out (the stored one stays); remove sends ""; a typed one is sent', () => {
  const form = relayForm(stored);
  assert.deepEqual(relayBody(form), { mail: { host: 'smtp.example.com', port: 2525, security: 'tls', username: 'u', from: 'a@example.com' } });
  assert.equal(relayBody({ ...form, password: 'pw 1' }).mail.password, 'pw 1');
  assert.equal(relayBody({ ...form, password: 'typed', removePassword: true }).mail.password, '');
  assert.equal('password' in relayBody(form).mail, false);
});

test('blank optional fields are left out; the port must be a port', () => {
  const mail = relayBody({ host: ' h ', port: ' ', security: 'none', username: ' ', password: '', removePassword: false, from: ' f@x ', caFile: '  ' }).mail;
  assert.deepEqual(mail, { host: 'h', security: 'none', from: 'f@x' });
  for (const bad of ['0', '65536', '25a', '-1', '2.5']) {
    assert.equal(relayBody({ ...relayForm(stored), port: bad }).error.param, 'port', bad);
  }
  assert.equal(relayBody({ ...relayForm(stored), port: '65535' }).mail.port, 65535);
  assert.equal(relayBody({ ...relayForm(stored), caFile: '/etc/ca.pem' }).mail.caFile, '/etc/ca.pem');
});

test('the relay in force and the renderer in words', () => {
  assert.equal(relayWords(null), 'No mail relay: e-mail channels cannot send.');
  assert.equal(relayWords({ source: 'settings', server: 'smtp.example.com:587', security: 'starttls', from: 'a@x', signsIn: true }),
    'Mail goes through smtp.example.com:587 (STARTTLS, signed in) from a@x, as set in these settings.');
  assert.equal(relayWords({ source: 'file', server: 'relay:25', security: 'none', from: 'b@x', signsIn: false }),
    'Mail goes through relay:25 (no encryption) from b@x, as set in boardsmith.toml ([smtp]).');
  assert.equal(rendererWords({ available: true }), 'PDF and PNG: available');
  assert.equal(rendererWords({ available: false, reason: 'no Chromium: set BOARDSMITH_CHROMIUM' }), 'PDF and PNG: not available. no Chromium: set BOARDSMITH_CHROMIUM');
});

test('recipients one per line or comma-separated, a quoted or bracketed comma kept', () => {
  assert.deepEqual(parseRecipients('a@x.org\nb@x.org, c@x.org;d@x.org\r\n\n'), ['a@x.org', 'b@x.org', 'c@x.org', 'd@x.org']);
  assert.deepEqual(parseRecipients('"Doe, Jo" <jo@x.org>, Ana <ana@x.org>'), ['"Doe, Jo" <jo@x.org>', 'Ana <ana@x.org>']);
  assert.deepEqual(parseRecipients('  '), []);
});

test('a channel body per type', () => {
  assert.deepEqual(channelBody({ type: 'webhook', name: ' desk ', url: ' http://h/x ', preset: 'slack', to: 'ignored' }),
    { name: 'desk', type: 'webhook', url: 'http://h/x', preset: 'slack' });
  assert.deepEqual(channelBody({ type: 'email', name: 'm', url: 'ignored', preset: 'json', to: 'a@x\nb@x' }),
    { name: 'm', type: 'email', to: ['a@x', 'b@x'] });
  assert.equal(channelKind({ type: 'webhook', preset: 'json' }), 'Webhook');
  assert.equal(channelKind({ type: 'webhook', preset: 'discord' }), 'Webhook (Discord)');
  assert.equal(channelKind({ type: 'email' }), 'E-mail');
});
