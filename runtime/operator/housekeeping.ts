import type { Store } from '../../store/index.ts';

/** How often a node deletes what has expired. Every node does it: the deletes are idempotent and cheap. */
export const HOUSEKEEPING_INTERVAL_MS = 10 * 60_000;

export interface Housekeeping {
  /** One pass now: the number of rows deleted, by kind. */
  runOnce(): Promise<{ mcpSessions: number; oauth: number; linkCodes: number }>;
  stop(): void;
}

/**
 * Deletes rows nobody can use any more: MCP sessions past their seven days, and OAuth codes, consent tickets and
 * refresh tokens past their expiry, identity link codes past theirs. Without it an anonymous caller opening sessions would grow the tables forever.
 */
export function startHousekeeping(deps: { store: Store; now: () => number; intervalMs?: number; onError?: (err: unknown) => void }): Housekeeping {
  const runOnce = async () => {
    const at = new Date(deps.now());
    return { mcpSessions: await deps.store.mcpSessions.purgeExpired(at), oauth: await deps.store.oauth.purgeExpired(at), linkCodes: await deps.store.identityLinks.purgeExpired(at) };
  };
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    runOnce()
      .catch((err: unknown) => deps.onError?.(err))
      .finally(() => (running = false));
  }, deps.intervalMs ?? HOUSEKEEPING_INTERVAL_MS);
  timer.unref();
  return { runOnce, stop: () => clearInterval(timer) };
}
