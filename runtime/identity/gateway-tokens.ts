import { randomBytes, randomUUID } from 'node:crypto';
import { errors, jwtVerify, SignJWT } from 'jose';
import type { Store } from '../../store/index.ts';

export const GATEWAY_TOKEN_TTL_SECONDS = 3600;
export const gatewayAudience = (gatewayId: string) => `urn:platform:mcp-gateway:${gatewayId}`;
const keySetting = (gatewayId: string) => `mcp.gateway_key.${gatewayId}`;

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

/**
 * Each MCP gateway is its own authorization server with its own HS256 key (generated once, kept in the database so
 * every node agrees). A token names its gateway in the audience; a token of one gateway fails at every other, both
 * by signature and by audience. No JWKS is published: only the gateway verifies its tokens.
 */
export function createGatewayTokens(store: Pick<Store, 'settings'>, now: () => number) {
  const keys = new Map<string, Uint8Array>();
  async function keyOf(gatewayId: string): Promise<Uint8Array> {
    let k = keys.get(gatewayId);
    if (!k) {
      const secret = await store.settings.getOrCreate(keySetting(gatewayId), randomBytes(32).toString('base64url'));
      keys.set(gatewayId, (k = new TextEncoder().encode(secret)));
    }
    return k;
  }
  const seconds = () => Math.floor(now() / 1000);
  return {
    async sign(g: { gatewayId: string; origin: string }, c: { principalId: string; accountId: string; clientId: string; scope: string; resource?: string }): Promise<{ token: string; expiresIn: number }> {
      const iat = seconds();
      const aud = [gatewayAudience(g.gatewayId), ...(c.resource ? [c.resource] : [])];
      const token = await new SignJWT({ account_id: c.accountId, scope: c.scope, client_id: c.clientId })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setIssuer(g.origin)
        .setSubject(c.principalId)
        .setAudience(aud)
        .setIssuedAt(iat)
        .setExpirationTime(iat + GATEWAY_TOKEN_TTL_SECONDS)
        .setJti(randomUUID())
        .sign(await keyOf(g.gatewayId));
      return { token, expiresIn: GATEWAY_TOKEN_TTL_SECONDS };
    },
    async verify(g: { gatewayId: string; accountId: string }, token: string): Promise<GatewayTokenCheck> {
      let payload: Record<string, unknown>;
      try {
        ({ payload } = await jwtVerify(token, await keyOf(g.gatewayId), { algorithms: ['HS256'], currentDate: new Date(now()) }));
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
  };
}

export type GatewayTokens = ReturnType<typeof createGatewayTokens>;
