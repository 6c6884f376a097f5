import { randomBytes, randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerFactory } from 'fastify';
import type { Logger } from 'pino';
import type { AutonomyPolicy, Services, ToolRegistry } from '../../runtime/index.ts';
import { awaitRouteCompiles, INLINE_BYTES, lazyCompilers, MAX_DEPTH, MAX_VALUES, parseInTaskPool, parseJsonBody, requestId, restoreLifted, routeHost, type CompileAhead, type ParsedBody, type ParsedInWorker } from '../http/index.ts';
import type { McpAdmit, McpGatewayContext, McpGuards } from './context.ts';
import { httpErrorOf, MCP_HTTP_ERRORS, McpHttpError, RPC, RpcError } from './errors.ts';
import { handleRpc } from './rpc.ts';
import { readEnvelope } from './schemas.ts';
import { BODY_LIMIT, isKnown, isModern, REQUEST_TIMEOUT_MS, SESSION_TTL_MS } from './protocol.ts';
import { createToolMethods } from './methods.ts';
import { isPlatformError, SUBJECTS, ttlCache } from '../../runtime/index.ts';
import type { McpSessionRecord } from '../../store/index.ts';

declare module 'fastify' {
  interface FastifyRequest {
    mcp?: McpGatewayContext;
  }
}

export interface McpAppOptions {
  services: Pick<Services, 'config' | 'urls' | 'store' | 'clock' | 'bus' | 'gateways' | 'accountStatus' | 'tasks'>;
  logger: Logger;
  serverFactory?: FastifyServerFactory;
  /** Where the routes' compiles are queued to be done in the background once the node serves. */
  compileAhead?: CompileAhead;
  admit: McpAdmit;
  guards: McpGuards;
  registry: ToolRegistry;
  policy: AutonomyPolicy;
  /** The gateway's OAuth authorization server routes (well-known documents, /oauth/*, /authorize, /token, /register). */
  registerOAuthRoutes?: (app: FastifyInstance) => void;
  requestTimeoutMs?: number;
}

/** A body too large to parse on arrival: parsed after admission (`parsed`). */
type Later = { ok: 'later'; bytes: Buffer };
/** A body as the content-type parsers leave it. */
type Body = ParsedBody | Later | { ok: false; mediaType: true; raw: Buffer };
/** A 4 MiB body parses in well under a second in a worker; one that cannot is refused. */
const PARSE_LIMITS = { timeoutMs: 10_000, onLimit: 'PLT_BODY_UNREADABLE' } as const;

const header = (req: FastifyRequest, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(',') : v;
};

function sendHttpError(reply: FastifyReply, err: McpHttpError, id: unknown = null) {
  const { status, rpc } = MCP_HTTP_ERRORS[err.code];
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  return reply
    .code(status)
    .type('application/json')
    .send({ jsonrpc: '2.0', id, error: { code: err.rpcCode ?? rpc, message: err.message, ...(err.data !== undefined ? { data: err.data } : {}) } });
}

const sse = (reply: FastifyReply, message: unknown, status = 200) =>
  reply.code(status).header('content-type', 'text/event-stream').header('cache-control', 'no-cache, no-transform').send(`event: message\ndata: ${JSON.stringify(message)}\n\n`);

/**
 * The MCP surface: one app for every `mcp-{handle}` host. Streamable HTTP at the origin root and any path the OAuth
 * routes do not claim: POST carries one JSON-RPC message, answered on the POST as one SSE frame (no keep-alive
 * frames; the gateway never sends notifications, so there is no GET stream).
 */
