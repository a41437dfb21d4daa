// Test harness: a real `boardsmith serve` on loopback (temp data directory, the embedded web app),
// the scripted mock model in front of it, and headless Chromium driven by playwright-core.
//
// The server binary is BOARDSMITH_BIN, else target/debug/boardsmith (built by `cargo test`).
// The web app it serves is this checkout's `web/`, built once per test file into a temp directory
// (BOARDSMITH_WEB_DIR), not the bundle embedded when the binary was compiled: a web change is
// tested without a new compile. BOARDSMITH_WEB_DIR set by the caller is used as it is;
// BOARDSMITH_WEB_DIR=embedded tests the binary's own bundle.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtemp, mkdir, writeFile, rm } from 'node:fs/promises';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { randomBytes } from 'node:crypto';
import { chromium } from 'playwright-core';

const root = resolve(new URL('../..', import.meta.url).pathname);
export const bin = process.env.BOARDSMITH_BIN || join(root, 'target/debug/boardsmith');
export const screenshotDir = join(root, 'target/screenshots');

/**
 * Every child started here that has not exited. `close()` stops them; these are SIGKILLed when
 * the test process exits, so a failure before `close()` does not leave a server running.
 */
const children = new Set();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

/** The data providers the server knows (`sdk-spec/providers/*.json`). */
function providerNames() {
  const dir = join(root, 'sdk-spec/providers');
  return readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')).name);
}

let webDir;
/** `web/` built by build.mjs into a temp directory, once; the caller's BOARDSMITH_WEB_DIR first. */
async function builtWeb() {
  const given = process.env.BOARDSMITH_WEB_DIR;
  if (given) return given === 'embedded' ? '' : given;
  if (!webDir) {
    const dir = await mkdtemp(join(tmpdir(), 'boardsmith-web-dist-'));
    execFileSync(process.execPath, [join(root, 'web/build.mjs'), dir], { stdio: ['ignore', 'ignore', 'inherit'] });
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
    webDir = dir;
  }
  return webDir;
}

/** Spawns `args` and resolves with the child once a line of `stream` matches `pattern`. */
function spawnUntil(args, { cwd, env, stream, pattern, what }) {
  if (!existsSync(bin)) {
    throw new Error(`${bin} not found: run \`cargo build\` first or set BOARDSMITH_BIN`);
  }
  const child = spawn(bin, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.on('exit', () => children.delete(child));
  const log = [];
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      // Not started in time: nobody will stop it but us.
      child.kill('SIGKILL');
      reject(new Error(`${what} did not start in 30 s:\n${log.join('\n')}`));
    }, 30_000);
    for (const name of ['stdout', 'stderr']) {
      createInterface({ input: child[name] }).on('line', (line) => {
        log.push(line);
        if (process.env.BOARDSMITH_TEST_LOG) console.error(`[${what}] ${line}`);
        const m = name === stream && line.match(pattern);
        if (m) {
          clearTimeout(timer);
          resolvePromise({ child, url: m[1], log });
        }
      });
    }
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${code}:\n${log.join('\n')}`));
    });
  });
}

function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((r) => {
    child.on('exit', r);
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
  });
}

/**
 * Starts the mock model with `script` and a server that uses it. `agents` are extra agent files
 * `{key: definition}` and `files` extra files in the server's working directory, written before
 * start: `{'tools/x.qlc': json}` as JSON, a string as it is (`{'boardsmith.toml': text}`); `env`
 * extra variables for the server. Returns `{url, mockUrl, dir, log, close()}`.
 */
export async function startServer({ script, agents = {}, files = {}, env: extraEnv = {} } = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'boardsmith-web-'));
  const token = randomBytes(24).toString('hex');
  const env = {
    BOARDSMITH_ADDR: '127.0.0.1:0',
    BOARDSMITH_TOKEN: token,
    BOARDSMITH_DATA: join(dir, 'data'),
    BOARDSMITH_WORKERS: '2',
    AGENT_EXTERNAL_DIR: join(dir, 'agents'),
    AGENT_TOOLS_EXTERNAL_DIR: join(dir, 'tools'),
    AGENT_VIEWPORT_EXTERNAL_DIR: join(dir, 'viewports'),
    RUST_LOG: 'warn',
    // Tests never reach real hosts: only demo data unless a test points a provider at loopback.
    BOARDSMITH_OFFLINE: '1',
    BOARDSMITH_WEB_DIR: await builtWeb(),
    ...extraEnv,
  };
  if (env.BOARDSMITH_OFFLINE === '0') {
    // A live server's start-up check calls every provider: those the test did not point at
    // loopback go to a loopback address the outbound policy refuses, never to a real host.
    for (const name of providerNames()) {
      const key = `BOARDSMITH_${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_BASE_URL`;
      env[key] ??= 'http://127.0.0.1:9';
    }
  }
  await mkdir(env.AGENT_EXTERNAL_DIR, { recursive: true });
  for (const [key, def] of Object.entries(agents)) {
    await writeFile(join(env.AGENT_EXTERNAL_DIR, `${key}.json`), JSON.stringify(def, null, 2));
  }
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  }
  let mock = null;
  if (script) {
    const file = join(dir, 'mock.json');
    await writeFile(file, JSON.stringify(script));
    mock = await spawnUntil(['mock-llm', '--script', file, '--port', '0'], {
      cwd: dir, env: {}, stream: 'stdout', pattern: /listening on (http:\/\/\S+)/, what: 'mock-llm',
    });
    env.OPENAI_API_KEY = 'test-key';
    env.OPENAI_BASE_URL = `${mock.url}/v1`;
  }
  const serve = (addr) => spawnUntil(['serve'], {
    cwd: dir, env: { ...env, BOARDSMITH_ADDR: addr }, stream: 'stderr',
    pattern: /boardsmith listening on (http:\/\/\S+)/, what: 'boardsmith',
  });
  let server;
  try {
    server = await serve(env.BOARDSMITH_ADDR);
  } catch (e) {
    // No handle to close reaches the caller: stop the mock model here.
    if (mock) await stop(mock.child);
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
  const handle = {
    url: server.url,
    token,
    dir,
    /** The mock model's address (`http://127.0.0.1:PORT`), when started with a script. */
    mockUrl: mock?.url,
    get log() { return server.log; },
    /** Stops the server and starts it again on the same address over the same data. */
    async restart() {
      await stop(server.child);
      server = await serve(new URL(server.url).host);
    },
    async close() {
      running.delete(handle);
      await stop(server.child);
      if (mock) await stop(mock.child);
      await rm(dir, { recursive: true, force: true });
    },
  };
  running.add(handle);
  return handle;
}

