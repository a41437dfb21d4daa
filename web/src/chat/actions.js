// Actions: frontend effects the agent triggers (the server answers the model "OK" at once).
// switch_theme {theme}, launch_fireworks {durationMs?}, show_modal {title, content, closeText?}.
import { setTheme } from '../theme.js';

/** Applies an action; returns a short human description of what was done. */
export function runAction(name, params) {
  const p = params && typeof params === 'object' ? params : {};
  switch (name) {
    case 'switch_theme': {
      const theme = p.theme === 'dark' || p.theme === 'light' ? p.theme : 'toggle';
      const now = setTheme(theme);
      return `Theme: ${now}`;
    }
    case 'launch_fireworks': {
      const ms = Number(p.durationMs);
      const duration = Number.isFinite(ms) && ms > 0 ? Math.min(Math.max(ms, 500), 15000) : 2000;
      launchFireworks(duration);
      return `Fireworks for ${(duration / 1000).toFixed(1)} s`;
    }
    case 'show_modal': {
      showModal({
        title: p.title,
        content: p.content ?? p.message ?? p.text,
        closeText: p.closeText,
      });
      return 'Dialog shown';
    }
    default:
      return null;
  }
}

/** A modal dialog (text only); closes on its button, Escape or a click outside. */
export function showModal({ title, content, closeText }) {
  const backdrop = document.createElement('div');
  backdrop.className = 'modal-backdrop';
  const modal = document.createElement('div');
  modal.className = 'modal';
  modal.setAttribute('role', 'dialog');
  modal.setAttribute('aria-modal', 'true');
  const h = document.createElement('h2');
  h.className = 'modal-title';
  h.textContent = title == null ? 'Notice' : String(title);
  h.id = `modal-title-${Date.now()}`;
  modal.setAttribute('aria-labelledby', h.id);
  const body = document.createElement('div');
  body.className = 'modal-body';
  body.textContent = content == null ? '' : String(content);
  const actions = document.createElement('div');
  actions.className = 'modal-actions';
  const close = document.createElement('button');
  close.type = 'button';
  close.className = 'primary modal-close';
  close.textContent = closeText == null || closeText === '' ? 'OK' : String(closeText);
  actions.append(close);
  modal.append(h, body, actions);
  backdrop.append(modal);
  const previous = document.activeElement;
  const done = () => {
    backdrop.remove();
    document.removeEventListener('keydown', onKey, true);
    if (previous && previous.isConnected) previous.focus?.();
  };
  const onKey = (e) => {
    if (e.key === 'Escape') {
      e.preventDefault();
      done();
    }
  };
  close.addEventListener('click', done);
  backdrop.addEventListener('click', (e) => {
    if (e.target === backdrop) done();
  });
  document.addEventListener('keydown', onKey, true);
  document.body.append(backdrop);
  close.focus();
  return { close: done, element: modal };
}

/** A full-screen canvas fireworks show for `duration` ms; clicks pass through. */
export function launchFireworks(duration = 2000) {
  const canvas = document.createElement('canvas');
  canvas.className = 'fireworks';
  canvas.setAttribute('aria-hidden', 'true');
  document.body.append(canvas);
  const reduce = matchMedia('(prefers-reduced-motion: reduce)').matches;
  const dpr = Math.min(window.devicePixelRatio || 1, 2);
  const resize = () => {
    canvas.width = innerWidth * dpr;
    canvas.height = innerHeight * dpr;
  };
  resize();
  addEventListener('resize', resize);
  const ctx = canvas.getContext('2d');
  const colors = ['#ff5252', '#ffd740', '#69f0ae', '#40c4ff', '#e040fb', '#ffab40', '#ffffff'];
  const particles = [];
  const start = performance.now();
  let nextBurst = 0;
  const burst = () => {
    const x = (0.15 + Math.random() * 0.7) * canvas.width;
    const y = (0.15 + Math.random() * 0.4) * canvas.height;
    const color = colors[(Math.random() * colors.length) | 0];
    const n = reduce ? 20 : 70;
    for (let i = 0; i < n; i++) {
      const a = (Math.PI * 2 * i) / n + Math.random() * 0.2;
      const s = (1.5 + Math.random() * 3.5) * dpr;
      particles.push({ x, y, vx: Math.cos(a) * s, vy: Math.sin(a) * s, life: 1, color });
    }
  };
  let raf = 0;
  const frame = (now) => {
    const t = now - start;
    if (t < duration - 500 && now >= nextBurst) {
      burst();
      nextBurst = now + 220 + Math.random() * 260;
    }
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    ctx.globalCompositeOperation = 'lighter';
    for (let i = particles.length - 1; i >= 0; i--) {
      const p = particles[i];
      p.vy += 0.05 * dpr;
      p.vx *= 0.985;
      p.vy *= 0.985;
      p.x += p.vx;
      p.y += p.vy;
      p.life -= 0.014;
      if (p.life <= 0) {
        particles.splice(i, 1);
        continue;
      }
      ctx.globalAlpha = Math.max(p.life, 0);
      ctx.fillStyle = p.color;
      ctx.beginPath();
      ctx.arc(p.x, p.y, 2.2 * dpr, 0, Math.PI * 2);
      ctx.fill();
    }
    canvas.style.opacity = t > duration - 300 ? String(Math.max((duration - t) / 300, 0)) : '1';
    if (t < duration) raf = requestAnimationFrame(frame);
    else stop();
  };
  const stop = () => {
    cancelAnimationFrame(raf);
    removeEventListener('resize', resize);
    canvas.remove();
  };
  raf = requestAnimationFrame(frame);
  // rAF does not run in hidden tabs: make sure the overlay goes away anyway.
  setTimeout(stop, duration + 1000);
  return stop;
}
