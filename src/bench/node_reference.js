// The Node reference of `boardsmith bench sandbox`: a long-lived process that runs panel code
// the way a sandbox worker does, with Node's `vm` instead of Boa. One JSON line in per run
// ({code, kline, posts}: the code and the recorded results of its two sdk calls), one line
// out (the result's JSON text, or {"error": message}). Every run gets a fresh context with an
// `sdk` stub answering from the recorded values and a JS `utils.sma`; the compiled wrapper of
// a given code is kept, as V8 would cache it anyway.
'use strict';
const vm = require('vm');
const readline = require('readline');

// utils.sma: missing values (non-finite, non-numbers) make their windows null.
function sma(xs, p) {
  const out = new Array(xs.length).fill(null);
  let sum = 0;
  let missing = 0;
  const miss = (x) => typeof x !== 'number' || !Number.isFinite(x);
  for (let i = 0; i < xs.length; i++) {
    if (miss(xs[i])) missing++; else sum += xs[i];
    if (i >= p) {
      if (miss(xs[i - p])) missing--; else sum -= xs[i - p];
    }
    if (i + 1 >= p && missing === 0) {
      const m = sum / p;
      out[i] = Number.isFinite(m) ? m : null;
    }
  }
  return out;
}

const scripts = new Map();
function compiled(code) {
  let s = scripts.get(code);
  if (!s) {
    s = new vm.Script(`(async () => {\n${code}\n})()`);
    scripts.set(code, s);
  }
  return s;
}

const rl = readline.createInterface({ input: process.stdin });
rl.on('line', async (line) => {
  let reply;
  try {
    const { code, kline, posts } = JSON.parse(line);
    const answer = (v) => async () => v;
    const ctx = vm.createContext({
      sdk: { market: { getKline: answer(kline) }, social: { searchPosts: answer(posts) } },
      utils: { sma },
    });
    const value = await compiled(code).runInContext(ctx);
    reply = JSON.stringify(value === undefined ? null : value);
  } catch (e) {
    reply = JSON.stringify({ error: String(e) });
  }
  process.stdout.write(reply + '\n');
});
