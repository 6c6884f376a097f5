import type { PrincipalKind, Role, Store } from '../../store/index.ts';
import type { Bus } from '../core/bus/index.ts';
import { ttlCache } from '../core/cache/index.ts';
import { SUBJECTS } from '../core/subjects/index.ts';
import { checkApiKey } from './api-keys.ts';
import type { TokenSigner } from './tokens.ts';

/** Who is calling, resolved from a verified credential. */
export interface Caller {
  accountId: string;
  principalId: string;
  kind: PrincipalKind;
  role: Role;
  via: 'api_key' | 'device_token' | 'gateway_token' | 'agent_token' | 'anonymous';
  keyId?: string;
  clientId?: string;
  /** Who acts for the principal (RFC 8693 `act`, current actor first): an agent token's chain, absent otherwise. */
  actors?: readonly string[];
}

/**
 * A caller as an actor keeps it (the TaskCaller of agent tasks, workflow runs and schedules): what the runs it starts
 * act as, in plain JSON for the snapshot.
 */
export const callerSnapshot = (c: Caller) => ({ principalId: c.principalId, kind: c.kind, role: c.role, via: c.via, ...(c.actors?.length ? { actors: [...c.actors] } : {}) });

export type AuthFailure = 'malformed' | 'invalid' | 'expired' | 'revoked' | 'inactive';
export type AuthResult = { ok: true; caller: Caller } | { ok: false, reason: AuthFailure };
/** A result that admits also says until when the credential itself is valid (ms since the epoch; Infinity: no end). */
type Admission = AuthResult & { expiresAt?: number };

/**
 * Resolves a management-API credential: an API key (`ak-`) or a device-flow JWT in the same slot. The principal
 * behind either must still be active and a member of the credential's account; its role is read now, not cached in
 * the credential, so a demotion takes effect at once.
 */
export async function authenticate(
  deps: { store: Pick<Store, 'apiKeys' | 'principals'>; signer: TokenSigner; now: () => number },
  credential: string,
): Promise<Admission> {
  let accountId: string;
  let expiresAt = Infinity;
  let principalId: string;
  let via: Caller['via'];
  let extra: Pick<Caller, 'keyId' | 'clientId'> = {};
  if (credential.startsWith('ak-')) {
    const key = await checkApiKey(deps.store, credential, deps.now());
    if (!key.ok) return key;
    ({ accountId, principalId } = key);
    via = 'api_key';
    extra = { keyId: key.keyId };
    if (key.expiresAt) expiresAt = Date.parse(key.expiresAt);
  } else {
    const token = await deps.signer.verifyAccessToken(credential);
    if (!token.ok) return token;
    accountId = token.claims.account_id;
    principalId = token.claims.sub;
    via = 'device_token';
    extra = { clientId: token.claims.aud };
    expiresAt = token.claims.exp * 1000;
  }
  const principal = await deps.store.principals.get(accountId, principalId);
  if (!principal || principal.status !== 'active' || principal.role === null) return { ok: false, reason: 'inactive' };
  return { ok: true, caller: { accountId, principalId, kind: principal.kind, role: principal.role, via, ...extra }, expiresAt };
}

export type Authenticator = (credential: string) => Promise<AuthResult>;

/**
 * The management API's credential check, with the memory the A2A and MCP admissions have: a credential that admitted
 * is remembered on this node for `cacheMs` (never past its own expiry), and a revocation through any node
 * (`SUBJECTS.identityChanged`) clears every node's memory. Failures are never remembered. Besides two statements a
 * request saved, a tenant's requests then need no turn of the database: on the embedded default's one connection they
 * would wait behind another tenant's large write.
 */
export function createAuthenticator(deps: { store: Pick<Store, 'apiKeys' | 'principals'>; signer: TokenSigner; now: () => number; bus?: Bus; cacheMs?: number }): Authenticator {
  const admitted = ttlCache<string, Caller>(deps.cacheMs ?? 1000, deps.now);
  deps.bus?.subscribe(SUBJECTS.identityChanged, () => admitted.clear());
  return async (credential) => {
    const hit = admitted.get(credential);
    if (hit) return { ok: true, caller: hit };
    const result = await authenticate(deps, credential);
    if (!result.ok) return result;
    if ((result.expiresAt ?? Infinity) > deps.now()) admitted.set(credential, Object.freeze(result.caller), result.expiresAt);
    return { ok: true, caller: result.caller };
  };
}
