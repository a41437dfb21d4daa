// The browser app against a real server, in headless Chromium: example dashboards render, a
// scripted chat builds and edits a dashboard live (and says which panels it left failing, also
// after a reload), panel.data updates charts in place, panel errors show in their panel, actions
// and frontend tools work. Screenshots: target/screenshots/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:http';
import { startServer, apiOf, newPage, closeBrowser, screenshot, paintedCanvases, SHOW_DEMO_AGENTS } from './harness.mjs';
import { script, confirmAgent, pickerAgent, shellAgent, qlcFiles, teamAgents } from './script.mjs';

let server;
let api;

before(async () => {
  server = await startServer({ script, agents: { confirmer: confirmAgent, picker: pickerAgent, sheller: shellAgent, ...teamAgents }, files: qlcFiles });
  api = apiOf(server.url);
});

after(async () => {
  await closeBrowser();
  await server?.close();
});

/** Waits until every panel of the open dashboard has left `loading`. */
async function panelsSettled(page) {
  await page.waitForSelector('.dashboard-view .panel');
  await page.waitForFunction(() => {
    const panels = [...document.querySelectorAll('.dashboard-view .panel')];
    return panels.length > 0 && panels.every((p) => p.dataset.status === 'ok' || p.dataset.status === 'error');
  }, null, { timeout: 30_000 });
}

/**
 * Opens dashboard `id` through the URL and waits until it is the one shown with its panels
 * settled: a fresh page may still show the dashboard it opened on its own (the most recently
 * updated), whose settled panels must not pass for this one's. A timeout says what was open.
 */
async function openDashboard(page, base, id) {
  await page.goto(`${base}/#d=${id}`);
  try {
    await page.waitForSelector(`.dashboard-view[data-dashboard-id="${id}"] .panel`, { state: 'attached' });
  } catch (e) {
    const seen = await page.evaluate(() => ({
      hash: location.hash,
      open: document.querySelector('.dashboard-view')?.dataset.dashboardId,
      live: document.querySelector('.live-status')?.dataset.state,
      title: document.querySelector('.dashboard-view')?.textContent.slice(0, 80),
    }));
    throw new Error(`dashboard ${id} did not open: ${JSON.stringify(seen)}`, { cause: e });
  }
  await panelsSettled(page);
}

/** Sends `message` to `agent` from the chat pane. */
async function ask(page, agent, message) {
  await page.selectOption('select.chat-agent', agent);
  await page.fill('textarea.chat-input', message);
  await page.click('.chat-send');
}

const chartTypes = new Set(['candlestick', 'line', 'area', 'bar', 'heatmap', 'pie', 'radar', 'scatter']);

