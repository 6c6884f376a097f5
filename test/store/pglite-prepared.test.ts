import { Worker } from 'node:worker_threads';
import { describe, expect, it, vi } from 'vitest';
import { isUniqueViolation } from '../../store/index.ts';
import { openPglite } from '../../store/pglite-driver.ts';
import { REPLAN_MS } from '../../store/statement-names.ts';

/** Every statement the driver sent named (prepared) or with its kept plans dropped first, as the thread was told. */
function watchRequests() {
  const sent = vi.spyOn(Worker.prototype, 'postMessage');
  const requests = () => sent.mock.calls.map(([m]) => m as { op?: string; sql?: string; name?: string; replan?: boolean }).filter((m) => m.op === 'query');
  return { requests, restore: () => sent.mockRestore() };
}

describe('prepared statements on the embedded database: a statement seen twice is bound and executed, not parsed again', () => {
  it('answers a prepared statement as PGlite answers the same text unnamed, for every type the store reads and writes', async () => {
    const db = await openPglite();
    const watch = watchRequests();
    try {
      await db.exec(`create table v (id bigint generated always as identity primary key, u uuid, t text, n int, b boolean, j jsonb, a text[], s smallint[],
        at timestamptz, x bytea, num numeric)`);
      const insert = 'insert into v (u, t, n, b, j, a, s, at, x, num) values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) returning *';
      const rows = [
        ['6f1c1a52-8a0e-4c55-9f43-6f0f3f1b0a11', 'plain', 7, true, JSON.stringify({ k: [1, 'two', null] }), ['a', 'b "q"', 'c,d', '{e}', ''], [0, 3, 999], '2026-11-30T12:00:00.123Z', Buffer.from([0, 1, 255]), '12.50'],
        [null, null, null, null, null, null, null, null, null, null],
        ['00000000-0000-0000-0000-000000000000', 'ü\\', -1, false, JSON.stringify('text'), [], [], new Date('2026-01-01T00:00:00Z'), Buffer.alloc(0), '0'],
      ];
      const answers = [];
      // Run three times each: the first unnamed, the second prepares it, the third runs it prepared.
      for (const r of rows) for (let i = 0; i < 3; i++) answers.push((await db.query<Record<string, unknown>>(insert, r)).rows[0]);
      const named = watch.requests().filter((m) => m.sql === insert);
      expect(named.map((m) => m.name === undefined)).toEqual([true, false, false, false, false, false, false, false, false]);
      expect(named[1]!.name).toMatch(/^plt_\d+$/);
      const select = 'select u, t, n, b, j, a, s, at, x, num from v where id = $1';
      for (let id = 1; id <= 9; id++) {
        const { id: _id, ...inserted } = answers[id - 1]!;
        // The same row read back unnamed (first), then prepared, matches what the insert returned.
        expect((await db.query(select, [String(id)])).rows).toEqual([inserted]);
      }
      // The shapes the store relies on: int8 as decimal strings, timestamps as ISO 8601 UTC strings.
      expect(answers[2]).toMatchObject({ id: '3', u: rows[0]![0], n: 7, b: true, j: { k: [1, 'two', null] }, a: rows[0]![5], s: [0, 3, 999], at: '2026-11-30T12:00:00.123Z', num: '12.50' });
      expect(Buffer.from(answers[2]!.x as Uint8Array)).toEqual(Buffer.from([0, 1, 255]));
      expect(answers[5]).toEqual({ id: '6', u: null, t: null, n: null, b: null, j: null, a: null, s: null, at: null, x: null, num: null });
      expect(answers[8]).toMatchObject({ t: 'ü\\', j: 'text', a: [], s: [], at: '2026-01-01T00:00:00.000Z' });
      expect((await db.query('update v set n = n + 1 where n is not null', [])).rowCount).toBe(6);
      expect((await db.query('update v set n = n + 1 where n is not null', [])).rowCount).toBe(6);
    } finally {
      watch.restore();
      await db.close();
    }
  });

  it('a prepared statement\'s error keeps its fields, and the connection goes on; a statement that fails to parse is not kept', async () => {
    const db = await openPglite();
    try {
      await db.exec('create table k (id int primary key)');
      const insert = 'insert into k (id) values ($1)';
      await db.query(insert, [1]);
      await db.query(insert, [2]);
      const err = await db.query(insert, [1]).catch((e: unknown) => e);
      expect(isUniqueViolation(err)).toBe(true);
      expect(err).toMatchObject({ code: '23505', constraint: 'k_pkey', table: 'k' });
      await db.query(insert, [3]);
      // Inside a transaction too, and the transaction is the caller's to end.
      await expect(db.transaction((tx) => tx.query(insert, [3]))).rejects.toMatchObject({ code: '23505' });
      expect((await db.query('select count(*)::int as n from k')).rows).toEqual([{ n: 3 }]);
      for (let i = 0; i < 3; i++) await expect(db.query('select nope from k', [])).rejects.toMatchObject({ code: '42703' });
      await expect(db.query('select $1::int as n', ['x'])).rejects.toMatchObject({ code: 'PLT_INVALID_TEXT', message: 'invalid input: a value is not of the form its field takes' });
      expect((await db.query('select $1::int as n', ['4'])).rows).toEqual([{ n: 4 }]);
      await expect(db.query('select $1::int as n', ['y'])).rejects.toMatchObject({ code: 'PLT_INVALID_TEXT', message: 'invalid input: a value is not of the form its field takes' });
    } finally {
      await db.close();
    }
  });

  it('a plan gone stale under a table change runs again unnamed; inside a transaction the refusal stands', async () => {
    const db = await openPglite();
    try {
      await db.exec('create table t (id int primary key, name text)');
      await db.query('insert into t values ($1, $2)', [1, 'one']);
      const select = 'select * from t where id = $1';
      for (let i = 0; i < 3; i++) expect((await db.query(select, [1])).rows).toEqual([{ id: 1, name: 'one' }]);
      await db.exec('alter table t add column extra int');
      expect((await db.query(select, [1])).rows).toEqual([{ id: 1, name: 'one', extra: null }]);
      expect((await db.query(select, [1])).rows).toEqual([{ id: 1, name: 'one', extra: null }]);
      const other = 'select * from t where id = $1 and true';
      await db.query(other, [1]);
      await db.query(other, [1]);
      await db.exec('alter table t add column later int');
      await expect(db.transaction((tx) => tx.query(other, [1]))).rejects.toMatchObject({ code: '0A000' });
      expect((await db.query(other, [1])).rows).toEqual([{ id: 1, name: 'one', extra: null, later: null }]);
    } finally {
      await db.close();
    }
  });

  it('a plan kept while a table was small is made again for the table as it grew, on the first use past REPLAN_MS', async () => {
    let now = 0;
    const db = await openPglite(undefined, { now: () => now });
    const watch = watchRequests();
    const replans = () => watch.requests().filter((m) => m.replan === true).length;
    try {
      await db.exec("create table g (id int primary key, k int not null, v text); create index g_k on g (k); insert into g select i, i, 'v' || i from generate_series(1, 10) i; analyze g");
      const select = 'select v from g where k = $1';
      for (let i = 1; i <= 8; i++) expect((await db.query(select, [i])).rows).toEqual([{ v: `v${i}` }]);
      const kept = (await db.query<{ name: string; generic_plans: number }>('select name, generic_plans::int from pg_prepared_statements where statement = $1', [select])).rows;
      expect(kept).toEqual([{ name: expect.stringMatching(/^plt_\d+$/), generic_plans: expect.any(Number) }]);
      expect(kept[0]!.generic_plans).toBeGreaterThan(0);
      const plan = async () => (await db.query<{ 'QUERY PLAN': string }>(`explain execute ${kept[0]!.name}(7)`)).rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(await plan()).toMatch(/^Seq Scan on g/);
      await db.exec("insert into g select i, i, 'v' || i from generate_series(11, 100000) i");
      // Within the period the kept plan stands: no statement was sent with its plans dropped.
      now += REPLAN_MS - 1;
      expect((await db.query(select, [9])).rows).toEqual([{ v: 'v9' }]);
      expect(await plan()).toMatch(/^Seq Scan on g/);
      expect(replans()).toBe(0);
      // Past it, the next prepared statement drops the kept plans first, once; the plan is made for the table as it is.
      now += 1;
      expect((await db.query(select, [50000])).rows).toEqual([{ v: 'v50000' }]);
      expect(replans()).toBe(1);
      expect(await plan()).toMatch(/^(Index|Bitmap Heap) Scan .*on g/);
      expect(replans()).toBe(1);
    } finally {
      watch.restore();
      await db.close();
    }
  });
});
