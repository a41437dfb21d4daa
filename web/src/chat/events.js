// Event Model v2 → a render model. Pure: no DOM, no I/O, so it can be tested under node.
//
// The model is a list of runs; each run has the user's query and an ordered list of blocks
// (reasoning, content, tool, action, plan, dashboard, error, note). Live streams
// (`*.start/delta/args/end`) and history (`*.snapshot` plus `tool.result`/`action.result`) land in
// the same blocks, so one renderer draws both.
//
// `reduce(model, event)` updates the model in place and returns what it touched:
// `{run, block?, runChanged?, also?}`, so a renderer can redraw only that block (and `also`, a
// second `{run, block}` the event changed).
//
// Which tool saved a dashboard is known from the `dashboard.update` the server streams right
// after that tool's `tool.result` (it sets the tool block's `dashboard`), never from tool names.
//
// A run that ends with panels still failing (`run.complete {failingPanels: [{dashboardId,
// panelId, error}]}`) gets `run.failingPanels` and a `failing` block after its last answer. A
// history replay's `run.complete` carries no list (the server does not store it), so there the
// list is worked out from the run's own `dashboard.update` events, which history does keep, by
// the server's rule (`failingPanelsOf`): live and reloaded, the same panels.

/** A fresh, empty model. */
export function createModel() {
  // lastResult: the tool `{run, block}` whose tool.result was the event just before.
  return { chatId: null, chatName: null, runs: [], plans: new Map(), lastResult: null };
}

function newRun(model, id, query) {
  const run = {
    key: `r${model.runs.length}`,
    runId: id || null,
    status: 'running',
    query: query || null,
    blocks: [],
    byId: new Map(),
    error: null,
    finishReason: null,
    failingPanels: [],
    startedAt: null,
    endedAt: null,
  };
  model.runs.push(run);
  return run;
}

/** The run events without a run id go to: the last one, made if there is none. */
function currentRun(model) {
  return model.runs[model.runs.length - 1] || newRun(model, null, null);
}

/** The run with this id, else the current one (history events carry no run ids). */
function runFor(model, runId) {
  if (runId) {
    for (let i = model.runs.length - 1; i >= 0; i--) {
      if (model.runs[i].runId === runId) return model.runs[i];
    }
  }
  return currentRun(model);
}

function addBlock(run, block) {
  block.key = `${run.key}b${run.blocks.length}`;
  run.blocks.push(block);
  if (block.id != null) run.byId.set(`${block.kind}:${block.id}`, block);
  return block;
}

/** The block of this kind and id in the run (searching back through earlier runs for results). */
function findBlock(model, kind, id) {
  for (let i = model.runs.length - 1; i >= 0; i--) {
    const b = model.runs[i].byId.get(`${kind}:${id}`);
    if (b) return { run: model.runs[i], block: b };
  }
  return null;
}

function getOrAdd(model, kind, id, runId, init, taskId) {
  const run = runFor(model, runId);
  let block = run.byId.get(`${kind}:${id}`);
  if (!block) {
    block = addBlock(run, { kind, id, ...init() });
    const task = taskId ? run.byId.get(`task:${taskId}`) : null;
    if (task) block.speaker = task.name;
  }
  return { run, block };
}

