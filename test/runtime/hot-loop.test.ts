import { describe, expect, it, onTestFinished } from 'vitest';
import { createHotLoop, createSpinPolicy, type PollBudget } from '../../runtime/core/loop/index.ts';
import { CallSignal, createSandboxThreads } from '../../runtime/core/sandbox/index.ts';

const idle = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A budget that allows polling (or not) and adds up what it is told was polled. */
function budget(allow: boolean) {
  const b = { allow, polledUs: 0, reports: 0 };
  const seam: PollBudget = {
    mayPoll: () => b.allow,
    polled(us) {
      b.polledUs += us;
      b.reports++;
    },
  };
  return { b, seam };
}

describe('the hot loop polls instead of sleeping while work is expected', () => {
  it('polls until the deadline, runs its probes on every poll, then sleeps', async () => {
    const { b, seam } = budget(true);
    const hot = createHotLoop(seam);
    onTestFinished(() => hot.stop());
    let polls = 0;
    hot.watch(() => polls++);
    const t0 = performance.now();
    hot.expect(20_000);
    await idle(5);
    // The loop turned many times in 5 ms: a sleeping loop would have turned once for the timer.
    expect(polls).toBeGreaterThan(10);
    await idle(40);
    const after = polls;
    expect(performance.now() - t0).toBeGreaterThan(20);
    await idle(20);
    // Past the deadline the loop sleeps again: no more polls.
    expect(polls).toBe(after);
    // What it polled with nothing to do was reported, and never more than the time that passed.
    expect(b.reports).toBeGreaterThan(0);
    expect(b.polledUs).toBeLessThanOrEqual((performance.now() - t0) * 1000);
  });

  it('a later deadline extends the polling; an earlier one does not cut it short', async () => {
    const { seam } = budget(true);
    const hot = createHotLoop(seam);
    onTestFinished(() => hot.stop());
    let polls = 0;
    hot.watch(() => polls++);
    hot.expect(30_000);
    hot.expect(1_000);
    await idle(15);
    const mid = polls;
    await idle(5);
    expect(polls).toBeGreaterThan(mid);
  });

  it('does not poll when the budget says the loop has no time to spare, and stops when it says so mid-way', async () => {
    const { b, seam } = budget(false);
    const hot = createHotLoop(seam);
    onTestFinished(() => hot.stop());
    let polls = 0;
    hot.watch(() => polls++);
    hot.expect(20_000);
    await idle(10);
    expect(polls).toBe(0);
    b.allow = true;
    hot.expect(50_000);
    await idle(5);
    expect(polls).toBeGreaterThan(0);
    b.allow = false;
    await idle(2);
    const stopped = polls;
    await idle(10);
    expect(polls).toBe(stopped);
  });

  it('never holds the loop: timers and I/O run between polls', async () => {
    const { seam } = budget(true);
    const hot = createHotLoop(seam);
    onTestFinished(() => hot.stop());
    hot.expect(50_000);
    const t0 = performance.now();
    await idle(1);
    await new Promise((r) => setImmediate(r));
    expect(performance.now() - t0).toBeLessThan(20);
  });

  it('a probe removed, or the loop stopped, is not called again', async () => {
    const { seam } = budget(true);
    const hot = createHotLoop(seam);
    let a = 0;
    let c = 0;
    const unwatch = hot.watch(() => a++);
    hot.watch(() => c++);
    hot.expect(50_000);
    await idle(3);
    unwatch();
    const a1 = a;
    await idle(3);
    expect(a).toBe(a1);
    hot.stop();
    await idle(1);
    const c1 = c;
    await idle(5);
    expect(c).toBe(c1);
  });

  it("the node's spin policy allows polling only with time to spare and under half a window polled, and does not count it as load", async () => {
    const spin = createSpinPolicy({ cores: 2 });
    onTestFinished(() => spin.stop());
    // Not measured yet: assume a busy loop.
    expect(spin.mayPoll()).toBe(false);
    await idle(120);
    expect(spin.mayPoll()).toBe(true);
    // Held for a window by polling it was told of: still spare (the polling is not load), but it polled too much.
    const end = performance.now() + 120;
    while (performance.now() < end) {
      const t0 = performance.now();
      while (performance.now() - t0 < 5);
      spin.polled((performance.now() - t0) * 1000);
      await new Promise((r) => setImmediate(r));
    }
    await new Promise((r) => setTimeout(r, 0));
    expect(spin.spare()).toBe(true);
    expect(spin.mayPoll()).toBe(false);
    await idle(120);
    expect(spin.mayPoll()).toBe(true);
  });
});

describe('sandbox threads with a hot loop', () => {
  it('ask for polling while a call runs past the spin, and a poll takes its reply without a turn of the loop', async () => {
    const expected: number[] = [];
    let probe: (() => void) | undefined;
    const hot = {
      expect: (us: number) => void expected.push(us),
      watch: (p: () => void) => {
        probe = p;
        return () => (probe = undefined);
      },
      stop() {},
    };
    const threads = createSandboxThreads({
      threads: 1,
      maxHeapMb: 64,
      // Never spins for a reply: the call is still running when it has been posted.
      spinPolicy: { allowance: () => 0, spent() {}, spare: () => false, threadsMaySpin: () => false, polled() {}, mayPoll: () => true, stop() {} },
      hotLoop: hot,
    });
    onTestFinished(() => threads.close());
    await threads.warm;
    expect(probe).toBeTypeOf('function');
    const call = threads.run({ key: 'not-loaded', grantsKey: 'none', tenant: 't', func: 'f', args: [] }, new CallSignal(performance.now() + 5_000));
    expect(expected).toEqual([1_000]);
    // Polled in a loop that never yields: only the probe can take the reply (the port's message event needs a turn).
    const end = performance.now() + 5_000;
    while (threads.stats().completed === 0 && performance.now() < end) probe!();
    expect(threads.stats().completed).toBe(1);
    expect(await call).toEqual({ missing: true });
    await threads.close();
    expect(probe).toBeUndefined();
  });
});
