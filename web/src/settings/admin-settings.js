// `PUT /api/admin/settings` replaces every setting at once (the default model, the data fallback,
// the chat retention): a section that changes one of them sends the others as the server has
// them now, so saving one never clears another.

/** Saves `patch` over the settings in force; answers the server's SettingsView. */
export async function updateSettings(api, patch) {
  const current = await api.get('/api/admin/settings');
  return api.put('/api/admin/settings', { ...(current?.settings ?? {}), ...patch });
}
