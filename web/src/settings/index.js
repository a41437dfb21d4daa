// The settings page (`#settings` in the URL, the gear in the header): providers and their keys,
// the default model, how long chats are kept, alerts & reports (the mail relay, the channels
// notifications and reports go to, whether PDF and PNG can be rendered), the data providers'
// health and the demo-data switch, API keys, users and the audit log (admins only), how to
// connect MCP clients, usage and this browser's preferences, all through the API, so a new user
// never needs an environment variable.
// createSettings(el, {api, bus, session}) → {open(), close(), isOpen()}, with `session` the
// promise of `GET /api/session`. Every section reloads from the server each time the page opens;
// a failed request shows the server's message next to the field it names (form.js). The admin
// sections (providers, the default model, chat retention, alerts & reports, usage, users, the
// audit log: their routes are the admin's) stay hidden, and are never requested, until the
// session says admin; data providers, API keys (one's own; the scopes one's role can grant),
// MCP and preferences are for everyone.
//
// Test hooks: `.settings-view[data-open]`, `.settings-close`, and each section's own (see
// providers.js, model.js, retention.js, alerting.js, data.js, keys.js, users.js, audit.js,
// mcp.js, usage.js, prefs.js); sections set `data-loaded` once loaded. `open({section})` scrolls
// to `.settings-<section>`.
import './settings.css';
import { h } from '../dom.js';
import { createProviders } from './providers.js';
import { createDefaultModel } from './model.js';
import { createRetention } from './retention.js';
import { createAlerting } from './alerting.js';
import { createKeys } from './keys.js';
import { createUsage } from './usage.js';
import { createMcp } from './mcp.js';
import { createDataProviders } from './data.js';
import { createPrefs } from './prefs.js';
import { createUsers } from './users.js';
import { createAudit } from './audit.js';
import { isAdmin } from '../session.js';

export function createSettings(el, { api, bus, session = Promise.resolve(null), onClose }) {
  let toastEl = null;
  let toastTimer = null;
  function toast(text) {
    toastEl?.remove();
    clearTimeout(toastTimer);
    toastEl = h('div.toast.settings-toast', { role: 'status', text });
    document.body.append(toastEl);
    const mine = toastEl;
    toastTimer = setTimeout(() => { mine.remove(); if (toastEl === mine) toastEl = null; }, 3000);
  }

  const parts = { api, bus, toast };
  const providers = createProviders(parts);
  const model = createDefaultModel(parts);
  const retention = createRetention(parts);
  const alerting = createAlerting(parts);
  const keys = createKeys(parts);
  const usage = createUsage(parts);
  const mcp = createMcp();
  const data = createDataProviders(parts);
  const prefs = createPrefs();
  const users = createUsers(parts);
  const audit = createAudit(parts);
  /** Shown, and loaded, for admins only. */
  const adminOnly = [providers, model, retention, alerting, usage, users, audit];
  for (const section of adminOnly) section.el.hidden = true;

  const root = h('div.settings-view', null,
    h('div.settings-head', null,
      h('h1', { text: 'Settings' }),
      h('span.spacer'),
      h('button.settings-close', { type: 'button', text: '✕ Close', title: 'Back to the dashboards (Esc)', onclick: () => onClose?.() })),
    h('div.settings-body', null, providers.el, model.el, retention.el, alerting.el, data.el, keys.el, users.el, audit.el, mcp.el, usage.el, prefs.el));
  el.replaceChildren(root);

  // A provider added or removed changes which models can be picked.
  bus.on('settings:providers-changed', () => {
    if (!model.el.hidden) model.load();
  });
  // A user added, changed or deleted is a new line in the audit log.
  bus.on('settings:users-changed', () => {
    if (isOpen() && !audit.el.hidden) audit.load();
  });
  bus.on('settings:users-loaded', ({ users: list }) => audit.setUsers(list));
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && isOpen() && !e.defaultPrevented && !e.target.closest?.('input, textarea, select')) onClose?.();
  });

  function isOpen() {
    return root.dataset.open !== undefined;
  }

  function open({ section } = {}) {
    if (section) {
      // Where a link sent the user (the chat's "no model" note: providers).
      requestAnimationFrame(() => root.querySelector(`.settings-${CSS.escape(section)}`)?.scrollIntoView({ block: 'start' }));
    }
    if (isOpen()) return;
    root.dataset.open = '';
    data.load();
    keys.load();
    prefs.load();
    session.then((s) => {
      if (!isOpen()) return;
      keys.setRole(s?.user?.role);
      if (!isAdmin(s)) return;
      for (const section of adminOnly) section.el.hidden = false;
      providers.load();
      model.load();
      retention.load();
      alerting.load();
      usage.load();
      users.load(s);
      audit.load();
    });
  }

  function close() {
    if (!isOpen()) return;
    delete root.dataset.open;
    // A key's secret is shown once: leaving the page forgets it.
    keys.hideSecret();
    users.hideSecret();
    alerting.forget();
  }

  return { open, close, isOpen };
}
