import { asPlatformError } from '../../runtime/index.ts';

/**
 * The MCP surface's error registry. JSON-RPC errors travel inside the SSE frame of a POST (or with the HTTP status
 * the 2026-07-28 transport requires); transport failures are HTTP statuses with a JSON-RPC error body, so every
 * client library can show the message.
 */
export const RPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** 2026-07-28: a header disagrees with the body (Mcp-Method, Mcp-Name, MCP-Protocol-Version). */
  HEADER_MISMATCH: -32020,
  /** 2026-07-28: the requested protocol version is not supported; `data.supported` lists ours. */
  UNSUPPORTED_VERSION: -32022,
  /** The platform's request-rate limit (spec §7). */
  RATE_LIMITED: -32029,
  /** A budget allocation refused at tools/call dispatch (spec §7: reported inside the envelope). */
  BUDGET_REFUSED: -32001,
  /** The account's lane is full or the platform cannot serve the call right now: retry after `data.retryAfterSeconds`. */
  OVERLOADED: -32003,
} as const;

export type McpErrorCode =
  | 'MCP_UNKNOWN_GATEWAY'
  | 'MCP_GATEWAY_SUSPENDED'
  | 'MCP_GATEWAY_RETIRED'
  | 'MCP_ACCOUNT_SUSPENDED'
  | 'MCP_NOT_ACCEPTABLE'
  | 'MCP_UNSUPPORTED_MEDIA_TYPE'
  | 'MCP_BODY_TOO_LARGE'
  | 'MCP_METHOD_NOT_ALLOWED'
  | 'MCP_SESSION_REQUIRED'
  | 'MCP_SESSION_NOT_FOUND'
  | 'MCP_UNAUTHORIZED'
  | 'MCP_NO_BUDGET'
  | 'MCP_BILLING_UNAVAILABLE'
  | 'MCP_INITIALIZE_RATE_LIMITED'
  | 'MCP_TIMEOUT'
  | 'MCP_BAD_REQUEST'
  | 'MCP_UNAVAILABLE'
  | 'MCP_INTERNAL';

/** HTTP answers outside a JSON-RPC result: status and the JSON-RPC error code their body carries. */
export const MCP_HTTP_ERRORS: Record<McpErrorCode, { status: number; rpc: number; fix: string }> = {
  MCP_UNKNOWN_GATEWAY: { status: 404, rpc: RPC.INVALID_REQUEST, fix: 'Use the host mcp-{handle}.<domain> of an existing gateway.' },
  MCP_GATEWAY_SUSPENDED: { status: 403, rpc: RPC.INVALID_REQUEST, fix: 'Ask the operator to resume the gateway (platform admin gateway resume).' },
  MCP_GATEWAY_RETIRED: { status: 410, rpc: RPC.INVALID_REQUEST, fix: 'Use another gateway: a retired gateway never serves again.' },
  MCP_ACCOUNT_SUSPENDED: { status: 403, rpc: RPC.INVALID_REQUEST, fix: 'Ask the operator to resume the account (platform admin account resume).' },
  MCP_NOT_ACCEPTABLE: { status: 406, rpc: RPC.INVALID_REQUEST, fix: 'Send Accept: application/json, text/event-stream.' },
  MCP_UNSUPPORTED_MEDIA_TYPE: { status: 415, rpc: RPC.INVALID_REQUEST, fix: 'Send Content-Type: application/json.' },
  MCP_BODY_TOO_LARGE: { status: 413, rpc: RPC.INVALID_REQUEST, fix: 'Keep a request body at or under 4 MiB.' },
  MCP_METHOD_NOT_ALLOWED: { status: 405, rpc: RPC.INVALID_REQUEST, fix: 'POST JSON-RPC messages; the gateway offers no GET stream.' },
  MCP_SESSION_REQUIRED: { status: 400, rpc: RPC.INVALID_REQUEST, fix: 'Send the Mcp-Session-Id that initialize returned.' },
  MCP_SESSION_NOT_FOUND: { status: 404, rpc: RPC.INVALID_REQUEST, fix: 'Initialize again: the session ended or expired (7 days).' },
  MCP_UNAUTHORIZED: { status: 401, rpc: RPC.INVALID_REQUEST, fix: 'Send a valid Bearer credential: an ak- API key or a token of this gateway.' },
  MCP_NO_BUDGET: { status: 402, rpc: RPC.INVALID_REQUEST, fix: 'The account has no budget: fund it (platform admin account budget).' },
  MCP_BILLING_UNAVAILABLE: { status: 503, rpc: RPC.INTERNAL_ERROR, fix: 'Retry later: the billing state could not be determined.' },
  MCP_INITIALIZE_RATE_LIMITED: { status: 429, rpc: RPC.INVALID_REQUEST, fix: 'Wait for the next minute: initialize is limited to 60 per minute.' },
  MCP_TIMEOUT: { status: 504, rpc: RPC.INTERNAL_ERROR, fix: 'The request ran past 240 s; retry or split the work.' },
  MCP_BAD_REQUEST: { status: 400, rpc: RPC.INVALID_REQUEST, fix: 'Fix the request as the message says.' },
  MCP_UNAVAILABLE: { status: 503, rpc: RPC.INTERNAL_ERROR, fix: 'Retry after the Retry-After seconds: a part of the platform is busy or moving.' },
  MCP_INTERNAL: { status: 500, rpc: RPC.INTERNAL_ERROR, fix: 'Retry; report the x-request-id if it persists.' },
};

