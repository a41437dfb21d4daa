// How long chats are kept: "Delete chats untouched for N days" (`chatRetentionDays` of
// `PUT /api/admin/settings`, a whole number of days, 1 or more); empty keeps chats for good
// (null: unless MEMORY_CHAT_RETENTION_DAYS on the server sets a limit). The server's refusal
// (0 is a 400 naming the field) is shown next to the field.
//
// Test hooks: `.settings-retention[data-loaded]`, `form.retention-form` with
// `input[name=chatRetentionDays]`, `.retention-save`, `.retention-effect`, and the field's
// `.settings-field[data-param=chatRetentionDays] .field-error`.
import { h } from '../dom.js';
import { field, formError, clearErrors, showError, busy } from './form.js';
import { updateSettings } from './admin-settings.js';

/** The words for a retention: `days` (null: kept). */
export function retentionWords(days) {
  return Number.isInteger(days) && days > 0
    ? `Chats nobody has touched for ${days} day${days === 1 ? '' : 's'} are deleted, with their memory and the images only they used.`
    : 'Chats are kept for good (unless the server’s MEMORY_CHAT_RETENTION_DAYS sets a limit).';
}

/** The input's text as the request's value: {value: n|null} or {error} (a local check). */
export function parseRetention(text) {
  const t = String(text ?? '').trim();
  if (!t) return { value: null };
  if (!/^-?\d+$/.test(t)) return { error: 'A whole number of days, or empty to keep chats for good.' };
  // 0 and below go to the server, which says why (its message, next to the field).
  return { value: Number(t) };
}

export function createRetention({ api, toast }) {
  const input = h('input.retention-input', {
    name: 'chatRetentionDays', type: 'number', min: '1', step: '1', inputmode: 'numeric',
    placeholder: 'keep forever', 'aria-describedby': 'retention-effect',
  });
  const submit = h('button.primary.retention-save', { type: 'submit', text: 'Save' });
  const effect = h('p#retention-effect.retention-effect.muted');
  const error = formError();
  const form = h('form.retention-form.settings-form', { novalidate: true },
    h('div.form-row', null,
      field('Delete chats untouched for N days', 'chatRetentionDays', input, 'Empty: keep chats forever'),
      h('div.form-actions', null, submit)),
    error);
  form.noValidate = true; // the server's rules, in its words (a browser bubble would hide them)
  form.addEventListener('submit', (e) => { e.preventDefault(); save(); });
  const el = h('section.settings-section.settings-retention', { 'aria-labelledby': 'settings-retention-title' },
    h('h2#settings-retention-title', { text: 'Chat retention' }),
    form, effect);

  function show(settings) {
    const days = settings?.settings?.chatRetentionDays ?? null;
    input.value = Number.isInteger(days) ? String(days) : '';
    effect.textContent = retentionWords(days);
  }

  async function load() {
    clearErrors(form);
    try {
      show(await api.get('/api/admin/settings'));
    } catch (e) {
      showError(form, e);
    }
    el.dataset.loaded = '';
  }

  async function save() {
    clearErrors(form);
    const parsed = parseRetention(input.value);
    if (parsed.error) {
      showError(form, { message: parsed.error, data: { param: 'chatRetentionDays' } });
      return;
    }
    await busy(submit, async () => {
      const view = await updateSettings(api, { chatRetentionDays: parsed.value });
      show(view);
      toast(parsed.value ? `Chats untouched for ${parsed.value} days will be deleted` : 'Chats are kept for good');
    }, (e) => showError(form, e));
  }

  return { el, load };
}
