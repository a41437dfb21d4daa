// Single sign-on with OpenID Connect in real Chromium against a real server and a real provider
// (oidc-idp.mjs: oidc-provider on loopback). The server is configured by a boardsmith.toml in its
// working directory with one provider, "Test IdP", whose `groups` claim gives the role (no
// default_role: someone with no matching group is refused).
//
// The sign-in page lists the provider; its button goes to the provider, whose login page sends
// the browser back through the server's callback, signed in with the role of the person's groups
// (the highest that matches; a single string counts too) and the username of
// `preferred_username`, else `email`. The server asked with PKCE (S256), a nonce and a state and
// authenticated with client_secret_basic; the session cookie is new and is not the server token;
// sign-ins are in the audit log. Refusals are a page with one sentence and a link back to `/`:
// no matching group, a state that is not the one the flow started with, no flow at all. A
// failing providers request leaves the password form working.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { startServer, apiOf, newPage, closeBrowser, screenshot } from './harness.mjs';
import { startIdp, ACCOUNTS } from './oidc-idp.mjs';

let server;
let api;
let idp;
let callbackUrl;

/** A port free on 127.0.0.1 right now: the server's, known before the provider is made. */
function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

const config = (issuer) => `
[[auth.oidc]]
id = "test"
name = "Test IdP"
issuer = "${issuer}"
client_id = "boardsmith"
client_secret = "a-secret"
role_claim = "groups"
admin = ["bs-admins"]
editor = ["bs-editors"]
viewer = ["staff"]
`;

before(async () => {
  const port = await freePort();
  callbackUrl = `http://127.0.0.1:${port}/api/session/oidc/test/callback`;
  idp = await startIdp({ redirectUri: callbackUrl });
  server = await startServer({
    env: { BOARDSMITH_ADDR: `127.0.0.1:${port}` },
    files: { 'boardsmith.toml': config(idp.issuer) },
  });
  assert.equal(server.url, `http://127.0.0.1:${port}`);
  api = apiOf(server.url);
});

after(async () => {
  await closeBrowser();
  await server?.close();
  await idp?.close();
});

/**
 * A fresh page (newPage without the token) that also counts the console errors of a missing
 * /favicon.ico: the server's refusal page names no icon, so Chromium asks for /favicon.ico, which
 * the server does not have (the app's page names a `data:` icon and never asks).
 */
async function openPage() {
  const page = await newPage({ signIn: false });
  page.faviconMisses = 0;
  page.on('console', (m) => {
    if (m.type() === 'error' && /^https?:\/\/[^/]+\/favicon\.ico$/.test(m.location().url ?? '')) page.faviconMisses += 1;
  });
  return page;
}

/**
 * The page's errors but those expected: Chromium logs every refusal (`403 (Forbidden)` …), the
 * refusal pages' too, and the missing favicon; `also` matches more. Anything else is a failure.
 */
function unexpected(page, also = null) {
  let favicons = page.faviconMisses;
  return page.errors.filter((e) => {
    if (/Failed to load resource: the server responded with a status of (400|401|403) /.test(e)) return false;
    if (favicons > 0 && /status of 404 /.test(e)) {
      favicons -= 1;
      return false;
    }
    return !also?.test(e);
  });
}

/** The page's session as the server sees it: `{status, body}` of GET /api/session from the page. */
const session = (page) => page.evaluate(async () => {
  const res = await fetch('/api/session');
  return { status: res.status, body: await res.json().catch(() => null) };
});

const sessionCookie = async (page) => (await page.context().cookies(server.url)).find((c) => c.name.startsWith('boardsmith_session_'));

/**
 * From the sign-in page through the provider's login as `login`: clicks "Sign in with Test IdP",
 * fills the provider's form and submits it. Returns the browser's cookies on the way (on the
 * sign-in page, and once the flow started) and the answer of the server's callback.
 */
