import { randomUUID } from 'node:crypto';
import type { AccountContext } from '../actors/index.ts';
import { accountAddress, type ActorState, type ActorSystem } from '../runtime/index.ts';

const CREDITS = 1_000_000_000;
const account = (s: ActorState | null) => (s?.context ?? {}) as unknown as Partial<AccountContext>;

/**
 * `n` funded Account actors created through `router`, and the two calls the actor scenarios make to them in turn:
 * a read (routing alone) and a DEBIT (a durable turn: the owner writes the snapshot to PostgreSQL before it answers).
 */
export async function accountWorkload(router: ActorSystem, n: number) {
  const actors = Array.from({ length: n }, () => accountAddress(randomUUID()));
  for (const a of actors) await router.create(a, { accountId: a.split('/')[1], credits: CREDITS });
  let next = 0;
  let seq = 0;
  let acked = 0;
  const pick = () => actors[next++ % actors.length]!;
  return {
    actors,
    async read(): Promise<void> {
      if (!(await router.read(pick()))) throw new Error('actor not found');
    },
    async debit(): Promise<void> {
      const requestId = `bench-${seq++}`;
      const { replies } = await router.ask(pick(), { type: 'DEBIT', amount: 1, requestId });
      // A rejected debit answers too; counting it as a success would measure a turn that did no work.
      if (!replies.some((r) => r.type === 'reply.debit' && r.requestId === requestId && r.ok)) throw new Error('DEBIT not applied');
      acked++;
    },
    /** Acknowledged DEBITs so far, warm-up included. */
    acked: () => acked,
    /** Credits taken from the actors, read back from them: what the DEBITs actually did. */
    async applied(): Promise<number> {
      let total = 0;
      for (const a of actors) total += CREDITS - (account(await router.read(a)).credits ?? CREDITS);
      return total;
    },
  };
}
