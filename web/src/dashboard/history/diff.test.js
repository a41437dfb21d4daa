import { test } from 'node:test';
import assert from 'node:assert/strict';
import { changeRows, diffLines, diffStat, movedPanels } from './diff.js';

const panel = (id, title, w = 1, h = 3) => ({ id, title, type: 'line', layout: { w, h }, code: 'return []' });

test('a retitled and resized panel is one row with both tags and the sizes', () => {
  const old = { panels: [panel('a', 'Gold', 1, 3), panel('b', 'News')] };
  const next = { panels: [panel('a', 'Gold daily', 2, 4), panel('b', 'News')] };
  const rows = changeRows([{ type: 'modified_panel', panelId: 'a', detail: 'title, layout' }], old, next);
  assert.equal(rows.length, 1);
  assert.equal(rows[0].kind, 'changed');
  assert.equal(rows[0].title, 'Gold daily');
  assert.deepEqual(rows[0].tags, ['retitled', 'resized']);
  assert.match(rows[0].detail, /“Gold” → “Gold daily”/);
  assert.match(rows[0].detail, /size 1×3 → 2×4/);
});

test('added, removed, code and config changes get their own tags; the code diff in detail is dropped', () => {
  const rows = changeRows([
    { type: 'title_changed', detail: '"A" → "B"' },
    { type: 'removed_panel', panelId: 'x', detail: '"X" (line)' },
    { type: 'added_panel', panelId: 'y', detail: '"Y" (bar)' },
    // As the server sends it: `panel_id`.
    { type: 'modified_panel', panel_id: 'z', detail: 'code, config\n@@ -1 +1 @@\n-a\n+b' },
  ]);
  assert.deepEqual(rows.map((r) => [r.kind, r.panelId ?? null, r.tags]), [
    ['dashboard', null, []],
    ['removed', 'x', ['removed']],
    ['added', 'y', ['added']],
    ['changed', 'z', ['code changed', 'reconfigured']],
  ]);
  assert.equal(rows[0].title, 'Title changed');
  assert.equal(rows[3].detail, 'code, config');
});

test('reordered panels are tagged moved: only those that left their place', () => {
  const old = { panels: [panel('a', 'A'), panel('b', 'B'), panel('c', 'C')] };
  const next = { panels: [panel('b', 'B'), panel('c', 'C'), panel('a', 'A')] };
  assert.deepEqual(movedPanels(old, next), ['a']);
  const rows = changeRows([{ type: 'reordered', detail: 'panel order: b, c, a (was: a, b, c)' }], old, next);
  assert.deepEqual(rows.map((r) => [r.panelId, r.tags]), [['a', ['moved']]]);
  // Without the states: one dashboard row.
  assert.equal(changeRows([{ type: 'reordered', detail: 'x' }])[0].kind, 'dashboard');
  assert.deepEqual(movedPanels(old, old), []);
});

test('a unified diff becomes numbered lines; the stat counts them', () => {
  const text = '@@ -1,3 +1,3 @@\n const a = 1;\n-return a;\n+return a + 1;\n // end\n';
  const lines = diffLines(text);
  assert.deepEqual(lines.map((l) => l.kind), ['hunk', 'ctx', 'del', 'add', 'ctx']);
  assert.deepEqual(lines[1], { kind: 'ctx', text: 'const a = 1;', oldNo: 1, newNo: 1 });
  assert.deepEqual(lines[2], { kind: 'del', text: 'return a;', oldNo: 2 });
  assert.deepEqual(lines[3], { kind: 'add', text: 'return a + 1;', newNo: 2 });
  assert.deepEqual(lines[4], { kind: 'ctx', text: '// end', oldNo: 3, newNo: 3 });
  assert.deepEqual(diffStat(text), { add: 1, del: 1 });
  assert.deepEqual(diffLines(''), []);
  assert.deepEqual(diffLines(null), []);
});

test('changed alert rules are a dashboard-wide row with the server’s detail', () => {
  const rows = changeRows([{ type: 'alerts_changed', detail: 'added "X above 3"' }]);
  assert.deepEqual(rows.map((r) => [r.kind, r.title, r.detail]), [['dashboard', 'Alert rules changed', 'added "X above 3"']]);
});
