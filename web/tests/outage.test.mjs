// Panels that degrade gracefully (issue 38), in headless Chromium against a real server whose
// data providers point at three loopback upstreams: CoinGecko accepts and never answers, Frankfurter
// refuses (a closed port), Binance replays its recorded klines answer (tests/fixtures), is then
// stopped and started again on the same port. What the analyst must see: one plain sentence per
// failing provider and never the operator's text (raw errors, hosts, BOARDSMITH_ settings) unless
// Details is opened; a panel that had data keeps it, dimmed, with its age; it recovers without a
// reload; the banner above the grid and the header indicator follow. Code failures keep their
// error box. Also: the demo-data switch on a panel and in Settings → Data providers, and the
// chat's note when no model is set up. Screenshots: target/screenshots/outage-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { startServer, apiOf, newPage, closeBrowser, screenshot } from './harness.mjs';

const fixtures = new URL('../../tests/fixtures/', import.meta.url);
const BINANCE_KLINES = readFileSync(new URL('binance_klines.json', fixtures), 'utf8');
const FRANKFURTER_LATEST = readFileSync(new URL('frankfurter_latest.json', fixtures), 'utf8');
/** CoinGecko's /coins/markets answer in its documented shape (two coins). */
const COINGECKO_MARKETS = JSON.stringify([
  { id: 'bitcoin', symbol: 'btc', name: 'Bitcoin', current_price: 67706, market_cap: 1334251234567, market_cap_rank: 1, total_volume: 21512345678, price_change_percentage_24h: 0.35, circulating_supply: 19700000 },
  { id: 'ethereum', symbol: 'eth', name: 'Ethereum', current_price: 3780.12, market_cap: 454123456789, market_cap_rank: 2, total_volume: 12312345678, price_change_percentage_24h: -1.2, circulating_supply: 120100000 },
]);

/** A loopback HTTP server: `answer(path)` → a JSON body, or null to hold the request forever. */
function upstream(answer) {
  const held = new Set();
  const srv = createServer((req, res) => {
    const body = answer(new URL(req.url, 'http://x').pathname);
    if (body == null) {
      held.add(res);
      res.on('close', () => held.delete(res));
      return;
    }
    res.setHeader('content-type', 'application/json');
    res.end(body);
  });
  return {
    async listen(port = 0) {
      await new Promise((resolve, reject) => {
        srv.once('error', reject);
        srv.listen(port, '127.0.0.1', () => { srv.off('error', reject); resolve(); });
      });
      return srv.address().port;
    },
    async stop() {
      for (const res of held) res.destroy();
      srv.closeAllConnections();
      await new Promise((resolve) => srv.close(resolve));
    },
  };
}

/** A port nothing listens on (taken, then given back). */
async function closedPort() {
  const probe = upstream(() => '{}');
  const port = await probe.listen();
  await probe.stop();
  return port;
}

let server;
let api;
let coingeckoAnswers = false;
const binance = upstream((path) => (path === '/api/v3/klines' ? BINANCE_KLINES : '{"code":-1}'));
const coingecko = upstream((path) => (coingeckoAnswers && path === '/api/v3/coins/markets' ? COINGECKO_MARKETS : null));
let frankfurter = null; // started in the recovery test, on the port that refused until then
let ports;
let dashboardId;

