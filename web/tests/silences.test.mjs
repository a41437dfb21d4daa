// Alert silences in real Chromium (noise control), against a server that judges alert rules
// every second (BOARDSMITH_ALERT_EVERY=1s). "Alert desk"'s metric card shows 5 and its rule "X
// above 3" fires; "Quiet desk"'s shows 1 until the test moves it to 5 (a new version of its
// state) while a silence holds its rule back. Both are shared with the team: an editor (eddie)
// and a viewer (vera) see them.
// - An editor silences the firing rule from the bell for 1 h with a comment: the alert says
//   "Silenced until HH:MM" (the server's endsAt in local time), the server lists the silence, the
//   panel's rule list says the same at once; a refusal shows the server's message; Unsilence
//   ends it (the server's endsAt is past) and Silence is offered again.
// - A notification recorded under a silence is dimmed in the bell's list and tagged "silenced";
//   Unsilence from the panel's rule list ends the silence and the state in force is sent,
//   tagged "settled".
// - A viewer sees "Silenced until" but neither Silence nor Unsilence (the server refuses her).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, apiOf, newPage, closeBrowser, screenshot } from './harness.mjs';

let server;
let api;
let desk; // "Alert desk": x-high fires from the start
let quiet; // "Quiet desk": q-high fires once the test moves its value

const card = (id, title, value) => ({
  id, title, type: 'metric_card', renderer: 'custom', layout: { w: 1, h: 3 }, code: `return { value: ${value}, label: '${title}' };`,
});
const deskState = {
  title: 'Alert desk',
  layout: { columns: 2 },
  panels: [card('x', 'X', 5)],
  alerts: [{ id: 'x-high', name: 'X above 3', panelId: 'x', when: { op: '>', value: 3 } }],
};
const quietState = (value) => ({
  title: 'Quiet desk',
  layout: { columns: 2 },
  panels: [card('q', 'Q', value)],
  alerts: [{ id: 'q-high', name: 'Q above 3', panelId: 'q', when: { op: '>', value: 3 } }],
});

const EDDIE = { username: 'eddie', password: 'eddie-edits-boards-1' };
const VERA = { username: 'vera', password: 'vera-reads-charts-1' };

before(async () => {
  server = await startServer({ env: { BOARDSMITH_ALERT_EVERY: '1s' } });
  api = apiOf(server.url);
  await api.post('/api/admin/users', { ...EDDIE, role: 'editor' });
  await api.post('/api/admin/users', { ...VERA, role: 'viewer' });
  desk = (await api.post('/api/dashboards', { state: deskState })).id;
  quiet = (await api.post('/api/dashboards', { state: quietState(1) })).id;
  for (const id of [desk, quiet]) await api.put(`/api/dashboards/${id}/access`, { visibility: 'team', users: [] });
});

after(async () => {
  await closeBrowser();
  await server?.close();
});

/** A page signed in as `who` (not the token's owner). */
async function pageAs(who) {
  const page = await newPage({ signIn: false });
  const res = await page.request.post(`${server.url}/api/session`, { data: who });
  assert.equal(res.status(), 200);
  page.refused = [];
  page.on('response', (r) => { if (r.status() >= 400) page.refused.push(`${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}`); });
  return page;
}

/** Chromium's log line for a refused request with one of `statuses` (a test's own refusals). */
const refusal = (statuses) => new RegExp(`Failed to load resource: the server responded with a status of (${statuses.join('|')}) `);

/** "HH:MM" of `ms` in the page's local time: what "Silenced until" must say for today. */
const clockIn = (page, ms) => page.evaluate((t) => {
  const d = new Date(t);
  return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
}, ms);

