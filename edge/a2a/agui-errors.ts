import { asPlatformError, type ErrorCode, type ErrorKind } from '../../runtime/index.ts';
import { CHALLENGE } from './errors.ts';

/**
 * How the AG-UI route answers a failure (A2A-RPC-03). Before its stream starts, a failure is an HTTP error with a
 * JSON body `{code, message}` (AG-UI defines no error envelope; a client shows the status and the message): the
 * status by the error's kind, a few codes by their own. Once the stream has started it is a RUN_ERROR event with the
 * same code and message. A 401 carries the agent gateway's challenge (spec §5), as on A2A.
 * docs/errors.md, "AG-UI route wire", mirrors these tables.
 */
export const AGUI_KIND_STATUS: Record<ErrorKind, number> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  rate_limited: 429,
  overloaded: 503,
  unavailable: 503,
  internal: 500,
};

/** Codes whose status is not their kind's. */
export const AGUI_CODE_STATUS = {
  A2A_CONTENT_TYPE_NOT_SUPPORTED: 415,
  A2A_METHOD_NOT_ALLOWED: 405,
} as const satisfies Partial<Record<ErrorCode, number>>;

export interface AguiError {
  status: number;
  body: { code: string; message: string };
  headers: Record<string, string>;
  internal: boolean;
}

/** Any thrown value as the AG-UI route's error. Internal failures never show their message. */
export function aguiErrorOf(err: unknown): AguiError {
  const e = asPlatformError(err);
  const status = (AGUI_CODE_STATUS as Record<string, number>)[e.code] ?? AGUI_KIND_STATUS[e.kind];
  const internal = e.kind === 'internal';
  const retry = (e.data as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds;
  const headers: Record<string, string> = {
    ...(status === 401 ? { 'www-authenticate': CHALLENGE } : {}),
    ...(typeof retry === 'number' && Number.isFinite(retry) && retry >= 0 ? { 'retry-after': String(Math.ceil(retry)) } : {}),
  };
  return { status, body: { code: e.code, message: internal ? 'Internal error' : e.message }, headers, internal };
}
