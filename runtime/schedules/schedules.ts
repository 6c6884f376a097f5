import { randomUUID } from 'node:crypto';
import { scheduleAddressOf, type ScheduleContext, type ScheduleInput, type StartRunInput, type StartRunOutput } from '../../actors/index.ts';
import { scheduleRowWrite, type ScheduleRow, type ScheduleRowStatus, type Store } from '../../store/index.ts';
import type { ActorSystem, EffectContext, RowProjection } from '../core/actor-host/index.ts';
import { isPlatformError, PlatformError } from '../core/errors/index.ts';
import { callerSnapshot, hasAuthority, type Caller } from '../identity/index.ts';
import type { AgentGateway } from '../agents/index.ts';
import { startAgentRun } from './agent-run.ts';
import { nextOccurrence, SCHEDULE_LIMITS, specOf, type WhenRequest } from './schedule-spec.ts';

const iso = (ms: number) => new Date(ms).toISOString();

/** A schedule's row, from its actor's state (the projection written in each of its turns). */
export const scheduleProjection: RowProjection = ({ after }) => {
  const c = after.context as unknown as ScheduleContext;
  return scheduleRowWrite({
    accountId: c.accountId,
    id: c.scheduleId,
    status: c.status,
    nextAt: c.nextAt === null ? null : iso(c.nextAt),
    runs: c.runs,
    lastTaskId: c.lastRun?.taskId ?? null,
    lastRunAt: c.lastRun?.at ?? null,
    lastError: c.lastError,
    updatedAt: c.updatedAt,
  });
};

/** The task an occurrence starts: the same id however often its start is attempted, so it starts once. */
export const occurrenceTaskId = (scheduleId: string, occurrence: number) => `schedule-${scheduleId}-${occurrence}`;

export interface SchedulesDeps {
  store: Pick<Store, 'schedules' | 'agents' | 'principals' | 'agentTasks' | 'tx'>;
  actors: () => ActorSystem;
  /** The agents' runs (built before the host that runs schedules; read when a schedule fires). */
  agents: () => Pick<AgentGateway, 'sendMessage'>;
  now: () => number;
}

export interface ScheduleRequest extends WhenRequest {
  message: string;
  /** The thread every run continues; absent: each run opens its own. */
  contextId?: string;
  /** The task whose tool call made it (shown, and the thread `current` refers to). */
  originTaskId?: string;
}

const notFound = (id: string) => new PlatformError('SCHEDULE_NOT_FOUND', `no schedule ${id} visible to this caller`);

/**
 * Schedules (issue 15 §3): Schedule actors, their effect (an occurrence starts a task of the agent as the schedule's
 * creator), and what the Scheduler built-in and the management API call.
 */
