/** Latency and throughput figures of one measured phase. Latencies are in milliseconds. */
export interface Summary {
  /** Calls that succeeded; only these have a latency sample. */
  calls: number;
  errors: number;
  /** Wall-clock seconds the phase was measured for. */
  seconds: number;
  /** Successful calls per second. */
  throughput: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/**
 * Nearest-rank percentile of an ascending array: the smallest sample with at least `q` of the samples at or below
 * it, so every reported figure is a latency that was actually observed. NaN for no samples, so an empty phase can
 * never pass for a fast one.
 */
export function percentile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil(q * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function summarize(samples: ArrayLike<number>, seconds: number, errors = 0): Summary {
  const sorted = Float64Array.from(samples).sort();
  let total = 0;
  for (const x of sorted) total += x;
  const n = sorted.length;
  return {
    calls: n,
    errors,
    seconds,
    throughput: seconds > 0 ? n / seconds : Number.NaN,
    mean: n ? total / n : Number.NaN,
    p50: percentile(sorted, 0.5),
    p90: percentile(sorted, 0.9),
    p99: percentile(sorted, 0.99),
    max: n ? sorted[n - 1]! : Number.NaN,
  };
}

/** ours / reference; NaN when the reference measured nothing, rather than an infinite or flattering ratio. */
export const ratio = (ours: number, reference: number): number => (Number.isFinite(ours) && Number.isFinite(reference) && reference > 0 ? ours / reference : Number.NaN);

/** The median of the finite values; NaN for none. */
export const median = (xs: number[]): number => {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  if (!s.length) return Number.NaN;
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/**
 * A phase measured in several rounds, as one summary: calls, errors and seconds are the rounds' totals (`pooled`),
 * throughput and every latency figure the median over the rounds, and max the largest seen. One round is itself.
 */
/**
 * The median of each figure over the rounds, for the figures every round has: a process's main thread is read only in
 * rounds it was busy (cpu.ts), and a figure missing from a round has no median of the rounds.
 */
export function medianByKey(rounds: readonly Record<string, number>[]): Record<string, number> {
  const keys = Object.keys(rounds[0] ?? {}).filter((k) => rounds.every((r) => r[k] !== undefined));
  return Object.fromEntries(keys.map((k) => [k, median(rounds.map((r) => r[k]!))]));
}

export function medianOfRounds(rounds: Summary[], pooled: Summary): Summary {
  if (rounds.length <= 1) return pooled;
  return {
    calls: pooled.calls,
    errors: pooled.errors,
    seconds: pooled.seconds,
    throughput: median(rounds.map((r) => r.throughput)),
    mean: median(rounds.map((r) => r.mean)),
    p50: median(rounds.map((r) => r.p50)),
    p90: median(rounds.map((r) => r.p90)),
    p99: median(rounds.map((r) => r.p99)),
    max: pooled.max,
  };
}
