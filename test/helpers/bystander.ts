import { monitorEventLoopDelay } from 'node:perf_hooks';
import { expect } from 'vitest';
import type { TestPlatform } from './platform.ts';

/**
 * Times another tenant's requests (`GET /v1/capabilities` with its `credential`), one after another, until `work`
 * settles: its result, their latencies and the node's worst event-loop delay meanwhile. How the timing suites show
 * that hostile input of one tenant leaves the others served (DESIGN §5).
 */
export async function whileBystanderWaits<T>(p: TestPlatform, credential: string, work: () => Promise<T>) {
  const latencies: number[] = [];
  let done = false;
  const loop = (async () => {
    while (!done) {
      const t = performance.now();
      const res = await p.call('GET', '/v1/capabilities?limit=5', { headers: { authorization: `Bearer ${credential}` } });
      latencies.push(performance.now() - t);
      expect(res.status).toBe(200);
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  const loopDelay = monitorEventLoopDelay({ resolution: 5 });
  loopDelay.enable();
  try {
    return { result: await work(), latencies, loopDelayMaxMs: loopDelay.max / 1e6 };
  } finally {
    done = true;
    loopDelay.disable();
    await loop;
  }
}

/** A second tenant (account "Bystander") with an admin API key: the one whose requests the timing suites time. */
export async function bystanderTenant(p: TestPlatform): Promise<{ accountId: string; key: string }> {
  const admin = p.node.services.admin;
  const other = await admin.createAccount({ name: 'Bystander' });
  const principal = await admin.createPrincipal({ account: other.id, name: 'bystander', role: 'admin' });
  return { accountId: other.id, key: (await admin.createKey({ principal: principal.id })).key };
}
