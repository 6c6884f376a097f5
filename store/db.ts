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

/** Runs `fn` atomically: in a transaction of its own on the pool, or as part of the transaction `q` already is. */
export function atomically<T>(q: Queryable, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  return 'transaction' in q ? (q as Db).transaction(fn) : fn(q);
}

export class StoreConflictError extends Error {
  override readonly name = 'StoreConflictError';
  readonly code = 'PLT_STORE_CONFLICT';
}

/**
 * Text the database cannot store or read as its type: NUL characters (22021), untranslatable characters in JSON
 * (22P05), a value that is not of its column's form (22P02). Bad input, never a server error: its code is registered
 * with kind `invalid`, so every surface answers it in its own 400-class format.
 */
export class StoreInputError extends Error {
  override readonly name = 'StoreInputError';
  readonly code = 'PLT_INVALID_TEXT';
}

const INPUT_STATES = new Set(['22021', '22P05', '22P02', '22001', '54000']);

/** A driver error caused by the values sent, as StoreInputError; anything else as it was. */
export function classifyDriverError(err: unknown): unknown {
  const state = (err as { code?: unknown } | null)?.code;
  if (typeof state !== 'string' || !INPUT_STATES.has(state)) return err;
  const what = state === '22P02' ? 'a value is not of the form its field takes' : state === '22001' || state === '54000' ? 'a value is too long' : 'a text field holds a character the platform cannot store (NUL, or invalid UTF-8)';
  return Object.assign(new StoreInputError(`invalid input: ${what}`), { cause: err });
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
