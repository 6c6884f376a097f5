import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindCalc, eventually, rulesFile } from '../helpers/agents.ts';
import { openSession, rpc } from '../helpers/mcp.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

const REFUND = {
  name: 'refund',
  description: 'Adds two amounts; a large sum needs a person and a shipping signal.',
  input: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  start: 'add',
  steps: {
    add: { type: 'tool', tool: 'calc_add', arguments: { a: '{{input.a}}', b: '{{input.b}}' }, next: 'big' },
    big: { type: 'branch', cases: [{ when: { path: 'steps.add.result', op: 'min', value: 100 }, next: 'ask' }], default: 'done' },
    ask: { type: 'approval', summary: 'Pay out {{steps.add.result}}?', arguments: { amount: '{{steps.add.result}}' }, next: 'wait', on_deny: 'refused' },
    wait: { type: 'signal', signal: 'shipped', next: 'done' },
    done: { type: 'succeed', output: { sum: '{{steps.add.result}}', tracking: '{{steps.wait.payload.tracking}}' } },
    refused: { type: 'fail', error: 'refused for {{steps.add.result}}' },
  },
};
const NAP = { name: 'nap', description: 'Sleeps a second.', start: 'sleep', steps: { sleep: { type: 'timer', seconds: 1, next: 'end' }, end: { type: 'succeed', output: 'rested' } } };

