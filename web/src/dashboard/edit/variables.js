// The variables form: a dialog listing the dashboard's variables as rows (name, label, type,
// options, default), with Add and Remove; vars.js turns the rows into `variables` and checks
// them the way the server will, each problem shown at its field. Save hands the variables to
// the parent (index.js), which saves the dashboard with them as one version.
//
// Test hooks: dialog.vars-editor > .var-row[data-index] with input[name=name|label|options|
// default], select[name=type], select[name=default] (a select variable's default),
// .var-remove, .var-field-error[data-field]; .vars-add, .vars-save, .vars-cancel, .vars-message.
import { html, useState, Dialog } from './ui.js';
import { toRows, fromRows, newRow, VAR_TYPES } from './vars.js';

const OPTIONS_HINT = {
  select: 'Choices, separated by commas',
  range: 'min, max, step',
  text: '',
};

export function VariablesForm({ variables, onSave, onClose }) {
  const [rows, setRows] = useState(() => toRows(variables));
  const [tried, setTried] = useState(false);
  const [saving, setSaving] = useState(false);
  const [message, setMessage] = useState('');
  const { variables: next, errors } = fromRows(rows);

  const change = (i, field) => (e) => {
    const value = e.currentTarget.value;
    setRows(rows.map((r, j) => (j === i ? { ...r, [field]: value } : r)));
  };
  const errorOf = (i, field) => (tried ? errors.find((x) => x.index === i && x.field === field)?.message : null);

  async function save(e) {
    e.preventDefault();
    setTried(true);
    setMessage('');
    if (errors.length) {
      setMessage('Not saved: fix the marked fields.');
      return;
    }
    setSaving(true);
    const out = await onSave(next);
    setSaving(false);
    if (out && out.kind !== 'saved' && out.kind !== 'conflict') {
      setMessage(out.kind === 'invalid' ? out.issues.map((x) => `${x.path}: ${x.message}`).join('; ') : out.message);
    }
  }

  const field = (i, name, label, input) => {
    const err = errorOf(i, name);
    return html`<label class=${`var-field var-field-${name}`}>
      <span>${label}</span>
      ${input}
      ${err ? html`<small class="var-field-error" data-field=${name} role="alert">${err}</small>` : null}
    </label>`;
  };

  return html`<${Dialog} class="vars-editor" label="Dashboard variables" onClose=${onClose}>
    <form class="vars-form" onSubmit=${save}>
      <header class="editor-head">
        <h2 class="editor-heading">Variables</h2>
        <span class="muted">Panel code reads them as <code>vars.name</code>; viewers pick their values above the panels.</span>
      </header>
      ${rows.length ? null : html`<p class="muted vars-empty">No variables yet.</p>`}
      <ol class="var-rows">
        ${rows.map((r, i) => {
          const choices = r.options.split(',').map((s) => s.trim()).filter(Boolean);
          return html`<li class="var-row" data-index=${i} key=${i}>
            ${field(i, 'name', 'Name', html`<input name="name" value=${r.name} spellcheck="false" autocomplete="off" onInput=${change(i, 'name')} />`)}
            ${field(i, 'label', 'Label', html`<input name="label" value=${r.label} autocomplete="off" onInput=${change(i, 'label')} />`)}
            ${field(i, 'type', 'Type', html`<select name="type" value=${r.type} onChange=${change(i, 'type')}>
              ${VAR_TYPES.map((t) => html`<option value=${t} selected=${t === r.type}>${t}</option>`)}
            </select>`)}
            ${field(i, 'options', 'Options', html`<input name="options" value=${r.options} disabled=${r.type === 'text'}
              placeholder=${OPTIONS_HINT[r.type]} spellcheck="false" autocomplete="off" onInput=${change(i, 'options')} />`)}
            ${field(i, 'default', 'Default', r.type === 'select' && choices.length
              ? html`<select name="default" value=${r.default} onChange=${change(i, 'default')}>
                  ${choices.includes(r.default) ? null : html`<option value=${r.default} selected>${r.default || '—'}</option>`}
                  ${choices.map((c) => html`<option value=${c} selected=${c === r.default}>${c}</option>`)}
                </select>`
              : html`<input name="default" value=${r.default} inputmode=${r.type === 'range' ? 'decimal' : null} spellcheck="false" autocomplete="off" onInput=${change(i, 'default')} />`)}
            <button type="button" class="var-remove" aria-label=${`Remove variable ${r.name}`} title="Remove" onClick=${() => setRows(rows.filter((_, j) => j !== i))}>✕</button>
          </li>`;
        })}
      </ol>
      <div class="vars-foot">
        <button type="button" class="vars-add" onClick=${() => setRows([...rows, newRow(rows)])}>Add variable</button>
        <span class="dash-spacer"></span>
        ${message ? html`<span class="vars-message" role="alert">${message}</span>` : null}
        <button type="button" class="vars-cancel" onClick=${onClose}>Cancel</button>
        <button type="submit" class="primary vars-save" disabled=${saving}>${saving ? 'Saving…' : 'Save'}</button>
      </div>
    </form>
  <//>`;
}
