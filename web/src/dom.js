// Building DOM from data (chat and dashboard alike): elements, icons and links. Data goes in as
// text nodes or attributes, never as HTML.

/**
 * Creates an element: h('div.card.big', {title: 'x', class: 'ok', onclick: fn, dataset: {...}},
 * child, 'text'). The tag may name an id before its classes (`h2#title.big`). Classes come from
 * the tag and from a `class` attribute (added, not replaced); `text` sets textContent; children
 * are nodes or text (null and false are left out).
 */
export function h(tag, attrs, ...children) {
  const [head, ...classes] = tag.split('.');
  const [name, id] = head.split('#');
  const el = document.createElement(name || 'div');
  if (id) el.id = id;
  if (classes.length) el.className = classes.join(' ');
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v == null || v === false) continue;
      if (k === 'class') el.classList.add(...String(v).split(/\s+/).filter(Boolean));
      else if (k === 'dataset') Object.assign(el.dataset, v);
      else if (k === 'style' && typeof v === 'object') Object.assign(el.style, v);
      else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
      else if (k === 'text') el.textContent = String(v);
      else if (k in el && typeof v !== 'string') el[k] = v;
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  for (const c of children.flat()) {
    if (c == null || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

/** A 16×16 stroked SVG icon (drawn at 14 px) from one path. */
export function icon(d, strokeWidth = 1.4) {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  for (const [k, v] of [['viewBox', '0 0 16 16'], ['width', '14'], ['height', '14'], ['aria-hidden', 'true']]) {
    svg.setAttribute(k, v);
  }
  const path = document.createElementNS(ns, 'path');
  const attrs = [['d', d], ['fill', 'none'], ['stroke', 'currentColor'], ['stroke-width', String(strokeWidth)],
    ['stroke-linejoin', 'round'], ['stroke-linecap', 'round']];
  for (const [k, v] of attrs) path.setAttribute(k, v);
  svg.append(path);
  return svg;
}

/** The link for an href from data: only http(s) links become anchors, else null. */
export function safeUrl(u) {
  if (typeof u !== 'string') return null;
  try {
    const url = new URL(u, location.href);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}
