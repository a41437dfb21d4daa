// Renaming in place: the title (the dashboard's or a panel's) becomes an input; Enter or
// leaving the field saves a changed, non-empty title, Esc cancels. The parent (index.js) puts
// it next to the hidden title element and saves.
//
// Test hooks: input.title-input[data-target=dashboard|panel].
import { html, useEffect, useRef } from './ui.js';

export function TitleInput({ value, target, label, onCommit, onCancel }) {
  const ref = useRef(null);
  const done = useRef(false);
  useEffect(() => {
    ref.current?.focus();
    ref.current?.select();
  }, []);
  const finish = (save) => {
    if (done.current) return;
    done.current = true;
    const text = ref.current?.value.trim() ?? '';
    if (save && text && text !== value) onCommit(text);
    else onCancel();
  };
  const key = (e) => {
    if (e.key === 'Enter') {
      e.preventDefault();
      finish(true);
    } else if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      finish(false);
    }
  };
  return html`<input class="title-input" data-target=${target} aria-label=${label} value=${value}
    maxlength="200" autocomplete="off" spellcheck="false" ref=${ref} onKeyDown=${key} onBlur=${() => finish(true)} />`;
}
