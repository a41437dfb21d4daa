// The channels of Settings → Alerts & reports (a Preact component alerting.js renders): where
// alert notifications and scheduled reports go. The list (`GET /api/channels`: name, type and
// preset, the webhook's host or the mail recipients), a form making one (`POST /api/channels`: a
// webhook with its URL and preset, or e-mail with recipients one per line or comma-separated),
// and per row "Send test" (`POST /api/channels/{name}/test`: "Delivered", or the 422's reason)
// and "Remove" (`DELETE /api/channels/{name}` after a confirm). A new webhook's signing secret
// comes in that one answer: it is shown once in a box with a Copy button, and forgotten when the
// box is dismissed or the settings page closes (`loadKey` changes). A refusal shows next to the
// field it names (`url: …` → URL).
//
// Test hooks: `.channels-list[data-count]` > `.channel-row[data-name][data-type]` with
// `.channel-kind`, `.channel-target`, `.channel-test`, `.channel-remove` and
// `.channel-result[data-status=sent|failed]`; `.channels-empty`; `form.channel-form` with
// `select[name=type]`, `input[name=name|url]`, `select[name=preset]`, `textarea[name=to]`,
// `.channel-create`; `.channel-secret` with `.channel-secret-value`, `.channel-copy`,
// `.channel-secret-done`.
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { CopyButton, Field, FormError, placeError } from '../fields.js';
import { PRESETS, channelBody, channelKind, parseRecipients } from './notify.js';

const enc = encodeURIComponent;
const FIELDS = ['type', 'name', 'url', 'preset', 'to'];
const EMPTY = { type: 'webhook', name: '', url: '', preset: 'json', to: '' };

function ChannelRow({ c, api, toast, onRemoved }) {
  const [result, setResult] = useState(null); // {status, text, title?}
  const [busy, setBusy] = useState(false);
  const test = async () => {
    setBusy(true);
    setResult(null);
    try {
      const d = await api.post(`/api/channels/${enc(c.name)}/test`);
      const how = [d?.httpStatus ? `HTTP ${d.httpStatus}` : null, d?.attempts > 1 ? `${d.attempts} attempts` : null].filter(Boolean).join(', ');
      setResult({ status: 'sent', text: 'Delivered', title: how ? `Delivered (${how})` : 'Delivered' });
    } catch (e) {
      setResult({ status: 'failed', text: e.message });
    } finally {
      setBusy(false);
    }
  };
  const remove = async () => {
    // eslint-disable-next-line no-alert
    if (!window.confirm(`Remove the channel “${c.name}”? Alert rules and reports that name it then record a failed delivery.`)) return;
    setBusy(true);
    try {
      await api.del(`/api/channels/${enc(c.name)}`);
      toast(`Removed the channel “${c.name}”`);
      onRemoved();
    } catch (e) {
      setResult({ status: 'failed', text: e.message });
      setBusy(false);
    }
  };
  return html`<tr class="channel-row" data-name=${c.name} data-type=${c.type}>
    <td class="channel-name"><strong>${c.name}</strong></td>
    <td class="channel-kind">${channelKind(c)}</td>
    <td class="channel-target">${c.target}</td>
    <td class="channel-actions">
      <button type="button" class="channel-test" disabled=${busy} onClick=${test}>Send test</button>
      <button type="button" class="channel-remove" disabled=${busy} onClick=${remove}>Remove</button>
      ${result ? html`<div class=${`channel-result ${result.status === 'sent' ? 'ok' : 'row-error'}`} data-status=${result.status}
        role=${result.status === 'sent' ? 'status' : 'alert'} title=${result.title ?? null}>${result.text}</div>` : null}
    </td>
  </tr>`;
}

function Secret({ made, onDone }) {
  return html`<div class="channel-secret key-secret" role="status">
    <div><strong>Webhook “${made.name}” created.</strong> Its signing secret is shown only now: copy it to check
      X-Boardsmith-Signature at the receiving end.</div>
    <div class="key-secret-line">
      <code class="channel-secret-value key-secret-value">${made.secret}</code>
      <${CopyButton} class="channel-copy" text=${made.secret} />
      <button type="button" class="channel-secret-done" onClick=${onDone}>Done</button>
    </div>
  </div>`;
}

