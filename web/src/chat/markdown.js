// Model-written Markdown → sanitized HTML. Everything the model writes is untrusted: marked
// renders, DOMPurify removes scripts, handlers and javascript: URLs; links open in a new tab.
import { Marked } from 'marked';
import DOMPurify from 'dompurify';

const marked = new Marked({ gfm: true, breaks: false, async: false });

let hooked = false;
function hook() {
  if (hooked) return;
  hooked = true;
  DOMPurify.addHook('afterSanitizeAttributes', (node) => {
    // No remote images from model output (they could leak data through their URLs): a link.
    if (node.tagName === 'IMG') {
      const src = node.getAttribute('src') || '';
      const alt = node.getAttribute('alt') || 'image';
      const repl = node.ownerDocument.createElement(/^https?:\/\//i.test(src) ? 'a' : 'span');
      repl.textContent = `[${alt}]`;
      if (repl.tagName === 'A') {
        repl.setAttribute('href', src);
        repl.setAttribute('target', '_blank');
        repl.setAttribute('rel', 'noopener noreferrer');
      }
      node.replaceWith(repl);
      return;
    }
    if (node.tagName === 'A' && node.hasAttribute('href')) {
      node.setAttribute('target', '_blank');
      node.setAttribute('rel', 'noopener noreferrer');
    }
  });
}

/** Markdown text → sanitized HTML string. */
export function renderMarkdown(text) {
  hook();
  let html;
  try {
    html = marked.parse(text ?? '');
  } catch {
    const div = document.createElement('div');
    div.textContent = text ?? '';
    return div.innerHTML.replace(/\n/g, '<br>');
  }
  return DOMPurify.sanitize(html, {
    USE_PROFILES: { html: true },
    FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe'],
    FORBID_ATTR: ['style'],
  });
}

/** Wraps a <pre> with a "Copy" button (outside the pre, so its text stays the code). */
export function addCopyButton(pre) {
  if (pre.parentElement?.classList.contains('code-wrap')) return;
  const wrap = document.createElement('div');
  wrap.className = 'code-wrap';
  const btn = document.createElement('button');
  btn.type = 'button';
  btn.className = 'code-copy';
  btn.textContent = 'Copy';
  btn.addEventListener('click', (e) => {
    e.preventDefault();
    e.stopPropagation();
    const done = (ok) => {
      btn.textContent = ok ? 'Copied' : 'Copy failed';
      setTimeout(() => (btn.textContent = 'Copy'), 1200);
    };
    navigator.clipboard?.writeText(pre.textContent).then(() => done(true), () => done(false)) ?? done(false);
  });
  pre.replaceWith(wrap);
  wrap.append(pre, btn);
}

/** Sets an element's content to the rendered Markdown (tables get a scroll wrapper). */
export function setMarkdown(el, text) {
  el.innerHTML = renderMarkdown(text);
  for (const pre of el.querySelectorAll('pre')) addCopyButton(pre);
  for (const table of el.querySelectorAll('table')) {
    if (table.parentElement?.classList.contains('md-table')) continue;
    const wrap = document.createElement('div');
    wrap.className = 'md-table';
    table.replaceWith(wrap);
    wrap.append(table);
  }
}
