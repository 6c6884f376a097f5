import dns from 'node:dns';
import net from 'node:net';
import tls from 'node:tls';
import type { Agent, Dispatcher } from 'undici';
import { PlatformError } from '../errors/index.ts';
import { joinInSlices } from '../workers/index.ts';
import { isForbiddenAddress, isForbiddenName } from './ip-policy.mjs';

/** How long a request may take in all (connecting, the answer's head, its body), unless the caller says otherwise. */
export const EGRESS_TIMEOUT_MS = 10_000;
/** The largest response body read unless the caller says otherwise. */
export const EGRESS_MAX_BYTES = 1024 * 1024;

/** Name resolution: every address a name has (the system resolver, `dns.lookup`, unless a caller brings its own). */
export type EgressResolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

export interface EgressOptions {
  method?: Dispatcher.HttpMethod;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** The caller's abort (a client that left): the request stops and the signal's reason is thrown. */
  signal?: AbortSignal;
  /** The response body is read up to this many bytes; past them the request is aborted (EGRESS_TOO_LARGE). */
  maxBytes?: number;
  /** Deadline of the whole request, body included (EGRESS_TIMEOUT). */
  timeoutMs?: number;
  /**
   * Development and tests only (`PLATFORM_EGRESS_ALLOW_LOOPBACK`): loopback addresses are admitted, and plain http
   * to them. Every other private, link-local, metadata or reserved address stays refused.
   */
  allowLoopback?: boolean;
  /**
   * Certificate authorities (PEM) to trust instead of the system's (development and tests: a receiver with a
   * certificate of a test CA; the composition root passes the system's roots plus PLATFORM_EGRESS_EXTRA_CA_FILE).
   * Agents are shared per distinct `ca` string, so connections are reused across requests.
   */
  ca?: string;
  /** Replaces the system resolver (tests stand in for DNS with it); its answers are judged like the system's. */
  resolve?: EgressResolver;
}

export interface EgressResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The whole body, in a buffer of its own (the caller may move it to a worker thread). */
  body: Buffer;
}

const refused = (message: string) => new PlatformError('EGRESS_REFUSED', message);

const systemResolve: EgressResolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

const loopback = new net.BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/** 127.0.0.0/8 and ::1 (an IPv4-mapped IPv6 address is judged by its IPv4 address). */
export function isLoopbackAddress(address: string): boolean {
  const a = address.replace(/^\[|\]$/g, '').toLowerCase();
  const kind = net.isIP(a);
  return kind === 4 ? loopback.check(a, 'ipv4') : kind === 6 ? loopback.check(a, 'ipv6') : false;
}

const isLoopbackName = (host: string) => {
  const h = host.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost');
};

/** What one kind of connection may reach: `loopbackOnly` for plain http (development), else public addresses. */
interface Reach {
  allowLoopback: boolean;
  loopbackOnly: boolean;
}

const admitted = (address: string, reach: Reach) =>
  reach.loopbackOnly ? isLoopbackAddress(address) : !isForbiddenAddress(address) || (reach.allowLoopback && isLoopbackAddress(address));

const forbiddenMessage = (what: string, reach: Reach) =>
  reach.loopbackOnly
    ? `egress to ${what} is refused: plain http may only reach loopback addresses (development)`
    : `egress to ${what} is refused: loopback, private, link-local, metadata and reserved addresses are not reachable`;

/**
 * The URL a request may go to, or EGRESS_REFUSED: https (http only to loopback with the development switch), no
 * credentials in it, no forbidden literal address or name. The addresses a name resolves to are judged when the
 * connection is made (see `egressFetch`); this check alone does not make a URL safe.
 */
export function checkEgressUrl(target: string | URL, opts: { allowLoopback?: boolean } = {}): URL {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw refused('egress refused: not a valid absolute URL');
  }
  const allowLoopback = opts.allowLoopback === true;
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowLoopback)) {
    throw refused(`egress to ${url.protocol}// URLs is refused: only https is allowed`);
  }
  if (url.username || url.password) throw refused('egress refused: the URL carries credentials (user:password@); send them in a header');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const reach = reachOf(url, allowLoopback);
  if (net.isIP(host)) {
    if (!admitted(host, reach)) throw refused(forbiddenMessage(host, reach));
  } else if (isForbiddenName(host) && !(allowLoopback && isLoopbackName(host))) {
    throw refused(forbiddenMessage(host, reach));
  }
  return url;
}

const reachOf = (url: URL, allowLoopback: boolean): Reach => ({ allowLoopback, loopbackOnly: url.protocol === 'http:' });

