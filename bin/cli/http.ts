import { lookup as dnsLookup } from 'node:dns';
import { Agent, request, type Dispatcher } from 'undici';

/**
 * Node's resolver (like many Linux resolvers) does not resolve `*.localhost`, though browsers and curl do (RFC 6761
 * reserves the name for loopback). The CLI's HTTP agent resolves `localhost` and every `*.localhost` to loopback
 * itself and leaves other names to the system resolver.
 */
export function localhostAwareLookup(hostname: string, options: object, callback: (...args: any[]) => void) {
  const h = hostname.toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost')) {
    const all = (options as { all?: boolean }).all;
    return all ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : callback(null, '127.0.0.1', 4);
  }
  return dnsLookup(hostname, options as never, callback as never);
}

export const cliAgent: Dispatcher = new Agent({ connect: { lookup: localhostAwareLookup as never } });

export interface HttpResult {
  status: number;
  json: any;
  text: string;
}

export async function httpJson(
  method: Dispatcher.HttpMethod,
  url: string,
  opts: { headers?: Record<string, string>; json?: unknown } = {},
): Promise<HttpResult> {
  const headers: Record<string, string> = { accept: 'application/json', ...opts.headers };
  if (opts.json !== undefined) headers['content-type'] = 'application/json';
  const res = await request(url, {
    method,
    headers,
    dispatcher: cliAgent,
    ...(opts.json !== undefined ? { body: JSON.stringify(opts.json) } : {}),
  });
  const text = await res.body.text();
  return { status: res.statusCode, json: parseJsonOrUndefined(text), text };
}

export function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The curl form that reaches a `*.localhost` host from any machine, whatever its resolver does. */
export function curlHint(url: string): string {
  const u = new URL(url);
  const port = u.port || (u.protocol === 'https:' ? '443' : '80');
  return u.hostname.endsWith('.localhost') ? `curl --resolve ${u.hostname}:${port}:127.0.0.1 ${url}` : `curl ${url}`;
}
