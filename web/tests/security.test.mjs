// Signing in, and attacks from a foreign page, in real Chromium against a real server.
//
// The attacker's page is served from another port on the same host (127.0.0.1): that is the
// same *site*, so the browser does send the analyst's SameSite=Strict session cookie with its
// requests. What must stop it is the server's Origin check, its JSON-only bodies and the
// WebSocket's Origin check. Afterwards the state is read through the API: nothing changed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { startServer, apiOf, newPage, closeBrowser } from './harness.mjs';

let server;
let api;
let attacker;
let attackerUrl;

before(async () => {
  server = await startServer();
  api = apiOf(server.url);
  attacker = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><title>cute cats</title><iframe name="sink"></iframe>');
  });
  await new Promise((ok) => attacker.listen(0, '127.0.0.1', ok));
  attackerUrl = `http://127.0.0.1:${attacker.address().port}`;
});

after(async () => {
  await closeBrowser();
  attacker?.close();
  await server?.close();
});

/** What the API shows: every dashboard's id, version, title and deleted flag. */
async function fingerprint() {
  const list = await api.get('/api/dashboards?includeDeleted=true');
  return JSON.stringify(list.map((d) => [d.id, d.version, d.title, d.deleted]));
}

test('without a session the app shows the sign-in screen; the token signs in', async () => {
  const page = await newPage({ signIn: false });
  await page.goto(server.url);
  await page.waitForSelector('.signin[data-open]');
  assert.equal(await page.locator('.app-sidebar .dashboard-item').count(), 0);
  // The token form is the secondary way in, behind its disclosure under the password form.
  await page.click('.signin-token summary');
  await page.fill('.signin-token input[name=token]', 'wrong-token-0123456789');
  await page.click('.signin-token button[type=submit]');
  await page.waitForSelector('text=That token is not this server');
  await page.fill('input[name=token]', server.token);
  await page.click('button[type=submit]');
  // The app may already have opened a dashboard (`/#d=…`) by the time the load event is seen.
  await page.waitForURL((u) => u.origin === server.url && u.pathname === '/' && u.search === '');
  await page.waitForSelector('.app-sidebar .dashboard-item');
  assert.equal(await page.locator('.signin').count(), 0);
  assert.equal(new URL(page.url()).search, '', 'the token left the address bar');
  const cookies = await page.context().cookies(server.url);
  const session = cookies.find((c) => c.name.startsWith('boardsmith_session_'));
  assert.ok(session, JSON.stringify(cookies));
  assert.equal(session.httpOnly, true);
  assert.equal(session.sameSite, 'Strict');
  assert.equal(await page.evaluate(() => document.cookie), '', 'scripts cannot read the session');
  await page.context().close();
});

test('a foreign page cannot change or read anything, though the analyst is signed in', async () => {
  const page = await newPage(); // signed in: the context holds the session cookie
  const [first, second] = await api.get('/api/dashboards');
  // A deleted dashboard: its bodyless restore is a write the page must not be able to make.
  await api.del(`/api/dashboards/${second.id}`);
  const before = await fingerprint();
  const target = server.url;
  const id = first.id;
  const deleted = second.id;

  await page.goto(attackerUrl);
  const report = await page.evaluate(async ({ target, id, deleted }) => {
    const state = { title: 'pwned', layout: { columns: 2 }, panels: [] };
    const writes = [
      ['POST', '/api/dashboards', { state }],
      ['PUT', `/api/dashboards/${id}`, { baseVersion: 1, state }],
      ['POST', `/api/dashboards/${id}/revert`, { version: 1 }],
      ['DELETE', `/api/dashboards/${id}`, null],
      ['POST', `/api/dashboards/${deleted}/restore`, null],
      ['POST', '/api/tools/execute', { code: `return ${JSON.stringify(state)}` }],
      ['POST', '/api/tools/mutate', { dashboard_id: id, code: '(s) => null' }],
      ['POST', '/api/query', { message: 'run bash: id' }],
      ['POST', '/api/panels/preview', { code: 'return 1' }],
    ];
    const out = { sent: 0, readable: [], ws: [] };
    for (const [method, path, body] of writes) {
      // The "simple request" no preflight stops: text/plain, no-cors, with cookies.
      await fetch(target + path, {
        method: method === 'PUT' || method === 'DELETE' ? 'POST' : method,
        mode: 'no-cors', credentials: 'include',
        headers: { 'content-type': 'text/plain' },
        body: body ? JSON.stringify(body) : undefined,
      }).then(() => out.sent++, () => {});
      // A Blob without a type: no Content-Type header at all.
      await fetch(target + path, { method: 'POST', mode: 'no-cors', credentials: 'include', body: new Blob([JSON.stringify(body ?? {})]) })
        .then(() => out.sent++, () => {});
      // The real method with JSON: preflighted, and the preflight is refused.
      await fetch(target + path, {
        method, credentials: 'include', headers: { 'content-type': 'application/json' },
        body: body ? JSON.stringify(body) : undefined,
      }).then((r) => out.readable.push(`${method} ${path}: ${r.status}`), () => {});
    }
    // Reads: a CORS read fails; a no-cors read is opaque.
    await fetch(`${target}/api/dashboards`, { credentials: 'include' })
      .then(async (r) => out.readable.push(`read: ${(await r.text()).slice(0, 80)}`), () => {});
    const opaque = await fetch(`${target}/api/chats`, { mode: 'no-cors', credentials: 'include' });
    if (opaque.type !== 'opaque' || (await opaque.text()) !== '') out.readable.push('opaque read');
    // An HTML form POST (text/plain encoding, top-level-like navigation into an iframe).
    const form = document.createElement('form');
    Object.assign(form, { method: 'POST', action: `${target}/api/dashboards`, enctype: 'text/plain', target: 'sink' });
    const input = Object.assign(document.createElement('input'), { name: `{"state":${JSON.stringify(state)},"x":"`, value: '"}' });
    form.append(input);
    document.body.append(form);
    form.submit();
    await new Promise((r) => setTimeout(r, 500));
    // The WebSocket: the handshake carries the cookie, the server checks the Origin.
    await new Promise((resolve) => {
      const ws = new WebSocket(`${target.replace('http', 'ws')}/ws`);
      ws.onopen = () => {
        out.ws.push('open');
        ws.send(JSON.stringify({ type: 'subscribe', dashboardId: id }));
        ws.send(JSON.stringify({ type: 'set_vars', dashboardId: id, vars: { symbol: 'PWNED' } }));
      };
      ws.onmessage = (m) => out.ws.push(`message: ${String(m.data).slice(0, 60)}`);
      ws.onclose = () => resolve();
      setTimeout(() => { ws.close(); resolve(); }, 2000);
    });
    return out;
  }, { target, id, deleted });

  assert.ok(report.sent > 0, 'the no-cors requests were sent');
  assert.deepEqual(report.readable, [], 'nothing was readable');
  assert.deepEqual(report.ws, [], 'the WebSocket never opened');
  assert.equal(await fingerprint(), before, 'no dashboard changed');

  // The cookie was there all along: the same browser context uses the app normally.
  await page.goto(`${target}/#d=${id}`);
  await page.waitForSelector('.dashboard-view .panel');
  assert.equal(await page.locator('.signin').count(), 0);
  await page.context().close();
});
