import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PANEL_TYPES, rendererOf, withType } from './types.js';

test('every type has one renderer, the pairs the server accepts', () => {
  assert.equal(PANEL_TYPES.length, 11);
  assert.equal(rendererOf('candlestick'), 'lightweight-charts');
  assert.equal(rendererOf('area'), 'lightweight-charts');
  assert.equal(rendererOf('heatmap'), 'echarts');
  assert.equal(rendererOf('metric_card'), 'custom');
  assert.equal(rendererOf('donut'), undefined);
});

test('withType sets the renderer with the type and keeps the rest', () => {
  const p = { id: 'a', title: 'A', type: 'line', renderer: 'lightweight-charts', code: 'return []', config: { logScale: true } };
  const q = withType(p, 'bar');
  assert.deepEqual(q, { ...p, type: 'bar', renderer: 'echarts' });
  assert.equal(p.type, 'line', 'the original is not changed');
  assert.equal(withType(p, 'nope'), p);
});
