import pg from 'pg';
import { classifyDriverError, normalizeRows, type Db, type Queryable, type QueryResult } from './db.ts';
import { processStatementNames, REPLAN_MS, runNamed, type StatementNames } from './statement-names.ts';

export interface PgOptions {
  connectionString: string;
  /** A private schema (created if missing): lets tests and parallel runs share one database without seeing each other. */
  schema?: string;
  max?: number;
  /**
   * Keep the hot statements prepared on each connection (statement-names.ts; default true). Off for a pooler in
   * transaction mode that cannot carry prepared statements across its server connections.
   */
  prepare?: boolean;
  /** The clock of the re-planning period (REPLAN_MS); Date.now by default. A test's own clock steps it. */
  now?: () => number;
}

/**
 * The store's query interface over a pool or one of its clients. `names`: the statements to prepare, or null. A
 * prepared statement whose plan went stale (a migration of another node changed a table's shape under it) is run
 * again unnamed, outside a transaction, and never named again.
 */
function wrap(client: pg.Pool | pg.PoolClient, names: StatementNames | null, inTransaction: boolean): Queryable {
  const run = (sql: string, params: unknown[], name: string | undefined) => client.query(name ? { name, text: sql, values: params } : { text: sql, values: params });
  return {
    async query<R>(sql: string, params: readonly unknown[] = []): Promise<QueryResult<R>> {
      try {
        const res = await runNamed(names, sql, inTransaction, (name) => run(sql, params as unknown[], name));
        return { rows: normalizeRows(res.rows as R[]), rowCount: res.rowCount ?? 0 };
      } catch (err) {
        throw classifyDriverError(err);
      }
    },
    async exec(sql: string): Promise<void> {
      await client.query(sql);
    },
  };
}

export { REPLAN_MS };

/**
 * Each client of `pool`, on its first use `ms` after its last, first drops its kept plans. The statement goes ahead of
 * the user's on the client's queue ('acquire' comes before the client is handed out), so it costs one round trip a
 * period per connection, and it is outside any transaction (one begins after the client is handed out).
 */
function replanEvery(pool: pg.Pool, ms: number, clock: () => number): void {
  const due = new WeakMap<pg.PoolClient, number>();
  pool.on('connect', (client) => due.set(client, clock() + ms));
  pool.on('acquire', (client) => {
    const now = clock();
    if (now < (due.get(client) ?? 0)) return;
    due.set(client, now + ms);
    // A failure here is the connection's: the user's statement behind it meets it too.
    client.query('discard plans').catch(() => {});
  });
}

export async function openPg(opts: PgOptions): Promise<Db> {
  if (opts.schema !== undefined && !/^[a-z_][a-z0-9_]*$/.test(opts.schema)) {
    throw new Error(`invalid schema name ${JSON.stringify(opts.schema)}`);
  }
  if (opts.schema) {
    const boot = new pg.Client({ connectionString: opts.connectionString });
    await boot.connect();
    try {
      await boot.query(`create schema if not exists ${opts.schema}`);
    } finally {
      await boot.end();
    }
  }
  const prepare = opts.prepare !== false;
  // Prepared statements use PostgreSQL's plan cache as it is by default (`plan_cache_mode=auto`: a plan kept for all
  // values once it costs no more than the custom ones), and every connection drops its kept plans (`discard plans`) on
  // its first use after REPLAN_MS. A kept plan is made for the tables as they were: one made while a table was small
  // (a scan of it) slowed as the table grew, until autovacuum next analyzed it (up to a minute; bare replies on a new
  // database fell from 1,510 to 956 a second within 20 s). Planned again every REPLAN_MS, for the table's size then
  // (the planner reads its pages as they are now), a plan lags the table by at most that. Planning every execution
  // instead (force_custom_plan) was 40% of the statements' time in the database under the a2a-send bench.
  const options = opts.schema ? `-c search_path=${opts.schema}` : '';
  const pool = new pg.Pool({ connectionString: opts.connectionString, max: opts.max ?? 10, ...(options ? { options } : {}) });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  if (prepare) replanEvery(pool, REPLAN_MS, opts.now ?? Date.now);
  const names = prepare ? processStatementNames : null;
  const base = wrap(pool, names, false);

  async function withClient<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await pool.connect();
    try {
      return await fn(client);
    } finally {
      client.release();
    }
  }

  async function inTx<T>(client: pg.PoolClient, fn: (tx: Queryable) => Promise<T>): Promise<T> {
    await client.query('begin');
    try {
      const out = await fn(wrap(client, names, true));
      await client.query('commit');
      return out;
    } catch (err) {
      await client.query('rollback').catch(() => {});
      throw err;
    }
  }

  return {
    kind: 'pg',
    query: base.query,
    exec: base.exec,
    transaction: (fn) => withClient((c) => inTx(c, fn)),
    withAdvisoryLock: (key, fn) =>
      withClient(async (c) => {
        await c.query('select pg_advisory_lock($1)', [key]);
        try {
          return await fn(wrap(c, names, false));
        } finally {
          await c.query('select pg_advisory_unlock($1)', [key]).catch(() => {});
        }
      }),
    close: () => pool.end(),
  };
}
