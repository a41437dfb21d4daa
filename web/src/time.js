// Times shown to the user. Relative ones ("5m ago") stay true: every element marked by
// `timeAgo` is rewritten by one timer for the whole page.

/** "just now", "12s ago", "5m ago", "3h ago", "2d ago" (or "in 5m") for a unix-ms time. */
export function relativeTime(ms, now = Date.now()) {
  if (!Number.isFinite(ms)) return '';
  const s = Math.round((now - ms) / 1000);
  if (s < -30) {
    const f = -s;
    if (f < 3600) return `in ${Math.max(1, Math.round(f / 60))}m`;
    if (f < 86400) return `in ${Math.round(f / 3600)}h`;
    return `in ${Math.round(f / 86400)}d`;
  }
  if (s < 5) return 'just now';
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  if (s < 30 * 86400) return `${Math.floor(s / 86400)}d ago`;
  return new Date(ms).toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
}

/**
 * A clock time for a unix-ms time, as a trading screen says it: "10:02" today, "Nov 27, 10:02"
 * on another day (local time).
 */
export function clockTime(ms, now = Date.now()) {
  if (!Number.isFinite(ms)) return '';
  const d = new Date(ms);
  const time = d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  if (d.toDateString() === new Date(now).toDateString()) return time;
  return `${d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })}, ${time}`;
}

/** A local date-time string for a unix-ms time. */
export function absoluteTime(ms) {
  return Number.isFinite(ms) ? new Date(ms).toLocaleString() : '';
}

let ticking = false;

/** Shows `ms` in `el` as a relative time kept current (the exact time as its tooltip). */
export function timeAgo(el, ms) {
  // The timer starts with the first relative time shown (importing this module starts nothing).
  if (!ticking) {
    ticking = true;
    setInterval(tick, 15_000);
  }
  el.dataset.relTime = String(ms);
  el.textContent = relativeTime(ms);
  if (!el.title) el.title = absoluteTime(ms);
  return el;
}

function tick() {
  if (document.hidden) return;
  const now = Date.now();
  for (const el of document.querySelectorAll('[data-rel-time]')) {
    el.textContent = relativeTime(Number(el.dataset.relTime), now);
  }
}
