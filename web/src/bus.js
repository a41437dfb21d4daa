// The one channel between the app's parts (chat pane, dashboard view, list, theme), so none of
// them imports another.
//
// Events:
//   'dashboard:open'     {dashboardId}      show this dashboard (chat's dashboard.update, the list)
//   'dashboard:opened'   {dashboardId|null} the view now shows it (list highlights it, URL follows)
//   'dashboards:changed' {}                 something was created/saved/deleted: reload lists
//   'alerts:changed'     {notification}     an alert fired or resolved (pushed over /ws): the
//                                           bell asks again
//   'silences:changed'   {silence, from}    a silence was made or ended (alerts/silencing.js
//                                           in the bell or a panel's indicator, `from`): the
//                                           other one puts it in its list
//   'dashboard:panels'   {dashboardId, title, panels: [{id, title}]}  the view's dashboard's
//                                           titles, on load and when they change (the chat
//                                           names failing panels by title)
//   'theme:changed'      {theme}            'light' | 'dark'; charts re-theme
//   'chat:opened'        {chatId|null}      the chat pane now shows this chat (URL follows)
//   'data:health'        {offline, fallback, canChange, providers}  a new GET /api/sdk/health
//                                           answer (datahealth.js); panels and settings follow
//   'settings:open'      {section?}         open the settings page (at 'providers', ...)
//   'reports:open'       {dashboardId?}     open the Reports page (the list's Reports button;
//                                           a new report starts on that dashboard)
//   'prefs:changed'      {key, value}       a preference of this browser changed (prefs.js)
//   'draft:changed'      {dashboardId?, drafted?}  a run ended or a tool result made a draft
//                                           (drafted: one surely was): the review banner asks
//   'draft:review'       {dashboardId}      open that dashboard's review sheet
//   'chats:review'       {any}              whether any of this person's chats is in review mode

const handlers = new Map();

export const bus = {
  on(type, fn) {
    if (!handlers.has(type)) handlers.set(type, new Set());
    handlers.get(type).add(fn);
    return () => handlers.get(type).delete(fn);
  },
  emit(type, detail = {}) {
    for (const fn of handlers.get(type) ?? []) {
      try {
        fn(detail);
      } catch (e) {
        console.error(`bus handler for ${type} failed`, e);
      }
    }
  },
};
