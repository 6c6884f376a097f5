import type { MemberRecord, PrincipalKind, Role, Store } from '../../store/index.ts';
import { PlatformError } from '../core/errors/index.ts';
import { resolveDelegation, type AgentTokens } from './agent-tokens.ts';
import { hasAuthority, ROLES } from './roles.ts';

/** Who an admitted agent token calls as: its subject, with the lowest role along its chain, and the chain's actors. */
export interface AgentTokenCaller {
  accountId: string;
  agentId: string;
  principalId: string;
  principalKind: PrincipalKind;
  role: Role;
  via: 'agent_token';
  /** The actors of the token's delegation chain, the one presenting it first. */
  actors: string[];
}

const unauthenticated = (message: string) => new PlatformError('A2A_CREDENTIAL_INVALID', `invalid credential: ${message}`);

/** The role with the fewest authorities, so a delegated call never holds more than any principal in its chain. */
const lowest = (members: MemberRecord[]): Role => members.map((m) => m.role!).reduce((a, b) => (ROLES.indexOf(b) > ROLES.indexOf(a) ? b : a));

/**
 * Admits an agent token at one agent (spec §5, agent gateway 3 and 4): it must verify, name this agent in its
 * audience and the agent's account, carry at most five delegation hops, and every principal of its chain (the
 * subject and each actor, the presenting one included) must be a live member of the account (A2A_CREDENTIAL_INVALID
 * otherwise, a 401 at the gateway) holding execute authority (A2A_FORBIDDEN otherwise, a 403). The call runs as the
 * subject with the lowest role of the chain: no elevation.
 *
 * The one admission of agent tokens: the agent gateway runs it for a bearer token, and an agent calling another agent
 * as a tool runs it in-process on the token it minted, so a delegated call is admitted exactly as an outside one.
 */
export async function admitAgentToken(
  deps: { store: Pick<Store, 'principals'>; agentTokens: AgentTokens },
  agent: { id: string; accountId: string },
  token: string,
): Promise<{ caller: AgentTokenCaller; expiresAt: number }> {
  const t = await deps.agentTokens.verify(token, agent.id);
  if (!t.ok) {
    const why = { malformed: 'it is not a JWT', invalid: 'its signature or claims are not valid', expired: 'it has expired', wrong_audience: 'its audience does not name this agent', too_deep: 'its delegation chain is deeper than 5' }[t.reason];
    throw unauthenticated(`the token is refused: ${why}`);
  }
  if (t.accountId !== agent.accountId) throw unauthenticated("the token is for another account than the agent's");
  const chain = await resolveDelegation(deps.store, agent.accountId, [t.subject, ...t.actors]);
  if (!chain) throw unauthenticated('a principal of its delegation chain is unknown, disabled or no longer a member of the account');
  const weak = chain.find((m) => !hasAuthority(m.role, 'execute'));
  if (weak) throw new PlatformError('A2A_FORBIDDEN', `forbidden: a principal of the delegation chain (role ${weak.role}) has no execute authority on agents`);
  const subject = chain[0]!;
  const caller: AgentTokenCaller = { accountId: agent.accountId, agentId: agent.id, principalId: subject.id, principalKind: subject.kind, role: lowest(chain), via: 'agent_token', actors: t.actors };
  return { caller, expiresAt: t.expiresAt };
}
