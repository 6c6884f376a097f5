import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderDay } from '../../runtime/index.ts';
import { mustRun } from '../helpers/env.ts';
import { freshStore, type DriverName } from '../helpers/store.ts';

const drivers: DriverName[] = ['pglite', ...(mustRun('postgres') ? (['pg'] as const) : [])];

/** Journal rows (migration 039): scoped to account, agent and user; searched; day files sized by the store as rendered. */
describe.each(drivers)('agent journals on %s', (driver) => {
  let store: Awaited<ReturnType<typeof freshStore>>;
  beforeAll(async () => void (store = await freshStore(driver)));
  afterAll(async () => store.drop());

  it('[SURF-16] entries stay in their journal; a day file is sized exactly as it renders, multi-byte text and tags included', async () => {
    const accountId = (await store.accounts.create({ id: randomUUID(), name: 'Acme' })).id;
    const agent = await store.agents.create({ id: randomUUID(), accountId, handle: `a-${randomUUID().slice(0, 8)}`, name: 'A', description: '', instructions: '', model: 'scripted/demo' });
    const other = (await store.accounts.create({ id: randomUUID(), name: 'Other' })).id;
    const mine = { accountId, agentId: agent.id, principalId: 'p-1' };
    await store.journal.append(mine, { kind: 'did', content: 'Grüße an 東京 — sent the invoice', tags: ['billing', 'ünï'], contextId: 'ctx-1', taskId: 't-1' });
    await store.journal.append(mine, { kind: 'remember', content: 'prefers EUR', tags: [], contextId: null, taskId: null });
    await store.journal.append({ ...mine, principalId: 'p-2' }, { kind: 'note', content: 'someone else', tags: [], contextId: null, taskId: null });

    expect(await store.journal.count(mine)).toBe(2);
    expect(await store.journal.count({ ...mine, accountId: other })).toBe(0);
    expect((await store.journal.read({ ...mine, accountId: other }, { limit: 10 }))).toEqual([]);
    const found = await store.journal.read(mine, { query: 'invoice', limit: 10 });
    expect(found.map((e) => [e.kind, e.contextId, e.tags])).toEqual([['did', 'ctx-1', ['billing', 'ünï']]]);
    expect((await store.journal.read(mine, { query: 'billing', limit: 10 })).length).toBe(1);
    expect((await store.journal.read(mine, { contextId: 'ctx-1', limit: 10 })).length).toBe(1);

    const entries = (await store.journal.read(mine, { limit: 10 })).reverse();
    const [day] = await store.journal.days(mine, { limit: 5, perDay: 1000 });
    expect(day).toMatchObject({ day: entries[0]!.createdAt.slice(0, 10), entries: 2 });
    const heading = Buffer.byteLength(`# Journal, ${day!.day}\n\n`);
    expect(heading + day!.bytes).toBe(Buffer.byteLength(renderDay(day!.day, entries, false)));
    // Only the newest `perDay` entries count toward the size, as only they are rendered.
    const [one] = await store.journal.days(mine, { limit: 5, perDay: 1 });
    expect(heading + one!.bytes).toBe(Buffer.byteLength(renderDay(day!.day, entries.slice(1), false)));

    expect(await store.journal.remove({ ...mine, principalId: 'p-2' }, entries[0]!.id)).toBe(false);
    expect(await store.journal.remove(mine, entries[0]!.id)).toBe(true);
    expect(await store.journal.count(mine)).toBe(1);
  });
});
