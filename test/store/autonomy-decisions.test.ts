import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMigrations, migrate, type Db, type DecisionInput } from '../../store/index.ts';
import { autonomyRepo } from '../../store/autonomy-repo.ts';
import { openPg } from '../../store/pg-driver.ts';
import { openPglite } from '../../store/pglite-driver.ts';
import { freshStore, type DriverName } from '../helpers/store.ts';
import { DATABASE_URL, mustRun } from '../helpers/env.ts';

const drivers: DriverName[] = ['pglite', ...(mustRun('postgres') ? (['pg'] as const) : [])];

/**
 * The decision record (migration 043): a written batch is stored as one row per group of decisions that share every
 * field but the arguments hash, and read back one decision at a time, each with its own id.
 */
describe.each(drivers)('autonomy decision groups on %s', (driver) => {
  let store: Awaited<ReturnType<typeof freshStore>>;
  let account: string;
  let other: string;
  beforeAll(async () => {
    store = await freshStore(driver);
    account = (await store.accounts.create({ id: randomUUID(), name: 'decisions' })).id;
    other = (await store.accounts.create({ id: randomUUID(), name: 'other' })).id;
  });
  afterAll(async () => store.drop());

  const decision = (argumentsHash: string, over: Partial<DecisionInput> = {}): DecisionInput => ({
    accountId: account, principalId: 'p1', tool: 'calc_add', argumentsHash, outcome: 'allow', reason: 'account policy, rule *: allow', decidedBy: 'policy', surface: 'mcp', targetKind: 'gateway', targetId: 'g1', gateId: null, ...over,
  });
  /** Every decision of `accountId` the filter lets through, newest first, read in pages of `limit`. */
  const readAll = async (filter: Record<string, string>, limit: number, accountId = account) => {
    const out: { id: string; argumentsHash: string }[] = [];
    let before: string | undefined;
    // Bounded: a cursor that does not move on would page forever.
    for (let pages = 0; pages < 100; pages++) {
      const page = await store.autonomy.decisions({ accountId, ...filter, ...(before ? { before } : {}) }, limit);
      out.push(...page.decisions.map((d) => ({ id: d.id, argumentsHash: d.argumentsHash })));
      if (!page.more) return out;
      before = page.decisions[page.decisions.length - 1]!.id;
    }
    throw new Error(`paging by ${limit} did not end in 100 pages`);
  };

  it('[SURF-15] a batch of interleaved callers, outcomes and accounts is listed decision by decision, newest first, in the order made', async () => {
    const mark = `m1-${randomUUID().slice(0, 8)}`;
    const tool = `calc_${mark}`;
    await store.autonomy.recordDecisions([
      decision('h0', { tool }),
      decision('h1', { tool, principalId: 'p2' }),
      decision('h2', { tool }),
      decision('h3', { tool, accountId: other }),
      decision('h4', { tool, principalId: 'p2' }),
      decision('h5', { tool, outcome: 'deny', reason: 'never' }),
      decision('h6', { tool, decidedBy: 'human', reason: 'approved', gateId: 'gate-1', surface: 'agent', targetKind: 'agent', targetId: 'a1' }),
    ]);
    const { decisions } = await store.autonomy.decisions({ accountId: account, tool }, 10);
    expect(decisions.map((d) => d.argumentsHash)).toEqual(['h6', 'h5', 'h4', 'h2', 'h1', 'h0']);
    // Ids are the batch's base plus each decision's place in it: the other account's decision took place 3.
    const ids = decisions.map((d) => BigInt(d.id));
    expect(ids.slice(0, -1).map((id, i) => Number(id - ids[i + 1]!))).toEqual([1, 1, 2, 1, 1]);
    expect(decisions[0]).toMatchObject({ accountId: account, principalId: 'p1', tool, outcome: 'allow', reason: 'approved', decidedBy: 'human', surface: 'agent', targetKind: 'agent', targetId: 'a1', gateId: 'gate-1' });
    expect(decisions[1]).toMatchObject({ principalId: 'p1', outcome: 'deny', reason: 'never', decidedBy: 'policy', surface: 'mcp', targetKind: 'gateway', targetId: 'g1', gateId: null });
    expect(new Set(decisions.map((d) => d.createdAt)).size).toBe(1);
    expect((await store.autonomy.decisions({ accountId: account, tool, principalId: 'p2' }, 10)).decisions.map((d) => d.argumentsHash)).toEqual(['h4', 'h1']);
    expect((await store.autonomy.decisions({ accountId: account, tool, outcome: 'deny' }, 10)).decisions.map((d) => d.argumentsHash)).toEqual(['h5']);
    expect((await store.autonomy.decisions({ accountId: account, tool, targetKind: 'agent', targetId: 'a1' }, 10)).decisions.map((d) => d.argumentsHash)).toEqual(['h6']);
    // Tenant scoping: the other account's decision of the same batch is its own, and only its own.
    expect((await store.autonomy.decisions({ accountId: other, tool }, 10)).decisions.map((d) => d.argumentsHash)).toEqual(['h3']);
  });

  it('[SURF-15] pages cross groups and batches without losing or repeating a decision, at every page size', async () => {
    const tool = `calc_${randomUUID().slice(0, 8)}`;
    const written: string[] = [];
    for (let b = 0; b < 3; b++) {
      const batch = Array.from({ length: 7 }, (_, i) => decision(`b${b}-${i}`, { tool, principalId: i % 2 ? 'p1' : 'p2' }));
      written.push(...batch.map((d) => d.argumentsHash));
      await store.autonomy.recordDecisions(batch);
    }
    const newestFirst = [...written].reverse();
    for (const limit of [1, 2, 4, 7, 20, 21, 22]) {
      const all = await readAll({ tool }, limit);
      expect(all.map((d) => d.argumentsHash), `limit ${limit}`).toEqual(newestFirst);
      expect(new Set(all.map((d) => d.id)).size).toBe(21);
    }
    // The last page says so: 21 decisions in pages of 21 are one page, in pages of 20 two.
    expect((await store.autonomy.decisions({ accountId: account, tool }, 21)).more).toBe(false);
    expect((await store.autonomy.decisions({ accountId: account, tool }, 20)).more).toBe(true);
    expect((await readAll({ tool, principalId: 'p1' }, 2)).map((d) => d.argumentsHash)).toEqual(newestFirst.filter((h) => Number(h.split('-')[1]) % 2 === 1));
  });

  it('[SURF-15] a batch past a statement\'s 1,000 ids is written in several: 1,000 and 1,001 decisions keep their order and distinct ids', async () => {
    for (const n of [1000, 1001]) {
      const tool = `calc_${n}_${randomUUID().slice(0, 8)}`;
      const batch = Array.from({ length: n }, (_, i) => decision(`h${i}`, { tool, principalId: `p${i % 3}` }));
      // The next batch's ids start past the last statement's, whatever its size.
      const after = [decision('next', { tool })];
      await store.autonomy.recordDecisions(batch);
      await store.autonomy.recordDecisions(after);
      const all = await readAll({ tool }, 5000);
      expect(all.map((d) => d.argumentsHash)).toEqual([...batch, ...after].map((d) => d.argumentsHash).reverse());
      expect(new Set(all.map((d) => d.id)).size).toBe(n + 1);
    }
  });

  it('[SURF-15] an arguments hash survives whatever its text: quotes, backslashes, commas, braces, spaces, NULL', async () => {
    const tool = `calc_${randomUUID().slice(0, 8)}`;
    const hashes = ['a"b', 'c\\d', 'e,f', '{g}', ' h ', 'NULL', '', 'sha256:ü'];
    await store.autonomy.recordDecisions(hashes.map((h) => decision(h, { tool })));
    expect((await readAll({ tool }, 100)).map((d) => d.argumentsHash)).toEqual([...hashes].reverse());
  });
});

