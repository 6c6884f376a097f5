import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { createSpinPolicy } from '../../runtime/core/loop/index.ts';

const idle = (ms: number) => new Promise((r) => setTimeout(r, ms));
const nextTurn = () => new Promise((r) => setImmediate(r));
/** Holds the loop in slices of `sliceMs`, with a turn between them, for about `ms`. */
async function busy(ms: number, sliceMs = 20) {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    const until = Math.min(end, performance.now() + sliceMs);
    while (performance.now() < until);
    await nextTurn();
  }
}

describe('the main thread spins for sandbox replies only with time to spare', () => {
  it('spins while the loop is mostly idle, not while it is busy, and not before it has been measured', async () => {
    const spin = createSpinPolicy({ cores: 2 });
    onTestFinished(() => spin.stop());
    // Nothing measured yet: assume a busy loop. `spare` (what the sandbox threads spin by) says the same.
    expect(spin.allowance(1)).toBe(0);
    expect(spin.spare()).toBe(false);
    await idle(120);
    expect(spin.allowance(1)).toBe(40);
    expect(spin.spare()).toBe(true);
    await busy(150);
    expect(spin.allowance(1)).toBe(0);
    expect(spin.spare()).toBe(false);
    await idle(120);
    expect(spin.allowance(1)).toBe(40);
    expect(spin.spare()).toBe(true);
  });

  it('does not count its own spinning as load', async () => {
    const spin = createSpinPolicy({ cores: 2 });
    onTestFinished(() => spin.stop());
    spin.spare(); // its first use starts its sampling
    await idle(120);
    // The loop is held as long as before, but by spinning the policy allowed and was told of.
    const end = performance.now() + 150;
    while (performance.now() < end) {
      spin.allowance(1);
      const t0 = performance.now();
      while (performance.now() - t0 < 10);
      spin.spent((performance.now() - t0) * 1000);
      await nextTurn();
    }
    await nextTurn();
    expect(spin.allowance(1)).toBe(40);
  });

  it('allows 40 µs per call and 100 µs per turn of the loop in all', async () => {
    const spin = createSpinPolicy({ cores: 2 });
    onTestFinished(() => spin.stop());
    spin.spare(); // its first use starts its sampling
    await idle(120);
    expect(spin.allowance(1)).toBe(40);
    spin.spent(40);
    expect(spin.allowance(1)).toBe(40);
    spin.spent(40);
    expect(spin.allowance(1)).toBe(20);
    spin.spent(20);
    expect(spin.allowance(1)).toBe(0);
    await nextTurn();
    await nextTurn();
    expect(spin.allowance(1)).toBe(40);
  });

  it('does not spin while the threads with calls take every core', async () => {
    const spin = createSpinPolicy({ cores: 2 });
    onTestFinished(() => spin.stop());
    spin.spare(); // its first use starts its sampling
    await idle(120);
    expect(spin.allowance(1)).toBe(40);
    expect(spin.allowance(2)).toBe(0);
    expect(spin.allowance(3)).toBe(0);
    const four = createSpinPolicy({ cores: 4 });
    onTestFinished(() => four.stop());
    four.spare(); // its first use starts its sampling
    await idle(120);
    expect(four.allowance(3)).toBe(40);
    expect(four.allowance(4)).toBe(0);
  });

  it('lets a sandbox thread spin for its next call only with time to spare and a core left, one busy thread always', async () => {
    const spin = createSpinPolicy({ cores: 2 });
    onTestFinished(() => spin.stop());
    // Nothing measured yet: a busy loop, no spinning.
    expect(spin.threadsMaySpin(0)).toBe(false);
    await idle(120);
    expect(spin.threadsMaySpin(0)).toBe(true);
    expect(spin.threadsMaySpin(1)).toBe(true);
    expect(spin.threadsMaySpin(2)).toBe(false);
    await busy(150);
    expect(spin.threadsMaySpin(1)).toBe(false);
    // One core: the thread that has just replied (still counted) may spin; a second busy one leaves no core.
    const one = createSpinPolicy({ cores: 1 });
    onTestFinished(() => one.stop());
    one.spare(); // its first use starts its sampling
    await idle(120);
    expect(one.threadsMaySpin(1)).toBe(true);
    expect(one.threadsMaySpin(2)).toBe(false);
    const four = createSpinPolicy({ cores: 4 });
    onTestFinished(() => four.stop());
    four.spare(); // its first use starts its sampling
    await idle(120);
    expect(four.threadsMaySpin(3)).toBe(true);
    expect(four.threadsMaySpin(4)).toBe(false);
  });

  it('keeps no timer until it is first used, and none once stopped', () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    onTestFinished(() => void vi.useRealTimers());
    const spin = createSpinPolicy({ cores: 2 });
    // A node that serves nothing and runs no plugin samples nothing.
    expect(vi.getTimerCount()).toBe(0);
    expect(spin.mayPoll()).toBe(false);
    expect(vi.getTimerCount()).toBe(1);
    spin.allowance(1);
    spin.threadsMaySpin(1);
    expect(vi.getTimerCount()).toBe(1);
    spin.stop();
    expect(vi.getTimerCount()).toBe(0);
    expect(spin.spare()).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });
});
