// The chat pane: agent picker, chat list, transcript and composer. Sends queries to
// POST /api/query and renders the Event Model v2 stream; loads stored chats from GET /api/chat and
// renders their snapshot events with the same renderer. Live-only effects (actions, dashboard
// updates, frontend tools) run for streamed events, never for history. Images pasted or dropped
// onto the composer are uploaded at once (POST /api/uploads) and go with the next message as its
// `images`; test hooks: `.chat-attachment[data-status=uploading|ready][data-upload-id]`.
// The agent picker (`select.chat-agent`) lists user-facing agents only, unless the preference
// "Show demo and test agents" is on (agents.js has the rule); a refusal for want of a model
// points to Settings → Providers (render.js, `.chat-error[data-reason=no-model]`), for an admin;
// anyone else is told to ask one (the section is the admin's).
// The chat list (chatlist.js) searches the chats (`GET /api/chats?q=`), renames one in place and
// deletes one after a confirm; deleting the open chat starts a new one. The Review edits
// switch under the composer (.chat-review-toggle[aria-pressed][data-chat-id], for a chat the server has) puts the open chat in
// review mode (`PATCH /api/chats/{chatId}` {review}). In review mode a tool
// result that wrote a draft (`draft: true`), and any run's end, emit 'draft:changed' on the bus.
// Panels a run left failing are noted after its answer (render.js, `.run-failing`), by their
// titles once the dashboard view announces them ('dashboard:panels').
import './chat.css';
import { createModel, reduce, parseArgs } from './events.js';
import { createRenderer } from './render.js';
import { streamQuery, QueryError } from './stream.js';
import { runAction } from './actions.js';
import { pruneFrames } from './viewport.js';
import { listedAgents } from './agents.js';
import { html } from 'htm/preact';
import { render } from 'preact';
import { h } from '../dom.js';
import { ChatList } from './chatlist.js';
import { chatTitle, chatsPath, sortChats, withRow, withoutChat } from './chats.js';
import { draftOfResult } from '../dashboard/history/draft.js';
import { getPref } from '../prefs.js';
import { isAdmin } from '../session.js';

const DEFAULT_AGENT = 'dashboard';
const LIST_KEY = 'boardsmith.chat.listCollapsed';

const SUGGESTIONS = {
  dashboard: [
    'Build me a gold dashboard: daily K-line with MA20/MA60 and a news feed',
    'Crypto overview: BTC and ETH prices, funding rates and sentiment',
    'Macro dashboard: CPI, rates and the dollar index',
  ],
};

