import { describe, expect, it } from 'vitest';
import { agentTaskMachine, type AgentTaskInput } from '../../actors/index.ts';
import { effectDone, effectFailed, walk } from '../helpers/statechart.ts';

const input: AgentTaskInput = {
  accountId: 'a1',
  agentId: 'g1',
  taskId: 't1',
  contextId: 'c1',
  caller: { principalId: 'p1', kind: 'service', role: 'member', via: 'api_key' },
  maxSteps: 3,
  at: '2026-11-24T10:00:00.000Z',
};
const reply = (text: string, at = '2026-11-24T10:00:05.000Z') => effectDone('modelTurn', { kind: 'reply', text, messageId: 't1/reply-0', at });
const tools = (at = '2026-11-24T10:00:01.000Z') => effectDone('modelTurn', { kind: 'tools', calls: [{ id: 'c1', name: 'calc_add', args: { a: 1, b: 2 } }], at });
const results = effectDone('callTools', { results: [{ id: 'c1', name: 'calc_add', isError: false }], at: '2026-11-24T10:00:02.000Z' });

describe('AgentTask statechart', () => {
  it('[A2A-TASK-13] a first model turn that replies ends the run answered: no task, one reply event', () => {
    const s = walk(agentTaskMachine, input, reply('hello'));
    expect(s.value).toBe('answered');
    expect(s.status).toBe('done');
    expect(s.context.visible).toBe(false);
    expect(s.emitted).toEqual([{ type: 'task.reply', message: { messageId: 't1/reply-0', role: 'ROLE_AGENT', parts: [{ text: 'hello' }], contextId: 'c1' } }]);
  });

  it('[A2A-TASK-12] a tool call makes the run a task; the answer after it completes the task with an artifact', () => {
    const acting = walk(agentTaskMachine, input, tools());
    expect(acting.value).toEqual({ running: 'acting' });
    expect(acting.context.visible).toBe(true);
    expect(acting.emitted).toEqual([{ type: 'task.visible', at: '2026-11-24T10:00:01.000Z' }]);
    const done = walk(agentTaskMachine, input, tools(), results, reply('The sum is 3.'));
    expect(done.value).toBe('completed');
    expect(done.context).toMatchObject({ state: 'TASK_STATE_COMPLETED', statusAt: '2026-11-24T10:00:05.000Z', step: 1 });
    expect(done.emitted).toEqual([
      { type: 'task.artifact', artifactId: 't1:answer', text: 'The sum is 3.', messageId: 't1/reply-0' },
      { type: 'task.status', state: 'TASK_STATE_COMPLETED', at: '2026-11-24T10:00:05.000Z' },
    ]);
  });

  it('the step limit fails a run that keeps calling tools', () => {
    const s = walk(agentTaskMachine, input, tools(), results, tools(), results, tools('2026-11-24T10:00:09.000Z'));
    expect(s.value).toBe('failed');
    expect(s.context.state).toBe('TASK_STATE_FAILED');
    expect(s.context.statusAt).toBe('2026-11-24T10:00:09.000Z');
    expect((s.context.statusMessage?.parts[0] as { text?: string } | undefined)?.text).toMatch(/after 3 steps/);
    expect(s.emitted.at(-1)).toMatchObject({ type: 'task.status', state: 'TASK_STATE_FAILED' });
  });

  it('a failed model turn or tool round fails the task with the error and its time, shown as a task', () => {
    const s = walk(agentTaskMachine, input, effectFailed('modelTurn', { code: 'MODEL_FAILED', message: 'provider down', at: Date.parse('2026-11-24T10:00:03.000Z') } as never));
    expect(s.value).toBe('failed');
    expect(s.context.visible).toBe(true);
    expect(s.context.statusAt).toBe('2026-11-24T10:00:03.000Z');
    expect((s.context.statusMessage?.parts[0] as { text?: string } | undefined)?.text).toBe('MODEL_FAILED: provider down');
    const t = walk(agentTaskMachine, input, tools(), effectFailed('callTools', { code: 'AGENT_STEP_TIMEOUT', message: 'slow' }));
    expect(t.value).toBe('failed');
    expect((t.context.statusMessage?.parts[0] as { text?: string } | undefined)?.text).toBe('AGENT_STEP_TIMEOUT: slow');
  });

  it('CANCEL from any running step ends the task canceled, with who canceled it', () => {
    for (const before of [[], [tools()]] as const) {
      const s = walk(agentTaskMachine, input, ...before, { type: 'CANCEL', at: '2026-11-24T10:00:04.000Z', by: 'p1' });
      expect(s.value).toBe('canceled');
      expect(s.context).toMatchObject({ state: 'TASK_STATE_CANCELED', statusAt: '2026-11-24T10:00:04.000Z', visible: true });
      expect(s.emitted).toEqual([{ type: 'task.status', state: 'TASK_STATE_CANCELED', at: '2026-11-24T10:00:04.000Z', message: expect.objectContaining({ parts: [{ text: 'Canceled by p1.' }] }) }]);
    }
  });

  it('a run started as a task (returnImmediately) completes as one even on a bare reply', () => {
    const s = walk(agentTaskMachine, { ...input, visible: true }, reply('hi'));
    expect(s.value).toBe('completed');
    expect(s.emitted.map((e) => e.type)).toEqual(['task.artifact', 'task.status']);
  });

  it('[A2A-TASK-16] a round that stops at a form waits in awaitingInput (input required); only the values for that form take it back to the round', () => {
    const formMessage = { messageId: 't1:form:c1', role: 'ROLE_AGENT' as const, parts: [{ text: 'Fill in the form' }], contextId: 'c1', taskId: 't1' };
    const stopped = effectDone('callTools', { results: [], at: '2026-11-24T10:00:02.000Z', form: { toolCallId: 'c1', message: formMessage } });
    const waiting = walk(agentTaskMachine, input, tools(), stopped);
    expect(waiting.value).toEqual({ running: 'awaitingInput' });
    expect(waiting.context).toMatchObject({ state: 'TASK_STATE_INPUT_REQUIRED', statusMessage: formMessage, form: { toolCallId: 'c1' } });
    expect(waiting.emitted.at(-1)).toEqual({ type: 'task.status', state: 'TASK_STATE_INPUT_REQUIRED', at: '2026-11-24T10:00:02.000Z', message: formMessage });
    const other = walk(agentTaskMachine, input, tools(), stopped, { type: 'FORM_SUBMITTED', toolCallId: 'c9', values: {}, at: '2026-11-24T10:00:03.000Z', by: 'p1' } as never);
    expect(other.value).toEqual({ running: 'awaitingInput' });
    const resumed = walk(agentTaskMachine, input, tools(), stopped, { type: 'FORM_SUBMITTED', toolCallId: 'c1', values: { name: 'Ada' }, at: '2026-11-24T10:00:03.000Z', by: 'p1' } as never);
    expect(resumed.value).toEqual({ running: 'acting' });
    expect(resumed.context).toMatchObject({ state: 'TASK_STATE_WORKING', statusMessage: null, form: null, forms: { c1: { name: 'Ada' } } });
    const next = walk(agentTaskMachine, input, tools(), stopped, { type: 'FORM_SUBMITTED', toolCallId: 'c1', values: { name: 'Ada' }, at: '2026-11-24T10:00:03.000Z', by: 'p1' } as never, results);
    expect(next.context.forms).toEqual({});
  });
});
