import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actorSnapshotsRepo, groupCommits, isUniqueViolation, loadMigrations, migrate, StoreConflictError, type Db, type Role, type TurnCommit } from '../../store/index.ts';
import { openPg } from '../../store/pg-driver.ts';
import { openPglite } from '../../store/pglite-driver.ts';
import { freshStore, type DriverName } from '../helpers/store.ts';
import { DATABASE_URL, mustRun } from '../helpers/env.ts';

const drivers: DriverName[] = ['pglite', ...(mustRun('postgres') ? (['pg'] as const) : [])];
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const iso = expect.stringMatching(ISO);

/** The error a promise rejects with; fails the test if it resolves. */
const rejection = (p: Promise<unknown>): Promise<unknown> => p.then(() => { throw new Error('expected a rejection'); }, (err: unknown) => err);

/** A turn commit with nothing but what a test names. */
const turnOf = (t: Partial<TurnCommit> & Pick<TurnCommit, 'address' | 'expectedVersion' | 'fence' | 'snapshot'>): TurnCommit => ({
  kind: 'account',
  accountId: 'acc',
  shard: 7,
  events: [],
  effects: { start: [], finish: [] },
  timers: { arm: [], cancel: [] },
  outbox: [],
  ...t,
});

describe.each(drivers)('store conformance on %s', (driver) => {
  let store: Awaited<ReturnType<typeof freshStore>>;
  beforeAll(async () => void (store = await freshStore(driver)));
  afterAll(async () => store.drop());

  const newAccount = async (name = 'Acme') => (await store.accounts.create({ id: randomUUID(), name })).id;
  const email = () => `${randomUUID()}@example.com`;
  const newUser = (accountId: string, address = email(), role: Role = 'owner') =>
    store.tx((t) => t.principals.create({ id: randomUUID(), accountId, kind: 'user', name: 'Ada', email: address, passwordHash: 'h1', role }));

  describe('migrations', () => {
    it('running migrate again applies nothing, also twice at once', async () => {
      expect(await migrate(store.db)).toEqual([]);
      expect(await Promise.all([migrate(store.db), migrate(store.db)])).toEqual([[], []]);
    });

    it('concurrent migrations of an empty database apply each migration exactly once', async () => {
      const names = (await loadMigrations()).map((m) => m.name);
      const schema = `t_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
      // On PostgreSQL two pools race on the same schema; PGlite is one process, so the same handle is used twice.
      const pg = () => openPg({ connectionString: DATABASE_URL!, schema });
      const dbs: Db[] = driver === 'pg' ? [await pg(), await pg()] : [await openPglite()];
      const [a, b = a] = dbs as [Db, Db?];
      try {
        const results = await Promise.all([migrate(a), migrate(b), migrate(a), migrate(b)]);
        expect(results.map((r) => r.length).sort((x, y) => x - y)).toEqual([0, 0, 0, names.length]);
        expect(results.flat()).toEqual(names);
        const { rows } = await a.query<{ n: unknown }>('select count(*)::int as n from schema_migrations');
        expect(rows[0]?.n).toBe(names.length);
      } finally {
        if (driver === 'pg') await a.exec(`drop schema ${schema} cascade`);
        for (const db of dbs) await db.close();
      }
    });
  });

  it('returns timestamps as ISO 8601 UTC strings and counts as numbers', async () => {
    const before = await store.accounts.count();
    const accountId = await newAccount();
    expect(await store.accounts.count()).toBe(before + 1);
    const account = await store.accounts.get(accountId);
    expect(account?.createdAt).toMatch(ISO);
    expect(Math.abs(Date.parse(account!.createdAt) - Date.now())).toBeLessThan(60_000);
    expect((await store.db.query('select now() as t, 2::int4 as n')).rows).toEqual([{ t: iso, n: 2 }]);
    const user = await newUser(accountId);
    const expiresAt = '2030-01-02T03:04:05.678Z';
    const key = await store.apiKeys.create({ id: randomUUID(), accountId, principalId: user.id, secretHash: 's', expiresAt });
    expect(key).toMatchObject({ expiresAt, revokedAt: null, createdAt: iso });
    const gw = await store.gateways.create({ id: randomUUID(), accountId, handle: `gw-${randomUUID()}`, authMode: 'public', presentationMode: 'direct' });
    expect(gw.createdAt).toMatch(ISO);
    const [capId, address] = [randomUUID(), `account/${accountId}/shape`];
    await store.capabilities.create({ id: capId, accountId, type: 'plugin', name: 'Shape', namespace: 'shape', createdBy: user.id });
    await store.capabilities.addVersion(capId, accountId, { versionNumber: 1, createdAt: expiresAt, createdBy: user.id, tools: [], metadata: {}, permissions: {}, resources: {} });
    const page = await store.capabilities.list({ accountId, limit: 10, offset: 0 });
    expect(page.total).toBe(1);
    expect(page.items[0]).toMatchObject({ createdAt: iso, updatedAt: iso, activeVersion: 0, versions: [{ versionNumber: 1, createdAt: expiresAt }] });
    expect((await store.snapshots.commit(turnOf({ address, accountId, expectedVersion: 0, fence: { shard: 1, rev: 1 }, snapshot: {} }))).version).toBe(1);
    expect(await store.snapshots.load(address)).toMatchObject({ version: 1, leaseRev: 1, eventSeq: 0 });
  });

  describe('accounts, principals and memberships', () => {
    it('creates an account and a user principal with its role', async () => {
      const accountId = await newAccount('Globex');
      expect(await store.accounts.get(accountId)).toEqual({ id: accountId, name: 'Globex', createdAt: iso });
      expect(await store.accounts.get(randomUUID())).toBeNull();
      const address = email();
      const user = await newUser(accountId, address, 'admin');
      expect(user).toEqual({ id: user.id, accountId, kind: 'user', name: 'Ada', email: address, status: 'active', createdAt: iso, role: 'admin' });
      expect(await store.principals.get(accountId, user.id)).toEqual(user);
      expect(await store.principals.getById(user.id)).toEqual(user);
      expect(await store.principals.list(accountId)).toEqual([user]);
    });

    it('reads principals only within their account', async () => {
      const [a, b] = [await newAccount(), await newAccount()];
      const user = await newUser(a);
      await newUser(b);
      expect(await store.principals.get(b, user.id)).toBeNull();
      expect((await store.principals.list(b)).map((p) => p.id)).not.toContain(user.id);
    });

    it('finds a user by email case-insensitively, and only users', async () => {
      const accountId = await newAccount();
      const address = `Mixed.${randomUUID()}@Example.COM`;
      const user = await newUser(accountId, address);
      expect(await store.principals.findUserByEmail(address.toUpperCase())).toEqual({ ...user, passwordHash: 'h1' });
      expect(await store.principals.findUserByEmail(address.toLowerCase())).toMatchObject({ id: user.id });
      const svcEmail = email();
      await store.tx((t) => t.principals.create({ id: randomUUID(), accountId, kind: 'service', name: 'bot', email: svcEmail, role: 'member' }));
      expect(await store.principals.findUserByEmail(svcEmail)).toBeNull();
      expect(await store.principals.findUserByEmail(email())).toBeNull();
    });

    it('rejects a duplicate email in any case, in any account, as a unique violation', async () => {
      const address = `dup.${randomUUID()}@example.com`;
      await newUser(await newAccount(), address);
      const [other, id] = [await newAccount(), randomUUID()];
      const dup = store.tx((t) => t.principals.create({ id, accountId: other, kind: 'user', name: 'Eve', email: address.toUpperCase(), role: 'owner' }));
      expect(isUniqueViolation(await rejection(dup))).toBe(true);
      expect(await store.principals.getById(id)).toBeNull();
    });

    it('rolls back a transaction that throws', async () => {
      const [accountId, id] = [await newAccount(), randomUUID()];
      await expect(
        store.tx(async (t) => {
          await t.principals.create({ id, accountId, kind: 'user', name: 'Bob', email: email(), role: 'member' });
          expect(await t.principals.get(accountId, id)).not.toBeNull();
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      expect(await store.principals.getById(id)).toBeNull();
      // The membership insert fails (bad role) after the principal insert succeeded: neither row stays.
      const id2 = randomUUID();
      await expect(store.tx((t) => t.principals.create({ id: id2, accountId, kind: 'user', name: 'Bob', email: email(), role: 'root' as Role }))).rejects.toThrow();
      expect(await store.principals.getById(id2)).toBeNull();
      expect(await store.principals.list(accountId)).toEqual([]);
    });
  });

  it('api keys: create, get, list by account, revoke once, unknown revoke and another account\'s are false', async () => {
    const [a, b] = [await newAccount(), await newAccount()];
    const [ua, ub] = [await newUser(a), await newUser(b)];
    const k1 = await store.apiKeys.create({ id: randomUUID(), accountId: a, principalId: ua.id, secretHash: 'x1', expiresAt: null });
    const k2 = await store.apiKeys.create({ id: randomUUID(), accountId: a, principalId: ua.id, secretHash: 'x2', expiresAt: '2031-05-06T07:08:09.000Z' });
    const k3 = await store.apiKeys.create({ id: randomUUID(), accountId: b, principalId: ub.id, secretHash: 'x3', expiresAt: null });
    expect(k1).toEqual({ id: k1.id, accountId: a, principalId: ua.id, name: null, secretHash: 'x1', expiresAt: null, revokedAt: null, createdAt: iso });
    expect(await store.apiKeys.get(k2.id)).toEqual(k2);
    expect(await store.apiKeys.get(randomUUID())).toBeNull();
    expect((await store.apiKeys.list(a)).map((k) => k.id).sort()).toEqual([k1.id, k2.id].sort());
    expect((await store.apiKeys.list(b)).map((k) => k.id)).toEqual([k3.id]);

    const first = '2026-03-01T10:00:00.000Z';
    // Another account cannot revoke the key by its id.
    expect(await store.apiKeys.revoke(b, k1.id, first)).toBe(false);
    expect((await store.apiKeys.get(k1.id))?.revokedAt).toBeNull();
    expect(await store.apiKeys.revoke(a, k1.id, first)).toBe(true);
    expect((await store.apiKeys.get(k1.id))?.revokedAt).toBe(first);
    expect(await store.apiKeys.revoke(a, k1.id, '2026-04-01T10:00:00.000Z')).toBe(true);
    expect((await store.apiKeys.get(k1.id))?.revokedAt).toBe(first);
    expect((await store.apiKeys.get(k2.id))?.revokedAt).toBeNull();
    expect(await store.apiKeys.revoke(a, randomUUID(), first)).toBe(false);
  });

  it('api key names: unique among an account\'s live keys, found by name only there, free again once revoked', async () => {
    const [a, b] = [await newAccount(), await newAccount()];
    const [ua, ub] = [await newUser(a), await newUser(b)];
    const named = (accountId: string, principalId: string) => store.apiKeys.create({ id: randomUUID(), accountId, principalId, name: 'ci', secretHash: 'h', expiresAt: null });
    const ka = await named(a, ua.id);
    const kb = await named(b, ub.id);
    expect(ka.name).toBe('ci');
    expect((await store.apiKeys.byName(a, 'ci'))?.id).toBe(ka.id);
    expect((await store.apiKeys.byName(b, 'ci'))?.id).toBe(kb.id);
    expect(isUniqueViolation(await named(a, ua.id).catch((e: unknown) => e))).toBe(true);
    await store.apiKeys.revoke(a, ka.id, '2026-03-01T10:00:00.000Z');
    expect(await store.apiKeys.byName(a, 'ci')).toBeNull();
    const again = await named(a, ua.id);
    expect((await store.apiKeys.byName(a, 'ci'))?.id).toBe(again.id);
  });

  describe.each(['gateways', 'agents'] as const)('%s', (repo) => {
    const create = (accountId: string, handle: string) =>
      repo === 'gateways'
        ? store.gateways.create({ id: randomUUID(), accountId, handle, authMode: 'private', presentationMode: 'unified' })
        : store.agents.create({ id: randomUUID(), accountId, handle, name: 'Helper', description: 'helps', instructions: '', model: 'scripted/demo' });

    it('handles are globally unique; byHandle is global, get and list are account-scoped', async () => {
      const [a, b] = [await newAccount(), await newAccount()];
      const tag = randomUUID().slice(0, 8);
      const x = await create(a, `x-${tag}`);
      const w = await create(a, `w-${tag}`);
      expect(x).toMatchObject({ accountId: a, handle: `x-${tag}`, createdAt: iso });
      expect(isUniqueViolation(await rejection(create(b, `x-${tag}`)))).toBe(true);
      const y = await create(b, `y-${tag}`);
      expect(await store[repo].byHandle(`x-${tag}`)).toEqual(x);
      expect(await store[repo].byHandle(`nope-${tag}`)).toBeNull();
      expect(await store[repo].get(a, x.id)).toEqual(x);
      expect(await store[repo].get(b, x.id)).toBeNull();
      expect(await store[repo].list(a)).toEqual([w, x]);
      expect(await store[repo].list(b)).toEqual([y]);
    });
  });

  describe('capabilities', () => {
    let a: string, b: string;
    const by = randomUUID();
    const ids: Record<string, string> = {};
    const v = (n: number, extra: Record<string, unknown> = {}) => ({
      versionNumber: n, createdAt: `2026-01-0${n}T00:00:00.000Z`, createdBy: by,
      tools: [{ name: `tool${n}`, description: 'does "things" \\ more' }],
      metadata: { nested: { list: [1, 'two', null, { deep: true }] }, ...extra }, permissions: { network: ['example.com'] }, resources: { memoryMb: 128 },
    });
    const names = (r: { items: { name: string }[] }) => r.items.map((i) => i.name);
    const list = (q: Partial<Parameters<typeof store.capabilities.list>[0]> = {}) =>
      store.capabilities.list({ accountId: a, limit: 50, offset: 0, ...q });

    beforeAll(async () => {
      [a, b] = [await newAccount(), await newAccount()];
      const rows = [
        [a, 'plugin', 'Gamma', 'gamma', 'the BETA tester'],
        [a, 'connector', 'Beta_sync', 'beta', 'Syncs data'],
        [a, 'plugin', 'Alpha Search', 'alpha', 'finds 100% of things'],
        [a, 'connector', 'Betaxsync', 'betax', ''], // the names sort the same under C and locale collations
        [a, 'plugin', 'Delta', 'delta', '100 percent'],
        [b, 'plugin', 'Alpha Other', 'alpha', 'another tenant, finds 100% too'],
      ] as const;
      for (const [accountId, type, name, namespace, description] of rows) {
        const id = (ids[`${accountId === a ? 'a' : 'b'}:${namespace}`] = randomUUID());
        await store.capabilities.create({ id, accountId, type, name, namespace, description, createdBy: by });
      }
      await store.capabilities.addVersion(ids['a:alpha']!, a, v(2, { flag: false }));
      await store.capabilities.addVersion(ids['a:alpha']!, a, v(1));
      await store.capabilities.addVersion(ids['b:alpha']!, b, v(1));
    });

    it('lists an account by name, with the right total, never another account', async () => {
      const all = await list();
      expect([all.total, names(all)]).toEqual([5, ['Alpha Search', 'Beta_sync', 'Betaxsync', 'Delta', 'Gamma']]);
      expect(all.items.every((i) => i.accountId === a)).toBe(true);
      const other = await list({ accountId: b });
      expect([other.total, names(other)]).toEqual([1, ['Alpha Other']]);
      expect(await list({ accountId: randomUUID() })).toEqual({ items: [], total: 0 });
    });

    it('filters by type, namespace and search (name or description, case-insensitive)', async () => {
      expect(names(await list({ type: 'plugin' }))).toEqual(['Alpha Search', 'Delta', 'Gamma']);
      expect((await list({ type: 'connector' })).total).toBe(2);
      expect(names(await list({ namespace: 'beta' }))).toEqual(['Beta_sync']);
      expect(names(await list({ namespace: 'nope' }))).toEqual([]);
      const beta = await list({ search: 'bEtA' });
      expect([beta.total, names(beta)]).toEqual([3, ['Beta_sync', 'Betaxsync', 'Gamma']]);
      expect(names(await list({ search: 'beta', type: 'plugin' }))).toEqual(['Gamma']);
      expect(names(await list({ search: 'SYNCS DATA' }))).toEqual(['Beta_sync']);
    });

    it('treats % and _ in the search text as literal characters', async () => {
      expect(names(await list({ search: 'beta_' }))).toEqual(['Beta_sync']);
      expect(names(await list({ search: '100%' }))).toEqual(['Alpha Search']);
      const pct = await list({ search: '%' });
      expect([pct.total, names(pct)]).toEqual([1, ['Alpha Search']]);
      expect((await list({ search: '_' })).total).toBe(1);
      expect((await list({ search: '\\' })).total).toBe(0);
    });

    it('paginates with limit and offset and keeps the total', async () => {
      const expected = names(await list());
      const pages = await Promise.all([0, 2, 4, 6].map((offset) => list({ limit: 2, offset })));
      expect(pages.map((p) => p.total)).toEqual([5, 5, 5, 5]);
      expect(pages.map(names)).toEqual([expected.slice(0, 2), expected.slice(2, 4), expected.slice(4), []]);
      const filtered = await list({ type: 'plugin', limit: 1, offset: 1 });
      expect([filtered.total, names(filtered)]).toEqual([3, ['Delta']]);
    });

    it('attaches versions in order with their jsonb fields intact', async () => {
      const [alpha, betax] = (await list({ namespace: 'alpha' })).items.concat((await list({ namespace: 'betax' })).items);
      expect(alpha).toEqual({
        id: ids['a:alpha'], accountId: a, type: 'plugin', name: 'Alpha Search', namespace: 'alpha', description: 'finds 100% of things',
        logoUrl: '', activeVersion: 0, createdAt: iso, createdBy: by, updatedAt: iso, updatedBy: by,
        versions: [v(1), v(2, { flag: false })].map((x) => ({ ...x, status: 'dormant', statusReason: null })),
      });
      expect(betax?.versions).toEqual([]);
      expect((await list({ accountId: b })).items[0]?.versions).toEqual([{ ...v(1), status: 'dormant', statusReason: null }]);
    });

    it('namespace is unique per account, and setActiveVersion is account-scoped', async () => {
      const dup = store.capabilities.create({ id: randomUUID(), accountId: a, type: 'connector', name: 'Again', namespace: 'alpha', createdBy: by });
      expect(isUniqueViolation(await rejection(dup))).toBe(true);
      const editor = randomUUID();
      expect(await store.capabilities.setActiveVersion(b, ids['a:alpha']!, 2, editor)).toBe(false);
      expect((await list({ namespace: 'alpha' })).items[0]).toMatchObject({ activeVersion: 0, updatedBy: by });
      expect(await store.capabilities.setActiveVersion(a, ids['a:alpha']!, 2, editor)).toBe(true);
      expect((await list({ namespace: 'alpha' })).items[0]).toMatchObject({ activeVersion: 2, updatedBy: editor });
      expect((await list({ accountId: b })).items[0]).toMatchObject({ activeVersion: 0, updatedBy: by });
    });

    it('refuses a version recorded under another account than its capability', async () => {
      const err = await rejection(
        store.capabilities.addVersion(ids['a:alpha']!, b, { versionNumber: 9, createdAt: new Date().toISOString(), createdBy: by, tools: [], metadata: {}, permissions: {}, resources: {} }),
      );
      expect((err as { code?: string }).code).toBe('23503');
    });
  });

  it('returns int8 as decimal strings on both drivers', async () => {
    const { rows } = await store.db.query<{ n: unknown; big: unknown }>('select 5::int8 as n, 9007199254740993::int8 as big');
    expect(rows[0]).toEqual({ n: '5', big: '9007199254740993' });
  });

  describe('actor snapshots and what a turn records', () => {
    const snap = (n: number) => ({ value: { status: 'active' }, context: { n, list: [1, 'two', null], s: 'quote " and \\ back' } });
    const save = (address: string, expectedVersion: number, leaseRev: number, n = expectedVersion) =>
      store.snapshots.commit(turnOf({ address, expectedVersion, fence: { shard: 7, rev: leaseRev }, snapshot: snap(n) })).then((r) => r.version);
    const remove = (address: string, expectedVersion: number, fence: { shard: number; rev: number } | null) => store.snapshots.commit(turnOf({ address, expectedVersion, fence, snapshot: null }));

    it('creates version 1 once, then fences by version', async () => {
      const address = `account/${randomUUID()}/s`;
      expect(await store.snapshots.load(address)).toBeNull();
      expect(await save(address, 0, 3)).toBe(1);
      expect(await store.snapshots.load(address)).toEqual({ address, kind: 'account', accountId: 'acc', version: 1, leaseRev: 3, eventSeq: 0, snapshot: snap(0) });
      await expect(save(address, 0, 3, 99)).rejects.toBeInstanceOf(StoreConflictError);
      expect(await save(address, 1, 3)).toBe(2);
      await expect(save(address, 1, 3, 99)).rejects.toBeInstanceOf(StoreConflictError);
      await expect(save(address, 5, 3, 99)).rejects.toMatchObject({ code: 'PLT_STORE_CONFLICT' });
      expect(await store.snapshots.load(address)).toMatchObject({ version: 2, leaseRev: 3, snapshot: snap(1) });
    });

    it('fences writes and removals by lease revision, and load is null after remove', async () => {
      const address = `account/${randomUUID()}/s`;
      await save(address, 0, 5);
      await expect(save(address, 1, 4, 99)).rejects.toBeInstanceOf(StoreConflictError);
      expect(await store.snapshots.load(address)).toMatchObject({ version: 1, leaseRev: 5 });
      expect(await save(address, 1, 5)).toBe(2);
      expect(await save(address, 2, 7)).toBe(3);
      expect(await store.snapshots.load(address)).toMatchObject({ version: 3, leaseRev: 7, snapshot: snap(2) });
      await expect(save(address, 3, 6, 99)).rejects.toBeInstanceOf(StoreConflictError);
      await expect(remove(address, 3, { shard: 7, rev: 6 })).rejects.toBeInstanceOf(StoreConflictError);
      await expect(remove(address, 2, { shard: 7, rev: 7 })).rejects.toBeInstanceOf(StoreConflictError);
      expect(await store.snapshots.load(address)).toMatchObject({ version: 3 });
      await remove(address, 3, { shard: 7, rev: 7 });
      expect(await store.snapshots.load(address)).toBeNull();
      await expect(remove(address, 3, { shard: 7, rev: 7 })).rejects.toBeInstanceOf(StoreConflictError);
      const other = `account/${randomUUID()}/s`;
      await save(other, 0, 1);
      await remove(other, 1, { shard: 7, rev: 2 });
      expect(await store.snapshots.load(other)).toBeNull();
    });

    it('a raised shard fence refuses older lease revisions, even for new rows; a single node (no fence) is not fenced', async () => {
      await store.snapshots.raiseFence(42, 10);
      await store.snapshots.raiseFence(42, 8);
      const fenced = (rev: number) => ({ shard: 42, rev });
      const a = `account/${randomUUID()}/f`;
      const write = (expectedVersion: number, fence: { shard: number; rev: number } | null, snapshot: unknown = {}) => store.snapshots.commit(turnOf({ address: a, expectedVersion, fence, snapshot }));
      await expect(write(0, fenced(9))).rejects.toBeInstanceOf(StoreConflictError);
      expect((await write(0, fenced(10))).version).toBe(1);
      await store.snapshots.raiseFence(42, 12);
      await expect(write(1, fenced(11))).rejects.toBeInstanceOf(StoreConflictError);
      await expect(remove(a, 1, fenced(11))).rejects.toBeInstanceOf(StoreConflictError);
      expect((await write(1, null, { n: 1 })).version).toBe(2);
      expect(await store.snapshots.load(a)).toMatchObject({ version: 2, leaseRev: 10 });
    });

    it('group commit: snapshot-only turns of many actors at once share statements, and each keeps its own version and fence checks', async () => {
      let statements = 0;
      const counting = { query: ((sql: string, params?: readonly unknown[]) => (statements++, store.db.query(sql, params))) as typeof store.db.query, exec: (sql: string) => store.db.exec(sql) };
      const grouped = groupCommits(actorSnapshotsRepo(counting), counting);
      await store.snapshots.raiseFence(43, 20);
      const actors = Array.from({ length: 60 }, (_, i) => `account/${randomUUID()}/g${i}`);
      for (const a of actors) await store.snapshots.commit(turnOf({ address: a, expectedVersion: 0, fence: { shard: 43, rev: 20 }, snapshot: snap(0) }));
      statements = 0;
      // Every fifth turn is stale (an old version), every seventh fenced (an older lease revision); the rest land.
      const outcome = (i: number) => (i % 5 === 0 ? 'stale' : i % 7 === 0 ? 'fenced' : 'ok');
      const results = await Promise.allSettled(
        actors.map((a, i) => grouped.commit(turnOf({ address: a, expectedVersion: outcome(i) === 'stale' ? 7 : 1, fence: { shard: 43, rev: outcome(i) === 'fenced' ? 19 : 20 }, snapshot: snap(i + 1) }))),
      );
      expect(statements).toBeGreaterThan(0);
      expect(statements).toBeLessThanOrEqual(4);
      for (const [i, r] of results.entries()) {
        if (outcome(i) === 'ok') expect(r).toEqual({ status: 'fulfilled', value: { version: 2, eventSeq: 0, outboxIds: [] } });
        else expect(r).toMatchObject({ status: 'rejected', reason: { code: 'PLT_STORE_CONFLICT' } });
        expect(await store.snapshots.load(actors[i]!)).toMatchObject(outcome(i) === 'ok' ? { version: 2, leaseRev: 20, snapshot: snap(i + 1) } : { version: 1, snapshot: snap(0) });
      }
      // A turn that records more than its snapshot takes its own statement, events numbered as ever.
      statements = 0;
      const withEvent = await grouped.commit(turnOf({ address: actors[1]!, expectedVersion: 2, fence: { shard: 43, rev: 20 }, snapshot: snap(9), events: [{ type: 'e' }] }));
      expect(withEvent).toEqual({ version: 3, eventSeq: 1, outboxIds: [] });
      expect(statements).toBe(1);
      // A failing statement fails every turn of its batch with the database's error, and the next batch goes on.
      const broken = { query: (() => Promise.reject(new Error('connection lost'))) as typeof store.db.query, exec: counting.exec };
      const lost = groupCommits(actorSnapshotsRepo(broken), broken);
      const failures = await Promise.allSettled(actors.slice(2, 5).map((a) => lost.commit(turnOf({ address: a, expectedVersion: 2, fence: null, snapshot: {} }))));
      expect(failures.map((f) => (f.status === 'rejected' ? (f.reason as Error).message : 'ok'))).toEqual(['connection lost', 'connection lost', 'connection lost']);
      expect((await grouped.commit(turnOf({ address: actors[2]!, expectedVersion: 2, fence: null, snapshot: snap(3) }))).version).toBe(3);
    });

    it('a turn records its events (numbered per actor), effects, timers and messages with the snapshot, or nothing at all', async () => {
      const address = `account/${randomUUID()}/r`;
      const at = Date.UTC(2031, 0, 1);
      const first = await store.snapshots.commit(
        turnOf({
          address,
          expectedVersion: 0,
          fence: { shard: 7, rev: 3 },
          snapshot: snap(0),
          events: [{ type: 'a.one', n: 1 }, { type: 'a.two' }],
          effects: { start: [{ effectId: 'work', name: 'activate', key: `${address}#work@1`, input: { v: 1 } }], finish: [] },
          timers: { arm: [{ key: 'expire', fireAt: at, event: { type: 'EXPIRE' } }], cancel: [] },
          outbox: [{ target: 'account/x/y', event: { type: 'PING' } }],
        }),
      );
      expect(first).toMatchObject({ version: 1, eventSeq: 2 });
      expect(first.outboxIds).toHaveLength(1);
      expect((await store.actorEvents.after(address, 0)).map((e) => [e.seq, e.event])).toEqual([[1, { type: 'a.one', n: 1 }], [2, { type: 'a.two' }]]);
      expect(await store.effects.forAddress(address)).toEqual([{ address, effectId: 'work', name: 'activate', key: `${address}#work@1`, input: { v: 1 }, attempts: 1 }]);
      expect(await store.effects.retry(address, 'work')).toBe(2);
      expect(await store.timers.listFor(address)).toEqual([{ address, key: 'expire', fireAt: at, event: { type: 'EXPIRE' } }]);
      expect((await store.outbox.pending([7])).filter((m) => m.address === address)).toEqual([{ id: first.outboxIds[0], address, target: 'account/x/y', event: { type: 'PING' } }]);
      expect((await store.outbox.pending([8])).filter((m) => m.address === address)).toEqual([]);

      // A stale turn writes none of it.
      await expect(
        store.snapshots.commit(turnOf({ address, expectedVersion: 0, fence: { shard: 7, rev: 3 }, snapshot: snap(9), events: [{ type: 'lost' }], outbox: [{ target: 't', event: { type: 'LOST' } }] })),
      ).rejects.toBeInstanceOf(StoreConflictError);
      expect(await store.actorEvents.after(address, 2)).toEqual([]);

      const second = await store.snapshots.commit(
        turnOf({ address, expectedVersion: 1, fence: { shard: 7, rev: 3 }, snapshot: snap(1), events: [{ type: 'a.three' }], effects: { start: [], finish: ['work'] }, timers: { arm: [], cancel: ['expire'] } }),
      );
      expect(second).toMatchObject({ version: 2, eventSeq: 3, outboxIds: [] });
      expect(await store.effects.forAddress(address)).toEqual([]);
      expect(await store.timers.listFor(address)).toEqual([]);
      expect((await store.actorEvents.after(address, 1)).map((e) => e.seq)).toEqual([2, 3]);
      expect(await store.effects.addresses([7])).not.toContain(address);
      await store.outbox.remove(first.outboxIds[0]!);
      expect((await store.outbox.pending(null)).filter((m) => m.address === address)).toEqual([]);

      // The last turn of a finished actor removes its snapshot, effects and timers; its events stay in the journal.
      await store.snapshots.commit(turnOf({ address, expectedVersion: 2, fence: { shard: 7, rev: 3 }, snapshot: snap(2), effects: { start: [{ effectId: 'w2', name: 'activate', key: 'k', input: null }], finish: [] }, timers: { arm: [{ key: 't', fireAt: at, event: { type: 'T' } }], cancel: [] } }));
      const done = await store.snapshots.commit(turnOf({ address, expectedVersion: 3, fence: { shard: 7, rev: 3 }, snapshot: null, events: [{ type: 'a.done' }] }));
      expect(done.eventSeq).toBe(4);
      expect(await store.snapshots.load(address)).toBeNull();
      expect(await store.effects.forAddress(address)).toEqual([]);
      expect(await store.timers.listFor(address)).toEqual([]);
      expect((await store.actorEvents.after(address, 3)).map((e) => e.event)).toEqual([{ type: 'a.done' }]);
      expect(await store.actorEvents.purgeBefore(new Date(Date.now() + 60_000))).toBeGreaterThanOrEqual(4);
    });
  });

  it('timers: arm upserts, due is ordered by fire time, claim wins once', async () => {
    const t0 = Date.UTC(2001, 0, 1); // earlier than any other timer of this store
    const [addr, other] = [`account/${randomUUID()}/t`, `account/${randomUUID()}/t`];
    const timer = (key: string, dt: number, type = key.toUpperCase()) => ({ address: addr, key, fireAt: t0 + dt, event: { type } });
    const a2 = { ...timer('a', 2000), event: { type: 'A2', n: 1, list: [1, { k: 'v' }] } };
    const o = { address: other, key: 'a', fireAt: t0 + 1500, event: { type: 'O' } };
    for (const t of [timer('a', 3000), timer('x', 1000), timer('c', 9000), a2, o]) await store.timers.arm(t);
    expect(await store.timers.listFor(addr)).toEqual([a2, timer('c', 9000), timer('x', 1000)]);
    const mine = (ts: { address: string }[]) => ts.filter((t) => t.address === addr || t.address === other);
    expect(mine(await store.timers.due(t0 + 2000))).toEqual([timer('x', 1000), o, a2]);
    expect(mine(await store.timers.due(t0 + 999))).toEqual([]);
    expect(await store.timers.due(t0 + 2000, 1)).toEqual([timer('x', 1000)]);
    expect(await store.timers.nextFireAt()).toBe(t0 + 1000);

    const claims = await Promise.all(Array.from({ length: 5 }, () => store.timers.claim({ address: addr, key: 'x', fireAt: t0 + 1000 })));
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await store.timers.nextFireAt()).toBe(t0 + 1500);

    await store.timers.arm(timer('a', 5000));
    expect(await store.timers.claim({ address: addr, key: 'a', fireAt: t0 + 2000 })).toBe(false);
    expect((await store.timers.listFor(addr)).map((t) => t.key)).toEqual(['a', 'c']);
    expect(await store.timers.claim({ address: addr, key: 'a', fireAt: t0 + 5000 })).toBe(true);
    expect(await store.timers.claim({ address: addr, key: 'missing', fireAt: t0 })).toBe(false);
    for (const t of [...(await store.timers.listFor(addr)), ...(await store.timers.listFor(other))]) await store.timers.claim(t);
    expect(await store.timers.nextFireAt()).toBeNull();
  });

  it('device sessions: create, look up by device code hash and user code, unique user code, remove', async () => {
    const session = { id: randomUUID(), deviceCodeHash: randomUUID(), userCode: `WXYZ-${randomUUID().slice(0, 8).toUpperCase()}`, clientId: 'cli', expiresAt: '2030-01-01T00:10:00.000Z' };
    await store.deviceSessions.create(session);
    const stored = { ...session, createdAt: iso };
    expect(await store.deviceSessions.byDeviceCodeHash(session.deviceCodeHash)).toEqual(stored);
    expect(await store.deviceSessions.byUserCode(session.userCode)).toEqual(stored);
    expect(await store.deviceSessions.byDeviceCodeHash(randomUUID())).toBeNull();
    expect(isUniqueViolation(await rejection(store.deviceSessions.create({ ...session, id: randomUUID(), deviceCodeHash: randomUUID() })))).toBe(true);
    expect(isUniqueViolation(await rejection(store.deviceSessions.create({ ...session, id: randomUUID(), userCode: randomUUID() })))).toBe(true);
    await store.deviceSessions.remove(session.id);
    expect(await store.deviceSessions.byDeviceCodeHash(session.deviceCodeHash)).toBeNull();
    expect(await store.deviceSessions.byUserCode(session.userCode)).toBeNull();
  });

  it('settings: getOrCreate keeps the first value, and concurrent callers agree', async () => {
    const [key, raced] = [`k-${randomUUID()}`, `k-${randomUUID()}`];
    expect(await store.settings.get(key)).toBeNull();
    expect(await store.settings.getOrCreate(key, 'first')).toBe('first');
    expect(await store.settings.getOrCreate(key, 'second')).toBe('first');
    expect(await store.settings.get(key)).toBe('first');
    const values = Array.from({ length: 8 }, (_, i) => `v${i}`);
    const got = await Promise.all(values.map((value) => store.settings.getOrCreate(raced, value)));
    expect(new Set(got).size).toBe(1);
    expect(values).toContain(got[0]);
    expect(await store.settings.get(raced)).toBe(got[0]);
  });
});