async function throughProvider(page, login) {
  await page.goto(server.url);
  await page.waitForSelector('.signin[data-open]');
  // Every cookie of the browser, whatever its path (the flow's may be narrower than `/`).
  const before = await page.context().cookies();
  const link = page.locator('.signin-sso-link[data-provider="test"]');
  await link.waitFor();
  await link.click();
  await page.waitForURL((u) => u.origin === idp.issuer);
  await page.waitForSelector('.idp-login');
  const started = await page.context().cookies();
  const callback = page.waitForResponse((r) => r.url().startsWith(`${callbackUrl}?`));
  await page.fill('.idp-login input[name=login]', login);
  await page.fill('.idp-login input[name=password]', ACCOUNTS[login].password);
  await page.click('.idp-submit');
  return { before, started, callback: await callback };
}

/** A refusal page: its status, its one sentence, a link back to `/`; nobody is signed in. */
async function assertRefused(page, response) {
  assert.ok([400, 401, 403].includes(response.status()), `refused with ${response.status()}`);
  assert.match(response.headers()['content-type'] ?? '', /^text\/html/);
  const text = (await page.locator('body').innerText()).trim();
  assert.ok(text.length > 0 && text.length < 400, text);
  assert.doesNotMatch(text, /a-secret|code_verifier/i);
  const back = page.locator('a[href="/"]');
  assert.equal(await back.count(), 1, 'one link back to /');
  assert.equal((await session(page)).status, 401, 'not signed in');
  assert.equal(await sessionCookie(page), undefined, 'no session cookie');
  await back.click();
  await page.waitForSelector('.signin[data-open]');
  return text;
}

test('the server lists the provider; its start route redirects to the provider with PKCE, a nonce and a state', async () => {
  const res = await fetch(`${server.url}/api/session/providers`);
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.equal(body.code, 0);
  assert.deepEqual(body.data, [{ id: 'test', name: 'Test IdP', startUrl: '/api/session/oidc/test/start' }]);

  const start = await fetch(`${server.url}/api/session/oidc/test/start`, { redirect: 'manual' });
  assert.equal(start.status, 303);
  const to = new URL(start.headers.get('location'));
  assert.equal(`${to.origin}${to.pathname}`, `${idp.issuer}/auth`);
  const q = Object.fromEntries(to.searchParams);
  assert.equal(q.client_id, 'boardsmith');
  assert.equal(q.response_type, 'code');
  assert.equal(q.redirect_uri, callbackUrl);
  assert.deepEqual(q.scope.split(' ').sort(), ['email', 'openid', 'profile'], 'the default scopes');
  assert.equal(q.code_challenge_method, 'S256');
  assert.match(q.code_challenge, /^[A-Za-z0-9_-]{43}$/);
  assert.ok(q.state?.length >= 16, `state ${q.state}`);
  assert.ok(q.nonce?.length >= 16, `nonce ${q.nonce}`);
  const cookies = start.headers.getSetCookie();
  assert.ok(cookies.length >= 1, 'the flow is kept in a cookie');
  for (const c of cookies) {
    assert.match(c, /;\s*HttpOnly/i, c);
    assert.match(c, /;\s*SameSite=Lax/i, c);
  }
  // A second start is another flow.
  const again = new URL((await fetch(`${server.url}/api/session/oidc/test/start`, { redirect: 'manual' })).headers.get('location'));
  assert.notEqual(again.searchParams.get('state'), q.state);
  assert.notEqual(again.searchParams.get('nonce'), q.nonce);
  assert.notEqual(again.searchParams.get('code_challenge'), q.code_challenge);
});

