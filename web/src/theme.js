// Light and dark themes: a `data-theme` attribute on <html> switches the CSS variables; charts
// read the same variables through `themeColors()` and re-theme on 'theme:changed'.
import { bus } from './bus.js';

const KEY = 'boardsmith.theme';

/** 'light' or 'dark'. */
export function currentTheme() {
  return document.documentElement.dataset.theme === 'dark' ? 'dark' : 'light';
}

/** Sets 'light', 'dark' or 'toggle'; remembers the choice and tells the charts. */
export function setTheme(theme) {
  const next = theme === 'toggle' ? (currentTheme() === 'dark' ? 'light' : 'dark') : theme;
  if (next !== 'light' && next !== 'dark') return currentTheme();
  document.documentElement.dataset.theme = next;
  localStorage.setItem(KEY, next);
  bus.emit('theme:changed', { theme: next });
  return next;
}

/** Makes `button` the theme switch: its icon and label show the theme it switches to. */
export function bindThemeButton(button) {
  const paint = () => {
    const dark = currentTheme() === 'dark';
    const label = document.createElement('span');
    label.className = 'label';
    label.textContent = dark ? ' Light' : ' Dark';
    button.replaceChildren(dark ? '☀' : '☾', label);
  };
  button.addEventListener('click', () => setTheme('toggle'));
  bus.on('theme:changed', paint);
  paint();
  return button;
}

/** The current theme's colours, for chart libraries that do not read CSS. */
export function themeColors() {
  const css = getComputedStyle(document.documentElement);
  const v = (name) => css.getPropertyValue(name).trim();
  return {
    theme: currentTheme(),
    bg: v('--panel-bg'),
    text: v('--text'),
    muted: v('--muted'),
    grid: v('--grid-line'),
    border: v('--border'),
    up: v('--up'),
    down: v('--down'),
    accent: v('--accent'),
    palette: v('--palette').split(',').map((s) => s.trim()).filter(Boolean),
  };
}
