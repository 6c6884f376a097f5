import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import { cliAgent } from './http-agent.ts';
import { parseJsonOrUndefined } from './http.ts';
import { CommandError } from './output.ts';

/**
 * A small A2A 1.0 client for the CLI (spec §4.3): plain JSON-RPC 2.0 over POST `/` with a bearer credential, and the
 * SSE frames of the streaming methods (one `data:` line per frame, each a whole JSON-RPC response). Failures become
 * CommandErrors: a JSON-RPC error keeps its code and message; a transport refusal (401, 403, 404) says what to fix.
 */

export interface A2aTarget {
  /** The agent gateway's origin, e.g. `http://agent-demo.localhost:8080`. */
  url: string;
  /** A service principal's API key (`ak-…`) or an agent token. */
  credential: string;
}

export interface RpcError {
  code: number;
  message: string;
  data?: { reason?: string; metadata?: Record<string, string> }[];
}

export interface RpcResponse {
  jsonrpc: '2.0';
  id: string | number | null;
  result?: any;
  error?: RpcError;
}

/** A JSON-RPC error as the CLI reports it: the code (as text, e.g. "-32002") and the message, with the reason. */
export function rpcError(e: RpcError): CommandError {
  const reason = e.data?.[0]?.reason;
  return new CommandError(String(e.code), `${e.message} [JSON-RPC ${e.code}${reason ? ` ${reason}` : ''}]`);
}

const HINT = "use a service principal's API key, or an agent token from `platform admin agent token` (--key or PLATFORM_AGENT_KEY)";

/** A response that is not a JSON-RPC answer: what the gateway said, and what the caller can do about it. */
function httpError(url: string, status: number, text: string): CommandError {
  const body = parseJsonOrUndefined(text) as RpcResponse | undefined;
  const said = body?.error?.message;
  const code = body?.error?.data?.[0]?.metadata?.code;
  if (status === 401) return new CommandError(code ?? 'A2A_UNAUTHENTICATED', `the agent gateway did not accept the credential (HTTP 401${said ? `: ${said}` : ''}); ${HINT}`);
  if (status === 403) return new CommandError(code ?? 'A2A_FORBIDDEN', `the agent gateway refused the call (HTTP 403${said ? `: ${said}` : ''})`);
  if (status === 404) return new CommandError(code ?? 'A2A_NOT_FOUND', `${said ?? `nothing at ${url}`} (HTTP 404): check the agent's handle (\`platform agents list\`) or --url`);
  return new CommandError(code ?? `HTTP_${status}`, `the agent gateway answered HTTP ${status}${said ? `: ${said}` : ''}`);
}

async function post(target: A2aTarget, method: string, params: unknown, accept: string) {
  const id = randomUUID();
  try {
    const res = await request(target.url.replace(/\/+$/, '') + '/', {
      method: 'POST',
      dispatcher: cliAgent,
      headers: { authorization: `Bearer ${target.credential}`, 'content-type': 'application/json', accept, 'a2a-version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    });
    return { res, id };
  } catch (err) {
    const why = (err as { code?: string }).code ?? (err as Error).message;
    throw new CommandError('A2A_UNREACHABLE', `cannot reach the agent gateway at ${target.url} (${why}): is the node running? (its URL comes from PORT, PLATFORM_PUBLIC_PORT and PLATFORM_DOMAIN, or --url)`);
  }
}

/** One non-streaming call; its `result`, or the JSON-RPC error thrown as a CommandError. */
export async function a2aCall<T = any>(target: A2aTarget, method: string, params: unknown): Promise<T> {
  const { res } = await post(target, method, params, 'application/json');
  const text = await res.body.text();
  if (res.statusCode !== 200) throw httpError(target.url, res.statusCode, text);
  const body = parseJsonOrUndefined(text) as RpcResponse | undefined;
  if (!body || typeof body !== 'object') throw new CommandError('A2A_BAD_RESPONSE', `the agent gateway answered something that is not JSON-RPC: ${text.slice(0, 200)}`);
  if (body.error) throw rpcError(body.error);
  return body.result as T;
}

/**
 * The blocks of an SSE body as they arrive: each yields the `data:` lines of one frame joined by newlines (comments,
 * event names and ids are skipped, as a stream may carry them).
 */
export async function* sseData(chunks: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buf = '';
  function* frames(final: boolean): Generator<string> {
    for (;;) {
      const m = /\r?\n\r?\n/.exec(buf);
      if (!m && (!final || buf.trim() === '')) return;
      const block = m ? buf.slice(0, m.index) : buf;
      buf = m ? buf.slice(m.index + m[0].length) : '';
      const data = block
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(l.startsWith('data: ') ? 6 : 5));
      if (data.length) yield data.join('\n');
    }
  }
  for await (const chunk of chunks) {
    buf += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    yield* frames(false);
  }
  buf += decoder.decode();
  yield* frames(true);
}

/**
 * A streaming call (SendStreamingMessage, SubscribeToTask): each frame's JSON-RPC response as it arrives. A refusal
 * before the first frame (a plain JSON answer) is thrown; an `error` frame is yielded like any other, for the
 * caller to show and then throw (rpcError).
 */
export async function* a2aStream(target: A2aTarget, method: string, params: unknown): AsyncGenerator<RpcResponse> {
  const { res } = await post(target, method, params, 'text/event-stream');
  const type = String(res.headers['content-type'] ?? '');
  if (res.statusCode !== 200) throw httpError(target.url, res.statusCode, await res.body.text());
  if (!type.startsWith('text/event-stream')) {
    const text = await res.body.text();
    const body = parseJsonOrUndefined(text) as RpcResponse | undefined;
    if (body?.error) throw rpcError(body.error);
    if (body && 'result' in body) {
      yield body;
      return;
    }
    throw new CommandError('A2A_BAD_RESPONSE', `the agent gateway answered ${type || 'an untyped body'}, not an event stream: ${text.slice(0, 200)}`);
  }
  try {
    for await (const data of sseData(res.body)) {
      const frame = parseJsonOrUndefined(data) as RpcResponse | undefined;
      if (!frame || typeof frame !== 'object') throw new CommandError('A2A_BAD_RESPONSE', `a stream frame is not JSON: ${data.slice(0, 200)}`);
      yield frame;
    }
  } finally {
    // Leaving early (an error frame, Ctrl-C) closes the connection, and the gateway stops the work nobody waits for.
    if (!res.body.readableEnded) res.body.destroy();
  }
}

/** The text of a message's or an artifact's parts (other parts are named, not shown). */
export const textOf = (parts: { text?: string; url?: string; filename?: string; data?: unknown }[] | undefined): string =>
  (parts ?? []).map((p) => (typeof p.text === 'string' ? p.text : p.url ? `[${p.filename ?? 'file'}: ${p.url}]` : p.data !== undefined ? JSON.stringify(p.data) : `[${p.filename ?? 'file'}]`)).join('');

/**
 * What of an artifact's text a terminal has not seen yet: chunks with `append` add to it; a frame without `append`
 * (the first chunk, or the `lastChunk` with the whole answer) replaces it, and only the part past what was already
 * shown is new. `revised` says the replacement does not continue what was shown (it cannot be taken back).
 */
export function artifactDelta(shown: string, text: string, append: boolean): { full: string; delta: string; revised: boolean } {
  if (append) return { full: shown + text, delta: text, revised: false };
  if (text.startsWith(shown)) return { full: text, delta: text.slice(shown.length), revised: false };
  return { full: text, delta: text, revised: true };
}
