import { describe, expect, it, vi } from 'vitest';
import { spinFor } from '../../runtime/core/sandbox/spin-for.mjs';

describe('a sandbox spin (both sides of a call) reads the clock sparingly', () => {
  it('returns what the probe found as soon as it finds it, and when', () => {
    let tries = 0;
    const from = performance.now();
    const r = spinFor(from, 1_000, () => (++tries === 5 ? 'reply' : undefined));
    expect(r.found).toBe('reply');
    expect(tries).toBe(5);
    expect(r.at).toBeGreaterThanOrEqual(from);
    expect(r.at - from).toBeLessThan(1_000);
  });

  it('gives up once its time has passed, with nothing found', () => {
    const from = performance.now();
    const r = spinFor(from, 2, () => undefined);
    expect(r.found).toBeUndefined();
    expect(r.at - from).toBeGreaterThanOrEqual(2);
    // The deadline is overshot by at most one batch of tries (a few µs here, whatever the machine's load).
    expect(r.at - from).toBeLessThan(50);
  });

  it('reads the clock once per 32 tries, not on every try (on Node 20 each read allocates)', () => {
    let tries = 0;
    // A clock of its own, a microsecond a read: the count of tries then depends on the reads alone, not on whether a
    // busy machine took the thread away mid-spin (a real 3 ms once held only one batch of tries under CI's load).
    let clock = 0;
    const now = vi.spyOn(performance, 'now').mockImplementation(() => (clock += 0.001));
    try {
      const r = spinFor(performance.now(), 3, () => {
        tries++;
        return undefined;
      });
      expect(r.found).toBeUndefined();
      const reads = now.mock.calls.length - 1; // less the caller's own reading of `from`
      expect(tries).toBeGreaterThan(64);
      expect(reads).toBe(tries / 32);
    } finally {
      now.mockRestore();
    }
  });
});