/**
 * The resolver undici's connector hands to `net.connect`: it resolves the name once, refuses the connection if ANY
 * address is not admitted, and gives the connection exactly the addresses it vetted, so a second resolution (DNS
 * rebinding) cannot swap in another. TLS keeps the name for SNI and the certificate check; Host keeps the URL's.
 */
function guardedLookup(reach: Reach, resolve: EgressResolver): net.LookupFunction {
  return (hostname, options, callback) => {
    const cb = callback as (err: Error | null, address?: string | dns.LookupAddress[], family?: number) => void;
    resolve(hostname)
      .then((all) => {
        const addresses = options.family === 4 || options.family === 6 ? all.filter((a) => a.family === options.family) : all;
        if (addresses.length === 0) throw new PlatformError('EGRESS_FAILED', `${hostname} has no address`);
        const bad = addresses.find((a) => !admitted(a.address, reach));
        if (bad) throw refused(forbiddenMessage(`${hostname} (${bad.address})`, reach));
        if (options.all) cb(null, addresses);
        else cb(null, addresses[0]!.address, addresses[0]!.family);
      })
      .catch((err: Error) => cb(err));
  };
}

/**
 * One TLS context per set of trusted CAs. Given `ca` alone, every connection would build a context of its own and
 * parse the whole PEM bundle (the system's roots plus the extra CA) again: milliseconds of the node's thread per
 * connection, which a tenant whose receivers answer slowly (each callback a new connection) multiplies.
 */
const contexts = new Map<string, tls.SecureContext>();
function contextFor(ca: string): tls.SecureContext {
  let c = contexts.get(ca);
  if (!c) contexts.set(ca, (c = tls.createSecureContext({ ca })));
  return c;
}

/**
 * undici, loaded with the first outbound request: importing it is a tenth of a second of every node's start. The
 * model client (runtime/models/model-fetch.ts) loads it through here too.
 */
let undici: Promise<typeof import('undici')> | undefined;
export const loadUndici = () => (undici ??= import('undici'));

const agentOptions = (reach: Reach, resolve: EgressResolver, ca?: string): Agent.Options => ({
  connect: { lookup: guardedLookup(reach, resolve), timeout: EGRESS_TIMEOUT_MS, ...(ca ? { secureContext: contextFor(ca) } : {}) },
  // Connections are reused only for a short while: an idle one holds a vetted address, not a fresh answer.
  keepAliveTimeout: 4000,
  keepAliveMaxTimeout: 10_000,
});

/**
 * One Agent per kind of reach and trusted CAs, made on first use (the operator configures a handful of CA sets at
 * most); a caller with its own resolver gets an Agent of its own per request.
 */
const shared = new Map<string, Map<string, Agent>>();
function agentFor(AgentClass: typeof Agent, reach: Reach, ca: string | undefined): Agent {
  // Keyed by the CA bundle itself (the same string each call, so its hash is computed once), then by reach: a key
  // made by concatenating the bundle would copy it per request.
  let byReach = shared.get(ca ?? '');
  if (!byReach) shared.set(ca ?? '', (byReach = new Map()));
  const key = `${reach.allowLoopback}/${reach.loopbackOnly}`;
  let agent = byReach.get(key);
  if (!agent) byReach.set(key, (agent = new AgentClass(agentOptions(reach, systemResolve, ca))));
  return agent;
}

/**
 * The dispatcher a request to `url` goes through (its addresses vetted and pinned at connect time), for callers
 * that must stream a response (egress-stream.ts); `own` is set when it was made for this request alone.
 */
export async function egressDispatcher(target: string | URL, opts: Pick<EgressOptions, 'allowLoopback' | 'ca' | 'resolve'> = {}): Promise<{ url: URL; dispatcher: Dispatcher; own: Agent | null; undici: typeof import('undici') }> {
  const allowLoopback = opts.allowLoopback === true;
  const url = checkEgressUrl(target, { allowLoopback });
  const reach = reachOf(url, allowLoopback);
  const u = await loadUndici();
  const own = opts.resolve !== undefined ? new u.Agent(agentOptions(reach, opts.resolve, opts.ca)) : null;
  return { url, dispatcher: own ?? agentFor(u.Agent, reach, opts.ca), own, undici: u };
}

/** Stops reading a body and closes its connection (the abort it reports is expected, not an error). */
function discard(body: Dispatcher.ResponseData['body']) {
  body.on('error', () => {});
  body.destroy();
}

