// Viewports: server-provided HTML views (frontend tools, ```viewport blocks) in sandboxed iframes,
// and schema views (`.qlc`, `.dqlc`, `.json_schema`: a JSON Schema object) as native forms.
//
// Protocol with the view: the host posts {type: 'viewport.data', data} once the frame has loaded;
// the view posts {type: 'viewport.submit', params}. A small helper script is added to the
// document so the frame reports its height ({type: 'viewport.resize', height}) and follows the
// app's theme ({type: 'viewport.theme', theme}). Frames have an opaque origin (no
// allow-same-origin), so messages are matched by `event.source`.
import { currentTheme } from '../theme.js';
import { bus } from '../bus.js';
import { h } from '../dom.js';

const cache = new Map();
const frames = new Map(); // contentWindow → {iframe, onSubmit}

/** GET /api/viewport?viewportKey= → {html} (cached per key; failures are not cached). */
export function loadViewport(api, key) {
  if (!cache.has(key)) {
    const p = api.get(`/api/viewport?viewportKey=${encodeURIComponent(key)}`);
    cache.set(key, p);
    p.catch(() => cache.delete(key));
  }
  return cache.get(key);
}

const HELPER = `<script>(function(){
  function size(){ var b = document.body; if (!b) return document.documentElement.scrollHeight; var r = b.getBoundingClientRect(); return Math.ceil(r.bottom + (parseFloat(getComputedStyle(b).marginBottom) || 0) + (window.scrollY || 0)); }
  function post(){ try { parent.postMessage({type:'viewport.resize', height: size()}, '*'); } catch (e) {} }
  function theme(t){ document.documentElement.style.setProperty('color-scheme', t, 'important'); var m = document.querySelector('meta[name=color-scheme]'); if (m) m.content = t; }
  window.addEventListener('message', function(e){ if (e.data && e.data.type === 'viewport.theme') { theme(e.data.theme); setTimeout(post, 0); } });
  window.addEventListener('load', post);
  if (window.ResizeObserver && document.body) new ResizeObserver(post).observe(document.body);
  setTimeout(post, 50);
})();<\/script>`;

function withHelper(html, theme) {
  const head = `<meta name="color-scheme" content="${theme}"><style>:root{color-scheme:${theme} !important}</style>`;
  let out = String(html);
  out = /<head[^>]*>/i.test(out) ? out.replace(/<head[^>]*>/i, (m) => m + head) : head + out;
  out = /<\/body>/i.test(out) ? out.replace(/<\/body>/i, `${HELPER}</body>`) : out + HELPER;
  return out;
}

let listening = false;
function listen() {
  if (listening) return;
  listening = true;
  window.addEventListener('message', (e) => {
    const entry = frames.get(e.source);
    if (!entry || !e.data || typeof e.data !== 'object') return;
    if (e.data.type === 'viewport.resize') {
      const h = Number(e.data.height);
      if (Number.isFinite(h) && h > 0) entry.iframe.style.height = `${Math.min(Math.max(h, 40), 900)}px`;
    } else if (e.data.type === 'viewport.submit' && entry.onSubmit) {
      entry.onSubmit(e.data.params ?? {});
    }
  });
  bus.on('theme:changed', ({ theme }) => {
    for (const [win, entry] of frames) {
      if (!entry.iframe.isConnected) {
        frames.delete(win);
        continue;
      }
      win.postMessage({ type: 'viewport.theme', theme }, '*');
    }
  });
}

/**
 * Renders the HTML viewport `key` with `data` into `host` (an element). `onSubmit(params)` is
 * called on the view's submit. Returns a promise of the iframe (rejects when the view cannot be
 * loaded).
 */
