// One busy-wait for both sides of a sandbox call: the main thread spinning for a reply (threads.ts) and a sandbox thread
// spinning for its next call (thread-entry.mjs). Plain JavaScript, like thread-words.mjs, for the worker side.

/**
 * Tries between two reads of the clock. On Node 20 `performance.now()` costs about 50 ns and allocates (process.hrtime's
 * array): read on every try, a 40 µs spin read it hundreds of times and left 4.8 KB of garbage per MCP tools/call (of
 * about 50 KB in all; measured with V8's sampling heap profiler). A try is an atomic load per thread with a call, so
 * 32 of them overshoot the deadline by about a microsecond at most.
 */
const TRIES_PER_READ = 32;

/**
 * Calls `probe` until it returns something other than undefined or `ms` milliseconds have passed since `from` (a
 * `performance.now()` reading). Returns what the probe found (undefined if nothing came) and when the spin ended.
 *
 * @template T
 * @param {number} from
 * @param {number} ms
 * @param {() => T | undefined} probe
 * @returns {{ found: T | undefined; at: number }}
 */
export function spinFor(from, ms, probe) {
  const until = from + ms;
  for (;;) {
    for (let i = 0; i < TRIES_PER_READ; i++) {
      const found = probe();
      if (found !== undefined) return { found, at: performance.now() };
    }
    const at = performance.now();
    if (at >= until) return { found: undefined, at };
  }
}
