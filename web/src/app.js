// The signed-in app, which main.js imports (running this module starts it) for every path but a
// share link's `/s/{token}`: header (with the account menu), the three panes (dashboard list,
// dashboard view, chat), the settings page or the reports page (reports/: scheduled reports,
// opened from the sidebar) in their place, the theme, who is signed in (`GET /api/session`,
// asked once and shared as a promise), and the URL (`#d=<dashboardId>&chat=<chatId>`, plus
// `settings` or `reports` while that page is open) so a reload reopens what was open; and the
// alert bell (alerts/bell.js: firing alerts, notifications).
import { api, publicApi } from './api.js';
import { bus } from './bus.js';
import { setTheme, bindThemeButton } from './theme.js';
import { createDashboardList, createDashboardView } from './dashboard/index.js';
import { createHistory } from './dashboard/history/index.js';
import { createChatPane } from './chat/index.js';
import { createSettings } from './settings/index.js';
import { createReports } from './reports/index.js';
import { createAccountMenu } from './account.js';
import { createAlertBell } from './alerts/bell.js';

const app = document.getElementById('app');
app.innerHTML = `
  <header class="app-header">
    <button class="toggle-sidebar" title="Show or hide the dashboard list" aria-label="Dashboards">☰</button>
    <span class="brand">Boardsmith</span>
    <nav class="tabs" role="tablist">
      <button data-pane="list">Dashboards</button>
      <button data-pane="dashboard">View</button>
      <button data-pane="chat">Chat</button>
    </nav>
    <span class="spacer"></span>
    <span class="alerts-slot"></span>
    <button class="settings-toggle" title="Settings: providers, default model, alerts and reports, data providers, API keys, usage" aria-label="Settings" aria-pressed="false">⚙&#xFE0E;<span class="label"> Settings</span></button>
    <button class="theme-toggle" title="Switch theme" aria-label="Switch theme"></button>
    <span class="account-slot"></span>
  </header>
  <main class="app-main">
    <aside class="app-sidebar"></aside>
    <section class="app-dashboard"></section>
    <section class="app-chat"></section>
  </main>
  <section class="app-settings"></section>
  <section class="app-reports"></section>`;

const $ = (sel) => app.querySelector(sel);
// Who is signed in; null when nobody is (the 401 has brought up the sign-in screen) or the
// server has no accounts.
const session = api.get('/api/session').catch(() => null);
const ctx = { api, bus, session };

// URL state: which dashboard and chat are open.
function readHash() {
  return new URLSearchParams(location.hash.slice(1));
}
function writeHash(key, value) {
  const params = readHash();
  if (value) params.set(key, value === true ? '' : value);
  else params.delete(key);
  // `settings` and `reports` are flags: `#settings&d=…`, not `#settings=&d=…`.
  history.replaceState(null, '', `#${String(params).replace(/(^|&)(settings|reports)=(?=&|$)/g, '$1$2')}`);
}

// Narrow screens show one pane; the header tabs pick it.
function showPane(pane) {
  app.dataset.pane = pane;
  for (const b of app.querySelectorAll('.tabs button')) {
    b.setAttribute('aria-pressed', String(b.dataset.pane === pane));
  }
}
for (const b of app.querySelectorAll('.tabs button')) {
  b.addEventListener('click', () => {
    closeSettings();
    closeReports();
    showPane(b.dataset.pane);
  });
}
showPane('dashboard');

$('.toggle-sidebar').addEventListener('click', () => app.classList.toggle('sidebar-hidden'));

bindThemeButton($('.theme-toggle'));

