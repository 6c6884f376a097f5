import { performance } from 'node:perf_hooks';

/**
 * One memory-reducing garbage collection once a node has started and its event loop has gone quiet.
 *
 * Starting a node allocates hundreds of megabytes that are garbage a moment later (modules loading, route schemas
 * compiling, the database opening). V8 grows its young generation for that burst up to its maximum (128 MB with
 * `--max-semi-space-size=64`, the flag `npm start` runs with for throughput) and keeps it. Its own memory reducer
 * gives it back only once the allocation rate it averages, the start-up burst included, has fallen low: about a
 * minute of idling, or never on a node that serves a trickle of requests. Until then a node at rest held some
 * 140 MB it did not use.
 *
 * The collection is the inspector protocol's `HeapProfiler.collectGarbage` on an in-process session (no port is
 * opened): it runs V8's low-memory collection, which also shrinks the young generation. It runs once, and only when
 * the loop has been quiet for a whole interval, so no request waits for it; a node that stays busy skips it (its
 * young generation is in use then). A load that comes later grows the young generation again as V8 sees fit.
 */

export interface SettleOptions {
  /** How long the loop must have been quiet before the collection, and how often that is checked. */
  intervalMs?: number;
  /** Event-loop utilization below which an interval counts as quiet. */
  quietBelow?: number;
  /** After this long without a quiet interval the collection is skipped. */
  giveUpAfterMs?: number;
  /** Called with what the collection returned (tests, logs). */
  onSettled?: (result: { rssBefore: number; rssAfter: number; ms: number }) => void;
}

/** Schedules the collection; the function returned cancels it (a node closing before it ran). */
export function settleMemoryWhenQuiet(opts: SettleOptions = {}): () => void {
  const intervalMs = opts.intervalMs ?? 1_000;
  const quietBelow = opts.quietBelow ?? 0.05;
  const giveUpAt = performance.now() + (opts.giveUpAfterMs ?? 60_000);
  let last = performance.eventLoopUtilization();
  let cancelled = false;
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    if (busy >= quietBelow) {
      if (performance.now() >= giveUpAt) clearInterval(timer);
      return;
    }
    clearInterval(timer);
    void collect().then((result) => {
      if (result && !cancelled) opts.onSettled?.(result);
    });
  }, intervalMs);
  // Never what keeps a process alive.
  timer.unref();
  return () => {
    cancelled = true;
    clearInterval(timer);
  };
}

/** V8's low-memory collection through the in-process inspector; null where Node was built without one. */
export async function collect(): Promise<{ rssBefore: number; rssAfter: number; ms: number } | null> {
  let inspector: typeof import('node:inspector/promises');
  try {
    inspector = await import('node:inspector/promises');
  } catch {
    return null;
  }
  const rssBefore = process.memoryUsage.rss();
  const t = performance.now();
  const session = new inspector.Session();
  session.connect();
  try {
    await session.post('HeapProfiler.collectGarbage');
  } finally {
    session.disconnect();
  }
  return { rssBefore, rssAfter: process.memoryUsage.rss(), ms: performance.now() - t };
}
