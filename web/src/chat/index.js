// The chat pane: createChatPane(el, {api, bus}) → {openChat(chatId)}. See pane.js.
export { createChatPane } from './pane.js';
