import { assign, emit, enqueueActions, setup } from 'xstate';
import type { TaskCaller } from './agent-task.ts';
import { effect } from './effects.ts';

/**
 * A future run of an agent, once or on a cron expression (issue 15 §3). Its occurrences are durable timers, so each
 * fires on one node of the cluster, after restarts and shard moves; each occurrence starts one ordinary task of the
 * agent (`startRun`, an effect with the occurrence's task id: started again after a crash, it finds the task it made).
 * The run is the schedule's creator's, with no more authority than they had when they made it.
 *
 * waiting ──FIRE (durable timer at nextAt)──▶ firing ──run started, a next occurrence──▶ waiting
 *    │                                           ├──run started, no next occurrence──▶ completed
 *    │                                           └──the creator can no longer run it──▶ failed
 *    └──CANCEL──▶ canceled                   firing ──CANCEL──▶ canceled (the start is aborted)
 *
 * Pure: times come with events (FIRE's occurrence, the effect's `at` and `nextAt`, computed by the runtime).
 */

export type ScheduleStatus = 'active' | 'completed' | 'canceled' | 'failed';

/** When it runs: once at a time, or at every occurrence of a five-field cron expression in a time zone. */
export type ScheduleSpec = { kind: 'once'; at: number } | { kind: 'cron'; cron: string; timezone: string };

export interface ScheduleInput {
  accountId: string;
  scheduleId: string;
  agentId: string;
  /** Who made it: every run is theirs (never more than this authority). */
  caller: TaskCaller;
  /** The user message each run starts with. */
  message: string;
  /** The thread each run continues; null: each run opens a thread of its own. */
  contextId: string | null;
  spec: ScheduleSpec;
  /** The first occurrence (epoch ms), computed when it was made. */
  firstAt: number;
  /** What made it: an agent's tool call in a task, or the management API. */
  origin: { kind: 'tool'; taskId: string } | { kind: 'api' };
  at: string;
}

/** What an occurrence's start needs: the schedule's own fields, and which occurrence it is. */
export interface StartRunInput extends Pick<ScheduleInput, 'accountId' | 'scheduleId' | 'agentId' | 'caller' | 'message' | 'contextId' | 'spec'> {
  /** The occurrence being run (epoch ms): with the schedule's id, the run's task id. */
  occurrence: number;
}

export interface StartRunOutput {
  /** The task the occurrence started; null when it could not start (`error` says why). */
  taskId: string | null;
  error: string | null;
  /** The next occurrence after this one and after now (a schedule that missed several while down runs once); null: none. */
  nextAt: number | null;
  /** False: the schedule cannot go on (its creator can no longer run the agent, the agent is gone). */
  keep: boolean;
  at: string;
}

export interface ScheduleContext extends ScheduleInput {
  status: ScheduleStatus;
  nextAt: number | null;
  runs: number;
  lastRun: { taskId: string; occurrence: number; at: string } | null;
  lastError: string | null;
  updatedAt: string;
}

export type ScheduleEvent = { type: 'FIRE'; at: number } | { type: 'CANCEL'; at: string; by: string };

export type ScheduleEmitted =
  | { type: 'schedule.fired'; taskId: string; occurrence: number; at: string }
  | { type: 'schedule.status'; status: ScheduleStatus; nextAt: number | null; at: string; error?: string };

export const scheduleAddressOf = (accountId: string, scheduleId: string) => `schedule/${accountId}/${scheduleId}`;

const outputOf = (event: unknown) => (event as { output: StartRunOutput }).output;
const failureOf = (event: unknown) => (event as { error?: { code?: string; message?: string; at?: number } }).error ?? {};

