// Alert rules and their states in words (issue 41), for the header's bell (bell.js) and the
// panels' indicators (indicator.js). Pure: no DOM, no requests.
//
// Inputs are the server's:
// - a rule, as the dashboard state holds it (`state.alerts[]`): {id, name, panelId, when:
//   {op, value, field?, window?} | "function body", for?, severity?, notify?, vars?, forEach?};
// - a rule's state, as `GET /api/alerts` lists it (one per rule, or per fan-out value):
//   {dashboardId, dashboardTitle, ruleId, name, panelId, severity, key?, status: ok|pending|
//   firing, since, value?, message, evaluatedAt (0: never), noData, error?};
// - a notification, as `GET /api/notifications` lists it: {id, status: firing|resolved,
//   reason: change|reminder|flapping|settled, muted?: silenced|flapping|unchanged (recorded, not
//   sent), silence? (the silence's id), dashboardId, dashboardTitle, panelId, panelTitle, ruleId, ruleName, severity, key?, value?,
//   threshold?, message, at, link, notify: [channel], deliveries: [{channel, status: sent|failed,
//   attempts, httpStatus?, error?, at}]}.
import { formatNumber } from '../dashboard/format.js';

/** The states a rule can be in, worst last; `unknown`: not judged yet (or not known here). */
const RANK = { unknown: 0, ok: 1, pending: 2, firing: 3 };
const SEVERITY_RANK = { info: 0, warning: 1, critical: 2 };

/**
 * The worst of `statuses` (firing > pending > ok); `unknown` when none is known (an empty list,
 * or only unknown ones).
 */
export function worstStatus(statuses) {
  let worst = 'unknown';
  for (const s of statuses ?? []) {
    if ((RANK[s] ?? 0) > RANK[worst]) worst = s;
  }
  return worst;
}

/** A threshold as the rule wrote it: 70000, not 70,000 (what the analyst typed or asked for). */
function num(v) {
  return typeof v === 'number' && Number.isFinite(v) ? String(v) : String(v ?? '?');
}

/**
 * A rule's condition in words: "> 70000", "crosses above 10", "moves more than 5% over 24h",
 * "close < 3" (a field named), "code" (a function body).
 */
export function conditionWords(when) {
  if (typeof when === 'string') return 'code';
  if (!when || typeof when !== 'object') return 'unknown condition';
  const t = num(when.value);
  let words;
  switch (when.op) {
    case '>': words = `> ${t}`; break;
    case '<': words = `< ${t}`; break;
    case 'crosses_above': words = `crosses above ${t}`; break;
    case 'crosses_below': words = `crosses below ${t}`; break;
    case 'change_pct_over':
      words = when.window ? `moves more than ${t}% over ${when.window}` : `moves more than ${t}% from the previous point`;
      break;
    default: words = `${String(when.op ?? '?')} ${t}`;
  }
  return typeof when.field === 'string' && when.field ? `${when.field} ${words}` : words;
}

/** How many of `alerts` (GET /api/alerts rows) are firing: the bell's number. */
export function firingCount(alerts) {
  return (Array.isArray(alerts) ? alerts : []).filter((a) => a?.status === 'firing').length;
}

/** The bell's badge: the count, "99+" past 99, nothing at 0. */
export function badgeText(count) {
  if (!(count > 0)) return '';
  return count > 99 ? '99+' : String(count);
}

/** The bell's accessible name. */
export function bellLabel(count) {
  if (!(count > 0)) return 'Alerts: none firing';
  return `Alerts: ${count} firing`;
}

/**
 * The alerts the bell lists: firing and pending ones, firing first, then the most severe, then
 * the most recent.
 */
export function activeAlerts(alerts) {
  return (Array.isArray(alerts) ? alerts : [])
    .filter((a) => a?.status === 'firing' || a?.status === 'pending')
    .sort((a, b) => (RANK[b.status] - RANK[a.status])
      || ((SEVERITY_RANK[b.severity] ?? 1) - (SEVERITY_RANK[a.severity] ?? 1))
      || ((b.since ?? 0) - (a.since ?? 0)));
}

/** A status for people: "Firing", "Pending", "OK", "Not judged yet". */
export function statusLabel(status) {
  return { firing: 'Firing', pending: 'Pending', ok: 'OK' }[status] ?? 'Not judged yet';
}

/** A severity for people: "Critical", "Warning", "Info" (warning when unset). */
export function severityLabel(severity) {
  return { critical: 'Critical', info: 'Info' }[severity] ?? 'Warning';
}

/** A judged value for display ('' without one). */
export function valueText(v) {
  return typeof v === 'number' && Number.isFinite(v) ? formatNumber(v) : '';
}

/**
 * Each of the rules on `panelId` (`rules`: the state's `alerts`) with its state from `views`
 * (GET /api/alerts?dashboardId=… rows; several per fan-out rule): {id, name, words, hold,
 * severity, status, value?, since?, noData, error?, keys (the fan-out values firing or pending,
 * worst first)}. A rule's status is the worst of its values'; `unknown` while none was judged.
 */
