import { and, assign, emit, not, setup } from 'xstate';
import type { GateOutcome, GateResolvedEvent } from './approval-gate.ts';
import type { TaskCaller } from './agent-task.ts';
import { effect } from './effects.ts';
import { branchTarget, render, type WorkflowDefinition, type WorkflowScope, type WorkflowStep } from './workflow-logic.ts';

/**
 * One run of a workflow definition: the definition (a statechart of steps, copied into the run when it starts, so a
 * later change of the workflow never changes a run) interpreted by this machine. Tool steps and approval steps are
 * effects; signals, timers and decisions arrive as events; branches are decided here, purely, from what the run has
 * seen. Every time comes with an event or an effect's output.
 *
 * running(dispatch → calling | opening) ⇄ waiting(awaitingApproval | awaitingSignal | sleeping)
 *        ──succeed step──▶ completed   ──fail step, tool failure, denial, step limit──▶ failed   ──CANCEL──▶ canceled
 *
 * Each of the three ends passes through `ending` first, where the effect `runEnded` tells what waits on the run's end
 * (the triggers of agents, issue 15 §3): an effect, so a crash before it finished starts it again on the next owner.
 */

export type WorkflowRunStatus = 'running' | 'waiting' | 'completed' | 'failed' | 'canceled';
export type RunTarget = { kind: 'agent' | 'gateway'; id: string };

export interface WorkflowRunInput {
  accountId: string;
  runId: string;
  workflowId: string;
  workflow: WorkflowDefinition;
  input: unknown;
  /** Whose tools the run's tool steps call (the agent or gateway it was started for); null when it has no tool steps. */
  target: RunTarget | null;
  caller: TaskCaller;
  /** ISO 8601 UTC: when it was started. */
  at: string;
  /** Steps taken at most (loops end here). */
  maxTransitions: number;
}

export type WaitingFor = { kind: 'approval'; gateId: string } | { kind: 'signal'; signal: string; until: number | null } | { kind: 'timer'; until: number };

export interface WorkflowRunContext extends WorkflowRunInput {
  scope: WorkflowScope;
  current: string;
  transitions: number;
  status: WorkflowRunStatus;
  waitingFor: WaitingFor | null;
  output: unknown;
  error: string | null;
  updatedAt: string;
}

export interface RunToolInput {
  accountId: string;
  runId: string;
  target: RunTarget | null;
  caller: TaskCaller;
  stepId: string;
  transition: number;
  tool: string;
  arguments: unknown;
}
export type RunToolOutput = { ok: true; result: unknown; at: string } | { ok: false; error: string; at: string };
export interface OpenGateInput {
  accountId: string;
  runId: string;
  workflowName: string;
  target: RunTarget | null;
  ownerId: string;
  stepId: string;
  transition: number;
  summary: string;
  arguments: unknown;
}
export interface OpenGateOutput {
  gateId: string;
  at: string;
}

export interface RunEndedInput {
  accountId: string;
  workflowId: string;
  runId: string;
  ownerId: string;
  status: WorkflowRunStatus;
  output: unknown;
  error: string | null;
}
export interface RunEndedOutput {
  started: number;
}

export type WorkflowRunEvent =
  | { type: 'CANCEL'; at: string; by: string }
  | { type: 'SIGNAL'; signal: string; payload?: unknown; at: string; by: string }
  | { type: 'WAKE'; at: string }
  | { type: 'SIGNAL_TIMEOUT'; at: string }
  | GateResolvedEvent;

export type WorkflowRunEmitted =
  | { type: 'run.status'; status: WorkflowRunStatus; step: string; at: string; error?: string }
  | { type: 'reply.signal'; accepted: boolean; waitingFor: string | null };

export const workflowRunAddressOf = (accountId: string, runId: string) => `workflow-run/${accountId}/${runId}`;

