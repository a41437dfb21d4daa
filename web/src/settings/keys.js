// API keys: make one (name, scopes, optional expiry, budget and rate), see its secret once with
// a copy button, list them (prefix, scopes, last use, state), revoke one after a confirm. Each
// user has their own keys, and a key never does more than its maker: the scopes the signed-in
// role cannot grant (`grantableScopes`) are shown disabled (`setRole(role)`, from the session).
//
// Test hooks: `.settings-keys`, `form.key-form` (`input[name=name]`, `input[name=scopes]`
// checkboxes by value, `input[name=expiresAt|budgetUsd|rpm]`), `.key-secret` with
// `.key-secret-value`, `.key-copy` and `.key-secret-done`; `.key-row[data-key-id][data-state]`
// (`active`, `revoked`, `expired`) with `.key-revoke`.
import { h } from '../dom.js';
import { field, formError, clearErrors, showError, busy, when, copyButton } from './form.js';

const enc = encodeURIComponent;
const SCOPES = [
  ['read', 'Dashboards and their data'],
  ['write', 'Change dashboards'],
  ['agents', 'Run agents, read chats'],
  ['models', '/v1 models and completions'],
  ['metrics', '/metrics'],
  ['admin', 'Everything, keys and settings too'],
];
/** What a key is made with when the user picks nothing else: the first of these they may grant. */
const DEFAULT_SCOPES = ['models', 'read'];

/**
 * The scopes a user of `role` may give a key (a key does no more than its maker): a viewer only
 * reads; an editor also writes dashboards, runs agents and calls models; an admin, every scope.
 * An unknown role (no session to tell): every scope, and the server decides.
 */
export function grantableScopes(role) {
  const all = SCOPES.map(([s]) => s);
  if (role === 'viewer') return ['read'];
  if (role === 'editor') return ['read', 'write', 'agents', 'models'];
  return all;
}

