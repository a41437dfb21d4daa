// Who may do what with a dashboard, read from `GET /api/dashboards/{id}/access`
// (`{owner?, ownerName?, visibility: 'private'|'team', users: [{userId, role: 'view'|'edit'}],
// canChange}`) and the signed-in person (`GET /api/session`), and the share dialog's draft of a
// new access. Pure: no requests, no DOM. The server decides; this only spares the user buttons
// it would refuse.
import { userLabel } from '../session.js';

/** The visibilities, with the words the dialog shows for them. */
export const VISIBILITIES = [
  { value: 'private', label: 'Only people below' },
  { value: 'team', label: 'Everyone on the team' },
];

/** What a share lets its person do. */
export const SHARE_ROLES = [
  { value: 'view', label: 'Can view' },
  { value: 'edit', label: 'Can edit' },
];

/**
 * Whether the signed-in person may change the dashboard (save, delete, restore a version): an
 * admin always, a viewer never, anyone else when they own it or it is shared with them to edit.
 * With no session answer (no accounts) or no access answer, true: the server has the last word.
 */
export function canEdit(access, session) {
  const user = session?.user;
  if (!user) return true;
  if (user.role === 'viewer') return false;
  if (user.role === 'admin' || !access) return true;
  if (access.owner && access.owner === user.id) return true;
  return (access.users ?? []).some((s) => s.userId === user.id && s.role === 'edit');
}

/** The signed-in person writes nothing at all (their role): no new dashboards, no copies. */
export function readsOnly(session) {
  return session?.user?.role === 'viewer';
}

/** The sentence naming the owner, from the point of view of `session`'s person. */
export function ownerLine(access, session) {
  if (!access?.owner) return 'Made before accounts: only admins see it.';
  if (access.owner === session?.user?.id) return 'You own this dashboard.';
  return `Owned by ${access.ownerName || access.owner}.`;
}

/** A draft the dialog edits: a copy of the access's visibility and shares. */
export function draftOf(access) {
  return {
    visibility: access?.visibility === 'team' ? 'team' : 'private',
    users: (access?.users ?? []).map((s) => ({ userId: s.userId, role: s.role === 'edit' ? 'edit' : 'view' })),
  };
}

/** The `PUT /api/dashboards/{id}/access` body for a draft. */
export function accessBody(draft) {
  return { visibility: draft.visibility, users: draft.users.map(({ userId, role }) => ({ userId, role })) };
}

/** Whether the draft says something other than the access it started from. */
export function isChanged(access, draft) {
  return JSON.stringify(accessBody(draftOf(access))) !== JSON.stringify(accessBody(draft));
}

/**
 * The people the "Add person" picker offers: everyone in the directory but the owner and those
 * the draft already lists, by name.
 */
export function candidates(people, access, draft) {
  const listed = new Set(draft.users.map((s) => s.userId));
  return (people ?? [])
    .filter((p) => p.id !== access?.owner && !listed.has(p.id))
    .sort((a, b) => userLabel(a).localeCompare(userLabel(b)));
}
