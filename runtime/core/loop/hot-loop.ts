/**
 * Keeps the node's event loop polling instead of sleeping for a short while when work is about to come: the next
 * request on a connection that has just sent one, a sandbox thread's reply. On a small VM a thread that sleeps pays on
 * every wake-up (the hypervisor's cost: 30–100 µs, and its caches come back cold), and at one connection a request
 * meets two of them: its own arrival and the sandbox's reply. Polled, the loop takes both on its next turn. Measured on
 * 2 cores (mcp-call at one connection, three runs each, alternating): the gateway 1,601–1,967 calls/s sleeping
 * (0.76–0.79× the SDK server's) and 1,962–2,452 polling (0.82–0.91×); the sandbox floor 2,622–2,895 and 3,165–3,421.
 *
 * A poll is a turn of the loop with a check-phase callback queued (`setImmediate`), so libuv asks epoll for events
 * without waiting: timers, sockets and other callbacks all run as usual between polls, and the loop is never held.
 * Polling costs a core while it lasts, so it happens only while the loop has time to spare, the sandbox threads with
 * calls leave it a core, and it has polled under half of the current sample window (spin-policy.ts), never past the
 * latest deadline an `expect` set; the time polled without work is not counted as the loop's load.
 */

/** What the hot loop asks of the loop's spin policy (spin-policy.ts). */
export interface PollBudget {
  mayPoll(): boolean;
  polled(us: number): void;
}

/** A budget that never allows polling: the hot loop of a node whose operator turned polling off. */
export const NO_POLLING: PollBudget = { mayPoll: () => false, polled() {} };

export interface HotLoop {
  /** Work is expected within `us` microseconds: poll until then (or later, if a deadline already set is later). */
  expect(us: number): void;
  /** `probe` runs on every poll (a sandbox pool checks its reply doorbells); the returned function removes it. */
  watch(probe: () => void): () => void;
  stop(): void;
}

/**
 * How long after a request arrives a server expects the next on its connection: a request's round trip at one
 * connection is 400–600 µs on a 2-core VM (mcp-call), most of it the client's and the kernel's.
 */
export const NEXT_REQUEST_US = 1_000;

/**
 * What a poll credits as idle at most: an empty turn of the loop costs 1–5 µs (measured: p50 0.9, p99 4.7 on a loaded
 * 2-core VM), so a turn that did work between two polls is credited no more than an empty one would have cost, and a
 * loop busy with many short turns never looks idle.
 */
const EMPTY_TURN_US = 5;

export function createHotLoop(budget: PollBudget): HotLoop {
  let until = 0;
  let polling = false;
  let stopped = false;
  /** When the last poll ended (-1: none yet in this chain, so the caller's own work before the first is not credited). */
  let lastPoll = -1;
  const probes = new Set<() => void>();

  const poll = () => {
    // A poll already queued when the loop was stopped runs nothing.
    if (stopped) {
      polling = false;
      return;
    }
    if (lastPoll >= 0) budget.polled(Math.min((performance.now() - lastPoll) * 1000, EMPTY_TURN_US));
    try {
      for (const probe of probes) probe();
    } finally {
      // Timed after the probes: what they did (taking a reply, answering it) is work, not idle time.
      lastPoll = performance.now();
      if (lastPoll < until && !stopped && budget.mayPoll()) setImmediate(poll);
      else polling = false;
    }
  };

  return {
    expect(us) {
      const deadline = performance.now() + us / 1000;
      if (deadline > until) until = deadline;
      if (polling || stopped || !budget.mayPoll()) return;
      polling = true;
      lastPoll = -1;
      setImmediate(poll);
    },
    watch(probe) {
      probes.add(probe);
      return () => probes.delete(probe);
    },
    stop() {
      stopped = true;
      probes.clear();
    },
  };
}
