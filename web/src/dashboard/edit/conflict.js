// The dialog for a save whose base version is no longer current (409): someone — another tab,
// a colleague, the agent — saved the dashboard meanwhile. Reload drops this edit and shows the
// dashboard as it is now; Overwrite saves this edit on the current version (their change is
// replaced, and stays in the history). Nothing happens until one is chosen; Esc is Reload's
// cautious twin: it only closes, saving nothing.
//
// Test hooks: dialog.edit-conflict[data-actual] with .conflict-reload, .conflict-overwrite,
// .conflict-message.
import { html, useState, Dialog } from './ui.js';

export function ConflictDialog({ what, actual, onReload, onOverwrite, onClose }) {
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState('');
  const overwrite = async () => {
    setBusy(true);
    setMessage('');
    const out = await onOverwrite();
    setBusy(false);
    if (out && out.kind !== 'saved') setMessage(out.kind === 'conflict' ? 'It changed again meanwhile; try once more.' : out.message ?? 'Not saved.');
  };
  return html`<${Dialog} class="edit-conflict" label="This dashboard changed meanwhile" data-actual=${actual ?? ''} onClose=${onClose} role="alertdialog">
    <h2 class="editor-heading">This dashboard changed meanwhile</h2>
    <p>Someone saved a newer version${Number.isFinite(actual) ? html` (<strong>v${actual}</strong>)` : ''} after you started ${what ? html`this ${what}` : 'this edit'}. Your edit is not saved yet.</p>
    <p class="muted"><strong>Reload</strong> shows the dashboard as it is now and drops your edit. <strong>Overwrite</strong> saves your edit on top; their version stays in the history.</p>
    ${message ? html`<p class="conflict-message" role="alert">${message}</p>` : null}
    <div class="vars-foot">
      <span class="dash-spacer"></span>
      <button type="button" class="conflict-reload" disabled=${busy} onClick=${onReload}>Reload</button>
      <button type="button" class="primary conflict-overwrite" disabled=${busy} onClick=${overwrite}>${busy ? 'Saving…' : 'Overwrite'}</button>
    </div>
  <//>`;
}
