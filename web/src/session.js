// Who is signed in, as `GET /api/session` tells it: `{user: {id, username, displayName?, email?,
// role}, via: 'session'|'token'|'key', expiresAt?}`. main.js asks once per page load and hands
// the answer (a promise) to the parts that need it: the header's account menu and the settings
// page, whose admin sections (users, audit) are shown, and requested, for admins only. Pure
// reading of that answer; no requests here.

/** The roles a user can have, most powerful first. */
export const ROLES = ['admin', 'editor', 'viewer'];

/** An admin: may manage users and read the audit log. */
export function isAdmin(session) {
  return session?.user?.role === 'admin';
}

/**
 * The server runs with auth off (`--no-auth`): it answers for everyone as the owner by token,
 * with no session to end (no `expiresAt`, no `signedInWith`), so there is no account menu and
 * no sign-out. (A browser never sends the server token itself: the token link makes a session.)
 */
export function isAuthOff(session) {
  return session?.via === 'token' && session?.user?.id === 'owner' && session.expiresAt == null && session.signedInWith == null;
}

/** What to call a user: the display name, else the username. */
export function userLabel(user) {
  const name = typeof user?.displayName === 'string' ? user.displayName.trim() : '';
  return name || user?.username || '';
}
