// The render model (events.js) → DOM. One element per run and per block, created once and
// updated in place, so streaming only touches what changed. Model text goes in with textContent,
// Markdown through markdown.js (sanitized); nothing model-written reaches innerHTML otherwise.
// A query's images (its `request.upload` events) show above its bubble as thumbnails,
// `.chat-thumb[data-upload-id]`, loaded from GET /api/uploads/{id}.
// A run's error is `.chat-error`; a refusal for want of a model (agents.js) is
// `.chat-error[data-reason=no-model]`: where to set one up, `.chat-open-settings` (Settings →
// Providers; for someone who may not, an admin is to be asked instead) and the server's words in
// `details.chat-error-details`.
// A run that ended with panels still failing (events.js `failing` block) says so after its
// answer: `.run-failing[data-count]` ("1 panel still fails"), one
// `.run-failing-panel[data-dashboard-id][data-panel-id][data-failure=provider|code]` a panel
// (its title when the dashboard in view has it, else its id; what failed in plain words, the
// error in `details.run-failing-details`) and `.run-failing-open[data-dashboard-id]` per dashboard.
import { setMarkdown, addCopyButton } from './markdown.js';
import { splitViewports, validationOf, isFrontendType, errorMessage, failureWords } from './events.js';
import { isNoModelError } from './agents.js';
import { mountViewport } from './viewport.js';
import { h, safeUrl } from '../dom.js';
import { draftOfResult } from '../dashboard/history/draft.js';

const RESULT_LIMIT = 20000;

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

const STATUS_LABEL = { streaming: 'writing', running: 'running', done: 'done', error: 'failed', skipped: 'skipped' };

/**
 * `createRenderer(listEl, ctx)`; ctx: {api, toolInfo(name) → {kind, viewportKey}|null,
 * onSubmit(run, block, params) → Promise, onOpenDashboard(id), onReviewDraft(id) (a tool result
 * that went into the analyst's draft: `.chat-draft-note` with `.chat-draft-review`), onOpenSettings(section),
 * canSetUpModels() → false when the user may not add providers (not an admin),
 * dashboardInfo(id) → {title, panels: Map(panelId → title)}|null (the dashboard in view)}.
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
    const blocks = h('div.chat-blocks');
    const footer = h('div.chat-run-footer');
    const el = h('div.chat-run', null, blocks, footer);
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
      const bubble = h('div.chat-user', null, run.query.message);
      v.imagesEl = h('div.chat-user-images');
      v.el.prepend(h('div.chat-user-row', null, h('div.chat-user-col', null, v.imagesEl, bubble)));
      v.userEl = bubble;
    }
    const images = run.query?.images ?? [];
    if (v.imagesEl && v.imagesEl.childElementCount !== images.length) {
      v.imagesEl.replaceChildren(...images.map(imageThumb));
    }
    v.footer.replaceChildren();
    if (run.status === 'running') {
      v.footer.append(h('span.chat-typing', { 'aria-label': 'working' }, h('i'), h('i'), h('i')));
    } else if (run.status === 'cancel') {
      v.footer.append(h('span.chat-stopped', null, 'Stopped'));
    }
  }

  function renderBlock(run, block) {
    let v = blockViews.get(block.key);
    if (!v) {
      const make = MAKERS[block.kind];
      if (!make) return;
      v = make(block, ctx, run);
      // A team member's block: who is speaking (drawn by CSS from the attribute).
      if (block.speaker) v.el.dataset.speaker = block.speaker;
      blockViews.set(block.key, v);
      runView(run).blocks.append(v.el);
    }
    v.update(block, run);
  }

  return { clear, renderRun, renderBlock };
}

/** A query's image: the upload's thumbnail (served by /api/uploads), or a link to its URL. */
function imageThumb(img) {
  if (img.id && /^[0-9a-f]{64}$/.test(img.id)) {
    const src = `/api/uploads/${img.id}`;
    return h('a.chat-thumb', { href: src, target: '_blank', rel: 'noopener', title: img.name, dataset: { uploadId: img.id } },
      h('img', { src, alt: img.name || 'image', loading: 'lazy' }));
  }
  const href = safeUrl(img.url);
  return href ? h('a.chat-thumb-link', { href, target: '_blank', rel: 'noopener noreferrer' }, img.name || href) : null;
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
  task: makeTask,
  failing: makeFailing,
};

