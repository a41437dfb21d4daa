// The chat list in the chat pane (a Preact component pane.js renders): a search box (the server
// searches titles and messages, `GET /api/chats?q=`, asked once typing pauses), the chats, each
// renamed in place (`PATCH /api/chats/{chatId}` {title}) or deleted after a confirm
// (`DELETE /api/chats/{chatId}`). pane.js owns the list's data and what a delete of the open chat
// does; chats.js has the rules.
//
// Test hooks: input.chat-search; ul.chat-list[data-query] > li.chat-item[data-chat-id]
// [aria-current] with .chat-item-open (.chat-item-name, .chat-item-time), .chat-rename,
// .chat-delete; while renaming, input.chat-rename-input (Enter saves, Escape cancels) and
// .chat-rename-error; .chat-list-empty.
import { html } from 'htm/preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { absoluteTime, relativeTime } from '../time.js';
import { chatTitle, checkTitle, debounce } from './chats.js';

const PENCIL = 'M10.5 3.5l2 2L6 12H4v-2zM9.5 4.5l2 2';
const BIN = 'M3 4.5h10M6.5 4.5V3h3v1.5M4.5 4.5l.6 8.5h5.8l.6-8.5';

function Icon({ d }) {
  return html`<svg viewBox="0 0 16 16" width="13" height="13" aria-hidden="true"><path d=${d} fill="none" stroke="currentColor" stroke-width="1.4" stroke-linejoin="round" stroke-linecap="round" /></svg>`;
}

function RenameField({ chat, onSave, onCancel }) {
  const [text, setText] = useState(chatTitle(chat));
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const input = useRef(null);
  const done = useRef(false);
  const saving = useRef(false);
  useEffect(() => {
    input.current?.focus();
    input.current?.select();
  }, []);
  const save = async () => {
    if (done.current || saving.current) return;
    const checked = checkTitle(text);
    if (checked.error) {
      setError(checked.error);
      return;
    }
    if (checked.title === chatTitle(chat)) {
      done.current = true;
      onCancel();
      return;
    }
    saving.current = true;
    setBusy(true);
    try {
      await onSave(checked.title);
      done.current = true;
    } catch (e) {
      setError(`Could not rename: ${e.message}`);
      setBusy(false);
    } finally {
      saving.current = false;
    }
  };
  const onKeyDown = (e) => {
    if (e.key === 'Enter' && !e.isComposing) {
      e.preventDefault();
      save();
    } else if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      done.current = true;
      onCancel();
    }
  };
  return html`<div class="chat-rename-field">
    <input class="chat-rename-input" type="text" value=${text} maxlength="240" disabled=${busy}
      aria-label="Chat name" aria-invalid=${error ? 'true' : null} ref=${input}
      onInput=${(e) => { setText(e.currentTarget.value); setError(''); }}
      onKeyDown=${onKeyDown} onBlur=${() => { if (!error) save(); }} />
    ${error ? html`<div class="chat-rename-error" role="alert">${error}</div>` : null}
  </div>`;
}

function ChatRow({ chat, current, editing, onOpen, onEdit, onRename, onDelete }) {
  const name = chatTitle(chat) || 'Untitled chat';
  return html`<li class="chat-item" data-chat-id=${chat.chatId} aria-current=${current ? 'true' : null} title=${chatTitle(chat)}>
    ${editing
      ? html`<${RenameField} chat=${chat} onSave=${(title) => onRename(chat.chatId, title).then(() => onEdit(null))} onCancel=${() => onEdit(null)} />`
      : html`<button type="button" class="chat-item-open" onClick=${() => onOpen(chat.chatId)}>
          <span class="chat-item-name">${name}</span>
          <span class="chat-item-time" title=${absoluteTime(chat.updatedAt)}>${relativeTime(chat.updatedAt)}</span>
        </button>
        <span class="chat-item-actions">
          <button type="button" class="chat-rename icon" title="Rename" aria-label=${`Rename ${name}`} onClick=${() => onEdit(chat.chatId)}><${Icon} d=${PENCIL} /></button>
          <button type="button" class="chat-delete icon" title="Delete" aria-label=${`Delete ${name}`} onClick=${() => onDelete(chat)}><${Icon} d=${BIN} /></button>
        </span>`}
  </li>`;
}

/**
 * Props: chats (rows of GET /api/chats), current (the open chat id), query (the text searched
 * for), onQuery(text) (called once typing pauses), onOpen(chatId), onRename(chatId, title) →
 * Promise, onDelete(chat) → Promise (after the confirm).
 */
export function ChatList({ chats, current, query, onQuery, onOpen, onRename, onDelete }) {
  const [editing, setEditing] = useState(null);
  const [text, setText] = useState(query ?? '');
  const [error, setError] = useState('');
  const search = useMemo(() => debounce((q) => onQuery(q), 250), []);
  useEffect(() => () => search.cancel(), []);
  const remove = async (chat) => {
    // eslint-disable-next-line no-alert
    if (!window.confirm(`Delete the chat “${chatTitle(chat) || 'Untitled chat'}”? Its messages are deleted for good.`)) return;
    setError('');
    try {
      await onDelete(chat);
    } catch (e) {
      setError(`Could not delete: ${e.message}`);
    }
  };
  const onKeyDown = (e) => {
    if (e.key === 'Enter') search.flush();
    if (e.key === 'Escape' && text) {
      e.preventDefault();
      e.stopPropagation();
      setText('');
      search('');
      search.flush();
    }
  };
  const q = (query ?? '').trim();
  return html`<div class="chat-list-box">
    <input class="chat-search" type="search" placeholder="Search chats" aria-label="Search chats" value=${text}
      onInput=${(e) => { setText(e.currentTarget.value); search(e.currentTarget.value); }} onKeyDown=${onKeyDown} />
    ${error ? html`<div class="chat-list-error" role="alert">${error}</div>` : null}
    <ul class="chat-list" aria-label="Chats" data-query=${q}>
      ${chats.length
        ? chats.map((c) => html`<${ChatRow} key=${c.chatId} chat=${c} current=${c.chatId === current} editing=${editing === c.chatId}
            onOpen=${onOpen} onEdit=${setEditing} onRename=${onRename} onDelete=${remove} />`)
        : html`<li class="chat-list-empty">${q ? `No chats match “${q}”` : 'No chats yet'}</li>`}
    </ul>
  </div>`;
}
