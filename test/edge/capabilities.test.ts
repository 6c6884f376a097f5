import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILTINS } from '../../runtime/index.ts';
import { isUniqueViolation } from '../../store/index.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/** The platform's built-ins, listed before every account's own capabilities. */
const B = BUILTINS.length;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

describe('GET /v1/capabilities', () => {
  let p: TestPlatform;
  let key: string;
  let accountId: string;
  let ownerId: string;
  const get = (query = '', credential = key) => p.call('GET', `/v1/capabilities${query}`, { headers: { authorization: `Bearer ${credential}` } });

  async function seed(account: string, n: number, prefix: string, extra: { type?: 'plugin' | 'connector'; description?: string } = {}) {
    const { store } = p.node.services;
    for (let i = 0; i < n; i++) {
      const id = randomUUID();
      const name = `${prefix}-${String(i).padStart(3, '0')}`;
      await store.capabilities.create({ id, accountId: account, type: extra.type ?? 'plugin', name, namespace: name, description: extra.description ?? `tool set ${name}`, createdBy: ownerId });
    }
  }

  beforeAll(async () => {
    // An account of its own, holding exactly what this suite counts (the demo tenant has a plugin of its own).
    p = await startTestPlatform({ seed: false });
    const { store, admin } = p.node.services;
    accountId = (await admin.createAccount({ name: 'Catalog' })).id;
    ownerId = (await admin.createUser({ account: accountId, email: 'owner@catalog.test', password: 'correct horse battery', role: 'owner' })).id;
    key = (await admin.createKey({ principal: ownerId })).key;
    // One fully described plugin with two versions, version 2 active.
    const calcId = randomUUID();
    await store.capabilities.create({ id: calcId, accountId, type: 'plugin', name: 'calculator', namespace: 'calc', description: 'Adds numbers', logoUrl: 'https://example.com/calc.png', createdBy: ownerId });
    for (const v of [1, 2]) {
      await store.capabilities.addVersion(calcId, accountId, {
        versionNumber: v,
        createdAt: new Date(Date.UTC(2026, 10, v)).toISOString(),
        createdBy: ownerId,
        tools: [{ name: 'calc_add', description: 'Add two numbers' }],
        metadata: { author: 'Ada', license: 'MIT', tags: ['math'], homepage: 'https://example.com' },
        permissions: { network: { allow: [{ host: 'api.example.com' }] }, filesystem: { allow: [{ uri: 'fs://data/*', access: ['read'] }] }, environment: { allow: [{ key: 'TOKEN' }] } },
        resources: { limits: { memory: '64Mi', timeout: '5s' } },
      });
    }
    await store.capabilities.setActiveVersion(accountId, calcId, 2, ownerId);
    await seed(accountId, 24, 'bulk');
    await seed(accountId, 2, 'conn', { type: 'connector', description: 'Talks to 100%_real REST' });
    // Another tenant's capabilities must never show.
    const other = await p.node.services.admin.createAccount({ name: 'Other' });
    await seed(other.id, 3, 'calc-other', { description: 'Adds numbers' });
  });
  afterAll(() => p.close());

  it('[CAP-17] [CAP-21] [CAP-23] [CAP-24] [CAP-25] with no parameters: 200, the first 20, offset 0, and the total', async () => {
    const res = await get();
    expect(res.status).toBe(200);
    expect(Object.keys(res.json.data).sort()).toEqual(['capabilities', 'limit', 'offset', 'total']);
    // The platform's built-ins, then the account's 25 plugins and 2 connectors.
    expect(res.json.data).toMatchObject({ total: B + 27, limit: 20, offset: 0 });
    expect(res.json.data.capabilities.slice(0, B).every((c: { type: string }) => c.type === 'builtin')).toBe(true);
    expect(res.json.data.capabilities[B].type).toBe('plugin');
    expect(res.json.data.capabilities).toHaveLength(20);
  });

  it('[CAP-01] [CAP-02] [CAP-03] [CAP-05] [CAP-06] [CAP-07] [CAP-08] [CAP-09] [CAP-10] [CAP-11] [CAP-12] [CAP-13] a plugin carries every Capability field', async () => {
    const res = await get('?namespace=calc');
    expect(res.json.data.total).toBe(1);
    const c = res.json.data.capabilities[0];
    expect(Object.keys(c).sort()).toEqual(
      ['account_id', 'active_version', 'audit_info', 'description', 'id', 'is_active', 'logo_url', 'name', 'namespace', 'specifications', 'type'].sort(),
    );
    expect(c.id).toMatch(UUID);
    expect(c).toMatchObject({ account_id: accountId, name: 'calculator', description: 'Adds numbers', namespace: 'calc', type: 'plugin', is_active: true, active_version: 2, logo_url: 'https://example.com/calc.png' });
    expect(c.audit_info.created_at).toMatch(ISO_UTC);
    expect(c.audit_info.updated_at).toMatch(ISO_UTC);
    expect(c.audit_info.created_by).toMatch(UUID);
    expect(c.audit_info.updated_by).toMatch(UUID);
    expect(c.specifications.type).toBe('plugin');
    expect(c.specifications.active_version).toBe(2);
    expect(c.specifications.versions).toHaveLength(2);
    const v = c.specifications.versions[1];
    expect(Object.keys(v).sort()).toEqual(['created_at', 'created_by', 'metadata', 'permissions', 'resources', 'status', 'status_reason', 'tools', 'version_number']);
    expect(v).toMatchObject({
      version_number: 2,
      created_by: ownerId,
      tools: [{ name: 'calc_add', description: 'Add two numbers' }],
      metadata: { author: 'Ada', license: 'MIT', tags: ['math'], homepage: 'https://example.com' },
      permissions: {
        network: { allow: [{ host: 'api.example.com' }] },
        filesystem: { allow: [{ uri: 'fs://data/*', access: ['read'] }] },
        environment: { allow: [{ key: 'TOKEN' }] },
      },
      resources: { limits: { memory: '64Mi', timeout: '5s' } },
    });
    expect(v.created_at).toMatch(ISO_UTC);
  });

  it('[CAP-06] a plugin without an activated version shows active_version 0 and is not active', async () => {
    const c = (await get('?namespace=bulk-000')).json.data.capabilities[0];
    expect(c).toMatchObject({ active_version: 0, is_active: false, specifications: { type: 'plugin', active_version: 0, versions: [] } });
  });

  it('[CAP-18] [CAP-05] type filters by capability type', async () => {
    const plugins = (await get('?type=plugin&limit=100')).json.data;
    expect(plugins.total).toBe(25);
    expect(plugins.capabilities.every((c: { type: string }) => c.type === 'plugin')).toBe(true);
    const connectors = (await get('?type=connector')).json.data;
    expect(connectors.total).toBe(2);
    expect(connectors.capabilities.map((c: { type: string }) => c.type)).toEqual(['connector', 'connector']);
    const builtins = (await get('?type=builtin')).json.data;
    expect(builtins.total).toBe(B);
    expect(builtins.capabilities.map((c: { id: string; type: string }) => [c.id, c.type])).toEqual(BUILTINS.map((b) => [b.id, 'builtin']));
    expect((await get(`?type=builtin&offset=${B - 1}`)).json.data.capabilities.map((c: { id: string }) => c.id)).toEqual([BUILTINS.at(-1)!.id]);
  });

  it('[CAP-19] namespace filters by plugin namespace', async () => {
    expect((await get('?namespace=bulk-007')).json.data.capabilities.map((c: { namespace: string }) => c.namespace)).toEqual(['bulk-007']);
    expect((await get('?namespace=bulk')).json.data.total).toBe(0);
  });

  it('[CAP-20] search matches name or description, case-insensitively, with wildcards taken literally', async () => {
    expect((await get('?search=CALCUL')).json.data.capabilities.map((c: { name: string }) => c.name)).toEqual(['calculator']);
    expect((await get('?search=adds%20numbers')).json.data.total).toBe(1);
    expect((await get('?search=100%25_real')).json.data.total).toBe(2);
    expect((await get('?search=100_%25real')).json.data.total).toBe(0);
    expect((await get('?search=%25')).json.data.total).toBe(2);
  });

  it('[CAP-22] limit is at most 100: 100 is accepted, 101 is refused with 400', async () => {
    const at = await get('?limit=100');
    expect(at.status).toBe(200);
    expect(at.json.data).toMatchObject({ limit: 100, total: B + 27 });
    expect(at.json.data.capabilities).toHaveLength(B + 27);
    const over = await get('?limit=101');
    expect(over.status).toBe(400);
    expect(over.json).toMatchObject({ category: 'invalid_request', code: 'MGMT_INVALID_QUERY' });
    expect(over.json.message).toContain('limit');
  });

  it('[CAP-21] [CAP-23] limit and offset page through without overlap', async () => {
    const first = (await get('?limit=10')).json.data;
    const second = (await get('?limit=10&offset=10')).json.data;
    const last = (await get('?limit=10&offset=20')).json.data;
    expect(first.offset).toBe(0);
    expect(last.capabilities).toHaveLength(10);
    const rest = (await get('?limit=10&offset=30')).json.data.capabilities;
    expect(rest).toHaveLength(B + 27 - 30);
    const ids = [...first.capabilities, ...second.capabilities, ...last.capabilities, ...rest].map((c: { id: string }) => c.id);
    expect(new Set(ids).size).toBe(B + 27);
    // A page across the edge of the built-ins and the account's own: two of each.
    expect((await get(`?limit=4&offset=${B - 2}`)).json.data.capabilities.map((c: { type: string }) => c.type)).toEqual(['builtin', 'builtin', 'plugin', 'plugin']);
    expect((await get('?offset=500')).json.data).toMatchObject({ capabilities: [], total: B + 27, offset: 500 });
  });

  it('answers invalid parameter values with 400 and a message naming the parameter', async () => {
    for (const [q, name] of [
      ['?limit=0', 'limit'],
      ['?limit=-1', 'limit'],
      ['?limit=abc', 'limit'],
      ['?limit=1.5', 'limit'],
      ['?limit=10&limit=20', 'limit'],
      ['?offset=-1', 'offset'],
      ['?offset=x', 'offset'],
      ['?type=skill', 'type'],
      [`?search=${'s'.repeat(201)}`, 'search'],
    ] as const) {
      const res = await get(q);
      expect(res.status, q).toBe(400);
      expect(res.json.message, q).toContain(name);
    }
    expect((await get('?limit=1')).status).toBe(200);
    expect((await get('?offset=1000000')).status).toBe(200);
    expect((await get('?offset=1000001')).status).toBe(400);
    expect((await get(`?search=${'s'.repeat(200)}`)).status).toBe(200);
  });

  it('[CAP-24] never shows another account', async () => {
    const all = (await get('?limit=100')).json.data.capabilities;
    // The account's own, and the platform's built-ins (which belong to no account).
    expect(all.every((c: { account_id?: string; type: string }) => (c.type === 'builtin' ? c.account_id === undefined : c.account_id === accountId))).toBe(true);
    expect((await get('?search=calc-other')).json.data.total).toBe(0);
  });

  it('[CAP-04] namespace is unique per account and may repeat across accounts', async () => {
    const { store } = p.node.services;
    const err = await store.capabilities
      .create({ id: randomUUID(), accountId, type: 'plugin', name: 'dup', namespace: 'calc', createdBy: ownerId })
      .catch((e: unknown) => e);
    expect(isUniqueViolation(err)).toBe(true);
    const other = await p.node.services.admin.createAccount({ name: 'Third' });
    await expect(store.capabilities.create({ id: randomUUID(), accountId: other.id, type: 'plugin', name: 'calc', namespace: 'calc', createdBy: ownerId })).resolves.toBeUndefined();
  });

  it('[CAP-25] credential failures are 403 (the management API never answers 401)', async () => {
    const none = await p.call('GET', '/v1/capabilities');
    expect(none.status).toBe(403);
    const bad = await get('', 'ak-nope');
    expect([401, 403]).toContain(bad.status);
    expect(bad.status).toBe(403);
  });
});