/** A failure answered with an HTTP status (before or instead of a JSON-RPC result). */
export class McpHttpError extends Error {
  override readonly name = 'McpHttpError';
  constructor(
    readonly code: McpErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
    readonly rpcCode?: number,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** A JSON-RPC error answered in the response envelope. */
export class RpcError extends Error {
  override readonly name = 'RpcError';
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
    /** The HTTP status of the envelope (2026-07-28 maps some errors to 400/404); 200 otherwise. */
    readonly status = 200,
  ) {
    super(message);
  }
}

/**
 * A PlatformError raised while answering a JSON-RPC request, as the JSON-RPC error the client sees (the one place
 * the MCP surface maps error kinds): bad input is -32602, a full lane or an unreachable part of the platform is
 * -32003 with a retry hint, anything else -32603 without internals.
 */
export function rpcErrorOf(err: unknown): RpcError {
  if (err instanceof RpcError) return err;
  const e = asPlatformError(err);
  switch (e.kind) {
    case 'invalid':
    case 'not_found':
    case 'too_large':
      return new RpcError(RPC.INVALID_PARAMS, `Invalid params: ${e.message}`);
    case 'overloaded':
    case 'unavailable':
    case 'rate_limited':
      return new RpcError(RPC.OVERLOADED, `Overloaded: ${e.message}`, { code: e.code, retryAfterSeconds: (e.data as { retryAfterSeconds?: number } | undefined)?.retryAfterSeconds ?? 1 });
    case 'forbidden':
    case 'unauthenticated':
    case 'conflict':
      return new RpcError(RPC.INVALID_REQUEST, e.message, { code: e.code });
    default:
      return new RpcError(RPC.INTERNAL_ERROR, 'Internal error', { code: e.code });
  }
}

/** A PlatformError raised outside a JSON-RPC answer (resolving the gateway, admission) as the HTTP error it becomes. */
export function httpErrorOf(err: unknown): McpHttpError {
  if (err instanceof McpHttpError) return err;
  const e = asPlatformError(err);
  switch (e.kind) {
    case 'invalid':
    case 'not_found':
    case 'conflict':
    case 'too_large':
      return new McpHttpError('MCP_BAD_REQUEST', `Bad Request: ${e.message}`, {}, undefined, { code: e.code });
    case 'overloaded':
    case 'unavailable':
    case 'rate_limited':
      return new McpHttpError('MCP_UNAVAILABLE', e.message, { 'retry-after': String((e.data as { retryAfterSeconds?: number } | undefined)?.retryAfterSeconds ?? 1) }, undefined, { code: e.code });
    default:
      return new McpHttpError('MCP_INTERNAL', 'internal error', {}, undefined, { code: e.code });
  }
}
