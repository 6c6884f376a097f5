import { assign, emit, setup } from 'xstate';

/**
 * An account (tenant). Two regions run side by side:
 * - status: active ⇄ suspended; a suspension with `until` ends by a durable timer (RESUME).
 * - budget: none (never funded: 402 at the MCP edge) → funded ⇄ exhausted (402); unknown (billing state could not be
 *   determined: 503) until the next BUDGET_SET.
 * DEBIT reserves credits for a call; it answers with `reply.debit` ({requestId, ok}), emitted to the asker only.
 * Status changes are journaled (`account.suspended`, `account.resumed`): nodes that cache the status follow them.
 */
export interface AccountInput {
  accountId: string;
  credits?: number | null;
}

export interface AccountContext {
  accountId: string;
  credits: number | null;
  suspendedUntil: number | null;
}

export type AccountEmitted =
  | { type: 'reply.debit'; requestId: string; ok: boolean }
  | { type: 'account.suspended'; until: number | null }
  | { type: 'account.resumed' };

export type AccountEvent =
  | { type: 'SUSPEND'; until?: number }
  | { type: 'RESUME' }
  | { type: 'BUDGET_SET'; credits: number }
  | { type: 'BUDGET_UNAVAILABLE' }
  | { type: 'DEBIT'; amount: number; requestId: string }
  /** Returns credits reserved but not spent (a node's unused lease): the budget is funded again if it was not. */
  | { type: 'REFUND'; amount: number; requestId: string };

export const accountMachine = setup({
  types: {
    context: {} as AccountContext,
    events: {} as AccountEvent,
    input: {} as AccountInput,
    emitted: {} as AccountEmitted,
  },
  guards: {
    initiallyFunded: ({ context }) => context.credits !== null && context.credits > 0,
    initiallyExhausted: ({ context }) => context.credits !== null && context.credits <= 0,
    positiveBudget: ({ event }) => event.type === 'BUDGET_SET' && event.credits > 0,
    positiveRefund: ({ context, event }) => event.type === 'REFUND' && event.amount > 0 && context.credits !== null,
    affordable: ({ context, event }) =>
      event.type === 'DEBIT' && event.amount >= 0 && context.credits !== null && context.credits >= event.amount,
    drainsBudget: ({ context, event }) => event.type === 'DEBIT' && context.credits === event.amount,
  },
  actions: {
    setCredits: assign({ credits: ({ event }) => (event.type === 'BUDGET_SET' ? event.credits : null) }),
    refund: assign({ credits: ({ context, event }) => (event.type === 'REFUND' ? (context.credits ?? 0) + event.amount : context.credits) }),
    debit: assign({
      credits: ({ context, event }) => (event.type === 'DEBIT' ? (context.credits ?? 0) - event.amount : context.credits),
    }),
    debited: emit(({ event }) => ({ type: 'reply.debit' as const, requestId: event.type === 'DEBIT' ? event.requestId : '', ok: true })),
    rejectDebit: emit(({ event }) => ({ type: 'reply.debit' as const, requestId: event.type === 'DEBIT' ? event.requestId : '', ok: false })),
    recordSuspension: assign({ suspendedUntil: ({ event }) => (event.type === 'SUSPEND' ? (event.until ?? null) : null) }),
    announceSuspension: emit(({ context }) => ({ type: 'account.suspended' as const, until: context.suspendedUntil })),
    clearSuspension: assign({ suspendedUntil: null }),
    announceResumption: emit({ type: 'account.resumed' as const }),
  },
}).createMachine({
  id: 'Account',
  type: 'parallel',
  context: ({ input }) => ({ accountId: input.accountId, credits: input.credits ?? null, suspendedUntil: null }),
  states: {
    status: {
      initial: 'active',
      states: {
        active: { on: { SUSPEND: { target: 'suspended', actions: ['recordSuspension', 'announceSuspension'] } } },
        suspended: {
          on: {
            RESUME: { target: 'active', actions: ['clearSuspension', 'announceResumption'] },
            SUSPEND: { actions: ['recordSuspension', 'announceSuspension'] },
          },
        },
      },
    },
    budget: {
      initial: 'init',
      on: {
        BUDGET_SET: [
          { guard: 'positiveBudget', target: '.funded', actions: 'setCredits' },
          { target: '.exhausted', actions: 'setCredits' },
        ],
        BUDGET_UNAVAILABLE: { target: '.unknown' },
        DEBIT: { actions: 'rejectDebit' },
        REFUND: { guard: 'positiveRefund', target: '.funded', actions: 'refund' },
      },
      states: {
        init: {
          always: [
            { guard: 'initiallyFunded', target: 'funded' },
            { guard: 'initiallyExhausted', target: 'exhausted' },
            { target: 'none' },
          ],
        },
        none: {},
        funded: {
          on: {
            DEBIT: [
              { guard: 'drainsBudget', target: 'exhausted', actions: ['debit', 'debited'] },
              { guard: 'affordable', actions: ['debit', 'debited'] },
              { actions: 'rejectDebit' },
            ],
          },
        },
        exhausted: {},
        unknown: {},
      },
    },
  },
});

export function accountTimers(snapshot: { status: string; context: AccountContext; value: unknown }) {
  const v = snapshot.value as { status?: string };
  const until = snapshot.context.suspendedUntil;
  return v.status === 'suspended' && until !== null ? [{ key: 'resume', at: until, event: { type: 'RESUME' } }] : [];
}
