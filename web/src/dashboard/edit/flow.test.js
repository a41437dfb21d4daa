import { test } from 'node:test';
import assert from 'node:assert/strict';
import { place, arrange, moveBy, resizeBy, spanOf } from './flow.js';

const panel = (id, w, h) => ({ id, title: id, type: 'table', renderer: 'custom', code: 'return []', ...(w ? { layout: { w, h } } : {}) });
const state = (columns, ...panels) => ({ title: 'T', layout: { columns }, panels });

test('spans: defaults 1×3, clamped to the columns and 12 rows', () => {
  assert.deepEqual(spanOf(panel('a'), 3), { w: 1, h: 3 });
  assert.deepEqual(spanOf(panel('a', 5, 20), 3), { w: 3, h: 12 });
});

test('place flows like CSS grid: row-major after the previous item, around tall ones', () => {
  // 3 columns: a (2×2), b (1×4) fills the row's end, c (2×1) goes below a, d (3×1) after b ends.
  const got = place([panel('a', 2, 2), panel('b', 1, 4), panel('c', 2, 1), panel('d', 3, 1)], 3);
  assert.deepEqual(got, [
    { id: 'a', x: 0, y: 0, w: 2, h: 2 },
    { id: 'b', x: 2, y: 0, w: 1, h: 4 },
    { id: 'c', x: 0, y: 2, w: 2, h: 1 },
    { id: 'd', x: 0, y: 4, w: 3, h: 1 },
  ]);
  // Sparse: an item never goes back before the previous one, even into a hole.
  const sparse = place([panel('a', 1, 1), panel('b', 3, 1), panel('c', 1, 1)], 3);
  assert.deepEqual(sparse.map((n) => [n.x, n.y]), [[0, 0], [0, 1], [0, 2]]);
});

test('arrange maps the grid back to order by (y, x) and w/h', () => {
  const s = state(2, panel('a', 1, 3), panel('b', 1, 3), panel('c'));
  // b dragged before a, c resized to 2×4.
  const next = arrange(s, [
    { id: 'a', x: 1, y: 0, w: 1, h: 3 },
    { id: 'b', x: 0, y: 0, w: 1, h: 3 },
    { id: 'c', x: 0, y: 3, w: 2, h: 4 },
  ]);
  assert.deepEqual(next.panels.map((p) => p.id), ['b', 'a', 'c']);
  assert.deepEqual(next.panels[2].layout, { w: 2, h: 4 });
  assert.equal(next.panels[0], s.panels[1], 'an unchanged panel is the same object');
  assert.equal(s.panels[0].id, 'a', 'the original is not changed');
});

test('arrange returns the same state when nothing changed (no empty version)', () => {
  const s = state(2, panel('a', 1, 3), panel('b'));
  assert.equal(arrange(s, place(s.panels, 2)), s);
  // A default span written out explicitly is no change either.
  assert.equal(arrange(s, [{ id: 'a', x: 0, y: 0, w: 1, h: 3 }, { id: 'b', x: 1, y: 0, w: 1, h: 3 }]), s);
});

test('place then arrange round-trips any order', () => {
  const s = state(3, panel('a', 2, 2), panel('b', 1, 4), panel('c', 2, 1), panel('d', 3, 1), panel('e'));
  assert.equal(arrange(s, place(s.panels, 3)), s);
});

test('keyboard steps: move earlier/later and resize, clamped', () => {
  const s = state(2, panel('a'), panel('b'), panel('c'));
  assert.deepEqual(moveBy(s, 'c', -1).panels.map((p) => p.id), ['a', 'c', 'b']);
  assert.deepEqual(moveBy(s, 'a', 1).panels.map((p) => p.id), ['b', 'a', 'c']);
  assert.equal(moveBy(s, 'a', -1), s, 'the first cannot move earlier');
  assert.equal(moveBy(s, 'c', 1), s);
  assert.deepEqual(resizeBy(s, 'b', 1, 0).panels[1].layout, { w: 2, h: 3 });
  assert.deepEqual(resizeBy(s, 'b', 0, -1).panels[1].layout, { w: 1, h: 2 });
  assert.equal(resizeBy(resizeBy(s, 'b', 1, 0), 'b', 1, 0).panels[1].layout.w, 2, 'at most the columns');
  assert.equal(resizeBy(s, 'b', -1, 0), s, 'at least one column');
});