/** Props: api, toast, loadKey (a new value reloads and forgets a shown secret), onLoaded(). */
export function Channels({ api, toast, loadKey, onLoaded }) {
  const [list, setList] = useState(null);
  const [listError, setListError] = useState('');
  const [form, setForm] = useState(EMPTY);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const [made, setMade] = useState(null);

  const load = async () => {
    try {
      setList(await api.get('/api/channels'));
      setListError('');
    } catch (e) {
      setListError(`Could not load the channels: ${e.message}`);
    }
  };
  useEffect(() => {
    setMade(null);
    load().then(() => onLoaded?.());
  }, [loadKey]);

  const set = (key) => (e) => {
    const v = e.currentTarget.value;
    setForm((f) => ({ ...f, [key]: v }));
  };

  const create = async (e) => {
    e.preventDefault();
    setError(null);
    const body = channelBody(form);
    if (body.type === 'email' && !body.to.length) {
      setError({ param: 'to', message: 'Give at least one recipient.' });
      return;
    }
    setBusy(true);
    try {
      const c = await api.post('/api/channels', body);
      setMade(c.secret ? { name: c.name, secret: c.secret } : null);
      if (!c.secret) toast(`Channel “${c.name}” created`);
      setForm({ ...EMPTY, type: form.type });
      await load();
    } catch (err) {
      setError(placeError(err, FIELDS));
    } finally {
      setBusy(false);
    }
  };

  const email = form.type === 'email';
  const recipients = email ? parseRecipients(form.to).length : 0;
  return html`
    <div class="channels-list settings-table-wrap" data-count=${list ? list.length : null}>
      ${listError ? html`<div class="form-error" role="alert">${listError}</div>` : null}
      ${list && !list.length ? html`<p class="channels-empty settings-empty">No channels yet: alert rules and reports have nowhere to go.</p>` : null}
      ${list?.length ? html`<table class="settings-table channels-table">
        <thead><tr><th>Name</th><th>Type</th><th>Goes to</th><th></th></tr></thead>
        <tbody>${list.map((c) => html`<${ChannelRow} key=${c.name} c=${c} api=${api} toast=${toast} onRemoved=${load} />`)}</tbody>
      </table>` : null}
    </div>
    ${made ? html`<${Secret} made=${made} onDone=${() => setMade(null)} />` : null}
    <form class="channel-form settings-form" autocomplete="off" novalidate onSubmit=${create}>
      <h3>New channel</h3>
      <div class="form-grid">
        <${Field} label="Type" param="type" error=${error}>
          <select name="type" value=${form.type} onChange=${set('type')}>
            <option value="webhook" selected=${!email}>Webhook</option>
            <option value="email" selected=${email}>E-mail</option>
          </select>
        <//>
        <${Field} label="Name" param="name" hint="As alert rules and reports name it" error=${error}>
          <input name="name" value=${form.name} onInput=${set('name')} maxlength="64" placeholder="desk" spellcheck="false" />
        <//>
        ${email ? null : html`<${Field} label="Preset" param="preset" hint="The body it posts" error=${error}>
          <select name="preset" value=${form.preset} onChange=${set('preset')}>
            ${PRESETS.map(([v, words]) => html`<option value=${v} selected=${form.preset === v}>${words}</option>`)}
          </select>
        <//>`}
      </div>
      ${email
        ? html`<${Field} label="Recipients" param="to" hint=${`One per line, or separated by commas (up to 20)${recipients ? `: ${recipients} given` : ''}`} error=${error}>
            <textarea name="to" rows="3" value=${form.to} onInput=${set('to')} placeholder=${'ana@example.com\nDesk <desk@example.com>'} spellcheck="false"></textarea>
          <//>`
        : html`<${Field} label="URL" param="url" hint="Its host must be allowed out (BOARDSMITH_OUTBOUND_ALLOW)" error=${error}>
            <input name="url" type="url" value=${form.url} onInput=${set('url')} placeholder="https://hooks.example.com/boardsmith" spellcheck="false" />
          <//>`}
      <${FormError} error=${error} />
      <div class="form-actions"><button type="submit" class="primary channel-create" disabled=${busy}>Create channel</button></div>
    </form>`;
}