/** Servers started and not closed: `newPage` signs in to each. */
const running = new Set();

/** The server's API from the test side: `{code, msg, data}` unwrapped, non-zero codes thrown. */
export function apiOf(url) {
  const call = async (method, path, body) => {
    const server = [...running].find((s) => s.url === url);
    const auth = server ? { authorization: `Bearer ${server.token}` } : {};
    const res = await fetch(url + path, {
      method,
      headers: body ? { 'content-type': 'application/json', ...auth } : auth,
      body: body ? JSON.stringify(body) : undefined,
    });
    const env = await res.json();
    if (env.code !== 0) throw new Error(`${method} ${path}: ${res.status} ${env.msg}`);
    return env.data;
  };
  return {
    get: (p) => call('GET', p),
    post: (p, b = {}) => call('POST', p, b),
    put: (p, b) => call('PUT', p, b),
    del: (p) => call('DELETE', p),
  };
}

let browser;
/** One Chromium for the whole file (CHROMIUM overrides /usr/bin/chromium). */
export async function launchBrowser() {
  browser ??= await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    // No sandbox: CI runs as root in a container; a small /dev/shm there crashes tabs.
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
  return browser;
}

export async function closeBrowser() {
  await browser?.close();
  browser = undefined;
}

/** The browser preferences (web/src/prefs.js) that list the demo and test agents in the chat. */
export const SHOW_DEMO_AGENTS = { 'boardsmith.pref.showDemoAgents': 'true' };

/**
 * A fresh page (own storage) at `width`×`height` that records console errors, uncaught
 * exceptions and requests to any host but the server in `page.errors`. With `signIn` (the
 * default) it first signs in to every running server the way a user does: it opens the
 * `/?token=` link, which sets the session cookie and redirects to `/`. `storage` is put in
 * localStorage before the app starts (e.g. SHOW_DEMO_AGENTS).
 */
export async function newPage({ width = 1280, height = 800, colorScheme = 'light', signIn = true, storage = {} } = {}) {
  const context = await (await launchBrowser()).newContext({ viewport: { width, height }, colorScheme });
  if (Object.keys(storage).length) {
    await context.addInitScript((items) => {
      for (const [k, v] of Object.entries(items)) localStorage.setItem(k, v);
    }, storage);
  }
  const page = await context.newPage();
  if (signIn) {
    for (const server of running) {
      await page.goto(`${server.url}/?token=${server.token}`);
      if (new URL(page.url()).search) throw new Error(`sign-in to ${server.url} did not redirect: ${page.url()}`);
    }
  }
  page.errors = [];
  page.on('console', (m) => {
    if (m.type() === 'error') page.errors.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => page.errors.push(`uncaught: ${e.message}`));
  // Everything the app needs is served by the binary: any other host is a failure (no CDN).
  page.on('request', (r) => {
    const url = new URL(r.url());
    const local = url.hostname === '127.0.0.1' || ['data:', 'about:', 'blob:'].includes(url.protocol);
    if (!local) page.errors.push(`external request: ${r.url()}`);
  });
  return page;
}

/** Saves a full-page screenshot as target/screenshots/<name>.png. */
export async function screenshot(page, name) {
  await mkdir(screenshotDir, { recursive: true });
  await page.screenshot({ path: join(screenshotDir, `${name}.png`) });
}

/**
 * Non-blank canvases inside `selector`: a canvas counts when its pixels have at least `minColors`
 * distinct colours (an empty or cleared canvas has one).
 */
export async function paintedCanvases(page, selector, minColors = 3) {
  return page.$$eval(`${selector} canvas`, (canvases, min) => canvases.filter((c) => {
    if (!c.width || !c.height) return false;
    const ctx = c.getContext('2d');
    if (!ctx) return false;
    const data = ctx.getImageData(0, 0, c.width, c.height).data;
    const colors = new Set();
    for (let i = 0; i < data.length && colors.size < min; i += 4 * 7) {
      colors.add((data[i] << 24) | (data[i + 1] << 16) | (data[i + 2] << 8) | data[i + 3]);
    }
    return colors.size >= min;
  }).length, minColors);
}
