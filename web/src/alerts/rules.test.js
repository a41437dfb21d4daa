// Unit tests of alert rules and states in words (no DOM): node --test web/src/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  worstStatus, conditionWords, firingCount, badgeText, bellLabel, activeAlerts, statusLabel, panelRules, panelState,
  ruleLine, panelTooltip, notificationTitle, notificationValue, deliveryLines, notificationTags,
} from './rules.js';

test('a condition reads as words: comparisons, crossings, moves over a window, code', () => {
  assert.equal(conditionWords({ op: '>', value: 70000 }), '> 70000');
  assert.equal(conditionWords({ op: '<', value: 0.05 }), '< 0.05');
  assert.equal(conditionWords({ op: 'crosses_above', value: 10 }), 'crosses above 10');
  assert.equal(conditionWords({ op: 'crosses_below', value: -2.5 }), 'crosses below -2.5');
  assert.equal(conditionWords({ op: 'change_pct_over', value: 5, window: '24h' }), 'moves more than 5% over 24h');
  assert.equal(conditionWords({ op: 'change_pct_over', value: 5 }), 'moves more than 5% from the previous point');
  assert.equal(conditionWords({ op: '>', value: 3, field: 'close' }), 'close > 3');
  assert.equal(conditionWords('return { firing: data.length > 3 };'), 'code');
  assert.equal(conditionWords({ op: 'between', value: 1 }), 'between 1');
  assert.equal(conditionWords(null), 'unknown condition');
});

test('the worst state wins: firing over pending over ok; nothing known is unknown', () => {
  assert.equal(worstStatus(['ok', 'firing', 'pending']), 'firing');
  assert.equal(worstStatus(['ok', 'pending', 'ok']), 'pending');
  assert.equal(worstStatus(['ok']), 'ok');
  assert.equal(worstStatus([]), 'unknown');
  assert.equal(worstStatus(undefined), 'unknown');
  assert.equal(worstStatus(['weird', 'ok']), 'ok');
});

test('the bell counts firing alerts only; its badge and name say so', () => {
  const alerts = [{ status: 'firing' }, { status: 'pending' }, { status: 'firing' }, { status: 'ok' }];
  assert.equal(firingCount(alerts), 2);
  assert.equal(firingCount([]), 0);
  assert.equal(firingCount(null), 0);
  assert.equal(badgeText(0), '');
  assert.equal(badgeText(2), '2');
  assert.equal(badgeText(150), '99+');
  assert.equal(bellLabel(0), 'Alerts: none firing');
  assert.equal(bellLabel(1), 'Alerts: 1 firing');
  assert.equal(statusLabel('pending'), 'Pending');
  assert.equal(statusLabel('unknown'), 'Not judged yet');
});

test('active alerts: firing and pending only, firing first, then the most severe, then the newest', () => {
  const rows = [
    { ruleId: 'a', status: 'pending', severity: 'critical', since: 5 },
    { ruleId: 'b', status: 'firing', severity: 'info', since: 9 },
    { ruleId: 'c', status: 'ok', severity: 'critical', since: 1 },
    { ruleId: 'd', status: 'firing', severity: 'critical', since: 1 },
    { ruleId: 'e', status: 'firing', severity: 'info', since: 10 },
  ];
  assert.deepEqual(activeAlerts(rows).map((r) => r.ruleId), ['d', 'e', 'b', 'a']);
  assert.deepEqual(activeAlerts(undefined), []);
});

const rules = [
  { id: 'x-high', name: 'X above 3', panelId: 'x', when: { op: '>', value: 3 } },
  { id: 'x-code', name: 'X odd', panelId: 'x', when: 'return {firing: data.value % 2 === 1};', for: '5m', severity: 'critical' },
  { id: 'fan', name: 'Symbols up', panelId: 'y', when: { op: 'change_pct_over', value: 5, window: '24h' }, forEach: 'symbol' },
];

test('a panel’s rules carry their state from GET /api/alerts; fan-out values add up to the worst', () => {
  const views = [
    { ruleId: 'x-high', panelId: 'x', status: 'firing', since: 100, value: 5, evaluatedAt: 200, noData: false },
    { ruleId: 'x-code', panelId: 'x', status: 'ok', since: 0, evaluatedAt: 0, noData: false },
    { ruleId: 'fan', panelId: 'y', key: 'BTC', status: 'ok', since: 50, evaluatedAt: 60, noData: false },
    { ruleId: 'fan', panelId: 'y', key: 'ETH', status: 'pending', since: 55, value: 6.1, evaluatedAt: 60, noData: true, error: 'timeout' },
  ];
  const x = panelRules(rules, views, 'x');
  assert.deepEqual(x.map((r) => [r.id, r.status, r.words]), [['x-high', 'firing', '> 3'], ['x-code', 'unknown', 'code']]);
  assert.equal(x[0].value, 5);
  assert.equal(x[0].since, 100);
  assert.equal(x[1].hold, '5m');
  assert.equal(x[1].severity, 'critical');
  assert.equal(x[0].severity, 'warning');
  assert.equal(panelState(x), 'firing');

  const y = panelRules(rules, views, 'y');
  assert.equal(y.length, 1);
  assert.equal(y[0].status, 'pending');
  assert.equal(y[0].value, 6.1);
  assert.equal(y[0].noData, true);
  assert.equal(y[0].error, 'timeout');
  assert.deepEqual(y[0].keys, ['ETH']);
  assert.equal(panelState(y), 'pending');

  assert.deepEqual(panelRules(rules, views, 'z'), []);
  assert.equal(panelState([]), 'unknown');
  // Not loaded (or not allowed): the rules are there, their states unknown.
  assert.deepEqual(panelRules(rules, null, 'x').map((r) => r.status), ['unknown', 'unknown']);
  assert.equal(panelState(panelRules(rules, null, 'x')), 'unknown');
});

