// The chat pane. Placeholder until the pane lands.
export function createChatPane(el) {
  el.textContent = 'chat';
  return { openChat() {} };
}
