import { setTimeout as sleep } from 'node:timers/promises';
import type { Repositories } from '../../../store/index.ts';
import { isPlatformError } from '../errors/index.ts';
import type { ActorSystem } from './actor-system.ts';

export interface OutboxMessage {
  id: string;
  address: string;
  target: string;
  event: { type: string } & Record<string, unknown>;
}

const ATTEMPTS = 8;

/**
 * Delivers the messages turns sent to other actors, after their commit: in order per sender, at least once (a row is
 * removed only once its target took the event or does not exist), with backoff while the target's shard moves. What
 * still fails stays in the table for the next sweep of the sender's shard owner.
 */
export function createOutbox(deps: { outbox: Repositories['outbox']; system: () => ActorSystem; onError: (err: unknown, context: string) => void }) {
  const chains = new Map<string, Promise<void>>();
  const inFlight = new Set<string>();

  async function deliver(m: OutboxMessage): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await deps.system().ask(m.target, m.event);
        break;
      } catch (err) {
        if (isPlatformError(err, 'PLT_ACTOR_NOT_FOUND')) {
          deps.onError(err, `message ${m.event.type} from ${m.address} to ${m.target}: no such actor; dropped`);
          break;
        }
        if (attempt >= ATTEMPTS) {
          deps.onError(err, `message ${m.event.type} from ${m.address} to ${m.target} not delivered yet; the next sweep tries again`);
          return;
        }
        await sleep(Math.min(5_000, 50 * 2 ** attempt));
      }
    }
    await deps.outbox.remove(m.id);
  }

  return {
    /** Queues messages for delivery behind the sender's earlier ones; already queued ids are skipped. */
    send(messages: OutboxMessage[]) {
      for (const m of messages) {
        if (inFlight.has(m.id)) continue;
        inFlight.add(m.id);
        const prev = chains.get(m.address) ?? Promise.resolve();
        const next = prev
          .then(() => deliver(m))
          .catch((err) => deps.onError(err, `outbox of ${m.address}`))
          .finally(() => inFlight.delete(m.id));
        chains.set(m.address, next);
        void next.then(() => {
          if (chains.get(m.address) === next) chains.delete(m.address);
        });
      }
    },
    drain: () => Promise.all([...chains.values()]).then(() => undefined),
  };
}
