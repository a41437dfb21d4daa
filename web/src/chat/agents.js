// Which agents the chat's picker lists, and whether a refusal means that no model is set up.
// Pure: no DOM (agents.test.js).
//
// The picker rule: `GET /api/agents` rows carry no audience field today, so an agent is a demo
// or test agent when the server marks it (`hidden: true`, or `tags` holding "demo", "test" or
// "hidden", for when it does) or, failing that, when its key says so: it starts with `demo` or
// `test` as a word of its own (`demoModeReact`, `demo-x`, `test_agent`, `test`; not `demon` or
// `testimony`) or ends with one (`pickerTest`, `x-demo`). Those are listed only when the user
// turned on "Show demo and test agents" (Settings → This browser), except the agent in use (a
// chat reopened from history keeps its agent), and when the rule would leave nothing, all are.

const MARK_TAGS = new Set(['demo', 'test', 'hidden']);

/** Whether `agent` (a row of GET /api/agents) is a demo or test agent. */
export function isDemoAgent(agent) {
  if (!agent || typeof agent !== 'object') return false;
  if (agent.hidden === true) return true;
  if (Array.isArray(agent.tags) && agent.tags.some((t) => MARK_TAGS.has(String(t).toLowerCase()))) return true;
  const key = String(agent.key ?? '');
  const lead = /^(demo|test)(.?)/i.exec(key);
  if (lead && !/[a-z]/.test(lead[2])) return true; // the word ends there: end, capital, digit, - or _
  return /[a-z0-9](?:Demo|Test)$/.test(key) || /[-_.](?:demo|test)$/i.test(key);
}

/** The agents the picker lists, in the server's order. */
export function listedAgents(agents, { showDemo = false, keep = null } = {}) {
  if (showDemo) return agents.slice();
  const listed = agents.filter((a) => !isDemoAgent(a) || a.key === keep);
  return listed.length ? listed : agents.slice();
}

/**
 * Whether a run's error says that no model can be used yet (no provider configured, a provider
 * without its key, an unknown model): the chat then points to Settings → Providers.
 */
export function isNoModelError(message) {
  return typeof message === 'string'
    && /no usable model|no LLM provider is configured|needs an API key|is served by a provider that is not configured|provider `[^`]*` is not configured/i.test(message);
}
