import { EventSchemas, RunFinishedEventSchema } from '@ag-ui/core/schemas';
import { verifyEvents, type BaseEvent } from '@ag-ui/client';
import { from, lastValueFrom, toArray } from 'rxjs';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AGUI_CODE_STATUS, AGUI_KIND_STATUS, aguiErrorOf } from '../../edge/a2a/agui-errors.ts';
import { AguiRun } from '../../edge/a2a/agui-events.ts';
import { decisionOf, gateDecisionMessage, gateOf, interruptOf, type OpenGate } from '../../edge/a2a/agui-gates.ts';
import type { RunEvent } from '../../edge/a2a/backend.ts';
import { ERROR_KINDS, isPlatformError, PlatformError } from '../../runtime/index.ts';
import { ROOT } from '../helpers/cli.ts';

const ids = { threadId: 'thread-1', runId: 'run-1' };
const at = '2026-11-02T10:00:00.000Z';
const T = { taskId: 't1', contextId: 'thread-1' };

/** Every event of a run as the adapter writes it, checked by @ag-ui/core's schemas and the strict client's verifier. */
async function adapt(items: RunEvent[]) {
  const run = new AguiRun(ids);
  const events = [...run.start(), ...items.flatMap((e) => run.next(e))];
  for (const e of events) expect(EventSchemas.safeParse(e).success, JSON.stringify(e)).toBe(true);
  await lastValueFrom(from(events as BaseEvent[]).pipe(verifyEvents(false), toArray()));
  return { events, run };
}
const types = (events: { type: string }[]) => events.map((e) => e.type);

const gateMessage = {
  messageId: 't1:status',
  role: 'ROLE_AGENT' as const,
  taskId: 't1',
  contextId: 'thread-1',
  parts: [
    { text: 'Approval needed: calc_add' },
    {
      data: { 'platform.gate_decision': { gateId: 'g-1', tool: 'calc_add', toolCallId: 'call_1', arguments: { a: 2, b: 40 }, argumentsHash: 'sha256:ab12', expiresAt: '2026-11-02T11:00:00.000Z', decisions: ['approve', 'deny'] } },
      mediaType: 'application/json',
    },
  ],
};

