// The page a share link opens (`/s/{token}`), for someone without an account: a slim header
// (the name, the theme switch), then the dashboard the link shows, read-only, drawn by the same
// view as the app's (dashboard/view.js with `readOnly` and the link's WebSocket,
// `/api/shared/{token}/ws`). `GET /api/shared/{token}` gives the dashboard, the variable values
// the link shows and whether the visitor may change them.
//
// A link that does not work (404: revoked or unknown; 410: expired), or stops working while the
// page is open (the socket closes with 1008, the page then asks the link which), leaves one
// sentence in the dashboard's place (links.js's EXPIRED or REVOKED). No request here or in the
// view it makes brings up the sign-in screen (`publicApi`).
//
// Test hooks: `.app-shared` (the page's main part) with the dashboard view (see view.js; the
// chip is `.dash-shared-chip`), or `.shared-gone[data-reason=expired|revoked|error]` with
// `.shared-gone-text`.
import { publicApi } from './api.js';
import { bus } from './bus.js';
import { h } from './dom.js';
import { bindThemeButton, setTheme } from './theme.js';
import { createDashboardView } from './dashboard/index.js';
import { EXPIRED, goneSentence, sharedPath } from './dashboard/links.js';

const CHIP = 'Shared view · read-only';

export async function startSharedPage(app, token) {
  const main = h('main.app-shared');
  const theme = h('button.theme-toggle', { type: 'button', title: 'Switch theme', 'aria-label': 'Switch theme' });
  app.replaceChildren(
    h('header.app-header', null, h('span.brand', { text: 'Boardsmith' }), h('span.spacer'), bindThemeButton(theme)),
    main);
  const handle = { token, view: null, bus, setTheme };
  window.boardsmith = handle; // for the browser tests and the console; not an API

  const path = sharedPath(token);
  let over = false;
  let view = null;

  /** The link does not (or no longer) work: one sentence instead of the dashboard. */
  function gone(sentence, reason) {
    if (over) return;
    over = true;
    view?.close();
    document.title = 'Boardsmith';
    main.replaceChildren(h('div.shared-gone', { role: 'status', dataset: { reason } },
      h('p.shared-gone-text', { text: sentence }),
      h('p.shared-gone-note', {
        text: reason === 'error' ? 'Reload the page to try again.' : 'Ask whoever sent it to you for a new link.',
      })));
  }
  const goneFor = (sentence) => gone(sentence, sentence === EXPIRED ? 'expired' : 'revoked');

  /** Asks the link whether it still works; its sentence when not, else null. */
  async function check(reason) {
    try {
      await publicApi.get(path);
      return goneSentence({ reason });
    } catch (e) {
      return goneSentence({ status: e.status, reason });
    }
  }

  let answer;
  try {
    answer = await publicApi.get(path);
  } catch (e) {
    const sentence = goneSentence({ status: e.status });
    if (sentence) goneFor(sentence);
    else gone(`This shared dashboard could not be opened: ${e.message}`, 'error');
    return handle;
  }

  const dashboard = answer?.dashboard ?? {};
  view = createDashboardView(main, {
    api: publicApi,
    bus,
    session: Promise.resolve(null),
    readOnly: {
      label: CHIP,
      title: 'Anyone with this link can look at this dashboard; nothing can be changed from here.',
      vars: answer?.allowVars === true,
    },
    connection: {
      path: `${path}/ws`,
      stopped: () => over,
      // Closed before it opened: a link revoked or expired meanwhile ends the page; else retry.
      refused: async () => {
        const sentence = await check('');
        if (sentence) goneFor(sentence);
        return !!sentence;
      },
      // Closed with 1008: the server ended the link (revoked or expired; the link says which).
      ended: (ev) => {
        if (ev.code !== 1008) return false;
        check(ev.reason || 'revoked').then((sentence) => goneFor(sentence));
        return true;
      },
    },
  });
  handle.view = view;
  bus.on('dashboard:panels', ({ title }) => {
    if (!over) document.title = title ? `${title} · Boardsmith` : 'Boardsmith';
  });
  view.open(dashboard.id, { state: dashboard.state, version: dashboard.version, vars: answer?.vars });
  return handle;
}
