// The sheet that takes the dashboard pane's place while an old version, a comparison or the
// agent's draft is shown (the live view stays underneath, hidden, still subscribed). One sheet at
// a time; Escape or its Close button closes it. `container` is the pane (`.app-dashboard`); it
// carries `.sheet-open` while a sheet is shown.
//
// Test hooks: .history-sheet[data-kind=version|compare|review] (absent when closed).
import { html } from 'htm/preact';
import { render } from 'preact';

export function createSheet(container) {
  const host = document.createElement('div');
  host.className = 'history-sheet-host';
  container.append(host);
  let kind = null;
  let onClose = null;

  function open(k, vnode, closing = null) {
    kind = k;
    onClose = closing;
    container.classList.add('sheet-open');
    render(html`<div class="history-sheet" data-kind=${k} role="region" aria-label=${k === 'review' ? 'The agent’s draft' : 'Version history'}>${vnode}</div>`, host);
    container.scrollTop = 0;
  }

  function close() {
    if (!kind) return;
    kind = null;
    render(null, host);
    container.classList.remove('sheet-open');
    const f = onClose;
    onClose = null;
    f?.();
  }

  document.addEventListener('keydown', (e) => {
    if (e.key !== 'Escape' || !kind || e.defaultPrevented || document.querySelector('dialog[open]')) return;
    // Escape in a field elsewhere (the chat's composer) is that field's.
    const field = document.activeElement?.closest?.('input, textarea, select, [contenteditable]');
    if (field && !host.contains(field)) return;
    close();
  });

  return { open, close, kind: () => kind };
}
