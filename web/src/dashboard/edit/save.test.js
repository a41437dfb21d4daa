import { test } from 'node:test';
import assert from 'node:assert/strict';
import { saveState, overwrite, outcomeOf, describe, noteOf, stepNote, NOTE_MAX } from './save.js';

class ApiError extends Error {
  constructor(status, message, data) {
    super(message);
    this.status = status;
    this.data = data;
  }
}

/** An api whose put answers from `answers` in turn and records the calls. */
function fakeApi(answers, current = 7) {
  const calls = [];
  return {
    calls,
    async put(path, body) {
      calls.push(['PUT', path, body]);
      const a = answers.shift();
      if (a instanceof Error) throw a;
      return a;
    },
    async get(path) {
      calls.push(['GET', path]);
      return { version: current, state: { title: 'theirs' } };
    },
  };
}

const state = { title: 'T', layout: { columns: 1 }, panels: [] };

test('a save sends baseVersion and state and gives the new version', async () => {
  const api = fakeApi([{ id: 'db_1', version: 4, state }]);
  const out = await saveState(api, 'db_1', 3, state);
  assert.equal(out.kind, 'saved');
  assert.equal(out.version, 4);
  assert.deepEqual(api.calls[0], ['PUT', '/api/dashboards/db_1', { baseVersion: 3, state }]);
});

test('409 is a conflict with the current version; overwrite saves on the current one', async () => {
  const api = fakeApi([new ApiError(409, 'version conflict: expected 3, found 5', { expected: 3, actual: 5 }), { version: 6 }], 5);
  const out = await saveState(api, 'db_1', 3, state);
  assert.deepEqual(out, { kind: 'conflict', actual: 5, message: 'version conflict: expected 3, found 5' });
  assert.equal(describe(out), 'This dashboard changed meanwhile.');
  const again = await overwrite(api, 'db_1', state);
  assert.equal(again.kind, 'saved');
  assert.equal(again.version, 6);
  assert.deepEqual(again.before, { title: 'theirs' }, 'what was overwritten, for Undo');
  assert.deepEqual(api.calls.slice(1).map((c) => [c[0], c[1]]), [['GET', '/api/dashboards/db_1'], ['PUT', '/api/dashboards/db_1']]);
  assert.equal(api.calls[2][2].baseVersion, 5);
});

test('invalid states list their issues by path; other failures say why', () => {
  const bad = outcomeOf(new ApiError(400, 'invalid DashboardState', { issues: [{ path: 'panels[0].renderer', message: 'must be echarts' }] }));
  assert.equal(bad.kind, 'invalid');
  assert.equal(describe(bad), 'Not saved: panels[0].renderer: must be echarts');
  const bare = outcomeOf(new ApiError(422, 'title is empty'));
  assert.deepEqual(bare.issues, [{ path: '$', message: 'title is empty' }]);
  assert.equal(describe(outcomeOf(new ApiError(403, 'forbidden'))), 'Not saved: you may not change this dashboard.');
  assert.equal(describe(outcomeOf(new ApiError(0, 'server unreachable'))), 'Not saved: server unreachable');
});

test('a note goes with the save when there is one (one line, at most 200 characters)', async () => {
  const api = fakeApi([{ version: 4 }, { version: 5 }, { version: 6 }]);
  await saveState(api, 'db_1', 3, state, 'Layout changed');
  assert.deepEqual(api.calls[0][2], { baseVersion: 3, state, note: 'Layout changed' });
  await saveState(api, 'db_1', 4, state, '  ');
  assert.deepEqual(api.calls[1][2], { baseVersion: 4, state }, 'a blank note is left out');
  await saveState(api, 'db_1', 5, state, `line\none ${'x'.repeat(300)}`);
  const note = api.calls[2][2].note;
  assert.equal([...note].length, NOTE_MAX);
  assert.ok(note.startsWith('line one x') && note.endsWith('…'));
});

test('notes say what an edit did', () => {
  const panels = [{ id: 'a', title: 'Gold', type: 'table' }, { id: 'b', title: 'Oil', type: 'table' }];
  const s0 = { title: 'Metals', panels };
  assert.equal(noteOf('rename', s0, { ...s0, title: 'Commodities' }), 'Renamed the dashboard to “Commodities”');
  const renamed = { ...s0, panels: [panels[0], { ...panels[1], title: 'Brent' }] };
  assert.equal(noteOf('rename', s0, renamed), 'Renamed panel “Oil” to “Brent”');
  assert.equal(noteOf('layout change', s0, s0), 'Layout changed');
  const edited = { ...s0, panels: [{ ...panels[0], code: 'return [];' }, panels[1]] };
  assert.equal(noteOf('panel edit', s0, edited), 'Edited panel “Gold”');
  assert.equal(noteOf('variables edit', s0, { ...s0, variables: [] }), 'Variables edited');
  assert.equal(noteOf('something else', s0, s0), null);
  assert.equal(stepNote('undo', 'rename'), 'Undo (rename)');
  assert.equal(stepNote('redo', 'layout change'), 'Redo (layout change)');
  const long = 'T'.repeat(200);
  const n = noteOf('rename', { ...s0, panels: [{ ...panels[0], title: long }] }, { ...s0, panels: [{ ...panels[0], title: `${long}!` }] });
  assert.ok([...n].length <= NOTE_MAX && n.includes('…'), n);
});
