import type { Worker } from 'node:worker_threads';

/** Workers one watchdog can follow: a slot each. The pool's size is checked against it. */
export const WATCH_SLOTS = 256;

/**
 * Stops calls that run past their time limit, with one timer for all of them instead of one per call.
 *
 * A call past its limit can only be stopped by terminating the worker running it (nothing else stops a wasm loop).
 * Piscina can do that through a per-task AbortSignal, but a signal per call made up a third of a warm call's cost
 * (measured: a bare Piscina round trip 61 µs, 97 µs with a signal). So each worker says which call it runs: it owns a
 * slot of a shared array (its threadId, then the sequence number of its call, 0 between calls), and the watchdog's
 * one timer, armed for the earliest deadline, finds an overdue call's worker there and terminates it. Piscina fails
 * that worker's task ("worker exited") and starts a replacement, as it does for an aborted task.
 *
 * A call still queued at its deadline (no worker shows it yet) is given up: its caller is told at once (`giveUp`),
 * and the worker that takes it later returns without running it (the task carries its deadline).
 */
export interface Watchdog {
  /** Handed to every worker (Piscina's `workerData.watch`): the slots. */
  readonly shared: SharedArrayBuffer;
  /** A call's sequence number and deadline (`Date.now()` ms), `timeoutMs` from now; `giveUp` if it is still queued then. */
  begin(timeoutMs: number, giveUp: () => void): { seq: number; deadline: number };
  /** The call is over; whether the watchdog stopped it (its worker terminated, or the call given up, at the deadline). */
  end(seq: number): boolean;
  /** A worker is gone: its slot is free for the next. */
  released(threadId: number): void;
  stop(): void;
}

export function createWatchdog(threads: () => readonly Worker[]): Watchdog {
  const shared = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT * 2 * WATCH_SLOTS);
  // [2i]: the threadId owning slot i (0: free); [2i + 1]: the sequence number of the call it runs (0: none).
  const cells = new Int32Array(shared);
  const deadlines = new Map<number, { at: number; giveUp: () => void }>();
  const stopped = new Set<number>();
  let seq = 0;
  let timer: NodeJS.Timeout | null = null;
  let armedFor = Infinity;

  const arm = (at: number) => {
    if (timer && armedFor <= at) return;
    if (timer) clearTimeout(timer);
    armedFor = at;
    timer = setTimeout(check, Math.max(0, at - Date.now()));
    // Never what keeps a process alive: a call in flight is awaited by its caller.
    timer.unref();
  };

  function check() {
    timer = null;
    armedFor = Infinity;
    const now = Date.now();
    let next = Infinity;
    for (const [s, deadline] of deadlines) {
      if (deadline.at > now) {
        next = Math.min(next, deadline.at);
        continue;
      }
      deadlines.delete(s);
      stopped.add(s);
      const owner = ownerOf(s);
      if (owner === null) deadline.giveUp();
      else void threads().find((w) => w.threadId === owner)?.terminate();
    }
    if (next < Infinity) arm(next);
  }

  function ownerOf(s: number): number | null {
    for (let i = 0; i < WATCH_SLOTS; i++) if (Atomics.load(cells, 2 * i + 1) === s) return Atomics.load(cells, 2 * i) || null;
    return null;
  }

  return {
    shared,
    begin(timeoutMs, giveUp) {
      // Sequence numbers stay positive int32s (0 means no call); wrapping takes two billion calls.
      seq = seq >= 0x7fffffff ? 1 : seq + 1;
      // Wall-clock time, which the workers read too.
      const at = Date.now() + timeoutMs;
      deadlines.set(seq, { at, giveUp });
      arm(at);
      return { seq, deadline: at };
    },
    end(s) {
      deadlines.delete(s);
      return stopped.delete(s);
    },
    released(threadId) {
      for (let i = 0; i < WATCH_SLOTS; i++) {
        if (Atomics.load(cells, 2 * i) === threadId) {
          Atomics.store(cells, 2 * i + 1, 0);
          Atomics.store(cells, 2 * i, 0);
        }
      }
    },
    stop() {
      if (timer) clearTimeout(timer);
      timer = null;
      deadlines.clear();
    },
  };
}
