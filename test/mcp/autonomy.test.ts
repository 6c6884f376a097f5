import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { argumentsHash, type Caller } from '../../runtime/index.ts';
import { callerOf, createGateway, installPlugin, openSession, rpc } from '../helpers/mcp.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/** Autonomy policies on the MCP surface: the annotation of each tool per caller, and calls decided and recorded. */
describe('MCP tools under autonomy policies', () => {
  let p: TestPlatform;
  let owner: Caller;
  let gatewayId: string;
  let memberKey: string;
  let memberId: string;
  let viewerKey: string;
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
  const list = async (handle: string, key: string) => {
    const s = await openSession(p, handle, bearer(key));
    return (await rpc(p, handle, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, s.headers)).message.result.tools as { name: string; _meta?: Record<string, { outcome: string }> }[];
  };
  const outcomes = async (key: string) => Object.fromEntries((await list('ruled', key)).map((t) => [t.name, t._meta!['dev.platform/autonomy']!.outcome]));
  const call = async (key: string, name: string, args: unknown) => {
    const s = await openSession(p, 'ruled', bearer(key));
    return (await rpc(p, 'ruled', { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name, arguments: args } }, s.headers)).message.result;
  };

  beforeAll(async () => {
    p = await startTestPlatform();
    const { admin } = p.node.services;
    owner = await callerOf(p, p.node.demo!.userKey);
    const calc = await installPlugin(p, owner, { name: 'calc' });
    gatewayId = (await createGateway(p, owner.accountId, 'ruled', 'private', 'direct')).id;
    await admin.bindGateway({ gateway: gatewayId, capability: calc });
    const disc = await createGateway(p, owner.accountId, 'ruled-disc', 'private', 'discovery');
    await admin.bindGateway({ gateway: disc.id, capability: calc });
    const member = await admin.createPrincipal({ account: owner.accountId, name: 'member-m', role: 'member' });
    memberId = member.id;
    memberKey = (await admin.createKey({ principal: member.id })).key;
    viewerKey = (await admin.createKey({ principal: (await admin.createPrincipal({ account: owner.accountId, name: 'viewer-v', role: 'viewer' })).id })).key;
    const put = (path: string, rules: unknown) => p.call('PUT', path, { headers: bearer(p.node.demo!.userKey), json: { rules } });
    expect((await put('/v1/autonomy/policy', [
      { tool: 'calc_add', mode: 'may_deny_on_args', conditions: [{ path: 'a', op: 'max', value: 100, otherwise: 'ask' }] },
      { tool: 'calc_greet', mode: 'ask' },
    ])).status).toBe(200);
    expect((await put(`/v1/autonomy/users/${member.id}`, [{ tool: 'calc_add', mode: 'deny', reason: 'members do not add' }])).status).toBe(200);
  }, 120_000);
  afterAll(() => p.close());

  it('[MCP-TOOLS-01] [MCP-TOOLS-07] tools/list shows each caller the outcome of its own policies: ask shows as deny', async () => {
    expect(await outcomes(p.node.demo!.userKey)).toEqual({ calc_add: 'may_deny_on_args', calc_greet: 'deny', calc_spin: 'allow' });
    expect(await outcomes(memberKey)).toEqual({ calc_add: 'deny', calc_greet: 'deny', calc_spin: 'allow' });
    expect(await outcomes(viewerKey)).toEqual({ calc_add: 'deny', calc_greet: 'deny', calc_spin: 'deny' });
    for (const o of Object.values(await outcomes(memberKey))) expect(['allow', 'deny', 'may_deny_on_args', 'ungated']).toContain(o);
  });

  it('[MCP-TOOLS-30] meta-tools carry no autonomy annotation', async () => {
    const tools = await list('ruled-disc', p.node.demo!.userKey);
    expect(tools.map((t) => t.name)).toEqual(['discover_tools', 'get_tool_schema', 'execute_tool']);
    for (const t of tools) expect(t._meta).toBeUndefined();
  });

  it('[MCP-TOOLS-35] a call that would need approval is auto-denied with non_interactive_surface, and every decision is recorded', async () => {
    const since = new Date().toISOString();
    const ok = await call(p.node.demo!.userKey, 'calc_add', { b: 2, a: 1 });
    expect(ok).toMatchObject({ isError: false, content: [{ type: 'text', text: '3' }] });
    const big = await call(p.node.demo!.userKey, 'calc_add', { a: 500, b: 2 });
    expect(big).toMatchObject({ isError: true, structuredContent: { denied: true, reason: 'non_interactive_surface' } });
    const greet = await call(p.node.demo!.userKey, 'calc_greet', { name: 'x' });
    expect(greet).toMatchObject({ isError: true, structuredContent: { denied: true, reason: 'non_interactive_surface' } });
    const member = await call(memberKey, 'calc_add', { a: 1, b: 1 });
    expect(member).toMatchObject({ isError: true, structuredContent: { denied: true, reason: 'user policy, rule calc_add: members do not add' } });
    const history = await p.call('GET', `/v1/autonomy/decisions?gateway_id=${gatewayId}&since=${since}`, { headers: bearer(p.node.demo!.userKey) });
    expect(history.status).toBe(200);
    expect(history.json.data.decisions.map((d: any) => [d.principal_id, d.tool, d.outcome, d.reason, d.arguments_hash, d.surface, d.target.id])).toEqual([
      [memberId, 'calc_add', 'deny', 'user policy, rule calc_add: members do not add', argumentsHash({ a: 1, b: 1 }), 'mcp', gatewayId],
      [owner.principalId, 'calc_greet', 'deny', 'non_interactive_surface', argumentsHash({ name: 'x' }), 'mcp', gatewayId],
      [owner.principalId, 'calc_add', 'deny', 'non_interactive_surface', argumentsHash({ a: 500, b: 2 }), 'mcp', gatewayId],
      [owner.principalId, 'calc_add', 'allow', 'account policy, rule calc_add: arguments within the conditions', argumentsHash({ a: 1, b: 2 }), 'mcp', gatewayId],
    ]);
  });

  it('[MCP-TOOLS-35] a call through execute_tool is decided by the same policy', async () => {
    const s = await openSession(p, 'ruled-disc', bearer(p.node.demo!.userKey));
    const r = (await rpc(p, 'ruled-disc', { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'execute_tool', arguments: { name: 'calc_greet', arguments: { name: 'y' } } } }, s.headers)).message.result;
    expect(r).toMatchObject({ isError: true, structuredContent: { denied: true, reason: 'non_interactive_surface' } });
  });
});
