import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyServerFactory } from 'fastify';
import type { Logger } from 'pino';
import { ERRORS, NEXT_REQUEST_US, type Services, type Surface } from '../runtime/index.ts';
import { compileAhead, countRefusals, installConnectionGuard, routeHost, type CompileStats, type HostRoute } from './http/index.ts';
import { managementApp, MANAGEMENT_SERVICES, METRICS_PATH } from './management/index.ts';
import { mcpSurface, MCP_SERVICES } from './mcp/index.ts';
import { a2aSurface, A2A_SERVICES, type A2aBackend } from './a2a/index.ts';
import type { TlsCredentials } from './tls-credentials.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** The metrics' name of the part that answers a Host (a fixed set: never the Host itself, which names a tenant's). */
const SURFACE_OF: Record<HostRoute['surface'], Surface> = { management: 'management', mcp: 'mcp', agent: 'a2a', unknown: 'edge' };

/**
 * Prometheus scrapes every node at its own address and cannot set a Host header, so `/metrics` is answered by the
 * management app at a Host that names no surface too (a node's IP or host name). It stays the operator's: the
 * route's own check admits the request or refuses it.
 */
function scrapeAtAnyHost(route: HostRoute, url: string | undefined): HostRoute {
  if (route.surface !== 'unknown' || !url?.startsWith(METRICS_PATH)) return route;
  const path = url.split('?', 1)[0];
  return path === METRICS_PATH ? { surface: 'management' } : route;
}

const pick = <T, K extends keyof T>(o: T, keys: readonly K[]): Pick<T, K> => Object.fromEntries(keys.map((k) => [k, o[k]])) as Pick<T, K>;

export interface EdgeServer {
  server: http.Server;
  /** The base URL this node listens on (loopback form, for local clients). */
  localUrl: string;
  port: number;
  /** Settles once the routes' schemas have all been compiled in the background; null with PLATFORM_COMPILE_AHEAD=false. */
  compiled: Promise<CompileStats | null>;
  /** Stops taking requests, lets those in flight finish (up to the grace period), then closes the apps. */
  close(): Promise<void>;
}

/** A fastify app built on a handler instead of its own socket: one server, one port, routed by Host. */
function capture(): { factory: FastifyServerFactory; handler: () => Handler } {
  let h: Handler | undefined;
  return {
    factory: (handler) => {
      h = handler as Handler;
      return http.createServer();
    },
    handler: () => h!,
  };
}

const edgeBody = (category: string, code: string, message: string) => JSON.stringify({ category, code, message });

/** An error written straight to a socket (before any request object exists), in the platform's JSON form. */
function rawError(status: number, category: string, code: string, message: string, headers: Record<string, string> = {}): string {
  const body = edgeBody(category, code, message);
  const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  return `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}connection: close\r\n\r\n${body}`;
}

function edgeError(req: IncomingMessage, res: ServerResponse, status: number, category: string, code: string, message: string) {
  // The body is read and dropped, so the connection stays usable for the client's next request.
  req.resume();
  const body = edgeBody(category, code, message);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** Two Host headers make the surface ambiguous (Node keeps the first): such a request is refused, never routed. */
function hostCount(req: IncomingMessage): number {
  let n = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.length === 4 && req.rawHeaders[i]!.toLowerCase() === 'host') n++;
  return n;
}

export interface Listener {
  /** An https.Server when the node serves TLS (the same HTTP server API over TLS sockets). */
  server: http.Server;
  port: number;
  /** Loopback URL of this node (what a local CLI or launcher uses): https when it serves TLS. */
  url: string;
  attach(handler: Handler): void;
}

export interface ConnectionLimits {
  /** Open connections one remote address may hold (0: no cap). */
  maxConnectionsPerAddress: number;
  /** Queued output a client takes none of for this long gets its socket reset (0: never). */
  writeTimeoutMs: number;
  /** How often the write timeout is checked (default: derived from the timeout; tests set it small). */
  sweepMs?: number;
}

/**
 * Binds the port before anything else exists, so that with port 0 the real port is known when public URLs (and the
 * token issuer) are derived. Requests that arrive before the apps are attached get a 503.
 */
export async function listen(port: number, host: string, limits: ConnectionLimits, logger?: Logger, tls?: Pick<TlsCredentials, 'cert' | 'key'>): Promise<Listener> {
  let handler: Handler = (_req, res) => {
    res.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'retry-after': '1' });
    res.end(JSON.stringify({ category: 'unavailable', code: 'EDGE_STARTING', message: 'the node is starting' }));
  };
  const serve: Handler = (req, res) => handler(req, res);
  // With a certificate the one port speaks HTTPS only (docs/https.md: why there is no plain-HTTP redirect). The
  // handshake gets the same bound as the headers that follow it.
  const server: http.Server = tls ? https.createServer({ cert: tls.cert, key: tls.key, handshakeTimeout: 30_000 }, serve) : http.createServer(serve);
  // Requests Node's parser refuses (malformed, headers past 16 KiB, a timeout) get the platform's JSON error too.
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    // Plain HTTP sent to the HTTPS port: no TLS session exists to answer in, so the answer goes to the TCP socket
    // under the TLS one in plain text (as nginx does), and the client learns why instead of reading an empty reply.
    const plain = err.code === 'ERR_SSL_HTTP_REQUEST' ? (socket as { _parent?: Duplex | null })._parent : null;
    if (plain?.writable) return void plain.end(rawError(400, 'invalid_request', 'EDGE_BAD_REQUEST', 'this port serves HTTPS: send the request to the https:// URL'));
    // A failed handshake (the client refused the certificate, spoke no TLS, timed out) has no session to answer in.
    if (err.code === 'ECONNRESET' || !socket.writable || /^ERR_(SSL|TLS)_/.test(err.code ?? '')) return socket.destroy();
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const reason = status === 431 ? 'the request line and headers are larger than 16 KiB' : status === 408 ? 'the request did not arrive in time' : 'the HTTP request could not be parsed';
    socket.end(rawError(status, 'invalid_request', 'EDGE_BAD_REQUEST', reason));
  });
  // A slow client cannot hold a socket for long before sending its headers.
  server.headersTimeout = 30_000;
  server.requestTimeout = 300_000;
  server.keepAliveTimeout = 5_000;
  // Nor can one address hold every socket, or a client that never reads pin its answer in memory.
  const cap = limits.maxConnectionsPerAddress;
  installConnectionGuard(server, {
    maxPerAddress: cap,
    writeTimeoutMs: limits.writeTimeoutMs,
    sweepMs: limits.sweepMs,
    // Refused before any handshake: over TLS a plain-text answer would only garble the client's handshake, so the
    // connection is just closed.
    refusal: tls ? '' : rawError(503, 'overloaded', 'EDGE_TOO_MANY_CONNECTIONS', `${ERRORS.EDGE_TOO_MANY_CONNECTIONS.message} (at most ${cap})`, { 'retry-after': '1' }),
    logger,
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  return { server, port: bound, url: `${tls ? 'https' : 'http'}://127.0.0.1:${bound}`, attach: (h) => (handler = h) };
}

export async function startEdge(opts: {
  listener: Listener;
  services: Services;
  logger: Logger;
  operatorToken: string;
  graceMs: number;
  /** The agent runtime behind the agent gateways; without it they serve cards but answer task methods -32004. */
  a2aBackend?: A2aBackend;
}): Promise<EdgeServer> {
  const state = { draining: false };
  const s = opts.services;
  // Each surface gets only the services it uses.
  // The routes' schemas compile in the background once the node serves (compile-ahead.ts), unless turned off.
  const ahead = s.config.compileAhead ? compileAhead() : undefined;
  const later = ahead ? { compileAhead: ahead } : {};
  const mgmt = capture();
  const management = await managementApp({ services: pick(s, MANAGEMENT_SERVICES), logger: opts.logger, serverFactory: mgmt.factory, operatorToken: opts.operatorToken, state, ...later });
  const managementHandler = mgmt.handler();
  const { domain } = s.config;
  const mcpCapture = capture();
  const mcp = await mcpSurface(pick(s, MCP_SERVICES), { logger: opts.logger, serverFactory: mcpCapture.factory, ...later });
  const mcpHandler = mcpCapture.handler();
  const a2aCapture = capture();
  const a2a = await a2aSurface(pick(s, A2A_SERVICES), { logger: opts.logger, serverFactory: a2aCapture.factory, ...later, ...(opts.a2aBackend ? { backend: opts.a2aBackend } : {}) });
  const a2aHandler = a2aCapture.handler();

  const dispatch = (route: HostRoute, req: IncomingMessage, res: ServerResponse) => {
    if (route.surface === 'management') return managementHandler(req, res);
    if (route.surface === 'mcp') return mcpHandler(req, res);
    if (route.surface === 'agent') return a2aHandler(req, res);
    return edgeError(req, res, 404, 'not_found', 'EDGE_UNKNOWN_HOST', `no service at host ${JSON.stringify(req.headers.host ?? '')}`);
  };

  const { server, port } = opts.listener;
  const { http: requests } = s.metrics;
  s.metrics.observe({ refusals: countRefusals(server) });
  opts.listener.attach((req, res) => {
    // A client that sent a request on a connection mostly sends the next as soon as it has the answer: the loop polls
    // for it instead of sleeping (hot-loop.ts), while it has time to spare.
    s.hotLoop.expect(NEXT_REQUEST_US);
    if (hostCount(req) > 1) {
      requests.track('edge', req, res);
      return edgeError(req, res, 400, 'invalid_request', 'EDGE_BAD_REQUEST', 'the request has more than one Host header');
    }
    const route = scrapeAtAnyHost(routeHost(req.headers.host, domain), req.url);
    requests.track(SURFACE_OF[route.surface], req, res);
    return dispatch(route, req, res);
  });
  const compiled = ahead ? ahead.start() : Promise.resolve(null);
  void compiled.then((stats) => stats && opts.logger.debug({ ...stats, longestMs: Math.round(stats.longestMs) }, 'route schemas compiled ahead'));

  return {
    server,
    port,
    localUrl: opts.listener.url,
    compiled,
    async close() {
      ahead?.stop();
      state.draining = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const grace = new Promise<void>((resolve) => setTimeout(resolve, opts.graceMs).unref());
      await Promise.race([closed, grace]);
      server.closeAllConnections();
      await closed;
      await management.close();
      await mcp.close();
      await a2a.close();
    },
  };
}
