// The editing toolbar under the dashboard's title row (only for people who may change it):
// Arrange (a toggle), Variables, Undo and Redo, and the status line that says what the last
// edit did ("Saved as v7", "Not undone: …"), an aria-live region so screen readers hear it —
// also the Arrange mode's keyboard moves.
//
// Test hooks: .dash-edit-toolbar > .edit-arrange[aria-pressed], .edit-vars, .edit-undo,
// .edit-redo (disabled when there is nothing to undo/redo), .edit-status[data-kind=info|ok|
// warn|error] (aria-live).
import { html } from './ui.js';
import { icon } from '../../dom.js';

const ICONS = {
  arrange: 'M2.5 2.5h4.5v4.5h-4.5zM9 2.5h4.5v4.5h-4.5zM2.5 9h4.5v4.5h-4.5zM9 9h4.5v4.5h-4.5z',
  vars: 'M3 4.5h10M3 8h10M3 11.5h10M6 3v3M10 6.5v3M5 10v3',
  undo: 'M5.5 4L2.5 7l3 3M2.5 7h7a4 4 0 0 1 0 8h-2',
  redo: 'M10.5 4l3 3-3 3M13.5 7h-7a4 4 0 0 0 0 8h2',
};

/** An icon from dom.js as a Preact child (the SVG node itself). */
function Icon({ d }) {
  return html`<span class="edit-icon" aria-hidden="true" ref=${(el) => { if (el && !el.firstChild) el.append(icon(d)); }}></span>`;
}

export function Toolbar({ arranging, canUndo, canRedo, undoLabel, redoLabel, status, onArrange, onVars, onUndo, onRedo }) {
  const mod = /Mac|iPhone|iPad/.test(navigator.platform) ? '⌘' : 'Ctrl+';
  return html`
    <button type="button" class=${`edit-arrange${arranging ? ' primary' : ''}`} aria-pressed=${String(arranging)} aria-label="Arrange panels"
      title=${arranging ? 'Done arranging' : 'Move and resize panels (drag, or arrow keys on a focused panel)'} onClick=${onArrange}>
      <${Icon} d=${ICONS.arrange} /><span class="label">${arranging ? 'Done' : 'Arrange'}</span>
    </button>
    <button type="button" class="edit-vars" aria-label="Variables" title="Edit the dashboard’s variables" onClick=${onVars}>
      <${Icon} d=${ICONS.vars} /><span class="label">Variables</span>
    </button>
    <button type="button" class="edit-undo" disabled=${!canUndo} aria-label="Undo"
      title=${canUndo ? `Undo ${undoLabel} (${mod}Z): saved as a new version` : 'Nothing of yours to undo'} onClick=${onUndo}>
      <${Icon} d=${ICONS.undo} />
    </button>
    <button type="button" class="edit-redo" disabled=${!canRedo} aria-label="Redo"
      title=${canRedo ? `Redo ${redoLabel} (${mod}Shift+Z)` : 'Nothing to redo'} onClick=${onRedo}>
      <${Icon} d=${ICONS.redo} />
    </button>
    <span class="edit-status" role="status" aria-live="polite" data-kind=${status.kind} title=${status.text}>${status.text}</span>`;
}
