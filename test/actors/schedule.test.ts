import { describe, expect, it } from 'vitest';
import { scheduleMachine, scheduleTimers, type ScheduleInput, type StartRunOutput } from '../../actors/index.ts';
import { effectDone, effectFailed, walk } from '../helpers/statechart.ts';

const T0 = Date.parse('2026-11-28T09:00:00.000Z');
const input = (over: Partial<ScheduleInput> = {}): ScheduleInput => ({
  accountId: 'a1',
  scheduleId: 's1',
  agentId: 'ag1',
  caller: { principalId: 'u1', kind: 'service', role: 'member', via: 'api_key' },
  message: 'send the report',
  contextId: null,
  spec: { kind: 'cron', cron: '0 9 * * *', timezone: 'UTC' },
  firstAt: T0,
  origin: { kind: 'api' },
  at: '2026-11-27T12:00:00.000Z',
  ...over,
});
const started = (over: Partial<StartRunOutput> = {}): StartRunOutput => ({ taskId: `schedule-s1-${T0}`, error: null, nextAt: T0 + 86_400_000, keep: true, at: '2026-11-28T09:00:01.000Z', ...over });

describe('Schedule statechart', () => {
  it('waits for its first occurrence as a durable timer, and ignores a timer of another occurrence', () => {
    const s = walk(scheduleMachine, input());
    expect(s.value).toBe('waiting');
    expect(scheduleTimers(s as never)).toEqual([{ key: 'fire', at: T0, event: { type: 'FIRE', at: T0 } }]);
    expect(walk(scheduleMachine, input(), { type: 'FIRE', at: T0 - 60_000 }).value).toBe('waiting');
    const firing = walk(scheduleMachine, input(), { type: 'FIRE', at: T0 });
    expect(firing.value).toBe('firing');
    // While the run starts no timer is armed: the occurrence fires once.
    expect(scheduleTimers(firing as never)).toEqual([]);
  });

  it('an occurrence that started its task goes on to the next one, told as schedule.fired', () => {
    const s = walk(scheduleMachine, input(), { type: 'FIRE', at: T0 }, effectDone('startRun', started()));
    expect(s.value).toBe('waiting');
    expect(s.context).toMatchObject({ status: 'active', runs: 1, nextAt: T0 + 86_400_000, lastRun: { taskId: `schedule-s1-${T0}`, occurrence: T0 }, lastError: null });
    expect(s.emitted).toEqual([
      { type: 'schedule.fired', taskId: `schedule-s1-${T0}`, occurrence: T0, at: '2026-11-28T09:00:01.000Z' },
      { type: 'schedule.status', status: 'active', nextAt: T0 + 86_400_000, at: '2026-11-28T09:00:01.000Z' },
    ]);
    expect(scheduleTimers(s as never)).toEqual([{ key: 'fire', at: T0 + 86_400_000, event: { type: 'FIRE', at: T0 + 86_400_000 } }]);
  });

  it('a one-time run completes after its occurrence; a run that could not start is recorded and the schedule goes on', () => {
    const once = walk(scheduleMachine, input({ spec: { kind: 'once', at: T0 } }), { type: 'FIRE', at: T0 }, effectDone('startRun', started({ nextAt: null })));
    expect([once.value, once.context.status, once.context.runs, once.context.nextAt]).toEqual(['completed', 'completed', 1, null]);
    expect(scheduleTimers(once as never)).toEqual([]);
    const missed = walk(scheduleMachine, input(), { type: 'FIRE', at: T0 }, effectDone('startRun', started({ taskId: null, error: 'A2A_OVERLOADED: busy' })));
    expect([missed.value, missed.context.runs, missed.context.lastError]).toEqual(['waiting', 0, 'A2A_OVERLOADED: busy']);
    expect(missed.emitted.map((e) => e.type)).toEqual(['schedule.status']);
  });

  it('ends failed when its creator can no longer run the agent, or when the start itself crashed', () => {
    const gone = walk(scheduleMachine, input(), { type: 'FIRE', at: T0 }, effectDone('startRun', started({ taskId: null, error: 'the principal who made the schedule can no longer run the agent', keep: false, nextAt: null })));
    expect([gone.value, gone.context.status, gone.context.nextAt]).toEqual(['failed', 'failed', null]);
    const crashed = walk(scheduleMachine, input(), { type: 'FIRE', at: T0 }, effectFailed('startRun', { code: 'PLT_INTERNAL', message: 'boom' }));
    expect([crashed.value, crashed.context.lastError]).toEqual(['failed', 'PLT_INTERNAL: boom']);
  });

  it('a cancel ends it, waiting or while its run starts', () => {
    const cancel = { type: 'CANCEL', at: '2026-11-28T08:00:00.000Z', by: 'u1' } as const;
    const waiting = walk(scheduleMachine, input(), cancel);
    expect([waiting.value, waiting.context.status, waiting.context.nextAt]).toEqual(['canceled', 'canceled', null]);
    expect(scheduleTimers(waiting as never)).toEqual([]);
    expect(walk(scheduleMachine, input(), { type: 'FIRE', at: T0 }, cancel).value).toBe('canceled');
  });
});
