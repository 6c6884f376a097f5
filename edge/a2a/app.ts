import type { Readable } from 'node:stream';
import { setImmediate } from 'node:timers/promises';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerFactory } from 'fastify';
import type { Logger } from 'pino';
import { isPlatformError, PlatformError, TRIGGER_LIMITS, ttlCache, type Services } from '../../runtime/index.ts';
import type { AgentRecord } from '../../store/index.ts';
import { awaitRouteCompiles, clientGone, INLINE_BYTES, lazyCompilers, MAX_DEPTH, MAX_VALUES, parseInTaskPool, parseJsonBody, prepend, requestId, restoreLifted, routeHost, SSE_HEADERS, sseStream, type CompileAhead, type ParsedBody } from '../http/index.ts';
import type { A2aAdmit } from './admission.ts';
import { AGUI_BODY_LIMIT } from './agui-input.ts';
import { AGUI_PATHS, aguiRoute, sendAguiError } from './agui-route.ts';
import type { A2aBackend, A2aCallContext } from './backend.ts';
import { agentCard, CARD_CACHE_CONTROL, CARD_EXTENSIONS, cardEtag, notModified } from './card.ts';
import { readableId, readEnvelope, type RpcId } from './envelope.ts';
import { wireErrorOf, type WireError } from './errors.ts';
import { checked, checkFrame, endsStream, METHODS, methodOf, runMethod } from './methods.ts';
import { checkVersion, extensionsEcho, negotiateExtensions } from './negotiation.ts';
import { declaredLength, readBody } from './read-body.ts';
import { loadParamChecks } from './protojson.ts';
import type { StreamResponse } from './schemas.ts';
import { isTrigger, sendTriggerError, triggerRoute, triggerTooLarge, type TriggerBody } from './trigger-route.ts';

declare module 'fastify' {
  interface FastifyRequest {
    a2a?: { agent: AgentRecord; origin: string };
  }
}

export interface A2aAppOptions {
  services: Pick<Services, 'config' | 'urls' | 'store' | 'clock' | 'accountStatus' | 'tasks' | 'triggers'>;
  logger: Logger;
  serverFactory?: FastifyServerFactory;
  /** Where the routes' compiles are queued to be done in the background once the node serves. */
  compileAhead?: CompileAhead;
  admit: A2aAdmit;
  /** The agent runtime; without one the task methods answer UnsupportedOperation (-32004). */
  backend?: A2aBackend;
}

/**
 * The largest request body: a file of 20 MiB (spec §8) inline as a base64 `raw` part is 27,962,028 characters, with
 * room beside it for the envelope and other parts. Such a body must not hold the node's thread past the ~50 ms of
 * DESIGN §5, so nothing of it is done in one piece there: it is read into one buffer as it arrives (read-body.ts), parsed
 * in the task pool once its caller is admitted (http/json-body.ts), where its long strings are also found to be base64 or
 * not; they come back as bytes and become strings in one copy each (10-30 ms for 27 MiB measured here), the params check takes
 * those base64 verdicts instead of scanning them again, and the runtime decodes and stores attachments in slices
 * (runtime/agents/attachments.ts).
 */
export const BODY_LIMIT = 28 * 1024 * 1024;
/** Restored strings past this size make the rest of the request wait for the next turn of the event loop. */
const YIELD_AFTER_BYTES = 1024 * 1024;
const JSON_TYPES = ['application/json', 'application/a2a+json'];
/** Parsing 28 MiB takes a few hundred milliseconds in a worker; one that needs seconds is stopped. */
const PARSE_LIMITS = { timeoutMs: 10_000, onLimit: 'A2A_BODY_TOO_LARGE' } as const;

/** A body as the content-type parsers leave it: parsed when small, bytes to parse after admission otherwise. */
type Body = ParsedBody | { ok: false; reason: 'media_type' } | { ok: 'later'; bytes: Buffer } | TriggerBody;

const bodyTooLarge = () => new PlatformError('A2A_BODY_TOO_LARGE', `the request body is larger than ${BODY_LIMIT} bytes (28 MiB): files of up to 20 MiB fit inline as raw parts`);
const aguiTooLarge = () => new PlatformError('AGUI_BODY_TOO_LARGE', `the run input is larger than ${AGUI_BODY_LIMIT} bytes (8 MiB): send only the new user message, files as url parts`);
/** Whether a request is for the AG-UI route, whose bodies and errors are its own. */
const isAgui = (request: FastifyRequest) => AGUI_PATHS.has(request.url.split('?')[0]!);

