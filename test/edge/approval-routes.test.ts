import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintAgentToken } from '../../runtime/index.ts';
import { a2aCall, bearer, request } from '../helpers/a2a.ts';
import { bindCalc, eventually, rulesFile, userMessage } from '../helpers/agents.ts';
import { demoUser } from '../helpers/identity.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/** Approval gates on the management API: list (account, thread), read, decide. */
describe('approval gates on the management API', () => {
  let p: TestPlatform;
  let agentId: string;
  const keys: Record<'owner' | 'member' | 'other' | 'service', string> = { owner: '', member: '', other: '', service: '' };
  let memberToken: string;
  const as = (who: keyof typeof keys) => ({ authorization: `Bearer ${keys[who]}` });
  const get = (path: string, who: keyof typeof keys = 'owner') => p.call('GET', path, { headers: as(who) });
  const decide = (id: string, json: unknown, who: keyof typeof keys = 'member') => p.call('POST', `/v1/approval-gates/${id}/decision`, { headers: as(who), json });

  /** A run of the member user that stops at a gate: its task and gate. */
  async function gated(text = 'add 2 and 40') {
    const res = await a2aCall(p, request('SendMessage', { message: userMessage(text) }), { headers: bearer(memberToken) });
    const task = res.json.result.task;
    const gate = task.status.message.parts[1].data['platform.gate_decision'];
    return { task, gate };
  }

  beforeAll(async () => {
    p = await startTestPlatform({ env: { PLATFORM_SCRIPTED_RULES: await rulesFile() } });
    await bindCalc(p);
    const { admin, autonomy, store, agentTokens } = p.node.services;
    const accountId = p.node.demo!.accountId;
    agentId = (await store.agents.byHandle('demo'))!.id;
    await autonomy.setPolicy(accountId, 'agent', agentId, { rules: [{ tool: 'calc_add', mode: 'ask' }] }, 'test');
    keys.owner = (await admin.createKey({ principal: (await demoUser(p)).userId })).key;
    const member = await admin.createUser({ account: accountId, email: 'member@example.test', password: 'member-password', role: 'member' });
    keys.member = (await admin.createKey({ principal: member.id })).key;
    const other = await admin.createUser({ account: accountId, email: 'other@example.test', password: 'other-password', role: 'member' });
    keys.other = (await admin.createKey({ principal: other.id })).key;
    keys.service = p.node.demo!.serviceKey;
    memberToken = (await mintAgentToken({ store, tokens: agentTokens }, { accountId, agentId, subject: member.id, actors: [] })).token;
  });
  afterAll(() => p.close());

  it('[SURF-14] lists pending gates: every gate for an owner, a thread with context_id, only their own for other users', async () => {
    const { task, gate } = await gated();
    const all = await get('/v1/approval-gates');
    expect(all.status).toBe(200);
    const row = all.json.data.gates.find((g: any) => g.id === gate.gateId);
    expect(row).toMatchObject({ state: 'pending', agent_id: agentId, task_id: task.id, context_id: task.contextId, tool: 'calc_add', arguments: { a: 2, b: 40 }, arguments_hash: gate.argumentsHash, decided_at: null, decided_by: null, workflow_run_id: null });
    const thread = await get(`/v1/approval-gates?context_id=${task.contextId}`, 'member');
    expect(thread.json.data.gates.map((g: any) => g.id)).toEqual([gate.gateId]);
    expect((await get('/v1/approval-gates', 'other')).json.data.gates).toEqual([]);
    const hidden = await get(`/v1/approval-gates/${gate.gateId}`, 'other');
    expect(hidden.status).toBe(404);
    expect(hidden.json.code).toBe('MGMT_GATE_NOT_FOUND');
    expect((await get(`/v1/approval-gates/${gate.gateId}`, 'member')).json.data.id).toBe(gate.gateId);
    expect((await get('/v1/approval-gates?workflow_run_id=no-such-run')).json.data.gates).toEqual([]);
    // A workflow run's gate, as its row is written (workflow runs name themselves in it): listed for that run only.
    await p.node.services.store.db.query(
      `insert into approval_gates (account_id, id, agent_id, task_id, context_id, owner_id, workflow_run_id, tool, tool_call_id, arguments, arguments_hash, state, opened_at, expires_at)
       select account_id, 'gate-of-run', agent_id, task_id, context_id, owner_id, 'run-7', tool, tool_call_id, arguments, arguments_hash, 'pending', opened_at, expires_at from approval_gates where id = $1`,
      [gate.gateId],
    );
    const run = await get('/v1/approval-gates?workflow_run_id=run-7');
    expect(run.json.data.gates.map((g: any) => [g.id, g.workflow_run_id])).toEqual([['gate-of-run', 'run-7']]);
    await p.node.services.store.db.query("delete from approval_gates where id = 'gate-of-run'");
  });

  it('[MGMT-ERR-03] pages the longest waiting first; a cursor it never issued is 400', async () => {
    await gated('add 1 and 2');
    await gated('add 3 and 4');
    const first = await get('/v1/approval-gates?limit=1');
    expect(first.json.data.gates).toHaveLength(1);
    expect(typeof first.json.data.next_cursor).toBe('string');
    const second = await get(`/v1/approval-gates?limit=1&cursor=${first.json.data.next_cursor}`);
    expect(second.json.data.gates[0].opened_at >= first.json.data.gates[0].opened_at).toBe(true);
    expect(second.json.data.gates[0].id).not.toBe(first.json.data.gates[0].id);
    const bad = await get('/v1/approval-gates?cursor=bm9wZQ');
    expect(bad.status).toBe(400);
    expect(bad.json.code).toBe('MGMT_INVALID_QUERY');
    // A cursor's time is the one this server wrote: Date.parse takes "foo 12", the database does not take Feb 30.
    for (const at of ['foo 12', '2024-02-30T00:00:00.000Z', '0000-01-01T00:00:00.000Z']) {
      const crafted = await get(`/v1/approval-gates?cursor=${Buffer.from(JSON.stringify([at, 'x'])).toString('base64url')}`);
      expect([crafted.status, crafted.json.code], at).toEqual([400, 'MGMT_INVALID_QUERY']);
    }
    expect((await get('/v1/approval-gates?limit=101')).status).toBe(400);
    expect((await get('/v1/approval-gates?state=open')).status).toBe(400);
  });

  it('[A2A-GATE-03] [SURF-14] decides as a user only, for the exact arguments, once; the run resumes', async () => {
    const { task, gate } = await gated();
    const service = await decide(gate.gateId, { decision: 'approve', arguments_hash: gate.argumentsHash }, 'service');
    expect(service.status).toBe(403);
    expect(service.json.code).toBe('MGMT_USER_REQUIRED');
    const otherUser = await decide(gate.gateId, { decision: 'approve', arguments_hash: gate.argumentsHash }, 'other');
    expect(otherUser.status).toBe(404);
    const altered = await decide(gate.gateId, { decision: 'approve', arguments_hash: 'sha256:00' });
    expect(altered.status).toBe(409);
    expect(altered.json.code).toBe('MGMT_GATE_DECISION_REJECTED');
    expect(altered.json.message).toContain('arguments_mismatch');
    expect((await decide(gate.gateId, { decision: 'maybe', arguments_hash: gate.argumentsHash })).status).toBe(400);
    const ok = await decide(gate.gateId, { decision: 'approve', arguments_hash: gate.argumentsHash });
    expect(ok.status).toBe(200);
    expect(ok.json.data).toMatchObject({ outcome: 'approved', gate: { id: gate.gateId, state: 'approved' } });
    const done = await eventually(async () => {
      const t = (await a2aCall(p, request('GetTask', { id: task.id }), { headers: bearer(memberToken) })).json.result;
      return t.status.state === 'TASK_STATE_COMPLETED' ? t : undefined;
    });
    expect(done.artifacts[0].parts[0].text).toBe('The sum is 42.');
    const again = await decide(gate.gateId, { decision: 'deny', arguments_hash: gate.argumentsHash });
    expect(again.status).toBe(409);
    expect(again.json.message).toContain('already_decided');
  });

  it('an owner may decide a gate of any run; without a credential nothing is listed', async () => {
    const { gate } = await gated('add 5 and 6');
    const ok = await decide(gate.gateId, { decision: 'deny', arguments_hash: gate.argumentsHash }, 'owner');
    expect(ok.json.data.outcome).toBe('denied');
    const anonymous = await p.call('GET', '/v1/approval-gates');
    expect(anonymous.status).toBe(403);
    expect(anonymous.json.code).toBe('MGMT_CREDENTIAL_MISSING');
  });
});
