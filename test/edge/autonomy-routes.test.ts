import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { argumentsHash, POLICY_LIMITS, type ToolEntry } from '../../runtime/index.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const tool = (name: string) => ({ name }) as ToolEntry;

/** The management API's autonomy routes: policies of the account, an agent and a user; the decision history. */
describe('autonomy on the management API', () => {
  let p: TestPlatform;
  let accountId: string;
  let agentId: string;
  let otherAgentId: string;
  let memberId: string;
  const keys: Record<'owner' | 'admin' | 'member' | 'viewer' | 'stranger', string> = { owner: '', admin: '', member: '', viewer: '', stranger: '' };
  const as = (who: keyof typeof keys) => ({ authorization: `Bearer ${keys[who]}` });
  const get = (path: string, who: keyof typeof keys = 'owner') => p.call('GET', path, { headers: as(who) });
  const put = (path: string, json: unknown, who: keyof typeof keys = 'owner') => p.call('PUT', path, { headers: as(who), json });

  beforeAll(async () => {
    p = await startTestPlatform({ seed: false });
    const { admin } = p.node.services;
    accountId = (await admin.createAccount({ name: 'Autonomy' })).id;
    for (const role of ['owner', 'admin', 'member', 'viewer'] as const) {
      const principal = await admin.createPrincipal({ account: accountId, name: `${role}-p`, role });
      if (role === 'member') memberId = principal.id;
      keys[role] = (await admin.createKey({ principal: principal.id })).key;
    }
    agentId = (await admin.createAgent({ account: accountId, handle: 'auto-agent', name: 'Auto' })).id;
    const other = await admin.createAccount({ name: 'Elsewhere' });
    otherAgentId = (await admin.createAgent({ account: other.id, handle: 'else-agent', name: 'Else' })).id;
    keys.stranger = (await admin.createKey({ principal: (await admin.createPrincipal({ account: other.id, name: 'stranger', role: 'owner' })).id })).key;
  });
  afterAll(() => p.close());

  it('[SURF-15] a policy never set reads as empty, version 0; an owner sets it, a viewer reads it', async () => {
    const empty = await get('/v1/autonomy/policy', 'viewer');
    expect(empty.status).toBe(200);
    expect(empty.json).toEqual({ data: { scope: 'account', subject_id: null, rules: [], version: 0, updated_at: null, updated_by: null } });
    const rules = [
      { tool: '*', mode: 'allow' },
      { tool: 'calc_add', mode: 'may_deny_on_args', reason: 'big sums are checked', conditions: [{ path: 'a', op: 'max', value: 100, otherwise: 'ask' }] },
    ];
    const set = await put('/v1/autonomy/policy', { rules });
    expect(set.status).toBe(200);
    expect(set.json.data).toMatchObject({ scope: 'account', subject_id: null, rules, version: 1 });
    expect(set.json.data.updated_at).toMatch(ISO_UTC);
    expect((await get('/v1/autonomy/policy', 'viewer')).json.data).toEqual(set.json.data);
    expect((await put('/v1/autonomy/policy', { rules }, 'admin')).json.data.version).toBe(2);
    // Another account's policy is its own.
    expect((await get('/v1/autonomy/policy', 'stranger')).json.data.version).toBe(0);
  });

  it('[SURF-15] setting needs write authority (admin, owner); reading needs a credential', async () => {
    for (const who of ['member', 'viewer'] as const) {
      const res = await put('/v1/autonomy/policy', { rules: [] }, who);
      expect([res.status, res.json.category, res.json.code], who).toEqual([403, 'permission', 'MGMT_FORBIDDEN']);
    }
    const anonymous = await p.call('GET', '/v1/autonomy/policy');
    expect([anonymous.status, anonymous.json.code]).toEqual([403, 'MGMT_CREDENTIAL_MISSING']);
    const anonymousPut = await p.call('PUT', `/v1/agents/${agentId}/autonomy`, { json: { rules: [] } });
    expect([anonymousPut.status, anonymousPut.json.code]).toEqual([403, 'MGMT_CREDENTIAL_MISSING']);
  });

  it('[SURF-15] per agent and per user: set and read; unknown, malformed and other accounts\' ids answer 404', async () => {
    const agentRules = [{ tool: 'calc_greet', mode: 'ask' }];
    const a = await put(`/v1/agents/${agentId}/autonomy`, { rules: agentRules });
    expect(a.status).toBe(200);
    expect(a.json.data).toMatchObject({ scope: 'agent', subject_id: agentId, rules: agentRules, version: 1 });
    expect((await get(`/v1/agents/${agentId}/autonomy`, 'viewer')).json.data.rules).toEqual(agentRules);
    const u = await put(`/v1/autonomy/users/${memberId}`, { rules: [{ tool: 'calc_add', mode: 'deny' }] });
    expect(u.json.data).toMatchObject({ scope: 'user', subject_id: memberId, version: 1 });
    for (const [path, code] of [
      [`/v1/agents/${randomUUID()}/autonomy`, 'AUTONOMY_UNKNOWN_AGENT'],
      [`/v1/agents/${otherAgentId}/autonomy`, 'AUTONOMY_UNKNOWN_AGENT'],
      ['/v1/agents/not-a-uuid/autonomy', 'AUTONOMY_UNKNOWN_AGENT'],
      [`/v1/autonomy/users/${randomUUID()}`, 'AUTONOMY_UNKNOWN_PRINCIPAL'],
      ['/v1/autonomy/users/nobody', 'AUTONOMY_UNKNOWN_PRINCIPAL'],
    ]) {
      for (const res of [await get(path!), await put(path!, { rules: [] })]) expect([res.status, res.json.category, res.json.code], path).toEqual([404, 'not_found', code]);
    }
    // A stranger's credential cannot reach this account's agent.
    expect((await get(`/v1/agents/${agentId}/autonomy`, 'stranger')).status).toBe(404);
  });

  it('[SURF-15] the document is validated in the surface\'s format; rules and size limits hold at both edges', async () => {
    const many = (n: number) => ({ rules: Array.from({ length: n }, (_, i) => ({ tool: `t_${i}`, mode: 'deny' })) });
    expect((await put('/v1/autonomy/policy', many(POLICY_LIMITS.rules))).status).toBe(200);
    const tooMany = await put('/v1/autonomy/policy', many(POLICY_LIMITS.rules + 1));
    expect([tooMany.status, tooMany.json.category, tooMany.json.code, tooMany.json.message]).toEqual([400, 'invalid_request', 'MGMT_INVALID_BODY', 'malformed request body: rules must NOT have more than 100 items']);
    // Size: the document as JSON, exactly at the limit and one byte past it.
    const sized = (bytes: number) => {
      const rules: { tool: string; mode: string; reason: string }[] = [];
      let left = bytes - JSON.stringify({ rules: [] }).length;
      for (let i = 0; left > 0; i++) {
        const shell = JSON.stringify({ tool: `s${i}`, mode: 'deny', reason: '' }).length + (i > 0 ? 1 : 0);
        const take = Math.min(POLICY_LIMITS.reason, left - shell);
        rules.push({ tool: `s${i}`, mode: 'deny', reason: 'r'.repeat(take) });
        left -= shell + take;
      }
      expect(JSON.stringify({ rules }).length).toBe(bytes);
      return { rules };
    };
    expect((await put('/v1/autonomy/policy', sized(POLICY_LIMITS.documentBytes))).status).toBe(200);
    const large = await put('/v1/autonomy/policy', sized(POLICY_LIMITS.documentBytes + 1));
    expect([large.status, large.json.category, large.json.code]).toEqual([413, 'payload_too_large', 'AUTONOMY_POLICY_TOO_LARGE']);
    expect(large.json.message).toBe(`the autonomy policy is ${POLICY_LIMITS.documentBytes + 1} bytes as JSON; the limit is ${POLICY_LIMITS.documentBytes}`);
    for (const [body, code, message] of [
      [{}, 'MGMT_INVALID_BODY', 'malformed request body: rules is required'],
      [{ rules: [{ tool: 'a b', mode: 'allow' }] }, 'MGMT_INVALID_BODY', 'malformed request body: rules.0.tool must be * or a tool name of 1 to 128 letters, digits, _ . : -'],
      [{ rules: [{ tool: 'a', mode: 'sometimes' }] }, 'MGMT_INVALID_BODY', 'malformed request body: rules.0.mode must be one of allow, deny, ask, may_deny_on_args'],
      [{ rules: [{ tool: 'a', mode: 'may_deny_on_args', conditions: [{ path: 'x', op: 'max', value: 'ten', otherwise: 'deny' }] }] }, 'AUTONOMY_POLICY_INVALID', 'invalid autonomy policy: rules.0.conditions.0.value must be a finite number for max'],
      [{ rules: [{ tool: 'a', mode: 'may_deny_on_args' }] }, 'AUTONOMY_POLICY_INVALID', 'invalid autonomy policy: rules.0.conditions must be an array of 1 to 16 conditions for may_deny_on_args'],
      [{ rules: [{ tool: 'a', mode: 'deny' }, { tool: 'a', mode: 'allow' }] }, 'AUTONOMY_POLICY_INVALID', 'invalid autonomy policy: rules.1.tool names a a second time: one rule per tool'],
    ] as const) {
      const res = await put('/v1/autonomy/policy', body);
      expect([res.status, res.json.category, res.json.code, res.json.message], JSON.stringify(body)).toEqual([400, 'invalid_request', code, message]);
    }
    // A refused document changes nothing.
    expect((await get('/v1/autonomy/policy')).json.data.rules).toHaveLength(sized(POLICY_LIMITS.documentBytes).rules.length);
    await put('/v1/autonomy/policy', { rules: [] });
  });

  it('[SURF-15] [MGMT-ERR-03] the decision history: newest first, filtered, paged by cursor; read authority; scoped to the account', async () => {
    const { autonomy } = p.node.services;
    const onAgent = { kind: 'agent' as const, id: agentId, accountId };
    const onGateway = { kind: 'gateway' as const, id: randomUUID(), accountId };
    const member = { accountId, principalId: memberId, kind: 'service' as const, role: 'member' as const, via: 'api_key' as const };
    await put('/v1/autonomy/policy', { rules: [{ tool: 'calc_greet', mode: 'ask' }] });
    const since = new Date().toISOString();
    await autonomy.policy.evaluate(member, tool('calc_add'), { b: 2, a: 1 }, onGateway);
    await autonomy.policy.evaluate(member, tool('calc_greet'), { name: 'x' }, onAgent);
    await autonomy.policy.evaluate(member, tool('calc_greet'), { name: 'y' }, onGateway);
    autonomy.record({ accountId, principalId: memberId, tool: 'calc_greet', args: { name: 'x' }, outcome: 'allow', reason: 'approved by a human', decidedBy: 'human', target: onAgent, gateId: 'gate-7' });
    const all = await get(`/v1/autonomy/decisions?since=${since}`, 'viewer');
    expect(all.status).toBe(200);
    expect(all.json.data.next_cursor).toBeNull();
    expect(all.json.data.decisions.map((d: any) => [d.tool, d.outcome, d.decided_by, d.surface, d.reason])).toEqual([
      ['calc_greet', 'allow', 'human', 'agent', 'approved by a human'],
      ['calc_greet', 'deny', 'policy', 'mcp', 'non_interactive_surface'],
      ['calc_greet', 'ask', 'policy', 'agent', 'agent policy, rule calc_greet: ask'],
      ['calc_add', 'deny', 'policy', 'mcp', 'user policy, rule calc_add: deny'],
    ]);
    const first = all.json.data.decisions[3];
    expect(Object.keys(first).sort()).toEqual(['arguments_hash', 'created_at', 'decided_by', 'gate_id', 'id', 'outcome', 'principal_id', 'reason', 'surface', 'target', 'tool']);
    expect(first).toMatchObject({ principal_id: memberId, arguments_hash: argumentsHash({ a: 1, b: 2 }), target: { kind: 'gateway', id: onGateway.id }, gate_id: null });
    expect(first.arguments_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(all.json.data.decisions[0].gate_id).toBe('gate-7');
    // Paging: two, then the other two, then nothing more.
    const one = await get(`/v1/autonomy/decisions?since=${since}&limit=2`);
    expect(one.json.data.decisions.map((d: any) => d.id)).toEqual(all.json.data.decisions.slice(0, 2).map((d: any) => d.id));
    const two = await get(`/v1/autonomy/decisions?since=${since}&limit=2&cursor=${one.json.data.next_cursor}`);
    expect(two.json.data.decisions.map((d: any) => d.id)).toEqual(all.json.data.decisions.slice(2).map((d: any) => d.id));
    expect(two.json.data.next_cursor).toBeNull();
    // Filters.
    const ids = async (query: string) => (await get(`/v1/autonomy/decisions?since=${since}&${query}`)).json.data.decisions.map((d: any) => `${d.tool}/${d.outcome}/${d.surface}`);
    expect(await ids(`agent_id=${agentId}`)).toEqual(['calc_greet/allow/agent', 'calc_greet/ask/agent']);
    expect(await ids(`gateway_id=${onGateway.id}&tool=calc_add`)).toEqual(['calc_add/deny/mcp']);
    expect(await ids('outcome=ask')).toEqual(['calc_greet/ask/agent']);
    expect(await ids(`principal_id=${randomUUID()}`)).toEqual([]);
    expect(await ids(`principal_id=${memberId}&outcome=deny`)).toEqual(['calc_greet/deny/mcp', 'calc_add/deny/mcp']);
    expect((await get(`/v1/autonomy/decisions?since=${new Date(Date.now() + 60_000).toISOString()}`)).json.data.decisions).toEqual([]);
    // The first year the store takes, and a leap day.
    expect((await get('/v1/autonomy/decisions?since=0001-01-01T00:00:00Z')).status).toBe(200);
    expect((await get('/v1/autonomy/decisions?since=2024-02-29T00:00:00Z')).status).toBe(200);
    expect((await get('/v1/autonomy/decisions', 'stranger')).json.data.decisions).toEqual([]);
    for (const [query, message] of [
      ['limit=101', 'invalid query parameter: limit must be <= 100'],
      ['limit=0', 'invalid query parameter: limit must be >= 1'],
      ['outcome=maybe', 'invalid query parameter: outcome must be one of allow, deny, ask'],
      ['since=yesterday', 'invalid query parameter: since must match format "date-time"'],
      // The layout of a date-time, but a time the database refuses: not an internal error.
      ['since=0000-01-01T00:00:00Z', 'invalid query parameter: since must match format "date-time"'],
      ['since=2023-02-29T00:00:00Z', 'invalid query parameter: since must match format "date-time"'],
      [`cursor=${Buffer.from('d0').toString('base64url')}`, 'invalid query parameter: cursor must be a cursor this API issued'],
      ['cursor=a.b', 'invalid query parameter: cursor must be a cursor this API issued'],
      [`agent_id=${agentId}&gateway_id=${onGateway.id}`, 'invalid query parameter: agent_id and gateway_id cannot be given together'],
    ]) {
      const res = await get(`/v1/autonomy/decisions?${query}`);
      expect([res.status, res.json.code, res.json.message], query).toEqual([400, 'MGMT_INVALID_QUERY', message]);
    }
    expect((await get('/v1/autonomy/decisions')).json.data.decisions.length).toBeGreaterThanOrEqual(4);
  });
});
