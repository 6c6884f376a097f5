import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentAudience, isPlatformError, manualClock, mintAgentToken, type ManualClock } from '../../runtime/index.ts';
import { a2aCall, bearer, recordingBackend, request } from '../helpers/a2a.ts';
import { mustRun } from '../helpers/env.ts';
import { deviceToken, demoUser } from '../helpers/identity.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import type { DriverName } from '../helpers/store.ts';

const CHALLENGE = 'Bearer realm=a2a, error=invalid_token';
const drivers: DriverName[] = ['pglite', ...(mustRun('postgres') ? (['pg'] as const) : [])];

describe.each(drivers)('agent gateway authentication on %s', (driver) => {
  let p: TestPlatform;
  let clock: ManualClock;
  let accountId: string;
  let agentId: string;
  let owner: string;
  const rec = recordingBackend();

  beforeAll(async () => {
    clock = manualClock(Date.now());
    p = await startTestPlatform({ driver, clock, a2aBackend: rec.backend });
    accountId = p.node.demo!.accountId;
    agentId = (await p.node.services.store.agents.byHandle('demo'))!.id;
    owner = (await demoUser(p)).userId;
  });
  afterAll(() => p.close());

  const getTask = (headers: Record<string, string> = {}, path = '/') => a2aCall(p, request('GetTask', { id: 't1' }), { headers, path });
  const principal = async (role: 'owner' | 'admin' | 'member' | 'viewer', account = accountId) => (await p.node.services.admin.createPrincipal({ account, name: `svc-${role}`, role })).id;
  const keyOf = async (principalId: string, expiresIn?: number) => (await p.node.services.admin.createKey({ principal: principalId, ...(expiresIn ? { expiresIn } : {}) })).key;
  const mint = (subject: string, actors: string[] = [], agent = agentId, account = accountId) =>
    mintAgentToken({ store: p.node.services.store, tokens: p.node.services.agentTokens }, { accountId: account, agentId: agent, subject, actors }).then((t) => t.token);

  function expect401(res: { status: number; headers: Record<string, unknown>; json: any }, code = 'A2A_CREDENTIAL_INVALID') {
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe(CHALLENGE);
    expect(res.json).toMatchObject({ jsonrpc: '2.0', id: 1, error: { code: -32600, data: [{ reason: 'UNAUTHENTICATED', metadata: { code } }] } });
  }
  function expect403(res: { status: number; headers: Record<string, unknown>; json: any }, code: string) {
    expect(res.status).toBe(403);
    expect(res.headers['www-authenticate']).toBeUndefined();
    expect(res.json).toMatchObject({ jsonrpc: '2.0', id: 1, error: { code: -32600, data: [{ reason: 'PERMISSION_DENIED', metadata: { code } }] } });
  }

  it('[A2A-AUTH-12] [A2A-AUTH-13] [A2A-AUTH-14] a request without a credential is 401 with the spec challenge, outside JSON-RPC', async () => {
    expect401(await getTask(), 'A2A_CREDENTIAL_MISSING');
    expect401(await getTask({}, '/stream'), 'A2A_CREDENTIAL_MISSING');
    expect(rec.calls).toHaveLength(0);
  });

  it('[A2A-AUTH-01] [A2A-AUTH-13] only Authorization: Bearer is read; other schemes, other headers, cookies and query tokens authenticate nothing', async () => {
    const key = p.node.demo!.serviceKey;
    expect401(await getTask({ authorization: `ApiKey ${key}` }));
    expect401(await getTask({ authorization: `Basic ${Buffer.from(`x:${key}`).toString('base64')}` }));
    for (const headers of [{ 'x-api-key': key }, { 'api-key': key }, { cookie: `token=${key}; session=${key}` }] as Record<string, string>[]) expect401(await getTask(headers), 'A2A_CREDENTIAL_MISSING');
    for (const path of [`/?access_token=${key}`, `/?token=${key}`]) expect401(await getTask({}, path), 'A2A_CREDENTIAL_MISSING');
  });

  it('[A2A-AUTH-01] [A2A-AUTH-05] [A2A-AUTH-11] a service principal key of the account with execute authority is admitted, and the run is authorized as that principal', async () => {
    const res = await getTask(bearer(p.node.demo!.serviceKey));
    expect(res.json.result.id).toBe('t1');
    const service = (await p.node.services.store.principals.list(accountId)).find((m) => m.name === 'demo-service')!;
    expect(rec.last().ctx).toEqual({ accountId, agentId, principalId: service.id, principalKind: 'service', role: 'admin', via: 'api_key', actors: [], extensions: [] });
  });

  it("[A2A-AUTH-02] a user's API key is 403 outside JSON-RPC, even for the account's owner", async () => {
    expect403(await getTask(bearer(p.node.demo!.userKey)), 'A2A_USER_KEY');
  });

  it("[A2A-AUTH-03] a service key of another account is 401, whatever the key's role", async () => {
    const other = await p.node.services.admin.createAccount({ name: 'Other' });
    expect401(await getTask(bearer(await keyOf(await principal('owner', other.id)))));
  });

  it('[A2A-AUTH-04] [A2A-AUTH-06] a key whose principal is disabled, or no longer a member, is 401', async () => {
    const { store } = p.node.services;
    const disabled = await principal('member');
    const k1 = await keyOf(disabled);
    await store.db.query("update principals set status = 'disabled' where id = $1", [disabled]);
    expect401(await getTask(bearer(k1)));
    const leaver = await principal('member');
    const k2 = await keyOf(leaver);
    await store.db.query('delete from memberships where principal_id = $1', [leaver]);
    expect401(await getTask(bearer(k2)));
  });

  it('[A2A-AUTH-05] a service principal without execute authority (viewer) is 403', async () => {
    expect403(await getTask(bearer(await keyOf(await principal('viewer')))), 'A2A_FORBIDDEN');
    expect((await getTask(bearer(await keyOf(await principal('member'))))).json.result.id).toBe('t1');
  });

  it('[A2A-AUTH-06] a revoked key is refused at once (admission caches are dropped), an expired one after its expiry, a malformed one always', async () => {
    const { admin } = p.node.services;
    const id = await principal('member');
    const issued = await admin.createKey({ principal: id });
    expect((await getTask(bearer(issued.key))).status).toBe(200);
    await admin.revokeKey({ id: issued.id });
    expect401(await getTask(bearer(issued.key)));
    const expiring = await keyOf(id, 60);
    expect((await getTask(bearer(expiring))).status).toBe(200);
    await clock.advance(60_000);
    expect401(await getTask(bearer(expiring)));
    for (const bad of ['ak-nope', `ak-${'0'.repeat(32)}_${'A'.repeat(43)}`, 'not-a-credential']) expect401(await getTask(bearer(bad)));
  });

  it('[A2A-AUTH-01] [A2A-AUTH-07] [A2A-AUTH-10] [A2A-AUTH-11] an agent token for this agent admits its subject; a user subject is fine over a token', async () => {
    const token = await mint(owner);
    const res = await getTask(bearer(token));
    expect(res.json.result.id).toBe('t1');
    expect(rec.last().ctx).toMatchObject({ accountId, agentId, principalId: owner, principalKind: 'user', role: 'owner', via: 'agent_token', actors: [] });
  });

  it('[A2A-AUTH-07] a token whose audience does not name this agent is 401', async () => {
    const other = await p.node.services.admin.createAgent({ account: accountId, handle: 'other', name: 'Other agent' });
    expect401(await getTask(bearer(await mint(owner, [], other.id))));
    // Naming this agent among others is enough: the audience must contain it.
    const both = await p.node.services.agentTokens.sign({ accountId, agentIds: [other.id, agentId], subject: owner });
    expect((await getTask(bearer(both.token))).status).toBe(200);
  });

  it('[A2A-AUTH-08] [A2A-AUTH-09] [A2A-AUTH-10] [A2A-AUTH-11] a delegation chain of up to 5 live members is admitted with the lowest role along it; 6 hops is 401', async () => {
    const actors = [await principal('admin'), await principal('member'), await principal('owner'), await principal('admin'), await principal('member')];
    const five = await mint(owner, actors);
    expect((await getTask(bearer(five))).status).toBe(200);
    expect(rec.last().ctx).toMatchObject({ principalId: owner, role: 'member', via: 'agent_token', actors });
    const six = await p.node.services.agentTokens.sign({ accountId, agentIds: [agentId], subject: owner, actors: [...actors, await principal('admin')] });
    expect401(await getTask(bearer(six.token)));
    await expect(mint(owner, [...actors, actors[0]!])).rejects.toSatisfy((e) => isPlatformError(e, 'IDENTITY_DELEGATION_INVALID'));
  });

  it('[A2A-AUTH-08] [A2A-AUTH-10] every principal of the chain must be a live member of the agent account: 401 otherwise', async () => {
    const { store, agentTokens } = p.node.services;
    const actor = await principal('member');
    const token = await mint(owner, [actor]);
    expect((await getTask(bearer(token))).status).toBe(200);
    await store.db.query("update principals set status = 'disabled' where id = $1", [actor]);
    await clock.advance(2_000);
    expect401(await getTask(bearer(token)));
    const other = await p.node.services.admin.createAccount({ name: 'Elsewhere' });
    const stranger = await principal('owner', other.id);
    expect401(await getTask(bearer((await agentTokens.sign({ accountId, agentIds: [agentId], subject: owner, actors: [stranger] })).token)));
    expect401(await getTask(bearer((await agentTokens.sign({ accountId, agentIds: [agentId], subject: stranger })).token)));
    // A token of another account is refused even when it names this agent.
    expect401(await getTask(bearer((await agentTokens.sign({ accountId: other.id, agentIds: [agentId], subject: stranger })).token)));
    await expect(mint(owner, [stranger])).rejects.toSatisfy((e) => isPlatformError(e, 'IDENTITY_DELEGATION_INVALID'));
  });

  it('[A2A-AUTH-11] a viewer anywhere in the chain makes the call 403: no elevation through delegation', async () => {
    expect403(await getTask(bearer(await mint(owner, [await principal('viewer')]))), 'A2A_FORBIDDEN');
    expect403(await getTask(bearer(await mint(await principal('viewer'), [await principal('owner')]))), 'A2A_FORBIDDEN');
  });

  it('[A2A-AUTH-07] an expired, forged or foreign token is 401; agent tokens and management tokens are not interchangeable', async () => {
    const token = await mint(owner);
    const [h, b] = token.split('.');
    expect401(await getTask(bearer(`${h}.${b}.${'A'.repeat(43)}`)));
    expect401(await getTask(bearer('eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.')));
    const device = await deviceToken(p, { userId: owner, accountId });
    expect401(await getTask(bearer(device)));
    const mgmt = await p.call('GET', '/v1/capabilities', { headers: bearer(token) });
    expect(mgmt.status).toBe(403);
    expect(p.node.services.agentTokens.issuer).toBe(p.node.services.signer.issuer);
    expect(agentAudience(agentId)).toBe(`urn:platform:agent:${agentId}`);
    await clock.advance(3600_000);
    expect401(await getTask(bearer(token)));
  });
});