export const scheduleMachine = setup({
  types: { context: {} as ScheduleContext, events: {} as ScheduleEvent, input: {} as ScheduleInput, emitted: {} as ScheduleEmitted },
  actors: { startRun: effect<StartRunInput, StartRunOutput>() },
  guards: {
    // A timer of an occurrence already run (re-armed after a failed delivery, say) fires nothing.
    current: ({ context, event }) => event.type === 'FIRE' && event.at === context.nextAt,
    goesOn: ({ event }) => outputOf(event).keep && outputOf(event).nextAt !== null,
    ended: ({ event }) => outputOf(event).keep,
  },
  actions: {
    ran: assign(({ context, event }) => {
      const out = outputOf(event);
      return {
        runs: context.runs + (out.taskId ? 1 : 0),
        lastRun: out.taskId ? { taskId: out.taskId, occurrence: context.nextAt!, at: out.at } : context.lastRun,
        lastError: out.error,
        nextAt: out.keep ? out.nextAt : null,
        updatedAt: out.at,
      };
    }),
    // Told only when the occurrence started a task (after `ran`, so lastRun is this occurrence's).
    fired: enqueueActions(({ context, event, enqueue }) => {
      const out = outputOf(event);
      if (out.taskId && context.lastRun) enqueue.emit({ type: 'schedule.fired' as const, taskId: out.taskId, occurrence: context.lastRun.occurrence, at: out.at });
    }),
    completed: assign({ status: 'completed' as const, nextAt: null }),
    failed: assign({ status: 'failed' as const, nextAt: null }),
    crashed: assign(({ context, event }) => {
      const err = failureOf(event);
      return { status: 'failed' as const, nextAt: null, lastError: `${err.code ?? 'PLT_INTERNAL'}: ${err.message ?? 'the run could not be started'}`, updatedAt: typeof err.at === 'number' ? new Date(err.at).toISOString() : context.updatedAt };
    }),
    cancel: assign(({ event }) => ({ status: 'canceled' as const, nextAt: null, lastError: null, updatedAt: (event as Extract<ScheduleEvent, { type: 'CANCEL' }>).at })),
    announce: emit(({ context }) => ({ type: 'schedule.status' as const, status: context.status, nextAt: context.nextAt, at: context.updatedAt, ...(context.lastError ? { error: context.lastError } : {}) })),
  },
}).createMachine({
  id: 'Schedule',
  context: ({ input }) => ({ ...input, status: 'active', nextAt: input.firstAt, runs: 0, lastRun: null, lastError: null, updatedAt: input.at }),
  initial: 'waiting',
  states: {
    waiting: {
      on: {
        FIRE: { guard: 'current', target: 'firing' },
        CANCEL: { target: 'canceled', actions: ['cancel', 'announce'] },
      },
    },
    firing: {
      on: { CANCEL: { target: 'canceled', actions: ['cancel', 'announce'] } },
      invoke: {
        id: 'startRun',
        src: 'startRun',
        input: ({ context }): StartRunInput => ({
          accountId: context.accountId,
          scheduleId: context.scheduleId,
          agentId: context.agentId,
          caller: context.caller,
          message: context.message,
          contextId: context.contextId,
          spec: context.spec,
          occurrence: context.nextAt!,
        }),
        onDone: [
          { guard: 'goesOn', target: 'waiting', actions: ['ran', 'fired', 'announce'] },
          { guard: 'ended', target: 'completed', actions: ['ran', 'fired', 'completed', 'announce'] },
          { target: 'failed', actions: ['ran', 'failed', 'announce'] },
        ],
        onError: { target: 'failed', actions: ['crashed', 'announce'] },
      },
    },
    completed: { type: 'final' },
    canceled: { type: 'final' },
    failed: { type: 'final' },
  },
});

/** A waiting schedule's next occurrence is a durable timer. */
export function scheduleTimers(snapshot: { status: string; value: unknown; context: ScheduleContext }) {
  const { nextAt } = snapshot.context;
  return snapshot.status === 'active' && snapshot.value === 'waiting' && nextAt !== null ? [{ key: 'fire', at: nextAt, event: { type: 'FIRE', at: nextAt } }] : [];
}
