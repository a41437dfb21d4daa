// The dashboard side's one toast: a short line at the bottom of the page (what an action did, or
// why it failed), with an optional action button (Undo). A new toast replaces the one shown.
//
// Test hooks: .toast.dash-toast[data-kind=info|error] with .toast-action.
import { h } from './dom.js';

let toastEl = null;
let toastTimer = null;

/** Shows `text` for 3 s (8 s with an action: `actionLabel` runs `action`). */
export function toast(text, actionLabel = null, action = null, kind = 'info') {
  toastEl?.remove();
  clearTimeout(toastTimer);
  toastEl = h('div.toast.dash-toast', { role: kind === 'error' ? 'alert' : 'status', dataset: { kind } }, h('span', { text }),
    actionLabel ? h('button.toast-action', {
      type: 'button', text: actionLabel,
      onclick: () => { toastEl?.remove(); toastEl = null; action?.(); },
    }) : null);
  document.body.append(toastEl);
  const mine = toastEl;
  toastTimer = setTimeout(() => { mine.remove(); if (toastEl === mine) toastEl = null; }, actionLabel ? 8000 : kind === 'error' ? 6000 : 3000);
}

/** A failure's toast. */
export function toastError(text) {
  toast(text, null, null, 'error');
}
