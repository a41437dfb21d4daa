// Connecting an MCP client (Claude Desktop, Cursor, VS Code, another agent) to this server: the
// streamable HTTP endpoint as this page reaches it, ready-made client configurations with Copy
// buttons, and which key scopes give which tools. Nothing here calls the server.
//
// Test hooks: `.settings-mcp`, `.mcp-url` (the endpoint), `.mcp-config[data-kind=http|stdio]`
// each with its `.mcp-copy`.
import { h } from '../dom.js';
import { copyButton } from './form.js';

export function createMcp() {
  const url = `${location.origin}/mcp`;
  const http = {
    mcpServers: { boardsmith: { type: 'http', url, headers: { Authorization: 'Bearer bsk-…' } } },
  };
  const stdio = {
    mcpServers: { boardsmith: { command: 'boardsmith', args: ['mcp'], env: { BOARDSMITH_DATA: '/path/to/data' } } },
  };
  const config = (kind, title, value, note) => {
    const text = JSON.stringify(value, null, 2);
    const code = h('pre.mcp-config-text', { text });
    return h('div.mcp-config', { dataset: { kind } },
      h('div.mcp-config-head', null, h('strong', { text: title }), copyButton('mcp-copy', text, code)),
      code,
      h('p.section-note', { text: note }));
  };
  const el = h('section.settings-section.settings-mcp', { 'aria-labelledby': 'settings-mcp-title' },
    h('h2#settings-mcp-title', { text: 'MCP clients' }),
    h('p.section-note', { text: 'Any MCP client can search the data sources and build, read and edit these dashboards with the agent’s tools; what it makes shows up here at once.' }),
    h('div.mcp-endpoint', null, h('span', { text: 'Endpoint (streamable HTTP): ' }), h('code.mcp-url', { text: url })),
    config('http', 'Over HTTP', http,
      'Make an API key above and put it in place of bsk-…: the read scope gives search and get_state; add write for execute and mutate.'),
    config('stdio', 'On the same machine (stdio)', stdio,
      'boardsmith mcp opens the data directory itself: use it with a server that is not running on that directory (or --read-only for the read tools only).'));
  return { el };
}