const list = createDashboardList($('.app-sidebar'), ctx);
const view = createDashboardView($('.app-dashboard'), ctx);
// Old versions, comparisons and the agent's draft: a sheet over the dashboard pane.
const historyViews = createHistory($('.app-dashboard'), $('.app-dashboard .dashboard-view'), ctx);
const chat = createChatPane($('.app-chat'), ctx);
const settings = createSettings($('.app-settings'), { ...ctx, onClose: () => closeSettings() });
const reports = createReports($('.app-reports'), {
  api, session, onClose: () => closeReports(), onSettings: () => openSettings({ section: 'alerting' }),
});
createAccountMenu($('.account-slot'), { api, session });
// The bell asks without bringing up the sign-in screen (publicApi): a refusal only hides it.
// Silencing an alert is a person's act (api: a lapsed session brings up the sign-in).
const bell = createAlertBell($('.alerts-slot'), {
  api: publicApi, act: api, bus, session,
  onOpen: (dashboardId) => {
    closeSettings();
    closeReports();
    showPane('dashboard');
    bus.emit('dashboard:open', { dashboardId });
  },
});

// The settings page takes the place of the panes while open (and of the reports page).
function openSettings(where = {}) {
  closeReports();
  app.classList.add('settings-open');
  $('.settings-toggle').setAttribute('aria-pressed', 'true');
  settings.open(where);
  if (!readHash().has('settings')) writeHash('settings', true);
}
function closeSettings() {
  app.classList.remove('settings-open');
  $('.settings-toggle').setAttribute('aria-pressed', 'false');
  settings.close();
  if (readHash().has('settings')) writeHash('settings', null);
}
$('.settings-toggle').addEventListener('click', () => (settings.isOpen() ? closeSettings() : openSettings()));

// The reports page, likewise: from the sidebar's Reports button ('reports:open').
function openReports({ dashboardId } = {}) {
  closeSettings();
  app.classList.add('reports-open');
  reports.open({ dashboardId: dashboardId ?? view.current() });
  if (!readHash().has('reports')) writeHash('reports', true);
}
function closeReports() {
  app.classList.remove('reports-open');
  reports.close();
  if (readHash().has('reports')) writeHash('reports', null);
}
bus.on('reports:open', (where) => openReports(where));
// A part sends the user to a settings section (the chat's "no model is set up" note).
bus.on('settings:open', ({ section } = {}) => openSettings({ section }));

bus.on('dashboard:opened', ({ dashboardId }) => writeHash('d', dashboardId));
bus.on('chat:opened', ({ chatId }) => writeHash('chat', chatId));
bus.on('dashboard:open', () => {
  closeReports();
  if (app.dataset.pane === 'list') showPane('dashboard');
});
// A version opened or compared from the list shows in the dashboard pane (narrow screens).
for (const name of ['version:open', 'version:compare']) {
  bus.on(name, () => {
    if (app.dataset.pane === 'list') showPane('dashboard');
  });
}

// A changed hash (typed, pasted, back/forward) opens what it names without a reload. It is read
// from the event, not from `location`: by the time the event runs, a dashboard the app opened
// on its own meanwhile (the most recent one, at start) may have rewritten the hash.
window.addEventListener('hashchange', (e) => {
  const params = new URLSearchParams(new URL(e.newURL).hash.slice(1));
  const d = params.get('d');
  if (d && d !== view.current()) bus.emit('dashboard:open', { dashboardId: d });
  const c = params.get('chat');
  if (c && c !== chat.currentChat()) chat.openChat(c);
  if (params.has('settings')) openSettings();
  else closeSettings();
  if (params.has('reports')) openReports();
  else closeReports();
});

const initial = readHash();
if (initial.has('settings')) openSettings();
else if (initial.has('reports')) openReports({ dashboardId: initial.get('d') });
if (initial.get('chat')) chat.openChat(initial.get('chat'));
if (initial.get('d')) {
  view.open(initial.get('d'));
} else {
  // Nothing chosen yet: the most recently updated dashboard.
  list.ready.then((items) => {
    if (items.length && !view.current()) view.open(items[0].id);
  });
}

// A handle for the browser tests and the console; not an API.
window.boardsmith = { api, bus, view, chat, list, settings, reports, setTheme, session, history: historyViews, bell };