test('ann signs in with Test IdP and comes back an editor; her session cookie is new; sign out works', async () => {
  const page = await openPage();
  await page.goto(server.url);
  await page.waitForSelector('.signin[data-open]');
  const link = page.locator('.signin-sso-link[data-provider="test"]');
  await link.waitFor();
  assert.equal((await link.textContent()).trim(), 'Sign in with Test IdP');
  assert.equal(await link.getAttribute('href'), '/api/session/oidc/test/start');
  assert.equal(await page.locator('.signin-sso').isVisible(), true);
  assert.equal(await page.locator('.signin-username').isVisible(), true, 'the password form stays');
  await screenshot(page, 'oidc-signin');

  const auths = idp.authRequests.length;
  const tokens = idp.tokenRequests.length;
  const { before, started, callback } = await throughProvider(page, 'ann');
  assert.equal(callback.status(), 303);
  assert.equal(new URL(callback.headers().location, server.url).pathname, '/');
  await page.waitForSelector('.account-menu:not([hidden]) .account-name');
  assert.equal(new URL(page.url()).origin, server.url);
  assert.equal(await page.locator('.signin').count(), 0);

  // What the provider saw: one authorization request with PKCE and a nonce, one token request
  // authenticated with HTTP Basic.
  const auth = idp.authRequests.slice(auths);
  assert.equal(auth.length, 1, JSON.stringify(auth));
  assert.equal(auth[0].code_challenge_method, 'S256');
  assert.ok(auth[0].nonce);
  assert.deepEqual(idp.tokenRequests.slice(tokens), [{ authorization: 'Basic' }]);

  const { status, body } = await session(page);
  assert.equal(status, 200);
  assert.equal(body.data.user.username, 'ann', 'preferred_username, not the subject');
  assert.equal(body.data.user.role, 'editor', 'staff and bs-editors: the highest, editor');
  assert.equal(body.data.via, 'session');
  const label = body.data.user.displayName?.trim() || body.data.user.username;
  assert.equal(await page.locator('.account-name').textContent(), label);
  assert.equal(await page.locator('.account-role').textContent(), 'editor');

  const cookie = await sessionCookie(page);
  assert.ok(cookie, JSON.stringify(await page.context().cookies(server.url)));
  assert.equal(cookie.httpOnly, true);
  assert.notEqual(cookie.value, server.token);
  assert.ok(!cookie.value.includes(server.token), 'the cookie does not carry the server token');
  const earlier = [...before, ...started].map((c) => c.value);
  assert.ok(!earlier.includes(cookie.value), 'a new value, not one set before the sign-in');
  assert.equal(await page.evaluate(() => document.cookie), '', 'scripts cannot read the cookies');

  await page.click('.account-toggle');
  await page.click('.account-signout');
  await page.waitForSelector('.signin[data-open]');
  assert.equal((await session(page)).status, 401);
  await page.locator('.signin-sso-link[data-provider="test"]').waitFor();
  assert.deepEqual(unexpected(page), []);
  await page.context().close();
});

test('root (a single group, as a string) comes back an admin; the sign-ins are in the audit log', async () => {
  const page = await openPage();
  const { callback } = await throughProvider(page, 'root');
  assert.equal(callback.status(), 303);
  await page.waitForSelector('.account-menu:not([hidden]) .account-name');
  const { body } = await session(page);
  assert.equal(body.data.user.username, 'root');
  assert.equal(body.data.user.role, 'admin');
  assert.equal(await page.locator('.account-role').textContent(), 'admin');
  assert.equal((await page.evaluate(() => fetch('/api/admin/users').then((r) => r.status))), 200, 'and acts as one');

  const audit = await api.get('/api/admin/audit');
  const oidc = audit.filter((e) => e.kind === 'sign_in' && /OpenID Connect/i.test(JSON.stringify(e.detail ?? '')));
  assert.ok(oidc.length >= 2, JSON.stringify(audit.filter((e) => e.kind === 'sign_in')));
  assert.deepEqual(unexpected(page), []);
  await page.context().close();
});

test('someone with no preferred_username is known by their email', async () => {
  const page = await openPage();
  await throughProvider(page, 'mail');
  await page.waitForSelector('.account-menu:not([hidden]) .account-name');
  const { body } = await session(page);
  assert.equal(body.data.user.username, 'mail@example.test');
  assert.equal(body.data.user.role, 'viewer');
  assert.deepEqual(unexpected(page), []);
  await page.context().close();
});

test('nobody, in no group the server maps, is refused with a sentence and not signed in', async () => {
  const page = await openPage();
  const { callback } = await throughProvider(page, 'nobody');
  const sentence = await assertRefused(page, callback);
  console.log(`nobody's refusal (${callback.status()}): ${sentence}`);
  assert.equal((await api.get('/api/admin/users')).some((u) => u.username === 'nobody'), false, 'no account was made');
  assert.deepEqual(unexpected(page), []);
  await page.context().close();
});

