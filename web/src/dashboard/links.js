// Share links: read-only links to a dashboard for people without an account. The share dialog's
// "Links" section (`POST/GET /api/dashboards/{id}/share`, `DELETE …/share/{linkId}`) and the page
// a link opens (`/s/{token}`, shared.js). Pure: no requests, no DOM.
//
// A link (`ShareLink`): {id, dashboardId, label?, createdAt (ms), createdBy: {userId?, username?,
// keyId?, token?}, expiresAt: ms|null, vars, allowVars, uses, lastUsedAt: ms|null}.
import { relativeTime } from '../time.js';

const DAY = 86_400;

/** How long a new link lasts: the select's values are seconds ('' = never). */
export const EXPIRY_CHOICES = [
  { value: String(DAY), label: '1 day' },
  { value: String(7 * DAY), label: '7 days' },
  { value: String(30 * DAY), label: '30 days' },
  { value: '', label: 'Never' },
];
export const DEFAULT_EXPIRY = String(7 * DAY);

/** The sentences a visitor reads when the link no longer opens the dashboard. */
export const EXPIRED = 'This link has expired.';
export const REVOKED = 'This link was revoked or does not exist.';

/** The values of a dashboard's variables as they are shown: set ones, else each one's default. */
export function varValues(defs, vars = {}) {
  const out = {};
  for (const v of Array.isArray(defs) ? defs : []) {
    if (!v || typeof v.name !== 'string') continue;
    const value = Object.hasOwn(vars ?? {}, v.name) ? vars[v.name] : v.default;
    if (value !== undefined) out[v.name] = value;
  }
  return out;
}

/**
 * The `POST /api/dashboards/{id}/share` body: `expiry` is a choice's value (seconds, '' = never:
 * no `expiresIn`), `vars` the values the link shows, `allowVars` whether visitors may change
 * them, `label` left out when blank.
 */
export function linkBody({ expiry = DEFAULT_EXPIRY, vars = {}, allowVars = false, label = '' } = {}) {
  const body = { vars: { ...vars }, allowVars: allowVars === true };
  const seconds = Number(expiry);
  if (expiry !== '' && expiry != null && Number.isFinite(seconds) && seconds > 0) body.expiresIn = Math.round(seconds);
  const name = typeof label === 'string' ? label.trim() : '';
  if (name) body.label = name;
  return body;
}

/** Who made a link: "ann", "ann's API key key_1", "API key key_1", "the server token". */
export function madeBy(by) {
  if (!by || typeof by !== 'object') return 'someone';
  const key = by.keyId ? `API key ${by.keyId}` : '';
  if (by.username) return key ? `${by.username}'s ${key}` : by.username;
  if (key) return key;
  return by.token ? 'the server token' : 'someone';
}

/** A day as the list says it: "Mar 3, 2026". */
export const day = (ms) => new Date(ms).toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' });

/** Whether a link has expired at `now`. */
export const isExpired = (link, now = Date.now()) => Number.isFinite(link?.expiresAt) && link.expiresAt <= now;

/**
 * A link as one row of the list: `name` (its label, else the day it was made), `by`, `expires`,
 * `uses` (with when it was last used) and `expired`.
 */
export function linkRow(link, now = Date.now()) {
  const label = typeof link?.label === 'string' ? link.label.trim() : '';
  const made = Number.isFinite(link?.createdAt) ? day(link.createdAt) : '';
  const expired = isExpired(link, now);
  let expires = 'Never expires';
  if (expired) expires = 'Expired';
  else if (Number.isFinite(link?.expiresAt)) expires = `Expires ${relativeTime(link.expiresAt, now)}`;
  const n = Number.isFinite(link?.uses) ? link.uses : 0;
  let uses = n === 0 ? 'Not used yet' : `Used ${n === 1 ? 'once' : `${n} times`}`;
  if (n > 0 && Number.isFinite(link?.lastUsedAt)) uses += `, last ${relativeTime(link.lastUsedAt, now)}`;
  return {
    name: label || (made ? `Link made ${made}` : 'Link'),
    by: `by ${madeBy(link?.createdBy)}${label && made ? ` on ${made}` : ''}`,
    expires,
    uses,
    expired,
    vars: link?.allowVars ? 'Visitors can change variables' : '',
  };
}

/** The token of a share link's page (`/s/{token}`), or null for any other path. */
export function shareToken(pathname) {
  const m = /^\/s\/([^/]+)\/?$/.exec(pathname ?? '');
  if (!m) return null;
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return null;
  }
}

/** The path of a share link's API (`/api/shared/{token}`; `/ws` after it for the socket). */
export const sharedPath = (token) => `/api/shared/${encodeURIComponent(token)}`;

/**
 * The sentence for a link that no longer works, from the status of `GET /api/shared/{token}`
 * (410 expired, 404 revoked or unknown) or, failing that, the reason the socket closed with;
 * null when neither says the link is gone.
 */
export function goneSentence({ status, reason } = {}) {
  if (status === 410) return EXPIRED;
  if (status === 404) return REVOKED;
  if (typeof reason === 'string' && reason) return /expir/i.test(reason) ? EXPIRED : REVOKED;
  return null;
}
