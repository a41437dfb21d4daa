// The component library of the editing screens: Preact with htm's tagged templates (no build
// step for JSX), re-exported here so every screen imports one module. Plus Dialog, the shell of
// every editing dialog: a native <dialog> opened modal (focus trapped, Esc cancels, the rest of
// the page inert), closed through `onClose`.
import { html, render } from 'htm/preact';
import { useEffect, useRef } from 'preact/hooks';

export { html, render };
export { useState, useEffect, useRef, useMemo, useCallback } from 'preact/hooks';

/**
 * A modal dialog: `class` names it for tests and styles, `label` is its accessible name,
 * `onClose` runs on Esc (the native cancel) and must unmount it.
 */
export function Dialog({ class: cls = '', label, onClose, children, ...rest }) {
  const ref = useRef(null);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    return () => { if (d?.open) d.close(); };
  }, []);
  const cancel = (e) => {
    e.preventDefault();
    onClose?.();
  };
  return html`<dialog ref=${ref} class=${`edit-dialog ${cls}`} aria-label=${label} oncancel=${cancel} ...${rest}>${children}</dialog>`;
}
