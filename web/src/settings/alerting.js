// Settings → Alerts & reports (admins only, like the other admin sections: index.js shows and
// loads it only once the session says admin): where notifications and reports go. Three parts,
// Preact components rendered into the section: the renderer's state (`GET /api/renderer`: "PDF
// and PNG: available", or why not), the e-mail relay (mail.js) and the channels (channels.js).
// createAlerting({api, toast}) → {el, load(), forget()}: `load()` reloads every part from the
// server (each time the settings page opens); `forget()` drops a shown webhook secret (the page
// is being left).
//
// Test hooks: `.settings-alerting[data-loaded]` (once the relay form and the channels have
// loaded), `.renderer-status[data-available=true|false]`; the parts' own (mail.js,
// channels.js).
import { html } from 'htm/preact';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { h } from '../dom.js';
import { MailRelay } from './mail.js';
import { Channels } from './channels.js';
import { rendererWords } from './notify.js';

function Renderer({ api, loadKey }) {
  const [renderer, setRenderer] = useState(undefined);
  useEffect(() => {
    api.get('/api/renderer').then(setRenderer, () => setRenderer(null));
  }, [loadKey]);
  if (renderer === undefined) return html`<p class="renderer-status muted">PDF and PNG: asking the server…</p>`;
  return html`<p class="renderer-status" data-available=${renderer ? String(renderer.available) : null}>${rendererWords(renderer)}</p>`;
}

function Section({ api, toast, loadKey, onLoaded }) {
  return html`
    <h2 id="settings-alerting-title">Alerts & reports</h2>
    <p class="section-note">Where alert notifications and scheduled reports go: webhooks and e-mail. Reports are
      rendered by the server’s headless Chromium.</p>
    <${Renderer} api=${api} loadKey=${loadKey} />
    <h3>E-mail relay</h3>
    <${MailRelay} api=${api} toast=${toast} loadKey=${loadKey} onLoaded=${() => onLoaded('mail')} />
    <h3>Channels</h3>
    <${Channels} api=${api} toast=${toast} loadKey=${loadKey} onLoaded=${() => onLoaded('channels')} />`;
}

export function createAlerting({ api, toast }) {
  const el = h('section.settings-section.settings-alerting', { 'aria-labelledby': 'settings-alerting-title' });
  let loadKey = 0;
  let pending = new Set();

  function onLoaded(part) {
    pending.delete(part);
    if (!pending.size) el.dataset.loaded = '';
  }

  function paint() {
    render(html`<${Section} api=${api} toast=${toast} loadKey=${loadKey} onLoaded=${onLoaded} />`, el);
  }

  function load() {
    loadKey += 1;
    pending = new Set(['mail', 'channels']);
    delete el.dataset.loaded;
    paint();
  }

  /** The page is being left: a webhook's secret, shown once, goes (and nothing loads meanwhile). */
  function forget() {
    render(null, el);
  }

  return { el, load, forget };
}