/** Parses JSON arguments text; `undefined` while incomplete or invalid. */
export function parseArgs(text) {
  if (typeof text !== 'string' || !text.trim()) return text === '' ? {} : undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The message of a `run.error` error (a string or an object with `message`). */
export function errorMessage(error) {
  if (error == null) return 'Unknown error';
  if (typeof error === 'string') return error;
  if (typeof error === 'object' && typeof error.message === 'string') return error.message;
  try {
    return JSON.stringify(error);
  } catch {
    return String(error);
  }
}

/** Closes whatever is still open in a run that ended (`status`: complete, error or cancel). */
function settle(run, status, ts) {
  run.status = status;
  run.endedAt = ts ?? run.endedAt;
  for (const b of run.blocks) {
    if (b.streaming) b.streaming = false;
    if ((b.kind === 'tool' || b.kind === 'action') && (b.status === 'streaming' || b.status === 'running')) {
      if (status === 'complete') {
        b.status = 'done';
      } else {
        b.status = 'error';
        b.interrupted = status === 'cancel' ? 'stopped' : 'interrupted';
      }
    }
  }
}

const FRONTEND_TYPES = new Set(['html', 'qlc', 'dqlc']);

/** Whether a tool type (`toolType` of tool.start, or `kind` of /api/agent) is a frontend view. */
export function isFrontendType(type) {
  return FRONTEND_TYPES.has(type);
}

/**
 * Applies one event. `model` is mutated; returns `{run, block, runChanged}` (either may be
 * missing) or null when the event changes nothing visible.
 */
export function reduce(model, ev) {
  if (!ev || typeof ev.type !== 'string') return null;
  const ts = typeof ev.timestamp === 'number' ? ev.timestamp : null;
  const lastResult = model.lastResult;
  model.lastResult = null;
  switch (ev.type) {
    case 'request.query': {
      const run = newRun(model, ev.requestId, {
        message: ev.message ?? '',
        role: ev.role || 'user',
        agentKey: ev.agentKey ?? null,
        timestamp: ts,
        images: [],
      });
      run.startedAt = ts;
      if (ev.chatId) model.chatId = ev.chatId;
      return { run, runChanged: true };
    }
    case 'request.upload': {
      // An image of the query just before: by upload id (its sha256), or by URL.
      const run = currentRun(model);
      const u = ev.upload || {};
      if (!run.query) return null;
      (run.query.images ??= []).push({ id: u.url ? null : u.sha256 ?? null, url: u.url ?? null, name: u.name ?? '' });
      return { run, runChanged: true };
    }
    case 'chat.start':
      model.chatId = ev.chatId ?? model.chatId;
      if (ev.chatName) model.chatName = ev.chatName;
      return null;
    case 'run.start': {
      const run = currentRun(model);
      if (ev.runId) run.runId = ev.runId;
      if (ev.chatId) model.chatId = ev.chatId;
      run.status = 'running';
      run.startedAt = run.startedAt ?? ts;
      return { run, runChanged: true };
    }
    case 'run.complete': {
      const run = runFor(model, ev.runId);
      if (ev.runId && !run.runId) run.runId = ev.runId;
      run.finishReason = ev.finishReason ?? null;
      settle(run, 'complete', ts);
      // The panels still failing: the server's list when it sends one; else (a history replay,
      // whose run.complete has none) the same rule over the run's own dashboard.update events.
      run.failingPanels = Array.isArray(ev.failingPanels)
        ? ev.failingPanels.map(failingPanel).filter(Boolean)
        : failingPanelsOf(run);
      if (!run.failingPanels.length) return { run, runChanged: true };
      let block = run.blocks.find((b) => b.kind === 'failing');
      if (block) block.panels = run.failingPanels;
      else block = addBlock(run, { kind: 'failing', id: null, panels: run.failingPanels });
      return { run, block, runChanged: true };
    }
    case 'run.cancel': {
      const run = runFor(model, ev.runId);
      settle(run, 'cancel', ts);
      return { run, runChanged: true };
    }
    case 'run.error': {
      const run = runFor(model, ev.runId);
      run.error = errorMessage(ev.error);
      settle(run, 'error', ts);
      const block = addBlock(run, { kind: 'error', id: null, message: run.error });
      return { run, block, runChanged: true };
    }
    case 'model.switch': {
      const run = runFor(model, ev.runId);
      const from = `${ev.fromProvider}/${ev.fromModel}`;
      const to = `${ev.toProvider}/${ev.toModel}`;
      const text = ev.reason === 'fallback'
        ? `${from} failed before answering${ev.error ? ` (${ev.error})` : ''}; fell back to ${to}`
        : `Switched model: ${from} → ${to}`;
      const block = addBlock(run, { kind: 'note', id: null, text });
      return { run, block };
    }
    case 'context.summarized': {
      // Sent before run.start: it belongs to the run the query just opened.
      const run = currentRun(model);
      const runs = ev.summarizedRuns === 1 ? '1 earlier run' : `${ev.summarizedRuns} earlier runs`;
      const block = addBlock(run, {
        kind: 'note',
        id: null,
        text: `Summarized ${runs} to fit the model's context (about ${ev.tokensBefore} → ${ev.tokensAfter} tokens, by ${ev.model}); the model now reads the summary instead of them.`,
      });
      return { run, block };
    }
    case 'run.steer': {
      const run = runFor(model, ev.runId);
      const said = (Array.isArray(ev.messages) ? ev.messages : []).map((m) => `“${m}”`).join(', ');
      const text = ev.mode === 'steer'
        ? `Steered: ${said}${ev.skippedTools?.length ? ` (skipped ${ev.skippedTools.join(', ')})` : ''}`
        : `Follow-up: ${said}`;
      const block = addBlock(run, { kind: 'note', id: null, text });
      return { run, block };
    }

    // Plans: one block per plan id, updated in place.
    case 'plan.create':
    case 'plan.update': {
      const id = ev.planId || 'plan';
      let found = findBlock(model, 'plan', id);
      if (!found) {
        const run = currentRun(model);
        found = { run, block: addBlock(run, { kind: 'plan', id, plan: null }) };
      }
      found.block.plan = ev.plan ?? null;
      return found;
    }
    // Tasks: a team member's (or a workflow node's) part of the run. Blocks started with its
    // taskId carry its name as `speaker`, so the chat shows who is speaking.
    case 'task.start': {
      const run = runFor(model, ev.runId);
      const name = ev.taskName || ev.taskId;
      const block = addBlock(run, {
        kind: 'task', id: ev.taskId, name, description: ev.description || null, status: 'running', error: null,
      });
      return { run, block };
    }
    case 'task.complete':
    case 'task.fail': {
      const found = findBlock(model, 'task', ev.taskId);
      if (!found) return null;
      found.block.status = ev.type === 'task.fail' ? 'failed' : 'done';
      if (ev.type === 'task.fail') found.block.error = ev.error ? errorMessage(ev.error) : 'failed';
      return found;
    }

    // Reasoning.
    case 'reasoning.start': {
      const r = getOrAdd(model, 'reasoning', ev.reasoningId, ev.runId, () => ({ text: '', streaming: true }), ev.taskId);
      r.block.streaming = true;
      r.block.startedAt = ts;
      return r;
    }
    case 'reasoning.delta': {
      const r = getOrAdd(model, 'reasoning', ev.reasoningId, null, () => ({ text: '', streaming: true }));
      r.block.text += ev.delta ?? '';
      return r;
    }
    case 'reasoning.end': {
      const r = findBlock(model, 'reasoning', ev.reasoningId);
      if (!r) return null;
      r.block.streaming = false;
      if (r.block.startedAt && ts) r.block.durationMs = ts - r.block.startedAt;
      return r;
    }
    case 'reasoning.snapshot': {
      const r = getOrAdd(model, 'reasoning', ev.reasoningId, null, () => ({ text: '', streaming: false }));
      r.block.text = ev.text ?? '';
      r.block.streaming = false;
      return r;
    }

    // Answer text.
    case 'content.start': {
      const r = getOrAdd(model, 'content', ev.contentId, ev.runId, () => ({ text: '', streaming: true }), ev.taskId);
      r.block.streaming = true;
      return r;
    }
    case 'content.delta': {
      const r = getOrAdd(model, 'content', ev.contentId, null, () => ({ text: '', streaming: true }));
      r.block.text += ev.delta ?? '';
      return r;
    }
    case 'content.end': {
      const r = findBlock(model, 'content', ev.contentId);
      if (!r) return null;
      r.block.streaming = false;
      return r;
    }
    case 'content.snapshot': {
      const r = getOrAdd(model, 'content', ev.contentId, null, () => ({ text: '', streaming: false }));
      r.block.text = ev.text ?? '';
      r.block.streaming = false;
      return r;
    }

    // Tools.
    case 'tool.start':
    case 'tool.snapshot': {
      const snapshot = ev.type === 'tool.snapshot';
      const r = getOrAdd(model, 'tool', ev.toolId, ev.runId, () => ({
        name: null,
        toolType: null,
        toolApi: null,
        toolParams: null,
        description: null,
        argsText: '',
        args: undefined,
        status: 'streaming',
        result: undefined,
        hasResult: false,
        submitted: false,
        history: snapshot,
      }), ev.taskId);
      const b = r.block;
      b.name = ev.toolName ?? b.name;
      b.toolType = ev.toolType ?? b.toolType;
      b.toolApi = ev.toolApi ?? b.toolApi;
      b.toolParams = ev.toolParams ?? b.toolParams;
      b.description = ev.description ?? b.description;
      b.startedAt = b.startedAt ?? ts;
      if (snapshot) {
        b.argsText = ev.arguments ?? b.argsText;
        b.args = parseArgs(b.argsText);
        // History: the result follows (tool.result), or the run ended without one.
        if (!b.hasResult) b.status = 'running';
      }
      return r;
    }
    case 'tool.args': {
      const r = getOrAdd(model, 'tool', ev.toolId, null, () => ({
        name: null, argsText: '', status: 'streaming', hasResult: false,
      }));
      r.block.argsText += ev.delta ?? '';
      return r;
    }
    case 'tool.end': {
      const r = findBlock(model, 'tool', ev.toolId);
      if (!r) return null;
      r.block.args = parseArgs(r.block.argsText);
      if (r.block.status === 'streaming') r.block.status = 'running';
      return r;
    }
    case 'tool.result': {
      const r = findBlock(model, 'tool', ev.toolId);
      if (!r) return null;
      const b = r.block;
      if (b.args === undefined) b.args = parseArgs(b.argsText);
      b.result = ev.result;
      b.hasResult = true;
      b.status = toolSkipped(ev.result) ? 'skipped' : toolFailed(ev.result) ? 'error' : 'done';
      if (b.startedAt && ts) b.durationMs = ts - b.startedAt;
      model.lastResult = r;
      return r;
    }
    case 'tool.confirm': {
      // A backend tool (a shell command) waits for the user's go-ahead.
      const r = findBlock(model, 'tool', ev.toolId);
      if (!r) return null;
      r.block.confirm = { command: ev.command ?? '', timeoutMs: ev.timeoutMs ?? null, at: ts };
      return r;
    }
    case 'request.submit': {
      const r = findBlock(model, 'tool', ev.toolId);
      if (!r) return null;
      r.block.submitted = true;
      r.block.submittedPayload = ev.payload;
      return r;
    }

    // Actions: effects the frontend applies (theme, fireworks, modal).
    case 'action.start':
    case 'action.snapshot': {
      const snapshot = ev.type === 'action.snapshot';
      const r = getOrAdd(model, 'action', ev.actionId, ev.runId, () => ({
        name: null,
        description: null,
        argsText: '',
        args: undefined,
        param: undefined,
        status: 'streaming',
        result: undefined,
        history: snapshot,
      }), ev.taskId);
      const b = r.block;
      b.name = ev.actionName ?? b.name;
      b.description = ev.description ?? b.description;
      if (snapshot) {
        b.argsText = ev.arguments ?? b.argsText;
        b.args = parseArgs(b.argsText);
        b.status = 'running';
      }
      return r;
    }
    case 'action.args': {
      const r = getOrAdd(model, 'action', ev.actionId, null, () => ({ name: null, argsText: '', status: 'streaming' }));
      r.block.argsText += ev.delta ?? '';
      return r;
    }
    case 'action.end': {
      const r = findBlock(model, 'action', ev.actionId);
      if (!r) return null;
      r.block.args = parseArgs(r.block.argsText);
      if (r.block.status === 'streaming') r.block.status = 'running';
      return r;
    }
    case 'action.param': {
      const r = findBlock(model, 'action', ev.actionId);
      if (!r) return null;
      r.block.param = ev.param;
      return r;
    }
    case 'action.result': {
      const r = findBlock(model, 'action', ev.actionId);
      if (!r) return null;
      if (r.block.args === undefined) r.block.args = parseArgs(r.block.argsText);
      r.block.result = ev.result;
      r.block.status = 'done';
      return r;
    }

    case 'dashboard.update': {
      const run = currentRun(model);
      const block = addBlock(run, {
        kind: 'dashboard',
        id: null,
        dashboardId: ev.dashboardId,
        version: ev.version,
        changes: ev.changes,
        validation: ev.validation,
        deleted: !!ev.deleted,
      });
      // The server sends it right after the tool.result of the call that saved: that tool's block.
      if (!lastResult) return { run, block };
      lastResult.block.dashboard = { dashboardId: ev.dashboardId, version: ev.version, deleted: !!ev.deleted };
      return { run, block, also: lastResult };
    }

    case 'source.snapshot': {
      const run = runFor(model, ev.runId);
      const block = addBlock(run, { kind: 'source', id: ev.sourceId, title: ev.title, url: ev.url });
      return { run, block };
    }
    default:
      return null;
  }
}

/** A `failingPanels` entry with its fields as strings, or null when it names no panel. */
function failingPanel(p) {
  if (!p || typeof p !== 'object' || typeof p.panelId !== 'string' || !p.panelId) return null;
  const error = p.error == null ? 'failed' : typeof p.error === 'string' ? p.error : errorMessage(p.error);
  return { dashboardId: typeof p.dashboardId === 'string' ? p.dashboardId : '', panelId: p.panelId, error };
}

const passed = (status) => status === 'success' || status === 'ok';

/**
 * The panels still failing at the end of `run`, from its dashboard blocks in order, as the server
 * works out `failingPanels`: each panel's last test run counts (a later version's run replaces an
 * earlier one's), a deleted dashboard has none; sorted by dashboard, then panel.
 */
export function failingPanelsOf(run) {
  const byPanel = new Map(); // `${dashboardId}\n${panelId}` → {dashboardId, panelId, error|null}
  for (const b of run.blocks) {
    if (b.kind !== 'dashboard' || typeof b.dashboardId !== 'string') continue;
    if (b.deleted) {
      for (const [k, v] of byPanel) if (v.dashboardId === b.dashboardId) byPanel.delete(k);
      continue;
    }
    const panels = Array.isArray(b.validation?.panels) ? b.validation.panels : [];
    for (const p of panels) {
      if (typeof p?.panelId !== 'string') continue;
      const error = passed(p.status) ? null : failingPanel({ ...p, dashboardId: b.dashboardId }).error;
      byPanel.set(`${b.dashboardId}\n${p.panelId}`, { dashboardId: b.dashboardId, panelId: p.panelId, error });
    }
  }
  const cmp = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
  return [...byPanel.values()]
    .filter((p) => p.error != null)
    .sort((a, b) => cmp(a.dashboardId, b.dashboardId) || cmp(a.panelId, b.panelId));
}

/** What a data provider's failure does, as `Provider.summary` words it (crates/base outage.rs). */
const PROVIDER_STATES = [
  'cannot be reached', 'is not answering', 'is limiting requests right now', 'is having problems on its side',
  "did not accept this server's access key", 'needs an access key that is not set up',
  'is not allowed on this server', 'is switched off on this server', 'sent data that could not be read',
];

/**
 * A failing panel's error in plain words: `{provider, name, text}`. A data provider's failure
 * (the validation's "data provider failed, not the code (<provider>: <sentence>); ...") reads
 * "its data source cannot be reached (GDELT)" with `provider` its key; anything else is the
 * panel's code failing, `provider` null. The error itself stays for a Details disclosure.
 */
export function failureWords(error) {
  const text = typeof error === 'string' ? error : errorMessage(error);
  const m = /^data provider failed, not the code \(([^:()]+): ([^()]*?)\)(?:;|$)/.exec(text);
  if (!m) return { provider: null, name: null, text: 'its code failed' };
  const provider = m[1].trim();
  const sentence = m[2].trim();
  const state = PROVIDER_STATES.find((s) => sentence.endsWith(` ${s}`));
  if (!state) return { provider, name: null, text: `its data source failed: ${sentence || provider}` };
  const name = sentence.slice(0, -state.length - 1).trim() || provider;
  return { provider, name, text: `its data source ${state} (${name})` };
}

/** A tool call the run skipped because the user steered it (`{error: "skipped: ..."}`). */
export function toolSkipped(result) {
  return typeof result?.error === 'string' && result.error.startsWith('skipped:');
}

/** A tool result that reports a failure: `{error}` (dashboard tools) or `{ok: false}`. */
export function toolFailed(result) {
  if (!result || typeof result !== 'object' || Array.isArray(result)) return false;
  if (typeof result.error === 'string' && result.error) return true;
  if (result.error && typeof result.error === 'object') return true;
  return result.ok === false;
}

/** The validation of a dashboard tool's result: `{allOk, panels: [{panelId, status, error?, ...}]}`. */
export function validationOf(result) {
  if (!result || typeof result !== 'object') return null;
  const v = result.validation;
  if (!v || typeof v !== 'object' || !Array.isArray(v.panels)) return null;
  return v;
}

/**
 * Splits answer text into Markdown and ```viewport blocks:
 * `[{kind: 'md', text} | {kind: 'viewport', viewportType, key, data, raw, complete, error?}]`.
 * An unterminated viewport fence (still streaming) is `complete: false`.
 */
export function splitViewports(text) {
  const parts = [];
  const re = /(^|\n)[ ]{0,3}```viewport[ \t]*\n/g;
  let pos = 0;
  let m;
  while ((m = re.exec(text))) {
    const fenceStart = m.index + m[1].length;
    const bodyStart = m.index + m[0].length;
    const close = /\n[ ]{0,3}```[ \t]*(?=\n|$)/g;
    close.lastIndex = bodyStart - 1;
    const c = close.exec(text);
    if (fenceStart > pos) parts.push({ kind: 'md', text: text.slice(pos, fenceStart) });
    const body = c ? text.slice(bodyStart, c.index) : text.slice(bodyStart);
    parts.push({ kind: 'viewport', raw: body, complete: !!c, ...parseViewport(body) });
    if (!c) return parts;
    pos = c.index + c[0].length;
    re.lastIndex = pos;
  }
  if (pos < text.length) parts.push({ kind: 'md', text: text.slice(pos) });
  return parts;
}

/** `type=html, key=show_weather_card\n{json}` → `{viewportType, key, data, error?}`. */
export function parseViewport(body) {
  const nl = body.indexOf('\n');
  const header = nl < 0 ? body : body.slice(0, nl);
  const rest = nl < 0 ? '' : body.slice(nl + 1);
  const attrs = {};
  for (const pair of header.split(',')) {
    const eq = pair.indexOf('=');
    if (eq > 0) attrs[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
  }
  const out = { viewportType: attrs.type || 'html', key: attrs.key || null, data: undefined };
  if (rest.trim()) {
    try {
      out.data = JSON.parse(rest);
    } catch (e) {
      out.error = `invalid JSON: ${e.message}`;
    }
  }
  return out;
}
