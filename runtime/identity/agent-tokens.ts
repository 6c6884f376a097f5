import { createHmac, randomUUID } from 'node:crypto';
import { loadJose } from './jose.ts';
import type { MemberRecord, Store } from '../../store/index.ts';
import { PlatformError } from '../core/errors/index.ts';

export const AGENT_TOKEN_TTL_SECONDS = 3600;
/** Delegation hops a token may carry (nested RFC 8693 `act` claims): spec §5 and §8, "at most 5". */
export const MAX_DELEGATION_DEPTH = 5;
export const agentAudience = (agentId: string) => `urn:platform:agent:${agentId}`;

/** An RFC 8693 actor claim: the party acting for the subject; a nested `act` is the actor before it. */
export interface ActClaim {
  sub: string;
  act?: ActClaim;
}

export interface AgentTokenClaims {
  iss: string;
  sub: string;
  aud: string[];
  account_id: string;
  act?: ActClaim;
  iat: number;
  exp: number;
  jti: string;
}

/** A verified token: the subject the call runs for, and who acts for it (current actor first). */
export interface AgentTokenIdentity {
  accountId: string;
  subject: string;
  actors: string[];
  expiresAt: number;
}

export type AgentTokenCheck =
  | ({ ok: true } & AgentTokenIdentity)
  | { ok: false; reason: 'malformed' | 'invalid' | 'expired' | 'wrong_audience' | 'too_deep' };

const JWS_RE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/**
 * The actors of a claim, current first. Walking stops one level past the limit, so a hostile token nested a
 * million deep costs no more than a legal one; what it returns then is longer than the limit and gets refused.
 */
function actorsOf(act: unknown): string[] | null {
  const out: string[] = [];
  let a = act;
  while (a !== undefined) {
    if (typeof a !== 'object' || a === null || typeof (a as ActClaim).sub !== 'string' || (a as ActClaim).sub === '') return null;
    out.push((a as ActClaim).sub);
    if (out.length > MAX_DELEGATION_DEPTH) break;
    a = (a as ActClaim).act;
  }
  return out;
}

const nest = (actors: readonly string[]): ActClaim | undefined =>
  actors.reduceRight<ActClaim | undefined>((inner, sub) => (inner ? { sub, act: inner } : { sub }), undefined);

/**
 * Tokens that admit a caller at an agent gateway (spec §5, agent gateway 3): HS256, audience
 * `urn:platform:agent:{id}`, the account, and the delegation chain as nested `act` claims. The key is derived from
 * the platform's signing secret for this one purpose, so neither a management token nor a form ticket verifies
 * here, and an agent token verifies nowhere else.
 */
export function createAgentTokens(secret: string, issuer: string, now: () => number) {
  const key = createHmac('sha256', secret).update('platform/agent-token/v1').digest();
  const seconds = () => Math.floor(now() / 1000);
  return {
    issuer,
    /**
     * Signs the claims as given. It checks nothing about the principals: `mintAgentToken` is the entry point that
     * does; this is the signer under it (and lets tests build tokens a correct minter would refuse).
     */
    async sign(c: { accountId: string; agentIds: readonly string[]; subject: string; actors?: readonly string[]; ttlSeconds?: number }): Promise<{ token: string; expiresIn: number }> {
      const iat = seconds();
      const ttl = c.ttlSeconds ?? AGENT_TOKEN_TTL_SECONDS;
      const act = nest(c.actors ?? []);
      const { SignJWT } = await loadJose();
      const token = await new SignJWT({ account_id: c.accountId, ...(act ? { act } : {}) })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setIssuer(issuer)
        .setSubject(c.subject)
        .setAudience(c.agentIds.map(agentAudience))
        .setIssuedAt(iat)
        .setExpirationTime(iat + ttl)
        .setJti(randomUUID())
        .sign(key);
      return { token, expiresIn: ttl };
    },
    /** Signature, issuer, expiry, the agent's audience and the chain's shape; the principals are checked by the caller. */
    async verify(token: string, agentId: string): Promise<AgentTokenCheck> {
      if (!JWS_RE.test(token)) return { ok: false, reason: 'malformed' };
      const { errors, jwtVerify } = await loadJose();
      let payload: Record<string, unknown>;
      try {
        ({ payload } = await jwtVerify(token, key, { algorithms: ['HS256'], issuer, currentDate: new Date(now()) }));
      } catch (err) {
        return { ok: false, reason: err instanceof errors.JWTExpired ? 'expired' : 'invalid' };
      }
      const { sub, account_id, exp, act } = payload;
      if (typeof sub !== 'string' || sub === '' || typeof account_id !== 'string' || typeof exp !== 'number') return { ok: false, reason: 'invalid' };
      const aud = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
      if (!aud.includes(agentAudience(agentId))) return { ok: false, reason: 'wrong_audience' };
      const actors = actorsOf(act);
      if (!actors) return { ok: false, reason: 'invalid' };
      if (actors.length > MAX_DELEGATION_DEPTH) return { ok: false, reason: 'too_deep' };
      return { ok: true, accountId: account_id, subject: sub, actors, expiresAt: exp * 1000 };
    },
  };
}

export type AgentTokens = ReturnType<typeof createAgentTokens>;

/**
 * The principals of a delegation chain (subject first, then each actor), each a live member of the account; null
 * when any is unknown there, disabled or no longer a member (spec §5: every subject in the chain must resolve).
 */
export async function resolveDelegation(store: Pick<Store, 'principals'>, accountId: string, chain: readonly string[]): Promise<MemberRecord[] | null> {
  const members = await Promise.all(chain.map((id) => store.principals.get(accountId, id)));
  return members.every((m): m is MemberRecord => m !== null && m.status === 'active' && m.role !== null) ? members : null;
}

/**
 * Mints a token for calling agents of one account as `subject`, through a chain of `actors` (the one presenting the
 * token first, the one who first acted for the subject last). Refuses a chain deeper than five, an agent outside
 * the account, and any principal that is not a live member of it: a token is only minted if it would be admitted.
 */
export async function mintAgentToken(
  deps: { store: Pick<Store, 'principals' | 'agents'>; tokens: AgentTokens },
  req: { accountId: string; agentId: string; subject: string; actors?: readonly string[]; ttlSeconds?: number },
): Promise<{ token: string; expiresIn: number }> {
  const actors = req.actors ?? [];
  if (actors.length > MAX_DELEGATION_DEPTH) throw new PlatformError('IDENTITY_DELEGATION_INVALID', `a delegation chain holds at most ${MAX_DELEGATION_DEPTH} actors (got ${actors.length})`);
  const ttl = req.ttlSeconds ?? AGENT_TOKEN_TTL_SECONDS;
  if (!Number.isSafeInteger(ttl) || ttl < 1 || ttl > AGENT_TOKEN_TTL_SECONDS) throw new PlatformError('IDENTITY_DELEGATION_INVALID', `a token lives 1 to ${AGENT_TOKEN_TTL_SECONDS} seconds`);
  if (!(await deps.store.agents.get(req.accountId, req.agentId))) throw new PlatformError('IDENTITY_DELEGATION_INVALID', `no agent ${req.agentId} in the account`);
  if (!(await resolveDelegation(deps.store, req.accountId, [req.subject, ...actors]))) {
    throw new PlatformError('IDENTITY_DELEGATION_INVALID', 'every principal of the chain must be a live member of the account');
  }
  return deps.tokens.sign({ accountId: req.accountId, agentIds: [req.agentId], subject: req.subject, actors, ttlSeconds: ttl });
}
