import type { FastifyRequest } from 'fastify';
import type { Caller } from '../../runtime/index.ts';
import type { McpSessionRecord } from '../../store/index.ts';
import type { McpGatewayContext, McpGuards } from './context.ts';
import { McpHttpError, RPC, RpcError, rpcErrorOf } from './errors.ts';
import { discoverResult, emptyList, initializeResult, type createToolMethods } from './methods.ts';
import { FALLBACK_VERSION, isKnown, isModern, KNOWN_VERSIONS, MODERN_VERSION, negotiate, PROTOCOL_VERSION_META } from './protocol.ts';
import { readParams, readStatelessMeta, type JsonRpcRequest, type Revision } from './schemas.ts';

export interface RpcDeps {
  request: FastifyRequest;
  ctx: McpGatewayContext;
  caller: Caller | null;
  callerKey: string;
  guards: McpGuards;
  methods: ReturnType<typeof createToolMethods>;
  newSession(version: string): Promise<string>;
  /** A live session of this gateway, or null. */
  session(id: string): Promise<McpSessionRecord | null>;
  requestId: string;
}

export interface RpcOutcome {
  result?: unknown;
  error?: { code: number; message: string; data?: unknown; status: number };
  headers?: Record<string, string>;
}

const SESSION_ID_RE = /^[A-Za-z0-9_-]{1,128}$/;

/** Header values may be RFC 2047-style base64 (`=?base64?...?=`) when they are not plain ASCII. */
function headerValue(req: FastifyRequest, name: string): string | undefined {
  const raw = req.headers[name];
  const v = Array.isArray(raw) ? raw.join(',') : raw;
  if (v === undefined) return undefined;
  const m = /^=\?base64\?(.*)\?=$/i.exec(v.trim());
  return m ? Buffer.from(m[1]!, 'base64').toString('utf8') : v.trim();
}

const fail = (e: RpcError): RpcOutcome => ({ error: { code: e.code, message: e.message, ...(e.data !== undefined ? { data: e.data } : {}), status: e.status } });

/**
 * Answers one JSON-RPC request (its envelope already checked by `readEnvelope`) in its protocol era: sessions before
 * 2026-07-28, stateless from it on.
 */
export async function handleRpc(env: JsonRpcRequest, d: RpcDeps): Promise<RpcOutcome> {
  const method = env.method;
  const params = (env.params ?? {}) as Record<string, unknown>;
  // The envelope's schema has made `_meta` an object when present.
  const meta = params._meta as Record<string, unknown> | undefined;
  const headerVersion = headerValue(d.request, 'mcp-protocol-version');
  // The version header names the era when present; without it, a body that carries the stateless revision's _meta
  // is a modern request missing its header (answered -32020 there), anything else is a session-era request.
  const modern = headerVersion !== undefined ? headerVersion >= MODERN_VERSION : meta?.[PROTOCOL_VERSION_META] !== undefined && method !== 'initialize';
  try {
    return modern ? await modernEra(method, params, headerVersion, d) : await legacyEra(method, params, headerVersion, d);
  } catch (err) {
    // Transport-level refusals keep their HTTP status; everything else is answered in the envelope.
    if (err instanceof McpHttpError) throw err;
    const e = rpcErrorOf(err);
    if (e.code === RPC.INTERNAL_ERROR) d.request.log.error({ err }, 'mcp method failed');
    return fail(e);
  }
}

async function rateLimited(d: RpcDeps): Promise<void> {
  const r = await d.guards.rate('request', d.ctx.gateway.id, d.callerKey);
  if (!r.ok) throw new RpcError(RPC.RATE_LIMITED, 'Rate limit exceeded: 600 requests per minute per caller on this gateway', { retryAfterSeconds: r.retryAfterSeconds });
}

/** The methods both eras answer alike; their params are checked (per revision) before the rate is counted. */
async function common(revision: Revision, method: string, params: Record<string, unknown>, d: RpcDeps): Promise<unknown | undefined> {
  const scope = { ctx: d.ctx, caller: d.caller, callerKey: d.callerKey, requestId: d.requestId };
  switch (method) {
    case 'tools/list': {
      const checked = readParams(revision, method, params);
      await rateLimited(d);
      return d.methods.list(scope, checked);
    }
    case 'tools/call': {
      const checked = readParams(revision, method, params);
      await rateLimited(d);
      return d.methods.call(scope, checked);
    }
    case 'resources/list':
      readParams(revision, method, params);
      return emptyList('resources');
    case 'resources/templates/list':
      readParams(revision, method, params);
      return emptyList('resourceTemplates');
    case 'prompts/list':
      readParams(revision, method, params);
      return emptyList('prompts');
    case 'server/discover':
      return discoverResult();
    default:
      return undefined;
  }
}

