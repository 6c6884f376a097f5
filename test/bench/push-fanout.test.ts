import { describe, expect, it } from 'vitest';
import { pushFanout } from '../../bench/scenarios/push-fanout.ts';
import { SCENARIOS } from '../../bench/scenarios/index.ts';

describe('push-fanout bench', () => {
  it('is registered', () => {
    expect(SCENARIOS).toContain(pushFanout);
  });

  it("[A2A-PUSH-17] runs briefly against a node process and reports B's terminal callbacks alone and beside A's flood", async () => {
    const r = await pushFanout.run({ seconds: 2, warmupSeconds: 0, rounds: 1, concurrency: 4 });
    expect(r.title).toMatch(/push notifications/);
    expect(r.parameters).toMatchObject({ 'measured s/phase': 2, rounds: 1, 'in flight': 'A 4 senders, B one task every 100 ms' });
    expect(r.rows.map((x) => x.role)).toEqual(['reference', 'ours']);
    const [alone, noisy] = r.rows;
    expect(noisy!.vs).toBe(alone!.label);
    // B started a task every 100 ms for two seconds, and each of its terminal callbacks was measured.
    for (const row of r.rows) {
      expect(row.calls).toBeGreaterThan(10);
      expect(row.p99).toBeGreaterThanOrEqual(row.p50);
      expect(row.errors).toBe(0);
    }
    expect(noisy!.targets!.map((t) => t.description)).toEqual([expect.stringMatching(/^none dropped \(0 of \d+ missing\)$/), expect.stringMatching(/^p99 ≤ 2× B alone \(\d+\.\d\d×\)$/)]);
    expect(noisy!.targets![0]!.met).toBe(true);
    expect(r.notes.join('\n')).toMatch(/A started \d+ tasks/);
  }, 180_000);
});
