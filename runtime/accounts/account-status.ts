import { createStore } from '@xstate/store';
import type { ActorSystem } from '../core/actor-host/index.ts';
import type { Bus } from '../core/bus/index.ts';
import { PlatformError } from '../core/errors/index.ts';
import { SUBJECTS } from '../core/subjects/index.ts';
import { accountAddress } from './account-address.ts';

/** How long a status read from the Account actor is trusted without word from it (a missed event's bound). */
export const ACCOUNT_STATUS_TTL_MS = 30_000;

/**
 * Whether an account is suspended, as every surface asks on every request: read once from the Account actor (no turn),
 * then kept current on each node by the actor's `account.suspended` and `account.resumed` events. An account whose
 * actor cannot be read now counts as not suspended (surfaces do not stop serving every tenant because one shard is
 * moving); the billing check of the MCP surface still answers 503 then.
 */
export function createAccountStatus(deps: { actors: Pick<ActorSystem, 'read'>; bus?: Bus; now: () => number; ttlMs?: number }) {
  const ttl = deps.ttlMs ?? ACCOUNT_STATUS_TTL_MS;
  const statuses = createStore({
    context: { byId: new Map<string, { suspended: boolean; at: number }>() },
    on: {
      observed: (ctx, e: { accountId: string; suspended: boolean; at: number }) => {
        ctx.byId.set(e.accountId, { suspended: e.suspended, at: e.at });
        return { ...ctx };
      },
    },
  });
  const unsubscribe = deps.bus?.subscribe(SUBJECTS.actorEventsOfKind('account'), (data) => {
    const m = data as { address?: string; event?: { type?: string } };
    const accountId = m.address?.split('/')[1];
    if (!accountId) return;
    if (m.event?.type === 'account.suspended') statuses.send({ type: 'observed', accountId, suspended: true, at: deps.now() });
    if (m.event?.type === 'account.resumed') statuses.send({ type: 'observed', accountId, suspended: false, at: deps.now() });
  });

  async function isSuspended(accountId: string): Promise<boolean> {
    const hit = statuses.getSnapshot().context.byId.get(accountId);
    if (hit && deps.now() - hit.at < ttl) return hit.suspended;
    try {
      const s = await deps.actors.read(accountAddress(accountId));
      const suspended = (s?.value as { status?: string } | undefined)?.status === 'suspended';
      statuses.send({ type: 'observed', accountId, suspended, at: deps.now() });
      return suspended;
    } catch {
      return hit?.suspended ?? false;
    }
  }

  return {
    isSuspended,
    /** Throws PLT_ACCOUNT_SUSPENDED for a suspended account. */
    async requireActive(accountId: string): Promise<void> {
      if (await isSuspended(accountId)) throw new PlatformError('PLT_ACCOUNT_SUSPENDED', 'the account is suspended: it can use no surface until its operator resumes it');
    },
    close: () => unsubscribe?.(),
  };
}

export type AccountStatus = ReturnType<typeof createAccountStatus>;
