import { loadJose } from './jose.ts';

export const ACCESS_TOKEN_TTL_SECONDS = 3600;

export interface DeviceTokenClaims {
  sub: string;
  aud: string;
  account_id: string;
  scope: string;
  iss: string;
  iat: number;
  exp: number;
}

export type TokenCheck = { ok: true; claims: DeviceTokenClaims } | { ok: false; reason: 'malformed' | 'invalid' | 'expired' };

/** HS256 tokens of the management API (device flow) and short-lived signed form tickets of its web pages. */
export function createTokenSigner(secret: string, issuer: string, now: () => number) {
  const key = new TextEncoder().encode(secret);
  const seconds = () => Math.floor(now() / 1000);
  return {
    issuer,
    async signAccessToken(c: { userId: string; clientId: string; accountId: string; scope: string }): Promise<string> {
      const { SignJWT } = await loadJose();
      const iat = seconds();
      return new SignJWT({ account_id: c.accountId, scope: c.scope })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setIssuer(issuer)
        .setSubject(c.userId)
        .setAudience(c.clientId)
        .setIssuedAt(iat)
        .setExpirationTime(iat + ACCESS_TOKEN_TTL_SECONDS)
        .sign(key);
    },
    async verifyAccessToken(token: string): Promise<TokenCheck> {
      if (!/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token)) return { ok: false, reason: 'malformed' };
      const { errors, jwtVerify } = await loadJose();
      try {
        const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'], issuer, currentDate: new Date(now()), typ: 'JWT' });
        const { sub, aud, account_id, scope, iat, exp } = payload as Record<string, unknown>;
        if (typeof sub !== 'string' || typeof aud !== 'string' || typeof account_id !== 'string' || typeof scope !== 'string') {
          return { ok: false, reason: 'invalid' };
        }
        return { ok: true, claims: { sub, aud, account_id, scope, iss: issuer, iat: Number(iat), exp: Number(exp) } };
      } catch (err) {
        if (err instanceof errors.JWTExpired) return { ok: false, reason: 'expired' };
        return { ok: false, reason: 'invalid' };
      }
    },
    /** A signed, 5-minute proof carried in a hidden form field: pages keep sign-in state without cookies. */
    async signTicket(purpose: string, data: Record<string, string>): Promise<string> {
      const { SignJWT } = await loadJose();
      const iat = seconds();
      return new SignJWT({ ...data, purpose }).setProtectedHeader({ alg: 'HS256' }).setIssuedAt(iat).setExpirationTime(iat + 300).sign(key);
    },
    async verifyTicket(purpose: string, ticket: string): Promise<Record<string, string> | null> {
      const { jwtVerify } = await loadJose();
      try {
        const { payload } = await jwtVerify(ticket, key, { algorithms: ['HS256'], currentDate: new Date(now()) });
        return payload.purpose === purpose ? (payload as Record<string, string>) : null;
      } catch {
        return null;
      }
    },
  };
}

export type TokenSigner = ReturnType<typeof createTokenSigner>;
