import type { Bus, Unsubscribe } from '../bus/index.ts';
import { SUBJECTS } from '../subjects/index.ts';

/** One transition of one actor, as the statechart viewer receives it. */
export interface Transition {
  address: string;
  event: { type: string };
  value: unknown;
  status: string;
  context: unknown;
  version: number;
  at: number;
}


/**
 * Follows one actor's transitions wherever it lives: subscribes to its transition subject and keeps the watch alive
 * (inspection doubles the cost of a turn, so hosts publish only while someone watches).
 */
export function watchActor(bus: Bus, address: string, listener: (t: Transition) => void, ttlMs = 30_000): Unsubscribe {
  const unsub = bus.subscribe(SUBJECTS.inspectTransition(address), (data) => listener(data as Transition));
  const renew = () => bus.publish(SUBJECTS.inspectWatch, { address, ttlMs });
  renew();
  const timer = setInterval(renew, Math.max(1_000, ttlMs / 2));
  timer.unref();
  return () => {
    clearInterval(timer);
    unsub();
  };
}
