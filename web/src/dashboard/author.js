// Who saved a dashboard version, as one short line for the version history (the `author` of
// `GET /api/dashboards/{id}/versions`): "ann", "agent for ann", "Claude Desktop for ann",
// "ann's API key key_…", "Boardsmith". Versions saved before authors were kept have none: no line.

/** The person or credential behind an author: a name, a key, or the server token. */
function who(a) {
  const key = a.keyId ? `API key ${a.keyId}` : '';
  if (a.username) return key ? `${a.username}'s ${key}` : a.username;
  if (key) return key;
  return a.token ? 'server token' : 'someone';
}

/** One line naming who saved a version, or '' when the version does not say. */
export function authorLine(a) {
  if (!a || typeof a !== 'object') return '';
  switch (a.via) {
    case 'system': return 'Boardsmith';
    case 'agent': return `agent for ${who(a)}`;
    case 'mcp': return `${a.client || 'MCP client'} for ${who(a)}`;
    case 'workflow': return `workflow for ${who(a)}`;
    default: return who(a);
  }
}