export function panelRules(rules, views, panelId) {
  const list = Array.isArray(rules) ? rules : [];
  const states = Array.isArray(views) ? views : [];
  return list.filter((r) => r && r.panelId === panelId).map((r) => {
    const mine = states.filter((v) => v?.ruleId === r.id && v.panelId === panelId);
    const judged = mine.filter((v) => v.evaluatedAt > 0 || v.status !== 'ok');
    const status = worstStatus(judged.map((v) => v.status));
    const worst = judged.find((v) => v.status === status) ?? null;
    return {
      id: r.id,
      name: typeof r.name === 'string' && r.name ? r.name : r.id,
      words: conditionWords(r.when),
      hold: typeof r.for === 'string' && r.for ? r.for : '',
      severity: r.severity ?? 'warning',
      status,
      value: worst?.value,
      since: status === 'unknown' ? undefined : worst?.since,
      noData: mine.some((v) => v.noData),
      error: mine.find((v) => v.error)?.error,
      keys: activeAlerts(mine).map((v) => v.key).filter((k) => typeof k === 'string'),
    };
  });
}

/** The worst state of a panel's rules (panelRules' rows): what colours its bell. */
export function panelState(rows) {
  return worstStatus((rows ?? []).map((r) => r.status));
}

/** One rule of a panel in a line: "X above 3: > 3 — Firing (5)". */
export function ruleLine(r) {
  const value = valueText(r.value);
  const keys = r.keys?.length ? ` for ${r.keys.join(', ')}` : '';
  const hold = r.hold ? ` for ${r.hold}` : '';
  return `${r.name}: ${r.words}${hold} — ${statusLabel(r.status)}${keys}${value ? ` (${value})` : ''}${r.noData ? ', no data' : ''}`;
}

/** The indicator's tooltip and accessible name: each rule in a line. */
export function panelTooltip(rows) {
  const n = rows?.length ?? 0;
  const head = `${n} alert rule${n === 1 ? '' : 's'} on this panel`;
  return [head, ...(rows ?? []).map(ruleLine)].join('\n');
}

/** A notification's headline: "Fired: X above 3 (BTC)" / "Resolved: …". */
export function notificationTitle(n) {
  const what = n?.status === 'resolved' ? 'Resolved' : 'Fired';
  const key = typeof n?.key === 'string' && n.key ? ` (${n.key})` : '';
  return `${what}: ${n?.ruleName ?? n?.ruleId ?? 'alert'}${key}`;
}

/** The value a notification saw, with the rule's threshold: "5 (threshold 3)". */
export function notificationValue(n) {
  const value = valueText(n?.value);
  const threshold = valueText(n?.threshold);
  if (!value) return threshold ? `threshold ${threshold}` : '';
  return threshold ? `${value} (threshold ${threshold})` : value;
}

/** Why a notification was recorded but not sent, short (its tag) and in a sentence (its tooltip). */
const MUTED = {
  silenced: { text: 'silenced', title: 'Recorded, not sent: a silence holds this alert back; channels hear the state in force when it ends' },
  flapping: { text: 'flapping', title: 'Recorded, not sent: the rule is flapping; channels hear it once it holds one state' },
  unchanged: { text: 'not sent: unchanged', title: 'Recorded, not sent: channels already heard this state' },
};

/** Why a sent notification is not a plain change, short and in a sentence. */
const REASONS = {
  reminder: { text: 'reminder', title: 'Still firing: a reminder (the rule’s repeat)' },
  flapping: { text: 'flapping', title: 'The rule changes too often: later changes are recorded, not sent, until it settles' },
  settled: { text: 'settled', title: 'The state in force, now that the rule has settled or a silence has ended' },
};

/**
 * A notification's tags, in words: first why it was not sent (`muted`), then why it was made
 * when that is not a plain change (`reason`): [{kind: muted|reason, value, text, title}]. A
 * flapping notice that was also held back as flapping says so once.
 */
export function notificationTags(n) {
  const tags = [];
  const muted = MUTED[n?.muted];
  if (muted) tags.push({ kind: 'muted', value: n.muted, ...muted });
  else if (typeof n?.muted === 'string' && n.muted) tags.push({ kind: 'muted', value: n.muted, text: `not sent: ${n.muted}`, title: 'Recorded, not sent' });
  const reason = REASONS[n?.reason];
  if (reason && !tags.some((t) => t.text === reason.text)) tags.push({ kind: 'reason', value: n.reason, ...reason });
  return tags;
}

/**
 * What sending a notification to each of its channels did, one entry per channel it names:
 * {channel, status: sent|failed|waiting|muted, text}. A muted one was never to be sent.
 */
export function deliveryLines(n) {
  const deliveries = Array.isArray(n?.deliveries) ? n.deliveries : [];
  const channels = [...new Set([...(Array.isArray(n?.notify) ? n.notify : []), ...deliveries.map((d) => d.channel)])];
  return channels.map((channel) => {
    const d = [...deliveries].reverse().find((x) => x.channel === channel);
    if (!d && n?.muted) return { channel, status: 'muted', text: `${channel}: not sent` };
    if (!d) return { channel, status: 'waiting', text: `${channel}: not sent yet` };
    if (d.status === 'sent') return { channel, status: 'sent', text: `${channel}: sent` };
    const why = d.error || (d.httpStatus ? `HTTP ${d.httpStatus}` : 'failed');
    const tries = d.attempts > 1 ? ` after ${d.attempts} attempts` : '';
    return { channel, status: 'failed', text: `${channel}: failed${tries} (${why})` };
  });
}
