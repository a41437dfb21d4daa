// Unit tests of silences in words (no DOM): node --test web/src/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DURATIONS, covers, coveringSilences, silenceScope, untilText, silencedText, silenceAuthor, silenceTitle, silenceBody,
  mergeSilence, maySilence,
} from './silences.js';

const H = 3_600_000;
const now = new Date(2026, 2, 3, 12, 0).getTime(); // Tue 3 Mar 2026, 12:00 local
const rule = { dashboardId: 'db_a', ruleId: 'x-high' };
const fan = { dashboardId: 'db_a', ruleId: 'up', key: 'BTC' };
const s = (over) => ({ id: 'si_1', dashboardId: 'db_a', startsAt: now - H, endsAt: now + H, comment: '', createdBy: {}, ...over });

test('a silence covers its dashboard’s alerts, its rule’s, its value’s, while it lasts — the server’s rule', () => {
  assert.equal(covers(s({ ruleId: 'x-high' }), rule, now), true);
  assert.equal(covers(s({}), rule, now), true, 'no rule named: the whole dashboard');
  assert.equal(covers(s({ ruleId: 'other' }), rule, now), false);
  assert.equal(covers(s({ dashboardId: 'db_b', ruleId: 'x-high' }), rule, now), false);
  assert.equal(covers(s({ ruleId: 'up' }), fan, now), true, 'the rule’s: every value');
  assert.equal(covers(s({ ruleId: 'up', key: 'BTC' }), fan, now), true);
  assert.equal(covers(s({ ruleId: 'up', key: 'ETH' }), fan, now), false);
  assert.equal(covers(s({ ruleId: 'up', key: 'BTC' }), { dashboardId: 'db_a', ruleId: 'up' }, now), false,
    'one value’s silence does not silence the whole rule');
  assert.equal(covers(s({ ruleId: 'x-high', endsAt: now }), rule, now), false, 'ends at endsAt');
  assert.equal(covers(s({ ruleId: 'x-high', startsAt: now + 500 }), rule, now), true,
    'just made on a server whose clock runs ahead: a silence all the same');
  assert.equal(covers(null, rule, now), false);
});

test('the silences covering an alert, the one ending last first', () => {
  const list = [
    s({ id: 'si_a', ruleId: 'x-high', endsAt: now + H }),
    s({ id: 'si_b', endsAt: now + 4 * H }),
    s({ id: 'si_c', ruleId: 'x-high', endsAt: now - 1 }),
    s({ id: 'si_d', ruleId: 'y' }),
  ];
  assert.deepEqual(coveringSilences(list, rule, now).map((x) => x.id), ['si_b', 'si_a']);
  assert.deepEqual(coveringSilences(null, rule, now), []);
});

test('“until” as a trading screen says it: the clock today, the weekday this week, the date later', () => {
  assert.equal(untilText(new Date(2026, 2, 3, 14, 5).getTime(), now), '14:05');
  assert.equal(untilText(new Date(2026, 2, 3, 9, 7).getTime(), now), '09:07');
  assert.equal(untilText(new Date(2026, 2, 4, 0, 30).getTime(), now), 'Wed 00:30');
  assert.equal(untilText(new Date(2026, 2, 9, 23, 59).getTime(), now), 'Mon 23:59');
  assert.equal(untilText(new Date(2026, 2, 10, 8, 0).getTime(), now), '10 Mar 08:00');
  assert.equal(untilText(new Date(2026, 1, 28, 8, 0).getTime(), now), '28 Feb 08:00', 'a past day: its date');
  assert.equal(untilText(NaN, now), '');
});

test('“Silenced until” names how far the silence reaches beyond the alert', () => {
  const endsAt = new Date(2026, 2, 3, 13, 0).getTime();
  assert.equal(silencedText(s({ ruleId: 'x-high', endsAt }), rule, now), 'Silenced until 13:00');
  assert.equal(silencedText(s({ endsAt }), rule, now), 'Silenced until 13:00 (whole dashboard)');
  assert.equal(silencedText(s({ ruleId: 'up', endsAt }), fan, now), 'Silenced until 13:00 (every value)');
  assert.equal(silencedText(s({ ruleId: 'up', key: 'BTC', endsAt }), fan, now), 'Silenced until 13:00');
  assert.equal(silenceScope(s({ ruleId: 'up' }), { dashboardId: 'db_a', ruleId: 'up' }), '');
});

test('a silence’s tooltip says who made it and why', () => {
  assert.equal(silenceAuthor(s({ createdBy: { userId: 'u1', username: 'eddie' } })), 'eddie');
  assert.equal(silenceAuthor(s({ createdBy: { keyId: 'k1' } })), 'an API key');
  assert.equal(silenceAuthor(s({ createdBy: { token: true } })), 'the server token');
  assert.equal(silenceAuthor({}), 'someone');
  const title = silenceTitle(s({ ruleId: 'x-high', comment: ' FOMC ', createdBy: { username: 'eddie' } }), rule);
  assert.match(title, /^Recorded but not sent until .+; silenced by eddie — “FOMC”$/);
  assert.match(silenceTitle(s({}), rule), /^Every alert of this dashboard is recorded but not sent until .+; silenced by someone$/);
});

test('the POST body: the alert, a key only for a fan-out value, a comment only when given', () => {
  assert.deepEqual(DURATIONS, ['1h', '4h', '24h']);
  assert.deepEqual(silenceBody(rule, '1h', ''), { dashboardId: 'db_a', ruleId: 'x-high', duration: '1h' });
  assert.deepEqual(silenceBody({ ...rule, key: undefined }, '4h', '   '), { dashboardId: 'db_a', ruleId: 'x-high', duration: '4h' });
  assert.deepEqual(silenceBody(fan, '24h', ' FOMC at 14:00 '),
    { dashboardId: 'db_a', ruleId: 'up', key: 'BTC', duration: '24h', comment: 'FOMC at 14:00' });
});

test('a silence made or ended joins the list in place, newest first', () => {
  const a = s({ id: 'si_a', startsAt: 1 });
  const b = s({ id: 'si_b', startsAt: 2 });
  assert.deepEqual(mergeSilence([a], b).map((x) => x.id), ['si_b', 'si_a']);
  const ended = { ...a, endsAt: 5 };
  const merged = mergeSilence([b, a], ended);
  assert.deepEqual(merged.map((x) => [x.id, x.endsAt]), [['si_b', b.endsAt], ['si_a', 5]]);
  assert.deepEqual(mergeSilence(null, a), [a]);
});

test('editors and admins may silence, viewers not; without a session answer the server decides', () => {
  assert.equal(maySilence({ user: { role: 'admin' } }), true);
  assert.equal(maySilence({ user: { role: 'editor' } }), true);
  assert.equal(maySilence({ user: { role: 'viewer' } }), false);
  assert.equal(maySilence(null), true);
});
