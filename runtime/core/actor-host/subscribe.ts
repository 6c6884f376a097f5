import type { Repositories } from '../../../store/index.ts';
import type { Bus } from '../bus/index.ts';
import { SUBJECTS } from '../subjects/index.ts';
import type { ActorSystem } from './actor-system.ts';
import type { ActorState } from './kinds.ts';

export type ActorStreamItem =
  | { type: 'snapshot'; state: ActorState }
  | { type: 'event'; seq: number; event: { type: string } & Record<string, unknown>; at: string | number }
  | { type: 'progress'; effect: string; data: unknown; at: number };

export interface ActorSubscription {
  /** Resolves with the snapshot the stream started from, or null when there is no such actor. */
  ready: Promise<ActorState | null>;
  close(): Promise<void>;
}

interface Published {
  address: string;
  seq: number;
  event: { type: string } & Record<string, unknown>;
  at: number;
}

/**
 * Follows one actor from any node: its current snapshot, then every later event in order, with no gap and no
 * duplicate. It subscribes before it reads (so nothing emitted after the read is missed), drops events at or below
 * the snapshot's sequence number, and reads any event the bus did not bring (a gap in the numbers) back from the
 * actor's journal. A lost message at the tail shows no gap until the next one, so the journal is also read every
 * `catchUpMs` for anything newer than the last event seen. Effects' progress passes through as it comes; it has no
 * number and is never stored.
 */
export function subscribeActor(
  deps: { bus: Bus; actors: Pick<ActorSystem, 'read'>; journal: Pick<Repositories['actorEvents'], 'after'> },
  address: string,
  onItem: (item: ActorStreamItem) => void,
  opts: { catchUpMs?: number } = {},
): ActorSubscription {
  let last = -1;
  let closed = false;
  let chain: Promise<void> = Promise.resolve();
  const early: Published[] = [];
  const emit = (item: ActorStreamItem) => {
    if (!closed) onItem(item);
  };
  const handle = async (m: Published) => {
    if (closed || m.seq <= last) return;
    if (m.seq > last + 1) {
      for (const missed of await deps.journal.after(address, last, m.seq - last - 1)) {
        if (missed.seq <= last || missed.seq >= m.seq) continue;
        last = missed.seq;
        emit({ type: 'event', seq: missed.seq, event: missed.event as Published['event'], at: missed.at });
      }
    }
    last = m.seq;
    emit({ type: 'event', seq: m.seq, event: m.event, at: m.at });
  };
  const unsubEvents = deps.bus.subscribe(SUBJECTS.actorEvents(address), (data) => {
    const m = data as Published;
    if (typeof m?.seq !== 'number') return;
    if (last < 0) early.push(m);
    else chain = chain.then(() => handle(m));
  });
  const unsubProgress = deps.bus.subscribe(SUBJECTS.actorProgress(address), (data) => {
    const p = data as { effect: string; data: unknown; at: number };
    if (last >= 0) emit({ type: 'progress', effect: p.effect, data: p.data, at: p.at });
  });
  const catchUp = setInterval(() => {
    if (last < 0 || closed) return;
    chain = chain
      .then(async () => {
        for (const m of await deps.journal.after(address, last, 100)) await handle({ address, seq: m.seq, event: m.event as Published['event'], at: Date.parse(m.at) });
      })
      .catch(() => {});
  }, opts.catchUpMs ?? 2_000);
  catchUp.unref();
  const close = async () => {
    closed = true;
    clearInterval(catchUp);
    await Promise.all([unsubEvents(), unsubProgress()]);
  };
  const ready = (async () => {
    const state = await deps.actors.read(address);
    if (!state) {
      await close();
      return null;
    }
    last = state.seq;
    emit({ type: 'snapshot', state });
    // Everything that arrived while the snapshot was read goes through the same chain, in order, before later events.
    const pending = early.splice(0).sort((a, b) => a.seq - b.seq);
    chain = chain.then(async () => {
      for (const m of pending) await handle(m);
    });
    await chain;
    return state;
  })();
  ready.catch(() => void close());
  return { ready, close };
}
