import { asPlatformError, type ErrorCode, type ErrorKind, type PlatformError } from '../../runtime/index.ts';

/**
 * The agent gateway's one error mapping (spec §7, agent gateway): every failure is a PlatformError, and this file
 * alone decides how it reaches the wire — the HTTP status, the JSON-RPC code and the `google.rpc.ErrorInfo` reason.
 * JSON-RPC errors travel with HTTP 200; only the transport's own refusals (credential 401/403, unknown host or route,
 * an unreadable HTTP request) have another status, and even those carry a JSON-RPC error body so every client
 * library can show the message.
 */
export const A2A_RPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  TASK_NOT_FOUND: -32001,
  TASK_NOT_CANCELABLE: -32002,
  PUSH_NOTIFICATION_NOT_SUPPORTED: -32003,
  UNSUPPORTED_OPERATION: -32004,
  CONTENT_TYPE_NOT_SUPPORTED: -32005,
  INVALID_AGENT_RESPONSE: -32006,
  EXTENDED_AGENT_CARD_NOT_CONFIGURED: -32007,
  EXTENSION_SUPPORT_REQUIRED: -32008,
  VERSION_NOT_SUPPORTED: -32009,
} as const;

export const ERROR_INFO_TYPE = 'type.googleapis.com/google.rpc.ErrorInfo';
export const ERROR_DOMAIN = 'a2a-protocol.org';

export interface WireMapping {
  status: number;
  rpc: number;
  /** The ErrorInfo `reason`: A2A 1.0's own for its codes, the JSON-RPC or HTTP meaning otherwise. */
  reason: string;
}

const w = (status: number, rpc: number, reason: string): WireMapping => ({ status, rpc, reason });

/**
 * The codes the agent gateway maps one by one: every A2A code of the registry, and the suspended account (refused
 * before any request is read, like on the MCP gateway). docs/errors.md, "Agent gateway wire", mirrors this table.
 */
