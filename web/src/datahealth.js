// How the data providers are doing, from `GET /api/sdk/health`: `{offline, fallback, canChange,
// providers: [{provider, name, status, since?, lastSuccessAt?, lastError?, lastErrorAt?,
// latencyMs?}]}`; and the one switch the page may flip, `PUT /api/sdk/fallback {fallback}`
// ("demo data for unreachable providers", admin only). Shared by the dashboard (provider names,
// whether to offer the switch) and Settings → Data providers; every new answer is announced as
// 'data:health' on the bus, so each part updates without asking again.
import { api } from './api.js';
import { bus } from './bus.js';

const MAX_AGE = 30_000;

let last = null; // the last answer
let lastAt = 0;
let pending = null;
let missing = false; // the server has no such endpoint (an older server): stop asking

/** The last answer, or null before the first (never waits). */
export function currentHealth() {
  return last;
}

/** The display name of provider `key` when the health report knows it, else null. */
export function providerName(key) {
  return last?.providers?.find((p) => p.provider === key)?.name || null;
}

/**
 * The health report: the cached one when younger than 30 s (or `force`), else a new request.
 * Resolves null when it cannot be had (not allowed, an older server, unreachable).
 */
export function loadHealth({ force = false } = {}) {
  if (missing) return Promise.resolve(null);
  if (!force && last && Date.now() - lastAt < MAX_AGE) return Promise.resolve(last);
  pending ??= api.get('/api/sdk/health')
    .then((h) => publish(h))
    .catch((e) => {
      if (e.status === 404 || e.status === 405) missing = true;
      return last;
    })
    .finally(() => { pending = null; });
  return pending;
}

/** A new report, errors thrown (an ApiError): for the settings page, which shows them. */
export async function fetchHealth() {
  return publish(await api.get('/api/sdk/health'));
}

/** Switches demo data for unreachable providers on or off; resolves with the new report. */
export async function setFallback(on) {
  const h = await api.put('/api/sdk/fallback', { fallback: !!on });
  return publish(h);
}

function publish(h) {
  if (!h || typeof h !== 'object') return last;
  last = { ...h, providers: Array.isArray(h.providers) ? h.providers : [] };
  lastAt = Date.now();
  bus.emit('data:health', last);
  return last;
}
