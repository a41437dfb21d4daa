import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diagnosticOf } from './lint.js';

const doc = 'const a = 1;\nreturn a +;\n';

test('the error is marked at its line and column', () => {
  const d = diagnosticOf({ kind: 'syntax', message: 'Unexpected token', line: 2, column: 11 }, doc);
  assert.equal(d.line, 2);
  assert.equal(doc.slice(d.from, d.to), ';');
  assert.equal(d.message, 'syntax error: Unexpected token');
  assert.equal(d.severity, 'error');
});

test('without a column the whole line; without a line the first', () => {
  const d = diagnosticOf({ kind: 'runtime', message: 'x', line: 2 }, doc);
  assert.equal(doc.slice(d.from, d.to), 'return a +;');
  const first = diagnosticOf({ message: 'y' }, doc);
  assert.equal(first.line, 1);
  assert.equal(doc.slice(first.from, first.to), 'const a = 1;');
  assert.equal(diagnosticOf(null, doc), null);
});

test('positions past the text are clamped and never empty', () => {
  const d = diagnosticOf({ message: 'z', line: 9, column: 40 }, 'x\ny');
  assert.equal(d.line, 2);
  assert.ok(d.to > d.from);
  const e = diagnosticOf({ message: 'z', line: 1, column: 1 }, '');
  assert.equal(e.from, 0);
  assert.equal(e.to, 0);
});
