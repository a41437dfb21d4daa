// Unit tests of what the Download PDF / PNG menu button shows (no DOM): node --test web/src/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderToggle } from './download.js';

test('without a renderer the button is disabled with the server’s reason', () => {
  const b = renderToggle({ renderer: { available: false, reason: 'no Chromium: install chromium or set BOARDSMITH_CHROMIUM' }, busy: null });
  assert.deepEqual(b, { disabled: true, text: 'PDF / PNG', title: 'no Chromium: install chromium or set BOARDSMITH_CHROMIUM' });
  assert.equal(renderToggle({ renderer: { available: false }, busy: null }).title, 'The server cannot make PDF or PNG files');
});

test('one render at a time: while one runs the button says which and takes no other', () => {
  assert.deepEqual(renderToggle({ renderer: { available: true }, busy: 'png' }),
    { disabled: true, text: 'Rendering…', title: 'Rendering the dashboard as PNG…' });
});

test('idle, or not known yet: enabled (a click tells)', () => {
  for (const renderer of [null, { available: true }]) {
    const b = renderToggle({ renderer, busy: null });
    assert.equal(b.disabled, false);
    assert.equal(b.text, 'PDF / PNG');
    assert.match(b.title, /^Download this dashboard as PDF or PNG/);
  }
});
