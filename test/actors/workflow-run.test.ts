import { describe, expect, it } from 'vitest';
import { render, workflowRunMachine, workflowRunTimers, type WorkflowDefinition, type WorkflowRunInput } from '../../actors/index.ts';
import { effectDone, effectFailed, walk } from '../helpers/statechart.ts';

const T0 = '2026-11-24T10:00:00.000Z';
const workflow: WorkflowDefinition = {
  name: 'w',
  description: '',
  start: 'add',
  steps: {
    add: { type: 'tool', tool: 'calc_add', arguments: { a: '{{input.a}}', b: 2 }, next: 'check', on_error: 'oops' },
    check: { type: 'branch', cases: [{ when: { path: 'steps.add.result', op: 'min', value: 10 }, next: 'ask' }], default: 'nap' },
    ask: { type: 'approval', summary: 'ok {{steps.add.result}}?', next: 'wait' },
    wait: { type: 'signal', signal: 'go', timeout_seconds: 60, next: 'done', on_timeout: 'late' },
    nap: { type: 'timer', seconds: 30, next: 'done' },
    done: { type: 'succeed', output: { sum: '{{steps.add.result}}', note: 'sum {{steps.add.result}}, {{steps.wait.payload.n}}' } },
    late: { type: 'fail', error: 'no go after {{steps.add.result}}' },
    oops: { type: 'fail', error: 'the tool said {{steps.add.error}}' },
  },
};
const input = (a: number, extra: Partial<WorkflowRunInput> = {}): WorkflowRunInput => ({
  accountId: 'a1',
  runId: 'r1',
  workflowId: 'w1',
  workflow,
  input: { a },
  target: { kind: 'agent', id: 'g1' },
  caller: { principalId: 'p1', kind: 'user', role: 'owner', via: 'api_key' },
  at: T0,
  maxTransitions: 50,
  ...extra,
});
const added = (result: unknown, at = '2026-11-24T10:00:01.000Z') => effectDone('runTool', { ok: true, result, at });
const gate = effectDone('openGate', { gateId: 'gate-1', at: '2026-11-24T10:00:02.000Z' });
const resolved = (outcome: string) => ({ type: 'GATE_RESOLVED', gateId: 'gate-1', toolCallId: 'ask', outcome, by: 'p1', at: '2026-11-24T10:00:03.000Z' }) as never;

