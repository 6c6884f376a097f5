import { describe, expect, it } from 'vitest';
import { agentTaskMachine, approvalGateMachine, approvalGateTimers, TELL, type AgentTaskInput, type ApprovalGateInput } from '../../actors/index.ts';
import { effectDone, walk } from '../helpers/statechart.ts';

const gate: ApprovalGateInput = {
  gateId: 'g1',
  accountId: 'a1',
  agentId: 'ag1',
  taskId: 't1',
  contextId: 'c1',
  taskAddress: 'agent-task/a1/ag1:t1',
  ownerId: 'u1',
  tool: 'calc_add',
  toolCallId: 'call-1',
  arguments: { a: 2, b: 40 },
  argumentsHash: 'sha256:abc',
  openedAt: '2026-11-24T10:00:00.000Z',
  expiresAt: Date.parse('2026-11-24T11:00:00.000Z'),
};
const decide = (decision: 'approve' | 'deny', over: Partial<{ byKind: string; argumentsHash: string }> = {}) =>
  ({ type: 'DECIDE', decision, by: 'u1', byKind: 'user', argumentsHash: 'sha256:abc', at: '2026-11-24T10:05:00.000Z', ...over }) as const;

describe('ApprovalGate statechart', () => {
  it('[A2A-GATE-02] an approval by a user with the same arguments ends the gate and tells its task', () => {
    const s = walk(approvalGateMachine, gate, decide('approve'));
    expect(s.value).toBe('approved');
    expect(s.status).toBe('done');
    expect(s.emitted).toEqual([
      { type: 'gate.decided', outcome: 'approved', by: 'u1', at: '2026-11-24T10:05:00.000Z' },
      { type: 'reply.decided', outcome: 'approved', tool: 'calc_add', agentId: 'ag1', argumentsHash: 'sha256:abc' },
      { type: TELL, to: 'agent-task/a1/ag1:t1', event: { type: 'GATE_RESOLVED', gateId: 'g1', toolCallId: 'call-1', outcome: 'approved', by: 'u1', at: '2026-11-24T10:05:00.000Z' } },
    ]);
  });

  it('a denial ends it denied, told the same way', () => {
    const s = walk(approvalGateMachine, gate, decide('deny'));
    expect(s.value).toBe('denied');
    expect(s.emitted.at(-1)).toMatchObject({ type: TELL, event: { outcome: 'denied' } });
  });

  it('[A2A-GATE-03] a decision by a service principal changes nothing and says why', () => {
    const s = walk(approvalGateMachine, gate, decide('approve', { byKind: 'service' }));
    expect(s.value).toBe('pending');
    expect(s.emitted).toEqual([{ type: 'reply.rejected', reason: 'user_required' }]);
  });

  it('a decision for other arguments changes nothing: the gate is bound to the exact call', () => {
    const s = walk(approvalGateMachine, gate, decide('approve', { argumentsHash: 'sha256:other' }));
    expect(s.value).toBe('pending');
    expect(s.emitted).toEqual([{ type: 'reply.rejected', reason: 'arguments_mismatch' }]);
  });

  it('expires at its deadline (a durable timer) as an observable denial; an ended gate arms nothing', () => {
    const pending = walk(approvalGateMachine, gate);
    expect(approvalGateTimers(pending as never)).toEqual([{ key: 'expire', at: gate.expiresAt, event: { type: 'EXPIRE', at: '2026-11-24T11:00:00.000Z' } }]);
    const s = walk(approvalGateMachine, gate, { type: 'EXPIRE', at: '2026-11-24T11:00:00.000Z' });
    expect(s.value).toBe('expired');
    expect(s.emitted.at(-1)).toMatchObject({ type: TELL, event: { outcome: 'expired', by: null, at: '2026-11-24T11:00:00.000Z' } });
    expect(approvalGateTimers(s as never)).toEqual([]);
  });
});

describe('AgentTask with a gated call', () => {
  const input: AgentTaskInput = { accountId: 'a1', agentId: 'ag1', taskId: 't1', contextId: 'c1', caller: { principalId: 'u1', kind: 'user', role: 'member', via: 'token' }, maxSteps: 3, at: '2026-11-24T10:00:00.000Z', visible: true, calls: [{ id: 'call-1', name: 'calc_add', args: { a: 2, b: 40 } }] };
  const message = { messageId: 't1/gate-g1', role: 'ROLE_AGENT' as const, contextId: 'c1', taskId: 't1', parts: [{ text: 'Approval needed' }, { data: { 'platform.gate_decision': { gateId: 'g1' } } }] };
  const asked = effectDone('callTools', { results: [], at: '2026-11-24T10:00:01.000Z', ask: { gateId: 'g1', toolCallId: 'call-1', message } });
  const resolved = (outcome: string, gateId = 'g1') => ({ type: 'GATE_RESOLVED', gateId, toolCallId: 'call-1', outcome, by: 'u1', at: '2026-11-24T10:05:00.000Z' }) as never;

  it('[A2A-TASK-14] a round that asks parks the task in INPUT_REQUIRED with the gate message as its status', () => {
    const s = walk(agentTaskMachine, input, asked);
    expect(s.value).toEqual({ running: 'awaitingApproval' });
    expect(s.context).toMatchObject({ state: 'TASK_STATE_INPUT_REQUIRED', statusAt: '2026-11-24T10:00:01.000Z', statusMessage: message, gate: { gateId: 'g1', toolCallId: 'call-1' } });
    expect(s.emitted).toEqual([{ type: 'task.status', state: 'TASK_STATE_INPUT_REQUIRED', at: '2026-11-24T10:00:01.000Z', message }]);
  });

  it('its gate resolving takes the run back to the same round with the outcome; another gate is ignored', () => {
    const other = walk(agentTaskMachine, input, asked, resolved('approved', 'g2'));
    expect(other.value).toEqual({ running: 'awaitingApproval' });
    const s = walk(agentTaskMachine, input, asked, resolved('approved'));
    expect(s.value).toEqual({ running: 'acting' });
    expect(s.context).toMatchObject({ state: 'TASK_STATE_WORKING', statusMessage: null, gate: null, approvals: { 'call-1': 'approved' }, step: 0 });
    expect(s.emitted).toEqual([{ type: 'task.status', state: 'TASK_STATE_WORKING', at: '2026-11-24T10:05:00.000Z' }]);
    const next = walk(agentTaskMachine, input, asked, resolved('denied'), effectDone('callTools', { results: [{ id: 'call-1', name: 'calc_add', isError: true }], at: '2026-11-24T10:05:01.000Z' }));
    expect(next.value).toEqual({ running: 'thinking' });
    expect(next.context).toMatchObject({ step: 1, approvals: {} });
  });

  it('CANCEL ends a task waiting on a gate', () => {
    const s = walk(agentTaskMachine, input, asked, { type: 'CANCEL', at: '2026-11-24T10:02:00.000Z', by: 'u1' });
    expect(s.value).toBe('canceled');
  });
});
