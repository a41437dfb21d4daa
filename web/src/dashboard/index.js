// Dashboards: the sidebar list and the live view (see list.js and view.js).
import './dashboard.css';

export { createDashboardList } from './list.js';
export { createDashboardView } from './view.js';
