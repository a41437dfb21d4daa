// The e-mail relay form of Settings → Alerts & reports (a Preact component alerting.js renders):
// host, port (blank: the usual one for the security), security, user name, password, sender and
// a CA file, saved into `PUT /api/admin/settings {mail}`. That endpoint replaces every setting,
// so the save sends the settings as the server has them now with `mail` replaced
// (admin-settings.js); "Remove relay" sends `mail: null`. The password is write-only: the field
// is always empty, its placeholder says "•••• stored" when `mailPasswordSet`, blank keeps the
// stored one and "Remove the stored password" sends "". Above the form, the relay in force from
// `GET /api/admin/mail` (Settings' or boardsmith.toml's; none: e-mail channels cannot send).
// A refusal shows next to the field it names (`mail.host` → host).
//
// Test hooks: `.mail-relay[data-source=settings|file|none]` (the relay in force, in words);
// `form.mail-form` with `input[name=host|port|username|password|from|caFile]`,
// `select[name=security]`, `input[name=removePassword]` (only while a password is stored),
// `.mail-save`, `.mail-clear` (only while a relay is set here); `.mail-form[data-loaded]`.
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { Field, FormError, placeError } from '../fields.js';
import { updateSettings } from './admin-settings.js';
import { SECURITY, passwordPlaceholder, relayBody, relayForm, relayWords } from './notify.js';

const FIELDS = ['host', 'port', 'security', 'username', 'password', 'from', 'caFile'];

/** Props: api, toast, loadKey (a new value reloads from the server), onLoaded(). */
export function MailRelay({ api, toast, loadKey, onLoaded }) {
  const [view, setView] = useState(null);
  const [relay, setRelay] = useState(undefined);
  const [form, setForm] = useState(relayForm(null));
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);

  const loadRelay = async () => {
    try {
      setRelay(await api.get('/api/admin/mail'));
    } catch (e) {
      setError({ param: null, message: `Could not read the relay in force: ${e.message}` });
    }
  };

  useEffect(() => {
    let gone = false;
    (async () => {
      setError(null);
      try {
        const v = await api.get('/api/admin/settings');
        if (gone) return;
        setView(v);
        setForm(relayForm(v));
      } catch (e) {
        if (!gone) setError({ param: null, message: `Could not load the settings: ${e.message}` });
      }
      await loadRelay();
      onLoaded?.();
    })();
    return () => { gone = true; };
  }, [loadKey]);

  const set = (key) => (e) => {
    const t = e.currentTarget;
    setForm((f) => ({ ...f, [key]: t.type === 'checkbox' ? t.checked : t.value }));
  };

  async function save(mail, done) {
    setBusy(true);
    setError(null);
    try {
      const v = await updateSettings(api, { mail });
      setView(v);
      setForm(relayForm(v));
      toast(done);
      await loadRelay();
    } catch (e) {
      setError(placeError(e, FIELDS));
    } finally {
      setBusy(false);
    }
  }

  const onSubmit = (e) => {
    e.preventDefault();
    const body = relayBody(form);
    if (body.error) {
      setError(body.error);
      return;
    }
    save(body.mail, `Mail relay ${body.mail.host} saved`);
  };

  const clear = () => {
    // eslint-disable-next-line no-alert
    if (!window.confirm('Remove the mail relay set here? E-mail channels then use boardsmith.toml’s [smtp], or cannot send.')) return;
    save(null, 'Mail relay removed');
  };

  const stored = view?.settings?.mail ?? null;
  const passwordSet = Boolean(view?.mailPasswordSet);
  const source = relay === undefined ? null : relay?.source ?? 'none';
  return html`
    <p class="mail-relay" data-source=${source}>${relay === undefined ? 'Reading the relay in force…' : relayWords(relay)}</p>
    <form class="mail-form settings-form" autocomplete="off" novalidate data-loaded=${view ? '' : null} onSubmit=${onSubmit}>
      <div class="form-grid">
        <${Field} label="Host" param="host" error=${error}>
          <input name="host" value=${form.host} onInput=${set('host')} placeholder="smtp.example.com" autocapitalize="none" spellcheck="false" />
        <//>
        <${Field} label="Port" param="port" hint="Blank: the usual one" error=${error}>
          <input name="port" value=${form.port} onInput=${set('port')} inputmode="numeric" placeholder="default" />
        <//>
        <${Field} label="Security" param="security" error=${error}>
          <select name="security" value=${form.security} onChange=${set('security')}>
            ${SECURITY.map(([v, words]) => html`<option value=${v} selected=${form.security === v}>${words}</option>`)}
          </select>
        <//>
        <${Field} label="User name" param="username" hint="If the relay wants a sign-in" error=${error}>
          <input name="username" value=${form.username} onInput=${set('username')} autocomplete="off" autocapitalize="none" spellcheck="false" />
        <//>
        <${Field} label="Password" param="password" hint=${passwordSet ? 'Blank: keep the stored one' : 'Stored sealed; never shown again'} error=${error}>
          <input name="password" type="password" value=${form.password} onInput=${set('password')} autocomplete="new-password"
            placeholder=${passwordPlaceholder(passwordSet)} disabled=${form.removePassword} />
        <//>
        <${Field} label="From" param="from" hint="Boardsmith <alerts@example.com>" error=${error}>
          <input name="from" value=${form.from} onInput=${set('from')} placeholder="alerts@example.com" spellcheck="false" />
        <//>
        <${Field} label="CA file" param="caFile" hint="Optional: a PEM file on the server, for a private CA" error=${error}>
          <input name="caFile" value=${form.caFile} onInput=${set('caFile')} placeholder="/etc/ssl/corp-ca.pem" spellcheck="false" />
        <//>
      </div>
      ${passwordSet ? html`<label class="mail-remove-password pref-row">
        <input type="checkbox" name="removePassword" checked=${form.removePassword} onChange=${set('removePassword')} />
        <span>Remove the stored password (the relay takes mail without signing in)</span>
      </label>` : null}
      <${FormError} error=${error} />
      <div class="form-actions">
        <button type="submit" class="primary mail-save" disabled=${busy}>Save relay</button>
        ${stored ? html`<button type="button" class="mail-clear" disabled=${busy} onClick=${clear}>Remove relay</button>` : null}
      </div>
    </form>`;
}
