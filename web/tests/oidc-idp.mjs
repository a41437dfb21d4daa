// A real OpenID Connect provider for the browser tests: `oidc-provider` (panva/node-oidc-provider,
// OpenID Certified) on 127.0.0.1, with one confidential client and a few accounts.
//
// Its login page is our own, minimal (the package's development pages load a web font from
// Google: a test may not reach any host but loopback): a username and password form, checked
// against ACCOUNTS. Consent is given without asking (the client is first-party), for exactly what
// the provider says is missing. PKCE is required of the client, and the client may only
// authenticate with client_secret_basic. ID tokens are RS256 with a key made per start and carry
// the profile claims themselves (conformIdTokenClaims: false), `groups` among them.
//
// startIdp({redirectUri}) → {issuer, authRequests, tokenRequests, close()}: `authRequests` are
// the query parameters of each authorization request (an object per request), `tokenRequests`
// `{authorization}` (the scheme of the Authorization header) of each token request.
import { createServer } from 'node:http';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import Provider from 'oidc-provider';

/**
 * The people the provider knows, by the name they type on its login page. `sub` differs from that
 * name on purpose: the server must take the username from `preferred_username` (else `email`).
 */
export const ACCOUNTS = {
  ann: {
    password: 'ann-password',
    claims: { sub: 'sub-1001', preferred_username: 'ann', email: 'ann@example.test', email_verified: true, name: 'Ann Example', groups: ['staff', 'bs-editors'] },
  },
  root: {
    password: 'root-password',
    // A single value, as a string: a role claim may be one.
    claims: { sub: 'sub-1002', preferred_username: 'root', email: 'root@example.test', email_verified: true, name: 'Root Admin', groups: 'bs-admins' },
  },
  nobody: {
    password: 'nobody-password',
    claims: { sub: 'sub-1003', preferred_username: 'nobody', email: 'nobody@example.test', email_verified: true, name: 'No Body', groups: ['contractors'] },
  },
  mail: {
    password: 'mail-password',
    // No preferred_username: the username is the email.
    claims: { sub: 'sub-1004', email: 'mail@example.test', email_verified: true, name: 'Mail Only', groups: ['staff'] },
  },
};

const html = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function loginPage(uid, { error = '', login = '' } = {}) {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Test IdP: sign in</title>
<style>body{font:15px system-ui,sans-serif;margin:3rem auto;max-width:22rem}form{display:grid;gap:.6rem}
input{padding:.4rem}.idp-error{color:#b00020}</style></head>
<body><h1>Test IdP</h1>
${error ? `<p class="idp-error" role="alert">${html(error)}</p>` : ''}
<form class="idp-login" method="post" action="/interaction/${html(uid)}/login">
<label>Username <input name="login" autocomplete="username" required autofocus value="${html(login)}"></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
<button type="submit" class="idp-submit">Sign in</button>
</form></body></html>`;
}

async function readForm(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/** Starts the provider on 127.0.0.1 (a free port) for one client whose redirect URI is `redirectUri`. */
export async function startIdp({ redirectUri, clientId = 'boardsmith', clientSecret = 'a-secret', accounts = ACCOUNTS }) {
  const authRequests = [];
  const tokenRequests = [];
  let provider;
  let callback;
  const bySub = new Map(Object.values(accounts).map((a) => [a.claims.sub, a]));

  async function interaction(req, res, uid, action) {
    const details = await provider.interactionDetails(req, res);
    if (details.uid !== uid) throw new Error('interaction mismatch');
    const { prompt, params, session } = details;
    if (prompt.name === 'login') {
      if (req.method === 'GET' && !action) {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
        res.end(loginPage(uid));
        return;
      }
      if (req.method === 'POST' && action === 'login') {
        const form = await readForm(req);
        const login = form.get('login') ?? '';
        const account = accounts[login];
        if (!account || account.password !== form.get('password')) {
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
          res.end(loginPage(uid, { error: 'Wrong username or password.', login }));
          return;
        }
        await provider.interactionFinished(req, res, { login: { accountId: account.claims.sub } }, { mergeWithLastSubmission: false });
        return;
      }
    }
    if (prompt.name === 'consent') {
      // First-party: grant what is missing without a page.
      const grant = details.grantId
        ? await provider.Grant.find(details.grantId)
        : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
      const missing = prompt.details;
      if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
      if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
      for (const [indicator, scope] of Object.entries(missing.missingResourceScopes ?? {})) {
        grant.addResourceScope(indicator, scope.join(' '));
      }
      const grantId = await grant.save();
      await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
      return;
    }
    res.writeHead(400, { 'content-type': 'text/plain' });
    res.end(`unexpected prompt ${prompt.name}`);
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url, 'http://idp.invalid');
    if (url.pathname === '/auth') authRequests.push(Object.fromEntries(url.searchParams));
    if (url.pathname === '/token' && req.method === 'POST') {
      tokenRequests.push({ authorization: (req.headers.authorization ?? '').split(' ')[0] });
    }
    if (url.pathname === '/favicon.ico') {
      // Chromium asks for one; a 404 would be logged on the page as an error.
      res.writeHead(204);
      res.end();
      return;
    }
    const m = url.pathname.match(/^\/interaction\/([^/]+)(?:\/(login))?$/);
    if (m) {
      interaction(req, res, m[1], m[2]).catch((e) => {
        if (!res.headersSent) res.writeHead(400, { 'content-type': 'text/plain' });
        res.end(`interaction failed: ${e.message}`);
      });
      return;
    }
    callback(req, res);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${server.address().port}`;

  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: randomBytes(6).toString('hex'), alg: 'RS256', use: 'sig' };

  provider = new Provider(issuer, {
    clients: [{
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: 'RS256',
    }],
    jwks: { keys: [jwk] },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    pkce: { required: () => true },
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600 },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (ctx, i) => `/interaction/${i.uid}` },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name', 'preferred_username', 'groups'],
    },
    // The scopes' claims in the ID token itself, not only from the userinfo endpoint.
    conformIdTokenClaims: false,
    async findAccount(ctx, sub) {
      const account = bySub.get(sub);
      if (!account) return undefined;
      return { accountId: sub, claims: async () => ({ ...account.claims }) };
    },
  });
  callback = provider.callback();

  return {
    issuer,
    authRequests,
    tokenRequests,
    close: () => new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
