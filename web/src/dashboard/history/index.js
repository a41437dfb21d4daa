// Reading a dashboard's history and reviewing the agent's drafts, mounted beside the live view:
// one sheet over the dashboard pane (sheet.js) shows an opened version or a comparison
// (versions.js) or the draft (review.js, which also puts its toggle and banner on the view).
import './history.css';
import { createSheet } from './sheet.js';
import { createVersionSheets } from './versions.js';
import { createReview } from './review.js';

/** `pane` is the dashboard pane (`.app-dashboard`), `viewEl` the live view's `.dashboard-view`. */
export function createHistory(pane, viewEl, { api, bus }) {
  const sheet = createSheet(pane);
  const versions = createVersionSheets({ sheet, api, bus });
  const review = createReview({ sheet, viewEl, api, bus });
  return { sheet, versions, review };
}
