// The V8 side of the differential fidelity test (tests/it/fidelity.rs).
//
// stdin: a JSON array of {name, code}; each `code` is the body of an async function that
// returns a plain object (the Rust side wraps the corpus program so that both engines see the
// same text). stdout: a JSON array of {name, result}, `result` being what the function returned,
// or {harness: "..."} when it did not settle in time.
//
// Default: Node's V8, each program in a fresh `vm` context (only the ECMAScript globals, like
// the sandbox). `--chromium`: the newer V8 of the machine's Chromium (through playwright-core
// from web/node_modules), each program in a fresh page, for features Node 20 lacks.
import { readFileSync } from 'node:fs';
import vm from 'node:vm';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const TIMEOUT_MS = 5000;
const cases = JSON.parse(readFileSync(0, 'utf8'));
const here = path.dirname(fileURLToPath(import.meta.url));

function settle(promise) {
  let timer;
  const timeout = new Promise((resolve) => {
    timer = setTimeout(() => resolve({ harness: `did not settle within ${TIMEOUT_MS} ms` }), TIMEOUT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function inNode({ code }) {
  const context = vm.createContext({});
  try {
    // The result object is built inside the context; JSON round trip makes it plain here.
    const p = vm.runInContext(`(async () => {\n${code}\n})().then((r) => JSON.stringify(r))`, context, {
      timeout: TIMEOUT_MS,
    });
    const text = await settle(p);
    return typeof text === 'string' ? JSON.parse(text) : text;
  } catch (e) {
    // A program that does not parse is an outcome like a throw, not a harness failure.
    if (e && e.name === 'SyntaxError') return { err: 'SyntaxError', msg: e.message };
    return { harness: `node: ${e && e.message}` };
  }
}

async function inChromium(list) {
  const require = createRequire(path.join(here, '../../web/package.json'));
  const { chromium } = require('playwright-core');
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  });
  const out = [];
  try {
    const context = await browser.newContext();
    for (const c of list) {
      const page = await context.newPage();
      try {
        const text = await settle(
          page.evaluate(`(async () => {\n${c.code}\n})().then((r) => JSON.stringify(r))`),
        );
        out.push({ name: c.name, result: typeof text === 'string' ? JSON.parse(text) : text });
      } catch (e) {
        const m = String(e && e.message);
        out.push({
          name: c.name,
          result: /SyntaxError/.test(m) ? { err: 'SyntaxError', msg: m } : { harness: `chromium: ${m}` },
        });
      } finally {
        await page.close();
      }
    }
  } finally {
    await browser.close();
  }
  return out;
}

let results;
if (process.argv.includes('--chromium')) {
  results = await inChromium(cases);
} else {
  results = [];
  for (const c of cases) results.push({ name: c.name, result: await inNode(c) });
}
process.stdout.write(JSON.stringify(results));
