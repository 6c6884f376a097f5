import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mustRun } from '../helpers/env.ts';
import { freshStore, type DriverName } from '../helpers/store.ts';

const drivers: DriverName[] = ['pglite', ...(mustRun('postgres') ? (['pg'] as const) : [])];

/** Skill rows (migrations 034, 037): files named by their blob, sizes read without bytes, names unique per account. */
describe.each(drivers)('skills on %s', (driver) => {
  let store: Awaited<ReturnType<typeof freshStore>>;
  beforeAll(async () => void (store = await freshStore(driver)));
  afterAll(async () => store.drop());

  it('[SURF-12] a skill is created once per name, its files listed by size, replaced as a whole, bound to agents of its account only', async () => {
    const accountId = (await store.accounts.create({ id: randomUUID(), name: 'Acme' })).id;
    const agent = await store.agents.create({ id: randomUUID(), accountId, handle: `a-${randomUUID().slice(0, 8)}`, name: 'A', description: '', instructions: '', model: 'scripted/demo' });
    const other = (await store.accounts.create({ id: randomUUID(), name: 'Other' })).id;
    const foreign = await store.agents.create({ id: randomUUID(), accountId: other, handle: `b-${randomUUID().slice(0, 8)}`, name: 'B', description: '', instructions: '', model: 'scripted/demo' });
    const id = randomUUID();
    const at = new Date().toISOString();
    const files = [{ path: 'SKILL.md', sha256: 'a'.repeat(64), size: 10 }, { path: 'x/y.txt', sha256: 'b'.repeat(64), size: 3 }];
    const make = () => store.tx((r) => r.skills.create({ accountId, id: randomUUID(), name: 'n', description: 'd', size: 13, source: 'api', createdAt: at, createdBy: 'p' }, files));
    expect(await store.tx((r) => r.skills.create({ accountId, id, name: 'n', description: 'd', size: 13, source: 'api', createdAt: at, createdBy: 'p' }, files))).toBe(true);
    expect(await make()).toBe(false);
    expect((await store.skills.sizes(accountId, [id])).get(id)).toEqual([{ path: 'SKILL.md', size: 10 }, { path: 'x/y.txt', size: 3 }]);
    const updated = await store.tx((r) => r.skills.update(accountId, id, { files: [files[0]!], size: 10, at, by: 'q' }));
    expect(updated).toMatchObject({ version: 2, size: 10, updatedBy: 'q' });
    expect((await store.skills.files(accountId, id)).map((f) => [f.path, f.sha256, f.inline])).toEqual([['SKILL.md', 'a'.repeat(64), null]]);
    expect(await store.skills.bind(accountId, id, agent.id, at, 'p')).toBe(true);
    expect(await store.skills.bind(accountId, id, foreign.id, at, 'p')).toBe(false);
    expect((await store.skills.ofAgent(accountId, agent.id)).map((s) => s.id)).toEqual([id]);
    expect(await store.skills.ofAgent(other, foreign.id)).toEqual([]);
  });
});
