import type { FastifyReply, FastifyRequest } from 'fastify';
import { type ErrorCode, PlatformError, hasAuthority, type Authority, type AuthFailure, type Caller, type Services } from '../../runtime/index.ts';
import { readCredential } from './credentials.ts';

declare module 'fastify' {
  interface FastifyRequest {
    caller?: Caller;
  }
}

const FAILURE_CODES: Record<AuthFailure | 'missing', ErrorCode> = {
  missing: 'MGMT_CREDENTIAL_MISSING',
  malformed: 'MGMT_CREDENTIAL_MALFORMED',
  invalid: 'MGMT_CREDENTIAL_INVALID',
  expired: 'MGMT_CREDENTIAL_EXPIRED',
  revoked: 'MGMT_CREDENTIAL_REVOKED',
  inactive: 'MGMT_PRINCIPAL_INACTIVE',
};

/** What checking a caller's credential and authority needs. */
export type AuthServices = Pick<Services, 'store' | 'signer' | 'clock' | 'accountStatus' | 'authenticate'>;

/**
 * A hook that admits a caller holding `authority` on its account, and records who it is on the request. Routes run it
 * on arrival (`onRequest`), before the body is read: a body of up to 1 MiB of small keys takes the node's thread
 * 60-110 ms to parse, which no one without a credential may make it spend.
 */
export function requireAuthority(services: AuthServices, authority: Authority) {
  return async function authorize(request: FastifyRequest, _reply: FastifyReply) {
    const slot = readCredential(request.headers);
    if (!slot.ok) throw new PlatformError(FAILURE_CODES[slot.reason]);
    const result = await services.authenticate(slot.credential);
    if (!result.ok) throw new PlatformError(FAILURE_CODES[result.reason]);
    const { caller } = result;
    if (!hasAuthority(caller.role, authority)) {
      throw new PlatformError('MGMT_FORBIDDEN', `forbidden: the ${caller.role} role lacks ${authority} authority on this account`);
    }
    // A suspended account can use no surface (it is told so, as a permission failure).
    await services.accountStatus.requireActive(caller.accountId);
    request.caller = caller;
    request.log = request.log.child({ account_id: caller.accountId, principal_id: caller.principalId });
  };
}
