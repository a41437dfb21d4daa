// Direct editing (issue 40) in headless Chromium against a real server: renaming the dashboard
// and a panel in place, a panel's type (its renderer follows), arranging panels with the mouse
// (gridstack) and the keyboard, the panel code editor (test run, an error at its line, nothing
// saved until Save), the 409 dialog between two tabs (Reload, Overwrite), the variables form,
// and Undo/Redo. Every edit is checked as the next version on the server and after a reload.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, apiOf, newPage, closeBrowser, screenshot } from './harness.mjs';

let server;
let api;

before(async () => {
  server = await startServer();
  api = apiOf(server.url);
});

after(async () => {
  await closeBrowser();
  await server?.close();
});

const rows = (label) => `return [{ name: '${label}', value: 1 }];`;

/** A new dashboard of table panels `ids` (each 1×2) on `columns` columns. */
async function makeDashboard(title, ids, { columns = 2, variables } = {}) {
  const created = await api.post('/api/dashboards', {
    state: {
      title,
      layout: { columns },
      ...(variables ? { variables } : {}),
      panels: ids.map((id) => ({
        id, title: `Panel ${id}`, type: 'table', renderer: 'custom', layout: { w: 1, h: 2 }, code: rows(id),
      })),
    },
  });
  return created.id;
}

const stateOf = async (id) => api.get(`/api/dashboards/${id}`);

/** Opens dashboard `id` and waits until it is shown, editable, with its panels settled. */
async function openEditable(page, id) {
  await page.goto(`${server.url}/#d=${id}`);
  await page.waitForSelector(`.dashboard-view[data-dashboard-id="${id}"][data-editable] .panel`);
  await page.waitForFunction(() => [...document.querySelectorAll('.dashboard-view .dashboard-grid .panel')]
    .every((p) => p.dataset.status === 'ok' || p.dataset.status === 'error'), null, { timeout: 30_000 });
}

/** Waits until the view shows version `v`; a timeout says what it shows and the status line. */
async function shownVersion(page, v) {
  try {
    await page.waitForSelector(`.dashboard-view[data-version="${v}"]`, { timeout: 15_000 });
  } catch (e) {
    const seen = await page.evaluate(() => ({
      version: document.querySelector('.dashboard-view')?.dataset.version,
      status: document.querySelector('.edit-status')?.textContent,
      focus: document.activeElement?.className,
    }));
    throw new Error(`version ${v} not shown: ${JSON.stringify(seen)}`, { cause: e });
  }
}

/** The page's errors but the 409 answers a conflict test expects (the console logs them). */
const errorsBut409 = (page) => page.errors.filter((e) => !/status of 409/.test(e));

