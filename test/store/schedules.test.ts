import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mustRun } from '../helpers/env.ts';
import { freshStore, type DriverName } from '../helpers/store.ts';

const drivers: DriverName[] = ['pglite', ...(mustRun('postgres') ? (['pg'] as const) : [])];

/** Schedule rows (migration 040): scoped by account, counted per agent and account while active, paged newest first. */
describe.each(drivers)('schedules on %s', (driver) => {
  let store: Awaited<ReturnType<typeof freshStore>>;
  beforeAll(async () => void (store = await freshStore(driver)));
  afterAll(async () => store.drop());

  it('counts active schedules per agent and account, lists them by agent, owner and status, and hides other accounts', async () => {
    const accountId = (await store.accounts.create({ id: randomUUID(), name: 'Acme' })).id;
    const agent = (handle: string) => store.agents.create({ id: randomUUID(), accountId, handle, name: handle, description: '', instructions: '', model: 'scripted/demo' });
    const [a, b] = [await agent(`a-${randomUUID().slice(0, 8)}`), await agent(`b-${randomUUID().slice(0, 8)}`)];
    const row = (agentId: string, ownerId: string, createdAt: string) => ({
      accountId, id: randomUUID(), agentId, ownerId, kind: 'cron' as const, runAt: null, cron: '0 9 * * *', timezone: 'UTC', message: 'm', contextId: null, originTaskId: null, nextAt: '2026-12-01T09:00:00.000Z', createdAt,
    });
    const rows = [row(a.id, 'u1', '2026-11-28T10:00:00.000Z'), row(a.id, 'u2', '2026-11-28T10:00:01.000Z'), row(b.id, 'u1', '2026-11-28T10:00:02.000Z')];
    for (const r of rows) await store.schedules.create(r);
    expect(await store.schedules.activeCounts(accountId, a.id)).toEqual({ account: 3, agent: 2 });
    expect((await store.schedules.list(accountId, { agentId: a.id, limit: 10 })).map((r) => r.id)).toEqual([rows[1]!.id, rows[0]!.id]);
    expect((await store.schedules.list(accountId, { ownerId: 'u1', limit: 10 })).map((r) => r.id)).toEqual([rows[2]!.id, rows[0]!.id]);
    const page = await store.schedules.list(accountId, { limit: 10, before: { createdAt: rows[1]!.createdAt, id: rows[1]!.id } });
    expect(page.map((r) => r.id)).toEqual([rows[0]!.id]);
    expect(await store.schedules.get(accountId, rows[0]!.id)).toMatchObject({ status: 'active', runs: 0, kind: 'cron', nextAt: '2026-12-01T09:00:00.000Z', createdAt: '2026-11-28T10:00:00.000Z' });
    const other = (await store.accounts.create({ id: randomUUID(), name: 'Other' })).id;
    expect(await store.schedules.get(other, rows[0]!.id)).toBeNull();
    expect(await store.schedules.list(other, { limit: 10 })).toEqual([]);
    expect((await store.schedules.list(accountId, { status: 'completed', limit: 10 }))).toEqual([]);
  });
});