function makeReasoning(block) {
  const summary = h('summary.chat-reasoning-summary');
  const text = h('div.chat-reasoning-text');
  const el = h('details.chat-reasoning', { open: !!block.streaming }, summary, text);
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
  const el = h('div.chat-content.md');
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
        const segEl = h('div', { class: part.kind === 'md' ? 'chat-md' : 'chat-viewport' });
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
    el.replaceChildren(h('div.chat-viewport-pending', null, 'Preparing view…'));
    return;
  }
  if (part.error || !part.key) {
    const box = h('div.chat-viewport-error', null, `Cannot show this view: ${part.error || 'no key'}`);
    el.replaceChildren(box, h('pre.chat-viewport-raw', null, h('code', null, part.raw)));
    return;
  }
  el.dataset.viewportKey = part.key;
  if (part.viewportType !== 'html') {
    el.replaceChildren(h('pre.chat-viewport-raw', null, h('code', null, pretty(part.data))));
    return;
  }
  el.replaceChildren(h('div.chat-viewport-pending', null, 'Loading view…'));
  mountViewport(el, { api: ctx.api, key: part.key, data: part.data }).catch((e) => {
    el.replaceChildren(h('div.chat-viewport-error', null, `Cannot load view ${part.key}: ${e.message}`));
  });
}

