import { describe, expect, it } from 'vitest';
import { HISTORY_WINDOW, runHistories } from '../../runtime/agents/index.ts';

const rec = (messageId: string, text = 'x') => ({ messageId, taskId: 't1', kind: 'user' as const, body: { parts: [{ text }] } });
const stored = (messageId: string) => ({ ...rec(messageId), seq: 1, createdAt: '2026-11-24T10:00:00.000Z' });

describe('the histories runs hold between their turns', () => {
  it("[A2A-TASK-18] a run's next turn reads the thread as the run started plus its own steps, in order", () => {
    let now = 0;
    const h = runHistories(() => now);
    h.start('t1', [stored('a'), stored('b')], rec('calls'));
    h.append('t1', rec('results'));
    expect(h.get('t1')?.map((r) => r.messageId)).toEqual(['a', 'b', 'calls', 'results']);
    // Another run is not this run.
    expect(h.get('t2')).toBeUndefined();
    h.end('t1');
    expect(h.get('t1')).toBeUndefined();
    // A record for a run not held does not start one.
    h.append('t1', rec('late'));
    expect(h.get('t1')).toBeUndefined();
    // Held five minutes at most.
    h.start('t3', [], rec('calls'));
    now += 5 * 60_000;
    expect(h.get('t3')).toBeUndefined();
  });

  it('[A2A-TASK-18] keeps the model window and gives up on large histories (the store serves them)', () => {
    const h = runHistories(() => 0);
    h.start('w', Array.from({ length: HISTORY_WINDOW }, (_, i) => stored(`m${i}`)), rec('calls'));
    const held = h.get('w')!;
    expect(held).toHaveLength(HISTORY_WINDOW);
    expect(held[0]!.messageId).toBe('m1');
    expect(held.at(-1)!.messageId).toBe('calls');
    // 256 KiB of JSON at most: just under is held, over is not, and growing past it drops the run.
    const big = 'y'.repeat(256 * 1024 - 40);
    h.start('edge', [], rec('calls', big));
    expect(h.get('edge')).toBeDefined();
    h.append('edge', rec('results', 'z'.repeat(64)));
    expect(h.get('edge')).toBeUndefined();
    h.start('over', [], rec('calls', 'y'.repeat(256 * 1024)));
    expect(h.get('over')).toBeUndefined();
  });
});
