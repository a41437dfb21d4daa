// A panel's code: daily gold candles with MA20/MA60 and the latest sentiment, fetched in parallel.
const [bars, posts] = await Promise.all([
  sdk.market.getKline({ symbol: vars.symbol ?? 'XAUUSD', timeframe: '1D', limit: 120 }),
  sdk.social.searchPosts({ query: 'gold', limit: 50 }),
]);
const closes = bars.map((b) => b.close);
const ma20 = utils.sma(closes, 20);
const ma60 = utils.sma(closes, 60);
const mood = posts.reduce((s, p) => s + p.sentiment, 0) / posts.length;
console.log(`${bars.length} bars, ${posts.length} posts, mood ${mood.toFixed(2)}`);
return { bars: bars.map((b, i) => ({ ...b, ma20: ma20[i], ma60: ma60[i] })).slice(-5), mood };
