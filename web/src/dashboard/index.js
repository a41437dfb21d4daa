// Dashboards: the list (sidebar) and the live view. Placeholder until the view lands.
export function createDashboardList(el, { api }) {
  const ready = api.get('/api/dashboards').then((items) => {
    el.innerHTML = '';
    for (const d of items) {
      const a = document.createElement('a');
      a.href = `#d=${d.id}`;
      a.textContent = d.title;
      el.append(a);
    }
    return items;
  });
  return { ready };
}

export function createDashboardView(el, { bus }) {
  let id = null;
  return {
    open(dashboardId) {
      id = dashboardId;
      el.textContent = dashboardId;
      bus.emit('dashboard:opened', { dashboardId });
    },
    current: () => id,
  };
}
