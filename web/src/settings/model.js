// The default model: picked from what `GET /v1/models` says can be called now (grouped by
// provider), saved with `PUT /api/admin/settings`; shows the one in effect and the model
// `BOARDSMITH_MODEL` forces, if any.
//
// Test hooks: `.settings-model`, `form.default-model-form` with `select[name=defaultModel]`
// (options' values are `provider/model`), `.default-model-effective`, `.forced-model`.
import { h } from '../dom.js';
import { ApiError } from '../api.js';
import { field, formError, clearErrors, showError, busy } from './form.js';
import { updateSettings } from './admin-settings.js';

/** `GET /v1/models`: OpenAI's list format, not the envelope. */
async function listModels() {
  let res;
  try {
    res = await fetch('/v1/models');
  } catch (e) {
    throw new ApiError(0, `server unreachable: ${e.message}`);
  }
  let body = null;
  try {
    body = await res.json();
  } catch { /* not JSON: reported below */ }
  if (!res.ok || !Array.isArray(body?.data)) {
    throw new ApiError(res.status, body?.msg ?? body?.error?.message ?? `GET /v1/models: HTTP ${res.status}`, body?.data);
  }
  return body.data;
}

export function createDefaultModel({ api, toast }) {
  const select = h('select.default-model-select', { name: 'defaultModel' });
  const submit = h('button.primary.default-model-save', { type: 'submit', text: 'Save' });
  const effective = h('p.default-model-effective');
  const forced = h('p.forced-model', { hidden: true });
  const error = formError();
  const form = h('form.default-model-form.settings-form', null,
    h('div.form-row', null,
      field('Model', 'defaultModel', select, 'For agents and calls that name no model'),
      h('div.form-actions', null, submit)),
    error);
  form.addEventListener('submit', (e) => { e.preventDefault(); save(); });
  const el = h('section.settings-section.settings-model', { 'aria-labelledby': 'settings-model-title' },
    h('h2#settings-model-title', { text: 'Default model' }),
    forced, effective, form);

  async function load() {
    clearErrors(form);
    try {
      const [settings, models] = await Promise.all([api.get('/api/admin/settings'), listModels()]);
      render(settings, models);
    } catch (e) {
      showError(form, e);
    }
    el.dataset.loaded = '';
  }

  function render(settings, models) {
    const chosen = settings.settings?.defaultModel ?? '';
    const groups = new Map();
    for (const m of models) {
      if (!groups.has(m.owned_by)) groups.set(m.owned_by, []);
      groups.get(m.owned_by).push(m);
    }
    const options = [h('option', { value: '', text: 'None: the configuration’s default' })];
    if (chosen && !models.some((m) => m.id === chosen)) {
      options.push(h('option', { value: chosen, text: `${chosen} (not served now)` }));
    }
    for (const [provider, ms] of groups) {
      options.push(h('optgroup', { label: provider }, ms.map((m) => h('option', {
        value: m.id, text: m.id,
        title: [m.context_window ? `${m.context_window.toLocaleString()} tokens of context` : null,
          m.pricing ? `$${m.pricing.input}/$${m.pricing.output} per million tokens in/out` : 'no prices known'].filter(Boolean).join(' · '),
      }))));
    }
    select.replaceChildren(...options);
    select.value = chosen;
    select.dataset.count = String(models.length);
    effective.replaceChildren(settings.effectiveDefaultModel
      ? h('span', null, 'In effect: ', h('code', { text: settings.effectiveDefaultModel }))
      : h('span.muted', { text: models.length ? 'No default model is in effect.' : 'No model can be called yet: add a provider with its key above.' }));
    forced.hidden = !settings.forcedModel;
    forced.replaceChildren(...(settings.forcedModel
      ? ['BOARDSMITH_MODEL forces every call to use ', h('code', { text: settings.forcedModel }), '.']
      : []));
  }

  async function save() {
    const value = select.value || null;
    await busy(submit, async () => {
      clearErrors(form);
      await updateSettings(api, { defaultModel: value });
      toast(value ? `Default model: ${value}` : 'Default model cleared');
      await load();
    }, (e) => showError(form, e));
  }

  return { el, load };
}
