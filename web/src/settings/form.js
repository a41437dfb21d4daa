// Form pieces shared by the settings sections: a labelled field with its own error slot, and
// the server's errors put next to the field they name.
//
// Test hooks: `.settings-field[data-param]` around each input, its `.field-error` (filled and
// not hidden when the server named that field), and the form's `.form-error` for the rest.
import { h } from '../dom.js';
import { errorParam } from './report.js';

/**
 * A labelled field: `param` is the request field it sends (and the name errors use). A group of
 * inputs (checkboxes) goes in a `div` (`group`), since a label would toggle its first input.
 */
export function field(label, param, input, hint, group = false) {
  return h(`${group ? 'div' : 'label'}.settings-field`, { dataset: { param } },
    h('span.field-label', { text: label }),
    input,
    hint ? h('span.field-hint', { text: hint }) : null,
    h('span.field-error', { role: 'alert', hidden: true }));
}

/** A form-level error slot (errors that name no field of the form). */
export function formError() {
  return h('div.form-error', { role: 'alert', hidden: true });
}

/** Clears every error shown in `scope`. */
export function clearErrors(scope) {
  for (const el of scope.querySelectorAll('.field-error, .form-error')) {
    el.textContent = '';
    el.hidden = true;
  }
  for (const el of scope.querySelectorAll('.settings-field.invalid')) el.classList.remove('invalid');
  for (const el of scope.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
}

/**
 * Shows `err` (an ApiError) in `scope`: the server's message next to the field it names (by
 * `data.param`), else in the scope's `.form-error`. Returns the element that shows it.
 */
export function showError(scope, err) {
  clearErrors(scope);
  const param = errorParam(err);
  const fieldEl = param ? scope.querySelector(`.settings-field[data-param="${CSS.escape(param)}"]`) : null;
  const slot = fieldEl?.querySelector('.field-error') ?? scope.querySelector('.form-error');
  if (!slot) return null;
  slot.textContent = err?.message || String(err);
  slot.hidden = false;
  if (fieldEl) {
    fieldEl.classList.add('invalid');
    fieldEl.querySelector('input, select, textarea')?.setAttribute('aria-invalid', 'true');
  }
  return slot;
}

/** Runs `fn` with `button` disabled (no double submits); errors go through `onError`. */
export async function busy(button, fn, onError) {
  if (button) button.disabled = true;
  try {
    return await fn();
  } catch (e) {
    onError(e);
    return undefined;
  } finally {
    if (button) button.disabled = false;
  }
}

/** "3 min ago"-free absolute time for tables: `2026-11-27 14:05` in local time, or ''. */
export function when(ms) {
  if (typeof ms !== 'number') return '';
  const d = new Date(ms);
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}

/**
 * A Copy button for `text`; where the clipboard is refused (plain http on another host), it
 * selects `shown` (the element that displays the text) for Ctrl+C instead.
 */
export function copyButton(cls, text, shown) {
  const button = h(`button.${cls}`, {
    type: 'button', text: 'Copy',
    onclick: async () => {
      try {
        await navigator.clipboard.writeText(text);
        button.textContent = 'Copied';
      } catch {
        getSelection().selectAllChildren(shown);
        button.textContent = 'Selected: press Ctrl+C';
      }
    },
  });
  return button;
}
