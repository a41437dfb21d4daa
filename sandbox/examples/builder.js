// Builder code (the `execute` tool): returns a DashboardState whose panels hold code, not data.
return {
  title: 'Gold',
  layout: { columns: 2 },
  panels: [{
    id: 'gold-kline', title: 'Gold daily', type: 'candlestick', renderer: 'lightweight-charts',
    code: "return await sdk.market.getKline({ symbol: 'XAUUSD', timeframe: '1D', limit: 120 });",
  }],
};
