import { describe, expect, it } from 'vitest';
import { createLaneScheduler, PlatformError } from '../../runtime/index.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('per-tenant lanes', () => {
  it('serves tenants round-robin: a flood from A does not starve sparse calls from B', async () => {
    const lanes = createLaneScheduler({ slots: 2, perTenantInFlight: 2, queueCap: 1000 });
    const order: string[] = [];
    const flood = Array.from({ length: 200 }, (_, i) => lanes.run('A', async () => { await sleep(2); order.push(`A${i}`); }));
    await sleep(5);
    const waits: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      await lanes.run('B', async () => void order.push(`B${i}`));
      waits.push(performance.now() - t0);
      await sleep(10);
    }
    await Promise.all(flood);
    // Each B call waits for at most the slots in use (a couple of 2 ms A calls), never behind A's queue (200 calls
    // of 2 ms on two slots, about 200 ms): the bound leaves room for a busy machine's timer lag.
    expect(Math.max(...waits)).toBeLessThan(100);
    expect(order.indexOf('B4')).toBeLessThan(order.indexOf('A199'));
    expect(lanes.stats('A')).toMatchObject({ queued: 0, running: 0, completed: 200, rejected: 0 });
    expect(lanes.stats('B').latency.samples).toBe(5);
  });

  it('holds a tenant to its in-flight cap while others use the free slots', async () => {
    const lanes = createLaneScheduler({ slots: 4, perTenantInFlight: 1, queueCap: 100 });
    let peakA = 0;
    let nowA = 0;
    const a = Array.from({ length: 10 }, () => lanes.run('A', async () => { nowA++; peakA = Math.max(peakA, nowA); await sleep(3); nowA--; }));
    const b = lanes.run('B', async () => lanes.stats('A').running);
    expect(await b).toBe(1);
    await Promise.all(a);
    expect(peakA).toBe(1);
  });

  it('refuses a call when the tenant queue is full, at the edge, with a clear error; other tenants are unaffected', async () => {
    const lanes = createLaneScheduler({ slots: 1, perTenantInFlight: 1, queueCap: 3 });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const first = lanes.run('A', () => gate);
    const queued = [1, 2, 3].map(() => lanes.run('A', async () => 'ok'));
    expect(lanes.stats('A')).toMatchObject({ running: 1, queued: 3 });
    const over = await lanes.run('A', async () => 'no').catch((e: unknown) => e);
    expect(over).toBeInstanceOf(PlatformError);
    expect(over).toMatchObject({ code: 'PLT_LANE_OVERLOADED', message: 'the account has 3 calls waiting already; retry later', kind: 'overloaded' });
    expect(lanes.stats('A').rejected).toBe(1);
    const other = lanes.run('B', async () => 'b');
    release();
    await first;
    expect(await Promise.all(queued)).toEqual(['ok', 'ok', 'ok']);
    expect(await other).toBe('b');
  });

  it('keeps node-wide counts of every tenant together (what the metrics read): slots, running, queued, rejected, completed', async () => {
    const lanes = createLaneScheduler({ slots: 2, perTenantInFlight: 1, queueCap: 2 });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const work = [
      ...['A', 'A', 'A'].map((t) => lanes.run(t, () => gate)),
      lanes.run('B', () => gate),
      lanes.run('B', async () => { throw new Error('fails'); }).catch(() => 'failed'),
    ];
    const over = await lanes.run('A', () => gate).catch((e: unknown) => e);
    expect(over).toMatchObject({ code: 'PLT_LANE_OVERLOADED' });
    expect(lanes.load()).toEqual({ slots: 2, running: 2, queued: 3, rejected: 1, completed: 0 });
    release();
    await Promise.all(work);
    expect(lanes.load()).toEqual({ slots: 2, running: 0, queued: 0, rejected: 1, completed: 5 });
  });

  it('a failing call frees its slot and reports its error', async () => {
    const lanes = createLaneScheduler({ slots: 1, perTenantInFlight: 1, queueCap: 10 });
    await expect(lanes.run('A', async () => { throw new Error('tool failed'); })).rejects.toThrow('tool failed');
    expect(await lanes.run('A', async () => 7)).toBe(7);
  });

  it('a call takes room by its cost: a tenant\'s cap counts costs exactly, a call costlier than the cap runs alone, the node\'s slots count costs too', async () => {
    const lanes = createLaneScheduler({ slots: 10, perTenantInFlight: 6, queueCap: 100 });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const peaks = { A: 0, B: 0 };
    const now = { A: 0, B: 0 };
    const call = (t: 'A' | 'B', cost: number) =>
      lanes.run(t, async () => {
        now[t] += cost;
        peaks[t] = Math.max(peaks[t], now[t]);
        await gate;
        now[t] -= cost;
      }, cost);
    // A: three calls of 2 fill its 6; the fourth (2) and a build-like call (4) wait, though the node has room.
    const a = [call('A', 2), call('A', 2), call('A', 2), call('A', 2), call('A', 4)];
    await sleep(5);
    expect(lanes.stats('A')).toMatchObject({ running: 6, queued: 2 });
    // B takes what is left of the node's 10: 2 and 2 start (4 of room), the third waits for the node.
    const b = [call('B', 2), call('B', 2), call('B', 1)];
    await sleep(5);
    expect(lanes.load()).toMatchObject({ slots: 10, running: 10, queued: 3 });
    release();
    await Promise.all([...a, ...b]);
    expect(peaks.A).toBe(6);
    expect(lanes.load()).toMatchObject({ running: 0, queued: 0, completed: 8 });
    // Costlier than the whole cap: it runs once the tenant has nothing running, alone.
    expect(await lanes.run('C', async () => 'alone', 9)).toBe('alone');
  });

  it('a tenant at its cap never holds back another tenant\'s call that costs more than one round\'s credit', async () => {
    const lanes = createLaneScheduler({ slots: 8, perTenantInFlight: 4, queueCap: 100 });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    // A fills its half with model-turn-like calls (cost 2) and queues more, all held.
    const a = Array.from({ length: 6 }, () => lanes.run('A', () => gate, 2));
    await sleep(5);
    expect(lanes.stats('A')).toMatchObject({ running: 4, queued: 4 });
    // B's one call of cost 2 starts at once, though one round's credit (1) does not pay for it and A, at its cap,
    // takes none of the rounds in between.
    expect(await Promise.race([lanes.run('B', async () => 'served', 2), sleep(200).then(() => 'stalled')])).toBe('served');
    release();
    await Promise.all(a);
  });

  it('serves costly calls by deficit, never stalling them', async () => {
    const lanes = createLaneScheduler({ slots: 1, perTenantInFlight: 1, queueCap: 10, quantum: 1 });
    expect(await lanes.run('A', async () => 'big', 5)).toBe('big');
  });
});
