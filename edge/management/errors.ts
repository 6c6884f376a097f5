import { Type, type Static } from 'typebox';
import { asPlatformError, type ErrorCode, type ErrorKind, type PlatformError } from '../../runtime/index.ts';

/**
 * The management API's wire format for errors, in one place: flat JSON `{category, code, message}` whose `category`
 * decides the HTTP status. Every failure is a PlatformError (or becomes one: unknown errors are PLT_INTERNAL); its
 * kind picks the category. Credential and permission failures share 403 (spec §7) and differ by `code` and `message`.
 */
export const CATEGORY_STATUS = {
  invalid_request: 400,
  authentication: 403,
  permission: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal: 500,
  overloaded: 503,
  unavailable: 503,
} as const;

export type Category = keyof typeof CATEGORY_STATUS;

const CATEGORY_OF_KIND: Record<ErrorKind, Category> = {
  invalid: 'invalid_request',
  unauthenticated: 'authentication',
  forbidden: 'permission',
  not_found: 'not_found',
  conflict: 'conflict',
  too_large: 'payload_too_large',
  rate_limited: 'rate_limited',
  overloaded: 'overloaded',
  unavailable: 'unavailable',
  internal: 'internal',
};

/** Codes whose category is not their kind's. */
const CATEGORY_OF_CODE: Partial<Record<ErrorCode, Category>> = { MGMT_UNSUPPORTED_MEDIA_TYPE: 'unsupported_media_type' };

/**
 * Standard OAuth clients read `error` from token responses; the value is the same for every 400 so that pending,
 * unknown, redeemed and expired codes stay indistinguishable.
 */
const OAUTH_ERROR: Partial<Record<ErrorCode, string>> = { MGMT_OAUTH_UNREDEEMABLE: 'invalid_grant', MGMT_OAUTH_ACCESS_DENIED: 'access_denied' };

/**
 * The error body as a schema: the OpenAPI document's `ManagementError` component and the serializer of every error
 * answer. It names every field `managementError` can send, since a response schema drops the fields it does not name.
 */
export const ManagementErrorSchema = Type.Object(
  {
    category: Type.Enum(Object.keys(CATEGORY_STATUS) as Category[], { description: 'Decides the HTTP status.' }),
    code: Type.Unsafe<ErrorCode>(Type.String({ description: 'Stable error code; docs/errors.md lists every code with how to get past it.' })),
    message: Type.String({ description: 'What went wrong, naming the parameter or field at fault.' }),
    problems: Type.Optional(Type.Array(Type.String(), { description: 'The problems of an invalid plugin config, one per path.' })),
    error: Type.Optional(Type.String({ description: 'OAuth error (`invalid_grant`, `access_denied`), on the device-flow token route only.' })),
  },
  { $id: 'ManagementError', description: 'Every error of the management API.' },
);

export type ManagementErrorBody = Static<typeof ManagementErrorSchema>;

export function managementError(err: unknown): { status: number; body: ManagementErrorBody; headers: Record<string, string>; error: PlatformError } {
  const e = asPlatformError(err);
  const category = CATEGORY_OF_CODE[e.code] ?? CATEGORY_OF_KIND[e.kind];
  const problems = (e.data as { problems?: unknown } | undefined)?.problems;
  const body: ManagementErrorBody = {
    category,
    code: e.code,
    message: e.message,
    ...(Array.isArray(problems) ? { problems: problems.map(String) } : {}),
    ...(OAUTH_ERROR[e.code] ? { error: OAUTH_ERROR[e.code] } : {}),
  };
  const headers: Record<string, string> = {};
  if (e.kind === 'overloaded' || e.kind === 'unavailable' || e.kind === 'rate_limited') {
    const after = (e.data as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds;
    headers['retry-after'] = String(typeof after === 'number' ? after : 1);
  }
  return { status: CATEGORY_STATUS[category], body, headers, error: e };
}
