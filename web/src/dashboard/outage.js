// What a panel's failure means to the analyst, as words: a data provider that cannot be reached
// (the error's `kind: "provider"` with its `outage`) is not the panel's code failing, and a panel
// that keeps its last good data (`stale`) is not a panel without data. Pure: no DOM, so the
// wording is unit-tested in node (outage.test.js).
//
// Wire shapes (README "WebSocket"): a panel error may be
//   {kind: "provider", message, outage: {provider, name, cause, summary, details, host?, setting?, retryInMs?}}
// and a stale result carries `stale: {dataAt, failingSince, reason}` next to its kept data.
// `summary` and `reason` are the analyst's sentence; `message`, `details`, `host`, `setting` and
// `retryInMs` are for operators and stay behind a Details disclosure.
import { relativeTime, clockTime, absoluteTime } from '../time.js';

/** Causes that may clear by themselves (the provider is down, slow or busy). */
export const TRANSIENT = new Set(['unreachable', 'timeout', 'rate_limited', 'server_error']);

/** A short state for chips and titles, by cause ("Binance unreachable"). */
const SHORT = {
  unreachable: 'unreachable',
  timeout: 'not answering',
  rate_limited: 'rate-limited',
  server_error: 'having problems',
  bad_key: 'refused the access key',
  needs_key: 'needs an access key',
  off: 'switched off',
  bad_answer: 'sent unreadable data',
};

/** Whether `error` (a panel error) is a data provider's failure rather than the panel's code. */
export function isProviderError(error) {
  return !!error && typeof error === 'object' && error.kind === 'provider';
}

/**
 * The outage of a provider error, with every field the UI reads present: `provider` (a key
 * for grouping), `name`, `cause`, `summary` (one sentence, never operator text).
 */
export function outageOf(error) {
  const o = error && typeof error.outage === 'object' && error.outage ? error.outage : {};
  const name = str(o.name) || str(o.provider) || 'A data provider';
  const cause = str(o.cause) || 'unreachable';
  return {
    ...o,
    provider: str(o.provider) || name.toLowerCase(),
    name,
    cause,
    summary: str(o.summary) || `${name} cannot be reached`,
  };
}

/** "Binance unreachable": the provider's name and a short state, for chips and the header. */
export function shortState(outage) {
  return `${outage.name} ${SHORT[outage.cause] ?? 'unavailable'}`;
}

/**
 * A stale result's times as unix ms: `dataAt` (when the kept data was produced) and
 * `failingSince` (the wire's value is a time; a small number is read as a duration before
 * `receivedAt`, the moment the message arrived).
 */
export function staleTimes(stale, receivedAt = Date.now(), fallbackDataAt = null) {
  const num = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  const dataAt = num(stale?.dataAt) ?? num(fallbackDataAt);
  let since = num(stale?.failingSince);
  if (since != null && since < 1e11) since = receivedAt - since;
  return { dataAt, failingSince: since };
}

/**
 * The stale chip in two parts, `state` ("Binance unreachable since 10:02") and `age` ("data from
 * 09:58"); a narrow panel shows the age only.
 */
export function staleChipParts(outage, times, now = Date.now()) {
  let state = shortState(outage);
  if (times.failingSince != null) state += ` since ${clockTime(times.failingSince, now)}`;
  const age = times.dataAt != null ? `data from ${clockTime(times.dataAt, now)}` : 'old data';
  return { state, age };
}

/** The stale chip as one line: "Binance unreachable since 10:02 · data from 09:58". */
export function staleChipText(outage, times, now = Date.now()) {
  const { state, age } = staleChipParts(outage, times, now);
  return `${state} · ${age}`;
}

/** The stale chip's tooltip: the same with exact and relative times. */
export function staleChipTitle(outage, times, now = Date.now()) {
  return [
    outage.summary,
    times.failingSince != null ? `Failing since ${absoluteTime(times.failingSince)} (${relativeTime(times.failingSince, now)})` : '',
    times.dataAt != null ? `Showing the last data received, from ${absoluteTime(times.dataAt)} (${relativeTime(times.dataAt, now)})` : '',
  ].filter(Boolean).join('\n');
}

