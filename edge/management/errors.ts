/**
 * The management API's error registry. The body on the wire is flat JSON `{category, code, message}`; `category`
 * decides the HTTP status. Credential and permission failures share 403 (spec §7) and differ by `code` and `message`.
 */
export const CATEGORY_STATUS = {
  invalid_request: 400,
  authentication: 403,
  permission: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  internal: 500,
  unavailable: 503,
} as const;

export type Category = keyof typeof CATEGORY_STATUS;

interface Entry {
  category: Category;
  message: string;
  /** How an operator or client fixes it (documented in the README table). */
  fix: string;
}

export const MGMT_ERRORS = {
  MGMT_CREDENTIAL_MISSING: {
    category: 'authentication',
    message: 'missing credential: send an API key or access token as Authorization: Bearer <credential> (or Authorization: ApiKey, API-Key, X-API-Key)',
    fix: 'Send a credential header; cookies and query-string tokens are never read.',
  },
  MGMT_CREDENTIAL_MALFORMED: {
    category: 'authentication',
    message: 'malformed credential: expected an API key (ak-...) or a device-flow access token (JWT)',
    fix: 'Send the credential exactly as issued, after a supported scheme (Bearer or ApiKey).',
  },
  MGMT_CREDENTIAL_INVALID: {
    category: 'authentication',
    message: 'invalid credential: the API key or access token was not accepted',
    fix: 'Check the key or token; issue a new key with `platform admin key create` or log in again.',
  },
  MGMT_CREDENTIAL_EXPIRED: {
    category: 'authentication',
    message: 'expired credential: the API key or access token has expired',
    fix: 'Run `platform login` again (tokens last one hour) or use a key that has not expired.',
  },
  MGMT_CREDENTIAL_REVOKED: {
    category: 'authentication',
    message: 'revoked credential: this API key has been revoked',
    fix: 'Ask the operator for a new key.',
  },
  MGMT_PRINCIPAL_INACTIVE: {
    category: 'authentication',
    message: 'invalid credential: its principal is disabled or no longer a member of the account',
    fix: 'Ask the operator to restore the principal, or use another credential.',
  },
  MGMT_FORBIDDEN: {
    category: 'permission',
    message: 'forbidden: the caller lacks the authority this operation needs',
    fix: 'Use a principal whose role grants the authority (see the roles table).',
  },
  MGMT_INVALID_QUERY: {
    category: 'invalid_request',
    message: 'invalid query parameter',
    fix: 'Correct the parameter named in the message.',
  },
  MGMT_INVALID_BODY: {
    category: 'invalid_request',
    message: 'malformed request body',
    fix: 'Send a JSON object with the documented fields.',
  },
  MGMT_PLUGIN_REJECTED: {
    category: 'invalid_request',
    message: 'the plugin archive was not admitted',
    fix: 'Read the message: it names the unreadable archive, the config problem (with its path) or the failed WASM check.',
  },
  MGMT_CAPABILITY_NOT_FOUND: {
    category: 'not_found',
    message: 'no such capability version in this account',
    fix: 'Check the capability id and version number (`GET /v1/capabilities`).',
  },
  MGMT_ACTIVATION_CONFLICT: {
    category: 'conflict',
    message: 'the version cannot be activated in its current state',
    fix: 'Wait for an activation in progress to finish; an active version needs no activation.',
  },
  MGMT_ACTIVATION_FAILED: {
    category: 'invalid_request',
    message: 'activation failed; the previously active version keeps serving',
    fix: 'Read the reason (for example a memory limit below what the component needs at start) and upload a fixed version.',
  },
  MGMT_OAUTH_UNREDEEMABLE: {
    category: 'invalid_request',
    message: 'the device code cannot be exchanged: it is pending, unknown, already used or expired, or the grant type is unsupported',
    fix: 'Keep polling at the returned interval while the human decides; otherwise start a new device authorization.',
  },
  MGMT_OAUTH_ACCESS_DENIED: {
    category: 'permission',
    message: 'access denied: the user denied the authorization request',
    fix: 'Start a new device authorization if the denial was a mistake.',
  },
  MGMT_ROUTE_NOT_FOUND: {
    category: 'not_found',
    message: 'no such route on the management API',
    fix: 'Check the method and path against the API reference.',
  },
  MGMT_ACTOR_NOT_FOUND: {
    category: 'not_found',
    message: 'no such actor in this account',
    fix: 'Check the actor address (`kind/accountId/id`); actors of other accounts are never visible.',
  },
  MGMT_STATECHART_NOT_FOUND: {
    category: 'not_found',
    message: 'no statechart of that kind',
    fix: 'Use a machine listed on the `/viz` page or by `platform viz export`.',
  },
  MGMT_BODY_TOO_LARGE: {
    category: 'payload_too_large',
    message: 'request body too large',
    fix: 'Send a smaller body.',
  },
  MGMT_UNSUPPORTED_MEDIA_TYPE: {
    category: 'unsupported_media_type',
    message: 'unsupported content type',
    fix: 'Send application/json.',
  },
  MGMT_UNAVAILABLE: {
    category: 'unavailable',
    message: 'the service is not ready',
    fix: 'Retry shortly.',
  },
  MGMT_INTERNAL: {
    category: 'internal',
    message: 'internal error',
    fix: 'Retry; report the x-request-id if it persists.',
  },
} as const satisfies Record<string, Entry>;

export type MgmtErrorCode = keyof typeof MGMT_ERRORS;

export class MgmtError extends Error {
  override readonly name = 'MgmtError';
  readonly category: Category;
  readonly status: number;
  constructor(
    readonly code: MgmtErrorCode,
    message?: string,
  ) {
    super(message ?? MGMT_ERRORS[code].message);
    this.category = MGMT_ERRORS[code].category;
    this.status = CATEGORY_STATUS[this.category];
  }
  toBody(): { category: Category; code: MgmtErrorCode; message: string } & Record<string, string> {
    const body = { category: this.category, code: this.code, message: this.message };
    // Standard OAuth clients read `error` from token responses; the value is the same for every 400 so that pending,
    // unknown, redeemed and expired codes stay indistinguishable.
    if (this.code === 'MGMT_OAUTH_UNREDEEMABLE') return { ...body, error: 'invalid_grant' };
    if (this.code === 'MGMT_OAUTH_ACCESS_DENIED') return { ...body, error: 'access_denied' };
    return body;
  }
}