export const A2A_WIRE = {
  PLT_ACCOUNT_SUSPENDED: w(403, A2A_RPC.INVALID_REQUEST, 'PERMISSION_DENIED'),
  A2A_UNKNOWN_AGENT: w(404, A2A_RPC.INVALID_REQUEST, 'NOT_FOUND'),
  A2A_ROUTE_NOT_FOUND: w(404, A2A_RPC.INVALID_REQUEST, 'NOT_FOUND'),
  A2A_METHOD_NOT_ALLOWED: w(405, A2A_RPC.INVALID_REQUEST, 'METHOD_NOT_ALLOWED'),
  A2A_BODY_TOO_LARGE: w(413, A2A_RPC.INVALID_REQUEST, 'PAYLOAD_TOO_LARGE'),
  A2A_BAD_REQUEST: w(400, A2A_RPC.INVALID_REQUEST, 'BAD_REQUEST'),
  A2A_CREDENTIAL_MISSING: w(401, A2A_RPC.INVALID_REQUEST, 'UNAUTHENTICATED'),
  A2A_CREDENTIAL_INVALID: w(401, A2A_RPC.INVALID_REQUEST, 'UNAUTHENTICATED'),
  A2A_USER_KEY: w(403, A2A_RPC.INVALID_REQUEST, 'PERMISSION_DENIED'),
  A2A_FORBIDDEN: w(403, A2A_RPC.INVALID_REQUEST, 'PERMISSION_DENIED'),
  A2A_PARSE_ERROR: w(200, A2A_RPC.PARSE_ERROR, 'PARSE_ERROR'),
  A2A_INVALID_REQUEST: w(200, A2A_RPC.INVALID_REQUEST, 'INVALID_REQUEST'),
  A2A_METHOD_NOT_FOUND: w(200, A2A_RPC.METHOD_NOT_FOUND, 'METHOD_NOT_FOUND'),
  A2A_INVALID_PARAMS: w(200, A2A_RPC.INVALID_PARAMS, 'INVALID_PARAMS'),
  A2A_TASK_NOT_FOUND: w(200, A2A_RPC.TASK_NOT_FOUND, 'TASK_NOT_FOUND'),
  A2A_TASK_NOT_CANCELABLE: w(200, A2A_RPC.TASK_NOT_CANCELABLE, 'TASK_NOT_CANCELABLE'),
  A2A_TASK_EXISTS: w(200, A2A_RPC.INVALID_PARAMS, 'INVALID_PARAMS'),
  A2A_PUSH_NOT_SUPPORTED: w(200, A2A_RPC.PUSH_NOTIFICATION_NOT_SUPPORTED, 'PUSH_NOTIFICATION_NOT_SUPPORTED'),
  A2A_PUSH_URL_REFUSED: w(200, A2A_RPC.INVALID_PARAMS, 'INVALID_PARAMS'),
  A2A_PUSH_AUTH_REFUSED: w(200, A2A_RPC.INVALID_PARAMS, 'INVALID_PARAMS'),
  A2A_PUSH_CONFIG_LIMIT: w(200, A2A_RPC.INVALID_PARAMS, 'INVALID_PARAMS'),
  A2A_PUSH_CONFIG_NOT_FOUND: w(200, A2A_RPC.TASK_NOT_FOUND, 'TASK_NOT_FOUND'),
  A2A_UNSUPPORTED_OPERATION: w(200, A2A_RPC.UNSUPPORTED_OPERATION, 'UNSUPPORTED_OPERATION'),
  A2A_CONTENT_TYPE_NOT_SUPPORTED: w(200, A2A_RPC.CONTENT_TYPE_NOT_SUPPORTED, 'CONTENT_TYPE_NOT_SUPPORTED'),
  A2A_INVALID_AGENT_RESPONSE: w(200, A2A_RPC.INVALID_AGENT_RESPONSE, 'INVALID_AGENT_RESPONSE'),
  A2A_EXTENDED_CARD_NOT_CONFIGURED: w(200, A2A_RPC.EXTENDED_AGENT_CARD_NOT_CONFIGURED, 'EXTENDED_AGENT_CARD_NOT_CONFIGURED'),
  A2A_EXTENSION_REQUIRED: w(200, A2A_RPC.EXTENSION_SUPPORT_REQUIRED, 'EXTENSION_SUPPORT_REQUIRED'),
  A2A_VERSION_NOT_SUPPORTED: w(200, A2A_RPC.VERSION_NOT_SUPPORTED, 'VERSION_NOT_SUPPORTED'),
  // Attachments the runtime refused (spec §4.3, §8): invalid params, naming the part and the limit.
  A2A_ATTACHMENT_TOO_LARGE: w(200, A2A_RPC.INVALID_PARAMS, 'INVALID_PARAMS'),
  A2A_MESSAGE_TOO_LARGE: w(200, A2A_RPC.INVALID_PARAMS, 'INVALID_PARAMS'),
  A2A_ATTACHMENT_FETCH_FAILED: w(200, A2A_RPC.INVALID_PARAMS, 'INVALID_PARAMS'),
  A2A_IMAGE_TOO_LARGE: w(200, A2A_RPC.INVALID_PARAMS, 'INVALID_PARAMS'),
  A2A_IMAGE_UNREADABLE: w(200, A2A_RPC.INVALID_PARAMS, 'INVALID_PARAMS'),
  A2A_ATTACHMENT_QUOTA_EXCEEDED: w(200, A2A_RPC.INVALID_PARAMS, 'INVALID_PARAMS'),
} as const satisfies Partial<Record<ErrorCode, WireMapping>>;

export type WireCode = keyof typeof A2A_WIRE;

