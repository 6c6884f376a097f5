import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configsOfRead, pushConfigsRead, type PushConfigWrite, type PushTaskRef, type Store } from '../../store/index.ts';
import { mustRun } from '../helpers/env.ts';
import { freshStore, type DriverName } from '../helpers/store.ts';

const drivers: DriverName[] = ['pglite', ...(mustRun('postgres') ? (['pg'] as const) : [])];

/** The push_configs table behind A2A push notification configs: scoped by account, agent and task; the cap holds under races. */
describe.each(drivers)('push config store on %s', (driver) => {
  let store: Store & { drop(): Promise<void> };
  const account = randomUUID();
  const otherAccount = randomUUID();
  const agent = randomUUID();
  const otherAgent = randomUUID();

  beforeAll(async () => {
    store = await freshStore(driver);
    for (const a of [account, otherAccount]) await store.accounts.create({ id: a, name: 'push' });
    // Agents with plain SQL, so the agents table's other columns keep their defaults whatever they are.
    for (const [id, acc, handle] of [[agent, account, 'a'], [otherAgent, otherAccount, 'b']] as const) {
      await store.db.query('insert into agents (id, account_id, handle, name) values ($1, $2, $3, $4)', [id, acc, `push-${handle}-${id.slice(0, 8)}`, handle]);
    }
  });
  afterAll(() => store?.drop());

  const task = (taskId = randomUUID(), accountId = account, agentId = agent): PushTaskRef => ({ accountId, agentId, taskId });
  const config = (t: PushTaskRef, id: string, extra: Partial<PushConfigWrite> = {}): PushConfigWrite => ({
    ...t,
    id,
    url: `https://example.com/${id}`,
    token: null,
    authScheme: null,
    authCredentials: null,
    ...extra,
  });

  it('stores a config with its token and credentials as given, and reads it back only in its own account, agent and task', async () => {
    const t = task();
    expect(await store.pushConfigs.put(config(t, 'c1', { token: 'tok', authScheme: 'basic', authCredentials: 'dXNlcjpwdw==' }), 10)).toBe('created');
    expect(await store.pushConfigs.get(t, 'c1')).toEqual({ ...t, id: 'c1', url: 'https://example.com/c1', token: 'tok', authScheme: 'basic', authCredentials: 'dXNlcjpwdw==', createdAt: expect.stringMatching(/Z$/) });
    expect(await store.pushConfigs.get({ ...t, taskId: 'other' }, 'c1')).toBeNull();
    expect(await store.pushConfigs.get({ ...t, accountId: otherAccount, agentId: otherAgent }, 'c1')).toBeNull();
    expect(await store.pushConfigs.get({ ...t, agentId: otherAgent }, 'c1')).toBeNull();
    expect(await store.pushConfigs.delete({ ...t, accountId: otherAccount }, 'c1')).toBe(false);
    expect(await store.pushConfigs.get(t, 'c1')).not.toBeNull();
  });

  it('a turn reads a task\'s configs in its own statement: the same records, in the same order, as forTask', async () => {
    const t = task();
    await store.pushConfigs.put(config(t, 'b', { token: 'tok', authScheme: 'bearer', authCredentials: 'cred' }), 10);
    await store.pushConfigs.put(config(t, 'a'), 10);
    const turn = (address: string, read?: ReturnType<typeof pushConfigsRead>) =>
      store.snapshots.commit({ address, kind: 'agent-task', accountId: account, shard: 1, expectedVersion: 0, fence: null, snapshot: {}, events: [], effects: { start: [], finish: [] }, timers: { arm: [], cancel: [] }, outbox: [], ...(read ? { read } : {}) });
    const withRead = await turn(`agent-task/${randomUUID()}`, pushConfigsRead(t));
    expect(configsOfRead(withRead.read)).toEqual(await store.pushConfigs.forTask(t));
    expect(configsOfRead(withRead.read).map((c) => c.id)).toEqual(['b', 'a']);
    expect(configsOfRead((await turn(`agent-task/${randomUUID()}`, pushConfigsRead(task()))).read)).toEqual([]);
    expect((await turn(`agent-task/${randomUUID()}`)).read).toBeUndefined();
  });

  it('a put with an existing id replaces url, token and authentication and keeps the creation time', async () => {
    const t = task();
    await store.pushConfigs.put(config(t, 'c1', { token: 'old', authScheme: 'bearer', authCredentials: 'x' }), 10);
    const before = (await store.pushConfigs.get(t, 'c1'))!;
    expect(await store.pushConfigs.put(config(t, 'c1', { url: 'https://example.org/new' }), 10)).toBe('replaced');
    expect(await store.pushConfigs.get(t, 'c1')).toEqual({ ...before, url: 'https://example.org/new', token: null, authScheme: null, authCredentials: null });
  });

  it('the cap refuses a new id at the limit, but not a replacement', async () => {
    const t = task();
    for (let i = 0; i < 3; i++) expect(await store.pushConfigs.put(config(t, `c${i}`), 3)).toBe('created');
    expect(await store.pushConfigs.put(config(t, 'c3'), 3)).toBe('limit');
    expect(await store.pushConfigs.put(config(t, 'c0', { url: 'https://example.com/again' }), 3)).toBe('replaced');
    expect(await store.pushConfigs.delete(t, 'c1')).toBe(true);
    expect(await store.pushConfigs.put(config(t, 'c3'), 3)).toBe('created');
    // Another task of the same agent has its own count.
    expect(await store.pushConfigs.put(config(task(), 'c0'), 3)).toBe('created');
  });

  it('concurrent creations on one task cannot pass the cap together', async () => {
    const t = task();
    const outcomes = await Promise.all(Array.from({ length: 16 }, (_, i) => store.pushConfigs.put(config(t, `r${i}`), 10)));
    expect(outcomes.filter((o) => o === 'created')).toHaveLength(10);
    expect(outcomes.filter((o) => o === 'limit')).toHaveLength(6);
    expect(await store.pushConfigs.forTask(t)).toHaveLength(10);
  });

  it('pages in creation order with a cursor, and the cursor survives a deletion between pages', async () => {
    const t = task();
    const ids = ['z', 'b', 'm', 'a', 'q'];
    for (const id of ids) await store.pushConfigs.put(config(t, id), 10);
    const first = await store.pushConfigs.page(t, null, 2);
    expect(first.configs.map((c) => c.id)).toEqual(['z', 'b']);
    await store.pushConfigs.delete(t, 'b');
    const second = await store.pushConfigs.page(t, first.next, 2);
    expect(second.configs.map((c) => c.id)).toEqual(['m', 'a']);
    const last = await store.pushConfigs.page(t, second.next, 2);
    expect(last).toEqual({ configs: [expect.objectContaining({ id: 'q' })], next: null });
    expect((await store.pushConfigs.page(t, null, 4)).next).toBeNull();
    expect((await store.pushConfigs.forTask(t)).map((c) => c.id)).toEqual(['z', 'm', 'a', 'q']);
  });

  it('configs go with their agent and their account', async () => {
    const t = task(undefined, otherAccount, otherAgent);
    await store.pushConfigs.put(config(t, 'gone'), 10);
    await store.db.query('delete from agents where id = $1', [otherAgent]);
    expect(await store.pushConfigs.forTask(t)).toEqual([]);
  });
});