/** The summary of a result's panel validation (`validationOf`): a head line and one row a panel. */
function validationView(v) {
  const panels = v.panels;
  const bad = panels.filter((p) => p.status !== 'success' && p.status !== 'ok').length;
  const box = h('div.chat-tool-validation', { dataset: { ok: String(!!v.allOk) } });
  const head = h(
    'div.chat-validation-head',
    { class: v.allOk ? 'ok' : 'bad' },
    v.allOk
      ? `✓ All ${panels.length} panel${panels.length === 1 ? '' : 's'} OK`
      : `✗ ${bad} of ${panels.length} panel${panels.length === 1 ? '' : 's'} failed`,
  );
  box.append(head);
  const list = h('ul.chat-validation-panels');
  for (const p of panels) {
    const ok = p.status === 'success' || p.status === 'ok';
    const li = h('li', { class: ok ? 'ok' : 'bad', dataset: { panelId: p.panelId ?? '', status: p.status ?? '' } },
      h('span.mark', null, ok ? '✓' : '✗'), h('span.panel-id', null, p.panelId ?? '?'));
    const meta = [];
    if (ok && p.rowCount != null) meta.push(`${p.rowCount} rows`);
    if (p.duration) meta.push(String(p.duration));
    if (meta.length) li.append(h('span.meta', null, meta.join(' · ')));
    if (!ok && p.error) li.append(h('div.chat-validation-panel-error', null, typeof p.error === 'string' ? p.error : errorMessage(p.error)));
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
      frag.append(h('pre.chat-tool-args', null, h('code', null, pretty(rest))));
    }
    if (typeof code === 'string') {
      const pre = h('pre.chat-tool-code', null, h('code.language-js', null, code));
      frag.append(pre);
      addCopyButton(pre);
    } else if (code !== undefined) {
      frag.append(h('pre.chat-tool-args', null, h('code', null, pretty({ code }))));
    }
    return frag;
  }
  frag.append(h('pre.chat-tool-args', null, h('code', null, pretty(args))));
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
  const name = h('span.chat-tool-name');
  const sub = h('span.chat-tool-sub');
  const status = h('span.chat-tool-status');
  const head = h('summary.chat-tool-head', null, h('span.chat-tool-dot'), name, sub, status);
  const argsBox = h('div.chat-tool-argsbox');
  // Only frontend tools get a `.chat-frontend-tool` (made on first need).
  const frontBox = h('div.chat-frontend-tool');
  // Only confirmed tools (shell commands) get a `.chat-tool-confirm` (made on first need).
  const confirmBox = h('div.chat-tool-confirm');
  const valBox = h('div.chat-tool-valbox');
  const resultBox = h('div.chat-tool-resultbox');
  const el = h('details.chat-tool', { open: true }, head, h('div.chat-tool-body', null, argsBox, valBox, resultBox));

  let argsKey = null;
  let resultShown = false;
  let openShown = false;
  let draftShown = false;
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
      confirmBox.replaceChildren(h('div.chat-frontend-state', null, text));
      return;
    }
    const question = h('div.chat-tool-confirm-question', null, 'Run this command?');
    const pre = h('pre.chat-tool-code', null, h('code', null, b.confirm.command));
    const runBtn = h('button.chat-tool-confirm-run', { type: 'button', onclick: () => answer(true) }, 'Run');
    const declineBtn = h('button.chat-tool-confirm-decline', { type: 'button', onclick: () => answer(false) }, 'Decline');
    const state = h('div.chat-frontend-state');
    const buttons = h('div.chat-tool-confirm-buttons', null, runBtn, declineBtn);
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
          const pre = h('pre', { class: code != null ? 'chat-tool-code streaming' : 'chat-tool-args streaming' }, h('code', null, code ?? b.argsText));
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
          frontState = h('div.chat-frontend-state');
          const host = h('div.chat-viewport', null, h('div.chat-viewport-pending', null, 'Loading view…'));
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
            host.replaceChildren(h('div.chat-viewport-error', null, `Cannot load view ${viewportKey}: ${e.message}`));
          });
        }
        if (b.hasResult) {
          frontBox.dataset.submitted = 'true';
          if (!mounted) {
            frontBox.replaceChildren(h('div.chat-frontend-state', null, 'Answered'));
            mounted = true;
          } else if (frontState) {
            frontState.textContent = 'Submitted';
          }
        } else if (b.status === 'error' && frontState) {
          frontState.textContent = b.interrupted === 'stopped' ? 'Stopped' : 'Not answered';
        }
      }

      if (b.confirm) updateConfirm(b);

      // The result, once: the validation summary when it carries one, the raw JSON collapsed.
      if (b.hasResult && !resultShown) {
        resultShown = true;
        const v = validationOf(b.result);
        if (v) valBox.replaceChildren(validationView(v));
        const text = pretty(b.result);
        const det = h('details.chat-tool-result', null, h('summary', null, 'Result'), h('pre', null, h('code', null, clip(text))));
        // Short results without a validation summary are shown open.
        if (!v && text.length < 400) det.open = true;
        resultBox.replaceChildren(det);
      }

      // The dashboard this call saved, known from the dashboard.update that followed its result
      // (events.js), never from the tool's name.
      if (b.dashboard && !b.dashboard.deleted && !openShown) {
        openShown = true;
        const { dashboardId } = b.dashboard;
        const onclick = () => ctx.onOpenDashboard?.(dashboardId);
        valBox.append(h('button.chat-link-button', { type: 'button', onclick }, 'Open dashboard'));
      }

      // Review mode: the change went into the analyst's draft, not the published dashboard.
      const drafted = b.hasResult && !draftShown ? draftOfResult(b.result) : null;
      if (drafted) {
        draftShown = true;
        valBox.append(h('div.chat-draft-note', { dataset: { dashboardId: drafted.dashboardId ?? '' } },
          h('span', null, 'Saved as a draft: only you see it until you accept it.'),
          ctx.onReviewDraft ? h('button.chat-link-button.chat-draft-review', {
            type: 'button', onclick: () => ctx.onReviewDraft(drafted.dashboardId),
          }, 'Review') : null));
      }
    },
  };
}

