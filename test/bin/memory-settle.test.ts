import v8 from 'node:v8';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { collect, settleMemoryWhenQuiet } from '../../bin/memory-settle.ts';

const youngGeneration = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')!.space_size;

/** Allocates short-lived objects until V8 has grown its young generation (or gives up). */
function growYoungGeneration(): number {
  const start = youngGeneration();
  let keep: unknown[] = [];
  for (let i = 0; i < 400 && youngGeneration() <= start; i++) {
    const batch: unknown[] = [];
    for (let j = 0; j < 20_000; j++) batch.push({ j, s: `x${j}` });
    keep.push(batch);
    if (keep.length > 20) keep = keep.slice(10);
  }
  return youngGeneration();
}

/** Keeps the event loop busy (about 90% of the time) for `ms`. */
async function busyFor(ms: number) {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    const slice = performance.now() + 18;
    while (performance.now() < slice) Math.sqrt(Math.random());
    await sleep(2);
  }
}

describe('memory settling after a start', () => {
  it('collects once the loop has been quiet for an interval, and the young generation shrinks', async () => {
    const grown = growYoungGeneration();
    expect(grown).toBeGreaterThan(1 << 20);
    const settled = await new Promise<{ rssBefore: number; rssAfter: number; ms: number }>((resolve) => settleMemoryWhenQuiet({ intervalMs: 50, onSettled: resolve }));
    expect(settled.ms).toBeGreaterThan(0);
    expect(youngGeneration()).toBeLessThan(grown);
  });

  it('waits while the loop is busy, and gives up when it stays busy', async () => {
    const calls: unknown[] = [];
    settleMemoryWhenQuiet({ intervalMs: 50, giveUpAfterMs: 300, onSettled: (r) => calls.push(r) });
    await busyFor(500);
    // Quiet from here on: a collection still scheduled would run at the next interval.
    await sleep(200);
    expect(calls).toEqual([]);
  });

  it('runs nothing once cancelled', async () => {
    const calls: unknown[] = [];
    const cancel = settleMemoryWhenQuiet({ intervalMs: 20, onSettled: (r) => calls.push(r) });
    cancel();
    await sleep(150);
    expect(calls).toEqual([]);
  });

  it('collect reports the RSS around the collection', async () => {
    const r = await collect();
    expect(r).not.toBeNull();
    expect(r!.rssBefore).toBeGreaterThan(0);
    expect(r!.rssAfter).toBeGreaterThan(0);
  });
});
