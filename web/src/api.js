// The server's REST API. Every response is the `{code, msg, data}` envelope: `data` on success,
// an `ApiError` carrying the HTTP status and the server's message otherwise. A 401 (not signed
// in) also brings up the sign-in screen, except through `publicApi` (a share link's page, whose
// visitor has no account).
import { showSignIn } from './signin.js';

/** A failed API call: `status` is the HTTP status (0 when the server was unreachable). */
export class ApiError extends Error {
  constructor(status, message, data) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.data = data;
  }
}

async function call(method, path, body, signIn = true) {
  let res;
  try {
    res = await fetch(path, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    throw new ApiError(0, `server unreachable: ${e.message}`);
  }
  let envelope;
  try {
    envelope = await res.json();
  } catch {
    throw new ApiError(res.status, `${method} ${path}: HTTP ${res.status} with a body that is not JSON`);
  }
  if (res.status === 401 && signIn) showSignIn();
  if (!res.ok || envelope.code !== 0) {
    throw new ApiError(res.status, envelope.msg || `HTTP ${res.status}`, envelope.data);
  }
  return envelope.data;
}

/**
 * Uploads an image (a File or Blob) as the raw body with its own type: POST /api/uploads →
 * `{id, mimeType, sizeBytes, sha256, name}`.
 */
async function upload(file) {
  let res;
  try {
    const name = encodeURIComponent(file.name || '');
    res = await fetch(`/api/uploads?name=${name}`, { method: 'POST', headers: { 'content-type': file.type }, body: file });
  } catch (e) {
    throw new ApiError(0, `server unreachable: ${e.message}`);
  }
  let envelope = null;
  try {
    envelope = await res.json();
  } catch {
    /* not JSON */
  }
  if (res.status === 401) showSignIn();
  if (!res.ok || envelope?.code !== 0) {
    throw new ApiError(res.status, envelope?.msg || `HTTP ${res.status}`, envelope?.data);
  }
  return envelope.data;
}

/** `api.get('/api/dashboards')` → the envelope's `data`. */
export const api = {
  get: (path) => call('GET', path),
  post: (path, body = {}) => call('POST', path, body),
  put: (path, body) => call('PUT', path, body),
  patch: (path, body) => call('PATCH', path, body),
  del: (path) => call('DELETE', path),
  upload,
};

/** The same calls for a page without an account (a share link's): a 401 is only an error. */
export const publicApi = {
  get: (path) => call('GET', path, undefined, false),
};
