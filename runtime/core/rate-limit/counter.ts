import { createHash } from 'node:crypto';
import type { NatsConnection } from '@nats-io/nats-core';
import type { KV } from '@nats-io/kv';
import { kvManager } from '../bus/index.ts';

/**
 * Fixed-window counters: `hit` adds one to the counter of `key` in the current window and returns the new count.
 * The in-process counter serves a single node; the NATS counter is shared by every node of a cluster.
 */
export interface WindowCounter {
  hit(key: string, window: number): Promise<number>;
  /** In this process: it always answers at once, so no time budget is needed around it. */
  local?: boolean;
  close(): Promise<void>;
}

export function memoryCounter(): WindowCounter {
  const counts = new Map<string, { window: number; n: number }>();
  let sweeps = 0;
  return {
    local: true,
    async hit(key, window) {
      const c = counts.get(key);
      if (!c || c.window !== window) {
        // Old windows are dropped as they pass, so idle callers do not accumulate.
        if (++sweeps % 1024 === 0) for (const [k, v] of counts) if (v.window < window) counts.delete(k);
        counts.set(key, { window, n: 1 });
        return 1;
      }
      return ++c.n;
    },
    async close() {
      counts.clear();
    },
  };
}

/**
 * Counters in a NATS KV bucket, one key per caller and window, incremented by compare-and-set (create, then update
 * at the revision read) so concurrent nodes never lose a hit. nats-server 2.9 has no per-key TTL: the bucket's max
 * age (two windows) drops old windows.
 */
export function natsCounter(nc: NatsConnection, cluster: string, windowMs: number): WindowCounter {
  // The bucket is opened on first use, not at start-up: a node joining a cluster must not spend its first moments as
  // a shard owner waiting on JetStream. A failed open is tried again on the next hit (the limiter fails open meanwhile).
  let opening: Promise<KV> | null = null;
  const bucket = () => {
    opening ??= kvManager(nc).then((kvm) => kvm.create(`${cluster}-rate`, { ttl: windowMs * 2, history: 1 }));
    opening.catch(() => (opening = null));
    return opening;
  };
  const enc = new TextEncoder();
  const dec = new TextDecoder();
  const safe = (key: string) => createHash('sha256').update(key).digest('base64url');
  return {
    async hit(key, window) {
      const kv = await bucket();
      const k = `w${window}.${safe(key)}`;
      // Concurrent hits on one key race on its revision; losers read again after a short random pause.
      for (let attempt = 0; attempt < 100; attempt++) {
        if (attempt > 0) await new Promise((r) => setTimeout(r, Math.random() * Math.min(attempt, 5)));
        const e = await kv.get(k);
        if (!e || e.operation !== 'PUT') {
          try {
            await kv.create(k, enc.encode('1'));
            return 1;
          } catch {
            continue;
          }
        }
        const n = Number(dec.decode(e.value)) + 1;
        try {
          await kv.update(k, enc.encode(String(n)), e.revision);
          return n;
        } catch {
          // Another node counted first: read again.
        }
      }
      throw new Error('rate counter: too much contention');
    },
    async close() {},
  };
}