test('rename the dashboard and a panel in place: each the next version, kept after a reload; Esc cancels', async () => {
  const id = await makeDashboard('Rename me', ['a', 'b']);
  const page = await newPage();
  await openEditable(page, id);
  const v0 = (await stateOf(id)).version;

  // Esc cancels: nothing saved.
  await page.click('.dash-title');
  await page.fill('input.title-input[data-target="dashboard"]', 'Not this');
  await page.keyboard.press('Escape');
  await page.waitForSelector('input.title-input', { state: 'detached' });
  assert.equal((await page.textContent('.dash-title')).trim(), 'Rename me');
  assert.equal((await stateOf(id)).version, v0, 'Esc saved nothing');

  // Enter saves the dashboard's title as the next version.
  await page.click('.dash-title');
  await page.fill('input.title-input[data-target="dashboard"]', 'Gold desk, renamed');
  await page.keyboard.press('Enter');
  await shownVersion(page, v0 + 1);
  let rec = await stateOf(id);
  assert.equal(rec.version, v0 + 1);
  assert.equal(rec.state.title, 'Gold desk, renamed');

  // A double-click on a panel's title renames the panel.
  await page.dblclick('.panel[data-panel-id="b"] .panel-title');
  await page.fill('input.title-input[data-target="panel"]', 'Silver table');
  await page.keyboard.press('Enter');
  await shownVersion(page, v0 + 2);
  rec = await stateOf(id);
  assert.equal(rec.state.panels[1].title, 'Silver table');
  assert.equal(rec.state.panels[0].title, 'Panel a', 'the other panel is untouched');

  await page.reload();
  await openEditable(page, id);
  assert.equal((await page.textContent('.dash-title')).trim(), 'Gold desk, renamed');
  assert.equal((await page.textContent('.panel[data-panel-id="b"] .panel-title')).trim(), 'Silver table');
  assert.equal(await page.getAttribute('.dashboard-view', 'data-version'), String(v0 + 2));

  // Each edit went with a note that says what it did, shown in the version history.
  const notes = new Map((await api.get(`/api/dashboards/${id}/versions`)).map((v) => [v.version, v.note]));
  assert.equal(notes.get(v0 + 1), 'Renamed the dashboard to “Gold desk, renamed”');
  assert.equal(notes.get(v0 + 2), 'Renamed panel “Panel b” to “Silver table”');
  await page.waitForSelector(`.dashboard-versions .version[data-version="${v0 + 2}"]`);
  assert.match(await page.textContent(`.dashboard-versions .version[data-version="${v0 + 2}"]`), /Renamed panel “Panel b” to “Silver table”/);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a panel’s type: only valid pairs, the renderer follows the type', async () => {
  const id = await makeDashboard('Types', ['t']);
  const page = await newPage();
  await openEditable(page, id);
  const v0 = (await stateOf(id)).version;
  await page.click('.panel[data-panel-id="t"] .panel-edit');
  await page.waitForSelector('dialog.panel-editor[data-panel-id="t"][open]');
  await page.waitForSelector('.editor-preview[data-status="ok"]');
  const offered = await page.$$eval('select[name="type"] option', (os) => os.map((o) => o.value));
  assert.equal(offered.length, 11);
  assert.equal(await page.getAttribute('.editor-renderer', 'data-renderer'), 'custom');
  await page.selectOption('select[name="type"]', 'bar');
  assert.equal(await page.getAttribute('.editor-renderer', 'data-renderer'), 'echarts');
  // Bar data, so the new type draws.
  await page.click('.editor-code .cm-content');
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.insertText("return [{ name: 'a', value: 3 }, { name: 'b', value: 5 }];");
  await page.click('.editor-save');
  await page.waitForSelector('dialog.panel-editor', { state: 'detached' });
  await shownVersion(page, v0 + 1);
  const p = (await stateOf(id)).state.panels[0];
  assert.equal(p.type, 'bar');
  assert.equal(p.renderer, 'echarts');
  await page.waitForSelector('.dashboard-grid .panel[data-panel-id="t"][data-type="bar"][data-status="ok"] canvas');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the code editor: completion, a syntax error shown at its line saves nothing; fixed, saved as the next version', async () => {
  const id = await makeDashboard('Code', ['c']);
  const page = await newPage();
  await openEditable(page, id);
  const v0 = (await stateOf(id)).version;
  await page.click('.panel[data-panel-id="c"] .panel-edit');
  await page.waitForSelector('.editor-preview[data-status="ok"] .panel[data-status="ok"]');

  // `sdk.` completes the registry's sources, `sdk.market.` its methods.
  await page.click('.editor-code .cm-content');
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.type('sdk.');
  await page.waitForSelector('.cm-tooltip-autocomplete');
  const sources = await page.$$eval('.cm-tooltip-autocomplete li .cm-completionLabel', (ls) => ls.map((l) => l.textContent));
  assert.ok(sources.includes('market') && sources.includes('news'), `sources offered: ${sources}`);
  await page.keyboard.type('market.getK');
  await page.waitForFunction(() => [...document.querySelectorAll('.cm-tooltip-autocomplete .cm-completionLabel')].some((l) => l.textContent === 'getKline'));
  await page.keyboard.press('Escape');

  // A syntax error on line 2: the test run shows it there, Save refuses.
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.insertText("const n = 2;\nreturn [{ name: 'fixed', value: n + }];");
  await page.waitForSelector('.editor-preview[data-status="error"] .editor-preview-error[data-line="2"][data-kind="syntax"]');
  await page.waitForSelector('.editor-code .cm-lintRange-error');
  const marked = await page.$$eval('.editor-code .cm-gutterElement .cm-lint-marker-error', (ms) => ms.length);
  assert.equal(marked, 1, 'a marker in the gutter');
  const markedLine = await page.evaluate(() => {
    const range = document.querySelector('.editor-code .cm-lintRange-error');
    const lines = [...document.querySelectorAll('.editor-code .cm-line')];
    return lines.findIndex((l) => l.contains(range)) + 1;
  });
  assert.equal(markedLine, 2, 'the mark is on line 2');
  await page.click('.editor-save');
  await page.waitForSelector('.editor-message');
  assert.match(await page.textContent('.editor-message'), /does not parse on line 2/);
  assert.equal((await stateOf(id)).version, v0, 'nothing saved');
  assert.equal(await page.getAttribute('.dashboard-view', 'data-version'), String(v0));
  await screenshot(page, 'editing-code-error');

  // Fixed: the test run is fine, the mark goes, Save saves the next version.
  await page.click('.editor-code .cm-content');
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.insertText("const n = 2;\nreturn [{ name: 'fixed', value: n + 40 }];");
  await page.waitForSelector('.editor-preview[data-status="ok"] .panel td:has-text("fixed")');
  assert.equal(await page.$('.editor-code .cm-lintRange-error'), null);
  assert.equal((await stateOf(id)).version, v0, 'a test run saves nothing');
  await page.click('.editor-save');
  await page.waitForSelector('dialog.panel-editor', { state: 'detached' });
  await shownVersion(page, v0 + 1);
  const rec = await stateOf(id);
  assert.equal(rec.version, v0 + 1);
  assert.match(rec.state.panels[0].code, /n \+ 40/);
  await page.waitForSelector('.dashboard-grid .panel[data-panel-id="c"] td:has-text("fixed")');
  assert.equal((await page.textContent('.dashboard-grid .panel[data-panel-id="c"] tbody')).includes('42'), true, 'the panel shows the new data');

  // Cancel discards: nothing saved.
  await page.click('.panel[data-panel-id="c"] .panel-edit');
  await page.waitForSelector('dialog.panel-editor[open]');
  await page.fill('dialog.panel-editor input[name="title"]', 'Discarded');
  await page.click('.editor-cancel');
  await page.waitForSelector('dialog.panel-editor', { state: 'detached' });
  assert.equal((await stateOf(id)).version, v0 + 1);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('two tabs: a save on an old version gets the 409 dialog — Reload drops it, Overwrite saves it', async () => {
  const id = await makeDashboard('Shared desk', ['p']);
  const a = await newPage();
  const b = await newPage();
  await openEditable(a, id);
  await openEditable(b, id);
  const v0 = (await stateOf(id)).version;

  // A starts editing; B renames the dashboard meanwhile.
  await a.click('.panel[data-panel-id="p"] .panel-edit');
  await a.waitForSelector('dialog.panel-editor[open] .editor-preview[data-status="ok"]');
  await b.click('.dash-title');
  await b.fill('input.title-input', 'Renamed in B');
  await b.keyboard.press('Enter');
  await shownVersion(b, v0 + 1);
  await shownVersion(a, v0 + 1);

  await a.fill('dialog.panel-editor input[name="title"]', 'Title from A');
  await a.click('.editor-save');
  await a.waitForSelector('dialog.edit-conflict[open]');
  assert.equal(await a.getAttribute('dialog.edit-conflict', 'data-actual'), String(v0 + 1));
  assert.match(await a.textContent('dialog.edit-conflict'), /changed meanwhile/);
  assert.equal((await stateOf(id)).version, v0 + 1, 'the conflicting save saved nothing');

  // Reload: A's edit is dropped, A shows B's version.
  await a.click('.conflict-reload');
  await a.waitForSelector('dialog.edit-conflict', { state: 'detached' });
  await a.waitForSelector('dialog.panel-editor', { state: 'detached' });
  let rec = await stateOf(id);
  assert.equal(rec.version, v0 + 1);
  assert.equal(rec.state.panels[0].title, 'Panel p');
  assert.equal((await a.textContent('.dash-title')).trim(), 'Renamed in B');

  // Again, and Overwrite: A's state is saved on the current version.
  await a.click('.panel[data-panel-id="p"] .panel-edit');
  await a.waitForSelector('dialog.panel-editor[open] .editor-preview[data-status="ok"]');
  await api.put(`/api/dashboards/${id}`, { baseVersion: v0 + 1, state: { ...rec.state, title: 'Renamed by the API' } });
  await shownVersion(a, v0 + 2);
  await a.fill('dialog.panel-editor input[name="title"]', 'Title from A');
  await a.click('.editor-save');
  await a.waitForSelector('dialog.edit-conflict[open]');
  await a.click('.conflict-overwrite');
  await a.waitForSelector('dialog.edit-conflict', { state: 'detached' });
  await a.waitForSelector('dialog.panel-editor', { state: 'detached' });
  await shownVersion(a, v0 + 3);
  await shownVersion(b, v0 + 3);
  rec = await stateOf(id);
  assert.equal(rec.version, v0 + 3);
  assert.equal(rec.state.panels[0].title, 'Title from A');
  assert.equal(rec.state.title, 'Renamed in B', 'overwritten: the state A edited, on the current version');
  assert.equal((await b.textContent('.panel[data-panel-id="p"] .panel-title')).trim(), 'Title from A');
  assert.deepEqual(errorsBut409(a), []);
  assert.deepEqual(b.errors, []);
  await a.close();
  await b.close();
});

/** The panel ids in the live grid, in order, with their spans. */
const liveLayout = (page) => page.$$eval('.dashboard-grid > .panel', (ps) => ps.map((p) => [p.dataset.panelId, p.style.getPropertyValue('--w'), p.style.getPropertyValue('--h')]));

test('arrange: drag to move and resize (one version per gesture), keyboard moves and resizes, kept after a reload', async () => {
  const id = await makeDashboard('Arrange me', ['a', 'b', 'c'], { columns: 3 });
  const page = await newPage({ width: 1400, height: 900 });
  await openEditable(page, id);
  const v0 = (await stateOf(id)).version;
  await page.click('.edit-arrange');
  await page.waitForSelector('.dashboard-view[data-arranging] .dash-arrange .arrange-card[data-panel-id="c"]');
  assert.equal(await page.isVisible('.dashboard-grid'), false, 'the live grid gives way to the cards');
  assert.equal(await page.getAttribute('.edit-arrange', 'aria-pressed'), 'true');

  // Resize a: drag its right edge one column wider.
  const card = (pid) => page.locator(`.arrange-card[data-panel-id="${pid}"]`);
  const boxA = await card('a').boundingBox();
  const colWidth = (await page.locator('.dash-arrange').boundingBox()).width / 3;
  const handle = page.locator('.grid-stack-item[gs-id="a"] > .ui-resizable-e');
  const hb = await handle.boundingBox();
  await page.mouse.move(hb.x + hb.width / 2, hb.y + hb.height / 2);
  await page.mouse.down();
  await page.mouse.move(hb.x + colWidth * 0.5, hb.y + hb.height / 2, { steps: 5 });
  await page.mouse.move(hb.x + colWidth * 1.0, hb.y + hb.height / 2, { steps: 5 });
  await page.mouse.up();
  await shownVersion(page, v0 + 1);
  let rec = await stateOf(id);
  assert.deepEqual(rec.state.panels[0].layout, { w: 2, h: 2 }, 'a is two columns wide');
  assert.deepEqual(rec.state.panels.map((p) => p.id), ['a', 'b', 'c']);
  assert.ok(boxA.width > 0);

  // Move c before a: drag it to the grid's top-left corner.
  await page.waitForSelector('.arrange-card[data-panel-id="a"][data-w="2"]');
  const boxC = await card('c').boundingBox();
  const gridBox = await page.locator('.dash-arrange').boundingBox();
  await page.mouse.move(boxC.x + 30, boxC.y + 20);
  await page.mouse.down();
  await page.mouse.move(boxC.x + 10, boxC.y - 10, { steps: 4 });
  await page.mouse.move(gridBox.x + 20, gridBox.y + 14, { steps: 12 });
  await page.mouse.move(gridBox.x + 16, gridBox.y + 12, { steps: 3 });
  await page.mouse.up();
  await shownVersion(page, v0 + 2);
  rec = await stateOf(id);
  assert.equal(rec.state.panels[0].id, 'c', `c moved first: ${rec.state.panels.map((p) => p.id)}`);
  assert.equal(rec.version, v0 + 2, 'one version for the gesture');

  // Keyboard: c one place later, then one row taller.
  await card('c').focus();
  await page.keyboard.press('ArrowRight');
  await shownVersion(page, v0 + 3);
  await page.waitForSelector('.edit-status[data-kind="ok"]');
  assert.match(await page.textContent('.edit-status'), /Panel c is at place 2 of 3/);
  await page.waitForFunction(() => document.activeElement?.dataset?.panelId === 'c', null, { timeout: 5000 });
  await page.keyboard.press('Shift+ArrowDown');
  await shownVersion(page, v0 + 4);
  rec = await stateOf(id);
  assert.deepEqual(rec.state.panels.map((p) => p.id), ['a', 'c', 'b']);
  assert.deepEqual(rec.state.panels[1].layout, { w: 1, h: 3 });
  assert.match(await page.textContent('.edit-status'), /1 column wide and 3 rows tall/);
  await screenshot(page, 'editing-arrange');

  // Done: the live grid again, in the new order, also after a reload.
  await page.click('.edit-arrange');
  await page.waitForSelector('.dash-arrange', { state: 'hidden' });
  const expected = [['a', '2', '2'], ['c', '1', '3'], ['b', '1', '2']];
  assert.deepEqual(await liveLayout(page), expected);
  await page.reload();
  await openEditable(page, id);
  assert.deepEqual(await liveLayout(page), expected);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the variables form: a changed select and a new text variable are the next version; invalid fields save nothing', async () => {
  const id = await makeDashboard('Vars', ['v'], {
    variables: [{ name: 'symbol', label: 'Symbol', type: 'select', options: ['XAUUSD', 'XAGUSD'], default: 'XAUUSD' }],
  });
  const page = await newPage();
  await openEditable(page, id);
  const v0 = (await stateOf(id)).version;
  await page.click('.edit-vars');
  await page.waitForSelector('dialog.vars-editor[open] .var-row[data-index="0"]');

  // An invalid name: marked, nothing saved.
  await page.fill('.var-row[data-index="0"] input[name="name"]', '2symbol');
  await page.click('.vars-save');
  await page.waitForSelector('.var-row[data-index="0"] .var-field-error[data-field="name"]');
  assert.equal((await stateOf(id)).version, v0);

  await page.fill('.var-row[data-index="0"] input[name="name"]', 'symbol');
  await page.fill('.var-row[data-index="0"] input[name="options"]', 'XAUUSD, XAGUSD, XPTUSD');
  await page.selectOption('.var-row[data-index="0"] select[name="default"]', 'XPTUSD');
  await page.click('.vars-add');
  await page.fill('.var-row[data-index="1"] input[name="name"]', 'query');
  await page.fill('.var-row[data-index="1"] input[name="label"]', 'Query');
  await page.fill('.var-row[data-index="1"] input[name="default"]', 'gold');
  await page.click('.vars-save');
  await page.waitForSelector('dialog.vars-editor', { state: 'detached' });
  await shownVersion(page, v0 + 1);
  const rec = await stateOf(id);
  assert.deepEqual(rec.state.variables, [
    { name: 'symbol', label: 'Symbol', type: 'select', options: ['XAUUSD', 'XAGUSD', 'XPTUSD'], default: 'XPTUSD' },
    { name: 'query', label: 'Query', type: 'text', default: 'gold' },
  ]);
  // The variables bar follows.
  await page.waitForSelector('.dashboard-vars [name="query"]');
  assert.equal(await page.$$eval('.dashboard-vars [name="symbol"] option', (os) => os.length), 3);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('undo and redo: Ctrl+Z restores the previous title as a new version, Ctrl+Shift+Z redoes; another’s change is not overwritten', async () => {
  const id = await makeDashboard('Before', ['u']);
  const page = await newPage();
  await openEditable(page, id);
  const v0 = (await stateOf(id)).version;
  assert.equal(await page.isDisabled('.edit-undo'), true, 'nothing to undo yet');

  await page.click('.dash-title');
  await page.fill('input.title-input', 'After');
  await page.keyboard.press('Enter');
  await shownVersion(page, v0 + 1);
  await page.waitForSelector('.edit-undo:not([disabled])');

  // Ctrl+Z (the focus is back on the page once the title field is gone): the previous title,
  // as a new version.
  await page.keyboard.press('ControlOrMeta+z');
  await shownVersion(page, v0 + 2);
  let rec = await stateOf(id);
  assert.equal(rec.state.title, 'Before');
  await page.waitForFunction(() => document.querySelector('.dash-title').textContent === 'Before');

  // Ctrl+Shift+Z: redone, again a new version.
  await page.keyboard.press('ControlOrMeta+Shift+z');
  await shownVersion(page, v0 + 3);
  rec = await stateOf(id);
  assert.equal(rec.state.title, 'After');

  // The button undoes too.
  await page.click('.edit-undo');
  await shownVersion(page, v0 + 4);
  assert.equal((await stateOf(id)).state.title, 'Before');

  // Someone else saves: Undo says so and saves nothing.
  await page.click('.edit-redo');
  await shownVersion(page, v0 + 5);
  rec = await stateOf(id);
  await api.put(`/api/dashboards/${id}`, { baseVersion: v0 + 5, state: { ...rec.state, title: 'Theirs' } });
  await shownVersion(page, v0 + 6);
  await page.click('.edit-undo');
  await page.waitForSelector('.edit-status[data-kind="warn"]');
  assert.match(await page.textContent('.edit-status'), /changed since your last edit/);
  rec = await stateOf(id);
  assert.equal(rec.version, v0 + 6);
  assert.equal(rec.state.title, 'Theirs');
  const notes = new Map((await api.get(`/api/dashboards/${id}/versions`)).map((v) => [v.version, v.note]));
  assert.deepEqual([1, 2, 3, 4, 5].map((n) => notes.get(v0 + n)),
    ['Renamed the dashboard to “After”', 'Undo (rename)', 'Redo (rename)', 'Undo (rename)', 'Redo (rename)']);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the code editor and Arrange’s gridstack are not part of the first load: fetched (brotli) when first used', async () => {
  const id = await makeDashboard('Lazy parts', ['a', 'b']);
  const page = await newPage();
  const scripts = [];
  page.on('response', (r) => {
    const url = new URL(r.url());
    if (url.pathname.startsWith('/assets/') && url.pathname.endsWith('.js')) {
      scripts.push({ name: url.pathname.slice('/assets/'.length), status: r.status(), encoding: r.headers()['content-encoding'] });
    }
  });
  await openEditable(page, id);
  scripts.length = 0;
  await page.reload(); // a whole first load, with the listener on (signing in loaded the page)
  await page.waitForSelector(`.dashboard-view[data-dashboard-id="${id}"][data-editable] .panel`);
  const first = scripts.map((s) => s.name);
  assert.ok(first.includes('app.js'), `the entry was loaded: ${first}`);
  assert.ok(first.some((n) => /^app-\w+\.js$/.test(n)), `the app's chunk was loaded: ${first}`);
  assert.ok(!first.some((n) => /^(code|gridstack)-/.test(n)), `no editor or gridstack chunk at first: ${first}`);
  for (const s of scripts) assert.ok([200, 304].includes(s.status), `${s.name} served: ${s.status}`);

  await page.click('.panel[data-panel-id="a"] .panel-edit');
  await page.waitForSelector('dialog.panel-editor .editor-code .cm-editor');
  const code = scripts.find((s) => /^code-\w+\.js$/.test(s.name));
  assert.ok(code, `the editor's chunk was fetched on opening the editor: ${scripts.map((s) => s.name)}`);
  assert.equal(code.encoding, 'br', 'a chunk comes precompressed');
  assert.equal(await page.locator('.editor-code-loading').count(), 0, 'the loading note is gone');
  await page.click('.editor-cancel');
  await page.waitForSelector('dialog.panel-editor', { state: 'detached' });

  await page.click('.edit-arrange');
  await page.waitForSelector('.dash-arrange .grid-stack-item .arrange-card[data-panel-id="b"]');
  assert.ok(scripts.some((s) => /^gridstack-\w+\.js$/.test(s.name)), `gridstack's chunk was fetched on Arrange: ${scripts.map((s) => s.name)}`);
  assert.deepEqual(page.errors, []);
});

test('a share link’s page has no editing', async () => {
  const id = await makeDashboard('Shared out', ['s']);
  const made = await api.post(`/api/dashboards/${id}/share`, {});
  const page = await newPage();
  await page.goto(`${server.url}/s/${made.token}`);
  await page.waitForSelector(`.app-shared .dashboard-view[data-dashboard-id="${id}"][data-mode="live"] .panel[data-status="ok"]`);
  assert.equal(await page.$('.dash-edit-toolbar'), null);
  assert.equal(await page.$('.panel-edit'), null);
  await page.click('.dash-title');
  assert.equal(await page.$('input.title-input'), null, 'a click on the title does not rename');
  await page.close();
});
