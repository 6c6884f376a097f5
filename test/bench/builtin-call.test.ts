import { describe, expect, it } from 'vitest';
import { builtinCall } from '../../bench/scenarios/builtin-call.ts';
import { SCENARIOS } from '../../bench/scenarios/index.ts';

describe('builtin-call bench', () => {
  it('is registered', () => {
    expect(SCENARIOS).toContain(builtinCall);
  });

  it('runs briefly: run_javascript through the gateway beside the same QuickJS evaluation in-process, every answer checked', async () => {
    // A warm-up, so the first call's cold costs (a worker's start, a route's first answer) are not what is counted:
    // on a busy CI machine half a second from cold held only three calls.
    const r = await builtinCall.run({ seconds: 1, warmupSeconds: 0.5, rounds: 1, concurrency: 2 });
    expect(r.rows.map((x) => [x.role, x.label])).toEqual([
      ['reference', 'QuickJS in-process, fresh runtime per call'],
      ['ours', 'run_javascript via MCP gateway, lane and worker, 1 in flight'],
      ['ours', 'run_javascript via MCP gateway, lane and worker, 2 in flight'],
    ]);
    for (const row of r.rows) {
      expect(row.calls).toBeGreaterThan(5);
      expect(row.errors).toBe(0);
    }
    expect(r.notes[0]).toMatch(/^No target: the row shows what the platform adds to one evaluation — p50 -?\d+\.\d\d ms/);
  }, 120_000);
});
