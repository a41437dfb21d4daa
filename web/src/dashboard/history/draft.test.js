import { test } from 'node:test';
import assert from 'node:assert/strict';
import { draftCount, changesLabel, draftPanels, testResult, failingTests, draftOfResult } from './draft.js';

const draft = {
  changes: [
    { type: 'title_changed', detail: '"A" → "B"' },
    { type: 'modified_panel', panelId: 'p1', detail: 'code' },
    { type: 'added_panel', panel_id: 'p2', detail: '"New" (bar)' },
    { type: 'reordered', detail: '…' },
  ],
  tests: { p1: { ok: true, rowCount: 12 }, p2: { ok: false, error: { kind: 'runtime', message: 'x is not defined', line: 3 } } },
};

test('a draft counts its changes and names its panels once each', () => {
  assert.equal(draftCount(draft), 4);
  assert.equal(draftCount(null), 0);
  assert.equal(changesLabel(1), '1 change');
  assert.equal(changesLabel(4), '4 changes');
  assert.deepEqual(draftPanels(draft), ['p1', 'p2']);
  assert.deepEqual(draftPanels({}), []);
});

test('test results read as a sentence: passed with rows, failed with kind, line and message', () => {
  assert.deepEqual(testResult(draft.tests.p1), { ok: true, text: 'Test passed · 12 rows' });
  assert.deepEqual(testResult({ ok: true, rowCount: 1 }), { ok: true, text: 'Test passed · 1 row' });
  assert.deepEqual(testResult(draft.tests.p2), { ok: false, text: 'Test failed: runtime error on line 3: x is not defined' });
  assert.deepEqual(testResult({ ok: false }), { ok: false, text: 'Test failed: error: unknown error' });
  assert.equal(testResult(undefined), null);
  assert.deepEqual(failingTests(draft), ['p2']);
});

test('a tool result that wrote a draft names its dashboard; others are not drafts', () => {
  assert.deepEqual(draftOfResult({ dashboard_id: 'db_1', draft: true, changes: [] }), { dashboardId: 'db_1' });
  assert.deepEqual(draftOfResult('{"dashboard_id":"db_2","draft":true}'), { dashboardId: 'db_2' });
  assert.deepEqual(draftOfResult({ draft: true }), { dashboardId: null });
  assert.equal(draftOfResult({ dashboard_id: 'db_1', changes: [] }), null);
  assert.equal(draftOfResult('{"draft": false}'), null);
  assert.equal(draftOfResult('not json "draft"'), null);
  assert.equal(draftOfResult(null), null);
});