export function createChatPane(el, { api, bus, session = Promise.resolve(null) }) {
  // Whether the signed-in user may set up providers; null while unknown (the server decides).
  let admin = null;
  session.then((s) => { if (s?.user) admin = isAdmin(s); });
  el.replaceChildren();
  const root = h('div.chat-pane');
  el.append(root);

  // Header: agent picker, chats toggle, new chat.
  const agentSel = h('select.chat-agent', { title: 'Agent', 'aria-label': 'Agent' });
  const title = h('div.chat-title', null, 'New chat');
  const listToggle = h('button.chat-list-toggle', { type: 'button', title: 'Show or hide the chat list' }, 'Chats');
  const newBtn = h('button.chat-new', { type: 'button' }, '+ New chat');
  const header = h('div.chat-header', null, agentSel, title, listToggle, newBtn);

  // Chat list (chatlist.js, a Preact component): search, rename, delete.
  const listWrap = h('div.chat-list-wrap');
  const setListCollapsed = (collapsed) => {
    root.classList.toggle('list-collapsed', collapsed);
    listToggle.setAttribute('aria-expanded', String(!collapsed));
    try {
      localStorage.setItem(LIST_KEY, collapsed ? '1' : '0');
    } catch {
      /* storage unavailable */
    }
  };
  setListCollapsed(localStorage.getItem(LIST_KEY) === '1');
  listToggle.addEventListener('click', () => setListCollapsed(!root.classList.contains('list-collapsed')));

  // Transcript.
  const runsEl = h('div.chat-runs');
  const empty = h('div.chat-empty');
  const scroller = h('div.chat-scroll', null, empty, runsEl);

  // Composer.
  const input = h('textarea.chat-input', { rows: 1, placeholder: 'Message the agent…', 'aria-label': 'Message' });
  const sendBtn = h('button.chat-send.primary', { type: 'submit' }, 'Send');
  const stopBtn = h('button.chat-stop', { type: 'button', hidden: true }, 'Stop');
  const steerBtn = h('button.chat-steer', {
    type: 'button', hidden: true, title: 'Send this to the running agent: it skips the rest of its step and takes the message next',
  }, 'Steer');
  const hint = h('div.chat-hint', null, 'Enter to send · Shift+Enter for a new line · paste or drop a chart image');
  const buttons = h('div.chat-composer-buttons', null, stopBtn, steerBtn, sendBtn);
  // Images pasted or dropped: uploaded at once, shown as removable chips, sent with the message.
  const attachmentsEl = h('div.chat-attachments', { 'aria-label': 'Attached images' });
  const attachError = h('div.chat-attach-error', { role: 'status' });
  // Review mode of the open chat (`PATCH /api/chats/{chatId}` {review}): the agent's dashboard
  // edits in it wait as drafts to accept. Under the composer, as it is about what the agent
  // does with what is sent; a new chat has none until its first message.
  const reviewBtn = h('button.chat-review-toggle', {
    type: 'button', hidden: true, 'aria-pressed': 'false', 'aria-label': 'Review the agent’s dashboard edits',
  }, h('span.chat-review-box', { 'aria-hidden': 'true' }), 'Review edits');
  const reviewError = h('span.chat-review-error', { role: 'alert', hidden: true });
  const composer = h('form.chat-composer', null, attachmentsEl, attachError,
    h('div.chat-composer-row', null, input, buttons),
    h('div.chat-composer-foot', null, hint, reviewError, reviewBtn));

  root.append(header, listWrap, scroller, composer);

  // State.
  let agents = [];
  let agentKey = null;
  let chatId = null;
  let chats = [];
  let model = createModel();
  let controller = null;
  let openSeq = 0;
  const toolInfo = new Map(); // tool name → {kind, viewportKey}
  const agentLoads = new Map();

  const renderer = createRenderer(runsEl, {
    api,
    toolInfo: (name) => toolInfo.get(name) || null,
    onSubmit: (run, block, params) =>
      api.post('/api/submit', { runId: run.runId, toolId: block.id, chatId: chatId ?? undefined, payload: { params } }),
    onOpenDashboard: (dashboardId) => dashboardId && bus.emit('dashboard:open', { dashboardId }),
    onReviewDraft: (dashboardId) => bus.emit('draft:review', { dashboardId }),
    onOpenSettings: (section) => bus.emit('settings:open', { section }),
    canSetUpModels: () => admin !== false,
    dashboardInfo: (id) => dashboardNames.get(id) ?? null,
  });

  // The titles of the dashboards the view has shown (this page), for the notes on panels a run
  // left failing; a note about a dashboard whose titles just arrived is redrawn.
  const dashboardNames = new Map(); // dashboardId → {title, panels: Map(panelId → title)}
  bus.on('dashboard:panels', ({ dashboardId, title, panels }) => {
    if (!dashboardId) return;
    const named = (Array.isArray(panels) ? panels : []).filter((p) => p?.id && p.title).map((p) => [p.id, p.title]);
    dashboardNames.set(dashboardId, { title: title || null, panels: new Map(named) });
    for (const run of model.runs) {
      for (const block of run.blocks) {
        if (block.kind === 'failing' && block.panels.some((p) => p.dashboardId === dashboardId)) mark({ run, block });
      }
    }
  });

  // Rendering: touched runs and blocks are redrawn once per animation frame.
  const dirtyRuns = new Set();
  const dirtyBlocks = new Map(); // block → run
  let frame = 0;
  let stick = true;
  function mark(touched) {
    if (!touched) return;
    if (touched.run && (touched.runChanged || !touched.block)) dirtyRuns.add(touched.run);
    // A run that ended closed its open blocks (streaming text, running tools): redraw them.
    if (touched.runChanged && touched.run.status !== 'running') {
      for (const b of touched.run.blocks) dirtyBlocks.set(b, touched.run);
    }
    if (touched.block) {
      dirtyRuns.add(touched.run);
      dirtyBlocks.set(touched.block, touched.run);
    }
    // A dashboard.update also changes the tool block that saved the dashboard.
    if (touched.also) dirtyBlocks.set(touched.also.block, touched.also.run);
    if (!frame) frame = requestAnimationFrame(flush);
  }
  function flush() {
    if (frame) cancelAnimationFrame(frame);
    frame = 0;
    for (const run of dirtyRuns) renderer.renderRun(run);
    for (const [block, run] of dirtyBlocks) renderer.renderBlock(run, block);
    dirtyRuns.clear();
    dirtyBlocks.clear();
    updateEmpty();
    if (stick) scroller.scrollTop = scroller.scrollHeight;
  }
  scroller.addEventListener('scroll', () => {
    stick = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 48;
  }, { passive: true });
  // Views that size themselves later (iframes) keep the bottom in view.
  if (window.ResizeObserver) {
    new ResizeObserver(() => {
      if (stick) scroller.scrollTop = scroller.scrollHeight;
    }).observe(runsEl);
  }

  function updateEmpty() {
    const isEmpty = model.runs.length === 0;
    empty.hidden = !isEmpty;
    if (!isEmpty) return;
    empty.replaceChildren();
    const agent = agents.find((a) => a.key === agentKey);
    empty.append(h('div.chat-empty-title', null, agent?.key === 'dashboard' ? 'What should we build?' : `Chat with ${agent?.name || agentKey || 'the agent'}`));
    if (agent?.description) empty.append(h('div.chat-empty-text', null, agent.description));
    const ideas = SUGGESTIONS[agentKey] || [];
    if (ideas.length) {
      const box = h('div.chat-suggestions');
      for (const idea of ideas) {
        const onclick = () => {
          input.value = idea;
          autosize();
          input.focus();
        };
        box.append(h('button.chat-suggestion', { type: 'button', onclick }, idea));
      }
      empty.append(box);
    }
  }

  function setStreaming(on) {
    root.classList.toggle('streaming', on);
    stopBtn.hidden = !on;
    steerBtn.hidden = !on;
    sendBtn.hidden = on;
    sendBtn.disabled = on;
    input.placeholder = on ? 'Steer the running agent…' : 'Message the agent…';
    hint.textContent = on
      ? 'Enter to steer the running agent · Stop to end it'
      : 'Enter to send · Shift+Enter for a new line';
  }

  function setTitle() {
    const c = chats.find((x) => x.chatId === chatId);
    title.textContent = chatId ? chatTitle(c) || model.chatName || 'Chat' : 'New chat';
    title.title = title.textContent;
    paintReview();
  }

  // Review mode per chat, as the server last said (chat list rows, PATCH answers).
  const reviewOf = new Map(); // chatId → boolean
  let reviewBusy = false;
  let anyReview = null;
  /** Tells the review banner (history/review.js) whether any chat of this person is in review mode. */
  function announceReview() {
    const any = [...reviewOf.values()].some(Boolean);
    if (any === anyReview) return;
    anyReview = any;
    bus.emit('chats:review', { any });
  }
  function paintReview() {
    const on = !!(chatId && reviewOf.get(chatId));
    reviewBtn.hidden = !chatId;
    if (chatId) reviewBtn.dataset.chatId = chatId;
    else delete reviewBtn.dataset.chatId;
    reviewBtn.disabled = reviewBusy;
    reviewBtn.setAttribute('aria-pressed', String(on));
    reviewBtn.title = on
      ? 'On: the agent’s dashboard edits in this chat wait as drafts for you to accept. Click to let them publish at once.'
      : 'Review the agent’s dashboard edits: in this chat they wait as drafts for you to accept before anyone else sees them';
    if (!chatId) reviewError.hidden = true;
  }
  async function toggleReview() {
    const id = chatId;
    if (!id || reviewBusy) return;
    const want = !reviewOf.get(id);
    reviewBusy = true;
    reviewError.hidden = true;
    paintReview();
    try {
      const row = await api.patch(`/api/chats/${encodeURIComponent(id)}`, { review: want });
      reviewOf.set(id, typeof row?.review === 'boolean' ? row.review : want);
      announceReview();
      chats = withRow(chats, row ?? { chatId: id, review: want });
      paintChats();
    } catch (e) {
      if (id === chatId) {
        reviewError.textContent = `Review not ${want ? 'on' : 'off'}: ${e.message}`;
        reviewError.hidden = false;
      }
    } finally {
      reviewBusy = false;
      paintReview();
    }
  }
  reviewBtn.addEventListener('click', toggleReview);

  // Agents.
  function loadAgentTools(key) {
    if (!key) return Promise.resolve();
    if (!agentLoads.has(key)) {
      const p = api
        .get(`/api/agent?agentKey=${encodeURIComponent(key)}`)
        .then((agent) => {
          for (const t of agent?.tools ?? []) {
            if (t && t.name) toolInfo.set(t.name, { kind: t.kind, viewportKey: t.viewportKey ?? null });
          }
        })
        .catch(() => agentLoads.delete(key));
      agentLoads.set(key, p);
    }
    return agentLoads.get(key);
  }

  /** The picker's options: the listed agents, and always the one in use. */
  function renderPicker() {
    if (agentSel.disabled) return;
    const listed = listedAgents(agents, { showDemo: !!getPref('showDemoAgents'), keep: agentKey });
    agentSel.replaceChildren(...listed.map((a) => h('option', { value: a.key, title: a.description || null }, a.name || a.key)));
    if (agentKey && listed.some((a) => a.key === agentKey)) agentSel.value = agentKey;
  }
  bus.on('prefs:changed', ({ key }) => {
    if (key === 'showDemoAgents') renderPicker();
  });

  function selectAgent(key) {
    if (!key) return;
    agentKey = key;
    // An agent the picker does not list (a demo agent of a chat from history) joins it.
    if (agents.length && ![...agentSel.options].some((o) => o.value === key)) renderPicker();
    if ([...agentSel.options].some((o) => o.value === key)) agentSel.value = key;
    loadAgentTools(key);
    updateEmpty();
  }

  const agentsReady = api
    .get('/api/agents')
    .then((list) => {
      agents = Array.isArray(list) ? list : [];
      const wanted = agentKey && agents.some((a) => a.key === agentKey) ? agentKey : null;
      const listed = listedAgents(agents, { showDemo: !!getPref('showDemoAgents') });
      const def = wanted || (listed.some((a) => a.key === DEFAULT_AGENT) ? DEFAULT_AGENT : listed[0]?.key);
      agentKey = def ?? null;
      renderPicker();
      selectAgent(def);
    })
    .catch((e) => {
      agentSel.replaceChildren(h('option', null, 'agents unavailable'));
      agentSel.disabled = true;
      console.warn('agents:', e.message);
    });
  agentSel.addEventListener('change', () => selectAgent(agentSel.value));

  // Chat list: the chats matching `query` (all without one), newest first.
  let query = '';
  let chatsSeq = 0;
  async function refreshChats() {
    const mine = ++chatsSeq;
    try {
      const data = await api.get(chatsPath(query));
      if (mine !== chatsSeq) return;
      chats = sortChats(Array.isArray(data) ? data : []);
      for (const c of chats) if (c?.chatId) reviewOf.set(c.chatId, c.review === true);
      if (!query) announceReview();
    } catch (e) {
      console.warn('chats:', e.message);
      return;
    }
    paintChats();
    setTitle();
  }
  function paintChats() {
    render(html`<${ChatList} chats=${chats} current=${chatId} query=${query}
      onQuery=${(q) => { query = q; refreshChats(); }}
      onOpen=${(id) => openChat(id)} onRename=${renameChat} onDelete=${deleteChat} />`, listWrap);
  }
  const markCurrent = () => paintChats();

  async function renameChat(id, title) {
    const row = await api.patch(`/api/chats/${encodeURIComponent(id)}`, { title });
    chats = withRow(chats, row ?? { chatId: id, title });
    if (id === chatId) model.chatName = title;
    paintChats();
    setTitle();
  }

  /** Deletes a chat; the open one gives way to a new chat. */
  async function deleteChat(c) {
    await api.del(`/api/chats/${encodeURIComponent(c.chatId)}`);
    chats = withoutChat(chats, c.chatId);
    if (c.chatId === chatId) newChat();
    else paintChats();
    bus.emit('chat:deleted', { chatId: c.chatId });
  }

  function resetTranscript() {
    if (frame) cancelAnimationFrame(frame);
    frame = 0;
    dirtyRuns.clear();
    dirtyBlocks.clear();
    model = createModel();
    renderer.clear();
    pruneFrames();
    stick = true;
    updateEmpty();
  }

  /** Stop: aborts the query's fetch (the server then cancels the run). */
  function stopStreaming() {
    if (controller) controller.abort();
  }
  /** Leaving the chat: abort and let a new query start at once. */
  function detachStream() {
    if (!controller) return;
    controller.abort();
    controller = null;
    setStreaming(false);
  }

  function newChat() {
    detachStream();
    openSeq++;
    chatId = null;
    resetTranscript();
    markCurrent();
    setTitle();
    bus.emit('chat:opened', { chatId: null });
    input.focus();
  }
  newBtn.addEventListener('click', newChat);

  /** Shows a stored chat (its history as snapshot events). */
  async function openChat(id) {
    if (!id) return newChat();
    detachStream();
    const seq = ++openSeq;
    chatId = id;
    resetTranscript();
    markCurrent();
    setTitle();
    root.classList.add('loading');
    let data;
    try {
      data = await api.get(`/api/chat?chatId=${encodeURIComponent(id)}`);
    } catch (e) {
      if (seq !== openSeq) return;
      root.classList.remove('loading');
      chatId = null;
      markCurrent();
      setTitle();
      mark(reduce(model, { type: 'run.error', error: `Could not open the chat: ${e.message}` }));
      flush();
      bus.emit('chat:opened', { chatId: null });
      return;
    }
    if (seq !== openSeq) return;
    const events = Array.isArray(data?.events) ? data.events : [];
    // Frontend tools in history are recognised by the agents' tool kinds.
    const keys = new Set(events.filter((e) => e.type === 'request.query' && e.agentKey).map((e) => e.agentKey));
    await agentsReady;
    await Promise.all([...keys].map(loadAgentTools));
    if (seq !== openSeq) return;
    root.classList.remove('loading');
    model.chatName = data.chatName ?? null;
    model.chatId = id;
    for (const ev of events) mark(reduce(model, ev));
    // A history run that did not end is shown as ended: nothing streams it here.
    flush();
    const last = [...events].reverse().find((e) => e.type === 'request.query' && e.agentKey);
    if (last && agents.some((a) => a.key === last.agentKey)) selectAgent(last.agentKey);
    setTitle();
    stick = true;
    scroller.scrollTop = scroller.scrollHeight;
    bus.emit('chat:opened', { chatId: id });
  }

  // Live effects of streamed events.
  function applyLive(ev, touched) {
    switch (ev.type) {
      case 'chat.start':
        if (ev.chatId && ev.chatId !== chatId) {
          chatId = ev.chatId;
          bus.emit('chat:opened', { chatId });
          refreshChats();
        }
        break;
      case 'tool.result':
        // Review mode: the agent's dashboard edit went into a draft (history/review.js shows it).
        if (ev.draft === true || draftOfResult(ev.result)) bus.emit('draft:changed', { dashboardId: draftOfResult(ev.result)?.dashboardId ?? null, drafted: true });
        break;
      case 'dashboard.update':
        if (!ev.deleted && ev.dashboardId) bus.emit('dashboard:open', { dashboardId: ev.dashboardId });
        bus.emit('dashboards:changed', {});
        break;
      case 'action.param':
      case 'action.result': {
        const b = touched?.block;
        if (!b || b.applied) break;
        const params = ev.type === 'action.param' ? ev.param : b.param ?? b.args ?? parseArgs(b.argsText);
        try {
          b.applied = runAction(b.name, params) || 'done';
        } catch (e) {
          b.applied = `failed: ${e.message}`;
          console.warn('action failed', e);
        }
        break;
      }
      default:
        break;
    }
  }

  /**
   * A message while a run streams steers it (`busy: steer`): the open stream shows `run.steer`
   * when it arrives. An agent that cannot take a message mid-run (the PLAIN modes) runs it
   * after, as a run of its own, whose events come with the answer (`stream: false`).
   */
  async function steer() {
    const message = input.value.trim();
    if (!message || !controller || !chatId) return;
    input.value = '';
    autosize();
    const seq = openSeq;
    try {
      const res = await api.post('/api/query', {
        message, agentKey: agentKey || undefined, chatId, busy: 'steer', stream: false,
      });
      if (seq !== openSeq || !res || model.runs.some((r) => r.runId === res.runId)) return;
      for (const ev of res.events ?? []) mark(reduce(model, ev));
      flush();
    } catch (e) {
      if (seq !== openSeq) return;
      mark(reduce(model, { type: 'request.query', message, agentKey }));
      mark(reduce(model, { type: 'run.error', error: e.message }));
      flush();
    }
  }

  async function send() {
    if (controller) return steer();
    const message = input.value.trim();
    if (!message) return;
    if (!agentKey) await agentsReady;
    input.value = '';
    autosize();
    const seq = openSeq;
    const ctl = new AbortController();
    controller = ctl;
    setStreaming(true);
    stick = true;
    const body = { message, agentKey: agentKey || undefined };
    if (chatId) body.chatId = chatId;
    const images = await takeImages();
    if (images.length) body.images = images;
    const runsBefore = model.runs.length;
    let sawQuery = false;
    const current = () => model.runs[model.runs.length - 1];
    try {
      const { terminal } = await streamQuery(body, {
        signal: ctl.signal,
        onEvent(ev) {
          if (seq !== openSeq) return;
          if (ev.type === 'request.query') {
            if (sawQuery) return; // a resumed stream replays from after the last id; guard anyway
            sawQuery = true;
          }
          const touched = reduce(model, ev);
          applyLive(ev, touched);
          mark(touched);
        },
      });
      if (!terminal && seq === openSeq) {
        ensureRun(runsBefore, message);
        mark(reduce(model, { type: 'run.error', runId: current().runId, error: 'The connection to the server was lost.' }));
      }
    } catch (e) {
      if (seq === openSeq) {
        ensureRun(runsBefore, message);
        if (e.name === 'AbortError') {
          if (current().status === 'running') mark(reduce(model, { type: 'run.cancel', runId: current().runId }));
        } else {
          const msg = e instanceof QueryError ? e.message : `Request failed: ${e.message}`;
          mark(reduce(model, { type: 'run.error', runId: current().runId, error: msg }));
        }
      }
    } finally {
      if (controller === ctl) controller = null;
      if (!controller) setStreaming(false);
      flush();
      refreshChats();
      // A run that ended may have left a draft (review mode): the review banner asks again
      // (whatever the dashboard's own review mode, when this chat is in review mode).
      bus.emit('draft:changed', { drafted: !!(chatId && reviewOf.get(chatId)) });
    }
  }

  /** Refused before the stream: show the user's message in a run of its own anyway. */
  function ensureRun(runsBefore, message) {
    if (model.runs.length > runsBefore) return;
    mark(reduce(model, { type: 'request.query', message, agentKey }));
  }

  /** `{id|null, name, el, ready: Promise}` per attached image, in order. */
  let attachments = [];
  const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];

  function attach(file) {
    if (!IMAGE_TYPES.includes(file.type)) {
      attachError.textContent = `${file.name || 'That file'} is not a PNG, JPEG, GIF or WebP image.`;
      return;
    }
    attachError.textContent = '';
    const preview = URL.createObjectURL(file);
    const item = { id: null, name: file.name || 'image', el: null, ready: null };
    const remove = h('button', { type: 'button', title: 'Remove', 'aria-label': `Remove ${item.name}`, onclick: () => detach(item) }, '×');
    item.el = h('div.chat-attachment', { title: item.name, dataset: { status: 'uploading' } },
      h('img', { src: preview, alt: item.name }), remove);
    attachmentsEl.append(item.el);
    attachments.push(item);
    item.ready = api.upload(file).then((info) => {
      item.id = info.id;
      item.el.dataset.status = 'ready';
      item.el.dataset.uploadId = info.id;
    }, (e) => {
      attachError.textContent = `${item.name}: ${e.message}`;
      detach(item);
    }).finally(() => URL.revokeObjectURL(preview));
  }

  function detach(item) {
    attachments = attachments.filter((a) => a !== item);
    item.el.remove();
  }

  /** The attached images once uploaded, as the query's `images`; the chips are cleared. */
  async function takeImages() {
    const taken = attachments;
    attachments = [];
    attachmentsEl.replaceChildren();
    await Promise.all(taken.map((a) => a.ready));
    return taken.filter((a) => a.id).map((a) => ({ uploadId: a.id }));
  }

  const imageFiles = (list) => [...(list || [])].filter((f) => f.type.startsWith('image/'));
  input.addEventListener('paste', (e) => {
    const files = imageFiles(e.clipboardData?.files);
    if (!files.length) return;
    e.preventDefault();
    files.forEach(attach);
  });
  composer.addEventListener('dragover', (e) => {
    if (![...(e.dataTransfer?.types || [])].includes('Files')) return;
    e.preventDefault();
    composer.classList.add('dropping');
  });
  composer.addEventListener('dragleave', () => composer.classList.remove('dropping'));
  composer.addEventListener('drop', (e) => {
    composer.classList.remove('dropping');
    const files = [...(e.dataTransfer?.files || [])];
    if (!files.length) return;
    e.preventDefault();
    files.forEach(attach);
  });

  steerBtn.addEventListener('click', () => steer());
  composer.addEventListener('submit', (e) => {
    e.preventDefault();
    send();
  });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing && e.keyCode !== 229) {
      e.preventDefault();
      send();
    }
  });
  function autosize() {
    input.style.height = 'auto';
    input.style.height = `${Math.min(input.scrollHeight + 2, 200)}px`;
  }
  input.addEventListener('input', autosize);
  stopBtn.addEventListener('click', stopStreaming);

  updateEmpty();
  refreshChats();

  return { openChat, newChat, currentChat: () => chatId, send: (text) => ((input.value = text), send()), element: root };
}
