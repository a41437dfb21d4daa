import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toRows, fromRows, newRow } from './vars.js';

const vars = [
  { name: 'symbol', label: 'Symbol', type: 'select', options: ['XAUUSD', 'XAGUSD'], default: 'XAUUSD' },
  { name: 'n', label: 'Bars', type: 'select', options: [10, 20], default: 10 },
  { name: 'days', label: 'Days', type: 'range', options: [1, 365, 1], default: 30 },
  { name: 'q', label: 'Query', type: 'text', default: 'gold' },
];

test('rows round-trip the variables, numbers staying numbers', () => {
  const rows = toRows(vars);
  assert.equal(rows[0].options, 'XAUUSD, XAGUSD');
  assert.equal(rows[2].options, '1, 365, 1');
  const back = fromRows(rows);
  assert.deepEqual(back.errors, []);
  assert.deepEqual(back.variables, vars);
});

test('an edited row: a new choice and default', () => {
  const rows = toRows(vars);
  rows[0] = { ...rows[0], options: 'XAUUSD, XAGUSD, XPTUSD', default: 'XPTUSD', label: 'Metal' };
  const { variables, errors } = fromRows(rows);
  assert.deepEqual(errors, []);
  assert.deepEqual(variables[0], { name: 'symbol', label: 'Metal', type: 'select', options: ['XAUUSD', 'XAGUSD', 'XPTUSD'], default: 'XPTUSD' });
});

test('the server rules are checked per field', () => {
  const rows = toRows(vars);
  rows[1] = { ...rows[1], name: 'symbol' };
  rows[0] = { ...rows[0], default: 'BTC' };
  rows[2] = { ...rows[2], options: '10, 1' };
  rows[3] = { ...rows[3], name: '2x' };
  const { errors } = fromRows(rows);
  assert.deepEqual(errors.map((e) => [e.index, e.field]), [[0, 'default'], [1, 'name'], [2, 'options'], [3, 'name']]);
  const range = fromRows([{ name: 'r', label: '', type: 'range', options: '0, 10', default: '11' }]);
  assert.deepEqual(range.errors.map((e) => e.field), ['default']);
  assert.equal(range.variables[0].label, 'r', 'an empty label is the name');
});

test('a new row has a free name and is valid as text', () => {
  const rows = toRows(vars);
  const r = newRow([...rows, { ...newRow(rows) }]);
  assert.equal(r.name, 'var6');
  assert.deepEqual(fromRows([r]).errors, []);
});
