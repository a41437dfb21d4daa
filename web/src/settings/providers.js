// Providers: every configured one with where it comes from (file, env, admin), a form to add or
// replace one (kind, key name, base URL, API key, default model) and Remove for the ones made
// here. The API key is write-only: a password field, cleared once sent, never shown again (the
// list shows the server's `keyHint` only).
//
// Test hooks: `.settings-providers`, `.provider-row[data-provider-key][data-origin]` with
// `.origin-badge`, `.provider-edit`, `.provider-remove` and `.row-error`; `form.provider-form`
// with fields named kind, key, baseUrl, apiKey, defaultModel.
import { h } from '../dom.js';
import { field, formError, clearErrors, showError, busy } from './form.js';

const enc = encodeURIComponent;
const KINDS = [['openai', 'OpenAI-compatible'], ['anthropic', 'Anthropic'], ['ollama', 'Ollama']];
const ORIGINS = {
  file: 'from boardsmith.toml',
  env: 'from an environment variable',
  admin: 'made here (stored by the server)',
};

export function createProviders({ api, bus, toast }) {
  const list = h('div.provider-list');
  const kind = h('select', { name: 'kind' }, KINDS.map(([v, label]) => h('option', { value: v, text: label })));
  const key = h('input', {
    name: 'key', required: true, autocomplete: 'off', spellcheck: 'false', placeholder: 'e.g. deepseek, local',
    pattern: '[A-Za-z0-9][A-Za-z0-9_\\-]*', title: 'Letters, digits, - and _',
  });
  const baseUrl = h('input', { name: 'baseUrl', type: 'url', autocomplete: 'off', spellcheck: 'false', placeholder: 'https://api.example.com/v1' });
  const apiKey = h('input', { name: 'apiKey', type: 'password', autocomplete: 'new-password', spellcheck: 'false' });
  const defaultModel = h('input', { name: 'defaultModel', autocomplete: 'off', spellcheck: 'false', placeholder: 'e.g. deepseek-chat' });
  const submit = h('button.primary.provider-save', { type: 'submit', text: 'Save provider' });
  const reset = h('button.provider-reset', { type: 'button', text: 'Clear', onclick: () => fill(null) });
  const error = formError();
  const form = h('form.provider-form.settings-form', { novalidate: false, autocomplete: 'off' },
    h('div.form-grid', null,
      field('Name', 'key', key, 'Models are called name/model'),
      field('Kind', 'kind', kind),
      field('Base URL', 'baseUrl', baseUrl, 'Optional for OpenAI, Anthropic, Ollama and the built-in names'),
      field('API key', 'apiKey', apiKey, 'Stored sealed; never shown again. Leave empty to keep the stored key.'),
      field('Default model', 'defaultModel', defaultModel, 'Used when only the provider is named')),
    error,
    h('div.form-actions', null, submit, reset));
  form.addEventListener('submit', (e) => { e.preventDefault(); save(); });

  const el = h('section.settings-section.settings-providers', { 'aria-labelledby': 'settings-providers-title' },
    h('h2#settings-providers-title', { text: 'Providers' }),
    h('p.section-note', { text: 'Where the models come from. A provider made here wins over the file’s or the environment’s of the same name; removing it brings theirs back.' }),
    list,
    h('h3', { text: 'Add or replace a provider' }),
    form);

  let providers = [];

  function fill(p) {
    clearErrors(form);
    kind.value = p?.kind ?? 'openai';
    key.value = p?.key ?? '';
    baseUrl.value = p?.baseUrl ?? '';
    apiKey.value = '';
    defaultModel.value = p?.defaultModel ?? '';
    apiKey.placeholder = p?.hasKey ? `stored key ${p.keyHint ?? ''} kept when left empty`.trim() : '';
    if (p) key.focus();
  }

  async function load() {
    try {
      providers = await api.get('/api/admin/providers');
      render();
    } catch (e) {
      list.replaceChildren(h('div.form-error', { role: 'alert', text: `Could not load the providers: ${e.message}` }));
    }
    el.dataset.loaded = '';
  }

  function render() {
    if (!providers.length) {
      list.replaceChildren(h('p.settings-empty', { text: 'No provider is configured yet: add one below to use a model.' }));
      return;
    }
    list.replaceChildren(...providers.map((p) => {
      const rowError = h('div.row-error', { role: 'alert', hidden: true });
      const keyText = p.hasKey
        ? (p.keyHint ? `key ${p.keyHint}` : `key from $${p.apiKeyEnv ?? 'env'}`)
        : 'no key';
      return h('div.provider-row', { dataset: { providerKey: p.key, origin: p.origin } },
        h('div.provider-main', null,
          h('div.provider-title', null,
            h('span.provider-key', { text: p.key }),
            h(`span.origin-badge.origin-${p.origin}`, { text: p.origin, title: ORIGINS[p.origin] ?? p.origin }),
            p.overrides ? h('span.origin-badge.origin-overrides', { text: 'overrides', title: 'Replaces the file’s or the environment’s definition of this name' }) : null),
          h('div.provider-meta', null,
            h('span', { text: p.kind }),
            h('span.provider-url', { text: p.baseUrl, title: p.baseUrl }),
            h(`span.provider-keyinfo${p.hasKey ? '' : '.missing'}`, { text: keyText }),
            p.defaultModel ? h('span', { text: `default ${p.defaultModel}` }) : null),
          rowError),
        h('div.provider-actions', null,
          h('button.provider-edit', { type: 'button', text: p.origin === 'admin' ? 'Edit' : 'Replace', title: 'Fill the form with this provider', onclick: () => fill(p) }),
          p.origin === 'admin'
            ? h('button.provider-remove', { type: 'button', text: 'Remove', onclick: (e) => remove(p, e.currentTarget, rowError) })
            : null));
    }));
  }

  async function save() {
    if (!form.reportValidity()) return;
    const name = key.value.trim();
    const body = { kind: kind.value };
    if (baseUrl.value.trim()) body.baseUrl = baseUrl.value.trim();
    if (apiKey.value) body.apiKey = apiKey.value;
    if (defaultModel.value.trim()) body.defaultModel = defaultModel.value.trim();
    await busy(submit, async () => {
      clearErrors(form);
      await api.put(`/api/admin/providers/${enc(name)}`, body);
      apiKey.value = '';
      fill(null);
      toast(`Saved provider “${name}”`);
      await load();
      bus.emit('settings:providers-changed', { key: name });
    }, (e) => showError(form, e));
  }

  async function remove(p, button, rowError) {
    // eslint-disable-next-line no-alert
    if (!window.confirm(`Remove the provider “${p.key}”?`)) return;
    await busy(button, async () => {
      rowError.hidden = true;
      await api.del(`/api/admin/providers/${enc(p.key)}`);
      toast(`Removed provider “${p.key}”`);
      await load();
      bus.emit('settings:providers-changed', { key: p.key });
    }, (e) => {
      rowError.textContent = e.message;
      rowError.hidden = false;
    });
  }

  return { el, load };
}
