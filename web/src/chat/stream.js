// POST /api/query as a Server-Sent Events stream read from fetch's body (EventSource cannot POST).
// Refusals arrive before the stream as `{code, msg}` envelopes and become a QueryError. When the
// connection drops before a terminal event, the same request is sent again with `Last-Event-ID`
// so the server replays what was missed (it keeps a run's events for a while).
import { createParser } from 'eventsource-parser';
import { showSignIn } from '../signin.js';

const TERMINAL = new Set(['run.complete', 'run.error', 'run.cancel']);

/** The server refused the query (`status` is the HTTP status; 0 when unreachable). */
export class QueryError extends Error {
  constructor(status, message) {
    super(message);
    this.name = 'QueryError';
    this.status = status;
  }
}

/**
 * Streams a query. `onEvent(event)` gets each parsed event object. Resolves when the stream ends
 * ({terminal: bool}); rejects with QueryError on a refusal, with an AbortError when `signal`
 * aborts.
 */
export async function streamQuery(body, { onEvent, signal, retries = 3 }) {
  let lastId = null;
  let terminal = false;
  let attempt = 0;
  for (;;) {
    const headers = { 'content-type': 'application/json', accept: 'text/event-stream' };
    if (lastId) headers['last-event-id'] = lastId;
    let res;
    try {
      res = await fetch('/api/query', { method: 'POST', headers, body: JSON.stringify(body), signal });
    } catch (e) {
      if (signal?.aborted) throw e;
      if (lastId && attempt < retries) {
        attempt++;
        await sleep(400 * attempt, signal);
        continue;
      }
      throw new QueryError(0, `server unreachable: ${e.message}`);
    }
    const type = res.headers.get('content-type') || '';
    if (!res.ok || !type.includes('text/event-stream')) {
      if (res.status === 401) showSignIn();
      let msg = `HTTP ${res.status}`;
      try {
        const env = await res.json();
        msg = env.msg || msg;
      } catch {
        /* not an envelope */
      }
      throw new QueryError(res.status, msg);
    }
    const parser = createParser({
      onEvent(ev) {
        if (ev.id) lastId = ev.id;
        if (!ev.data) return;
        let data;
        try {
          data = JSON.parse(ev.data);
        } catch {
          return;
        }
        if (!data.type && ev.event) data.type = ev.event;
        if (TERMINAL.has(data.type)) terminal = true;
        onEvent(data);
      },
    });
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.feed(value);
      }
    } catch (e) {
      if (signal?.aborted) throw e;
      // The connection broke: resume below.
    }
    if (terminal || !lastId || attempt >= retries) return { terminal };
    attempt++;
    await sleep(300 * attempt, signal);
  }
}

function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      reject(new DOMException('aborted', 'AbortError'));
    }, { once: true });
  });
}
