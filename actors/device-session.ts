import { assign, emit, setup } from 'xstate';

/**
 * The OAuth device authorization session of the management API (RFC 8628, with the platform's field names).
 * Pure: it records what happened; a REDEEM answers with `reply.redeem` ({outcome}) and the device-flow service issues
 * the token when the outcome is `issued`.
 *
 * pending ──APPROVE──▶ approved ──REDEEM──▶ consumed (final, token issued once)
 *    │                    │
 *    ├──DENY──▶ denied ──REDEEM──▶ denialReported (final: 403 once, then gone)
 *    └──EXPIRE (durable timer at expiresAt, from any live state) ──▶ expired (final)
 */
export interface DeviceSessionInput {
  id: string;
  clientId: string;
  userCode: string;
  /** Epoch milliseconds; the host arms a durable timer that sends EXPIRE at this time. */
  expiresAt: number;
}

export interface DeviceGrant {
  userId: string;
  accountId: string;
  scope: string;
}

/** What a REDEEM found: the token endpoint answers from this. */
export type RedeemOutcome = 'pending' | 'issued' | 'denied' | 'invalid';

export interface DeviceSessionContext extends DeviceSessionInput {
  grant: DeviceGrant | null;
}

export type DeviceSessionEmitted = { type: 'reply.redeem'; outcome: RedeemOutcome };

export type DeviceSessionEvent =
  | ({ type: 'APPROVE' } & DeviceGrant)
  | { type: 'DENY'; userId: string }
  | { type: 'REDEEM'; clientId: string }
  | { type: 'EXPIRE' };

export const deviceSessionMachine = setup({
  types: {
    context: {} as DeviceSessionContext,
    events: {} as DeviceSessionEvent,
    input: {} as DeviceSessionInput,
    emitted: {} as DeviceSessionEmitted,
  },
  guards: {
    sameClient: ({ context, event }) => event.type === 'REDEEM' && event.clientId === context.clientId,
  },
  actions: {
    recordGrant: assign({
      grant: ({ event }) =>
        event.type === 'APPROVE' ? { userId: event.userId, accountId: event.accountId, scope: event.scope } : null,
    }),
    outcomePending: emit({ type: 'reply.redeem' as const, outcome: 'pending' as const }),
    outcomeIssued: emit({ type: 'reply.redeem' as const, outcome: 'issued' as const }),
    outcomeDenied: emit({ type: 'reply.redeem' as const, outcome: 'denied' as const }),
    outcomeInvalid: emit({ type: 'reply.redeem' as const, outcome: 'invalid' as const }),
  },
}).createMachine({
  id: 'DeviceSession',
  context: ({ input }) => ({ ...input, grant: null }),
  initial: 'pending',
  on: {
    // A redeem with another client id is treated as an unknown code, in every live state.
    REDEEM: { actions: 'outcomeInvalid' },
  },
  states: {
    pending: {
      on: {
        APPROVE: { target: 'approved', actions: 'recordGrant' },
        DENY: { target: 'denied' },
        REDEEM: [{ guard: 'sameClient', actions: 'outcomePending' }, { actions: 'outcomeInvalid' }],
        EXPIRE: { target: 'expired' },
      },
    },
    approved: {
      on: {
        REDEEM: [{ guard: 'sameClient', target: 'consumed', actions: 'outcomeIssued' }, { actions: 'outcomeInvalid' }],
        EXPIRE: { target: 'expired' },
      },
    },
    denied: {
      on: {
        REDEEM: [{ guard: 'sameClient', target: 'denialReported', actions: 'outcomeDenied' }, { actions: 'outcomeInvalid' }],
        EXPIRE: { target: 'expired' },
      },
    },
    consumed: { type: 'final' },
    denialReported: { type: 'final' },
    expired: { type: 'final' },
  },
});

/** The durable timers a DeviceSession snapshot needs: its code expires while the session is live. */
export function deviceSessionTimers(snapshot: { status: string; context: DeviceSessionContext }) {
  return snapshot.status === 'active' ? [{ key: 'expire', at: snapshot.context.expiresAt, event: { type: 'EXPIRE' } }] : [];
}