/** Polls `fn` until it returns something truthy (`what` names it in the failure). */
async function until(what, fn, ms = 30_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const got = await fn();
    if (got) return got;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

test('an editor silences a firing rule from the bell for 1h, the panel says so too, and Unsilence ends it', async () => {
  const page = await pageAs(EDDIE);
  await page.goto(`${server.url}/#d=${desk}`);
  await page.waitForSelector(`.dashboard-view[data-dashboard-id="${desk}"] .panel[data-panel-id="x"][data-status="ok"]`);
  await page.waitForSelector('.alerts-bell[data-state="ready"][data-count="1"]', { timeout: 45_000 });
  await page.click('.alerts-toggle');
  const item = page.locator(`.alerts-pop .alert-item[data-dashboard-id="${desk}"][data-rule-id="x-high"]`);
  await item.waitFor();
  assert.equal(await item.getAttribute('data-status'), 'firing');
  assert.equal(await item.locator('.silence-until').count(), 0, 'not silenced yet');

  // A refusal shows the server's own message: the request is bent on its way to name a rule the
  // dashboard does not have, which the server refuses.
  const expected = await page.evaluate((id) => fetch('/api/silences', {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ dashboardId: id, ruleId: 'gone', duration: '1h' }),
  }).then(async (r) => ({ status: r.status, msg: (await r.json()).msg })), desk);
  assert.equal(expected.status, 400);
  assert.match(expected.msg, /x-high/);
  await page.route('**/api/silences', (route) => {
    const req = route.request();
    if (req.method() !== 'POST') return route.continue();
    return route.continue({ postData: JSON.stringify({ ...req.postDataJSON(), ruleId: 'gone' }) });
  });
  await item.locator('.silence-open').click();
  assert.deepEqual(await item.locator('.silence-duration').evaluateAll((bs) => bs.map((b) => b.dataset.duration)), ['1h', '4h', '24h']);
  await screenshot(page, 'alerts-silence-form');
  await item.locator('.silence-duration[data-duration="1h"]').click();
  await item.locator('.silence-error').waitFor();
  assert.equal(await item.locator('.silence-error').textContent(), expected.msg);
  assert.equal(await page.locator('.alerts-pop').count(), 1, 'the popover stays open');
  assert.deepEqual(await api.get('/api/silences'), [], 'nothing was made');
  await page.unroute('**/api/silences');

  // For real: 1 h, with a comment.
  await item.locator('.silence-comment').fill('FOMC at 14:00');
  await item.locator('.silence-duration[data-duration="1h"]').click();
  await item.locator('.silence-until').waitFor();
  assert.equal(await item.locator('.silence-error').count(), 0);
  const [made, ...others] = await api.get('/api/silences');
  assert.deepEqual(others, []);
  assert.equal(made.dashboardId, desk);
  assert.equal(made.ruleId, 'x-high');
  assert.equal(made.key, undefined);
  assert.equal(made.comment, 'FOMC at 14:00');
  assert.equal(made.createdBy.username, 'eddie');
  assert.equal(made.endsAt - made.startsAt, 3_600_000);
  const sameDay = await page.evaluate(([a, b]) => new Date(a).toDateString() === new Date(b).toDateString(), [made.endsAt, Date.now()]);
  const until = await item.locator('.silence-until').textContent();
  if (sameDay) assert.equal(until, `Silenced until ${await clockIn(page, made.endsAt)}`);
  else assert.match(until, new RegExp(`^Silenced until \\w{3} ${await clockIn(page, made.endsAt)}$`));
  assert.match(await item.locator('.silence-until').getAttribute('title'), /silenced by eddie — “FOMC at 14:00”$/);
  assert.equal(await item.locator('.silence-open').count(), 0);
  assert.equal(await item.locator('.silence-end').count(), 1);
  await screenshot(page, 'alerts-silenced-bell');

  // The panel's rule list heard of it at once (no poll in between).
  await page.click('.alerts-toggle');
  await page.waitForSelector('.alerts-pop', { state: 'detached' });
  const xBell = page.locator('.panel[data-panel-id="x"] .panel-alerts');
  await xBell.locator('.panel-alerts-toggle').click();
  const rule = xBell.locator('.panel-alert-rule[data-rule-id="x-high"]');
  await rule.waitFor();
  assert.equal(await rule.locator('.silence').getAttribute('data-silenced'), 'true');
  assert.equal(await rule.locator('.silence-until').textContent(), until);
  assert.equal(await rule.locator('.silence-end').count(), 1);
  await screenshot(page, 'alerts-silenced-panel');
  await xBell.locator('.panel-alerts-close').click();

  // Unsilence from the bell: the server ends it now; Silence is offered again, here and there.
  await page.click('.alerts-toggle');
  await item.locator('.silence-end').click();
  await item.locator('.silence-open').waitFor();
  assert.equal(await item.locator('.silence-until').count(), 0);
  const [ended] = await api.get('/api/silences');
  assert.equal(ended.id, made.id, 'an ended silence is still listed (for a day)');
  assert.ok(ended.endsAt <= Date.now(), `ended: ${ended.endsAt} <= now`);
  assert.ok(ended.endsAt < made.endsAt);
  await page.click('.alerts-toggle');
  await page.waitForSelector('.alerts-pop', { state: 'detached' });
  await xBell.locator('.panel-alerts-toggle').click();
  await rule.locator('.silence-open').waitFor();
  assert.equal(await rule.locator('.silence-until').count(), 0);

  assert.deepEqual(page.refused, ['400 POST /api/silences', '400 POST /api/silences']);
  assert.deepEqual(page.errors.filter((e) => !refusal([400]).test(e)), []);
  await page.context().close();
});