const stepOf = (c: WorkflowRunContext): WorkflowStep | undefined => c.workflow.steps[c.current];
const isType = (type: WorkflowStep['type']) => ({ context }: { context: WorkflowRunContext }) => stepOf(context)?.type === type;
const outputOf = <T>(event: unknown) => (event as { output: T }).output;
const failureOf = (event: unknown) => (event as { error?: { code?: string; message?: string } }).error ?? {};
const step = <T extends WorkflowStep['type']>(c: WorkflowRunContext) => stepOf(c) as Extract<WorkflowStep, { type: T }>;
const record = (c: WorkflowRunContext, id: string, v: WorkflowScope['steps'][string]): WorkflowScope => ({ ...c.scope, steps: { ...c.scope.steps, [id]: v } });
const isoPlus = (at: string, seconds: number) => Date.parse(at) + seconds * 1000;

export const workflowRunMachine = setup({
  types: { context: {} as WorkflowRunContext, events: {} as WorkflowRunEvent, input: {} as WorkflowRunInput, emitted: {} as WorkflowRunEmitted },
  actors: { runTool: effect<RunToolInput, RunToolOutput>(), openGate: effect<OpenGateInput, OpenGateOutput>(), runEnded: effect<RunEndedInput, RunEndedOutput>() },
  guards: {
    tooMany: ({ context }) => context.transitions >= context.maxTransitions,
    tool: isType('tool'),
    approval: isType('approval'),
    signal: isType('signal'),
    timer: isType('timer'),
    branch: isType('branch'),
    succeed: isType('succeed'),
    toolFailed: ({ event }) => !outputOf<RunToolOutput>(event).ok,
    hasOnError: ({ context }) => step<'tool'>(context).on_error !== undefined,
    awaitedGate: ({ context, event }) => event.type === 'GATE_RESOLVED' && context.waitingFor?.kind === 'approval' && event.gateId === context.waitingFor.gateId,
    approved: ({ event }) => (event as GateResolvedEvent).outcome === 'approved',
    hasOnDeny: ({ context }) => step<'approval'>(context).on_deny !== undefined,
    awaitedSignal: ({ context, event }) => event.type === 'SIGNAL' && context.waitingFor?.kind === 'signal' && event.signal === context.waitingFor.signal,
    hasOnTimeout: ({ context }) => step<'signal'>(context).on_timeout !== undefined,
    endedCompleted: ({ context }) => context.status === 'completed',
    endedFailed: ({ context }) => context.status === 'failed',
  },
  actions: {
    count: assign(({ context }) => ({ transitions: context.transitions + 1, status: 'running' as const, waitingFor: null })),
    takeBranch: assign(({ context }) => ({ current: branchTarget(step<'branch'>(context), context.scope) })),
    tookTool: assign(({ context, event }) => {
      const out = outputOf<RunToolOutput>(event);
      const s = step<'tool'>(context);
      return out.ok
        ? { scope: record(context, context.current, { result: out.result }), current: s.next, updatedAt: out.at }
        : { scope: record(context, context.current, { error: out.error }), current: s.on_error ?? context.current, updatedAt: out.at, error: s.on_error ? null : `step ${context.current}: the tool failed: ${out.error}` };
    }),
    waitGate: assign(({ event }) => {
      const out = outputOf<OpenGateOutput>(event);
      return { status: 'waiting' as const, waitingFor: { kind: 'approval' as const, gateId: out.gateId }, updatedAt: out.at };
    }),
    decided: assign(({ context, event }) => {
      const e = event as GateResolvedEvent;
      const s = step<'approval'>(context);
      const ok = e.outcome === 'approved';
      return {
        scope: record(context, context.current, { outcome: e.outcome }),
        current: ok ? s.next : (s.on_deny ?? context.current),
        updatedAt: e.at,
        error: ok || s.on_deny ? null : `step ${context.current}: the approval was ${e.outcome as GateOutcome}${e.by ? ` by ${e.by}` : ''}`,
      };
    }),
    waitSignal: assign(({ context }) => {
      const s = step<'signal'>(context);
      return { status: 'waiting' as const, waitingFor: { kind: 'signal' as const, signal: s.signal, until: s.timeout_seconds ? isoPlus(context.updatedAt, s.timeout_seconds) : null } };
    }),
    signaled: assign(({ context, event }) => {
      const e = event as Extract<WorkflowRunEvent, { type: 'SIGNAL' }>;
      return { scope: record(context, context.current, { payload: e.payload ?? null }), current: step<'signal'>(context).next, updatedAt: e.at };
    }),
    signalTimedOut: assign(({ context, event }) => {
      const s = step<'signal'>(context);
      return { current: s.on_timeout ?? context.current, updatedAt: (event as { at: string }).at, error: s.on_timeout ? null : `step ${context.current}: no signal ${s.signal} before its timeout` };
    }),
    sleep: assign(({ context }) => ({ status: 'waiting' as const, waitingFor: { kind: 'timer' as const, until: isoPlus(context.updatedAt, step<'timer'>(context).seconds) } })),
    woke: assign(({ context, event }) => ({ current: step<'timer'>(context).next, updatedAt: (event as { at: string }).at })),
    succeed: assign(({ context }) => ({ status: 'completed' as const, waitingFor: null, output: render(step<'succeed'>(context).output ?? null, context.scope) })),
    failStep: assign(({ context }) => {
      const s = stepOf(context);
      return { status: 'failed' as const, waitingFor: null, error: s?.type === 'fail' ? String(render(s.error, context.scope)) : context.error ?? `step ${context.current} does not exist` };
    }),
    failed: assign({ status: 'failed' as const, waitingFor: null }),
    tooManyFailed: assign(({ context }) => ({ status: 'failed' as const, waitingFor: null, error: `the run took ${context.maxTransitions} steps without ending (its step limit)` })),
    effectFailed: assign(({ context, event }) => {
      const err = failureOf(event);
      return { status: 'failed' as const, waitingFor: null, error: `step ${context.current}: ${err.code ?? 'PLT_INTERNAL'}: ${err.message ?? 'the step failed'}` };
    }),
    cancel: assign(({ event }) => ({ status: 'canceled' as const, waitingFor: null, updatedAt: (event as { at: string }).at, error: `canceled by ${(event as { by: string }).by}` })),
    announce: emit(({ context }) => ({ type: 'run.status' as const, status: context.status, step: context.current, at: context.updatedAt, ...(context.error ? { error: context.error } : {}) })),
    accept: emit(({ context }) => ({ type: 'reply.signal' as const, accepted: true, waitingFor: context.waitingFor?.kind === 'signal' ? context.waitingFor.signal : null })),
    refuse: emit(({ context }) => ({ type: 'reply.signal' as const, accepted: false, waitingFor: context.waitingFor?.kind === 'signal' ? context.waitingFor.signal : null })),
  },
}).createMachine({
  id: 'WorkflowRun',
  context: ({ input }) => ({ ...input, scope: { input: input.input, steps: {} }, current: input.workflow.start, transitions: 0, status: 'running', waitingFor: null, output: null, error: null, updatedAt: input.at }),
  initial: 'dispatch',
  on: {
    CANCEL: { target: '.ending', actions: ['cancel', 'announce'] },
    SIGNAL: { actions: 'refuse' },
  },
  states: {
    dispatch: {
      entry: 'count',
      always: [
        { guard: 'tooMany', target: 'ending', actions: ['tooManyFailed', 'announce'] },
        { guard: 'tool', target: 'calling' },
        { guard: 'approval', target: 'opening' },
        { guard: 'signal', target: 'awaitingSignal', actions: ['waitSignal', 'announce'] },
        { guard: 'timer', target: 'sleeping', actions: ['sleep', 'announce'] },
        { guard: 'branch', target: 'dispatch', reenter: true, actions: 'takeBranch' },
        { guard: 'succeed', target: 'ending', actions: ['succeed', 'announce'] },
        { target: 'ending', actions: ['failStep', 'announce'] },
      ],
    },
    calling: {
      invoke: {
        id: 'runTool',
        src: 'runTool',
        input: ({ context }): RunToolInput => {
          const s = step<'tool'>(context);
          return { accountId: context.accountId, runId: context.runId, target: context.target, caller: context.caller, stepId: context.current, transition: context.transitions, tool: s.tool, arguments: render(s.arguments ?? {}, context.scope) };
        },
        onDone: [
          { guard: and(['toolFailed', not('hasOnError')]), target: 'ending', actions: ['tookTool', 'failed', 'announce'] },
          { target: 'dispatch', actions: 'tookTool' },
        ],
        onError: { target: 'ending', actions: ['effectFailed', 'announce'] },
      },
    },
    opening: {
      invoke: {
        id: 'openGate',
        src: 'openGate',
        input: ({ context }): OpenGateInput => {
          const s = step<'approval'>(context);
          return {
            accountId: context.accountId,
            runId: context.runId,
            workflowName: context.workflow.name,
            target: context.target,
            ownerId: context.caller.principalId,
            stepId: context.current,
            transition: context.transitions,
            summary: String(render(s.summary, context.scope)),
            arguments: render(s.arguments ?? {}, context.scope),
          };
        },
        onDone: { target: 'awaitingApproval', actions: ['waitGate', 'announce'] },
        onError: { target: 'ending', actions: ['effectFailed', 'announce'] },
      },
    },
    awaitingApproval: {
      on: {
        GATE_RESOLVED: [
          { guard: and(['awaitedGate', not('approved'), not('hasOnDeny')]), target: 'ending', actions: ['decided', 'failed', 'announce'] },
          { guard: 'awaitedGate', target: 'dispatch', actions: 'decided' },
        ],
      },
    },
    awaitingSignal: {
      on: {
        SIGNAL: { guard: 'awaitedSignal', target: 'dispatch', actions: ['accept', 'signaled'] },
        SIGNAL_TIMEOUT: [
          { guard: not('hasOnTimeout'), target: 'ending', actions: ['signalTimedOut', 'failed', 'announce'] },
          { target: 'dispatch', actions: 'signalTimedOut' },
        ],
      },
    },
    sleeping: { on: { WAKE: { target: 'dispatch', actions: 'woke' } } },
    ending: {
      // The run has ended (its status says how): a CANCEL or SIGNAL now changes nothing.
      on: { CANCEL: {}, SIGNAL: { actions: 'refuse' } },
      invoke: {
        id: 'runEnded',
        src: 'runEnded',
        input: ({ context }): RunEndedInput => ({
          accountId: context.accountId,
          workflowId: context.workflowId,
          runId: context.runId,
          ownerId: context.caller.principalId,
          status: context.status,
          output: context.output ?? null,
          error: context.error,
        }),
        // What waits on the end records its own failures: the run ends as it was going to either way.
        onDone: [{ guard: 'endedCompleted', target: 'completed' }, { guard: 'endedFailed', target: 'failed' }, { target: 'canceled' }],
        onError: [{ guard: 'endedCompleted', target: 'completed' }, { guard: 'endedFailed', target: 'failed' }, { target: 'canceled' }],
      },
    },
    completed: { type: 'final' },
    failed: { type: 'final' },
    canceled: { type: 'final' },
  },
});

/** A run asleep wakes at its time; a run waiting for a signal with a timeout gives up at its time. */
export function workflowRunTimers(snapshot: { status: string; value: unknown; context: WorkflowRunContext }) {
  const w = snapshot.context.waitingFor;
  if (snapshot.status !== 'active' || !w) return [];
  if (snapshot.value === 'sleeping' && w.kind === 'timer') return [{ key: 'wake', at: w.until, event: { type: 'WAKE', at: new Date(w.until).toISOString() } }];
  if (snapshot.value === 'awaitingSignal' && w.kind === 'signal' && w.until !== null) return [{ key: 'signal-timeout', at: w.until, event: { type: 'SIGNAL_TIMEOUT', at: new Date(w.until).toISOString() } }];
  return [];
}