/** Workflow runs over the management API (spec §1): start, status, cancel, approve, signal; attached workflows as tools. */
describe('workflow runs', () => {
  let p: TestPlatform;
  let agentId: string;
  let gatewayId: string;
  let refundId: string;
  let napId: string;
  const keys: Record<'owner' | 'member' | 'viewer' | 'stranger', string> = { owner: '', member: '', viewer: '', stranger: '' };
  const as = (who: keyof typeof keys) => ({ authorization: `Bearer ${keys[who]}` });
  const api = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, json?: unknown, who: keyof typeof keys = 'owner') => p.call(method, url, { headers: as(who), ...(json !== undefined ? { json } : {}) });
  const start = (input: unknown, who: keyof typeof keys = 'owner', extra: Record<string, unknown> = { agent_id: agentId }) => api('POST', '/v1/workflow-runs', { workflow_id: refundId, input, ...extra }, who);
  const settled = (id: string, status: string, who: keyof typeof keys = 'owner') =>
    eventually(async () => {
      const r = (await api('GET', `/v1/workflow-runs/${id}`, undefined, who)).json.data;
      return r.status === status ? r : undefined;
    });

  beforeAll(async () => {
    p = await startTestPlatform({ env: { PLATFORM_SCRIPTED_RULES: await rulesFile() } });
    await bindCalc(p);
    const { admin, store } = p.node.services;
    const account = p.node.demo!.accountId;
    agentId = (await store.agents.byHandle('demo'))!.id;
    gatewayId = (await store.gateways.byHandle('demo'))!.id;
    refundId = (await admin.putWorkflow({ account, definition: REFUND })).id;
    napId = (await admin.putWorkflow({ account, definition: NAP })).id;
    keys.owner = p.node.demo!.userKey;
    const member = await admin.createUser({ account, email: 'wf-member@example.test', password: 'member-password', role: 'member' });
    keys.member = (await admin.createKey({ principal: member.id })).key;
    const viewer = await admin.createUser({ account, email: 'wf-viewer@example.test', password: 'viewer-password', role: 'viewer' });
    keys.viewer = (await admin.createKey({ principal: viewer.id })).key;
    const elsewhere = await admin.createAccount({ name: 'elsewhere' });
    const stranger = await admin.createUser({ account: elsewhere.id, email: 'wf-stranger@example.test', password: 'stranger-password', role: 'owner' });
    keys.stranger = (await admin.createKey({ principal: stranger.id })).key;
  });
  afterAll(() => p.close());

  it('[SURF-13] starts a run that calls a tool, branches and completes; reads its status', async () => {
    const res = await start({ a: 1, b: 2 });
    expect(res.status).toBe(201);
    expect(res.json.data).toMatchObject({ workflow_id: refundId, workflow_name: 'refund', target: { kind: 'agent', id: agentId }, input: { a: 1, b: 2 } });
    const done = await settled(res.json.data.id, 'completed');
    expect(done).toMatchObject({ step: 'done', output: { sum: 3 }, error: null, waiting_for: null, steps: 3 });
    expect((await api('GET', `/v1/workflow-runs?workflow_id=${refundId}`)).json.data.runs.map((r: any) => r.id)).toContain(done.id);
    expect((await api('GET', '/v1/workflows')).json.data.workflows.map((w: any) => w.name)).toEqual(['nap', 'refund']);
    expect((await api('GET', `/v1/workflows/${refundId}`)).json.data.definition).toMatchObject({ start: 'add' });
  });

  it('[SURF-13] [SURF-14] a large sum waits for an approval (an ApprovalGate of the run), then for a signal, then completes', async () => {
    const run = (await start({ a: 60, b: 50 })).json.data;
    const waiting = await settled(run.id, 'waiting');
    expect(waiting.waiting_for).toEqual({ kind: 'approval', gate_id: expect.any(String) });
    const gates = (await api('GET', `/v1/approval-gates?workflow_run_id=${run.id}`)).json.data.gates;
    expect(gates).toEqual([expect.objectContaining({ id: waiting.waiting_for.gate_id, agent_id: null, workflow_run_id: run.id, tool: 'workflow:refund/ask', arguments: { summary: 'Pay out 110?', arguments: { amount: 110 } } })]);
    // Not waiting for a signal yet; a service principal cannot decide; a member who does not own the run cannot see it.
    expect((await api('POST', `/v1/workflow-runs/${run.id}/signal`, { signal: 'shipped' })).json.code).toBe('WORKFLOW_NOT_WAITING');
    const svc = await p.call('POST', `/v1/workflow-runs/${run.id}/approve`, { headers: { authorization: `Bearer ${p.node.demo!.serviceKey}` }, json: { decision: 'approve' } });
    expect(svc.json.code).toBe('MGMT_USER_REQUIRED');
    expect((await api('POST', `/v1/workflow-runs/${run.id}/approve`, { decision: 'approve' }, 'member')).json.code).toBe('WORKFLOW_RUN_NOT_FOUND');
    const approved = await api('POST', `/v1/workflow-runs/${run.id}/approve`, { decision: 'approve' });
    expect(approved.status).toBe(200);
    const signalWait = await settled(run.id, 'waiting');
    expect(signalWait.waiting_for).toEqual({ kind: 'signal', signal: 'shipped', until: null });
    const wrong = await api('POST', `/v1/workflow-runs/${run.id}/signal`, { signal: 'delivered' });
    expect([wrong.status, wrong.json.code, wrong.json.message]).toEqual([409, 'WORKFLOW_NOT_WAITING', `run ${run.id} is not waiting for signal "delivered" (it waits for shipped)`]);
    const sig = await api('POST', `/v1/workflow-runs/${run.id}/signal`, { signal: 'shipped', payload: { tracking: 'T-1' } });
    expect(sig.status).toBe(200);
    const done = await settled(run.id, 'completed');
    expect(done.output).toEqual({ sum: 110, tracking: 'T-1' });
    const ended = await api('POST', `/v1/workflow-runs/${run.id}/cancel`);
    expect([ended.status, ended.json.code]).toEqual([409, 'WORKFLOW_RUN_ENDED']);
  });

  it('[SURF-13] a denial takes the on_deny step; a cancel ends a waiting run; a timer step wakes the run', async () => {
    const denied = (await start({ a: 100, b: 0 })).json.data;
    await settled(denied.id, 'waiting');
    await api('POST', `/v1/workflow-runs/${denied.id}/approve`, { decision: 'deny' });
    expect(await settled(denied.id, 'failed')).toMatchObject({ step: 'refused', error: 'refused for 100' });
    const canceled = (await start({ a: 200, b: 0 })).json.data;
    await settled(canceled.id, 'waiting');
    const c = await api('POST', `/v1/workflow-runs/${canceled.id}/cancel`);
    expect(c.json.data).toMatchObject({ status: 'canceled', error: expect.stringMatching(/^canceled by /) });
    const nap = (await api('POST', '/v1/workflow-runs', { workflow_id: napId })).json.data;
    const asleep = await settled(nap.id, 'waiting');
    expect(asleep.waiting_for).toEqual({ kind: 'timer', until: expect.any(String) });
    expect(await settled(nap.id, 'completed')).toMatchObject({ output: 'rested' });
  });

  it('[SURF-13] [MGMT-ERR-03] refuses bad starts with the reason, scopes runs to their owner and account', async () => {
    const bad = await start({ a: 'one', b: 2 });
    expect([bad.status, bad.json.code]).toEqual([400, 'WORKFLOW_INPUT_INVALID']);
    const noTarget = await start({ a: 1, b: 2 }, 'owner', {});
    expect([noTarget.status, noTarget.json.code]).toEqual([400, 'WORKFLOW_TARGET_REQUIRED']);
    expect((await start({ a: 1, b: 2 }, 'owner', { agent_id: agentId, gateway_id: gatewayId })).json.code).toBe('MGMT_INVALID_BODY');
    expect((await start({ a: 1, b: 2 }, 'viewer')).status).toBe(403);
    const foreign = await start({ a: 1, b: 2 }, 'stranger');
    expect([foreign.status, foreign.json.code]).toEqual([404, 'WORKFLOW_NOT_FOUND']);
    const mine = (await start({ a: 1, b: 2 }, 'member')).json.data;
    expect((await api('GET', '/v1/workflow-runs', undefined, 'member')).json.data.runs.map((r: any) => r.id)).toEqual([mine.id]);
    expect((await api('GET', `/v1/workflow-runs/${mine.id}`, undefined, 'stranger')).json.code).toBe('WORKFLOW_RUN_NOT_FOUND');
    expect((await api('GET', `/v1/workflow-runs/${mine.id}`)).json.data.owner_id).toBe(mine.owner_id);
    // A signal's payload is at most 16 KiB of JSON (a string's quotes count): at it, the run is looked up; past it, 413.
    const atLimit = await api('POST', '/v1/workflow-runs/x/signal', { signal: 's', payload: 'x'.repeat(16 * 1024 - 2) });
    expect([atLimit.status, atLimit.json.code]).toEqual([404, 'WORKFLOW_RUN_NOT_FOUND']);
    const over = await api('POST', '/v1/workflow-runs/x/signal', { signal: 's', payload: 'x'.repeat(16 * 1024 - 1) });
    expect([over.status, over.json.code]).toEqual([413, 'MGMT_BODY_TOO_LARGE']);
    // Nesting: 128 levels in all are taken (the run is looked up); deeper is 400, not the internal error a walk's stack
    // overflow made of 5,000 levels (10 KB, well within the payload's size).
    const nested = (n: number) => p.call('POST', '/v1/workflow-runs/x/signal', { headers: { ...as('owner'), 'content-type': 'application/json' }, body: `{"signal":"s","payload":${'['.repeat(n)}${']'.repeat(n)}}` });
    const atDepth = await nested(127);
    expect([atDepth.status, atDepth.json.code]).toEqual([404, 'WORKFLOW_RUN_NOT_FOUND']);
    for (const n of [128, 5000]) {
      const deep = await nested(n);
      expect([deep.status, deep.json.code, deep.json.message], String(n)).toEqual([400, 'MGMT_INVALID_BODY', 'invalid body: it nests arrays and objects deeper than 128 levels']);
    }
  });

  it('[SURF-16] [SURF-17] an attached workflow is a tool of the agent and of the gateway; detached, it is gone', async () => {
    const put = await api('PUT', `/v1/gateways/${gatewayId}/workflows/${refundId}`);
    expect(put.json.data).toEqual({ workflow_id: refundId, target: { kind: 'gateway', id: gatewayId }, changed: true });
    expect((await api('PUT', `/v1/agents/${agentId}/workflows/${refundId}`)).json.data.changed).toBe(true);
    expect((await api('GET', `/v1/agents/${agentId}/workflows`)).json.data.workflows.map((w: any) => w.name)).toEqual(['refund']);
    expect((await api('PUT', `/v1/gateways/${gatewayId}/workflows/${refundId}`, undefined, 'member')).status).toBe(403);
    expect((await api('GET', `/v1/gateways/${gatewayId}/workflows`, undefined, 'stranger')).json.code).toBe('MGMT_GATEWAY_NOT_FOUND');
    const s = await openSession(p, 'demo', as('owner'));
    const called = await rpc(p, 'demo', { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'workflow_refund', arguments: { a: 2, b: 3 } } }, s.headers);
    const result = JSON.parse(called.message.result.content[0].text);
    expect(result).toMatchObject({ status: 'completed', output: { sum: 5 }, step: 'done' });
    const agentTools = await p.node.services.toolRegistry.bound({ kind: 'agent', id: agentId, accountId: p.node.demo!.accountId });
    expect(agentTools.map((t) => t.name)).toContain('workflow_refund');
    expect((await api('DELETE', `/v1/gateways/${gatewayId}/workflows/${refundId}`)).json.data.changed).toBe(true);
    const after = await p.node.services.toolRegistry.bound({ kind: 'gateway', id: gatewayId, accountId: p.node.demo!.accountId });
    expect(after.map((t) => t.name)).not.toContain('workflow_refund');
  });
});