test('a notification recorded under a silence is dimmed and tagged; Unsilence from the panel sends the state in force, tagged settled', async () => {
  // The rule is ok (1 < 3); a silence on it, then its value moves to 5: it fires, recorded only.
  await until('q-high judged ok', async () => (await api.get(`/api/alerts?dashboardId=${quiet}`)).some((a) => a.evaluatedAt > 0 && a.status === 'ok'));
  const silence = await api.post('/api/silences', { dashboardId: quiet, ruleId: 'q-high', duration: '4h', comment: 'maintenance' });
  const record = await api.get(`/api/dashboards/${quiet}`);
  await api.put(`/api/dashboards/${quiet}`, { baseVersion: record.version, state: quietState(5) });
  const muted = await until('the muted notification', async () => (await api.get('/api/notifications'))
    .find((n) => n.dashboardId === quiet && n.ruleId === 'q-high' && n.status === 'firing'));
  assert.equal(muted.muted, 'silenced');
  assert.equal(muted.silence, silence.id);

  const page = await pageAs(EDDIE);
  await page.goto(`${server.url}/#d=${quiet}`);
  await page.waitForSelector(`.dashboard-view[data-dashboard-id="${quiet}"] .panel[data-panel-id="q"][data-status="ok"]`);
  await page.waitForSelector('.alerts-bell[data-state="ready"]');
  await page.click('.alerts-toggle');
  const note = page.locator(`.alerts-notes .notif-item[data-status="firing"][data-muted="silenced"]`);
  await note.first().waitFor();
  assert.equal(await note.count(), 1);
  assert.equal(await note.locator('.notif-title').textContent(), 'Fired: Q above 3');
  assert.deepEqual(await note.locator('.notif-tag').evaluateAll((ts) => ts.map((t) => [t.dataset.kind, t.textContent])), [['muted', 'silenced']]);
  assert.match(await note.locator('.notif-tag').getAttribute('title'), /^Recorded, not sent: a silence/);
  const opacity = Number(await note.locator('.notif-link').evaluate((a) => getComputedStyle(a).opacity));
  assert.ok(opacity < 1, `dimmed: opacity ${opacity}`);
  // The firing notification the desk's rule sent (not muted) is neither dimmed nor tagged.
  const sent = page.locator(`.alerts-notes .notif-item[data-status="firing"]:not([data-muted])`).first();
  await sent.waitFor();
  assert.equal(await sent.locator('.notif-tag').count(), 0);
  assert.equal(Number(await sent.locator('.notif-link').evaluate((a) => getComputedStyle(a).opacity)), 1);
  // The active alert says so, silenced for 4 h by the token's owner.
  const item = page.locator(`.alerts-pop .alert-item[data-dashboard-id="${quiet}"][data-rule-id="q-high"]`);
  await item.locator('.silence-until').waitFor();
  assert.match(await item.locator('.silence-until').getAttribute('title'), /silenced by the server token — “maintenance”$/);
  await screenshot(page, 'alerts-muted-notification');
  await page.click('.alerts-toggle');
  await page.waitForSelector('.alerts-pop', { state: 'detached' });

  // Unsilence from the panel's rule list.
  const qBell = page.locator('.panel[data-panel-id="q"] .panel-alerts');
  await page.waitForSelector('.panel[data-panel-id="q"] .panel-alerts[data-state="firing"]', { timeout: 45_000 });
  await qBell.locator('.panel-alerts-toggle').click();
  const rule = qBell.locator('.panel-alert-rule[data-rule-id="q-high"]');
  await rule.locator('.silence-until').waitFor();
  await rule.locator('.silence-end').click();
  await rule.locator('.silence-open').waitFor();
  const [ended] = (await api.get('/api/silences')).filter((s) => s.id === silence.id);
  assert.ok(ended.endsAt <= Date.now(), 'ended on the server');

  // Channels now hear the state in force: a settled firing notification, sent.
  const settled = await until('the settled notification', async () => (await api.get('/api/notifications'))
    .find((n) => n.dashboardId === quiet && n.reason === 'settled'));
  assert.equal(settled.status, 'firing');
  assert.equal(settled.muted, undefined);
  await qBell.locator('.panel-alerts-close').click();
  await page.click('.alerts-toggle');
  const tagged = page.locator('.alerts-notes .notif-item[data-reason="settled"]');
  await tagged.waitFor();
  assert.equal(await tagged.getAttribute('data-muted'), null);
  assert.deepEqual(await tagged.locator('.notif-tag').evaluateAll((ts) => ts.map((t) => [t.dataset.kind, t.textContent])), [['reason', 'settled']]);
  // The bell's list followed the panel's Unsilence.
  assert.equal(await item.locator('.silence-until').count(), 0);
  assert.equal(await item.locator('.silence-open').count(), 1);

  assert.deepEqual(page.refused, []);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('a viewer sees “Silenced until” but neither Silence nor Unsilence; the server refuses her too', async () => {
  // Both rules fire; one is silenced (by the owner's token).
  await until('both rules firing', async () => (await api.get('/api/alerts?status=firing')).length === 2);
  const silence = await api.post('/api/silences', { dashboardId: quiet, ruleId: 'q-high', duration: '24h' });

  const page = await pageAs(VERA);
  await page.goto(`${server.url}/#d=${desk}`);
  await page.waitForSelector(`.dashboard-view[data-dashboard-id="${desk}"][data-access="view"]`);
  await page.waitForSelector('.alerts-bell[data-state="ready"][data-count="2"]', { timeout: 45_000 });
  await page.click('.alerts-toggle');
  const x = page.locator(`.alerts-pop .alert-item[data-rule-id="x-high"]`);
  const q = page.locator(`.alerts-pop .alert-item[data-rule-id="q-high"]`);
  await q.locator('.silence-until').waitFor();
  assert.match(await q.locator('.silence-until').textContent(), /^Silenced until (\w{3} )?\d\d:\d\d$/);
  assert.equal(await q.locator('.silence-end').count(), 0, 'no Unsilence');
  await x.waitFor();
  assert.equal(await x.getAttribute('data-status'), 'firing');
  assert.equal(await x.locator('.silence-open').count(), 0, 'no Silence');
  assert.equal(await page.locator('.alerts-pop .silence-open, .alerts-pop .silence-end').count(), 0);
  await page.click('.alerts-toggle');
  await page.waitForSelector('.alerts-pop', { state: 'detached' });

  // Nor in the panel's rule list.
  const xBell = page.locator('.panel[data-panel-id="x"] .panel-alerts');
  await page.waitForSelector('.panel[data-panel-id="x"] .panel-alerts[data-state="firing"]', { timeout: 45_000 });
  await xBell.locator('.panel-alerts-toggle').click();
  const rule = xBell.locator('.panel-alert-rule[data-rule-id="x-high"]');
  await rule.waitFor();
  assert.equal(await rule.getAttribute('data-status'), 'firing');
  assert.equal(await rule.locator('.silence-open, .silence-end').count(), 0);

  // What the buttons would have asked is refused: the role may not write.
  const tried = await page.evaluate(async ([id, sid]) => {
    const post = await fetch('/api/silences', {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ dashboardId: id, ruleId: 'x-high', duration: '1h' }),
    });
    const del = await fetch(`/api/silences/${sid}`, { method: 'DELETE' });
    return [post.status, del.status];
  }, [desk, silence.id]);
  assert.deepEqual(tried, [403, 403]);
  assert.ok((await api.get('/api/silences')).find((s) => s.id === silence.id).endsAt > Date.now(), 'still in force');

  assert.deepEqual(page.refused.filter((r) => !/^403 GET \/api\/(chats|agents)$/.test(r) && !/^403 (POST|DELETE) \/api\/silences/.test(r)), []);
  assert.deepEqual(page.errors.filter((e) => !refusal([403]).test(e)), []);
  await page.context().close();
});
