// Unit tests of the Reports page's pure rules (no DOM): node --test web/src/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  browserTimezone, deliveryWords, emptyForm, formOf, reportBody, runResult, runStatusWords, sizeText, titlesById, toggleChannel,
} from './rules.js';

const view = {
  id: 'rp_1', dashboardId: 'db_1', name: 'Morning pack', cron: '0 7 * * 1-5', timezone: 'Europe/London', format: 'png',
  notify: ['desk'], paused: true, schedule: 'At 07:00, on Monday…', nextRunAt: 1,
};

test('the browser’s zone is the default, UTC when it cannot say', () => {
  assert.equal(browserTimezone({ DateTimeFormat: () => ({ resolvedOptions: () => ({ timeZone: 'Asia/Tokyo' }) }) }), 'Asia/Tokyo');
  assert.equal(browserTimezone({ DateTimeFormat: () => ({ resolvedOptions: () => ({}) }) }), 'UTC');
  assert.equal(browserTimezone({ DateTimeFormat: () => { throw new Error('no'); } }), 'UTC');
  assert.equal(browserTimezone(undefined), 'UTC');
  assert.deepEqual(emptyForm({ dashboardId: 'db_9', timezone: 'Asia/Tokyo' }),
    { dashboardId: 'db_9', name: '', cron: '', timezone: 'Asia/Tokyo', format: 'pdf', notify: [], paused: false });
});

test('an existing report’s form gives back the body it was made with', () => {
  const form = formOf(view);
  assert.deepEqual(form, { dashboardId: 'db_1', name: 'Morning pack', cron: '0 7 * * 1-5', timezone: 'Europe/London', format: 'png', notify: ['desk'], paused: true });
  assert.deepEqual(reportBody(form).body,
    { dashboardId: 'db_1', name: 'Morning pack', cron: '0 7 * * 1-5', timezone: 'Europe/London', format: 'png', notify: ['desk'], paused: true });
  form.notify.push('x');
  assert.deepEqual(view.notify, ['desk'], 'the form has its own list');
});

test('a dashboard and a schedule are asked for here; blank name and zone are left to the server', () => {
  assert.equal(reportBody(emptyForm()).error.param, 'dashboardId');
  assert.equal(reportBody({ ...emptyForm({ dashboardId: 'd' }), cron: '  ' }).error.param, 'cron');
  const { body } = reportBody({ ...emptyForm({ dashboardId: 'd', timezone: ' ' }), cron: ' @daily ', name: ' ' });
  assert.deepEqual(body, { dashboardId: 'd', cron: '@daily', format: 'pdf', notify: [], paused: false });
});

test('channels are ticked in the channels’ order', () => {
  const order = ['a', 'b', 'c'];
  assert.deepEqual(toggleChannel(['c'], 'a', true, order), ['a', 'c']);
  assert.deepEqual(toggleChannel(['a', 'c'], 'a', false, order), ['c']);
  assert.deepEqual(toggleChannel(['gone'], 'b', true, order), ['b', 'gone']);
});

test('runs, deliveries and sizes in words', () => {
  assert.equal(sizeText(812), '812 B');
  assert.equal(sizeText(49284), '49.3 kB');
  assert.equal(sizeText(2_300_000), '2.3 MB');
  assert.equal(sizeText(undefined), '');
  assert.equal(runStatusWords('partial'), 'Partly sent');
  assert.equal(deliveryWords({ channel: 'desk', status: 'sent', httpStatus: 200 }), 'desk: sent (HTTP 200)');
  assert.equal(deliveryWords({ channel: 'mail', status: 'failed', error: 'no mail relay is configured' }), 'mail: failed — no mail relay is configured');
  assert.deepEqual(runResult({ status: 'sent', deliveries: [{ channel: 'desk', status: 'sent' }] }), { status: 'sent', text: 'Sent to desk' });
  assert.deepEqual(runResult({ status: 'partial', deliveries: [{ channel: 'desk', status: 'sent' }, { channel: 'mail', status: 'failed', error: 'no relay' }] }),
    { status: 'partial', text: 'Sent to desk; not to mail (no relay)' });
  assert.deepEqual(runResult({ status: 'failed', error: 'render failed' }), { status: 'failed', text: 'render failed' });
});

test('dashboard titles by id, deleted ones left out', () => {
  const m = titlesById([{ id: 'a', title: 'A' }, { id: 'b', title: 'B', deleted: true }]);
  assert.equal(m.get('a'), 'A');
  assert.equal(m.has('b'), false);
});
