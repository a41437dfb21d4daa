import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHistory } from './history.js';

const s = (title) => ({ title, layout: { columns: 1 }, panels: [] });

test('undo then redo walk back and forth, each step a new version', () => {
  const h = createHistory();
  assert.equal(h.canUndo, false);
  assert.deepEqual(h.undo(1), { ok: false, reason: 'empty' });
  h.record(s('A'), s('B'), 2, 'rename');
  h.record(s('B'), s('C'), 3, 'rename');
  assert.equal(h.undoLabel, 'rename');

  const u1 = h.undo(3);
  assert.equal(u1.ok, true);
  assert.equal(u1.state.title, 'B');
  assert.equal(u1.baseVersion, 3);
  h.undone(4);
  assert.equal(h.canRedo, true);

  const u2 = h.undo(4);
  assert.equal(u2.state.title, 'A');
  h.undone(5);
  assert.equal(h.canUndo, false);

  const r1 = h.redo(5);
  assert.equal(r1.state.title, 'B');
  h.redone(6);
  const r2 = h.redo(6);
  assert.equal(r2.state.title, 'C');
  h.redone(7);
  assert.equal(h.canRedo, false);
  assert.equal(h.undo(7).state.title, 'B', 'the redone step can be undone again');
});

test('someone else saved meanwhile: changed, nothing to overwrite', () => {
  const h = createHistory();
  h.record(s('A'), s('B'), 2);
  assert.deepEqual(h.undo(3), { ok: false, reason: 'changed', label: 'edit' });
  assert.equal(h.canUndo, true, 'the step is kept: the caller decides');
  h.undone(3);
  assert.equal(h.redo(4).reason, 'changed');
});

test('a new edit drops the redo stack; the limit keeps the newest steps', () => {
  const h = createHistory(2);
  h.record(s('A'), s('B'), 2);
  h.undone(3);
  assert.equal(h.canRedo, true);
  h.record(s('A'), s('X'), 4);
  assert.equal(h.canRedo, false);
  h.record(s('X'), s('Y'), 5);
  h.record(s('Y'), s('Z'), 6);
  assert.equal(h.undo(6).state.title, 'Y');
  h.undone(7);
  assert.equal(h.undo(7).state.title, 'X', 'only the newest two steps are kept');
  h.undone(8);
  assert.equal(h.undo(8).reason, 'empty');
  h.clear();
  assert.equal(h.canUndo || h.canRedo, false);
});
