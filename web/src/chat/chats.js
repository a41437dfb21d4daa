// Managing the chat list: the search request, a rename's title rules (the server's: 1 to 120
// characters, trimmed, no control characters), the list after a rename or a delete, and the
// debounce that turns typing into one search. Pure; chatlist.js draws the list.

export const MAX_TITLE_CHARS = 120;

/**
 * The name a chat goes by: its `title` (a rename's, else its first message), else the short
 * `chatName` older servers send alone.
 */
export function chatTitle(c) {
  return (typeof c?.title === 'string' && c.title.trim()) || c?.chatName || '';
}

/** `GET /api/chats`, with `?q=` when there is text to search for. */
export function chatsPath(query) {
  const q = typeof query === 'string' ? query.trim() : '';
  return q ? `/api/chats?q=${encodeURIComponent(q)}` : '/api/chats';
}

/** A rename's title, trimmed, or {error} saying why it cannot be one. */
export function checkTitle(text) {
  const title = String(text ?? '').trim();
  const n = [...title].length;
  if (!n) return { error: 'A chat needs a name.' };
  if (n > MAX_TITLE_CHARS) return { error: `At most ${MAX_TITLE_CHARS} characters (this is ${n}).` };
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f]/.test(title)) return { error: 'No line breaks or control characters.' };
  return { title };
}

/** The list with `row` (the server's answer to a PATCH) in place of the chat it names. */
export function withRow(chats, row) {
  if (!row?.chatId) return chats;
  return chats.map((c) => (c.chatId === row.chatId ? { ...c, ...row } : c));
}

/** The list without chat `chatId`. */
export function withoutChat(chats, chatId) {
  return chats.filter((c) => c.chatId !== chatId);
}

/** Newest first, by `updatedAt`. */
export function sortChats(chats) {
  return [...chats].sort((a, b) => (b.updatedAt ?? 0) - (a.updatedAt ?? 0));
}

/**
 * `fn` called once, `ms` after the last of a burst of calls, with that call's arguments;
 * `.flush()` runs a pending call now, `.cancel()` drops it.
 */
export function debounce(fn, ms, timers = globalThis) {
  let timer = null;
  let args = null;
  const run = () => {
    timer = null;
    const a = args;
    args = null;
    fn(...a);
  };
  const call = (...a) => {
    args = a;
    if (timer !== null) timers.clearTimeout(timer);
    timer = timers.setTimeout(run, ms);
  };
  call.flush = () => {
    if (timer === null) return;
    timers.clearTimeout(timer);
    run();
  };
  call.cancel = () => {
    if (timer !== null) timers.clearTimeout(timer);
    timer = null;
    args = null;
  };
  return call;
}
