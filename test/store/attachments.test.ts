import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AttachmentInsert } from '../../store/index.ts';
import { mustRun } from '../helpers/env.ts';
import { freshStore, type DriverName } from '../helpers/store.ts';

const drivers: DriverName[] = ['pglite', ...(mustRun('postgres') ? (['pg'] as const) : [])];

/** Attachment rows (migration 033): the account's quota is checked in the statement that records them. */
describe.each(drivers)('attachments on %s', (driver) => {
  let store: Awaited<ReturnType<typeof freshStore>>;
  beforeAll(async () => void (store = await freshStore(driver)));
  afterAll(async () => store.drop());

  async function setup() {
    const accountId = (await store.accounts.create({ id: randomUUID(), name: 'Acme' })).id;
    const agent = await store.agents.create({ id: randomUUID(), accountId, handle: `a-${randomUUID().slice(0, 8)}`, name: 'A', description: '', instructions: '', model: 'scripted/demo' });
    const row = (size: number, part = 0): AttachmentInsert => ({
      accountId, id: randomUUID(), agentId: agent.id, ownerId: 'p1', taskId: 't1', contextId: 'c1', part, kind: 'raw', sha256: 'ab'.repeat(32), size, mediaType: 'text/plain', filename: null, width: null, height: null,
    });
    return { accountId, row };
  }
  const at = new Date().toISOString();

  it('[SURF-18] a message fits the quota exactly or is not recorded at all; others at once cannot pass it together', async () => {
    const { accountId, row } = await setup();
    const add = (acc: string, rows: AttachmentInsert[]) => store.tx(async (r) => (await r.accounts.lock(acc), r.attachments.addWithin(acc, rows, 100, at)));
    expect(await add(accountId, [row(60), row(40, 1)])).toBe(true);
    expect(await add(accountId, [row(1)])).toBe(false);
    expect(await store.attachments.usage(accountId)).toEqual({ bytes: 100, files: 2 });
    const other = await setup();
    const results = await Promise.all(Array.from({ length: 10 }, () => add(other.accountId, [other.row(30)])));
    expect(results.filter(Boolean)).toHaveLength(3);
    expect(await store.attachments.usage(other.accountId)).toEqual({ bytes: 90, files: 3 });
    // Each account sees its own rows only.
    expect((await store.attachments.list(accountId, { limit: 10 })).every((a) => a.accountId === accountId)).toBe(true);
  });
});
