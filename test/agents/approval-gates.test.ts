import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { argumentsHash, mintAgentToken } from '../../runtime/index.ts';
import { a2aCall, bearer, request } from '../helpers/a2a.ts';
import { bindCalc, call, eventually, rulesFile, userMessage } from '../helpers/agents.ts';
import { demoUser } from '../helpers/identity.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

const GATE_EXT = 'https://github.com/platform/agent-platform/ext/approval-gate/v1';
/** The demo agent's policy sends `calc_add` to a human; everything else runs. */
async function askForAdd(p: TestPlatform) {
  const agentId = (await p.node.services.store.agents.byHandle('demo'))!.id;
  await p.node.services.autonomy.setPolicy(p.node.demo!.accountId, 'agent', agentId, { rules: [{ tool: 'calc_add', mode: 'ask', reason: 'calc_add needs a person to approve it' }] }, 'test');
}

type Gate = { gateId: string; tool: string; toolCallId: string; arguments: Record<string, unknown>; argumentsHash: string; expiresAt: string; decisions: string[] };
const gateOf = (t: any): Gate => t.status.message.parts.find((x: any) => x.data)?.data['platform.gate_decision'];
const decision = (t: { id: string; contextId: string }, gateId: string, d: 'approve' | 'deny', hash: string) =>
  userMessage('', { taskId: t.id, contextId: t.contextId, parts: [{ data: { 'platform.gate_decision': { gateId, decision: d, argumentsHash: hash } } }] });

