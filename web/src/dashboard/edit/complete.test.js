import { test } from 'node:test';
import assert from 'node:assert/strict';
import { completionsBefore, signature } from './complete.js';

const ctx = {
  sources: [
    {
      name: 'market', displayName: 'Market data', description: 'Prices',
      methods: [
        { name: 'getKline', description: 'Candles', params: [{ name: 'symbol', type: 'string' }, { name: 'limit', type: 'integer', default: 120 }] },
        { name: 'getQuote', description: 'Quote', params: [] },
      ],
    },
    { name: 'news', displayName: 'News', description: 'Headlines', methods: [{ name: 'searchNews', params: [] }] },
  ],
  utils: [{ name: 'sma', signature: 'sma(values, period, field?)', description: 'Simple moving average' }, { name: 'ema', signature: 'ema(values, period)' }],
  variables: [{ name: 'symbol', label: 'Symbol' }],
};

test('sdk. lists the sources from the registry', () => {
  const text = 'const bars = await sdk.ma';
  const r = completionsBefore(text, ctx);
  assert.equal(r.from, text.length - 2);
  assert.deepEqual(r.options.map((o) => o.label), ['market', 'news']);
  assert.equal(r.options[0].detail, 'Market data');
});

test('sdk.<source>. lists its methods with their parameters', () => {
  const r = completionsBefore('return sdk.market.', ctx);
  assert.equal(r.from, 'return sdk.market.'.length);
  assert.deepEqual(r.options.map((o) => o.label), ['getKline', 'getQuote']);
  assert.equal(r.options[0].detail, '({ symbol, limit? })');
  assert.match(r.options[0].info, /limit: integer, default 120/);
  assert.equal(completionsBefore('sdk.nope.', ctx), null, 'an unknown source has nothing');
});

test('utils. and vars. complete; other member access does not', () => {
  assert.deepEqual(completionsBefore('utils.s', ctx).options.map((o) => o.label), ['sma', 'ema']);
  assert.equal(completionsBefore('utils.s', ctx).options[0].detail, '(values, period, field?)');
  assert.deepEqual(completionsBefore('f(vars.', ctx).options.map((o) => o.label), ['symbol']);
  assert.equal(completionsBefore('foo.sdk.', ctx), null);
  assert.equal(completionsBefore('x.', ctx), null);
  assert.deepEqual(completionsBefore('const a = ut', ctx).options.map((o) => o.label), ['utils']);
});

test('signature marks parameters with a default optional', () => {
  assert.equal(signature({ name: 'f', params: [] }), 'f()');
  assert.equal(signature({ name: 'g', params: [{ name: 'a' }, { name: 'b', default: 1 }] }), 'g({ a, b? })');
});
