// The scripted upstream model both client suites talk to (through Boardsmith's /v1).
// Turns are matched on the last user message, so each test picks its answer by what it asks.
export const script = {
  turns: [
    {
      match: { last_user_contains: 'busy' },
      fault: { type: 'status', status: 429, retry_after: 1, message: 'upstream says slow down' },
    },
    {
      match: { last_user_contains: 'weather', has_tool_results: false },
      steps: [
        { type: 'reasoning', text: 'The user wants the weather; call the tool.' },
        { type: 'tool_call', id: 'call_w1', name: 'weather', arguments: { city: 'Paris' }, fragments: 3 },
      ],
      usage: { input_tokens: 40, output_tokens: 12 },
    },
    {
      match: { tool_result_contains: '12C' },
      steps: [{ type: 'text', text: 'It is 12C in Paris.', chunk: 6 }],
      usage: { input_tokens: 60, output_tokens: 7 },
    },
    {
      match: { last_user_contains: 'What is in this chart', has_image: true },
      steps: [{ type: 'text', text: 'A candlestick chart of gold.' }],
    },
    {
      steps: [{ type: 'text', text: 'Carbon is element six.', chunk: 5 }],
      usage: { input_tokens: 12, output_tokens: 5, cache_read_tokens: 4 },
    },
  ],
};

export const weatherTool = {
  type: 'function',
  function: {
    name: 'weather',
    description: 'Current weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};
