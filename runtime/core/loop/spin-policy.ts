import { availableParallelism } from 'node:os';

/**
 * When the main thread may spin for a sandbox thread's reply instead of going back to its event loop, and for how long.
 *
 * Measured on a 2-core VM: a call's round trip to a sandbox thread is 70–90 µs when the main thread waits in its loop,
 * and 15–25 µs when it spins, because waking a parked thread costs 30–40 µs there (the hypervisor's cost, not the
 * code's). But spinning is only cheap when the loop has nothing else to do: an MCP gateway at 16 connections serves
 * 20–25% fewer calls when its main thread spins even 20 µs a call, since the time comes out of parsing and answering
 * other requests. So the main thread spins only while its loop has time to spare (busy under MAX_LOAD of the last
 * sample window, its own spinning not counted), at most PER_CALL_US per call and PER_TURN_US of spinning per turn of
 * the loop in all: calls answering one after another cannot keep it spinning away from its sockets and timers.
 *
 * Nor while the threads with calls take the cores: a spinning main thread takes a core too, and with calls on as many
 * threads as there are cores it would take one from a thread whose reply it waits for. With 64 calls in flight on 2
 * cores (three running at a time: the node had four threads then), the sandbox-call bench ran 24,266–26,764 calls/s
 * without that spin, 20,444–22,605 with it.
 *
 * The same load decides whether the loop may poll instead of sleeping (hot-loop.ts), and the time it polls with
 * nothing to do is not counted either; at most half of each window goes to polling, and none while the threads with
 * calls take the cores.
 */
const PER_CALL_US = 40;
const PER_TURN_US = 100;
const MAX_LOAD = 0.7;
const WINDOW_MS = 50;
/** The most of each sample window the loop may spend polling (hot-loop.ts): half a core. */
const MAX_POLLED_US = WINDOW_MS * 1000 * 0.5;

export interface SpinPolicy {
  /** Microseconds the caller may spin now (0: go back to the loop), with calls running on `busy` threads. */
  allowance(busy: number): number;
  /** The caller spun this long. */
  spent(us: number): void;
  /** Whether the loop has time to spare (its load of the last window, spinning not counted, under MAX_LOAD). */
  spare(): boolean;
  /**
   * Whether a sandbox thread may spin for its next call (thread-entry.mjs), with calls running on `busy` threads: while
   * the loop has time to spare and the threads with calls leave it a core. A thread that has just replied still counts
   * until its reply is taken, so one such thread is always allowed.
   */
  threadsMaySpin(busy: number): boolean;
  /**
   * The loop spent this long polling with nothing to do (hot-loop.ts): not load, like spinning, but not spinning either
   * (the turns go on between polls, so it takes nothing from the spin's budget per turn).
   */
  polled(us: number): void;
  /**
   * Whether the loop may poll instead of sleeping: it has time to spare, the threads with calls (as last counted by
   * `allowance` or `threadsMaySpin`) leave it a core, and it has polled under half of the current window.
   */
  mayPoll(): boolean;
  stop(): void;
}

export function createSpinPolicy(opts: { cores?: number } = {}): SpinPolicy {
  const cores = opts.cores ?? availableParallelism();
  let load = 1;
  let spunInTurn = 0;
  let turnEnds = false;
  // Spun and polled in the current sample window, in µs (the sampler starts each window at 0).
  let spunInWindow = 0;
  let polledInWindow = 0;
  /** Threads with calls, as last counted for `allowance` or `threadsMaySpin`. */
  let busyNow = 0;
  let last = performance.eventLoopUtilization();
  // Sampled from the policy's first use on: a node that serves nothing and runs no plugin keeps no timer for it.
  let sampler: ReturnType<typeof setInterval> | undefined;
  let stopped = false;
  const sample = () => {
    const now = performance.eventLoopUtilization();
    const d = performance.eventLoopUtilization(now, last);
    const elapsed = Math.max(1e-6, d.active + d.idle);
    load = Math.max(0, d.active - (spunInWindow + polledInWindow) / 1000) / elapsed;
    last = now;
    spunInWindow = 0;
    polledInWindow = 0;
  };
  const newTurn = () => {
    spunInTurn = 0;
    turnEnds = false;
  };
  const spare = () => {
    if (!sampler && !stopped) {
      last = performance.eventLoopUtilization();
      sampler = setInterval(sample, WINDOW_MS);
      sampler.unref();
    }
    return load <= MAX_LOAD;
  };
  return {
    allowance(busy) {
      busyNow = busy;
      if (!spare() || busy >= cores || spunInTurn >= PER_TURN_US) return 0;
      if (!turnEnds) {
        turnEnds = true;
        setImmediate(newTurn);
      }
      return Math.min(PER_CALL_US, PER_TURN_US - spunInTurn);
    },
    spent(us) {
      spunInTurn += us;
      spunInWindow += us;
    },
    spare,
    threadsMaySpin(busy) {
      busyNow = busy;
      return spare() && busy <= Math.max(1, cores - 1);
    },
    polled(us) {
      polledInWindow += us;
    },
    mayPoll: () => spare() && busyNow < cores && polledInWindow < MAX_POLLED_US,
    stop() {
      stopped = true;
      clearInterval(sampler);
    },
  };
}
