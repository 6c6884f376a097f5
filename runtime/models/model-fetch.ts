import { Readable } from 'node:stream';
import type { Agent, Dispatcher } from 'undici';
import { loadUndici } from '../core/egress/index.ts';
import { wholeResponse } from './whole-response.ts';

/**
 * The HTTP client of the platform's model calls, handed to the AI SDK provider as its `fetch`: undici's `request` on a
 * keep-alive Agent of its own, its answer wrapped in a WHATWG Response. The AI SDK calls `fetch` once per model turn,
 * and Node's WHATWG fetch runs a request through the Fetch standard's whole algorithm and a web stream per body:
 * measured on loopback with a provider's answer (16 in flight, client and server in one process), 311–546 µs of CPU
 * per call through `fetch` against 115–186 µs through `request` — a tenth of an agent node's loop at the a2a-send load.
 *
 * What a provider sees is the same request. What the AI SDK sees is the same Response, with two differences that
 * cannot matter to a provider's API: redirects are not followed (a 3xx is handed on as it is, and the provider code
 * reports it as a failed call), and a whole answer (one with a content-length that is not an event stream) is read
 * before it is handed on, as one chunk, in a light Response (whole-response.ts). A stream is handed on as it arrives.
 * A connection failure is thrown as WHATWG fetch throws it (a TypeError "fetch failed" with the cause), so the AI SDK
 * still retries it; an abort throws the signal's reason.
 *
 * Only operator-configured endpoints and the node's own scripted model are called through it: a model endpoint a
 * tenant names goes through egress (DESIGN §5).
 */
export function modelFetch(): typeof fetch & { close(): Promise<void> } {
  // Made with the first model call (undici is loaded then, not at every node's start).
  let agent: Agent | undefined;

  const lean = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const body = init.body;
    // What the platform's providers never send (a Request object, a form or a stream body) takes WHATWG fetch.
    if (input instanceof Request || (body != null && typeof body !== 'string' && !(body instanceof Uint8Array))) return fetch(input, init);
    const undici = await loadUndici();
    agent ??= new undici.Agent({ keepAliveTimeout: 4_000, keepAliveMaxTimeout: 60_000 });
    const signal = init.signal ?? undefined;
    let res: Dispatcher.ResponseData;
    try {
      res = await undici.request(input, {
        dispatcher: agent,
        method: (init.method ?? 'GET') as never,
        headers: headersOf(init.headers),
        ...(body != null ? { body } : {}),
        ...(signal ? { signal } : {}),
      });
    } catch (err) {
      throw failure(err, signal);
    }
    const headers = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      if (Array.isArray(value)) for (const v of value) headers.append(name, v);
      else if (value !== undefined) headers.set(name, value);
    }
    const answer = { status: res.statusCode, headers };
    if (res.statusCode === 204 || res.statusCode === 205 || res.statusCode === 304 || init.method === 'HEAD') {
      res.body.resume();
      return new Response(null, answer);
    }
    const whole = headers.has('content-length') && !(headers.get('content-type') ?? '').includes('text/event-stream');
    if (!whole) return new Response(Readable.toWeb(res.body) as ReadableStream<Uint8Array>, answer);
    try {
      return wholeResponse(new Uint8Array(await res.body.arrayBuffer()), { ...answer, url: String(input) });
    } catch (err) {
      throw failure(err, signal);
    }
  };
  return Object.assign(lean as typeof fetch, {
    async close() {
      await agent?.close();
    },
  });
}

/** What fetch throws: the signal's reason after an abort, else a TypeError "fetch failed" with the cause. */
const failure = (err: unknown, signal: AbortSignal | undefined): unknown => (signal?.aborted ? signal.reason : new TypeError('fetch failed', { cause: err }));

/** Request headers as undici takes them (a plain object; a Headers or a list of pairs flattened into one). */
function headersOf(h: RequestInit["headers"]): Record<string, string> | undefined {
  if (h === undefined) return undefined;
  if (h instanceof Headers || Array.isArray(h)) return Object.fromEntries(h instanceof Headers ? h.entries() : h);
  return h as Record<string, string>;
}
