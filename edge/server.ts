import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyServerFactory } from 'fastify';
import type { Logger } from 'pino';
import { createGatewayOAuth, defaultAutonomyPolicy, type Services } from '../runtime/index.ts';
import { routeHost, type HostRoute } from './http/index.ts';
import { managementApp } from './management/index.ts';
import { createMcpAdmission, createMcpApp, createMcpGuards, registerMcpOAuthRoutes } from './mcp/index.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export interface EdgeServer {
  server: http.Server;
  /** The base URL this node listens on (loopback form, for local clients). */
  localUrl: string;
  port: number;
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

function plainNotFound(req: IncomingMessage, res: ServerResponse, message: string) {
  // The body is read and dropped, so the connection stays usable for the client's next request.
  req.resume();
  res.writeHead(404, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify({ category: 'not_found', code: 'EDGE_UNKNOWN_HOST', message }));
}

export interface Listener {
  server: http.Server;
  port: number;
  /** Loopback URL of this node (what a local CLI or launcher uses). */
  url: string;
  attach(handler: Handler): void;
}

/**
 * Binds the port before anything else exists, so that with port 0 the real port is known when public URLs (and the
 * token issuer) are derived. Requests that arrive before the apps are attached get a 503.
 */
export async function listen(port: number, host: string): Promise<Listener> {
  let handler: Handler = (_req, res) => {
    res.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'retry-after': '1' });
    res.end(JSON.stringify({ category: 'unavailable', code: 'EDGE_STARTING', message: 'the node is starting' }));
  };
  const server = http.createServer((req, res) => handler(req, res));
  // A slow client cannot hold a socket for long before sending its headers.
  server.headersTimeout = 30_000;
  server.requestTimeout = 300_000;
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  return { server, port: bound, url: `http://127.0.0.1:${bound}`, attach: (h) => (handler = h) };
}

export async function startEdge(opts: { listener: Listener; services: Services; logger: Logger; operatorToken: string; graceMs: number }): Promise<EdgeServer> {
  const state = { draining: false };
  const mgmt = capture();
  const management = await managementApp({ services: opts.services, logger: opts.logger, serverFactory: mgmt.factory, operatorToken: opts.operatorToken, state });
  const managementHandler = mgmt.handler();
  const { domain } = opts.services.config;
  const s = opts.services;
  const mcpCapture = capture();
  const mcp = await createMcpApp({
    services: s,
    logger: opts.logger,
    serverFactory: mcpCapture.factory,
    admit: createMcpAdmission({ store: s.store, tokens: s.gatewayTokens, now: () => s.clock.now(), bus: s.bus }),
    guards: createMcpGuards({ billing: s.billing, limiter: s.mcpLimiter }),
    registry: s.toolRegistry,
    policy: defaultAutonomyPolicy,
    registerOAuthRoutes: (app) => registerMcpOAuthRoutes(app, { services: s, oauth: createGatewayOAuth({ store: s.store, tokens: s.gatewayTokens, now: () => s.clock.now() }) }),
  });
  const mcpHandler = mcpCapture.handler();

  // The agent gateway mounts here when it ships; until then its hosts answer like unknown hosts.
  const dispatch = (route: HostRoute, req: IncomingMessage, res: ServerResponse) => {
    if (route.surface === 'management') return managementHandler(req, res);
    if (route.surface === 'mcp') return mcpHandler(req, res);
    return plainNotFound(req, res, `no service at host ${JSON.stringify(req.headers.host ?? '')}`);
  };

  const { server, port } = opts.listener;
  opts.listener.attach((req, res) => dispatch(routeHost(req.headers.host, domain), req, res));

  return {
    server,
    port,
    localUrl: `http://127.0.0.1:${port}`,
    async close() {
      state.draining = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const grace = new Promise<void>((resolve) => setTimeout(resolve, opts.graceMs).unref());
      await Promise.race([closed, grace]);
      server.closeAllConnections();
      await closed;
      await management.close();
      await mcp.close();
    },
  };
}