describe.each(drivers)('decisions recorded before migration 043 on %s', (driver) => {
  it('[SURF-15] keep their ids and order; the decisions written after come after them', async () => {
    const schema = `t_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    const db: Db = driver === 'pg' ? await openPg({ connectionString: DATABASE_URL!, schema }) : await openPglite();
    try {
      const migrations = await loadMigrations();
      await migrate(db, migrations.filter((m) => m.id < 43));
      const account = randomUUID();
      const { rows } = await db.query<{ id: string }>(
        `insert into autonomy_decisions (account_id, principal_id, tool, arguments_hash, outcome, reason, decided_by, surface, target_kind, target_id, gate_id)
         select $1, 'p1', 'calc_add', 'old-' || i, 'allow', null, 'policy', 'mcp', 'gateway', 'g1', null from generate_series(1, 3) as i returning id::text`,
        [account],
      );
      expect(await migrate(db, migrations)).toEqual(migrations.filter((m) => m.id >= 43).map((m) => m.name));
      const repo = autonomyRepo(db);
      await repo.recordDecisions([1, 2].map((i) => ({ accountId: account, principalId: 'p1', tool: 'calc_add', argumentsHash: `new-${i}`, outcome: 'allow' as const, reason: null, decidedBy: 'policy' as const, surface: 'mcp' as const, targetKind: 'gateway' as const, targetId: 'g1' })));
      const page = await repo.decisions({ accountId: account }, 10);
      expect(page.decisions.map((d) => d.argumentsHash)).toEqual(['new-2', 'new-1', 'old-3', 'old-2', 'old-1']);
      expect(page.decisions.slice(2).map((d) => d.id)).toEqual(rows.map((r) => r.id).reverse());
      const next = await repo.decisions({ accountId: account, before: page.decisions[2]!.id }, 10);
      expect(next.decisions.map((d) => d.argumentsHash)).toEqual(['old-2', 'old-1']);
    } finally {
      if (driver === 'pg') await db.exec(`drop schema ${schema} cascade`);
      await db.close();
    }
  });
});
