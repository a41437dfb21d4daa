// The sign-in screen, shown when the server answers 401 (no session cookie yet, or the server's
// token changed). Its form is a plain GET to `/?token=…`: the server checks the token, sets its
// HttpOnly session cookie and redirects back to `/`, so the token never stays in the URL and no
// script ever holds it.
//
// Test hook: `.signin[data-open]` while shown.

let shown = false;

/** Shows the sign-in screen over the app (once; later 401s while it is up are ignored). */
export function showSignIn() {
  if (shown) return;
  shown = true;
  const box = document.createElement('div');
  box.className = 'signin';
  box.dataset.open = '';
  box.setAttribute('role', 'dialog');
  box.setAttribute('aria-modal', 'true');
  box.setAttribute('aria-labelledby', 'signin-title');
  box.innerHTML = `
    <form class="signin-card" method="get" action="/">
      <h2 id="signin-title">Sign in to Boardsmith</h2>
      <p>This server needs its token. Open the sign-in link it printed when it started
      (<code>boardsmith token</code> prints it again), or paste the token here.</p>
      <label>Token <input name="token" autocomplete="off" spellcheck="false" required></label>
      <button type="submit">Sign in</button>
    </form>`;
  document.body.append(box);
  box.querySelector('input').focus();
}
