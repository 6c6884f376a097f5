import { egressFetch, type EgressOptions } from '../core/egress/index.ts';
import { isPlatformError } from '../core/errors/index.ts';
import type { ToolResult } from '../tools/index.ts';
import type { RestOperation } from './openapi-operations.ts';

/** The credentials of a connector, sealed at rest: headers for every request, and query parameters (an API key in the query). */
export interface ConnectorSecret {
  headers: Record<string, string>;
  query?: Record<string, string>;
}

/** How long one REST call may take, and the most of its answer that is read. */
const REST_TIMEOUT_MS = 30_000;
const REST_MAX_BYTES = 1024 * 1024;
/** The most of an error answer's body a tool error quotes. */
const QUOTED = 2_000;

type Scalar = string | number | boolean;
const isScalar = (v: unknown): v is Scalar => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
const refused = (message: string): ToolResult => ({ isError: true, kind: 'component-error', message, payload: message });

/** The request a call makes: the path filled in, the query and headers from the arguments, the body as JSON. */
export function restRequest(baseUrl: string, op: RestOperation, args: unknown, secret: ConnectorSecret | null): { url: URL; init: EgressOptions } | ToolResult {
  const a = (args && typeof args === 'object' && !Array.isArray(args) ? args : {}) as Record<string, unknown>;
  let path = op.path;
  const query = new URLSearchParams();
  const headers: Record<string, string> = { accept: 'application/json, text/plain;q=0.9, */*;q=0.5' };
  for (const p of op.params) {
    const v = a[p.arg];
    if (v === undefined || v === null) {
      if (p.in === 'path') return refused(`the argument ${p.arg} is required`);
      continue;
    }
    if (p.in === 'query' && Array.isArray(v) && v.every(isScalar)) {
      for (const x of v) query.append(p.name, String(x));
      continue;
    }
    if (!isScalar(v)) return refused(`the argument ${p.arg} must be a string, number or boolean`);
    if (p.in === 'path') path = path.split(`{${p.name}}`).join(encodeURIComponent(String(v)));
    else if (p.in === 'query') query.append(p.name, String(v));
    else if (/[\r\n\0]/.test(String(v))) return refused(`the argument ${p.arg} may not contain line breaks`);
    else headers[p.name.toLowerCase()] = String(v);
  }
  for (const [k, v] of Object.entries(secret?.query ?? {})) query.set(k, v);
  // The connector's credentials last: an argument cannot replace them.
  for (const [k, v] of Object.entries(secret?.headers ?? {})) headers[k.toLowerCase()] = v;
  const url = new URL(baseUrl.replace(/\/+$/, '') + path);
  for (const [k, v] of query) url.searchParams.append(k, v);
  const init: EgressOptions = { method: op.method, headers, maxBytes: REST_MAX_BYTES, timeoutMs: REST_TIMEOUT_MS };
  if (op.bodyArg !== null && a[op.bodyArg] !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(a[op.bodyArg]);
  }
  return { url, init };
}

/** Calls one operation through egress; an answer of 400 or more, or a failed request, is a tool error that says which. */
export async function callRestOperation(
  connector: string,
  baseUrl: string,
  op: RestOperation,
  args: unknown,
  secret: ConnectorSecret | null,
  egress: Pick<EgressOptions, 'allowLoopback' | 'ca' | 'resolve'>,
  signal?: AbortSignal,
): Promise<ToolResult> {
  const req = restRequest(baseUrl, op, args, secret);
  if (!('url' in req)) return req;
  let res;
  try {
    res = await egressFetch(req.url, { ...req.init, ...egress, ...(signal ? { signal } : {}) });
  } catch (err) {
    if (signal?.aborted) throw err;
    return { isError: true, kind: 'error', message: `the API of connector ${connector} failed: ${isPlatformError(err) ? err.message : (err as Error).message}` };
  }
  const type = String(res.headers['content-type'] ?? '');
  const text = res.body.toString('utf8');
  if (res.status >= 400) {
    const message = `${op.method} ${op.path} answered ${res.status}${text ? `: ${text.slice(0, QUOTED)}` : ''}`;
    return { isError: true, kind: 'component-error', message, payload: message };
  }
  if (/[/+]json\b/i.test(type) && text.length > 0) {
    try {
      return { isError: false, value: JSON.parse(text) };
    } catch {
      // Declared JSON that is not: given as the text it is.
    }
  }
  return { isError: false, value: text.length > 0 ? text : `${res.status}` };
}