export async function createMcpApp(opts: McpAppOptions): Promise<FastifyInstance> {
  const { services } = opts;
  const timeoutMs = opts.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  const app = Fastify({
    loggerInstance: opts.logger.child({ surface: 'mcp' }) as FastifyBaseLogger,
    ...(opts.serverFactory ? { serverFactory: opts.serverFactory } : {}),
    bodyLimit: BODY_LIMIT,
    genReqId: requestId,
    requestIdHeader: false,
    schemaController: lazyCompilers(opts.compileAhead),
    frameworkErrors: (err, _request, reply) => sendHttpError(reply, new McpHttpError('MCP_BAD_REQUEST', `Bad Request: ${err.message}`)),
  });
  // A request that comes before its route's schemas were compiled ahead waits for them, a step per turn.
  if (opts.compileAhead) awaitRouteCompiles(app, opts.compileAhead);
  // Sessions are checked on every request of the session era: kept per node for ten seconds (never past their
  // expiry); ending one drops it on every node.
  const now = () => services.clock.now();
  const sessions = ttlCache<string, McpSessionRecord>(10_000, now);
  services.bus.subscribe(SUBJECTS.mcpSessionEnded, (d) => sessions.delete((d as { id?: string }).id ?? ''));
  async function liveSession(gatewayId: string, id: string): Promise<McpSessionRecord | null> {
    const hit = sessions.get(id);
    if (hit) return hit.gatewayId === gatewayId && Date.parse(hit.expiresAt) > now() ? hit : null;
    const s = await services.store.mcpSessions.live(gatewayId, id, new Date(now()));
    if (s) sessions.set(id, s, Date.parse(s.expiresAt));
    return s;
  }
  const methods = createToolMethods({ registry: opts.registry, policy: opts.policy, guards: opts.guards });

  // Bad JSON is the protocol's own error (-32700), not the framework's 400.
  app.removeAllContentTypeParsers();
  // A small body is parsed on arrival; a larger one (up to 4 MiB: hundreds of milliseconds of parsing) only once its
  // caller is admitted, in the task pool (http/json-body.ts), so that no one holds the node's loop with it.
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (_req, body, done) => {
    const bytes = body as Buffer;
    done(null, bytes.length <= INLINE_BYTES ? parseJsonBody(bytes) : { ok: 'later', bytes });
  });
  // Other media types are kept raw: the OAuth token endpoint reads forms; the MCP endpoint refuses them (415).
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (_req, body, done) => done(null, { ok: false, mediaType: true, raw: body }));

  // The gateway, from this node's copy kept current by its actor (no turn on the hot path). A suspended or retired
  // gateway, or one of a suspended account, serves nothing at all, its OAuth routes included, and says why.
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    const route = routeHost(request.headers.host, services.config.domain);
    const gateway = route.surface === 'mcp' ? await services.gateways.byHandle(route.handle) : null;
    if (!gateway) throw new McpHttpError('MCP_UNKNOWN_GATEWAY', `no MCP gateway at host ${JSON.stringify(request.headers.host ?? '')}`);
    if (gateway.status === 'retired') throw new McpHttpError('MCP_GATEWAY_RETIRED', `the gateway ${gateway.handle} is retired and serves nothing`);
    if (gateway.status === 'suspended') throw new McpHttpError('MCP_GATEWAY_SUSPENDED', `the gateway ${gateway.handle} is suspended by its operator and serves nothing until it is resumed`);
    if (await services.accountStatus.isSuspended(gateway.accountId)) throw new McpHttpError('MCP_ACCOUNT_SUSPENDED', "the gateway's account is suspended: it serves nothing until the account is resumed");
    request.mcp = { gateway, origin: services.urls.mcp(gateway.handle) };
  });

  app.setErrorHandler((err: Error & { statusCode?: number; code?: string }, request, reply) => {
    if (err instanceof McpHttpError) return sendHttpError(reply, err);
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return sendHttpError(reply, new McpHttpError('MCP_BODY_TOO_LARGE', `the request body is larger than ${BODY_LIMIT} bytes (4 MiB)`));
    if (!isPlatformError(err) && err.statusCode && err.statusCode < 500) return sendHttpError(reply, new McpHttpError('MCP_BAD_REQUEST', err.message));
    const e = httpErrorOf(err);
    if (e.code === 'MCP_INTERNAL') request.log.error({ err }, 'mcp request failed');
    return sendHttpError(reply, e);
  });
  app.setNotFoundHandler((_request, reply) => sendHttpError(reply, new McpHttpError('MCP_METHOD_NOT_ALLOWED', 'use POST for MCP messages')));

  opts.registerOAuthRoutes?.(app);

  /** Admission, then billing (spec §5: billing is checked after the auth mode is cleared, on every request). */
  async function admitted(request: FastifyRequest) {
    const ctx = request.mcp!;
    const a = await opts.admit(ctx, { headers: request.headers, ip: request.ip });
    if (!a.ok) throw new McpHttpError('MCP_UNAUTHORIZED', a.message, { 'www-authenticate': a.wwwAuthenticate });
    const billing = await opts.guards.billing(ctx.gateway.accountId);
    if (billing === 'no_budget') throw new McpHttpError('MCP_NO_BUDGET', 'payment required: the account has no budget');
    if (billing === 'unknown') throw new McpHttpError('MCP_BILLING_UNAVAILABLE', 'the billing state of the account could not be determined; retry later', { 'retry-after': '5' });
    return a;
  }

  /** The JSON of an admitted request's body: a large one parsed in the task pool, in the lane of the gateway's account. */
  async function parsed(body: ParsedBody | Later, accountId: string): Promise<unknown> {
    let r: ParsedBody;
    if (body.ok === 'later') {
      let w: ParsedInWorker;
      try {
        w = await parseInTaskPool(services.tasks, body.bytes, PARSE_LIMITS, { tenant: accountId });
      } catch (err) {
        if (isPlatformError(err, 'PLT_BODY_UNREADABLE')) throw new McpHttpError('MCP_BAD_REQUEST', `Invalid Request: ${err.message}`, {}, RPC.INVALID_REQUEST);
        throw err;
      }
      r = w.ok ? { ok: true, value: restoreLifted(w) } : w;
    } else r = body;
    if (r.ok) return r.value;
    if (r.reason === 'values') throw new McpHttpError('MCP_BAD_REQUEST', `Invalid Request: the request holds more than ${MAX_VALUES} JSON values`, {}, RPC.INVALID_REQUEST);
    if (r.reason === 'depth') throw new McpHttpError('MCP_BAD_REQUEST', `Invalid Request: the request nests arrays and objects deeper than ${MAX_DEPTH} levels`, {}, RPC.INVALID_REQUEST);
    throw new McpHttpError('MCP_BAD_REQUEST', 'Parse error: the body is not valid JSON', {}, RPC.PARSE_ERROR);
  }

  app.post('/*', async (request, reply) => {
    const ctx = request.mcp!;
    const accept = header(request, 'accept') ?? '';
    // Both media types, by name (spec §4.2): the answer is an SSE stream, and a client must say it reads one.
    if (!/(^|[\s,])application\/json\s*(;|,|$)/i.test(accept) || !/(^|[\s,])text\/event-stream\s*(;|,|$)/i.test(accept)) {
      throw new McpHttpError('MCP_NOT_ACCEPTABLE', 'Accept must list both application/json and text/event-stream');
    }
    const body = request.body as Body | undefined;
    if (!body || 'mediaType' in body || !/^application\/json\s*(;|$)/i.test(header(request, 'content-type') ?? '')) {
      throw new McpHttpError('MCP_UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json');
    }
    const who = await admitted(request);
    const inbound = readEnvelope(await parsed(body, ctx.gateway.accountId));
    // Notifications and responses from the client need no answer.
    if (inbound.kind === 'accepted') return reply.code(202).send();
    if (inbound.kind === 'invalid') {
      if (inbound.code === RPC.INVALID_PARAMS) return reply.code(400).type('application/json').send({ jsonrpc: '2.0', id: inbound.id, error: { code: inbound.code, message: inbound.message } });
      throw new McpHttpError('MCP_BAD_REQUEST', inbound.message, {}, inbound.code);
    }
    const env = inbound.request;

    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
    try {
      const outcome = await Promise.race([
        handleRpc(env, {
          request,
          ctx,
          caller: who.caller,
          callerKey: who.callerKey,
          guards: opts.guards,
          methods,
          newSession: async (version) => {
            const id = randomBytes(24).toString('base64url');
            const expiresAt = new Date(services.clock.now() + SESSION_TTL_MS).toISOString();
            await services.store.mcpSessions.create({ id, gatewayId: ctx.gateway.id, accountId: ctx.gateway.accountId, callerKey: who.callerKey, protocolVersion: version, expiresAt });
            return id;
          },
          session: (id) => liveSession(ctx.gateway.id, id),
          requestId: randomUUID(),
        }),
        timedOut,
      ]);
      if (outcome === 'timeout') throw new McpHttpError('MCP_TIMEOUT', `the request ran past ${timeoutMs / 1000} s`);
      for (const [k, v] of Object.entries(outcome.headers ?? {})) reply.header(k, v);
      if (outcome.error) {
        const e = outcome.error;
        const payload = { jsonrpc: '2.0', id: env.id, error: { code: e.code, message: e.message, ...(e.data !== undefined ? { data: e.data } : {}) } };
        return e.status === 200 ? sse(reply, payload) : reply.code(e.status).type('application/json').send(payload);
      }
      return sse(reply, { jsonrpc: '2.0', id: env.id, result: outcome.result });
    } finally {
      clearTimeout(timer);
    }
  });

  app.get('/*', async (request) => {
    await admitted(request);
    throw new McpHttpError('MCP_METHOD_NOT_ALLOWED', 'this gateway offers no GET stream: it never sends notifications', { allow: 'POST, DELETE' });
  });

  app.delete('/*', async (request, reply) => {
    const ctx = request.mcp!;
    const who = await admitted(request);
    const version = header(request, 'mcp-protocol-version');
    if (version !== undefined && isKnown(version) && isModern(version)) {
      throw new McpHttpError('MCP_METHOD_NOT_ALLOWED', 'stateless protocol: there is no session to end', { allow: 'POST' });
    }
    const sid = header(request, 'mcp-session-id');
    if (!sid) throw new McpHttpError('MCP_SESSION_REQUIRED', 'Bad Request: Mcp-Session-Id header is required');
    // Only the caller who opened a session may end it; to anyone else it does not exist.
    if (!(await services.store.mcpSessions.end(ctx.gateway.id, sid, who.callerKey))) throw new McpHttpError('MCP_SESSION_NOT_FOUND', 'Session not found');
    sessions.delete(sid);
    services.bus.publish(SUBJECTS.mcpSessionEnded, { id: sid });
    return reply.code(204).send();
  });

  await app.ready();
  return app;
}

export { RpcError };
