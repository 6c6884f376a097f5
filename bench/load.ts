import { performance } from 'node:perf_hooks';

export interface RunResult {
  label: string;
  calls: number;
  errors: number;
  seconds: number;
  throughput: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export const percentile = (sorted: number[], q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]! : 0);

/**
 * A closed loop: `concurrency` callers each run `call` back to back for `seconds` after a warm-up, recording every
 * latency (milliseconds). A live progress line goes to stderr.
 */
export async function closedLoop(label: string, call: () => Promise<unknown>, opts: { concurrency: number; seconds: number; warmupSeconds?: number }): Promise<RunResult> {
  const warmupEnd = performance.now() + (opts.warmupSeconds ?? 1) * 1000;
  while (performance.now() < warmupEnd) await Promise.all(Array.from({ length: opts.concurrency }, () => call().catch(() => undefined)));
  const latencies: number[] = [];
  let errors = 0;
  const start = performance.now();
  const end = start + opts.seconds * 1000;
  const progress = setInterval(() => {
    if (!process.stderr.isTTY) return;
    const elapsed = (performance.now() - start) / 1000;
    process.stderr.write(`\r${label}: ${elapsed.toFixed(1)}s  ${latencies.length} calls  ${Math.round(latencies.length / Math.max(elapsed, 0.001))}/s   `);
  }, 250);
  await Promise.all(
    Array.from({ length: opts.concurrency }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        try {
          await call();
          latencies.push(performance.now() - t0);
        } catch {
          errors++;
        }
      }
    }),
  );
  clearInterval(progress);
  if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
  const seconds = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  return { label, calls: latencies.length, errors, seconds, throughput: latencies.length / seconds, p50: percentile(latencies, 0.5), p90: percentile(latencies, 0.9), p99: percentile(latencies, 0.99), max: latencies.at(-1) ?? 0 };
}