/** The whole body of a response, read up to `maxBytes`; past them the body is destroyed and EGRESS_TOO_LARGE thrown. */
async function readCapped(body: Dispatcher.ResponseData['body'], declared: number | null, maxBytes: number, origin: string): Promise<Buffer> {
  const tooLarge = () => new PlatformError('EGRESS_TOO_LARGE', `the response of ${origin} is larger than ${maxBytes} bytes, the limit here`);
  if (declared !== null && declared > maxBytes) {
    discard(body);
    throw tooLarge();
  }
  // A declared length gets its buffer at once, filled as chunks arrive (no join at the end); otherwise chunks are
  // kept and joined in slices (joinInSlices), so that no multi-megabyte copy holds the event loop.
  const out = declared !== null ? Buffer.allocUnsafeSlow(declared) : null;
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > maxBytes) {
      discard(body);
      throw tooLarge();
    }
    if (out) {
      if (total > out.length) throw new PlatformError('EGRESS_FAILED', `the response of ${origin} is longer than its content-length`);
      out.set(chunk, total - chunk.length);
    } else chunks.push(chunk);
  }
  if (out) {
    if (total !== out.length) throw new PlatformError('EGRESS_FAILED', `the response of ${origin} ended before its content-length`);
    return out;
  }
  return joinInSlices(chunks, total);
}

/**
 * The platform's one outbound HTTP client for work done on a tenant's behalf on the node's thread (attachment `url`
 * parts; push deliveries and connectors next). A request:
 * - goes to an https URL (http only to loopback with `allowLoopback`, development and tests), with no credentials in
 *   it and no forbidden literal address or name (checked before connecting);
 * - connects through an undici Agent whose lookup refuses the connection when any address of the name is forbidden,
 *   and pins the addresses it vetted (no DNS rebinding between the check and the connection);
 * - never uses a proxy (the Agent is explicit, proxy variables are not read) and never follows a redirect: a 3xx
 *   answer is EGRESS_REFUSED;
 * - has `timeoutMs` (10 s) for all of it, and its body is read up to `maxBytes` (1 MiB), aborted past them.
 * Other statuses are returned as they are. Failures are PlatformErrors: EGRESS_REFUSED, EGRESS_TOO_LARGE,
 * EGRESS_TIMEOUT, EGRESS_FAILED; the caller's own abort throws its signal's reason.
 */
export async function egressFetch(target: string | URL, opts: EgressOptions = {}): Promise<EgressResponse> {
  const allowLoopback = opts.allowLoopback === true;
  const url = checkEgressUrl(target, { allowLoopback });
  const reach = reachOf(url, allowLoopback);
  const timeoutMs = opts.timeoutMs ?? EGRESS_TIMEOUT_MS;
  const maxBytes = opts.maxBytes ?? EGRESS_MAX_BYTES;
  const { Agent: AgentClass, request } = await loadUndici();
  const own = opts.resolve !== undefined ? new AgentClass(agentOptions(reach, opts.resolve, opts.ca)) : null;
  const dispatcher = own ?? agentFor(AgentClass, reach, opts.ca);
  opts.signal?.throwIfAborted();
  const deadline = AbortSignal.timeout(timeoutMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, deadline]) : deadline;
  const origin = url.origin;
  try {
    const res = await request(url, {
      dispatcher,
      method: opts.method ?? 'GET',
      ...(opts.headers ? { headers: opts.headers } : {}),
      ...(opts.body !== undefined ? { body: opts.body } : {}),
      signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    if (res.statusCode >= 300 && res.statusCode < 400) {
      discard(res.body);
      throw refused(`${origin} answered ${res.statusCode} (a redirect): redirects are not followed`);
    }
    const length = res.headers['content-length'];
    const declared = typeof length === 'string' && /^\d{1,15}$/.test(length) ? Number(length) : null;
    const body = await readCapped(res.body, declared, maxBytes, origin);
    return { status: res.statusCode, headers: res.headers, body };
  } catch (err) {
    if (opts.signal?.aborted) throw opts.signal.reason;
    const found = platformErrorIn(err);
    if (found) throw found;
    const code = (err as { code?: string }).code ?? '';
    if (deadline.aborted || /^UND_ERR_(HEADERS|BODY|CONNECT)_TIMEOUT$/.test(code)) {
      throw new PlatformError('EGRESS_TIMEOUT', `${origin} did not answer within ${timeoutMs / 1000} s`, { cause: err });
    }
    throw new PlatformError('EGRESS_FAILED', `the request to ${origin} failed: ${describe(err)}`, { cause: err });
  } finally {
    if (own) void own.destroy().catch(() => {});
  }
}

/** Our own refusal, as thrown by the lookup (undici may wrap it). */
function platformErrorIn(err: unknown): PlatformError | null {
  for (let e = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof PlatformError) return e;
  }
  return null;
}

function describe(err: unknown): string {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const inner = e.cause?.code ?? e.code;
  const message = e.cause?.message ?? e.message ?? String(err);
  return inner && !message.includes(inner) ? `${inner}: ${message}` : message;
}
