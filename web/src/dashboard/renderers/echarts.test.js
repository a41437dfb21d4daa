// Unit tests of the ECharts option builders (no DOM): node --test web/src/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { barOption } from './echarts.js';

const colors = { muted: '#888888', border: '#dddddd', grid: '#eeeeee', text: '#111111', up: '#00aa00', down: '#aa0000', palette: ['#1', '#2'] };
const rows = [{ name: 'Energy', us: 1.5, eu: -0.5 }, { name: 'Tech', us: 2.5, eu: 1.0 }];

test('bars: categories on x, one series per field, stable ids', () => {
  const o = barOption(rows, colors, { width: 400, height: 300 });
  assert.equal(o.xAxis.type, 'category');
  assert.deepEqual(o.xAxis.data, ['Energy', 'Tech']);
  assert.deepEqual(o.series.map((s) => s.id), ['bar:us', 'bar:eu']);
  assert.ok(o.series.every((s) => s.stack === undefined));
});

test('config.stacked stacks the series; config.horizontal swaps the axes', () => {
  const o = barOption(rows, colors, { width: 400, height: 300 }, { stacked: true, horizontal: true });
  assert.ok(o.series.every((s) => s.stack === 'total'));
  assert.equal(o.yAxis.type, 'category');
  assert.equal(o.xAxis.type, 'value');
  assert.deepEqual(o.yAxis.data, ['Energy', 'Tech']);
});
