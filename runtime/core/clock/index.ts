/** Time as a seam: the runtime reads and schedules through a Clock so tests can run hours of timers in microseconds. */
export interface Clock {
  now(): number;
  /** `fn` may return a promise: a manual clock waits for it, so tests observe the callback's full effect. */
  setTimeout(fn: () => unknown, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, Math.max(0, Math.min(ms, 2 ** 31 - 1)));
    t.unref?.();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

export interface ManualClock extends Clock {
  /** Moves time forward, running every callback that falls due, in order, and letting their promises settle. */
  advance(ms: number): Promise<void>;
  set(now: number): void;
}

export function manualClock(start = Date.UTC(2026, 0, 1)): ManualClock {
  let now = start;
  let seq = 0;
  const pending = new Map<number, { at: number; fn: () => unknown }>();
  const settle = () => new Promise<void>((r) => setImmediate(r));
  return {
    now: () => now,
    set: (t) => {
      now = t;
    },
    setTimeout(fn, ms) {
      const id = ++seq;
      pending.set(id, { at: now + Math.max(0, ms), fn });
      return id;
    },
    clearTimeout(h) {
      pending.delete(h as number);
    },
    async advance(ms) {
      const end = now + ms;
      for (;;) {
        let next: [number, { at: number; fn: () => unknown }] | undefined;
        for (const e of pending) if (e[1].at <= end && (!next || e[1].at < next[1].at)) next = e;
        if (!next) break;
        pending.delete(next[0]);
        now = Math.max(now, next[1].at);
        await next[1].fn();
        await settle();
      }
      now = end;
      await settle();
    },
  };
}
export * from './instants.ts';