/**
 * Every other code, by its kind, as it reaches a caller inside a JSON-RPC response (docs/errors.md, "Kinds on the
 * wire"). A state the operation does not fit (a terminal task, a caller who may not resolve a gate) is A2A's
 * UnsupportedOperation; a missing thing is TaskNotFound, so not-found and not-yours look the same; a busy or
 * unreachable part of the platform is an internal error whose ErrorInfo says when to retry.
 */
export const KIND_WIRE: Record<ErrorKind, WireMapping> = {
  invalid: w(200, A2A_RPC.INVALID_PARAMS, 'INVALID_PARAMS'),
  too_large: w(200, A2A_RPC.INVALID_PARAMS, 'INVALID_PARAMS'),
  not_found: w(200, A2A_RPC.TASK_NOT_FOUND, 'TASK_NOT_FOUND'),
  conflict: w(200, A2A_RPC.UNSUPPORTED_OPERATION, 'UNSUPPORTED_OPERATION'),
  forbidden: w(200, A2A_RPC.UNSUPPORTED_OPERATION, 'UNSUPPORTED_OPERATION'),
  unauthenticated: w(200, A2A_RPC.UNSUPPORTED_OPERATION, 'UNSUPPORTED_OPERATION'),
  rate_limited: w(200, A2A_RPC.INTERNAL_ERROR, 'UNAVAILABLE'),
  overloaded: w(200, A2A_RPC.INTERNAL_ERROR, 'UNAVAILABLE'),
  unavailable: w(200, A2A_RPC.INTERNAL_ERROR, 'UNAVAILABLE'),
  internal: w(200, A2A_RPC.INTERNAL_ERROR, 'INTERNAL_ERROR'),
};

export interface ErrorInfo {
  '@type': typeof ERROR_INFO_TYPE;
  reason: string;
  domain: typeof ERROR_DOMAIN;
  metadata?: Record<string, string>;
}

/** A JSON-RPC error object: exactly `code`, `message` and `data` (one ErrorInfo), nothing else (A2A JSONRPC-ERR-001). */
export interface RpcErrorObject {
  code: number;
  message: string;
  data: [ErrorInfo];
}

/** A failure as the wire carries it, with the HTTP status and any headers (a 401 carries its challenge). */
export interface WireError {
  status: number;
  error: RpcErrorObject;
  headers: Record<string, string>;
  /** Internal errors are logged with their cause; everything else is the caller's to fix. */
  internal: boolean;
}

/** The one challenge of the agent gateway, exactly as spec §5 writes it. */
export const CHALLENGE = 'Bearer realm=a2a, error=invalid_token';

const isWireCode = (code: string): code is WireCode => Object.hasOwn(A2A_WIRE, code);

function retryAfter(e: PlatformError): string | undefined {
  const s = (e.data as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds;
  return typeof s === 'number' && Number.isFinite(s) && s >= 0 ? String(Math.ceil(s)) : undefined;
}

/** Any thrown value as the wire error it becomes. Internal failures of the platform never show their message or cause. */
export function wireErrorOf(err: unknown): WireError {
  const e = asPlatformError(err);
  const mapping = isWireCode(e.code) ? A2A_WIRE[e.code] : KIND_WIRE[e.kind];
  const own = isWireCode(e.code);
  const internal = e.kind === 'internal';
  const retry = e.kind === 'rate_limited' || e.kind === 'overloaded' || e.kind === 'unavailable' ? (retryAfter(e) ?? '1') : undefined;
  const metadata: Record<string, string> = { code: e.code, ...(retry ? { retryAfterSeconds: retry } : {}) };
  const message = internal && !own ? 'Internal error' : retry ? `${e.message}; retry after ${retry} s` : e.message;
  const headers: Record<string, string> = mapping.status === 401 ? { 'www-authenticate': CHALLENGE } : {};
  return {
    status: mapping.status,
    error: { code: mapping.rpc, message, data: [{ '@type': ERROR_INFO_TYPE, reason: mapping.reason, domain: ERROR_DOMAIN, metadata }] },
    headers,
    internal,
  };
}
