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
    hot.expect(150_000);
    // Probes run only in polls: a loop that slept would not have run them at all.
    while (polls <= 10 && performance.now() - t0 < 120) await idle(1);
    expect(polls).toBeGreaterThan(10);
    // Well past the deadline the loop sleeps again: no more polls.
    await idle(Math.max(0, t0 + 190 - performance.now()));
    const after = polls;
    await idle(30);
    expect(polls).toBe(after);
    // What it polled with nothing to do was reported, and never more than the time that passed.
    expect(b.reports).toBeGreaterThan(0);
    expect(b.polledUs).toBeLessThanOrEqual((performance.now() - t0) * 1000);
  });

  it('a later deadline extends the polling; an earlier one does not cut it short', async () => {
    const { seam } = budget(true);
    const hot = createHotLoop(seam);
    onTestFinished(() => hot.stop());
    const polls: number[] = [];
    hot.watch(() => polls.push(performance.now()));
    const t0 = performance.now();
    hot.expect(300_000);
    hot.expect(1_000);
    await idle(30);
    // A turn's immediates come after its timers: the poll queued before this one has run when it does.
    await new Promise((r) => setImmediate(r));
    // Polled well past the earlier deadline (1 ms), however late the timer came.
    expect(polls.some((t) => t - t0 > 20)).toBe(true);
  });

  it('credits as idle no more than an empty turn costs, and not the work before the first poll', async () => {
    const reports: number[] = [];
    const hot = createHotLoop({ mayPoll: () => true, polled: (us) => void reports.push(us) });
    onTestFinished(() => hot.stop());
    let polls = 0;
    // Every other turn has 200 µs of work in it (a probe's work, then a timer's).
    hot.watch(() => {
      polls++;
      if (polls % 2 === 0) {
        const t = performance.now();
        while (performance.now() - t < 0.2);
      }
    });
    hot.expect(20_000);
    // The caller's own work after asking is not idle time either.
    const t = performance.now();
    while (performance.now() - t < 2);
    const t1 = performance.now();
    while (polls <= 4 && performance.now() - t1 < 15) await idle(1);
    expect(polls).toBeGreaterThan(4);
    expect(reports.length).toBeGreaterThan(0);
    expect(Math.max(...reports)).toBeLessThanOrEqual(5);
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
    await new Promise((r) => setImmediate(r));
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

  it('a probe removed, or the loop stopped, is not called again; a stopped loop does not poll', async () => {
    const { seam } = budget(true);
    const hot = createHotLoop(seam);
    let a = 0;
    let c = 0;
    const unwatch = hot.watch(() => a++);
    hot.watch(() => c++);
    hot.expect(50_000);
    await idle(3);
    await new Promise((r) => setImmediate(r));
    unwatch();
    const a1 = a;
    await idle(3);
    expect(a).toBe(a1);
    expect(c).toBeGreaterThan(0);
    hot.stop();
    let late = 0;
    hot.watch(() => late++);
    hot.expect(50_000);
    await idle(10);
    expect(late).toBe(0);
  });

  it("the node's spin policy allows polling only with time to spare, a core left and under half a window polled, and does not count it as load", async () => {
    const spin = createSpinPolicy({ cores: 2 });
    onTestFinished(() => spin.stop());
    // Not measured yet: assume a busy loop.
    expect(spin.mayPoll()).toBe(false);
    await idle(120);
    expect(spin.mayPoll()).toBe(true);
    // Sandbox threads with calls on both cores: no core for polling.
    spin.allowance(2);
    expect(spin.mayPoll()).toBe(false);
    expect(spin.threadsMaySpin(1)).toBe(true);
    expect(spin.mayPoll()).toBe(true);
    // Half of a 50 ms window polled: no more polling in this window.
    spin.polled(26_000);
    expect(spin.mayPoll()).toBe(false);
    // The next windows have their own half.
    await idle(120);
    expect(spin.mayPoll()).toBe(true);
    // A loop held by polling it was told of is still spare: the polling is not load.
    const end = performance.now() + 120;
    while (performance.now() < end) {
      const t0 = performance.now();
      while (performance.now() - t0 < 2);
      spin.polled((performance.now() - t0) * 1000);
      await new Promise((r) => setImmediate(r));
    }
    await new Promise((r) => setTimeout(r, 0));
    expect(spin.spare()).toBe(true);
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