test('every example dashboard renders: panels ok, charts painted, no console errors', async () => {
  const dashboards = await api.get('/api/dashboards');
  assert.equal(dashboards.length, 5, 'the five example dashboards');
  const page = await newPage();
  for (const d of dashboards) {
    await openDashboard(page, server.url, d.id);
    const panels = await page.$$eval('.dashboard-view .panel', (ps) => ps.map((p) => ({
      id: p.dataset.panelId, type: p.dataset.type, status: p.dataset.status,
    })));
    assert.equal(panels.length, d.panels, `${d.title}: one element per panel`);
    for (const p of panels) {
      assert.equal(p.status, 'ok', `${d.title}: panel ${p.id} is ${p.status}`);
      if (chartTypes.has(p.type)) {
        const painted = await paintedCanvases(page, `.panel[data-panel-id="${p.id}"]`);
        assert.ok(painted > 0, `${d.title}: panel ${p.id} (${p.type}) has a painted canvas`);
      }
    }
    await screenshot(page, `dashboard-${d.title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`);
  }
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('panel.data pushes update charts in place (a variable change, a server refresh)', async () => {
  const gold = (await api.get('/api/dashboards')).find((d) => d.title === 'Gold Market Monitor');
  const page = await newPage();
  await openDashboard(page, server.url, gold.id);
  const kline = page.locator('.panel[data-panel-id="gold-kline"]');
  const before = await kline.evaluate((p) => ({
    seq: Number(p.dataset.seq), mounts: p.dataset.mounts, updates: Number(p.dataset.updates), canvas: p.querySelector('canvas') !== null,
  }));
  assert.ok(before.canvas);
  await kline.evaluate((p) => { p.querySelector('canvas').dataset.marker = 'original'; });
  await page.selectOption('.dashboard-vars [name="symbol"]', 'XAGUSD');
  await page.waitForFunction((seq) => {
    const p = document.querySelector('.panel[data-panel-id="gold-kline"]');
    return Number(p.dataset.seq) > seq && p.dataset.status === 'ok';
  }, before.seq);
  const afterUpdate = await kline.evaluate((p) => ({
    mounts: p.dataset.mounts, updates: Number(p.dataset.updates), marker: p.querySelector('canvas[data-marker="original"]') !== null,
  }));
  assert.equal(afterUpdate.mounts, before.mounts, 'the chart was not re-created');
  assert.ok(afterUpdate.updates > before.updates, 'the data was applied in place');
  assert.ok(afterUpdate.marker, 'the same canvas element is still there');

  // An ECharts panel refreshed from the server: setOption on the same instance.
  const heat = page.locator('.panel[data-panel-id="gold-corr"]');
  const h0 = await heat.evaluate((p) => ({ seq: Number(p.dataset.seq), mounts: p.dataset.mounts, updates: Number(p.dataset.updates) }));
  await api.post(`/api/dashboards/${gold.id}/refresh`, { panelId: 'gold-corr' });
  await page.waitForFunction((seq) => Number(document.querySelector('.panel[data-panel-id="gold-corr"]').dataset.seq) > seq, h0.seq);
  assert.equal(await heat.getAttribute('data-mounts'), h0.mounts, 'the ECharts instance was kept');
  assert.ok(Number(await heat.getAttribute('data-updates')) > h0.updates);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a newer bar goes in with series.update, anything else with setData', async () => {
  // Bars 0..n-1, one a day: n 10 → 11 appends one newer bar; 11 → 5 rewrites the series.
  const code = 'const n = Number(vars.n);\n' +
    'return Array.from({ length: n }, (_, i) => ({ time: 1717027200 + i * 86400, value: 100 + i }));';
  const created = await api.post('/api/dashboards', {
    state: {
      title: 'Growing series',
      layout: { columns: 1 },
      variables: [{ name: 'n', label: 'Bars', type: 'select', options: ['10', '11', '5'], default: '10' }],
      panels: [{ id: 'grow', title: 'Growing', type: 'line', renderer: 'lightweight-charts', code }],
    },
  });
  const page = await newPage();
  await openDashboard(page, server.url, created.id);
  const panel = page.locator('.panel[data-panel-id="grow"]');
  const mounts = await panel.getAttribute('data-mounts');
  const step = async (n) => {
    const seq = Number(await panel.getAttribute('data-seq'));
    await page.selectOption('.dashboard-vars [name="n"]', n);
    await page.waitForFunction((s) => Number(document.querySelector('.panel[data-panel-id="grow"]').dataset.seq) > s, seq);
    return panel.getAttribute('data-apply');
  };
  assert.equal(await step('11'), 'update', 'one newer bar: series.update');
  assert.equal(await step('5'), 'set', 'a shorter series: setData');
  assert.equal(await panel.getAttribute('data-mounts'), mounts, 'the same chart throughout');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a 5,000-row table draws its first 1,000 rows and says so', async () => {
  const code = 'return Array.from({ length: 5000 }, (_, i) => ({ symbol: `S${i}`, price: i / 10 }));';
  const created = await api.post('/api/dashboards', {
    state: { title: 'Big table', layout: { columns: 1 }, panels: [{ id: 'big', title: 'Big', type: 'table', renderer: 'custom', code }] },
  });
  const page = await newPage();
  await openDashboard(page, server.url, created.id);
  const panel = page.locator('.panel[data-panel-id="big"]');
  assert.equal(await panel.locator('tbody tr').count(), 1000);
  assert.match(await panel.locator('.more-rows').innerText(), /1,000 of 5,000/);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('each panel says where its data came from: DEMO DATA for generated numbers, the provider for live ones', async () => {
  // A recorded Frankfurter answer (the real wire shape) served on loopback in place of the API.
  const upstream = createServer((req, res) => {
    if (!req.url.startsWith('/v1/latest')) { res.statusCode = 404; res.end(); return; }
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ amount: 1.0, base: 'USD', date: '2026-11-25', rates: { EUR: 0.9214, JPY: 157.12 } }));
  });
  await new Promise((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${upstream.address().port}`;
  const live = await startServer({
    env: { BOARDSMITH_OFFLINE: '0', BOARDSMITH_FRANKFURTER_BASE_URL: origin, BOARDSMITH_OUTBOUND_ALLOW: origin },
  });
  try {
    const created = await apiOf(live.url).post('/api/dashboards', {
      state: {
        title: 'Origins', layout: { columns: 2 }, panels: [
          { id: 'fx', title: 'FX', type: 'table', renderer: 'custom',
            code: "return await sdk.frankfurter.latest({ symbols: 'EUR,JPY' });" },
          { id: 'gold', title: 'Gold', type: 'metric_card', renderer: 'custom',
            code: "const q = await sdk.market.getQuote({ symbol: 'XAUUSD' }); return { label: 'Gold', value: q.price };" },
        ],
      },
    });
    const page = await newPage();
    await openDashboard(page, live.url, created.id);
    const fx = page.locator('.panel[data-panel-id="fx"]');
    const gold = page.locator('.panel[data-panel-id="gold"]');
    assert.equal(await fx.getAttribute('data-demo'), 'false');
    assert.match(await fx.locator('.panel-provider').innerText(), /^frankfurter/i);
    assert.equal(await fx.locator('.demo-badge').count(), 0);
    assert.match(await fx.locator('.panel-source').getAttribute('title'), new RegExp(`${origin}/v1/latest`));
    assert.equal(await gold.getAttribute('data-demo'), 'true');
    assert.equal(await gold.locator('.demo-badge').innerText(), 'DEMO DATA');
    // Demo data is not a delay: connected and every panel current reads Live.
    assert.equal(await page.locator('.live-status .live-label').innerText(), 'Live');
    assert.equal(await page.getAttribute('.live-status', 'data-health'), 'ok');
    await screenshot(page, 'panel-origins');
    assert.deepEqual(page.errors, []);
    await page.close();
  } finally {
    await live.close();
    upstream.close();
  }
});

test('a failing panel shows its error, with the line, in that panel only', async () => {
  const created = await api.post('/api/dashboards', { template: 'macro', title: 'Broken macro' });
  const id = created.id ?? created.dashboardId;
  const record = await api.get(`/api/dashboards/${id}`);
  const state = record.state;
  const broken = state.panels[0];
  broken.code = 'const x = 1;\nthrow new Error("feed is down");\nreturn x;';
  await api.put(`/api/dashboards/${id}`, { baseVersion: record.version, state });
  const page = await newPage();
  await openDashboard(page, server.url, id);
  const panel = page.locator(`.panel[data-panel-id="${broken.id}"]`);
  assert.equal(await panel.getAttribute('data-status'), 'error');
  const message = await panel.locator('.panel-error').innerText();
  assert.match(message, /feed is down/);
  assert.match(message, /line 2/i);
  const others = await page.$$eval('.dashboard-view .panel', (ps, bad) => ps.filter((p) => p.dataset.panelId !== bad).map((p) => p.dataset.status), broken.id);
  assert.ok(others.length > 0 && others.every((s) => s === 'ok'), `other panels ok: ${others}`);
  await screenshot(page, 'panel-error');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a scripted chat builds a dashboard, then a new panel appears without a reload', async () => {
  const page = await newPage();
  await page.goto(server.url);
  await page.evaluate(() => { window.__sameDocument = true; });
  await page.waitForSelector('select.chat-agent');
  await ask(page, 'dashboard', 'Build me a gold desk');
  await page.waitForSelector('.chat-run[data-status="complete"]', { timeout: 30_000 });
  // Tool cards are collapsed <details>: their parts exist but are not visible.
  const code = await page.locator('.chat-tool[data-tool-name="execute"] .chat-tool-code').textContent();
  assert.match(code, /sdk\.market\.getKline/);
  // dashboard.update opened the new dashboard, and marked the call that saved it with a link.
  await page.waitForSelector('.dashboard-view .panel[data-panel-id="desk-kline"]');
  await page.waitForSelector('.chat-tool[data-tool-name="execute"] .chat-link-button', { state: 'attached' });
  await panelsSettled(page);
  const kline = page.locator('.panel[data-panel-id="desk-kline"]');
  await kline.evaluate((p) => { p.dataset.marker = 'original'; });
  const mounts = await kline.getAttribute('data-mounts');

  await page.fill('textarea.chat-input', 'Now add gold news');
  await page.click('.chat-send');
  await page.waitForSelector('.dashboard-view .panel[data-panel-id="desk-news"]', { timeout: 30_000 });
  await page.waitForSelector('.chat-run[data-status="complete"] >> nth=1', { timeout: 30_000 });
  await panelsSettled(page);
  assert.ok(await page.evaluate(() => window.__sameDocument), 'no page reload');
  assert.equal(await page.locator('.panel[data-panel-id="desk-kline"][data-marker="original"]').count(), 1,
    'the existing panel element was kept');
  assert.equal(await kline.getAttribute('data-mounts'), mounts, 'its chart was not re-created');
  const news = await page.locator('.panel[data-panel-id="desk-news"]').innerText();
  assert.ok(news.length > 20, 'the feed shows items');
  assert.equal(await page.locator('.chat-tool[data-tool-name="mutate"] .chat-tool-validation').getAttribute('data-ok'), 'true');
  await screenshot(page, 'chat-build');
  assert.equal(await page.locator('.run-failing').count(), 0, 'no note while every panel passes');

  // A panel the run leaves failing: a note after its answer, the panel named by its title (the
  // dashboard is in view), the error behind Details; still there when the chat is reloaded.
  await page.fill('textarea.chat-input', 'Now add a gold quote card');
  await page.click('.chat-send');
  await page.waitForSelector('.chat-run[data-status="complete"] >> nth=2', { timeout: 30_000 });
  const deskId = await page.getAttribute('.dashboard-view', 'data-dashboard-id');
  const checkNote = async () => {
    const note = page.locator('.chat-run').nth(2).locator('.run-failing');
    assert.equal(await note.getAttribute('data-count'), '1');
    assert.equal(await note.locator('.run-failing-count').innerText(), '1 panel still fails');
    assert.equal(await page.locator('.chat-run').nth(2).locator('.chat-blocks > :last-child').getAttribute('class'), 'run-failing',
      'after the answer');
    const item = note.locator(`.run-failing-panel[data-panel-id="desk-quote"][data-dashboard-id="${deskId}"]`);
    assert.equal(await item.getAttribute('data-failure'), 'code');
    await page.waitForFunction(() => document.querySelector('.run-failing-name')?.textContent === 'Gold quote');
    assert.ok(await item.locator('.run-failing-error').isHidden(), 'the error waits behind Details');
    await item.locator('summary').click();
    assert.match(await item.locator('.run-failing-error').innerText(), /quote feed is down/);
    assert.equal(await page.locator('.run-failing').count(), 1, 'only the run that left it failing');
    return note;
  };
  await checkNote();
  await screenshot(page, 'chat-failing');
  await page.reload();
  await page.waitForSelector('.chat-run[data-status="complete"] >> nth=2', { timeout: 30_000 });
  const note = await checkNote();
  // Its button opens that dashboard.
  const other = (await api.get('/api/dashboards')).find((d) => d.id !== deskId);
  await page.evaluate((id) => window.boardsmith.view.open(id), other.id);
  await page.waitForSelector(`.dashboard-view[data-dashboard-id="${other.id}"]`);
  await note.locator(`.run-failing-open[data-dashboard-id="${deskId}"]`).click();
  await page.waitForSelector(`.dashboard-view[data-dashboard-id="${deskId}"]`);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the switch_theme action switches the theme', async () => {
  // demoAction is a demo agent: listed once the preference is on.
  const page = await newPage({ storage: SHOW_DEMO_AGENTS });
  await page.goto(server.url);
  assert.equal(await page.getAttribute('html', 'data-theme'), 'light');
  await ask(page, 'demoAction', 'Dark mode please');
  await page.waitForSelector('.chat-action[data-action-name="switch_theme"]');
  await page.waitForFunction(() => document.documentElement.dataset.theme === 'dark');
  await page.waitForSelector('.chat-run[data-status="complete"]');
  await screenshot(page, 'dark-theme');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a team run shows each member as it speaks', async () => {
  const page = await newPage();
  await page.goto(server.url);
  await ask(page, 'duo', 'Compare two views on gold');
  await page.waitForSelector('.chat-run[data-status="complete"]');
  const tasks = await page.$$eval('.chat-task', (els) => els.map((e) => [e.querySelector('.chat-task-name').textContent, e.dataset.status]));
  assert.deepEqual(tasks, [['teamAlpha', 'done'], ['teamBeta', 'done']]);
  const spoken = await page.$$eval('[data-speaker]', (els) => els.map((e) => [e.dataset.speaker, e.innerText.trim()]));
  assert.equal(spoken.length, 2, JSON.stringify(spoken));
  assert.equal(spoken[0][0], 'teamAlpha');
  assert.match(spoken[0][1], /Alpha view: buy gold\./);
  assert.equal(spoken[1][0], 'teamBeta');
  assert.match(spoken[1][1], /Beta view: agreed, with a stop\./);
  // The speaker's name is drawn above its words.
  const label = await page.$eval('[data-speaker="teamBeta"]', (e) => getComputedStyle(e, '::before').content);
  assert.equal(label, '"teamBeta"');
  await screenshot(page, 'team-run');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a frontend tool renders its form; submitting it lets the run continue', async () => {
  const page = await newPage();
  await page.goto(server.url);
  await ask(page, 'confirmer', 'Ask me before deleting');
  const form = page.frameLocator('.chat-frontend-tool iframe');
  await form.locator('#title').filter({ hasText: 'Delete the old dashboards?' }).waitFor();
  await form.locator('#comment').fill('go ahead');
  await form.locator('button[value="yes"]').click();
  await page.waitForSelector('.chat-run[data-status="complete"]');
  assert.match(await page.locator('.chat-content').last().innerText(), /Confirmed, deleting now/);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a shell command waits for Run or Decline; only an approved command runs', async () => {
  const page = await newPage();
  await page.goto(server.url);
  await ask(page, 'sheller', 'Say hello from the shell');
  const box = page.locator('.chat-tool[data-tool-name="bash"] .chat-tool-confirm[data-state="ask"]');
  await box.waitFor();
  assert.match(await box.locator('code').innerText(), /echo sandbox-says-\$\(\(6\*7\)\) > approved.txt/);
  assert.equal(await page.locator('.chat-tool[data-tool-name="bash"] .chat-tool-status').innerText(), 'needs your OK');
  // The shell's workspace is ./workspace beside the server, never the server's own directory.
  const workspace = join(server.dir, 'workspace');
  assert.ok(!existsSync(join(workspace, 'approved.txt')), 'nothing runs before the OK');
  await screenshot(page, 'shell-confirm');
  await box.locator('.chat-tool-confirm-run').click();
  await page.waitForSelector('.chat-run[data-status="complete"]');
  assert.match(await page.locator('.chat-content').last().innerText(), /The shell said 42/);
  assert.equal(readFileSync(join(workspace, 'approved.txt'), 'utf8'), 'sandbox-says-42\n');
  assert.ok(!existsSync(join(server.dir, 'approved.txt')), 'not in the server directory');
  assert.equal(await page.locator('.chat-tool-confirm').first().getAttribute('data-state'), 'done');

  await ask(page, 'sheller', 'Wipe the workspace');
  const second = page.locator('.chat-run').last().locator('.chat-tool-confirm[data-state="ask"]');
  await second.waitFor();
  await second.locator('.chat-tool-confirm-decline').click();
  await page.waitForFunction(() => document.querySelectorAll('.chat-run[data-status="complete"]').length === 2);
  assert.match(await page.locator('.chat-content').last().innerText(), /left the workspace alone/);
  assert.match(await page.locator('.chat-run').last().locator('.chat-tool-confirm').innerText(), /Declined/);
  assert.ok(!existsSync(join(workspace, 'declined.txt')), 'a declined command never runs');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a .qlc frontend tool renders its schema as a form; its values reach the model', async () => {
  const page = await newPage();
  await page.goto(server.url);
  await ask(page, 'picker', 'Pick a window for the chart');
  const form = page.locator('.chat-frontend-tool form.chat-schema-form');
  await form.waitFor();
  assert.equal(await form.locator('[name="days"]').inputValue(), '30', 'prefilled from the tool call');
  assert.ok(await form.locator('[name="volume"]').isChecked(), 'schema default');
  await form.locator('[name="days"]').fill('90');
  await form.locator('[name="scale"]').selectOption({ label: 'log' });
  await form.locator('button[type="submit"]').click();
  await page.waitForSelector('.chat-run[data-status="complete"]');
  assert.match(await page.locator('.chat-content').last().innerText(), /Using 90 days on a log scale/);
  assert.ok(await form.locator('[name="days"]').isDisabled(), 'answered forms are disabled');
  await screenshot(page, 'schema-form');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('after a server restart the dashboard reconnects and stays live', async () => {
  const own = await startServer({});
  try {
    const ownApi = apiOf(own.url);
    const [first] = await ownApi.get('/api/dashboards');
    const page = await newPage();
    await openDashboard(page, own.url, first.id);
    await page.evaluate(() => {
      const el = document.querySelector('.live-status');
      window.__liveStates = [el.dataset.state];
      new MutationObserver(() => window.__liveStates.push(el.dataset.state)).observe(el, { attributes: true });
    });
    await own.restart();
    await page.waitForFunction(() => window.__liveStates.includes('connecting') && window.__liveStates.at(-1) === 'open', null, { timeout: 20_000 });
    // A change made after the restart reaches the page without a reload.
    const record = await ownApi.get(`/api/dashboards/${first.id}`);
    await ownApi.put(`/api/dashboards/${first.id}`, { baseVersion: record.version, state: { ...record.state, title: 'Renamed after restart' } });
    await page.waitForFunction(() => document.querySelector('.dashboard-view').textContent.includes('Renamed after restart'));
    assert.equal(await page.getAttribute('.dashboard-view', 'data-version'), String(record.version + 1));
    // Only the expected noise: the browser logs the failed WebSocket attempts while the server is down.
    assert.deepEqual(page.errors.filter((e) => !/WebSocket connection to .* failed/.test(e)), []);
    await page.close();
  } finally {
    await own.close();
  }
});

test('narrow screens show one pane at a time', async () => {
  const page = await newPage({ width: 390, height: 844 });
  await page.goto(server.url);
  await panelsSettled(page);
  assert.ok(await page.locator('.app-dashboard').isVisible());
  assert.ok(!(await page.locator('.app-chat').isVisible()));
  await page.click('.tabs button[data-pane="chat"]');
  assert.ok(await page.locator('.chat-pane').isVisible());
  await screenshot(page, 'narrow-chat');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a message sent while a run streams steers that run: noted in it, answered by it', async () => {
  const page = await newPage();
  await page.goto(server.url);
  await page.waitForSelector('select.chat-agent');
  await ask(page, 'dashboard', 'Research gold slowly');
  await page.waitForSelector('.chat-steer:not([hidden])');
  await page.waitForFunction(() => document.querySelector('.chat-runs')?.textContent.includes('Looking into'));
  assert.equal(await page.getAttribute('textarea.chat-input', 'placeholder'), 'Steer the running agent…');
  await page.fill('textarea.chat-input', 'Focus on silver instead');
  await page.press('textarea.chat-input', 'Enter');
  await page.waitForSelector('.chat-run[data-status="complete"]', { timeout: 30_000 });
  assert.equal(await page.locator('.chat-run').count(), 1, 'one run, steered, not a second one');
  const text = await page.locator('.chat-run').textContent();
  assert.match(text, /Steered: “Focus on silver instead”/);
  assert.match(text, /Silver it is/);
  assert.equal(await page.getAttribute('.chat-tool[data-tool-name="search"]', 'data-status'), 'skipped');
  assert.ok(await page.locator('.chat-steer').isHidden(), 'Steer goes away with the run');
  await screenshot(page, 'chat-steered');
  assert.deepEqual(page.errors, []);
  await page.close();
});
