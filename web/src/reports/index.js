// The Reports page (`#reports` in the URL): scheduled reports, which render a dashboard as PDF or
// PNG on a cron schedule and send it to alert channels. It is a page of its own in the panes'
// place, like Settings, opened from the "Reports" entry in the sidebar's head (dashboard/list.js,
// for people who can write; not viewers), rather than a part of the dashboard view: a report
// list spans every dashboard one sees, shares the channels with alert rules, and its table and
// run history want the whole width. The form starts on the dashboard open when the page opened.
//
// createReports(el, {api, session, onClose, onSettings}) → {open({dashboardId}), close(),
// isOpen()}. Each open asks the server again; Esc (outside a field) closes. page.js has the
// content, form.js the form, table.js the rows, rules.js the pure rules.
//
// Test hooks: `.reports-view[data-open]`, `.reports-close`; page.js's, form.js's and table.js's.
import './reports.css';
import { html } from 'htm/preact';
import { render } from 'preact';
import { h } from '../dom.js';
import { isAdmin } from '../session.js';
import { readsOnly } from '../dashboard/access.js';
import { toast } from '../toast.js';
import { ReportsPage } from './page.js';

export function createReports(el, { api, session = Promise.resolve(null), onClose, onSettings }) {
  const root = h('div.reports-view');
  el.replaceChildren(root);
  let loadKey = 0;
  let dashboardId = null;
  let who = null;

  function paint() {
    if (!isOpen()) {
      render(null, root);
      return;
    }
    render(html`<${ReportsPage} api=${api} toast=${toast} loadKey=${loadKey} dashboardId=${dashboardId}
      canWrite=${Boolean(who?.user) && !readsOnly(who)} isAdmin=${isAdmin(who)}
      onClose=${() => onClose?.()} onSettings=${() => onSettings?.()} />`, root);
  }

  function isOpen() {
    return root.dataset.open !== undefined;
  }

  async function open({ dashboardId: id } = {}) {
    dashboardId = id ?? null;
    if (isOpen()) return;
    root.dataset.open = '';
    who = await session;
    if (!isOpen()) return;
    loadKey += 1;
    paint();
  }

  function close() {
    if (!isOpen()) return;
    delete root.dataset.open;
    paint();
  }

  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && isOpen() && !e.defaultPrevented && !e.target.closest?.('input, textarea, select')) onClose?.();
  });

  return { open, close, isOpen };
}
