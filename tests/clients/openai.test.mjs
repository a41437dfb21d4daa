// The official OpenAI clients as outside peers of Boardsmith's /v1: the npm `openai` package
// here, the PyPI one through openai_client.py (same server, same scripted upstream). A real
// `boardsmith serve` (web/tests/harness.mjs) whose only provider is the mock model.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { startServer } from '../../web/tests/harness.mjs';
import { script, weatherTool } from './script.mjs';

let server;
let client;

before(async () => {
  server = await startServer({ script });
  // No retries: a 429 must reach the test as the error it is.
  client = new OpenAI({ apiKey: server.token, baseURL: `${server.url}/v1`, maxRetries: 0 });
});

after(async () => {
  await server?.close();
});

test('models are listed with the registry facts, and one can be retrieved', async () => {
  const ids = [];
  for await (const m of client.models.list()) ids.push(m.id);
  assert.ok(ids.includes('openai/gpt-4.1'), ids.join(', '));
  assert.ok(ids.every((id) => id.startsWith('openai/')), ids.join(', '));
  const model = await client.models.retrieve('openai/gpt-4.1');
  assert.equal(model.object, 'model');
  assert.equal(model.owned_by, 'openai');
  assert.equal(model.context_window, 1047576);
  assert.equal(model.capabilities.tools, true);
});

test('a completion, not streamed', async () => {
  const c = await client.chat.completions.create({
    model: 'openai/gpt-4.1',
    messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Tell me about carbon' }],
    max_completion_tokens: 50,
    temperature: 0.3,
  });
  assert.equal(c.object, 'chat.completion');
  assert.equal(c.choices[0].message.content, 'Carbon is element six.');
  assert.equal(c.choices[0].finish_reason, 'stop');
  assert.deepEqual(
    [c.usage.prompt_tokens, c.usage.completion_tokens, c.usage.total_tokens, c.usage.prompt_tokens_details.cached_tokens],
    [12, 5, 17, 4],
  );
});

test('an image_url part (a data: URL) reaches a vision model', async () => {
  // A 1×1 PNG.
  const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
  const c = await client.chat.completions.create({
    model: 'openai/gpt-4.1',
    messages: [{
      role: 'user',
      content: [
        { type: 'text', text: 'What is in this chart?' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${png}`, detail: 'low' } },
      ],
    }],
  });
  assert.equal(c.choices[0].message.content, 'A candlestick chart of gold.');
  // Not an image at all: refused, naming the part.
  const err = await client.chat.completions.create({
    model: 'openai/gpt-4.1',
    messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,aGVsbG8=' } }] }],
  }).catch((e) => e);
  assert.equal(err.status, 400);
  assert.equal(err.param, 'messages[0].content[0].image_url.url');
});

test('a completion, streamed chunk by chunk with usage', async () => {
  const stream = await client.chat.completions.create({
    model: 'openai/gpt-4.1',
    messages: [{ role: 'user', content: 'Tell me about carbon' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  const deltas = [];
  let finish;
  let usage;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices[0];
    if (!choice) continue;
    if (choice.delta.content) deltas.push(choice.delta.content);
    if (choice.finish_reason) finish = choice.finish_reason;
  }
  assert.deepEqual(deltas, ['Carbo', 'n is ', 'eleme', 'nt si', 'x.']);
  assert.equal(finish, 'stop');
  assert.equal(usage.total_tokens, 17);
});

test('a tool round trip, with the stream helper collecting the call', async () => {
  const messages = [{ role: 'user', content: 'What is the weather in Paris?' }];
  const runner = client.chat.completions.stream({ model: 'openai/gpt-4.1', messages, tools: [weatherTool] });
  const first = await runner.finalChatCompletion();
  const call = first.choices[0].message.tool_calls[0];
  assert.equal(first.choices[0].finish_reason, 'tool_calls');
  assert.equal(call.id, 'call_w1');
  assert.equal(call.function.name, 'weather');
  assert.deepEqual(JSON.parse(call.function.arguments), { city: 'Paris' });

  messages.push(first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: '12C and sunny' });
  const second = await client.chat.completions.create({ model: 'openai/gpt-4.1', messages, tools: [weatherTool] });
  assert.equal(second.choices[0].message.content, 'It is 12C in Paris.');
});

test('errors arrive as the client\'s typed errors', async () => {
  await assert.rejects(
    client.chat.completions.create({ model: 'anthropic/claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] }),
    (e) => e instanceof OpenAI.NotFoundError && e.status === 404 && /ANTHROPIC_API_KEY/.test(e.message),
  );
  await assert.rejects(
    client.chat.completions.create({ model: 'openai/gpt-4.1', n: 2, messages: [{ role: 'user', content: 'hi' }] }),
    (e) => e instanceof OpenAI.BadRequestError && e.param === 'n' && e.type === 'invalid_request_error',
  );
  await assert.rejects(
    client.chat.completions.create({ model: 'openai/gpt-4.1', stream: true, messages: [{ role: 'user', content: 'busy?' }] }),
    (e) => e instanceof OpenAI.RateLimitError && e.headers.get('retry-after') === '1' && /slow down/.test(e.message),
  );
  const stranger = new OpenAI({ apiKey: 'not-the-token', baseURL: `${server.url}/v1`, maxRetries: 0 });
  await assert.rejects(stranger.models.list(), (e) => e instanceof OpenAI.AuthenticationError);
});

test('the Python client passes the same suite', async () => {
  const python = process.env.BOARDSMITH_PYTHON || 'python3';
  const file = fileURLToPath(new URL('openai_client.py', import.meta.url));
  const child = spawn(python, [file], {
    env: { ...process.env, OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: server.token },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => { output += d; });
  child.stderr.on('data', (d) => { output += d; });
  const code = await new Promise((resolve) => child.on('exit', resolve));
  assert.equal(code, 0, `${python} ${file} failed:\n${output}`);
  assert.match(output, /Ran 6 tests/, output);
});

test('an agent answers through the client, with its run in the extension field', async () => {
  // The agent's own base URL: clients that know only /models and /chat/completions work as is.
  const agent = new OpenAI({ apiKey: server.token, baseURL: `${server.url}/v1/agents/demoModePlain`, maxRetries: 0 });
  const models = [];
  for await (const m of agent.models.list()) models.push(m.id);
  assert.deepEqual(models, ['agent/demoModePlain']);
  const c = await agent.chat.completions.create({
    model: 'agent/demoModePlain',
    messages: [{ role: 'user', content: 'Tell me about carbon' }],
  });
  assert.equal(c.choices[0].message.content, 'Carbon is element six.');
  assert.equal(c.model, 'agent/demoModePlain');
  const types = c.boardsmith.events.map((e) => e.type);
  assert.equal(types.at(-1), 'run.complete');
  // Streamed, continuing the same chat.
  const stream = await agent.chat.completions.create({
    model: 'agent/demoModePlain',
    stream: true,
    chat_id: c.boardsmith.chat_id,
    messages: [{ role: 'user', content: 'And again?' }],
  });
  let text = '';
  const seen = [];
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta?.content ?? '';
    if (chunk.boardsmith) seen.push(chunk.boardsmith.type);
  }
  assert.equal(text, 'Carbon is element six.');
  assert.ok(seen.includes('run.start') && seen.includes('run.complete'), seen.join(', '));
});
