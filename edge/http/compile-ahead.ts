/**
 * Compiles the routes' deferred validators and serializers after the node has started, one per turn of the event
 * loop, so that no request pays for a compile.
 *
 * The surfaces compile a route's schemas on its first use, not at start (lazy-compilers.ts, management
 * validation.ts): compiling all of them is over half a second of CPU, which a start should not wait for. But a
 * compile inside a request holds the event loop for it, and a few are long: a response whose schema has a union
 * (the capabilities list) makes fast-json-stringify compile Ajv validators for each branch, 40–60 ms on a 2-core
 * machine, past the main-thread budget (DESIGN §5) for the bystanders of whoever asked first. So once the node
 * serves, what is still uncompiled is compiled in the background: each compile in a macrotask of its own
 * (`setImmediate`, after the I/O that is ready), so requests interleave with them and none waits for more than one.
 * A long compile comes in steps (a union's serializer, staged-serializer.ts), each a macrotask of its own.
 *
 * A compile a request already did is skipped; a route's compile that throws is left to that route's first use,
 * where it fails the way it did before. Closing the node stops what is left.
 */
export interface CompileAhead {
  /**
   * Queues a compile (idempotent: the thunk itself keeps what it compiled and does nothing the second time). A
   * compile in steps returns true while steps are left; it is called again in the next turn. `first` puts it
   * before the compiles queued without.
   */
  defer(compile: () => boolean | void, first?: boolean): void;
  /** Starts compiling what is queued (again if more was queued since); settles with the stats once the queue is empty. */
  start(): Promise<CompileStats>;
  /** Stops: what is left is compiled on first use, as without this. */
  stop(): void;
}

/** How many compiles are still queued, how many were done here, and the longest step (tests, logs). */
export interface CompileStats {
  pending: number;
  done: number;
  longestMs: number;
}

export function compileAhead(): CompileAhead {
  // The compiles deferred `first`, then the rest. A compile in steps stays at the head of its queue until it is done.
  const firsts: Array<() => boolean | void> = [];
  const rest: Array<() => boolean | void> = [];
  let running: Promise<CompileStats> | null = null;
  let stopped = false;
  let done = 0;
  let longestMs = 0;
  const next = () => new Promise<void>((resolve) => setImmediate(resolve));
  const stats = (): CompileStats => ({ pending: firsts.length + rest.length, done, longestMs });
  const drain = async () => {
    while (!stopped && firsts.length + rest.length) {
      await next();
      // Stopped while waiting for the turn: stop() has emptied the queues.
      if (stopped) break;
      const queue = firsts.length ? firsts : rest;
      const compile = queue[0]!;
      const t = performance.now();
      let more = false;
      try {
        more = compile() === true;
        if (!more) done++;
      } catch {
        // Left to the route's first use, which reports it as that route's error.
      }
      if (!more) queue.shift();
      longestMs = Math.max(longestMs, performance.now() - t);
    }
    return stats();
  };
  return {
    defer: (compile, first) => void (first ? firsts : rest).push(compile),
    start() {
      running ??= drain().finally(() => (running = null));
      return running;
    },
    stop() {
      stopped = true;
      firsts.length = 0;
      rest.length = 0;
    },
  };
}
