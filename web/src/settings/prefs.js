// Preferences of this browser (prefs.js, kept in localStorage): for now whether the chat's
// agent picker also lists the built-in demo and test agents.
//
// Test hooks: `.settings-prefs[data-loaded]` with `input[name=showDemoAgents]`.
import { h } from '../dom.js';
import { getPref, setPref } from '../prefs.js';

export function createPrefs() {
  const showDemo = h('input', { type: 'checkbox', name: 'showDemoAgents' });
  showDemo.addEventListener('change', () => setPref('showDemoAgents', showDemo.checked));
  const el = h('section.settings-section.settings-prefs', { 'aria-labelledby': 'settings-prefs-title' },
    h('h2#settings-prefs-title', { text: 'This browser' }),
    h('label.pref-row', null, showDemo,
      h('span', null,
        h('span', { text: 'Show demo and test agents' }),
        h('span.field-hint', { text: 'The chat’s agent picker then also lists the built-in examples of each agent mode and test agents.' }))));

  function load() {
    showDemo.checked = !!getPref('showDemoAgents');
    el.dataset.loaded = '';
  }

  return { el, load };
}
