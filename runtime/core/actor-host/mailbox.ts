import { PlatformError } from '../errors/index.ts';

/**
 * One queue per actor address: every operation on an address runs after the previous one settled, so an actor takes
 * one turn at a time while different actors run concurrently.
 */
export function createMailboxes() {
  const tails = new Map<string, Promise<unknown>>();
  let stopped = false;
  return {
    enqueue<T>(address: string, fn: () => Promise<T>): Promise<T> {
      if (stopped) return Promise.reject(new PlatformError('PLT_ACTOR_HOST_STOPPED', 'actor host is stopped'));
      const prev = tails.get(address) ?? Promise.resolve();
      const next = prev.then(fn, fn);
      const tail = next.catch(() => {});
      tails.set(address, tail);
      void tail.then(() => {
        if (tails.get(address) === tail) tails.delete(address);
      });
      return next;
    },
    /** Whether nothing is queued or running for the address: what it would run next would run at once. */
    idle: (address: string) => !tails.has(address),
    /** Addresses with work queued or running. */
    busy: () => [...tails.keys()],
    /** Waits for everything queued so far. */
    drain: () => Promise.all([...tails.values()]).then(() => undefined),
    stop() {
      stopped = true;
    },
  };
}