/** What a panel without data says under the summary. */
export function noDataNote(outage) {
  return TRANSIENT.has(outage.cause)
    ? 'No data has been received yet. This panel fills in by itself once it answers.'
    : 'No data has been received yet.';
}

/** The fallback button's words for this cause. */
export function fallbackLabel(outage) {
  return TRANSIENT.has(outage.cause) ? 'Use demo data while unreachable' : 'Use demo data instead';
}

/**
 * The operator's text of a provider error, one item a line, for the Details disclosure: what
 * happened, the host, the setting, when it is tried again and the full message.
 */
export function operatorLines(error, outage = outageOf(error)) {
  const lines = [];
  if (str(outage.details)) lines.push(outage.details);
  if (str(outage.host)) lines.push(`Host: ${outage.host}`);
  if (str(outage.setting)) lines.push(`Setting: ${outage.setting}`);
  if (typeof outage.retryInMs === 'number' && outage.retryInMs > 0) {
    lines.push(`Tried again in ${Math.max(1, Math.round(outage.retryInMs / 1000))} s`);
  }
  const message = str(error?.message);
  if (message && message !== outage.details) lines.push(message);
  return lines;
}

const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;

/**
 * The dashboard banner: panel troubles `[{provider, name, summary, state: 'stale'|'nodata',
 * dataAt?}]` grouped by provider, worst first, as
 * `[{provider, name, stale, nodata, text}]`, e.g. "2 panels show data from 10m ago — Binance
 * cannot be reached", "3 panels have no data — Binance cannot be reached".
 */
export function bannerLines(troubles, now = Date.now()) {
  const groups = new Map();
  for (const t of troubles) {
    let g = groups.get(t.provider);
    if (!g) {
      g = { provider: t.provider, name: t.name, summary: t.summary, stale: 0, nodata: 0, oldest: null };
      groups.set(t.provider, g);
    }
    if (t.state === 'stale') {
      g.stale += 1;
      if (Number.isFinite(t.dataAt) && (g.oldest == null || t.dataAt < g.oldest)) g.oldest = t.dataAt;
    } else {
      g.nodata += 1;
    }
  }
  return [...groups.values()]
    .sort((a, b) => (b.stale + b.nodata) - (a.stale + a.nodata) || a.name.localeCompare(b.name))
    .map((g) => {
      const parts = [];
      if (g.stale) {
        const age = g.oldest != null ? ` from ${relativeTime(g.oldest, now)}` : ' that is out of date';
        parts.push(`${plural(g.stale, 'panel shows', 'panels show')} data${age}`);
      }
      if (g.nodata) {
        const lead = g.stale ? plural(g.nodata, 'has', 'have') : plural(g.nodata, 'panel has', 'panels have');
        parts.push(`${lead} no data`);
      }
      return {
        provider: g.provider, name: g.name, stale: g.stale, nodata: g.nodata,
        text: `${parts.join(', ')} — ${g.summary}`,
      };
    });
}

/**
 * The header indicator: the connection and the data together. `socket` is the WebSocket's
 * state ('open' | 'connecting' | 'closed'), `troubles` the panels' provider troubles.
 * → {label, health: 'ok'|'delayed', title}.
 */
export function liveIndicator(socket, troubles, retryAt = null, now = Date.now()) {
  const providers = [...new Map(troubles.map((t) => [t.provider, t])).values()];
  const health = troubles.length ? 'delayed' : 'ok';
  const trouble = troubles.length
    ? `${plural(troubles.length, 'panel is', 'panels are')} not up to date: ${providers.map((t) => t.summary).join('; ')}.`
    : '';
  if (socket === 'closed') {
    const retry = retryAt ? `; retrying in ${Math.max(1, Math.round((retryAt - now) / 1000))} s` : '';
    return { label: 'Offline', health, title: `Disconnected from the server${retry}. Panels keep what they last showed.` };
  }
  if (socket === 'connecting') return { label: 'Connecting…', health, title: 'Connecting to the server' };
  if (troubles.length) return { label: 'Data delayed', health, title: `Connected to the server. ${trouble}` };
  return { label: 'Live', health, title: 'Connected to the server: panels update as their data changes' };
}

function str(v) {
  return typeof v === 'string' ? v.trim() : '';
}
