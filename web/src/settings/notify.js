// Pure rules of Settings → Alerts & reports (mail.js, channels.js, alerting.js): the mail relay
// form read from and written to `PUT /api/admin/settings {mail}` (the password write-only: left
// blank it is not sent, so the stored one stays; "remove" sends ""), the relay in force and the
// renderer in words, and a new channel's body (recipients one per line or comma-separated).
// No DOM; unit-tested in node.

/** The connection kinds a relay takes, with words for the picker. */
export const SECURITY = [
  ['starttls', 'STARTTLS (port 587)'],
  ['tls', 'TLS from the first byte (port 465)'],
  ['none', 'None: plain text (port 25)'],
];

/** The webhook presets: the body a channel posts. */
export const PRESETS = [
  ['json', 'JSON (signed)'],
  ['slack', 'Slack'],
  ['discord', 'Discord'],
];

/**
 * The relay form's values from `GET /api/admin/settings`' answer: the stored relay's fields
 * (blank where unset), never a password (the answer has none: `mailPasswordSet` says whether
 * one is stored).
 */
export function relayForm(view) {
  const m = view?.settings?.mail ?? null;
  return {
    host: m?.host ?? '',
    port: Number.isInteger(m?.port) ? String(m.port) : '',
    security: m?.security ?? 'starttls',
    username: m?.username ?? '',
    password: '',
    removePassword: false,
    from: m?.from ?? '',
    caFile: m?.caFile ?? '',
  };
}

/**
 * The `mail` object to save from the form's values, or `{error: {param, message}}` for what is
 * checked here (the port's shape; the rest is the server's to judge, in its words). A blank
 * password is left out (the stored one stays while the host is the same); `removePassword`
 * sends "" (none).
 */
export function relayBody(form) {
  const mail = { host: form.host.trim(), security: form.security || 'starttls', from: form.from.trim() };
  const port = form.port.trim();
  if (port) {
    if (!/^\d+$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
      return { error: { param: 'port', message: 'The port is a number from 1 to 65535, or blank for the usual one.' } };
    }
    mail.port = Number(port);
  }
  if (form.username.trim()) mail.username = form.username.trim();
  if (form.removePassword) mail.password = '';
  else if (form.password) mail.password = form.password;
  if (form.caFile.trim()) mail.caFile = form.caFile.trim();
  return { mail };
}

/** The password field's placeholder: whether one is stored. */
export function passwordPlaceholder(passwordSet) {
  return passwordSet ? '•••• stored' : 'none';
}

/** The relay in force (`GET /api/admin/mail`) in words; null: none. */
export function relayWords(relay) {
  if (!relay) return 'No mail relay: e-mail channels cannot send.';
  const where = relay.source === 'file' ? 'boardsmith.toml ([smtp])' : 'these settings';
  const security = { starttls: 'STARTTLS', tls: 'TLS', none: 'no encryption' }[relay.security] ?? relay.security;
  return `Mail goes through ${relay.server} (${security}${relay.signsIn ? ', signed in' : ''}) from ${relay.from}, as set in ${where}.`;
}

/** `GET /api/renderer`'s answer in words. */
export function rendererWords(renderer) {
  if (!renderer) return 'PDF and PNG: unknown (the server did not say).';
  return renderer.available ? 'PDF and PNG: available' : `PDF and PNG: not available. ${renderer.reason ?? ''}`.trim();
}

/**
 * Recipients typed one per line or separated by commas, each kept whole (`Ana <ana@x.org>`,
 * `"Doe, Jo" <jo@x.org>`: a comma inside quotes or angle brackets does not split).
 */
export function parseRecipients(text) {
  const out = [];
  let cur = '';
  let quoted = false;
  let angled = false;
  for (const ch of String(text ?? '')) {
    if (ch === '"' && !angled) quoted = !quoted;
    else if (ch === '<' && !quoted) angled = true;
    else if (ch === '>' && !quoted) angled = false;
    if ((ch === '\n' || ch === '\r' || ch === ',' || ch === ';') && !quoted && !angled) {
      out.push(cur);
      cur = '';
    } else {
      cur += ch;
    }
  }
  out.push(cur);
  return out.map((s) => s.trim()).filter(Boolean);
}

/** The body of `POST /api/channels` for the new-channel form's values. */
export function channelBody(form) {
  const name = form.name.trim();
  if (form.type === 'email') return { name, type: 'email', to: parseRecipients(form.to) };
  return { name, type: 'webhook', url: form.url.trim(), preset: form.preset || 'json' };
}

/** A channel's type in words (`Webhook (Slack)`, `E-mail`). */
export function channelKind(c) {
  if (c.type === 'email') return 'E-mail';
  const preset = PRESETS.find(([p]) => p === c.preset)?.[1];
  return c.preset && c.preset !== 'json' ? `Webhook (${preset ?? c.preset})` : 'Webhook';
}
