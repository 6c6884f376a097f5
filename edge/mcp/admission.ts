import { checkApiKey, hasAuthority, SUBJECTS, ttlCache, type Bus, type Caller, type GatewayTokens } from '../../runtime/index.ts';
import type { Store } from '../../store/index.ts';
import type { McpAdmission, McpAdmit, McpGatewayContext } from './context.ts';

/** Where a client learns how to get a token for this gateway (RFC 9728). */
export const protectedResourceMetadataUrl = (ctx: McpGatewayContext) => `${ctx.origin}/.well-known/oauth-protected-resource`;

export const challenge = (ctx: McpGatewayContext) => `Bearer resource_metadata="${protectedResourceMetadataUrl(ctx)}", error="invalid_token"`;

/**
 * Who is calling a gateway. Only `Authorization: Bearer` is read (never cookies or query tokens); the credential is
 * classified by prefix: `ak-` an API key, `eyJ` a token this gateway issued, anything else an invalid token format.
 * A public gateway admits callers without a credential as anonymous; a credential that is present must be valid
 * on every gateway, public ones included, so a broken client learns of it instead of silently losing its identity.
 */
export function createMcpAdmission(deps: { store: Pick<Store, 'apiKeys' | 'principals'>; tokens: GatewayTokens; now: () => number; bus?: Bus; cacheMs?: number }): McpAdmit {
  // Verified credentials, per gateway, for at most a second (a key's or token's own expiry still applies on every
  // use); a revocation made through any node clears every node's cache at once.
  const admitted = ttlCache<string, { caller: Caller; expiresAt: number }>(deps.cacheMs ?? 1000, deps.now);
  deps.bus?.subscribe(SUBJECTS.identityChanged, () => admitted.clear());
  return async (ctx, req): Promise<McpAdmission> => {
    const refuse = (message: string): McpAdmission => ({ ok: false, status: 401, wwwAuthenticate: challenge(ctx), message });
    const header = req.headers.authorization;
    const raw = Array.isArray(header) ? header.join(',') : header;
    if (raw === undefined || raw.trim() === '') {
      if (ctx.gateway.authMode === 'public') return { ok: true, caller: null, callerKey: `ip:${req.ip}` };
      return refuse('missing credential: this gateway needs Authorization: Bearer <API key or access token>');
    }
    const m = /^Bearer\s+(\S+)\s*$/i.exec(raw.trim());
    if (!m) return refuse('invalid credential: expected Authorization: Bearer <credential>');
    const credential = m[1]!;
    const cacheKey = `${ctx.gateway.id}|${credential}`;
    const hit = admitted.get(cacheKey);
    if (hit && hit.expiresAt > deps.now()) return { ok: true, caller: hit.caller, callerKey: `principal:${hit.caller.principalId}` };
    let accountId: string;
    let expiresAt = Infinity;
    let principalId: string;
    let via: Caller['via'];
    let extra: Pick<Caller, 'keyId' | 'clientId'> = {};
    if (credential.startsWith('ak-')) {
      const key = await checkApiKey(deps.store, credential, deps.now());
      if (!key.ok) return refuse(`invalid credential: the API key is ${key.reason === 'malformed' ? 'malformed' : key.reason}`);
      ({ accountId, principalId } = key);
      if (key.expiresAt) expiresAt = Date.parse(key.expiresAt);
      via = 'api_key';
      extra = { keyId: key.keyId };
    } else if (credential.startsWith('eyJ')) {
      const token = await deps.tokens.verify({ gatewayId: ctx.gateway.id, accountId: ctx.gateway.accountId, keys: ctx.gateway.keys }, credential);
      if (!token.ok) return refuse(`invalid token: ${token.reason === 'expired' ? 'expired' : 'not issued for this gateway'}`);
      ({ account_id: accountId, sub: principalId } = token.claims);
      expiresAt = token.claims.exp * 1000;
      via = 'gateway_token';
      extra = { clientId: token.claims.client_id };
    } else {
      return refuse('invalid token format: expected an API key (ak-...) or a JWT access token (eyJ...)');
    }
    if (accountId !== ctx.gateway.accountId) return refuse('invalid credential: it belongs to another account');
    const principal = await deps.store.principals.get(accountId, principalId);
    if (!principal || principal.status !== 'active' || principal.role === null) return refuse('invalid credential: its principal is disabled or no longer a member');
    if (!hasAuthority(principal.role, 'read')) return refuse('invalid credential: its principal lacks read authority on this gateway');
    const caller: Caller = { accountId, principalId, kind: principal.kind, role: principal.role, via, ...extra };
    admitted.set(cacheKey, { caller, expiresAt });
    return { ok: true, caller, callerKey: `principal:${principalId}` };
  };
}
