// Viewports: server-provided HTML views (frontend tools, ```viewport blocks) in sandboxed iframes.
//
// Protocol with the view: the host posts {type: 'viewport.data', data} once the frame has loaded;
// the view posts {type: 'viewport.submit', params}. A small helper script is added to the
// document so the frame reports its height ({type: 'viewport.resize', height}) and follows the
// app's theme ({type: 'viewport.theme', theme}). Frames have an opaque origin (no
// allow-same-origin), so messages are matched by `event.source`.
import { currentTheme } from '../theme.js';
import { bus } from '../bus.js';

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
  if (!view || typeof view.html !== 'string') {
    throw new Error(`viewport ${key} is not an HTML view`);
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