describe('WorkflowRun statechart', () => {
  it('[SURF-13] a tool step gets its rendered arguments; a branch, a timer and a succeed step finish the run (snapshots round-trip through JSON)', () => {
    const calling = walk(workflowRunMachine, input(3));
    expect(calling.value).toBe('calling');
    const napping = walk(workflowRunMachine, input(3), added(5));
    expect(napping.value).toBe('sleeping');
    expect(napping.context.waitingFor).toEqual({ kind: 'timer', until: Date.parse('2026-11-24T10:00:31.000Z') });
    expect(workflowRunTimers(napping)).toEqual([{ key: 'wake', at: Date.parse('2026-11-24T10:00:31.000Z'), event: { type: 'WAKE', at: '2026-11-24T10:00:31.000Z' } }]);
    const ending = walk(workflowRunMachine, input(3), added(5), { type: 'WAKE', at: '2026-11-24T10:00:31.000Z' } as never);
    // Ended: what waits on the run's end (agents' workflow triggers) is told first, by the effect runEnded.
    expect(ending.value).toBe('ending');
    expect(ending.context).toMatchObject({ status: 'completed', output: { sum: 5, note: 'sum 5, ' }, updatedAt: '2026-11-24T10:00:31.000Z' });
    expect(ending.emitted).toEqual([{ type: 'run.status', status: 'completed', step: 'done', at: '2026-11-24T10:00:31.000Z' }]);
    const done = walk(workflowRunMachine, input(3), added(5), { type: 'WAKE', at: '2026-11-24T10:00:31.000Z' } as never, effectDone('runEnded', { started: 1 }));
    expect(done.value).toBe('completed');
  });

  it('[SURF-13] an approval step waits on its gate; approved, a signal step waits; a wrong signal is refused, the right one goes on', () => {
    const waiting = walk(workflowRunMachine, input(9), added(11), gate);
    expect(waiting.value).toBe('awaitingApproval');
    expect(waiting.context).toMatchObject({ status: 'waiting', waitingFor: { kind: 'approval', gateId: 'gate-1' } });
    const other = walk(workflowRunMachine, input(9), added(11), gate, { ...(resolved('approved') as object), gateId: 'another' } as never);
    expect(other.value).toBe('awaitingApproval');
    const signal = walk(workflowRunMachine, input(9), added(11), gate, resolved('approved'));
    expect(signal.value).toBe('awaitingSignal');
    expect(signal.context.waitingFor).toEqual({ kind: 'signal', signal: 'go', until: Date.parse('2026-11-24T10:01:03.000Z') });
    const wrong = walk(workflowRunMachine, input(9), added(11), gate, resolved('approved'), { type: 'SIGNAL', signal: 'stop', at: T0, by: 'p1' } as never);
    expect(wrong.value).toBe('awaitingSignal');
    expect(wrong.emitted).toEqual([{ type: 'reply.signal', accepted: false, waitingFor: 'go' }]);
    const done = walk(workflowRunMachine, input(9), added(11), gate, resolved('approved'), { type: 'SIGNAL', signal: 'go', payload: { n: 7 }, at: '2026-11-24T10:00:09.000Z', by: 'p1' } as never);
    expect(done.context).toMatchObject({ status: 'completed', output: { sum: 11, note: 'sum 11, 7' } });
    const late = walk(workflowRunMachine, input(9), added(11), gate, resolved('approved'), { type: 'SIGNAL_TIMEOUT', at: '2026-11-24T10:01:03.000Z' } as never);
    expect(late.context).toMatchObject({ status: 'failed', error: 'no go after 11', current: 'late' });
  });

  it('[SURF-13] a denial without on_deny fails the run; a tool error takes on_error; an effect failure, a cancel and the step limit end it', () => {
    const denied = walk(workflowRunMachine, input(9), added(11), gate, resolved('denied'), effectDone('runEnded', { started: 0 }));
    expect(denied.value).toBe('failed');
    expect(denied.context.error).toBe('step ask: the approval was denied by p1');
    const toolError = walk(workflowRunMachine, input(1), effectDone('runTool', { ok: false, error: 'boom', at: T0 }));
    expect(toolError.context).toMatchObject({ status: 'failed', error: 'the tool said boom', current: 'oops' });
    const broken = walk(workflowRunMachine, input(1), effectFailed('runTool', { code: 'PLT_LANE_OVERLOADED', message: 'full' }));
    expect(broken.context).toMatchObject({ status: 'failed', error: 'step add: PLT_LANE_OVERLOADED: full' });
    const canceled = walk(workflowRunMachine, input(9), added(11), gate, { type: 'CANCEL', at: T0, by: 'p9' } as never);
    expect(canceled.context).toMatchObject({ status: 'canceled', error: 'canceled by p9', waitingFor: null });
    const loop: WorkflowDefinition = { name: 'l', description: '', start: 'a', steps: { a: { type: 'branch', cases: [{ when: { path: 'input', op: 'exists' }, next: 'a' }], default: 'a' } } };
    const looped = walk(workflowRunMachine, input(1, { workflow: loop, maxTransitions: 20 }));
    expect(looped.context).toMatchObject({ status: 'failed', error: 'the run took 20 steps without ending (its step limit)', transitions: 20 });
  });

  it('[SURF-13] every end passes through ending, whose effect may fail without changing how the run ended; a cancel there changes nothing', () => {
    const ending = walk(workflowRunMachine, input(9), added(11), gate, resolved('denied'));
    expect(ending.value).toBe('ending');
    expect(walk(workflowRunMachine, input(9), added(11), gate, resolved('denied'), { type: 'CANCEL', at: T0, by: 'p9' } as never).context).toMatchObject({ status: 'failed' });
    const failedToTell = walk(workflowRunMachine, input(9), added(11), gate, resolved('denied'), effectFailed('runEnded', { code: 'PLT_INTERNAL', message: 'down' }));
    expect([failedToTell.value, failedToTell.context.status]).toEqual(['failed', 'failed']);
    const canceled = walk(workflowRunMachine, input(9), added(11), gate, { type: 'CANCEL', at: T0, by: 'p9' } as never, effectDone('runEnded', { started: 0 }));
    expect(canceled.value).toBe('canceled');
  });

  it('templates: a lone placeholder keeps its type, placeholders in text become text, missing values are empty', () => {
    const scope = { input: { n: 2, s: 'x', o: { k: [1, 2] } }, steps: {} };
    expect(render({ a: '{{input.n}}', b: 'n={{input.n}} o={{input.o}}', c: ['{{input.o.k.1}}', '{{missing}}'], d: '{{ input.s }}', e: 'open {{ never closed' }, scope)).toEqual({
      a: 2,
      b: 'n=2 o={"k":[1,2]}',
      c: [2, undefined],
      d: 'x',
      e: 'open {{ never closed',
    });
  });
});
