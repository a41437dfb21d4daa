// Unit tests of the agent picker's rule and the no-model refusal (no DOM): node --test web/src/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isDemoAgent, listedAgents, isNoModelError } from './agents.js';

const a = (key, extra = {}) => ({ key, name: key, description: '', ...extra });

test('demo and test agents by key, as a word of its own, or by the server marking them', () => {
  for (const key of ['demoModeReact', 'demoAction', 'demo', 'demo-x', 'demo_x', 'Demo2', 'test', 'testAgent', 'test-bot', 'pickerTest', 'x-demo', 'x_test']) {
    assert.ok(isDemoAgent(a(key)), key);
  }
  for (const key of ['dashboard', 'dashboardZh', 'analystKb', 'researchDesk', 'macroWriter', 'demon', 'testimony', 'latest', 'contest', 'duo']) {
    assert.ok(!isDemoAgent(a(key)), key);
  }
  assert.ok(isDemoAgent(a('desk', { hidden: true })));
  assert.ok(isDemoAgent(a('desk', { tags: ['Demo'] })));
  assert.ok(!isDemoAgent(a('desk', { tags: ['research'] })));
});

test('the picker hides them unless asked, keeps the agent in use, never lists nothing', () => {
  const all = [a('dashboard'), a('demoModePlain'), a('researchDesk'), a('testAgent')];
  assert.deepEqual(listedAgents(all).map((x) => x.key), ['dashboard', 'researchDesk']);
  assert.deepEqual(listedAgents(all, { showDemo: true }).map((x) => x.key), all.map((x) => x.key));
  assert.deepEqual(listedAgents(all, { keep: 'demoModePlain' }).map((x) => x.key), ['dashboard', 'demoModePlain', 'researchDesk']);
  assert.deepEqual(listedAgents([a('demoOnly')]).map((x) => x.key), ['demoOnly']);
});

test('a refusal for want of a model is recognised; other failures are not', () => {
  assert.ok(isNoModelError('no usable model for agent `dashboard`: no LLM provider is configured: set OPENAI_API_KEY, ANTHROPIC_API_KEY'));
  assert.ok(isNoModelError('no usable model for agent `x`: provider `deepseek` needs an API key: set DEEPSEEK_API_KEY'));
  assert.ok(!isNoModelError('The connection to the server was lost.'));
  assert.ok(!isNoModelError('model call failed: 500 upstream error'));
  assert.ok(!isNoModelError(undefined));
});
