import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayAddressOf } from '../../actors/index.ts';
import { accountAddress, manualClock, type ManualClock } from '../../runtime/index.ts';
import { callerOf, createGateway, host, installPlugin, openSession, rpc } from '../helpers/mcp.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/**
 * The Gateway actor on the MCP surface: suspended and retired gateways serve nothing and say so; configuration changes
 * reach every request at once through the node's copy, without a durable turn; a rotated key keeps its tokens valid
 * until a timer drops it; a suspended account is refused by every surface.
 */
describe('gateway and account lifecycle on the surfaces', () => {
  let p: TestPlatform;
  let clock: ManualClock;
  let key: string;
  let accountId: string;

  const list = (handle: string, headers: Record<string, string>) => rpc(p, handle, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, headers);
  const token = async (handle: string, client: { client_id: string; client_secret?: string }) => {
    const basic = `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`;
    const res = await p.call('POST', '/oauth/token', { host: host(p, handle), headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials&scope=mcp' });
    expect(res.status).toBe(200);
    return res.json.access_token as string;
  };
  const kidOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString()).kid as string;

  beforeAll(async () => {
    clock = manualClock(Date.now());
    p = await startTestPlatform({ clock });
    key = p.node.demo!.userKey;
    accountId = p.node.demo!.accountId;
    await p.node.services.admin.setBudget({ account: accountId, credits: 100_000 });
  }, 60_000);
  afterAll(() => p.close());

  it('a suspended gateway serves nothing, its OAuth routes included, and says why; resumed, it serves again', async () => {
    await createGateway(p, accountId, 'pausable', 'private');
    const auth = { authorization: `Bearer ${key}` };
    const { headers } = await openSession(p, 'pausable', auth);
    expect((await list('pausable', headers)).status).toBe(200);
    const suspended = await p.node.services.admin.suspendGateway({ gateway: 'pausable' });
    expect(suspended).toMatchObject({ handle: 'pausable', status: 'suspended' });
    const refused = await list('pausable', headers);
    expect(refused.status).toBe(403);
    expect(refused.json.error.message).toMatch(/suspended by its operator/);
    const metadata = await p.call('GET', '/.well-known/oauth-authorization-server', { host: host(p, 'pausable') });
    expect(metadata.status).toBe(403);
    expect((await p.node.services.admin.resumeGateway({ gateway: 'pausable' })).status).toBe('active');
    expect((await list('pausable', headers)).status).toBe(200);
  });

  it('a retired gateway answers 410 for good and takes no more operator commands', async () => {
    const g = await createGateway(p, accountId, 'gone', 'public');
    expect((await rpc(p, 'gone', { jsonrpc: '2.0', id: 1, method: 'ping' })).status).toBe(400);
    expect(await p.node.services.admin.retireGateway({ gateway: g.id })).toMatchObject({ status: 'retired' });
    const res = await rpc(p, 'gone', { jsonrpc: '2.0', id: 1, method: 'ping' });
    expect(res.status).toBe(410);
    expect(res.json.error.message).toMatch(/retired/);
    await expect(p.node.services.admin.resumeGateway({ gateway: 'gone' })).rejects.toMatchObject({ code: 'ADMIN_CONFLICT' });
    await expect(p.node.services.admin.createGateway({ account: accountId, handle: 'gone' })).rejects.toMatchObject({ code: 'ADMIN_CONFLICT' });
    expect((await p.node.services.admin.showGateway({ handle: 'gone' })).status).toBe('retired');
  });

  it('a configuration change reaches the next request at once, and serving requests takes no turn of the actor', async () => {
    const owner = await callerOf(p, key);
    const calc = await installPlugin(p, owner, { name: 'lifecalc' });
    const g = await createGateway(p, accountId, 'shifting', 'private', 'direct');
    await p.node.services.admin.bindGateway({ gateway: 'shifting', capability: calc });
    const { headers } = await openSession(p, 'shifting', { authorization: `Bearer ${key}` });
    expect((await list('shifting', headers)).message.result.tools.map((t: { name: string }) => t.name)).toEqual(['lifecalc_add', 'lifecalc_greet', 'lifecalc_spin']);
    const address = gatewayAddressOf(accountId, g.id);
    const before = (await p.node.services.store.snapshots.load(address))!.version;
    for (let i = 0; i < 20; i++) expect((await list('shifting', headers)).status).toBe(200);
    expect((await p.node.services.store.snapshots.load(address))!.version).toBe(before);
    const changed = await p.node.services.admin.configureGateway({ gateway: 'shifting', presentation: 'unified' });
    expect(changed).toMatchObject({ presentation_mode: 'unified', config_version: 3 });
    expect((await list('shifting', headers)).message.result.tools.map((t: { name: string }) => t.name)).toEqual(['unified_tool']);
    await p.node.services.admin.unbindGateway({ gateway: g.id, capability: calc });
    await p.node.services.admin.configureGateway({ gateway: 'shifting', presentation: 'direct' });
    expect((await list('shifting', headers)).message.result.tools).toEqual([]);
    expect((await p.node.services.store.gateways.byHandle('shifting'))).toMatchObject({ presentationMode: 'direct', configVersion: 5, status: 'active' });
  });

  it('a rotated key keeps the tokens it signed valid until they expire; then a durable timer drops it', async () => {
    const g = await createGateway(p, accountId, 'rotating', 'private');
    const robot = await p.node.services.admin.createPrincipal({ account: accountId, name: 'rotor', role: 'member' });
    const client = await p.node.services.admin.createGatewayClient({ gateway: g.id, principal: robot.id });
    const old = await token('rotating', client);
    expect(kidOf(old)).toBe('k1');
    const rotated = await p.node.services.admin.rotateGatewayKey({ gateway: 'rotating' });
    const fresh = await token('rotating', client);
    expect(kidOf(fresh)).toBe(rotated.key_id);
    for (const t of [old, fresh]) expect((await openSession(p, 'rotating', { authorization: `Bearer ${t}` })).init.status).toBe(200);
    expect(await p.node.services.store.gatewayKeys.kids(g.id)).toEqual(['k1', rotated.key_id]);
    // Past the old tokens' lifetime (and the overlap), the timer drops the previous key: its tokens verify no more.
    await clock.advance(Date.parse(rotated.previous_key_valid_until) - clock.now() + 1_000);
    await p.node.services.host.timers.fireDue();
    expect(await p.node.services.store.gatewayKeys.kids(g.id)).toEqual([rotated.key_id]);
    expect((await p.node.services.store.gateways.byHandle('rotating'))!.keys).toEqual({ current: rotated.key_id, previous: null });
    const refused = await rpc(p, 'rotating', { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }, { authorization: `Bearer ${old}` });
    expect(refused.status).toBe(401);
  });

  it('a suspended account is refused by the management API and by its MCP gateways; resuming (or its until time) restores it', async () => {
    const { id } = await p.node.services.admin.createAccount({ name: 'suspendable' });
    const user = await p.node.services.admin.createPrincipal({ account: id, name: 'ops', role: 'owner' });
    const k = (await p.node.services.admin.createKey({ principal: user.id })).key;
    await p.node.services.admin.setBudget({ account: id, credits: 100 });
    await createGateway(p, id, 'suspendable', 'private');
    const caps = () => p.call('GET', '/v1/capabilities', { headers: { authorization: `Bearer ${k}` } });
    const init = () => rpc(p, 'suspendable', { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }, { authorization: `Bearer ${k}` });
    expect((await caps()).status).toBe(200);
    expect((await init()).status).toBe(200);
    const until = new Date(clock.now() + 60_000).toISOString();
    expect(await p.node.services.admin.suspendAccount({ account: id, until })).toMatchObject({ status: 'suspended', until });
    const refused = await caps();
    expect(refused.status).toBe(403);
    expect(refused.json).toMatchObject({ category: 'permission', code: 'PLT_ACCOUNT_SUSPENDED' });
    const mcp = await init();
    expect(mcp.status).toBe(403);
    expect(mcp.json.error.message).toMatch(/account is suspended/);
    // Other accounts are untouched.
    expect((await p.call('GET', '/v1/capabilities', { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    // The suspension ends by its durable timer.
    await clock.advance(61_000);
    await p.node.services.host.timers.fireDue();
    expect(((await p.node.services.actors.read(accountAddress(id)))!.value as { status: string }).status).toBe('active');
    expect((await caps()).status).toBe(200);
    expect((await init()).status).toBe(200);
    await p.node.services.admin.suspendAccount({ account: id });
    expect((await caps()).status).toBe(403);
    expect(await p.node.services.admin.resumeAccount({ account: id })).toMatchObject({ status: 'active' });
    expect((await caps()).status).toBe(200);
  });
});