async function legacyEra(method: string, params: Record<string, unknown>, headerVersion: string | undefined, d: RpcDeps): Promise<RpcOutcome> {
  if (method === 'initialize') {
    const { protocolVersion } = readParams('session', 'initialize', params);
    const limit = await d.guards.rate('initialize', d.ctx.gateway.id, d.callerKey);
    if (!limit.ok) throw new McpHttpError('MCP_INITIALIZE_RATE_LIMITED', 'Too many initialize requests: 60 per minute per caller on this gateway', { 'retry-after': String(limit.retryAfterSeconds) });
    let version = negotiate(protocolVersion);
    // initialize belongs to the session era; a client asking for a stateless revision through it gets the fallback.
    if (isModern(version)) version = FALLBACK_VERSION;
    const session = await d.newSession(version);
    return { result: initializeResult(version), headers: { 'mcp-session-id': session } };
  }
  if (headerVersion !== undefined && !isKnown(headerVersion)) {
    throw new McpHttpError('MCP_BAD_REQUEST', `Bad Request: unsupported MCP-Protocol-Version ${JSON.stringify(headerVersion)}`, {}, RPC.INVALID_REQUEST, { supported: [...KNOWN_VERSIONS] });
  }
  const sid = headerValue(d.request, 'mcp-session-id');
  if (!sid) throw new McpHttpError('MCP_SESSION_REQUIRED', 'Bad Request: Mcp-Session-Id header is required');
  // Session ids are base64url: anything else names no session, and is never looked up.
  const session = SESSION_ID_RE.test(sid) ? await d.session(sid) : null;
  // A session is bound to the caller who opened it: another caller holding the id learns nothing from it.
  if (!session || session.callerKey !== d.callerKey) throw new McpHttpError('MCP_SESSION_NOT_FOUND', 'Session not found');
  if (method === 'ping') return { result: {} };
  const result = await common('session', method, params, d);
  if (result === undefined) throw new RpcError(RPC.METHOD_NOT_FOUND, `Method not found: ${method}`);
  return { result };
}

async function modernEra(method: string, params: Record<string, unknown>, headerVersion: string | undefined, d: RpcDeps): Promise<RpcOutcome> {
  if (params._meta === undefined && headerVersion !== undefined && !isKnown(headerVersion)) {
    throw new RpcError(RPC.UNSUPPORTED_VERSION, `Unsupported protocol version: ${headerVersion}`, { supported: [...KNOWN_VERSIONS], requested: headerVersion }, 400);
  }
  const { version: bodyVersion } = readStatelessMeta(params._meta);
  // A header that disagrees with the body is a mismatch whatever the versions; agreeing on an unknown one is -32022.
  if (headerVersion !== bodyVersion) {
    throw new RpcError(RPC.HEADER_MISMATCH, `Header mismatch: MCP-Protocol-Version ${JSON.stringify(headerVersion ?? null)} does not match _meta ${JSON.stringify(bodyVersion)}`, undefined, 400);
  }
  if (!isKnown(bodyVersion)) {
    throw new RpcError(RPC.UNSUPPORTED_VERSION, `Unsupported protocol version: ${bodyVersion}`, { supported: [...KNOWN_VERSIONS], requested: bodyVersion }, 400);
  }
  const headerMethod = headerValue(d.request, 'mcp-method');
  if (headerMethod !== method) {
    throw new RpcError(RPC.HEADER_MISMATCH, `Header mismatch: Mcp-Method ${JSON.stringify(headerMethod ?? null)} does not match the body's method ${JSON.stringify(method)}`, undefined, 400);
  }
  if (method === 'tools/call' && headerValue(d.request, 'mcp-name') !== params.name) {
    throw new RpcError(RPC.HEADER_MISMATCH, `Header mismatch: Mcp-Name does not match params.name`, undefined, 400);
  }
  const result = await common('stateless', method, params, d);
  if (result === undefined) throw new RpcError(RPC.METHOD_NOT_FOUND, `Method not found: ${method}`, undefined, 404);
  return { result: { ...(result as Record<string, unknown>), resultType: 'complete' } };
}