test('a callback whose state is not the flow’s is refused, even with a good code', async () => {
  const page = await openPage();
  // Hold the provider's answer: its redirect to the callback (a real code, the real state) is
  // not followed. Chromium does not route the hops of a redirect, so the login form's post is
  // routed and its redirects followed here (the context's cookies go along) up to the callback.
  let held = null;
  const login = (url) => url.href.startsWith(`${idp.issuer}/interaction/`) && url.pathname.endsWith('/login');
  await page.route(login, async (route) => {
    let res = await route.fetch({ maxRedirects: 0 });
    let location = res.headers().location ?? '';
    for (let hops = 0; location && !location.startsWith(`${callbackUrl}?`) && hops < 10; hops++) {
      res = await page.context().request.get(new URL(location, idp.issuer).href, { maxRedirects: 0 });
      location = res.headers().location ?? '';
    }
    if (!location.startsWith(`${callbackUrl}?`)) return route.fulfill({ response: res });
    held = location;
    return route.fulfill({ status: 200, contentType: 'text/html', body: '<p class="held">held</p>' });
  });
  await page.goto(server.url);
  await page.waitForSelector('.signin[data-open]');
  const names = async () => (await page.context().cookies(callbackUrl)).map((c) => c.name);
  const before = await names();
  await page.locator('.signin-sso-link[data-provider="test"]').click();
  await page.waitForSelector('.idp-login');
  // What the start route set for the callback (the provider has set nothing for `/` yet).
  const flow = (await names()).filter((n) => !before.includes(n));
  assert.ok(flow.length > 0, 'the start route set a cookie for the callback');
  await page.fill('.idp-login input[name=login]', 'ann');
  await page.fill('.idp-login input[name=password]', ACCOUNTS.ann.password);
  await page.click('.idp-submit');
  await page.waitForSelector('.held');
  await page.unroute(login);
  const real = new URL(held);
  assert.ok(real.searchParams.get('code'));
  const state = real.searchParams.get('state');
  assert.ok(state);

  // The flow's cookie is there: the state, not a missing flow, is what the server refuses.
  const now = await names();
  assert.ok(flow.every((n) => now.includes(n)), 'the flow cookie goes to the callback');

  const tampered = new URL(real);
  tampered.searchParams.set('state', `${state.slice(0, -4)}${state.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`);
  const res = await page.goto(tampered.href);
  const sentence = await assertRefused(page, res);
  console.log(`tampered state refusal (${res.status()}): ${sentence}`);
  assert.deepEqual(unexpected(page), []);
  await page.context().close();
});

test('a callback with no flow started in this browser is refused', async () => {
  const page = await openPage();
  const res = await page.goto(`${callbackUrl}?code=made-up-code&state=made-up-state`);
  await assertRefused(page, res);
  assert.deepEqual(unexpected(page), []);
  await page.context().close();
});

test('when the providers request fails, the password form still signs in', async () => {
  await api.post('/api/admin/users', { username: 'pat', password: 'password-for-pat-1', role: 'viewer' });
  const page = await openPage();
  await page.route('**/api/session/providers', (route) => route.fulfill({ status: 500, contentType: 'text/plain', body: 'broken' }));
  const providers = page.waitForResponse((r) => r.url().endsWith('/api/session/providers'));
  await page.goto(server.url);
  await page.waitForSelector('.signin[data-open]');
  assert.equal((await providers).status(), 500);
  assert.equal(await page.locator('.signin-sso').isHidden(), true);
  assert.equal(await page.locator('.signin-sso-link').count(), 0);
  await page.fill('.signin-username', 'pat');
  await page.fill('.signin-password', 'password-for-pat-1');
  await page.click('.signin-submit');
  await page.waitForSelector('.account-menu:not([hidden]) .account-name');
  assert.equal(await page.locator('.account-role').textContent(), 'viewer');
  assert.deepEqual(unexpected(page, /status of 500/), []);
  await page.context().close();
});