export function createKeys({ api, toast }) {
  const name = h('input', { name: 'name', required: true, maxlength: '100', autocomplete: 'off', placeholder: 'e.g. LibreChat, Alice' });
  const scopes = h('div.scope-list', { role: 'group', 'aria-label': 'Scopes' }, SCOPES.map(([s, hint]) => h('label.scope', { title: hint },
    h('input', { type: 'checkbox', name: 'scopes', value: s, checked: s === DEFAULT_SCOPES[0] }),
    h('span', { text: s }))));
  const expiresAt = h('input', { name: 'expiresAt', type: 'date' });
  const budgetUsd = h('input', { name: 'budgetUsd', type: 'number', min: '0', step: 'any', inputmode: 'decimal', placeholder: 'none' });
  const rpm = h('input', { name: 'rpm', type: 'number', min: '1', step: '1', inputmode: 'numeric', placeholder: 'none' });
  const submit = h('button.primary.key-create', { type: 'submit', text: 'Create key' });
  const error = formError();
  const form = h('form.key-form.settings-form', { autocomplete: 'off' },
    h('div.form-grid', null,
      field('Name', 'name', name),
      field('Expires', 'expiresAt', expiresAt, 'Optional'),
      field('Budget (USD)', 'budgetUsd', budgetUsd, 'Optional'),
      field('Requests per minute', 'rpm', rpm, 'Optional')),
    field('Scopes', 'scopes', scopes, null, true),
    error,
    h('div.form-actions', null, submit));
  form.addEventListener('submit', (e) => { e.preventDefault(); create(); });

  const secret = h('div.key-secret-slot');
  const list = h('div.key-list.settings-table-wrap');
  const el = h('section.settings-section.settings-keys', { 'aria-labelledby': 'settings-keys-title' },
    h('h2#settings-keys-title', { text: 'API keys' }),
    h('p.section-note', { text: 'For other programs and colleagues: send as Authorization: Bearer bsk-… (OpenAI clients: their api_key). The server keeps only a digest.' }),
    form, secret, list);

  async function load() {
    try {
      render(await api.get('/api/keys'));
    } catch (e) {
      list.replaceChildren(h('div.form-error', { role: 'alert', text: `Could not load the keys: ${e.message}` }));
    }
    el.dataset.loaded = '';
  }

  function stateOf(k) {
    if (k.revokedAt) return 'revoked';
    if (k.expiresAt && k.expiresAt <= Date.now()) return 'expired';
    return 'active';
  }

  function render(keys) {
    if (!keys.length) {
      list.replaceChildren(h('p.settings-empty', { text: 'No API keys yet.' }));
      return;
    }
    list.replaceChildren(h('table.settings-table.key-table', null,
      h('thead', null, h('tr', null, ['Name', 'Key', 'Scopes', 'Created', 'Last used', 'Limits', 'State', ''].map((t) => h('th', { text: t })))),
      h('tbody', null, keys.map((k) => {
        const state = stateOf(k);
        const rowError = h('div.row-error', { role: 'alert', hidden: true });
        const limits = [k.expiresAt ? `until ${when(k.expiresAt)}` : null, k.budgetUsd != null ? `$${k.budgetUsd}` : null, k.rpm ? `${k.rpm}/min` : null].filter(Boolean).join(' · ');
        return h('tr.key-row', { dataset: { keyId: k.id, state } },
          h('td.key-name', { text: k.name }),
          h('td', null, h('code.key-prefix', { text: `${k.prefix}…` })),
          h('td.key-scopes', { text: k.scopes.join(', ') }),
          h('td.nowrap', { text: when(k.createdAt) }),
          h('td.nowrap', { text: k.lastUsedAt ? when(k.lastUsedAt) : '—' }),
          h('td', { text: limits || '—' }),
          h('td', null, h(`span.key-state.state-${state}`, { text: state === 'revoked' ? `revoked ${when(k.revokedAt)}` : state })),
          h('td', null,
            state === 'revoked' ? null : h('button.key-revoke', { type: 'button', text: 'Revoke', onclick: (e) => revoke(k, e.currentTarget, rowError) }),
            rowError));
      }))));
  }

  function showSecret(created) {
    const value = h('code.key-secret-value', { text: created.key });
    const copy = copyButton('key-copy', created.key, value);
    secret.replaceChildren(h('div.key-secret', { role: 'status' },
      h('div.key-secret-title', null, h('strong', { text: `Key “${created.name}” created.` }), ' Copy it now: it is not shown again.'),
      h('div.key-secret-line', null, value, copy,
        h('button.key-secret-done', { type: 'button', text: 'Done', onclick: () => secret.replaceChildren() }))));
  }

  async function create() {
    const body = {
      name: name.value.trim(),
      scopes: [...form.querySelectorAll('input[name=scopes]:checked')].map((c) => c.value),
    };
    if (expiresAt.value) body.expiresAt = Date.parse(`${expiresAt.value}T23:59:59`);
    if (budgetUsd.value !== '') body.budgetUsd = Number(budgetUsd.value);
    if (rpm.value !== '') body.rpm = Number(rpm.value);
    await busy(submit, async () => {
      clearErrors(form);
      const created = await api.post('/api/keys', body);
      showSecret(created);
      name.value = '';
      expiresAt.value = '';
      budgetUsd.value = '';
      rpm.value = '';
      await load();
    }, (e) => showError(form, e));
  }

  async function revoke(k, button, rowError) {
    // eslint-disable-next-line no-alert
    if (!window.confirm(`Revoke the key “${k.name}” (${k.prefix}…)? Programs using it stop working at once.`)) return;
    await busy(button, async () => {
      rowError.hidden = true;
      await api.del(`/api/keys/${enc(k.id)}`);
      toast(`Revoked “${k.name}”`);
      await load();
    }, (e) => {
      rowError.textContent = e.message;
      rowError.hidden = false;
    });
  }

  /**
   * Disables the scopes `role` cannot grant (unchecking them); if that leaves nothing checked,
   * checks the first default scope it may grant.
   */
  function setRole(role) {
    const allowed = grantableScopes(role);
    for (const box of scopes.querySelectorAll('input[name=scopes]')) {
      const may = allowed.includes(box.value);
      box.disabled = !may;
      if (!may) box.checked = false;
      const label = box.closest('label');
      label.classList.toggle('scope-disabled', !may);
      label.title = may ? SCOPES.find(([s]) => s === box.value)[1] : `A ${role} cannot give a key this scope`;
    }
    if (!scopes.querySelector('input[name=scopes]:checked')) {
      const first = DEFAULT_SCOPES.find((s) => allowed.includes(s));
      const box = first && scopes.querySelector(`input[name=scopes][value="${first}"]`);
      if (box) box.checked = true;
    }
  }

  /** Forgets a shown secret (the page is being left). */
  function hideSecret() {
    secret.replaceChildren();
  }

  return { el, load, setRole, hideSecret };
}