describe('approval gates on the agent surface', () => {
  let p: TestPlatform;
  let userToken: string;
  beforeAll(async () => {
    p = await startTestPlatform({ env: { PLATFORM_SCRIPTED_RULES: await rulesFile() } });
    await bindCalc(p);
    await askForAdd(p);
    const agentId = (await p.node.services.store.agents.byHandle('demo'))!.id;
    const user = (await demoUser(p)).userId;
    userToken = (await mintAgentToken({ store: p.node.services.store, tokens: p.node.services.agentTokens }, { accountId: p.node.demo!.accountId, agentId, subject: user, actors: [] })).token;
  });
  afterAll(() => p.close());

  const asUser = (method: string, params: unknown, headers: Record<string, string> = {}) => a2aCall(p, request(method, params), { headers: { ...bearer(userToken), ...headers } });
  async function paused(text = 'add 2 and 40', headers: Record<string, string> = {}) {
    const res = await asUser('SendMessage', { message: userMessage(text) }, headers);
    expect(res.status).toBe(200);
    if (!res.json.result) throw new Error(JSON.stringify(res.json));
    return res.json.result.task;
  }

  it('[A2A-TASK-14] [A2A-TASK-15] [A2A-TASK-16] [A2A-GATE-01] a call the policy sends to ask parks the task: the blocking send answers the persisted snapshot at once', async () => {
    const started = Date.now();
    const t = await paused();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(t.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(t.status.message.role).toBe('ROLE_AGENT');
    expect(t.status.message.extensions).toBeUndefined();
    const g = gateOf(t);
    expect(g).toMatchObject({ tool: 'calc_add', arguments: { a: 2, b: 40 }, argumentsHash: argumentsHash({ a: 2, b: 40 }), decisions: ['approve', 'deny'] });
    expect(g.argumentsHash).toMatch(/^sha256:[0-9a-f]{64}$/);
    const again = await asUser('GetTask', { id: t.id });
    expect(again.json.result.status).toEqual(t.status);
    const row = await p.node.services.gates.get(p.node.demo!.accountId, g.gateId);
    expect(row).toMatchObject({ state: 'pending', taskId: t.id, contextId: t.contextId, tool: 'calc_add', argumentsHash: g.argumentsHash });
  });

  it('[A2A-GATE-02] an approval by the user resumes the run: the call runs and the task completes', async () => {
    const t = await paused();
    const g = gateOf(t);
    const res = await asUser('SendMessage', { message: decision(t, g.gateId, 'approve', g.argumentsHash) });
    expect(res.json.result.task).toMatchObject({ id: t.id, status: { state: 'TASK_STATE_COMPLETED' }, artifacts: [{ parts: [{ text: 'The sum is 42.' }] }] });
    const user = (await demoUser(p)).userId;
    const row = await p.node.services.gates.get(p.node.demo!.accountId, g.gateId);
    expect(row).toMatchObject({ state: 'approved', decidedBy: user });
    // Both decisions are in the autonomy history: the policy's `ask`, then the person's approval, bound to the hash.
    const { decisions } = await p.node.services.autonomy.decisions({ accountId: p.node.demo!.accountId, tool: 'calc_add', principalId: user }, 100);
    const mine = decisions.filter((d) => d.argumentsHash === g.argumentsHash);
    expect(mine.some((d) => d.outcome === 'ask' && d.decidedBy === 'policy')).toBe(true);
    expect(mine.some((d) => d.outcome === 'allow' && d.decidedBy === 'human' && d.gateId === g.gateId)).toBe(true);
  });

  it('a denial resumes the run too: the model reads that the call was denied', async () => {
    const t = await paused();
    const g = gateOf(t);
    const res = await asUser('SendMessage', { message: decision(t, g.gateId, 'deny', g.argumentsHash) });
    expect(res.json.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(res.json.result.task.artifacts[0].parts[0].text).toBe('The sum is A person denied this call..');
  });

  it('[A2A-GATE-04] [A2A-GATE-05] a decision for altered arguments is rejected with a message; the task stays input-required', async () => {
    const t = await paused();
    const g = gateOf(t);
    const res = await asUser('SendMessage', { message: decision(t, g.gateId, 'approve', argumentsHash({ a: 2, b: 4000 })) });
    const m = res.json.result.message;
    expect(m).toMatchObject({ role: 'ROLE_AGENT', taskId: t.id, contextId: t.contextId });
    expect(m.parts[1].data).toEqual({ 'platform.gate_decision_rejected': { gateId: g.gateId, reason: 'arguments_mismatch' } });
    expect((await asUser('GetTask', { id: t.id })).json.result.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    // The right decision still works afterwards.
    const ok = await asUser('SendMessage', { message: decision(t, g.gateId, 'approve', g.argumentsHash) });
    expect(ok.json.result.task.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('a decision replayed after the gate ended is rejected: a gate is single use', async () => {
    const t = await paused();
    const g = gateOf(t);
    await asUser('SendMessage', { message: decision(t, g.gateId, 'approve', g.argumentsHash) });
    const replay = await asUser('SendMessage', { message: decision(t, g.gateId, 'deny', g.argumentsHash) });
    expect(replay.json.result.message.parts[1].data['platform.gate_decision_rejected']).toEqual({ gateId: g.gateId, reason: 'already_decided' });
  });

  it('[A2A-GATE-03] a service principal cannot decide, even on its own task', async () => {
    const res = await call(p, 'SendMessage', { message: userMessage('add 1 and 2') });
    const t = res.json.result.task;
    expect(t.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const g = gateOf(t);
    const tried = await call(p, 'SendMessage', { message: decision(t, g.gateId, 'approve', g.argumentsHash) });
    expect(tried.json.result.message.parts[1].data['platform.gate_decision_rejected']).toEqual({ gateId: g.gateId, reason: 'user_required' });
    expect((await call(p, 'GetTask', { id: t.id })).json.result.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
  });

  it('a decision without both ids, or with a malformed part, is invalid params; a gate of another task is unknown', async () => {
    const t = await paused();
    const g = gateOf(t);
    const noContext = await asUser('SendMessage', { message: { ...decision(t, g.gateId, 'approve', g.argumentsHash), contextId: undefined } });
    expect(noContext.json.error.code).toBe(-32602);
    const bad = await asUser('SendMessage', { message: userMessage('', { taskId: t.id, contextId: t.contextId, parts: [{ data: { 'platform.gate_decision': { gateId: g.gateId, decision: 'maybe', argumentsHash: g.argumentsHash } } }] }) });
    expect(bad.json.error.code).toBe(-32602);
    const other = await paused();
    const cross = await asUser('SendMessage', { message: decision(other, g.gateId, 'approve', g.argumentsHash) });
    expect(cross.json.result.message.parts[1].data['platform.gate_decision_rejected'].reason).toBe('unknown_gate');
  });

  it('[A2A-GATE-06] streamed: the stream ends at the input-required update; a rejected decision is one non-final update; an approval streams to the end', async () => {
    const first = await asUser('SendStreamingMessage', { message: userMessage('add 2 and 40') });
    const last = first.frames.at(-1).result;
    expect(last.statusUpdate.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const t = { id: last.statusUpdate.taskId, contextId: last.statusUpdate.contextId };
    const g = gateOf(last.statusUpdate);
    const rejected = await asUser('SendStreamingMessage', { message: decision(t, g.gateId, 'approve', 'sha256:0') });
    expect(rejected.frames).toHaveLength(1);
    expect(rejected.frames[0].result.statusUpdate).toMatchObject({ taskId: t.id, contextId: t.contextId, status: { state: 'TASK_STATE_INPUT_REQUIRED' } });
    expect(rejected.frames[0].result.statusUpdate.status.message.parts[1].data['platform.gate_decision_rejected'].reason).toBe('arguments_mismatch');
    const resumed = await asUser('SendStreamingMessage', { message: decision(t, g.gateId, 'approve', g.argumentsHash) });
    const states = resumed.frames.filter((f: any) => f.result.statusUpdate).map((f: any) => f.result.statusUpdate.status.state);
    expect(states.at(-1)).toBe('TASK_STATE_COMPLETED');
    expect(resumed.frames.some((f: any) => f.result.artifactUpdate?.lastChunk === true)).toBe(true);
  });

  it('the approval-gate message carries the extension URI only when the request negotiated it', async () => {
    const t = await paused('add 3 and 4', { 'a2a-extensions': GATE_EXT });
    expect(t.status.message.extensions).toEqual([GATE_EXT]);
    const plain = await asUser('GetTask', { id: t.id });
    expect(plain.json.result.status.message.extensions).toBeUndefined();
  });
});

describe('approval gates expire', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform({ env: { PLATFORM_SCRIPTED_RULES: await rulesFile(), PLATFORM_APPROVAL_TTL_SECONDS: '1' } });
    await bindCalc(p);
    await askForAdd(p);
  });
  afterAll(() => p.close());

  it('an expired gate is an observable denial: the run goes on without the call, and a late decision is rejected', async () => {
    const t = (await call(p, 'SendMessage', { message: userMessage('add 2 and 40') })).json.result.task;
    const g = gateOf(t);
    const done = await eventually(async () => {
      const r = (await call(p, 'GetTask', { id: t.id })).json.result;
      return r.status.state === 'TASK_STATE_COMPLETED' ? r : undefined;
    });
    expect(done.artifacts[0].parts[0].text).toBe('The sum is The approval this call needed expired before anyone decided..');
    const row = await p.node.services.gates.get(p.node.demo!.accountId, g.gateId);
    expect(row).toMatchObject({ state: 'expired', decidedBy: null });
    const late = await p.node.services.gates.decide({ accountId: p.node.demo!.accountId, gateId: g.gateId, decision: 'approve', argumentsHash: g.argumentsHash, by: { principalId: 'someone', kind: 'user' } });
    expect(late).toEqual({ rejected: 'expired' });
  });
});