export async function mountViewport(host, { api, key, data, onSubmit, title }) {
  listen();
  const view = await loadViewport(api, key);
  if (view && typeof view.html !== 'string' && isSchema(view)) {
    const form = schemaForm(view, data, onSubmit);
    host.replaceChildren(form);
    return form;
  }
  if (!view || typeof view.html !== 'string') {
    throw new Error(`viewport ${key} is neither an HTML view nor a form schema`);
  }
  const iframe = document.createElement('iframe');
  iframe.className = 'chat-viewport-frame';
  iframe.setAttribute('sandbox', 'allow-scripts allow-forms');
  iframe.setAttribute('title', title || key);
  iframe.setAttribute('loading', 'eager');
  iframe.srcdoc = withHelper(view.html, currentTheme());
  iframe.addEventListener('load', () => {
    iframe.contentWindow?.postMessage({ type: 'viewport.data', data: data ?? {} }, '*');
  });
  host.replaceChildren(iframe);
  if (iframe.contentWindow) frames.set(iframe.contentWindow, { iframe, onSubmit });
  return iframe;
}

/** Forgets frames that left the document. */
export function pruneFrames() {
  for (const [win, entry] of frames) if (!entry.iframe.isConnected) frames.delete(win);
}

/** A JSON Schema object view (what `.qlc`/`.dqlc`/`.json_schema` files hold). */
function isSchema(view) {
  return view && typeof view === 'object' && view.properties && typeof view.properties === 'object';
}

/** One input for a schema property; returns [element, read()] where read() gives its value. */
function field(name, prop, value) {
  const type = Array.isArray(prop.type) ? prop.type.find((t) => t !== 'null') : prop.type;
  let input;
  let read;
  if (Array.isArray(prop.enum)) {
    input = h('select');
    for (const [i, v] of prop.enum.entries()) {
      // String(): a `false` enum value is shown as text (h() leaves false children out).
      input.append(h('option', { value: String(i), selected: v === value }, String(prop.enumNames?.[i] ?? v ?? '')));
    }
    read = () => prop.enum[Number(input.value)];
  } else if (type === 'boolean') {
    input = h('input');
    input.type = 'checkbox';
    input.checked = value === true;
    read = () => input.checked;
  } else if (type === 'number' || type === 'integer') {
    input = h('input');
    input.type = 'number';
    if (prop.minimum != null) input.min = String(prop.minimum);
    if (prop.maximum != null) input.max = String(prop.maximum);
    input.step = type === 'integer' ? '1' : 'any';
    if (value != null) input.value = String(value);
    read = () => (input.value === '' ? null : Number(input.value));
  } else {
    const long = prop.format === 'textarea' || (prop.maxLength ?? 0) > 200;
    input = h(long ? 'textarea' : 'input');
    if (!long) input.type = prop.format === 'date' ? 'date' : 'text';
    if (value != null) input.value = String(value);
    read = () => input.value;
  }
  input.name = name;
  const help = prop.description ? h('span.chat-form-help', null, prop.description) : null;
  const label = h('label.chat-form-field', null, h('span.chat-form-label', null, prop.title || name), help, input);
  return [label, read, input];
}

/**
 * A native form from a JSON Schema object: one input per property (enum → select, boolean →
 * checkbox, number/integer, string/textarea/date), prefilled from the tool's arguments or the
 * schema's defaults; submit calls `onSubmit(values)` once and disables the form.
 */
export function schemaForm(schema, data, onSubmit) {
  const form = h('form.chat-schema-form');
  if (schema.title) form.append(h('div.chat-form-title', null, schema.title));
  if (schema.description) form.append(h('div.chat-form-help', null, schema.description));
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const readers = [];
  for (const [name, prop] of Object.entries(schema.properties)) {
    if (!prop || typeof prop !== 'object') continue;
    const value = data && Object.hasOwn(data, name) ? data[name] : prop.default;
    const [label, read, input] = field(name, prop, value);
    if (required.has(name) && input.type !== 'checkbox') input.required = true;
    readers.push([name, read]);
    form.append(label);
  }
  form.append(h('button.primary.chat-form-submit', { type: 'submit' }, schema.submitText || 'Submit'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const values = {};
    for (const [name, read] of readers) {
      const v = read();
      if (v !== null && v !== '') values[name] = v;
    }
    for (const c of form.elements) c.disabled = true;
    onSubmit?.(values);
  });
  return form;
}
