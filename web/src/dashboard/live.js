// A dashboard WebSocket: one connection, one subscribed dashboard at a time, reconnecting with
// exponential backoff (0.5 s doubling to 10 s, with jitter) and resubscribing. Variable values
// belong to the connection on the server, so those sent for the subscribed dashboard are sent
// again after a reconnect.
//
// The app's socket is `/ws` (the defaults). Signed out, it does not connect: it waits for `ready`
// (the promise of `GET /api/session`, whose 401 brings up the sign-in screen) and gives up while
// the sign-in screen is shown. A socket that closes before it opened may have been refused for
// want of a session (a browser cannot read the handshake's status): `GET /api/session` tells, and
// its 401 brings up the sign-in screen.
//
// A share link's page (shared.js) passes its own `path` (`/api/shared/{token}/ws`), `refused`
// (asks the link whether it still works) and `ended` (a close with code 1008: the link was
// revoked or expired), and never shows the sign-in screen.
//
// createLive({onMessage, onStatus, ready, path, stopped, refused, ended})
//   → {subscribe(id), unsubscribe(), send(msg) → bool, status()}
// onStatus(state, info): state 'connecting' | 'open' | 'closed'; info.retryAt when a retry is due.
// stopped() → bool: do not connect now (default: the sign-in screen is up).
// refused() → Promise<bool>: a socket closed before it opened; true when that is final.
// ended(closeEvent) → bool: a socket closed; true when that is final (no retry).
import { api } from '../api.js';
import { signInShown } from '../signin.js';

const MIN_DELAY = 500;
const MAX_DELAY = 10_000;

/** The app's refusal check: `GET /api/session` (a 401 brings up the sign-in screen); retry. */
async function askSession() {
  try {
    await api.get('/api/session');
  } catch { /* a 401 has brought up the sign-in screen; anything else: retry */ }
  return false;
}

export function createLive({
  onMessage, onStatus, ready = Promise.resolve(), path = '/ws', stopped = signInShown, refused = askSession, ended = () => false,
}) {
  let ws = null;
  let started = false; // `ready` has settled: connecting is allowed
  let state = 'closed';
  let attempt = 0;
  let timer = null;
  let wanted = null;
  let wantedVars = {};
  let over = false; // `ended` or `refused` said final: this connection is not coming back

  const url = () => `${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}${path}`;

  function setState(s, info = {}) {
    state = s;
    onStatus?.(s, info);
  }

  function connect() {
    clearTimeout(timer);
    timer = null;
    if (ws || !started) return;
    if (over || stopped()) {
      setState('closed');
      return;
    }
    setState('connecting');
    let sock;
    try {
      sock = new WebSocket(url());
    } catch {
      scheduleRetry();
      return;
    }
    ws = sock;
    let opened = false;
    sock.onopen = () => {
      if (ws !== sock) return;
      opened = true;
      attempt = 0;
      setState('open');
      if (wanted) {
        raw({ type: 'subscribe', dashboardId: wanted });
        if (Object.keys(wantedVars).length) raw({ type: 'set_vars', dashboardId: wanted, vars: wantedVars });
      }
    };
    sock.onmessage = (ev) => {
      if (ws !== sock) return;
      let msg;
      try {
        msg = JSON.parse(ev.data);
      } catch {
        return;
      }
      onMessage?.(msg);
    };
    sock.onclose = async (ev) => {
      if (ws !== sock) return;
      ws = null;
      // Refused, or the server is unreachable: only the first is a reason to stop.
      const final = ended(ev) || (!opened && await refused());
      if (ws) return; // reconnected meanwhile (back online, visible again)
      if (final) over = true;
      if (final || stopped()) {
        setState('closed');
        return;
      }
      scheduleRetry();
    };
    sock.onerror = () => {}; // onclose follows and schedules the retry.
  }

  function scheduleRetry() {
    const base = Math.min(MAX_DELAY, MIN_DELAY * 2 ** attempt);
    attempt += 1;
    const delay = Math.round(base / 2 + Math.random() * (base / 2));
    clearTimeout(timer);
    timer = setTimeout(connect, delay);
    setState('closed', { retryAt: Date.now() + delay });
  }

  function raw(msg) {
    if (!ws || ws.readyState !== WebSocket.OPEN) return false;
    ws.send(JSON.stringify(msg));
    return true;
  }

  function send(msg) {
    const sent = raw(msg);
    if (sent && msg.type === 'set_vars' && msg.dashboardId === wanted) {
      wantedVars = { ...wantedVars, ...msg.vars };
    }
    return sent;
  }

  // Back online or visible again: retry now instead of waiting out the backoff.
  const kick = () => {
    if (!ws && wanted) {
      attempt = 0;
      connect();
    }
  };
  window.addEventListener('online', kick);
  const start = () => {
    started = true;
    if (wanted) connect();
  };
  ready.then(start, start);
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') kick();
  });

  return {
    subscribe(id) {
      if (wanted && wanted !== id) {
        raw({ type: 'unsubscribe', dashboardId: wanted });
        wantedVars = {};
      }
      wanted = id;
      if (!ws) connect();
      else raw({ type: 'subscribe', dashboardId: id });
    },
    unsubscribe() {
      if (wanted) raw({ type: 'unsubscribe', dashboardId: wanted });
      wanted = null;
      wantedVars = {};
    },
    send,
    status: () => state,
  };
}
