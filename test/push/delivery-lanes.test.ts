import { describe, expect, it } from 'vitest';
import { createPushLanes, type PushLaneName } from '../../runtime/index.ts';

/** A job whose attempts wait until the test releases them; what happened to it is recorded. */
function jobs() {
  const started: string[] = [];
  const gaveUp: { key: string; reason: string; attempts: number }[] = [];
  const pending = new Map<string, { resolve: () => void; reject: (e: Error) => void }[]>();
  const job = (accountId: string, key: string) => ({
    accountId,
    key,
    attempt: () =>
      new Promise<void>((resolve, reject) => {
        started.push(key);
        pending.set(key, [...(pending.get(key) ?? []), { resolve, reject }]);
      }),
    onGiveUp: (reason: 'dropped' | 'failed', _err: unknown, attempts: number) => void gaveUp.push({ key, reason, attempts }),
  });
  const settle = async (key: string, ok: boolean) => {
    const p = pending.get(key)?.shift();
    if (!p) throw new Error(`no attempt of ${key} is waiting`);
    if (ok) p.resolve();
    else p.reject(new Error('receiver down'));
    await new Promise((r) => setTimeout(r, 5));
  };
  return { job, started, gaveUp, settle };
}

const tick = () => new Promise((r) => setTimeout(r, 5));
const options = { reservedSlots: 2, bestEffortSlots: 2, reservedQueue: 100, bestEffortQueue: 2, retryDelayMs: 10 };

describe('push delivery lanes', () => {
  it('[A2A-PUSH-17] the reserved lane has its own slots: a best-effort lane full of hung deliveries does not delay a terminal one', async () => {
    const lanes = createPushLanes(options);
    const j = jobs();
    for (let i = 0; i < 6; i++) lanes.submit('bestEffort', j.job('A', `A/w${i}`));
    lanes.submit('reserved', j.job('A', 'A/done'));
    await tick();
    expect(j.started).toContain('A/done');
    await j.settle('A/done', true);
    expect(lanes.figures('A').reserved).toMatchObject({ delivered: 1, dropped: 0, queued: 0, inFlight: 0 });
  });

  it('[A2A-PUSH-19] best effort: a newer update of the same task and config replaces the waiting one; past the bound the oldest is dropped; a failure is not retried', async () => {
    const lanes = createPushLanes({ ...options, bestEffortSlots: 1 });
    const j = jobs();
    lanes.submit('bestEffort', j.job('A', 'A/t1')); // runs at once
    lanes.submit('bestEffort', j.job('A', 'A/t2'));
    lanes.submit('bestEffort', j.job('A', 'A/t2')); // replaces the waiting t2 in its place
    lanes.submit('bestEffort', j.job('A', 'A/t3'));
    lanes.submit('bestEffort', j.job('A', 'A/t4')); // the bound is 2 waiting: t2 (the oldest) is dropped
    await tick();
    expect(j.gaveUp).toEqual([
      { key: 'A/t2', reason: 'dropped', attempts: 0 },
      { key: 'A/t2', reason: 'dropped', attempts: 0 },
    ]);
    expect(lanes.figures('A').bestEffort).toMatchObject({ dropped: 2, queued: 2, inFlight: 1 });
    await j.settle('A/t1', false);
    expect(j.gaveUp.at(-1)).toEqual({ key: 'A/t1', reason: 'failed', attempts: 1 });
    expect(j.started).toEqual(['A/t1', 'A/t3']);
    await j.settle('A/t3', true);
    await j.settle('A/t4', true);
    expect(j.started).toEqual(['A/t1', 'A/t3', 'A/t4']);
    expect(lanes.figures('A').bestEffort).toEqual({ delivered: 2, retried: 0, failed: 1, dropped: 2, queued: 0, inFlight: 0 });
  });

  it('[A2A-PUSH-18] reserved: a failed delivery is tried once more after the delay, then given up', async () => {
    const lanes = createPushLanes(options);
    const j = jobs();
    lanes.submit('reserved', j.job('A', 'A/t'));
    await tick();
    await j.settle('A/t', false);
    await new Promise((r) => setTimeout(r, 30));
    expect(j.started).toEqual(['A/t', 'A/t']);
    await j.settle('A/t', false);
    expect(j.gaveUp).toEqual([{ key: 'A/t', reason: 'failed', attempts: 2 }]);
    expect(lanes.figures().reserved).toEqual({ delivered: 0, retried: 1, failed: 1, dropped: 0, queued: 0, inFlight: 0 });
  });

  it.each(['reserved', 'bestEffort'] as PushLaneName[])('[A2A-PUSH-17] %s: accounts take turns, and one account never holds more than half the slots', async (lane) => {
    const lanes = createPushLanes({ ...options, reservedSlots: 4, bestEffortSlots: 4, bestEffortQueue: 100 });
    const j = jobs();
    for (let i = 0; i < 10; i++) lanes.submit(lane, j.job('A', `A/${i}`));
    await tick();
    expect(j.started).toEqual(['A/0', 'A/1']);
    // B arrives behind A's flood and starts at once, in the slots A may not take.
    lanes.submit(lane, j.job('B', 'B/0'));
    lanes.submit(lane, j.job('B', 'B/1'));
    await tick();
    expect(j.started).toEqual(['A/0', 'A/1', 'B/0', 'B/1']);
    expect(lanes.figures('A')[lane]).toMatchObject({ inFlight: 2, queued: 8 });
    expect(lanes.figures('B')[lane]).toMatchObject({ inFlight: 2, queued: 0 });
  });
});