function makeAction(block) {
  const name = h('span.chat-action-name');
  const detail = h('span.chat-action-detail');
  const status = h('span.chat-action-status');
  const el = h('div.chat-action', null, h('span.chat-action-icon', null, '⚡'), name, detail, status);
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
  const title = h('div.chat-plan-title', null, 'Plan');
  const list = h('ol.chat-plan-steps');
  const el = h('div.chat-plan', null, title, list);
  return {
    el,
    update(b) {
      const plan = b.plan || {};
      const steps = Array.isArray(plan.steps) ? plan.steps : Array.isArray(plan.tasks) ? plan.tasks : [];
      list.replaceChildren();
      if (!steps.length && plan.text) {
        list.append(h('li.pending', null, plan.text));
      }
      let done = 0;
      for (const s of steps) {
        const st = String(s.status || 'pending');
        if (st === 'completed' || st === 'done') done++;
        const mark = st === 'completed' || st === 'done' ? '✓' : st === 'failed' ? '✗' : st === 'running' || st === 'in_progress' ? '◐' : '○';
        const text = String(s.title || s.name || s.id || '').replace(/\*\*|__|`/g, '');
        list.append(h('li', { class: st, dataset: { status: st } }, h('span.mark', null, mark), h('span.step', null, text)));
      }
      title.textContent = steps.length ? `Plan · ${done}/${steps.length}` : 'Plan';
    },
  };
}

function makeDashboard(block, ctx) {
  const el = h('div.chat-dashboard-update');
  return {
    el,
    update(b) {
      el.dataset.dashboardId = b.dashboardId ?? '';
      el.replaceChildren();
      if (b.deleted) {
        el.append(h('span.icon', null, '🗑'), h('span', null, 'Deleted the dashboard'));
        return;
      }
      el.append(h('span.icon', null, '▦'), h('span', null, `Opened dashboard v${b.version}`));
      const v = b.validation;
      if (v && Array.isArray(v.panels)) {
        const bad = v.panels.filter((p) => p.status !== 'success' && p.status !== 'ok').length;
        el.append(h('span.pill', { class: v.allOk ? 'ok' : 'bad' }, v.allOk ? `${v.panels.length} ok` : `${bad} failing`));
      }
      const onclick = () => ctx.onOpenDashboard?.(b.dashboardId);
      el.append(h('button.chat-link-button', { type: 'button', onclick }, 'Show'));
    },
  };
}

function makeError(block, ctx) {
  const el = h('div.chat-error', { role: 'alert' });
  return {
    el,
    update(b) {
      if (!isNoModelError(b.message)) {
        delete el.dataset.reason;
        el.textContent = b.message;
        return;
      }
      // No model can be used yet: say where to set one up; the server's words under Details.
      el.dataset.reason = 'no-model';
      const details = h('details.chat-error-details', null, h('summary', null, 'Details'), h('div', null, b.message));
      if (ctx.canSetUpModels?.() === false) {
        el.replaceChildren(
          h('span.chat-error-text', null, 'No model is set up yet. Ask an admin to add a provider and its API key in Settings → Providers, then send your message again.'),
          details);
        return;
      }
      el.replaceChildren(
        h('span.chat-error-text', null, 'No model is set up yet. Add a provider and its API key in Settings → Providers, then send your message again.'),
        ' ',
        h('button.chat-open-settings', { type: 'button', onclick: () => ctx.onOpenSettings?.('providers') }, 'Open Settings → Providers'),
        details);
    },
  };
}

/**
 * The panels a run left failing, after its answer: how many, each with what failed in plain
 * words (the error behind a disclosure), and a button to open its dashboard.
 */
function makeFailing(block, ctx) {
  const el = h('div.run-failing', { role: 'status' });
  let shownKey = null;
  return {
    el,
    update(b) {
      const panels = b.panels ?? [];
      const byDashboard = new Map();
      for (const p of panels) {
        if (!byDashboard.has(p.dashboardId)) byDashboard.set(p.dashboardId, []);
        byDashboard.get(p.dashboardId).push(p);
      }
      // Titles come from the dashboard in view, and may arrive after the run ended.
      const groups = [...byDashboard].map(([dashboardId, list]) => {
        const info = ctx.dashboardInfo?.(dashboardId) ?? null;
        return {
          dashboardId,
          title: info?.title || null,
          panels: list.map((p) => ({ ...p, title: info?.panels?.get(p.panelId) || null, words: failureWords(p.error) })),
        };
      });
      const key = JSON.stringify(groups);
      if (key === shownKey) return;
      shownKey = key;
      el.dataset.count = String(panels.length);
      const n = panels.length;
      const head = h('div.run-failing-head', null,
        h('span.run-failing-icon', { 'aria-hidden': 'true' }, '⚠'),
        h('span.run-failing-count', null, n === 1 ? '1 panel still fails' : `${n} panels still fail`));
      const open = (g, label) => h('button.chat-link-button.run-failing-open', {
        type: 'button', dataset: { dashboardId: g.dashboardId }, onclick: () => ctx.onOpenDashboard?.(g.dashboardId),
      }, label);
      const single = groups.length === 1;
      if (single && groups[0].dashboardId) head.append(open(groups[0], 'Open dashboard'));
      // Redrawn when titles arrive: a disclosure the user opened stays open.
      const opened = new Set([...el.querySelectorAll('.run-failing-panel')]
        .filter((li) => li.querySelector('details')?.open)
        .map((li) => `${li.dataset.dashboardId}\n${li.dataset.panelId}`));
      el.replaceChildren(head);
      for (const g of groups) {
        const list = h('ul.run-failing-panels');
        for (const p of g.panels) {
          const name = h('span.run-failing-name', { title: p.title ? p.panelId : null }, p.title || p.panelId);
          list.append(h('li.run-failing-panel', {
            dataset: { dashboardId: g.dashboardId, panelId: p.panelId, failure: p.words.provider ? 'provider' : 'code' },
          }, h('details.run-failing-details', { open: opened.has(`${g.dashboardId}\n${p.panelId}`) },
            h('summary', null, name, h('span.run-failing-what', null, `: ${p.words.text}`)),
            h('pre.run-failing-error', null, p.error))));
        }
        if (single) {
          el.append(list);
        } else {
          const label = g.title || g.dashboardId || 'a dashboard';
          el.append(h('div.run-failing-group', { dataset: { dashboardId: g.dashboardId } },
            h('div.run-failing-dashboard', null, h('span', null, label), g.dashboardId ? open(g, 'Open') : null), list));
        }
      }
    },
  };
}

function makeNote() {
  const el = h('div.chat-note');
  return { el, update: (b) => (el.textContent = b.text) };
}

/** A team member's (or workflow node's) part of the run: its name, what it is, how it went. */
function makeTask(block) {
  const name = h('span.chat-task-name');
  const about = h('span.chat-task-about');
  const state = h('span.chat-task-state');
  const el = h('div.chat-task', { dataset: { taskId: block.id } }, name, about, state);
  return {
    el,
    update(b) {
      name.textContent = b.name;
      about.textContent = b.description ? ` · ${b.description}` : '';
      el.dataset.status = b.status;
      state.textContent = b.status === 'running' ? ' …' : b.status === 'failed' ? ` failed: ${b.error}` : ' ✓';
    },
  };
}

function makeSource() {
  const el = h('div.chat-source');
  return {
    el,
    update(b) {
      el.replaceChildren();
      const url = typeof b.url === 'string' && /^https?:\/\//i.test(b.url) ? b.url : null;
      const label = b.title || b.url || b.id;
      const a = url ? h('a', { href: url, target: '_blank', rel: 'noopener noreferrer' }, label) : h('span', null, label);
      el.append(h('span.icon', null, '↗'), a);
    },
  };
}
