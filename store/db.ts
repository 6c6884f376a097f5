/**
 * The one query interface of the store. Both drivers (node-postgres and PGlite) satisfy it, so every repository is
 * written once in plain SQL with `$n` parameters.
 */
export interface QueryResult<R> {
  rows: R[];
  rowCount: number;
}

export interface Queryable {
  query<R = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<QueryResult<R>>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export type DriverKind = 'pg' | 'pglite';

export interface Db extends Queryable {
  readonly kind: DriverKind;
  /** Runs `fn` in one transaction; it commits when `fn` resolves and rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Runs `fn` while holding a cluster-wide advisory lock (a no-op lock on PGlite, which is single-process). */
  withAdvisoryLock<T>(key: number, fn: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export class StoreConflictError extends Error {
  override readonly name = 'StoreConflictError';
  readonly code = 'PLT_STORE_CONFLICT';
}

/** A unique-violation from either driver (SQLSTATE 23505). */
export function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '23505';
}

/** Both drivers return rows in one shape: timestamps as ISO 8601 UTC strings, int8 as decimal strings. */
export function normalizeRows<R>(rows: R[]): R[] {
  for (const row of rows as Record<string, unknown>[]) {
    for (const key of Object.keys(row)) {
      const v = row[key];
      if (v instanceof Date) row[key] = v.toISOString();
      else if (typeof v === 'bigint') row[key] = v.toString();
    }
  }
  return rows;
}
