// Unit tests of the outage wording (no DOM): node --test web/src/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  isProviderError, outageOf, shortState, staleTimes, staleChipText, noDataNote, fallbackLabel, operatorLines,
  bannerLines, liveIndicator,
} from './outage.js';
import { clockTime } from '../time.js';

const binanceError = {
  kind: 'provider',
  message: 'SdkError: binance.klines: provider binance is unavailable: request to api.binance.com/api/v3/klines failed: connection refused; BOARDSMITH_DATA_FALLBACK=1 would let the next provider serve',
  outage: {
    provider: 'binance', name: 'Binance', cause: 'unreachable', summary: 'Binance cannot be reached',
    details: 'request to api.binance.com/api/v3/klines failed: connection refused',
    host: 'api.binance.com', setting: 'BOARDSMITH_DATA_FALLBACK', retryInMs: 30000,
  },
};
const NOW = Date.UTC(2026, 10, 27, 10, 14);
const MIN = 60_000;

test('a provider error is not a code error; its outage has every field the page reads', () => {
  assert.ok(isProviderError(binanceError));
  for (const kind of ['syntax', 'runtime', 'limit', 'sdk', 'result']) assert.ok(!isProviderError({ kind, message: 'x' }));
  assert.ok(!isProviderError(null));
  const o = outageOf(binanceError);
  assert.equal(o.summary, 'Binance cannot be reached');
  assert.equal(shortState(o), 'Binance unreachable');
  // An outage without its fields still reads as a sentence, never as the raw message.
  const bare = outageOf({ kind: 'provider', message: 'SdkError: BOARDSMITH_X' });
  assert.equal(bare.summary, 'A data provider cannot be reached');
  assert.equal(shortState(outageOf({ kind: 'provider', outage: { name: 'CoinGecko', cause: 'timeout' } })), 'CoinGecko not answering');
});

test('the analyst never reads operator text; the operator finds all of it in Details', () => {
  const o = outageOf(binanceError);
  for (const text of [o.summary, shortState(o), noDataNote(o), fallbackLabel(o)]) {
    assert.doesNotMatch(text, /BOARDSMITH_|api\.binance\.com|SdkError/);
  }
  const lines = operatorLines(binanceError).join('\n');
  assert.match(lines, /api\.binance\.com\/api\/v3\/klines failed/);
  assert.match(lines, /Setting: BOARDSMITH_DATA_FALLBACK/);
  assert.match(lines, /Tried again in 30 s/);
  assert.match(lines, /SdkError: binance\.klines/);
  assert.equal(noDataNote(o), 'No data has been received yet. This panel fills in by itself once it answers.');
  assert.equal(noDataNote(outageOf({ kind: 'provider', outage: { name: 'FRED', cause: 'needs_key' } })), 'No data has been received yet.');
  assert.equal(fallbackLabel(o), 'Use demo data while unreachable');
});

test('stale times: failingSince as a time or as a duration; the chip says since when and how old', () => {
  const dataAt = NOW - 16 * MIN;
  const since = NOW - 12 * MIN;
  assert.deepEqual(staleTimes({ dataAt, failingSince: since, reason: 'x' }, NOW), { dataAt, failingSince: since });
  assert.deepEqual(staleTimes({ dataAt, failingSince: 12 * MIN }, NOW), { dataAt, failingSince: since });
  assert.deepEqual(staleTimes({}, NOW, dataAt), { dataAt, failingSince: null });
  const chip = staleChipText(outageOf(binanceError), { dataAt, failingSince: since }, NOW);
  assert.equal(chip, `Binance unreachable since ${clockTime(since, NOW)} · data from ${clockTime(dataAt, NOW)}`);
  assert.match(clockTime(since, NOW), /^\d{1,2}:\d{2}/);
  assert.match(clockTime(NOW - 3 * 86400_000, NOW), /,/, 'another day names the date');
});

test('the banner groups panels by provider, worst first, and says how old the kept data is', () => {
  const t = (provider, name, state, dataAt) => ({ provider, name, summary: `${name} cannot be reached`, state, dataAt });
  const lines = bannerLines([
    t('binance', 'Binance', 'stale', NOW - 10 * MIN),
    t('binance', 'Binance', 'stale', NOW - 4 * MIN),
    t('coingecko', 'CoinGecko', 'nodata'),
    t('coingecko', 'CoinGecko', 'nodata'),
    t('coingecko', 'CoinGecko', 'nodata'),
    t('fred', 'FRED', 'nodata'),
  ], NOW);
  assert.deepEqual(lines.map((l) => l.text), [
    '3 panels have no data — CoinGecko cannot be reached',
    '2 panels show data from 10m ago — Binance cannot be reached',
    '1 panel has no data — FRED cannot be reached',
  ]);
  assert.equal(bannerLines([t('b', 'B', 'stale', NOW - 2 * MIN), t('b', 'B', 'nodata')], NOW)[0].text,
    '1 panel shows data from 2m ago, 1 has no data — B cannot be reached');
  assert.deepEqual(bannerLines([], NOW), []);
});

test('the header says Live only when connected and no provider is failing', () => {
  assert.deepEqual(liveIndicator('open', []).label, 'Live');
  assert.equal(liveIndicator('open', []).health, 'ok');
  const trouble = [{ provider: 'binance', name: 'Binance', summary: 'Binance cannot be reached', state: 'stale' }];
  const delayed = liveIndicator('open', trouble);
  assert.equal(delayed.label, 'Data delayed');
  assert.equal(delayed.health, 'delayed');
  assert.match(delayed.title, /Binance cannot be reached/);
  assert.equal(liveIndicator('connecting', []).label, 'Connecting…');
  const off = liveIndicator('closed', [], NOW + 3000, NOW);
  assert.equal(off.label, 'Offline');
  assert.match(off.title, /retrying in 3 s/);
});
