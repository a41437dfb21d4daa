// The official MCP Python SDK (PyPI `mcp`) as an outside peer of Boardsmith's MCP server:
// mcp_client.py over streamable HTTP at /mcp of a real `boardsmith serve`, and over stdio
// through `boardsmith mcp`. Then the web app in Chromium, watching a dashboard an MCP client
// makes appear in its list without a reload.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { apiOf, bin, closeBrowser, newPage, startServer } from '../../web/tests/harness.mjs';

let server;
let readKey;
let annKey;
let stdioData;

before(async () => {
  server = await startServer();
  const key = await apiOf(server.url).post('/api/keys', { name: 'mcp reader', scopes: ['read'] });
  readKey = key.key;
  // An editor's own key: she sees only her dashboards and the team's.
  await apiOf(server.url).post('/api/admin/users', { username: 'ann', password: 'a long enough password', role: 'editor' });
  const signIn = await fetch(`${server.url}/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'ann', password: 'a long enough password' }),
  });
  const cookie = signIn.headers.get('set-cookie').split(';')[0];
  const made = await fetch(`${server.url}/api/keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie, origin: server.url },
    body: JSON.stringify({ name: 'ann over mcp', scopes: ['read', 'write'] }),
  });
  annKey = (await made.json()).data.key;
  stdioData = await mkdtemp(join(tmpdir(), 'boardsmith-mcp-stdio-'));
});

after(async () => {
  await closeBrowser();
  await server?.close();
  if (stdioData) await rm(stdioData, { recursive: true, force: true });
});

/** Runs mcp_client.py with `args`; resolves to its exit code and output. */
function python(args = []) {
  const exe = process.env.BOARDSMITH_PYTHON || 'python3';
  const file = fileURLToPath(new URL('mcp_client.py', import.meta.url));
  const child = spawn(exe, [file, ...args], {
    env: {
      ...process.env,
      MCP_URL: `${server.url}/mcp`,
      MCP_TOKEN: server.token,
      MCP_READ_KEY: readKey,
      MCP_ANN_KEY: annKey,
      MCP_STDIO_DATA: stdioData,
      BOARDSMITH_BIN: bin,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => { stdout += d; });
  child.stderr.on('data', (d) => { stderr += d; });
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

test('the Python MCP SDK: tools, resources, notifications, prompts, scopes, stdio', async () => {
  const { code, stdout, stderr } = await python();
  assert.equal(code, 0, `mcp_client.py failed:\n${stdout}\n${stderr}`);
  assert.match(stderr, /Ran \d+ tests/);
});

test('a dashboard made over MCP appears in the open web app by itself', async () => {
  const page = await newPage();
  await page.goto(server.url);
  await page.locator('.dashboard-item').first().waitFor();
  const title = `Made over MCP ${Date.now()}`;
  const made = await python(['create', title]);
  assert.equal(made.code, 0, made.stderr);
  const id = made.stdout.trim();
  assert.match(id, /^db_/);
  // No reload, no click: the server's `dashboards.changed` reaches the list.
  const item = page.locator(`.dashboard-item[data-dashboard-id="${id}"]`);
  await item.waitFor({ timeout: 10_000 });
  assert.equal(await item.locator('.item-title').textContent(), title);
  await item.click();
  await page.locator('.panel[data-panel-id="gold-kline"]').waitFor({ timeout: 10_000 });
  assert.deepEqual(page.errors, []);
});