export function createSchedules(deps: SchedulesDeps) {
  const visible = (c: Caller, r: ScheduleRow) => hasAuthority(c.role, 'write') || r.ownerId === c.principalId;
  const found = async (c: Caller, id: string) => {
    const r = /^[0-9a-f-]{36}$/.test(id) ? await deps.store.schedules.get(c.accountId, id) : null;
    if (!r || !visible(c, r)) throw notFound(id);
    return r;
  };

  async function startRun(input: StartRunInput, ctx: EffectContext): Promise<StartRunOutput> {
    const now = deps.now();
    const at = iso(now);
    // After a long outage the missed occurrences run once, now, and the schedule goes on from the present.
    const nextAt = nextOccurrence(input.spec, Math.max(now, input.occurrence));
    const taskId = occurrenceTaskId(input.scheduleId, input.occurrence);
    const r = await startAgentRun(deps, { accountId: input.accountId, agentId: input.agentId, maker: input.caller, taskId, parts: [{ text: input.message }], contextId: input.contextId, signal: ctx.signal });
    if (r.ok) return { taskId, error: null, nextAt, keep: true, at };
    if (r.gone) return { taskId: null, error: r.error, nextAt: null, keep: false, at };
    return { taskId: null, error: r.error, nextAt, keep: nextAt !== null, at };
  }

  return {
    effects: { startRun },

    /** Makes a schedule of `agentId` for `caller` (execute authority), within the limits per agent and account. */
    async create(caller: Caller, agentId: string, r: ScheduleRequest): Promise<ScheduleRow> {
      if (!hasAuthority(caller.role, 'execute')) throw new PlatformError('MGMT_FORBIDDEN', `forbidden: the ${caller.role} role lacks execute authority`);
      if (typeof r.message !== 'string' || r.message.trim() === '') throw new PlatformError('SCHEDULE_INVALID', 'message: the text each run starts with');
      if (Buffer.byteLength(r.message) > SCHEDULE_LIMITS.messageBytes) throw new PlatformError('SCHEDULE_INVALID', `message: at most ${SCHEDULE_LIMITS.messageBytes} bytes`);
      if (r.message.includes('\0')) throw new PlatformError('SCHEDULE_INVALID', 'message: no NUL characters');
      const now = deps.now();
      const { spec, firstAt } = specOf(r, now);
      const id = randomUUID();
      const row = {
        accountId: caller.accountId,
        id,
        agentId,
        ownerId: caller.principalId,
        kind: spec.kind,
        runAt: spec.kind === 'once' ? iso(spec.at) : null,
        cron: spec.kind === 'cron' ? spec.cron : null,
        timezone: spec.kind === 'cron' ? spec.timezone : null,
        message: r.message,
        contextId: r.contextId ?? null,
        originTaskId: r.originTaskId ?? null,
        nextAt: iso(firstAt),
        createdAt: iso(now),
      };
      // The count and the row in one transaction with the account's row held: two makers never both pass the limit.
      await deps.store.tx(async (tx) => {
        if (!(await tx.agents.get(caller.accountId, agentId))) throw new PlatformError('MGMT_AGENT_NOT_FOUND', `no agent ${agentId} in this account`);
        await tx.accounts.lock(caller.accountId);
        const active = await tx.schedules.activeCounts(caller.accountId, agentId);
        if (active.agent >= SCHEDULE_LIMITS.perAgent) throw new PlatformError('SCHEDULE_LIMIT', `this agent has ${SCHEDULE_LIMITS.perAgent} active schedules already: cancel one first`);
        if (active.account >= SCHEDULE_LIMITS.perAccount) throw new PlatformError('SCHEDULE_LIMIT', `this account has ${SCHEDULE_LIMITS.perAccount} active schedules already: cancel one first`);
        await tx.schedules.create(row);
      });
      const input: ScheduleInput = {
        accountId: caller.accountId,
        scheduleId: id,
        agentId,
        caller: callerSnapshot(caller),
        message: r.message,
        contextId: r.contextId ?? null,
        spec,
        firstAt,
        origin: r.originTaskId ? { kind: 'tool', taskId: r.originTaskId } : { kind: 'api' },
        at: iso(now),
      };
      try {
        await deps.actors().create(scheduleAddressOf(caller.accountId, id), input);
      } catch (err) {
        await deps.store.schedules.remove(caller.accountId, id).catch(() => {});
        throw err;
      }
      return (await deps.store.schedules.get(caller.accountId, id))!;
    },

    get: found,
    /** The caller's schedules (admins and owners: everyone's), newest first. */
    list: (c: Caller, q: { agentId?: string; status?: ScheduleRowStatus; limit: number; before?: { createdAt: string; id: string } }) =>
      deps.store.schedules.list(c.accountId, { ...q, ...(hasAuthority(c.role, 'write') ? {} : { ownerId: c.principalId }) }),

    /** Cancels a schedule that has not ended (its creator, or an admin or owner of the account). */
    async cancel(c: Caller, id: string): Promise<ScheduleRow> {
      const r = await found(c, id);
      if (r.status !== 'active') throw new PlatformError('SCHEDULE_ENDED', `schedule ${id} has ended (${r.status})`);
      try {
        await deps.actors().ask(scheduleAddressOf(c.accountId, id), { type: 'CANCEL', at: iso(deps.now()), by: c.principalId });
      } catch (err) {
        if (isPlatformError(err, 'PLT_ACTOR_NOT_FOUND')) throw new PlatformError('SCHEDULE_ENDED', `schedule ${id} has ended`);
        throw err;
      }
      return (await deps.store.schedules.get(c.accountId, id))!;
    },
  };
}

export type Schedules = ReturnType<typeof createSchedules>;
