// The page's entry. A share link's path (`/s/{token}`) gets the read-only page for visitors
// without an account (shared.js): no session is asked for, no sign-in screen, no sidebar, chat
// or settings. Every other path gets the signed-in app (app.js). Only the one chosen is run.
import './styles.css';
import { shareToken } from './dashboard/links.js';

const token = shareToken(location.pathname);
if (token !== null) {
  import('./shared.js').then((m) => m.startSharedPage(document.getElementById('app'), token));
} else {
  import('./app.js');
}
