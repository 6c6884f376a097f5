import type { IncomingHttpHeaders } from 'node:http';
import { admitAgentToken, checkApiKey, hasAuthority, PlatformError, SUBJECTS, ttlCache, type AgentTokens, type Bus } from '../../runtime/index.ts';
import type { AgentRecord, Store } from '../../store/index.ts';
import type { A2aCallContext } from './backend.ts';

/** Who is calling, as the backend's context carries it (without the per-request members). */
export type A2aCaller = Omit<A2aCallContext, 'extensions' | 'signal'>;

export type A2aAdmit = (agent: AgentRecord, headers: IncomingHttpHeaders) => Promise<A2aCaller>;

const unauthenticated = (message: string) => new PlatformError('A2A_CREDENTIAL_INVALID', `invalid credential: ${message}`);

/**
 * The agent gateway's admission (spec §5, agent gateway): one `Authorization: Bearer` credential, never a cookie or
 * a query parameter, told apart by prefix — `ak-` an API key, anything else an agent token (JWT).
 * - An API key must be live, of the agent's account, its principal a live member; then (403, not 401) a service
 *   principal's, with execute authority. A user's key is refused even when everything else holds.
 * - An agent token must verify, name this agent in its audience and the agent's account, carry at most five
 *   delegation hops, and every principal of its chain (the subject and each actor, the presenting one included) must
 *   be a live member of the account (401 otherwise) holding execute authority (403 otherwise).
 * Every check fails closed: a lookup that throws refuses the request. Admissions are remembered per node for a
 * second (never past the credential's own expiry); a revocation through any node clears every node's memory.
 */
export function createA2aAdmission(deps: { store: Pick<Store, 'apiKeys' | 'principals'>; agentTokens: AgentTokens; now: () => number; bus?: Bus; cacheMs?: number }): A2aAdmit {
  const admitted = ttlCache<string, A2aCaller>(deps.cacheMs ?? 1000, deps.now);
  deps.bus?.subscribe(SUBJECTS.identityChanged, () => admitted.clear());

  async function byApiKey(agent: AgentRecord, credential: string): Promise<{ caller: A2aCaller; expiresAt: number }> {
    const key = await checkApiKey(deps.store, credential, deps.now());
    if (!key.ok) throw unauthenticated(`the API key is ${key.reason}`);
    if (key.accountId !== agent.accountId) throw unauthenticated("the API key belongs to another account than the agent's");
    const p = await deps.store.principals.get(key.accountId, key.principalId);
    if (!p || p.status !== 'active' || p.role === null) throw unauthenticated("the key's principal is disabled or no longer a member of the account");
    if (p.kind !== 'service') throw new PlatformError('A2A_USER_KEY', "forbidden: a user's API key cannot call an agent; use a service principal's key or an agent token");
    if (!hasAuthority(p.role, 'execute')) throw new PlatformError('A2A_FORBIDDEN', `forbidden: the principal's role (${p.role}) has no execute authority on agents`);
    const caller: A2aCaller = { accountId: agent.accountId, agentId: agent.id, principalId: p.id, principalKind: p.kind, role: p.role, via: 'api_key', actors: [] };
    return { caller, expiresAt: key.expiresAt ? Date.parse(key.expiresAt) : Infinity };
  }

  // The token half is the runtime's one admission of agent tokens, also run in-process when an agent calls another.
  const byToken = (agent: AgentRecord, credential: string) => admitAgentToken({ store: deps.store, agentTokens: deps.agentTokens }, agent, credential);

  return async (agent, headers) => {
    const header = headers.authorization;
    const raw = (Array.isArray(header) ? header.join(',') : header)?.trim();
    if (!raw) throw new PlatformError('A2A_CREDENTIAL_MISSING');
    const m = /^Bearer\s+(\S+)$/i.exec(raw);
    if (!m) throw unauthenticated('expected Authorization: Bearer <API key or agent token>');
    const credential = m[1]!;
    const cacheKey = `${agent.id}|${credential}`;
    const hit = admitted.get(cacheKey);
    if (hit) return hit;
    const { caller, expiresAt } = credential.startsWith('ak-') ? await byApiKey(agent, credential) : await byToken(agent, credential);
    if (expiresAt > deps.now()) admitted.set(cacheKey, caller, expiresAt);
    return caller;
  };
}