describe('AG-UI events of a run (A2A-RPC-03), on constructed frames', () => {
  it('[A2A-RPC-03] a bare reply is one text message with one content event, then RUN_FINISHED', async () => {
    const { events, run } = await adapt([{ message: { messageId: 'r1', role: 'ROLE_AGENT', contextId: 'thread-1', parts: [{ text: 'just this' }] } }]);
    expect(types(events)).toEqual(['RUN_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'RUN_FINISHED']);
    expect(events[0]).toEqual({ type: 'RUN_STARTED', threadId: 'thread-1', runId: 'run-1' });
    expect(events[2]).toEqual({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'r1', delta: 'just this' });
    expect(events[4]).toEqual({ type: 'RUN_FINISHED', threadId: 'thread-1', runId: 'run-1', outcome: { type: 'success' } });
    expect(run.ended).toBe(true);
    expect(run.next({ message: { messageId: 'r2', role: 'ROLE_AGENT', parts: [{ text: 'late' }] } })).toEqual([]);
  });

  it('[A2A-RPC-03] a task: each tool call with its result, text before a call ended first, the answer as deltas completed by the whole answer', async () => {
    const { events } = await adapt([
      { task: { id: 't1', contextId: 'thread-1', status: { state: 'TASK_STATE_WORKING', timestamp: at } } },
      { artifactUpdate: { ...T, artifact: { artifactId: 't1:answer', parts: [{ text: 'Let me add.' }] }, append: false, lastChunk: false } },
      { toolCall: { taskId: 't1', step: 0, id: 'call_1', name: 'calc_add', args: { a: 2, b: 40 } } },
      { toolResult: { taskId: 't1', step: 0, id: 'call_1', name: 'calc_add', isError: false, output: '42' } },
      { artifactUpdate: { ...T, artifact: { artifactId: 't1:answer', parts: [{ text: 'The sum ' }] }, append: true, lastChunk: false } },
      { artifactUpdate: { ...T, artifact: { artifactId: 't1:answer', parts: [{ text: 'is' }] }, append: true, lastChunk: false } },
      { artifactUpdate: { ...T, artifact: { artifactId: 't1:answer', parts: [{ text: 'The sum is 42.' }] }, append: false, lastChunk: true } },
      { statusUpdate: { ...T, status: { state: 'TASK_STATE_COMPLETED', timestamp: at } } },
    ]);
    expect(types(events)).toEqual([
      'RUN_STARTED',
      'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END',
      'TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END', 'TOOL_CALL_RESULT',
      'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END',
      'RUN_FINISHED',
    ]);
    expect(events.slice(4, 8)).toEqual([
      { type: 'TOOL_CALL_START', toolCallId: 'call_1', toolCallName: 'calc_add' },
      { type: 'TOOL_CALL_ARGS', toolCallId: 'call_1', delta: '{"a":2,"b":40}' },
      { type: 'TOOL_CALL_END', toolCallId: 'call_1' },
      { type: 'TOOL_CALL_RESULT', messageId: 'call_1:result', toolCallId: 'call_1', content: '42', role: 'tool' },
    ]);
    const answer = events.filter((e: any) => e.type === 'TEXT_MESSAGE_CONTENT' && e.messageId === 't1:text-2').map((e: any) => e.delta);
    expect(answer).toEqual(['The sum ', 'is', ' 42.']);
    expect(events.at(-1)).toEqual({ type: 'RUN_FINISHED', threadId: 'thread-1', runId: 'run-1', outcome: { type: 'success' }, result: { taskId: 't1', contextId: 'thread-1', state: 'TASK_STATE_COMPLETED' } });
  });

  it('[A2A-RPC-03] an answer whose first chunks were missed comes whole as its own message; a task seen ended brings its artifact', async () => {
    const missed = await adapt([
      { artifactUpdate: { ...T, artifact: { artifactId: 't1:answer', parts: [{ text: 'is 42.' }] }, append: true, lastChunk: false } },
      { artifactUpdate: { ...T, artifact: { artifactId: 't1:answer', parts: [{ text: 'The sum is 42.' }] }, append: false, lastChunk: true } },
      { statusUpdate: { ...T, status: { state: 'TASK_STATE_COMPLETED', timestamp: at } } },
    ]);
    expect(missed.events.filter((e: any) => e.type === 'TEXT_MESSAGE_CONTENT').map((e: any) => [e.messageId, e.delta])).toEqual([
      ['t1:text-1', 'is 42.'],
      ['t1:answer', 'The sum is 42.'],
    ]);
    const ended = await adapt([{ task: { id: 't1', contextId: 'thread-1', status: { state: 'TASK_STATE_COMPLETED', timestamp: at }, artifacts: [{ artifactId: 't1:answer', parts: [{ text: 'done' }] }] } }]);
    expect(types(ended.events)).toEqual(['RUN_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'RUN_FINISHED']);
  });

  it('[A2A-RPC-03] a failed task ends the run with RUN_ERROR carrying its status message and code; a canceled one is a cancelled outcome', async () => {
    const failed = await adapt([
      { task: { id: 't1', contextId: 'thread-1', status: { state: 'TASK_STATE_WORKING', timestamp: at } } },
      { artifactUpdate: { ...T, artifact: { artifactId: 't1:answer', parts: [{ text: 'partial' }] }, append: false, lastChunk: false } },
      { statusUpdate: { ...T, status: { state: 'TASK_STATE_FAILED', timestamp: at, message: { messageId: 't1:status', role: 'ROLE_AGENT', parts: [{ text: 'AGENT_STEP_TIMEOUT: the model did not answer within 1 s' }] } } } },
    ]);
    expect(types(failed.events)).toEqual(['RUN_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'RUN_ERROR']);
    expect(failed.events.at(-1)).toEqual({ type: 'RUN_ERROR', message: 'AGENT_STEP_TIMEOUT: the model did not answer within 1 s', code: 'AGENT_STEP_TIMEOUT' });
    const limit = await adapt([{ task: { id: 't1', contextId: 'thread-1', status: { state: 'TASK_STATE_FAILED', timestamp: at, message: { messageId: 's', role: 'ROLE_AGENT', parts: [{ text: 'The agent stopped after 3 steps.' }] } } } }]);
    expect(limit.events.at(-1)).toEqual({ type: 'RUN_ERROR', message: 'The agent stopped after 3 steps.', code: 'TASK_FAILED' });
    const canceled = await adapt([{ statusUpdate: { ...T, status: { state: 'TASK_STATE_CANCELED', timestamp: at } } }]);
    expect(canceled.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'cancelled' } });
  });
});

describe('approval gates as AG-UI interrupts (A2A-RPC-03), on constructed frames', () => {
  it('[A2A-RPC-03] a task stopped at a gate ends the run with an interrupt outcome: the gate id, reason tool_call, the call id and the gate payload with the task', async () => {
    const { events } = await adapt([
      { task: { id: 't1', contextId: 'thread-1', status: { state: 'TASK_STATE_WORKING', timestamp: at } } },
      { toolCall: { taskId: 't1', step: 0, id: 'call_1', name: 'calc_add', args: { a: 2, b: 40 } } },
      { statusUpdate: { ...T, status: { state: 'TASK_STATE_INPUT_REQUIRED', timestamp: at, message: gateMessage } } },
    ]);
    const finished = events.at(-1) as any;
    expect(RunFinishedEventSchema.safeParse(finished).success).toBe(true);
    expect(finished.outcome).toEqual({
      type: 'interrupt',
      interrupts: [
        {
          id: 'g-1',
          reason: 'tool_call',
          message: 'Approval needed: calc_add',
          toolCallId: 'call_1',
          expiresAt: '2026-11-02T11:00:00.000Z',
          responseSchema: expect.objectContaining({ required: ['decision'] }),
          metadata: { 'platform.gate_decision': { gateId: 'g-1', tool: 'calc_add', toolCallId: 'call_1', arguments: { a: 2, b: 40 }, argumentsHash: 'sha256:ab12', expiresAt: '2026-11-02T11:00:00.000Z', decisions: ['approve', 'deny'], taskId: 't1', contextId: 'thread-1' } },
        },
      ],
    });
    expect(finished.result).toEqual({ taskId: 't1', contextId: 'thread-1', state: 'TASK_STATE_INPUT_REQUIRED' });
  });

  it('[A2A-RPC-03] input required without a gate is an input_required interrupt; a message without a gate part has no gate', () => {
    expect(gateOf({ messageId: 'x', role: 'ROLE_AGENT', parts: [{ text: 'more please' }] })).toBeNull();
    expect(interruptOf({ id: 't1', contextId: 'c', state: 'TASK_STATE_INPUT_REQUIRED', message: { messageId: 'x', role: 'ROLE_AGENT', parts: [{ text: 'more please' }] } })).toEqual({
      id: 't1:input',
      reason: 'input_required',
      message: 'more please',
      metadata: { taskId: 't1', contextId: 'c' },
    });
  });

  it('[A2A-RPC-03] a resume entry becomes the A2A gate decision: the task, its context and the gate_decision data part; cancelled denies; a decision the gate does not offer is refused', () => {
    const open: OpenGate = { taskId: 't1', contextId: 'thread-1', gate: gateOf(gateMessage)! };
    expect(gateDecisionMessage({ interruptId: 'g-1', status: 'resolved', payload: { decision: 'approve' } }, open, 'run-2:resume')).toEqual({
      messageId: 'run-2:resume',
      role: 'ROLE_USER',
      taskId: 't1',
      contextId: 'thread-1',
      parts: [{ data: { 'platform.gate_decision': { gateId: 'g-1', decision: 'approve', argumentsHash: 'sha256:ab12' } }, mediaType: 'application/json' }],
    });
    expect(decisionOf({ interruptId: 'g-1', status: 'cancelled' }, open.gate!)).toEqual({ decision: 'deny', argumentsHash: 'sha256:ab12' });
    expect(decisionOf({ interruptId: 'g-1', status: 'resolved', payload: 'deny' }, open.gate!)).toEqual({ decision: 'deny', argumentsHash: 'sha256:ab12' });
    // A hash the client echoes is sent as it is: the gate checks it against the call's arguments.
    expect(decisionOf({ interruptId: 'g-1', status: 'resolved', payload: { decision: 'approve', argumentsHash: 'sha256:other' } }, open.gate!).argumentsHash).toBe('sha256:other');
    let err: unknown;
    try {
      decisionOf({ interruptId: 'g-1', status: 'resolved', payload: { decision: 'maybe' } }, open.gate!);
    } catch (e) {
      err = e;
    }
    expect(isPlatformError(err, 'AGUI_INVALID_INPUT')).toBe(true);
    expect((err as Error).message).toContain('"approve" | "deny"');
  });
});

describe('AG-UI route errors (A2A-RPC-03)', () => {
  it('[A2A-RPC-03] docs/errors.md lists the status of every kind and of each code with its own, as the route maps them', () => {
    const doc = readFileSync(path.join(ROOT, 'docs/errors.md'), 'utf8');
    const section = doc.slice(doc.indexOf('### AG-UI route wire'));
    const rows = [...section.matchAll(/^\| `?([A-Za-z0-9_]+)`? \| (\d{3}) \|$/gm)].map((m) => [m[1], Number(m[2])]);
    expect(rows).toEqual([...ERROR_KINDS.map((k) => [k, AGUI_KIND_STATUS[k]]), ...Object.entries(AGUI_CODE_STATUS)]);
  });

  it('[A2A-RPC-03] a refusal is its status with {code, message}; a 401 carries the challenge; an internal failure hides its message', () => {
    expect(aguiErrorOf(new PlatformError('A2A_CREDENTIAL_MISSING'))).toMatchObject({ status: 401, headers: { 'www-authenticate': 'Bearer realm=a2a, error=invalid_token' }, body: { code: 'A2A_CREDENTIAL_MISSING' } });
    expect(aguiErrorOf(new PlatformError('AGUI_BODY_TOO_LARGE', 'too big'))).toEqual({ status: 413, headers: {}, body: { code: 'AGUI_BODY_TOO_LARGE', message: 'too big' }, internal: false });
    expect(aguiErrorOf(new Error('secret detail'))).toEqual({ status: 500, headers: {}, body: { code: 'PLT_INTERNAL', message: 'Internal error' }, internal: true });
  });
});
