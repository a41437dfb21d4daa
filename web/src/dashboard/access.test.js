// Unit tests of reading a dashboard's access and the share dialog's draft (no DOM): node --test web/src/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { accessBody, canEdit, candidates, draftOf, isChanged, ownerLine, readsOnly } from './access.js';

const session = (id, role) => ({ user: { id, username: id, role }, via: 'session' });
const access = {
  owner: 'u_ann', ownerName: 'ann', visibility: 'private',
  users: [{ userId: 'u_bob', role: 'view' }, { userId: 'u_cy', role: 'edit' }], canChange: false,
};

test('the owner and an admin edit; a view share, the team and a viewer only look', () => {
  assert.equal(canEdit(access, session('u_ann', 'editor')), true, 'owner');
  assert.equal(canEdit(access, session('u_root', 'admin')), true, 'admin');
  assert.equal(canEdit(access, session('u_cy', 'editor')), true, 'edit share');
  assert.equal(canEdit(access, session('u_bob', 'editor')), false, 'view share');
  assert.equal(canEdit({ ...access, visibility: 'team' }, session('u_dee', 'editor')), false, 'team, no share');
  assert.equal(canEdit(access, session('u_cy', 'viewer')), false, 'an edit share does not lift a viewer');
  assert.equal(canEdit(access, session('u_ann', 'viewer')), false, 'nor ownership');
});

test('with no access or no session answer the buttons stay: the server decides', () => {
  assert.equal(canEdit(null, session('u_bob', 'editor')), true);
  assert.equal(canEdit(access, null), true);
  assert.equal(canEdit(null, session('u_bob', 'viewer')), false, 'a viewer still writes nothing');
  assert.equal(canEdit({ visibility: 'private', users: [] }, session('u_bob', 'editor')), false, 'no owner: admins only');
});

test('only a viewer reads only', () => {
  assert.equal(readsOnly(session('u', 'viewer')), true);
  assert.equal(readsOnly(session('u', 'editor')), false);
  assert.equal(readsOnly(null), false);
});

test('the owner is named from the reader’s point of view', () => {
  assert.equal(ownerLine(access, session('u_bob', 'editor')), 'Owned by ann.');
  assert.equal(ownerLine(access, session('u_ann', 'editor')), 'You own this dashboard.');
  assert.equal(ownerLine({ ...access, ownerName: undefined }, null), 'Owned by u_ann.');
  assert.equal(ownerLine({ visibility: 'private', users: [] }, null), 'Made before accounts: only admins see it.');
});

test('a draft copies the access and becomes the PUT body', () => {
  const draft = draftOf(access);
  assert.deepEqual(accessBody(draft), { visibility: 'private', users: [{ userId: 'u_bob', role: 'view' }, { userId: 'u_cy', role: 'edit' }] });
  assert.equal(isChanged(access, draft), false);
  draft.users[0].role = 'edit';
  assert.equal(isChanged(access, draft), true);
  assert.equal(access.users[0].role, 'view', 'the access itself is not touched');
  assert.deepEqual(draftOf(undefined), { visibility: 'private', users: [] });
  assert.deepEqual(draftOf({ visibility: 'odd', users: [{ userId: 'u', role: 'admin' }] }), { visibility: 'private', users: [{ userId: 'u', role: 'view' }] });
});

test('the picker offers everyone but the owner and those listed, by name', () => {
  const people = [
    { id: 'u_zed', username: 'zed' }, { id: 'u_ann', username: 'ann' }, { id: 'u_bob', username: 'bob' },
    { id: 'u_al', username: 'al', displayName: 'Alan' }, { id: 'u_cy', username: 'cy' },
  ];
  const draft = draftOf(access);
  assert.deepEqual(candidates(people, access, draft).map((p) => p.id), ['u_al', 'u_zed']);
  draft.users = draft.users.filter((s) => s.userId !== 'u_bob');
  assert.deepEqual(candidates(people, access, draft).map((p) => p.id), ['u_al', 'u_bob', 'u_zed']);
  assert.deepEqual(candidates(undefined, access, draft), []);
});