/** Panels: one per upstream and a panel whose code fails. */
const dashboard = {
  title: 'Crypto and FX desk',
  refresh: '5s',
  layout: { columns: 2 },
  panels: [
    { id: 'btc', title: 'BTC daily candles (Binance spot, last three sessions)', type: 'table', renderer: 'custom', layout: { w: 1, h: 3 },
      code: "const bars = await sdk.crypto.getKline({ symbol: 'BTCUSDT', timeframe: '1D', limit: 3 });\nreturn bars.map((b) => ({ time: b.time, close: b.close }));" },
    // CoinGecko allows 10 calls a minute without a key: every 10 s stays under it.
    { id: 'coins', title: 'Top coins', type: 'table', renderer: 'custom', layout: { w: 1, h: 3 }, refresh: '10s',
      code: 'return await sdk.crypto.listMarkets({ limit: 2 });' },
    { id: 'fx', title: 'USD/EUR', type: 'metric_card', renderer: 'custom', layout: { w: 1, h: 3 },
      code: "const r = await sdk.fx.getRate({ base: 'USD', quote: 'EUR' });\nreturn { label: 'USD/EUR', value: r.rate };" },
    { id: 'broken', title: 'Broken', type: 'metric_card', renderer: 'custom', layout: { w: 1, h: 3 },
      code: `const x = 1;\nthrow new Error("${'the feed handler rejected this request because '.repeat(8)}end");` },
  ],
};

before(async () => {
  const b = await binance.listen();
  const c = await coingecko.listen();
  const f = await closedPort();
  ports = { binance: b, coingecko: c, frankfurter: f };
  const origin = (port) => `http://127.0.0.1:${port}`;
  server = await startServer({
    env: {
      BOARDSMITH_OFFLINE: '0',
      BOARDSMITH_BINANCE_BASE_URL: origin(b),
      BOARDSMITH_COINGECKO_BASE_URL: origin(c),
      BOARDSMITH_FRANKFURTER_BASE_URL: origin(f),
      BOARDSMITH_OUTBOUND_ALLOW: [b, c, f].map((p) => `127.0.0.1:${p}`).join(','),
      // Every run asks its provider (no cached answer hides a stopped upstream).
      BOARDSMITH_SDK_CACHE_BYTES: '0',
    },
  });
  api = apiOf(server.url);
  const created = await api.post('/api/dashboards', { state: dashboard });
  dashboardId = created.id ?? created.dashboardId;
});

after(async () => {
  await closeBrowser();
  await server?.close();
  await binance.stop().catch(() => {});
  await coingecko.stop().catch(() => {});
  await frankfurter?.stop().catch(() => {});
});

const panelSel = (id) => `.dashboard-view .panel[data-panel-id="${id}"]`;

/**
 * Waits until panel `id` matches `check(el.dataset)` (a predicate run in the page); a timeout
 * says what the panel showed instead.
 */
async function panelWhen(page, id, check, timeout = 30_000) {
  try {
    await page.waitForFunction(([sel, src]) => {
      const el = document.querySelector(sel);
      // eslint-disable-next-line no-new-func
      return !!el && new Function('d', `return (${src})(d)`)(el.dataset);
    }, [panelSel(id), check.toString()], { timeout });
  } catch (e) {
    const seen = await page.evaluate((sel) => {
      const el = document.querySelector(sel);
      return el && { ...el.dataset, text: el.innerText.slice(0, 300), details: el.querySelector('details pre')?.textContent.slice(0, 400) };
    }, panelSel(id)).catch(() => null);
    throw new Error(`panel ${id} did not get to ${check}: ${JSON.stringify(seen)}`, { cause: e });
  }
}

/** What a person sees: the page's rendered text (closed Details and tooltips are not in it). */
const visibleText = (page) => page.evaluate(() => document.body.innerText);

/** Operator text that must never show to the analyst without opening Details. */
function assertNoOperatorText(text) {
  assert.doesNotMatch(text, /BOARDSMITH_/, 'no setting names');
  assert.doesNotMatch(text, /SdkError|provider \w+ is unavailable|request to |connection refused/i, 'no raw error text');
  assert.doesNotMatch(text, /127\.0\.0\.1|api\.binance\.com|api\.coingecko\.com|api\.frankfurter\.dev/, 'no hosts');
}

async function openDashboard() {
  // Wide enough for two panels of 360 px (a narrower panel's stale chip says the data's age only).
  const page = await newPage({ width: 1440, height: 900 });
  await page.goto(`${server.url}/#d=${dashboardId}`);
  await page.waitForSelector(`.dashboard-view[data-dashboard-id="${dashboardId}"] .panel`);
  // A marker a reload would lose.
  await page.evaluate(() => { window.__sameDocument = true; });
  return page;
}

