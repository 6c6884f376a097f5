import type { PrincipalKind, Role, Store } from '../../store/index.ts';
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

export type AuthFailure = 'malformed' | 'invalid' | 'expired' | 'revoked' | 'inactive';
export type AuthResult = { ok: true; caller: Caller } | { ok: false, reason: AuthFailure };

/**
 * Resolves a management-API credential: an API key (`ak-`) or a device-flow JWT in the same slot. The principal
 * behind either must still be active and a member of the credential's account; its role is read now, not cached in
 * the credential, so a demotion takes effect at once.
 */
export async function authenticate(
  deps: { store: Pick<Store, 'apiKeys' | 'principals'>; signer: TokenSigner; now: () => number },
  credential: string,
): Promise<AuthResult> {
  let accountId: string;
  let principalId: string;
  let via: Caller['via'];
  let extra: Pick<Caller, 'keyId' | 'clientId'> = {};
  if (credential.startsWith('ak-')) {
    const key = await checkApiKey(deps.store, credential, deps.now());
    if (!key.ok) return key;
    ({ accountId, principalId } = key);
    via = 'api_key';
    extra = { keyId: key.keyId };
  } else {
    const token = await deps.signer.verifyAccessToken(credential);
    if (!token.ok) return token;
    accountId = token.claims.account_id;
    principalId = token.claims.sub;
    via = 'device_token';
    extra = { clientId: token.claims.aud };
  }
  const principal = await deps.store.principals.get(accountId, principalId);
  if (!principal || principal.status !== 'active' || principal.role === null) return { ok: false, reason: 'inactive' };
  return { ok: true, caller: { accountId, principalId, kind: principal.kind, role: principal.role, via, ...extra } };
}
