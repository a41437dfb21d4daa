// The Silence / Unsilence control of one alert (a rule, or one fan-out value of it), shared by
// the header's bell (bell.js) and the panels' rule lists (indicator.js). Owns only the control:
// its little form (1h / 4h / 24h, an optional comment), the request it makes and the error it
// shows; the list of silences belongs to whoever mounts it and is handed in.
//
// - An alert a silence covers says "Silenced until 14:05" (its tooltip: until when exactly, by
//   whom, why) and, for who may silence, offers Unsilence: `DELETE /api/silences/{id}` for every
//   silence covering it (else it would stay silenced).
// - A firing or pending alert no silence covers offers Silence (to who may silence: editors and
//   admins, silences.js's maySilence): a duration posts `POST /api/silences {dashboardId, ruleId,
//   key?, duration, comment?}`.
// - The silences are not known yet (null): nothing is shown.
// `onChanged(silence)` gets each silence the server answered (made or ended), so the owner can
// put it in its list and tell the other parts (bus 'silences:changed'). A refusal shows the
// server's message (the envelope's `msg`) under the control.
//
// Test hooks: .silence[data-silenced=true|false] > .silence-until (title: the details),
// button.silence-end, button.silence-open[aria-expanded], .silence-form > button
// .silence-duration[data-duration], input.silence-comment, button.silence-cancel;
// .silence-error; .silence[data-busy] while a request runs.
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { DURATIONS, coveringSilences, silenceBody, silencedText, silenceTitle } from './silences.js';

const enc = encodeURIComponent;

/**
 * `target` {dashboardId, ruleId, key?}; `silences` the list (null: unknown); `active` whether
 * the alert is firing or pending (Silence is offered only then); `canSilence` from the session;
 * `api` with post and del.
 */
export function SilenceControl({ target, silences, active, canSilence, api, onChanged, label = '' }) {
  const [form, setForm] = useState(false);
  const [comment, setComment] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  if (!Array.isArray(silences)) return null;
  const now = Date.now();
  const covering = coveringSilences(silences, target, now);
  const silenced = covering.length > 0;
  if (!silenced && !(active && canSilence) && !error) return null;
  const what = label ? ` ${label}` : '';

  async function run(fn) {
    setBusy(true);
    setError('');
    try {
      await fn();
      return true;
    } catch (e) {
      setError(e?.message || 'The server refused');
      return false;
    } finally {
      setBusy(false);
    }
  }

  const silence = (duration) => run(async () => {
    const made = await api.post('/api/silences', silenceBody(target, duration, comment));
    setForm(false);
    setComment('');
    onChanged?.(made);
  });

  const unsilence = () => run(async () => {
    // One at a time: each answer is the ended silence, which the owner's list takes in. It
    // ended at the server's now, which this browser's clock may not have reached yet: ended is
    // ended here too.
    for (const s of covering) {
      const ended = await api.del(`/api/silences/${enc(s.id)}`);
      onChanged?.(ended?.id ? { ...ended, endsAt: Math.min(ended.endsAt, Date.now()) } : ended);
    }
  });

  const onKey = (e) => {
    if (e.key !== 'Escape' || !form) return;
    // The form closes; the popover around it stays.
    e.preventDefault();
    e.stopPropagation();
    setForm(false);
  };

  let body;
  if (silenced) {
    const first = covering[0];
    body = html`<span class="silence-until" title=${silenceTitle(first, target)}>${silencedText(first, target, now)}</span>
      ${canSilence ? html`<button type="button" class="silence-end" disabled=${busy} onClick=${unsilence}
        title=${covering.length > 1 ? `End the ${covering.length} silences holding this alert back` : 'End this silence now'}
        aria-label=${`Unsilence${what}`}>Unsilence</button>` : null}`;
  } else if (active && canSilence && !form) {
    body = html`<button type="button" class="silence-open" aria-expanded="false" disabled=${busy}
      title="Record this alert’s notifications without sending them, for a while" aria-label=${`Silence${what}`}
      onClick=${() => { setForm(true); setError(''); }}>Silence</button>`;
  } else if (active && canSilence) {
    body = html`<div class="silence-form" role="group" aria-label=${`Silence${what} for`} onKeyDown=${onKey}>
      <span class="silence-for">Silence for</span>
      ${DURATIONS.map((d) => html`<button type="button" class="silence-duration" data-duration=${d} disabled=${busy}
        onClick=${() => silence(d)}>${d}</button>`)}
      <input class="silence-comment" type="text" maxlength="500" placeholder="Why (optional)" aria-label="Comment (optional)"
        value=${comment} disabled=${busy} onInput=${(e) => setComment(e.currentTarget.value)} />
      <button type="button" class="silence-cancel" disabled=${busy} onClick=${() => { setForm(false); setError(''); }}>Cancel</button>
    </div>`;
  } else {
    body = null;
  }
  return html`<div class="silence" data-silenced=${String(silenced)} data-busy=${busy ? 'true' : undefined}>
    ${body}
    ${error ? html`<p class="silence-error" role="alert">${error}</p>` : null}
  </div>`;
}
