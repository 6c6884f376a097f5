import { assign, emit, not, setup } from 'xstate';
import { tell } from './effects.ts';

/**
 * A human's approval of one tool call an autonomy policy sent to `ask`. The gate is bound to the exact call: its task,
 * its tool call id and the hash of its arguments; a decision naming other arguments is refused and changes nothing.
 * It is single use — the first accepted decision (or the expiry) ends it, and a gate that ended is gone — and it tells
 * its task the outcome, which resumes the run.
 *
 * pending ──DECIDE approve (a user, the same arguments)──▶ approved (final)
 *    ├────DECIDE deny    (a user, the same arguments)──▶ denied   (final)
 *    ├────DECIDE otherwise──▶ pending (answered `rejected`, with why)
 *    └────EXPIRE (durable timer at expiresAt)──▶ expired (final: an observable denial)
 *
 * Pure: every time comes with an event (DECIDE's `at`, EXPIRE's `at` from the timer's event, set when armed).
 */
export interface ApprovalGateInput {
  gateId: string;
  accountId: string;
  /** The agent whose task waits; null for an approval step of a workflow run. */
  agentId: string | null;
  /** The workflow run that waits (an approval step), when a run opened the gate. */
  workflowRunId?: string;
  taskId: string;
  contextId: string;
  /** The AgentTask's address: where the outcome goes. */
  taskAddress: string;
  /** The principal whose run it is (the task's owner). */
  ownerId: string;
  tool: string;
  toolCallId: string;
  arguments: unknown;
  /** `sha256:<hex>` of the arguments' canonical JSON. */
  argumentsHash: string;
  /** ISO 8601 UTC. */
  openedAt: string;
  /** Epoch milliseconds. */
  expiresAt: number;
}

export type GateOutcome = 'approved' | 'denied' | 'expired';
/** Why a decision changed nothing (the gate stays pending). */
export type GateRejection = 'user_required' | 'arguments_mismatch';

export interface ApprovalGateContext extends ApprovalGateInput {
  decision: { outcome: GateOutcome; by: string | null; at: string } | null;
}

export type ApprovalGateEvent =
  | { type: 'DECIDE'; decision: 'approve' | 'deny'; by: string; byKind: string; argumentsHash: string; at: string }
  | { type: 'EXPIRE'; at?: string };

export type ApprovalGateEmitted =
  | { type: 'gate.decided'; outcome: GateOutcome; by: string | null; at: string }
  | { type: 'reply.decided'; outcome: GateOutcome; tool: string; agentId: string | null; argumentsHash: string }
  | { type: 'reply.rejected'; reason: GateRejection };

/** What a task hears from its gate. */
export interface GateResolvedEvent {
  type: 'GATE_RESOLVED';
  gateId: string;
  toolCallId: string;
  outcome: GateOutcome;
  by: string | null;
  at: string;
  [k: string]: unknown;
}

type Decide = Extract<ApprovalGateEvent, { type: 'DECIDE' }>;
const decide = (event: ApprovalGateEvent) => event as Decide;
const expiredAt = (context: ApprovalGateContext, event: ApprovalGateEvent) => (event.type === 'EXPIRE' && event.at) || new Date(context.expiresAt).toISOString();

export const approvalGateMachine = setup({
  types: { context: {} as ApprovalGateContext, events: {} as ApprovalGateEvent, input: {} as ApprovalGateInput, emitted: {} as ApprovalGateEmitted },
  guards: {
    byUser: ({ event }) => decide(event).byKind === 'user',
    sameArguments: ({ context, event }) => decide(event).argumentsHash === context.argumentsHash,
    approves: ({ event }) => decide(event).decision === 'approve',
  },
  actions: {
    record: assign(({ context, event }) => {
      if (event.type === 'EXPIRE') return { decision: { outcome: 'expired' as const, by: null, at: expiredAt(context, event) } };
      const d = decide(event);
      return { decision: { outcome: d.decision === 'approve' ? ('approved' as const) : ('denied' as const), by: d.by, at: d.at } };
    }),
    announce: emit(({ context }) => ({ type: 'gate.decided' as const, outcome: context.decision!.outcome, by: context.decision!.by, at: context.decision!.at })),
    answer: emit(({ context }) => ({ type: 'reply.decided' as const, outcome: context.decision!.outcome, tool: context.tool, agentId: context.agentId, argumentsHash: context.argumentsHash })),
    tellTask: tell(
      ({ context }) => context.taskAddress,
      ({ context }): GateResolvedEvent => ({
        type: 'GATE_RESOLVED',
        gateId: context.gateId,
        toolCallId: context.toolCallId,
        outcome: context.decision!.outcome,
        by: context.decision!.by,
        at: context.decision!.at,
      }),
    ),
    notUser: emit({ type: 'reply.rejected' as const, reason: 'user_required' as const }),
    otherArguments: emit({ type: 'reply.rejected' as const, reason: 'arguments_mismatch' as const }),
  },
}).createMachine({
  id: 'ApprovalGate',
  context: ({ input }) => ({ ...input, decision: null }),
  initial: 'pending',
  states: {
    pending: {
      on: {
        DECIDE: [
          { guard: not('byUser'), actions: 'notUser' },
          { guard: not('sameArguments'), actions: 'otherArguments' },
          { guard: 'approves', target: 'approved', actions: ['record', 'announce', 'answer', 'tellTask'] },
          { target: 'denied', actions: ['record', 'announce', 'answer', 'tellTask'] },
        ],
        EXPIRE: { target: 'expired', actions: ['record', 'announce', 'tellTask'] },
      },
    },
    approved: { type: 'final' },
    denied: { type: 'final' },
    expired: { type: 'final' },
  },
});

/** A pending gate expires at its deadline. */
export function approvalGateTimers(snapshot: { status: string; value: unknown; context: ApprovalGateContext }) {
  return snapshot.status === 'active' && snapshot.value === 'pending'
    ? [{ key: 'expire', at: snapshot.context.expiresAt, event: { type: 'EXPIRE', at: new Date(snapshot.context.expiresAt).toISOString() } }]
    : [];
}

export const approvalGateAddressOf = (accountId: string, gateId: string) => `approval-gate/${accountId}/${gateId}`;
