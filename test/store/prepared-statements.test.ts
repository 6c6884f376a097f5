import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it, vi } from 'vitest';
import { openPg, REPLAN_MS } from '../../store/pg-driver.ts';
import { statementNames } from '../../store/statement-names.ts';
import { DATABASE_URL, mustRun } from '../helpers/env.ts';

describe('prepared statements on PostgreSQL: hot statements are parsed and planned once per connection', () => {
  it('names a text on its second sighting, the same name after; caps the names and the texts counted; forgets a stale one for good', () => {
    const names = statementNames(2, 3);
    expect(names.nameOf('select 1')).toBeUndefined();
    const one = names.nameOf('select 1');
    expect(one).toMatch(/^plt_\d+$/);
    expect(names.nameOf('select 1')).toBe(one);
    // A second text gets a name of its own; a third none: the cap of 2 names is reached.
    names.nameOf('select 2');
    const two = names.nameOf('select 2');
    expect(two).toMatch(/^plt_\d+$/);
    expect(two).not.toBe(one);
    expect(names.nameOf('select 3')).toBeUndefined();
    expect(names.nameOf('select 3')).toBeUndefined();
    // Forgotten: never named again (its old name may still be prepared on connections, with the old plan).
    names.forget('select 1');
    expect(names.nameOf('select 1')).toBeUndefined();
    expect(names.nameOf('select 1')).toBeUndefined();

    // Past 3 texts counted once each, the count starts over: a text seen once before the reset needs two more.
    const counted = statementNames(10, 3);
    for (const t of ['a', 'b', 'c', 'd']) counted.nameOf(t);
    expect(counted.nameOf('a')).toBeUndefined();
    expect(counted.nameOf('a')).toMatch(/^plt_\d+$/);
    expect(counted.nameOf('d')).toMatch(/^plt_\d+$/);
  });

  const pgOnly = mustRun('postgres') ? it : it.skip;

  pgOnly('prepares a statement run twice, not with PLATFORM_DB_PREPARE off; a plan gone stale under a migration is run again unnamed', async () => {
    const schema = `p_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    // One connection each, so that pg_prepared_statements (per session) shows what the queries left.
    // The period runs on a clock of the test's own: a slow machine (the insert below can take a second) cannot end it early.
    let now = 0;
    const db = await openPg({ connectionString: DATABASE_URL!, schema, max: 1, now: () => now });
    const off = await openPg({ connectionString: DATABASE_URL!, schema, max: 1, prepare: false });
    try {
      await db.exec('create table t (id int primary key, name text)');
      await db.query('insert into t values ($1, $2)', [1, 'one']);
      const select = `select * from t where id = $1 /* ${schema} */`;
      const prepared = async (q: typeof db) => (await q.query<{ name: string }>('select name from pg_prepared_statements where statement = $1', [select])).rows;
      for (let i = 0; i < 3; i++) expect((await db.query(select, [1])).rows).toEqual([{ id: 1, name: 'one' }]);
      expect(await prepared(db)).toEqual([{ name: expect.stringMatching(/^plt_\d+$/) }]);
      for (let i = 0; i < 3; i++) expect((await off.query(select, [1])).rows).toEqual([{ id: 1, name: 'one' }]);
      expect(await prepared(off)).toEqual([]);
      // PostgreSQL's own plan cache, as it is by default; what keeps its plans from going stale is the next test's.
      expect((await db.query('show plan_cache_mode')).rows).toEqual([{ plan_cache_mode: 'auto' }]);

      // Another node's migration changes the table: the prepared plan's result no longer fits (PostgreSQL refuses
      // it with 0A000). The query still answers, with the new shape, and the text is never sent named again.
      await off.exec('alter table t add column extra int');
      expect((await db.query(select, [1])).rows).toEqual([{ id: 1, name: 'one', extra: null }]);
      expect((await db.query(select, [1])).rows).toEqual([{ id: 1, name: 'one', extra: null }]);
      // In a transaction the refusal stands (the transaction is aborted by it); it is not retried there.
      const other = `select * from t where id = $1 /* tx ${schema} */`;
      await db.query(other, [1]);
      await db.query(other, [1]);
      await off.exec('alter table t add column later int');
      await expect(db.transaction((tx) => tx.query(other, [1]))).rejects.toMatchObject({ code: '0A000' });
      // Outside one, the same text answers again, unnamed from now on.
      expect((await db.query(other, [1])).rows).toEqual([{ id: 1, name: 'one', extra: null, later: null }]);
    } finally {
      await off.exec(`drop schema ${schema} cascade`);
      await Promise.all([db.close(), off.close()]);
    }
  });

  pgOnly('a plan kept while a table was small is made again for the table as it grew, on the first use past REPLAN_MS', async () => {
    const schema = `p_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    // The period runs on a clock of the test's own: a slow machine (the insert below can take a second) cannot end it early.
    let now = 0;
    const db = await openPg({ connectionString: DATABASE_URL!, schema, max: 1, now: () => now });
    try {
      // Autovacuum off for the table: its analyze would also make the plan again, and this test is of the driver.
      await db.exec('create table g (id int primary key, k int not null, v text) with (autovacuum_enabled = false); create index g_k on g (k)');
      await db.exec("insert into g select i, i, 'v' || i from generate_series(1, 10) i; analyze g");
      const select = `select v from g where k = $1 /* ${schema} */`;
      // Past five executions planned for their values, PostgreSQL keeps one plan for all values (auto): for ten rows, a scan.
      for (let i = 1; i <= 8; i++) expect((await db.query(select, [i])).rows).toEqual([{ v: `v${i}` }]);
      const kept = (await db.query<{ name: string; generic_plans: number }>('select name, generic_plans::int from pg_prepared_statements where statement = $1', [select])).rows;
      expect(kept).toEqual([{ name: expect.stringMatching(/^plt_\d+$/), generic_plans: expect.any(Number) }]);
      const name = kept[0]!.name;
      expect(kept[0]!.generic_plans).toBeGreaterThan(0);
      const plan = async () => (await db.query<{ 'QUERY PLAN': string }>(`explain execute ${name}(7)`)).rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(await plan()).toMatch(/^Seq Scan on g/);

      // The table grows 20,000-fold. Within REPLAN_MS the connection keeps the plans it has: the driver sends no
      // `discard plans`. (What the plan is meanwhile is PostgreSQL's: it may drop its plans on its own, e.g. when other
      // sessions' catalog changes overflow its invalidation queue, so the test counts the driver's statements.)
      const discards = vi.spyOn(pg.Client.prototype, 'query');
      const discarded = () => discards.mock.calls.filter(([q]) => q === 'discard plans').length;
      try {
        await db.exec("insert into g select i, i, 'v' || i from generate_series(11, 200000) i");
        // Two more uses of the connection within the period (each one is where the driver would discard).
        await plan();
        now += REPLAN_MS - 1;
        await plan();
        expect(discarded()).toBe(0);
        // Past it, the connection's next use drops its kept plans first, once; the next one is made for the table as it is.
        now += 1;
        expect((await db.query(select, [150000])).rows).toEqual([{ v: 'v150000' }]);
        expect(discarded()).toBe(1);
        expect(await plan()).toMatch(/^(Index|Bitmap Heap) Scan .*on g/);
        expect(discarded()).toBe(1);
      } finally {
        discards.mockRestore();
      }
    } finally {
      await db.exec(`drop schema ${schema} cascade`);
      await db.close();
    }
  });
});