test('provider failures read as one plain sentence; raw errors and settings stay behind Details', async () => {
  const page = await openDashboard();
  await panelWhen(page, 'btc', (d) => d.status === 'ok');
  await panelWhen(page, 'coins', (d) => d.status === 'error' && d.failure === 'provider');
  await panelWhen(page, 'fx', (d) => d.status === 'error' && d.failure === 'provider');
  await panelWhen(page, 'broken', (d) => d.status === 'error' && d.failure === 'code');

  // Not a red wall: a calm note with the provider's sentence and what it means for the panel.
  const coins = page.locator(panelSel('coins'));
  assert.ok(await coins.locator('.panel-outage').isVisible());
  assert.ok(await coins.locator('.panel-error').isHidden(), 'no code-error box for a provider failure');
  assert.match(await coins.locator('.outage-summary').innerText(), /^CoinGecko /);
  assert.match(await coins.locator('.panel-outage').innerText(), /No data has been received yet/);
  const fx = page.locator(panelSel('fx'));
  assert.match(await fx.locator('.outage-summary').innerText(), /^Frankfurter.* cannot be reached$/);
  assert.equal(await fx.getAttribute('data-provider'), 'frankfurter');
  assertNoOperatorText(await visibleText(page));

  // Details, once opened, has what an operator needs.
  await fx.locator('.outage-details summary').click();
  const details = await fx.locator('.outage-details pre').innerText();
  assert.match(details, new RegExp(`127\\.0\\.0\\.1:${ports.frankfurter}|refused|unreachable`, 'i'));
  await fx.locator('.outage-details summary').click();

  // The owner may switch demo data on: the panel offers it.
  assert.match(await fx.locator('.outage-fallback').innerText(), /Use demo data/);

  // The code failure keeps its error box, its long message clamped, the whole of it in Details.
  const broken = page.locator(panelSel('broken'));
  assert.ok(await broken.locator('.panel-error').isVisible());
  assert.match(await broken.locator('.panel-error').innerText(), /line 2/i);
  const clamp = await broken.locator('pre.panel-error-message').evaluate((el) => ({ h: el.clientHeight, full: el.scrollHeight, lh: parseFloat(getComputedStyle(el).lineHeight) || 17 }));
  assert.ok(clamp.h <= clamp.lh * 4.5, `the message is clamped to a few lines: ${JSON.stringify(clamp)}`);
  assert.ok(clamp.full > clamp.h, 'the long message is cut in the box');
  await broken.locator('.error-details summary').click();
  assert.match(await broken.locator('.error-details pre').innerText(), /end$/m, 'the whole message in Details');

  // The banner sums it up per provider; the header says the data is delayed.
  const banner = page.locator('.dash-outage');
  await banner.waitFor();
  await page.waitForFunction(() => document.querySelectorAll('.dash-outage-line').length === 2);
  assert.match(await banner.locator('.dash-outage-line[data-provider="coingecko"]').innerText(), /^1 panel has no data — CoinGecko /);
  assert.match(await banner.locator('.dash-outage-line[data-provider="frankfurter"]').innerText(), /^1 panel has no data — Frankfurter/);
  assert.equal(await page.getAttribute('.live-status', 'data-state'), 'open');
  assert.equal(await page.getAttribute('.live-status', 'data-health'), 'delayed');
  assert.equal(await page.locator('.live-status .live-label').innerText(), 'Data delayed');
  assert.match(await page.getAttribute('.live-status', 'title'), /CoinGecko/);

  // The source line under a panel says where its data came from without hovering.
  const btc = page.locator(panelSel('btc'));
  assert.match(await btc.locator('.panel-source').innerText(), /Binance/i);
  await btc.locator('.panel-source').click();
  assert.match(await btc.locator('.panel-info[data-kind="source"]').innerText(), /Binance/i);
  await btc.locator('.panel-info-close').click();
  assert.ok(await btc.locator('.panel-info').isHidden());

  await screenshot(page, 'outage-no-data');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a panel whose provider stops keeps its data, dimmed, with its age; it recovers without a reload', async () => {
  const page = await openDashboard();
  await panelWhen(page, 'btc', (d) => d.status === 'ok');
  const btc = page.locator(panelSel('btc'));
  const before = await btc.locator('.panel-body').innerText();
  assert.match(before, /67,?751/, 'the recorded closes show');

  await binance.stop();
  await panelWhen(page, 'btc', (d) => d.status === 'stale' && d.stale === 'true' && d.provider === 'binance', 30_000);
  // The kept data, visibly not live, and a chip that says since when and how old.
  assert.equal(await btc.locator('.panel-body').innerText(), before, 'the same data stays');
  // Dimmed (after its short transition).
  await page.waitForFunction((sel) => Number(getComputedStyle(document.querySelector(`${sel} .panel-body`)).opacity) < 0.8, panelSel('btc'));
  const chip = btc.locator('.panel-stale-chip');
  assert.ok(await chip.isVisible());
  assert.match(await chip.innerText(), /^Binance.* unreachable since \d{1,2}:\d{2}.* · data from \d{1,2}:\d{2}/);
  assert.ok(await btc.locator('.panel-outage').isHidden() && await btc.locator('.panel-error').isHidden());
  await page.waitForFunction(() => document.querySelector('.dash-outage-line[data-provider="binance"]'));
  assert.match(await page.locator('.dash-outage-line[data-provider="binance"]').innerText(), /^1 panel shows data from .* — Binance/);
  assertNoOperatorText(await visibleText(page));
  // Tapping the chip explains, operator text still behind Details.
  await chip.click();
  const info = btc.locator('.panel-info[data-kind="stale"]');
  assert.match(await info.innerText(), /Showing the last data received/);
  assertNoOperatorText(await info.innerText());
  await screenshot(page, 'outage-stale');
  await btc.locator('.panel-info-close').click();

  // Back on the same port: fresh data, no chip, no banner line, no reload.
  await binance.listen(ports.binance);
  await panelWhen(page, 'btc', (d) => d.status === 'ok' && d.stale === undefined, 40_000);
  assert.ok(await chip.isHidden());
  await page.waitForFunction((sel) => getComputedStyle(document.querySelector(`${sel} .panel-body`)).opacity === '1', panelSel('btc'));
  await page.waitForFunction(() => !document.querySelector('.dash-outage-line[data-provider="binance"]'));
  assert.ok(await page.evaluate(() => window.__sameDocument === true), 'no reload');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('when every provider answers again the banner goes and the header says Live', async () => {
  const page = await openDashboard();
  await panelWhen(page, 'fx', (d) => d.failure === 'provider');
  assert.ok(await page.locator('.dash-outage').isVisible());
  coingeckoAnswers = true;
  frankfurter = upstream((path) => (path === '/v1/latest' ? FRANKFURTER_LATEST : null));
  await frankfurter.listen(ports.frankfurter);
  // A provider that failed five times in a row is tried again after its 30 s pause.
  for (const id of ['coins', 'fx', 'btc']) await panelWhen(page, id, (d) => d.status === 'ok' && d.failure === undefined, 75_000);
  assert.match(await page.locator(panelSel('fx')).locator('.panel-body').innerText(), /0\.92/);
  await page.waitForFunction(() => document.querySelector('.dash-outage').hidden);
  assert.equal(await page.getAttribute('.live-status', 'data-health'), 'ok');
  assert.equal(await page.locator('.live-status .live-label').innerText(), 'Live');
  assert.ok(await page.evaluate(() => window.__sameDocument === true), 'no reload');
  await screenshot(page, 'outage-recovered');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the banner can be dismissed for the session and comes back for another provider', async () => {
  const page = await openDashboard();
  await panelWhen(page, 'fx', (d) => d.status === 'ok');
  await frankfurter.stop();
  await panelWhen(page, 'fx', (d) => d.failure === 'provider' || d.stale === 'true', 40_000);
  await page.locator('.dash-outage-dismiss').click();
  assert.ok(await page.locator('.dash-outage').isHidden());
  // Still dismissed after a reload of the same tab (the session).
  await page.reload();
  await panelWhen(page, 'fx', (d) => d.failure === 'provider' || d.stale === 'true');
  await page.waitForFunction(() => document.querySelector('.dash-outage').dataset.count !== '0');
  assert.ok(await page.locator('.dash-outage').isHidden());
  // Another provider failing is news: the banner returns.
  await binance.stop();
  await page.waitForFunction(() => !document.querySelector('.dash-outage').hidden && document.querySelector('.dash-outage-line[data-provider="binance"]'), null, { timeout: 40_000 });
  assert.equal(await page.locator('.live-status .live-label').innerText(), 'Data delayed');
  await binance.listen(ports.binance);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('demo data for unreachable providers: switched on from the panel, off in Settings → Data providers', async () => {
  const page = await openDashboard();
  // Frankfurter is still down (previous test): the panel offers the switch.
  await panelWhen(page, 'fx', (d) => d.failure === 'provider' || d.stale === 'true', 40_000);
  if (await page.locator(`${panelSel('fx')}[data-stale="true"]`).count()) {
    // It kept data from before: the switch is in the chip's box.
    await page.locator(`${panelSel('fx')} .panel-stale-chip`).click();
  }
  await page.locator(`${panelSel('fx')} .outage-fallback`).click();
  await panelWhen(page, 'fx', (d) => d.status === 'ok' && d.demo === 'true', 30_000);
  assert.equal(await page.locator(`${panelSel('fx')} .demo-badge`).innerText(), 'DEMO DATA');
  assert.equal((await api.get('/api/sdk/health')).fallback, true);

  // Settings → Data providers: each provider's state, the switch, and it goes off again.
  await page.goto('about:blank');
  await page.goto(`${server.url}/#settings`);
  const section = page.locator('.settings-data');
  await page.waitForSelector('.settings-data[data-loaded]', { state: 'attached' });
  const row = section.locator('.data-provider-row[data-provider="frankfurter"]');
  assert.match(await row.getAttribute('data-status'), /^(degraded|down)$/);
  assert.match(await row.locator('.data-last-error').innerText(), /Frankfurter/);
  assert.ok(await row.locator('.data-error-details').count() === 1);
  assert.equal(await section.locator('.data-provider-row[data-provider="binance"]').count(), 1);
  const toggle = section.locator('input[name="fallback"]');
  assert.ok(await toggle.isChecked());
  await toggle.uncheck();
  await page.waitForFunction(() => !document.querySelector('.settings-data input[name="fallback"]').disabled);
  assert.equal((await api.get('/api/sdk/health')).fallback, false);
  assert.ok(await section.locator('.data-offline-note').isHidden());
  await screenshot(page, 'outage-settings');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('with no model set up the chat points to Settings → Providers', async () => {
  const page = await newPage();
  await page.goto(server.url);
  await page.waitForSelector('select.chat-agent option[value="dashboard"]', { state: 'attached' });
  await page.fill('textarea.chat-input', 'Build me a gold dashboard');
  await page.click('.chat-send');
  const note = page.locator('.chat-error[data-reason="no-model"]');
  await note.waitFor();
  assert.match(await note.innerText(), /Settings → Providers/);
  assertNoOperatorText(await note.innerText());
  await note.locator('.chat-open-settings').click();
  await page.waitForSelector('#app.settings-open .settings-providers');
  // The refusal is Chromium's logged 503.
  assert.deepEqual(page.errors.filter((e) => !/status of 503/.test(e)), []);
  await page.close();
});
