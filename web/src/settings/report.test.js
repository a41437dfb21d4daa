// Unit tests of the usage pivot and the error-field mapping (no DOM): node --test web/src/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pivot, totalsByModel, defaultMetric, daysBetween, lastDays, errorParam } from './report.js';

const rows = [
  { day: '2026-11-01', model: 'lab/a', requests: 2, errors: 0, inputTokens: 100, outputTokens: 20, cachedTokens: 0, costUsd: 0.5, unpriced: 0 },
  { day: '2026-11-03', model: 'lab/a', requests: 1, errors: 1, inputTokens: 10, outputTokens: 5, cachedTokens: 4, costUsd: 0.25, unpriced: 0 },
  { day: '2026-11-03', model: 'lab/b', requests: 4, errors: 0, inputTokens: 0, outputTokens: 0, cachedTokens: 0, costUsd: 0, unpriced: 4 },
];

test('every day of the range is on the axis; a day without calls is zero', () => {
  const p = pivot(rows, '2026-11-01', '2026-11-03', 'cost');
  assert.deepEqual(p.days, ['2026-11-01', '2026-11-02', '2026-11-03']);
  assert.deepEqual(p.series.map((s) => s.model), ['lab/a', 'lab/b']);
  assert.deepEqual(p.series[0].values, [0.5, 0, 0.25]);
  assert.deepEqual(p.series[1].values, [0, 0, 0]);
  assert.equal(p.max, 0.5);
  assert.deepEqual(pivot(rows, '2026-11-01', '2026-11-03', 'tokens').series[0].values, [120, 0, 15]);
  assert.deepEqual(pivot(rows, '2026-11-01', '2026-11-03', 'requests').series[1].values, [0, 0, 4]);
});

test('totals per model and overall; unpriced calls stay counted as such', () => {
  const { models, total } = totalsByModel(rows);
  assert.equal(models[0].model, 'lab/a');
  assert.equal(models[0].requests, 3);
  assert.equal(models[0].errors, 1);
  assert.equal(models[1].unpriced, 4);
  assert.equal(total.requests, 7);
  assert.equal(total.costUsd, 0.75);
});

test('the first metric shown is one with something in it', () => {
  assert.equal(defaultMetric(rows), 'cost');
  assert.equal(defaultMetric([rows[2]]), 'requests');
  assert.equal(defaultMetric([{ ...rows[2], inputTokens: 3 }]), 'tokens');
});

test('ranges: the last 30 UTC days; backwards is empty', () => {
  assert.deepEqual(lastDays(30, new Date('2026-11-27T23:30:00Z')), { from: '2026-10-29', to: '2026-11-27' });
  assert.equal(daysBetween('2026-11-03', '2026-11-01').length, 0);
  assert.equal(daysBetween('2026-02-27', '2026-03-01').length, 3);
});

test('the field an error names: data.param, else the first quoted name', () => {
  assert.equal(errorParam({ data: { param: 'providers.lab.baseUrl' }, message: 'x' }), 'baseUrl');
  assert.equal(errorParam({ data: { param: 'defaultModel' } }), 'defaultModel');
  assert.equal(errorParam({ data: null, message: '`name` must be 1 to 100 characters' }), 'name');
  assert.equal(errorParam({ data: null, message: 'invalid request at `scopes[0]`: unknown variant' }), 'scopes');
  assert.equal(errorParam({ message: 'server unreachable' }), null);
});
