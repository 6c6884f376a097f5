import type { TaskCaller } from '../../actors/index.ts';
import type { Role, Store } from '../../store/index.ts';
import { isPlatformError } from '../core/errors/index.ts';
import { hasAuthority, ROLES } from '../identity/index.ts';
import type { A2aCaller, A2aPart, AgentGateway } from '../agents/index.ts';

/** The lower of two roles: a run never has more authority than its maker had when they made what starts it. */
export const lowerRole = (a: Role, b: Role): Role => (ROLES.indexOf(a) >= ROLES.indexOf(b) ? a : b);

export interface AgentRunDeps {
  store: Pick<Store, 'agents' | 'principals' | 'agentTasks'>;
  agents: () => Pick<AgentGateway, 'sendMessage'>;
}

export interface AgentRunRequest {
  accountId: string;
  agentId: string;
  /** The maker of the schedule or trigger, as kept when they made it. */
  maker: TaskCaller;
  /** The same id however often this start is attempted: the task starts once. */
  taskId: string;
  parts: A2aPart[];
  contextId: string | null;
  metadata?: Record<string, unknown>;
  signal?: AbortSignal;
}

/**
 * What a start came to: the task exists (made now or by an earlier attempt), or why not. `gone`: the maker can no
 * longer run the agent, or the agent is gone; nothing will start for this maker again.
 */
export type AgentRunOutcome = { ok: true; existed: boolean } | { ok: false; gone: boolean; error: string; code: string; transient: boolean };

/**
 * Starts a run of an agent that nobody is waiting on (a schedule's occurrence, a trigger's firing) as the principal who
 * made what starts it: read again now (removed, disabled or without execute authority: refused), with the lower of
 * their role now and then. The task is made through the agent runtime's own SendMessage, returning at once.
 */
export async function startAgentRun(deps: AgentRunDeps, r: AgentRunRequest): Promise<AgentRunOutcome> {
  const member = await deps.store.principals.get(r.accountId, r.maker.principalId);
  if (!member || member.status !== 'active' || !member.role || !hasAuthority(member.role, 'execute')) {
    return { ok: false, gone: true, error: 'the principal who made it can no longer run the agent (removed, disabled, or without execute authority)', code: 'TRIGGER_REFUSED', transient: false };
  }
  if (!(await deps.store.agents.get(r.accountId, r.agentId))) return { ok: false, gone: true, error: 'the agent is gone', code: 'TRIGGER_REFUSED', transient: false };
  // Made by an earlier attempt (a crash after the task was made, a delivery sent twice): SendMessage would take the
  // message as the task's continuation, so the task's existence is read first, and again when the send did not start
  // it (two attempts at once: the other one made it).
  const exists = async () => (await deps.store.agentTasks.get({ accountId: r.accountId, agentId: r.agentId }, r.taskId)) !== null;
  if (await exists()) return { ok: true, existed: true };
  const caller: A2aCaller = {
    accountId: r.accountId,
    agentId: r.agentId,
    principalId: r.maker.principalId,
    principalKind: r.maker.kind,
    role: lowerRole(member.role, r.maker.role as Role),
    // A user's own credential never calls an agent (an agent token does, spec §5): the run is the user's, delegated.
    via: r.maker.via === 'api_key' && r.maker.kind !== 'user' ? 'api_key' : 'agent_token',
    ...(r.maker.actors?.length ? { actors: r.maker.actors } : {}),
    signal: r.signal ?? new AbortController().signal,
  };
  const message = {
    messageId: r.taskId,
    role: 'ROLE_USER' as const,
    parts: r.parts,
    taskId: r.taskId,
    ...(r.contextId ? { contextId: r.contextId } : {}),
    ...(r.metadata ? { metadata: r.metadata } : {}),
  };
  try {
    const sent = await deps.agents().sendMessage({ message, configuration: { returnImmediately: true, historyLength: 0 } }, caller);
    // A message instead of the task: the id was taken meanwhile, and the send was read as an answer to that task.
    if ('task' in sent) return { ok: true, existed: false };
    if (await exists()) return { ok: true, existed: true };
    return { ok: false, gone: false, error: 'the run did not start', code: 'PLT_INTERNAL', transient: true };
  } catch (err) {
    if (!isPlatformError(err)) throw err;
    if (await exists()) return { ok: true, existed: true };
    // Busy or moving parts pass; anything else (a message the agent refuses) fails the same way again.
    const transient = err.kind === 'overloaded' || err.kind === 'unavailable' || err.kind === 'rate_limited' || err.kind === 'internal';
    return { ok: false, gone: false, error: `${err.code}: ${err.message}`, code: err.code, transient };
  }
}
