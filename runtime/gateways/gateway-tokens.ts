import { randomBytes, randomUUID } from 'node:crypto';
import { FIRST_KEY_ID, type GatewayKeys } from '../../actors/index.ts';
import type { Store } from '../../store/index.ts';
import { loadJose } from '../identity/index.ts';

export const GATEWAY_TOKEN_TTL_SECONDS = 3600;
export const gatewayAudience = (gatewayId: string) => `urn:platform:mcp-gateway:${gatewayId}`;

export interface GatewayTokenClaims {
  sub: string;
  account_id: string;
  scope: string;
  client_id: string;
  aud: string[];
  iss: string;
  exp: number;
  iat: number;
  jti: string;
}

export type GatewayTokenCheck = { ok: true; claims: GatewayTokenClaims } | { ok: false; reason: 'invalid' | 'expired' | 'wrong_gateway' | 'scope' | 'account' };

/** The keys a gateway signs and verifies with (from its actor's view; a gateway without one has its first key). */
export interface SigningGateway {
  gatewayId: string;
  accountId: string;
  keys?: GatewayKeys;
}

const DEFAULT_KEYS: GatewayKeys = { current: FIRST_KEY_ID, previous: null };

/**
 * Each MCP gateway is its own authorization server with its own HS256 keys (kept in the database so every node
 * agrees; never published). A token names its key in its header (`kid`) and its gateway in its audience: a token of
 * one gateway fails at every other, by signature and by audience. After a rotation the new key signs and the previous
 * one still verifies until the gateway's actor drops it, when every token it signed has expired. Tokens issued before
 * key ids existed carry none and are verified with the first key.
 */
export function createGatewayTokens(store: Pick<Store, 'gatewayKeys'>, now: () => number) {
  const secrets = new Map<string, Uint8Array>();
  async function secretOf(gatewayId: string, kid: string, create: boolean): Promise<Uint8Array | null> {
    const cacheKey = `${gatewayId}/${kid}`;
    let k = secrets.get(cacheKey);
    if (!k) {
      const secret = create ? await store.gatewayKeys.getOrCreate(gatewayId, kid, randomBytes(32).toString('base64url')) : await store.gatewayKeys.get(gatewayId, kid);
      if (!secret) return null;
      secrets.set(cacheKey, (k = new TextEncoder().encode(secret)));
    }
    return k;
  }
  const seconds = () => Math.floor(now() / 1000);
  return {
    async sign(g: SigningGateway & { origin: string }, c: { principalId: string; accountId: string; clientId: string; scope: string; resource?: string }): Promise<{ token: string; expiresIn: number }> {
      const kid = (g.keys ?? DEFAULT_KEYS).current;
      const iat = seconds();
      const aud = [gatewayAudience(g.gatewayId), ...(c.resource ? [c.resource] : [])];
      const { SignJWT } = await loadJose();
      const token = await new SignJWT({ account_id: c.accountId, scope: c.scope, client_id: c.clientId })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid })
        .setIssuer(g.origin)
        .setSubject(c.principalId)
        .setAudience(aud)
        .setIssuedAt(iat)
        .setExpirationTime(iat + GATEWAY_TOKEN_TTL_SECONDS)
        .setJti(randomUUID())
        .sign((await secretOf(g.gatewayId, kid, true))!);
      return { token, expiresIn: GATEWAY_TOKEN_TTL_SECONDS };
    },
    async verify(g: SigningGateway, token: string): Promise<GatewayTokenCheck> {
      const keys = g.keys ?? DEFAULT_KEYS;
      const { decodeProtectedHeader, errors, jwtVerify } = await loadJose();
      let kid: string;
      try {
        kid = (decodeProtectedHeader(token).kid as string | undefined) ?? FIRST_KEY_ID;
      } catch {
        return { ok: false, reason: 'invalid' };
      }
      // Only the current key, and the previous one until it is dropped, verify anything.
      const live = kid === keys.current || (kid === keys.previous?.kid && keys.previous.dropAt > now());
      const secret = live ? await secretOf(g.gatewayId, kid, kid === keys.current) : null;
      if (!secret) return { ok: false, reason: 'invalid' };
      let payload: Record<string, unknown>;
      try {
        ({ payload } = await jwtVerify(token, secret, { algorithms: ['HS256'], currentDate: new Date(now()) }));
      } catch (err) {
        return { ok: false, reason: err instanceof errors.JWTExpired ? 'expired' : 'invalid' };
      }
      const aud = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
      if (!aud.includes(gatewayAudience(g.gatewayId))) return { ok: false, reason: 'wrong_gateway' };
      if (typeof payload.scope !== 'string' || !payload.scope.split(' ').includes('mcp')) return { ok: false, reason: 'scope' };
      if (payload.account_id !== g.accountId) return { ok: false, reason: 'account' };
      if (typeof payload.sub !== 'string') return { ok: false, reason: 'invalid' };
      return { ok: true, claims: payload as unknown as GatewayTokenClaims };
    },
    /** Forgets a gateway's cached secrets (its keys changed). */
    forget(gatewayId: string) {
      for (const k of secrets.keys()) if (k.startsWith(`${gatewayId}/`)) secrets.delete(k);
    },
  };
}

export type GatewayTokens = ReturnType<typeof createGatewayTokens>;
