// Unit tests of the reducer (no DOM): node --test web/src/chat/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { createModel, reduce, splitViewports, parseViewport, toolFailed, toolSkipped, errorMessage, failureWords } from './events.js';

const SNAPS = new URL('../../../tests/it/snapshots/', import.meta.url);

/** Events of a golden snapshot (`type {json}` lines). */
function snap(name) {
  const text = readFileSync(new URL(`it__gateway_modes__${name}.snap`, SNAPS), 'utf8');
  return text
    .split('\n')
    .filter((l) => /^[a-z]+\.[a-z]+ \{/.test(l))
    .map((l) => {
      const i = l.indexOf(' ');
      return { type: l.slice(0, i), ...JSON.parse(l.slice(i + 1)) };
    });
}

function run(events) {
  const model = createModel();
  for (const e of events) reduce(model, e);
  return model;
}

const haveSnaps = existsSync(SNAPS);

test('actions stream: one run, an action block with its param, then the answer', { skip: !haveSnaps }, () => {
  const m = run(snap('actions'));
  assert.equal(m.chatId, 'CHAT');
  assert.equal(m.runs.length, 1);
  const r = m.runs[0];
  assert.equal(r.runId, 'RUN');
  assert.equal(r.status, 'complete');
  assert.equal(r.query.message, 'Switch to dark mode');
  assert.deepEqual(r.blocks.map((b) => b.kind), ['action', 'content']);
  const a = r.blocks[0];
  assert.equal(a.name, 'switch_theme');
  assert.deepEqual(a.args, { theme: 'dark' });
  assert.deepEqual(a.param, { theme: 'dark' });
  assert.equal(a.status, 'done');
  assert.equal(r.blocks[1].text, 'Dark mode is on.');
  assert.equal(r.blocks[1].streaming, false);
});

test('plan_execute stream: plan updated in place, parallel tools get their results', { skip: !haveSnaps }, () => {
  const m = run(snap('plan_execute'));
  const r = m.runs[0];
  const plans = r.blocks.filter((b) => b.kind === 'plan');
  assert.equal(plans.length, 1);
  assert.deepEqual(plans[0].plan.steps.map((s) => s.status), ['completed', 'completed']);
  const tools = r.blocks.filter((b) => b.kind === 'tool');
  assert.deepEqual(tools.map((t) => [t.name, t.status]), [['city_datetime', 'done'], ['mock_city_weather', 'done']]);
  assert.deepEqual(tools[1].args, { city: 'Paris' });
  assert.equal(tools[1].result.city, 'Paris');
});

test('every mode snapshot reduces to one completed run', { skip: !haveSnaps }, () => {
  for (const name of ['plain', 'thinking', 'plain_tooling', 'thinking_tooling', 'react', 'plan_execute', 'actions']) {
    const m = run(snap(name));
    assert.equal(m.runs.length, 1, name);
    assert.equal(m.runs[0].status, 'complete', name);
    for (const b of m.runs[0].blocks) assert.ok(!b.streaming, `${name}: ${b.kind} still streaming`);
  }
});

test('history snapshots fill the same blocks as the live stream', () => {
  const m = run([
    { type: 'request.query', requestId: 'r1', chatId: 'c', message: 'hi', agentKey: 'dashboard' },
    { type: 'chat.start', chatId: 'c', chatName: 'hi' },
    { type: 'reasoning.snapshot', reasoningId: 'r1_r', text: 'thinking' },
    { type: 'tool.snapshot', toolId: 't1', toolName: 'execute', arguments: '{"code":"return 1"}' },
    { type: 'tool.result', toolId: 't1', result: { dashboard_id: 'd', validation: { allOk: true, panels: [] } } },
    { type: 'action.snapshot', actionId: 'a1', actionName: 'switch_theme', arguments: '{"theme":"light"}' },
    { type: 'action.result', actionId: 'a1', result: 'OK' },
    { type: 'content.snapshot', contentId: 'r1_c', text: 'done' },
    { type: 'run.complete', runId: 'r1' },
    { type: 'request.query', requestId: 'r2', chatId: 'c', message: 'again' },
    { type: 'tool.snapshot', toolId: 't1', toolName: 'mutate', arguments: '{"code":"x"}' },
    { type: 'run.complete', runId: 'r2' },
  ]);
  assert.equal(m.chatName, 'hi');
  assert.equal(m.runs.length, 2);
  const [a, b] = m.runs;
  assert.deepEqual(a.blocks.map((x) => x.kind), ['reasoning', 'tool', 'action', 'content']);
  assert.equal(a.blocks[1].status, 'done');
  assert.deepEqual(a.blocks[1].args, { code: 'return 1' });
  assert.equal(a.blocks[2].status, 'done');
  // The same tool id in a later run is a new block; without a result it ends with its run.
  assert.equal(b.blocks.length, 1);
  assert.equal(b.blocks[0].name, 'mutate');
  assert.equal(b.blocks[0].status, 'done');
});

test('live tool: streaming args, then running, then done or error', () => {
  const m = createModel();
  reduce(m, { type: 'request.query', requestId: 'r', chatId: 'c', message: 'x' });
  reduce(m, { type: 'run.start', runId: 'r', chatId: 'c' });
  reduce(m, { type: 'tool.start', toolId: 't', runId: 'r', toolName: 'execute', toolType: 'backend' });
  const t = m.runs[0].blocks[0];
  assert.equal(t.status, 'streaming');
  reduce(m, { type: 'tool.args', toolId: 't', delta: '{"code":"re' });
  assert.equal(t.args, undefined);
  reduce(m, { type: 'tool.args', toolId: 't', delta: 'turn 1"}' });
  reduce(m, { type: 'tool.end', toolId: 't' });
  assert.equal(t.status, 'running');
  assert.deepEqual(t.args, { code: 'return 1' });
  reduce(m, { type: 'tool.result', toolId: 't', result: { error: 'line 1: boom' } });
  assert.equal(t.status, 'error');
});

test('tool.confirm marks a backend tool as waiting for the go-ahead; unknown tools are ignored', () => {
  const m = createModel();
  reduce(m, { type: 'request.query', requestId: 'r', chatId: 'c', message: 'x' });
  reduce(m, { type: 'tool.start', toolId: 't', runId: 'r', toolName: 'bash', toolType: 'backend' });
  reduce(m, { type: 'tool.end', toolId: 't' });
  const t = m.runs[0].blocks[0];
  assert.equal(t.confirm, undefined);
  const touched = reduce(m, { type: 'tool.confirm', toolId: 't', runId: 'r', toolName: 'bash', command: 'ls -la', timeoutMs: 300000 });
  assert.equal(touched.block, t);
  assert.equal(t.confirm.command, 'ls -la');
  assert.equal(t.confirm.timeoutMs, 300000);
  assert.equal(reduce(m, { type: 'tool.confirm', toolId: 'nope', command: 'x' }), null);
  reduce(m, { type: 'tool.result', toolId: 't', result: { error: 'not run: the user declined this command.' } });
  assert.equal(t.status, 'error');
});

test('run.error and run.cancel end the run and close open blocks', () => {
  const m = createModel();
  reduce(m, { type: 'request.query', requestId: 'r', chatId: 'c', message: 'x' });
  reduce(m, { type: 'content.start', contentId: 'c1', runId: 'r' });
  reduce(m, { type: 'content.delta', contentId: 'c1', delta: 'par' });
  reduce(m, { type: 'tool.start', toolId: 't', runId: 'r', toolName: 'search' });
  const touched = reduce(m, { type: 'run.error', runId: 'r', error: { message: 'model timeout' } });
  assert.equal(touched.block.kind, 'error');
  assert.equal(touched.block.message, 'model timeout');
  assert.equal(m.runs[0].status, 'error');
  assert.equal(m.runs[0].blocks[0].streaming, false);
  assert.equal(m.runs[0].blocks[1].status, 'error');

  const m2 = createModel();
  reduce(m2, { type: 'request.query', requestId: 'r', chatId: 'c', message: 'x' });
  reduce(m2, { type: 'tool.start', toolId: 't', runId: 'r', toolName: 'confirm_dialog', toolType: 'html' });
  reduce(m2, { type: 'run.cancel', runId: 'r' });
  assert.equal(m2.runs[0].status, 'cancel');
  assert.equal(m2.runs[0].blocks[0].interrupted, 'stopped');
});

test('dashboard.update becomes a dashboard block', () => {
  const m = createModel();
  reduce(m, { type: 'request.query', requestId: 'r', chatId: 'c', message: 'x' });
  const t = reduce(m, { type: 'dashboard.update', dashboardId: 'd1', version: 3, changes: [], validation: { allOk: true, panels: [] } });
  assert.equal(t.block.kind, 'dashboard');
  assert.equal(t.block.version, 3);
  assert.equal(t.block.deleted, false);
});

test('dashboard.update marks the tool whose result it follows, whatever the tool is named', () => {
  const m = createModel();
  reduce(m, { type: 'request.query', requestId: 'r', chatId: 'c', message: 'x' });
  // Named like a dashboard tool, with a dashboard id in its result, but no dashboard.update: saved nothing.
  reduce(m, { type: 'tool.start', toolId: 't1', runId: 'r', toolName: 'execute', toolType: 'backend' });
  reduce(m, { type: 'tool.result', toolId: 't1', result: { dashboard_id: 'd0', validation: { allOk: true, panels: [] } } });
  // Any other name, followed by dashboard.update: this call saved d1.
  reduce(m, { type: 'tool.start', toolId: 't2', runId: 'r', toolName: 'build_board', toolType: 'backend' });
  reduce(m, { type: 'tool.result', toolId: 't2', result: { id: 'd1' } });
  const touched = reduce(m, { type: 'dashboard.update', dashboardId: 'd1', version: 2, changes: [], validation: null });
  const [t1, t2] = m.runs[0].blocks;
  assert.equal(t1.dashboard, undefined);
  assert.deepEqual(t2.dashboard, { dashboardId: 'd1', version: 2, deleted: false });
  assert.equal(touched.block.kind, 'dashboard');
  assert.equal(touched.also.block, t2, 'the tool block is redrawn too');
  // Only right after a tool.result: an update after other events marks no tool.
  reduce(m, { type: 'tool.start', toolId: 't3', runId: 'r', toolName: 'mutate', toolType: 'backend' });
  reduce(m, { type: 'tool.result', toolId: 't3', result: { dashboard_id: 'd1', changes: [] } });
  reduce(m, { type: 'content.start', contentId: 'c1', runId: 'r' });
  assert.equal(reduce(m, { type: 'dashboard.update', dashboardId: 'd1', version: 3, changes: [] }).also, undefined);
  assert.equal(m.runs[0].blocks.find((b) => b.id === 't3').dashboard, undefined);
  // A delete is marked as one.
  reduce(m, { type: 'tool.start', toolId: 't4', runId: 'r', toolName: 'mutate' });
  reduce(m, { type: 'tool.result', toolId: 't4', result: { dashboard_id: 'd1', deleted: true } });
  reduce(m, { type: 'dashboard.update', dashboardId: 'd1', version: 3, changes: [], validation: null, deleted: true });
  assert.equal(m.runs[0].blocks.find((b) => b.id === 't4').dashboard.deleted, true);
});

test('the chat never decides by tool name that a dashboard changed', () => {
  // The dashboard tools' names may change; the dashboard.update event is the contract.
  for (const file of ['events.js', 'render.js', 'pane.js']) {
    const src = readFileSync(new URL(file, import.meta.url), 'utf8');
    assert.doesNotMatch(src, /['"`](execute|mutate|get_state)['"`]/, `${file} names a dashboard tool`);
  }
});

test('viewport blocks are split out of answer text', () => {
  const text = 'Weather:\n\n```viewport\ntype=html, key=show_weather_card\n{"city": "Shanghai"}\n```\n\nBye.';
  const parts = splitViewports(text);
  assert.deepEqual(parts.map((p) => p.kind), ['md', 'viewport', 'md']);
  assert.equal(parts[1].key, 'show_weather_card');
  assert.equal(parts[1].viewportType, 'html');
  assert.deepEqual(parts[1].data, { city: 'Shanghai' });
  assert.equal(parts[1].complete, true);
  assert.equal(parts[2].text.trim(), 'Bye.');
  // Still streaming: an open fence.
  const open = splitViewports('Weather:\n```viewport\ntype=html, key=k\n{"ci');
  assert.equal(open.length, 2);
  assert.equal(open[1].complete, false);
  // Ordinary code blocks stay Markdown.
  assert.deepEqual(splitViewports('```js\nx\n```').map((p) => p.kind), ['md']);
  assert.equal(parseViewport('type=html, key=a\nnot json').error.startsWith('invalid JSON'), true);
});

test('helpers', () => {
  assert.equal(toolFailed({ error: 'x' }), true);
  assert.equal(toolFailed({ dashboard_id: 'd' }), false);
  assert.equal(toolFailed('text'), false);
  assert.equal(errorMessage('m'), 'm');
  assert.equal(errorMessage({ message: 'm2', code: 1 }), 'm2');
});

test('model.switch by fallback, context.summarized and run.steer become notes that say what happened', () => {
  const m = run([
    { type: 'request.query', requestId: 'Q', message: 'hi' },
    { type: 'context.summarized', chatId: 'C', summary: 'S', throughRunId: 'R0', summarizedRuns: 2, summarizedMessages: 6, tokensBefore: 1500, tokensAfter: 400, model: 'mock/cheap' },
    { type: 'run.start', runId: 'R', chatId: 'C' },
    { type: 'model.switch', runId: 'R', fromProvider: 'a', fromModel: 'x', toProvider: 'b', toModel: 'y', reason: 'fallback', error: '503 overloaded' },
    { type: 'model.switch', runId: 'R', fromProvider: 'b', fromModel: 'y', toProvider: 'a', toModel: 'x' },
    { type: 'run.steer', runId: 'R', mode: 'steer', messages: ['stop that'], skippedTools: ['search'] },
    { type: 'run.steer', runId: 'R', mode: 'followUp', messages: ['and then', 'also'] },
  ]);
  const notes = m.runs[0].blocks.filter((b) => b.kind === 'note').map((b) => b.text);
  assert.equal(notes.length, 5);
  assert.match(notes[0], /Summarized 2 earlier runs .*1500 → 400 tokens, by mock\/cheap/);
  assert.equal(notes[1], 'a/x failed before answering (503 overloaded); fell back to b/y');
  assert.equal(notes[2], 'Switched model: b/y → a/x');
  assert.equal(notes[3], 'Steered: “stop that” (skipped search)');
  assert.equal(notes[4], 'Follow-up: “and then”, “also”');
});

test('a tool call skipped by steering is skipped, not failed', () => {
  assert.ok(toolSkipped({ error: 'skipped: user sent a new message' }));
  assert.ok(!toolSkipped({ error: 'boom' }) && !toolSkipped(null) && !toolSkipped('skipped:'));
  const m = run([
    { type: 'request.query', requestId: 'Q', message: 'hi' },
    { type: 'run.start', runId: 'R', chatId: 'C' },
    { type: 'tool.start', runId: 'R', toolId: 'T', toolName: 'search' },
    { type: 'tool.end', toolId: 'T' },
    { type: 'tool.result', toolId: 'T', result: { error: 'skipped: user sent a new message' } },
    { type: 'run.complete', runId: 'R' },
  ]);
  const tool = m.runs[0].blocks.find((b) => b.kind === 'tool');
  assert.equal(tool.status, 'skipped');
});

test('a team run: each member is a task, and its blocks say who is speaking', () => {
  const m = createModel();
  reduce(m, { type: 'request.query', requestId: 'r', chatId: 'c', message: 'How is growth?' });
  reduce(m, { type: 'run.start', runId: 'r', chatId: 'c' });
  reduce(m, { type: 'task.start', taskId: 'r_agent_1', runId: 'r', taskName: 'alpha', description: 'the economist' });
  reduce(m, { type: 'content.start', contentId: 'r_agent_1_content_1', runId: 'r', taskId: 'r_agent_1' });
  reduce(m, { type: 'content.delta', contentId: 'r_agent_1_content_1', delta: 'Slowing.' });
  reduce(m, { type: 'content.end', contentId: 'r_agent_1_content_1' });
  reduce(m, { type: 'task.complete', taskId: 'r_agent_1', runId: 'r' });
  reduce(m, { type: 'task.start', taskId: 'r_agent_2', runId: 'r', taskName: 'beta' });
  reduce(m, { type: 'tool.start', toolId: 'a2_call_1', runId: 'r', taskId: 'r_agent_2', toolName: 'search', toolType: 'backend' });
  reduce(m, { type: 'task.fail', taskId: 'r_agent_2', runId: 'r', error: { message: 'no model' } });
  reduce(m, { type: 'content.start', contentId: 'r_content_1', runId: 'r' });
  reduce(m, { type: 'run.error', runId: 'r', error: { message: 'member `beta` failed: no model' } });
  const blocks = m.runs[0].blocks;
  assert.deepEqual(blocks.map((b) => [b.kind, b.speaker ?? null]), [
    ['task', null], ['content', 'alpha'], ['task', null], ['tool', 'beta'], ['content', null], ['error', null],
  ]);
  assert.deepEqual(blocks.filter((b) => b.kind === 'task').map((b) => [b.name, b.status, b.error]), [
    ['alpha', 'done', null], ['beta', 'failed', 'no model'],
  ]);
  assert.equal(blocks[0].description, 'the economist');
  assert.equal(m.runs[0].status, 'error');
});

const GDELT_DOWN = 'data provider failed, not the code (gdelt: GDELT cannot be reached); keep the panel, it fills in '
  + 'when the provider answers: SdkError: provider gdelt is unavailable (line 1, column 14)';

test('a run that ends with panels still failing has them, and a note after its answer', () => {
  const m = createModel();
  reduce(m, { type: 'request.query', requestId: 'r', chatId: 'c', message: 'Add a gold news feed' });
  reduce(m, { type: 'run.start', runId: 'r', chatId: 'c' });
  reduce(m, { type: 'tool.start', toolId: 't', runId: 'r', toolName: 'mutate', toolType: 'backend' });
  reduce(m, { type: 'tool.result', toolId: 't', result: { dashboard_id: 'd1' } });
  reduce(m, { type: 'dashboard.update', dashboardId: 'd1', version: 2, changes: [], validation: {
    allOk: false, panels: [{ panelId: 'gold-news', status: 'error', error: GDELT_DOWN }],
  } });
  reduce(m, { type: 'content.start', contentId: 'c1', runId: 'r' });
  reduce(m, { type: 'content.delta', contentId: 'c1', delta: 'Its news source cannot be reached.' });
  reduce(m, { type: 'content.end', contentId: 'c1' });
  const failingPanels = [
    { dashboardId: 'd1', panelId: 'gold-news', error: GDELT_DOWN },
    { dashboardId: 'd1', panelId: 'gold-ratio', error: 'ReferenceError: x is not defined (line 2, column 1)' },
  ];
  const touched = reduce(m, { type: 'run.complete', runId: 'r', finishReason: 'stop', failingPanels });
  const run = m.runs[0];
  assert.equal(run.status, 'complete');
  assert.deepEqual(run.failingPanels, failingPanels, 'the server\'s list, as sent');
  assert.equal(touched.block.kind, 'failing');
  assert.equal(touched.runChanged, true);
  assert.deepEqual(run.blocks.map((b) => b.kind), ['tool', 'dashboard', 'content', 'failing'], 'after the answer');
  assert.deepEqual(touched.block.panels, failingPanels);

  // All well: no note.
  const ok = createModel();
  reduce(ok, { type: 'request.query', requestId: 'r', chatId: 'c', message: 'x' });
  assert.equal(reduce(ok, { type: 'run.complete', runId: 'r' }).block, undefined);
  assert.deepEqual(ok.runs[0].failingPanels, []);
});

test('a reloaded run (history has no failingPanels) finds them in its own dashboard updates', () => {
  const update = (dashboardId, panels, deleted = false) =>
    ({ type: 'dashboard.update', dashboardId, version: 1, changes: [], validation: deleted ? null : { panels }, deleted });
  const fail = (panelId, error = `${panelId} broke`) => ({ panelId, status: 'error', error });
  const pass = (panelId) => ({ panelId, status: 'success', rowCount: 3 });
  const m = run([
    { type: 'request.query', requestId: 'r1', chatId: 'c', message: 'build' },
    { type: 'tool.snapshot', toolId: 't1', toolName: 'x', arguments: '{}' },
    { type: 'tool.result', toolId: 't1', result: {} },
    update('a', [fail('y'), fail('x')]),
    update('a', [pass('x')]), // x fixed; y not run again: still failing
    update('b', [fail('z', GDELT_DOWN)]),
    update('c', [fail('w')]),
    update('c', [], true), // deleted: its panels no longer count
    { type: 'content.snapshot', contentId: 'r1_c', text: 'Done.' },
    { type: 'run.complete', runId: 'r1', finishReason: 'stop' },
    // A later run fixes y: its own run has nothing failing.
    { type: 'request.query', requestId: 'r2', chatId: 'c', message: 'fix' },
    update('a', [pass('y')]),
    { type: 'run.complete', runId: 'r2', finishReason: 'stop' },
  ]);
  const [first, second] = m.runs;
  assert.deepEqual(first.failingPanels, [
    { dashboardId: 'a', panelId: 'y', error: 'y broke' },
    { dashboardId: 'b', panelId: 'z', error: GDELT_DOWN },
  ]);
  assert.equal(first.blocks.at(-1).kind, 'failing');
  assert.equal(first.blocks.at(-2).kind, 'content');
  assert.deepEqual(second.failingPanels, []);
  assert.ok(!second.blocks.some((b) => b.kind === 'failing'));
});

test('a failing panel\'s error in plain words: a provider outage is its data source, not its code', () => {
  assert.deepEqual(failureWords(GDELT_DOWN), { provider: 'gdelt', name: 'GDELT', text: 'its data source cannot be reached (GDELT)' });
  assert.deepEqual(
    failureWords('data provider failed, not the code (binance: Binance is limiting requests right now); keep the panel'),
    { provider: 'binance', name: 'Binance', text: 'its data source is limiting requests right now (Binance)' },
  );
  assert.deepEqual(
    failureWords("data provider failed, not the code (tiingo: Tiingo did not accept this server's access key); keep"),
    { provider: 'tiingo', name: 'Tiingo', text: "its data source did not accept this server's access key (Tiingo)" },
  );
  // A sentence this version does not know still reads as the source's.
  assert.equal(failureWords('data provider failed, not the code (x: X melted); keep').text, 'its data source failed: X melted');
  assert.deepEqual(failureWords('TypeError: bars.map is not a function (line 3, column 9)'), { provider: null, name: null, text: 'its code failed' });
  assert.equal(failureWords({ message: 'boom' }).provider, null);
});
