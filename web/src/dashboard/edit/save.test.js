import { test } from 'node:test';
import assert from 'node:assert/strict';
import { saveState, overwrite, outcomeOf, describe } from './save.js';

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