function sendError(reply: FastifyReply, wire: WireError, id: RpcId | null) {
  for (const [k, v] of Object.entries(wire.headers)) reply.header(k, v);
  return reply.code(wire.status).type('application/json').send({ jsonrpc: '2.0', id, error: wire.error });
}

const bodyId = (request: FastifyRequest) => {
  const body = request.body as Body | undefined;
  return body?.ok === true ? readableId(body.value) : null;
};

/**
 * The agent gateway (spec §4.3): one app for every `agent-{handle}` host. The public card at
 * `/.well-known/agent-card.json`; A2A 1.0 JSON-RPC at `POST /` and its legacy alias `POST /stream`, answered as
 * JSON, or as Server-Sent Events for the two streaming methods. A request passes, in this order: the host's agent
 * (404), its account (403), the credential (401/403), the media type (-32005), JSON (-32700), the envelope (-32600),
 * the version (-32009), the extensions (-32008), the method (-32601), its params (-32602), then the runtime.
 */
export async function createA2aApp(opts: A2aAppOptions): Promise<FastifyInstance> {
  const { services, backend } = opts;
  const app = Fastify({
    loggerInstance: opts.logger.child({ surface: 'a2a' }) as FastifyBaseLogger,
    ...(opts.serverFactory ? { serverFactory: opts.serverFactory } : {}),
    bodyLimit: BODY_LIMIT,
    genReqId: requestId,
    requestIdHeader: false,
    schemaController: lazyCompilers(opts.compileAhead),
    frameworkErrors: (err, _request, reply) => sendError(reply, wireErrorOf(new PlatformError('A2A_BAD_REQUEST', `Bad Request: ${err.message}`)), null),
  });
  // A request that comes before its route's schemas were compiled ahead waits for them, a step per turn.
  if (opts.compileAhead) awaitRouteCompiles(app, opts.compileAhead);
  // Agents change only through the operator: a node keeps one it found for five seconds, and never remembers a miss.
  const agents = ttlCache<string, AgentRecord>(5000, () => services.clock.now());

  // Bad JSON and other media types are the protocol's own errors (-32700, -32005), answered after admission. A small
  // body is parsed on arrival (so even a refusal can echo its id); a large one only once its caller is admitted.
  app.removeAllContentTypeParsers();
  // Bodies are read by read-body.ts, not by Fastify's reader, which joins a large body in one copy at its end.
  const read = (request: FastifyRequest, payload: NodeJS.ReadableStream, keep: boolean) => {
    const length = declaredLength(request.headers['content-length']);
    if (isAgui(request)) return readBody(payload as Readable, { length, limit: AGUI_BODY_LIMIT, keep, tooLarge: aguiTooLarge });
    // A trigger delivery's bytes are kept whatever their type: its signature covers them as sent.
    if (isTrigger(request)) return readBody(payload as Readable, { length, limit: TRIGGER_LIMITS.bodyBytes, keep: true, tooLarge: triggerTooLarge });
    return readBody(payload as Readable, { length, limit: BODY_LIMIT, keep, tooLarge: bodyTooLarge });
  };
  app.addContentTypeParser(JSON_TYPES, async (request: FastifyRequest, payload: NodeJS.ReadableStream): Promise<Body> => {
    const bytes = (await read(request, payload, true))!;
    if (isTrigger(request)) return { ok: 'raw', bytes, json: true };
    return bytes.length <= INLINE_BYTES ? parseJsonBody(bytes) : { ok: 'later', bytes };
  });
  app.addContentTypeParser('*', async (request: FastifyRequest, payload: NodeJS.ReadableStream): Promise<Body> => {
    const bytes = await read(request, payload, false);
    if (isTrigger(request)) return { ok: 'raw', bytes: bytes!, json: false };
    return { ok: false, reason: 'media_type' };
  });

  /** The parsed body of an admitted request: a large one in the task pool, in the lane of the agent's account. */
  async function parsed(body: Body | undefined, accountId: string, signal: AbortSignal, base64: string[]): Promise<unknown> {
    if (!body || (body.ok === false && body.reason === 'media_type') || body.ok === 'raw') {
      throw new PlatformError('A2A_CONTENT_TYPE_NOT_SUPPORTED', 'Content type not supported: POST JSON-RPC requests with Content-Type: application/json');
    }
    let r: ParsedBody;
    if (body.ok === 'later') {
      const w = await parseInTaskPool(services.tasks, body.bytes, PARSE_LIMITS, { tenant: accountId, signal });
      if (w.ok) {
        const value = restoreLifted(w, base64);
        // Megabytes of strings were just made: the rest of the request waits for the next turn of the loop.
        if (w.bytes.length >= YIELD_AFTER_BYTES) await setImmediate();
        return value;
      }
      r = w;
    } else r = body;
    if (r.ok) return r.value;
    if (r.reason === 'values') throw new PlatformError('A2A_INVALID_REQUEST', `Invalid Request: the request holds more than ${MAX_VALUES} JSON values`);
    if (r.reason === 'depth') throw new PlatformError('A2A_INVALID_REQUEST', `Invalid Request: the request nests arrays and objects deeper than ${MAX_DEPTH} levels`);
    throw new PlatformError('A2A_PARSE_ERROR', 'Parse error: the body is not valid JSON');
  }

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    const route = routeHost(request.headers.host, services.config.domain);
    if (route.surface !== 'agent') throw new PlatformError('A2A_UNKNOWN_AGENT', `no agent at host ${JSON.stringify(request.headers.host ?? '')}`);
    const agent = agents.get(route.handle) ?? (await services.store.agents.byHandle(route.handle).then((a) => (a ? agents.set(route.handle, a) : null)));
    if (!agent) throw new PlatformError('A2A_UNKNOWN_AGENT', `no agent at host ${JSON.stringify(request.headers.host ?? '')}`);
    if (await services.accountStatus.isSuspended(agent.accountId)) throw new PlatformError('PLT_ACCOUNT_SUSPENDED', "the agent's account is suspended: it serves nothing until the account is resumed");
    // The params and results checks' compiler arrives with the surface's first request (protojson.ts).
    await loadParamChecks();
    request.a2a = { agent, origin: services.urls.agent(agent.handle) };
  });

  app.setErrorHandler((err: Error & { code?: string; statusCode?: number }, request, reply) => {
    let e: unknown = err;
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') e = isTrigger(request) ? triggerTooLarge() : bodyTooLarge();
    else if (!isPlatformError(err) && err.statusCode && err.statusCode < 500) e = new PlatformError('A2A_BAD_REQUEST', `Bad Request: ${err.message}`);
    if (isAgui(request)) return sendAguiError(request, reply, e);
    if (isTrigger(request)) return sendTriggerError(request, reply, e);
    const wire = wireErrorOf(e);
    if (wire.internal) request.log.error({ err }, 'a2a request failed');
    return sendError(reply, wire, bodyId(request));
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!;
    if (AGUI_PATHS.has(path)) {
      reply.header('allow', 'POST');
      return sendAguiError(request, reply, new PlatformError('A2A_METHOD_NOT_ALLOWED', `POST the AG-UI run input (not ${request.method})`));
    }
    if (isTrigger(request)) {
      reply.header('allow', 'POST');
      return sendTriggerError(request, reply, new PlatformError('A2A_METHOD_NOT_ALLOWED', `POST a trigger's deliveries (not ${request.method})`));
    }
    const e =
      path === '/' || path === '/stream'
        ? (reply.header('allow', 'POST'), new PlatformError('A2A_METHOD_NOT_ALLOWED', `use POST for JSON-RPC requests (not ${request.method})`))
        : new PlatformError('A2A_ROUTE_NOT_FOUND', `no route ${request.method} ${path}: the agent gateway serves GET /.well-known/agent-card.json and JSON-RPC at POST /`);
    return sendError(reply, wireErrorOf(e), null);
  });

  const cardOf = (request: FastifyRequest) => agentCard(request.a2a!.agent, request.a2a!.origin);

  // The card is public (spec §5): no credential is read. Clients cache it and revalidate with its ETag.
  app.get('/.well-known/agent-card.json', async (request, reply) => {
    const body = JSON.stringify(cardOf(request));
    const etag = cardEtag(body);
    reply.header('cache-control', CARD_CACHE_CONTROL).header('etag', etag);
    if (notModified(request.headers['if-none-match'], etag)) return reply.code(304).send();
    return reply.type('application/json; charset=utf-8').send(body);
  });

  async function rpc(request: FastifyRequest, reply: FastifyReply) {
    const { agent } = request.a2a!;
    const caller = await opts.admit(agent, request.headers);
    let id = bodyId(request);
    const log = (problem: string) => request.log.error({ agent: agent.id, problem }, 'the agent runtime produced an invalid A2A response');
    // The runtime stops work nobody waits for: the signal fires when the client leaves (or has left) before the end.
    const gone = clientGone(reply.raw);
    try {
      // Long strings the worker found to be base64: the params check does not scan them again.
      const base64: string[] = [];
      const value = await parsed(request.body as Body | undefined, agent.accountId, gone, base64);
      id = readableId(value);
      const req = readEnvelope(value);
      checkVersion(request.headers, request.query);
      const extensions = negotiateExtensions(request.headers, CARD_EXTENSIONS);
      for (const [k, v] of Object.entries(extensionsEcho(extensions))) reply.header(k, v);
      const method = methodOf(req.method);
      const ctx: A2aCallContext = { ...caller, extensions, signal: gone };
      const outcome = await runMethod(method, req.params, ctx, { backend, card: cardOf(request), base64 });
      if (outcome.kind === 'result') {
        const spec = METHODS[method];
        const result = 'result' in spec ? checked(spec.result, outcome.result, `${method} result`, log) : outcome.result;
        return reply.type('application/json').send({ jsonrpc: '2.0', id, result });
      }
      // The first event is awaited before the stream is opened: a failure before anything was produced (an unknown
      // task, a terminal one) is a plain JSON-RPC error response, not a one-frame stream.
      const it = outcome.events[Symbol.asyncIterator]();
      const first = await it.next();
      let head: StreamResponse;
      try {
        if (first.done) throw new PlatformError('A2A_INVALID_AGENT_RESPONSE', `Invalid agent response: the ${method} stream ended before its first event`);
        head = checkFrame(first.value, log);
      } catch (err) {
        Promise.resolve(it.return?.()).catch(() => {});
        throw err;
      }
      let n = 0;
      const stream = sseStream<StreamResponse>({
        events: prepend(head, it),
        frame: (event) => ({ jsonrpc: '2.0', id, result: n === 0 ? event : checkFrame(event, log) }),
        last: (event) => endsStream(event, n++ === 0),
        error: (err) => {
          const wire = wireErrorOf(err);
          if (wire.internal) request.log.error({ err }, 'a2a stream failed');
          return { jsonrpc: '2.0', id, error: wire.error };
        },
      });
      reply.code(200).headers(SSE_HEADERS);
      return reply.send(stream);
    } catch (err) {
      const wire = wireErrorOf(err);
      // A client that left aborts its call: what fails then is no fault of the platform's.
      if (wire.internal && !gone.aborted) request.log.error({ err }, 'a2a request failed');
      return sendError(reply, wire, id);
    }
  }

  // `/stream` is the legacy alias of `/` (spec §4.3): the same methods, streaming or not.
  app.post('/', rpc);
  app.post('/stream', rpc);

  // AG-UI runs (spec §4.3): the same admission and body reading, AG-UI's input and events (agui-route.ts).
  const agui = aguiRoute({
    admit: opts.admit,
    backend,
    body: (request, accountId, signal, base64) => {
      const body = request.body as Body | undefined;
      if (!body || (body.ok === false && body.reason === 'media_type')) {
        throw new PlatformError('A2A_CONTENT_TYPE_NOT_SUPPORTED', 'Content type not supported: POST the AG-UI run input with Content-Type: application/json');
      }
      return parsed(body, accountId, signal, base64);
    },
  });
  for (const path of AGUI_PATHS) app.post(path, agui);

  // Trigger deliveries (issue 15 §3): signed by the sender, no credential. Their cap is the size parsed on arrival.
  app.post<{ Params: { id: string } }>('/triggers/:id', triggerRoute({ triggers: () => services.triggers, parseJson: parseJsonBody }));

  await app.ready();
  return app;
}
