import type { WindowCounter } from './counter.ts';

export const WINDOW_MS = 60_000;
export const RATE_LIMITS = { request: 600, initialize: 60 } as const;
/** How long a limiter waits for its shared counter before letting the request through. */
export const COUNTER_BUDGET_MS = 250;

export type RateKind = keyof typeof RATE_LIMITS;

/**
 * The MCP rate limits: fixed 60-second windows per gateway and caller, `request` (tools/call and tools/list share
 * it) and `initialize`. When the counter cannot answer in time the request is let through (fail open) and the
 * outage is reported once, not per request.
 */
export function createRateLimiter(opts: { counter: WindowCounter; now: () => number; limits?: Partial<Record<RateKind, number>>; onOutage?: (err: unknown) => void; budgetMs?: number }) {
  const limits = { ...RATE_LIMITS, ...opts.limits };
  const budgetMs = opts.budgetMs ?? COUNTER_BUDGET_MS;
  let failing = false;
  return {
    limits,
    async check(kind: RateKind, gatewayId: string, callerKey: string): Promise<{ ok: true } | { ok: false; retryAfterSeconds: number }> {
      const window = Math.floor(opts.now() / WINDOW_MS);
      let n: number;
      if (opts.counter.local) {
        const n = await opts.counter.hit(`${kind}|${gatewayId}|${callerKey}`, window);
        return n <= limits[kind] ? { ok: true } : { ok: false, retryAfterSeconds: 60 };
      }
      try {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer in ${budgetMs} ms`)), budgetMs);
        });
        try {
          n = await Promise.race([opts.counter.hit(`${kind}|${gatewayId}|${callerKey}`, window), timeout]);
        } finally {
          clearTimeout(timer);
        }
        failing = false;
      } catch (err) {
        if (!failing) opts.onOutage?.(err);
        failing = true;
        return { ok: true };
      }
      return n <= limits[kind] ? { ok: true } : { ok: false, retryAfterSeconds: 60 };
    },
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
