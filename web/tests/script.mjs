// The scripted model behind the browser tests (the mock-llm script format of src/llm/mock):
// each scenario's query picks its turns with `last_user_contains`; `has_tool_results` tells the
// first call of a run (make a tool call) from the one after the tool answered (reply).

const deskState = `return {
  title: 'Gold desk',
  layout: { columns: 2, gap: 12 },
  panels: [
    {
      id: 'desk-kline', title: 'Gold daily', type: 'candlestick', renderer: 'lightweight-charts',
      layout: { w: 2, h: 4 },
      code: "const bars = await sdk.market.getKline({ symbol: 'XAUUSD', timeframe: '1D', limit: 120 });\\nconst ma20 = utils.sma(bars, 20, 'close');\\nreturn bars.map((b, i) => ({ ...b, ma20: ma20[i] }));",
    },
  ],
};`;

const addNews = `async (state) => {
  state.panels.push({
    id: 'desk-news', title: 'Gold news', type: 'feed', renderer: 'custom', layout: { w: 2, h: 3 },
    code: "const news = await sdk.news.searchNews({ query: 'gold', limit: 8 });\\nreturn news.map(n => ({ time: n.time, title: n.title, source: n.source }));",
  });
  return state;
}`;

/** A tool call on the first model call of a run, a text answer once its result is in. */
function scenario(query, call, answer) {
  return [
    {
      match: { last_user_contains: query, has_tool_results: false },
      steps: [
        { type: 'text', text: 'On it.', chunk: 3 },
        { type: 'tool_call', name: call.name, arguments: call.arguments, fragments: 3 },
      ],
    },
    {
      match: { last_user_contains: query, has_tool_results: true, ...(call.resultContains ? { tool_result_contains: call.resultContains } : {}) },
      steps: [{ type: 'text', text: answer, chunk: 6 }],
    },
  ];
}

export const script = {
  turns: [
    ...scenario('gold desk', { name: 'execute', arguments: { code: deskState } }, 'Your **gold desk** is ready: a daily chart with MA20.'),
    ...scenario('gold news', { name: 'mutate', arguments: { code: addNews } }, 'Added a gold news feed below the chart.'),
    ...scenario('Dark mode', { name: 'switch_theme', arguments: { theme: 'dark' } }, 'Switched to the dark theme.'),
    ...scenario('Ask me before deleting', {
      name: 'confirm_dialog',
      arguments: { title: 'Delete the old dashboards?', message: 'Three dashboards are unused.' },
      resultContains: '"confirmed":true',
    }, 'Confirmed, deleting now.'),
    { steps: [{ type: 'text', text: 'The browser test script has no turn for this message.' }] },
  ],
};

/** A REACT agent with the `confirm_dialog` frontend tool. */
export const confirmAgent = {
  name: 'Confirmer',
  description: 'Asks before acting (browser test agent).',
  providerKey: '',
  model: '',
  mode: 'REACT',
  tools: ['confirm_dialog'],
  react: { systemPrompt: 'Ask the user with confirm_dialog before anything destructive.', maxSteps: 4 },
};