test('a panel’s rules in lines for the tooltip', () => {
  const [high, code] = panelRules(rules, [{ ruleId: 'x-high', panelId: 'x', status: 'firing', since: 1, value: 5, evaluatedAt: 2 }], 'x');
  assert.equal(ruleLine(high), 'X above 3: > 3 — Firing (5)');
  assert.equal(ruleLine(code), 'X odd: code for 5m — Not judged yet');
  assert.equal(panelTooltip([high, code]), '2 alert rules on this panel\nX above 3: > 3 — Firing (5)\nX odd: code for 5m — Not judged yet');
  const [fan] = panelRules(rules, [{ ruleId: 'fan', panelId: 'y', key: 'ETH', status: 'firing', since: 1, evaluatedAt: 2, noData: true }], 'y');
  assert.equal(ruleLine(fan), 'Symbols up: moves more than 5% over 24h — Firing for ETH, no data');
});

test('a notification reads as its transition, value and threshold, and what each channel did', () => {
  const n = {
    status: 'firing', ruleName: 'X above 3', key: 'BTC', value: 5, threshold: 3,
    notify: ['ops', 'desk', 'later'],
    deliveries: [
      { channel: 'ops', status: 'sent', attempts: 1, httpStatus: 200 },
      { channel: 'desk', status: 'failed', attempts: 3, httpStatus: 500 },
    ],
  };
  assert.equal(notificationTitle(n), 'Fired: X above 3 (BTC)');
  assert.equal(notificationTitle({ status: 'resolved', ruleName: 'Y' }), 'Resolved: Y');
  assert.equal(notificationValue(n), '5 (threshold 3)');
  assert.equal(notificationValue({ value: 5 }), '5');
  assert.equal(notificationValue({}), '');
  assert.deepEqual(deliveryLines(n), [
    { channel: 'ops', status: 'sent', text: 'ops: sent' },
    { channel: 'desk', status: 'failed', text: 'desk: failed after 3 attempts (HTTP 500)' },
    { channel: 'later', status: 'waiting', text: 'later: not sent yet' },
  ]);
  assert.deepEqual(deliveryLines({ deliveries: [{ channel: 'hook', status: 'failed', attempts: 1, error: 'refused' }] }),
    [{ channel: 'hook', status: 'failed', text: 'hook: failed (refused)' }]);
  assert.deepEqual(deliveryLines({}), []);
});

test('a notification’s tags: why it was not sent, then why it was made when not a plain change', () => {
  const words = (n) => notificationTags(n).map((t) => `${t.kind}:${t.text}`);
  assert.deepEqual(words({ reason: 'change' }), []);
  assert.deepEqual(words({}), []);
  assert.deepEqual(words({ reason: 'reminder' }), ['reason:reminder']);
  assert.deepEqual(words({ reason: 'flapping' }), ['reason:flapping']);
  assert.deepEqual(words({ reason: 'settled' }), ['reason:settled']);
  assert.deepEqual(words({ reason: 'change', muted: 'silenced' }), ['muted:silenced']);
  assert.deepEqual(words({ reason: 'change', muted: 'flapping' }), ['muted:flapping']);
  assert.deepEqual(words({ reason: 'change', muted: 'unchanged' }), ['muted:not sent: unchanged']);
  assert.deepEqual(words({ reason: 'reminder', muted: 'silenced' }), ['muted:silenced', 'reason:reminder']);
  assert.deepEqual(words({ reason: 'flapping', muted: 'flapping' }), ['muted:flapping'], 'said once');
  assert.deepEqual(words({ muted: 'later' }), ['muted:not sent: later'], 'an unknown one is still not sent');
  const [tag] = notificationTags({ muted: 'silenced', reason: 'change' });
  assert.equal(tag.value, 'silenced');
  assert.match(tag.title, /^Recorded, not sent: a silence/);
});

test('a muted notification’s channels were never to hear it: “not sent”, not “not sent yet”', () => {
  assert.deepEqual(deliveryLines({ muted: 'silenced', notify: ['desk'], deliveries: [] }),
    [{ channel: 'desk', status: 'muted', text: 'desk: not sent' }]);
  assert.deepEqual(deliveryLines({ notify: ['desk'], deliveries: [] }),
    [{ channel: 'desk', status: 'waiting', text: 'desk: not sent yet' }]);
});
