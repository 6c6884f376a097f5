import pg from 'pg';
import { classifyDriverError, normalizeRows, type Db, type Queryable, type QueryResult } from './db.ts';


export interface PgOptions {
  connectionString: string;
  /** A private schema (created if missing): lets tests and parallel runs share one database without seeing each other. */
  schema?: string;
  max?: number;
}

function wrap(client: pg.Pool | pg.PoolClient): Queryable {
  return {
    async query<R>(sql: string, params: readonly unknown[] = []): Promise<QueryResult<R>> {
      try {
        const res = await client.query(sql, params as unknown[]);
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
  const pool = new pg.Pool({
    connectionString: opts.connectionString,
    max: opts.max ?? 10,
    ...(opts.schema ? { options: `-c search_path=${opts.schema}` } : {}),
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const base = wrap(pool);

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
      const out = await fn(wrap(client));
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
          return await fn(wrap(c));
        } finally {
          await c.query('select pg_advisory_unlock($1)', [key]).catch(() => {});
        }
      }),
    close: () => pool.end(),
  };
}
