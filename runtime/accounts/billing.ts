import type { ActorSystem } from '../core/actor-host/index.ts';
import type { Bus } from '../core/bus/index.ts';
import { ttlCache } from '../core/cache/index.ts';
import { SUBJECTS } from '../core/subjects/index.ts';
import { accountAddress } from './account-address.ts';

/** What a surface needs to know before it serves a paid request: ok, no budget (402) or undeterminable (503). */
export type BillingState = 'ok' | 'no_budget' | 'unknown';

/** Longer than this without an answer from the account actor, the billing state counts as undeterminable. */
export const BILLING_WAIT_MS = 2_000;

function within<T>(ms: number, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), ms)))]).finally(() => clearTimeout(timer));
}

/**
 * Billing from the Account actor (its budget region: funded, none, exhausted, unknown), with per-node leases so
 * that paying for a call takes no durable turn on the hot path.
 */
export function createBilling(deps: { actors: ActorSystem; price: number; now?: () => number; bus?: Bus }) {
  // The billing state gates every request; reading it through the Account actor's mailbox would queue each request
  // behind the previous one's DEBIT. It is kept per node for a second, refreshed by every DEBIT's answer, and dropped
  // when the operator changes a budget.
  const states = ttlCache<string, BillingState>(1000, deps.now ?? Date.now);
  deps.bus?.subscribe(SUBJECTS.billingChanged, () => states.clear());
  const allocations = leaseAllocator(deps.actors, deps.price, deps.now ?? Date.now, (accountId, budget) => states.set(accountId, stateOf(budget)));
  return {
    async state(accountId: string): Promise<BillingState> {
      // Credits this node already reserved for the account pay for its next calls, whatever the actor says now.
      if (deps.price > 0 && allocations.held(accountId) >= deps.price) return 'ok';
      const hit = states.get(accountId);
      if (hit) return hit;
      try {
        const s = await within(BILLING_WAIT_MS, deps.actors.read(accountAddress(accountId)));
        const state = stateOf((s?.value as { budget?: string } | undefined)?.budget);
        // An undeterminable state is asked again next time, not remembered.
        return state === 'unknown' ? state : states.set(accountId, state);
      } catch {
        return 'unknown';
      }
    },
    /** Reserves the price of one call; a refusal says why. */
    allocate: (accountId: string, requestId: string) => allocations.allocate(accountId, requestId),
    /** Gives back the price of a call that was paid for but never ran (refused by a full lane). */
    refund: (accountId: string) => allocations.refund(accountId),
    /** Returns every unspent lease to its account (the node stops). */
    release: () => allocations.release(),
  };
}

export type Billing = ReturnType<typeof createBilling>;

const stateOf = (budget: string | undefined): BillingState => (budget === 'funded' ? 'ok' : budget === 'none' || budget === 'exhausted' ? 'no_budget' : 'unknown');

type Allocation = { ok: true } | { ok: false; message: string };

/**
 * Calls one lease pays for. A lease that ran out within a second was too small for the account's call rate: the next
 * one is twice as large (up to `max`); one that lasted more than ten seconds was larger than needed: the next is half.
 * A busy account thus costs a few durable turns a second, and a node that crashes loses at most one lease.
 */
export const LEASE_CALLS = { min: 50, max: 2_000 } as const;

/**
 * Budget allocation from per-node leases: a node reserves the credits of a lease of calls from the Account actor
 * in one DEBIT (one durable turn), then allocates calls from the lease in memory; allocations that arrive while a
 * reservation is in flight wait for it. When the account cannot cover a whole lease, each call reserves its own
 * credits, so every call the budget covers still runs. Unspent credits go back to the account (REFUND) when the node
 * stops.
 */
function leaseAllocator(actors: ActorSystem, price: number, now: () => number, observe: (accountId: string, budget: string | undefined) => void) {
  const leases = new Map<string, number>();
  const waiting = new Map<string, { requestId: string; resolve: (a: Allocation) => void }[]>();
  const busy = new Set<string>();
  const sizing = new Map<string, { calls: number; at: number }>();

  function leaseCalls(accountId: string): number {
    const prev = sizing.get(accountId);
    const t = now();
    let calls: number = LEASE_CALLS.min;
    if (prev) {
      const lasted = t - prev.at;
      calls = lasted < 1_000 ? Math.min(prev.calls * 2, LEASE_CALLS.max) : lasted > 10_000 ? Math.max(Math.floor(prev.calls / 2), LEASE_CALLS.min) : prev.calls;
    }
    sizing.set(accountId, { calls, at: t });
    return calls;
  }

  async function debit(accountId: string, amount: number, requestId: string): Promise<Allocation> {
    try {
      const s = await within(BILLING_WAIT_MS, actors.ask(accountAddress(accountId), { type: 'DEBIT', amount, requestId }));
      observe(accountId, (s.value as { budget?: string }).budget);
      if (s.replies.some((r) => r.type === 'reply.debit' && r.requestId === requestId && r.ok)) return { ok: true };
      return { ok: false, message: 'budget allocation failed: the account has no budget left for this call' };
    } catch (err) {
      return { ok: false, message: `budget allocation failed: the billing state could not be determined (${(err as Error).message})` };
    }
  }

  function take(accountId: string): boolean {
    const left = leases.get(accountId) ?? 0;
    if (left < price) return false;
    leases.set(accountId, left - price);
    return true;
  }

  async function refill(accountId: string) {
    busy.add(accountId);
    try {
      for (let queue = waiting.get(accountId); queue?.length; queue = waiting.get(accountId)) {
        const calls = leaseCalls(accountId);
        const lease = await debit(accountId, price * calls, `lease:${queue[0]!.requestId}`);
        if (lease.ok) leases.set(accountId, (leases.get(accountId) ?? 0) + price * calls);
        // The budget could not cover this lease: start small again.
        else sizing.delete(accountId);
        const served = waiting.get(accountId) ?? [];
        waiting.delete(accountId);
        for (const w of served) {
          if (take(accountId)) w.resolve({ ok: true });
          else if (lease.ok) (waiting.get(accountId) ?? waiting.set(accountId, []).get(accountId)!).push(w);
          else w.resolve(price === 0 ? { ok: true } : await debit(accountId, price, w.requestId));
        }
      }
    } finally {
      busy.delete(accountId);
    }
  }

  return {
    allocate(accountId: string, requestId: string): Promise<Allocation> {
      if (price === 0 || take(accountId)) return Promise.resolve({ ok: true });
      return new Promise((resolve) => {
        const list = waiting.get(accountId) ?? [];
        list.push({ requestId, resolve });
        waiting.set(accountId, list);
        if (!busy.has(accountId)) void refill(accountId);
      });
    },
    /** Puts one call's price back into the node's lease: the next call pays with it. */
    refund(accountId: string) {
      if (price > 0) leases.set(accountId, (leases.get(accountId) ?? 0) + price);
    },
    /** Credits this node holds for an account (its billing check counts them). */
    held: (accountId: string) => leases.get(accountId) ?? 0,
    /** Returns every unspent lease to its account. */
    async release() {
      const held = [...leases].filter(([, n]) => n > 0);
      leases.clear();
      await Promise.all(held.map(([accountId, amount]) => actors.ask(accountAddress(accountId), { type: 'REFUND', amount, requestId: `refund:${accountId}` }).catch(() => undefined)));
    },
  };
}
