import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isUniqueViolation } from '../../store/index.ts';
import { mustRun } from '../helpers/env.ts';
import { freshStore, type DriverName } from '../helpers/store.ts';

const drivers: DriverName[] = ['pglite', ...(mustRun('postgres') ? (['pg'] as const) : [])];
const rejection = (p: Promise<unknown>): Promise<unknown> => p.then(() => { throw new Error('expected a rejection'); }, (err: unknown) => err);

/** Agents bound to agents as tools (migration 025): account-scoped links and the principal each calling agent acts as. */
describe.each(drivers)('agent links on %s', (driver) => {
  let store: Awaited<ReturnType<typeof freshStore>>;
  beforeAll(async () => void (store = await freshStore(driver)));
  afterAll(async () => store.drop());

  const account = async () => (await store.accounts.create({ id: randomUUID(), name: 'Acme' })).id;
  const agent = async (accountId: string, handle = `a-${randomUUID().slice(0, 8)}`, description = '') =>
    store.agents.create({ id: randomUUID(), accountId, handle, name: handle.toUpperCase(), description, instructions: '', model: 'scripted/demo' });

  it('links are idempotent, listed by handle with the bound agent card text, and removed once', async () => {
    const acc = await account();
    const [a, b, c] = [await agent(acc), await agent(acc, `zz-${randomUUID().slice(0, 6)}`, 'Answers questions'), await agent(acc, `aa-${randomUUID().slice(0, 6)}`)];
    expect(await store.agentLinks.link(acc, a.id, b.id, 'operator')).toBe(true);
    expect(await store.agentLinks.link(acc, a.id, b.id, 'operator')).toBe(false);
    expect(await store.agentLinks.link(acc, a.id, c.id, 'operator')).toBe(true);
    const list = await store.agentLinks.list(acc, a.id);
    expect(list.map((l) => l.handle)).toEqual([c.handle, b.handle]);
    expect(list[1]).toMatchObject({ accountId: acc, agentId: a.id, toolAgentId: b.id, name: b.name, description: 'Answers questions' });
    // Links are one-way.
    expect(await store.agentLinks.list(acc, b.id)).toEqual([]);
    expect(await store.agentLinks.unlink(acc, a.id, b.id)).toBe(true);
    expect(await store.agentLinks.unlink(acc, a.id, b.id)).toBe(false);
    expect((await store.agentLinks.list(acc, a.id)).map((l) => l.toolAgentId)).toEqual([c.id]);
  });

  it('an agent linked to itself or to an agent of another account is refused by the schema', async () => {
    const [acc, other] = [await account(), await account()];
    const [a, foreign] = [await agent(acc), await agent(other)];
    expect(String(await rejection(store.agentLinks.link(acc, a.id, a.id, 'operator')))).toMatch(/check/i);
    expect(String(await rejection(store.agentLinks.link(acc, a.id, foreign.id, 'operator')))).toMatch(/foreign key/i);
    // Scoped reads: the other account sees nothing of this one's links.
    const b = await agent(acc);
    await store.agentLinks.link(acc, a.id, b.id, 'operator');
    expect(await store.agentLinks.list(other, a.id)).toEqual([]);
    expect(await store.agentLinks.unlink(other, a.id, b.id)).toBe(false);
  });

  it("an agent's principal is recorded once; links and principal go with the agent", async () => {
    const acc = await account();
    const [a, b] = [await agent(acc), await agent(acc)];
    expect(await store.agentLinks.principalOf(acc, a.id)).toBeNull();
    const p1 = randomUUID();
    const p2 = randomUUID();
    await store.tx(async (t) => {
      await t.principals.create({ id: p1, accountId: acc, kind: 'service', name: `agent ${a.handle}`, role: 'member' });
      await t.principals.create({ id: p2, accountId: acc, kind: 'service', name: 'second', role: 'member' });
      await t.agentLinks.setPrincipal(acc, a.id, p1);
    });
    expect(await store.agentLinks.principalOf(acc, a.id)).toBe(p1);
    expect(isUniqueViolation(await rejection(store.agentLinks.setPrincipal(acc, a.id, p2)))).toBe(true);
    await store.agentLinks.link(acc, a.id, b.id, 'operator');
    await store.db.query('delete from agents where id = $1', [b.id]);
    expect(await store.agentLinks.list(acc, a.id)).toEqual([]);
    await store.db.query('delete from agents where id = $1', [a.id]);
    expect(await store.agentLinks.principalOf(acc, a.id)).toBeNull();
  });
});
