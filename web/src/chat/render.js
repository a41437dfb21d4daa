// The render model (events.js) → DOM. One element per run and per block, created once and
// updated in place, so streaming only touches what changed. Model text goes in with textContent,
// Markdown through markdown.js (sanitized); nothing model-written reaches innerHTML otherwise.
import { setMarkdown, addCopyButton } from './markdown.js';
import { splitViewports, validationOf, isFrontendType, errorMessage } from './events.js';
import { mountViewport } from './viewport.js';

const DASHBOARD_TOOLS = new Set(['execute', 'mutate']);
const RESULT_LIMIT = 20000;

function h(tag, cls, text) {
  const el = document.createElement(tag);
  if (cls) el.className = cls;
  if (text != null) el.textContent = text;
  return el;
}

function pretty(value) {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

function clip(text, limit = RESULT_LIMIT) {
  return text.length > limit ? `${text.slice(0, limit)}\n… (${text.length - limit} more characters)` : text;
}

function seconds(ms) {
  if (ms == null || !Number.isFinite(ms)) return '';
  return ms < 1000 ? `${Math.max(ms, 0)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

const STATUS_LABEL = { streaming: 'writing', running: 'running', done: 'done', error: 'failed' };

/**
 * `createRenderer(listEl, ctx)`; ctx: {api, toolInfo(name) → {kind, viewportKey}|null,
 * onSubmit(run, block, params) → Promise, onOpenDashboard(id)}.
 */
export function createRenderer(listEl, ctx) {
  const runViews = new Map();
  const blockViews = new Map();

  function clear() {
    runViews.clear();
    blockViews.clear();
    listEl.replaceChildren();
  }

  function runView(run) {
    let v = runViews.get(run.key);
    if (v) return v;
    const el = h('div', 'chat-run');
    const blocks = h('div', 'chat-blocks');
    const footer = h('div', 'chat-run-footer');
    el.append(blocks, footer);
    listEl.append(el);
    v = { el, blocks, footer, userEl: null };
    runViews.set(run.key, v);
    return v;
  }

  function renderRun(run) {
    const v = runView(run);
    if (run.runId) v.el.dataset.runId = run.runId;
    v.el.dataset.status = run.status;
    if (run.query && !v.userEl) {
      const wrap = h('div', 'chat-user-row');
      const bubble = h('div', 'chat-user', run.query.message);
      wrap.append(bubble);
      v.el.prepend(wrap);
      v.userEl = bubble;
    }
    v.footer.replaceChildren();
    if (run.status === 'running') {
      const typing = h('span', 'chat-typing');
      typing.append(h('i'), h('i'), h('i'));
      typing.setAttribute('aria-label', 'working');
      v.footer.append(typing);
    } else if (run.status === 'cancel') {
      v.footer.append(h('span', 'chat-stopped', 'Stopped'));
    }
  }

  function renderBlock(run, block) {
    let v = blockViews.get(block.key);
    if (!v) {
      const make = MAKERS[block.kind];
      if (!make) return;
      v = make(block, ctx, run);
      blockViews.set(block.key, v);
      runView(run).blocks.append(v.el);
    }
    v.update(block, run);
  }

  return { clear, renderRun, renderBlock };
}

const MAKERS = {
  reasoning: makeReasoning,
  content: makeContent,
  tool: makeTool,
  action: makeAction,
  plan: makePlan,
  dashboard: makeDashboard,
  error: makeError,
  note: makeNote,
  source: makeSource,
};

function makeReasoning(block) {
  const el = h('details', 'chat-reasoning');
  const summary = h('summary', 'chat-reasoning-summary');
  const text = h('div', 'chat-reasoning-text');
  el.append(summary, text);
  if (block.streaming) el.open = true;
  let wasStreaming = block.streaming;
  return {
    el,
    update(b) {
      text.textContent = b.text;
      el.classList.toggle('streaming', !!b.streaming);
      if (b.streaming) summary.textContent = 'Thinking…';
      else summary.textContent = b.durationMs ? `Thought for ${seconds(b.durationMs)}` : 'Reasoning';
      if (wasStreaming && !b.streaming) el.open = false;
      wasStreaming = b.streaming;
    },
  };
}

function makeContent(block, ctx) {
  const el = h('div', 'chat-content md');
  let segs = []; // [{kind, key, el}]
  return {
    el,
    update(b) {
      el.classList.toggle('streaming', !!b.streaming);
      const parts = splitViewports(b.text);
      for (let i = 0; i < parts.length; i++) {
        const part = parts[i];
        const key = part.kind === 'md' ? part.text : `${part.complete}|${part.raw}`;
        const seg = segs[i];
        if (seg && seg.kind === part.kind) {
          if (seg.key === key) continue;
          seg.key = key;
          if (part.kind === 'md') setMarkdown(seg.el, part.text);
          else fillViewport(seg.el, part, ctx);
          continue;
        }
        for (const old of segs.splice(i)) old.el.remove();
        const segEl = h('div', part.kind === 'md' ? 'chat-md' : 'chat-viewport');
        if (part.kind === 'md') setMarkdown(segEl, part.text);
        else fillViewport(segEl, part, ctx);
        el.append(segEl);
        segs.push({ kind: part.kind, key, el: segEl });
      }
      for (const old of segs.splice(parts.length)) old.el.remove();
    },
  };
}

function fillViewport(el, part, ctx) {
  if (!part.complete) {
    el.replaceChildren(h('div', 'chat-viewport-pending', 'Preparing view…'));
    return;
  }
  if (part.error || !part.key) {
    const box = h('div', 'chat-viewport-error', `Cannot show this view: ${part.error || 'no key'}`);
    const pre = h('pre', 'chat-viewport-raw');
    pre.append(h('code', null, part.raw));
    el.replaceChildren(box, pre);
    return;
  }
  el.dataset.viewportKey = part.key;
  if (part.viewportType !== 'html') {
    const pre = h('pre', 'chat-viewport-raw');
    pre.append(h('code', null, pretty(part.data)));
    el.replaceChildren(pre);
    return;
  }
  el.replaceChildren(h('div', 'chat-viewport-pending', 'Loading view…'));
  mountViewport(el, { api: ctx.api, key: part.key, data: part.data }).catch((e) => {
    el.replaceChildren(h('div', 'chat-viewport-error', `Cannot load view ${part.key}: ${e.message}`));
  });
}

/** The validation summary of a dashboard tool result, or null. */
function validationView(result) {
  const v = validationOf(result);
  const err = result && typeof result === 'object' && typeof result.error === 'string' ? result.error : null;
  if (!v && !err) return null;
  const box = h('div', 'chat-tool-validation');
  if (err) {
    box.dataset.ok = 'false';
    box.append(h('div', 'chat-validation-head bad', 'Not saved'), h('div', 'chat-validation-error', err));
    return box;
  }
  const panels = v.panels;
  const bad = panels.filter((p) => p.status !== 'success' && p.status !== 'ok').length;
  box.dataset.ok = String(!!v.allOk);
  const head = h(
    'div',
    `chat-validation-head ${v.allOk ? 'ok' : 'bad'}`,
    v.allOk
      ? `✓ All ${panels.length} panel${panels.length === 1 ? '' : 's'} OK`
      : `✗ ${bad} of ${panels.length} panel${panels.length === 1 ? '' : 's'} failed`,
  );
  box.append(head);
  const list = h('ul', 'chat-validation-panels');
  for (const p of panels) {
    const ok = p.status === 'success' || p.status === 'ok';
    const li = h('li', ok ? 'ok' : 'bad');
    li.dataset.panelId = p.panelId ?? '';
    li.dataset.status = p.status ?? '';
    li.append(h('span', 'mark', ok ? '✓' : '✗'), h('span', 'panel-id', p.panelId ?? '?'));
    const meta = [];
    if (ok && p.rowCount != null) meta.push(`${p.rowCount} rows`);
    if (p.duration) meta.push(String(p.duration));
    if (meta.length) li.append(h('span', 'meta', meta.join(' · ')));
    if (!ok && p.error) li.append(h('div', 'chat-validation-panel-error', typeof p.error === 'string' ? p.error : errorMessage(p.error)));
    list.append(li);
  }
  box.append(list);
  return box;
}

function argsView(args) {
  const frag = document.createDocumentFragment();
  if (args && typeof args === 'object' && !Array.isArray(args)) {
    const { code, ...rest } = args;
    if (Object.keys(rest).length) {
      const pre = h('pre', 'chat-tool-args');
      pre.append(h('code', null, pretty(rest)));
      frag.append(pre);
    }
    if (typeof code === 'string') {
      const pre = h('pre', 'chat-tool-code');
      pre.append(h('code', 'language-js', code));
      frag.append(pre);
      addCopyButton(pre);
    } else if (code !== undefined) {
      const pre = h('pre', 'chat-tool-args');
      pre.append(h('code', null, pretty({ code })));
      frag.append(pre);
    }
    return frag;
  }
  const pre = h('pre', 'chat-tool-args');
  pre.append(h('code', null, pretty(args)));
  frag.append(pre);
  return frag;
}

/**
 * The `code` string of incomplete JSON arguments decoded so far (`{"code":"return {\n ...`), or
 * null when the arguments do not start with a code string.
 */
export function partialCode(text) {
  const m = /^\s*\{\s*"code"\s*:\s*"/.exec(text);
  if (!m) return null;
  let out = '';
  for (let i = m[0].length; i < text.length; i++) {
    const c = text[i];
    if (c === '"') break;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const n = text[++i];
    if (n === undefined) break;
    if (n === 'n') out += '\n';
    else if (n === 't') out += '\t';
    else if (n === 'r') out += '\r';
    else if (n === 'b' || n === 'f') out += '';
    else if (n === 'u') {
      const hex = text.slice(i + 1, i + 5);
      if (hex.length < 4) break;
      out += String.fromCharCode(parseInt(hex, 16));
      i += 4;
    } else out += n;
  }
  return out;
}

function toolSummary(b) {
  const a = b.args;
  if (a && typeof a === 'object') {
    if (typeof a.dashboard_id === 'string') return a.dashboard_id;
    if (typeof a.detail_level === 'string') return a.detail_level;
    if (typeof a.city === 'string') return a.city;
    if (typeof a.title === 'string') return a.title;
    if (typeof a.command === 'string') return a.command.slice(0, 60);
  }
  return '';
}

function makeTool(block, ctx, run) {
  const el = h('details', 'chat-tool');
  el.open = true;
  const head = h('summary', 'chat-tool-head');
  const dot = h('span', 'chat-tool-dot');
  const name = h('span', 'chat-tool-name');
  const sub = h('span', 'chat-tool-sub');
  const status = h('span', 'chat-tool-status');
  head.append(dot, name, sub, status);
  const body = h('div', 'chat-tool-body');
  const argsBox = h('div', 'chat-tool-argsbox');
  // Only frontend tools get a `.chat-frontend-tool` (made on first need).
  const frontBox = h('div', 'chat-frontend-tool');
  // Only confirmed tools (shell commands) get a `.chat-tool-confirm` (made on first need).
  const confirmBox = h('div', 'chat-tool-confirm');
  const valBox = h('div', 'chat-tool-valbox');
  const resultBox = h('div', 'chat-tool-resultbox');
  body.append(argsBox, valBox, resultBox);
  el.append(head, body);

  let argsKey = null;
  let resultShown = false;
  let mounted = false;
  let confirmKey = null;

  /** The go-ahead a confirmed tool waits for: the command, Run and Decline, then the answer. */
  function updateConfirm(b) {
    const waiting = !b.history && !b.hasResult && !b.submitted && run.status === 'running';
    const key = waiting ? 'ask' : b.hasResult ? 'done' : b.submitted ? 'sent' : 'over';
    if (key === confirmKey) return;
    confirmKey = key;
    if (!confirmBox.isConnected) argsBox.after(confirmBox);
    confirmBox.dataset.state = key;
    // While asking, the box shows the command; the raw arguments would only repeat it.
    argsBox.hidden = waiting;
    if (!waiting) {
      // The result says what happened (the server's word); before it, what was sent.
      const notRun = typeof b.result?.error === 'string' && b.result.error.startsWith('not run:');
      const said = b.submittedPayload?.params?.approved;
      const text = key === 'done'
        ? (notRun ? (/declined/.test(b.result.error) ? 'Declined' : 'Not run') : 'Approved')
        : key === 'sent' ? (said ? 'Approved' : 'Declined') : 'Not answered';
      confirmBox.replaceChildren(h('div', 'chat-frontend-state', text));
      return;
    }
    const question = h('div', 'chat-tool-confirm-question', 'Run this command?');
    const pre = h('pre', 'chat-tool-code');
    pre.append(h('code', null, b.confirm.command));
    const runBtn = h('button', 'chat-tool-confirm-run', 'Run');
    const declineBtn = h('button', 'chat-tool-confirm-decline', 'Decline');
    const state = h('div', 'chat-frontend-state');
    const buttons = h('div', 'chat-tool-confirm-buttons');
    buttons.append(runBtn, declineBtn);
    const answer = (approved) => {
      runBtn.disabled = declineBtn.disabled = true;
      state.textContent = 'Sending…';
      ctx.onSubmit(run, b, { approved }).then(
        () => {
          b.submitted = true;
          b.submittedPayload = { params: { approved } };
          updateConfirm(b);
        },
        (e) => {
          runBtn.disabled = declineBtn.disabled = false;
          state.textContent = `Could not send: ${e.message}`;
          state.classList.add('bad');
        },
      );
    };
    for (const [btn, approved] of [[runBtn, true], [declineBtn, false]]) {
      btn.type = 'button';
      btn.addEventListener('click', () => answer(approved));
    }
    confirmBox.replaceChildren(question, pre, buttons, state);
  }
  let frontState = null;

  return {
    el,
    update(b) {
      el.dataset.toolName = b.name ?? '';
      el.dataset.toolId = b.id ?? '';
      el.dataset.status = b.status;
      name.textContent = b.name || 'tool';
      if (b.description) head.title = b.description;
      sub.textContent = toolSummary(b);
      let label = STATUS_LABEL[b.status] || b.status;
      if (b.interrupted) label = b.interrupted;
      if (b.status === 'done' && b.durationMs != null) label = seconds(b.durationMs);
      const info = ctx.toolInfo?.(b.name);
      const kind = b.toolType || info?.kind;
      const frontend = isFrontendType(kind);
      if (frontend && b.status === 'running' && !b.hasResult) label = b.submitted ? 'submitted' : 'waiting for you';
      if (b.confirm && b.status === 'running' && !b.hasResult) label = b.submitted ? 'answered' : 'needs your OK';
      status.textContent = label;

      // Arguments: raw while they stream, pretty once complete.
      const complete = b.args !== undefined && b.status !== 'streaming';
      const key = complete ? 'pretty' : `raw:${b.argsText.length}`;
      if (key !== argsKey) {
        argsKey = key;
        if (complete) {
          argsBox.replaceChildren(argsView(b.args));
        } else if (b.argsText) {
          // A `code` argument streams in as code; anything else as the raw JSON text.
          const code = partialCode(b.argsText);
          const pre = h('pre', code != null ? 'chat-tool-code streaming' : 'chat-tool-args streaming');
          pre.append(h('code', null, code ?? b.argsText));
          argsBox.replaceChildren(pre);
          pre.scrollTop = pre.scrollHeight;
        } else {
          argsBox.replaceChildren();
        }
        if (frontend) argsBox.hidden = complete;
      }

      // A frontend tool: its view, live until answered.
      if (frontend) {
        if (!frontBox.isConnected) argsBox.after(frontBox);
        frontBox.dataset.toolId = b.id ?? '';
        const viewportKey = b.toolApi || info?.viewportKey || b.name;
        if (!b.history && complete && !b.hasResult && !mounted && run.status === 'running') {
          mounted = true;
          frontState = h('div', 'chat-frontend-state');
          const host = h('div', 'chat-viewport');
          host.append(h('div', 'chat-viewport-pending', 'Loading view…'));
          frontBox.replaceChildren(host, frontState);
          let sent = false;
          mountViewport(host, {
            api: ctx.api,
            key: viewportKey,
            data: b.args ?? {},
            title: b.name,
            onSubmit(params) {
              if (sent) return;
              sent = true;
              frontState.textContent = 'Sending…';
              ctx.onSubmit(run, b, params).then(
                () => {
                  b.submitted = true;
                  frontBox.dataset.submitted = 'true';
                  frontState.textContent = 'Submitted';
                  status.textContent = 'submitted';
                },
                (e) => {
                  sent = false;
                  frontState.textContent = `Could not submit: ${e.message}`;
                  frontState.classList.add('bad');
                },
              );
            },
          }).catch((e) => {
            host.replaceChildren(h('div', 'chat-viewport-error', `Cannot load view ${viewportKey}: ${e.message}`));
          });
        }
        if (b.hasResult) {
          frontBox.dataset.submitted = 'true';
          if (!mounted) {
            frontBox.replaceChildren(h('div', 'chat-frontend-state', 'Answered'));
            mounted = true;
          } else if (frontState) {
            frontState.textContent = 'Submitted';
          }
        } else if (b.status === 'error' && frontState) {
          frontState.textContent = b.interrupted === 'stopped' ? 'Stopped' : 'Not answered';
        }
      }

      if (b.confirm) updateConfirm(b);

      // The result, once: validation summary for dashboard tools, raw JSON collapsed.
      if (b.hasResult && !resultShown) {
        resultShown = true;
        const v = DASHBOARD_TOOLS.has(b.name) || validationOf(b.result) ? validationView(b.result) : null;
        if (v) valBox.replaceChildren(v);
        const dashId = b.result && typeof b.result === 'object' ? b.result.dashboard_id : null;
        if (typeof dashId === 'string' && DASHBOARD_TOOLS.has(b.name) && !b.result.error && !b.result.deleted) {
          const open = h('button', 'chat-link-button', 'Open dashboard');
          open.type = 'button';
          open.addEventListener('click', () => ctx.onOpenDashboard?.(dashId));
          valBox.append(open);
        }
        const det = h('details', 'chat-tool-result');
        det.append(h('summary', null, 'Result'));
        const pre = h('pre');
        pre.append(h('code', null, clip(pretty(b.result))));
        det.append(pre);
        // Short, non-dashboard results are shown open.
        const text = pretty(b.result);
        if (!v && text.length < 400) det.open = true;
        resultBox.replaceChildren(det);
      }
    },
  };
}

function makeAction(block) {
  const el = h('div', 'chat-action');
  const icon = h('span', 'chat-action-icon', '⚡');
  const name = h('span', 'chat-action-name');
  const detail = h('span', 'chat-action-detail');
  const status = h('span', 'chat-action-status');
  el.append(icon, name, detail, status);
  return {
    el,
    update(b) {
      el.dataset.actionName = b.name ?? '';
      el.dataset.actionId = b.id ?? '';
      el.dataset.status = b.status;
      name.textContent = b.name || 'action';
      if (b.description) el.title = b.description;
      const p = b.param ?? b.args;
      let text = '';
      if (p && typeof p === 'object') {
        text = Object.entries(p)
          .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
          .join(', ');
      } else if (b.status === 'streaming') {
        text = b.argsText;
      }
      detail.textContent = b.applied || text;
      status.textContent = b.interrupted || (b.status === 'done' ? '✓' : '…');
    },
  };
}

function makePlan() {
  const el = h('div', 'chat-plan');
  const title = h('div', 'chat-plan-title', 'Plan');
  const list = h('ol', 'chat-plan-steps');
  el.append(title, list);
  return {
    el,
    update(b) {
      const plan = b.plan || {};
      const steps = Array.isArray(plan.steps) ? plan.steps : Array.isArray(plan.tasks) ? plan.tasks : [];
      list.replaceChildren();
      if (!steps.length && plan.text) {
        list.append(h('li', 'pending', plan.text));
      }
      let done = 0;
      for (const s of steps) {
        const st = String(s.status || 'pending');
        if (st === 'completed' || st === 'done') done++;
        const li = h('li', st);
        li.dataset.status = st;
        const mark = st === 'completed' || st === 'done' ? '✓' : st === 'failed' ? '✗' : st === 'running' || st === 'in_progress' ? '◐' : '○';
        const text = String(s.title || s.name || s.id || '').replace(/\*\*|__|`/g, '');
        li.append(h('span', 'mark', mark), h('span', 'step', text));
        list.append(li);
      }
      title.textContent = steps.length ? `Plan · ${done}/${steps.length}` : 'Plan';
    },
  };
}

function makeDashboard(block, ctx) {
  const el = h('div', 'chat-dashboard-update');
  return {
    el,
    update(b) {
      el.dataset.dashboardId = b.dashboardId ?? '';
      el.replaceChildren();
      if (b.deleted) {
        el.append(h('span', 'icon', '🗑'), h('span', null, 'Deleted the dashboard'));
        return;
      }
      el.append(h('span', 'icon', '▦'), h('span', null, `Opened dashboard v${b.version}`));
      const v = b.validation;
      if (v && Array.isArray(v.panels)) {
        const bad = v.panels.filter((p) => p.status !== 'success' && p.status !== 'ok').length;
        el.append(h('span', v.allOk ? 'pill ok' : 'pill bad', v.allOk ? `${v.panels.length} ok` : `${bad} failing`));
      }
      const btn = h('button', 'chat-link-button', 'Show');
      btn.type = 'button';
      btn.addEventListener('click', () => ctx.onOpenDashboard?.(b.dashboardId));
      el.append(btn);
    },
  };
}

function makeError() {
  const el = h('div', 'chat-error');
  el.setAttribute('role', 'alert');
  return {
    el,
    update(b) {
      el.textContent = b.message;
    },
  };
}

function makeNote() {
  const el = h('div', 'chat-note');
  return { el, update: (b) => (el.textContent = b.text) };
}

function makeSource() {
  const el = h('div', 'chat-source');
  return {
    el,
    update(b) {
      el.replaceChildren();
      const url = typeof b.url === 'string' && /^https?:\/\//i.test(b.url) ? b.url : null;
      const a = h(url ? 'a' : 'span', null, b.title || b.url || b.id);
      if (url) {
        a.href = url;
        a.target = '_blank';
        a.rel = 'noopener noreferrer';
      }
      el.append(h('span', 'icon', '↗'), a);
    },
  };
}
