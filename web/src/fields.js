// Form pieces for the Preact screens (Settings → Alerts & reports, the Reports page), in the look
// of settings/form.js (settings.css): a labelled field with its own error slot, a form-level
// error, a Copy button; and which request field a refusal names, so its sentence lands next to
// that field. `fieldOf` is pure and unit-tested in node.
//
// Test hooks: `.settings-field[data-param]` around each input with its `.field-error` (only
// while the server named that field), `.form-error` for the rest.
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';

/**
 * The request field a refusal names: `data.param` (`mail.host` → `host`), else the `field:` its
 * message begins with (`cron: …`, `notify[0]: …`, `url: …` → `cron`, `notify`, `url`); null
 * when it names none.
 */
export function fieldOf(err) {
  let p = err?.data?.param;
  if (typeof p !== 'string' || !p) {
    const m = /^\s*([A-Za-z_][\w.]*(?:\[\d+\])?)\s*:\s/.exec(err?.message ?? '');
    p = m ? m[1] : null;
  }
  if (!p) return null;
  const last = p.split('.').filter(Boolean).pop() ?? p;
  return last.replace(/\[\d+\]$/, '');
}

/**
 * Where an error goes: `{param, message}` with `param` one of `fields` (the form's own), else
 * `{param: null, message}` for the form-level slot.
 */
export function placeError(err, fields) {
  const param = fieldOf(err);
  const message = err?.message || String(err);
  return { param: param && fields.includes(param) ? param : null, message };
}

/**
 * A labelled field: `param` is the request field it sends, `error` the error shown (`{param,
 * message}`: shown here when it names this field). `group`: a `div`, for a group of inputs (a
 * label would toggle its first one).
 */
export function Field({ label, param, hint, error, group = false, children }) {
  const mine = error && error.param === param ? error.message : '';
  const inner = html`
    <span class="field-label">${label}</span>
    ${children}
    ${hint ? html`<span class="field-hint">${hint}</span>` : null}
    ${mine ? html`<span class="field-error" role="alert">${mine}</span>` : null}`;
  return group
    ? html`<div class="settings-field${mine ? ' invalid' : ''}" data-param=${param}>${inner}</div>`
    : html`<label class="settings-field${mine ? ' invalid' : ''}" data-param=${param}>${inner}</label>`;
}

/** The form-level error slot: an error that names none of the form's fields. */
export function FormError({ error }) {
  return error && !error.param ? html`<div class="form-error" role="alert">${error.message}</div>` : null;
}

/** A Copy button for `text`; where the clipboard is refused, it says to select and copy. */
export function CopyButton({ text, class: cls = '' }) {
  const [said, setSaid] = useState('Copy');
  const copy = async (e) => {
    const button = e.currentTarget;
    try {
      await navigator.clipboard.writeText(text);
      setSaid('Copied');
    } catch {
      // Plain http on another host: select the shown text (the box just before) for Ctrl+C.
      const shown = button.previousElementSibling;
      if (shown) getSelection().selectAllChildren(shown);
      setSaid('Selected: press Ctrl+C');
    }
  };
  return html`<button type="button" class=${cls} onClick=${copy}>${said}</button>`;
}
