// The scripted model behind the browser tests (the mock-llm script format of crates/llm/src/mock):
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

/** A panel whose code always fails: the run ends with it still failing. */
const addQuote = `async (state) => {
  state.panels.push({
    id: 'desk-quote', title: 'Gold quote', type: 'metric_card', renderer: 'custom', layout: { w: 1, h: 2 },
    code: "throw new Error('quote feed is down');",
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
    ...scenario('gold quote', { name: 'mutate', arguments: { code: addQuote } }, 'Added a gold quote card.'),
    ...scenario('Dark mode', { name: 'switch_theme', arguments: { theme: 'dark' } }, 'Switched to the dark theme.'),
    ...scenario('Ask me before deleting', {
      name: 'confirm_dialog',
      arguments: { title: 'Delete the old dashboards?', message: 'Three dashboards are unused.' },
      resultContains: '"confirmed":true',
    }, 'Confirmed, deleting now.'),
    ...scenario('Pick a window', {
      name: 'pick_window',
      arguments: { days: 30 },
      resultContains: '"days":90',
    }, 'Using 90 days on a log scale.'),
    ...scenario('Say hello from the shell', {
      name: 'bash',
      arguments: { command: 'echo sandbox-says-$((6*7)) > approved.txt && cat approved.txt' },
      resultContains: 'sandbox-says-42',
    }, 'The shell said 42.'),
    ...scenario('Wipe the workspace', {
      name: 'bash',
      arguments: { command: 'echo wiped > declined.txt' },
      resultContains: 'the user declined',
    }, 'Understood, I left the workspace alone.'),
    // A sequential team: the second member's message carries the first one's answer.
    { match: { last_user_contains: 'Alpha view: buy gold.' }, steps: [{ type: 'text', text: 'Beta view: agreed, with a stop.', chunk: 6 }] },
    { match: { last_user_contains: 'Compare two views on gold' }, steps: [{ type: 'text', text: 'Alpha view: buy gold.', chunk: 6 }] },
    // Steering: a slow first call (about 2.5 s) the user's second message arrives during, then
    // the call that reads it.
    {
      match: { last_user_contains: 'Research gold slowly', has_tool_results: false },
      delay_ms: 150,
      steps: [
        { type: 'text', text: 'Looking into gold across many sources before I build anything.', chunk: 4 },
        { type: 'tool_call', name: 'search', arguments: { code: 'return 1' }, fragments: 2 },
      ],
    },
    {
      match: { last_user_contains: 'silver instead' },
      steps: [{ type: 'text', text: 'Silver it is: switching the research to silver.', chunk: 8 }],
    },
    { steps: [{ type: 'text', text: 'The browser test script has no turn for this message.' }] },
  ],
};

/** A `.qlc` frontend tool: its declaration and its view, a JSON Schema rendered as a form. */
export const qlcFiles = {
  'tools/pick_window.qlc': {
    tools: [{
      name: 'pick_window',
      description: 'Ask the user for the look-back window and the price scale.',
      parameters: { type: 'object', properties: { days: { type: 'integer' } }, required: ['days'] },
    }],
  },
  'viewports/pick_window.qlc': {
    title: 'Chart window',
    type: 'object',
    properties: {
      days: { type: 'integer', title: 'Days of history', minimum: 1, maximum: 3650 },
      scale: { type: 'string', title: 'Price scale', enum: ['linear', 'log'], default: 'linear' },
      volume: { type: 'boolean', title: 'Show volume', default: true },
    },
    required: ['days'],
  },
};

/** A REACT agent with the `pick_window` frontend tool. */
export const pickerAgent = {
  name: 'Picker',
  description: 'Asks for the chart window (browser test agent).',
  providerKey: '',
  model: '',
  mode: 'REACT',
  tools: ['pick_window'],
  react: { systemPrompt: 'Ask for the chart window with pick_window.', maxSteps: 4 },
};

/** A sequential team of two plain members (`teamAlpha`, `teamBeta`). */
export const teamAgents = {
  teamAlpha: { description: 'the bull', mode: 'PLAIN', plain: { systemPrompt: 'Argue the bull case.' } },
  teamBeta: { description: 'the risk manager', mode: 'PLAIN', plain: { systemPrompt: 'Add the risks.' } },
  duo: { type: 'sequential', description: 'Two views (browser test team).', members: ['teamAlpha', 'teamBeta'] },
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

/** An agent with the shell; each command waits for the user's OK (`confirmShell` by default). */
export const shellAgent = {
  name: 'Sheller',
  description: 'Runs shell commands once the user agrees (browser test agent).',
  providerKey: '',
  model: '',
  mode: 'REACT',
  tools: ['bash'],
  allowShell: true,
  react: { systemPrompt: 'Use bash for what the user asks.', maxSteps: 4 },
};
