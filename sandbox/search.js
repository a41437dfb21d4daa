// Search helpers, defined on `spec` before the prelude freezes it:
//   spec.find("gold kline", limit = 10) -> DataSourceMatch[]
//   spec.methods() -> every {source, method, description, params, returns, provider, providers, demo}
(function (spec) {
  'use strict';
  const SYNONYMS = {
    kline: ['candle', 'candlestick', 'ohlc', 'ohlcv', 'bars', 'k线'],
    candle: ['kline', 'ohlc'],
    gold: ['xauusd', 'xau', '黄金'],
    silver: ['xagusd', '白银'],
    oil: ['wti', 'brent', 'crude', '原油'],
    btc: ['bitcoin', 'btcusdt', 'crypto'],
    bitcoin: ['btc', 'btcusdt'],
    eth: ['ethereum', 'ethusdt'],
    sentiment: ['舆情', 'mood', 'social'],
    news: ['headlines', '新闻'],
    tweets: ['posts', 'social'],
    macro: ['economy', 'economic', '宏观'],
    inflation: ['cpi'],
    rates: ['yield', 'interest'],
    fx: ['forex', 'currency', '外汇'],
    options: ['iv', 'volatility'],
  };
  const tokenize = (q) =>
    String(q).toLowerCase().split(/[^a-z0-9\u4e00-\u9fff]+/).filter((t) => t.length > 0);
  const all = [];
  for (const s of spec.sources) {
    for (const m of s.methods) {
      const text = [s.name, s.displayName, s.description, s.tags.join(' '), m.name,
        m.description, m.params.map((p) => p.name).join(' ')].join(' ').toLowerCase();
      const strong = [s.name, m.name, s.tags.join(' ')].join(' ').toLowerCase();
      all.push({ s, m, text, strong });
    }
  }
  // `demo: true`: invented numbers (the built-in generators), never to be shown as real.
  const match = (e) => ({
    source: e.s.name, method: e.m.name, description: e.m.description,
    params: e.m.params, returns: e.m.returns, provider: e.m.provider, providers: e.m.providers,
    demo: e.m.demo,
  });
  spec.methods = function methods() { return all.map(match); };
  spec.find = function find(query, limit) {
    const n = limit === undefined ? 10 : Number(limit);
    const tokens = tokenize(query);
    const scored = [];
    for (const e of all) {
      let score = 0;
      for (const t of tokens) {
        const alts = [t].concat(SYNONYMS[t] || []);
        let best = 0;
        for (const a of alts) {
          const w = a === t ? 1 : 0.6;
          if (e.strong.includes(a)) best = Math.max(best, 3 * w);
          else if (e.text.includes(a)) best = Math.max(best, 1 * w);
        }
        score += best;
      }
      if (score > 0) scored.push({ e, score });
    }
    scored.sort((a, b) => b.score - a.score);
    return scored.slice(0, n).map((x) => Object.assign(match(x.e), { score: x.score }));
  };
})(spec);
