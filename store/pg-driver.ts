import pg from 'pg';
import { classifyDriverError, normalizeRows, type Db, type Queryable, type QueryResult } from './db.ts';
import { isStalePlan, processStatementNames, type StatementNames } from './statement-names.ts';

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
      const name = names?.nameOf(sql);
      try {
        let res;
        try {
          res = await run(sql, params as unknown[], name);
        } catch (err) {
          if (!name || !isStalePlan(err)) throw err;
          names!.forget(sql);
          if (inTransaction) throw err;
          res = await run(sql, params as unknown[], undefined);
        }
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
  // Prepared statements are planned for the values of each execution (custom plans), never once for all (generic):
  // a generic plan made while a table is small (a join over agent_messages planned as a hash join over a scan of it)
  // is kept by the connection as the table grows, until autovacuum next analyzes it (up to a minute). Measured with
  // bare replies on a new database: generic plans fell from 1,510 to 956 replies/s within 20 s, custom plans held
  // 2,300–2,500. Parsing and analysis stay saved.
  const options = [opts.schema ? `-c search_path=${opts.schema}` : '', prepare ? '-c plan_cache_mode=force_custom_plan' : ''].filter(Boolean).join(' ');
  const pool = new pg.Pool({ connectionString: opts.connectionString, max: opts.max ?? 10, ...(options ? { options } : {}) });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
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
