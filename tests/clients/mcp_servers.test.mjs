// The reference MCP filesystem server (npm `@modelcontextprotocol/server-filesystem`) as an
// outside peer of Boardsmith's MCP client: an agent file lists it as a stdio server, a real
// `boardsmith serve` runs it in the shell's sandbox, and the mock model calls its tools through
// POST /api/query. A second instance, allowed to read `/`, shows what the sandbox lets it see.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startServer } from '../../web/tests/harness.mjs';

const here = resolve(new URL('.', import.meta.url).pathname);
const modules = join(here, 'node_modules');
const fsServer = join(modules, '@modelcontextprotocol/server-filesystem/dist/index.js');

let server;
let work;

before(async () => {
  // The shell's workspace, and so the stdio servers' writable tree.
  work = await mkdtemp(join(tmpdir(), 'boardsmith-mcp-work-'));
  await writeFile(join(work, 'notes.txt'), 'gold is up 2% today\n');
  const script = {
    turns: [
      {
        match: { last_user_contains: 'notes', has_tool_results: false },
        steps: [
          { type: 'tool_call', id: 'c1', name: 'fs__read_text_file', arguments: { path: join(work, 'notes.txt') } },
          { type: 'tool_call', id: 'c2', name: 'fs__read_text_file', arguments: { path: '/etc/hostname' } },
        ],
      },
      {
        match: { last_user_contains: 'root', has_tool_results: false },
        steps: [{ type: 'tool_call', id: 'r1', name: 'root__list_directory', arguments: { path: '/' } }],
      },
      { match: { has_tool_results: true }, steps: [{ type: 'text', text: 'Read it.' }] },
    ],
  };
  const fs = (name, allowed) => ({
    name, command: 'node', args: [fsServer, allowed], readOnlyPaths: [modules], timeoutMs: 20000,
  });
  const agent = {
    description: 'Reads files through MCP',
    mode: 'PLAIN_TOOLING',
    plainTooling: { systemPrompt: 'Answer from the files.' },
    mcpServers: [fs('fs', work), fs('root', '/')],
  };
  server = await startServer({
    script, agents: { mcpFiles: agent }, env: { AGENT_BASH_WORKING_DIRECTORY: work },
  });
});

after(async () => {
  await server?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

/** POST /api/query and read the SSE stream to its end: `[{type, ...data}]`. */
async function query(message) {
  const res = await fetch(`${server.url}/api/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${server.token}` },
    body: JSON.stringify({ message, agentKey: 'mcpFiles' }),
  });
  assert.equal(res.status, 200);
  const text = await res.text();
  return text
    .split('\n\n')
    .map((frame) => frame.split('\n').find((l) => l.startsWith('data:')))
    .filter(Boolean)
    .map((line) => JSON.parse(line.slice(5)));
}

test('an agent reads a file through the reference filesystem server; paths outside it are refused', async () => {
  const events = await query('What do my notes say?');
  const starts = events.filter((e) => e.type === 'tool.start');
  assert.deepEqual(starts.map((e) => e.toolName), ['fs__read_text_file', 'fs__read_text_file'], JSON.stringify(events));
  const results = events.filter((e) => e.type === 'tool.result');
  assert.equal(results[0].result, 'gold is up 2% today\n');
  assert.match(results[1].result.error, /Access denied - path outside allowed directories/);
  assert.equal(events.at(-1).type, 'run.complete', JSON.stringify(events.at(-1)));
});

test('the server runs in the sandbox: `/` holds the system trees, the workspace and its own installation only', async () => {
  const events = await query('List the root directory');
  const result = events.find((e) => e.type === 'tool.result');
  assert.ok(typeof result?.result === 'string', JSON.stringify(events));
  const names = result.result.split('\n').map((line) => line.replace(/^\[(DIR|FILE)\] /, ''));
  for (const visible of ['usr', 'etc', 'tmp']) assert.ok(names.includes(visible), result.result);
  // The system trees (`/bin`, `/lib*` are symlinks into `/usr`), its own `/proc`, `/dev`,
  // `/tmp` (the workspace is under it) and `/var`, and the top of the readOnlyPaths entry:
  // no `/root`, `/home`, `/opt`, `/srv` or anything else of the host.
  const allowed = new Set(['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32', 'usr', 'etc', 'dev', 'proc', 'tmp', 'var', modules.split('/')[1]]);
  assert.deepEqual(names.filter((n) => !allowed.has(n)), [], result.result);
});
