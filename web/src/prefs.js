// Preferences of this browser (localStorage, no server round trip), set on the settings page and
// read by the parts; a change is announced as 'prefs:changed' {key, value} on the bus.
//
//   showDemoAgents  boolean, default false: the chat's agent picker also lists the built-in demo
//                   and test agents (chat/agents.js says which those are)
import { bus } from './bus.js';

const PREFIX = 'boardsmith.pref.';
const DEFAULTS = { showDemoAgents: false };
const memory = new Map(); // values set on this page (also where storage is refused)

/** The preference `key` (its default when unset or unreadable). */
export function getPref(key) {
  if (memory.has(key)) return memory.get(key);
  try {
    const raw = localStorage.getItem(PREFIX + key);
    if (raw != null) return JSON.parse(raw);
  } catch {
    /* storage unavailable or a value that is not JSON */
  }
  return DEFAULTS[key];
}

/** Sets the preference `key` and tells the parts. */
export function setPref(key, value) {
  memory.set(key, value);
  try {
    localStorage.setItem(PREFIX + key, JSON.stringify(value));
  } catch {
    /* storage unavailable: the change holds for this page only */
  }
  bus.emit('prefs:changed', { key, value });
}
