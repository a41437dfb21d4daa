// Silences in words (alert noise control): which silence holds back an alert, "Silenced until
// 14:05", the body of `POST /api/silences`, who may silence. Pure: no DOM, no requests; the
// control that uses them is silencing.js.
//
// A silence, as `GET /api/silences` lists it: {id, dashboardId, ruleId?, key?, startsAt, endsAt
// (unix ms), comment, createdBy: {userId?, username?, keyId?, token?}}. It covers a rule's
// notification when it is that dashboard's, names that rule or none, names that fan-out value or
// none, and has not ended — the server's own rule (alerting::silences), but for `startsAt`: a
// silence starts when it is made, so a `startsAt` ahead of this browser's clock is only the two
// clocks disagreeing, and a silence just made must show as one.

/** The durations the Silence action offers, shortest first. */
export const DURATIONS = ['1h', '4h', '24h'];

/** Whether silence `s` holds back the notifications of `target` ({dashboardId, ruleId, key?}) at `now`. */
export function covers(s, target, now) {
  if (!s || !target || s.dashboardId !== target.dashboardId) return false;
  if (s.ruleId != null && s.ruleId !== target.ruleId) return false;
  if (s.key != null && s.key !== (target.key ?? null)) return false;
  return now < s.endsAt;
}

/**
 * The silences in force for `target` at `now`, the one ending last first: the first is what the
 * alert says ("until …"); Unsilence ends them all (else it would stay silenced).
 */
export function coveringSilences(silences, target, now) {
  return (Array.isArray(silences) ? silences : [])
    .filter((s) => covers(s, target, now))
    .sort((a, b) => b.endsAt - a.endsAt);
}

/**
 * How far a silence reaches beyond `target`: '' when it is that alert's own, 'whole dashboard'
 * (no rule named), 'every value' (the rule's, on a fan-out value).
 */
export function silenceScope(s, target) {
  if (s?.ruleId == null) return 'whole dashboard';
  if (s.key == null && target?.key != null) return 'every value';
  return '';
}

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DAY = 86_400_000;

/**
 * When a silence ends, in local time as a trading screen says it: "14:05" today, "Tue 14:05"
 * within the week ahead, "3 Mar 14:05" later (24-hour clock).
 */
export function untilText(ms, now = Date.now()) {
  if (!Number.isFinite(ms)) return '';
  const d = new Date(ms);
  const clock = `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
  const today = new Date(now);
  if (d.toDateString() === today.toDateString()) return clock;
  const midnight = new Date(today.getFullYear(), today.getMonth(), today.getDate()).getTime();
  if (ms > now && ms < midnight + 7 * DAY) return `${WEEKDAYS[d.getDay()]} ${clock}`;
  return `${d.getDate()} ${MONTHS[d.getMonth()]} ${clock}`;
}

/** "Silenced until 14:05" (and how far it reaches when beyond the alert: "(whole dashboard)"). */
export function silencedText(s, target, now = Date.now()) {
  const scope = silenceScope(s, target);
  return `Silenced until ${untilText(s.endsAt, now)}${scope ? ` (${scope})` : ''}`;
}

/** Who made a silence, in a word: the person's name, "an API key", "the server token". */
export function silenceAuthor(s) {
  const by = s?.createdBy ?? {};
  if (by.username) return by.username;
  if (by.keyId) return 'an API key';
  if (by.token) return 'the server token';
  return 'someone';
}

/** The silence's tooltip: what it does, who made it, why. */
export function silenceTitle(s, target) {
  const scope = silenceScope(s, target);
  const what = scope === 'whole dashboard'
    ? 'Every alert of this dashboard is recorded but not sent'
    : scope === 'every value'
      ? 'This rule is recorded but not sent, for every value'
      : 'Recorded but not sent';
  const until = Number.isFinite(s?.endsAt) ? new Date(s.endsAt).toLocaleString() : '?';
  const why = typeof s?.comment === 'string' && s.comment.trim() ? ` — “${s.comment.trim()}”` : '';
  return `${what} until ${until}; silenced by ${silenceAuthor(s)}${why}`;
}

/** The `POST /api/silences` body: the alert (a key only for a fan-out value), the duration, a comment when given. */
export function silenceBody(target, duration, comment = '') {
  const body = { dashboardId: target.dashboardId, ruleId: target.ruleId, duration };
  if (target.key != null && target.key !== '') body.key = target.key;
  const c = typeof comment === 'string' ? comment.trim() : '';
  if (c) body.comment = c;
  return body;
}

/** `list` with `s` in it (replacing the one with its id), newest first as the server lists them. */
export function mergeSilence(list, s) {
  const rest = (Array.isArray(list) ? list : []).filter((x) => x.id !== s.id);
  return [s, ...rest].sort((a, b) => b.startsAt - a.startsAt);
}

/**
 * Whether the signed-in person may silence and unsilence (the server wants the Write scope:
 * editors and admins, never viewers). No session answer: true, the server has the last word.
 */
export function maySilence(session) {
  const role = session?.user?.role;
  return role !== 'viewer';
}
